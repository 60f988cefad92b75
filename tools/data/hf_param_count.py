#!/usr/bin/env python3
"""Independent reference parameter counter for the network descriptions of issue 17.

    python3 tools/data/hf_param_count.py            # every fixture and preset, table, exit 1 on a miss
    python3 tools/data/hf_param_count.py -v         # also the per-component breakdown
    python3 tools/data/hf_param_count.py PATH.json HEAD     # one config.json, breakdown (HEAD as in the CSVs)

Reads the Hugging Face config.json fixtures listed in tests/data/hf/MANIFEST.csv and the presets
listed in models/networks/SOURCES.csv, computes the number of trainable parameters of the
Hugging Face (or torchvision / llm-foundry) module the row names in its `head` column, and
compares it with the row's published_params.  Exits non-zero if any row differs by more than
TOL_FRAC.  For the MosaicML MPT presets it also checks every NumParams of
../shared/data/measurements/mosaicml_llm_foundry_mpt.csv at the max_seq_len of that row.

This is the cross-check for the C network builder: it does not import torch or transformers
(Python 3 stdlib only) and follows the modeling code by hand.  The counting rules, one per
model_type, live next to this file, each citing the file it comes from; paths are in
github.com/huggingface/transformers (src/transformers/models/...), github.com/mosaicml/llm-foundry
(llmfoundry/models/...) and github.com/pytorch/vision (torchvision/models/...):

  hf_count_common.py    ConfigError, module sizes (linear, layernorm, ...), req(), Count
  hf_count_encoders.py  bert, roberta, distilbert, albert, deberta-v2, t5, mt5
  hf_count_decoders.py  gpt2, gpt_neox, opt, bloom, mpt, falcon
  hf_count_llama.py     llama, mistral, qwen2, gemma(2), mixtral, qwen2/3_moe, deepseek_v2/v3,
                        gpt_oss, phi3, qwen3, gemma3(_text), llama4(_text)
  hf_count_vision.py    vit, clip_vision_model, torchvision_resnet, torchvision_vit

This file maps model_type to its rule (COUNTERS), reads the CSVs and config.json files, compares
and prints.  Counting conventions, shared by every family:

  * a parameter tied to another one (tie_word_embeddings, MLM decoders tied to the word
    embedding) is counted once, as torch's model.parameters() does;
  * buffers (BatchNorm running stats, GPT-2's causal-mask "attn.bias", rotary inv_freq,
    position_ids) are not parameters;
  * nn.Linear(i, o) = i*o (+ o with a bias); nn.Embedding(n, d) = n*d; nn.LayerNorm(d) = 2d
    (d without a bias); RMSNorm(d) = d; Conv2d(ci, co, k) = ci*co*k*k (+ co with a bias).
"""
import csv
import json
import os
import re
import sys

from hf_count_common import ConfigError, Count
from hf_count_decoders import count_bloom, count_falcon, count_gpt2, count_gpt_neox, count_mpt, count_opt
from hf_count_encoders import count_albert, count_bert, count_deberta_v2, count_distilbert, count_t5
from hf_count_llama import (count_deepseek_v3, count_gemma3, count_gemma3_text, count_gpt_oss,
                            count_llama4, count_llama4_text, count_llama_like, count_mixtral,
                            count_phi3, count_qwen3, count_qwen_moe)
from hf_count_vision import count_clip_vision, count_tv_resnet, count_tv_vit, count_vit

# Published counts are exact integers (safetensors metadata, model cards, torchvision
# metadata) or rounded figures (a paper's "6.7B").  A computed count must be within
# TOL_FRAC of the published one: |computed - published| / published <= 0.005 (issue 17).
TOL_FRAC = 0.005

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MANIFEST = os.path.join(ROOT, "tests", "data", "hf", "MANIFEST.csv")
SOURCES = os.path.join(ROOT, "models", "networks", "SOURCES.csv")
MPT_CSV = os.path.join(ROOT, "..", "shared", "data", "measurements", "mosaicml_llm_foundry_mpt.csv")


COUNTERS = {
    "bert": count_bert,
    "roberta": count_bert,
    "distilbert": count_distilbert,
    "albert": count_albert,
    "deberta-v2": count_deberta_v2,
    "gpt2": count_gpt2,
    "gpt_neox": count_gpt_neox,
    "llama": lambda cfg, head, c: count_llama_like(cfg, head, c, "llama"),
    "mistral": lambda cfg, head, c: count_llama_like(cfg, head, c, "mistral"),
    "qwen2": lambda cfg, head, c: count_llama_like(cfg, head, c, "qwen2"),
    "gemma": lambda cfg, head, c: count_llama_like(cfg, head, c, "gemma"),
    "gemma2": lambda cfg, head, c: count_llama_like(cfg, head, c, "gemma2"),
    "mixtral": count_mixtral,
    "qwen2_moe": lambda cfg, head, c: count_qwen_moe(cfg, head, c, "qwen2_moe"),
    "qwen3_moe": lambda cfg, head, c: count_qwen_moe(cfg, head, c, "qwen3_moe"),
    "phi3": count_phi3,
    "mpt": count_mpt,
    "falcon": count_falcon,
    "t5": count_t5,
    "mt5": count_t5,
    "opt": count_opt,
    "bloom": count_bloom,
    "vit": count_vit,
    "clip_vision_model": count_clip_vision,
    "torchvision_resnet": count_tv_resnet,
    "torchvision_vit": count_tv_vit,
    "deepseek_v2": count_deepseek_v3,
    "deepseek_v3": count_deepseek_v3,
    "gpt_oss": count_gpt_oss,
    "qwen3": count_qwen3,
    "gemma3_text": count_gemma3_text,
    "gemma3": count_gemma3,
    "llama4_text": count_llama4_text,
    "llama4": count_llama4,
}


def count(cfg, head):
    mt = cfg.get("model_type")
    if mt not in COUNTERS:
        raise ConfigError("model_type %r not supported (supported: %s)" % (mt, ", ".join(sorted(COUNTERS))))
    c = Count()
    COUNTERS[mt](cfg, head, c)
    return c


def load(path):
    with open(path) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ConfigError("%s:%d:%d: %s" % (path, e.lineno, e.colno, e.msg))


# --------------------------------------------------------------------------- checks

def err_pct(computed, published):
    return 100.0 * (computed - published) / published


def rows_from(path, name_col, file_of):
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            yield r[name_col], file_of(r), r


def mpt_benchmark_rows():
    """(model id, seq_len, NumParams) from the llm-foundry benchmark CSV, unique."""
    if not os.path.exists(MPT_CSV):
        return []
    seen = set()
    out = []
    with open(MPT_CSV, newline="") as f:
        for r in csv.DictReader(f):
            m = re.search(r"NumParams=(\d+)", r["notes"])
            s = re.match(r"seq(\d+)$", r["seq_len_or_image"])
            if not (m and s):
                continue
            key = (r["model"].lower(), int(s.group(1)), int(m.group(1)))
            if key not in seen:
                seen.add(key)
                out.append(key)
    return sorted(out, key=lambda k: (k[0], k[1]))


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if args:
        head = args[1] if len(args) > 1 else ""
        try:
            cfg = load(args[0])
            c = count(cfg, head)
        except ConfigError as e:
            print("%s: %s" % (args[0], e), file=sys.stderr)
            return 2
        for name, n in c.parts:
            print("%-45s %15d" % (name, n))
        print("%-45s %15d" % ("total", c.total))
        return 0

    table = []
    for name, path, r in rows_from(MANIFEST, "name",
                                   lambda r: os.path.join(ROOT, "tests", "data", "hf", r["name"], "config.json")):
        table.append(("fixture", name, r["head"], load(path), int(r["published_params"])))
    for name, path, r in rows_from(SOURCES, "id",
                                   lambda r: os.path.join(ROOT, "models", "networks", r["file"])):
        table.append(("preset", name, r["head"], load(path), int(r["published_params"])))
    for model, seq, nparams in mpt_benchmark_rows():
        cfg = load(os.path.join(ROOT, "models", "networks", model + ".json"))
        cfg = dict(cfg, max_seq_len=seq)
        table.append(("mpt-bench", "%s@%d" % (model, seq), "MPTForCausalLM", cfg, nparams))

    bad = 0
    print("%-9s %-32s %-34s %16s %16s %8s" % ("kind", "name", "head", "computed", "published", "err%"))
    for kind, name, head, cfg, pub in table:
        try:
            c = count(cfg, head)
        except ConfigError as e:
            print("%-9s %-32s %-34s  ERROR %s" % (kind, name, head, e))
            bad += 1
            continue
        e = err_pct(c.total, pub)
        flag = "" if abs(e) <= 100 * TOL_FRAC else "  <-- FAIL"
        bad += bool(flag)
        print("%-9s %-32s %-34s %16d %16d %+8.3f%s" % (kind, name, head, c.total, pub, e, flag))
        if verbose:
            for part, n in c.parts:
                print("%12s %-60s %16d" % ("", part, n))
    print("%d rows, %d outside %.1f%%" % (len(table), bad, 100 * TOL_FRAC))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
