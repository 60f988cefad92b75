-- test_trace.lua: ec.trace (l_trace.c over ec_trace_write): a Chrome trace file with the
-- tracks the issue names and the step's phases (issue 41), an error return for an unwritable
-- path, and a raise for a bad key.
-- Run by ctest with LUA_CPATH at the built module and EPOCHCAST_MODELS at models/.
local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check = T.test, T.check

local cfg = { model = "bert-base", gpu = "rtx4090", host = "workstation", batch_per_gpu = 1,
              sample_cpu_s = 0.2, dataset_samples = 25, num_workers = 4, pin_memory = 1 }

test("trace: file with every track and complete events", function()
  local path = os.tmpname()
  check(ec.trace(cfg, path, 10) == true, "ec.trace returned no true")
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  os.remove(path)
  for _, track in ipairs { "main thread", "GPU compute", "communication", "pin-memory thread", "worker 0" } do
    check(text:find(track, 1, true), "trace lacks the track '" .. track .. "'")
  end
  -- issue 41: the step model's phases, once a step (grad_accum 1) on the GPU's track
  for _, phase in ipairs { "copy batch", "forward", "backward", "optimizer step" } do
    local n = select(2, text:gsub('"name":"' .. phase .. '"', ""))
    check(n == 10, "trace has " .. n .. " '" .. phase .. "' slices, want 10")
  end
  local complete = select(2, text:gsub('"ph":%s*"X"', ""))
  check(complete >= 10, "only " .. complete .. " complete events")
  check(not text:find('"dur":%s*%-'), "a negative duration")
end)

test("trace: unwritable path returns nil, message", function()
  local ok, msg = ec.trace(cfg, "/nonexistent-dir/t.json")
  check(ok == nil and tostring(msg):find("nonexistent", 1, true), "expected nil and a message naming the path")
end)

test("trace: bad key raises", function()
  local ok, err = pcall(ec.trace, { model = "bert-base", gpu = "t4", bach = 2 }, "/tmp/x.json")
  check(not ok and tostring(err):find("bach", 1, true), "expected a raise naming 'bach'")
end)

T.finish()
