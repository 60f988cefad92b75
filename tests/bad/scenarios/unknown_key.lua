local ec = require "epochcast"
local r = assert(ec.predict{model = "bert-base", gpu = "t4", batch_per_gpu = 8, bach = 1})
