"""train_bert.py: BERT-base (random weights from BertConfig's defaults: nothing downloaded)
fine-tuned for sequence classification under the Hugging Face Trainer with fp16 autocast
(TrainingArguments(fp16=True)), into DIR/runs.csv and DIR/memory.csv.

Random token ids, 128 tokens, batch 32, two labels; the Trainer's own DataLoader (no workers),
optimizer (whatever its default `optim` is in this transformers: recorded), gradient clipping
at 1.0, no logging, saving or evaluation. A callback synchronizes and reads the clock at each
step's end: the run records are the mean over the steps after the first 8 (the Trainer's
train_runtime would include its set-up).
"""
import common

SEQ, BATCH, STEPS, WARMUP = 128, 32, 40, 8


def run_config(gpu, rel, optim="", attn="sdpa"):
    return dict(model="bert-base", task="classify", gpu=gpu, num_gpus=1, strategy="single", precision="amp_fp16",
                **rel, batch_per_gpu=BATCH, seq_len=SEQ, grad_accum=1, optimizer=optim, attention=attn,
                trainer="hf", data="real")


# TrainingArguments.optim values and the optimizer key that prices them (empty: the key's default)
OPTIM_KEYS = {"adamw_torch": "adamw_torch", "adamw_torch_fused": "adamw_torch_fused", "adamw_hf": "adamw_hf"}


def measure(args, gpu, rel):
    import tempfile
    import time
    import torch
    from transformers import (BertConfig, BertForSequenceClassification, Trainer, TrainerCallback,
                              TrainingArguments)

    class Clock(TrainerCallback):
        def __init__(self):
            self.ends = []

        def on_step_end(self, targs, state, control, **kw):
            torch.cuda.synchronize()
            self.ends.append(time.perf_counter())

    g = torch.Generator().manual_seed(0)
    data = [{"input_ids": torch.randint(1000, 30000, (SEQ,), generator=g), "attention_mask": torch.ones(SEQ, dtype=torch.long),
             "labels": int(torch.randint(0, 2, (1,), generator=g))} for _ in range(BATCH * STEPS)]
    common.reset_memory()
    status, mem, measured, optim, attn = "ok", {}, None, "", "sdpa"
    try:
        with common.NvmlPeak() as nvml, tempfile.TemporaryDirectory() as tmp:
            model = BertForSequenceClassification(BertConfig(num_labels=2)).cuda()
            attn = getattr(model.config, "_attn_implementation", "eager") or "eager"
            targs = TrainingArguments(output_dir=tmp, per_device_train_batch_size=BATCH, max_steps=STEPS, fp16=True,
                                      logging_strategy="no", save_strategy="no", report_to=[],
                                      dataloader_num_workers=0, disable_tqdm=True, seed=0)
            optim = str(getattr(targs.optim, "value", targs.optim))
            clock = Clock()
            Trainer(model=model, args=targs, train_dataset=data, callbacks=[clock]).train()
            torch.cuda.synchronize()
        mem = common.memory_readings(nvml)
        ends = clock.ends[WARMUP:]
        step_s = (ends[-1] - ends[0]) / (len(ends) - 1)
        measured = {"step_time_ms": 1e3 * step_s, "samples_per_s": BATCH / step_s, "steps": len(ends) - 1}
        cfg = run_config(gpu, rel, OPTIM_KEYS.get(optim, ""), attn if attn in ("sdpa", "eager") else "")
        common.write_runs(args.out, common.run_records(cfg, "bert-base-hf-trainer-fp16", "train_bert", measured, mem))
    except Exception as e:
        status = ("oom: " if common.is_oom(e) else "failed: ") + f"{type(e).__name__}: {e}"[:160].replace("\n", " ")
    common.write_memory(args.out, [dict(mem, id="bert-base-hf-trainer-fp16", section="train_bert",
                                        status=f"{status} (optim={optim}, attention={attn})", **(measured or {}))])


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    gpu, rel = common.device_name(args.dry_run), common.releases(args.dry_run)
    if args.dry_run:
        common.dry_train_run(args.out, "train_bert", "bert-base-hf-trainer-fp16", run_config(gpu, rel, "adamw_torch"),
                             BATCH, step_ms=40.0)
    else:
        measure(args, gpu, rel)


if __name__ == "__main__":
    main()
