"""oom.py: one deliberate out-of-memory run, into DIR/runs.csv (metric oom, value 1) and
DIR/memory.csv: the Llama-style 1.2B of train_llama.py, full bf16 fine-tune without
checkpointing at batch 64 x 4,096 tokens (its activations alone are several hundred GiB, past
an H100's 80 and an H200's 141 GiB). The record says whether `epochcast validate` predicts the
same: a run that did fit is recorded as oom 0.
"""
import common
import train_llama

BATCH, SEQ = 64, 4096


def main(argv=None):
    args = common.parse_args(__doc__, argv)
    gpu, rel = common.device_name(args.dry_run), common.releases(args.dry_run)
    cfg = train_llama.run_config(gpu, rel, 0, 0, batch=BATCH, seq=SEQ)
    rid = "llama-1b-oom"
    row = dict({k: cfg.get(k, "") for k in common.RUN_KEYS}, id=rid + "-oom", metric="oom",
               source=common.SOURCE, note_section="oom")
    if args.dry_run:
        common.write_runs(args.out, [dict(row, value=1)])
        common.write_memory(args.out, [dict(id=rid, section="oom", status="dry-run: oom")])
        return
    import torch
    budget = common.Budget(args.cap_s)
    measured = common.train_run(args.out, "oom", rid, cfg, train_llama.builder(torch, 0, 0, BATCH, SEQ), BATCH,
                                warmup=1, steps=2, budget=budget)
    if measured is not None:  # it fitted after all: say so as a run record too
        common.write_runs(args.out, [dict(row, id=rid + "-fit", value=0)])


if __name__ == "__main__":
    main()
