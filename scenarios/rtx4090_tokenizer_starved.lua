-- rtx4090_tokenizer_starved.lua: "GPU Utilization Issue Identified" (docs/seeds/003_bdce5ab7966fcaea.txt),
-- an RTX 4090 fine-tune whose GPU idles while the main process tokenizes each example.
-- The note measured the "before" and projects the DataLoader fix and further tips.
--
--   epochcast run scenarios/rtx4090_tokenizer_starved.lua [OUTDIR]   (default OUTDIR: out/rtx4090_tokenizer_starved)
--
-- From the document: batch 1, num_workers 0, no pin_memory, tokenization on the main thread
-- ~200 ms per example, forward + backward ~50 ms per batch, 25 examples, 200 epochs; measured
-- 3.6 it/s, 15-20% GPU, ~7 s per epoch, 23 min in all.  It names no model, so the GPU side is
-- the measured step (gpu_step_s = 0.05) and the loader cost is the measured tokenization
-- (sample_cpu_s = 0.2): what the library predicts is the pipeline around them.  Changes that
-- alter the GPU work itself (bf16, larger batches) need a model preset and are listed only.
-- Writes OUTDIR/audit.csv, OUTDIR/workers.csv and OUTDIR/workers.png.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/lib/?.lua;" .. package.path
local ec = require "epochcast"
local audit = require "audit"

local NAME = "rtx4090_tokenizer_starved"
local outdir = audit.outdir(NAME, ...)

local before = {
  gpu = "rtx4090", host = "workstation", batch_per_gpu = 1, gpu_step_s = 0.05, sample_cpu_s = 0.2,
  num_workers = 0, pin_memory = false, dataset_samples = 25, epochs = 200,
}
local loader = { num_workers = 4, pin_memory = true, persistent_workers = true, prefetch_factor = 2 }

local changes = {
  { label = "DataLoader: 4 workers, pin, persistent", set = loader, claimed = "4-5x (15-20 it/s)", claim = { 4, 5 } },
  { label = "the same, non-persistent workers", set = audit.merge(loader, { persistent_workers = false }),
    claimed = "(not claimed)" },
  { label = "the same on a 2-core host (Colab)", set = audit.merge(loader, { host = "colab" }),
    claimed = "(not claimed)" },
  { label = "16 workers on a 2-core host (Colab)", set = audit.merge(loader, { host = "colab", num_workers = 16 }),
    claimed = "(not claimed)" },
  { label = "torch.compile (reduce-overhead)", set = audit.merge(loader, { compile = true }),
    against = loader, claimed = "1.5-2x", claim = { 1.5, 2 } },
  -- gpu_step_s is per optimizer step: 4 micro-steps of the measured 50 ms
  { label = "gradient accumulation 4", set = audit.merge(loader, { grad_accum = 4, gpu_step_s = 0.2 }),
    against = loader, claimed = "same memory, batch 4" },
  { label = "mixed precision bf16", claimed = "2x", claim = 2,
    unmodelled = "the GPU side is the measured 50 ms: precision needs a model preset" },
  { label = "batch size 4-8", claimed = "better GPU use",
    unmodelled = "the GPU side is the measured 50 ms at batch 1: a larger batch needs a model preset" },
}

print("RTX 4090 starved by on-the-fly tokenization (seed 003): batch 1, 200 ms of tokenization per")
print("example, 50 ms of GPU work per batch, 25 examples, 200 epochs")
print()
local rows = audit.report(ec, before, changes, outdir)

-- The note's measured and projected figures beside the prediction.
local rb = assert(ec.predict(before))
local ra = assert(ec.predict(audit.merge(before, loader)))
print()
print("Document against predicted:")
print(string.format("  %-22s %12s %12s %12s %12s", "", "ms/batch", "it/s", "s/epoch", "GPU busy"))
print(string.format("  %-22s %12s %12s %12s %12s", "before, measured", "~280", "3.6", "~7", "15-20%"))
print(string.format("  %-22s %12.0f %12.1f %12.1f %11.0f%%  (%s-bound)", "before, predicted", rb.step_s * 1e3,
  1 / rb.step_s, rb.epoch_s, 100 * rb.gpu_util_frac, rb.bottleneck))
print(string.format("  %-22s %12s %12s %12s %12s", "after, projected", "", "15-20", "1.5", "80-95%"))
print(string.format("  %-22s %12.0f %12.1f %12.1f %11.0f%%  (%s-bound)", "after, predicted", ra.step_s * 1e3,
  1 / ra.step_s, ra.epoch_s, 100 * ra.gpu_util_frac, ra.bottleneck))
print(string.format("  run of 200 epochs: %.1f min before, %.1f min after (document: 23 and ~5 min)",
  rb.run_s / 60, ra.run_s / 60))
print(string.format("  after: 4 workers deliver one batch per %.0f ms and the GPU needs %.0f ms, so the two are",
  1e3 * before.sample_cpu_s / loader.num_workers, 1e3 * before.gpu_step_s))
print("  about balanced: what limits it is the GPU step, with the loader close behind")

-- More workers than cores: the gain flattens, and with start-up every epoch it reverses.
print()
print("num_workers on a 2-core host (colab) and a 16-core workstation, non-persistent workers:")
print(string.format("  %-8s %16s %16s", "workers", "colab s/epoch", "workstation s/epoch"))
local sweep = ec.sweep(audit.merge(before, { pin_memory = true }),
  { { "host", { "colab", "workstation" } }, { "num_workers", { 0, 1, 2, 4, 8, 16 } } })
local by = {}
for _, r in ipairs(sweep) do by[r.host .. r.num_workers] = r end
for _, w in ipairs { 0, 1, 2, 4, 8, 16 } do
  print(string.format("  %-8d %16.2f %16.2f", w, by["colab" .. w].epoch_s, by["workstation" .. w].epoch_s))
end
assert(ec.write_csv(outdir .. "/workers.csv", sweep))
print("wrote " .. outdir .. "/workers.csv")
local ok, err = ec.plot { kind = "line", rows = sweep, x = "num_workers", y = "epoch_s", group = "host",
                          title = "Seed 003: epoch time against DataLoader workers", path = outdir .. "/workers.png" }
print(ok and ("wrote " .. outdir .. "/workers.png") or ("plot skipped: " .. tostring(err)))
