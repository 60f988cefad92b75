-- test_plot_style.lua: what ec.plot draws, read from the gnuplot script it keeps with
-- spec.script (written before gnuplot is looked for, so this runs without gnuplot too):
-- 20 series in 20 colours (dashed from the 11th), the legend below the axes, not beside
-- them; validate in one panel per metric with out-of-memory outcomes counted, not drawn.
local T = dofile("harness.lua")
local test, check, eq = T.test, T.check, T.eq
local ec = require "epochcast"

local dir = os.tmpname()
os.remove(dir)
assert(ec.mkdir(dir))
local have_gnuplot = os.execute("command -v gnuplot >/dev/null 2>&1")

local function slurp(path)
  local f = assert(io.open(path, "rb"), "no file " .. path)
  local s = f:read("a")
  f:close()
  return s
end

local function count(s, pattern)
  local n = 0
  for _ in s:gmatch(pattern) do n = n + 1 end
  return n
end

-- Draw spec (path and script in dir); the script's text.
local function script_of(spec, name)
  spec.path, spec.script = dir .. "/" .. name .. ".png", dir .. "/" .. name .. ".gp"
  local ok, msg = ec.plot(spec)
  if have_gnuplot then check(ok, "plot failed: " .. tostring(msg)) end
  return slurp(spec.script)
end

local function series_rows(n)
  local rows = {}
  for s = 1, n do
    for b = 8, 64, 8 do
      rows[#rows + 1] = { batch_per_gpu = b, epoch_s = 100 * s + b, samples_per_s = s * b, run_s = s * b,
                          cost_run = s + b, gpu = string.format("gpu-%02d", s) }
    end
  end
  return rows
end

test("20 line series get 20 distinct colours, dashed from the 11th", function()
  local gp = script_of({ kind = "line", rows = series_rows(20), x = "batch_per_gpu", y = "epoch_s", group = "gpu" },
                       "lines20")
  local colours, dashed = {}, 0
  for line in gp:gmatch("[^\n]+") do
    local c = line:match("^%s*[plot]*%s*ecdata index %d+ .- lc rgb '(#%x+)'")
    if c then colours[c] = true end
    if line:find("ecdata index") and line:find(" dt 2 ") then dashed = dashed + 1 end
  end
  local distinct = 0
  for _ in pairs(colours) do distinct = distinct + 1 end
  eq(distinct, 20, "distinct colours")
  eq(dashed, 10, "dashed series")
end)

test("the legend goes below the axes, whatever the number of series", function()
  for _, n in ipairs { 2, 12, 20 } do
    local gp = script_of({ kind = "line", rows = series_rows(n), x = "batch_per_gpu", y = "epoch_s", group = "gpu" },
                         "key" .. n)
    check(gp:find("set key outside below", 1, true), n .. " series: " .. gp)
    check(not gp:find("set key [^\n]*right"), n .. " series: legend beside the axes")
  end
  local gp = script_of({ kind = "scatter", rows = series_rows(12), x = "run_s", y = "cost_run", group = "gpu" },
                       "scatter12")
  check(gp:find("set key outside below", 1, true), "scatter legend")
  eq(count(gp, "with points lc rgb '#%x+'"), 12, "scatter series in the palette's colours")
end)

test("validate: one panel per metric, out-of-memory outcomes counted, not drawn", function()
  local rows = {}
  local metrics = { "step_time_ms", "samples_per_s", "peak_bytes", "train_time_s" }
  local scale = { step_time_ms = 100, samples_per_s = 500, peak_bytes = 2e10, train_time_s = 3600 }
  for i = 1, 100 do
    local m = metrics[i % 4 + 1]
    local v = scale[m] * (1 + i / 50)
    rows[i] = { metric = m, gpu = ({ "a100", "t4", "h100" })[i % 3 + 1], measured = v, predicted = v * 1.1,
                p10 = v * 0.95, p90 = v * 1.3 }
  end
  rows[#rows + 1] = { metric = "oom", gpu = "t4", measured = 1, predicted = 1 }
  rows[#rows + 1] = { metric = "oom", gpu = "t4", measured = 1, predicted = 0 }
  local gp = script_of({ kind = "validate", rows = rows, group = "gpu" }, "validate")
  eq(count(gp, "set multiplot layout"), 1, "multiplot")
  eq(count(gp, "unset multiplot"), 1, "unset multiplot")
  eq(count(gp, "with filledcurves"), 4, "panels with the +-20% band")
  eq(count(gp, "yerrorbars"), 12, "p10-p90 bars: one block per GPU per panel")
  check(gp:find("2 out-of-memory outcomes", 1, true), "title counts the outcomes")
  local data = slurp(dir .. "/validate.gp.dat")
  eq(count(data, "[^\n]+"), 100, "runs drawn (the oom rows are not)")
  for _, name in ipairs { "'step time (ms)'", "'throughput (samples/s)'", "'peak GPU memory (GiB)'" } do
    check(gp:find("set title " .. name, 1, true), "panel title " .. name)
  end
end)

if have_gnuplot then
  test("the kept script draws the picture by hand", function()
    local pic = dir .. "/by_hand.png"
    local gp = dir .. "/validate.gp"
    local cmd = string.format("gnuplot -e \"ecout='%s'\" '%s' >/dev/null 2>&1", pic, gp)
    check(os.execute(cmd), cmd)
    check(slurp(pic):sub(2, 4) == "PNG", "a PNG")
  end)
end

os.execute("rm -rf '" .. dir .. "'")
T.finish()
