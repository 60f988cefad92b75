/*
 * arch.h: the hyperparameters of a network family member (what a Hugging Face config.json or a
 * torchvision constructor fixes) and the builder that turns them into a network description
 * (arch.c).  hfconfig.c fills an eci_arch from a config file; net.c registers what the builder
 * makes.  Nothing here prices anything: that is workload.c's, from the description alone.
 */
#ifndef EC_ARCH_H
#define EC_ARCH_H

#include "catalog/catalog.h"

typedef enum { ECI_ARCH_TRANSFORMER = 0, ECI_ARCH_RESNET } eci_arch_kind;

typedef struct eci_arch {
    char model_type[48];     /* config.json model_type, or torchvision_resnet / torchvision_vit */
    eci_arch_kind kind;
    /* --- transformers ---------------------------------------------------------------- */
    int encoder_layers;      /* bidirectional layers (BERT, ViT, T5's encoder) */
    int decoder_layers;      /* causal layers (GPT, Llama, T5's decoder: with cross-attention when
                                encoder_layers > 0) */
    int hidden, heads, kv_heads, head_dim, ffn;
    int vocab, max_positions, type_vocab;
    int embedding_size;      /* ALBERT: factorized embedding width (0 = hidden) */
    int emb_fused;           /* GPT-2: wte + wpe in one pass */
    int emb_scale;           /* Gemma: x sqrt(hidden) */
    int emb_norm;            /* a LayerNorm after the embeddings (BERT family) */
    int emb_dropout;
    int learned_positions;   /* learned absolute positions (max_positions rows) */
    ec_position position;    /* what attention adds: RoPE, ALiBi, relative buckets, none */
    int rel_buckets;         /* T5 */
    int relative_span;       /* DeBERTa-v2: position buckets of the disentangled attention */
    ec_norm_kind norm;       /* LayerNorm or RMSNorm */
    int norm_bias;
    int norm_low_precision;  /* the norms run in the 16-bit dtype under autocast (MPT's low_precision_layernorm) */
    int post_norm;           /* BERT: norm after the residual add; 0: pre-norm */
    int final_norm;          /* a norm after the last layer */
    int sandwich_norms;      /* Gemma 2: norms after attention and MLP as well */
    ec_activation act;
    int gated;               /* SwiGLU / GeGLU */
    int mlp_bias, mlp_dropout;
    int qkv_fused, qkv_bias, out_bias;
    int attn_dropout;        /* dropout on the attention probabilities */
    int dropout;             /* dropout after attention and MLP outputs */
    int ffn_no_dropout;      /* ALBERT: the dropout after attention only (AlbertLayer adds the FFN's output as it is) */
    int window;              /* sliding window (tokens), 0 = none */
    int window_every;        /* 1: every layer, 2: every other layer starting with the first (Gemma 2) */
    int parallel;            /* attention and MLP read the same input (GPT-NeoX, Falcon) */
    int parallel_one_norm;   /* with parallel: one norm feeds both (Falcon-7B) */
    int shared_layers;       /* ALBERT: one layer's weights used by every repetition */
    int qk_norm, softcap;
    int tie;                 /* LM head tied to the token embedding */
    int fused_loss;          /* a fused cross-entropy kernel on the 16-bit logits (llm-foundry's fused_crossentropy) */
    int metric_losses;       /* no-grad cross-entropies per micro-step for training metrics (llm-foundry + Composer: 2) */
    int lm_bias;
    /* mixture of experts */
    int experts, top_k, expert_ffn, shared_experts, shared_ffn, shared_gate;
    /* vision transformers */
    int vision;              /* patches input (ViT, CLIP's vision tower) */
    int image_size, channels, patch, patch_bias;
    int vision_pre_norm;     /* CLIP: a LayerNorm before the layers */
    /* --- ResNet (torchvision) ------------------------------------------------------------ */
    int bottleneck;          /* 1: bottleneck blocks (resnet50+), 0: basic blocks (resnet18/34) */
    int stages[4];
    /* --- heads and defaults ------------------------------------------------------------- */
    int classes;             /* labels of classification heads */
    int has_pretrain;        /* BERT's MLM + NSP pre-training head */
    int no_classify;         /* no sequence/token classification heads (T5) */
    char default_task[24];
    int default_seq_len;
    int loss_in_forward;
    ec_attention_impl attention;
    /* Appended for issue 19 (OPT). */
    int emb_proj_nobias;     /* the projection after a narrower embedding has no bias (OPT's project_in) */
    int out_proj;            /* width of a projection (no bias) after the last layer, before the head
                                (OPT's project_out), 0 = none */
    int softmax_fp32;        /* eager attention upcasts the softmax to fp32 in a 16-bit model */
    /* Appended for issue 41 (DeepSeek-V3, gpt-oss: hfconfig_moe2026.c). */
    int q_rank, kv_rank;     /* multi-head latent attention: the query and key/value ranks (0 = none) */
    int rope_dim;            /* its decoupled rotary part of head_dim */
    int v_head_dim;          /* value head width, 0 = head_dim */
    int sinks;               /* a learned sink logit per attention head */
    int moe_bias;            /* biases on the router and the experts' linears */
    int dense_layers;        /* with experts: the first dense_layers layers have a dense MLP of ffn */
    /* Appended for issue 41 (Gemma 3, Llama 4).  A layer pattern the stack repeats: layer i is
     * position i % layer_period of it, and bit j of each mask says what position j has
     * (layer_period 0 or 1: every layer alike, as window and window_every say). */
    int layer_period;        /* 1..ECI_ARCH_MAX_PERIOD */
    uint64_t local_mask;     /* the layer attends within window (sliding window; Llama 4's chunks) */
    uint64_t nope_mask;      /* the layer adds no position encoding (Llama 4's NoPE layers) */
    uint64_t dense_mask;     /* the layer has a dense MLP of ffn, not the experts (Llama 4 Maverick) */
    int64_t idle_params;     /* parameters text does not run: a multimodal checkpoint's vision tower and
                                projector (held, trained and stepped as the others are) */
} eci_arch;

#define ECI_ARCH_MAX_PERIOD 64

/* A description under construction (arch.c); layers and head tasks owned. */
typedef struct eci_desc {
    ec_ctx *ctx;
    ec_layer *layers;
    size_t n_layers, cap_layers;
    ec_head heads[8];
    size_t n_heads;
    int rc;
} eci_desc;

/* Build the description of a; def points into d (and into a for the family and task) until
 * eci_desc_free.  EC_EINVAL naming the field when the hyperparameters cannot make a network
 * (heads not dividing hidden, a zero dimension), EC_ENOMEM. */
EC_INTERNAL int eci_arch_build(ec_ctx *ctx, const eci_arch *a, const char *id, eci_desc *d, ec_network_def *def);
EC_INTERNAL void eci_desc_free(eci_desc *d);

/* Read a config file (Hugging Face config.json, or epochcast's torchvision_* format) into a.
 * Errors name the file, and the line and column (malformed JSON) or the field (a missing
 * field, an unsupported model_type with the supported list, a value out of range). */
EC_INTERNAL int eci_hf_load(ec_ctx *ctx, const char *path, eci_arch *a);
/* Parse from memory; name is used in messages in place of a path. */
EC_INTERNAL int eci_hf_parse(ec_ctx *ctx, const char *name, const char *text, size_t len, eci_arch *a);
/* A config.json is at most ECI_HF_MAX_BYTES (a Hugging Face config with 22,000 labels in
 * id2label and label2id is about 1.7 MB), and the tree jansson makes of it at most
 * ECI_HF_TREE_MAX_BYTES by eci_hf_tree_bytes's bound, which is charged to the context's
 * allocator while the tree lives. */
#define ECI_HF_MAX_BYTES (4 << 20)
#define ECI_HF_TREE_MAX_BYTES (256 << 20)
/* An upper bound on the bytes jansson 2.14 (with glibc's malloc, 16 bytes of overhead a block)
 * holds at its peak while parsing text: per object, array, value after ',' or ':' and string
 * (plus its bytes); measured worst cases per element 250 ("{}," in an array), 154 ("[],"), 106
 * ("\"\","), 50 ("0,"), and checked for a set of shapes by test_hfconfig's tree_bound test. */
#define ECI_HF_TREE_BASE_BYTES 4096
#define ECI_HF_TREE_OBJECT_BYTES 320
#define ECI_HF_TREE_ARRAY_BYTES 192
#define ECI_HF_TREE_VALUE_BYTES 96
#define ECI_HF_TREE_STRING_BYTES 96
EC_INTERNAL size_t eci_hf_tree_bytes(const char *text, size_t len);
/* The model_type values eci_hf_load understands, ", "-separated. */
EC_INTERNAL const char *eci_hf_supported(void);

#endif /* EC_ARCH_H */
