#!/usr/bin/env python3
"""Regenerate models/hosts.csv (host CPU priors) from the derivation below.

Base machine = the Colab-class VM of the Hugging Face course tokenizer timing
(research/modeling.md 5.3, [R19]); every host scales the single-thread costs by a
relative single-thread speed `st` (colab = 1.0).  The NCCL rates through the host are
fitted by tools/data/fit_pcie_p2p.py and fit_host_busbw.py or taken from NCCL's own
figures (HOSTS says which).  Python 3 stdlib only.

    python3 tools/data/make_hosts.py            # writes models/hosts.csv
    python3 tools/data/make_hosts.py --check    # the same CSV on stdout (ctest models_hosts_current diffs it)
"""
import csv
import io
import os
import sys

COLUMNS = ["id", "description", "cores", "dispatch_fwd_s", "dispatch_bwd_s", "step_overhead_s",
           "memcpy_bytes_per_s", "host_hop_busbw_bytes_per_s", "through_host_busbw_bytes_per_s", "socket_gpus",
           "cross_socket_busbw_bytes_per_s",
           "fast_tokenizer_tokens_per_s", "python_tokenizer_tokens_per_s", "worker_start_s",
           "collate_per_sample_s", "source"]

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

# The NCCL rates through the host (B/s), each with its source:
#   host hop: a peer-to-peer PCIe ring of more than two GPUs staged through host memory
#   (tools/data/fit_pcie_p2p.py); through host: a ring with every byte through host memory,
#   0 where the GPU's link at pcie_host_busbw_frac sets it (tools/data/fit_host_busbw.py);
#   across sockets: such a ring of more GPUs than one socket holds (socket_gpus), whose bytes also
#   cross the socket link (fit_host_busbw.py --cross-socket; 0 and 0: not known, the through-host
#   rate holds).
HOP_FIT = 1.06e10
HOP_FIT_SOURCE = (
    "; host_hop_busbw_bytes_per_s fitted by tools/data/fit_pcie_p2p.py on the 10 four- and eight-GPU A100 "
    "PCIe DDP pairs of bench/data/calibration_dle.csv (Lambda v0; 3.8 -> 1.3 pp mean abs scaling error), held "
    "out the 72 of bench/data/holdout_runs.csv (RTX A-series, A40, Quadro RTX: 6.9 -> 5.1 pp, bias +6.7 -> "
    "+4.1 pp); NCCL's own figure for a Skylake-to-Ice-Lake socket link is 10 GB/s (NVIDIA/nccl "
    "src/graph/topo.h SKL_QPI_BW)")
HOP_DEFAULT_SOURCE = ("; host_hop_busbw_bytes_per_s: the default server's [U] (a GeForce desktop has no "
                      "peer-to-peer; a single-socket desktop's root ports are assumed no faster)")
SPR_SOURCE = (
    " (the default server's dispatch, loader and copy figures [U]); host_hop_busbw_bytes_per_s: NCCL's figure "
    "for a Sapphire Rapids socket link, 22 GB/s (NVIDIA/nccl src/graph/topo.h SRP_QPI_BW, against SKL_QPI_BW "
    "10 for the generation the default host's fitted 10.6 GB/s matches)")
EPYC_THROUGH_HOST = 1.47e9
EPYC_SOCKET_GPUS, EPYC_CROSS_SOCKET = 4, 1.22e9
EPYC_SOURCE = HOP_FIT_SOURCE + (
    "; through_host_busbw_bytes_per_s fitted by tools/data/fit_host_busbw.py (least squares on scaling "
    "efficiency) on the 12 two-GPU DDP pairs that Lambda's v1 harness ran with NCCL_P2P_DISABLE=1 on two EPYC "
    "boards named by their sys_pytorch.txt (A100 SXM4 80GB: Supermicro H12DGO-6, 2x EPYC 7H12; A100 PCIe "
    "80GB: Gigabyte MZ22-G20, 1x EPYC 7502); held out: their 4-8 GPU pairs and the 4x/8x RTX 3090 runs on a "
    "Gigabyte MZ52-G40 (2x EPYC 7662), bench/results/host_busbw.md; socket_gpus 4: half of an 8-GPU "
    "2-socket board; cross_socket_busbw_bytes_per_s fitted by fit_host_busbw.py --cross-socket on the five "
    "8-GPU A100 pairs of the H12DGO-6 (least squares on scaling efficiency, the through-host rate fixed), "
    "held out: the 8x RTX 3090 on the MZ52-G40 and the 8x RTX 3070 on the H12DSG-O-CPU")

HOSTS = [
    # id, description, cores, st, memcpy B/s, worker start s, host hop B/s, through host B/s,
    # (GPUs a socket holds, through-host B/s across sockets), source tail
    ("default", "typical 2-socket training server (32 cores, ~2.5-3.5 GHz Xeon/EPYC)", 32, 1.3,
     8e9, 0.2, HOP_FIT, 0, (0, 0), HOP_FIT_SOURCE),
    ("server-spr", "2-socket 4th-generation Xeon Scalable (Sapphire Rapids, e.g. Gold 6448Y) training server",
     32, 1.3, 8e9, 0.2, 2.2e10, 0, (0, 0), SPR_SOURCE),
    ("workstation", "16-core desktop (e.g. Ryzen 9 / Core i9 at 5+ GHz) next to an RTX 4090", 16,
     1.8, 10e9, 0.15, HOP_FIT, 0, (0, 0), HOP_DEFAULT_SOURCE),
    ("colab", "2 vCPU cloud notebook (Colab/Kaggle-class Xeon at ~2.2 GHz, 1 core + HT)", 2, 1.0,
     5e9, 0.4, HOP_FIT, 0, (0, 0), HOP_DEFAULT_SOURCE),
    ("cloud-8vcpu", "8 vCPU cloud VM (e.g. g4dn.2xlarge / g5.2xlarge class)", 8, 1.2, 6e9, 0.25, HOP_FIT, 0,
     (0, 0), HOP_DEFAULT_SOURCE),
    ("server-epyc", "AMD EPYC 7002/7003 GPU server, one or two sockets (e.g. Supermicro H12DGO-6 / "
     "H12DSG-O-CPU, Gigabyte MZ22-G20 / MZ52-G40)", 32, 1.3, 8e9, 0.2, HOP_FIT, EPYC_THROUGH_HOST,
     (EPYC_SOCKET_GPUS, EPYC_CROSS_SOCKET), EPYC_SOURCE),
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


def render():
    """models/hosts.csv's text."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for hid, desc, cores, st, memcpy, wstart, hop, through, (socket_gpus, across), tail in HOSTS:
        k = REF_ST / st
        w.writerow([fmt(x) for x in [
            hid, desc, cores, sig(FWD_REF * k), sig(BWD_REF * k), sig(STEP_REF * k), memcpy, hop, through, socket_gpus, across,
            sig(FAST_BASE * st), sig(PY_BASE * st), wstart, sig(COLLATE_REF * k),
            SOURCE.format(st=st, ref=REF_ST) + tail]])
    return out.getvalue()


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "models", "hosts.csv")
    if argv[1:] == ["--check"]:  # the CSV on stdout, for ctest's diff against models/hosts.csv
        sys.stdout.write(render())
        return 0
    if argv[1:]:
        sys.stderr.write(__doc__)
        return 2
    with open(path + ".tmp", "w", newline="") as f:
        f.write(render())
    os.replace(path + ".tmp", path)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
