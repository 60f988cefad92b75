-- test_optimize.lua: ec.optimize{...}: the best layouts (fits, divides, ec.predict of its keys
-- gives its tokens/s), lists as search values, the stats adding up, one thread and two giving the
-- same layouts, and refusals (nil, msg, code naming the key) or raises for misuse.
-- Run by ctest with LUA_CPATH at the built module and EPOCHCAST_MODELS at models/.
local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check = T.test, T.check

local function search(extra)
  local t = { model = "llama-3.1-8b", seq_len = 4096, gpu = "h100-sxm5-80gb", num_gpus = 16,
              global_batch_tokens = 1048576, top = 5 }
  for k, v in pairs(extra or {}) do t[k] = v end
  return ec.optimize(t)
end

test("the best layout fits, divides and is ec.predict's", function()
  local r = assert(search { threads = 2 })
  local b = r.layouts[1]
  check(#r.layouts == 5, "top 5")
  check(b.fits and b.reason == "best" and b.lost == "best", b.reason)
  check(b.dp * b.tp * b.pp * b.cp == 16, "divides")
  check(b.dp * b.batch_per_gpu * b.grad_accum * 4096 == 1048576, "the global batch")
  local p = assert(ec.predict { model = "llama-3.1-8b", seq_len = 4096, gpu = "h100-sxm5-80gb", num_gpus = 16,
    precision = b.precision, tp = b.tp, pp = b.pp, cp = b.cp, ep = b.ep, strategy = b.strategy,
    sharding = b.strategy == "fsdp" and b.sharding or nil, zero_stage = b.strategy == "zero" and b.zero_stage or nil,
    pp_schedule = b.pp > 1 and b.pp_schedule or nil, pp_chunks = b.pp > 1 and b.pp_chunks or nil,
    batch_per_gpu = b.batch_per_gpu, grad_accum = b.grad_accum, checkpointing = b.checkpointing })
  check(p.tokens_per_s == b.tokens_per_s, p.tokens_per_s .. " vs " .. b.tokens_per_s)
  for i = 2, #r.layouts do
    check(r.layouts[i].tokens_per_s <= r.layouts[i - 1].tokens_per_s, "sorted")
    check(r.layouts[i].reason ~= "", "a reason")
  end
  local s = r.stats
  check(s.considered == s.pruned_divide + s.pruned_memory + s.priced, "the counts add up")
  check(s.threads == 2 and s.search_s > 0, "threads and time")
end)

test("lists search, one value fixes; threads 1 and 2 agree", function()
  local a = assert(search { tp = { 1, 2 }, pp = 1, strategy = { "fsdp", "zero" }, threads = 1, top = 50 })
  local b = assert(search { tp = { 1, 2 }, pp = 1, strategy = { "fsdp", "zero" }, threads = 2, top = 50 })
  check(#a.layouts == #b.layouts and #a.layouts > 0, "the same count")
  for i, l in ipairs(a.layouts) do
    check(l.tp <= 2 and l.pp == 1 and (l.strategy == "fsdp" or l.strategy == "zero"), "within the lists")
    local m = b.layouts[i]
    check(l.tokens_per_s == m.tokens_per_s and l.tp == m.tp and l.strategy == m.strategy and
          l.batch_per_gpu == m.batch_per_gpu and l.checkpointing == m.checkpointing, "layout " .. i)
  end
end)

test("refusals name the key; misuse raises", function()
  local r, msg, code = search { global_batch_tokens = 1000000 }
  check(r == nil and code == "EINVAL" and msg:find("global_batch_tokens=1000000", 1, true), tostring(msg))
  r, msg, code = search { bach = 3 }
  check(r == nil and code == "ENOTFOUND" and msg:find("bach", 1, true), tostring(msg))
  r, msg = search { tp = { 1, 0 } }
  check(r == nil and msg:find("tp", 1, true), tostring(msg))
  check(not pcall(ec.optimize, "llama"), "a string raises")
  check(not pcall(search, { tp = { {} } }), "a table value raises")
end)

T.finish()
