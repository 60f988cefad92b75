#!/usr/bin/python3
"""Seeds for fuzz_json and fuzz_config that reach the real-number paths (issue 42).

fuzz_json: for one valid config.json per model_type (tests/data/hf/*/config.json, else
models/networks/*.json, else the first that parses of tests/fuzz/corpus/json), a copy with every whole-number field written as a real
("768.0"), and for each whole-number field (top level, attn_config, vision_config) a copy with
that field alone set to one of 1e300, -1e300, -0.0, 4096.0, 1.5, 9.3e18, 1e-320, 1e400
(in turn).  fuzz_config: every key with a hostile real, the optimizer's values, and the
optimizer's keys with reals.  Writes tests/fuzz/corpus/{json,config}/real-*.

    /usr/bin/python3 tests/fuzz/seeds_reals.py
"""
import glob
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
        if isinstance(cfg, dict) and isinstance(cfg.get("model_type"), str):
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


if __name__ == "__main__":
    print("json seeds:", json_seeds())
    print("config seeds:", config_seeds())
