-- lua_row_floor.lua: the interpreter's own cost of a full sweep row, without the library.
-- Takes one row of ec.sweep (every result field, its subtables, the resolved and axis keys),
-- compiles a Lua table constructor of that shape, and times building rows with it from values
-- already at hand, 512 kept per array as ec.sweep keeps them.  The rate is a ceiling for
-- ec.sweep's full rows on this interpreter and core: each of its rows also needs a prediction.
--   LUA_CPATH='build/lua/?.so' lua5.4 bench/lua_row_floor.lua [ROUNDS] [ARRAYS_PER_ROUND]
local ec = require "epochcast"
local rounds = tonumber(arg and arg[1]) or 5
local arrays = tonumber(arg and arg[2]) or 200

local base = { model = "bert-large", task = "squad", seq_len = 384, precision = "amp_fp16" }
local axes = { { "gpu", { "a100-sxm4-80gb" } }, { "batch_per_gpu", { 8 } }, { "grad_accum", { 1 } } }
local row = ec.sweep(base, axes, { progress = false, threads = 1 })[1]

-- "{[k1]=v[1],[k2]={...},...}" for row's shape; the values go to vals
local function constructor(t, vals)
  local parts = {}
  for k, v in pairs(t) do
    if type(v) == "table" and next(v) ~= nil and #v == 0 then
      parts[#parts + 1] = string.format("[%q]=%s", k, constructor(v, vals))
    elseif type(v) == "table" then
      parts[#parts + 1] = string.format("[%q]={}", k)
    else
      vals[#vals + 1] = v
      parts[#parts + 1] = string.format("[%q]=v[%d]", k, #vals)
    end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end
local vals = {}
local make = assert(load("local v = ... return function() return " .. constructor(row, vals) .. " end"))(vals)

local keys = 0
for _, v in pairs(row) do
  keys = keys + 1
  if type(v) == "table" then for _ in pairs(v) do keys = keys + 1 end end
end

local best = 0
for _ = 1, rounds do
  local t0, n = os.clock(), 0
  for _ = 1, arrays do
    local rows = {}
    for i = 1, 512 do rows[i] = make() end
    n = n + #rows
  end
  local rate = n / (os.clock() - t0)
  if rate > best then best = rate end
end
print(string.format("Lua table constructor, rows of %d keys (with subtables), 512 kept per array: %.0f rows/s "
  .. "(best of %d rounds of %d rows)", keys, best, rounds, arrays * 512))
