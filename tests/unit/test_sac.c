/*
 * test_sac.c: checkpointing=selective_op, torchtitan's per-op selective activation
 * checkpointing (torchtitan/models/llama3/infra/parallelize.py: _save_list and the policy that
 * keeps every second aten.mm), on a small Llama whose numbers are worked out by hand: what a
 * checkpointed layer keeps (its input, the outputs of wq, wv, w1, w2 and of the fused attention)
 * lies strictly between checkpointing=1 and =0; what it recomputes is wk, wo and w3 (and the
 * elementwise ops, which count no FLOPs); a network without a matmul in a checkpointed layer
 * is refused with the key named.
 */
#include "ec_test.h"
#include "ec_test_wl.h"
#include "internal.h"
#include "model/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* V 1000, H 256, 4 layers, 4 heads of 64, 2 key/value heads, intermediate 512. */
static char *write_llama(const char *dir, const char *name)
{
    static const char text[] =
        "{\"model_type\": \"llama\", \"architectures\": [\"LlamaForCausalLM\"], \"vocab_size\": 1000, "
        "\"hidden_size\": 256, \"intermediate_size\": 512, \"num_hidden_layers\": 4, \"num_attention_heads\": 4, "
        "\"num_key_value_heads\": 2, \"tie_word_embeddings\": false}";
    char *path = ec_test_path(dir, name);
    ec_test_write_file(path, text, sizeof text - 1);
    return path;
}

/* batch 2 x seq 128 = 256 rows, bf16 autocast, the fused (flash) attention. */
static const eci_workload *workload(ec_ctx *ctx, const char *model)
{
    eci_shape sh = ec_test_lm_shape(EC_PREC_AMP_BF16, 2, 128);
    sh.flash = 1;
    return ec_test_lm_workload(ctx, model, &sh);
}

static const eci_block *layer_block(const eci_workload *wl)
{
    for (size_t b = 0; b < wl->n_blocks; b++)
        if (wl->blocks[b].checkpoint && wl->blocks[b].reps == 4)
            return &wl->blocks[b];
    fail_msg("no checkpointed block of 4 layers");
    return NULL;
}

/* Kept per layer, 256 rows at 2 bytes (the 16-bit outputs of autocast's matmuls):
 *   wq  256 x 256 x 2                    = 131,072   (mm 1: kept)
 *   wk  256 x 128 x 2                               (mm 2: recomputed)
 *   wv  256 x 128 x 2                    =  65,536   (mm 3: kept)
 *   SDPA output 256 x 4 heads x 64 x 2 + log-sum-exp 256 x 4 x 4 bytes = 131,072 + 4,096 = 135,168
 *   wo  256 x 256 x 2                               (mm 4: recomputed)
 *   w1  256 x 512 x 2                    = 262,144   (mm 5: kept)
 *   w3  256 x 512 x 2                               (mm 6: recomputed)
 *   w2  256 x 256 x 2                    = 131,072   (mm 7: kept)
 *   sum = 131,072 + 65,536 + 135,168 + 262,144 + 131,072 = 724,992 bytes
 * and the peak's activations = saved outside the layers + 4 x (input + 724,992) + one layer's
 * own saved bytes (recomputed in its backward), as checkpointing=1's with the kept outputs added. */
static void test_saved_bytes(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_llama(dir, "llama.json");
    const eci_workload *wl = workload(ctx, path);
    const eci_block *blk = layer_block(wl);
    assert_float_equal(blk->op_keep_bytes, 724992.0, 1e-6);
    double none = eci_workload_saved_bytes(wl, 0, 1), full = eci_workload_saved_bytes(wl, 1, 1);
    double op = eci_workload_saved_bytes(wl, EC_CKPT_OP, 1);
    assert_true(full < op && op < none);
    assert_float_equal(op, full + 4 * 724992.0, 1e-3);
    assert_float_equal(op, wl->saved_other_bytes + 4 * (blk->input_bytes + 724992.0) + blk->saved_bytes, 1e-3);
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

/* Recomputed per layer: the matmuls not kept, wk 2 x 256 x 128 x 256, wo 2 x 256 x 256 x 256,
 * w3 2 x 256 x 512 x 256 = 2 x 256 x 256 x (128 + 256 + 512) = 117,440,512 FLOPs, x 4 layers
 * (the norms, RoPE, SiLU and the gate product too, which count no FLOPs; the fused attention
 * is kept).  checkpointing=1 recomputes every layer's FLOPs, and the backward walk puts the
 * difference in between (test_cli_sac.sh). */
static void test_recompute_flop(void **state)
{
    (void)state;
    ec_ctx *ctx = ec_test_ctx();
    char *dir = ec_test_tmpdir(), *path = write_llama(dir, "llama.json");
    const eci_workload *wl = workload(ctx, path);
    double op = eci_workload_recompute_flop(wl, EC_CKPT_OP), full = eci_workload_recompute_flop(wl, 1);
    assert_float_equal(op, 4 * 117440512.0, 1e-3);
    assert_true(op > 0 && op < full);
    size_t kept = 0, recomputed_mem = 0;
    for (size_t i = layer_block(wl)->begin; i < layer_block(wl)->end; i++) {
        kept += wl->ops[i].op_keep;
        recomputed_mem += !wl->ops[i].op_keep && wl->ops[i].kind == ECI_OP_MEM;
    }
    assert_int_equal(kept, 5); /* wq, wv, sdpa, w1, w2 */
    assert_true(recomputed_mem >= 4); /* two norms, RoPE, SiLU, the gate product, the residual adds */
    free(path);
    ec_test_rmtree(dir);
    free(dir);
    ec_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saved_bytes),
        cmocka_unit_test(test_recompute_flop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
