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
(Python 3 stdlib only) and follows the modeling code by hand.  Each rule below cites the file
it comes from; paths are in github.com/huggingface/transformers (src/transformers/models/...),
github.com/mosaicml/llm-foundry (llmfoundry/models/...) and github.com/pytorch/vision
(torchvision/models/...).  Counting conventions, shared by every family:

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

# Published counts are exact integers (safetensors metadata, model cards, torchvision
# metadata) or rounded figures (a paper's "6.7B").  A computed count must be within
# TOL_FRAC of the published one: |computed - published| / published <= 0.005 (issue 17).
TOL_FRAC = 0.005

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MANIFEST = os.path.join(ROOT, "tests", "data", "hf", "MANIFEST.csv")
SOURCES = os.path.join(ROOT, "models", "networks", "SOURCES.csv")
MPT_CSV = os.path.join(ROOT, "..", "shared", "data", "measurements", "mosaicml_llm_foundry_mpt.csv")


class ConfigError(Exception):
    pass


# --------------------------------------------------------------------------- primitives

def linear(i, o, bias=True):
    """torch.nn.Linear(i, o, bias): weight o x i, bias o."""
    return i * o + (o if bias else 0)


def layernorm(d, bias=True):
    """torch.nn.LayerNorm(d): weight d, bias d (bias=False since torch 2.1)."""
    return d * (2 if bias else 1)


def rmsnorm(d):
    """Llama/Mistral/Qwen/Gemma/Phi3 RMSNorm: a weight of d, no bias."""
    return d


def embedding(n, d):
    return n * d


def conv2d(ci, co, k, bias=True):
    return ci * co * k * k + (co if bias else 0)


def req(cfg, *keys, default=None, required=True):
    """First present key of cfg; missing -> ConfigError naming the keys (or default)."""
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    if required and default is None:
        raise ConfigError("missing field %s" % "/".join(keys))
    return default


class Count:
    """Named components, so that -v can show where the parameters are."""

    def __init__(self):
        self.parts = []

    def add(self, name, n):
        self.parts.append((name, int(n)))

    @property
    def total(self):
        return sum(n for _, n in self.parts)


# --------------------------------------------------------------------------- BERT family

def bert_layer(h, inter, attn_bias=True):
    """modeling_bert.py BertLayer: BertSelfAttention query/key/value Linear(h, h),
    BertSelfOutput dense Linear(h, h) + LayerNorm, BertIntermediate Linear(h, I),
    BertOutput Linear(I, h) + LayerNorm."""
    return (3 * linear(h, h, attn_bias) + linear(h, h) + layernorm(h)
            + linear(h, inter) + linear(inter, h) + layernorm(h))


def count_bert(cfg, head, c):
    """bert (modeling_bert.py) and roberta (modeling_roberta.py, same modules: RobertaEmbeddings
    has the same three tables, position table max_position_embeddings=514 incl. padding offset)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    t = req(cfg, "type_vocab_size", default=2)
    # BertEmbeddings: word_embeddings, position_embeddings, token_type_embeddings, LayerNorm
    c.add("embeddings", embedding(v, h) + embedding(p, h) + embedding(t, h) + layernorm(h))
    c.add("encoder (%d layers)" % n, n * bert_layer(h, inter))
    base = head.replace("Roberta", "Bert")
    if base in ("BertModel", "BertForPreTraining", "BertForSequenceClassification"):
        # BertModel(add_pooling_layer=True): BertPooler dense Linear(h, h) + tanh
        c.add("pooler", linear(h, h))
    if base in ("BertForMaskedLM", "BertForPreTraining"):
        # BertLMPredictionHead: transform dense Linear(h, h) + LayerNorm; decoder weight tied to
        # word_embeddings, its bias is a separate Parameter of vocab_size.  RobertaLMHead: dense,
        # layer_norm, decoder (tied) + bias - the same count.  BertForMaskedLM builds
        # BertModel(add_pooling_layer=False), so no pooler.
        c.add("mlm head (decoder tied)", linear(h, h) + layernorm(h) + v)
    if base == "BertForPreTraining":
        # BertPreTrainingHeads.seq_relationship Linear(h, 2)
        c.add("nsp head", linear(h, 2))
    if base == "BertForSequenceClassification":
        c.add("classifier", linear(h, cfg.get("num_labels", 2)))
    if base not in ("BertModel", "BertForMaskedLM", "BertForPreTraining",
                    "BertForSequenceClassification"):
        raise ConfigError("unsupported head %s" % head)


def count_distilbert(cfg, head, c):
    """modeling_distilbert.py: Embeddings word_embeddings, position_embeddings (an nn.Embedding
    also when sinusoidal_pos_embds: filled with sin/cos and requires_grad False, so it is a
    parameter that is never trained - counted here, as torch counts it), LayerNorm.
    TransformerBlock: MultiHeadSelfAttention q_lin/k_lin/v_lin/out_lin Linear(dim, dim),
    sa_layer_norm, FFN lin1 Linear(dim, hidden_dim), lin2 Linear(hidden_dim, dim),
    output_layer_norm.  No pooler."""
    d = req(cfg, "dim")
    n = req(cfg, "n_layers")
    hid = req(cfg, "hidden_dim")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    c.add("embeddings", embedding(v, d) + embedding(p, d) + layernorm(d))
    blk = 4 * linear(d, d) + layernorm(d) + linear(d, hid) + linear(hid, d) + layernorm(d)
    c.add("transformer (%d layers)" % n, n * blk)
    if head == "DistilBertForMaskedLM":
        # vocab_transform Linear(dim, dim), vocab_layer_norm, vocab_projector Linear(dim, V)
        # whose weight is tied to word_embeddings; its bias (V) is its own.
        c.add("mlm head (projector tied)", linear(d, d) + layernorm(d) + v)
    elif head != "DistilBertModel":
        raise ConfigError("unsupported head %s" % head)


def count_albert(cfg, head, c):
    """modeling_albert.py.  AlbertEmbeddings: word/position/token_type tables of
    embedding_size E (factorized embedding), LayerNorm(E).  AlbertTransformer:
    embedding_hidden_mapping_in Linear(E, H); albert_layer_groups = num_hidden_groups groups of
    inner_group_num AlbertLayers, SHARED by all num_hidden_layers layers (layer i uses group
    i // (num_hidden_layers / num_hidden_groups)), so parameters do not grow with depth.
    AlbertLayer: AlbertAttention query/key/value/dense Linear(H, H) + LayerNorm(H),
    ffn Linear(H, I), ffn_output Linear(I, H), full_layer_layer_norm LayerNorm(H)."""
    e = req(cfg, "embedding_size")
    h = req(cfg, "hidden_size")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    t = req(cfg, "type_vocab_size", default=2)
    groups = req(cfg, "num_hidden_groups", default=1)
    inner = req(cfg, "inner_group_num", default=1)
    c.add("embeddings (E=%d)" % e, embedding(v, e) + embedding(p, e) + embedding(t, e) + layernorm(e))
    c.add("embedding_hidden_mapping_in", linear(e, h))
    layer = 4 * linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h) + layernorm(h)
    c.add("shared layers (%d groups x %d)" % (groups, inner), groups * inner * layer)
    if head in ("AlbertModel", "AlbertForPreTraining"):
        c.add("pooler", linear(h, h))           # AlbertModel(add_pooling_layer=True)
    if head in ("AlbertForMaskedLM", "AlbertForPreTraining"):
        # AlbertMLMHead: LayerNorm(E), bias(V), dense Linear(H, E), decoder Linear(E, V) tied to
        # word_embeddings (decoder.bias = self.bias).  AlbertForMaskedLM uses
        # AlbertModel(add_pooling_layer=False).
        c.add("mlm head (decoder tied)", layernorm(e) + v + linear(h, e))
    if head == "AlbertForPreTraining":
        c.add("sop classifier", linear(h, 2))  # AlbertSOPHead classifier Linear(H, 2)
    if head not in ("AlbertModel", "AlbertForMaskedLM", "AlbertForPreTraining"):
        raise ConfigError("unsupported head %s" % head)


def count_deberta_v2(cfg, head, c):
    """modeling_deberta_v2.py.  DebertaV2Embeddings: word_embeddings (V x embedding_size,
    embedding_size defaults to hidden_size); position_embeddings only if position_biased_input
    (default True; deberta-v3 sets False); token_type_embeddings only if type_vocab_size > 0;
    embed_proj Linear(embedding_size, H, bias=False) only if they differ; LayerNorm(H).
    DebertaV2Layer = BERT layer (query_proj/key_proj/value_proj Linear(H, H, bias=True),
    SelfOutput dense + LayerNorm, Intermediate, Output + LayerNorm).  DisentangledSelfAttention
    adds pos_key_proj (c2p) / pos_query_proj (p2c) Linear(H, H) only when relative_attention and
    not share_att_key.  DebertaV2Encoder: rel_embeddings nn.Embedding(pos_ebd_size, H) with
    pos_ebd_size = 2*position_buckets if position_buckets > 0 else 2*max_relative_positions
    (max_relative_positions < 1 -> max_position_embeddings); LayerNorm(H) if "layer_norm" in
    norm_rel_ebd; ConvLayer (Conv1d(H, H, k) + LayerNorm) if conv_kernel_size > 0.
    DebertaV2Model has no pooler."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    p = req(cfg, "max_position_embeddings")
    esz = cfg.get("embedding_size") or h
    emb = embedding(v, esz)
    if cfg.get("position_biased_input", True):
        emb += embedding(p, esz)
    if cfg.get("type_vocab_size", 0) > 0:
        emb += embedding(cfg["type_vocab_size"], esz)
    if esz != h:
        emb += linear(esz, h, bias=False)
    c.add("embeddings", emb + layernorm(h))
    layer = bert_layer(h, inter)
    pos_att = cfg.get("pos_att_type") or []
    if isinstance(pos_att, str):
        pos_att = [x.strip() for x in pos_att.lower().split("|")]
    rel = cfg.get("relative_attention", False)
    if rel and not cfg.get("share_att_key", False):
        if "c2p" in pos_att:
            layer += linear(h, h)
        if "p2c" in pos_att:
            layer += linear(h, h)
    c.add("encoder (%d layers)" % n, n * layer)
    if rel:
        mrp = cfg.get("max_relative_positions", -1)
        if mrp < 1:
            mrp = p
        buckets = cfg.get("position_buckets", -1)
        size = 2 * buckets if buckets > 0 else 2 * mrp
        c.add("rel_embeddings (%d)" % size, embedding(size, h))
    if "layer_norm" in [x.strip() for x in str(cfg.get("norm_rel_ebd", "none")).lower().split("|")]:
        c.add("rel LayerNorm", layernorm(h))
    k = cfg.get("conv_kernel_size", 0)
    if k > 0:
        c.add("conv", h * h * k // cfg.get("conv_groups", 1) + h + layernorm(h))
    if head == "DebertaV2ForMaskedLM":
        # (legacy) DebertaV2LMPredictionHead: transform dense + LayerNorm, decoder tied, bias V
        c.add("mlm head (decoder tied)", linear(h, h) + layernorm(h) + v)
    elif head != "DebertaV2Model":
        raise ConfigError("unsupported head %s" % head)


# --------------------------------------------------------------------------- GPT-2 family

def count_gpt2(cfg, head, c):
    """modeling_gpt2.py.  wte (V x n_embd), wpe (n_positions x n_embd); GPT2Block: ln_1,
    GPT2Attention c_attn Conv1D(n_embd, 3 n_embd) and c_proj Conv1D(n_embd, n_embd), both with
    bias; ln_2; GPT2MLP c_fc Conv1D(n_embd, n_inner) and c_proj Conv1D(n_inner, n_embd),
    n_inner = 4 n_embd when null; ln_f.  GPT2LMHeadModel.lm_head Linear(n_embd, V, bias=False)
    is tied to wte, so GPT2LMHeadModel == GPT2Model.  The registered buffer attn.bias (the
    causal mask) is not a parameter although old checkpoints store it."""
    h = req(cfg, "n_embd", "hidden_size")
    n = req(cfg, "n_layer", "num_hidden_layers")
    v = req(cfg, "vocab_size")
    p = req(cfg, "n_positions", "max_position_embeddings")
    inter = cfg.get("n_inner") or 4 * h
    c.add("wte + wpe", embedding(v, h) + embedding(p, h))
    blk = layernorm(h) + linear(h, 3 * h) + linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h)
    c.add("h (%d blocks)" % n, n * blk)
    c.add("ln_f", layernorm(h))
    if head not in ("GPT2Model", "GPT2LMHeadModel"):
        raise ConfigError("unsupported head %s" % head)
    if head == "GPT2LMHeadModel" and cfg.get("tie_word_embeddings", True) is False:
        c.add("lm_head (untied)", linear(h, v, bias=False))


def count_gpt_neox(cfg, head, c):
    """modeling_gpt_neox.py.  embed_in (V x H); GPTNeoXLayer: input_layernorm,
    post_attention_layernorm (LayerNorm, both present with or without use_parallel_residual),
    attention query_key_value Linear(H, 3H) and dense Linear(H, H), bias = attention_bias
    (default True); rotary embedding has no parameters (rotary_pct only sets the rotated width);
    mlp dense_h_to_4h Linear(H, I), dense_4h_to_h Linear(I, H); final_layer_norm.
    GPTNeoXForCausalLM.embed_out Linear(H, V, bias=False), untied unless tie_word_embeddings."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    ab = cfg.get("attention_bias", True)
    c.add("embed_in", embedding(v, h))
    blk = 2 * layernorm(h) + linear(h, 3 * h, ab) + linear(h, h, ab) + linear(h, inter) + linear(inter, h)
    c.add("layers (%d)" % n, n * blk)
    c.add("final_layer_norm", layernorm(h))
    if head == "GPTNeoXForCausalLM" and not cfg.get("tie_word_embeddings", False):
        c.add("embed_out (untied)", linear(h, v, bias=False))
    elif head not in ("GPTNeoXModel", "GPTNeoXForCausalLM"):
        raise ConfigError("unsupported head %s" % head)


def count_opt(cfg, head, c):
    """modeling_opt.py.  embed_tokens (V x word_embed_proj_dim); embed_positions
    OPTLearnedPositionalEmbedding(max_position_embeddings + 2, hidden) (offset 2); project_in /
    project_out Linear(proj, H) / Linear(H, proj) without bias when proj != hidden;
    OPTDecoderLayer: self_attn q/k/v/out_proj Linear(H, H, bias=enable_bias),
    self_attn_layer_norm, fc1 Linear(H, ffn_dim), fc2 Linear(ffn_dim, H), final_layer_norm;
    OPTDecoder.final_layer_norm only when do_layer_norm_before and not _remove_final_layer_norm.
    OPTForCausalLM.lm_head is tied to embed_tokens."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    v = req(cfg, "vocab_size")
    ffn = req(cfg, "ffn_dim")
    pos = req(cfg, "max_position_embeddings")
    proj = cfg.get("word_embed_proj_dim") or h
    b = cfg.get("enable_bias", True)
    c.add("embed_tokens", embedding(v, proj))
    c.add("embed_positions", embedding(pos + 2, h))
    if proj != h:
        c.add("project_in + project_out", linear(proj, h, False) + linear(h, proj, False))
    blk = 4 * linear(h, h, b) + 2 * layernorm(h) + linear(h, ffn, b) + linear(ffn, h, b)
    c.add("layers (%d)" % n, n * blk)
    if cfg.get("do_layer_norm_before", True) and not cfg.get("_remove_final_layer_norm", False):
        c.add("final_layer_norm", layernorm(h))
    if head not in ("OPTModel", "OPTForCausalLM"):
        raise ConfigError("unsupported head %s" % head)


def count_bloom(cfg, head, c):
    """modeling_bloom.py.  word_embeddings (V x H) + word_embeddings_layernorm; BloomBlock:
    input_layernorm, self_attention query_key_value Linear(H, 3H) and dense Linear(H, H),
    post_attention_layernorm, mlp dense_h_to_4h Linear(H, 4H), dense_4h_to_h Linear(4H, H),
    all with biases; ln_f.  ALiBi has no parameters; BloomForCausalLM.lm_head is tied."""
    h = req(cfg, "hidden_size", "n_embed")
    n = req(cfg, "n_layer", "num_hidden_layers")
    v = req(cfg, "vocab_size")
    c.add("word_embeddings + layernorm", embedding(v, h) + layernorm(h))
    blk = 2 * layernorm(h) + linear(h, 3 * h) + linear(h, h) + linear(h, 4 * h) + linear(4 * h, h)
    c.add("h (%d blocks)" % n, n * blk)
    c.add("ln_f", layernorm(h))
    if head not in ("BloomModel", "BloomForCausalLM"):
        raise ConfigError("unsupported head %s" % head)


# --------------------------------------------------------------------------- Llama family

def llama_attention(cfg, h, q_bias, kv_bias, o_bias):
    """LlamaAttention (modeling_llama.py) and the copies in mistral/mixtral/qwen2/qwen2_moe/
    qwen3_moe/gemma/gemma2: q_proj Linear(H, nh*hd), k_proj and v_proj Linear(H, nkv*hd),
    o_proj Linear(nh*hd, H).  head_dim = config.head_dim if set, else H // nh;
    num_key_value_heads defaults to num_attention_heads."""
    nh = req(cfg, "num_attention_heads")
    nkv = cfg.get("num_key_value_heads") or nh
    hd = cfg.get("head_dim") or h // nh
    if (cfg.get("head_dim") is None) and h % nh:
        raise ConfigError("hidden_size %d not divisible by num_attention_heads %d" % (h, nh))
    if nh % nkv:
        raise ConfigError("num_attention_heads %d not divisible by num_key_value_heads %d" % (nh, nkv))
    return (linear(h, nh * hd, q_bias) + 2 * linear(h, nkv * hd, kv_bias)
            + linear(nh * hd, h, o_bias))


def gated_mlp(h, inter, bias=False):
    """LlamaMLP / MistralMLP / Qwen2MLP / GemmaMLP: gate_proj, up_proj Linear(H, I), down_proj
    Linear(I, H) (SwiGLU / GeGLU); mlp_bias only for llama."""
    return 2 * linear(h, inter, bias) + linear(inter, h, bias)


def lm_head(cfg, h, v, c, default_tie):
    """*ForCausalLM.lm_head Linear(H, V, bias=False), tied to embed_tokens when
    tie_word_embeddings (PretrainedConfig default True; Llama/Mistral/Qwen2/Phi3 configs set
    their own default, passed here)."""
    tie = cfg.get("tie_word_embeddings", default_tie)
    if tie:
        c.add("lm_head (tied)", 0)
    else:
        c.add("lm_head", linear(h, v, bias=False))


def count_llama_like(cfg, head, c, model_type):
    """llama (modeling_llama.py; attention_bias and mlp_bias default False), mistral
    (modeling_mistral.py, no biases), qwen2 (modeling_qwen2.py: q/k/v_proj bias=True, o_proj
    bias=False), gemma (modeling_gemma.py: attention_bias default False, tie default True),
    gemma2 (modeling_gemma2.py: adds pre_feedforward_layernorm and post_feedforward_layernorm,
    4 RMSNorms per layer).  Decoder layer: input_layernorm + post_attention_layernorm (RMSNorm,
    weight only; Gemma's RMSNorm stores weight-1 but is still d parameters); final norm.
    Rotary embedding: no parameters."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    c.add("embed_tokens", embedding(v, h))
    if model_type == "qwen2":
        attn = llama_attention(cfg, h, True, True, False)
        mlp_b = False
    else:
        ab = bool(cfg.get("attention_bias", False))
        attn = llama_attention(cfg, h, ab, ab, ab)
        mlp_b = bool(cfg.get("mlp_bias", False)) if model_type == "llama" else False
    norms = 4 if model_type == "gemma2" else 2
    layer = attn + gated_mlp(h, inter, mlp_b) + norms * rmsnorm(h)
    c.add("layers (%d)" % n, n * layer)
    c.add("norm", rmsnorm(h))
    default_tie = model_type in ("gemma", "gemma2")
    if head.endswith("ForCausalLM"):
        lm_head(cfg, h, v, c, default_tie)
    elif not head.endswith("Model"):
        raise ConfigError("unsupported head %s" % head)


def count_mixtral(cfg, head, c):
    """modeling_mixtral.py.  MixtralDecoderLayer: MixtralAttention (no biases) and
    block_sparse_moe = MixtralSparseMoeBlock: gate Linear(H, num_local_experts, bias=False),
    experts: num_local_experts x MixtralBlockSparseTop2MLP w1 Linear(H, I), w2 Linear(I, H),
    w3 Linear(H, I), no biases; two RMSNorms per layer; final norm; untied lm_head."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    e = req(cfg, "num_local_experts")
    c.add("embed_tokens", embedding(v, h))
    attn = llama_attention(cfg, h, False, False, False)
    moe = linear(h, e, bias=False) + e * gated_mlp(h, inter)
    c.add("layers (%d; %d experts)" % (n, e), n * (attn + moe + 2 * rmsnorm(h)))
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)


def count_qwen_moe(cfg, head, c, model_type):
    """qwen2_moe (modeling_qwen2_moe.py): attention with q/k/v bias=True, o_proj no bias.
    Layer i is sparse if i not in mlp_only_layers and num_experts > 0 and
    (i + 1) % decoder_sparse_step == 0: Qwen2MoeSparseMoeBlock gate Linear(H, E, bias=False),
    E experts Qwen2MoeMLP(moe_intermediate_size) (gate/up/down, no bias), shared_expert
    Qwen2MoeMLP(shared_expert_intermediate_size) and shared_expert_gate Linear(H, 1, bias=False);
    else a dense Qwen2MoeMLP(intermediate_size).
    qwen3_moe (modeling_qwen3_moe.py): attention bias = attention_bias (default False) plus
    q_norm and k_norm RMSNorm(head_dim); Qwen3MoeSparseMoeBlock = gate + E experts, no shared
    expert; same sparse-layer rule."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    v = req(cfg, "vocab_size")
    e = req(cfg, "num_experts")
    mi = req(cfg, "moe_intermediate_size")
    inter = req(cfg, "intermediate_size")
    step = cfg.get("decoder_sparse_step", 1)
    only = set(cfg.get("mlp_only_layers") or [])
    c.add("embed_tokens", embedding(v, h))
    if model_type == "qwen2_moe":
        attn = llama_attention(cfg, h, True, True, False)
    else:
        ab = bool(cfg.get("attention_bias", False))
        nh = req(cfg, "num_attention_heads")
        hd = cfg.get("head_dim") or h // nh
        attn = llama_attention(cfg, h, ab, ab, ab) + 2 * rmsnorm(hd)   # q_norm, k_norm
    sparse = [i for i in range(n) if i not in only and e > 0 and (i + 1) % step == 0]
    moe = linear(h, e, bias=False) + e * gated_mlp(h, mi)
    if model_type == "qwen2_moe":
        si = req(cfg, "shared_expert_intermediate_size")
        moe += gated_mlp(h, si) + linear(h, 1, bias=False)
    dense = gated_mlp(h, inter)
    c.add("attention + norms (%d layers)" % n, n * (attn + 2 * rmsnorm(h)))
    c.add("moe mlp (%d sparse layers, %d experts)" % (len(sparse), e), len(sparse) * moe)
    if n - len(sparse):
        c.add("dense mlp (%d layers)" % (n - len(sparse)), (n - len(sparse)) * dense)
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)


def count_deepseek_v3(cfg, head, c):
    """modeling_deepseek_v3.py (and modeling_deepseek_v2.py: the same shapes, a router without
    a correction bias).  DeepseekV3Attention (multi-head latent attention):
    q_a_proj Linear(H, q_lora_rank, bias=attention_bias), q_a_layernorm RMSNorm(q_lora_rank),
    q_b_proj Linear(q_lora_rank, nh*(qk_nope_head_dim + qk_rope_head_dim), bias=False) (q_proj
    Linear(H, nh*qk_head_dim, bias=False) when q_lora_rank is null); kv_a_proj_with_mqa
    Linear(H, kv_lora_rank + qk_rope_head_dim, bias=attention_bias), kv_a_layernorm
    RMSNorm(kv_lora_rank), kv_b_proj Linear(kv_lora_rank, nh*(qk_nope_head_dim + v_head_dim),
    bias=False), o_proj Linear(nh*v_head_dim, H, bias=attention_bias).  Layers
    < first_k_dense_replace: DeepseekV3MLP(intermediate_size); the others DeepseekV3MoE:
    DeepseekV3TopkRouter weight (n_routed_experts, H) (e_score_correction_bias is a buffer),
    n_routed_experts DeepseekV3MLP(moe_intermediate_size), shared_experts
    DeepseekV3MLP(moe_intermediate_size * n_shared_experts).  Two RMSNorms a layer, the final
    norm, an untied lm_head.  The num_nextn_predict_layers MTP module is not built."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    v = req(cfg, "vocab_size")
    nh = req(cfg, "num_attention_heads")
    qr = cfg.get("q_lora_rank")
    kvr = req(cfg, "kv_lora_rank")
    nope = req(cfg, "qk_nope_head_dim")
    rope = req(cfg, "qk_rope_head_dim")
    vd = req(cfg, "v_head_dim")
    ab = bool(cfg.get("attention_bias", False))
    dense_n = min(cfg.get("first_k_dense_replace", 0), n)
    if cfg.get("moe_layer_freq", 1) != 1:
        raise ConfigError("moe_layer_freq other than 1")
    e = req(cfg, "n_routed_experts")
    mi = req(cfg, "moe_intermediate_size")
    shared = cfg.get("n_shared_experts") or 0
    inter = req(cfg, "intermediate_size")
    qk = nope + rope
    if qr:
        q = linear(h, qr, ab) + rmsnorm(qr) + linear(qr, nh * qk, False)
    else:
        q = linear(h, nh * qk, False)
    attn = (q + linear(h, kvr + rope, ab) + rmsnorm(kvr) + linear(kvr, nh * (nope + vd), False)
            + linear(nh * vd, h, ab))
    moe = linear(h, e, False) + e * gated_mlp(h, mi) + (gated_mlp(h, mi * shared) if shared else 0)
    c.add("embed_tokens", embedding(v, h))
    c.add("attention (MLA) + norms (%d layers)" % n, n * (attn + 2 * rmsnorm(h)))
    c.add("dense mlp (%d layers)" % dense_n, dense_n * gated_mlp(h, inter))
    c.add("moe (%d layers, %d experts + %d shared)" % (n - dense_n, e, shared), (n - dense_n) * moe)
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)


def count_gpt_oss(cfg, head, c):
    """modeling_gpt_oss.py.  GptOssAttention: q_proj Linear(H, nh*hd), k_proj and v_proj
    Linear(H, nkv*hd), o_proj Linear(nh*hd, H), all with bias=attention_bias, and sinks
    Parameter(nh).  GptOssMLP: GptOssTopKRouter weight (E, H) and bias (E); GptOssExperts
    gate_up_proj (E, H, 2I) + gate_up_proj_bias (E, 2I), down_proj (E, I, H) + down_proj_bias
    (E, H).  Two RMSNorms a layer, the final norm, an untied lm_head."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    v = req(cfg, "vocab_size")
    nh = req(cfg, "num_attention_heads")
    nkv = cfg.get("num_key_value_heads") or nh
    hd = cfg.get("head_dim") or 64
    ab = bool(cfg.get("attention_bias", True))
    e = req(cfg, "num_local_experts")
    inter = req(cfg, "intermediate_size")
    attn = linear(h, nh * hd, ab) + 2 * linear(h, nkv * hd, ab) + linear(nh * hd, h, ab) + nh
    moe = linear(h, e, True) + e * (linear(h, 2 * inter, True) + linear(inter, h, True))
    c.add("embed_tokens", embedding(v, h))
    c.add("attention + sinks + norms (%d layers)" % n, n * (attn + 2 * rmsnorm(h)))
    c.add("moe (%d layers, %d experts with biases)" % (n, e), n * moe)
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)


def count_phi3(cfg, head, c):
    """modeling_phi3.py.  Phi3Attention: qkv_proj Linear(H, nh*hd + 2*nkv*hd, bias=False),
    o_proj Linear(nh*hd, H, bias=False); Phi3MLP: gate_up_proj Linear(H, 2I, bias=False),
    down_proj Linear(I, H, bias=False); input_layernorm and post_attention_layernorm RMSNorm;
    final norm; lm_head untied (tie_word_embeddings false in the checkpoint)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    nh = req(cfg, "num_attention_heads")
    nkv = cfg.get("num_key_value_heads") or nh
    hd = h // nh
    layer = (linear(h, nh * hd + 2 * nkv * hd, False) + linear(nh * hd, h, False)
             + linear(h, 2 * inter, False) + linear(inter, h, False) + 2 * rmsnorm(h))
    c.add("embed_tokens", embedding(v, h))
    c.add("layers (%d)" % n, n * layer)
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)


# --------------------------------------------------------------------------- MPT, Falcon

def count_mpt(cfg, head, c):
    """MPT as llm-foundry builds it (llmfoundry/models/mpt/modeling_mpt.py MPTModel; the
    mosaicml/mpt-7b hub modeling_mpt.py is an earlier copy with the same modules).
    wte SharedEmbedding(V, d_model) - the LM head reuses it (tie_word_embeddings default True).
    wpe nn.Embedding(max_seq_len, d_model) only if learned_pos_emb, and MPTConfig._validate_config
    (configuration_mpt.py) forces learned_pos_emb False when attn_config.alibi or .rope is on -
    so the count depends on max_seq_len exactly when positions are learned.
    MPTBlock: norm_1, attn (GroupedQueryAttention with n_heads kv heads for multihead_attention:
    fused Wqkv Linear(d, d + 2*kv_heads*head_dim), out_proj Linear(d, d)), norm_2,
    ffn MPTMLP up_proj Linear(d, expansion_ratio*d), down_proj Linear(expansion_ratio*d, d);
    norm_f.  Norms are LPLayerNorm (a LayerNorm with weight and bias).  no_bias=True removes
    every bias Parameter of the model, norms included (MPTModel.__init__)."""
    d = req(cfg, "d_model")
    n = req(cfg, "n_layers")
    nh = req(cfg, "n_heads")
    v = req(cfg, "vocab_size")
    L = req(cfg, "max_seq_len")
    er = req(cfg, "expansion_ratio", default=4)
    attn_cfg = cfg.get("attn_config") or {}
    ffn_cfg = cfg.get("ffn_config") or {}
    if ffn_cfg.get("ffn_type", "mptmlp") != "mptmlp":
        raise ConfigError("ffn_config.ffn_type %s not counted" % ffn_cfg.get("ffn_type"))
    atype = attn_cfg.get("attn_type", "multihead_attention")
    kvh = {"multihead_attention": nh, "multiquery_attention": 1}.get(atype, attn_cfg.get("kv_n_heads", nh))
    hd = d // nh
    nb = bool(cfg.get("no_bias", False))
    b = not nb
    learned = cfg.get("learned_pos_emb", True) and not attn_cfg.get("alibi", False) and not attn_cfg.get("rope", False)
    inter = int(er * d)
    c.add("wte (shared with lm head)", embedding(v, d))
    if learned:
        c.add("wpe (max_seq_len %d)" % L, embedding(L, d))
    blk = (2 * layernorm(d, b) + linear(d, d + 2 * kvh * hd, b) + linear(d, d, b)
           + linear(d, inter, b) + linear(inter, d, b))
    c.add("blocks (%d)" % n, n * blk)
    c.add("norm_f", layernorm(d, b))
    if not cfg.get("tie_word_embeddings", True):
        c.add("lm_head (untied)", linear(d, v, bias=False))


def count_falcon(cfg, head, c):
    """modeling_falcon.py.  word_embeddings (V x H).  FalconDecoderLayer: if
    new_decoder_architecture (and num_ln_in_parallel_attn == 2): ln_attn + ln_mlp; else
    input_layernorm, plus post_attention_layernorm only when not parallel_attn (LayerNorm with
    bias).  FalconAttention.query_key_value Linear(H, qkv_out, bias=config.bias) with qkv_out =
    (2*num_kv_heads + nh)*hd for the new architecture, H + 2*hd for multi_query (ONE kv head,
    whatever num_kv_heads says), 3H otherwise; dense Linear(H, H, bias=config.bias).
    FalconMLP dense_h_to_4h Linear(H, ffn_hidden_size = 4H), dense_4h_to_h, bias=config.bias.
    ln_f.  Rotary (alibi false) has no parameters.  FalconForCausalLM.lm_head tied to
    word_embeddings (tie_word_embeddings default True)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers", "n_layer")
    nh = req(cfg, "num_attention_heads", "n_head")
    v = req(cfg, "vocab_size")
    hd = h // nh
    b = bool(cfg.get("bias", False))
    new = bool(cfg.get("new_decoder_architecture", False))
    if new:
        nkv = cfg.get("num_kv_heads") or nh
        qkv = (2 * nkv + nh) * hd
        norms = 2 if cfg.get("num_ln_in_parallel_attn", 2) == 2 else 1
    elif cfg.get("multi_query", True):
        qkv = h + 2 * hd
        norms = 1 if cfg.get("parallel_attn", True) else 2
    else:
        qkv = 3 * h
        norms = 1 if cfg.get("parallel_attn", True) else 2
    ffn = cfg.get("ffn_hidden_size") or 4 * h
    layer = norms * layernorm(h) + linear(h, qkv, b) + linear(h, h, b) + linear(h, ffn, b) + linear(ffn, h, b)
    c.add("word_embeddings", embedding(v, h))
    c.add("h (%d)" % n, n * layer)
    c.add("ln_f", layernorm(h))
    if head == "FalconForCausalLM+stored_lm_head":
        # What the published safetensors hold (and what the Hub counts): lm_head.weight stored
        # as a tensor of its own, although FalconForCausalLM ties it to word_embeddings on load.
        c.add("lm_head (stored in the checkpoint, tied on load)", linear(h, v, bias=False))
    elif head == "FalconForCausalLM":
        if not cfg.get("tie_word_embeddings", True):
            c.add("lm_head (untied)", linear(h, v, bias=False))
    elif head != "FalconModel":
        raise ConfigError("unsupported head %s" % head)


# --------------------------------------------------------------------------- T5

def count_t5(cfg, head, c):
    """modeling_t5.py.  shared nn.Embedding(V, d_model), used by encoder and decoder.
    T5Block (encoder): T5LayerSelfAttention (T5Attention q, k, v Linear(d_model, inner),
    o Linear(inner, d_model), no biases, inner = num_heads*d_kv; relative_attention_bias
    nn.Embedding(relative_attention_num_buckets, num_heads) only in block 0,
    has_relative_attention_bias=bool(i == 0)) + layer_norm (T5LayerNorm: weight only);
    T5LayerFF: DenseReluDense wi Linear(d_model, d_ff), wo Linear(d_ff, d_model), no biases
    (gated-gelu: wi_0 and wi_1) + layer_norm.  Decoder blocks add T5LayerCrossAttention
    (EncDecAttention q, k, v, o without relative bias) + layer_norm.  encoder/decoder
    final_layer_norm.  T5ForConditionalGeneration.lm_head Linear(d_model, V, bias=False) is tied
    to shared when tie_word_embeddings (default True; t5 v1.0 checkpoints)."""
    d = req(cfg, "d_model")
    dff = req(cfg, "d_ff")
    dkv = req(cfg, "d_kv")
    nh = req(cfg, "num_heads")
    ne = req(cfg, "num_layers")
    nd = cfg.get("num_decoder_layers") or ne
    v = req(cfg, "vocab_size")
    buckets = cfg.get("relative_attention_num_buckets", 32)
    inner = nh * dkv
    attn = 3 * linear(d, inner, False) + linear(inner, d, False)
    gated = str(cfg.get("feed_forward_proj", "relu")).startswith("gated")
    ff = (2 if gated else 1) * linear(d, dff, False) + linear(dff, d, False)
    c.add("shared", embedding(v, d))
    enc = ne * (attn + rmsnorm(d) + ff + rmsnorm(d)) + buckets * nh + rmsnorm(d)
    c.add("encoder (%d blocks)" % ne, enc)
    if head == "T5EncoderModel":
        return
    dec = nd * (2 * (attn + rmsnorm(d)) + ff + rmsnorm(d)) + buckets * nh + rmsnorm(d)
    c.add("decoder (%d blocks)" % nd, dec)
    if head == "T5ForConditionalGeneration":
        if cfg.get("tie_word_embeddings", True):
            c.add("lm_head (tied)", 0)
        else:
            c.add("lm_head", linear(d, v, False))
    elif head != "T5Model":
        raise ConfigError("unsupported head %s" % head)


# --------------------------------------------------------------------------- vision

def vit_layer(h, inter, qkv_bias=True):
    """modeling_vit.py ViTLayer: layernorm_before, ViTSelfAttention query/key/value
    Linear(H, H, bias=qkv_bias), ViTSelfOutput dense Linear(H, H), layernorm_after,
    ViTIntermediate Linear(H, I), ViTOutput Linear(I, H)."""
    return (layernorm(h) + 3 * linear(h, h, qkv_bias) + linear(h, h) + layernorm(h)
            + linear(h, inter) + linear(inter, h))


def count_vit(cfg, head, c):
    """modeling_vit.py.  ViTEmbeddings: cls_token (H), mask_token only with use_mask_token
    (ViTModel default False), position_embeddings ((image_size/patch_size)^2 + 1) x H,
    ViTPatchEmbeddings.projection Conv2d(num_channels, H, patch, stride patch) with bias.
    Encoder layers; final layernorm.  ViTModel(add_pooling_layer=True) adds ViTPooler dense
    Linear(H, H) + tanh; ViTForImageClassification builds ViTModel(add_pooling_layer=False)
    and a classifier Linear(H, num_labels)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    img = req(cfg, "image_size")
    ps = req(cfg, "patch_size")
    ch = cfg.get("num_channels", 3)
    npatch = (img // ps) ** 2
    c.add("embeddings", h + (npatch + 1) * h + conv2d(ch, h, ps))
    c.add("encoder (%d layers)" % n, n * vit_layer(h, inter, cfg.get("qkv_bias", True)))
    c.add("layernorm", layernorm(h))
    if head == "ViTModel":
        c.add("pooler", linear(h, h))
    elif head == "ViTForImageClassification":
        labels = len(cfg["id2label"]) if "id2label" in cfg else cfg.get("num_labels", 2)
        c.add("classifier", linear(h, labels))
    elif head != "ViTModel(add_pooling_layer=False)":
        raise ConfigError("unsupported head %s" % head)


def count_clip_vision(cfg, head, c):
    """modeling_clip.py.  CLIPVisionEmbeddings: class_embedding Parameter(H), patch_embedding
    Conv2d(num_channels, H, patch, stride patch, bias=False), position_embedding
    nn.Embedding(num_patches + 1, H).  CLIPVisionTransformer: pre_layrnorm, CLIPEncoder layers
    (CLIPAttention k_proj/v_proj/q_proj/out_proj Linear(H, H) with bias, layer_norm1, CLIPMLP
    fc1 Linear(H, I), fc2 Linear(I, H), layer_norm2), post_layernorm.  CLIPVisionModel has no
    projection; CLIPVisionModelWithProjection adds visual_projection Linear(H, projection_dim,
    bias=False)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    img = req(cfg, "image_size")
    ps = req(cfg, "patch_size")
    ch = cfg.get("num_channels", 3)
    npatch = (img // ps) ** 2
    c.add("embeddings", h + conv2d(ch, h, ps, bias=False) + (npatch + 1) * h)
    c.add("pre_layrnorm", layernorm(h))
    layer = 4 * linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h) + layernorm(h)
    c.add("encoder (%d layers)" % n, n * layer)
    c.add("post_layernorm", layernorm(h))
    if head == "CLIPVisionModelWithProjection":
        c.add("visual_projection", linear(h, req(cfg, "projection_dim"), False))
    elif head != "CLIPVisionModel":
        raise ConfigError("unsupported head %s" % head)


def count_tv_resnet(cfg, head, c):
    """torchvision/models/resnet.py.  conv1 Conv2d(3, 64, 7, bias=False), bn1 BatchNorm2d(64)
    (weight + bias; running stats are buffers).  layer1..4 with widths 64, 128, 256, 512:
    BasicBlock (expansion 1): conv3x3 + bn, conv3x3 + bn; Bottleneck (expansion 4): conv1x1 to
    width, bn, conv3x3, bn, conv1x1 to 4*width, bn.  The first block of a stage gets a
    downsample conv1x1(inplanes, planes*expansion) + bn when stride != 1 or inplanes !=
    planes*expansion.  fc Linear(512*expansion, num_classes)."""
    block = req(cfg, "block")
    layers = req(cfg, "layers")
    ncls = req(cfg, "num_classes")
    if block not in ("basic", "bottleneck") or len(layers) != 4:
        raise ConfigError("block must be basic|bottleneck with 4 stages")
    exp = 1 if block == "basic" else 4
    bn = lambda ch: 2 * ch
    c.add("stem", conv2d(3, 64, 7, False) + bn(64))
    inplanes = 64
    for s, (planes, nblocks) in enumerate(zip((64, 128, 256, 512), layers)):
        stride = 1 if s == 0 else 2
        tot = 0
        for i in range(nblocks):
            if block == "basic":
                p = conv2d(inplanes, planes, 3, False) + bn(planes) + conv2d(planes, planes, 3, False) + bn(planes)
            else:
                p = (conv2d(inplanes, planes, 1, False) + bn(planes) + conv2d(planes, planes, 3, False)
                     + bn(planes) + conv2d(planes, planes * 4, 1, False) + bn(planes * 4))
            if i == 0 and (stride != 1 or inplanes != planes * exp):
                p += conv2d(inplanes, planes * exp, 1, False) + bn(planes * exp)
            inplanes = planes * exp
            tot += p
        c.add("layer%d (%d blocks)" % (s + 1, nblocks), tot)
    c.add("fc", linear(512 * exp, ncls))


def count_tv_vit(cfg, head, c):
    """torchvision/models/vision_transformer.py.  conv_proj Conv2d(3, H, patch, stride patch)
    with bias; class_token (H); encoder.pos_embedding ((image/patch)^2 + 1) x H; EncoderBlock:
    ln_1, nn.MultiheadAttention (in_proj_weight 3H x H, in_proj_bias 3H, out_proj Linear(H, H)),
    ln_2, MLPBlock Linear(H, mlp_dim), Linear(mlp_dim, H); encoder.ln; heads.head
    Linear(H, num_classes) (no representation layer for the ImageNet weights)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    img = req(cfg, "image_size")
    ps = req(cfg, "patch_size")
    ncls = req(cfg, "num_classes")
    npatch = (img // ps) ** 2
    c.add("conv_proj + class_token + pos_embedding", conv2d(3, h, ps) + h + (npatch + 1) * h)
    layer = layernorm(h) + 3 * h * h + 3 * h + linear(h, h) + layernorm(h) + linear(h, inter) + linear(inter, h)
    c.add("encoder (%d layers)" % n, n * layer)
    c.add("encoder.ln", layernorm(h))
    c.add("heads.head", linear(h, ncls))



# --------------------------------------------------------------------------- issue 41: 2026 families

def count_qwen3(cfg, head, c):
    """modeling_qwen3.py Qwen3DecoderLayer: Qwen3Attention q/k/v/o_proj (bias = attention_bias,
    default False) with q_norm and k_norm Qwen3RMSNorm(head_dim); Qwen3MLP gated, no bias; two
    RMSNorms; final norm; lm_head tied when tie_word_embeddings (Qwen3Config default False)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    v = req(cfg, "vocab_size")
    ab = bool(cfg.get("attention_bias", False))
    hd = cfg.get("head_dim") or h // req(cfg, "num_attention_heads")
    layer = llama_attention(cfg, h, ab, ab, ab) + 2 * rmsnorm(hd) + gated_mlp(h, inter) + 2 * rmsnorm(h)
    c.add("embed_tokens", embedding(v, h))
    c.add("layers (%d)" % n, n * layer)
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)


# Gemma3TextConfig's defaults (configuration_gemma3.py): a hub gemma3 text_config lists only
# what differs from them.
GEMMA3_TEXT_DEFAULTS = {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
                        "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
                        "head_dim": 256, "attention_bias": False}


def count_gemma3_text(cfg, head, c):
    """modeling_gemma3.py Gemma3TextModel: embed_tokens, layers of Gemma3Attention (q/k/v/o_proj,
    q_norm and k_norm Gemma3RMSNorm(head_dim)), Gemma3MLP (gated, no bias) and four RMSNorms
    (input, post_attention, pre_feedforward, post_feedforward); final norm; lm_head tied."""
    cfg = dict(GEMMA3_TEXT_DEFAULTS, **{k: x for k, x in cfg.items() if x is not None})
    h, n, inter, v = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["intermediate_size"], cfg["vocab_size"]
    ab = bool(cfg["attention_bias"])
    layer = llama_attention(cfg, h, ab, ab, ab) + 2 * rmsnorm(cfg["head_dim"]) + gated_mlp(h, inter) + 4 * rmsnorm(h)
    c.add("embed_tokens", embedding(v, h))
    c.add("layers (%d)" % n, n * layer)
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, True)
    return h


def count_gemma3(cfg, head, c):
    """Gemma3ForConditionalGeneration: the text model above; vision_tower = SiglipVisionModel
    (modeling_siglip.py: patch_embedding Conv2d(C, H, P, stride P) with bias, position_embedding
    (image/P)^2 x H, encoder layers of q/k/v/out_proj with bias, two LayerNorms, fc1/fc2 with
    bias; post_layernorm; the attention-pooling head only with vision_use_head); and
    Gemma3MultiModalProjector: mm_input_projection_weight (Hv x Ht) and mm_soft_emb_norm
    Gemma3RMSNorm(Hv)."""
    ht = count_gemma3_text(req(cfg, "text_config"), "Gemma3ForCausalLM", c)
    vc = req(cfg, "vision_config")
    hv, iv = vc.get("hidden_size", 768), vc.get("intermediate_size", 3072)
    nl, p, img = vc.get("num_hidden_layers", 12), vc.get("patch_size", 16), vc.get("image_size", 224)
    ch = vc.get("num_channels", 3)
    mlp = linear(hv, iv) + linear(iv, hv)
    tower = (conv2d(ch, hv, p) + embedding((img // p) ** 2, hv)
             + nl * (4 * linear(hv, hv) + 2 * layernorm(hv) + mlp) + layernorm(hv))
    if vc.get("vision_use_head", True):
        tower += hv + 3 * hv * hv + 3 * hv + linear(hv, hv) + layernorm(hv) + mlp
    c.add("vision_tower", tower)
    c.add("multi_modal_projector", hv * ht + rmsnorm(hv))


def count_llama4_text(cfg, head, c):
    """modeling_llama4.py Llama4TextModel: Llama4TextAttention q/k/v/o_proj (attention_bias) with
    a weightless L2 norm on Q and K; feed_forward = Llama4TextMoe on the layers of moe_layers (or
    every interleave_moe_layer_step-th): experts gate_up_proj E x H x 2I, down_proj E x I x H,
    router Linear(H, E, bias=False), shared_expert Llama4TextMLP(I); else Llama4TextMLP of
    intermediate_size_mlp; two RMSNorms; final norm; lm_head (untied)."""
    h = req(cfg, "hidden_size")
    n = req(cfg, "num_hidden_layers")
    inter = req(cfg, "intermediate_size")
    dense = cfg.get("intermediate_size_mlp", 16384)
    v = req(cfg, "vocab_size")
    e = cfg.get("num_local_experts", 16)
    step = cfg.get("interleave_moe_layer_step", 1)
    moe_layers = cfg.get("moe_layers") or list(range(step - 1, n, step))
    ab = bool(cfg.get("attention_bias", False))
    attn = llama_attention(cfg, h, ab, ab, ab) + 2 * rmsnorm(h)
    moe = e * 3 * h * inter + linear(h, e, False) + gated_mlp(h, inter)
    nm = len([i for i in moe_layers if 0 <= i < n])
    c.add("embed_tokens", embedding(v, h))
    c.add("moe layers (%d)" % nm, nm * (attn + moe))
    c.add("dense layers (%d)" % (n - nm), (n - nm) * (attn + gated_mlp(h, dense)))
    c.add("norm", rmsnorm(h))
    lm_head(cfg, h, v, c, False)
    return h


def count_llama4(cfg, head, c):
    """Llama4ForConditionalGeneration: the text model above; Llama4VisionModel: patch_embedding
    (unfold + Linear(C*P*P, H, bias=False)), class_embedding H, positional_embedding_vlm
    ((image/P)^2 + 1) x H, layernorm_pre and layernorm_post, layers of biased q/k/v/o_proj,
    fc1/fc2 with bias and two LayerNorms, vision_adapter (Llama4VisionMLP2: fc1 Linear(I,
    projector_input_dim), fc2 Linear(projector_output_dim, projector_output_dim), no biases);
    multi_modal_projector Linear(vision_output_dim, Ht, bias=multi_modal_projector_bias)."""
    ht = count_llama4_text(req(cfg, "text_config"), "Llama4ForCausalLM", c)
    vc = req(cfg, "vision_config")
    hv, iv, nl = req(vc, "hidden_size"), req(vc, "intermediate_size"), req(vc, "num_hidden_layers")
    p, img, ch = req(vc, "patch_size"), req(vc, "image_size"), vc.get("num_channels", 3)
    tower = (linear(ch * p * p, hv, False) + hv + ((img // p) ** 2 + 1) * hv + 2 * layernorm(hv)
             + nl * (4 * linear(hv, hv) + linear(hv, iv) + linear(iv, hv) + 2 * layernorm(hv)))
    adapter = linear(iv, req(vc, "projector_input_dim"), False) + linear(
        req(vc, "projector_output_dim"), req(vc, "projector_output_dim"), False)
    c.add("vision_model", tower + adapter)
    c.add("multi_modal_projector", linear(req(vc, "vision_output_dim"), ht,
                                          bool(vc.get("multi_modal_projector_bias", False))))

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
