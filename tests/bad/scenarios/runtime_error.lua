local ec = require "epochcast"
local cfg = nil
print(cfg.model)
