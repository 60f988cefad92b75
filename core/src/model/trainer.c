/*
 * trainer.c: what the loop around the step costs (docs/DESIGN.md 3.1): per micro-step and per
 * optimizer step, the small kernels, the Python work (counted in eager-op dispatches, so a
 * faster host makes it cheaper) and the syncs that transformers.Trainer and Lightning add to
 * a hand-written loop, and the clipping each does by default.  A plain loop is the
 * reference: its loss.item() per micro-step (syncs_per_micro_step) and its bookkeeping per
 * step (hosts.csv step_overhead_s) are priced by sim/step.c for every trainer.  The counts are
 * software constants read in the trainers' source code (models/constants.csv).
 */
#include "model/trainer.h"
#include "catalog/consts.h"

#include <string.h>

void eci_trainer_get(const ec_ctx *ctx, int trainer, eci_trainer *t)
{
    memset(t, 0, sizeof *t);
    switch (trainer) {
    case EC_TRAINER_HF: /* transformers Trainer._inner_training_loop and training_step */
        t->micro_kernels = eci_const(ctx, EC_C_trainer_hf_micro_kernels);
        t->micro_host_ops = eci_const(ctx, EC_C_trainer_hf_micro_host_ops);
        t->micro_host_ops_per_tensor = eci_const(ctx, EC_C_trainer_hf_micro_host_ops_per_tensor);
        t->step_host_ops = eci_const(ctx, EC_C_trainer_hf_step_host_ops);
        t->step_host_ops_per_tensor = eci_const(ctx, EC_C_trainer_hf_step_host_ops_per_tensor);
        t->default_max_grad_norm = eci_const(ctx, EC_C_trainer_hf_max_grad_norm);
        break;
    case EC_TRAINER_LIGHTNING: /* lightning.Trainer, automatic optimization */
        t->micro_host_ops = eci_const(ctx, EC_C_trainer_lightning_micro_host_ops);
        t->step_host_ops = eci_const(ctx, EC_C_trainer_lightning_step_host_ops);
        t->step_syncs = eci_const(ctx, EC_C_trainer_lightning_step_syncs);
        break;
    default:
        break;
    }
}

double eci_trainer_max_grad_norm(const ec_ctx *ctx, const ec_config *cfg)
{
    if (cfg->max_grad_norm >= 0)
        return cfg->max_grad_norm;
    eci_trainer t;
    eci_trainer_get(ctx, cfg->trainer, &t);
    return t.default_max_grad_norm;
}
