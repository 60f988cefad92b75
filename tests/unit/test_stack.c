/*
 * test_stack.c: the ordinary PyTorch / Hugging Face stack as it runs (issue 19; the optimizers,
 * clipping and the trainers are test_optimizers.c's): torch.compile's modes (fusion.c, CUDA graphs, compile time), memory_format (cuDNN's NCHW
 * transposes), data=synthetic/on_gpu, evaluation, SDPA's causal skipping and the Triton
 * FlashAttention.  Each test states a relation the mechanism implies, not a number.
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"
#include "model/compute.h"
#include "sim/setup.h"
#include "model/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BERT "model=bert-base task=classify gpu=a100-sxm4-80gb seq_len=128 batch_per_gpu=32 "
#define BERT_H100 "model=bert-base task=classify gpu=h100-sxm5-80gb seq_len=128 batch_per_gpu=32 "

/* ---- torch.compile ---------------------------------------------------------------------- */

/* Inductor fuses elementwise and normalization chains: fewer kernels.  The first step
 * carries the compilation: compile_s for the default mode; max-autotune multiplies it by
 * compile_max_autotune_factor and adds the CUDA graph capture. */
static void test_compile_modes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result eager, compiled, autotune;
    ec_test_predict(ctx, BERT "precision=amp_bf16 compile=0", &eager);
    ec_test_predict(ctx, BERT "precision=amp_bf16 compile=1", &compiled);
    ec_test_predict(ctx, BERT "precision=amp_bf16 compile=max-autotune", &autotune);
    assert_true(compiled.kernels_per_step < eager.kernels_per_step);
    assert_true(compiled.step_s < eager.step_s);
    assert_rel(eager.first_step_s, eager.step_s, EC_TOL_EXACT);
    assert_rel(compiled.first_step_s, compiled.step_s + eci_const(ctx, EC_C_compile_s), EC_TOL_CLOSED_FORM);
    assert_rel(autotune.first_step_s,
               autotune.step_s + eci_const(ctx, EC_C_compile_s) * eci_const(ctx, EC_C_compile_max_autotune_factor) +
                   eci_const(ctx, EC_C_compile_cudagraph_capture_s),
               EC_TOL_CLOSED_FORM);
    /* CUDA graphs: one replay per pass instead of a launch per kernel */
    assert_true(autotune.cpu_issue_s < compiled.cpu_issue_s);
    ec_ctx_free(ctx);
}

/* kernels=fused (Megatron / Transformer Engine, flash-attn's scripts): the GPU runs the op
 * list torch.compile's fusion gives (the same kernels, FLOPs and bytes), but the model stays
 * eager: every module's Python runs, nothing is compiled, the first step is a step. */
static void test_fused_kernels(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    /* on Hopper, which the shipped fit has no runs of: a fit's architecture scales price only the
     * kernel class they were fitted on (test_calib_unseen's test_kernel_class_gate), and these
     * compare one op list with another on one set of rates */
    ec_result eager, fused, compiled, both;
    ec_test_predict(ctx, BERT_H100 "precision=amp_bf16", &eager);
    ec_test_predict(ctx, BERT_H100 "precision=amp_bf16 kernels=fused", &fused);
    ec_test_predict(ctx, BERT_H100 "precision=amp_bf16 compile=1", &compiled);
    ec_test_predict(ctx, BERT_H100 "precision=amp_bf16 compile=1 kernels=fused", &both);
    assert_rel(fused.kernels_per_step, compiled.kernels_per_step, EC_TOL_EXACT);
    assert_true(fused.kernels_per_step < eager.kernels_per_step);
    assert_rel(fused.flop_per_step, eager.flop_per_step, EC_TOL_EXACT); /* fusion moves bytes, not FLOPs */
    assert_true(fused.step_s < eager.step_s);
    assert_rel(fused.first_step_s, fused.step_s, EC_TOL_EXACT); /* no compilation */
    assert_true(fused.cpu_issue_s > compiled.cpu_issue_s);      /* module Python still runs */
    assert_rel(both.step_s, compiled.step_s, EC_TOL_EXACT);     /* compile fuses whatever kernels says */
    ec_config cfg;
    ec_config_init(&cfg);
    assert_int_equal(ec_config_set(ctx, &cfg, "kernels", "triton"), EC_EINVAL);
    assert_non_null(strstr(ec_ctx_errmsg(ctx), "kernels"));
    ec_ctx_free(ctx);
}

/* Fused chains run one RMSNorm kernel (read once, write once) and one RoPE kernel per tensor
 * (models/constants.csv rmsnorm_fused_*, rope_fused_kernels), eager PyTorch HF's chain of ops;
 * kernels=te (Megatron-Core with Transformer Engine) also accumulates the weight gradients in
 * the GEMMs (gradient_accumulation_fusion): no AccumulateGrad pass after the first micro-step,
 * the rest of the step as kernels=fused. */
#define LLAMA "model=llama-3.2-1b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=1024 "
static void test_te_kernels(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    static const char *const kinds[] = {"eager", "fused", "te"};
    for (int i = 0; i < 3; i++) {
        ec_config cfg;
        ec_config_init(&cfg);
        assert_int_equal(ec_config_set(ctx, &cfg, "model", "llama-3.2-1b"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "gpu", "h100-sxm5-80gb"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "batch_per_gpu", "1"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "kernels", kinds[i]), EC_OK);
        eci_resolved r;
        eci_params calib;
        assert_int_equal(eci_setup_resolve(ctx, &cfg, &r, &calib), EC_OK);
        eci_shape sh;
        eci_setup_shape(ctx, &cfg, &r, 1024, 1, &sh);
        int fused = i > 0;
        assert_int_equal(sh.fused, fused);
        assert_int_equal(sh.rmsnorm_kernels, (int)eci_const(ctx, fused ? EC_C_rmsnorm_fused_kernels
                                                                      : EC_C_rmsnorm_eager_kernels));
        assert_rel(sh.rmsnorm_passes, eci_const(ctx, fused ? EC_C_rmsnorm_fused_passes : EC_C_rmsnorm_eager_passes),
                   EC_TOL_EXACT);
        assert_int_equal(sh.rope_kernels, (int)eci_const(ctx, fused ? EC_C_rope_fused_kernels
                                                                   : EC_C_rope_eager_kernels));
    }
    /* An RMSNorm's output has its weight's dtype: under autocast with 16-bit weights (FSDP,
     * ZeRO, Megatron) the next linear needs no cast; the linears a norm feeds are marked (TE's
     * LayerNormLinear writes their FP8 input itself), the others are not. */
    for (int w16 = 0; w16 < 2; w16++) {
        ec_config cfg;
        ec_config_init(&cfg);
        assert_int_equal(ec_config_set(ctx, &cfg, "model", "llama-3.2-1b"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "gpu", "h100-sxm5-80gb"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "precision", "amp_bf16"), EC_OK);
        assert_int_equal(ec_config_set(ctx, &cfg, "batch_per_gpu", "1"), EC_OK);
        if (w16) {
            assert_int_equal(ec_config_set(ctx, &cfg, "num_gpus", "8"), EC_OK);
            assert_int_equal(ec_config_set(ctx, &cfg, "strategy", "zero"), EC_OK);
            assert_int_equal(ec_config_set(ctx, &cfg, "zero_stage", "1"), EC_OK);
        }
        eci_resolved r;
        eci_params calib;
        assert_int_equal(eci_setup_resolve(ctx, &cfg, &r, &calib), EC_OK);
        eci_shape sh;
        eci_setup_shape(ctx, &cfg, &r, 1024, 1, &sh);
        assert_int_equal(sh.weights_16, w16);
        const eci_workload *wl;
        assert_int_equal(eci_workload_get(ctx, r.net, r.task, &sh, &wl), EC_OK);
        int casts_in = 0, q_normed = -1, o_normed = -1;
        for (size_t i = 0; i < wl->n_ops; i++) {
            const eci_op *op = &wl->ops[i];
            casts_in += strcmp(op->name, "cast_in") == 0 && op->block >= 0;
            if (op->block == 0 && strcmp(op->name, "q") == 0)
                q_normed = op->in_normed;
            if (op->block == 0 && strcmp(op->name, "attn_out") == 0)
                o_normed = op->in_normed;
        }
        assert_true(w16 ? casts_in == 0 : casts_in > 0);
        assert_int_equal(q_normed, 1);
        assert_int_equal(o_normed, 0);
    }
    ec_result eager, fused, te, fused1, te1;
    ec_test_predict(ctx, LLAMA "grad_accum=4", &eager);
    ec_test_predict(ctx, LLAMA "grad_accum=4 kernels=fused", &fused);
    ec_test_predict(ctx, LLAMA "grad_accum=4 kernels=te", &te);
    ec_test_predict(ctx, LLAMA "kernels=fused", &fused1);
    ec_test_predict(ctx, LLAMA "kernels=te", &te1);
    /* one norm and one RoPE kernel, not HF's chains */
    assert_true(fused.breakdown.forward_s < 0.8 * eager.breakdown.forward_s);
    /* kernels=te's linear_qkv, one GEMM for q, k and v, saves the same in each of the 4 micro-steps
     * (forward_s sums them); its backward saves more than 4 x one micro-step's: three micro-steps
     * without AccumulateGrad */
    double qkv_fwd_s = fused1.breakdown.forward_s - te1.breakdown.forward_s;
    assert_true(qkv_fwd_s > 0);
    assert_rel(fused.breakdown.forward_s - te.breakdown.forward_s, 4.0 * qkv_fwd_s, EC_TOL_CLOSED_FORM);
    assert_true(fused.breakdown.backward_s - te.breakdown.backward_s >
                4.0 * (fused1.breakdown.backward_s - te1.breakdown.backward_s));
    assert_true(te.kernels_per_step < fused.kernels_per_step); /* no add kernel per gradient tensor */
    ec_ctx_free(ctx);
}

/* A linear's bias before PyTorch 1.12 (constants.csv linear_bias_epilogue_from_version): one
 * in-place kernel over each biased linear's output, read and written in the GEMM's output dtype
 * (bias_add bytes = 2 x act x rows x out, summed: 2 x act x tokens x the biased linears' widths);
 * no backward of its own and no memory; none from 1.12 on, none for bias-free linears (Llama),
 * none under kernels=te (Transformer Engine's epilogue). */
static const eci_workload *bias_workload(ec_ctx *ctx, const char *text, eci_shape *sh)
{
    ec_config cfg;
    ec_test_config(ctx, &cfg, text);
    eci_resolved r;
    eci_params calib;
    assert_int_equal(eci_setup_resolve(ctx, &cfg, &r, &calib), EC_OK);
    eci_setup_shape(ctx, &cfg, &r, (double)cfg.seq_len, (double)cfg.batch_per_gpu, sh);
    const eci_workload *wl;
    assert_int_equal(eci_workload_get(ctx, r.net, r.task, sh, &wl), EC_OK);
    return wl;
}

static double bias_add_bytes(const eci_workload *wl, size_t *n)
{
    double bytes = 0;
    *n = 0;
    for (size_t i = 0; i < wl->n_ops; i++)
        if (strcmp(wl->ops[i].name, "bias_add") == 0) {
            const eci_block *bl = NULL;
            for (size_t j = 0; j < wl->n_blocks; j++)
                if (i >= wl->blocks[j].begin && i < wl->blocks[j].end)
                    bl = &wl->blocks[j];
            int reps = bl != NULL ? bl->reps : 1;
            assert_int_equal(wl->ops[i].bwd, 0);
            assert_int_equal(wl->ops[i].linear_bias, 1);
            bytes += reps * wl->ops[i].fwd_bytes;
            *n += (size_t)reps;
        }
    return bytes;
}

static void test_linear_bias_pass(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    double v = eci_const(ctx, EC_C_linear_bias_epilogue_from_version);
    assert_int_equal((int)v, EC_RELEASE(1, 12));
    eci_shape sh;
    size_t n;
    /* BERT-base classification: per layer Q, K, V, the attention output and the MLP's two
     * linears (hidden 768, ffn 3072), then the pooler (768 on the [CLS] rows) and the classifier */
    const eci_workload *wl = bias_workload(ctx, BERT "precision=amp_fp16 torch_version=1.11", &sh);
    assert_int_equal(sh.bias_pass, 1);
    double bytes = bias_add_bytes(wl, &n), tokens = sh.batch * sh.seq;
    double layers = 12.0 * 2.0 * 2.0 * tokens * (4.0 * 768.0 + 3072.0 + 768.0); /* 2 bytes, read + write */
    assert_int_equal(n, 12 * 6 + 2);
    assert_true(bytes > layers && bytes < 1.01 * layers); /* the head's two add < 1% */
    wl = bias_workload(ctx, BERT "precision=fp32 torch_version=1.11", &sh);
    assert_rel(bias_add_bytes(wl, &n), 2.0 * bytes, EC_TOL_EXACT); /* fp32 outputs: twice the bytes */
    wl = bias_workload(ctx, BERT "precision=amp_fp16 torch_version=1.12", &sh);
    assert_int_equal(sh.bias_pass, 0);
    assert_rel(bias_add_bytes(wl, &n), 0.0, EC_TOL_EXACT);
    wl = bias_workload(ctx, BERT "precision=amp_fp16", &sh); /* unset: today's PyTorch */
    assert_int_equal(sh.bias_pass, 0);
    wl = bias_workload(ctx, LLAMA "torch_version=1.11", &sh);
    assert_int_equal(sh.bias_pass, 1);
    assert_rel(bias_add_bytes(wl, &n), 0.0, EC_TOL_EXACT); /* no biases */
    wl = bias_workload(ctx, BERT "precision=amp_fp16 torch_version=1.11 kernels=te", &sh);
    assert_int_equal(sh.bias_pass, 0);
    /* fused chains (kernels=fused): the pass joins the next elementwise kernels, a kernel of their own */
    wl = bias_workload(ctx, BERT "precision=amp_fp16 torch_version=1.11 kernels=fused", &sh);
    assert_int_equal(sh.bias_pass, 1);
    for (size_t i = 0; i < wl->n_ops; i++)
        assert_int_equal(wl->ops[i].linear_bias, 0);
    /* the step: a slower forward, the same backward and memory */
    ec_result old, now;
    ec_test_predict(ctx, BERT "precision=amp_fp16 torch_version=1.11", &old);
    ec_test_predict(ctx, BERT "precision=amp_fp16 torch_version=1.12", &now);
    assert_true(old.breakdown.forward_s > now.breakdown.forward_s);
    assert_rel(old.breakdown.backward_s, now.breakdown.backward_s, EC_TOL_EXACT);
    assert_rel(old.memory.peak_bytes, now.memory.peak_bytes, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* ---- memory_format ---------------------------------------------------------------------- */

/* cuDNN's tensor-core kernels read NHWC: a contiguous (NCHW) model pays transposes under AMP on
 * an A100 (conv_algos.csv: the input forward, the output's gradient, the input and the data
 * gradient backward).  fp32 on a V100 (CUDA cores) runs its 3x3 stride-1 convolutions on
 * Winograd, whose kernels read NCHW: channels_last pays the transposes there instead (the
 * input and output around the forward and the data gradient); the implicit GEMMs read both. */
static void test_memory_format(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result nchw, nhwc, v_nchw, v_nhwc;
    ec_test_predict(ctx, "model=resnet50 gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=128 data=on_gpu", &nchw);
    ec_test_predict(ctx, "model=resnet50 gpu=a100-sxm4-80gb precision=amp_fp16 batch_per_gpu=128 data=on_gpu "
                    "memory_format=channels_last", &nhwc);
    ec_test_predict(ctx, "model=resnet50 gpu=v100-sxm2-16gb precision=fp32 batch_per_gpu=64 data=on_gpu", &v_nchw);
    ec_test_predict(ctx, "model=resnet50 gpu=v100-sxm2-16gb precision=fp32 batch_per_gpu=64 data=on_gpu "
                    "memory_format=channels_last", &v_nhwc);
    assert_true(nhwc.step_s < nchw.step_s);
    /* 53 convolutions, each with transposes forward (1) and backward (3) */
    assert_rel(nchw.kernels_per_step - nhwc.kernels_per_step, 53.0 * (1 + 3), EC_TOL_EXACT);
    /* 3x3 stride-1 convolutions (13 of ResNet-50's 16 3x3 layers: the first of layer2-4 has
     * stride 2) transpose 2 tensors around the forward and 2 around dgrad */
    assert_true(v_nhwc.step_s > v_nchw.step_s);
    /* TF32 runs on tensor cores through the same NHWC kernels (..._tf32f32_..._nhwckrsc_nchw) */
    ec_result t_nchw, t_nhwc;
    ec_test_predict(ctx, "model=resnet50 gpu=a100-sxm4-80gb precision=tf32 batch_per_gpu=128 data=on_gpu", &t_nchw);
    ec_test_predict(ctx, "model=resnet50 gpu=a100-sxm4-80gb precision=tf32 batch_per_gpu=128 data=on_gpu "
                    "memory_format=channels_last", &t_nhwc);
    assert_rel(t_nchw.kernels_per_step - t_nhwc.kernels_per_step, 53.0 * (1 + 3), EC_TOL_EXACT);
    assert_rel(v_nhwc.kernels_per_step - v_nchw.kernels_per_step, 13.0 * (2 + 2), EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* One convolution op's forward on a GPU at a precision: the priced time and the two memory
 * bounds, its input + weight + output tensors and the im2col matrix (what the pricing read
 * before conv_algos.csv), over the bandwidth the rates give. */
typedef struct conv_case {
    double fwd_s, io_s, im2col_s, math_s;
} conv_case;

static conv_case price_conv(ec_ctx *ctx, const char *gpu, int precision, double conv_eff, double c, double kernel,
                            double stride)
{
    eci_params calib;
    eci_params_default(ctx, &calib);
    calib.conv_eff = conv_eff;
    eci_rates r;
    eci_rates_init(ctx, eci_hw_find(ctx, gpu), precision, &calib, 1, EC_KERNELS_EAGER, &r);
    double n = 64, hw = 56, hout = floor((hw + 2.0 * floor(kernel / 2) - kernel) / stride) + 1;
    eci_op op;
    memset(&op, 0, sizeof op);
    op.kind = ECI_OP_CONV;
    op.m = n * hout * hout;
    op.n = c;
    op.k = c * kernel * kernel;
    op.batch = 1;
    op.bwd = 1;
    op.param_tensors = 1;
    op.conv_in_elems = n * hw * hw * c;
    op.conv_kernel = kernel;
    op.conv_stride = stride;
    op.conv_nhwc = r.tensor_cores; /* the layout each unit's kernels read: no transposes */
    eci_op_cost_t cost;
    eci_op_cost(ctx, &r, &op, &cost);
    double e = r.gemm_in_bytes, bw = r.mem_bytes_per_s * r.mem_scale;
    double in = op.conv_in_elems * e, w = op.n * op.k * e, out = op.m * op.n * e;
    const eci_conv_algo *a = eci_conv_algo_for(ctx, r.tensor_cores, kernel, stride, 1, ECI_CONV_FWD);
    double rate = r.gemm_flop_per_s * (a->conv_eff ? r.conv_eff : 1) * r.gemm_scale *
                  eci_gemm_util(&r, op.m, op.n, op.k, 1);
    return (conv_case){.fwd_s = cost.fwd_s, .io_s = (in + w + out) / bw, .im2col_s = (op.m * op.k + w + out) / bw,
                       .math_s = 2.0 * op.m * op.n * op.k * a->flop_frac / rate};
}

/* A convolution moves its input, weight and output, never the im2col matrix (implicit GEMM
 * indexes the input in place): ResNet-50's layer1 3x3 (64 channels, 56 x 56) in fp16 on an A100
 * at a conv_eff near the fitted ones is priced at its math, well below streaming the 9x larger
 * im2col matrix (what it was priced at before).  fp32 3x3 stride-1 layers run Winograd (16
 * multiplies where direct convolution has 36, conv_algos.csv); stride 2 and 1x1 do not. */
static void test_conv_pricing(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    conv_case h = price_conv(ctx, "a100-sxm4-80gb", EC_PREC_AMP_FP16, 2.0, 64, 3, 1);
    assert_rel(h.fwd_s, h.math_s > h.io_s ? h.math_s : h.io_s, EC_TOL_CLOSED_FORM);
    assert_true(h.fwd_s < 0.6 * h.im2col_s);
    conv_case t = price_conv(ctx, "a100-sxm4-80gb", EC_PREC_TF32, 0.75, 64, 3, 1); /* the prior */
    assert_rel(t.fwd_s, t.math_s > t.io_s ? t.math_s : t.io_s, EC_TOL_CLOSED_FORM);
    conv_case wino = price_conv(ctx, "v100-sxm2-16gb", EC_PREC_FP32, 0.75, 256, 3, 1);
    conv_case s2 = price_conv(ctx, "v100-sxm2-16gb", EC_PREC_FP32, 0.75, 256, 3, 2);
    assert_true(wino.math_s > wino.io_s && s2.math_s > s2.io_s);
    assert_rel(wino.fwd_s, wino.math_s, EC_TOL_CLOSED_FORM);
    assert_rel(s2.fwd_s, s2.math_s, EC_TOL_CLOSED_FORM);
    assert_rel(eci_conv_algo_for(ctx, 0, 3, 1, 1, ECI_CONV_FWD)->flop_frac, 16.0 / 36.0, 1e-5);
    assert_string_equal(eci_conv_algo_for(ctx, 0, 3, 2, 1, ECI_CONV_FWD)->name, "implicit_gemm");
    assert_string_equal(eci_conv_algo_for(ctx, 0, 3, 1, 1, ECI_CONV_WGRAD)->name, "implicit_gemm");
    assert_string_equal(eci_conv_algo_for(ctx, 1, 3, 1, 1, ECI_CONV_FWD)->name, "implicit_precomp_gemm");
    assert_string_equal(eci_conv_algo_for(ctx, 1, 1, 2, 1, ECI_CONV_DGRAD)->name, "gemm_1x1");
    assert_string_equal(eci_conv_algo_for(ctx, 0, 3, 1, 32, ECI_CONV_FWD)->name, "implicit_gemm"); /* grouped */
    /* Winograd's 3x3 stride-1 layer is faster per FLOP than the stride-2 one (a quarter the FLOPs) */
    assert_true(wino.fwd_s < 4.0 * s2.fwd_s);
    ec_ctx_free(ctx);
}

/* ---- data ------------------------------------------------------------------------------- */

/* data=on_gpu: no loader and no copy; data=synthetic builds the batch on the GPU too (the
 * synthetic loaders of the benchmarks); real data is loaded and copied. */
static void test_data_sources(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result real, synth, on_gpu;
    ec_test_predict(ctx, BERT "precision=amp_fp16 data=real dataset_samples=3200", &real);
    ec_test_predict(ctx, BERT "precision=amp_fp16 data=synthetic dataset_samples=3200", &synth);
    ec_test_predict(ctx, BERT "precision=amp_fp16 data=on_gpu dataset_samples=3200", &on_gpu);
    assert_true(real.breakdown.h2d_s > 0);
    assert_abs(synth.breakdown.h2d_s, 0.0, EC_TOL_EXACT);
    assert_abs(on_gpu.breakdown.h2d_s, 0.0, EC_TOL_EXACT);
    assert_abs(on_gpu.breakdown.loader_s, 0.0, EC_TOL_EXACT);
    assert_true(on_gpu.step_s < real.step_s);
    ec_ctx_free(ctx);
}

/* ---- evaluation ------------------------------------------------------------------------- */

/* An evaluation pass = ceil(eval_samples / (eval_batch x GPUs)) forward-only batches; with
 * eval_every_steps, floor(steps / every) passes per epoch.  Forward only: a batch costs
 * less than a training step of the same size. */
static void test_evaluation(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result once, every;
    ec_test_predict(ctx, BERT "precision=amp_fp16 data=on_gpu dataset_samples=32000 eval_samples=1000 eval_batch=64",
                    &once);
    ec_test_predict(ctx, BERT "precision=amp_fp16 data=on_gpu dataset_samples=32000 eval_samples=1000 eval_batch=64 "
                    "eval_every_steps=250", &every);
    assert_true(once.eval_step_s > 0 && once.eval_step_s < 2.0 * once.step_s);
    /* ceil(1000 / 64) = 16 batches */
    assert_rel(once.eval_s, 16.0 * once.eval_step_s, EC_TOL_CLOSED_FORM);
    /* 32000 / 32 = 1000 steps, floor(1000 / 250) = 4 passes */
    assert_rel(every.eval_s, 4.0 * 16.0 * every.eval_step_s, EC_TOL_CLOSED_FORM);
    assert_true(every.epoch_s > once.epoch_s);
    ec_ctx_free(ctx);
}

/* ---- attention -------------------------------------------------------------------------- */

/* HF calls SDPA with is_causal=True when it builds no padding mask (no lengths: every
 * sample fills the sequence): the kernel skips the blocks above the diagonal.  A padded
 * batch (lengths given, padded to max_length) goes in with a mask.  BERT is not causal: a
 * named flash kernel gives it the same forward either way (SDPA's pick under a mask:
 * test_sdpa_padding_mask). */
static void test_sdpa_causal(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result full, masked, b_full, b_masked;
    const char *gpt = "model=gpt2 task=lm gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=8 seq_len=1024 "
                      "data=on_gpu padding=max_length";
    char words[400];
    ec_test_predict(ctx, gpt, &full);
    snprintf(words, sizeof words, "%s lengths=lognormal(600,0.3)", gpt);
    ec_test_predict(ctx, words, &masked);
    assert_true(full.breakdown.forward_s < masked.breakdown.forward_s);
    ec_test_predict(ctx, BERT "precision=amp_bf16 data=on_gpu padding=max_length attention=flash2", &b_full);
    ec_test_predict(ctx, BERT "precision=amp_bf16 data=on_gpu padding=max_length attention=flash2 "
                              "lengths=lognormal(60,0.3)", &b_masked);
    assert_rel(b_full.breakdown.forward_s, b_masked.breakdown.forward_s, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* FlashAttention in Triton: flash's work, slower than FlashAttention-2 (models/attention.csv:
 * 1.4x forward, 2x backward on Ampere); at 16 bits only, like flash. */
static void test_flash_triton(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result fa2, triton;
    const char *llm = "model=gpt2 task=lm gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=8 seq_len=2048 "
                      "data=on_gpu";
    char words[300];
    snprintf(words, sizeof words, "%s attention=flash", llm);
    ec_test_predict(ctx, words, &fa2);
    snprintf(words, sizeof words, "%s attention=flash_triton", llm);
    ec_test_predict(ctx, words, &triton);
    assert_true(triton.breakdown.forward_s > fa2.breakdown.forward_s);
    assert_true(triton.breakdown.backward_s > fa2.breakdown.backward_s);
    /* only the attention kernels change: the step grows by less than the slowdown itself */
    assert_true(triton.step_s < fa2.step_s * 2.0);
    assert_rel(triton.kernels_per_step, fa2.kernels_per_step, EC_TOL_EXACT);
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, "model=gpt2 task=lm gpu=a100-sxm4-80gb precision=fp32 batch_per_gpu=8 seq_len=512 "
                   "attention=flash_triton");
    assert_int_not_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    assert_contains(ec_ctx_errmsg(ctx), "fp16 or bf16");
    ec_ctx_free(ctx);
}

/* The attention kernels of models/attention.csv (issue 39): FlashAttention-2 reaches a far
 * smaller share of H100's peak than of A100's (FlashAttention-3 paper: 35% against FA2's 50-73%
 * on A100), read by the one pricing of compute.c; FlashAttention-3 and cuDNN beat it there. */
static void test_attention_by_architecture(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_gpu *a100 = eci_hw_find(ctx, "a100-sxm4-80gb"), *h100 = eci_hw_find(ctx, "h100-sxm5-80gb");
    eci_params calib;
    eci_params_default(ctx, &calib);
    eci_rates ra, rh;
    eci_rates_init(ctx, a100, EC_PREC_AMP_BF16, &calib, 0, EC_KERNELS_EAGER, &ra);
    eci_rates_attention(ctx, a100, EC_ATTN_FLASH, EC_PREC_AMP_BF16, 0, 0, 0, &ra);
    eci_rates_init(ctx, h100, EC_PREC_AMP_BF16, &calib, 0, EC_KERNELS_EAGER, &rh);
    eci_rates_attention(ctx, h100, EC_ATTN_FLASH, EC_PREC_AMP_BF16, 0, 0, 0, &rh);
    for (int pass = 0; pass < 2; pass++) /* as a share of each GPU's own peak */
        assert_true(rh.attn_frac[pass][0] < 0.6 * ra.attn_frac[pass][0]);
    assert_true(rh.attn_flop_per_s * rh.attn_frac[0][0] < 2.0 * ra.attn_flop_per_s * ra.attn_frac[0][0]);

    ec_result h_long, h_fa3, h_cudnn;
    const char *llm = "model=gpt2 task=lm precision=amp_bf16 batch_per_gpu=1 data=on_gpu attention=flash";
    char words[300];
    snprintf(words, sizeof words, "%s gpu=h100-sxm5-80gb seq_len=8192", llm);
    ec_test_predict(ctx, words, &h_long);
    snprintf(words, sizeof words, "%s gpu=h100-sxm5-80gb seq_len=8192 attention=flash3", llm);
    ec_test_predict(ctx, words, &h_fa3);
    snprintf(words, sizeof words, "%s gpu=h100-sxm5-80gb seq_len=8192 attention=cudnn", llm);
    ec_test_predict(ctx, words, &h_cudnn);
    assert_true(h_fa3.step_s < h_cudnn.step_s && h_cudnn.step_s < h_long.step_s);
    assert_rel(h_fa3.kernels_per_step, h_long.kernels_per_step, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* The same through one fused attention op as SDPA prices it at bf16 (its flash backend): the
 * achieved share of the peak on an H100 is well below an A100's, and a long sequence is never
 * priced slower than streaming its s x s scores through DRAM once (FlashAttention keeps them on
 * chip; the old memory bound counted them and bound H100 at long sequences). */
static void test_attention_op_by_architecture(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    eci_params calib;
    eci_params_default(ctx, &calib);
    static const char *const ids[2] = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
    double share[2], fwd_s[2], scores_s[2];
    for (int i = 0; i < 2; i++) {
        const eci_gpu *g = eci_hw_find(ctx, ids[i]);
        eci_rates r;
        eci_rates_init(ctx, g, EC_PREC_AMP_BF16, &calib, 0, EC_KERNELS_EAGER, &r);
        eci_op op;
        memset(&op, 0, sizeof op);
        /* 8k tokens, head dim 32 (k = 2 x 32), 64 heads x batch: 64 FLOPs per score byte, where
         * the scores' streaming time would bind (from head dim 64 FlashAttention-2's math time on
         * an A100, at 0.63 of the peak, is about that time: attention.csv) */
        op.kind = ECI_OP_ATTN;
        op.m = op.n = 8192;
        op.k = 64;
        op.batch = 64;
        op.bwd = 1;
        eci_op_cost_t c;
        eci_op_cost(ctx, &r, &op, &c);
        fwd_s[i] = c.fwd_s;
        share[i] = 2.0 * op.m * op.n * op.k * op.batch / c.fwd_s / g->peak_bf16_flop_per_s;
        scores_s[i] = op.m * op.n * op.batch * 2.0 / (r.mem_bytes_per_s * r.mem_scale);
    }
    assert_true(share[1] < 0.6 * share[0]);
    for (int i = 0; i < 2; i++)
        assert_true(fwd_s[i] < scores_s[i]);
    ec_ctx_free(ctx);
}

/* A config attention.csv cannot run refused, its message naming the key, the file and `arch`. */
static void attention_refused(ec_ctx *ctx, const char *words, const char *key, const char *arch)
{
    ec_config cfg;
    ec_result res;
    ec_test_config(ctx, &cfg, words);
    assert_int_not_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    assert_contains(ec_ctx_errmsg(ctx), key);
    assert_contains(ec_ctx_errmsg(ctx), "models/attention.csv");
    assert_contains(ec_ctx_errmsg(ctx), arch);
}

/* attention=flash3 where FlashAttention-3 cannot run (not Hopper), and attention=flash4 off Blackwell,
 * are refused naming the key and models/attention.csv; flash2 and triton are flash and flash_triton;
 * a kernel named for an architecture attention.csv has no row for takes the kernel's prior and
 * says so. */
static void test_attention_names(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result res, alias;
    const char *a100 = "model=gpt2 task=lm gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=8 seq_len=1024 "
                       "data=on_gpu";
    char words[300];
    snprintf(words, sizeof words, "%s attention=flash3", a100);
    attention_refused(ctx, words, "attention=flash3", "Hopper");
    static const char *const pairs[][2] = {{"flash", "flash2"}, {"flash_triton", "triton"}};
    for (size_t i = 0; i < 2; i++) {
        snprintf(words, sizeof words, "%s attention=%s", a100, pairs[i][0]);
        ec_test_predict(ctx, words, &res);
        snprintf(words, sizeof words, "%s attention=%s", a100, pairs[i][1]);
        ec_test_predict(ctx, words, &alias);
        assert_rel(alias.step_s, res.step_s, EC_TOL_EXACT);
    }
    /* flash2 (what flash meant in every fit) on Ampere: its own rows, no warning */
    assert_null(strstr(res.warning_text, "attention.csv"));
    ec_test_predict(ctx, "model=gpt2 task=lm gpu=rtx4090 precision=amp_bf16 batch_per_gpu=8 seq_len=1024 "
                         "data=on_gpu attention=flash2", &res);
    assert_true(res.warnings & EC_WARN_MODEL_DEFAULTED);
    assert_contains(res.warning_text, "attention=flash2: models/attention.csv has no row for architecture 'ada'");
    /* FlashAttention-4: rows for Blackwell only, so Hopper refuses it naming the key and the file;
     * on a B200 it beats FlashAttention-2, whose sm80 kernels reach a fifth of the peak there
     * (attention.csv's flash2,blackwell rows, measured: no prior, no warning) */
    const char *b200 = "model=gpt2 task=lm precision=amp_bf16 batch_per_gpu=8 seq_len=4096 data=on_gpu";
    snprintf(words, sizeof words, "%s gpu=h100-sxm5-80gb attention=flash4", b200);
    attention_refused(ctx, words, "attention=flash4", "Blackwell");
    snprintf(words, sizeof words, "%s gpu=b200 attention=flash4", b200);
    ec_test_predict(ctx, words, &res);
    snprintf(words, sizeof words, "%s gpu=b200 attention=flash2", b200);
    ec_test_predict(ctx, words, &alias);
    assert_true(res.step_s < alias.step_s);
    assert_null(strstr(alias.warning_text, "attention.csv"));
    /* the default (sdpa) takes SDPA's pick without a warning */
    ec_test_predict(ctx, "model=gpt2 task=lm gpu=rtx4090 precision=amp_bf16 batch_per_gpu=8 seq_len=1024 "
                         "data=on_gpu", &res);
    assert_null(strstr(res.warning_text, "attention.csv"));
    ec_ctx_free(ctx);
}

/* attention=cudnn_fp8 (Transformer Engine's FP8 attention): refused without precision=amp_fp8 and
 * where attention.csv has no row (Ampere, Ada), naming the key; on an H200 its forward runs at
 * attention.csv's fraction of the FP8 peak, not of the bf16 one, and it is unfitted: its
 * efficiency as published, with the warning that says so. */
static void test_attention_cudnn_fp8(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const char *base = "model=llama-3.1-8b task=lm gpu=h200-sxm-141gb kernels=te batch_per_gpu=1 seq_len=8192 "
                       "data=on_gpu strategy=fsdp num_gpus=8";
    char words[300];
    ec_config cfg;
    ec_result res, bf16;
    snprintf(words, sizeof words, "%s precision=amp_bf16 attention=cudnn_fp8", base);
    ec_test_config(ctx, &cfg, words);
    assert_int_not_equal(ec_predict(ctx, &cfg, &res), EC_OK);
    assert_contains(ec_ctx_errmsg(ctx), "attention=cudnn_fp8");
    assert_contains(ec_ctx_errmsg(ctx), "precision=amp_fp8");
    attention_refused(ctx, "model=gpt2 task=lm gpu=l40s precision=amp_fp8 batch_per_gpu=8 seq_len=1024 data=on_gpu "
                           "attention=cudnn_fp8", "attention=cudnn_fp8", "ada");
    snprintf(words, sizeof words, "%s precision=amp_fp8 attention=cudnn_fp8", base);
    ec_test_predict(ctx, words, &res);
    assert_contains(res.warning_text, "no calibration runs with attention kernel cudnn_fp8");
    snprintf(words, sizeof words, "%s precision=amp_fp8 attention=cudnn", base);
    ec_test_predict(ctx, words, &bf16);
    assert_true(res.step_s != bf16.step_s);
    /* one forward op: FLOPs / time = FP8 peak x the hopper forward row (0.533, not causal) x shape
     * utilization, within TOL_LAST_WAVE: the partial last wave of tiles over the SMs (3e-5 here) */
    const double TOL_LAST_WAVE = 1e-3;
    const eci_gpu *g = eci_hw_find(ctx, "h200-sxm-141gb");
    assert_non_null(g);
    eci_params calib;
    eci_params_default(ctx, &calib);
    eci_rates r;
    eci_rates_init(ctx, g, EC_PREC_AMP_FP8, &calib, 0, EC_KERNELS_TE, &r);
    eci_rates_attention(ctx, g, EC_ATTN_CUDNN_FP8, EC_PREC_AMP_FP8, 0, 0, 0, &r);
    assert_rel(r.attn_flop_per_s, g->peak_fp8_flop_per_s, EC_TOL_EXACT);
    eci_op op;
    memset(&op, 0, sizeof op);
    op.kind = ECI_OP_ATTN;
    op.m = op.n = 16384;
    op.k = 256; /* head dim 128 */
    op.batch = 64;
    eci_op_cost_t c;
    eci_op_cost(ctx, &r, &op, &c);
    double rate = 2.0 * op.m * op.n * op.k * op.batch / c.fwd_s;
    assert_rel(rate, g->peak_fp8_flop_per_s * r.attn_frac[0][0] * r.attn_eff, TOL_LAST_WAVE);
    assert_true(r.attn_frac[0][0] > 0.4 && r.attn_frac[0][0] < 0.7);
    /* the same rates struct back on a 16-bit kernel: the 16-bit unit's peak again */
    eci_rates_attention(ctx, g, EC_ATTN_CUDNN, EC_PREC_AMP_FP8, 0, 0, 0, &r);
    assert_rel(r.attn_flop_per_s, g->peak_bf16_flop_per_s, EC_TOL_EXACT);
    ec_ctx_free(ctx);
}

/* One fused attention op's time per FLOP on g for attention=attention, head dim hd, forward
 * (pass 0) or backward (1), not causal. */
static double attn_s_per_flop(ec_ctx *ctx, const eci_gpu *g, int attention, double hd, int pass)
{
    eci_params calib;
    eci_params_default(ctx, &calib);
    eci_rates r;
    eci_rates_init(ctx, g, EC_PREC_AMP_BF16, &calib, 0, EC_KERNELS_EAGER, &r);
    eci_rates_attention(ctx, g, attention, EC_PREC_AMP_BF16, 0, 0, 0, &r);
    eci_op op;
    memset(&op, 0, sizeof op);
    op.kind = ECI_OP_ATTN; /* 16k tokens in 8 sequences of 2k, 2048 / hd heads (FA2-PAPER's setting) */
    op.m = op.n = 2048;
    op.k = 2 * hd;
    op.batch = 8 * 2048 / hd;
    op.bwd = 1;
    eci_op_cost_t c;
    eci_op_cost(ctx, &r, &op, &c);
    return (pass ? c.bwd_s : c.fwd_s) / (2.0 * op.m * op.n * op.k * op.batch);
}

/* Head dim is data (models/attention.csv head_dim, issue 39): FlashAttention-2 on an A100 runs
 * head dim 64 at a smaller share of the peak than head dim 128 (FA2-PAPER figure 4: 176 against
 * 203 TFLOP/s at 16k), both passes, and a head dim between takes a rate between; FlashAttention
 * v1 (attention=flash1) is slower than FlashAttention-2, and faster at head dim 64 than at 128
 * (110 against 83 TFLOP/s); FlashAttention-3 on H100 is fastest at head dim 256. */
static void test_attention_head_dim(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_gpu *a100 = eci_hw_find(ctx, "a100-sxm4-80gb"), *h100 = eci_hw_find(ctx, "h100-sxm5-80gb");
    for (int pass = 0; pass < 2; pass++) {
        double f64 = attn_s_per_flop(ctx, a100, EC_ATTN_FLASH, 64, pass);
        double f96 = attn_s_per_flop(ctx, a100, EC_ATTN_FLASH, 96, pass);
        double f128 = attn_s_per_flop(ctx, a100, EC_ATTN_FLASH, 128, pass);
        assert_true(f64 > 1.1 * f128);
        assert_true(f96 < f64 && f96 > f128);
        double v64 = attn_s_per_flop(ctx, a100, EC_ATTN_FLASH1, 64, pass);
        double v128 = attn_s_per_flop(ctx, a100, EC_ATTN_FLASH1, 128, pass);
        assert_true(v64 > 1.5 * f64 && v128 > 2.0 * f128);
        assert_true(v64 < v128);
    }
    double h64 = attn_s_per_flop(ctx, h100, EC_ATTN_FLASH3, 64, 0);
    double h128 = attn_s_per_flop(ctx, h100, EC_ATTN_FLASH3, 128, 0);
    double h256 = attn_s_per_flop(ctx, h100, EC_ATTN_FLASH3, 256, 0);
    assert_true(h64 > h128 && h128 > h256);
    /* flash1 by name, on an architecture without rows: its prior, with the warning */
    ec_result res;
    ec_test_predict(ctx, "model=gpt2 task=lm gpu=rtx4090 precision=amp_bf16 batch_per_gpu=8 seq_len=1024 "
                         "data=on_gpu attention=flash1", &res);
    assert_contains(res.warning_text, "attention=flash1: models/attention.csv has no row for architecture 'ada'");
    ec_ctx_free(ctx);
}

/* SDPA's backend is data (models/sdpa_backends.csv), by release, GPU and dtype: torch 2.5 runs
 * cuDNN attention on H100 in 16-bit (2.5 release notes), torch 2.0 FlashAttention on a T4 in fp16
 * (sm75 admitted until 2.2; FlashAttention v1 until 2.2, attention.csv's flash1 rows), fp32 the memory-efficient kernel;
 * torch_version unset keeps the mapping before the table: flash2 for 16-bit from sm80. */
static void test_sdpa_backends(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_gpu *h100 = eci_hw_find(ctx, "h100-sxm5-80gb"), *t4 = eci_hw_find(ctx, "t4");
    const eci_gpu *a100 = eci_hw_find(ctx, "a100-sxm4-80gb");
    static const struct {
        const char *gpu;
        int precision;
        int torch; /* EC_RELEASE */
        int kernel;
    } cases[] = {
        {"h", EC_PREC_AMP_BF16, 0, ECI_AK_FLASH2},    {"h", EC_PREC_AMP_BF16, EC_RELEASE(2, 5), ECI_AK_CUDNN},
        {"h", EC_PREC_AMP_BF16, EC_RELEASE(2, 4), ECI_AK_FLASH2},  {"h", EC_PREC_AMP_BF16, EC_RELEASE(2, 13), ECI_AK_CUDNN},
        {"h", EC_PREC_AMP_BF16, EC_RELEASE(2, 0), ECI_AK_MEM_EFFICIENT}, {"a", EC_PREC_AMP_BF16, EC_RELEASE(2, 13), ECI_AK_FLASH2},
        {"t", EC_PREC_AMP_FP16, EC_RELEASE(2, 0), ECI_AK_FLASH1},  {"t", EC_PREC_AMP_FP16, EC_RELEASE(2, 2), ECI_AK_MEM_EFFICIENT},
        {"t", EC_PREC_AMP_FP16, 0, ECI_AK_MEM_EFFICIENT}, {"h", EC_PREC_FP32, EC_RELEASE(2, 5), ECI_AK_MEM_EFFICIENT},
        {"h", EC_PREC_TF32, 0, ECI_AK_MEM_EFFICIENT}, {"a", EC_PREC_FP32, EC_RELEASE(2, 1), ECI_AK_MEM_EFFICIENT},
        {"a", EC_PREC_AMP_BF16, EC_RELEASE(2, 1), ECI_AK_FLASH1}, {"a", EC_PREC_AMP_BF16, EC_RELEASE(2, 2), ECI_AK_FLASH2},
        /* 2.10 is not 2.1: H100 ran FlashAttention v1 under 2.1, FlashAttention-2 under 2.10 */
        {"h", EC_PREC_AMP_BF16, EC_RELEASE(2, 1), ECI_AK_FLASH1}, {"h", EC_PREC_AMP_BF16, EC_RELEASE(2, 10), ECI_AK_FLASH2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const eci_gpu *g = cases[i].gpu[0] == 'h' ? h100 : cases[i].gpu[0] == 't' ? t4 : a100;
        assert_int_equal(eci_attn_kernel_for(ctx, g, EC_ATTN_SDPA, cases[i].precision, cases[i].torch, 0),
                         cases[i].kernel);
    }
    /* the prediction reads it: sdpa under torch 2.5 is attention=cudnn on H100, under 2.4 flash2 */
    const char *h = "model=gpt2 task=lm gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=8 seq_len=2048 "
                    "data=on_gpu";
    char words[300];
    ec_result sdpa, named;
    static const char *const pairs[][2] = {{"2.5", "cudnn"}, {"2.4", "flash2"}};
    for (size_t i = 0; i < 2; i++) {
        snprintf(words, sizeof words, "%s torch_version=%s", h, pairs[i][0]);
        ec_test_predict(ctx, words, &sdpa);
        snprintf(words, sizeof words, "%s torch_version=%s attention=%s", h, pairs[i][0], pairs[i][1]);
        ec_test_predict(ctx, words, &named);
        assert_rel(sdpa.step_s, named.step_s, EC_TOL_EXACT);
    }
    /* a T4 in fp16: torch 2.0's FlashAttention is not 2.2's memory-efficient kernel */
    ec_result t20, t22;
    ec_test_predict(ctx, "model=gpt2 task=lm gpu=t4 precision=amp_fp16 batch_per_gpu=4 seq_len=1024 data=on_gpu "
                         "torch_version=2.0", &t20);
    ec_test_predict(ctx, "model=gpt2 task=lm gpu=t4 precision=amp_fp16 batch_per_gpu=4 seq_len=1024 data=on_gpu "
                         "torch_version=2.2", &t22);
    assert_true(fabs(t20.step_s - t22.step_s) > 1e-6 * t22.step_s);
    ec_ctx_free(ctx);
}

/* A batch with a padding mask (lengths given) reaches SDPA with an attn_mask, which the flash
 * backends refuse (sdp_utils.cpp can_use_flash_attention: check_for_attn_mask; models/
 * sdpa_backends.csv attn_mask): 16-bit SDPA then runs the memory-efficient kernel (the next
 * backend in priority order), cuDNN keeps the mask; fp32 ran the memory-efficient kernel anyway,
 * and a named flash kernel (flash-attn unpads instead) is not moved. */
static void test_sdpa_padding_mask(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    const eci_gpu *a100 = eci_hw_find(ctx, "a100-sxm4-80gb"), *h100 = eci_hw_find(ctx, "h100-sxm5-80gb");
    assert_int_equal(eci_attn_kernel_for(ctx, a100, EC_ATTN_SDPA, EC_PREC_AMP_FP16, EC_RELEASE(2, 4), 0), ECI_AK_FLASH2);
    assert_int_equal(eci_attn_kernel_for(ctx, a100, EC_ATTN_SDPA, EC_PREC_AMP_FP16, EC_RELEASE(2, 4), 1), ECI_AK_MEM_EFFICIENT);
    assert_int_equal(eci_attn_kernel_for(ctx, a100, EC_ATTN_SDPA, EC_PREC_AMP_BF16, EC_RELEASE(2, 1), 1), ECI_AK_MEM_EFFICIENT);
    assert_int_equal(eci_attn_kernel_for(ctx, a100, EC_ATTN_SDPA, EC_PREC_AMP_BF16, 0, 1), ECI_AK_MEM_EFFICIENT);
    assert_int_equal(eci_attn_kernel_for(ctx, h100, EC_ATTN_SDPA, EC_PREC_AMP_BF16, EC_RELEASE(2, 5), 1), ECI_AK_CUDNN);
    assert_int_equal(eci_attn_kernel_for(ctx, a100, EC_ATTN_SDPA, EC_PREC_TF32, EC_RELEASE(2, 4), 1), ECI_AK_MEM_EFFICIENT);
    assert_int_equal(eci_attn_kernel_for(ctx, a100, EC_ATTN_FLASH, EC_PREC_AMP_FP16, EC_RELEASE(2, 4), 1), ECI_AK_FLASH2);
    /* the prediction reads it: BERT fine-tuned under autocast on padded batches runs the
     * memory-efficient kernel's step (slower than FlashAttention-2 at head dim 64), the same
     * batches without a mask flash's; the named memory-efficient pick prices like sdpa masked.
     * At sequence 512, where the attention kernels' rates (not their fixed times) set the step:
     * at 128 both kernels cost their floor and the two steps can come out equal. */
    ec_result masked, flash, unmasked, tf32_m, tf32_u;
#define BERT512 "model=bert-base task=classify gpu=a100-sxm4-80gb seq_len=512 batch_per_gpu=32 "
    const char *pad = "precision=amp_fp16 torch_version=2.4 padding=max_length lengths=lognormal(300,0.3) ";
    char words[400];
    snprintf(words, sizeof words, BERT512 "%s", pad);
    ec_test_predict(ctx, words, &masked);
    snprintf(words, sizeof words, BERT512 "%s attention=flash2", pad);
    ec_test_predict(ctx, words, &flash);
    ec_test_predict(ctx, BERT512 "precision=amp_fp16 torch_version=2.4 padding=max_length", &unmasked);
#undef BERT512
    assert_true(masked.breakdown.forward_s > flash.breakdown.forward_s * (1 + 1e-6));
    assert_true(masked.breakdown.backward_s > flash.breakdown.backward_s * (1 + 1e-6));
    assert_rel(flash.breakdown.forward_s, unmasked.breakdown.forward_s, EC_TOL_EXACT);
    /* tf32: the memory-efficient kernel with or without the mask; with it, the kernel at the
     * mask's prior efficiency (constants.csv sdpa_mask_eff_frac: the fit ran no masked run of
     * that kernel): slower, by less than a whole step at that efficiency would be */
    ec_test_predict(ctx, BERT "precision=tf32 torch_version=2.4 padding=max_length lengths=lognormal(60,0.3)", &tf32_m);
    ec_test_predict(ctx, BERT "precision=tf32 torch_version=2.4 padding=max_length", &tf32_u);
    double mask_eff = eci_const(ctx, EC_C_sdpa_mask_eff_frac);
    assert_true(mask_eff < 1.0);
    assert_true(tf32_m.breakdown.forward_s > tf32_u.breakdown.forward_s * (1 + 1e-6));
    assert_true(tf32_m.breakdown.forward_s < tf32_u.breakdown.forward_s / mask_eff);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_modes),    cmocka_unit_test(test_fused_kernels),
        cmocka_unit_test(test_memory_format),
        cmocka_unit_test(test_conv_pricing),
        cmocka_unit_test(test_te_kernels),       cmocka_unit_test(test_linear_bias_pass),
        cmocka_unit_test(test_data_sources),     cmocka_unit_test(test_evaluation),
        cmocka_unit_test(test_sdpa_causal),      cmocka_unit_test(test_flash_triton),
        cmocka_unit_test(test_attention_by_architecture), cmocka_unit_test(test_attention_names),
        cmocka_unit_test(test_attention_cudnn_fp8),
        cmocka_unit_test(test_attention_op_by_architecture), cmocka_unit_test(test_sdpa_backends),
        cmocka_unit_test(test_attention_head_dim), cmocka_unit_test(test_sdpa_padding_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
