-- test_epochcast.lua: the Lua binding as a stock lua5.4 sees it through require.
-- Run by ctest with LUA_CPATH pointing at the built epochcast.so, EPOCHCAST_MODELS at
-- models/ and EC_CLI at the epochcast binary (used to check that the CLI and Lua agree).
-- Covers every module function: documented keys and types, the nil, msg, code failures,
-- the errors raised on misuse, and CSV round trips through write_csv and load_runs.

local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check, eq, raises = T.test, T.check, T.eq, T.raises

local function close(a, b, rtol, what)
  check(math.abs(a - b) <= rtol * math.max(math.abs(a), math.abs(b)),
    string.format("%s: %.17g vs %.17g", what or "value", a, b), 2)
end

-- The call must return nil, message, code with the message containing `pattern`.
local function fails(code, pattern, fn, ...)
  local r, msg, c = fn(...)
  check(r == nil, "expected nil, msg, code; got " .. tostring(r), 2)
  check(type(msg) == "string" and msg:find(pattern, 1, true),
    "message '" .. tostring(msg) .. "' does not contain '" .. pattern .. "'", 2)
  eq(c, code, "code")
  check(msg:sub(1, #code + 2) == code .. ": ", "message must start with the code: " .. msg, 2)
end

local function tmpname(suffix)
  local p = os.tmpname()
  os.remove(p)
  return p .. (suffix or ".csv")
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Minimal CSV reading for our own output (no quoted commas in the fields checked).
local function read_csv(path)
  local rows = {}
  for line in io.lines(path) do
    local row = {}
    for field in (line .. ","):gmatch("([^,]*),") do row[#row + 1] = field end
    rows[#rows + 1] = row
  end
  return rows
end

local BASE = { model = "bert-base", gpu = "t4", batch_per_gpu = 32, seq_len = 128,
               dataset_samples = 20000 }

local function with(changes)
  local cfg = {}
  for k, v in pairs(BASE) do cfg[k] = v end
  for k, v in pairs(changes or {}) do cfg[k] = v end
  return cfg
end

test("module loads", function()
  eq(type(ec), "table", "module")
  eq(package.loaded.epochcast, ec, "package.loaded")
  eq(type(ec._VERSION), "string", "_VERSION")
  for _, f in ipairs { "predict", "max_batch", "gpus", "models", "load_runs", "write_csv",
                       "result_columns" } do
    eq(type(ec[f]), "function", f)
  end
end)

test("predict returns the documented keys", function()
  local r = assert(ec.predict(with()))
  for _, k in ipairs { "step_s", "samples_per_s", "epoch_s", "run_s", "gpu_util_frac",
                       "gpu_busy_s", "cpu_issue_s", "flop_per_step", "mfu_frac",
                       "kernels_per_step", "steps_per_epoch", "peak_bytes", "capacity_bytes" } do
    eq(math.type(r[k]), "float", k)
    check(r[k] >= 0 and r[k] == r[k], k .. " must be a number >= 0")
  end
  check(r.step_s > 0 and r.samples_per_s > 0, "positive step time and throughput")
  check(r.gpu_util_frac <= 1, "gpu_util_frac <= 1")
  eq(type(r.fits), "boolean", "fits")
  eq(type(r.bottleneck), "string", "bottleneck")
  local known = { compute = true, cpu = true, input = true, h2d = true, comm = true }
  check(known[r.bottleneck], "unknown bottleneck " .. r.bottleneck)
  for _, k in ipairs { "forward_s", "backward_s", "optimizer_s", "h2d_s", "cpu_overhead_s",
                       "loader_s", "comm_s" } do
    eq(math.type(r.breakdown[k]), "float", "breakdown." .. k)
  end
  for _, k in ipairs { "weights_bytes", "grads_bytes", "optimizer_bytes", "cast_cache_bytes",
                       "activations_bytes", "workspace_bytes", "context_bytes",
                       "allocator_bytes", "peak_bytes", "capacity_bytes" } do
    eq(math.type(r.memory[k]), "float", "memory." .. k)
  end
  eq(r.memory.fits, r.fits, "memory.fits")
  eq(r.memory.peak_bytes, r.peak_bytes, "memory.peak_bytes")
  eq(r.memory.capacity_bytes, r.capacity_bytes, "memory.capacity_bytes")
  for _, k in ipairs { "p10", "p50", "p90" } do
    eq(math.type(r.interval[k]), "float", "interval." .. k)
  end
  check(r.interval.p10 <= r.interval.p90, "p10 <= p90")
  check(r.epoch_s > 0, "epoch_s > 0 with dataset_samples")
  eq(type(r.warnings), "table", "warnings")
  for _, w in ipairs(r.warnings) do eq(type(w), "string", "warning") end
end)

test("predict is deterministic", function()
  local a, b = assert(ec.predict(with())), assert(ec.predict(with()))
  eq(a.step_s, b.step_s, "step_s")
  eq(a.interval.p90, b.interval.p90, "p90")
end)

test("config values: integers, floats, booleans, strings", function()
  assert(ec.predict(with { batch_per_gpu = 32.0, pin_memory = true, num_workers = 2,
                           precision = "amp_fp16", gpu = "Tesla T4" }))
  assert(ec.predict(with { persistent_workers = false, eval_samples = 1000.0, sample_cpu_s = 0.0005 }))
end)

test("unknown key raises with the nearest key", function()
  raises("unknown key 'bach_per_gpu'", ec.predict, with { bach_per_gpu = 3 })
  raises("batch_per_gpu", ec.predict, { model = "bert-base", gpu = "t4", bach_per_gpu = 3 })
end)

test("bad value raises naming the key and the range", function()
  raises("batch_per_gpu", ec.predict, with { batch_per_gpu = -1 })
  raises("precision", ec.predict, with { precision = "fp8" })
end)

test("unknown GPU and model return nil, msg, code", function()
  fails("ENOTFOUND", "t44", ec.predict, with { gpu = "t44" })
  fails("ENOTFOUND", "t4", ec.predict, with { gpu = "t44" }) -- names the nearest id
  fails("ENOTFOUND", "bert-bsae", ec.predict, with { model = "bert-bsae" })
  fails("ENOTFOUND", "t44", ec.max_batch, with { gpu = "t44" })
end)

test("missing batch is an expected failure", function()
  local cfg = with()
  cfg.batch_per_gpu = nil
  local r, msg, code = ec.predict(cfg)
  eq(r, nil, "result")
  eq(type(msg), "string", "message")
  eq(code, "EINVAL", "code")
end)

test("misuse raises", function()
  raises("table expected", ec.predict, 3)
  raises("table expected", ec.predict)
  raises("keys must be strings", ec.predict, { "bert-base" })
  raises("number, boolean or string expected", ec.predict, with { seq_len = {} })
  -- a release as a float cannot tell 2.1 from 2.10: text asked for, an integer or a string taken
  raises("config key 'torch_version': give the release as a string (\"2.10\"): the number 2.1 cannot tell",
         ec.predict, with { torch_version = 2.10 })
  assert(ec.predict(with { torch_version = "2.10" }).step_s > 0)
  assert(ec.predict(with { torch_version = 2 }).step_s > 0)
  raises("table expected", ec.max_batch, "bert-base")
  raises("limit", ec.max_batch, with(), -1)
  raises("string expected", ec.load_runs, {})
  raises("string expected", ec.write_csv, nil, {})
  raises("table expected", ec.write_csv, tmpname(), "rows")
  raises("bad row 1", ec.write_csv, tmpname(), { 42 })
  raises("row 1", ec.write_csv, tmpname(), { { f = print } })
  raises("column 1 is not a string", ec.write_csv, tmpname(), { { a = 1 } }, { 1 })
end)

test("max_batch is monotone in seq_len", function()
  local prev = math.maxinteger
  for _, seq_len in ipairs { 64, 128, 256, 512 } do
    local cfg = with { seq_len = seq_len }
    cfg.batch_per_gpu = nil
    local n = assert(ec.max_batch(cfg))
    eq(math.type(n), "integer", "max_batch")
    check(n <= prev, string.format("max_batch grew from %d to %d at seq_len %d", prev, n, seq_len))
    prev = n
  end
  check(assert(ec.max_batch(with { seq_len = 128 })) >= 1, "bert-base seq 128 fits on a T4")
  check(assert(ec.max_batch(with { seq_len = 128 }, 7)) <= 7, "limit is respected")
end)

test("max_batch agrees with predict's fits", function()
  local n = assert(ec.max_batch(with { seq_len = 256 }, 4096))
  if n >= 1 then
    check(assert(ec.predict(with { seq_len = 256, batch_per_gpu = n })).fits, "max batch fits")
  end
  if n < 4096 then
    check(not assert(ec.predict(with { seq_len = 256, batch_per_gpu = n + 1 })).fits,
      "max batch + 1 does not fit")
  end
end)

test("gpus and models", function()
  local gpus, models = ec.gpus(), ec.models()
  check(#gpus > 0 and #models > 0, "registries are not empty")
  local ids = {}
  for _, g in ipairs(gpus) do
    eq(type(g.id), "string", "gpu id")
    eq(type(g.name), "string", "gpu name")
    check(g.memory_bytes > 0 and g.peak_fp32_flop_per_s > 0, g.id .. " has figures")
    eq(math.type(g.sm_count), "integer", "sm_count")
    ids[g.id] = true
  end
  check(ids.t4, "t4 is listed")
  local mids = {}
  for _, m in ipairs(models) do
    eq(type(m.family), "string", "family")
    check(m.params > 0, m.id .. " has parameters")
    mids[m.id] = true
  end
  check(mids["bert-base"], "bert-base is listed")
end)

test("result_columns start with the headline keys", function()
  local cols = ec.result_columns()
  eq(cols[1], "step_s", "first column")
  local seen = {}
  for _, c in ipairs(cols) do
    check(not seen[c], "duplicate column " .. c)
    seen[c] = true
  end
  for _, c in ipairs { "samples_per_s", "peak_bytes", "fits", "breakdown_forward_s",
                       "memory_weights_bytes", "epoch_p90_s", "warnings" } do
    check(seen[c], "missing column " .. c)
  end
end)

test("write_csv: config keys first, flattened results, atomic", function()
  local path = tmpname()
  local r = assert(ec.predict(with()))
  local row = with()
  for k, v in pairs(r) do row[k] = v end
  row.zeta, row.alpha = "last", 1.5
  assert(ec.write_csv(path, { row, { model = "bert-large", note = "a,b" } }))
  check(not exists(path .. ".tmp"), "no temporary file is left")
  local rows = read_csv(path)
  eq(#rows, 3, "lines")
  local h = rows[1]
  eq(h[1], "model", "config keys come first")
  local col = {}
  for i, name in ipairs(h) do col[name] = i end
  check(col.gpu < col.step_s and col.seq_len < col.step_s, "config before results")
  check(col.step_s < col.breakdown_forward_s, "result order")
  eq(h[#h], "zeta", "other columns sorted at the end")
  eq(h[#h - 2], "alpha", "other columns sorted")
  check(not col.memory_peak_bytes and not col.memory_fits, "memory aliases are not repeated")
  close(tonumber(rows[2][col.step_s]), r.step_s, 1e-5, "step_s")
  eq(rows[2][col.batch_per_gpu], "32", "integers have no decimal point")
  eq(rows[2][col.fits], r.fits and "1" or "0", "fits")
  eq(rows[2][col.breakdown_forward_s] ~= "", true, "breakdown is flattened")
  eq(rows[3][col.step_s], "", "missing fields are empty")
  os.remove(path)
end)

test("write_csv with explicit columns, then load_runs round trip", function()
  local path = tmpname()
  local rows = {
    { id = "r1", model = "bert-base", gpu = "t4", batch_per_gpu = 16, seq_len = 128,
      precision = "amp_fp16", metric = "samples_per_s", value = 101.5, source = "test, quoted" },
    { id = "r2", model = "bert-base", gpu = "a100-sxm4-80gb", batch_per_gpu = 64, seq_len = 256,
      precision = "fp32", metric = "step_time_ms", value = 250, source = "test" },
  }
  local cols = { "id", "model", "gpu", "batch_per_gpu", "seq_len", "precision", "metric",
                 "value", "source" }
  assert(ec.write_csv(path, rows, cols))
  local runs = assert(ec.load_runs(path))
  eq(#runs, 2, "runs")
  eq(runs[1].id, "r1", "id")
  eq(runs[1].source, "test, quoted", "source with a comma")
  eq(runs[1].metric, "samples_per_s", "metric")
  eq(runs[2].metric, "step_time_ms", "metric")
  eq(runs[1].value, 101.5, "value")
  eq(runs[2].line, 3, "line")
  eq(runs[1].config.model, "bert-base", "config.model")
  eq(runs[1].config.batch_per_gpu, 16, "config.batch_per_gpu")
  eq(runs[2].config.seq_len, 256, "config.seq_len")
  check(runs[1].config.num_workers == nil, "only the keys the file set")
  local r = assert(ec.predict(runs[1].config))
  local direct = assert(ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 16,
                                     seq_len = 128, precision = "amp_fp16" })
  eq(r.step_s, direct.step_s, "a loaded config predicts like the original")
  os.remove(path)
end)

test("write_csv failure returns nil, msg, code and leaves no file", function()
  local path = "/nonexistent-dir-epochcast/out.csv"
  fails("EIO", "nonexistent-dir-epochcast", ec.write_csv, path, { { a = 1 } })
  check(not exists(path), "no file")
end)

test("load_runs failures", function()
  fails("EIO", "no-such-runs.csv", ec.load_runs, "no-such-runs.csv")
  local path = tmpname()
  local f = assert(io.open(path, "w"))
  f:write("id,model,gpu,batch_per_gpu,metric,value,source\n")
  f:write("a,bert-base,t4,16,samples_per_s,100,x\n")
  f:write("b,bert-base,t4,sixteen,samples_per_s,100,x\n")
  f:close()
  local r, msg, code = ec.load_runs(path)
  eq(r, nil, "result")
  check(msg:find(path .. ":3", 1, true), "message names file:line: " .. tostring(msg))
  check(code == "EINVAL" or code == "EPARSE", "code " .. tostring(code))
  os.remove(path)
end)

test("the CLI and Lua give the same numbers", function()
  local cli = os.getenv("EC_CLI")
  if not cli then print("     (skipped: EC_CLI not set)") return end
  local p = assert(io.popen(cli .. " predict model=bert-base gpu=t4 batch_per_gpu=32"
                            .. " seq_len=128 dataset_samples=20000 --csv"))
  local header, row = p:read("l"), p:read("l")
  p:close()
  -- RFC 4180 fields: a quoted field may hold commas (price_offer, warnings)
  local fields = dofile("csv_fields.lua")
  local names, values = fields(header), fields(row)
  eq(#names, #values, "columns")
  local cli_r = {}
  for i, n in ipairs(names) do cli_r[n] = values[i] end
  local r = assert(ec.predict(with()))
  for _, k in ipairs { "step_s", "samples_per_s", "epoch_s", "peak_bytes" } do
    close(tonumber(cli_r[k]), r[k], 1e-5, k)
  end
  close(tonumber(cli_r.breakdown_backward_s), r.breakdown.backward_s, 1e-5, "backward_s")
  eq(cli_r.bottleneck, r.bottleneck, "bottleneck")
end)

test("profile= and the CLI's --profile give the same prediction", function()
  local cli = os.getenv("EC_CLI")
  if not cli then return end
  local prof = tmpname(".csv")
  local f = assert(io.open(prof, "w"))
  -- half the tensor-core GEMM and bandwidth efficiency on every GPU, twice the dispatch time:
  -- slower than the shipped profile (models/profile.csv, scales 0.7-1.1) on any step
  f:write("parameter,architecture,value\ngemm_scale,,0.5\nmem_scale,,0.5\ndispatch_scale,,2\n")
  f:close()
  local base = assert(ec.predict(with { precision = "amp_fp16" }))
  local slow = assert(ec.predict(with { precision = "amp_fp16", profile = prof }))
  check(slow.step_s > base.step_s * 1.2, "a slower profile predicts a slower step")
  local function cli_step(args)
    local p = assert(io.popen(cli .. " " .. args .. " 2>&1"))
    local out = p:read("a")
    p:close()
    local header, row = out:match("([^\n]*)\n([^\n]*)")
    local names, values = {}, {}
    for x in (header .. ","):gmatch("([^,]*),") do names[#names + 1] = x end
    for x in (row .. ","):gmatch("([^,]*),") do values[#values + 1] = x end
    for i, n in ipairs(names) do if n == "step_s" then return tonumber(values[i]) end end
    error("no step_s in: " .. out)
  end
  local words = "predict model=bert-base gpu=t4 batch_per_gpu=32 seq_len=128 dataset_samples=20000 precision=amp_fp16 --csv"
  close(cli_step(words .. " --profile " .. prof), slow.step_s, 1e-5, "predict --profile")
  close(cli_step("--profile " .. prof .. " " .. words), slow.step_s, 1e-5, "epochcast --profile predict")
  close(cli_step(words), base.step_s, 1e-5, "predict without a profile")
  -- run --profile: the scenario's predictions use it without naming it
  local script = tmpname(".lua")
  f = assert(io.open(script, "w"))
  f:write('local ec = require "epochcast"\n',
          'local r = assert(ec.predict { model = "bert-base", gpu = "t4", batch_per_gpu = 32, seq_len = 128,',
          ' dataset_samples = 20000, precision = "amp_fp16" })\n',
          'print("step_s"); print(string.format("%.17g", r.step_s))\n')
  f:close()
  close(cli_step("run --profile " .. prof .. " " .. script), slow.step_s, 1e-12, "run --profile")
  close(cli_step("run " .. script), base.step_s, 1e-12, "run without a profile")
  os.remove(script)
  os.remove(prof)
end)

T.finish()
