/*
 * model/net.h: network descriptions as the context keeps them (net.c): presets of
 * models/networks.csv, networks defined through ec_network_define, and config.json files
 * named by model=PATH.  Registering one checks it and expands it once (workload.c) for its
 * parameter count.
 */
#ifndef EC_NET_H
#define EC_NET_H

#include "catalog/catalog.h"

/* ---- network (net.c): a description owned by the context's registry ------------- */
/* Presets (models/networks.csv rows, each naming a config file in models/networks/), networks
 * defined through ec_network_define, and config.json files named by model=PATH all end up
 * here, each allocated on its own so that pointers stay valid while the registry grows. */
typedef struct eci_net {
    char *id, *family, *default_task, *source;
    char *path;            /* the config.json a model=PATH network was read from, NULL otherwise */
    char *tasks;           /* ", "-separated tasks of its heads */
    ec_layer *layers;      /* the layers, in order */
    size_t n_layers;
    ec_head *heads;        /* task strings owned (head_tasks) */
    size_t n_heads;
    char **head_tasks;
    int default_seq_len, max_positions, image_size, image_channels;
    int loss_in_forward;   /* 1: forward returns the loss (HF heads given labels); 0: logits only */
    int attention;         /* ec_attention_impl */
    int text;              /* starts with an EMBEDDING (token input) */
    int encdec;            /* has a DECODER: an encoder-decoder */
    int cnn;               /* a CNN: convolutions and no attention, MLP or MoE block (a ViT is not):
                              its memory-bound kernels take mem_scale_cnn (compute.c) */
    int mlp;               /* has MLP or MoE layers, whose activation the key activation can set */
    int listed;            /* a preset or a defined network (ec_model_count); 0 for config.json paths */
    char *published_task;  /* the task whose head the published count is for */
    double published_params;
    double params;         /* parameter count with the default task head (computed when registered) */
    double params_published; /* ... with the published_task head, to compare with published_params */
} eci_net;

EC_INTERNAL int eci_net_load(ec_ctx *ctx, const char *path); /* networks.csv; configs beside it */
EC_INTERNAL void eci_net_free(ec_ctx *ctx);
/* A preset or defined network by id (exact, then eci_name_eq), else a config.json path (read
 * once per context and kept); EC_ENOTFOUND with the nearest ids otherwise. */
EC_INTERNAL const eci_net *eci_net_find(ec_ctx *ctx, const char *name);
/* The same with the failure's status in *rc (EC_ENOTFOUND, or a bad config file's EC_EPARSE,
 * EC_EINVAL, EC_ENOTSUP, EC_EIO, EC_ENOMEM). */
EC_INTERNAL const eci_net *eci_net_find_rc(ec_ctx *ctx, const char *name, int *rc);
/* model=owner/name that is no path here (hfid.c): whether name has the shape of a Hugging Face
 * id; the one of ids (n of them) its name matches, NULL when none does; EC_ENOTFOUND saying
 * where to download its config.json. */
EC_INTERNAL int eci_hf_id_like(const char *name);
EC_INTERNAL const char *eci_hf_id_preset(const char *name, const char *const *ids, size_t n);
EC_INTERNAL int eci_hf_id_error(ec_ctx *ctx, const char *name);
/* Check a description and register a copy of it (listed: shown by ec_model_count). */
/* Define on dst every network defined on src (ec_network_define, Lua's ec.network), in src's
 * order; presets and config.json paths are dst's own (loaded, or read when first named). */
EC_INTERNAL int eci_net_copy_defined(ec_ctx *dst, const ec_ctx *src);
EC_INTERNAL int eci_net_add(ec_ctx *ctx, const ec_network_def *def, int listed, const char *path,
                            const eci_net **out);


/* A network computes attention op by op (no fused kernel): it has no fused path (EC_NET_ATTN_EAGER), or
 * takes the config's attention= and that is eager (attention_eager); the workload and the
 * calibration's record of kernels (attn_rates.c, eci_attn_kernel_of) read this one rule. */
static inline int eci_net_attention_eager(const eci_net *net, int attention_eager)
{
    return net->attention == EC_NET_ATTN_EAGER || (net->attention == EC_NET_ATTN_CONFIG && attention_eager);
}

#endif /* EC_NET_H */
