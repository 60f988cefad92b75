-- compare.lua: numeric-aware line-by-line comparison of a golden output with an actual one.
--   lua5.4 compare.lua GOLDEN ACTUAL
-- Each line is cut into tokens: numbers (123, -4.5, 6.7e-08) and runs of other text.
-- Numbers match when they are within a relative tolerance of 1e-6; text must be identical
-- except for the width of runs of spaces (a number one digit longer may shift a column).
-- Exit status 0 when every line matches; otherwise 1 after printing the first differences.
local RTOL = 1e-6
local MAX_REPORTED = 10

local golden_path, actual_path = arg[1], arg[2]
if not golden_path or not actual_path then
  io.stderr:write("usage: lua5.4 compare.lua GOLDEN ACTUAL\n")
  os.exit(2)
end

local function read_lines(path)
  local f, err = io.open(path, "rb")
  if not f then
    io.stderr:write("compare.lua: ", err, "\n")
    os.exit(2)
  end
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = (line:gsub("\r$", "")) end
  f:close()
  return lines
end

-- Number patterns, longest first; a sign counts only when not glued to a word ("a100-sxm4").
local NUMBER = {
  "^[-+]?%d+%.?%d*[eE][-+]?%d+", "^[-+]?%.%d+[eE][-+]?%d+",
  "^[-+]?%d+%.?%d*", "^[-+]?%.%d+",
}

local function tokens(line)
  local out, i, n = {}, 1, #line
  while i <= n do
    local num
    local prev = i > 1 and line:sub(i - 1, i - 1) or ""
    if not prev:match("[%w_]") then
      for _, pat in ipairs(NUMBER) do
        local s = line:match(pat, i)
        if s and tonumber(s) then num = s break end
      end
    end
    if num then
      out[#out + 1] = tonumber(num)
      i = i + #num
    else
      -- Text up to the next place a number could start.
      local j = i + 1
      while j <= n do
        local c, p = line:sub(j, j), line:sub(j - 1, j - 1)
        if (c:match("[%d.]") or (c:match("[-+]") and line:sub(j + 1, j + 1):match("[%d.]")))
            and not p:match("[%w_]") then
          break
        end
        j = j + 1
      end
      out[#out + 1] = line:sub(i, j - 1)
      i = j
    end
  end
  return out
end

local function close(a, b)
  if a == b then return true end
  if a ~= a or b ~= b then return false end -- NaN
  return math.abs(a - b) <= RTOL * math.max(math.abs(a), math.abs(b))
end

local function same(ga, ac)
  if ga == ac then return true end
  local tg, ta = tokens(ga), tokens(ac)
  if #tg ~= #ta then return false end
  for k = 1, #tg do
    local x, y = tg[k], ta[k]
    if type(x) ~= type(y) then return false end
    if type(x) == "number" then
      if not close(x, y) then return false end
    elseif x:gsub("%s+", " ") ~= y:gsub("%s+", " ") then
      return false
    end
  end
  return true
end

local golden, actual = read_lines(golden_path), read_lines(actual_path)
local reported = 0
for k = 1, math.max(#golden, #actual) do
  local g, a = golden[k], actual[k]
  if g == nil or a == nil or not same(g, a) then
    reported = reported + 1
    if reported <= MAX_REPORTED then
      print(string.format("line %d:", k))
      print("  golden: " .. (g or "<end of file>"))
      print("  actual: " .. (a or "<end of file>"))
    end
  end
end
if reported > 0 then
  if reported > MAX_REPORTED then
    print(string.format("... and %d more differing lines", reported - MAX_REPORTED))
  end
  print(string.format("%d of %d lines differ (%s vs %s)", reported,
    math.max(#golden, #actual), golden_path, actual_path))
  os.exit(1)
end
