-- a loop that never ends: the time budget stops it
local n = 0
while true do n = n + 1 end
