#!/usr/bin/env python3
"""train.py: the real-run harness of DESIGN section 7.

Trains an epochcast preset for a few hundred steps on the GPU(s) of this machine with one
configuration in the key=value vocabulary of DESIGN section 2, and appends run records that
`epochcast validate` reads (columns id, the config keys, metric, value, source), plus a memory
and utilization sidecar (peak_bytes from torch.cuda.max_memory_allocated / reserved, and GPU
utilization sampled with pynvml or nvidia-smi).

    python3 bench/harness/train.py model=bert-base task=squad precision=amp_fp16 \
        batch_per_gpu=32 seq_len=384 --steps 200 --out bench/results/runs.csv
    torchrun --nproc_per_node 2 bench/harness/train.py model=resnet50 strategy=ddp num_gpus=2 ...

BERT presets use transformers when installed (models built from a config, no download), else
a plain PyTorch BERT of the same shapes; resnet50 uses torchvision.  Timing: `--warmup`
steps, then torch.cuda.synchronize() around `--steps` timed optimizer steps.  Everything
torch-related is imported inside the functions that need it, so argument parsing and record
writing run (and are tested) without torch.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import threading
import time

# Preset shapes (models/networks.csv): layers, hidden, heads, ffn, vocab.
BERT_PRESETS = {
    "bert-base": (12, 768, 12, 3072, 30522),
    "bert-large": (24, 1024, 16, 4096, 30522),
    "roberta-base": (12, 768, 12, 3072, 50265),
    "distilbert-base": (6, 768, 12, 3072, 30522),
}
VISION_PRESETS = {"resnet50"}

# The keys of DESIGN section 2 the harness honours, with their defaults and parsers.
KEYS = {
    "model": (None, str),
    "task": ("", str),
    "gpu": ("", str),
    "num_gpus": (1, int),
    "strategy": ("single", str),
    "precision": ("fp32", str),
    "batch_per_gpu": (None, int),
    "seq_len": (128, int),
    "image_size": (224, int),
    "grad_accum": (1, int),
    "optimizer": ("adamw", str),
    "checkpointing": (0, int),
    "attention": ("sdpa", str),
    "num_workers": (0, int),
    "prefetch_factor": (2, int),
    "pin_memory": (0, int),
    "persistent_workers": (0, int),
    "data": ("real", str),
}
CHOICES = {
    "strategy": {"single", "dp", "ddp"},
    "precision": {"fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp16"},
    "optimizer": {"sgd", "adam", "adamw", "adamw_foreach", "adamw_fused"},
    "attention": {"sdpa", "eager"},
    "data": {"real", "synthetic"},
    "task": {"", "classify", "squad", "pretrain", "imagenet"},
}
# Run-record columns: id, the config keys written, metric, value, source (calibration.csv).
RECORD_KEYS = ["model", "task", "gpu", "num_gpus", "strategy", "precision", "batch_per_gpu", "seq_len",
               "image_size", "grad_accum", "optimizer", "checkpointing", "attention", "num_workers",
               "prefetch_factor", "pin_memory", "persistent_workers", "data"]
MEMORY_COLUMNS = ["id", "peak_allocated_bytes", "peak_reserved_bytes", "capacity_bytes", "gpu_util_frac",
                  "step_time_ms", "samples_per_s", "alloc_retries", "reserve_bytes", "step_temp_bytes"]


class ConfigError(ValueError):
    pass


def parse_words(words):
    """key=value words -> config dict with defaults; ConfigError names the bad word."""
    cfg = {k: v[0] for k, v in KEYS.items()}
    for w in words:
        if "=" not in w:
            raise ConfigError(f"expected key=value, got '{w}'")
        key, value = w.split("=", 1)
        if key not in KEYS:
            raise ConfigError(f"unknown key '{key}' (keys: {', '.join(KEYS)})")
        try:
            v = KEYS[key][1](value)
        except ValueError:
            raise ConfigError(f"{key}={value}: not a {KEYS[key][1].__name__}") from None
        if key in CHOICES and v not in CHOICES[key]:
            raise ConfigError(f"{key}={value}: expected one of {', '.join(sorted(CHOICES[key]))}")
        if isinstance(v, int) and v < 0:
            raise ConfigError(f"{key}={value}: must be >= 0")
        cfg[key] = v
    for key in ("model", "batch_per_gpu"):
        if cfg[key] is None:
            raise ConfigError(f"missing {key}=")
    if cfg["model"] not in BERT_PRESETS and cfg["model"] not in VISION_PRESETS:
        raise ConfigError(f"model={cfg['model']}: the harness runs {', '.join(list(BERT_PRESETS) + sorted(VISION_PRESETS))}")
    if cfg["batch_per_gpu"] < 1 or cfg["grad_accum"] < 1 or cfg["num_gpus"] < 1:
        raise ConfigError("batch_per_gpu, grad_accum and num_gpus must be >= 1")
    if not cfg["task"]:
        cfg["task"] = "imagenet" if cfg["model"] in VISION_PRESETS else "classify"
    if cfg["num_gpus"] > 1 and cfg["strategy"] == "single":
        cfg["strategy"] = "ddp"
    if cfg["model"] in VISION_PRESETS:
        cfg["seq_len"] = ""
    else:
        cfg["image_size"] = ""
    return cfg


def run_id(cfg):
    return "{gpu}-{model}-{task}-{num_gpus}x-{precision}-b{batch_per_gpu}-w{num_workers}".format(**cfg)


def records(cfg, result, source):
    """Run-record rows (dicts) for the measured result: samples_per_s and step_time_ms, each
    with its own id (ids are unique per row of a run-record file)."""
    rid = result.get("id") or run_id(cfg)
    base = {**{k: cfg[k] for k in RECORD_KEYS}, "source": source}
    return [dict(base, id=rid + "-sps", metric="samples_per_s", value=f"{result['samples_per_s']:.6g}"),
            dict(base, id=rid + "-step", metric="step_time_ms", value=f"{1000 * result['step_s']:.6g}")]


def append_csv(path, columns, rows):
    """Append rows to a CSV (header when new), through a temporary copy renamed into place."""
    tmp = path + ".tmp"
    exists = os.path.exists(path)
    if exists:
        with open(path, newline="") as f:
            header = next(csv.reader(f), None)
        if header != columns:
            raise ConfigError(f"{path}: its header differs from {','.join(columns)}")
        shutil.copyfile(path, tmp)
    with open(tmp, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        if not exists:
            w.writeheader()
        for r in rows:
            w.writerow(r)
    os.replace(tmp, path)


# ---- GPU utilization sampling ------------------------------------------------------------

class UtilSampler:
    """Samples GPU utilization (the nvidia-smi figure) every 100 ms while running."""

    def __init__(self, device_index):
        self.samples, self.stop, self.device = [], threading.Event(), device_index
        self.read = self._nvml() or self._smi()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _nvml(self):
        try:
            import pynvml
            pynvml.nvmlInit()
            h = pynvml.nvmlDeviceGetHandleByIndex(self.device)
            return lambda: pynvml.nvmlDeviceGetUtilizationRates(h).gpu / 100.0
        except Exception:
            return None

    def _smi(self):
        if shutil.which("nvidia-smi") is None:
            return None
        cmd = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", str(self.device)]
        return lambda: float(subprocess.check_output(cmd, text=True).strip()) / 100.0

    def _loop(self):
        while not self.stop.wait(0.1):
            try:
                self.samples.append(self.read())
            except Exception:
                return

    def __enter__(self):
        if self.read is not None:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()

    def mean(self):
        return sum(self.samples) / len(self.samples) if self.samples else None


# ---- models and data (torch) ---------------------------------------------------------------

def build_model(cfg):
    import torch
    from torch import nn
    if cfg["model"] in VISION_PRESETS:
        import torchvision
        return torchvision.models.resnet50(weights=None), None
    layers, hidden, heads, ffn, vocab = BERT_PRESETS[cfg["model"]]
    n_out = 2  # classify: 2 labels; squad: start/end logits
    try:
        import transformers
        conf = transformers.BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                                       num_attention_heads=heads, intermediate_size=ffn,
                                       max_position_embeddings=max(512, int(cfg["seq_len"])),
                                       attn_implementation=cfg["attention"])
        if cfg["task"] == "squad":
            model = transformers.BertForQuestionAnswering(conf)
        else:
            model = transformers.BertForSequenceClassification(conf)
        if cfg["checkpointing"]:
            model.gradient_checkpointing_enable()
        return model, "hf"
    except ImportError:
        pass

    class PlainBert(nn.Module):
        """Post-LN BERT encoder of the preset's shape (torch.nn only)."""

        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, hidden)
            self.pos = nn.Embedding(max(512, int(cfg["seq_len"])), hidden)
            self.norm = nn.LayerNorm(hidden)
            layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu", batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(hidden, n_out)

        def forward(self, input_ids):
            pos = torch.arange(input_ids.shape[1], device=input_ids.device)
            x = self.norm(self.tok(input_ids) + self.pos(pos))
            x = self.encoder(x)
            return self.head(x if cfg["task"] == "squad" else x[:, 0])

    return PlainBert(), "plain"


def make_dataset(cfg):
    import torch

    class Synthetic(torch.utils.data.Dataset):
        """Random samples made on the CPU in __getitem__: the DataLoader settings matter."""

        def __len__(self):
            return 1 << 30

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            if cfg["model"] in VISION_PRESETS:
                s = int(cfg["image_size"])
                return torch.rand(3, s, s, generator=g), torch.randint(0, 1000, (), generator=g)
            vocab = BERT_PRESETS[cfg["model"]][4]
            seq = int(cfg["seq_len"])
            ids = torch.randint(0, vocab, (seq,), generator=g)
            if cfg["task"] == "squad":
                return ids, torch.randint(0, seq, (2,), generator=g)
            return ids, torch.randint(0, 2, (), generator=g)

    return Synthetic()


def make_optimizer(cfg, params):
    import torch
    o = cfg["optimizer"]
    if o == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    if o == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    return torch.optim.AdamW(params, lr=1e-4, foreach=(o == "adamw_foreach") or None, fused=(o == "adamw_fused") or None)


def train(cfg, steps, warmup, reserve_bytes=0, step_temp_bytes=0):
    """Run warmup + steps optimizer steps; returns the measured result (rank 0 numbers).

    reserve_bytes: a block held through the run, standing in on one GPU for what a multi-GPU
    job holds beyond it (NCCL buffers, DDP's bucket copy).  step_temp_bytes: allocated when
    backward starts (all activations still alive) and freed when it ends, each micro-step, as
    apex DDP's flat all-reduce buffers are.  Together they reproduce, on one GPU, a multi-GPU
    run at a batch that only just fits one GPU; alloc_retries counts the caching allocator's
    free-everything-and-retry events (torch.cuda.memory_stats num_alloc_retries) while timed."""
    import torch
    import torch.nn.functional as F
    world, rank, local = 1, 0, 0
    if cfg["strategy"] == "ddp":
        import torch.distributed as dist
        dist.init_process_group("nccl")
        world, rank = dist.get_world_size(), dist.get_rank()
        local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    prec = cfg["precision"]
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.benchmark = True
    model, kind = build_model(cfg)
    model.to(dev)
    if prec in ("bf16", "fp16"):
        model.to(torch.bfloat16 if prec == "bf16" else torch.float16)
    if cfg["checkpointing"] and kind == "plain":
        print("train.py: checkpointing needs transformers for BERT; ignored", file=sys.stderr)
    if cfg["strategy"] == "dp":
        model = torch.nn.DataParallel(model)
    elif cfg["strategy"] == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = make_optimizer(cfg, model.parameters())
    scaler = torch.cuda.amp.GradScaler(enabled=prec == "amp_fp16")
    autocast_dtype = {"amp_fp16": torch.float16, "amp_bf16": torch.bfloat16}.get(prec)
    batch = cfg["batch_per_gpu"] * (torch.cuda.device_count() if cfg["strategy"] == "dp" else 1)

    synthetic = cfg["data"] == "synthetic"
    loader_iter = None
    if synthetic:
        ds = make_dataset(cfg)
        fixed = torch.utils.data.default_collate([ds[i] for i in range(batch)])
        fixed = [t.to(dev) for t in fixed]
    else:
        kw = dict(batch_size=batch, num_workers=cfg["num_workers"], pin_memory=bool(cfg["pin_memory"]))
        if cfg["num_workers"] > 0:
            kw.update(prefetch_factor=cfg["prefetch_factor"], persistent_workers=bool(cfg["persistent_workers"]))
        loader_iter = iter(torch.utils.data.DataLoader(make_dataset(cfg), **kw))

    def next_batch():
        if synthetic:
            return fixed
        return [t.to(dev, non_blocking=bool(cfg["pin_memory"])) for t in next(loader_iter)]

    def loss_of(x, y):
        if cfg["model"] in VISION_PRESETS:
            if prec in ("bf16", "fp16"):
                x = x.to(next(model.parameters()).dtype)
            return F.cross_entropy(model(x), y)
        if kind == "hf":
            if cfg["task"] == "squad":
                return model(input_ids=x, start_positions=y[:, 0], end_positions=y[:, 1]).loss
            return model(input_ids=x, labels=y).loss
        out = model(x)
        if cfg["task"] == "squad":
            return F.cross_entropy(out[..., 0], y[:, 0]) + F.cross_entropy(out[..., 1], y[:, 1])
        return F.cross_entropy(out, y)

    held = [torch.empty(reserve_bytes, dtype=torch.uint8, device=dev)] if reserve_bytes > 0 else []  # noqa: F841 (alive until train returns)
    temps = []

    def take_temp(grad):
        temps.append(torch.empty(step_temp_bytes, dtype=torch.uint8, device=dev).fill_(0))
        return grad

    def step():
        for _ in range(cfg["grad_accum"]):
            x, y = next_batch()
            with torch.autocast("cuda", dtype=autocast_dtype, enabled=autocast_dtype is not None):
                loss = loss_of(x, y) / cfg["grad_accum"]
            if step_temp_bytes > 0:
                loss.register_hook(take_temp)
            scaler.scale(loss).backward()
            temps.clear()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats(dev)
    retries0 = torch.cuda.memory_stats(dev).get("num_alloc_retries", 0)
    with UtilSampler(local) as util:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
    step_s = elapsed / steps
    samples = batch * cfg["grad_accum"] * world
    return {
        "rank": rank,
        "step_s": step_s,
        "samples_per_s": samples / step_s,
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(dev),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(dev),
        "capacity_bytes": torch.cuda.get_device_properties(dev).total_memory,
        "gpu_util_frac": util.mean(),
        "gpu_name": torch.cuda.get_device_name(dev),
        "alloc_retries": torch.cuda.memory_stats(dev).get("num_alloc_retries", 0) - retries0,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="keys: " + " ".join(f"{k}=" for k in KEYS))
    ap.add_argument("words", nargs="*", help="config as key=value words (DESIGN section 2)")
    ap.add_argument("--steps", type=int, default=200, help="timed optimizer steps [200]")
    ap.add_argument("--warmup", type=int, default=20, help="untimed steps first [20]")
    ap.add_argument("--out", default="runs.csv", help="run-record CSV to append to [runs.csv]")
    ap.add_argument("--memory-out", default=None, help="memory/util sidecar CSV [OUT with _memory]")
    ap.add_argument("--id", default=None, help="run id [derived from the config]")
    ap.add_argument("--source", default=None, help="source column [epochcast train.py, the command]")
    ap.add_argument("--reserve-bytes", type=int, default=0,
                    help="bytes held through the run: what a multi-GPU job holds beyond one GPU [0]")
    ap.add_argument("--step-temp-bytes", type=int, default=0,
                    help="bytes allocated at the start of each backward and freed at its end [0]")
    args = ap.parse_args(argv)
    if args.reserve_bytes < 0 or args.step_temp_bytes < 0:
        ap.error("--reserve-bytes and --step-temp-bytes must be >= 0")
    try:
        cfg = parse_words(args.words)
    except ConfigError as e:
        ap.error(str(e))
    result = train(cfg, args.steps, args.warmup, args.reserve_bytes, args.step_temp_bytes)
    if result["rank"] != 0:
        return 0
    if not cfg["gpu"]:
        cfg["gpu"] = result["gpu_name"]  # nvidia-smi names resolve in epochcast
    result["id"] = args.id or run_id(cfg)
    source = args.source or "epochcast bench/harness/train.py " + " ".join(sys.argv[1:])
    append_csv(args.out, ["id"] + RECORD_KEYS + ["metric", "value", "source"], records(cfg, result, source))
    mem_path = args.memory_out or os.path.splitext(args.out)[0] + "_memory.csv"
    util = result["gpu_util_frac"]
    append_csv(mem_path, MEMORY_COLUMNS, [{
        "id": result["id"], "peak_allocated_bytes": result["peak_allocated_bytes"],
        "peak_reserved_bytes": result["peak_reserved_bytes"], "capacity_bytes": result["capacity_bytes"],
        "gpu_util_frac": "" if util is None else f"{util:.3f}", "step_time_ms": f"{1000 * result['step_s']:.6g}",
        "samples_per_s": f"{result['samples_per_s']:.6g}", "alloc_retries": result["alloc_retries"],
        "reserve_bytes": args.reserve_bytes, "step_temp_bytes": args.step_temp_bytes}])
    print(f"{result['id']}: {1000 * result['step_s']:.2f} ms/step, {result['samples_per_s']:.1f} samples/s, "
          f"peak {result['peak_allocated_bytes'] / 2**30:.2f} GiB allocated, "
          f"{result['peak_reserved_bytes'] / 2**30:.2f} GiB reserved, {result['alloc_retries']} allocator retries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
