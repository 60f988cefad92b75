#!/usr/bin/env python3
"""Build bench/data/mpt_runs.csv and bench/data/mpt_reported.csv from MosaicML's published MPT
training benchmarks (../shared/data/measurements/mosaicml_llm_foundry_mpt.csv), as the runs
really ran.  Python 3 stdlib only.

    python3 tools/data/make_mpt_runs.py               # write both files, print the MFU check
    python3 tools/data/make_mpt_runs.py --shared DIR  # shared folder (default ../shared)
    python3 tools/data/make_mpt_runs.py --check       # exit 1 if a committed file differs or a
                                                      # check below fails, 77 without the shared folder

Source.  mosaicml/llm-foundry @ 8c8dd48f, scripts/train/benchmarking/README.md, sections "A100
80GB with 1600 Gbps node-node interconnect (RoCE)" (L164, 61 rows) and "A100 40GB with 1600
Gbps node-node interconnect (RoCE)" (L230, 78 rows).  The shared file holds no H100 rows
(they are held back for independent validation; see ../shared/data/measurements/README.md); the
script maps them (gpu h100-sxm5-80gb, amp_fp8) should they come back, but none are fetched here.

How the runs ran (read in the llm-foundry and Composer history, see bench/data/llm/README.md):
  * Two campaigns.  The A100-40GB section and the two 70b rows of the A100-80GB section come
    from the table update of 2023-04-04 (mosaicml/examples #271, commit 9fa3ceb9a in
    llm-foundry's history): examples/llm/throughput/sweep.sh at release/v0.0.4, image
    mosaicml/pytorch:1.13.1_cu117, requirements torch 1.13.1, Composer (mosaicml) 0.13.3,
    triton 2.0.0.dev20221202; submit_benchmarks.py passes precision "bf16" (Composer's
    deprecated alias of amp_bf16, trainer._validate_precision) and
    fsdp_config.mixed_precision=PURE.  The other 59 A100-80GB rows are the rerun of
    2023-10-03 (commit 4b482bd6f, "updated a100 numbers"): sweep.sh image
    mosaicml/pytorch:2.0.1_cu118, llm-foundry setup.py mosaicml>=0.16.3,<0.17 (so Composer
    0.16.3, the latest release before 2023-10-11), precision "amp_"+precision = amp_bf16, and
    mod_parameters' default mixed_precision=DEFAULT (run_config does not pass the CLI flag).
  * Attention: both submit_benchmarks.py versions default --attn_impl triton (the yamls say
    triton too): MPT's Triton port of FlashAttention (flash_attn_triton.py), a fused kernel
    with the FlashAttention-1 algorithm (no s x s score tensor, recompute in backward).
    Recorded as attention=flash_triton (the work of attention=flash at the Triton kernel's
    rate).  (llm-foundry HEAD uses attn_impl flash with flash-attn 2, but these tables were
    not rerun with it.)
  * Composer FSDP mixed-precision modes (composer/trainer/mosaic_fsdp_utils.py
    get_mixed_precision, same code in 0.13.3 and 0.16.3):
        FULL    -> MixedPrecision(param=None,  reduce=None, buffer=None)   everything fp32
        DEFAULT -> MixedPrecision(param=bf16,  reduce=None, buffer=bf16)
        PURE    -> MixedPrecision(param=bf16,  reduce=bf16, buffer=bf16)
    Composer set DEFAULT's reduce_dtype to torch.float32 only on 2023-10-10 ("patch default",
    composer d745fcb1b, first in 0.16.4), after these runs.  With reduce_dtype=None, torch
    1.13/2.0 FSDP does not cast the gradient before the reduce-scatter
    (_runtime_utils._post_backward_hook casts only if handle._uses_reduce_mixed_precision, i.e.
    HandleConfig.low_prec_reduce_dtype is not None), and the gradient of the bf16 unsharded
    FlatParameter is bf16; torch 2.1 made the same rule explicit (reduce dtype inferred from
    param_dtype).  So every row here reduce-scattered gradients in bf16: reduce_dtype=bf16
    for both modes.  Gathered parameters are bf16 (param_dtype), the sharded master
    parameters and the optimizer state stay fp32, compute runs under torch.autocast(bf16)
    (Composer precision amp_bf16) -> precision=amp_bf16.
  * FSDP: sharding_strategy FULL_SHARD for every A100 row (sharding=full_shard), one FSDP unit
    per MPTBlock (MPTForCausalLM.fsdp_wrap_fn), limit_all_gathers true, Composer's default
    backward_prefetch BACKWARD_POST, forward_prefetch false, activation_cpu_offload false.
  * Activation checkpointing: fsdp_config.activation_checkpointing wraps every MPTBlock
    (activation_checkpointing_fn) with non-reentrant checkpointing
    (activation_checkpointing_reentrant false): checkpointing=1 is full-block recompute.
  * Batch: batch_per_gpu = the logged trainer/device_train_microbatch_size, grad_accum =
    ceil(global / gpus / micro-batch) (collect_results.py).  When micro x accum x gpus exceeds
    the global batch, Composer's last micro-batch is smaller (README: "11, 11, 11, 11, 4");
    such rows are flagged NONUNIFORM_MICROBATCH.  Tokens/s does not depend on it.
  * Network: 8 GPUs per node (MosaicML A100 nodes), "1600 Gbps node-node interconnect (RoCE)"
    in the section title = 8 x 200 Gb/s -> network=roce-1600 (models/interconnects.csv).
  * Model: MPT of that era, not the released HF mpt-7b: learned positional embeddings of
    max_seq_len positions (MPTConfig learned_pos_emb=True, alibi False), biases in every
    Linear and LayerNorm (no_bias=False), tied input/output embedding, vocab 50368, GELU MLP
    of expansion 4, low_precision_layernorm.  NumParams = V*d + S*d + L*(12 d^2 + 13 d) + 2 d
    reproduces all 139 rows' NumParams exactly (checked below), with d, L from
    scripts/train/yamls/pretrain/mpt-<size>.yaml (heads: d/128 except 125m 12, 350m 16).
    submit_benchmarks.py builds every run with model.max_seq_len = the run's sequence length
    (so the wpe table, the parameter count, FSDP's traffic and the optimizer grow with it),
    sets model.norm_type low_precision_layernorm (2023-10; 2023-04's MosaicGPT:
    low_precision_layernorm: True, the same LPLayerNorm) and attn_impl triton, and leaves
    model.loss_fn at ComposerMPTCausalLM's (and MosaicGPT's) default fused_crossentropy:
    flash-attn's xentropy kernel on the bf16 logits, targets rolled (no logit shift); and
    model.use_train_metrics at its default true (MosaicGPT: always): LanguageCrossEntropy and
    LanguagePerplexity, which Composer (trainer.py _eval_train_metrics, 0.13.3 and 0.16.3)
    updates after every micro-batch's backward on the logits, each a torch cross-entropy in
    fp32 under autocast and no_grad (an fp32 copy and log_softmax of all the logits).  So each
    run gets its own config, bench/data/mpt/mpt-<size>-s<seq>.json (model=mpt/..., relative
    to the run file's folder), written here; epochcast checks their parameter counts against
    NumParams (bench/mpt_holdout).
  * Timing: max_duration 30ba, eval_interval 0; throughput is Composer's speed_monitor
    (window_size 10) samples/s logged last, i.e. the mean of batches 21-30.  Data: C4
    train_small converted with --concat_tokens seq_len (no padding), 8 loader workers.
    Optimizer decoupled_adamw, gradient clipping by norm 1.0.

MFU as the README computes it (collect_results.py parse_run):
    flops_per_token    = 2 * n_params                       (n_params includes embeddings)
    flops_per_seq      = flops_per_token * seq_len
    attn_flops_per_seq = n_layers * 2 * 2 * (d_model * seq_len**2)
    mfu = (3 * flops_per_seq + 3 * attn_flops_per_seq) * samples_per_s / (gpus * peak)
    hfu = 4/3 * mfu if activation checkpointing else mfu
  with peak = Composer speed_monitor GPU_AVAILABLE_FLOPS: A100 (SXM and PCIe, 40 and 80 GB)
  312e12 for (amp_)bf16; H100 SXM 1.979e15/2 bf16, 3.958e15/2 fp8.  Note the attention term
  counts the full s x s score matrix (no causal halving) and 3 passes, and HFU adds one
  forward; neither counts FlashAttention's own backward recompute (the README says the
  attention multiplier would be 5 instead of 4).
  Worked row (A100-80GB, 70b, seq 2048, 64 GPUs, 26274 tok/s, NumParams 64,862,437,376):
    samples/s = 26274/2048 = 12.829; flops_per_seq = 2*64862437376*2048 = 2.6568e14;
    attn = 80*4*8192*2048^2 = 1.0995e13; mfu = 3*(2.6568e14+1.0995e13)*12.829/(64*312e12)
    = 0.5333 (README 53.33), hfu = 0.7111 (README 71.1).
  The script recomputes MFU/HFU for every row from tokens/s (which the README truncates to an
  integer) and fails --check if any differs from the README by more than 0.02 points.

Outputs (ids shared by both files, and the configs they name):
  bench/data/mpt/mpt-<size>-s<seq>.json  the MPT config.json of each (size, seq_len) a run used
  bench/data/mpt_runs.csv     run records in the config vocabulary (planned keys for issue 18:
                              gpus_per_node, network, strategy=fsdp, sharding, reduce_dtype,
                              attention=flash); metric tokens_per_s over all GPUs.
  bench/data/mpt_reported.csv id, reported_mfu and reported_hfu (fractions: README percent/100),
                              num_params (the run's logged n_params), flags ("" or
                              ';'-separated FLAG: reason).
"""
import csv
import json
import os
import re
import sys

HEADER = ["id", "model", "gpu", "num_gpus", "gpus_per_node", "network", "strategy", "sharding",
          "reduce_dtype", "precision", "attention", "checkpointing", "batch_per_gpu",
          "grad_accum", "seq_len", "optimizer", "data", "metric", "value", "source"]
REPORTED_HEADER = ["id", "reported_mfu", "reported_hfu", "num_params", "flags"]

GPU = {"A100-SXM4-80GB": "a100-sxm4-80gb", "A100-SXM4-40GB": "a100-sxm4-40gb",
       "H100-SXM5-80GB": "h100-sxm5-80gb"}
# Composer speed_monitor GPU_AVAILABLE_FLOPS, the peak collect_results.py divides by
PEAK_FLOP_PER_S = {("a100-sxm4-80gb", "amp_bf16"): 312e12, ("a100-sxm4-40gb", "amp_bf16"): 312e12,
                   ("h100-sxm5-80gb", "amp_bf16"): 1.979e15 / 2,
                   ("h100-sxm5-80gb", "amp_fp8"): 3.958e15 / 2}
# scripts/train/yamls/pretrain/mpt-<size>.yaml: d_model, n_layers (vocab 50368, expansion 4)
ARCH = {"125m": (768, 12), "350m": (1024, 24), "760m": (1536, 24), "1b": (2048, 24),
        "3b": (2560, 32), "7b": (4096, 32), "13b": (5120, 40), "30b": (7168, 48),
        "70b": (8192, 80)}
# n_heads of the same yamls (d_head 64 for 125m and 350m, 128 for the rest)
HEADS = {"125m": 12, "350m": 16, "760m": 12, "1b": 16, "3b": 20, "7b": 32, "13b": 40, "30b": 56,
         "70b": 64}
CONFIG_DIR = os.path.join("bench", "data", "mpt")
VOCAB = 50368
NETWORK = {"1600 Gbps node-node interconnect (RoCE)": "roce-1600"}
MFU_TOL_PP = 0.02  # README MFU/HFU are rounded to 0.01 pp; tokens/s truncation adds < 0.001 pp

# Rows whose numbers look wrong next to their own series; keyed by id, reason in words.
SUSPECT = {
    "mpt-1b-a100-sxm4-40gb-32x-s2048-mb10-ga1":
        "SUSPECT: MFU 45.39 where the same model, sequence and micro-batch give 55.69/55.44/54.41"
        " on 16/64/128 GPUs; a one-off dip (per-GPU tokens/s 15555 against 19085/19001/18647)",
    "mpt-760m-a100-sxm4-80gb-8x-s1024-mb48-ga2":
        "CAUTION: MFU 47.76 against 56.85 at seq 2048 in the same 2023-10 sweep, while every other"
        " size moves by at most 2.2 points from 2048 down to 512 (125m 44.79 -> 42.56, 1b 59.86 -> 60.68);"
        " the 2023-04 PURE run of this config gave 55.98",
    "mpt-760m-a100-sxm4-80gb-8x-s512-mb96-ga2":
        "CAUTION: MFU 45.07 against 56.85 at seq 2048 in the same 2023-10 sweep, while every other"
        " size moves by at most 2.2 points from 2048 down to 512 (125m 44.79 -> 42.56, 1b 59.86 -> 60.68);"
        " the 2023-04 PURE run of this config gave 56.2",
}


def root_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def num_params(size, seq_len):
    d, layers = ARCH[size]
    return VOCAB * d + seq_len * d + layers * (12 * d * d + 13 * d) + 2 * d


def config_path(size, seq_len):
    """The run's config.json, relative to the run file's folder bench/data (the model= of its
    run record: epochcast takes paths in run records from the run file's folder)."""
    return "mpt/mpt-%s-s%d.json" % (size, seq_len)


def config_text(size, seq_len):
    """The MPT model section submit_benchmarks.py built, as an MPT config.json."""
    d, layers = ARCH[size]
    cfg = {"architectures": ["MPTForCausalLM"], "model_type": "mpt", "d_model": d,
           "n_heads": HEADS[size], "n_layers": layers, "expansion_ratio": 4, "max_seq_len": seq_len,
           "vocab_size": VOCAB, "learned_pos_emb": True, "no_bias": False,
           "norm_type": "low_precision_layernorm", "loss_fn": "fused_crossentropy",
           "use_train_metrics": True,
           "tie_word_embeddings": True,
           "attn_config": {"attn_type": "multihead_attention", "attn_impl": "triton", "alibi": False,
                           "rope": False},
           "ffn_config": {"ffn_type": "mptmlp"}}
    return json.dumps(cfg, indent=2) + "\n"


def parse(row):
    """One measurement row -> (run record, reported record, check message or None)."""
    notes = row["notes"]
    m = re.search(r"section: ([^;]+);.*FSDP (\w+), MP mode (\w+), activation checkpointing=(\w+), "
                  r"cpu offload=(\w+); micro-batch (\d+) x grad-accum (\d+); global batch (\d+) seqs"
                  r".*reported MFU=([\d.]+)% HFU=([\d.]+)%.*NumParams=(\d+)", notes)
    if not m:
        raise ValueError("unparsed notes: %s" % notes)
    (section, sharding, mp, ckpt, offload, micro, accum, global_batch, mfu, hfu, n_params) = m.groups()
    size = row["model"].split("-", 1)[1].lower()
    gpu = GPU[row["gpu"]]
    n = int(row["num_gpus"])
    seq = int(row["seq_len_or_image"].replace("seq", ""))
    micro, accum, global_batch, n_params = int(micro), int(accum), int(global_batch), int(n_params)
    precision = row["precision"]
    if offload != "False":
        raise ValueError("activation cpu offload in %s" % notes)
    network = next((v for k, v in NETWORK.items() if k in section), "")
    rid = "mpt-%s-%s-%dx-s%d-mb%d-ga%d" % (size, gpu, n, seq, micro, accum)
    epoch = "2023-04 sweep, Composer 0.13.3, torch 1.13.1" if mp == "PURE" \
        else "2023-10 sweep, Composer 0.16.3, torch 2.0.1"
    line = row["source_path"].split("@")[0].split("#")[1]
    run = {"id": rid, "model": config_path(size, seq), "gpu": gpu, "num_gpus": n, "gpus_per_node": 8,
           "network": network, "strategy": "fsdp", "sharding": sharding.lower(),
           "reduce_dtype": "bf16", "precision": precision, "attention": "flash_triton",
           "checkpointing": 1 if ckpt == "True" else 0, "batch_per_gpu": micro,
           "grad_accum": accum, "seq_len": seq, "optimizer": "adamw", "data": "real",
           "metric": "tokens_per_s", "value": row["value"],
           "source": "llm-foundry:scripts/train/benchmarking/README.md#%s@8c8dd48f "
                     "(MP %s, attn_impl triton; %s)" % (line, mp, epoch)}
    flags = []
    if micro * accum * n != global_batch:
        flags.append("NONUNIFORM_MICROBATCH: %d x %d x %d GPUs > global batch %d, last micro-batch "
                     "smaller" % (micro, accum, n, global_batch))
    if rid in SUSPECT:
        flags.append(SUSPECT[rid])
    rep = {"id": rid, "reported_mfu": "%.4f" % (float(mfu) / 100), "reported_hfu": "%.4f" % (float(hfu) / 100),
           "num_params": n_params, "flags": "; ".join(flags)}
    # checks: parameter count from the architecture, MFU/HFU from tokens/s
    problems = []
    if num_params(size, seq) != n_params:
        problems.append("NumParams %d != formula %d" % (n_params, num_params(size, seq)))
    d, layers = ARCH[size]
    samples_per_s = float(row["value"]) / seq
    model_flop = 3 * 2 * n_params * seq + 3 * layers * 4 * d * seq * seq
    mfu_calc = 100 * model_flop * samples_per_s / (n * PEAK_FLOP_PER_S[(gpu, precision)])
    hfu_calc = mfu_calc * (4.0 / 3.0 if ckpt == "True" else 1.0)
    # tokens/s is truncated to an integer: the true value lies in [value, value + 1)
    slack = 100 * model_flop / seq / (n * PEAK_FLOP_PER_S[(gpu, precision)])
    for name, calc, rep_v in (("MFU", mfu_calc, float(mfu)), ("HFU", hfu_calc, float(hfu))):
        if not (rep_v - MFU_TOL_PP <= calc and calc <= rep_v + MFU_TOL_PP + slack * (hfu_calc / mfu_calc)):
            problems.append("%s recomputed %.3f, README %.2f" % (name, calc, rep_v))
    return run, rep, (rid, mfu_calc, float(mfu), problems)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main(argv):
    shared = os.path.join(root_dir(), "..", "shared")
    check = "--check" in argv[1:]
    args = [a for a in argv[1:] if a != "--check"]
    if len(args) == 2 and args[0] == "--shared":
        shared = args[1]
    elif args:
        sys.stderr.write(__doc__)
        return 2
    src = os.path.join(shared, "data", "measurements", "mosaicml_llm_foundry_mpt.csv")
    if not os.path.exists(src):
        print("make_mpt_runs: no %s; nothing to do" % src)
        return 77 if check else 1
    with open(src, newline="") as f:
        parsed = [parse(r) for r in csv.DictReader(f)]
    runs = [p[0] for p in parsed]
    reported = [p[1] for p in parsed]
    ids = [r["id"] for r in runs]
    bad = [p[2] for p in parsed if p[2][3]]
    if len(set(ids)) != len(ids):
        bad.append(("ids", 0, 0, ["duplicate ids"]))
    worst = max(abs(c[1] - c[2]) for c in (p[2] for p in parsed))
    print("MFU recomputed from tokens/s for %d rows: largest |recomputed - README| = %.3f pp; "
          "NumParams formula matches %d/%d" % (len(parsed), worst,
                                              sum(1 for p in parsed if not any("NumParams" in q for q in p[2][3])),
                                              len(parsed)))
    for rid, _, _, problems in bad:
        print("  %s: %s" % (rid, "; ".join(problems)))
    configs = {}
    for r in runs:
        size, seq = r["id"].split("-")[1], int(r["seq_len"])
        configs[os.path.join(root_dir(), "bench", "data", config_path(size, seq))] = config_text(size, seq)
    out_runs = os.path.join(root_dir(), "bench", "data", "mpt_runs.csv")
    out_rep = os.path.join(root_dir(), "bench", "data", "mpt_reported.csv")
    if check:
        same = True
        for path, header, rows in ((out_runs, HEADER, runs), (out_rep, REPORTED_HEADER, reported)):
            tmp = path + ".tmp"
            write_csv(tmp, header, rows)
            with open(tmp, "rb") as a:
                fresh = a.read()
            os.remove(tmp)
            with open(path, "rb") as b:
                same = same and fresh == b.read()
        cdir = os.path.join(root_dir(), CONFIG_DIR)
        present = set(os.path.join(cdir, f) for f in os.listdir(cdir)) if os.path.isdir(cdir) else set()
        for path, text in configs.items():
            if path not in present:
                same = False
                continue
            with open(path, encoding="utf-8") as f:
                same = same and f.read() == text
        same = same and present == set(configs)
        print("%s and %s %s what make_mpt_runs.py makes of %s" %
              (out_runs, out_rep, "are" if same else "differ from", src))
        return 0 if same and not bad else 1
    if bad:
        return 1
    cdir = os.path.join(root_dir(), CONFIG_DIR)
    os.makedirs(cdir, exist_ok=True)
    for f in os.listdir(cdir):  # configs no run uses any more
        if f.endswith(".json") and os.path.join(cdir, f) not in configs:
            os.remove(os.path.join(cdir, f))
    for path, text in sorted(configs.items()):
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    for path, header, rows in ((out_runs, HEADER, runs), (out_rep, REPORTED_HEADER, reported)):
        tmp = path + ".tmp"
        write_csv(tmp, header, rows)
        os.replace(tmp, path)
    print("wrote %s and %s (%d rows, %d flagged) and %d configs in %s" %
          (out_runs, out_rep, len(runs), sum(1 for r in reported if r["flags"]), len(configs), cdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
