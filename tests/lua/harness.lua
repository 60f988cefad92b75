-- harness.lua: the runner the Lua tests share (tests/lua/test_*.lua; ctest runs them from
-- tests/lua, so each loads this one with dofile("harness.lua")):
--   local T = dofile("harness.lua")
--   local test, check, eq, raises = T.test, T.check, T.eq, T.raises
--   test("name", function() check(cond, "why") end)
--   T.finish()   -- the tally; exits non-zero when a test failed
-- Each test runs under xpcall with a traceback, so one failure does not stop the others.
local T = { failures = 0, count = 0 }

function T.test(name, fn)
  T.count = T.count + 1
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    print("ok   " .. name)
  else
    T.failures = T.failures + 1
    print("FAIL " .. name .. "\n" .. tostring(err))
  end
end

-- level: how many callers up the failure is reported (1: the caller of check)
function T.check(cond, msg, level)
  if not cond then error(msg or "check failed", (level or 1) + 1) end
end

function T.eq(a, b, what)
  T.check(a == b, string.format("%s: expected %s, got %s", what or "value", tostring(b), tostring(a)), 2)
end

-- fn(...) raises an error whose text contains pattern (plain text, not a Lua pattern)
function T.raises(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  T.check(not ok, "expected an error containing '" .. pattern .. "'", 2)
  T.check(tostring(err):find(pattern, 1, true), "error '" .. tostring(err) .. "' lacks '" .. pattern .. "'", 2)
end

function T.finish()
  print(string.format("%d of %d tests passed", T.count - T.failures, T.count))
  os.exit(T.failures == 0 and 0 or 1)
end

return T
