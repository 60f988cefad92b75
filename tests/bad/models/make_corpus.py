#!/usr/bin/env python3
"""make_corpus.py: writes the broken models/ tables of tests/bad/models/<table>/<case>.csv
from the shipped ones in models/ (run from the repository root; the output is committed).
Each case breaks one thing; tests/unit/test_bad_models.c swaps it into a copy of models/
and checks the message listed in EXPECTED (written by hand: this script does not touch it).
After a change to models/, run it and review the diff: only the models/ change may show.

  /usr/bin/python3 tests/bad/models/make_corpus.py           # rewrite the cases in place
  /usr/bin/python3 tests/bad/models/make_corpus.py --check   # exit 1 if a committed case differs
                                                             # from what models/ makes (ctest
                                                             # bad_models_corpus_current)
  ... --models DIR   read the tables from DIR instead of models/ (to see --check fail)
Cases not made here (sdpa_backends/, written by hand) are left alone and not checked."""
import csv, io, os, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "..", "models")
CHECK = "--check" in sys.argv[1:]
if "--models" in sys.argv[1:]:
    MODELS = sys.argv[sys.argv.index("--models") + 1]
_TMP = tempfile.TemporaryDirectory(prefix="ec_corpus_") if CHECK else None
ROOT = _TMP.name if CHECK else HERE  # where the cases are written


def read(table):
    with open(os.path.join(MODELS, table + ".csv"), newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def text(rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def set_cell(rows, row, col, value):
    rows = [list(r) for r in rows]
    rows[row][rows[0].index(col)] = value
    return rows


def drop_col(rows, col):
    i = rows[0].index(col)
    return [r[:i] + r[i + 1:] for r in rows]


def row_twice(rows, row):
    """rows with rows[row] appended again (a duplicate key)."""
    return [list(r) for r in rows] + [list(rows[row])]


def emit(table, case, data):
    d = os.path.join(ROOT, table)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, case + ".csv"), "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def common(table, rows, num_col, row=1):
    """The cases every table gets: structure, quoting, numbers, encoding."""
    good = text(rows)
    emit(table, "empty", "")
    emit(table, "header_only", text(rows[:1]))
    dup = [list(r) for r in rows]
    dup[0][-1] = dup[0][0]
    emit(table, "duplicate_header", text(dup))
    wrong = [list(r) for r in rows]
    wrong[0][rows[0].index(num_col)] = num_col[:-1] + "x"
    emit(table, "misspelled_header", text(wrong))
    emit(table, "missing_column", text(drop_col(rows, num_col)))
    lines = good.rstrip("\n").split("\n")
    # cut inside the second field, so the row is short whatever its last cell holds
    cut = lines[-1].index(",") + 2
    emit(table, "truncated_last_line", "\n".join(lines[:-1] + [lines[-1][:cut]]))
    emit(table, "bad_quoting", good.replace("\n", '\nab"c', 1).replace('\nab"c', "\n", 0) if False else
         "\n".join([lines[0], 'x"y' + lines[1]] + lines[2:]) + "\n")
    emit(table, "unterminated_quote", "\n".join(lines) + '\n"open' + "\n")
    for case, v in [("non_numeric", "lots"), ("negative", "-1"), ("nan", "nan"), ("inf", "inf"),
                    ("huge", "1e300"), ("overflow", "1e999"), ("empty_number", "")]:
        emit(table, case, text(set_cell(rows, row, num_col, v)))
    bad = good.encode("utf-8")
    i = bad.index(b"\n") + 1
    emit(table, "invalid_utf8", bad[:i + 1] + b"\xff\xfe" + bad[i + 1:])


gpus = read("gpus")
common("gpus", gpus, "sm_count")
dup = row_twice(gpus, 1)
emit("gpus", "duplicate_id", text(dup))
emit("gpus", "unknown_topology", text(set_cell(gpus, 2, "default_topology", "nvlnk")))
emit("gpus", "bad_refuse", text(set_cell(gpus, 1, "refuse", "fp64: no such precision")))
t4 = [r[0] for r in gpus].index("t4")
emit("gpus", "nvlink_without_bandwidth", text(set_cell(set_cell(gpus, t4, "default_topology", "nvlink"),
                                                      t4, "nvlink_bytes_per_s", "0")))
emit("gpus", "alias_of_other_gpu", text(set_cell(gpus, 2, "aliases", "T4")))
emit("gpus", "empty_alias", text(set_cell(gpus, 2, "aliases", "A16;;NVIDIA A16")))
emit("gpus", "empty_id", text(set_cell(gpus, 2, "id", "")))
emit("gpus", "eff_above_range", text(set_cell(gpus, 1, "gemm_eff_fp16_frac", "7")))
emit("gpus", "int_not_integer", text(set_cell(gpus, 1, "pcie_gen", "3.5")))
h100 = [r[0] for r in gpus].index("h100-sxm5-80gb")
emit("gpus", "fp8_peak_without_efficiency", text(set_cell(gpus, h100, "gemm_eff_fp8_frac", "0")))
# a GPU keeps at most its short-run tensor rate back to back (gpus.csv sustained_tensor_frac <= 1)
emit("gpus", "sustained_above_one", text(set_cell(gpus, h100, "sustained_tensor_frac", "1.2")))

hosts = read("hosts")
common("hosts", hosts, "cores")
emit("hosts", "no_default", text(set_cell(hosts, 1, "id", "server")))
emit("hosts", "zero_dispatch", text(set_cell(hosts, 1, "dispatch_fwd_s", "0")))
emit("hosts", "zero_host_hop", text(set_cell(hosts, 1, "host_hop_busbw_bytes_per_s", "0")))
emit("hosts", "negative_socket_gpus", text(set_cell(hosts, 1, "socket_gpus", "-4")))
emit("hosts", "fractional_socket_gpus", text(set_cell(hosts, 1, "socket_gpus", "4.5")))
dup = row_twice(hosts, 1)
emit("hosts", "duplicate_id", text(dup))

nets = read("networks")
common("networks", nets, "default_seq_len")
ids = [r[0] for r in nets]
bert, resnet = ids.index("bert-base"), ids.index("resnet50")
emit("networks", "unknown_task", text(set_cell(nets, bert, "default_task", "qa")))
emit("networks", "missing_config", text(set_cell(nets, bert, "config", "networks/bert-nope.json")))
emit("networks", "config_not_json", text(set_cell(nets, bert, "config", "gpus.csv")))
emit("networks", "published_task_without_head", text(set_cell(nets, resnet, "published_task", "lm")))
emit("networks", "zero_published_params", text(set_cell(nets, bert, "published_params", "0")))
dup = row_twice(nets, bert)
emit("networks", "duplicate_id", text(dup))

tuning = read("nccl_tuning")
common("nccl_tuning", tuning, "net_latency_us")
emit("nccl_tuning", "missing_row", text(tuning[:-1]))
emit("nccl_tuning", "unknown_row", text(set_cell(tuning, 1, "id", "ring_ll64")))
emit("nccl_tuning", "correction_above_one", text(set_cell(tuning, 4, "size_correction", "1.0 1.5")))
emit("nccl_tuning", "correction_not_a_number", text(set_cell(tuning, 4, "size_correction", "1.0 lots")))
emit("nccl_tuning", "needs_nvlink_not_0_or_1", text(set_cell(tuning, 1, "needs_nvlink", "2")))
emit("nccl_tuning", "latency_mult_below_one", text(set_cell(tuning, 3, "net_large_latency_mult_before_sm80", "0.5")))
dup = row_twice(tuning, 1)
emit("nccl_tuning", "duplicate_id", text(dup))

ub = read("tp_overlap")
common("tp_overlap", ub, "proj_fprop_num_sm")
emit("tp_overlap", "unknown_method", text(set_cell(ub, 1, "fc2_fprop_method", "ring")))
emit("tp_overlap", "pipeline_on_allgather", text(set_cell(ub, 1, "qkv_fprop_method", "pipeline")))
emit("tp_overlap", "pipeline_without_splits", text(set_cell(ub, 1, "proj_fprop_num_splits", "0")))
# a row below the first: the message names its line, not only its id
emit("tp_overlap", "unknown_method_te_defaults", text(set_cell(ub, 4, "qkv_fprop_method", "ring")))
emit("tp_overlap", "margin_not_0_or_1", text(set_cell(ub, 1, "fc2_fprop_set_sm_margin", "2")))
emit("tp_overlap", "default_missing", text([ub[0]] + [r for r in ub[1:] if r[0] != "h100_h8192_tp4_mbs1_seqlen8192"]))
dup = row_twice(ub, 1)
emit("tp_overlap", "duplicate_id", text(dup))

fabrics = read("interconnects")
common("interconnects", fabrics, "gbit_per_s_per_node")
os.remove(os.path.join(ROOT, "interconnects", "empty_number.csv"))  # an empty rate is allowed (the other one given)
emit("interconnects", "no_rate", text(set_cell(set_cell(fabrics, 1, "gbit_per_s_per_gpu", ""), 1, "gbit_per_s_per_node", "")))
emit("interconnects", "zero_rate", text(set_cell(fabrics, 1, "gbit_per_s_per_gpu", "0")))
emit("interconnects", "efficiency_above_one", text(set_cell(fabrics, 1, "efficiency_frac", "1.5")))
dup = row_twice(fabrics, 1)
emit("interconnects", "duplicate_id", text(dup))

consts = read("constants")
common("constants", consts, "value")
names = [r[0] for r in consts]
emit("constants", "unknown_name", text(set_cell(consts, 1, "name", "cuda_contxt_bytes")))
dup = row_twice(consts, 1)
emit("constants", "duplicate_name", text(dup))
emit("constants", "missing_name", text(consts[:1] + consts[2:]))
known_max = [i for i, r in enumerate(consts) if r[0] == "torch_version_known_max"][0]
emit("constants", "release_not_release", text(set_cell(consts, known_max, "value", "2.x")))
for name, v in [("gpus_per_node", "0"), ("gemm_tile_large_m", "0"), ("foreach_tensors_per_kernel", "0"),
                ("gelu_new_kernels", "1e12"), ("pcie_host_busbw_frac", "0")]:
    emit("constants", "zero_" + name if v == "0" else "huge_" + name,
         text(set_cell(consts, names.index(name), "value", v)))

prof = read("profile")
common("profile", prof, "value")
emit("profile", "unknown_parameter", text(set_cell(prof, 1, "parameter", "gemm_scal")))
dup = row_twice(prof, 1)
emit("profile", "duplicate_parameter", text(dup))
emit("profile", "zero_value", text(set_cell(prof, 1, "value", "0")))
host_sd = [r[0] for r in prof].index("error_log_sd_unseen_arch_host")
emit("profile", "negative_unseen_host_sd", text(set_cell(prof, host_sd, "value", "-0.3")))
arch_row = next(i for i, r in enumerate(prof) if i and r[1])  # an architecture's entry
emit("profile", "unknown_kernel_class", text(set_cell(prof, arch_row, "kernels", "eager triton")))
emit("profile", "kernels_on_global_row", text(set_cell(prof, 1, "kernels", "eager")))
attn_eff_row = next(i for i, r in enumerate(prof) if r[0] == "attn_eff" and not r[1])
emit("profile", "unknown_attention_kernel", text(set_cell(prof, attn_eff_row, "kernels", "flash2 eager")))

refs = read("reference_systems")
emit("reference_systems", "empty", "")
emit("reference_systems", "header_only", text(refs[:1]))
emit("reference_systems", "missing_column", text(drop_col(refs, "network")))
h100 = [r[0] for r in refs].index("h100-sxm5-80gb")
emit("reference_systems", "unknown_gpu", text(set_cell(refs, h100, "gpu", "h100-sxm9")))
emit("reference_systems", "unknown_network", text(set_cell(refs, h100, "network", "ib-ndr-4000")))
emit("reference_systems", "empty_source", text(set_cell(refs, h100, "source", "")))
emit("reference_systems", "empty_fabric", text(set_cell(refs, h100, "fabric", "")))
emit("reference_systems", "gpus_per_node_fraction", text(set_cell(refs, h100, "gpus_per_node", "7.5")))
emit("reference_systems", "gpus_per_node_zero", text(set_cell(refs, h100, "gpus_per_node", "0")))
dup = row_twice(refs, h100)
emit("reference_systems", "duplicate_gpu", text(dup))

attn = read("attention")
emit("attention", "empty", "")
emit("attention", "header_only", text(attn[:1]))
emit("attention", "missing_column", text(drop_col(attn, "source")))
emit("attention", "empty_source", text(set_cell(attn, 2, "source", "")))
emit("attention", "unknown_kernel", text(set_cell(attn, 1, "kernel", "flash5")))
emit("attention", "bad_pass", text(set_cell(attn, 1, "pass", "both")))
emit("attention", "bad_causal", text(set_cell(attn, 1, "causal", "yes")))
emit("attention", "empty_architecture", text(set_cell(attn, 1, "architecture", "")))
emit("attention", "eff_out_of_range", text(set_cell(attn, 1, "eff_frac", "3")))
emit("attention", "no_bwd_row", text([r for r in attn if not (r[0] == "flash3" and r[2] == "bwd")]))
dup = row_twice(attn, 1)
emit("attention", "duplicate_row", text(dup))
emit("attention", "no_sdpa_prior", text([r for r in attn if not (r[0] == "sdpa_mem_efficient")]))
emit("attention", "head_dim_out_of_range", text(set_cell(attn, 1, "head_dim", "1024")))
emit("attention", "head_dim_not_integer", text(set_cell(attn, 1, "head_dim", "64.5")))
emit("attention", "missing_head_dim_column", text(drop_col(attn, "head_dim")))
hd_dup = [list(r) for r in attn]  # a row for any head dim beside one for head dim 128
hd_dup.append(set_cell(attn, 1, "head_dim", "")[1])
emit("attention", "any_and_one_head_dim", text(hd_dup))
emit("attention", "unknown_kernel_flash", text(set_cell(attn, 1, "kernel", "flash")))
emit("attention", "unknown_reference_gpu", text(set_cell(attn, 1, "reference_gpu", "h100-sxm5-700w")))
emit("attention", "bad_back_to_back", text(set_cell(attn, 1, "back_to_back", "yes")))
# one kernel on one architecture is timed one way: FlashAttention-4's forward rows back to back, its backward not
f4_bwd = [i for i, r in enumerate(attn) if r and r[0] == "flash4" and r[2] == "bwd"][0]
emit("attention", "mixed_back_to_back", text(set_cell(attn, f4_bwd, "back_to_back", "0")))
emit("attention", "mixed_reference_gpu", text(set_cell(attn, 2, "reference_gpu", "h100-sxm5-80gb")))
emit("attention", "missing_reference_gpu_column", text(drop_col(attn, "reference_gpu")))
emit("attention", "missing_cudnn_version_column", text(drop_col(attn, "cudnn_version")))
emit("attention", "cudnn_version_not_cudnn", text(set_cell(attn, 1, "cudnn_version", "9.13")))
cudnn_rows = [i for i, r in enumerate(attn) if r[0] == "cudnn"]
named = [i for i in cudnn_rows if attn[i][attn[0].index("cudnn_version")]]
emit("attention", "cudnn_version_not_release", text(set_cell(attn, named[0], "cudnn_version", "9.x")))
emit("attention", "cudnn_version_mixed", text(set_cell(attn, cudnn_rows[0], "cudnn_version", "9.1")))
fp8_row = next(i for i, r in enumerate(attn) if r[0] == "cudnn_fp8")  # its release is its source's, no axis
emit("attention", "cudnn_version_on_fp8", text(set_cell(attn, fp8_row, "cudnn_version", "9.19")))
emit("attention", "missing_derived_from_column", text(drop_col(attn, "derived_from")))
emit("attention", "derived_from_unknown", text(set_cell(attn, 1, "derived_from", "flash5")))
emit("attention", "derived_from_itself", text(set_cell(attn, 1, "derived_from", "flash2")))
triton_rows = [i for i, r in enumerate(attn) if r[0] == "triton"]
emit("attention", "derived_from_mixed", text(set_cell(attn, triton_rows[1], "derived_from", "flash1")))
chain = attn  # flash3's rows derived from flash2: flash4, derived from flash3, is then two steps away
for i in [i for i, r in enumerate(attn) if r[0] == "flash3"]:
    chain = set_cell(chain, i, "derived_from", "flash2")
emit("attention", "derived_from_derived", text(chain))

mb = read("membw")
emit("membw", "missing_column", text(drop_col(mb, "source")))
emit("membw", "empty_source", text(set_cell(mb, 2, "source", "")))
emit("membw", "no_prior", text([r for r in mb if r[1] != "*"]))
emit("membw", "unknown_gpu", text(set_cell(mb, 2, "gpu", "a100-sxm9")))
emit("membw", "overhead_out_of_range", text(set_cell(mb, 2, "overhead_s", "1")))
emit("membw", "no_key", text(set_cell(mb, 2, "architecture", "")))
dup = row_twice(mb, 2)
emit("membw", "duplicate_row", text(dup))

l2 = read("l2")
emit("l2", "missing_column", text(drop_col(l2, "l2_usable_bytes")))
emit("l2", "empty_source", text(set_cell(l2, 2, "source", "")))
emit("l2", "unknown_gpu", text(set_cell(l2, 2, "gpu", "a100-pcie-80gx")))
emit("l2", "usable_over_l2_bytes", text(set_cell(l2, 2, "l2_usable_bytes", "41943041")))
emit("l2", "bandwidth_not_number", text(set_cell(l2, 2, "l2_read_bytes_per_s", "5.4 TB/s")))
emit("l2", "measured_not_0_or_1", text(set_cell(l2, 2, "measured", "2")))
emit("l2", "no_l2_gpu", text(set_cell(l2, 2, "gpu", "b200")))
dup = row_twice(l2, 2)
emit("l2", "duplicate_row", text(dup))

gm = read("gemm")
emit("gemm", "missing_column", text(drop_col(gm, "source")))
emit("gemm", "empty_source", text(set_cell(gm, 1, "source", "")))
emit("gemm", "no_prior", text([gm[0], ["hopper", "16", "0", "test"]]))
emit("gemm", "unknown_architecture", text(set_cell(gm, 1, "architecture", "hoper")))
emit("gemm", "k_half_out_of_range", text(set_cell(gm, 1, "k_half", "-1")))
emit("gemm", "fixed_s_out_of_range", text(set_cell(gm, 1, "fixed_s", "-1")))
emit("gemm", "duplicate_row", text(gm + [["hopper", "32", "0", "test"]]))
gs = read("gemm_shapes")
emit("gemm_shapes", "missing_column", text(drop_col(gs, "source")))
emit("gemm_shapes", "empty_source", text(set_cell(gs, 2, "source", "")))
emit("gemm_shapes", "unknown_gpu", text(set_cell(gs, 2, "gpu", "h100-sxm9")))
emit("gemm_shapes", "gpu_of_other_architecture", text(set_cell(gs, 2, "gpu", "a100-pcie-40gb")))
emit("gemm_shapes", "unknown_dtype", text(set_cell(gs, 2, "dtype", "int8")))
emit("gemm_shapes", "zero_k", text(set_cell(gs, 2, "k", "0")))
emit("gemm_shapes", "above_best", text(set_cell(gs, 2, "achieved_flop_per_s", "900e12")))


ca = read("conv_algos")
emit("conv_algos", "missing_column", text(drop_col(ca, "source")))
emit("conv_algos", "empty_source", text(set_cell(ca, 1, "source", "")))
emit("conv_algos", "unknown_unit", text(set_cell(ca, 1, "unit", "cuda")))
emit("conv_algos", "unknown_pass", text(set_cell(ca, 1, "passes", "fwd bwd")))
emit("conv_algos", "unknown_layout", text(set_cell(ca, 1, "layout", "chwn")))
emit("conv_algos", "flop_frac_out_of_range", text(set_cell(ca, 1, "flop_frac", "2")))
emit("conv_algos", "no_catch_all", text([r for r in ca if not (r[1] == "simt" and r[2] == "*")]))


if CHECK:
    stale = []
    for d, _, files in os.walk(ROOT):
        for name in files:
            rel = os.path.relpath(os.path.join(d, name), ROOT)
            with open(os.path.join(ROOT, rel), "rb") as f:
                made = f.read()
            try:
                with open(os.path.join(HERE, rel), "rb") as f:
                    committed = f.read()
            except OSError:
                committed = None
            if made != committed:
                stale.append(rel)
    for rel in sorted(stale):
        print("tests/bad/models/%s: differs from what make_corpus.py makes of %s" % (rel, MODELS))
    if stale:
        print("%d case(s) stale: run /usr/bin/python3 tests/bad/models/make_corpus.py, review the "
              "diff (only the models/ change may show) and check EXPECTED (ctest -R bad_models)" % len(stale))
        sys.exit(1)
    print("tests/bad/models: all generated cases current")
