#!/usr/bin/env python3
"""Transcribe MLPerf Training v4.0 closed-division Llama 2 70B LoRA results of NVIDIA's NeMo
implementation that price without FP8 attention into bench/data/llm/mlperf_llama2_70b_lora.csv (the
raw schema of bench/data/llm/README.md).  Python 3 stdlib.

    python3 tools/data/mlperf_lora_from_logs.py GITDIR_V4_0 > bench/data/llm/mlperf_llama2_70b_lora.csv

GITDIR is a git directory of mlcommons/training_results_v4.0 (what the project's `fetch` tool
mirrors); the script reads HEAD with `git show`.  The committed CSV is its output at the commit it
names; the repository is not in this project, so ctest does not rerun it.

What is read: each system directory's result_*.txt (MLLOG lines; each file one run of the same
config): every `tracked_stats` `throughput` of every run, value = their median.  custom_callbacks.py
(the implementation's) logs it at each evaluation: the global batches trained since the last one
over the summed wall time from on_train_batch_start to on_train_batch_end (Timer), so evaluations
and the time between batches are out of it; samples per second, each sample one 8192-token
sequence (README section 2: "already tokenized and packed so that each sequence has length 8192";
scripts/convert_dataset.py gives each sample seq_start_id [0], one sequence).  global_batch_size and
gradient_accumulation_steps as logged; the layout from the config the submission's README names
(SYSTEMS below) after configs/config_common.sh, which it sources; a run whose logged global batch is
not MINIBS x the data-parallel size is refused.  The notes keep FP8_DPA (FP8 attention: the H100 and
H200 configs leave config_common.sh's 1, the L40S ones set False).  No other submitter has a Llama 2
70B LoRA result in this round (Dell's, ASUSTeK's and Fujitsu's L40S configs have no results).
"""
import csv
import json
import re
import statistics
import subprocess
import sys

HEADER = ["source", "source_path", "model", "gpu", "num_gpus", "precision", "method", "global_batch", "micro_batch",
          "grad_accum", "seq_len", "tp", "pp", "cp", "vp", "ep", "fsdp", "metric", "value", "notes"]

NV = "NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo/"
SEQ_LEN = 8192  # README section 2; conf/megatron_gpt_peft_tuning_config.yaml max_seq_length (MAX_SEQLEN unset)
# (system directory, config file)
SYSTEMS = [
    ("eos_ngc24.04_nemo", NV + "config_DGXH100_1x8x4xtp4pp1cp1.sh"),
    ("eos_n8_ngc24.04_nemo", NV + "config_DGXH100_8x8x1xtp4pp1cp2.sh"),
    ("eos_n128_ngc24.04_nemo", NV + "config_DGXH100_128x8x1xtp4pp1cp2.sh"),
    ("h200_ngc24.04_nemo", NV + "config_DGXH200_1x8x2xtp2pp1cp1.sh"),
    ("l40s_n16_ngc24.04_nemo", NV + "config_L40S_16x4x2xtp4pp1cp2.sh"),
    ("l40s_n96_ngc24.04_nemo", NV + "config_L40S_96x4x1xtp4pp1cp2.sh"),
]
KEYS = ["FP8", "FP8_AMAX_ALGO", "FP8_REDUCE_AMAX", "FP8_AMAX_HISTORY", "FP8_DPA", "NVTE_FP8_DPA_BWD", "FP8_ACTIVATION",
        "NVTE_FLASH_ATTN", "NVTE_FUSED_ATTN", "SP", "TP_COMM_OVERLAP", "MC_TP_OVERLAP_AG", "MC_TP_OVERLAP_RS",
        "MC_TP_OVERLAP_RS_DGRAD", "LORA_A2A", "SHARP", "VBOOST_VALUE", "MBS", "MINIBS", "DGXNGPU", "DGXNNODES"]


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), check=True, capture_output=True,
                          text=True).stdout


def exports(text):
    return {m.group(1): m.group(2).strip('"') for m in re.finditer(r"^\s*export\s+(\w+)=(\S*)", text, re.M)}


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    gitdir = argv[1]
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    files = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    common = exports(git(gitdir, "show", "HEAD:%sconfigs/config_common.sh" % NV))
    w = sys.stdout
    w.write(",".join(HEADER) + "\n")
    out = csv.writer(w, lineterminator="\n")
    for system, config in SYSTEMS:
        text = git(gitdir, "show", "HEAD:" + config)
        if "config_common.sh" not in text:
            raise SystemExit("%s does not source config_common.sh" % config)
        env = dict(common)
        env.update(exports(text))  # the config's own exports after the sourced defaults
        sysjson = json.loads(git(gitdir, "show", "HEAD:NVIDIA/systems/%s.json" % system))
        runs = sorted(f for f in files if f.startswith("NVIDIA/results/%s/llama2_70b_lora/result_" % system))
        rates, gbs, ga = [], set(), set()
        for f in runs:
            for line in git(gitdir, "show", "HEAD:" + f).splitlines():
                if ":::MLLOG" not in line:
                    continue
                ev = json.loads(line.split(":::MLLOG", 1)[1])
                k, v = ev["key"], ev["value"]
                if k == "tracked_stats" and isinstance(v, dict) and "throughput" in v:
                    rates.append(float(v["throughput"]))
                elif k == "global_batch_size":
                    gbs.add(int(v))
                elif k == "gradient_accumulation_steps":
                    ga.add(int(float(v)))
        (gbs,), (ga,) = gbs, ga
        n = int(env["DGXNNODES"]) * int(env["DGXNGPU"])
        tp, pp, cp = (int(env[k]) for k in ("TP", "PP", "CP"))
        dp = n // (tp * pp * cp)
        mbs = int(env["MBS"])
        if gbs != int(env["MINIBS"]) * dp or gbs != mbs * ga * dp:
            raise SystemExit("%s: logged GBS %d, GA %d against MINIBS %s, MBS %d x dp %d" %
                             (system, gbs, ga, env["MINIBS"], mbs, dp))
        notes = ("%d runs, %d logged throughputs (min %.4f, max %.4f samples/s); config %s@%s sourcing "
                 "configs/config_common.sh; %s; system %s: %s x %s %s, accelerator interconnect '%s', host "
                 "networking '%s', framework '%s', cuDNN %s" % (
                     len(runs), len(rates), min(rates), max(rates), config, commit[:8],
                     ", ".join("%s=%s" % (k, env.get(k, "(unset)")) for k in KEYS), system,
                     sysjson["number_of_nodes"], sysjson["accelerators_per_node"], sysjson["accelerator_model_name"],
                     sysjson["accelerator_interconnect"], sysjson["host_networking"], sysjson["framework"],
                     sysjson["other_software_stack"]["cudnn_version"]))
        out.writerow(["MLPerf Training v4.0 closed, NVIDIA %s (%s x %s)" % (system, n, sysjson["accelerator_model_name"]),
                      "mlcommons/training_results_v4.0:NVIDIA/results/%s/llama2_70b_lora/result_*.txt@%s" % (system, commit[:8]),
                      "Llama 2 70B", sysjson["accelerator_model_name"], n, "fp8", "LoRA fine-tune (NeMo, Megatron-Core)",
                      gbs, mbs, ga, SEQ_LEN, tp, pp, cp, "", "", "", "samples_per_s_tracked_median",
                      "%.5f" % statistics.median(rates), notes])


if __name__ == "__main__":
    main(sys.argv)
