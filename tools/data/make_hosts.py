#!/usr/bin/env python3
"""Regenerate models/hosts.csv (host CPU priors) from the derivation below.

Base machine = the Colab-class VM of the Hugging Face course tokenizer timing
(research/modeling.md 5.3, [R19]); every host scales the single-thread costs by a
relative single-thread speed `st` (colab = 1.0).  Python 3 stdlib only.

    python3 tools/data/make_hosts.py
"""
import csv
import os

COLUMNS = ["id", "description", "cores", "dispatch_fwd_s", "dispatch_bwd_s", "step_overhead_s",
           "memcpy_bytes_per_s", "fast_tokenizer_tokens_per_s", "python_tokenizer_tokens_per_s",
           "worker_start_s", "collate_per_sample_s", "source"]

# --- base (st = 1.0) -----------------------------------------------------------------------
# HF course, Drug Review (~200k reviews, ~100 tokens each):
#   fast tokenizer, batched=False: 59.2 s  -> 200e3/59.2 = 3.4k samples/s -> 3.4e5 tokens/s
#   slow (Python) tokenizer:       281 s   -> 200e3/281  = 712 samples/s -> 7.1e4 tokens/s
# (the course machine is Colab-class, so these are the st = 1.0 figures)
SAMPLES, TOKENS = 200e3, 100
FAST_BASE = SAMPLES * TOKENS / 59.2
PY_BASE = SAMPLES * TOKENS / 281.0
# Eager dispatch priors for the reference server (st = 1.3), modeling.md 4 / hardware README 2.5:
#   forward op ~5-8 us host time (7 us tiny CUDA elementwise, 8 us A100 add submit) -> 6 us
#   backward op ~3-5 us (C++ autograd engine, no Python)                             -> 4 us
#   Python step bookkeeping: a few hundred us to a ms                                  -> 500 us
#   collate (default_collate / DataCollatorWithPadding) ~20-50 us per sample          -> 30 us
REF_ST = 1.3
FWD_REF, BWD_REF, STEP_REF, COLLATE_REF = 6e-6, 4e-6, 5e-4, 3e-5

HOSTS = [
    # id, description, cores, st, memcpy B/s, worker start s
    ("default", "typical 2-socket training server (32 cores, ~2.5-3.5 GHz Xeon/EPYC)", 32, 1.3,
     8e9, 0.2),
    ("workstation", "16-core desktop (e.g. Ryzen 9 / Core i9 at 5+ GHz) next to an RTX 4090", 16,
     1.8, 10e9, 0.15),
    ("colab", "2 vCPU cloud notebook (Colab/Kaggle-class Xeon at ~2.2 GHz, 1 core + HT)", 2, 1.0,
     5e9, 0.4),
    ("cloud-8vcpu", "8 vCPU cloud VM (e.g. g4dn.2xlarge / g5.2xlarge class)", 8, 1.2, 6e9, 0.25),
]

SOURCE = ("modeling.md 4 [R32 R32b R32c] and 5.2-5.3 [R16 R19 R41]; hardware README 2.5 "
          "(pytorch#41383; FlagGems#4812; MLI); st={st} relative single-thread speed "
          "(colab=1.0): dispatch/step/collate = server priors x {ref}/st, tokenizers = "
          "HF-course rates (3.4k/712 samples/s x 100 tokens) x st")


def sig(x, n=2):
    return float("%.*g" % (n, x))


def fmt(v):
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        s = "%.6g" % v
        if "e" in s:
            m, e = s.split("e")
            s = "%se%d" % (m, int(e))
        return s
    return str(v)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "models", "hosts.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for hid, desc, cores, st, memcpy, wstart in HOSTS:
            k = REF_ST / st
            w.writerow([fmt(x) for x in [
                hid, desc, cores, sig(FWD_REF * k), sig(BWD_REF * k), sig(STEP_REF * k),
                memcpy, sig(FAST_BASE * st), sig(PY_BASE * st), wstart, sig(COLLATE_REF * k),
                SOURCE.format(st=st, ref=REF_ST)]])
    print("wrote", path)


if __name__ == "__main__":
    main()
