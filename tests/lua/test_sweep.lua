-- test_sweep.lua: ec.sweep (order, error rows, strict, bad axes), ec.compare and ec.plot
-- (rows to a picture, and the clear failure when gnuplot is not on PATH).
-- Run by ctest with LUA_CPATH at the built module and EPOCHCAST_MODELS at models/.
local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check, eq, raises = T.test, T.check, T.eq, T.raises
local base = { model = "bert-base", seq_len = 128 }

test("sweep: product order, first axis slowest, rows equal ec.predict", function()
  local rows = ec.sweep(base, { { "gpu", { "t4", "a100-sxm4-80gb" } }, { "batch_per_gpu", { 8, 16, 32 } } })
  eq(#rows, 6, "rows")
  local k = 0
  for _, gpu in ipairs { "t4", "a100-sxm4-80gb" } do
    for _, b in ipairs { 8, 16, 32 } do
      k = k + 1
      eq(rows[k].gpu, gpu, "gpu of row " .. k)
      eq(rows[k].batch_per_gpu, b, "batch of row " .. k)
      eq(rows[k].model, "bert-base", "base key kept")
      local r = assert(ec.predict { model = "bert-base", seq_len = 128, gpu = gpu, batch_per_gpu = b })
      eq(rows[k].step_s, r.step_s, "step_s of row " .. k)
      eq(rows[k].breakdown.forward_s, r.breakdown.forward_s, "nested breakdown")
    end
  end
end)

-- Every key of ec.predict's table, the subtables' and the resolved config keys (strategy,
-- topology, nodes, task, seq_len) included, is in the sweep's row with the same value: the row's
-- keys come from names pushed once per sweep, so a name out of step would show here.
test("sweep: full rows carry every key of ec.predict, with its value", function()
  local a100 = { model = "bert-base", seq_len = 128, gpu = "a100-sxm4-80gb" }
  local rows = ec.sweep(a100, { { "num_gpus", { 1, 4 } }, { "batch_per_gpu", { 8 } } }, { progress = false })
  eq(#rows, 2, "rows")
  for k, n in ipairs { 1, 4 } do
    local r = assert(ec.predict { model = "bert-base", seq_len = 128, gpu = "a100-sxm4-80gb", num_gpus = n,
                                  batch_per_gpu = 8 })
    local keys = 0
    for key, v in pairs(r) do
      keys = keys + 1
      if type(v) == "table" then
        check(type(rows[k][key]) == "table", "row " .. k .. ": subtable " .. key)
        for sk, sv in pairs(v) do
          if type(sv) ~= "table" then eq(rows[k][key][sk], sv, "row " .. k .. ": " .. key .. "." .. sk) end
        end
      else
        eq(rows[k][key], v, "row " .. k .. ": " .. key)
      end
    end
    check(keys > 40, "ec.predict gave " .. keys .. " top-level keys")
  end
  eq(rows[2].strategy, "ddp", "resolved strategy on 4 GPUs")
  eq(rows[1].task, rows[2].task, "resolved task")
end)

-- A resolved key the point sets itself (a base pair or an axis) is the point's value, once.
test("sweep: resolved keys given as base pairs or axes keep the point's values", function()
  local rows = ec.sweep({ model = "bert-base", task = "classify", gpu = "a100-sxm4-80gb", num_gpus = 2, batch_per_gpu = 8 },
                        { { "strategy", { "ddp", "dp" } }, { "seq_len", { 128, 256 } } }, { progress = false })
  eq(#rows, 4, "rows")
  for i, want in ipairs { { "ddp", 128 }, { "ddp", 256 }, { "dp", 128 }, { "dp", 256 } } do
    eq(rows[i].strategy, want[1], "row " .. i .. ": strategy")
    eq(rows[i].seq_len, want[2], "row " .. i .. ": seq_len")
    eq(rows[i].task, "classify", "row " .. i .. ": task")
    eq(rows[i].nodes, 1, "row " .. i .. ": nodes (resolved)")
    local r = assert(ec.predict { model = "bert-base", task = "classify", gpu = "a100-sxm4-80gb", num_gpus = 2,
                                  batch_per_gpu = 8, strategy = want[1], seq_len = want[2] })
    eq(rows[i].step_s, r.step_s, "row " .. i .. ": step_s")
    eq(rows[i].topology, r.topology, "row " .. i .. ": topology (resolved)")
  end
end)

test("sweep: a map of axes runs in config-key order, whatever the hashing", function()
  local rows = ec.sweep(base, { batch_per_gpu = { 8, 16 }, gpu = { "t4", "a10g" } })
  -- gpu comes before batch_per_gpu in ec_config_key_name order, so gpu varies slowest.
  eq(rows[1].gpu, "t4"); eq(rows[2].gpu, "t4"); eq(rows[3].gpu, "a10g")
  eq(rows[1].batch_per_gpu, 8); eq(rows[2].batch_per_gpu, 16)
end)

local single = { model = "bert-base", seq_len = 128, gpu = "t4", strategy = "single" }

test("sweep: a refused point is a row with error, the sweep goes on", function()
  local rows = ec.sweep(single, { { "num_gpus", { 1, 4 } }, { "batch_per_gpu", { 8 } } })
  eq(#rows, 2)
  check(rows[1].error == nil and rows[1].step_s > 0, "first row predicted")
  check(type(rows[2].error) == "string" and rows[2].error:find("^EINVAL: "), "error row: " .. tostring(rows[2].error))
  eq(rows[2].step_s, nil, "no result in an error row")
  eq(rows[2].num_gpus, 4, "config kept in an error row")
end)

test("sweep: strict raises naming the point", function()
  raises("num_gpus=4", ec.sweep, single, { { "num_gpus", { 4 } }, { "batch_per_gpu", { 8 } } }, { strict = true })
end)

test("sweep: an unknown gpu among the axis values raises before the first point", function()
  raises("unknown gpu 'no-such-gpu'", ec.sweep, base, { { "gpu", { "t4", "no-such-gpu" } }, { "batch_per_gpu", { 8 } } })
end)

test("sweep: bad key or value raises naming it; empty or repeated axes raise", function()
  raises("'bach'", ec.sweep, base, { bach = { 8 } })
  raises("'-3'", ec.sweep, base, { batch_per_gpu = { 8, -3 }, gpu = { "t4" } })
  raises("batch_per_gpu", ec.sweep, base, { { "batch_per_gpu", { 8 } }, { "batch_per_gpu", { 16 } } })
  raises("no values", ec.sweep, base, { { "batch_per_gpu", {} } })
  raises("no axes", ec.sweep, base, {})
end)

test("sweep rows write to CSV with config keys first and units in result names", function()
  local rows = ec.sweep(base, { gpu = { "t4" }, batch_per_gpu = { 8, 16 } })
  local path = os.tmpname()
  assert(ec.write_csv(path, rows))
  local f = assert(io.open(path))
  local header = f:read("l")
  f:close()
  os.remove(path)
  check(header:find("^model,"), "config keys first: " .. header)
  check(header:find(",step_s,samples_per_s,epoch_s,"), "result columns with units: " .. header)
end)

test("compare: speed-up, memory delta and the changed keys", function()
  local a = { model = "bert-base", gpu = "t4", batch_per_gpu = 16 }
  local b = { model = "bert-base", gpu = "t4", batch_per_gpu = 16, precision = "amp_fp16" }
  local c = assert(ec.compare(a, b))
  local ra, rb = assert(ec.predict(a)), assert(ec.predict(b))
  eq(c.speedup, rb.samples_per_s / ra.samples_per_s, "speedup")
  eq(c.peak_delta_bytes, rb.peak_bytes - ra.peak_bytes, "peak delta")
  eq(#c.changed, 1); eq(c.changed[1], "precision")
  eq(c.a.step_s, ra.step_s); eq(c.b.step_s, rb.step_s)
  local r, msg, code = ec.compare(a, { model = "bert-base", gpu = "nope", batch_per_gpu = 1 })
  eq(r, nil); eq(code, "ENOTFOUND"); check(msg:find("nope"), msg)
end)

local function have_gnuplot()
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    local f = io.open(dir .. "/gnuplot")
    if f then f:close() return true end
  end
  return false
end

test("plot: each kind writes a PNG (or SVG) when gnuplot is there", function()
  if not have_gnuplot() then print("     (gnuplot not on PATH: skipped)") return end
  local rows = ec.sweep(base, { gpu = { "t4" }, batch_per_gpu = { 8, 16, 32 } })
  local dir = os.tmpname(); os.remove(dir)
  for _, spec in ipairs {
    { kind = "line", x = "batch_per_gpu", y = "epoch_s", group = "gpu", ext = ".png" },
    { kind = "memory", x = "batch_per_gpu", group = "gpu", ext = ".svg" },
    { kind = "breakdown", x = { "gpu", "batch_per_gpu" }, ext = ".png" },
  } do
    spec.rows, spec.path = rows, dir .. spec.kind .. spec.ext
    assert(ec.plot(spec))
    local f = assert(io.open(spec.path, "rb"))
    local head = f:read(8)
    f:close()
    os.remove(spec.path)
    if spec.ext == ".png" then eq(head, "\137PNG\r\n\26\n", "PNG signature") else check(head:find("<"), "SVG text") end
    check(not io.open(spec.path .. ".tmp"), "no temporary left")
  end
  local v = { { predicted = 110, measured = 100, gpu = "t4" }, { predicted = 50, measured = 60, gpu = "a10g" } }
  assert(ec.plot { kind = "validate", rows = v, group = "gpu", path = dir .. "v.png" })
  os.remove(dir .. "v.png")
end)

test("sweep: opts.fields keeps only those result keys, same values as full rows", function()
  local axes = { { "gpu", { "t4", "a100-sxm4-80gb" } }, { "batch_per_gpu", { 8, 32 } } }
  local full = ec.sweep(base, axes, { progress = false })
  local some = ec.sweep(base, axes, { progress = false, fields = { "step_s", "memory" } })
  eq(#some, #full, "rows")
  for k = 1, #full do
    eq(some[k].step_s, full[k].step_s, "step_s of row " .. k)
    eq(some[k].memory.peak_bytes, full[k].memory.peak_bytes, "memory subtable of row " .. k)
    eq(some[k].gpu, full[k].gpu, "config key kept")
    eq(some[k].samples_per_s, nil, "field left out")
    eq(some[k].breakdown, nil, "subtable left out")
  end
  raises("is not a key of a result", ec.sweep, base, axes, { fields = { "nope" } })
end)

test("plot: misuse raises", function()
  raises("must end in .png or .svg", ec.plot, { kind = "line", rows = {}, path = "x.jpg" })
  raises("unknown kind", ec.plot, { kind = "pie", rows = {}, path = "x.png" })
  raises("kind expected", ec.plot, { rows = {}, path = "x.png" })
end)

T.finish()
