"""Counting rules of tools/data/hf_param_count.py for Llama-style (RMSNorm, gated MLP)
decoders and their mixture-of-experts and multimodal descendants: llama, mistral, qwen2, gemma,
gemma2, mixtral, qwen2_moe, qwen3_moe, deepseek_v2/v3, gpt_oss, phi3, and the issue 41 families
qwen3, gemma3 (text and with its SigLIP vision tower) and llama4 (text and multimodal).

Each rule takes a Hugging Face config.json dict (the fixtures of tests/data/hf/ and the presets
of models/networks/), the head named in the CSV row and a Count, and follows the modeling file
it cites in github.com/huggingface/transformers (src/transformers/models/...) by hand."""
from hf_count_common import ConfigError, conv2d, embedding, layernorm, linear, req, rmsnorm


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
