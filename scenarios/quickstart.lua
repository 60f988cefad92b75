-- quickstart.lua: a first tour of epochcast's Lua layer.  Copy it and change the table.
--
--   epochcast run scenarios/quickstart.lua        (the CLI preloads the module)
--   lua5.4 scenarios/quickstart.lua               (with LUA_CPATH pointing at epochcast.so)
--
-- It lists a few GPUs, predicts BERT-base sequence classification on a T4 and an A100 in
-- fp32 and in mixed precision, finds the largest batch that fits on a 16 GB GPU, and
-- writes every prediction to quickstart.csv in the current directory.  Numbers are
-- printed with fixed formats so the output doubles as a golden test.

local ec = require "epochcast"

local GIB = 1024 ^ 3

-- Text printed after prefix in lines of at most 100 columns, broken at spaces.
local function print_wrapped(prefix, text)
  local line = prefix
  for word in text:gmatch("%S+") do
    if #line + 1 + #word > 100 and #line > #prefix then
      print(line)
      line = (" "):rep(#prefix + 2)
    end
    line = line .. ((line:match("%S$")) and " " or "") .. word
  end
  print(line)
end

-- 1. What hardware is known?  ec.gpus() returns plain tables in SI units
--    (bytes, bytes/s, flop/s); `epochcast gpus` prints the whole list.
print("A few GPUs:")
local wanted = { t4 = true, ["a100-sxm4-80gb"] = true, rtx4090 = true }
for _, g in ipairs(ec.gpus()) do
  if wanted[g.id] then
    print(string.format("  %-16s %-26s %5.1f GiB %6.0f GB/s  fp16 %6.1f TFLOP/s",
      g.id, g.name, g.memory_bytes / GIB, g.memory_bandwidth_bytes_per_s / 1e9,
      g.peak_fp16_flop_per_s / 1e12))
  end
end

-- 2. One configuration is one table, with the same keys as `epochcast predict key=value`
--    and as the columns of a run-record CSV.  Unset keys take their documented defaults.
local base = {
  model = "bert-base", task = "classify", seq_len = 128, batch_per_gpu = 32,
  num_workers = 4, pin_memory = true, dataset_samples = 100000,
}

-- A copy of base with some keys changed.
local function with(changes)
  local cfg = {}
  for k, v in pairs(base) do cfg[k] = v end
  for k, v in pairs(changes) do cfg[k] = v end
  return cfg
end

-- 3. Predict.  A failure the script could expect (an unknown GPU, say) returns
--    nil, message, code; assert() turns it into an error with that message.
print()
print("BERT-base classification, seq_len 128, batch 32 per GPU:")
print(string.format("  %-16s %-9s %9s %9s %6s %-10s %14s %5s",
  "gpu", "precision", "step_ms", "samples/s", "util%", "bottleneck", "peak/cap GiB", "fits"))
local rows = {}
for _, gpu in ipairs { "t4", "a100-sxm4-80gb" } do
  for _, precision in ipairs { "fp32", "amp_fp16" } do
    local cfg = with { gpu = gpu, precision = precision }
    local r = assert(ec.predict(cfg))
    print(string.format("  %-16s %-9s %9.4g %9.4g %6.1f %-10s %6.2f/%-7.2f %5s",
      gpu, precision, r.step_s * 1e3, r.samples_per_s, r.gpu_util_frac * 100, r.bottleneck,
      r.peak_bytes / GIB, r.capacity_bytes / GIB, r.fits and "yes" or "no"))
    for _, w in ipairs(r.warnings) do print_wrapped("    warning: ", w) end
    -- A CSV row is the config and the result side by side.
    local row = with(cfg)
    for k, v in pairs(r) do row[k] = v end
    rows[#rows + 1] = row
  end
end

-- 4. Where does the time go?  breakdown holds the parts of one step in seconds.
local r = assert(ec.predict(with { gpu = "t4", precision = "amp_fp16" }))
local b = r.breakdown
print()
print("T4, amp_fp16, one step:")
print(string.format("  forward %.4g ms, backward %.4g ms, optimizer %.4g ms",
  b.forward_s * 1e3, b.backward_s * 1e3, b.optimizer_s * 1e3))
print(string.format("  exposed: transfer %.4g ms, CPU %.4g ms, loader %.4g ms",
  b.h2d_s * 1e3, b.cpu_overhead_s * 1e3, b.loader_s * 1e3))
print(string.format("  epoch of %d samples: %.4g s (p10 %.4g s, p90 %.4g s)",
  base.dataset_samples, r.epoch_s, r.interval.p10, r.interval.p90))

-- 5. The largest micro-batch that fits on a 16 GB T4 (bisection over the memory model).
print()
for _, seq_len in ipairs { 128, 512 } do
  for _, precision in ipairs { "fp32", "amp_fp16" } do
    local n = assert(ec.max_batch(with { gpu = "t4", seq_len = seq_len, precision = precision }))
    print(string.format("max batch on a T4, seq_len %3d, %-8s: %d", seq_len, precision, n))
  end
end

-- 6. Save the rows.  The file is written atomically (a temporary beside it, then renamed);
--    columns are the config keys, then the result keys (ec.result_columns()).
assert(ec.write_csv("quickstart.csv", rows))
print()
print(string.format("wrote %d rows to quickstart.csv", #rows))
