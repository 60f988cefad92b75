/*
 * layout.c: the parallel layout of a config (docs/DESIGN.md 3.3): the data, tensor, pipeline,
 * context and expert degrees (num_gpus = dp x tp x pp x cp, Megatron's rank order with tensor
 * parallelism innermost; the expert layers' etp x ep x edp of each stage), GPUs per node and nodes, the inter-node network preset, and the
 * checks that refuse a layout that cannot run: degrees that do not divide, tensor parallelism
 * across nodes, FP8 or FlashAttention where the GPU or precision cannot, LoRA combined with
 * what PEFT does not support.  Every refusal names the keys at fault.
 */
#include "model/layout.h"
#include "catalog/consts.h"
#include "model/compute.h"
#include "model/workload.h"

#include <string.h>

static int has_kind(const eci_net *net, ec_layer_kind kind)
{
    for (size_t i = 0; i < net->n_layers; i++)
        if (net->layers[i].kind == kind)
            return 1;
    return 0;
}

/* Does a checkpointed block hold a matmul (nn.Linear, attention, MLP, MoE): what
 * checkpointing=selective_op keeps? */
static int has_checkpointed_matmul(const eci_net *net)
{
    for (size_t i = 0; i < net->n_layers; i++) {
        const ec_layer *l = &net->layers[i];
        if (l->kind != EC_LAYER_REPEAT || !l->u.repeat.checkpoint)
            continue;
        for (size_t j = i + 1; j < net->n_layers && j <= i + (size_t)l->u.repeat.layers; j++) {
            ec_layer_kind k = net->layers[j].kind;
            if (k == EC_LAYER_LINEAR || k == EC_LAYER_ATTENTION || k == EC_LAYER_MLP || k == EC_LAYER_MOE)
                return 1;
        }
    }
    return 0;
}

static int check_degrees(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r)
{
    int model_par = cfg->tp * cfg->pp * cfg->cp;
    if (cfg->num_gpus % model_par != 0)
        return eci_error(ctx, EC_EINVAL, "num_gpus=%d is not divisible by tp x pp x cp = %d (tp=%d, pp=%d, cp=%d): "
                         "num_gpus = dp x tp x pp x cp", cfg->num_gpus, model_par, cfg->tp, cfg->pp, cfg->cp);
    r->tp = cfg->tp;
    r->pp = cfg->pp;
    r->cp = cfg->cp;
    r->dp = cfg->num_gpus / model_par;
    r->ep = cfg->ep;
    /* Megatron-Core's parallel folding (parallel_state.py initialize_model_parallel @d98e8a64 L870-895:
     * a second RankGenerator, order tp-ep-dp-pp, tp = expert_tensor_parallel_size, default the
     * dense tp): the expert layers lay the tp x cp x dp GPUs of a stage out as etp x ep x edp */
    r->etp = cfg->etp > 0 ? cfg->etp : cfg->tp;
    int stage = r->tp * r->cp * r->dp;
    if (stage % (r->ep * r->etp) != 0)
        return eci_error(ctx, EC_EINVAL, "ep=%d x etp=%d must divide a pipeline stage's GPUs tp x cp x dp = %d x %d "
                         "x %d = %d (Megatron-Core's expert layout: etp x ep x expert data parallel)", cfg->ep,
                         r->etp, r->tp, r->cp, r->dp, stage);
    r->edp = stage / (r->ep * r->etp);
    if (r->etp > r->per_node)
        return eci_error(ctx, EC_EINVAL, "etp=%d exceeds gpus_per_node=%d: expert tensor parallelism stays within "
                         "a node", r->etp, r->per_node);
    if (r->etp != r->tp && r->tp > 1 && !cfg->sequence_parallel)
        return eci_error(ctx, EC_EINVAL, "etp=%d with tp=%d needs sequence_parallel=1 (Megatron-Core trains MoE "
                         "layers under tensor parallelism only with sequence parallelism: moe_layer.py)", r->etp,
                         r->tp);
    if (r->tp > r->per_node)
        return eci_error(ctx, EC_EINVAL, "tp=%d exceeds gpus_per_node=%d: tensor parallelism stays within a node "
                         "(its all-reduces run every layer, over NVLink)", cfg->tp, r->per_node);
    if (cfg->sequence_parallel && r->tp < 2)
        return eci_error(ctx, EC_EINVAL, "sequence_parallel=1 needs tp > 1 (it splits the sequence across the "
                         "tensor-parallel group)");
    if (cfg->tp_comm_overlap && (cfg->kernels != EC_KERNELS_TE || !cfg->sequence_parallel))
        return eci_error(ctx, EC_EINVAL, "tp_comm_overlap=1 needs kernels=te and sequence_parallel=1 (Transformer "
                         "Engine's userbuffers overlap the sequence-parallel collectives; Megatron-LM "
                         "arguments.py: --tp-comm-overlap only with sequence parallelism)");
    if (cfg->tp_comm_overlap && eci_tp_overlap_index(ctx, cfg->tp_overlap_cfg) < 0)
        return EC_ENOTFOUND; /* the message names the key and lists the ids */
    if (cfg->pp_chunks > 1 && cfg->pp_schedule != EC_PP_INTERLEAVED)
        return eci_error(ctx, EC_EINVAL, "pp_chunks=%d needs pp_schedule=interleaved", cfg->pp_chunks);
    if (cfg->pp_schedule == EC_PP_INTERLEAVED && (r->pp < 2 || cfg->pp_chunks < 2))
        return eci_error(ctx, EC_EINVAL, "pp_schedule=interleaved needs pp > 1 and pp_chunks > 1 (model chunks "
                         "per stage)");
    if (cfg->pp_split != EC_PP_SPLIT_LAYERS && r->pp < 2)
        return eci_error(ctx, EC_EINVAL, "pp_split=%s needs pp > 1 (it says how the pipeline's stages split the "
                         "layers)", eci_pp_split_name(cfg->pp_split));
    return EC_OK;
}

/* The embedding (e) and the loss (l) pp_split counts as a layer each: 0 or 1. */
static void split_extra(int split, int *e, int *l)
{
    *e = split == EC_PP_SPLIT_EMBEDDING || split == EC_PP_SPLIT_EMBEDDING_LOSS;
    *l = split == EC_PP_SPLIT_LOSS || split == EC_PP_SPLIT_EMBEDDING_LOSS;
}

const char *eci_pp_split_name(int split)
{
    static const char *const names[] = {"layers", "embedding", "loss", "embedding_loss"};
    return split >= 0 && split < (int)(sizeof names / sizeof names[0]) ? names[split] : "?";
}

/* Megatron-Core's split (megatron/core/transformer/transformer_block.py get_num_layers_to_build,
 * transformer_layer.py get_transformer_layer_offset): with account_for_embedding_in_pipeline_split
 * and account_for_loss_in_pipeline_split the embedding and the loss each count as one layer, the
 * L + e + l of them split evenly over the pp x v chunks, and the first chunk (the last) builds one
 * transformer layer fewer.  A stage's chunks are priced as one run of its layers. */
void eci_pp_stage_range(const ec_config *cfg, int layers, int pp, int s, int *lo, int *hi)
{
    int e, l;
    split_extra(cfg->pp_split, &e, &l);
    long all = (long)layers + e + l;
    long a = (long)s * all / pp - e, b = (long)(s + 1) * all / pp - e;
    *lo = a < 0 ? 0 : a > layers ? layers : (int)a;
    *hi = b < *lo ? *lo : b > layers ? layers : (int)b;
}

/* Checks that need the network. */
static int check_network(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r)
{
    const eci_net *net = r->net;
    /* the layer scans only where a check needs them (a ResNet's 170 layers, every prediction) */
    int staged = r->pp > 1 || cfg->pp_schedule == EC_PP_INTERLEAVED;
    int layers = staged ? eci_net_pipeline_layers(net) : 0;
    if ((r->tp > 1 || r->cp > 1) && !has_kind(net, EC_LAYER_ATTENTION))
        return eci_error(ctx, EC_EINVAL, "tp=%d, cp=%d: tensor and context parallelism split attention and MLP "
                         "blocks; '%s' has none", r->tp, r->cp, net->id);
    if (r->pp > 1 && layers < r->pp * cfg->pp_chunks)
        return eci_error(ctx, EC_EINVAL, "pp=%d x pp_chunks=%d stages need as many repeated layers; '%s' has %d",
                         r->pp, cfg->pp_chunks, net->id, layers);
    int e, l;
    split_extra(cfg->pp_split, &e, &l);
    int counted = layers + e + l, chunks = r->pp * (cfg->pp_schedule == EC_PP_INTERLEAVED ? cfg->pp_chunks : 1);
    if (cfg->pp_split != EC_PP_SPLIT_LAYERS && counted % chunks != 0)
        return eci_error(ctx, EC_EINVAL, "pp_split=%s: the %d layers of '%s' with the %s (%d) must divide into "
                         "pp%s = %d %s (Megatron-Core's split)", eci_pp_split_name(cfg->pp_split), layers, net->id,
                         e && l ? "embedding and the loss" : e ? "embedding" : "loss", counted,
                         chunks > r->pp ? " x pp_chunks" : "", chunks, chunks > r->pp ? "chunks" : "stages");
    if (cfg->pp_split == EC_PP_SPLIT_LAYERS && cfg->pp_schedule == EC_PP_INTERLEAVED &&
        layers % (r->pp * cfg->pp_chunks) != 0)
        return eci_error(ctx, EC_EINVAL, "pp_schedule=interleaved: the %d layers of '%s' must divide into pp x "
                         "pp_chunks = %d chunks (or count the embedding and the loss as a layer each, as "
                         "Megatron-Core can: pp_split=embedding_loss)", layers, net->id, r->pp * cfg->pp_chunks);
    if (r->ep > 1 && !has_kind(net, EC_LAYER_MOE))
        return eci_error(ctx, EC_EINVAL, "ep=%d applies to mixture-of-experts networks; '%s' has no MoE layer",
                         r->ep, net->id);
    if (cfg->etp > 0 && !has_kind(net, EC_LAYER_MOE))
        return eci_error(ctx, EC_EINVAL, "etp=%d applies to mixture-of-experts networks; '%s' has no MoE layer",
                         cfg->etp, net->id);
    if (r->cp > 1 && r->seq % (2 * r->cp) != 0)
        return eci_error(ctx, EC_EINVAL, "cp=%d: seq_len=%d must divide into 2 x cp = %d chunks (load-balanced "
                         "causal context parallelism)", r->cp, r->seq, 2 * r->cp);
    if (cfg->checkpointing == EC_CKPT_SELECTIVE && !has_kind(net, EC_LAYER_ATTENTION))
        return eci_error(ctx, EC_EINVAL, "checkpointing=selective recomputes the attention core; '%s' has no "
                         "attention", net->id);
    if (cfg->checkpointing == EC_CKPT_OP && !has_checkpointed_matmul(net))
        return eci_error(ctx, EC_EINVAL, "checkpointing=selective_op keeps the outputs of every second matmul and "
                         "of the attention in each checkpointed layer; '%s' has no linear, attention or MLP layer "
                         "in one (checkpointing=1 recomputes its layers whole)", net->id);
    return EC_OK;
}

static int check_precision(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r)
{
    const eci_gpu *g = r->gpu;
    if (cfg->precision == EC_PREC_AMP_FP8 && !(g->peak_fp8_flop_per_s > 0))
        return eci_error(ctx, EC_EINVAL, "precision=amp_fp8 needs FP8 tensor cores (Ada, Hopper, Blackwell, CDNA3); "
                         "gpu=%s has none (models/gpus.csv peak_fp8_flop_per_s = 0): use amp_bf16", g->id);
    if (cfg->attention != EC_ATTN_SDPA && cfg->attention != EC_ATTN_EAGER) {
        const char *name = eci_attention_name(cfg->attention);
        if (cfg->attention == EC_ATTN_CUDNN_FP8 && cfg->precision != EC_PREC_AMP_FP8)
            return eci_error(ctx, EC_EINVAL, "attention=cudnn_fp8 (Transformer Engine's FP8 attention) runs inside "
                             "its FP8 autocast: it needs precision=amp_fp8 (attention=cudnn is cuDNN's 16-bit kernel)");
        int half = cfg->precision != EC_PREC_FP32 && cfg->precision != EC_PREC_TF32;
        if (!half)
            return eci_error(ctx, EC_EINVAL, "attention=%s runs in fp16 or bf16: use precision=amp_bf16, "
                             "amp_fp16, bf16, fp16 or amp_fp8", name);
        if (g->compute_capability < 8.0)
            return eci_error(ctx, EC_EINVAL, "attention=%s needs compute capability 8.0 or later (Ampere); %s has "
                             "%.1f", name, g->id, g->compute_capability);
        int k = eci_attn_kernel_for(ctx, g, cfg->attention, cfg->precision, cfg->torch_release, 0);
        if (g->attn[k].from == ECI_AK_NONE) /* attention.csv: neither a row for the architecture nor a prior */
            return eci_error(ctx, EC_EINVAL, "attention=%s: %s (%s) cannot run it: models/attention.csv has no %s "
                             "row for architecture '%s'%s", name, g->id, g->architecture, eci_attn_kernel_name(k),
                             g->architecture, k == ECI_AK_FLASH3 ? " (FlashAttention-3 runs on Hopper only: use "
                             "attention=flash2 or cudnn)" : k == ECI_AK_FLASH4 ? " (FlashAttention-4: public rates "
                             "for Blackwell only; use attention=flash3, flash2 or cudnn)" : k == ECI_AK_CUDNN_FP8 ?
                             " (cuDNN's FP8 attention: public rates for Hopper and Blackwell; use attention=cudnn)" : "");
    }
    return EC_OK;
}

static int check_strategy(ec_ctx *ctx, const ec_config *cfg, const eci_resolved *r)
{
    int sharded = r->strategy == EC_STRATEGY_FSDP || r->strategy == EC_STRATEGY_ZERO;
    if (r->strategy == EC_STRATEGY_DP && (r->tp > 1 || r->pp > 1 || r->cp > 1))
        return eci_error(ctx, EC_EINVAL, "strategy=dp (DataParallel) cannot combine with tp, pp or cp");
    if (r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage == 0)
        return eci_error(ctx, EC_EINVAL, "strategy=zero needs zero_stage=1, 2 or 3");
    if (r->strategy != EC_STRATEGY_ZERO && cfg->zero_stage != 0)
        return eci_error(ctx, EC_EINVAL, "key 'zero_stage' applies to strategy=zero (DeepSpeed)");
    if (cfg->zero_reduce != EC_ZERO_REDUCE_SCATTER && (r->strategy != EC_STRATEGY_ZERO || cfg->zero_stage == 3))
        return eci_error(ctx, EC_EINVAL, "key 'zero_reduce' applies to strategy=zero with zero_stage=1 or 2 (ZeRO-3 "
                         "reduce-scatters its gradients)");
    if (cfg->zero_shard_size > 0 && (r->strategy != EC_STRATEGY_ZERO || cfg->zero_stage == 3))
        return eci_error(ctx, EC_EINVAL, "key 'zero_shard_size' applies to strategy=zero with zero_stage=1 or 2 "
                         "(FSDP: sharding=hybrid_shard)");
    if (cfg->zero_shard_size > 0 && (r->dp * r->cp) % cfg->zero_shard_size != 0)
        return eci_error(ctx, EC_EINVAL, "zero_shard_size=%d must divide the data-parallel ranks (dp x cp = %d)",
                         cfg->zero_shard_size, r->dp * r->cp);
    if (r->strategy != EC_STRATEGY_FSDP && cfg->sharding != EC_SHARD_FULL)
        return eci_error(ctx, EC_EINVAL, "key 'sharding' applies to strategy=fsdp");
    if (cfg->offload != EC_OFFLOAD_NONE && !sharded)
        return eci_error(ctx, EC_EINVAL, "key 'offload' needs strategy=zero or fsdp (their CPU offload)");
    if (cfg->offload == EC_OFFLOAD_OPTIMIZER && r->strategy == EC_STRATEGY_FSDP)
        return eci_error(ctx, EC_EINVAL, "offload=optimizer: FSDP's CPUOffload moves the parameters and the "
                         "optimizer together; use offload=optimizer_and_params");
    if (cfg->offload == EC_OFFLOAD_OPTIMIZER_AND_PARAMS && r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage < 3)
        return eci_error(ctx, EC_EINVAL, "offload=optimizer_and_params needs zero_stage=3 (ZeRO-Infinity)");
    if (sharded && (r->pp > 1) && r->strategy == EC_STRATEGY_ZERO && cfg->zero_stage > 1)
        return eci_error(ctx, EC_EINVAL, "zero_stage=%d with pp > 1: DeepSpeed pipelines combine with ZeRO-1 only",
                         cfg->zero_stage);
    int nf4 = cfg->base_precision == EC_BASE_NF4 || cfg->base_precision == EC_BASE_NF4_NODQ;
    if (cfg->lora_r > 0 && (nf4 || cfg->base_precision == EC_BASE_INT8) && (r->tp > 1 || r->pp > 1))
        return eci_error(ctx, EC_EINVAL, "lora_r=%d with base_precision=%s: a bitsandbytes-quantized base trains under "
                         "data parallelism (ddp, fsdp), not with tp or pp > 1 (Megatron's LoRA keeps a 16-bit base)",
                         cfg->lora_r, nf4 ? "nf4" : "int8");
    if (cfg->lora_r == 0 && (cfg->base_precision != EC_BASE_SAME || cfg->lora_targets != EC_LORA_QV))
        return eci_error(ctx, EC_EINVAL, "keys 'base_precision' and 'lora_targets' need lora_r (a LoRA fine-tune; "
                         "a quantized base is frozen: QLoRA)");
    if (cfg->lora_r > 0 && nf4 && r->strategy == EC_STRATEGY_ZERO &&
        cfg->zero_stage == 3)
        return eci_error(ctx, EC_EINVAL, "base_precision=nf4 with zero_stage=3: DeepSpeed cannot shard "
                         "bitsandbytes 4-bit weights (FSDP can)");
    return EC_OK;
}

/* The rates of fabric f per GPU's NIC and per node of per_node GPUs. */
static void fabric_rates(const eci_fabric *f, int per_node, double *gpu, double *node)
{
    *gpu = f->gpu_gbit_per_s > 0 ? f->gpu_gbit_per_s * 1e9 / 8 : f->node_gbit_per_s * 1e9 / 8 / per_node;
    *node = f->node_gbit_per_s > 0 ? f->node_gbit_per_s * 1e9 / 8 : *gpu * per_node;
}

/* The inter-node network: network= names a preset of models/interconnects.csv; else
 * network_gbit_per_s (per node); else, across nodes, the network of the GPU's reference
 * system (models/reference_systems.csv: DGX H100's NDR InfiniBand, a PCIe server's 100 GbE);
 * else constants.csv internode_bytes_per_s.  r->fabric_defaulted says the reference
 * system's network was taken (the warning names it). */
static int resolve_network(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r)
{
    double node = cfg->network_bytes_per_s > 0 ? cfg->network_bytes_per_s
                                               : eci_const(ctx, EC_C_internode_bytes_per_s);
    double gpu = node / r->per_node;
    r->fabric_defaulted = 0;
    if (cfg->network[0] != '\0') {
        if ((r->fabric = eci_fabric_find(ctx, cfg->network)) == NULL)
            return EC_ENOTFOUND;
        fabric_rates(r->fabric, r->per_node, &gpu, &node);
        if (cfg->network_bytes_per_s > 0)
            return eci_error(ctx, EC_EINVAL, "keys 'network' and 'network_gbit_per_s' both set: give one");
    } else if (cfg->network_bytes_per_s <= 0 && r->nodes > 1 && r->gpu->refsys != NULL) {
        r->fabric = r->gpu->refsys->fabric;
        r->fabric_defaulted = 1;
        fabric_rates(r->fabric, r->per_node, &gpu, &node);
    }
    r->node_net_bytes_per_s = node;
    r->gpu_net_bytes_per_s = gpu;
    return EC_OK;
}

int eci_layout_resolve(ec_ctx *ctx, const ec_config *cfg, eci_resolved *r)
{
    /* machines of the size given, else of the GPU's reference system (a DGX-2 holds 16), else 8 */
    const eci_refsys *sys = r->gpu->refsys;
    r->per_node = cfg->gpus_per_node > 0             ? cfg->gpus_per_node
                  : sys != NULL && sys->gpus_per_node > 0 ? (int)sys->gpus_per_node
                                                          : (int)eci_const(ctx, EC_C_gpus_per_node);
    if (eci_config_given(ctx, cfg, ECI_KEY_NODES)) {
        r->nodes = cfg->nodes;
        if (cfg->gpus_per_node > 0 && cfg->nodes * cfg->gpus_per_node < cfg->num_gpus)
            return eci_error(ctx, EC_EINVAL, "nodes=%d x gpus_per_node=%d holds fewer than num_gpus=%d", cfg->nodes,
                             cfg->gpus_per_node, cfg->num_gpus);
        if (cfg->gpus_per_node == 0)
            r->per_node = (cfg->num_gpus + r->nodes - 1) / r->nodes;
    } else {
        r->nodes = cfg->num_gpus > r->per_node ? (cfg->num_gpus + r->per_node - 1) / r->per_node : 1;
    }
    if (r->nodes > cfg->num_gpus)
        return eci_error(ctx, EC_EINVAL, "nodes=%d exceeds num_gpus=%d", r->nodes, cfg->num_gpus);
    int rc = check_degrees(ctx, cfg, r);
    if (rc == EC_OK && r->net != NULL)
        rc = check_network(ctx, cfg, r);
    if (rc == EC_OK)
        rc = check_precision(ctx, cfg, r);
    if (rc == EC_OK)
        rc = check_strategy(ctx, cfg, r);
    if (rc == EC_OK)
        rc = resolve_network(ctx, cfg, r);
    r->sp = cfg->sequence_parallel;
    return rc;
}
