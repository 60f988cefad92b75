/*
 * workload.c: expands a network description (net.c: an ordered list of layers with repeated
 * blocks, and the head of the task) into the ops of one forward micro-step: GEMMs with
 * shapes, convolutions as implicit GEMMs, fused or eager attention, and memory-bound kernels
 * with the bytes they move and the activations they keep for backward.  One expansion serves
 * every network: shapes flow down the list (each layer reads the tensor the one before made).
 * The per-op accounting follows what PyTorch and Hugging Face run in eager mode; for BERT it
 * gives Korthikanti et al.'s 66·sbh + 9·a·s²·b bytes per layer in fp32, about 42·sbh + 7·a·s²·b
 * under autocast (docs/model.md; tests/unit/test_workload.c checks both).  A repeated block is
 * expanded once and recorded with its repetitions (eci_block): sim/ and memory.c multiply.
 * This file sets the builder up and runs it (the builder: workload_build.h; the layers:
 * workload_build.c, workload_blocks.c, workload_layers.c, workload_heads.c), then keeps a
 * pipeline stage's ops and sums them (workload_sums.c), finds the ops priced alike (twins), and
 * keeps the context's cache of recent expansions.
 */
#include "model/workload_build.h"
#include "catalog/consts.h"

#include <stdint.h>
#include <string.h>

/* ---- twins ---------------------------------------------------------------------------------- */
/* The fields eci_op_cost reads, bit for bit: two ops that agree on them cost the same. */
typedef struct cost_key {
    double m, n, k, batch, fwd_bytes, bwd_bytes, params, param_tensors, comm_bytes, conv_in_elems, conv_kernel,
        conv_stride, attn_keys_frac, l2_in_bytes[2], l2_reuse_bytes[2][2];
    int kind, tensor_math, fwd_kernels, bwd, count, fwd_coll, bwd_coll, group, hidden, frozen, fp8, attn_causal,
        conv_nhwc, in_normed, ring_waited, ring_te, linear_bias;
} cost_key;

static void cost_key_of(const eci_op *op, cost_key *key)
{
    memset(key, 0, sizeof *key);
    key->m = op->m;
    key->n = op->n;
    key->k = op->k;
    key->batch = op->batch;
    key->fwd_bytes = op->fwd_bytes;
    key->bwd_bytes = op->bwd_bytes;
    key->params = op->params;
    key->param_tensors = op->param_tensors;
    key->conv_in_elems = op->conv_in_elems;
    key->conv_kernel = op->conv_kernel;
    key->conv_stride = op->conv_stride;
    key->conv_nhwc = op->conv_nhwc;
    key->kind = op->kind;
    key->tensor_math = op->tensor_math;
    key->fwd_kernels = op->fwd_kernels;
    key->bwd = op->bwd;
    key->count = op->count;
    key->fwd_coll = op->fwd_coll;
    key->bwd_coll = op->bwd_coll;
    key->group = op->group;
    key->hidden = op->hidden;
    key->ring_waited = op->ring_waited;
    key->ring_te = op->ring_te;
    key->comm_bytes = op->comm_bytes;
    key->frozen = op->frozen;
    key->fp8 = op->fp8;
    key->in_normed = op->in_normed;
    key->linear_bias = op->linear_bias;
    key->attn_causal = op->attn_causal;
    key->attn_keys_frac = op->attn_keys_frac;
    memcpy(key->l2_in_bytes, op->l2_in_bytes, sizeof key->l2_in_bytes);
    memcpy(key->l2_reuse_bytes, op->l2_reuse_bytes, sizeof key->l2_reuse_bytes);
}

/* A hash of a key struct of `size` bytes (zeroed padding included), eight bytes at a time
 * (multiply-xorshift mixing); a tail shorter than eight bytes is left out. */
static uint64_t bytes_hash(const void *key, size_t size)
{
    uint64_t h = 0, w;
    const unsigned char *b = (const unsigned char *)key;
    for (size_t i = 0; i + sizeof w <= size; i += sizeof w) {
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15u;
        h ^= h >> 29;
    }
    return h;
}

/* Point each op at the first op with the same cost key, through an open-addressing table
 * of op indices (twice the ops' count in slots, so it never fills). */
static int find_twins(ec_ctx *ctx, eci_workload *wl)
{
    size_t n = wl->n_ops, slots = 2 * n + 1;
    size_t *table = eci_malloc(ctx, slots * sizeof *table);
    cost_key *keys = table != NULL ? eci_malloc(ctx, n * sizeof *keys) : NULL;
    if (keys == NULL) {
        eci_free(ctx, table, slots * sizeof *table);
        return EC_ENOMEM;
    }
    for (size_t s = 0; s < slots; s++)
        table[s] = n;
    for (size_t i = 0; i < n; i++) {
        cost_key_of(&wl->ops[i], &keys[i]);
        size_t s = (size_t)(bytes_hash(&keys[i], sizeof keys[i]) % slots);
        while (table[s] != n && memcmp(&keys[table[s]], &keys[i], sizeof keys[i]) != 0)
            s = (s + 1) % slots;
        if (table[s] == n)
            table[s] = i;
        wl->ops[i].twin = table[s];
    }
    eci_free(ctx, keys, n * sizeof *keys);
    eci_free(ctx, table, slots * sizeof *table);
    return EC_OK;
}

/* Bytes the batch needs on the GPU: input_ids and attention_mask (and token_type_ids) as
 * int64, the labels (per token for LM and token heads), or the images in fp32. */
static double input_bytes(const eci_net *net, const ec_head *hd, const eci_shape *sh)
{
    if (!net->text)
        return sh->batch * (net->image_channels * (double)sh->image_size * sh->image_size * 4.0 + 8.0);
    double T = sh->batch * sh->seq, types = 0;
    for (size_t i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == EC_LAYER_EMBEDDING && net->layers[i].u.embedding.type_vocab > 0)
            types = 1;
    double Tl = net->encdec ? sh->batch * sh->target_seq : T;
    int per_token = hd->kind == EC_HEAD_CAUSAL_LM || hd->kind == EC_HEAD_MASKED_LM ||
                    hd->kind == EC_HEAD_PRETRAIN || hd->kind == EC_HEAD_TOKEN_CLASSIFY;
    return T * 8.0 * (2.0 + types) + sh->batch * 16.0 + (per_token ? Tl * 8.0 : 0);
}

static const ec_head *find_head(const eci_net *net, int task)
{
    for (size_t i = 0; i < net->n_heads; i++)
        if (eci_task_parse(net->heads[i].task) == task)
            return &net->heads[i];
    return NULL;
}

void eci_workload_release(ec_ctx *ctx, eci_workload *wl)
{
    eci_free(ctx, wl->ops, wl->cap_ops * sizeof *wl->ops);
    eci_free(ctx, wl->blocks, wl->cap_blocks * sizeof *wl->blocks);
    memset(wl, 0, sizeof *wl);
}

int eci_workload_expand(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, eci_workload *wl)
{
    eci_op *ops = wl->ops;
    eci_block *blocks = wl->blocks;
    size_t cap_ops = wl->cap_ops, cap_blocks = wl->cap_blocks;
    memset(wl, 0, sizeof *wl); /* keep the arrays of an earlier expansion */
    wl->ops = ops;
    wl->cap_ops = cap_ops;
    wl->blocks = blocks;
    wl->cap_blocks = cap_blocks;
    const ec_head *hd = find_head(net, task);
    if (hd == NULL)
        return eci_error(ctx, EC_EINVAL, "model '%s' (%s) cannot run task '%s': it has heads for %s", net->id,
                         net->family, eci_task_name(task), net->tasks);
    int p = sh->precision;
    builder b = {.ctx = ctx, .wl = wl, .net = net, .sh = sh, .mask = sh->mask_bytes, .batch = sh->batch,
                 .tp = sh->tp > 1 ? sh->tp : 1, .cp = sh->cp > 1 ? sh->cp : 1, .ep = sh->ep > 1 ? sh->ep : 1,
                 .etp = sh->etp > 0 ? sh->etp : (sh->tp > 1 ? sh->tp : 1), /* 0: the dense tp */
                 .sp = sh->tp > 1 && sh->sp, .block = -1};
    b.amp = p == EC_PREC_AMP_FP16 || p == EC_PREC_AMP_BF16 || p == EC_PREC_AMP_FP8;
    b.cast_w = b.amp && !sh->weights_16;
    b.freeze = sh->lora_r > 0;
    int pure16 = p == EC_PREC_BF16 || p == EC_PREC_FP16;
    b.tensor_math = b.amp || pure16;
    b.act = (b.amp || pure16) ? 2.0 : 4.0;
    b.f32k = pure16 ? 2.0 : 4.0;
    b.eager = eci_net_attention_eager(net, sh->eager_attention);
    b.flash = !b.eager && net->attention == EC_NET_ATTN_CONFIG && sh->flash;
    if (!net->text) { /* the fp32 image */
        b.cur = (tensor){.image = 1, .n = sh->batch, .c = net->image_channels, .hw = sh->image_size, .f32 = 1};
        fresh(&b, &b.cur);
    }
    eci_wl_expand_list(&b, 0, net->n_layers, 0);
    if (b.rc == EC_OK && b.has_skip)
        eci_wl_shape_error(&b, "a RESIDUAL save is never added back");
    if (b.rc == EC_OK)
        eci_wl_head(&b, hd);
    if (b.rc != EC_OK)
        return b.rc == EC_ENOMEM ? eci_error(ctx, EC_ENOMEM, "out of memory expanding model '%s'", net->id) : b.rc;
    wl->tokens = net->text ? sh->batch * sh->seq : sh->batch;
    wl->input_bytes = input_bytes(net, hd, sh);
    if (sh->stage_hi > 0)
        eci_wl_keep_stage(wl, sh->stage_lo, sh->stage_hi);
    if (sh->fused) /* torch.compile's Inductor or a framework's fused kernels (fusion.c) */
        eci_fusion_apply(wl);
    eci_wl_l2_chains(ctx, wl);
    eci_wl_sum_up(wl);
    return find_twins(ctx, wl);
}

/* ---- the context's workload cache ------------------------------------------------------ */
/* A sweep predicts many configs that share a network, a task and a shape (all GPUs, all
 * optimizers, all DataLoader settings of one batch size), so the context keeps the last
 * ECI_WL_CACHE_ENTRIES expansions.  The key is everything eci_workload_expand reads: the
 * network (its registry entry, constant once registered: entries are never changed or
 * freed before the context), the task and every field of the shape.  Entries are allocated
 * on first use through the context's allocator and replaced round-robin. */
typedef struct wl_key {
    const eci_net *net;
    int task, precision, image_size, eager_attention, gelu_new_kernels, rmsnorm_kernels, rmsnorm_cast_kernels, rope_kernels;
    int gelu_python_kernels, act_impl;
    int tp, cp, cp_torch, ep, etp, sp, weights_16, stage_lo, stage_hi, flash, lora_r, lora_targets, base_16;
    int channels_last, fused, inference, unmasked, loss_sum, quant_head, loss_fp32, remat, lora_dropout, te_layers;
    int loss_fused, bias_pass, fp8_act_store, cp_a2a;
    double batch, seq, seq_sq, target_seq, mask_bytes, mlm_frac, rmsnorm_passes, rmsnorm_fp32_passes, base_quant_bytes;
} wl_key;

typedef struct wl_entry {
    wl_key key;
    eci_workload wl;
} wl_entry;

/* The keys' hashes side by side (0: the slot holds no valid expansion), so that a lookup reads
 * one entry, the one whose hash matches, not every entry's: a full cache of separately
 * allocated entries cost some fifty data-cache misses per prediction of a layout sweep.  hint
 * maps a hash's top byte to the slot that last held such a hash, tried before the scan. */
struct eci_wl_cache {
    wl_entry *entries[ECI_WL_CACHE_ENTRIES];
    uint64_t hash[ECI_WL_CACHE_ENTRIES];
    unsigned char hint[256];
    size_t next;          /* the slot to replace on the next miss */
    size_t hits, misses;  /* for tests and the speed benchmark */
    unsigned long long serials; /* expansions numbered so far (eci_workload.serial) */
};

static void make_key(const eci_net *net, int task, const eci_shape *sh, wl_key *k)
{
    memset(k, 0, sizeof *k); /* padding bytes too: keys are compared with memcmp */
    k->net = net;
    k->task = task;
    k->precision = sh->precision;
    k->image_size = sh->image_size;
    k->eager_attention = sh->eager_attention;
    k->gelu_new_kernels = sh->gelu_new_kernels;
    k->gelu_python_kernels = sh->gelu_python_kernels;
    k->act_impl = sh->act_impl;
    k->rmsnorm_kernels = sh->rmsnorm_kernels;
    k->rmsnorm_cast_kernels = sh->rmsnorm_cast_kernels;
    k->rope_kernels = sh->rope_kernels;
    k->channels_last = sh->channels_last;
    k->fused = sh->fused;
    k->inference = sh->inference;
    k->unmasked = sh->unmasked;
    k->loss_sum = sh->loss_sum;
    k->quant_head = sh->quant_head;
    k->loss_fp32 = sh->loss_fp32;
    k->loss_fused = sh->loss_fused;
    k->remat = sh->remat;
    k->te_layers = sh->te_layers;
    k->bias_pass = sh->bias_pass;
    k->fp8_act_store = sh->fp8_act_store;
    k->cp_a2a = sh->cp_a2a;
    k->batch = sh->batch;
    k->seq = sh->seq;
    k->seq_sq = sh->seq_sq;
    k->target_seq = sh->target_seq;
    k->mask_bytes = sh->mask_bytes;
    k->mlm_frac = sh->mlm_frac;
    k->rmsnorm_passes = sh->rmsnorm_passes;
    k->rmsnorm_fp32_passes = sh->rmsnorm_fp32_passes;
    k->tp = sh->tp;
    k->cp = sh->cp;
    k->cp_torch = sh->cp_torch;
    k->ep = sh->ep;
    k->etp = sh->etp;
    k->sp = sh->sp;
    k->weights_16 = sh->weights_16;
    k->stage_lo = sh->stage_lo;
    k->stage_hi = sh->stage_hi;
    k->flash = sh->flash;
    k->lora_r = sh->lora_r;
    k->lora_targets = sh->lora_targets;
    k->lora_dropout = sh->lora_dropout;
    k->base_16 = sh->base_16;
    k->base_quant_bytes = sh->base_quant_bytes;
}

_Static_assert(ECI_WL_CACHE_ENTRIES <= 256, "eci_wl_cache.hint holds slot numbers in a byte");

/* The slot holding key (hash its hash), or ECI_WL_CACHE_ENTRIES: the hinted slot, then the
 * slots in use (they fill from 0). */
static size_t find(const struct eci_wl_cache *c, const wl_key *key, uint64_t hash)
{
    size_t i = c->hint[hash >> 56];
    if (c->hash[i] == hash && memcmp(&c->entries[i]->key, key, sizeof *key) == 0)
        return i;
    for (i = 0; i < ECI_WL_CACHE_ENTRIES && c->entries[i] != NULL; i++)
        if (c->hash[i] == hash && memcmp(&c->entries[i]->key, key, sizeof *key) == 0)
            return i;
    return ECI_WL_CACHE_ENTRIES;
}

int eci_workload_get(ec_ctx *ctx, const eci_net *net, int task, const eci_shape *sh, const eci_workload **out)
{
    *out = NULL;
    if (ctx->wl_cache == NULL) {
        int rc = eci_ctx_on_free(ctx, eci_workload_cache_free);
        if (rc != EC_OK)
            return rc;
        if ((ctx->wl_cache = eci_calloc(ctx, 1, sizeof *ctx->wl_cache)) == NULL)
            return EC_ENOMEM;
    }
    struct eci_wl_cache *c = ctx->wl_cache;
    wl_key key;
    make_key(net, task, sh, &key);
    uint64_t hash = bytes_hash(&key, sizeof key) | 1; /* never 0, the empty slot's */
    size_t i = find(c, &key, hash);
    if (i < ECI_WL_CACHE_ENTRIES) {
        c->hits++;
        c->hint[hash >> 56] = (unsigned char)i;
        *out = &c->entries[i]->wl;
        return EC_OK;
    }
    c->misses++;
    size_t slot = c->next;
    if (c->entries[slot] == NULL && (c->entries[slot] = eci_calloc(ctx, 1, sizeof(wl_entry))) == NULL)
        return EC_ENOMEM;
    wl_entry *e = c->entries[slot];
    c->hash[slot] = 0; /* never matches while it holds no valid expansion */
    int rc = eci_workload_expand(ctx, net, task, sh, &e->wl);
    if (rc != EC_OK)
        return rc;
    e->key = key;
    c->hash[slot] = hash;
    c->hint[hash >> 56] = (unsigned char)slot;
    e->wl.serial = ++c->serials;
    c->next = (slot + 1) % ECI_WL_CACHE_ENTRIES;
    *out = &e->wl;
    return EC_OK;
}

void eci_workload_cache_stats(const ec_ctx *ctx, size_t *hits, size_t *misses)
{
    *hits = ctx->wl_cache != NULL ? ctx->wl_cache->hits : 0;
    *misses = ctx->wl_cache != NULL ? ctx->wl_cache->misses : 0;
}

void eci_workload_cache_free(ec_ctx *ctx)
{
    if (ctx->wl_cache == NULL)
        return;
    for (size_t i = 0; i < ECI_WL_CACHE_ENTRIES; i++)
        if (ctx->wl_cache->entries[i] != NULL) {
            eci_workload_release(ctx, &ctx->wl_cache->entries[i]->wl);
            eci_free(ctx, ctx->wl_cache->entries[i], sizeof(wl_entry));
        }
    eci_free(ctx, ctx->wl_cache, sizeof *ctx->wl_cache);
    ctx->wl_cache = NULL;
}

void eci_shape_probe(const eci_net *net, eci_shape *sh)
{
    *sh = (eci_shape){.precision = EC_PREC_FP32, .batch = 1, .seq = 8, .seq_sq = 64, .target_seq = 8,
                      .image_size = net->image_size > 0 ? net->image_size : 224, .mask_bytes = 1,
                      .mlm_frac = 0.15, .gelu_new_kernels = 1, .rmsnorm_kernels = 1, .rmsnorm_passes = 2,
                      .rope_kernels = 1};
}

double eci_workload_params(ec_ctx *ctx, const eci_net *net, int task)
{
    eci_workload wl = {0};
    eci_shape sh;
    eci_shape_probe(net, &sh);
    double p = eci_workload_expand(ctx, net, task, &sh, &wl) == EC_OK ? wl.params : 0;
    eci_workload_release(ctx, &wl);
    return p;
}
