-- test_parallel.lua: parallel layouts (issue 18) as the Lua binding shows them: the layout and the
-- exposed communication by kind in results (ec.predict, ec.sweep), their identities (tokens =
-- samples x seq_len, tokens_per_s x gpu_s_per_token = num_gpus, the comm parts with the
-- straggler wait add up to breakdown.comm_s), the ZeRO paper's per-parameter bytes through Lua,
-- a sweep over tensor-parallel degrees where the one that leaves the node is an error row naming
-- the keys, and refusals as nil, msg, code.  Expected values come from published formulas (see
-- tests/unit/test_parallel.c), not from the library's output.
-- Run by ctest with LUA_CPATH at the built module and EPOCHCAST_MODELS at models/.
local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check, eq = T.test, T.check, T.eq
-- |a - b| <= rtol |b|
local function close(a, b, rtol, what)
  check(math.abs(a - b) <= rtol * math.abs(b), string.format("%s: %.17g, expected %.17g (rtol %g)", what or "value",
    a, b, rtol))
end
local function fails(code, needles, fn, ...)
  local r, msg, c = fn(...)
  check(r == nil, "expected nil, msg, code; got a result")
  eq(c, code, "code")
  for _, n in ipairs(needles) do
    check(type(msg) == "string" and msg:find(n, 1, true), "message '" .. tostring(msg) .. "' lacks '" .. n .. "'")
  end
end

-- Sums of a handful of doubles: rounding only (see TOL_SUM in test_parallel.c).
local TOL_SUM = 1e-9
-- Byte counts, products of integers below 2^53: a few ulp.
local TOL_BYTES = 1e-12

-- Llama-3.1-8B from its config.json: 2 V d + 32 (2 d^2 + 2 d 1024 + 3 d 14336 + 2 d) + d
local d, V = 4096, 128256
local P = 2 * V * d + 32 * (2 * d * d + 2 * d * 1024 + 3 * d * 14336 + 2 * d) + d

local function with(t)
  local c = { model = "llama-3.1-8b", gpu = "h100-sxm5-80gb", precision = "amp_bf16", batch_per_gpu = 1,
              seq_len = 2048, grad_accum = 2 }
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

local function comm_sum(r)
  local s = r.straggler_s
  for _, k in ipairs { "tp_s", "cp_s", "ep_s", "dp_reduce_s", "shard_wait_s", "overlap_s", "offload_s",
                       "pp_bubble_s", "pp_p2p_s" } do
    check(r.comm[k] and r.comm[k] >= 0, "comm." .. k .. " missing or negative")
    s = s + r.comm[k]
  end
  return s
end

test("predict: the layout, tokens and the comm parts of a dp x tp x pp x cp job", function()
  local r = assert(ec.predict(with { num_gpus = 32, tp = 4, pp = 2, cp = 2, strategy = "fsdp" }))
  eq(r.dp, 2, "dp"); eq(r.tp, 4, "tp"); eq(r.pp, 2, "pp"); eq(r.cp, 2, "cp"); eq(r.ep, 1, "ep")
  eq(r.dp * r.tp * r.pp * r.cp, 32, "dp x tp x pp x cp")
  close(r.tokens_per_s, r.samples_per_s * 2048, TOL_SUM, "tokens = samples x seq_len")
  close(r.tokens_per_s * r.gpu_s_per_token, 32, TOL_SUM, "tokens/s x GPU-s/token")
  close(r.samples_per_s, 1 * 2 * r.dp / r.step_s, TOL_SUM, "samples = batch x ga x dp / step")
  close(comm_sum(r), r.breakdown.comm_s, TOL_SUM, "comm parts + straggler = breakdown.comm_s")
  -- (cp_s is the ring's exchange that attention does not hide: it may be 0)
  check(r.comm.tp_s > 0 and r.comm.pp_bubble_s > 0 and r.comm.pp_p2p_s > 0 and r.comm.shard_wait_s > 0,
        "parts present")
  check(r.hfu_frac >= r.mfu_frac and r.hfu_frac <= 1, "mfu <= hfu <= 1")
  local b = r.breakdown
  close(b.forward_s + b.backward_s + b.optimizer_s + b.h2d_s + b.cpu_overhead_s + b.loader_s + b.comm_s, r.step_s,
        TOL_SUM, "breakdown sums to the step")
end)

test("predict: ZeRO-1/2 per-GPU states follow 2 + 2 + 12 bytes per parameter; offload to the host", function()
  -- fused AdamW (no step temporaries), checkpointing and a short sequence: every state reported
  local base = with { optimizer = "adamw_fused", checkpointing = 1, seq_len = 512, grad_accum = 1, num_gpus = 8,
                      strategy = "zero" }
  local N = 8
  local want = { { 2 * P, 2 * P, 12 * P / N }, { 2 * P, 2 * P / N, 12 * P / N } }
  for stage = 1, 2 do
    base.zero_stage = stage
    local r = assert(ec.predict(base))
    close(r.memory.weights_bytes, want[stage][1], TOL_BYTES, "ZeRO-" .. stage .. " weights")
    close(r.memory.grads_bytes, want[stage][2], TOL_BYTES, "ZeRO-" .. stage .. " gradients")
    close(r.memory.optimizer_bytes, want[stage][3], TOL_BYTES, "ZeRO-" .. stage .. " optimizer")
  end
  base.zero_stage = 2
  base.offload = "optimizer"
  local r = assert(ec.predict(base))
  eq(r.memory.optimizer_bytes, 0, "offloaded optimizer on the GPU")
  close(r.host_pinned_bytes, 16 * P / N, TOL_BYTES, "ZeRO-Offload host bytes (fp32 params, grads, m, v)")
end)

test("sweep: tp over one node; tp beyond it is an error row naming tp and gpus_per_node", function()
  local rows = ec.sweep(with { num_gpus = 16, gpus_per_node = 8 }, { tp = { 1, 2, 4, 8, 16 } })
  eq(#rows, 5, "rows")
  local prev = -1
  for k = 1, 4 do
    check(rows[k].error == nil, "row " .. k .. ": " .. tostring(rows[k].error))
    eq(rows[k].tp, 2 ^ (k - 1), "tp of row " .. k)
    eq(rows[k].dp, 16 // 2 ^ (k - 1), "dp of row " .. k)
    check(rows[k].comm.tp_s > prev, "tensor-parallel communication grows with tp")
    prev = rows[k].comm.tp_s
  end
  eq(rows[1].comm.tp_s, 0, "no TP communication at tp=1")
  check(type(rows[5].error) == "string", "tp=16 refused")
  check(rows[5].error:find("tp=16", 1, true) and rows[5].error:find("gpus_per_node", 1, true), rows[5].error)
  eq(rows[5].step_s, nil, "no result in the error row")
end)

test("predict: bad layouts are nil, msg, EINVAL naming the keys", function()
  fails("EINVAL", { "num_gpus=12", "tp" }, ec.predict, with { num_gpus = 12, tp = 8 })
  fails("EINVAL", { "tp=16", "gpus_per_node" }, ec.predict, with { num_gpus = 16, tp = 16 })
  fails("EINVAL", { "precision=amp_fp8", "a100-sxm4-80gb" }, ec.predict,
        with { gpu = "a100-sxm4-80gb", precision = "amp_fp8" })
  fails("EINVAL", { "lora_r", "base_precision", "tp" }, ec.predict,
        with { num_gpus = 2, tp = 2, lora_r = 16, base_precision = "nf4" })
  fails("EINVAL", { "lora_r", "base_precision", "pp" }, ec.predict,
        with { num_gpus = 2, pp = 2, lora_r = 16, base_precision = "int8" })
end)

test("predict: a faster network shortens FSDP's waits across 2 nodes", function()
  local prev
  for _, net in ipairs { "eth-25g", "eth-100g", "ib-hdr-200", "ib-ndr-400" } do
    local r = assert(ec.predict(with { num_gpus = 16, strategy = "fsdp", network = net, grad_accum = 1 }))
    check(r.comm.shard_wait_s > 0, net .. ": waits")
    if prev then check(r.comm.shard_wait_s < prev, net .. ": shorter waits than the slower network") end
    prev = r.comm.shard_wait_s
  end
end)

test("stages: Megatron's split, the embedding first and the head last, 1F1B's in-flight micro-batches", function()
  local st = assert(ec.stages(with { num_gpus = 4, pp = 4, grad_accum = 8 }))
  eq(#st, 4, "stages")
  local layer = 2 * d * d + 2 * d * 1024 + 3 * d * 14336 + 2 * d
  local w = { 4 * (V * d + 8 * layer), 4 * 8 * layer, 4 * 8 * layer, 4 * (8 * layer + d + V * d) }
  for s = 1, 4 do
    eq(st[s].first_layer, 8 * (s - 1), "first layer of stage " .. s)
    eq(st[s].layers, 8, "layers of stage " .. s)
    eq(st[s].in_flight, 4 - (s - 1), "1F1B in flight on stage " .. s)
    close(st[s].memory.weights_bytes, w[s], TOL_BYTES, "fp32 weights of stage " .. s)
  end
  close(st[2].micro_s, st[3].micro_s, TOL_SUM, "middle stages alike")
end)

T.finish()
