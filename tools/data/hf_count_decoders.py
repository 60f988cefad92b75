"""Counting rules of tools/data/hf_param_count.py for the LayerNorm decoder-only language
models: gpt2, gpt_neox, opt, bloom, mpt and falcon.

Each rule takes a config.json dict (the fixtures of tests/data/hf/ and the presets of
models/networks/; for MPT also max_seq_len from the llm-foundry measurements), the head named in
the CSV row and a Count, and follows the modeling file it cites in
github.com/huggingface/transformers (src/transformers/models/...) or github.com/mosaicml/llm-foundry
(llmfoundry/models/...) by hand."""
from hf_count_common import ConfigError, embedding, layernorm, linear, req


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
