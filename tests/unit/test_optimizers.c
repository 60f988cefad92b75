/*
 * test_optimizers.c: what runs between the last backward and the next forward, as the stack
 * runs it (optim.c, trainer.c): the optimizer catalogue (states, kernels, paged states, Python
 * loops, apex's multi-tensor FusedAdam, DeepLearningExamples' BertAdam, amp O2's fp32 master
 * copy), clipping (torch's
 * clip_grad_norm_ by release, apex's multi-tensor clip) and the trainers' defaults.  Each test
 * states a relation the mechanism implies, not a number.
 */
#include "ec_test.h"
#include "internal.h"
#include "catalog/consts.h"

#include <math.h>
#include <string.h>

#define BERT "model=bert-base task=classify gpu=a100-sxm4-80gb seq_len=128 batch_per_gpu=32 "

/* Predict `base` followed by `more` (a few more words). */
static void predict_with(ec_ctx *ctx, const char *base, const char *more, ec_result *res)
{
    char words[320];
    snprintf(words, sizeof words, "%s%s", base, more);
    ec_test_predict(ctx, words, res);
}

/* ---- optimizers ------------------------------------------------------------------------- */

/* States: AdamW keeps two fp32 moments (8 bytes per parameter), the 8-bit optimizers two
 * uint8 states (constants.csv opt_8bit_state_bytes_per_param), SGD with momentum one, and
 * Adafactor a row and a column statistic per matrix: far less than one moment. */
static void test_optimizer_states(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result adam, bnb, sgd, ada;
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_torch", &adam);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_8bit", &bnb);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=sgd_momentum", &sgd);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adafactor", &ada);
    double per_param_8bit = eci_const(ctx, EC_C_opt_8bit_state_bytes_per_param);
    /* the parts as they stand at the peak may include step temporaries: compare the
     * persistent states through the model summary instead */
    ec_model_summary s_adam, s_bnb, s_sgd, s_ada;
    ec_config cfg;
    ec_test_config(ctx, &cfg, BERT "precision=amp_fp16 optimizer=adamw_torch");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s_adam, NULL, 0), EC_OK);
    ec_test_config(ctx, &cfg, BERT "precision=amp_fp16 optimizer=adamw_8bit");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s_bnb, NULL, 0), EC_OK);
    ec_test_config(ctx, &cfg, BERT "precision=amp_fp16 optimizer=sgd_momentum");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s_sgd, NULL, 0), EC_OK);
    ec_test_config(ctx, &cfg, BERT "precision=amp_fp16 optimizer=adafactor");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s_ada, NULL, 0), EC_OK);
    assert_rel(s_adam.optimizer_bytes, 8.0 * s_adam.params, EC_TOL_EXACT);
    assert_rel(s_bnb.optimizer_bytes, per_param_8bit * s_bnb.params, EC_TOL_EXACT);
    assert_rel(s_sgd.optimizer_bytes, 4.0 * s_sgd.params, EC_TOL_EXACT);
    assert_true(s_ada.optimizer_bytes < 0.25 * s_adam.optimizer_bytes);
    assert_true(bnb.memory.allocated_bytes < adam.memory.allocated_bytes);
    assert_true(ada.memory.allocated_bytes < adam.memory.allocated_bytes);
    ec_ctx_free(ctx);
}

/* paged_adamw_8bit keeps its states in CUDA unified memory: outside PyTorch's allocator
 * (allocated and reserved), inside what nvidia-smi shows. */
static void test_paged_states(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result bnb, paged;
    ec_test_predict(ctx, BERT "precision=amp_bf16 optimizer=adamw_8bit", &bnb);
    ec_test_predict(ctx, BERT "precision=amp_bf16 optimizer=paged_adamw_8bit", &paged);
    ec_model_summary s;
    ec_config cfg;
    ec_test_config(ctx, &cfg, BERT "precision=amp_bf16 optimizer=paged_adamw_8bit");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s, NULL, 0), EC_OK);
    assert_true(paged.memory.allocated_bytes < bnb.memory.allocated_bytes);
    /* nvml = reserved + context + paged states */
    assert_rel(paged.memory.nvml_bytes, paged.memory.reserved_bytes + paged.memory.context_bytes + s.optimizer_bytes,
               EC_TOL_CLOSED_FORM);
    /* bitsandbytes' 32-bit PagedAdamW (torchtune's full_low_memory configs): two fp32 states per
     * parameter whatever the parameters' dtype, paged as well: in a bf16 model 8 bytes each
     * beside the reserved reading, none in what is allocated */
    ec_result p32, fused;
    ec_test_predict(ctx, BERT "precision=bf16 optimizer=paged_adamw", &p32);
    ec_test_predict(ctx, BERT "precision=bf16 optimizer=adamw_fused", &fused);
    ec_test_config(ctx, &cfg, BERT "precision=bf16 optimizer=paged_adamw");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s, NULL, 0), EC_OK);
    assert_rel(s.optimizer_bytes, 8.0 * s.params, EC_TOL_CLOSED_FORM);
    assert_rel(p32.memory.nvml_bytes, p32.memory.reserved_bytes + p32.memory.context_bytes + 8.0 * s.params,
               EC_TOL_CLOSED_FORM);
    assert_true(p32.memory.allocated_bytes < fused.memory.allocated_bytes - 2.0 * s.params);
    ec_ctx_free(ctx);
}

/* transformers' AdamW (adamw_hf) loops over the parameters in Python: more kernels and
 * more host time than the foreach torch.optim.AdamW, which launches per chunk of tensors;
 * PyTorch 1.x's torch.optim looped too. */
static void test_optimizer_loops(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result hf, foreach, fused, old;
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_hf", &hf);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_torch", &foreach);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_torch_fused", &fused);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_torch torch_version=1.13", &old);
    assert_true(hf.kernels_per_step > foreach.kernels_per_step);
    assert_true(hf.cpu_issue_s > foreach.cpu_issue_s);
    assert_true(fused.kernels_per_step < foreach.kernels_per_step);
    assert_true(old.kernels_per_step > foreach.kernels_per_step);
    ec_ctx_free(ctx);
}

/* ---- clipping and trainers -------------------------------------------------------------- */

/* transformers.Trainer clips at max_grad_norm 1.0 by default: the norm's kernels and its
 * sync; max_grad_norm=0 turns that off, and the plain loop clips only when told. */
static void test_trainer_clipping(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result plain, hf, hf_off, plain_clip;
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_torch", &plain);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_torch trainer=hf", &hf);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_torch trainer=hf max_grad_norm=0", &hf_off);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_torch max_grad_norm=1", &plain_clip);
    int clip = (int)(eci_const(ctx, EC_C_clip_fixed_kernels) + 0.5);
    assert_true(hf.kernels_per_step >= hf_off.kernels_per_step + clip);
    assert_true(plain_clip.kernels_per_step >= plain.kernels_per_step + clip);
    /* the Trainer's own Python per step */
    assert_true(hf_off.cpu_issue_s > plain.cpu_issue_s);
    ec_ctx_free(ctx);
}

/* apex.optimizers.FusedAdam is one multi-tensor kernel per chunk in every release, where
 * PyTorch 1.x's torch.optim.AdamW looped over the tensors; it does not take GradScaler's
 * scale, so amp_fp16 keeps the unscale pass that torch's fused AdamW folds in. */
static void test_apex_fused_adam(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result apex_old, apex_new, torch_old, fused, torch_fused;
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_apex_fused torch_version=1.13 zero_grad=set_to_none",
                    &apex_old);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_apex_fused zero_grad=set_to_none", &apex_new);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=adamw_torch torch_version=1.13 zero_grad=set_to_none",
                    &torch_old);
    assert_rel(apex_old.kernels_per_step, apex_new.kernels_per_step, EC_TOL_EXACT);
    assert_true(apex_old.kernels_per_step < torch_old.kernels_per_step);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_apex_fused", &fused);
    ec_test_predict(ctx, BERT "precision=amp_fp16 optimizer=adamw_torch_fused", &torch_fused);
    assert_true(fused.kernels_per_step > torch_fused.kernels_per_step);
    ec_ctx_free(ctx);
}

/* BertAdam loops over the tensors like transformers' AdamW, with more kernels per tensor
 * (constants.csv opt_bertadam_kernels_per_tensor against opt_adamw_hf_kernels_per_tensor):
 * the kernels it adds over adamw_hf are (k_bert - k_hf) x tensors, and adamw_hf's loop is
 * k_hf x tensors more than no optimizer.  Before clip_sync_until_version its per-tensor
 * clip_grad_norm_ waits for the GPU after every tensor: the step is slower than from it. */
static void test_bertadam(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result bert, hf, none, old, now;
    const char *common = BERT "precision=fp32 zero_grad=set_to_none torch_version=2.4 optimizer=";
    predict_with(ctx, common, "bertadam", &bert);
    predict_with(ctx, common, "adamw_hf", &hf);
    predict_with(ctx, common, "none", &none);
    double k_bert = eci_const(ctx, EC_C_opt_bertadam_kernels_per_tensor);
    double k_hf = eci_const(ctx, EC_C_opt_adamw_hf_kernels_per_tensor);
    double tensors = (hf.kernels_per_step - none.kernels_per_step) / k_hf;
    assert_true(tensors > 100); /* BERT-base: 16 per layer, 12 layers, embeddings, head */
    assert_rel(bert.kernels_per_step - hf.kernels_per_step, (k_bert - k_hf) * tensors, EC_TOL_CLOSED_FORM);
    assert_true(bert.cpu_issue_s > hf.cpu_issue_s);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=bertadam torch_version=1.9", &old);
    ec_test_predict(ctx, BERT "precision=fp32 optimizer=bertadam torch_version=1.10", &now);
    assert_rel(old.kernels_per_step, now.kernels_per_step, EC_TOL_EXACT);
    assert_true(old.step_s > now.step_s);
    ec_ctx_free(ctx);
}

/* clip_impl=multi_tensor (apex amp_C, DeepLearningExamples' BERT): two multi-tensor ops over
 * chunks of gradients and clip_multi_tensor_fixed_kernels in every release, where PyTorch
 * 1.x's clip_grad_norm_ launched a norm and a mul_ per tensor; from 2.0 torch's foreach clip
 * launches per chunk as well, with more single kernels (clip_fixed_kernels). */
static void test_multi_tensor_clip(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result mt_old, mt_new, torch_old, torch_new, off;
    const char *base = BERT "precision=fp32 optimizer=adamw_apex_fused zero_grad=set_to_none ";
    predict_with(ctx, base, "max_grad_norm=1 clip_impl=multi_tensor torch_version=1.13", &mt_old);
    predict_with(ctx, base, "max_grad_norm=1 clip_impl=multi_tensor torch_version=2.4", &mt_new);
    predict_with(ctx, base, "max_grad_norm=1 torch_version=1.13", &torch_old);
    predict_with(ctx, base, "max_grad_norm=1 torch_version=2.4", &torch_new);
    predict_with(ctx, base, "max_grad_norm=0 torch_version=2.4", &off);
    assert_rel(mt_old.kernels_per_step, mt_new.kernels_per_step, EC_TOL_EXACT);
    assert_true(mt_old.kernels_per_step < torch_old.kernels_per_step);
    /* same chunks, fixed kernels differ: clip_fixed_kernels - clip_multi_tensor_fixed_kernels */
    assert_rel(torch_new.kernels_per_step - mt_new.kernels_per_step,
               eci_const(ctx, EC_C_clip_fixed_kernels) - eci_const(ctx, EC_C_clip_multi_tensor_fixed_kernels),
               EC_TOL_CLOSED_FORM);
    assert_true(mt_new.kernels_per_step > off.kernels_per_step);
    /* without clipping the key does nothing, and the prediction says so */
    predict_with(ctx, base, "max_grad_norm=0 clip_impl=multi_tensor", &off);
    assert_true(off.warnings & EC_WARN_KEY_IGNORED);
    assert_non_null(strstr(off.warning_text, "clip_impl (needs max_grad_norm > 0)"));
    ec_ctx_free(ctx);
}

/* master_weights=1 (apex amp O2): a pure 16-bit model's optimizer steps an fp32 master copy,
 * so its states are fp32 and the master weights sit beside them (12 bytes per parameter under
 * AdamW against 2 x 2), and two multi-tensor passes run around the step: the gradients into the
 * master gradients and the weights back, one kernel per chunk of tensors each.  Under autocast
 * (amp_bf16) the parameters are fp32 already: the key changes nothing. */
static void test_master_weights(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_model_summary s_master, s_plain;
    ec_config cfg;
    ec_test_config(ctx, &cfg, BERT "precision=fp16 optimizer=adamw_apex_fused master_weights=1");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s_master, NULL, 0), EC_OK);
    ec_test_config(ctx, &cfg, BERT "precision=fp16 optimizer=adamw_apex_fused");
    assert_int_equal(ec_model_summary_get(ctx, &cfg, &s_plain, NULL, 0), EC_OK);
    assert_rel(s_master.optimizer_bytes, 12.0 * s_master.params, EC_TOL_EXACT);
    assert_rel(s_plain.optimizer_bytes, 4.0 * s_plain.params, EC_TOL_EXACT);

    ec_result master, plain, hf, none;
    const char *common = BERT "precision=fp16 zero_grad=set_to_none optimizer=";
    predict_with(ctx, common, "adamw_apex_fused master_weights=1", &master);
    predict_with(ctx, common, "adamw_apex_fused", &plain);
    predict_with(ctx, common, "adamw_hf", &hf);
    predict_with(ctx, common, "none", &none);
    double tensors = (hf.kernels_per_step - none.kernels_per_step) / eci_const(ctx, EC_C_opt_adamw_hf_kernels_per_tensor);
    double chunks = ceil(tensors / eci_const(ctx, EC_C_foreach_tensors_per_kernel));
    assert_rel(master.kernels_per_step - plain.kernels_per_step, 2.0 * chunks, EC_TOL_CLOSED_FORM);
    assert_true(master.step_s > plain.step_s);
    assert_true(master.memory.optimizer_bytes >= plain.memory.optimizer_bytes + 8.0 * s_plain.params);

    /* accumulated steps: after each later micro-step's backward amp adds its 16-bit gradients into the fp32
     * master gradients (unscale_with_stashed, one chunk pass of master_grad_accumulate_bytes_per_param), so
     * under grad_accum 4 master weights add 3 more chunk passes than under grad_accum 1 */
    ec_result master4, plain4;
    predict_with(ctx, common, "adamw_apex_fused master_weights=1 grad_accum=4", &master4);
    predict_with(ctx, common, "adamw_apex_fused grad_accum=4", &plain4);
    assert_rel(master4.kernels_per_step - plain4.kernels_per_step, (2.0 + 3.0) * chunks, EC_TOL_CLOSED_FORM);
    assert_true(master4.step_s - plain4.step_s > master.step_s - plain.step_s);

    ec_result bf16_master, bf16;
    ec_test_predict(ctx, BERT "precision=amp_bf16 master_weights=1", &bf16_master);
    ec_test_predict(ctx, BERT "precision=amp_bf16", &bf16);
    assert_rel(bf16_master.kernels_per_step, bf16.kernels_per_step, EC_TOL_EXACT);
    assert_rel(bf16_master.step_s, bf16.step_s, EC_TOL_EXACT);
    assert_true(bf16_master.warnings & EC_WARN_KEY_IGNORED); /* and the prediction says the key did nothing */
    assert_non_null(strstr(bf16_master.warning_text, "master_weights (precision=fp16 or bf16 only)"));
    ec_ctx_free(ctx);
}

/* Before clip_norm_stacked_from_version (PyTorch 1.6) clip_grad_norm_ read every parameter's
 * norm on the host: a norm kernel and a sync per tensor, the factor a float (none of the
 * stack, total norm, + 1e-6, division and clamp kernels: clip_fixed_kernels fewer), a serial
 * loop; BertAdam's per-tensor clip is then one norm, not
 * opt_bertadam_clip_kernels_per_tensor kernels. */
static void test_clip_by_release(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    ec_result old, mid, bert_old, bert_mid, hf, none;
    const char *clip = BERT "precision=fp32 optimizer=adamw_apex_fused zero_grad=set_to_none max_grad_norm=1 ";
    predict_with(ctx, clip, "torch_version=1.5", &old);
    predict_with(ctx, clip, "torch_version=1.9", &mid);
    assert_rel(mid.kernels_per_step - old.kernels_per_step, eci_const(ctx, EC_C_clip_fixed_kernels), EC_TOL_CLOSED_FORM);
    const char *bert = BERT "precision=fp32 optimizer=bertadam zero_grad=set_to_none torch_version=";
    predict_with(ctx, bert, "1.5", &bert_old);
    predict_with(ctx, bert, "1.9", &bert_mid);
    const char *common = BERT "precision=fp32 zero_grad=set_to_none torch_version=2.4 optimizer=";
    predict_with(ctx, common, "adamw_hf", &hf);
    predict_with(ctx, common, "none", &none);
    double tensors = (hf.kernels_per_step - none.kernels_per_step) / eci_const(ctx, EC_C_opt_adamw_hf_kernels_per_tensor);
    assert_rel(bert_mid.kernels_per_step - bert_old.kernels_per_step,
               (eci_const(ctx, EC_C_opt_bertadam_clip_kernels_per_tensor) - 1.0) * tensors, EC_TOL_CLOSED_FORM);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_optimizer_states), cmocka_unit_test(test_paged_states),
        cmocka_unit_test(test_optimizer_loops),  cmocka_unit_test(test_apex_fused_adam),
        cmocka_unit_test(test_bertadam),         cmocka_unit_test(test_multi_tensor_clip),
        cmocka_unit_test(test_clip_by_release),  cmocka_unit_test(test_master_weights),
        cmocka_unit_test(test_trainer_clipping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
