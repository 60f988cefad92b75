-- tweet_classifier_t4_k80_a100.lua: "Performance Optimization Guide: Underutilized GPU/CPU
-- During Training" (docs/seeds/001_37986f26cc92db87.txt), tweet classification at 128
-- tokens on Colab GPUs (K80, T4, A100), its batch-size tables, its automatic batch-size
-- rule and its "quick wins".  What does each buy on a T4, and do its batch tables fit?
--
--   epochcast run scenarios/tweet_classifier_t4_k80_a100.lua [OUTDIR]
--                                   (default OUTDIR: out/tweet_classifier_t4_k80_a100)
--
-- From the document: BATCH_SIZE 8 with GRAD_ACCUM_STEPS 4, DataLoader(batch_size=8,
-- num_workers=2), autocast mixed precision (fp16 with GradScaler where bf16 is not
-- supported), 128 tokens.  It names no model; a BERT-base-sized classifier is assumed.
-- Its throughput table (100 samples/s at batch 8 ... 500 at 64 on an A100) has no
-- dataset size; an epoch of 100000 tweets is assumed for epoch times.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/lib/?.lua;" .. package.path
local ec = require "epochcast"
local audit = require "audit"

local NAME = "tweet_classifier_t4_k80_a100"
local outdir = audit.outdir(NAME, ...)
local GIB = audit.GIB
local merge = audit.merge

local before = {
  model = "bert-base", task = "classify", gpu = "t4", precision = "amp_fp16", seq_len = 128,
  batch_per_gpu = 8, grad_accum = 4, num_workers = 2, dataset_samples = 100000,
}

-- 1. The optimizations, one at a time on a T4, and all together.
local changes = {
  { label = "auto batch: 8x4 accum -> 32x1", set = { batch_per_gpu = 32, grad_accum = 1 },
    claimed = "2-8x, util 30->85%", claim = { 2, 8 } },
  { label = "double batch size (8 -> 16)", set = { batch_per_gpu = 16 }, claimed = "2x", claim = 2 },
  { label = "num_workers 2 -> 8", set = { num_workers = 8 }, claimed = "30-50%", claim = { 1.3, 1.5 } },
  { label = "prefetch_factor 4", set = { prefetch_factor = 4 }, claimed = "20-30%", claim = { 1.2, 1.3 } },
  { label = "persistent_workers", set = { persistent_workers = true }, claimed = "10-15%", claim = { 1.1, 1.15 } },
  { label = "pin_memory", set = { pin_memory = true }, claimed = "faster GPU transfer" },
  { label = "grad accumulation 4 -> 1", set = { grad_accum = 1 }, claimed = "more stable gradients" },
  { label = "bf16 autocast (if 'supported')", set = { precision = "amp_bf16" }, claimed = "better stability" },
  { label = "gradient checkpointing", set = { checkpointing = true }, claimed = "2x larger batches" },
  { label = "parallel tokenization (Pool 8)", claimed = "faster preparation",
    unmodelled = "tokenization before training is a one-time cost this build does not model yet" },
  { label = "all together (Colab config)", claimed = "3-5x", claim = { 3, 5 },
    set = { batch_per_gpu = 32, grad_accum = 1, num_workers = 8, prefetch_factor = 4, pin_memory = true,
            persistent_workers = true } },
}

print("Tweet classification (seed 001): bert-base, 128 tokens, on a Tesla T4")
print()
local rows = audit.report(ec, before, changes, outdir)

-- 2. "Expected Performance Improvements": the document's figures beside the prediction.
print()
print("Expected performance (document) against predicted, 100000 tweets per epoch:")
print(string.format("  %-28s %5s %8s %9s %10s %9s %10s", "configuration", "batch", "doc util", "pred util",
  "doc samp/s", "pred", "pred epoch"))
for _, t in ipairs {
  { "Conservative (T4)", "t4", 8, 4, "30-40%", 100 }, { "Balanced (T4)", "t4", 16, 2, "50-60%", 166 },
  { "Optimized (T4)", "t4", 32, 1, "70-85%", 285 }, { "Max Performance (A100)", "a100-sxm4-40gb", 64, 1, "85-95%", 500 },
} do
  local r = assert(ec.predict(merge(before, { gpu = t[2], batch_per_gpu = t[3], grad_accum = t[4] })))
  print(string.format("  %-28s %5d %8s %8.1f%% %10d %9.1f %8.1f min", t[1], t[3], t[5],
    r.gpu_util_frac * 100, t[6], r.samples_per_s, r.epoch_s / 60))
end

-- 3. "Batch Size Guidelines (128 tokens)": the document's max and recommended batch
--    against the largest batch the memory model fits, at the same precision.
local table_gpus = {
  { "K80", "k80", 24, 16 }, { "T4", "t4", 48, 32 }, { "V100", "v100-sxm2-16gb", 48, 32 },
  { "RTX 3090", "rtx3090", 80, 48 }, { "A100 (40GB)", "a100-sxm4-40gb", 128, 64 },
  { "A100 (80GB)", "a100-sxm4-80gb", 256, 128 },
}
print()
print("Batch-size table (document) against ec.max_batch, amp_fp16, 128 tokens:")
print(string.format("  %-12s %8s %10s %9s %11s %14s", "GPU", "doc max", "predicted", "doc rec.", "rec. fits",
  "rec. samples/s"))
local mb_rows = {}
for _, t in ipairs(table_gpus) do
  local cfg = merge(before, { gpu = t[2], grad_accum = 1 })
  local n = assert(ec.max_batch(cfg, 4096))
  local r = assert(ec.predict(merge(cfg, { batch_per_gpu = t[4] })))
  print(string.format("  %-12s %8d %10d %9d %11s %14.1f", t[1], t[3], n, t[4], r.fits and "yes" or "no",
    r.samples_per_s))
  mb_rows[#mb_rows + 1] = { gpu = t[2], doc_max_batch = t[3], predicted_max_batch = n, doc_recommended_batch = t[4],
    recommended_fits = r.fits, recommended_samples_per_s = r.samples_per_s }
end
assert(ec.write_csv(outdir .. "/batch_table.csv", mb_rows, { "gpu", "doc_max_batch", "predicted_max_batch",
  "doc_recommended_batch", "recommended_fits", "recommended_samples_per_s" }))
print("wrote " .. outdir .. "/batch_table.csv")

-- 4. The automatic rule (gpu_memory_gb = total_memory / 1e9) against the best batch that fits.
local function rule(gb)
  if gb >= 40 then return 64, 1 elseif gb >= 24 then return 48, 1 elseif gb >= 16 then return 32, 1 end
  return 16, 2
end
print()
print("Automatic batch-size rule against the largest batch that fits:")
print(string.format("  %-16s %6s %11s %12s %10s %14s", "GPU", "GB", "rule batch", "rule samp/s", "max batch",
  "max samp/s"))
for _, t in ipairs(table_gpus) do
  local info
  for _, g in ipairs(ec.gpus()) do if g.id == t[2] then info = g end end
  local gb = info.memory_bytes / 1e9
  local b, acc = rule(gb)
  local cfg = merge(before, { gpu = t[2], batch_per_gpu = b, grad_accum = acc })
  local r = assert(ec.predict(cfg))
  local n = assert(ec.max_batch(merge(cfg, { grad_accum = 1 }), 4096))
  local rmax = assert(ec.predict(merge(cfg, { batch_per_gpu = math.max(n, 1), grad_accum = 1 })))
  print(string.format("  %-16s %6.1f %7dx%-3d %12.1f %10d %14.1f", t[2], gb, b, acc, r.samples_per_s, n,
    rmax.samples_per_s))
end
for _, w in ipairs(assert(ec.predict(merge(before, { gpu = "k80" }))).warnings) do
  for i, line in ipairs(audit.wrap("k80 warning: " .. w, audit.WIDTH - 4)) do
    print((i > 1 and "    " or "  ") .. line) -- continued lines indented
  end
end

-- 5. Throughput and memory against batch size on the three GPUs of the title.
local sweep = ec.sweep(merge(before, { grad_accum = 1 }), {
  { "gpu", { "k80", "t4", "a100-sxm4-40gb" } }, { "batch_per_gpu", { 8, 16, 32, 64, 128, 256 } } })
assert(ec.write_csv(outdir .. "/sweep.csv", sweep))
print()
print("wrote " .. outdir .. "/sweep.csv")
audit.plot(ec, { kind = "line", rows = sweep, x = "batch_per_gpu", y = "samples_per_s", group = "gpu",
                 path = outdir .. "/throughput_vs_batch.png", title = "bert-base, 128 tokens, amp_fp16: throughput" })
audit.plot(ec, { kind = "memory", rows = sweep, x = "batch_per_gpu", group = "gpu",
                 path = outdir .. "/memory_vs_batch.png", title = "bert-base, 128 tokens, amp_fp16: peak memory" })
local bars = {}
for _, r in ipairs(rows) do
  if r.result then bars[#bars + 1] = { change = r.change, breakdown = r.result.breakdown } end
end
audit.plot(ec, { kind = "breakdown", rows = bars, x = "change", path = outdir .. "/breakdown.png",
                 title = "T4: one optimizer step per change (seed 001)" })
