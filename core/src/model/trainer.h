/*
 * trainer.h: the training loop around the step (trainer.c): the host work and the syncs that
 * transformers.Trainer, Lightning or a hand-written loop add to every micro-step and every
 * optimizer step, and the gradient clipping each does by default.
 */
#ifndef EC_TRAINER_H
#define EC_TRAINER_H

#include "catalog/catalog.h"

typedef struct eci_trainer {
    double micro_kernels;        /* small kernels per micro-step (HF: isnan, isinf, tr_loss +=, loss / ga) */
    double micro_host_ops;       /* Python work per micro-step, in eager-op dispatches */
    double micro_host_ops_per_tensor; /* ... per parameter tensor (model.train() walks the modules) */
    double micro_syncs;          /* host waits per micro-step (a loss .item(), HF's nan filter) */
    double step_host_ops;        /* Python work per optimizer step (callbacks, scheduler, logging) */
    double step_host_ops_per_tensor;  /* ... per parameter tensor (zero_grad) */
    double step_syncs;           /* host waits per optimizer step (Lightning's progress bar) */
    double default_max_grad_norm;/* clipping when max_grad_norm is not given (HF: 1.0) */
} eci_trainer;

EC_INTERNAL void eci_trainer_get(const ec_ctx *ctx, int trainer, eci_trainer *t);
/* The clipping norm a config means: max_grad_norm when given (>= 0), else the trainer's default. */
EC_INTERNAL double eci_trainer_max_grad_norm(const ec_ctx *ctx, const ec_config *cfg);

#endif /* EC_TRAINER_H */
