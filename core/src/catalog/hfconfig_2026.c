/*
 * hfconfig_2026.c: the config.json readers of the model families of 2025-26 (issue 41):
 * qwen3 (dense), gemma3_text and gemma3 (the text tower under a SigLIP vision tower), llama4_text
 * and llama4 (routed experts with a shared one, dense layers between MoE layers, chunked attention
 * with a NoPE layer every 4th, a vision tower).  hfconfig.c's TYPES table calls them; the fields
 * are read with hfconfig_json.c's readers and what the family's modeling code fixes is written
 * down from transformers' models/<type>/configuration_*.py and modeling_*.py.  A layer pattern
 * (which layers are local, NoPE or dense) is read per layer and stored as its period and masks
 * (arch.h); a vision tower text does not run is counted as idle parameters.
 */
#include "catalog/hfconfig_json.h"

#include <stdio.h>
#include <string.h>

/* What a layer of a pattern is (one byte per layer while reading). */
enum { LAYER_LOCAL = 1, LAYER_NOPE = 2, LAYER_DENSE = 4 };

/* The per-layer kinds as arch.h's period and masks: the shortest period p <= ECI_ARCH_MAX_PERIOD
 * with kind[i] == kind[i % p] for every layer; none: an error naming key. */
static void set_pattern(jr *r, eci_arch *a, const unsigned char *kind, int n, const char *key)
{
    for (int p = 1; p <= n && p <= ECI_ARCH_MAX_PERIOD; p++) {
        int i = p;
        while (i < n && kind[i] == kind[i % p])
            i++;
        if (i < n)
            continue;
        a->layer_period = p;
        a->local_mask = a->nope_mask = a->dense_mask = 0;
        for (int j = 0; j < p; j++) {
            uint64_t bit = (uint64_t)1 << j;
            a->local_mask |= (kind[j] & LAYER_LOCAL) ? bit : 0;
            a->nope_mask |= (kind[j] & LAYER_NOPE) ? bit : 0;
            a->dense_mask |= (kind[j] & LAYER_DENSE) ? bit : 0;
        }
        return;
    }
    eci_hf_fail(r, key, "describes layers that repeat with no period of at most 64 layers (not supported)");
}

/* A per-layer list of n entries, or NULL (absent); a list of another length is an error. */
static json_t *layer_list(jr *r, const char *key, int n)
{
    json_t *v = eci_hf_field(r, key);
    if (v == NULL)
        return NULL;
    if (!json_is_array(v) || json_array_size(v) != (size_t)n) {
        char what[96];
        snprintf(what, sizeof what, "must be a list of one entry per layer (%d)", n);
        eci_hf_fail(r, key, what);
        return NULL;
    }
    return v;
}

/* A sub-object (text_config, vision_config) as a reader of its own; NULL when absent. */
static int sub_reader(jr *r, const char *key, jr *sub)
{
    json_t *v = eci_hf_field(r, key);
    if (v == NULL)
        return 0;
    if (!json_is_object(v)) {
        eci_hf_fail(r, key, "must be an object");
        return 0;
    }
    *sub = *r;
    sub->obj = v;
    return 1;
}

/* ---- Qwen3 ---------------------------------------------------------------------------------- */
/* modeling_qwen3.py: Qwen2's decoder without the Q/K/V biases (attention_bias, default false) and
 * with an RMSNorm over each query and key head (q_norm, k_norm of head_dim). */
void eci_hf_map_qwen3(jr *r, eci_arch *a)
{
    eci_hf_llama_like(r, a);
    a->qk_norm = 1;
    if (eci_hf_bool(r, "use_sliding_window", 0)) {
        a->window = eci_hf_int(r, "sliding_window", 0, 0, 0, MAX_POS);
        a->window_every = 1;
    }
}

/* ---- Nemotron ------------------------------------------------------------------------------ */
/* modeling_nemotron.py (NVIDIA's Nemotron-3/4 and Minitron): a Llama-style decoder (grouped-query
 * attention, rotary positions on partial_rotary_factor of each head, no biases, an untied head)
 * with NemotronLayerNorm1P (LayerNorm with a bias, weight + 1) and a non-gated MLP, up_proj ->
 * relu2 (squared ReLU) -> down_proj; configuration_nemotron.py's defaults where a field is absent.
 * The rotary share changes only the RoPE kernel's elements, which are priced on the whole head. */
void eci_hf_map_nemotron(jr *r, eci_arch *a)
{
    eci_hf_llama_like(r, a);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "relu2"));
    a->gated = 0;
    a->norm = EC_NORM_LAYER;
    a->norm_bias = 1;
    double rotary = eci_hf_num(r, "partial_rotary_factor", 0.5);
    if (!(rotary > 0 && rotary <= 1))
        eci_hf_fail(r, "partial_rotary_factor", "must be in (0, 1]");
}

/* ---- Gemma 3 -------------------------------------------------------------------------------- */
/* modeling_gemma3.py (Gemma3TextModel): Gemma 2's layer (embeddings x sqrt(hidden), GeGLU, four
 * RMSNorms a layer, a tied head) with q_norm and k_norm, no soft-capping unless the config sets
 * attn_logit_softcapping, and sliding-window layers between global ones: layer_types, or every
 * sliding_window_pattern-th layer global (default 6: 5 local : 1 global).  A hub gemma3
 * text_config lists only what differs from Gemma3TextConfig's defaults, which are used here. */
void eci_hf_map_gemma3_text(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1;
    a->vocab = eci_hf_int(r, "vocab_size", 262208, 0, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 2304, 0, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "num_hidden_layers", 26, 0, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 8, 0, 1, MAX_HEADS);
    a->kv_heads = eci_hf_int(r, "num_key_value_heads", 4, 0, 1, MAX_HEADS);
    a->head_dim = eci_hf_int(r, "head_dim", 256, 0, 1, MAX_WIDTH);
    a->ffn = eci_hf_int(r, "intermediate_size", 9216, 0, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 131072, 0, 1, MAX_POS);
    const char *act = eci_hf_str(r, "hidden_activation", NULL);
    a->act = eci_hf_act(r, act != NULL ? "hidden_activation" : "hidden_act",
                        act != NULL ? act : eci_hf_str(r, "hidden_act", "gelu_pytorch_tanh"));
    if (a->act == EC_ACT_GELU_TANH) /* as Gemma: the fused tanh approximation */
        a->act = EC_ACT_GELU;
    a->norm = EC_NORM_RMS;
    a->norm_bias = 0;
    a->position = EC_POS_ROPE;
    a->gated = 1;
    a->qkv_bias = a->out_bias = eci_hf_bool(r, "attention_bias", 0);
    a->attn_dropout = eci_hf_num(r, "attention_dropout", 0) > 0;
    a->final_norm = a->sandwich_norms = a->qk_norm = a->emb_scale = 1;
    a->softcap = eci_hf_num(r, "attn_logit_softcapping", 0) > 0;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
    a->default_seq_len = a->max_positions < 2048 ? a->max_positions : 2048;
    a->window = eci_hf_int(r, "sliding_window", 4096, 0, 0, MAX_POS);
    int n = a->decoder_layers;
    unsigned char kind[MAX_LAYERS];
    json_t *types = r->rc == EC_OK ? layer_list(r, "layer_types", n) : NULL;
    static const char *const pattern_keys[] = {"sliding_window_pattern", "_sliding_window_pattern", NULL};
    int every = eci_hf_int_any(r, pattern_keys, 6, 0, 1, MAX_LAYERS);
    for (int i = 0; r->rc == EC_OK && i < n; i++) {
        if (types != NULL) {
            json_t *t = json_array_get(types, (size_t)i);
            const char *s = json_is_string(t) ? json_string_value(t) : "";
            if (strcmp(s, "sliding_attention") != 0 && strcmp(s, "full_attention") != 0)
                eci_hf_fail(r, "layer_types", "entries must be sliding_attention or full_attention");
            kind[i] = strcmp(s, "sliding_attention") == 0 ? LAYER_LOCAL : 0;
        } else {
            kind[i] = (i + 1) % every != 0 ? LAYER_LOCAL : 0;
        }
    }
    if (r->rc == EC_OK && a->window > 0)
        set_pattern(r, a, kind, n, types != NULL ? "layer_types" : "sliding_window_pattern");
}

/* modeling_siglip.py (SiglipVisionTransformer), Gemma 3's vision_config: a patch conv with a
 * bias, a position table of (image / patch)^2 rows, pre-norm layers with LayerNorms and biased
 * linears, a post LayerNorm, the attention-pooling head unless vision_use_head is false;
 * defaults SiglipVisionConfig's. */
static double siglip_params(jr *v)
{
    double h = eci_hf_int(v, "hidden_size", 768, 0, 1, MAX_WIDTH);
    double ffn = eci_hf_int(v, "intermediate_size", 3072, 0, 1, MAX_FFN);
    double layers = eci_hf_int(v, "num_hidden_layers", 12, 0, 0, MAX_LAYERS);
    double c = eci_hf_int(v, "num_channels", 3, 0, 1, 4096);
    double image = eci_hf_int(v, "image_size", 224, 0, 1, MAX_IMAGE);
    double patch = eci_hf_int(v, "patch_size", 16, 0, 1, MAX_IMAGE);
    double side = (double)((long)image / (long)patch);
    double mlp = 2.0 * h * ffn + ffn + h;
    double layer = 4.0 * (h * h + h) + mlp + 4.0 * h;
    double p = c * patch * patch * h + h + side * side * h + layers * layer + 2.0 * h;
    if (eci_hf_bool(v, "vision_use_head", 1)) /* probe, nn.MultiheadAttention, LayerNorm, MLP */
        p += h + 4.0 * (h * h + h) + 2.0 * h + mlp;
    return p;
}

/* modeling_gemma3.py (Gemma3ForConditionalGeneration): text_config's decoder, vision_config's
 * SigLIP tower and Gemma3MultiModalProjector (an RMSNorm of the vision width and a projection
 * to the text width, no bias).  Text-only steps run the decoder; the tower and the projector
 * are idle parameters. */
void eci_hf_map_gemma3(jr *r, eci_arch *a)
{
    jr text, vision;
    if (!sub_reader(r, "text_config", &text)) {
        eci_hf_fail(r, "text_config", "is missing (a gemma3 config holds its text tower there)");
        return;
    }
    eci_hf_map_gemma3_text(&text, a);
    if (text.rc == EC_OK && sub_reader(r, "vision_config", &vision)) {
        double vh = eci_hf_int(&vision, "hidden_size", 768, 0, 1, MAX_WIDTH);
        a->idle_params = (int64_t)(siglip_params(&vision) + vh * a->hidden + vh);
        text.rc = vision.rc;
    }
    r->rc = r->rc != EC_OK ? r->rc : text.rc;
    eci_hf_common(r, a); /* the checkpoint's class and labels are the top level's */
    a->norm = EC_NORM_RMS;
    a->norm_bias = 0;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", a->tie);
    if (a->default_task[0] == '\0')
        eci_strlcpy(a->default_task, "lm", sizeof a->default_task);
}

/* ---- Llama 4 -------------------------------------------------------------------------------- */
/* modeling_llama4.py (Llama4TextModel): Llama's attention (an L2 norm of Q and K on the RoPE
 * layers with use_qk_norm, counted as q/k norms), NoPE layers with full attention (no_rope_layers
 * 0, or every no_rope_layer_interval-th) and chunked attention of attention_chunk_size on the
 * others (priced as a sliding window of that size: exact up to one chunk, at most 2x the
 * attention core beyond); MoE layers (moe_layers, or every interleave_moe_layer_step-th) of
 * num_local_experts SwiGLU experts of intermediate_size, every token through each of them (see
 * below), and a shared expert of the same size without a gate; dense layers an MLP of
 * intermediate_size_mlp. */
void eci_hf_map_llama4_text(jr *r, eci_arch *a)
{
    a->experts = 1; /* intermediate_size is the experts' size */
    eci_hf_llama_like(r, a);
    if (a->ffn == 0)
        eci_hf_fail(r, "intermediate_size", "is missing (the experts' width)");
    a->expert_ffn = a->shared_ffn = a->ffn;
    a->ffn = eci_hf_int(r, "intermediate_size_mlp", 16384, 0, 1, MAX_FFN);
    a->experts = eci_hf_int(r, "num_local_experts", 16, 0, 1, MAX_EXPERTS);
    /* Llama4TextMoe.forward sends every token through every expert (hidden_states.repeat(E, 1),
     * scaled by the router's sigmoid scores, zero off the top num_experts_per_tok) and sums:
     * priced as routed to all of them, as transformers runs it */
    if (eci_hf_int(r, "num_experts_per_tok", 1, 0, 1, MAX_EXPERTS) > a->experts)
        eci_hf_fail(r, "num_experts_per_tok", "must be at most num_local_experts");
    a->top_k = a->experts;
    a->shared_experts = 1;
    a->qk_norm = eci_hf_bool(r, "use_qk_norm", 1);
    a->window = eci_hf_int(r, "attention_chunk_size", 8192, 0, 0, MAX_POS);
    int n = a->decoder_layers, step = eci_hf_int(r, "interleave_moe_layer_step", 1, 0, 1, MAX_LAYERS);
    int interval = eci_hf_int(r, "no_rope_layer_interval", 4, 0, 1, MAX_LAYERS);
    if (r->rc != EC_OK)
        return;
    json_t *rope = layer_list(r, "no_rope_layers", n), *moe = eci_hf_field(r, "moe_layers");
    if (rope != NULL && json_array_size(rope) == 0)
        rope = NULL; /* Llama4TextConfig: an empty list means the interval's pattern */
    if (moe != NULL && !json_is_array(moe))
        eci_hf_fail(r, "moe_layers", "must be a list of layer indices");
    unsigned char kind[MAX_LAYERS];
    for (size_t k = 0; rope != NULL && k < (size_t)n; k++)
        if (!json_is_integer(json_array_get(rope, k)))
            eci_hf_fail(r, "no_rope_layers", "entries must be 0 (NoPE) or 1 (RoPE)");
    for (size_t k = 0; moe != NULL && json_is_array(moe) && k < json_array_size(moe); k++)
        if (!json_is_integer(json_array_get(moe, k)))
            eci_hf_fail(r, "moe_layers", "entries must be layer indices");
    for (int i = 0; r->rc == EC_OK && i < n; i++) {
        int nope = rope != NULL ? json_integer_value(json_array_get(rope, (size_t)i)) == 0 : (i + 1) % interval == 0;
        int dense = (i + 1) % step != 0;
        if (moe != NULL) {
            dense = 1;
            for (size_t k = 0; k < json_array_size(moe); k++)
                dense = dense && json_integer_value(json_array_get(moe, k)) != i;
        }
        kind[i] = (unsigned char)((nope ? LAYER_NOPE : LAYER_LOCAL) | (dense ? LAYER_DENSE : 0));
    }
    if (r->rc == EC_OK)
        set_pattern(r, a, kind, n, rope != NULL ? "no_rope_layers" : "no_rope_layer_interval");
    if (a->window == 0)
        a->local_mask = 0;
}

/* modeling_llama4.py (Llama4VisionModel, Llama4MultiModalProjector): an unfold + linear patch
 * embedding (no bias), a class embedding, positions for (image / patch)^2 + 1 tokens, LayerNorms
 * before and after, layers of biased Q, K, V, O and a GELU MLP with two LayerNorms, the pixel-
 * shuffle adapter's two bias-free linears (intermediate_size -> projector_input_dim,
 * projector_output_dim -> projector_output_dim), and the projector to the text width. */
static double llama4_vision_params(jr *v, double text_hidden)
{
    double h = eci_hf_int(v, "hidden_size", 0, 1, 1, MAX_WIDTH);
    double ffn = eci_hf_int(v, "intermediate_size", 0, 1, 1, MAX_FFN);
    double layers = eci_hf_int(v, "num_hidden_layers", 0, 1, 0, MAX_LAYERS);
    double c = eci_hf_int(v, "num_channels", 3, 0, 1, 4096);
    double image = eci_hf_int(v, "image_size", 0, 1, 1, MAX_IMAGE);
    double patch = eci_hf_int(v, "patch_size", 0, 1, 1, MAX_IMAGE);
    double in = eci_hf_int(v, "projector_input_dim", 0, 1, 1, MAX_WIDTH);
    double out = eci_hf_int(v, "projector_output_dim", 0, 1, 1, MAX_WIDTH);
    double vout = eci_hf_int(v, "vision_output_dim", 0, 1, 1, MAX_WIDTH);
    double side = (double)((long)image / (long)patch);
    double layer = 4.0 * (h * h + h) + 2.0 * h * ffn + ffn + h + 4.0 * h;
    double tower = c * patch * patch * h + h + (side * side + 1.0) * h + 4.0 * h + layers * layer;
    double adapter = ffn * in + out * out;
    double projector = vout * text_hidden + (eci_hf_bool(v, "multi_modal_projector_bias", 0) ? text_hidden : 0);
    return tower + adapter + projector;
}

/* Llama4ForConditionalGeneration: text_config's decoder, vision_config's tower as idle
 * parameters (text-only steps). */
void eci_hf_map_llama4(jr *r, eci_arch *a)
{
    jr text, vision;
    if (!sub_reader(r, "text_config", &text)) {
        eci_hf_fail(r, "text_config", "is missing (a llama4 config holds its text model there)");
        return;
    }
    eci_hf_map_llama4_text(&text, a);
    if (text.rc == EC_OK && sub_reader(r, "vision_config", &vision)) {
        a->idle_params = (int64_t)llama4_vision_params(&vision, a->hidden);
        text.rc = vision.rc;
    }
    r->rc = r->rc != EC_OK ? r->rc : text.rc;
    eci_hf_common(r, a);
    a->norm = EC_NORM_RMS;
    a->norm_bias = 0;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", a->tie);
    if (a->default_task[0] == '\0')
        eci_strlcpy(a->default_task, "lm", sizeof a->default_task);
}
