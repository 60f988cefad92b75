/*
 * hfconfig.c: reads a Hugging Face config.json (or epochcast's torchvision_resnet /
 * torchvision_vit files) with jansson into the hyperparameters arch.c builds a network from.
 * One function per model_type says which fields it reads and what the family's modeling code
 * fixes (norms, biases, tied heads), from transformers' models/<type>/configuration_*.py and
 * modeling_*.py.  jansson was chosen over cJSON because its parse errors carry the line and
 * column.  Every error names the file and the field; an unsupported model_type lists the
 * supported ones; nothing is guessed.  torch_dtype is a hint of the checkpoint's dtype and
 * changes nothing: the precision key decides.  The fields are read by hfconfig_json.c.
 */
#define _POSIX_C_SOURCE 200809L /* open flags, fstat */
#include "catalog/hfconfig_json.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int positive(double p) { return p > 0; }

/* ---- encoders ------------------------------------------------------------------------------ */
/* modeling_bert.py: learned positions and token types, LayerNorm after the embeddings,
 * post-norm layers, every linear with a bias, a pooler; BertForPreTraining's MLM + NSP. */
static void bert_like(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->encoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "intermediate_size", 0, 1, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 512, 0, 1, MAX_POS);
    a->type_vocab = eci_hf_int(r, "type_vocab_size", 2, 0, 0, 1 << 16);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "gelu"));
    a->learned_positions = 1;
    a->emb_norm = 1;
    a->post_norm = 1;
    a->qkv_bias = a->out_bias = a->mlp_bias = 1;
    a->dropout = a->emb_dropout = positive(eci_hf_num(r, "hidden_dropout_prob", 0.1));
    a->attn_dropout = positive(eci_hf_num(r, "attention_probs_dropout_prob", 0.1));
    a->default_seq_len = a->max_positions < 512 ? a->max_positions : 512;
}

static void map_bert(jr *r, eci_arch *a) { bert_like(r, a); a->has_pretrain = 1; }
static void map_roberta(jr *r, eci_arch *a) { bert_like(r, a); }

/* modeling_albert.py: factorized embeddings (embedding_size, then a projection to hidden),
 * one layer group shared by every layer, gelu_new; AlbertForPreTraining's MLM + SOP. */
static void map_albert(jr *r, eci_arch *a)
{
    bert_like(r, a);
    a->embedding_size = eci_hf_int(r, "embedding_size", 128, 0, 1, MAX_WIDTH);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "gelu_new"));
    int groups = eci_hf_int(r, "num_hidden_groups", 1, 0, 1, MAX_LAYERS);
    if (groups != 1)
        eci_hf_fail(r, "num_hidden_groups", "other than 1 is not supported (one shared layer group)");
    if (eci_hf_int(r, "inner_group_num", 1, 0, 1, 64) != 1)
        eci_hf_fail(r, "inner_group_num", "other than 1 is not supported");
    a->shared_layers = 1;
    a->ffn_no_dropout = 1; /* AlbertLayer.forward: full_layer_layer_norm(ffn_output + attention_output), no dropout */
    a->has_pretrain = 1;
}

/* modeling_distilbert.py: no token types, learned (or sinusoidal) positions, post-norm,
 * biases everywhere; its classifier is pre_classifier + ReLU + classifier (a pooler's size). */
static void map_distilbert(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "dim", 0, 1, 1, MAX_WIDTH);
    a->encoder_layers = eci_hf_int(r, "n_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "n_heads", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "hidden_dim", 0, 1, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 512, 0, 1, MAX_POS);
    a->act = eci_hf_act(r, "activation", eci_hf_str(r, "activation", "gelu"));
    a->learned_positions = 1; /* sinusoidal_pos_embds keeps a (frozen) table of the same size */
    a->emb_norm = 1;
    a->post_norm = 1;
    a->qkv_bias = a->out_bias = a->mlp_bias = 1;
    a->dropout = a->emb_dropout = positive(eci_hf_num(r, "dropout", 0.1));
    a->attn_dropout = positive(eci_hf_num(r, "attention_dropout", 0.1));
    a->default_seq_len = a->max_positions < 512 ? a->max_positions : 512;
}

/* modeling_deberta_v2.py: no SDPA path (eager), disentangled relative attention over
 * position_buckets, absolute positions only with position_biased_input.  Its shared relative
 * position table (2 x buckets x hidden plus a LayerNorm: 0.2% of deberta-v3-base) is not
 * counted as parameters. */
static void map_deberta_v2(jr *r, eci_arch *a)
{
    bert_like(r, a);
    a->type_vocab = eci_hf_int(r, "type_vocab_size", 0, 0, 0, 1 << 16);
    a->learned_positions = eci_hf_bool(r, "position_biased_input", 1);
    a->attention = EC_NET_ATTN_EAGER;
    if (eci_hf_bool(r, "relative_attention", 0)) {
        int buckets = eci_hf_int(r, "position_buckets", -1, 0, -1, MAX_POS);
        a->relative_span =
            buckets > 0 ? buckets : eci_hf_int(r, "max_relative_positions", a->max_positions, 0, -1, MAX_POS);
        if (a->relative_span <= 0)
            a->relative_span = a->max_positions;
    }
}

/* ---- decoders ------------------------------------------------------------------------------ */
/* modeling_gpt2.py: wte + wpe, pre-norm, fused c_attn, gelu_new in Python, tied head. */
static void map_gpt2(jr *r, eci_arch *a)
{
    static const char *const width[] = {"n_embd", "hidden_size", NULL};
    eci_hf_common(r, a);
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int_any(r, width, 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "n_layer", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "n_head", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "n_inner", 4 * a->hidden, 0, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "n_positions", 1024, 0, 1, MAX_POS);
    a->act = eci_hf_act(r, "activation_function", eci_hf_str(r, "activation_function", "gelu_new"));
    a->learned_positions = a->emb_fused = 1;
    a->qkv_fused = a->qkv_bias = a->out_bias = a->mlp_bias = 1;
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
    a->emb_dropout = positive(eci_hf_num(r, "embd_pdrop", 0.1));
    a->dropout = positive(eci_hf_num(r, "resid_pdrop", 0.1));
    a->attn_dropout = positive(eci_hf_num(r, "attn_pdrop", 0.1));
    a->default_seq_len = a->max_positions;
}

/* Llama-style decoders (Llama, Mistral, Mixtral, Qwen2, Qwen-MoE, Gemma, Phi-3): hfconfig_json.c's
 * eci_hf_llama_like, which hfconfig_2026.c's readers share. */
static void llama_like(jr *r, eci_arch *a) { eci_hf_llama_like(r, a); }

static void map_llama(jr *r, eci_arch *a) { llama_like(r, a); }

static void map_mistral(jr *r, eci_arch *a)
{
    llama_like(r, a);
    a->window = eci_hf_int(r, "sliding_window", 0, 0, 0, MAX_POS);
    a->window_every = 1;
}

/* modeling_mixtral.py: every layer's MLP is a sparse MoE of num_local_experts SwiGLU experts. */
static void map_mixtral(jr *r, eci_arch *a)
{
    a->experts = 1; /* intermediate_size is the expert size: required below */
    llama_like(r, a);
    a->experts = eci_hf_int(r, "num_local_experts", 8, 0, 1, MAX_EXPERTS);
    a->top_k = eci_hf_int(r, "num_experts_per_tok", 2, 0, 1, MAX_EXPERTS);
    a->expert_ffn = a->ffn;
    a->window = eci_hf_int(r, "sliding_window", 0, 0, 0, MAX_POS);
    a->window_every = 1;
}

/* modeling_qwen2.py: Q, K and V projections with a bias (o_proj without). */
static void map_qwen2(jr *r, eci_arch *a)
{
    llama_like(r, a);
    a->qkv_bias = 1;
    a->out_bias = 0;
    if (eci_hf_bool(r, "use_sliding_window", 0)) {
        a->window = eci_hf_int(r, "sliding_window", 0, 0, 0, MAX_POS);
        a->window_every = 1;
    }
}

/* modeling_qwen2_moe.py / modeling_qwen3_moe.py: routed experts of moe_intermediate_size on
 * every layer (decoder_sparse_step 1, no mlp_only_layers); Qwen2-MoE adds a gated shared
 * expert and Q/K/V biases, Qwen3-MoE RMSNorms on Q and K and no biases. */
static void qwen_moe(jr *r, eci_arch *a, int qwen3)
{
    a->experts = 1;
    llama_like(r, a);
    a->experts = eci_hf_int(r, "num_experts", 0, 1, 1, MAX_EXPERTS);
    a->top_k = eci_hf_int(r, "num_experts_per_tok", 0, 1, 1, MAX_EXPERTS);
    a->expert_ffn = eci_hf_int(r, "moe_intermediate_size", 0, 1, 1, MAX_FFN);
    if (eci_hf_int(r, "decoder_sparse_step", 1, 0, 1, MAX_LAYERS) != 1)
        eci_hf_fail(r, "decoder_sparse_step", "other than 1 is not supported (every layer a MoE layer)");
    json_t *dense = eci_hf_field(r, "mlp_only_layers");
    if (dense != NULL && (!json_is_array(dense) || json_array_size(dense) > 0))
        eci_hf_fail(r, "mlp_only_layers", "must be empty (every layer a MoE layer)");
    if (qwen3) {
        a->qk_norm = 1;
    } else {
        a->qkv_bias = 1;
        a->shared_ffn = eci_hf_int(r, "shared_expert_intermediate_size", 0, 0, 0, MAX_FFN);
        a->shared_experts = a->shared_ffn > 0;
        a->shared_gate = a->shared_experts;
    }
}

static void map_qwen2_moe(jr *r, eci_arch *a) { qwen_moe(r, a, 0); }
static void map_qwen3_moe(jr *r, eci_arch *a) { qwen_moe(r, a, 1); }

/* modeling_gemma.py: embeddings x sqrt(hidden), GeGLU (gelu_pytorch_tanh), head_dim 256,
 * RMSNorm, tied head.  Gemma 2 adds norms after attention and MLP, soft-capped scores
 * (eager is HF's default for it) and a sliding window on every other layer. */
static void map_gemma(jr *r, eci_arch *a)
{
    llama_like(r, a);
    const char *act = eci_hf_str(r, "hidden_activation", NULL);
    a->act = eci_hf_act(r, act != NULL ? "hidden_activation" : "hidden_act",
                        act != NULL ? act : eci_hf_str(r, "hidden_act", "gelu_pytorch_tanh"));
    if (a->act == EC_ACT_GELU_TANH) /* Gemma's "gelu" means the fused tanh approximation */
        a->act = EC_ACT_GELU;
    a->emb_scale = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
}

static void map_gemma2(jr *r, eci_arch *a)
{
    map_gemma(r, a);
    a->sandwich_norms = 1;
    a->softcap = eci_hf_num(r, "attn_logit_softcapping", 0) > 0;
    a->window = eci_hf_int(r, "sliding_window", 0, 0, 0, MAX_POS);
    a->window_every = 2;
    a->attention = EC_NET_ATTN_EAGER;
}

/* modeling_phi3.py: fused qkv_proj and gate_up_proj (no biases), RMSNorm, untied head. */
static void map_phi3(jr *r, eci_arch *a)
{
    llama_like(r, a);
    a->qkv_fused = 1;
}

/* modeling_gpt_neox.py: fused query_key_value, parallel residual, LayerNorms and linears with
 * biases, rotary positions on a share of each head, an untied embed_out. */
static void map_gpt_neox(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1; /* softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype) */
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "intermediate_size", 0, 1, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 2048, 0, 1, MAX_POS);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "gelu"));
    a->position = EC_POS_ROPE;
    a->qkv_fused = 1;
    a->qkv_bias = a->out_bias = eci_hf_bool(r, "attention_bias", 1);
    a->mlp_bias = 1;
    a->parallel = eci_hf_bool(r, "use_parallel_residual", 1);
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 0);
    a->dropout = positive(eci_hf_num(r, "hidden_dropout", 0));
    a->attn_dropout = positive(eci_hf_num(r, "attention_dropout", 0));
    a->default_seq_len = a->max_positions < 2048 ? a->max_positions : 2048;
}

/* modeling_falcon.py: multi-query (or grouped, new_decoder_architecture) attention, parallel
 * attention and MLP under one LayerNorm (two in the new architecture), no linear biases,
 * rotary positions (or ALiBi), tied head. */
static void map_falcon(jr *r, eci_arch *a)
{
    static const char *const layers[] = {"num_hidden_layers", "n_layer", NULL};
    static const char *const heads[] = {"num_attention_heads", "n_head", NULL};
    eci_hf_common(r, a);
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int_any(r, layers, 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int_any(r, heads, 0, 1, 1, MAX_HEADS);
    int new_arch = eci_hf_bool(r, "new_decoder_architecture", 0);
    if (new_arch)
        a->kv_heads = eci_hf_int(r, "num_kv_heads", a->heads, 0, 1, MAX_HEADS);
    else
        a->kv_heads = eci_hf_bool(r, "multi_query", 1) ? 1 : a->heads;
    a->ffn = eci_hf_int(r, "ffn_hidden_size", 4 * a->hidden, 0, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 2048, 0, 1, MAX_POS);
    a->act = EC_ACT_GELU;
    a->position = eci_hf_bool(r, "alibi", 0) ? EC_POS_ALIBI : EC_POS_ROPE;
    a->qkv_fused = 1;
    a->qkv_bias = a->out_bias = a->mlp_bias = eci_hf_bool(r, "bias", 0);
    a->parallel = new_arch || eci_hf_bool(r, "parallel_attn", 1);
    a->parallel_one_norm = a->parallel && !new_arch;
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
    a->default_seq_len = a->max_positions < 2048 ? a->max_positions : 2048;
}

/* MosaicML MPT (transformers' modeling_mpt.py and llm-foundry's MPTModel): ALiBi, RoPE or
 * learned positions (max_seq_len rows: the count grows with it), fused Wqkv, no biases
 * anywhere with no_bias (LayerNorms included), GELU MLP of expansion_ratio x d_model, logits
 * through the token embedding; norm_type and loss_fn as llm-foundry reads them (MPTConfig's
 * default norm_type is low_precision_layernorm). */
static void map_mpt(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1; /* MptAttention: softmax(attn_weights.float(), dim=-1).to(value_states.dtype) */
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "d_model", 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "n_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "n_heads", 0, 1, 1, MAX_HEADS);
    double ratio = eci_hf_num(r, "expansion_ratio", 4);
    if (!(ratio > 0 && ratio <= 256)) {
        eci_hf_fail(r, "expansion_ratio", "must be in (0, 256]");
        ratio = 4; /* the error stands; no conversion of an out-of-range product below */
    }
    a->ffn = (int)(ratio * a->hidden);
    a->max_positions = eci_hf_int(r, "max_seq_len", 2048, 0, 1, MAX_POS);
    int alibi = 0, rope = 0;
    json_t *attn = eci_hf_field(r, "attn_config");
    if (attn != NULL && json_is_object(attn)) {
        jr sub = *r;
        sub.obj = attn;
        alibi = eci_hf_bool(&sub, "alibi", 0);
        rope = eci_hf_bool(&sub, "rope", 0);
        const char *impl = eci_hf_str(&sub, "attn_impl", "torch");
        if (strcmp(impl, "torch") == 0)
            a->attention = EC_NET_ATTN_EAGER;
        if (sub.rc != EC_OK)
            r->rc = sub.rc;
    }
    a->position = alibi ? EC_POS_ALIBI : rope ? EC_POS_ROPE : EC_POS_NONE;
    /* MPTModel builds wpe only without ALiBi and RoPE, whatever learned_pos_emb says */
    a->learned_positions = !alibi && !rope && eci_hf_bool(r, "learned_pos_emb", 1);
    int no_bias = eci_hf_bool(r, "no_bias", 1);
    a->norm_bias = a->qkv_bias = a->out_bias = a->mlp_bias = !no_bias;
    /* llm-foundry's norm_type (llmfoundry/models/layers/norm.py NORM_CLASS_REGISTRY): the
     * low_precision_ ones cast input and weights to the autocast dtype and normalise there
     * (LPLayerNorm, LPRMSNorm); its RMSNorm has a weight and no bias */
    const char *norm = eci_hf_str(r, "norm_type", "low_precision_layernorm");
    if (strcmp(norm, "layernorm") == 0 || strcmp(norm, "low_precision_layernorm") == 0) {
        a->norm = EC_NORM_LAYER;
    } else if (strcmp(norm, "rmsnorm") == 0 || strcmp(norm, "low_precision_rmsnorm") == 0) {
        a->norm = EC_NORM_RMS;
        a->norm_bias = 0;
    } else {
        eci_hf_fail(r, "norm_type", "must be layernorm, low_precision_layernorm, rmsnorm or low_precision_rmsnorm");
    }
    a->norm_low_precision = strncmp(norm, "low_precision_", 14) == 0;
    /* ComposerMPTCausalLM's loss_fn (a key of the model section beside d_model): fused_crossentropy
     * is flash-attn's xentropy kernel on the 16-bit logits with the labels rolled; absent (a hub
     * config read by transformers' MptForCausalLM): torch cross-entropy on shifted logits */
    const char *loss = eci_hf_str(r, "loss_fn", "torch_crossentropy");
    if (strcmp(loss, "fused_crossentropy") == 0)
        a->fused_loss = 1;
    else if (strcmp(loss, "torch_crossentropy") != 0)
        eci_hf_fail(r, "loss_fn", "must be fused_crossentropy or torch_crossentropy");
    /* ComposerMPTCausalLM's use_train_metrics (default true in llm-foundry): LanguageCrossEntropy and
     * LanguagePerplexity, which Composer updates on the logits after every micro-batch (no_grad, under
     * autocast: trainer.py _eval_train_metrics); absent (a hub config): no training loop assumed */
    a->metric_losses = eci_hf_bool(r, "use_train_metrics", 0) ? 2 : 0;
    a->act = EC_ACT_GELU;
    a->qkv_fused = 1;
    a->final_norm = 1;
    a->tie = 1;
    a->dropout = positive(eci_hf_num(r, "resid_pdrop", 0));
    a->emb_dropout = positive(eci_hf_num(r, "emb_pdrop", 0));
    a->default_seq_len = a->max_positions;
}

/* modeling_opt.py: learned positions, an embedding of word_embed_proj_dim with project_in /
 * project_out (no bias) when it differs from hidden_size, pre-norm layers with a final norm
 * when do_layer_norm_before (post-norm and no final norm otherwise: opt-350m), biases
 * (enable_bias), ReLU MLP of ffn_dim, dropout after attention and MLP, a tied head. */
static void map_opt(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1; /* fp16 attn_weights: softmax(..., dtype=torch.float32).to(torch.float16) */
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "ffn_dim", 0, 1, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 2048, 0, 1, MAX_POS);
    int proj = eci_hf_int(r, "word_embed_proj_dim", a->hidden, 0, 1, MAX_WIDTH);
    if (proj != a->hidden) {
        a->embedding_size = proj;
        a->emb_proj_nobias = 1;
        a->out_proj = proj;
    }
    a->act = eci_hf_act(r, "activation_function", eci_hf_str(r, "activation_function", "relu"));
    a->learned_positions = 1;
    int pre = eci_hf_bool(r, "do_layer_norm_before", 1);
    a->post_norm = !pre;
    a->final_norm = pre && !eci_hf_bool(r, "_remove_final_layer_norm", 0);
    a->qkv_bias = a->out_bias = a->mlp_bias = eci_hf_bool(r, "enable_bias", 1);
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
    a->dropout = positive(eci_hf_num(r, "dropout", 0.1));
    a->attn_dropout = positive(eci_hf_num(r, "attention_dropout", 0));
    a->default_seq_len = a->max_positions;
}

/* modeling_bloom.py: a LayerNorm after the word embeddings, ALiBi, fused query_key_value and
 * every linear with a bias, pre-norm layers, a 4h MLP with BLOOM's tanh GELU (Python, like
 * gelu_new), a final ln_f, a tied head; BloomAttention has no SDPA path (eager baddbmm). */
static void map_bloom(jr *r, eci_arch *a)
{
    static const char *const width[] = {"hidden_size", "n_embed", NULL};
    static const char *const layers[] = {"n_layer", "num_hidden_layers", NULL};
    static const char *const heads[] = {"n_head", "num_attention_heads", NULL};
    eci_hf_common(r, a);
    a->softmax_fp32 = 1; /* F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(input_dtype) */
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int_any(r, width, 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int_any(r, layers, 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int_any(r, heads, 0, 1, 1, MAX_HEADS);
    a->ffn = 4 * a->hidden;
    a->act = EC_ACT_GELU_TANH;
    a->position = EC_POS_ALIBI;
    a->emb_norm = 1;
    a->qkv_fused = a->qkv_bias = a->out_bias = a->mlp_bias = 1;
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
    a->dropout = positive(eci_hf_num(r, "hidden_dropout", 0));
    a->attn_dropout = positive(eci_hf_num(r, "attention_dropout", 0));
    a->attention = EC_NET_ATTN_EAGER;
    a->default_seq_len = 2048;
}

/* ---- encoder-decoder ------------------------------------------------------------------------ */
/* modeling_t5.py: a shared embedding, RMS-style T5LayerNorm, no biases, relative position
 * buckets owned by each stack's first layer, eager attention only, ReLU (or gated-gelu for
 * v1.1) MLP with dropout inside, dropout after every sub-layer, a tied head by default. */
static void map_t5(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1; /* T5Attention: softmax(scores.float(), dim=-1).type_as(scores) */
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "d_model", 0, 1, 1, MAX_WIDTH);
    a->head_dim = eci_hf_int(r, "d_kv", 0, 1, 1, MAX_WIDTH);
    a->ffn = eci_hf_int(r, "d_ff", 0, 1, 1, MAX_FFN);
    a->encoder_layers = eci_hf_int(r, "num_layers", 0, 1, 1, MAX_LAYERS);
    a->decoder_layers = eci_hf_int(r, "num_decoder_layers", a->encoder_layers, 0, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_heads", 0, 1, 1, MAX_HEADS);
    a->rel_buckets = eci_hf_int(r, "relative_attention_num_buckets", 32, 0, 1, 1 << 16);
    const char *proj = eci_hf_str(r, "feed_forward_proj", "relu");
    a->gated = strncmp(proj, "gated-", 6) == 0;
    a->act = eci_hf_act(r, "feed_forward_proj",
                        a->gated ? (strcmp(proj + 6, "gelu") == 0 ? "gelu_new" : proj + 6) : proj);
    a->norm = EC_NORM_RMS;
    a->norm_bias = 0;
    a->position = EC_POS_RELATIVE;
    a->attention = EC_NET_ATTN_EAGER;
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 1);
    int drop = positive(eci_hf_num(r, "dropout_rate", 0.1));
    a->dropout = a->emb_dropout = a->attn_dropout = a->mlp_dropout = drop;
    a->no_classify = 1;
    a->default_seq_len = 512;
    if (a->default_task[0] == '\0')
        eci_strlcpy(a->default_task, "lm", sizeof a->default_task);
}

/* ---- vision ---------------------------------------------------------------------------------- */
/* modeling_vit.py: patch conv with a bias, class token, learned positions, pre-norm layers
 * with biases, a final LayerNorm, a classifier on the class token. */
static void vit_like(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->vision = 1;
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->encoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "intermediate_size", 0, 1, 1, MAX_FFN);
    a->image_size = eci_hf_int(r, "image_size", 224, 0, 1, MAX_IMAGE);
    a->patch = eci_hf_int(r, "patch_size", 16, 0, 1, MAX_IMAGE);
    a->channels = eci_hf_int(r, "num_channels", 3, 0, 1, 4096);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "gelu"));
    a->qkv_bias = eci_hf_bool(r, "qkv_bias", 1);
    a->out_bias = a->mlp_bias = a->patch_bias = 1;
    a->final_norm = 1;
    a->dropout = positive(eci_hf_num(r, "hidden_dropout_prob", 0));
    a->attn_dropout = positive(eci_hf_num(r, "attention_probs_dropout_prob", 0));
    eci_strlcpy(a->default_task, "imagenet", sizeof a->default_task);
}

static void map_vit(jr *r, eci_arch *a) { vit_like(r, a); }

/* modeling_clip.py (CLIPVisionTransformer): a patch conv without a bias, class embedding and
 * positions, a pre-LayerNorm, quick_gelu layers, a post-LayerNorm.  model_type "clip" trains
 * the vision tower of a full CLIP config (its vision_config). */
static void map_clip_vision(jr *r, eci_arch *a)
{
    vit_like(r, a);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "quick_gelu"));
    a->patch_bias = 0;
    a->vision_pre_norm = 1;
    a->dropout = 0;
    a->attn_dropout = positive(eci_hf_num(r, "attention_dropout", 0));
}

static void map_clip(jr *r, eci_arch *a)
{
    json_t *vision = eci_hf_field(r, "vision_config");
    if (vision == NULL || !json_is_object(vision)) {
        eci_hf_fail(r, "vision_config", "is missing (a CLIP config trains its vision tower)");
        return;
    }
    jr sub = *r;
    sub.obj = vision;
    map_clip_vision(&sub, a);
    r->rc = sub.rc;
}

/* ---- torchvision ----------------------------------------------------------------------------- */
/* torchvision.models.resnet: {"block": "basic"|"bottleneck", "layers": [3, 4, 6, 3]}. */
static void map_tv_resnet(jr *r, eci_arch *a)
{
    a->kind = ECI_ARCH_RESNET;
    a->channels = 3;
    a->image_size = eci_hf_int(r, "image_size", 224, 0, 1, MAX_IMAGE);
    a->classes = eci_hf_int(r, "num_classes", 1000, 0, 1, 1L << 24);
    const char *block = eci_hf_str(r, "block", NULL);
    if (block == NULL)
        eci_hf_fail(r, "block", "is missing (basic or bottleneck)");
    else if (strcmp(block, "bottleneck") == 0)
        a->bottleneck = 1;
    else if (strcmp(block, "basic") != 0)
        eci_hf_fail(r, "block", "must be basic or bottleneck");
    json_t *layers = eci_hf_field(r, "layers");
    size_t n = layers != NULL && json_is_array(layers) ? json_array_size(layers) : 0;
    if (n < 1 || n > 4) {
        eci_hf_fail(r, "layers", "must be a list of 1 to 4 stage depths");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(layers, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000) {
            eci_hf_fail(r, "layers", "must hold integers in [1, 1000]");
            return;
        }
        a->stages[i] = (int)json_integer_value(v);
    }
    eci_strlcpy(a->default_task, "imagenet", sizeof a->default_task);
}

/* torchvision.models.vision_transformer: nn.MultiheadAttention (its fused fast path), fused
 * in_proj, biases, a final LayerNorm, heads.head on the class token; dropout 0 by default. */
static void map_tv_vit(jr *r, eci_arch *a)
{
    a->kind = ECI_ARCH_TRANSFORMER;
    a->vision = 1;
    a->image_size = eci_hf_int(r, "image_size", 224, 0, 1, MAX_IMAGE);
    a->patch = eci_hf_int(r, "patch_size", 16, 1, 1, MAX_IMAGE);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->encoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->ffn = eci_hf_int(r, "intermediate_size", 0, 1, 1, MAX_FFN);
    a->classes = eci_hf_int(r, "num_classes", 1000, 0, 1, 1L << 24);
    a->channels = 3;
    a->act = EC_ACT_GELU;
    a->norm = EC_NORM_LAYER;
    a->norm_bias = 1;
    a->qkv_fused = a->qkv_bias = a->out_bias = a->mlp_bias = a->patch_bias = 1;
    a->final_norm = 1;
    a->attention = EC_NET_ATTN_FUSED;
    eci_strlcpy(a->default_task, "imagenet", sizeof a->default_task);
}

/* ---- the table ------------------------------------------------------------------------------- */
static const struct {
    const char *type;
    void (*map)(jr *, eci_arch *);
} TYPES[] = {
    {"bert", map_bert}, {"roberta", map_roberta}, {"distilbert", map_distilbert}, {"albert", map_albert},
    {"deberta-v2", map_deberta_v2}, {"gpt2", map_gpt2}, {"gpt_neox", map_gpt_neox}, {"llama", map_llama},
    {"mistral", map_mistral}, {"mixtral", map_mixtral}, {"qwen2", map_qwen2}, {"qwen2_moe", map_qwen2_moe},
    {"qwen3_moe", map_qwen3_moe}, {"gemma", map_gemma}, {"gemma2", map_gemma2}, {"phi3", map_phi3},
    {"mpt", map_mpt}, {"falcon", map_falcon}, {"t5", map_t5}, {"vit", map_vit}, {"opt", map_opt},
    {"bloom", map_bloom}, {"mt5", map_t5},
    {"clip_vision_model", map_clip_vision}, {"clip", map_clip}, {"torchvision_resnet", map_tv_resnet},
    {"torchvision_vit", map_tv_vit}, {"deepseek_v2", eci_hf_map_deepseek},
    {"deepseek_v3", eci_hf_map_deepseek}, {"gpt_oss", eci_hf_map_gpt_oss},
    {"qwen3", eci_hf_map_qwen3}, {"nemotron", eci_hf_map_nemotron}, {"gemma3_text", eci_hf_map_gemma3_text}, {"gemma3", eci_hf_map_gemma3},
    {"llama4_text", eci_hf_map_llama4_text}, {"llama4", eci_hf_map_llama4},
};

const char *eci_hf_supported(void)
{
    return "bert, roberta, distilbert, albert, deberta-v2, gpt2, gpt_neox, llama, mistral, mixtral, qwen2, "
           "qwen2_moe, qwen3_moe, gemma, gemma2, phi3, mpt, falcon, t5, mt5, vit, clip_vision_model, clip, "
           "opt, bloom, torchvision_resnet, torchvision_vit, deepseek_v2, deepseek_v3, gpt_oss, qwen3, gemma3_text, "
           "gemma3, llama4_text, llama4, nemotron";
}

static int map_root(ec_ctx *ctx, const char *name, json_t *root, eci_arch *a)
{
    if (!json_is_object(root))
        return eci_error(ctx, EC_EPARSE, "%s: a config must be a JSON object", name);
    jr r = {.ctx = ctx, .name = name, .obj = root, .type = "?"};
    json_t *t = json_object_get(root, "model_type");
    if (t == NULL || !json_is_string(t))
        return eci_error(ctx, EC_EPARSE, "%s: field 'model_type' is missing or not a string (supported: %s)", name,
                         eci_hf_supported());
    const char *type = json_string_value(t);
    r.type = type;
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(type, TYPES[i].type) == 0) {
            eci_strlcpy(a->model_type, type, sizeof a->model_type);
            TYPES[i].map(&r, a);
            return r.rc;
        }
    char shown[64];
    return eci_error(ctx, EC_ENOTSUP, "%s: field 'model_type': '%s' is not supported (supported: %s)", name,
                     eci_echo(shown, sizeof shown, type), eci_hf_supported());
}

/* ---- reading the text: a size cap and jansson's tree charged to the context ----------------- */
/* jansson allocates its tree with malloc: json_set_alloc_funcs is one setting for the whole
 * process (other users of jansson in it included) and passes no context, so it cannot route one
 * parse to one context's allocator without a global of ours.  Instead the text is capped
 * (ECI_HF_MAX_BYTES) and the tree's bytes, bounded from above by eci_hf_tree_bytes, are charged
 * to the context's allocator for as long as the tree lives: a block of that size is asked for
 * (and never touched) before the parse, so a host's budget refuses a config it cannot hold. */
size_t eci_hf_tree_bytes(const char *text, size_t len)
{
    size_t bytes = ECI_HF_TREE_BASE_BYTES;
    int in_string = 0, escaped = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = 0;
            else if (c == '\\')
                escaped = 1;
            else if (c == '"')
                in_string = 0;
            bytes += 1; /* its copy */
            continue;
        }
        switch (c) {
        case '"': in_string = 1; bytes += ECI_HF_TREE_STRING_BYTES; break;
        case '{': bytes += ECI_HF_TREE_OBJECT_BYTES; break;
        case '[': bytes += ECI_HF_TREE_ARRAY_BYTES; break;
        case ',': case ':': bytes += ECI_HF_TREE_VALUE_BYTES; break;
        default: break;
        }
    }
    return bytes;
}

/* json_loadb's message, quoting the text it stopped at only when that is a short number or
 * JSON punctuation ("':' expected near '32'"), never a word ("invalid token near 'AWS'", the
 * start of AWS_SECRET=...): a config may be a file that was never meant to be one; line and
 * column say where. */
#define PARSE_ECHO_MAX 12
static int parse_error(ec_ctx *ctx, const char *name, const json_error_t *err)
{
    char text[sizeof err->text];
    eci_strlcpy(text, err->text, sizeof text);
    char *near = strstr(text, " near '");
    size_t len = near != NULL ? strlen(near) : 0;
    if (near != NULL && near[len - 1] == '\'') {
        near[len - 1] = '\0';
        const char *token = near + strlen(" near '");
        if (strlen(token) <= PARSE_ECHO_MAX && strspn(token, "0123456789.eE+-{}[],:\"") == strlen(token))
            near[len - 1] = '\'';
        else
            *near = '\0';
    }
    return eci_error(ctx, EC_EPARSE, "%s:%d:%d: %s", name, err->line, err->column, text);
}

static int parse_text(ec_ctx *ctx, const char *name, const char *text, size_t len, eci_arch *a)
{
    memset(a, 0, sizeof *a);
    if (len > ECI_HF_MAX_BYTES)
        return eci_error(ctx, EC_EIO, "%s: %zu bytes, over the %d MiB cap for a config.json", name, len,
                         ECI_HF_MAX_BYTES >> 20);
    size_t tree = eci_hf_tree_bytes(text, len);
    if (tree > ECI_HF_TREE_MAX_BYTES)
        return eci_error(ctx, EC_EIO, "%s: its JSON would take about %zu MiB to hold, over the %d MiB cap for a "
                         "config.json", name, tree >> 20, ECI_HF_TREE_MAX_BYTES >> 20);
    void *charge = NULL;
    if (eci_alloc_counts(ctx) && (charge = eci_malloc(ctx, tree)) == NULL)
        return eci_error(ctx, EC_ENOMEM, "%s: its JSON would take about %zu KiB to hold, over the memory budget",
                         name, (tree + 1023) >> 10);
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    int rc = root == NULL ? parse_error(ctx, name, &err) : map_root(ctx, name, root, a);
    json_decref(root);
    eci_free(ctx, charge, tree);
    return rc;
}

int eci_hf_parse(ec_ctx *ctx, const char *name, const char *text, size_t len, eci_arch *a)
{
    return parse_text(ctx, name, text, len, a);
}

/* The file's bytes into a buffer of the context: a regular file of at most ECI_HF_MAX_BYTES
 * (read up to one byte more, so a file that grows while read is caught too). */
static int read_text(ec_ctx *ctx, const char *path, char **text, size_t *len, size_t *cap)
{
    *text = NULL;
    *len = *cap = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return eci_error(ctx, EC_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = EC_OK;
    if (fstat(fd, &st) != 0)
        rc = eci_error(ctx, EC_EIO, "%s: cannot open: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = eci_error(ctx, EC_EIO, "%s: is not a regular file", path);
    else if ((rc = eci_input_note_id(ctx, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) != EC_OK)
        ; /* no output of this context replaces it */
    else if (st.st_size > ECI_HF_MAX_BYTES)
        rc = eci_error(ctx, EC_EIO, "%s: %lld bytes, over the %d MiB cap for a config.json", path,
                       (long long)st.st_size, ECI_HF_MAX_BYTES >> 20);
    else if ((*text = eci_malloc(ctx, *cap = (size_t)st.st_size + 1)) == NULL)
        rc = EC_ENOMEM;
    while (rc == EC_OK) {
        if (*len == *cap) {
            size_t more = *cap * 2 < ECI_HF_MAX_BYTES + 1 ? *cap * 2 : ECI_HF_MAX_BYTES + 1;
            char *t = more > *cap ? eci_realloc(ctx, *text, *cap, more) : NULL;
            if (t == NULL) {
                rc = more > *cap ? EC_ENOMEM : eci_error(ctx, EC_EIO, "%s: over the %d MiB cap for a config.json",
                                                          path, ECI_HF_MAX_BYTES >> 20);
                break;
            }
            *text = t;
            *cap = more;
        }
        ssize_t got = read(fd, *text + *len, *cap - *len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = eci_error(ctx, EC_EIO, "%s: cannot read: %s", path, strerror(errno));
        else if (got == 0)
            break;
        else
            *len += (size_t)got;
    }
    close(fd);
    return rc;
}

int eci_hf_load(ec_ctx *ctx, const char *path, eci_arch *a)
{
    char *text;
    size_t len, cap;
    int rc = read_text(ctx, path, &text, &len, &cap);
    if (rc == EC_OK)
        rc = parse_text(ctx, path, text, len, a);
    else
        memset(a, 0, sizeof *a);
    eci_free(ctx, text, cap);
    return rc;
}
