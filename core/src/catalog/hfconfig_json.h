/*
 * hfconfig_json.h: the JSON field readers of a config.json (hfconfig_json.c), private to
 * hfconfig*.c: what the per-model_type readers of hfconfig.c read their fields with.
 */
#ifndef EC_HFCONFIG_JSON_H
#define EC_HFCONFIG_JSON_H

#include "catalog/arch.h"

#include <jansson.h>

/* Ranges that rule out absurd configs (and int overflow in products of them), for every reader
 * of a config.json (hfconfig*.c). */
#define MAX_LAYERS 10000L
#define MAX_WIDTH (1L << 20)
#define MAX_HEADS (1L << 14)
#define MAX_FFN (1L << 24)
#define MAX_VOCAB (1L << 26)
#define MAX_POS (1L << 24)
#define MAX_EXPERTS (1L << 16)
#define MAX_IMAGE 65536L

/* The reader: one JSON object of a config file, the first error wins. */
typedef struct jr {
    ec_ctx *ctx;
    const char *name;  /* file, for messages */
    json_t *obj;
    const char *type;  /* model_type, for messages */
    int rc;
} jr;

/* The field key of the object, NULL when absent or null. */
EC_INTERNAL json_t *eci_hf_field(jr *r, const char *key);
/* Fail with "field 'key' what" unless an error came first. */
EC_INTERNAL void eci_hf_fail(jr *r, const char *key, const char *what);
/* An integer field in [lo, hi]; an absent one is def, or an error when required. */
EC_INTERNAL int eci_hf_int(jr *r, const char *key, int def, int required, long lo, long hi);
/* The first of several names a field goes by (n_embd / hidden_size ...); keys end in NULL. */
EC_INTERNAL int eci_hf_int_any(jr *r, const char *const *keys, int def, int required, long lo, long hi);
/* A number, a boolean (or 0 / 1) and a string field; an absent one is def. */
EC_INTERNAL double eci_hf_num(jr *r, const char *key, double def);
EC_INTERNAL int eci_hf_bool(jr *r, const char *key, int def);
EC_INTERNAL const char *eci_hf_str(jr *r, const char *key, const char *def);
/* The activation an HF name (of field key) launches. */
EC_INTERNAL ec_activation eci_hf_act(jr *r, const char *key, const char *name);
/* What every Hugging Face model shares: a transformer with LayerNorm, the labels of its
 * classification head, the task of its class. */
EC_INTERNAL void eci_hf_common(jr *r, eci_arch *a);

/* hfconfig_moe2026.c: the readers of model_type deepseek_v2 / deepseek_v3 and gpt_oss. */
EC_INTERNAL void eci_hf_map_deepseek(jr *r, eci_arch *a);
EC_INTERNAL void eci_hf_map_gpt_oss(jr *r, eci_arch *a);
/* The fields of a Llama-style decoder (RMSNorm, RoPE, SwiGLU, grouped-query attention), which
 * the readers of hfconfig.c and hfconfig_2026.c share. */
EC_INTERNAL void eci_hf_llama_like(jr *r, eci_arch *a);
/* The model families of issue 41 (hfconfig_2026.c), as hfconfig.c's TYPES table calls them. */
EC_INTERNAL void eci_hf_map_qwen3(jr *r, eci_arch *a);
EC_INTERNAL void eci_hf_map_nemotron(jr *r, eci_arch *a);
EC_INTERNAL void eci_hf_map_gemma3_text(jr *r, eci_arch *a);
EC_INTERNAL void eci_hf_map_gemma3(jr *r, eci_arch *a);
EC_INTERNAL void eci_hf_map_llama4_text(jr *r, eci_arch *a);
EC_INTERNAL void eci_hf_map_llama4(jr *r, eci_arch *a);

#endif /* EC_HFCONFIG_JSON_H */
