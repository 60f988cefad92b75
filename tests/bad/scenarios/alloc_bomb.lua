-- keeps every string it makes: the memory limit stops it
local keep, s = {}, "x"
while true do keep[#keep + 1] = s:rep(1000000) .. #keep end
