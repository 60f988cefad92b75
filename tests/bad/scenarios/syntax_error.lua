local ec = require "epochcast"
local x = = 1
