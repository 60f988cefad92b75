-- sweep.lua: a sweep to copy.  GPUs x precision x batch size x DataLoader workers for one
-- model, written to CSV (config keys first, then results with units in the names) and
-- drawn as plots.
--
--   epochcast run scenarios/sweep.lua [OUTDIR]          (default OUTDIR: out/sweep)
--
-- ec.sweep(base, axes [, opts]) predicts every point of the product of the axes (the first
-- axis varies slowest); any config key can be an axis.  A point the model refuses comes
-- back as a row with an `error` field instead of stopping the sweep (opts.strict = true
-- stops it instead).  A bar on stderr shows progress on a terminal for long sweeps.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/lib/?.lua;" .. package.path
local ec = require "epochcast"
local audit = require "audit"

local outdir = audit.outdir("sweep", ...)
local GIB = 1024 ^ 3

local base = { model = "bert-base", task = "classify", seq_len = 128, dataset_samples = 100000, pin_memory = true }
local axes = {
  { "gpu", { "t4", "a10g", "a100-sxm4-80gb" } },
  { "precision", { "fp32", "amp_fp16", "amp_bf16" } },
  { "batch_per_gpu", { 8, 16, 32, 64, 128, 256 } },
  { "num_workers", { 0, 4 } },
}
local rows = ec.sweep(base, axes)
print(string.format("%d points", #rows))

-- The fastest configuration that fits, per GPU.
print()
print(string.format("%-16s %-9s %6s %8s %10s %10s %7s", "gpu", "precision", "batch", "workers", "samples/s",
  "epoch_min", "peak_GiB"))
local best = {}
for _, r in ipairs(rows) do
  if not r.error and r.fits and (not best[r.gpu] or r.samples_per_s > best[r.gpu].samples_per_s) then
    best[r.gpu] = r
  end
end
for _, gpu in ipairs(axes[1][2]) do
  local r = best[gpu]
  print(string.format("%-16s %-9s %6d %8d %10.1f %10.2f %7.2f", gpu, r.precision, r.batch_per_gpu, r.num_workers,
    r.samples_per_s, r.epoch_s / 60, r.peak_bytes / GIB))
end

-- Everything that came back with a warning, once per (gpu, precision).
print()
local seen = {}
for _, r in ipairs(rows) do
  local key = r.gpu .. " " .. r.precision
  if not r.error and #r.warnings > 0 and not seen[key] then
    seen[key] = true
    for i, line in ipairs(audit.wrap(key .. ": " .. table.concat(r.warnings, "; "), audit.WIDTH - 4)) do
      print((i > 1 and "    " or "") .. line) -- continued lines indented
    end
  end
end

-- The CSV: one row per point, columns from ec.write_csv's stable order.
assert(ec.write_csv(outdir .. "/sweep.csv", rows))
print()
print("wrote " .. outdir .. "/sweep.csv")

-- Plots: epoch time and memory against batch, the step breakdown at batch 32.
local w4 = {}
for _, r in ipairs(rows) do if r.num_workers == 4 then w4[#w4 + 1] = r end end
audit.plot(ec, { kind = "line", rows = w4, x = "batch_per_gpu", y = "epoch_s", group = { "gpu", "precision" },
                 path = outdir .. "/epoch_vs_batch.png", title = "bert-base, 128 tokens: epoch of 100000 samples" })
audit.plot(ec, { kind = "memory", rows = w4, x = "batch_per_gpu", group = { "gpu", "precision" },
                 path = outdir .. "/memory_vs_batch.png", title = "bert-base, 128 tokens: peak memory" })
local b32 = {}
for _, r in ipairs(w4) do if r.batch_per_gpu == 32 then b32[#b32 + 1] = r end end
audit.plot(ec, { kind = "breakdown", rows = b32, x = { "gpu", "precision" },
                 path = outdir .. "/breakdown_b32.png", title = "bert-base, batch 32: one step" })
audit.plot(ec, { kind = "line", rows = w4, x = "batch_per_gpu", y = "epoch_s", group = { "gpu", "precision" },
                 path = outdir .. "/epoch_vs_batch.svg", title = "bert-base, 128 tokens: epoch of 100000 samples" })
