-- csv_fields.lua: the fields of one CSV line (RFC 4180: a quoted field may hold commas and
-- doubled quotes), for tests that read what the CLI writes with stock lua5.4.  Returns the
-- function: local fields = dofile("lua/csv_fields.lua") from tests/, dofile("csv_fields.lua")
-- from tests/lua/.  Not a test itself (ctest runs tests/lua/test_*.lua).
return function(line)
  local out, i = {}, 1
  while i <= #line + 1 do
    if line:sub(i, i) == '"' then
      local j, buf = i + 1, {}
      while true do
        local c = line:sub(j, j)
        if c == '"' and line:sub(j + 1, j + 1) == '"' then buf[#buf + 1] = '"'; j = j + 2
        elseif c == '"' then break
        else buf[#buf + 1] = c; j = j + 1 end
      end
      out[#out + 1] = table.concat(buf)
      i = j + 2
    else
      local j = line:find(",", i, true) or #line + 1
      out[#out + 1] = line:sub(i, j - 1)
      i = j + 1
    end
  end
  return out
end
