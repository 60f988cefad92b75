#!/usr/bin/env python3
"""Transcribe MLPerf Training v4.0 closed-division Llama 2 70B LoRA results of NVIDIA's NeMo
implementation that price without FP8 attention into bench/data/llm/mlperf_llama2_70b_lora.csv (the
raw schema of bench/data/llm/README.md).  Python 3 stdlib.

    python3 tools/data/mlperf_lora_from_logs.py GITDIR_V4_0 GITDIR_V5_1 > bench/data/llm/mlperf_llama2_70b_lora.csv

GITDIR_V4_0 and GITDIR_V5_1 are git directories of mlcommons/training_results_v4.0 and v5.1 (what the
project's `fetch` tool mirrors); the script reads HEAD with `git show`.  The committed CSV is its output at the commit it
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

v5.1 (SYSTEMS_V51): the University of Florida's DGX B200 systems hpg.dgxb200x8.n1 to .n16, which ran
NVIDIA's NeMo implementation (the submission's b200_nemo directory; their hpg.dgxb200x8 configs source
b200_nemo/config_common.sh, FP8 attention, tp 1, no NVFP4), and NVIDIA's own 72- and 512-GPU GB200
(tyche) and GB300 (theia) systems (cp 8; their 8-GPU systems run NVFP4 configs and are left out).  Its custom_callbacks.py logs no
throughput: every logging interval it logs `tracked_stats` train_loss with outputs["loss"].item(), a
host sync, so the step time is the time between two such events over the steps between them; value
= the median over every pair of consecutive events with no evaluation between them.  The other v5.1
submitters' B200, GB200 and GB300 systems follow where a log's DLPAL line names its config and its
printed settings match the config chain (notes in SYSTEMS_V51).  Left out: NVFP4 configs (Dell
1xXE9680Lx8B200, Nebius b200_n1 and n2), B300 systems (no HGX B300 in models/gpus.csv), a config the
log contradicts (Dell 1xXE9680Lx8H200, Nebius b200_n4), result files absent from the mirror (Dell
2xXE9685Lx8B200), and logs of the v5.0 format, which track a throughput and no losses with steps
(Cisco's H100 and H200, Krai's H200, Quanta's D74H-7U, Dell's 1xXE9680x8H200: not transcribed yet).
"""
import csv
import json
import re
import statistics
import sys

from mlperf_logs import events, git, logged, tracked

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


def exports(text):
    return {m.group(1): m.group(2).strip('"') for m in re.finditer(r"^\s*export\s+(\w+)=(\S*)", text, re.M)}


LI = "benchmarks/llama2_70b_lora/implementations/"
UF = "University-of-Florida/" + LI
SM = "Supermicro/" + LI
DELL = "Dell/" + LI + "nemo/"
NV51 = "NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo/"
# (submitter, system directory, config file, the directory whose config_common.sh it sources)
SYSTEMS_V51 = [("University-of-Florida", "hpg.dgxb200x8.n%d" % n, UF + "hpg.dgxb200x8/config_DGXB200_%dx8x1xtp1pp1cp%d.sh" % (n, cp),
                UF + "b200_nemo/") for n, cp in ((1, 1), (2, 1), (4, 4), (8, 8), (16, 8))] + [
    ("NVIDIA", "%s_ngpu%d_ngc25.09_nemo" % (rack, n), NV51 + "config_%s_%dx4x1xtp1pp1cp8.sh" % (gpu, n // 4), NV51)
    for rack, gpu in (("tyche", "GB200"), ("theia", "GB300")) for n in (72, 512)] + [
    # other submitters (each log's DLPAL line names its config, checked against the log's printed settings)
    ("GigaComputing", "G894-AD1_pytorch", "GigaComputing/" + LI + "B200/pytorch/config_G894-AD1_1x8x1xtp1pp1cp1.sh",
     "GigaComputing/" + LI + "B200/pytorch/"),
    ("Lenovo", "SR680aV3-8xB200_SXM_180GB", "Lenovo/benchmarks/llama2_70b_lora/config_SR780aV3_SR680aV3_SR680aV4.sh",
     "Lenovo/benchmarks/llama2_70b_lora/"),
    ("Lenovo", "SR780aV3-8xB200_SXM_180GB", "Lenovo/benchmarks/llama2_70b_lora/config_SR780aV3_SR680aV3_SR680aV4.sh",
     "Lenovo/benchmarks/llama2_70b_lora/"),
    ("Supermicro", "AS-A126GS-TNBR", SM + "Blackwell_lora/config_AS-A126GS-TNBR_1x8x1xtp1pp1cp1.sh", SM + "Blackwell_lora/"),
    ("Supermicro", "AS-4126GS-NBR-LCC", SM + "AS-4126GS-NBR-LCC/config_AS-4126GS-NBR-LCC_1x8x1xtp1pp1cp1.sh",
     SM + "AS-4126GS-NBR-LCC/"),
    ("Supermicro", "SYS-422GS-NBRT-LCC", SM + "SYS-422GS-NBRT-LCC/config_SYS-422GS-NBRT-LCC_1x8x1xtp1pp1cp1.sh",
     SM + "SYS-422GS-NBRT-LCC/"),
    ("Dell", "1xXE9685Lx8B200-SXM-180GB", DELL + "config_XE9685Lx8B200-SXM-180GB_1x8x1xtp1pp1cp1.sh", DELL),
    ("Dell", "1xXE9780x8B200-SXM-180GB", DELL + "config_XE9780x8B200-SXM-180GB_1x8x1xtp1pp1cp1.sh", DELL),
    # the log's DLPAL line names 2xXE9680Lx8B200-SXM-280GB_2x8x1xtp1pp1cp1, the file is ...-180GB_...: same values
    ("Dell", "2xXE9680Lx8B200-SXM-180GB", DELL + "config_2xXE9680Lx8B200-SXM-180GB_2x8x1xtp1pp1cp1.sh", DELL),
    # DLPAL GB300_18x4x1xtp1pp1cp8; this file has the same content
    ("Supermicro", "ARS-121GL-NB3", SM + "Blackwell_lora/config_ARS-121GL-NB3_18x4x1xtp1pp1cp8.sh", SM + "Blackwell_lora/"),
    # DLPAL dj_config (not in the submission); these are the log's values
    ("Lambda", "gb300_n18_ngc25.04_nemo", "Lambda/" + LI + "gb300_1007/config_GB300_18x4x1xtp1pp1cp8.sh",
     "Lambda/" + LI + "gb300_1007/"),
    # their configs source configs/config_common.sh, absent; the runs used NVIDIA's (the log's TE op fuser), which
    # every v5.1 NeMo submission carries byte for byte
    ("Wiwynn", "1xKinabalux18x4GB200", "Wiwynn/" + LI + "pytorch/configs/config_1xKinabalux18x4GB200.sh", NV51),
    ("Wiwynn", "8xKinabalux18x4GB200", "Wiwynn/" + LI + "pytorch/configs/config_8xKinabalux18x4GB200.sh", NV51)]
KEYS_V51 = ["FP8", "FP8_RECIPE", "FP8_AMAX_ALGO", "FP8_REDUCE_AMAX", "FP8_AMAX_HISTORY", "FP8_DPA", "NVTE_FP8_DPA_BWD",
            "FP8_ACT", "FP8_PARAM_GATHER", "TP", "SP", "CP", "CP_COMM_TYPE", "MCORE_CUDA_GRAPH", "CG_WEIGHT_CACHING",
            "USE_TE_OPS", "FUSED_SINGLE_QKV_ROPE", "NEMO_LORA_USE_THUNDER_DROPOUT", "ON_DEVICE_CLIP_GRAD",
            "NVTE_NORM_FWD_USE_CUDNN", "USE_SHARP", "VBOOST_VALUE", "SEGMENT", "MBS", "MINIBS", "DGXNGPU", "DGXNNODES"]


def cudnn_of(sysjson):
    """The system description's cuDNN release; some give other_software_stack as a string, or none."""
    stack = sysjson.get("other_software_stack")
    if isinstance(stack, list) and stack:
        stack = stack[0]
    if isinstance(stack, dict):
        return stack.get("cudnn_version", "(not stated)")
    return "(not stated: '%s')" % stack if stack else "(not stated)"


def step_times(run_events):
    """Seconds per step between consecutive train_loss events (each after a host sync) with no
    evaluation between them."""
    out, last = [], None
    for ev in run_events:
        k, v = ev["key"], ev["value"]
        if k in ("eval_start", "eval_stop"):
            last = None
        elif k == "tracked_stats" and isinstance(v, dict) and "train_loss" in v:
            step = int(ev["metadata"]["step"])
            if last is not None and step > last[1]:
                out.append((ev["time_ms"] - last[0]) / 1000.0 / (step - last[1]))
            last = (ev["time_ms"], step)
    return out


def v51_rows(gitdir, out):
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    files = git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    for org, system, config, common in SYSTEMS_V51:
        text = git(gitdir, "show", "HEAD:" + config)
        if "config_common_fp4" in text or "source" not in text:
            raise SystemExit("%s: NVFP4, or no config_common.sh" % config)
        env = exports(git(gitdir, "show", "HEAD:%sconfig_common.sh" % common))
        env.update(exports(text))
        if env.get("FP4", "False") not in ("False", "0"):
            raise SystemExit("%s: NVFP4" % config)
        sysjson = json.loads(git(gitdir, "show", "HEAD:%s/systems/%s.json" % (org, system)))
        runs = sorted(f for f in files if f.startswith("%s/results/%s/llama2_70b_lora/result_" % (org, system)))
        evs = [events(gitdir, f) for f in runs]
        steps = [t for e in evs for t in step_times(e)]
        gbs, ga = logged(evs, "global_batch_size"), logged(evs, "gradient_accumulation_steps")
        n = int(env["DGXNNODES"]) * int(env["DGXNGPU"])
        tp, pp, cp = int(env["TP"]), int(env["PP"]), int(env["CP"])
        dp, mbs = n // (tp * pp * cp), int(env["MBS"])
        if gbs != int(env["MINIBS"]) * dp or gbs != mbs * ga * dp:
            raise SystemExit("%s: logged GBS %d, GA %d against MINIBS %s, MBS %d x dp %d" % (system, gbs, ga, env["MINIBS"], mbs, dp))
        notes = ("%d runs, %d step times between consecutive train_loss events (min %.4f, max %.4f s); config %s@%s "
                 "sourcing config_common.sh from %s; %s; system %s: %s x %s %s, host networking '%s', framework '%s', "
                 "cuDNN %s" % (len(runs), len(steps), min(steps), max(steps), config, commit[:8], common,
                               ", ".join("%s=%s" % (k, env.get(k, "(unset)")) for k in KEYS_V51), system,
                               sysjson["number_of_nodes"], sysjson["accelerators_per_node"],
                               sysjson["accelerator_model_name"], sysjson["host_networking"], sysjson["framework"],
                               cudnn_of(sysjson)))
        out.writerow(["MLPerf Training v5.1 closed, %s %s (%d x %s)" % (org, system, n, sysjson["accelerator_model_name"]),
                      "mlcommons/training_results_v5.1:%s/results/%s/llama2_70b_lora/result_*.txt@%s" % (org, system, commit[:8]),
                      "Llama 2 70B", sysjson["accelerator_model_name"], n, "fp8", "LoRA fine-tune (NeMo, Megatron-Core)",
                      gbs, mbs, ga, SEQ_LEN, tp, pp, cp, "", "", "", "train_step_time_median_s",
                      "%.5f" % statistics.median(steps), notes])


def main(argv):
    if len(argv) != 3:
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
        evs = [events(gitdir, f) for f in runs]
        rates = tracked(evs, "throughput")
        gbs, ga = logged(evs, "global_batch_size"), logged(evs, "gradient_accumulation_steps")
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
    v51_rows(argv[2], out)


if __name__ == "__main__":
    main(sys.argv)
