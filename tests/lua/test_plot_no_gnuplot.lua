-- test_plot_no_gnuplot.lua: ec.plot without gnuplot on PATH returns nil, a message that
-- says what to install, and "ENOTFOUND", and writes nothing.  ctest runs it with PATH set
-- to an empty folder.
local ec = require "epochcast"
local rows = { { batch_per_gpu = 8, epoch_s = 10 }, { batch_per_gpu = 16, epoch_s = 7 } }
local path = os.tmpname() .. ".png"
local ok, msg, code = ec.plot { kind = "line", rows = rows, x = "batch_per_gpu", y = "epoch_s", path = path }
assert(ok == nil, "expected nil")
assert(code == "ENOTFOUND", "code " .. tostring(code))
assert(msg:find("^ENOTFOUND: gnuplot was not found on PATH") and msg:find("gnuplot%-nox"), msg)
assert(not io.open(path), "no picture")
assert(not io.open(path .. ".tmp"), "no temporary")
print("ok   plot without gnuplot: " .. msg)
