#!/usr/bin/python3
"""Seeds for fuzz_json and fuzz_config that reach the real-number paths (issue 42).

fuzz_json: for one valid config.json per model_type (tests/data/hf/*/config.json, else
models/networks/*.json, else the first that parses of tests/fuzz/corpus/json), a copy
with every whole-number field written as a real ("768.0"), and for each whole-number field (top level, attn_config, vision_config) a copy with
that field alone set to one of 1e300, -1e300, -0.0, 4096.0, 1.5, 9.3e18, 1e-320, 1e400
(in turn).  fuzz_config: every key with a hostile real, the optimizer's values, and the
optimizer's keys with reals; fuzz_optimize: the layout search's keys and options (goal,
train_tokens 1e-320 / 1e300 / -0.0, lists of degrees, strategies) with reals.  Writes
tests/fuzz/corpus/{json,config,optimize}/real-*.

    /usr/bin/python3 tests/fuzz/seeds_reals.py
"""
import glob
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUPPORTED = ("bert roberta distilbert albert deberta-v2 gpt2 gpt_neox llama mistral mixtral qwen2 qwen2_moe "
             "qwen3_moe gemma gemma2 phi3 mpt falcon t5 mt5 vit clip_vision_model clip opt bloom "
             "torchvision_resnet torchvision_vit").split()
HOSTILE = ["1e300", "-1e300", "-0.0", "4096.0", "1.5", "9.3e18", "1e-320", "1e400"]


def sources():
    by_type = {}
    files = sorted(glob.glob(os.path.join(ROOT, "tests/data/hf/*/config.json")))
    files += sorted(glob.glob(os.path.join(ROOT, "models/networks/*.json")))
    files += sorted(glob.glob(os.path.join(ROOT, "tests/fuzz/corpus/json/*")))
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                cfg = json.load(fh)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(cfg, dict) and cfg.get("model_type") in SUPPORTED:
            by_type.setdefault(cfg["model_type"], cfg)
    return by_type


def int_fields(cfg, prefix=()):
    for k, v in cfg.items():
        if isinstance(v, bool):
            continue
        if not k.replace("_", "").isalnum() or not k.isascii():
            continue
        if isinstance(v, int):
            yield prefix + (k,)
        elif isinstance(v, dict) and k in ("attn_config", "vision_config", "text_config"):
            yield from int_fields(v, prefix + (k,))


def dump_with(cfg, path, text):
    """cfg as JSON with the field at path written as the raw text."""
    marker = "@@REAL@@"
    c = json.loads(json.dumps(cfg))
    d = c
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = marker
    return json.dumps(c).replace('"%s"' % marker, text)


def as_reals(cfg):
    def conv(v):
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            return float(v)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return json.dumps(conv(cfg))


def write(folder, name, text):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        fh.write(text)


def json_seeds():
    out = os.path.join(ROOT, "tests/fuzz/corpus/json")
    n = 0
    for t, cfg in sorted(sources().items()):
        write(out, "real-%s-all" % t, as_reals(cfg))
        n += 1
        for i, path in enumerate(int_fields(cfg)):
            write(out, "real-%s-%s" % (t, "-".join(path)), dump_with(cfg, path, HOSTILE[i % len(HOSTILE)]))
            n += 1
    return n


KEYS_REAL = ["num_gpus", "nodes", "network_gbit_per_s", "busbw_gbyte_per_s", "batch_per_gpu", "seq_len",
             "image_size", "grad_accum", "num_workers", "prefetch_factor", "sample_cpu_s", "dataset_samples",
             "epochs", "eval_samples", "checkpoints_per_epoch", "gpu_step_s", "seed", "loop_ops_per_sample",
             "loop_syncs_per_sample", "target_len", "zero_stage", "tp", "pp", "pp_chunks", "ep", "cp",
             "gpus_per_node", "lora_r", "price_per_gpu_hour", "max_grad_norm", "eval_batch",
             "eval_every_steps", "torch_version"]
OPTIMIZERS = ["sgd", "adam", "adamw", "adamw_foreach", "adamw_fused", "lamb", "adamw_torch", "adamw_torch_fused",
              "adamw_hf", "adafactor", "adamw_8bit", "paged_adamw_8bit", "sgd_momentum", "none"]


def config_seeds():
    out = os.path.join(ROOT, "tests/fuzz/corpus/config")
    n = 0
    for i, k in enumerate(KEYS_REAL):
        words = ["%s=%s" % (k, HOSTILE[(i + j) % len(HOSTILE)]) for j in range(2)]
        write(out, "real-%s" % k, " ".join(words[:1]) + "\n")
        n += 1
    for o in OPTIMIZERS:
        write(out, "real-optimizer-%s" % o,
              "optimizer=%s strategy=zero num_gpus=8 zero_stage=2.0 offload=optimizer max_grad_norm=1e300 "
              "grad_accum=4096.0 eval_samples=1e-320 dataset_samples=-0.0\n" % o)
        n += 1
    return n


OPTIMIZE = [
    "",
    "goal=train_time train_tokens=1e-320",
    "goal=cost train_tokens=1e300",
    "goal=train_time train_tokens=-0.0",
    "goal=cost train_tokens=4096.0 top=1e300",
    "train_tokens=9.3e18 goal=tokens_per_s top=0",
    "tp=1,2,4.0 pp=1,2 cp=1 batch_per_gpu=1,4",
    "strategy=zero zero_stage=1,2,3 optimizer=adamw_8bit offload=optimizer",
    "strategy=fsdp sharding=full_shard,shard_grad_op optimizer=adafactor max_grad_norm=1e300",
    "num_gpus=1,2,4 global_batch=4096.0 optimizer=sgd_momentum",
    "global_batch_tokens=1e300 num_gpus=8",
    "global_batch_tokens=1e-320",
    "pp=2,4 pp_schedule=1f1b,interleaved pp_chunks=2.0 checkpointing=0,selective,1",
    "model=mixtral-8x7b ep=1,2,4,8 gpu=h100-sxm5-80gb num_gpus=64 seq_len=4096",
    "gpu=t4,a100-sxm4-80gb,h100-sxm5-80gb goal=cost optimizer=lamb precision=amp_bf16",
]


# Inputs that abort a harness on the code of the day: kept out of the replayed corpus (ctest's
# fuzz_replay_*) until the defect is fixed, in tests/fuzz/crashes/ under a plain name.
CRASHES = {"goal=train_time train_tokens=1e-320": "optimize-train_tokens-1e-320"}


def optimize_seeds():
    out = os.path.join(ROOT, "tests/fuzz/corpus/optimize")
    for i, words in enumerate(OPTIMIZE):
        if words in CRASHES:
            write(os.path.join(ROOT, "tests/fuzz/crashes"), CRASHES[words], words + "\n")
        else:
            write(out, "real-%02d" % i, words + "\n")
    return len(OPTIMIZE)


if __name__ == "__main__":
    print("json seeds:", json_seeds())
    print("config seeds:", config_seeds())
    print("optimize seeds:", optimize_seeds())
