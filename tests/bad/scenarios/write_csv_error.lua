-- a bad value in the last row: write_csv raises before touching the disk, so no file
local ec = require "epochcast"
local rows = {}
for i = 1, 1000 do rows[i] = {batch = i, step_s = 0.1 * i} end
rows[1000].step_s = function() end
ec.write_csv(arg[1], rows)
