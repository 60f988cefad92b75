-- python_loop_4gpu.lua: "Performance Optimizations for Multi-GPU Training"
-- (docs/seeds/002_3824adfd42e9d4f7.txt), 7 s per iteration on 4 GPUs with a forward
-- that builds its embeddings in a per-sample Python loop, creating a tensor on the GPU in
-- every iteration, and the five fixes that are to bring it to 0.2-0.5 s/it (claimed 25-70x,
-- "realistic" 15-35x).  Which fix buys what?
--
--   epochcast run scenarios/python_loop_4gpu.lua [OUTDIR]     (default OUTDIR: out/python_loop_4gpu)
--
-- From the document: 4 GPUs, 128 samples per GPU (512 in all), one training script with
-- DataLoader(num_workers=12, persistent_workers=True), no pin_memory; in forward, per sample,
-- `for t in range(prev_region_len[b])` (80 iterations) each doing
-- `context_embed[b, t] + self.token_type_embedding(torch.tensor([0], device=...))`; after
-- vectorizing, three torch.tensor calls per batch and one add per region per sample.
-- The document names neither the model nor the GPU.  Assumed, and stated in the output:
--   - a BERT-base-sized transformer at 128 tokens (the bert-base preset), fp32 (no mixed
--     precision is mentioned; the collate ends in .float()), on 4 V100-SXM2-32GB (32 GB, so
--     256 per GPU fits at the "50-70%" of memory the document expects afterwards);
--   - one process driving the 4 GPUs (12 workers "for 4 GPUs" in one DataLoader):
--     DataParallel; DDP is shown beside it;
--   - the loop: 80 tensor creations per sample (loop_syncs_per_sample), each followed by
--     ~3 small ops (the embedding lookup, the add, the copy into the new tensor:
--     loop_ops_per_sample = 240); after vectorizing: 3 creations per batch and 3 adds per sample;
--   - collate: 200 us of CPU per sample before (per-item np.concatenate and list appends),
--     100 us after (pre-allocated arrays; the document's 2x for it).
-- Writes OUTDIR/audit.csv, OUTDIR/loop_sweep.csv, OUTDIR/loader_sweep.csv and plots (PNG).
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/lib/?.lua;" .. package.path
local ec = require "epochcast"
local audit = require "audit"

local NAME = "python_loop_4gpu"
local outdir = audit.outdir(NAME, ...)
local GIB = audit.GIB
local merge = audit.merge

local MEASURED_S_PER_IT = 7
local CREATIONS_PER_SAMPLE = 80   -- tensor creations per sample in the loop (assumed, see the header)
local OPS_PER_CREATION = 3        -- small ops per creation (assumed)
local COLLATE_BEFORE_S, COLLATE_AFTER_S = 200e-6, 100e-6 -- per sample (assumed)

-- The loop before and after vectorizing, for a given batch per GPU.
local function loop_before() return { loop_syncs_per_sample = CREATIONS_PER_SAMPLE,
                                      loop_ops_per_sample = CREATIONS_PER_SAMPLE * OPS_PER_CREATION } end
local function loop_vectorized(batch) return { loop_syncs_per_sample = 3 / batch, loop_ops_per_sample = 3 } end

local before = merge({
  model = "bert-base", task = "classify", gpu = "v100-sxm2-32gb", precision = "fp32", seq_len = 128,
  batch_per_gpu = 128, num_gpus = 4, strategy = "dp", num_workers = 12, persistent_workers = true,
  pin_memory = false, sample_cpu_s = COLLATE_BEFORE_S,
}, loop_before())
local loading = { num_workers = 16, pin_memory = true, prefetch_factor = 2 }
local after = merge(loading, loop_vectorized(256), { sample_cpu_s = COLLATE_AFTER_S, batch_per_gpu = 256 })

-- bar: the short name under the bar in breakdown.png.
local changes = {
  { label = "num_workers 12 -> 16", bar = "16 workers", set = { num_workers = 16 },
    claimed = "better parallelism" },
  { label = "collate rewrite (200 -> 100 us/sample)", bar = "collate", set = { sample_cpu_s = COLLATE_AFTER_S },
    claimed = "1.5-2x", claim = { 1.5, 2 } },
  { label = "pin_memory + prefetch_factor 2 (default)", bar = "pin, prefetch",
    set = { pin_memory = true, prefetch_factor = 2 },
    claimed = "GPUs never wait" },
  { label = "data loading: 16 workers, pin, prefetch", bar = "data loading", set = loading,
    claimed = "2-3x", claim = { 2, 3 } },
  { label = "vectorize the forward loop", bar = "vectorized", set = loop_vectorized(128),
    claimed = "5-10x", claim = { 5, 10 } },
  { label = "batch 128 -> 256 per GPU", bar = "batch 256", set = { batch_per_gpu = 256 },
    claimed = "1.5x", claim = 1.5 },
  { label = "batch 128 -> 256, loop vectorized", bar = "vect., 256", against = loop_vectorized(128),
    set = merge(loop_vectorized(256), { batch_per_gpu = 256 }), claimed = "1.5x", claim = 1.5 },
  { label = "all together", bar = "all (DP)", set = after, claimed = "15-35x (table: 25-70x)", claim = { 15, 35 } },
  { label = "DDP instead of DataParallel (3 workers/GPU)", bar = "DDP", set = { strategy = "ddp", num_workers = 3 },
    claimed = "(not in the document)" },
  { label = "all together, DDP (4 workers/GPU)", bar = "all (DDP)",
    set = merge(after, { strategy = "ddp", num_workers = 4 }),
    claimed = "(not in the document)" },
  { label = "all together + AMP fp16", bar = "all + AMP", set = merge(after, { precision = "amp_fp16" }),
    claimed = "(not in the document)" },
}

print("Python loop in forward on 4 GPUs (seed 002): assumed bert-base-sized, 128 tokens, fp32,")
print(string.format("4 x V100-SXM2-32GB under DataParallel, %d tensor creations x %d ops per sample",
  CREATIONS_PER_SAMPLE, OPS_PER_CREATION))
print()
local rows = audit.report(ec, before, changes, outdir)

-- 1. Seconds per iteration, the document's against the prediction.
local r0 = rows[1].result
print()
print("Seconds per iteration and 100k steps (document) against predicted:")
print(string.format("  %-38s %12s %10s %12s %10s %11s", "configuration", "document", "predicted", "document",
  "predicted", "bottleneck"))
print(string.format("  %-38s %12s %8.2f s %12s %8.0f h %11s", "before, 512 per iteration (measured)",
  string.format("%d s/it", MEASURED_S_PER_IT), r0.step_s, "194 h", r0.step_s * 1e5 / 3600, r0.bottleneck))
for _, t in ipairs { { "after, 1024 per iteration (DP)", after }, { "after, 1024 per iteration (DDP)",
                       merge(after, { strategy = "ddp", num_workers = 4 }) } } do
  local r = assert(ec.predict(merge(before, t[2])))
  print(string.format("  %-38s %12s %8.2f s %12s %8.0f h %11s", t[1], "0.2-0.5 s/it", r.step_s, "5.5-13 h",
    r.step_s * 1e5 / 3600, r.bottleneck))
end

-- 2. How the before prediction depends on the assumptions the document leaves open.
print()
print("The before step under other assumptions (the document gives 7 s/it):")
print(string.format("  %-10s %-9s %10s %9s %8s %11s %9s", "strategy", "precision", "creations", "s/it", "GPU%",
  "CPU ms", "bottleneck"))
for _, s in ipairs { "dp", "ddp" } do
  for _, prec in ipairs { "fp32", "amp_fp16" } do
    for _, n in ipairs { CREATIONS_PER_SAMPLE, 3 * CREATIONS_PER_SAMPLE } do
      local r = assert(ec.predict(merge(before, { strategy = s, precision = prec, loop_syncs_per_sample = n,
                                                  loop_ops_per_sample = n * OPS_PER_CREATION })))
      print(string.format("  %-10s %-9s %10d %9.2f %7.1f%% %11.0f %9s", s, prec, n, r.step_s, r.gpu_util_frac * 100,
        r.breakdown.cpu_overhead_s * 1e3, r.bottleneck))
    end
  end
end
print(string.format("  (%d creations: the document's '240 tensor/batch' read as 3 regions x 80 per sample)",
  3 * CREATIONS_PER_SAMPLE))

-- 3. Seconds per iteration against the tensor creations per sample, DataParallel and DDP.
local loop_rows = {}
for _, s in ipairs { "dp", "ddp" } do
  for _, n in ipairs { 0, 10, 20, 40, 80, 120, 160, 240 } do
    local r = assert(ec.predict(merge(before, { strategy = s, loop_syncs_per_sample = n,
                                                loop_ops_per_sample = n * OPS_PER_CREATION })))
    loop_rows[#loop_rows + 1] = { strategy = s, creations_per_sample = n, step_s = r.step_s,
      gpu_util_frac = r.gpu_util_frac, cpu_overhead_s = r.breakdown.cpu_overhead_s, bottleneck = r.bottleneck }
  end
end
assert(ec.write_csv(outdir .. "/loop_sweep.csv", loop_rows, { "strategy", "creations_per_sample", "step_s",
  "gpu_util_frac", "cpu_overhead_s", "bottleneck" }))
print()
print("wrote " .. outdir .. "/loop_sweep.csv")
audit.plot(ec, { kind = "line", rows = loop_rows, x = "creations_per_sample", y = "step_s", group = "strategy",
                 logx = false, xlabel = "tensor creations per sample in forward",
                 path = outdir .. "/step_vs_loop.png",
                 title = "4 GPUs, 128 per GPU: s/it against the Python loop, DataParallel vs DDP" })

-- 4. When would the workers matter?  Seconds per iteration against the loader's CPU time
--    per sample, 12 against 16 workers, with the loop and without.
local loader_rows = ec.sweep(before, { { "num_workers", { 12, 16 } },
  { "sample_cpu_s", { 1e-4, 1e-3, 1e-2, 3e-2, 5e-2, 0.1, 0.2 } } })
print()
print("Seconds per iteration against the loader's CPU time per sample (loop as before, DataParallel):")
print(string.format("  %-14s %12s %12s", "CPU/sample", "12 workers", "16 workers"))
local by_cpu = {}
for _, row in ipairs(loader_rows) do
  row.workers = string.format("%d workers", row.num_workers)
  by_cpu[row.sample_cpu_s] = by_cpu[row.sample_cpu_s] or {}
  by_cpu[row.sample_cpu_s][row.num_workers] = row.step_s
end
for _, c in ipairs(loader_rows) do
  if c.num_workers == 12 then
    print(string.format("  %11.1f ms %10.2f s %10.2f s", c.sample_cpu_s * 1e3, by_cpu[c.sample_cpu_s][12],
      by_cpu[c.sample_cpu_s][16]))
  end
end
assert(ec.write_csv(outdir .. "/loader_sweep.csv", loader_rows))
print("wrote " .. outdir .. "/loader_sweep.csv")
audit.plot(ec, { kind = "line", rows = loader_rows, x = "sample_cpu_s", y = "step_s", group = "workers",
                 xlabel = "loader CPU per sample (ms)", -- the plot shows seconds below 1 as ms
                 path = outdir .. "/step_vs_loader_cpu.png",
                 title = "DataParallel, 4 GPUs, 512 per iteration, loop as before: s/it against loader CPU" })

-- 5. The parts of the step per 100 samples (the changes differ in batch).
local bars = {}
for i, row in ipairs(rows) do
  if row.result then
    local c = row.config
    local per = 100 / (c.batch_per_gpu * (c.grad_accum or 1) * c.num_gpus)
    local b = {}
    for k, v in pairs(row.result.breakdown) do b[k] = v * per end
    bars[#bars + 1] = { change = i == 1 and "before" or changes[i - 1].bar, breakdown = b }
  end
end
audit.plot(ec, { kind = "breakdown", rows = bars, x = "change", path = outdir .. "/breakdown.png",
                 ylabel = "wall ms per 100 samples", title = "4 GPUs: time per 100 samples per change (seed 002)" })
