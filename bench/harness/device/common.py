"""common.py: what every section of bench/harness/device_check.sh shares.

Each section is one file of this folder run as `python3 SECTION.py --out DIR [--cap-s S]
[--dry-run]`. It appends to files of DIR in fixed formats (the writers below, the only code
that writes them): run records in the schema `epochcast validate` reads (docs/accuracy.md,
core/src/fit/runs.c) to DIR/runs.csv, memory readings to DIR/memory.csv, and its microbenchmark
rows to DIR/<table>.csv. `--dry-run` needs no torch and no GPU: the section writes synthetic
rows of the same shape through the same writers (and never imports torch), so the formats and
the plan are checked on a CPU machine (tests/cli/test_device_check.sh). A section keeps to its
time cap (`Budget`): it stops adding measurements when the cap is near, and device_check.sh
kills it at the cap.
"""
import argparse
import csv
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
GPUS_CSV = os.path.join(ROOT, "models", "gpus.csv")

# Run records: the config keys written (all real keys of `epochcast predict --help`), then the
# measurement. An empty cell is the key's default.
RUN_KEYS = ["model", "task", "gpu", "num_gpus", "strategy", "precision", "torch_version", "cudnn_version",
            "batch_per_gpu", "seq_len", "image_size", "grad_accum", "optimizer", "checkpointing", "attention",
            "memory_format", "trainer", "data", "lora_r", "lora_targets"]
RUN_COLUMNS = ["id"] + RUN_KEYS + ["metric", "memory_reading", "value", "source", "note_section"]
MEMORY_COLUMNS = ["id", "section", "peak_allocated_bytes", "peak_reserved_bytes", "nvml_peak_bytes",
                  "capacity_bytes", "step_time_ms", "samples_per_s", "steps", "status"]
# Microbenchmark tables: name -> columns.
TABLES = {
    "gemm": ["m", "n", "k", "dtype", "shape_class", "time_s", "flop_per_s", "peak_flop_per_s", "efficiency_frac",
             "status"],
    "attention": ["impl", "backend", "batch", "heads", "seq", "head_dim", "causal", "pass", "dtype", "time_s",
                  "flop_per_s", "status"],
    "bandwidth": ["kernel", "dtype", "elements", "bytes_moved", "time_s", "bytes_per_s", "spec_bytes_per_s",
                  "efficiency_frac", "status"],
    "launch": ["metric", "value_s", "launches", "status"],
    "gemm_sustained": ["m", "n", "k", "dtype", "short_flop_per_s", "back_to_back_s", "back_to_back_flop_per_s",
                       "sustained_tensor_frac", "status"],
    "optimizer": ["optimizer", "epochcast_optimizer", "gpu", "tensors", "params", "dtype", "time_s", "steps",
                  "status"],
    "failures": ["section", "exit_code", "elapsed_s", "cap_s", "note"],
}
# Profile rows: the header of models/profile.csv.
PROFILE_COLUMNS = ["parameter", "architecture", "value", "stderr", "runs", "fitted_on", "kernels", "meaning"]
SOURCE = "device_check"


class Budget:
    """The section's time cap: `left()` seconds remain; `ok(need_s)` says whether a measurement
    needing about need_s still fits (with a margin for writing and exiting)."""

    def __init__(self, cap_s, margin_s=3.0):
        self.t0 = time.monotonic()
        self.cap_s = cap_s
        self.margin_s = margin_s

    def left(self):
        return self.cap_s - (time.monotonic() - self.t0)

    def ok(self, need_s=1.0):
        return self.left() > need_s + self.margin_s


def parse_args(doc, argv=None):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--cap-s", type=float, default=60.0, help="time cap of this section, seconds")
    ap.add_argument("--dry-run", action="store_true", help="no torch: write synthetic rows through the writers")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    return args


def _append(path, columns, rows):
    """Append dict rows (header when new); a file with another header is refused, not mixed."""
    exists = os.path.exists(path) and os.path.getsize(path) > 0
    if exists:
        with open(path, newline="") as f:
            header = next(csv.reader(f), None)
        if header != columns:
            raise ValueError(f"{path}: its header {header} differs from {columns}")
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n", extrasaction="raise")
        if not exists:
            w.writeheader()
        for r in rows:
            w.writerow({c: fmt(r.get(c, "")) for c in columns})


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


def write_table(out, name, rows):
    _append(os.path.join(out, name + ".csv"), TABLES[name], rows)


def write_runs(out, rows):
    for r in rows:
        unknown = set(r) - set(RUN_COLUMNS)
        if unknown:
            raise ValueError(f"run record {r.get('id')}: unknown columns {sorted(unknown)}")
    _append(os.path.join(out, "runs.csv"), RUN_COLUMNS, rows)


def write_memory(out, rows):
    _append(os.path.join(out, "memory.csv"), MEMORY_COLUMNS, rows)


def write_profile(path, rows):
    """Profile rows (models/profile.csv's format), written whole: a profile is one fit."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PROFILE_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: fmt(r.get(c, "")) for c in PROFILE_COLUMNS})
    os.replace(tmp, path)


def read_table(out, name):
    path = os.path.join(out, name + ".csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run_records(base, rid, section, measured, mem=None):
    """The run records of one timed training run: samples/s and ms/step, and the three memory
    readings as peak_bytes qualified by memory_reading (nvml, reserved, allocated)."""
    base = {k: base.get(k, "") for k in RUN_KEYS}
    common = dict(base, source=SOURCE, note_section=section)
    rows = [dict(common, id=rid + "-sps", metric="samples_per_s", value=measured["samples_per_s"]),
            dict(common, id=rid + "-step", metric="step_time_ms", value=measured["step_time_ms"])]
    for reading, key in (("nvml", "nvml_peak_bytes"), ("reserved", "peak_reserved_bytes"),
                         ("allocated", "peak_allocated_bytes")):
        v = (mem or {}).get(key)
        if v:
            rows.append(dict(common, id=f"{rid}-mem-{reading}", metric="peak_bytes", memory_reading=reading,
                             value=int(v)))
    return rows


# ---- the GPU's row of models/gpus.csv ------------------------------------------------------

def _norm(s):
    return "".join(ch for ch in s.lower() if ch.isalnum())


def gpu_row(name):
    """The models/gpus.csv row whose name, id or alias is `name` (as torch or nvidia-smi spells
    it), or None."""
    with open(GPUS_CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    want = _norm(name)
    for r in rows:
        names = [r["id"], r["name"]] + [a for a in r["aliases"].split(";") if a]
        if want in {_norm(n) for n in names}:
            return r
    return None


def peak_flop_per_s(row, dtype):
    """The dense peak the table gives for a GEMM dtype ('fp32', 'tf32', 'fp16', 'bf16', 'fp8')."""
    if row is None:
        return 0.0
    col = {"fp32": "peak_fp32_flop_per_s", "tf32": "peak_tf32_flop_per_s", "fp16": "peak_fp16_flop_per_s",
           "bf16": "peak_bf16_flop_per_s", "fp8": "peak_fp8_flop_per_s"}[dtype]
    try:
        return float(row[col] or 0)
    except (KeyError, ValueError):
        return 0.0


# ---- the GPU in the dry run ------------------------------------------------------------------

DRY_GPU = "NVIDIA H100 80GB HBM3"


def device_name(dry):
    if dry:
        return DRY_GPU
    import torch
    return torch.cuda.get_device_name(0)


def releases(dry):
    """The software releases as the keys take them (major.minor): torch_version from torch.__version__
    ('2.5'), cudnn_version from torch.backends.cudnn.version() (9.x: major x 10000 + minor x 100 +
    patch, 91002 is '9.10'; 8.x: major x 1000 + minor x 100 + patch), '' without cuDNN."""
    if dry:
        return {"torch_version": "2.5", "cudnn_version": "9.1"}
    import torch
    parts = torch.__version__.split("+")[0].split(".")
    v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    cudnn = ""
    if v:
        major = v // 10000 if v >= 90000 else v // 1000
        minor = (v % 10000) // 100 if v >= 90000 else (v % 1000) // 100
        cudnn = f"{major}.{minor}"
    return {"torch_version": f"{int(parts[0])}.{int(parts[1])}", "cudnn_version": cudnn}


# ---- memory readings ---------------------------------------------------------------------------

class NvmlPeak:
    """Peak used memory of GPU 0 as NVML (nvidia-smi) reports it, sampled every 20 ms in a
    thread while the block runs; 0 when NVML is not there."""

    def __init__(self):
        self.peak = 0
        self._stop = None

    def __enter__(self):
        import threading
        try:
            import pynvml
            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)

            def read():
                return pynvml.nvmlDeviceGetMemoryInfo(handle).used
            read()
        except Exception:  # no pynvml: one nvidia-smi call per 200 ms instead
            import subprocess

            def read():
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                                      "-i", "0"], capture_output=True, text=True, timeout=5)
                return int(out.stdout.strip().splitlines()[0]) << 20
            try:
                read()
            except Exception:
                return self
        self._stop = threading.Event()

        def loop():
            while not self._stop.is_set():
                try:
                    self.peak = max(self.peak, read())
                except Exception:
                    return
                self._stop.wait(0.02)
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._stop is not None:
            self._stop.set()
            self._thread.join(timeout=2)
        return False


def reset_memory():
    import gc
    import torch
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def memory_readings(nvml):
    import torch
    free, total = torch.cuda.mem_get_info()
    return {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
            "nvml_peak_bytes": nvml.peak, "capacity_bytes": total}


def is_oom(exc):
    name = type(exc).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def env_dict(dry):
    d = {"python": sys.version.split()[0], "platform": platform.platform()}
    if dry:
        d.update(torch="(dry run)", cuda="(dry run)", gpu=DRY_GPU)
        return d
    import torch
    d.update(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
             gpu=torch.cuda.get_device_name(0), capability=".".join(map(str, torch.cuda.get_device_capability(0))),
             gpus=torch.cuda.device_count())
    return d


def dump_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


# ---- timing a training loop ------------------------------------------------------------------

def timed_steps(step, warmup, steps, budget):
    """Run step() warmup times, then up to `steps` times between synchronizes (fewer when the
    budget runs short); returns (seconds per step, timed steps)."""
    import torch
    t_first = time.perf_counter()
    step()
    torch.cuda.synchronize()
    once = time.perf_counter() - t_first
    for _ in range(max(0, warmup - 1)):
        step()
    torch.cuda.synchronize()
    n_max = steps
    if once > 0:
        n_max = max(2, min(steps, int((budget.left() - budget.margin_s - 2 * once) / once)))
    t0 = time.perf_counter()
    for _ in range(n_max):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n_max, n_max


def train_run(out, section, rid, cfg, build, samples_per_step, warmup, steps, budget):
    """Build a model (build() -> step function), time its steps and write its run records and
    memory row; a failure is written as a memory row with its status, an out-of-memory one also
    as a run record with metric oom (value 1). Returns the measured dict or None."""
    import torch
    reset_memory()
    status, measured, mem = "ok", None, {}
    try:
        with NvmlPeak() as nvml:
            step = build()
            step_s, n = timed_steps(step, warmup, steps, budget)
            torch.cuda.synchronize()
        mem = memory_readings(nvml)
        measured = {"step_time_ms": 1e3 * step_s, "samples_per_s": samples_per_step / step_s, "steps": n}
        write_runs(out, run_records(cfg, rid, section, measured, mem))
    except Exception as e:  # OOM or anything else: said, and the next run goes on
        status = ("oom: " if is_oom(e) else "failed: ") + f"{type(e).__name__}: {e}"[:160].replace("\n", " ")
        if is_oom(e):
            write_runs(out, [dict({k: cfg.get(k, "") for k in RUN_KEYS}, id=rid + "-oom", metric="oom", value=1,
                                  source=SOURCE, note_section=section)])
    finally:
        step = None
        reset_memory()
    write_memory(out, [dict(mem, id=rid, section=section, status=status, **(measured or {}))])
    return measured


def dry_train_run(out, section, rid, cfg, samples_per_step, step_ms=250.0):
    """The dry run's stand-in for train_run: plausible numbers through the same writers."""
    measured = {"step_time_ms": step_ms, "samples_per_s": samples_per_step / (step_ms / 1e3), "steps": 10}
    mem = {"peak_allocated_bytes": 20 << 30, "peak_reserved_bytes": 22 << 30, "nvml_peak_bytes": 23 << 30,
           "capacity_bytes": 80 << 30}
    write_runs(out, run_records(cfg, rid, section, measured, mem))
    write_memory(out, [dict(mem, id=rid, section=section, status="dry-run", **measured)])
