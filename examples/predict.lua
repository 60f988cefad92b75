-- predict.lua: examples/predict.c in Lua.  An installed epochcast puts its module where stock
-- lua5.4 looks (PREFIX/lib/lua/5.4), and the module finds the installed models/ by itself.
--
--   lua5.4 examples/predict.lua                        (installed under /usr or /usr/local)
--   LUA_CPATH="PREFIX/lib/lua/5.4/?.so;;" lua5.4 examples/predict.lua    (another prefix)
--   epochcast run examples/predict.lua                 (the CLI preloads the module)
local ec = require "epochcast"

local r = assert(ec.predict{
  model = "bert-base", task = "classify", gpu = "t4", precision = "amp_fp16",
  batch_per_gpu = 32, seq_len = 128,
})
print(string.format("bert-base on t4, amp_fp16, batch 32 x 128 tokens: step %.1f ms (p10 %.1f, p90 %.1f), "
  .. "%.1f samples/s, peak memory %.2f of %.2f GiB, bottleneck %s", r.step_s * 1e3, r.step_p10_s * 1e3,
  r.step_p90_s * 1e3, r.samples_per_s,
  r.memory.peak_bytes / 2^30, r.memory.capacity_bytes / 2^30, r.bottleneck))
