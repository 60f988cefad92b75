-- bench_sweep_full.lua: ec.sweep with full result rows (every field of ec.predict's table and the
-- resolved config keys: no opts.fields), on one thread (issue 22: at least 150,000 points/s).
-- Time is the wall clock (date +%s.%N, read once before and once after), and os.clock's CPU time.
--   LUA_CPATH='build/lua/?.so' lua5.4 bench/bench_sweep_full.lua [REPEATS] [THREADS]
local ec = require "epochcast"
local repeats = tonumber(arg and arg[1]) or 5
local threads = tonumber(arg and arg[2]) or 1

local base = { model = "bert-large", task = "squad", seq_len = 384, precision = "amp_fp16" }
local axes = {
  { "gpu", { "t4", "v100-sxm2-16gb", "a100-sxm4-80gb", "rtx4090", "h100-sxm5-80gb", "l4", "a10", "a16" } },
  { "batch_per_gpu", { 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32, 48, 64 } },
  { "grad_accum", { 1, 2, 4, 8 } },
}

local function wall()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("l"))
  p:close()
  return t
end

local points, checksum = 0, 0
local w0, t0 = wall(), os.clock()
for _ = 1, repeats do
  local rows = ec.sweep(base, axes, { progress = false, threads = threads })
  for _, r in ipairs(rows) do
    if r.step_s then checksum = checksum + r.step_s + r.memory.peak_bytes * 0 end
  end
  points = points + #rows
end
local dt, dw = os.clock() - t0, wall() - w0
print(string.format("Lua sweep, full rows, %d thread(s): %d points in %.3f s wall, %.3f s CPU = %.0f points/s "
  .. "(checksum %.6g)", threads, points, dw, dt, points / dw, checksum))
