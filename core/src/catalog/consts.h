/*
 * consts.h: the names of the software constants the model reads from models/constants.csv.
 * One X-macro list: the enum, the loader's required names and the docs stay in step.
 * Hardware figures live in gpus.csv and hosts.csv instead; this file is for PyTorch,
 * CUDA-runtime and training-loop behaviour.
 */
#ifndef EC_CONSTS_H
#define EC_CONSTS_H

#define EC_CONSTS(X)                    \
    X(cuda_context_bytes)               \
    X(cuda_context_old_until_version)   \
    X(cuda_context_old_bytes)           \
    X(cuda_context_eager_until_version) \
    X(cuda_context_eager_bytes)         \
    X(torch_version_known_max)          \
    X(torch_version_known_min)          \
    X(nccl_context_bytes)               \
    X(cublas_workspace_bytes)           \
    X(allocator_frac_static)            \
    X(allocator_frac_dynamic)           \
    X(allocator_min_bytes)              \
    X(memory_headroom_frac)             \
    X(dropout_mask_bytes_per_elem)      \
    X(bwd_gemm_flop_factor)             \
    X(bwd_mem_bytes_factor)             \
    X(bwd_kernels_per_fwd_op)           \
    X(gemm_tile_large_m)                \
    X(gemm_tile_large_n)                \
    X(gemm_tile_small_m)                \
    X(gemm_tile_small_n)                \
    X(gemm_tile_small_eff_frac)         \
    X(conv_eff_frac)                    \
    X(cudnn_workspace_io_frac)          \
    X(opt_adam_fused_bytes_per_param)   \
    X(opt_adam_foreach_bytes_per_param) \
    X(opt_sgd_bytes_per_param)          \
    X(opt_lamb_bytes_per_param)         \
    X(opt_foreach_ops_adam)             \
    X(opt_foreach_ops_sgd)              \
    X(opt_foreach_ops_lamb)             \
    X(foreach_tensors_per_kernel)       \
    X(gradscaler_bytes_per_param)       \
    X(syncs_per_micro_step)             \
    X(mlm_mask_frac)                    \
    X(h2d_latency_s)                    \
    X(ddp_bucket_bytes)                 \
    X(ddp_first_bucket_bytes)           \
    X(allreduce_hop_latency_s)          \
    X(nvlink_busbw_frac)                \
    X(pcie_host_busbw_frac)             \
    X(pcie_p2p_busbw_frac)              \
    X(nvlink_bridge_busbw_frac)         \
    X(board_uplink_lanes)               \
    X(gpu_speed_cv_frac)                \
    X(internode_bytes_per_s)            \
    X(internode_busbw_frac)             \
    X(nccl_ramp_bytes_1)                \
    X(nccl_ramp_busbw_1)                \
    X(nccl_ramp_bytes_2)                \
    X(nccl_ramp_busbw_2)                \
    X(nccl_ramp_bytes_3)                \
    X(nccl_ramp_busbw_3)                \
    X(nccl_ramp_bytes_4)                \
    X(nccl_ramp_busbw_4)                \
    X(nccl_ramp_bytes_5)                \
    X(nccl_ramp_busbw_5)                \
    X(nccl_ramp_bytes_6)                \
    X(nccl_ramp_busbw_6)                \
    X(nccl_ramp_bytes_7)                \
    X(nccl_ramp_busbw_7)                \
    X(nccl_ramp_bytes_8)                \
    X(nccl_ramp_busbw_8)                \
    X(nccl_ramp_ranks)                  \
    X(dp_coalesce_buffer_bytes)         \
    X(dp_replicate_tensor_s)            \
    X(recompute_forward_frac)          \
    X(sdpa_eff_frac)                   \
    X(sdpa_bwd_flop_factor)            \
    X(gpus_per_node)                   \
    X(gelu_new_kernels)                \
    X(gelu_python_kernels)             \
    X(rmsnorm_eager_kernels)           \
    X(rmsnorm_eager_passes)            \
    X(rmsnorm_eager_fp32_passes)       \
    X(rmsnorm_eager_cast_kernels)      \
    X(rope_eager_kernels)              \
    X(rmsnorm_fused_kernels)           \
    X(rmsnorm_fused_passes)            \
    X(rope_fused_kernels)              \
    X(accumulate_grad_passes)          \
    X(te_accumulate_grad_passes)       \
    X(te_fp8_cast_transpose_bytes)     \
    X(te_fp8_transpose_bytes)          \
    X(te_fp8_cast_bytes)               \
    X(te_fp8_non_tn_min_cc)            \
    X(te_fp8_non_tn_below_cc)          \
    X(te_fp8_non_tn_again_cc)          \
    X(te_fp8_amax_bytes)               \
    X(calib_arch_log_sd)               \
    X(calib_run_log_sd)                \
    X(loader_cpu_cv)                   \
    X(bucket_mega_batch_mult)          \
    X(compile_s)                       \
    X(compile_dynamic_recompiles)      \
    X(checkpoint_write_bytes_per_s)     \
    X(overlap_compute_slowdown_frac)    \
    X(pcie_host_copy_frac)             \
    X(near_capacity_warn_frac)         \
    X(loader_bottleneck_frac)          \
    X(fp32_conv_warn_frac)             \
    X(fsdp_gathers_in_flight)          \
    X(host_optimizer_bytes_per_param)  \
    X(host_optimizer_bytes_per_s)      \
    X(nf4_bytes_per_param)             \
    X(nf4_nodq_bytes_per_param)        \
    X(int8_bytes_per_param)            \
    X(opt_adamw_hf_kernels_per_tensor) \
    X(opt_adamw_hf_bytes_per_param)    \
    X(opt_adafactor_kernels_per_tensor) \
    X(opt_adafactor_bytes_per_param)   \
    X(opt_8bit_state_bytes_per_param)  \
    X(opt_8bit_bytes_per_param)        \
    X(opt_8bit_syncs_per_tensor)       \
    X(clip_foreach_ops)                \
    X(clip_fixed_kernels)              \
    X(clip_bytes_per_param)            \
    X(gradscaler_fixed_kernels)        \
    X(trainer_hf_micro_kernels)        \
    X(trainer_hf_micro_host_ops)       \
    X(trainer_hf_micro_host_ops_per_tensor) \
    X(trainer_hf_step_host_ops)        \
    X(trainer_hf_step_host_ops_per_tensor) \
    X(trainer_hf_max_grad_norm)        \
    X(trainer_lightning_micro_host_ops) \
    X(trainer_lightning_step_host_ops) \
    X(trainer_lightning_step_syncs)    \
    X(eval_syncs_per_step)             \
    X(compile_host_launch_frac)        \
    X(cudagraph_replay_s)              \
    X(compile_max_autotune_factor)     \
    X(compile_cudagraph_capture_s)     \
    X(sdpa_fp32_tf32_passes)           \
    X(allocator_frac_expandable)       \
    X(allocator_frac_min)              \
    X(compile_graph_call_s)            \
    X(zero3_reduce_bucket_elems)       \
    X(host_bound_util_frac)             \
    X(flash1_kernel_head_dim_min)       \
    X(megatron_bucket_min_params)       \
    X(megatron_bucket_params_per_rank)  \
    X(linear_bias_epilogue_from_version) \
    X(clip_sync_until_version)          \
    X(clip_multi_tensor_fixed_kernels)  \
    X(opt_bertadam_kernels_per_tensor)  \
    X(opt_bertadam_bytes_per_param)     \
    X(master_grad_copy_bytes_per_param) \
    X(master_weight_copy_bytes_per_param) \
    X(master_grad_accumulate_bytes_per_param) \
    X(clip_norm_stacked_from_version)   \
    X(opt_bertadam_clip_kernels_per_tensor) \
    X(hf_compile_mask_from_version)     \
    X(sdpa_mask_eff_frac)               \
    X(nccl_channel_bytes_per_s)         \
    X(nccl_channel_sm90_bytes_per_s)    \
    X(nccl_channel_sm100_bytes_per_s)   \
    X(nccl_channel_sm90_from_cc)        \
    X(nccl_channel_sm100_from_cc)

enum eci_const_id {
#define EC_CONST_ENUM(name) EC_C_##name,
    EC_CONSTS(EC_CONST_ENUM)
#undef EC_CONST_ENUM
    EC_C_COUNT
};

struct eci_consts {
    double value[EC_C_COUNT];
};

#endif /* EC_CONSTS_H */
