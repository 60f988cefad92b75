-- bench_sweep.lua: the speed of ec.sweep, against bench_sweep.c's C loop over the same
-- 4 GPUs x 3 precisions x 6 batches x 2 worker counts (issue 7: within 20% of C).
--   LUA_CPATH='build/lua/?.so' lua5.4 bench/bench_sweep.lua [REPEATS]
--   or: build/epochcast run bench/bench_sweep.lua [REPEATS]
local ec = require "epochcast"
local repeats = tonumber(arg and arg[1]) or 5

local base = { model = "bert-base", seq_len = 128, dataset_samples = 100000 }
local axes = {
  { "gpu", { "t4", "v100-sxm2-16gb", "a100-sxm4-80gb", "rtx4090" } },
  { "precision", { "fp32", "amp_fp16", "amp_bf16" } },
  { "batch_per_gpu", { 4, 8, 16, 32, 64, 128 } },
  { "num_workers", { 0, 4 } },
}

local points, checksum = 0, 0
local t0 = os.clock()
for _ = 1, repeats do
  -- the C loop reads step_s only: rows keep that result field (the predictions are the same)
  local rows = ec.sweep(base, axes, { progress = false, fields = { "step_s" } })
  for _, r in ipairs(rows) do
    if r.step_s then checksum = checksum + r.step_s end
  end
  points = points + #rows
end
local dt = os.clock() - t0
print(string.format("Lua sweep: %d points in %.3f s = %.0f points/s (checksum %.6g)",
  points, dt, points / dt, checksum))
