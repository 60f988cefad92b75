#!/usr/bin/env python3
"""Transcribe MLPerf Training v5.1 closed-division Llama 3.1 8B results that ran NVIDIA's NeMo
implementation in FP8 into bench/data/llm/mlperf_llama31_8b.csv (the raw schema of
bench/data/llm/README.md).  Python 3 stdlib.

    python3 tools/data/mlperf_llama31_from_logs.py GITDIR_V5_1 > bench/data/llm/mlperf_llama31_8b.csv

GITDIR is a git directory of mlcommons/training_results_v5.1 (what the project's `fetch` tool
mirrors); the script reads HEAD with `git show`.  The committed CSV is its output at the commit it
names; the repository is not in this project, so ctest does not rerun it.

What is read: each system directory's result_*.txt (MLLOG lines; each file one run of the same
config): every `tracked_stats` `train_step_time` (seconds per optimizer step, NeMo's step timer,
logged every LOG_EVERY_N_STEPS = 32 steps) of every run, value = their median; global_batch_size,
gradient_accumulation_steps and max_sequence_length as logged.  The layout comes from the config
file the submission's README and system name point to (SYSTEMS below); a run whose logged global
batch is not the config's MINIBS x data-parallel size is refused.  Systems left out, and why:
  * configs that source config_common_fp4.sh (NVFP4 GEMMs: no precision key) or
    config_common_fp8attn.sh (FP8 attention: attention.csv has no FP8 rows): Dell
    1xXE9680Lx8B200, Lenovo, Nebius, NVIDIA's own 8-GPU GB200/GB300 systems;
  * a submission with one config that is NVFP4 or FP8 attention and one that is not for the same
    node count, so that the logs cannot tell which ran (Oracle 1xBM.GPU.B200.8, Supermicro
    SYS-422GS-NBRT-LCC and AS-4126GS-NBR-LCC);
  * B300 systems (Dell XE9780, Supermicro AS-8126GS-NB3RT): models/gpus.csv has no HGX B300;
  * no config for the system in the submission (HPE's H200), a host network that contradicts
    itself (Verda: '100GbE InfiniBand'), Cisco's H100 implementation (an older NeMo whose
    conf/custom.yaml defaults bucket_size to 64 parameters, a bucket per parameter tensor, which
    grad_buckets' equal buckets do not express), Lambda's GB300 (its config sources
    config_GB200_18x4x1xtp1pp1cp2_8b.sh, which the submission does not contain).
The gradient bucket is BUCKET_SIZE parameters where the config chain sets it, else the
implementation's conf/custom.yaml default (model.optim.bucket_size, 134217728).
"""
import csv
import json
import re
import statistics
import sys

from mlperf_logs import events, git, logged, tracked

HEADER = ["source", "source_path", "model", "gpu", "num_gpus", "precision", "method", "global_batch", "micro_batch",
          "grad_accum", "seq_len", "tp", "pp", "cp", "vp", "ep", "fsdp", "metric", "value", "notes"]

UF = "University-of-Florida/benchmarks/llama31_8b/implementations/"
DELL = "Dell/benchmarks/llama31_8b/implementations/nemo/"
NV = "NVIDIA/benchmarks/llama31_8b/implementations/nemo/"
ORACLE = "Oracle/benchmarks/llama31_8b/"
# (submitter, system directory, config file, the implementation directory whose config_common*.sh it sources)
SYSTEMS = [
    ("University-of-Florida", "hpg.dgxb200x8.n%d" % n,
     UF + "hpg.dgxb200x8/config_DGXB200_%dx8x%dxtp1pp1cp%d_8b.sh" % (n, mbs, cp), UF + "b200_nemo/")
    for n, mbs, cp in ((1, 2, 1), (2, 2, 1), (4, 1, 2), (8, 1, 2), (16, 1, 2), (32, 1, 2))
] + [
    ("Dell", "2xXE9680Lx8B200-SXM-180GB", DELL + "config_2xXE9680Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1_8b.sh", DELL),
    ("Dell", "2xXE9685Lx8B200-SXM-180GB", DELL + "config_XE9685Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1.sh", DELL),
    ("Oracle", "8xBM.GPU.B200.8", ORACLE + "config_DGXB200_8x8x1xtp1pp1cp2_8b.sh", ORACLE),
    ("NVIDIA", "tyche_ngpu72_ngc25.09_nemo", NV + "config_GB200_18x4x1xtp1pp1cp2_8b.sh", NV),
    ("NVIDIA", "tyche_ngpu512_ngc25.09_nemo", NV + "config_GB200_128x4x1xtp2pp1cp4_8b.sh", NV),
    ("NVIDIA", "theia_ngpu72_ngc25.09_nemo", NV + "config_GB300_18x4x1xtp1pp1cp2_8b.sh", NV),
    ("NVIDIA", "theia_ngpu512_ngc25.09_nemo", NV + "config_GB300_128x4x1xtp2pp1cp4_8b.sh", NV),
]


def env_of(text):
    env, sources = {}, []
    for line in text.splitlines():
        m = re.match(r"\s*export\s+(\w+)=(\S*)", line)
        if m:
            env[m.group(1)] = m.group(2).strip('"')
        m = re.match(r"\s*source\s+.*/(config_\w+\.sh)", line)
        if m:
            sources.append(m.group(1))
    return env, sources


def main(argv):
    gitdir = argv[1]
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    files = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    w = sys.stdout
    w.write(",".join(HEADER) + "\n")
    out = csv.writer(w, lineterminator="\n")
    for org, system, config, common in SYSTEMS:
        cfg, sources = env_of(git(gitdir, "show", "HEAD:" + config))
        env = {}
        for s in sources:  # the sourced defaults first, then the config's own exports
            env.update(env_of(git(gitdir, "show", "HEAD:" + common + s))[0])
        env.update(cfg)
        if "BUCKET_SIZE" not in env:
            yaml = git(gitdir, "show", "HEAD:%sconf/custom.yaml" % common)
            m = re.search(r"bucket_size: \$\{oc\.decode:\$\{oc\.env:BUCKET_SIZE,(\d+)\}\}", yaml)
            env["BUCKET_SIZE"] = m.group(1) + " (conf/custom.yaml default)"
        if any("fp4" in s or "fp8attn" in s for s in sources):
            raise SystemExit("%s sources %s" % (config, sources))
        sysjson = json.loads(git(gitdir, "show", "HEAD:%s/systems/%s.json" % (org, system)))
        runs = sorted(f for f in files if f.startswith("%s/results/%s/llama31_8b/result_" % (org, system)))
        evs = [events(gitdir, f) for f in runs]
        steps = tracked(evs, "train_step_time")
        gbs, ga, seq = (logged(evs, k) for k in ("global_batch_size", "gradient_accumulation_steps", "max_sequence_length"))
        n = int(env["DGXNNODES"]) * int(env["DGXNGPU"])
        tp, pp, cp = (int(env[k]) for k in ("TENSOR_MODEL_PARALLEL", "PIPELINE_MODEL_PARALLEL", "CONTEXT_PARALLEL"))
        dp = n // (tp * pp * cp)
        mbs = int(env["MICRO_BATCH_SIZE"])
        if gbs != int(env["MINIBS"]) * dp or gbs != mbs * ga * dp:
            raise SystemExit("%s: logged GBS %d, GA %d against MINIBS %s, MBS %d x dp %d" %
                             (system, gbs, ga, env["MINIBS"], mbs, dp))
        keys = ["FP8", "FP8_HYBRID", "FP8_RECIPE", "FP8_PARAM_GATHER", "USE_DIST_OPTIMIZER", "OVERLAP_GRAD_REDUCE",
                "OVERLAP_PARAM_GATHER", "FULL_CUDA_GRAPH", "MCORE_CUDA_GRAPH", "USE_TE_OPS", "FUSED_QKV_ROPE",
                "CE_FUSION_IMPL", "SEQ_PARALLEL", "TP_COMM_OVERLAP", "LOG_EVERY_N_STEPS", "NVTE_DPA_FP8_RECIPE",
                "BUCKET_SIZE", "DGXNGPU", "SEGMENT"]
        notes = ("%d runs, %d logged step times (min %.4f, max %.4f s); config %s@%s sourcing %s from %s; %s; "
                 "system %s: %s x %s, host networking '%s', framework '%s'" % (
                     len(runs), len(steps), min(steps), max(steps), config, commit[:8], " ".join(sources), common,
                     ", ".join("%s=%s" % (k, env.get(k, "(unset)")) for k in keys), system,
                     sysjson["number_of_nodes"], sysjson["accelerators_per_node"], sysjson["host_networking"],
                     sysjson["framework"]))
        out.writerow(["MLPerf Training v5.1 closed, %s %s (%s)" % (org, system, sysjson["accelerator_model_name"]),
                      "mlcommons/training_results_v5.1:%s/results/%s/llama31_8b/result_*.txt@%s" % (org, system, commit[:8]),
                      "Llama 3.1 8B", sysjson["accelerator_model_name"], n, "fp8", "pretrain (NeMo, Megatron-Core)",
                      gbs, mbs, ga, seq, tp, pp, cp, "", "", "", "train_step_time_median_s",
                      "%.5f" % statistics.median(steps), notes])


if __name__ == "__main__":
    main(sys.argv)
