/*
 * hfconfig_json.c: the fields of a config.json, read with jansson for hfconfig.c's
 * per-model_type readers: integers in a range (under one of several names), numbers,
 * booleans, strings, an activation's HF name, and what every Hugging Face config says (the
 * labels of a classification head, the task of the checkpoint's class).  The first error
 * wins and names the file, the field and the model_type.
 */
#include "catalog/hfconfig_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

json_t *eci_hf_field(jr *r, const char *key)
{
    json_t *v = json_object_get(r->obj, key);
    return v != NULL && !json_is_null(v) ? v : NULL;
}

void eci_hf_fail(jr *r, const char *key, const char *what)
{
    if (r->rc == EC_OK)
        r->rc = eci_error(r->ctx, EC_EPARSE, "%s: field '%s' %s (model_type '%s')", r->name, key, what, r->type);
}

/* An integer field in [lo, hi]; an absent one is def, or an error when required. */
int eci_hf_int(jr *r, const char *key, int def, int required, long lo, long hi)
{
    json_t *v = eci_hf_field(r, key);
    if (v == NULL) {
        if (required)
            eci_hf_fail(r, key, "is missing");
        return def;
    }
    /* A real is range-checked before any conversion to an integer type: (long)1e300 is
     * undefined behaviour.  4096.0 and -0.0 are integers; 1.5 is not. */
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v))
        d = json_real_value(v);
    else {
        eci_hf_fail(r, key, "must be an integer");
        return def;
    }
    if (!(d >= (double)lo && d <= (double)hi)) {
        char msg[96];
        snprintf(msg, sizeof msg, fabs(d) < 1e15 ? "is %.0f, out of range [%ld, %ld]" : "is %g, out of range [%ld, %ld]",
                 d, lo, hi);
        eci_hf_fail(r, key, msg);
        return def;
    }
    if (d != floor(d)) {
        eci_hf_fail(r, key, "must be an integer");
        return def;
    }
    return (int)d;
}

/* The first of several names a field goes by (n_embd / hidden_size ...). */
int eci_hf_int_any(jr *r, const char *const *keys, int def, int required, long lo, long hi)
{
    for (const char *const *k = keys; *k != NULL; k++)
        if (eci_hf_field(r, *k) != NULL)
            return eci_hf_int(r, *k, def, 1, lo, hi);
    if (required)
        eci_hf_fail(r, keys[0], "is missing");
    return def;
}

double eci_hf_num(jr *r, const char *key, double def)
{
    json_t *v = eci_hf_field(r, key);
    if (v == NULL)
        return def;
    if (!json_is_number(v)) {
        eci_hf_fail(r, key, "must be a number");
        return def;
    }
    return json_number_value(v);
}

int eci_hf_bool(jr *r, const char *key, int def)
{
    json_t *v = eci_hf_field(r, key);
    if (v == NULL)
        return def;
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        return (int)json_integer_value(v);
    eci_hf_fail(r, key, "must be true or false");
    return def;
}

const char *eci_hf_str(jr *r, const char *key, const char *def)
{
    json_t *v = eci_hf_field(r, key);
    if (v == NULL)
        return def;
    if (!json_is_string(v)) {
        eci_hf_fail(r, key, "must be a string");
        return def;
    }
    return json_string_value(v);
}

/* HF activation names -> the kernels they launch: "gelu_new" and "gelu_fast" are Python
 * (NewGELUActivation, several kernels), and so is "gelu_python" (GELUActivation(use_gelu_python=True):
 * x * 0.5 * (1 + erf(x / sqrt 2)), transformers activations.py); "gelu_pytorch_tanh" is one fused kernel. */
ec_activation eci_hf_act(jr *r, const char *key, const char *name)
{
    static const struct { const char *name; ec_activation act; } acts[] = {
        {"gelu", EC_ACT_GELU}, {"gelu_pytorch_tanh", EC_ACT_GELU}, {"gelu_python", EC_ACT_GELU_PYTHON},
        {"gelu_new", EC_ACT_GELU_TANH}, {"gelu_fast", EC_ACT_GELU_TANH}, {"relu", EC_ACT_RELU},
        {"silu", EC_ACT_SILU}, {"swish", EC_ACT_SILU}, {"tanh", EC_ACT_TANH}, {"quick_gelu", EC_ACT_QUICK_GELU},
        {"relu2", EC_ACT_RELU2}};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (strcmp(name, acts[i].name) == 0)
            return acts[i].act;
    eci_hf_fail(r, key, "names an activation epochcast does not know (gelu, gelu_new, gelu_python, gelu_pytorch_tanh, "
                        "relu, silu, tanh, quick_gelu, relu2)");
    return EC_ACT_GELU;
}

/* Labels of a classification head: num_labels, else id2label's size, else HF's default 2. */
static int classes_of(jr *r, int def)
{
    json_t *labels = eci_hf_field(r, "id2label");
    if (eci_hf_field(r, "num_labels") != NULL)
        return eci_hf_int(r, "num_labels", def, 1, 1, 1L << 24);
    if (labels != NULL && json_is_object(labels) && json_object_size(labels) > 0)
        return (int)json_object_size(labels);
    return def;
}

/* The task of the checkpoint's class ("BertForMaskedLM" -> lm); "" for a bare model. */
static void task_of(jr *r, eci_arch *a)
{
    static const struct { const char *suffix, *task; } map[] = {
        {"ForSequenceClassification", "classify"}, {"ForQuestionAnswering", "squad"},
        {"ForTokenClassification", "token_classify"}, {"ForPreTraining", "pretrain"}, {"ForMaskedLM", "lm"},
        {"ForCausalLM", "lm"}, {"LMHeadModel", "lm"}, {"ForConditionalGeneration", "lm"},
        {"ForImageClassification", "imagenet"}};
    json_t *archs = eci_hf_field(r, "architectures");
    const char *cls = archs != NULL && json_is_array(archs) && json_array_size(archs) > 0 &&
                              json_is_string(json_array_get(archs, 0))
                          ? json_string_value(json_array_get(archs, 0))
                          : "";
    size_t n = strlen(cls);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t m = strlen(map[i].suffix);
        if (n >= m && strcmp(cls + n - m, map[i].suffix) == 0) {
            eci_strlcpy(a->default_task, map[i].task, sizeof a->default_task);
            return;
        }
    }
}

/* What every Hugging Face model shares. */
void eci_hf_common(jr *r, eci_arch *a)
{
    a->kind = ECI_ARCH_TRANSFORMER;
    a->loss_in_forward = 1; /* HF heads given labels return the loss from forward */
    a->attention = EC_NET_ATTN_CONFIG;
    a->classes = classes_of(r, 2);
    a->norm = EC_NORM_LAYER;
    a->norm_bias = 1;
    task_of(r, a);
}

/* Llama-style decoders (Llama, Mistral, Mixtral, Qwen2, Qwen-MoE, Gemma, Phi-3; Qwen3 and Llama 4
 * in hfconfig_2026.c): RMSNorm, rotary positions, SwiGLU, grouped-query attention, no dropout. */
void eci_hf_llama_like(jr *r, eci_arch *a)
{
    eci_hf_common(r, a);
    a->softmax_fp32 = 1; /* eager_attention_forward: softmax(..., dtype=torch.float32).to(query.dtype) */
    a->vocab = eci_hf_int(r, "vocab_size", 0, 1, 1, MAX_VOCAB);
    a->hidden = eci_hf_int(r, "hidden_size", 0, 1, 1, MAX_WIDTH);
    a->decoder_layers = eci_hf_int(r, "num_hidden_layers", 0, 1, 1, MAX_LAYERS);
    a->heads = eci_hf_int(r, "num_attention_heads", 0, 1, 1, MAX_HEADS);
    a->kv_heads = eci_hf_int(r, "num_key_value_heads", a->heads, 0, 1, MAX_HEADS);
    a->head_dim = eci_hf_int(r, "head_dim", 0, 0, 1, MAX_WIDTH);
    a->ffn = eci_hf_int(r, "intermediate_size", 0, a->experts == 0, 1, MAX_FFN);
    a->max_positions = eci_hf_int(r, "max_position_embeddings", 4096, 0, 1, MAX_POS);
    a->act = eci_hf_act(r, "hidden_act", eci_hf_str(r, "hidden_act", "silu"));
    a->norm = EC_NORM_RMS;
    a->norm_bias = 0;
    a->position = EC_POS_ROPE;
    a->gated = 1;
    a->qkv_bias = a->out_bias = eci_hf_bool(r, "attention_bias", 0);
    a->mlp_bias = eci_hf_bool(r, "mlp_bias", 0);
    a->attn_dropout = eci_hf_num(r, "attention_dropout", 0) > 0;
    a->final_norm = 1;
    a->tie = eci_hf_bool(r, "tie_word_embeddings", 0);
    a->default_seq_len = a->max_positions < 2048 ? a->max_positions : 2048;
}
