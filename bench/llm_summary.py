#!/usr/bin/env python3
"""llm_summary.py: the throughput error table of bench/results/llm_validation.md's summary, by GPU
and source, computed from that file's "Every row" table (shipped fit; (predicted - measured) /
measured from the measured and predicted columns; "covers": the share whose measurement lies in the
shipped fit's p10-p90, its "in p10-p90" column).  Nothing is fitted.  From the repository root:
    /usr/bin/python3 bench/llm_summary.py [bench/results/llm_validation.md]
"""
import collections
import signal
import sys

NAMES = {"mbridge": "Megatron-Bridge (TE)", "mlperf-bert": "MLPerf BERT (apex DistributedFusedLAMB)",
         "mlperf-gpt3": "MLPerf GPT-3 175B (NeMo, TE FP8)", "nemo2407": "NeMo 24.07 (TE FP8)",
         "torchtitan": "torchtitan (FSDP2)", "flash": "flash-attention GPT3 (FlashAttention v1)",
         "torchtune": "torchtune (compile)", "stas00": "DeepSpeed ZeRO (stas00; FA3 / FA4)",
         "mlperf-llama31": "MLPerf Llama 3.1 8B (NeMo, TE FP8)", "mlperf-llama2": "MLPerf Llama 2 70B LoRA (NeMo, TE FP8)"}
GPUS = {"h100": "H100", "h200": "H200", "a100": "A100", "b200": "B200", "gb200": "GB200", "gb300": "GB300", "rtx-a6000": "RTX A6000",
        "rtx4090": "RTX 4090", "l40s": "L40S"}


def rows(path):
    for line in open(path, encoding="utf-8"):
        c = [x.strip() for x in line.split("|")]
        if len(c) < 12 or c[5] != "tokens/s" or c[7] in ("-", "", "shipped fit"):
            continue
        run, gpu, meas, pred = c[1], c[3], float(c[6]), float(c[7])
        src = run.split("-")[0] + ("-" + run.split("-")[1] if run.startswith("mlperf") else "")
        gpu = next(v for k, v in GPUS.items() if gpu.startswith(k))
        yield run, gpu, src, (100.0 * (pred - meas) / meas, c[13].split(" / ")[0] == "yes")


def line(name, rows):
    """rows: (error %, inside the p10-p90) pairs."""
    n, errs = len(rows), [e for e, _ in rows]
    print("| %s | %d | %.1f | %+.1f | %.0f .. %+.0f | %.0f%% |" % (
        name, n, sum(map(abs, errs)) / n, sum(errs) / n, min(errs), max(errs), 100.0 * sum(i for _, i in rows) / n))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/llm_validation.md"
    all_rows = list(rows(path))
    groups = collections.OrderedDict()
    for run, gpu, src, err in all_rows:
        groups.setdefault((gpu, src), []).append(err)
    print("| rows | n | MAPE % | bias % | range | covers |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    order = sorted(groups, key=lambda k: (list(GPUS.values()).index(k[0]), k[1]))
    for gpu, src in order:
        line("%s %s" % (gpu, NAMES.get(src, src)), groups[(gpu, src)])
    line("H100, every stack", [e for r, g, s, e in all_rows if g == "H100"])
    line("Hopper (H100, H200), every stack", [e for r, g, s, e in all_rows if g in ("H100", "H200")])
    line("Blackwell (B200, GB200, GB300), every stack", [e for r, g, s, e in all_rows if g in ("B200", "GB200", "GB300")])
    line("every GPU, every stack", [e for r, g, s, e in all_rows])
    tt = [(r, e) for r, g, s, e in all_rows if r.startswith("torchtitan-h100")]
    line("H100 torchtitan 8B bf16, eager and compile", [e for r, e in tt if "amp_bf16" in r])
    line("H100 torchtitan 8B Float8 on 8 GPUs (8k-256k)", [e for r, e in tt if "8b-8x-amp_fp8" in r])
    line("H100 torchtitan Float8, 128-512 GPUs", [e for r, e in tt if "amp_fp8" in r and "8b-8x" not in r])


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly, as a Unix filter does
    main()
