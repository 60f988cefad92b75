#!/usr/bin/env python3
"""Transcribe NVIDIA's MLPerf Training closed-division BERT and GPT-3 results into
bench/data/llm/mlperf_training.csv (the raw schema of bench/data/llm/README.md).  Python 3 stdlib.

    python3 tools/data/mlperf_from_logs.py GITDIR_V2_0 GITDIR_V2_1 GITDIR_V3_0 GITDIR_V3_1 > OUT.csv

Each GITDIR is a git directory (bare or not) of mlcommons/training_results_v2.0, v2.1, v3.0, v3.1
(e.g. what the project's `fetch` tool mirrors); the script reads HEAD with `git show` and needs no
work tree.  The committed CSV is this script's output at the commits it names; the repositories are
not in this project, so ctest does not rerun it.

What is read from the logs (result_*.txt, MLLOG lines; every file of a system directory is one
independent run of the same config):
  * GPT-3 (NeMo): every `tracked_stats` `train_step_timing` (seconds per optimizer step, NeMo's
    step timer, logged for each step) of every run; value = their median (the first step of a run
    and the steps next to an evaluation are in it; the median is what a steady step takes).
    global_batch_size and gradient_accumulation_steps are the logged ones.
  * BERT (PyTorch): each run's steady rate, the samples trained between its first and its last
    `eval_accuracy` event (metadata epoch_num: global_samples_trained at that evaluation) over the
    seconds between them (evaluations included: 4 ms each where v3.1 logs eval_start/eval_stop,
    one every 0.4 s on 434 nodes to every 62 s on one DGX A100); value = the median over the runs.
    Not train_samples / (run_stop - run_start) (run_pretraining.py's own final `tracked_stats`
    `throughput`, which v3.x logs print and v2.x logs do not, is that quotient to 0.01%), which the
    notes keep: after run_start (v3.0 L1607 log_init_stop_run_start) run_pretraining.py loads the
    first training shard in the timed loop (L1658 create_pretraining_dataset; the later shards are
    prefetched by a process pool, L1678) and the first evaluation waits for the evaluation set that
    a process pool began loading at run_start (L1612, L1817-1818), so on the 64-512-node systems the
    steps before the first evaluation take 1.5-1.9x as long as those between evaluations, a
    one-time cost of 3-6% of their 7-25 s runs (1-3% on 8 nodes, under 2% on 1 and 4) that no
    per-step price expresses.
    global_batch_size (sequences, = d_batch_size x GPUs x average_packing_rate), d_batch_size and
    gradient_accumulation_steps are the logged ones.
Nothing else is computed here; make_llm_runs.py converts.
"""
import json
import re
import statistics
import subprocess
import sys

HEADER = ["source", "source_path", "model", "gpu", "num_gpus", "precision", "method", "global_batch", "micro_batch",
          "grad_accum", "seq_len", "tp", "pp", "cp", "vp", "ep", "fsdp", "metric", "value", "notes"]

# (round, system dir, benchmark, config file of the implementation that ran it, GPU, nodes)
# v3.1's eos_ngc23.04_pytorch and eos_n8_ngc23.04_pytorch BERT logs are byte-identical to v3.0's
# dgxh100_ngc23.04_pytorch and dgxh100_n8_ngc23.04_pytorch (same git blobs): not repeated here.
SYSTEMS = [
    ("v2.0", "dgxa100_n128_ngc22.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXA100_128x8x2x1_pack.sh"),
    ("v2.0", "dgxa100_n512_ngc22.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXA100_512x8x2x1_pack.sh"),
    ("v2.0", "dgxa100_n8_ngc22.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXA100_8x8x48x1.sh"),
    ("v2.0", "dgxa100_ngc22.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXA100_1x8x56x1.sh"),
    ("v2.1", "dgxa100_n8_ngc22.09_pytorch", "bert", "benchmarks/bert/implementations/pytorch-22.09/config_DGXA100_8x8x48x1.sh"),
    ("v2.1", "dgxa100_ngc22.09_pytorch", "bert", "benchmarks/bert/implementations/pytorch-22.09/config_DGXA100_1x8x56x1.sh"),
    ("v2.1", "dgxh100_preview", "bert", "benchmarks/bert/implementations/pytorch-preview/config_DGXH100_1x8x48x1_pack.sh"),
    ("v2.1", "dgxh100_n4_preview", "bert", "benchmarks/bert/implementations/pytorch-preview/config_DGXH100_4x8x48x1_pack.sh"),
    ("v3.0", "dgxh100_ngc23.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXH100_1x8x48x1_pack.sh"),
    ("v3.0", "dgxh100_n8_ngc23.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXH100_8x8x72x1.sh"),
    ("v3.0", "dgxh100_n64_ngc23.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXH100_64x8x3x1_pack_clipafter.sh"),
    ("v3.0", "dgxh100_n96_ngc23.04_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXH100_96x8x3x1_pack_clipafter_set2.sh"),
    ("v3.1", "eos_n434_ngc23.09_pytorch", "bert", "benchmarks/bert/implementations/pytorch/config_DGXH100_434x8x2x1_pack_clipafter.sh"),
    ("v3.0", "dgxh100_n64_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_64x8x128x4x8_mbs1.sh"),
    ("v3.0", "dgxh100_n96_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh"),
    ("v3.1", "eos_n64_ngc23.09_nemo", "gpt3", ""),  # logged GBS 2048: no 64-node config with MINIBS 128 in v3.1
    ("v3.1", "eos_n96_ngc23.09_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh"),
    ("v3.1", "eos-dfw_n512_ngc23.09_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_512x8x16x4x8_mbs1.sh"),
    ("v3.1", "eos-dfw_n768_ngc23.09_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_768x8x16x4x8_mbs1.sh"),
    ("v3.1", "eos-dfw_n1024_ngc23.09_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_1024x8x16x4x8_mbs1.sh"),
    ("v3.1", "eos-dfw_n1280_ngc23.09_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_1280x8x8x4x8_mbs1.sh"),
    ("v3.1", "eos-dfw_n1344_ngc23.09_nemo", "gpt3", "benchmarks/gpt3/implementations/pytorch/config_DGXH100_1344x8x8x4x8_mbs1.sh"),
]


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), check=True, capture_output=True,
                          text=True).stdout


def config_vars(gitdir, path):
    """KEY=VALUE of `export KEY=VALUE` lines of a config_*.sh (quotes stripped), plus EXTRA_PARAMS."""
    out = {}
    if not path:
        return out
    for line in git(gitdir, "show", "HEAD:NVIDIA/" + path).splitlines():
        m = re.match(r'\s*export\s+([A-Z_0-9]+)=(.*)$', line)
        if m:
            v = m.group(2).split(" #")[0].strip().strip('"')
            out[m.group(1)] = v
    return out


def mllog(text):
    """The MLLOG events of one log, deduplicated by (key, value, time)."""
    seen, out = set(), []
    for line in text.splitlines():
        i = line.find(":::MLLOG ")
        if i < 0:
            continue
        try:
            ev = json.loads(line[i + 9:])
        except ValueError:
            continue
        k = (ev["key"], json.dumps(ev["value"], sort_keys=True), ev["time_ms"])
        if k not in seen:
            seen.add(k)
            out.append(ev)
    return out


def first(events, key):
    for ev in events:
        if ev["key"] == key:
            return ev["value"]
    return None


def first_time(events, key):
    for ev in events:
        if ev["key"] == key:
            return ev["time_ms"]
    return None


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    dirs = dict(zip(["v2.0", "v2.1", "v3.0", "v3.1"], argv[1:]))
    w = sys.stdout
    import csv
    out = csv.DictWriter(w, fieldnames=HEADER, lineterminator="\n")
    out.writeheader()
    for rnd, system, bench, cfg in SYSTEMS:
        gitdir = dirs[rnd]
        commit = git(gitdir, "rev-parse", "HEAD").strip()
        files = sorted(p for p in git(gitdir, "ls-tree", "--name-only", "HEAD",
                                      "NVIDIA/results/%s/%s/" % (system, bench)).split()
                       if re.search(r"/result_\d+\.txt$", p))
        steps, thr, steady, gbs, ga, dbs, plat = [], [], [], set(), set(), set(), set()
        for f in files:
            ev = mllog(git(gitdir, "show", "HEAD:" + f))
            gbs.add(first(ev, "global_batch_size"))
            ga.add(first(ev, "gradient_accumulation_steps"))
            dbs.add(first(ev, "d_batch_size"))
            plat.add(first(ev, "submission_platform"))
            for e in ev:
                v = e["value"]
                if e["key"] == "tracked_stats" and isinstance(v, dict):
                    if "train_step_timing" in v:
                        steps.append(v["train_step_timing"])
            t0, t1, ns = first_time(ev, "run_start"), first_time(ev, "run_stop"), first(ev, "train_samples")
            if bench == "bert":
                thr.append(ns / ((t1 - t0) / 1000.0))
                evals = [(e["time_ms"], e["metadata"]["epoch_num"]) for e in ev if e["key"] == "eval_accuracy"]
                (ta, sa), (tb, sb) = evals[0], evals[-1]
                steady.append((sb - sa) / ((tb - ta) / 1000.0))
        sysjson = json.loads(git(gitdir, "show", "HEAD:NVIDIA/systems/%s.json" % system))
        assert len(gbs) == len(ga) == len(plat) == 1, (system, gbs, ga, plat)
        nodes = int(sysjson["number_of_nodes"])
        n = nodes * int(sysjson["accelerators_per_node"])
        cv = config_vars(gitdir, cfg)
        gbs, ga, dbs = gbs.pop(), ga.pop(), dbs.pop()
        src = "mlcommons/training_results_%s:NVIDIA/results/%s/%s/result_*.txt@%s" % (rnd, system, bench, commit[:8])
        common = {"source": "MLPerf Training %s closed, NVIDIA %s (%s; %s; %s)" % (
                      rnd, system, plat.pop(), sysjson["framework"], sysjson["accelerator_model_name"]),
                  "source_path": src, "gpu": sysjson["accelerator_model_name"], "num_gpus": n,
                  "global_batch": gbs, "grad_accum": ga, "cp": "", "ep": "", "fsdp": ""}
        cfgnote = "config NVIDIA/%s@%s" % (cfg, commit[:8]) if cfg else "no config file with this GBS in the round"
        if bench == "gpt3":
            tp, pp = int(cv.get("TENSOR_MODEL_PARALLEL", 4)), int(cv.get("PIPELINE_MODEL_PARALLEL", 8))
            dp = n // (tp * pp)
            mbs = gbs // (ga * dp)
            row = dict(common, model="GPT3-175B (MLPerf)", precision="fp8" if cv.get("FP8", "True") == "True" else "bf16",
                       method="pretrain", micro_batch=mbs, seq_len=2048, tp=tp, pp=pp, vp=12,
                       metric="train_step_timing_s_median", value="%.4f" % statistics.median(steps),
                       notes="%s; %d steps over %d runs (min %.3f, max %.3f s); TP %d / PP %d: every DGXH100 GPT-3 "
                             "config of the round (x4x8 in its name); micro-batch = GBS / (GA x dp)"
                             % (cfgnote, len(steps), len(files), min(steps), max(steps), tp, pp))
        else:
            # global_batch_size(args) = train_batch_size x accumulation x GPUs x average_packing_rate
            pack = gbs // (dbs * ga * n)
            assert pack * dbs * ga * n == gbs and (pack > 1) == ("--packed_samples" in cv.get("EXTRA_PARAMS", "")), system
            row = dict(common, model="BERT-large (MLPerf phase 2)", precision="fp16", method="pretrain",
                       micro_batch=dbs, seq_len=512, tp="", pp="", vp="",
                       metric="sequences_per_s_between_evals_median", value="%.1f" % statistics.median(steady),
                       notes="%s; %d runs (min %.1f, max %.1f sequences/s between the first and the last evaluation; "
                             "train_samples / (run_stop - run_start), the first block's start-up included: median "
                             "%.1f, min %.1f, max %.1f); average_packing_rate %d (sequences per 512-token sample: "
                             "logged GBS / (d_batch_size x GPUs x accumulation)); EXTRA_PARAMS: %s"
                             % (cfgnote, len(steady), min(steady), max(steady), statistics.median(thr), min(thr),
                                max(thr), pack, cv.get("EXTRA_PARAMS", "").strip()))
        out.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
