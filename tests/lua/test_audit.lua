-- test_audit.lua: the seed scenarios' audit (scenarios/lib/audit.lua): each reason matches
-- the change it explains, unknown values print as "-", and the tables fit in 100 columns.
local T = dofile("harness.lua")
local test, check, eq = T.test, T.check, T.eq
package.path = "../../scenarios/lib/?.lua;" .. package.path
local ec = require "epochcast"
local audit = require "audit"

-- Run f with print captured; the printed lines.
local function printed(f)
  local lines, real = {}, print
  print = function(...)
    local t = {}
    for i = 1, select("#", ...) do t[i] = tostring(select(i, ...)) end
    for l in (table.concat(t, "\t") .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  end
  local ok, err = pcall(f)
  print = real
  assert(ok, err)
  return lines
end

-- The tweet classifier of seed 001: bert-base on a T4, batch 8 with accumulation 4.
local before = { model = "bert-base", task = "classify", gpu = "t4", precision = "amp_fp16", seq_len = 128,
                 batch_per_gpu = 8, grad_accum = 4, num_workers = 2, dataset_samples = 100000 }
local changes = {
  { label = "grad accumulation 4 -> 1", set = { grad_accum = 1 }, claimed = "more stable gradients" },
  { label = "gradient checkpointing", set = { checkpointing = true }, claimed = "2x larger batches" },
  { label = "a change no key expresses", claimed = "faster", unmodelled = "not a config key" },
}
local rows = audit.run(ec, before, changes)

test("dropping gradient accumulation is explained by the optimizer steps, not recomputation", function()
  local r = rows[2]
  eq(r.verdict, "slower", "verdict")
  check(not r.reason:find("recomputation", 1, true), "reason names recomputation: " .. r.reason)
  check(r.reason:find("an optimizer step per 8 samples instead of 32", 1, true), "reason: " .. r.reason)
  check(r.reason:find("optimizer +", 1, true), "reason: " .. r.reason)
end)

test("turning checkpointing on is explained by recomputation", function()
  local r = rows[3]
  eq(r.verdict, "slower", "verdict")
  check(r.reason:find("at the price of recomputation", 1, true), "reason: " .. r.reason)
end)

test("a change with no effect says the bottleneck it did not touch", function()
  local r = audit.run(ec, before, { { label = "num_workers 2 -> 8", set = { num_workers = 8 }, claimed = "30-50%" } })[2]
  eq(r.verdict, "no effect", "verdict")
  check(r.reason:find("^the bottleneck stays compute: loader wait"), "reason: " .. r.reason)
end)

test("the audit tables fit in 100 columns and number their rows alike", function()
  local wide = { { label = string.rep("a long change label ", 4), set = { grad_accum = 1 },
                   claimed = string.rep("a long claim ", 5) } }
  local lines = printed(function() audit.print(audit.run(ec, before, wide)) end)
  for _, l in ipairs(lines) do check(#l <= 100, #l .. " columns: " .. l) end
  local heads = 0
  for _, l in ipairs(lines) do heads = heads + (l:find("^ *#  ") and 1 or 0) end
  eq(heads, 2, "two tables")
end)

test("unknown values print as '-': memory of a measured GPU step, a change not modelled", function()
  local measured = { gpu = "rtx4090", batch_per_gpu = 1, gpu_step_s = 0.05, sample_cpu_s = 0.2, num_workers = 0 }
  local lines = printed(function()
    audit.print(audit.run(ec, measured, { { label = "4 workers", set = { num_workers = 4 }, claimed = "4x" } }))
  end)
  local text = table.concat(lines, "\n")
  check(not text:find("0.00/23.99", 1, true), text)
  check(text:find("-/23.99", 1, true), text)
  local un = printed(function() audit.print(rows) end)
  check(table.concat(un, "\n"):find("\n *4  +%-  +%-  +%-  not a config key"), table.concat(un, "\n"))
end)

T.finish()
