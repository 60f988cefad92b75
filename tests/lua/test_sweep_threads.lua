-- test_sweep_threads.lua: ec.sweep(base, axes, {threads = N}) gives the rows one thread gives,
-- field for field and in the same order (refused points, opts.fields, a network defined with
-- ec.network, which each thread's context must know too), and opts.threads is checked.
-- Run by ctest with LUA_CPATH at the built module and EPOCHCAST_MODELS at models/.
local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check, raises = T.test, T.check, T.raises
-- Deep equality of two rows (numbers exactly: the same predictions on other contexts).
local function same(a, b, path)
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) ~= "table" then
    if a == b or (a ~= a and b ~= b) then return true end
    return false, path .. ": " .. tostring(a) .. " vs " .. tostring(b)
  end
  for k, v in pairs(a) do
    local ok, why = same(v, b[k], path .. "." .. tostring(k))
    if not ok then return false, why end
  end
  for k in pairs(b) do
    if a[k] == nil then return false, path .. "." .. tostring(k) .. " missing on one side" end
  end
  return true
end

local function compare(base, axes, opts, want_refused)
  opts = opts or {}
  opts.progress = false
  opts.threads = 1
  local one = assert(ec.sweep(base, axes, opts))
  local refused = 0
  for _, r in ipairs(one) do if r.error then refused = refused + 1 end end
  check(want_refused == nil or (refused > 0) == want_refused, "refused points: " .. refused)
  for _, t in ipairs { 2, 4, 0 } do
    opts.threads = t
    local many = assert(ec.sweep(base, axes, opts))
    check(#many == #one, ("threads=%d: %d rows, one thread %d"):format(t, #many, #one))
    for i = 1, #one do
      local ok, why = same(one[i], many[i], ("threads=%d row %d"):format(t, i))
      check(ok, why)
    end
  end
  return #one, refused
end

test("threads 2, 4 and the default give one thread's rows, refused points included", function()
  local n, refused = compare({ seq_len = 128 }, {
    { "model", { "bert-base", "resnet-50", "gpt2" } }, { "gpu", { "t4", "a100-sxm4-80gb", "h100-sxm5-80gb" } },
    { "batch_per_gpu", { 1, 8, 64 } }, { "num_gpus", { 1, 2, 8 } }, { "tp", { 1, 2 } } }, nil, true)
  check(n == 162 and refused > 0 and refused < n, ("%d rows, %d refused"):format(n, refused))
end)

test("opts.fields rows are the same on several threads", function()
  compare({ model = "gpt2", gpu = "a100-sxm4-80gb" },
    { { "batch_per_gpu", { 1, 2, 4, 8, 16, 32, 64, 128 } }, { "precision", { "fp32", "amp_fp16", "amp_bf16" } },
      { "checkpointing", { false, true } }, { "num_gpus", { 1, 4, 16 } } },
    { fields = { "step_s", "memory", "breakdown" } })
end)

test("a network defined with ec.network is known to every thread", function()
  assert(ec.network { id = "threads-tiny-llm", default_seq_len = 256,
    layers = { { "embedding", vocab = 1000, dim = 256 },
      { "repeat", times = 2, { "residual", "save" }, { "norm", "rms" },
        { "attention", heads = 4, causal = true, position = "rope" }, { "residual", "add" },
        { "residual", "save" }, { "norm", "rms" }, { "mlp", ffn = 1024, act = "silu", gated = true },
        { "residual", "add" } },
      { "norm", "rms" } },
    heads = { { task = "lm", kind = "causal_lm" } } })
  local n, refused = compare({ model = "threads-tiny-llm", gpu = "t4" },
    { { "batch_per_gpu", { 1, 2, 4, 8, 16, 32 } }, { "seq_len", { 64, 128, 256 } }, { "num_gpus", { 1, 2, 4, 8 } } },
    nil, false)
  check(n == 72 and refused == 0, ("%d rows, %d refused"):format(n, refused))
end)

test("strict: a refused point raises the same error on several threads", function()
  local axes = { { "num_gpus", { 1, 2, 3, 4 } }, { "tp", { 1, 2 } } }
  local ok1, e1 = pcall(ec.sweep, { model = "gpt2", gpu = "t4", batch_per_gpu = 8 }, axes, { strict = true, threads = 1 })
  local ok4, e4 = pcall(ec.sweep, { model = "gpt2", gpu = "t4", batch_per_gpu = 8 }, axes, { strict = true, threads = 4 })
  check(not ok1 and not ok4, "strict raises")
  check(e1 == e4, tostring(e1) .. " vs " .. tostring(e4))
  check(tostring(e1):find("sweep point 2", 1, true), tostring(e1))
end)

test("opts.threads must be an integer from 0 to 1024", function()
  local base, axes = { model = "bert-base" }, { { "batch_per_gpu", { 8, 16 } } }
  for _, bad in ipairs { -1, 1.5, 1025, "four" } do
    raises("opts.threads must be an integer from 0", ec.sweep, base, axes, { threads = bad })
  end
  check(#ec.sweep(base, axes, { threads = 1024 }) == 2, "more threads than points")
end)

T.finish()
