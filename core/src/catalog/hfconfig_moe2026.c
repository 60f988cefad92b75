/*
 * hfconfig_moe2026.c: the config.json readers of two mixture-of-experts families of 2025-26,
 * called from hfconfig.c's table of model_types (their declarations are in hfconfig_json.h):
 *
 *   deepseek_v3 / deepseek_v2 (transformers' models/deepseek_v3/modeling_deepseek_v3.py,
 *     models/deepseek_v2/): multi-head latent attention (MLA) and dense layers before the
 *     routed and shared experts;
 *   gpt_oss (models/gpt_oss/modeling_gpt_oss.py): attention sinks, sliding-window layers
 *     alternating with full ones, experts and router with biases.
 *
 * Every field is read with hfconfig_json.c's readers, whose errors name the file, the field and
 * the model_type; a value the network cannot be built from fails here naming its key.  What the
 * fields become (layers, heads) is arch.c's; how they are priced, workload_blocks.c's.
 */
#include "catalog/hfconfig_json.h"

#include <string.h>

/* What both families share with Llama: RMSNorm, rotary positions, gated SiLU MLPs, no dropout,
 * a final norm, an untied head by default; HF's eager softmax runs in fp32. */
static void decoder(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1;
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 4096, 0, 1, MAX_POS);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "silu"));
    a->norm = EC_NORM_RMS;
    a->norm_bias = 0;
    a->position = EC_POS_ROPE;
    a->gated = 1;
    a->attn_dropout = eci_hf_num(r, "attention_dropout", 0) > 0;
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 0);
    a->default_seq_len = a->max_positions < 2048 ? a->max_positions : 2048;
}

/* ---- DeepSeek-V2 / V3 ------------------------------------------------------------------------
 * DeepseekV3Attention: q = q_b_proj(q_a_layernorm(q_a_proj(x))) (q_proj alone when q_lora_rank
 * is null: V2-Lite), heads x (qk_nope_head_dim + qk_rope_head_dim); kv_a_proj_with_mqa(x) gives
 * the latent (kv_lora_rank) and one rotary key (qk_rope_head_dim) shared by every head; the
 * latent goes through kv_a_layernorm and kv_b_proj to heads x (qk_nope_head_dim + v_head_dim);
 * o_proj from heads x v_head_dim.  attention_bias is on q_a_proj, kv_a_proj_with_mqa and o_proj.
 * DeepseekV3DecoderLayer: a dense DeepseekV3MLP (intermediate_size) in the first
 * first_k_dense_replace layers, DeepseekV3MoE after: n_routed_experts of moe_intermediate_size,
 * num_experts_per_tok per token, a router without a bias (its e_score_correction_bias is a
 * buffer, not a parameter), and n_shared_experts fused into one MLP every token goes through.
 * The num_nextn_predict_layers multi-token-prediction module (layer 61 of the V3 checkpoint,
 * 14B of its 685B) is not built by DeepseekV3ForCausalLM (its weights are ignored on load), so
 * it is not counted or priced: V3 is its 671B main model. */
void eci_hf_map_deepseek(jr *r, eci_arch *a)
{
    decoder(r, a);
    a->kv_heads = a->heads; /* num_key_value_heads is not read by the attention: K and V have every head */
    a->ffn = eci_hf_int(r, "intermediate_size", 0, 1, 1, MAX_FFN);
    json_t *q_rank = eci_hf_field(r, "q_lora_rank"); /* null: a full q_proj */
    a->q_rank = q_rank != NULL ? eci_hf_int(r, "q_lora_rank", 0, 1, 1, MAX_WIDTH) : 0;
    a->kv_rank = eci_hf_int(r, "kv_lora_rank", 0, 1, 1, MAX_WIDTH);
    int nope = eci_hf_int(r, "qk_nope_head_dim", 0, 1, 0, MAX_WIDTH);
    a->rope_dim = eci_hf_int(r, "qk_rope_head_dim", 0, 1, 1, MAX_WIDTH);
    a->head_dim = nope + a->rope_dim;
    a->v_head_dim = eci_hf_int(r, "v_head_dim", 0, 1, 1, MAX_WIDTH);
    a->qkv_bias = a->out_bias = eci_hf_bool(r, "attention_bias", 0);
    a->experts = eci_hf_int(r, "n_routed_experts", 0, 1, 1, MAX_EXPERTS);
    a->top_k = eci_hf_int(r, "num_experts_per_tok", 0, 1, 1, MAX_EXPERTS);
    a->expert_ffn = eci_hf_int(r, "moe_intermediate_size", 0, 1, 1, MAX_FFN);
    a->shared_experts = eci_hf_int(r, "n_shared_experts", 0, 0, 0, 1024);
    if ((long)a->shared_experts * a->expert_ffn > MAX_FFN)
        eci_hf_fail(r, "n_shared_experts", "times moe_intermediate_size is over 2^24");
    else
        a->shared_ffn = a->shared_experts * a->expert_ffn;
    /* layers before first_k_dense_replace are dense: all of them when it is num_hidden_layers or more */
    a->dense_layers = eci_hf_int(r, "first_k_dense_replace", 0, 0, 0, MAX_LAYERS);
    if (eci_hf_int(r, "moe_layer_freq", 1, 0, 1, MAX_LAYERS) != 1)
        eci_hf_fail(r, "moe_layer_freq", "other than 1 is not supported (every layer after the dense ones a MoE layer)");
    if (a->top_k > a->experts)
        eci_hf_fail(r, "num_experts_per_tok", "is more than n_routed_experts");
    (void)eci_hf_int(r, "num_nextn_predict_layers", 0, 0, 0, 64); /* checked; not built (above) */
}

/* ---- gpt-oss ---------------------------------------------------------------------------------
 * GptOssAttention: q/k/v/o_proj with attention_bias (true in both checkpoints), head_dim 64,
 * grouped K and V, a learned sink logit per head (`sinks`) that joins the softmax, a
 * sliding_window on the "sliding_attention" entries of layer_types; HF has no SDPA path for
 * the sinks (eager, or a flash kernel that takes them).  GptOssMLP: GptOssTopKRouter (weight and
 * bias, num_local_experts x hidden) and GptOssExperts: gate_up_proj hidden -> 2 x
 * intermediate_size and down_proj back, each with a bias, for every expert; the gate is a
 * clamped SiLU-style GLU (swiglu_limit), priced as SwiGLU. */
static void gpt_oss_windows(jr *r, eci_arch *a)
{
    a->window = eci_hf_int(r, "sliding_window", 128, 0, 0, MAX_POS);
    a->window_every = 2; /* GptOssConfig's default layer_types: sliding on even layers, full on odd */
    json_t *types = eci_hf_field(r, "layer_types");
    if (types == NULL)
        return;
    size_t n = json_is_array(types) ? json_array_size(types) : 0;
    if (n != (size_t)a->decoder_layers) {
        eci_hf_fail(r, "layer_types", "must list one type per layer (num_hidden_layers)");
        return;
    }
    int sliding = 0, alternating = 1;
    for (size_t i = 0; i < n; i++) {
        const char *t = json_is_string(json_array_get(types, i)) ? json_string_value(json_array_get(types, i)) : "";
        int s = strcmp(t, "sliding_attention") == 0;
        if (!s && strcmp(t, "full_attention") != 0) {
            eci_hf_fail(r, "layer_types", "must hold \"sliding_attention\" or \"full_attention\"");
            return;
        }
        sliding += s;
        alternating &= s == (i % 2 == 0);
    }
    if (sliding == 0)
        a->window = 0;
    else if (sliding == (int)n)
        a->window_every = 1;
    else if (!alternating)
        eci_hf_fail(r, "layer_types", "other than sliding and full layers alternating (sliding first), all sliding or "
                                      "all full is not supported");
}

void eci_hf_map_gpt_oss(jr *r, eci_arch *a)
{
    decoder(r, a);
    a->kv_heads = eci_hf_int(r, "num_key_value_heads", a->heads, 0, 1, MAX_HEADS);
    a->head_dim = eci_hf_int(r, "head_dim", 64, 0, 1, MAX_WIDTH);
    a->qkv_bias = a->out_bias = eci_hf_bool(r, "attention_bias", 1);
    a->sinks = 1;
    a->softmax_fp32 = 0; /* eager_attention_forward: softmax(combined_logits, dtype=combined_logits.dtype) */
    a->experts = eci_hf_int(r, "num_local_experts", 0, 1, 1, MAX_EXPERTS);
    a->top_k = eci_hf_int(r, "num_experts_per_tok", 0, 1, 1, MAX_EXPERTS);
    a->expert_ffn = eci_hf_int(r, "intermediate_size", 0, 1, 1, MAX_FFN);
    a->moe_bias = 1;
    a->act = EC_ACT_QUICK_GELU; /* GptOssExperts: gate * sigmoid(1.702 gate) (clamped), times up + 1 */
    if (a->top_k > a->experts)
        eci_hf_fail(r, "num_experts_per_tok", "is more than num_local_experts");
    gpt_oss_windows(r, a);
}
