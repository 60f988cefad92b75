-- test_plan.lua: ec.plan (the cheapest configuration under constraints, the Pareto front),
-- ec.plot's scatter kind, the values a prediction derived in ec.predict / ec.sweep /
-- ec.compare results, and cost in results (issue 21).
-- Run by ctest with LUA_CPATH at the built module and EPOCHCAST_MODELS at models/.
local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check, eq, raises = T.test, T.check, T.eq, T.raises
local spec = { model = "bert-base", gpu = { "t4", "a10", "a100-sxm4-80gb", "h100-sxm5-80gb" },
               num_gpus = { 1, 2, 4, 8 }, dataset_samples = 1000000, epochs = 3, deadline_h = 10 }

test("plan: the cheapest row meeting the deadline, the front sorted by run time", function()
  local r = assert(ec.plan(spec))
  eq(#r.rows, 16, "rows")
  check(r.best, "a best row")
  eq(r.best.verdict, "meets", "best verdict")
  check(r.best.run_s <= 10 * 3600, "best meets the deadline")
  for _, row in ipairs(r.rows) do
    if row.verdict == "meets" then check(row.cost_run >= r.best.cost_run, "a cheaper row meets the deadline") end
  end
  check(#r.front >= 1, "a front")
  for k = 2, #r.front do
    check(r.front[k].run_s >= r.front[k - 1].run_s, "front sorted by run time")
    check(r.front[k].cost_run < r.front[k - 1].cost_run, "slower front points must be cheaper")
  end
  -- the rows carry their config: first axis (gpu) slowest
  eq(r.rows[1].gpu, "t4"); eq(r.rows[1].num_gpus, 1); eq(r.rows[5].gpu, "a10")
  eq(r.rows[2].strategy, "ddp", "derived strategy in the row")
end)

test("plan: no configuration meets an impossible deadline", function()
  local s = {}
  for k, v in pairs(spec) do s[k] = v end
  s.deadline_h = 0.001
  local r = assert(ec.plan(s))
  eq(r.best, nil, "no best")
  check(r.reason and r.reason:find("no configuration"), "reason")
end)

test("plan: bad keys and values raise, unknown gpus fail", function()
  raises("plan key 'goal'", ec.plan, { model = "bert-base", gpu = { "t4" }, dataset_samples = 1, goal = "cheap" })
  raises("unknown gpu 't44'", ec.plan, { model = "bert-base", gpu = { "t4", "t44" }, dataset_samples = 1 })
  local r, msg, code = ec.plan { model = "bert-base", gpu = "t44", dataset_samples = 1 }
  eq(r, nil); eq(code, "ENOTFOUND"); check(msg:find("t44"), msg)
end)

test("predict, sweep and compare carry the values a prediction derived", function()
  local r = assert(ec.predict { model = "bert-base", gpu = "t4", num_gpus = 2, batch_per_gpu = 8 })
  eq(r.strategy, "ddp"); eq(r.task, "classify"); eq(r.seq_len, 128); eq(r.topology, "pcie-switch"); eq(r.nodes, 1)
  local rows = ec.sweep({ model = "resnet50", gpu = "t4", batch_per_gpu = 8 }, { num_gpus = { 1, 2 } })
  eq(rows[1].strategy, "single"); eq(rows[2].strategy, "ddp"); eq(rows[2].image_size, 224); eq(rows[2].seq_len, nil)
  local c = assert(ec.compare({ model = "bert-base", gpu = "t4", num_gpus = 2, batch_per_gpu = 8 },
                              { model = "bert-base", gpu = "Tesla T4", num_gpus = 2, batch_per_gpu = 8, strategy = "ddp" }))
  eq(#c.changed, 0, "derived strategy and an alias are no change")
end)

test("results carry cost: cost_run = run_s x price_per_hour", function()
  local r = assert(ec.predict { model = "bert-base", gpu = "a100-sxm4-80gb", batch_per_gpu = 32, dataset_samples = 100000 })
  check(r.price_per_hour > 0, "priced")
  check(math.abs(r.cost_run - r.run_s * r.price_per_hour / 3600) <= 1e-9 * r.cost_run, "cost_run")
  check(r.price_offer:find("USD"), r.price_offer)
  local o = assert(ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 32, dataset_samples = 100000,
                                price_per_gpu_hour = 2 })
  eq(o.price_per_hour, 2, "override")
  check(r.step_p10_s < r.step_s and r.step_s < r.step_p90_s, "step interval")
end)

test("results in hours and money: train_time_h, cost_usd, price_currency; train_tokens and train_samples (issue 41)",
     function()
  local r = assert(ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 32, train_tokens = 1e9 })
  check(r.run_s > 0 and r.epoch_s == 0, "train_tokens gives a run, no epoch")
  check(math.abs(r.train_time_h * 3600 - r.run_s) <= 1e-9 * r.run_s, "train_time_h")
  eq(r.price_currency, "USD")
  check(r.cost_usd > 0 and r.cost_usd == r.cost_run, "cost_usd")
  check(math.abs(r.cost_per_million_tokens - r.price_per_hour / 3600 * 1e6 / r.tokens_per_s)
        <= 1e-9 * r.cost_per_million_tokens, "cost_per_million_tokens")
  local s = assert(ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 32, train_samples = 100000 })
  check(math.abs(s.run_s - 100000 / s.samples_per_s) <= 1e-6 * s.run_s, "train_samples at the steady rate")
  local n = assert(ec.predict { model = "bert-base", gpu = "a16", batch_per_gpu = 8 })
  eq(n.cost_usd, 0); eq(n.price_currency, ""); eq(n.train_time_h, 0)
  local none, msg = ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 8, dataset_samples = 10,
                                 train_tokens = 1e6 }
  check(none == nil and tostring(msg):find("both give the run's length", 1, true), tostring(msg))
  local p = assert(ec.plan { model = "bert-base", gpu = { "t4", "a10g" }, train_tokens = 1e9 })
  check(p.best and p.best.cost_usd > 0 and p.best.train_time_h > 0, "a plan on train_tokens")
end)

local function have_gnuplot()
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    local f = io.open(dir .. "/gnuplot")
    if f then f:close() return true end
  end
  return false
end

test("plot scatter: the plan's points, the front and the choice", function()
  local r = assert(ec.plan(spec))
  local path = os.tmpname() .. ".svg"
  local ok, msg, code = ec.plot { kind = "scatter", rows = r.rows, x = "run_s", y = "cost_run", group = "gpu",
                                  xline = 36000, path = path }
  if not have_gnuplot() then
    eq(ok, nil); eq(code, "ENOTFOUND")
    return
  end
  check(ok, msg)
  local f = assert(io.open(path))
  local svg = f:read("a")
  f:close()
  os.remove(path)
  check(svg:find("Pareto front", 1, true), "front in the legend")
  check(svg:find("chosen", 1, true), "choice in the legend")
  raises("no row has numbers", ec.plot, { kind = "scatter", rows = { {} }, path = path })
end)

T.finish()
