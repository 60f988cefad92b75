-- audit.lua: the what-if audit of a seed document's "optimizations", shared by the seed
-- scenarios.  It only compares predictions; every number comes from ec.predict.
--
--   local audit = require "audit"
--   local rows = audit.run(ec, before, changes)   -- changes: see below
--   audit.print(rows)                              -- an aligned table on stdout
--   audit.write_csv(ec, rows, path)                -- the same rows as CSV
--
-- A change is {label = "...", set = {key = value, ...}, claimed = "~1.6x", claim = 1.6 or
-- {1.1, 1.2} or nil (a claim without a number), against = {...} (optional overrides of
-- `before` for the comparison's baseline), unmodelled = "why" (a change no config key
-- expresses: listed, not predicted), evaluation = true (the claim is about evaluation: the
-- speed-up and the samples/s column are the evaluation's, eval_batch / eval_step_s)}.
-- The verdict:
--   out of memory     the changed config does not fit on the GPU
--   slower            predicted speed-up below 0.97
--   no effect         within 3% either way
--   overstated        faster, but by less than 90% of the claimed (lower) figure
--   holds             faster, and at least 90% of the claim (or the claim had no number)
--   not modelled yet  the library refuses the change (a key or feature it lacks)
-- The reason comes from the prediction and the keys the change sets: warnings the change
-- brings, memory that checkpointing frees and the batch did not need (recomputation), the
-- bottleneck moving, or the part of the step that changed most (with the samples per
-- optimizer step when the optimizer's share moved).
local M = {}

local GIB = 1024 ^ 3
M.GIB = GIB

-- Verdict thresholds (fractions of a speed-up), see the header.
local NO_EFFECT_BAND = 0.03
local CLAIM_SHORTFALL = 0.9

function M.merge(...)
  local out = {}
  for i = 1, select("#", ...) do
    for k, v in pairs(select(i, ...) or {}) do out[k] = v end
  end
  return out
end

local function predict(ec, cfg)
  local ok, r, msg = pcall(ec.predict, cfg)
  if not ok then return nil, tostring(r) end
  return r, msg
end

local function set_of(list)
  local s = {}
  for _, w in ipairs(list or {}) do s[w] = true end
  return s
end

local PART_NAMES = {
  forward_s = "forward", backward_s = "backward", optimizer_s = "optimizer",
  h2d_s = "H2D copy", cpu_overhead_s = "CPU overhead", loader_s = "loader wait", comm_s = "communication",
}
local PART_ORDER = { "forward_s", "backward_s", "optimizer_s", "h2d_s", "cpu_overhead_s", "loader_s", "comm_s" }

-- The step part whose time per sample changed most, as "optimizer -41.6 ms/step".
local function biggest_part_change(rb, ra, cfg_b, cfg_a)
  local best, best_k, best_d = 0, nil, 0
  local nb = (cfg_b.batch_per_gpu or 1) * (cfg_b.grad_accum or 1)
  local na = (cfg_a.batch_per_gpu or 1) * (cfg_a.grad_accum or 1)
  for _, k in ipairs(PART_ORDER) do
    local per_b, per_a = rb.breakdown[k] / nb, ra.breakdown[k] / na
    -- Changes below a microsecond per sample are rounding, not a cause.
    if math.abs(per_a - per_b) > math.max(best, 1e-6) then
      best, best_k, best_d = math.abs(per_a - per_b), k, per_a - per_b
    end
  end
  if not best_k then return nil end
  local s = string.format("%s %+.3g ms per sample", PART_NAMES[best_k], best_d * 1e3)
  -- The optimizer's time per sample moves with the samples per optimizer step (batch,
  -- accumulation, GPUs): say so, it is the cause.
  local gb = nb * (cfg_b.num_gpus or 1)
  local ga = na * (cfg_a.num_gpus or 1)
  if best_k == "optimizer_s" and ga ~= gb then
    s = string.format("an optimizer step per %d samples instead of %d: %s", ga, gb, s)
  end
  return s
end

-- Is a config value on (checkpointing = true, 1, "full", ...)?
local function is_on(v)
  return v ~= nil and v ~= false and v ~= 0 and v ~= "0" and v ~= "false" and v ~= "none" and v ~= "off"
end

-- A change that alters the GPU count or the strategy: how well the GPUs scale, and why not
-- better (the exposed communication, GPU 0's extra memory under DataParallel).
local function scaling_note(ra, cfg_b, cfg_a)
  local n = cfg_a.num_gpus or 1
  if n < 2 or (n == (cfg_b.num_gpus or 1) and cfg_a.strategy == cfg_b.strategy) then return nil end
  local s = string.format("%d GPUs at %.0f%% scaling efficiency (communication %.3g ms per step", n,
    ra.scaling_efficiency_frac * 100, ra.breakdown.comm_s * 1e3)
  if ra.peak_bytes > ra.other_gpu_peak_bytes * (1 + NO_EFFECT_BAND) then
    s = s .. string.format(", GPU 0 peak %.1f GiB vs %.1f on the others", ra.peak_bytes / GIB,
      ra.other_gpu_peak_bytes / GIB)
  end
  return s .. ")"
end

local function reason_for(ec, rb, ra, cfg_b, cfg_a, speedup)
  local parts = {}
  local old = set_of(rb.warnings)
  for _, w in ipairs(ra.warnings) do
    if not old[w] then parts[#parts + 1] = w end
  end
  if not ra.fits then
    parts[#parts + 1] = string.format("peak %.1f GiB > %.1f GiB on the GPU", ra.peak_bytes / GIB, ra.capacity_bytes / GIB)
  elseif speedup < 1 - NO_EFFECT_BAND and rb.fits and is_on(cfg_a.checkpointing)
      and not is_on(cfg_b.checkpointing) then
    -- Checkpointing turned on, slower, making room for larger batches: room this batch did
    -- not need, paid for by recomputing activations.  Other slower changes (less
    -- accumulation, ...) get the part of the step that moved instead.
    local mb, ma = ec.max_batch(cfg_b), ec.max_batch(cfg_a)
    if mb and ma and ma > mb then
      parts[#parts + 1] = string.format("the batch already fit (%.1f of %.1f GiB): it makes room for batch %d "
        .. "instead of %d at the price of recomputation", rb.peak_bytes / GIB, rb.capacity_bytes / GIB, ma, mb)
      parts[#parts + 1] = biggest_part_change(rb, ra, cfg_b, cfg_a)
    end
  end
  if ra.bottleneck ~= rb.bottleneck then
    parts[#parts + 1] = string.format("bottleneck %s -> %s", rb.bottleneck, ra.bottleneck)
  end
  if #parts == 0 then
    local part = biggest_part_change(rb, ra, cfg_b, cfg_a)
    if part and math.abs(speedup - 1) <= NO_EFFECT_BAND then
      -- No effect: what the change touched is not what limits the step.
      part = string.format("the bottleneck stays %s: %s", ra.bottleneck, part)
    end
    parts[#parts + 1] = part
      or string.format("the predicted step does not change (bottleneck: %s)", ra.bottleneck)
  end
  local note = scaling_note(ra, cfg_b, cfg_a)
  if note then table.insert(parts, 1, note) end
  return table.concat(parts, "; ")
end

local function verdict_for(claim, speedup, fits)
  if not fits then return "out of memory" end
  if speedup < 1 - NO_EFFECT_BAND then return "slower" end
  if speedup <= 1 + NO_EFFECT_BAND then return "no effect" end
  local lo = type(claim) == "table" and claim[1] or claim
  if lo and speedup < CLAIM_SHORTFALL * lo then return "overstated" end
  return "holds"
end

-- Evaluate every change against before; returns rows (the before row first).
function M.run(ec, before, changes)
  local rows = {}
  local r0 = assert(predict(ec, before))
  rows[1] = { change = "before", claimed = "", config = before, result = r0, predicted_speedup = 1,
              verdict = "", reason = "" }
  for _, ch in ipairs(changes) do
    local cfg_b = M.merge(before, ch.against)
    local cfg_a = M.merge(cfg_b, ch.set)
    local row = { change = ch.label, claimed = ch.claimed or "", claim = ch.claim, config = cfg_a }
    local rb, msg_b, ra, msg_a
    if ch.unmodelled then
      msg_a = ch.unmodelled
    else
      rb, msg_b = predict(ec, cfg_b)
      ra, msg_a = predict(ec, cfg_a)
    end
    if not rb or not ra then
      row.verdict = "not modelled yet"
      row.reason = (msg_a or msg_b or ""):gsub("^E%u+: ", "")
    else
      row.result, row.baseline = ra, rb
      row.predicted_speedup = ra.samples_per_s / rb.samples_per_s
      local eb, ea -- evaluation samples/s: forward-only batches of the evaluation loop
      if ch.evaluation then
        eb, ea = cfg_b.eval_batch / rb.eval_step_s, cfg_a.eval_batch / ra.eval_step_s
        row.predicted_speedup, row.samples_per_s = ea / eb, ea
      end
      row.verdict = verdict_for(ch.claim, row.predicted_speedup, ra.fits)
      row.reason = reason_for(ec, rb, ra, cfg_b, cfg_a, row.predicted_speedup)
      if ch.evaluation then
        row.reason = string.format("evaluation %.1f -> %.1f samples/s (%.3g -> %.3g ms per batch of %d -> %d)",
          eb, ea, rb.eval_step_s * 1e3, ra.eval_step_s * 1e3, cfg_b.eval_batch, cfg_a.eval_batch)
      end
    end
    rows[#rows + 1] = row
  end
  return rows
end

local function pad(s, n) return s .. string.rep(" ", math.max(0, n - #s)) end

-- Output is read in an 80-100 column terminal: the tables below wrap to this width.
M.WIDTH = 100

-- The lines of text s wrapped at spaces to width w (a word longer than w is cut).
function M.wrap(s, w)
  local lines, cur = {}, ""
  for word in tostring(s):gmatch("%S+") do
    while #word > w do
      if cur ~= "" then lines[#lines + 1] = cur; cur = "" end
      lines[#lines + 1] = word:sub(1, w)
      word = word:sub(w + 1)
    end
    if cur == "" then cur = word
    elseif #cur + 1 + #word <= w then cur = cur .. " " .. word
    else lines[#lines + 1] = cur; cur = word end
  end
  if cur ~= "" or #lines == 0 then lines[#lines + 1] = cur end
  return lines
end

-- Print a table no wider than width (M.WIDTH): cols = {{title, right = true, wrap = true}, ...},
-- rows = arrays of strings.  Columns marked wrap give up width, the widest first (down to
-- 12), and their cells continue on the lines below.
function M.table(cols, rows, width)
  width = width or M.WIDTH
  local w, GAP, MIN = {}, 2, 12
  for c, col in ipairs(cols) do
    w[c] = #col[1]
    for _, r in ipairs(rows) do w[c] = math.max(w[c], #(r[c] or "")) end
  end
  local function total()
    local t = GAP * (#cols - 1)
    for c = 1, #cols do t = t + w[c] end
    return t
  end
  while total() > width do
    local widest
    for c, col in ipairs(cols) do
      if col.wrap and w[c] > MIN and (not widest or w[c] > w[widest]) then widest = c end
    end
    if not widest then break end
    w[widest] = math.max(MIN, w[widest] - (total() - width))
  end
  local function emit(cells)
    local n = 1
    for c, col in ipairs(cols) do
      cells[c] = col.wrap and M.wrap(cells[c] or "", w[c]) or { cells[c] or "" }
      n = math.max(n, #cells[c])
    end
    for i = 1, n do
      local out = {}
      for c, col in ipairs(cols) do
        local s = cells[c][i] or ""
        out[c] = col.right and string.rep(" ", w[c] - #s) .. s or (c < #cols and pad(s, w[c]) or s)
      end
      print((table.concat(out, string.rep(" ", GAP)):gsub("%s+$", "")))
    end
  end
  local head = {}
  for c, col in ipairs(cols) do head[c] = col[1] end
  emit(head)
  for _, r in ipairs(rows) do
    local cells = {}
    for c = 1, #cols do cells[c] = r[c] end
    emit(cells)
  end
end

-- Peak memory is unknown when the GPU side is a measured time (gpu_step_s, no model): 0.
local function peak_text(res)
  local cap = string.format("%.2f", res.capacity_bytes / GIB)
  if not res.peak_bytes or res.peak_bytes <= 0 then return "-/" .. cap end
  return string.format("%.2f/%s", res.peak_bytes / GIB, cap)
end
M.peak_text = peak_text

-- Print the audit as two tables of at most M.WIDTH columns, rows numbered alike: the
-- claims (change, claimed, predicted speed-up, verdict), then the numbers behind them
-- (samples/s, GPU utilization, peak memory against capacity) with the reason.  "-" where a
-- value is unknown.
function M.print(rows)
  local claims, numbers = {}, {}
  for i, r in ipairs(rows) do
    local res = r.result
    local n = tostring(i)
    claims[i] = { n, r.change, r.claimed, res and string.format("%.2fx", r.predicted_speedup) or "-", r.verdict }
    if res then
      numbers[i] = { n, string.format("%.1f", r.samples_per_s or res.samples_per_s),
        string.format("%.1f", res.gpu_util_frac * 100), peak_text(res), r.reason }
    else
      numbers[i] = { n, "-", "-", "-", r.reason }
    end
  end
  M.table({ { "#", right = true }, { "change", wrap = true }, { "claimed", wrap = true },
            { "predicted", right = true }, { "verdict" } }, claims)
  print()
  M.table({ { "#", right = true }, { "samples/s", right = true }, { "GPU%", right = true },
            { "peak/cap GiB", right = true }, { "reason", wrap = true } }, numbers)
end

M.COLUMNS = { "change", "claimed", "claimed_speedup_low", "claimed_speedup_high", "predicted_speedup",
  "step_s", "samples_per_s", "epoch_s", "gpu_util_frac", "bottleneck", "peak_bytes", "capacity_bytes",
  "fits", "verdict", "reason" }

-- Write the audit rows as CSV (columns M.COLUMNS, units in the names).
function M.write_csv(ec, rows, path)
  local out = {}
  for i, r in ipairs(rows) do
    local c = r.claim
    local row = { change = r.change, claimed = r.claimed, verdict = r.verdict, reason = r.reason,
      predicted_speedup = r.predicted_speedup,
      claimed_speedup_low = type(c) == "table" and c[1] or c,
      claimed_speedup_high = type(c) == "table" and c[2] or c }
    if r.result then
      for _, k in ipairs { "step_s", "samples_per_s", "epoch_s", "gpu_util_frac", "bottleneck",
                           "peak_bytes", "capacity_bytes", "fits" } do
        row[k] = r.result[k]
      end
      row.samples_per_s = r.samples_per_s or row.samples_per_s -- an evaluation row's own rate
      if not r.result.peak_bytes or r.result.peak_bytes <= 0 then -- not predicted (gpu_step_s): unknown
        row.peak_bytes, row.fits = nil, nil
      end
    end
    out[i] = row
  end
  return ec.write_csv(path, out, M.COLUMNS)
end

-- The audit a scenario prints first: run every change, print the table, write
-- outdir/audit.csv and say so.  Returns the rows.
function M.report(ec, before, changes, outdir)
  local rows = M.run(ec, before, changes)
  M.print(rows)
  assert(M.write_csv(ec, rows, outdir .. "/audit.csv"))
  print("wrote " .. outdir .. "/audit.csv")
  return rows
end

-- The output folder: the script's first argument, else out/<name> under the current
-- directory (created when missing).
function M.outdir(name, given)
  local dir = given or ("out/" .. name)
  assert(require("epochcast").mkdir(dir)) -- no shell: works in --sandbox too
  return dir
end

-- Draw a plot, or say why not (gnuplot missing) without stopping the scenario.
function M.plot(ec, spec)
  local ok, msg = ec.plot(spec)
  if ok then
    print("wrote " .. spec.path)
  else
    print("plot skipped: " .. msg)
  end
end

return M
