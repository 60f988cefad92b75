-- llm_layouts.lua: the questions of LLM-scale training, answered side by side.
--
--   epochcast run scenarios/llm_layouts.lua [OUT_DIR]
--
-- 1. Can Llama-3.1-8B be fully fine-tuned in bf16 AMP with AdamW on one 80 GB GPU, or does it
--    need FSDP on 8?  And QLoRA on one 24 GB card?
-- 2. Llama-3.1-70B on 64 H100s (8 nodes, InfiniBand NDR): which layout trains fastest?
--    FSDP, FSDP with hybrid sharding, tensor x pipeline x data with ZeRO-1, interleaved.
-- It writes every prediction to OUT_DIR/llm_layouts.csv (default out/llm_layouts).  Numbers are
-- printed with fixed formats so the output doubles as a golden test.

local ec = require "epochcast"

local GIB = 1024 ^ 3
local out = arg and arg[1] or "out/llm_layouts"
os.execute("mkdir -p '" .. out .. "'")

local function merge(a, b)
  local t = {}
  for k, v in pairs(a) do t[k] = v end
  for k, v in pairs(b or {}) do t[k] = v end
  return t
end

local rows = {}
local function run(label, cfg)
  local r = assert(ec.predict(cfg))
  local row = merge(cfg, r)
  row.label = label
  rows[#rows + 1] = row
  return r
end

-- 1. Will it fit?
print("Llama-3.1-8B fine-tuning, seq 2048 (per GPU: peak memory against capacity)")
print(string.format("  %-38s %9s %9s %12s %5s", "setup", "tokens/s", "step_s", "peak/cap GiB", "fits"))
local ft = { model = "llama-3.1-8b", seq_len = 2048, batch_per_gpu = 1, precision = "amp_bf16",
             optimizer = "adamw_fused", attention = "flash", data = "synthetic" }
local cases = {
  { "full, 1 x H100", { gpu = "h100-sxm5-80gb" } },
  { "full, FSDP on 8 x H100", { gpu = "h100-sxm5-80gb", num_gpus = 8, strategy = "fsdp" } },
  { "LoRA r=16 (bf16 base), 1 x A100 40GB", { gpu = "a100-sxm4-40gb", lora_r = 16, base_precision = "bf16" } },
  { "QLoRA r=16 all-linear, 1 x RTX 4090", { gpu = "rtx4090", lora_r = 16, lora_targets = "all_linear",
                                             base_precision = "nf4", precision = "bf16", checkpointing = 1,
                                             batch_per_gpu = 2 } },
}
for _, c in ipairs(cases) do
  local r = run(c[1], merge(ft, c[2]))
  print(string.format("  %-38s %9.0f %9.3f %5.1f/%-6.1f %5s", c[1], r.tokens_per_s, r.step_s,
    r.peak_bytes / GIB, r.capacity_bytes / GIB, r.fits and "yes" or "no"))
end

-- 2. Which layout for 70B on 64 H100s?  The global batch is the same everywhere:
--    batch_per_gpu x grad_accum x dp = 128 sequences of 4096 tokens.
print()
print("Llama-3.1-70B on 64 x H100 (8 nodes, ib-ndr-400), 128 x 4096 tokens per step")
print(string.format("  %-24s %-12s %8s %7s %5s %5s %6s %6s %12s %4s", "layout", "dp x tp x pp", "tokens/s",
  "step_s", "MFU%", "HFU%", "bubble", "tp_s", "peak/cap GiB", "fits"))
local big = { model = "llama-3.1-70b", gpu = "h100-sxm5-80gb", num_gpus = 64, network = "ib-ndr-400",
              seq_len = 4096, batch_per_gpu = 1, precision = "amp_bf16", attention = "flash",
              checkpointing = 1, optimizer = "adamw_fused", data = "synthetic" }
local layouts = {
  { "FSDP full_shard", { strategy = "fsdp", grad_accum = 2 } },
  { "FSDP hybrid_shard", { strategy = "fsdp", sharding = "hybrid_shard", grad_accum = 2 } },
  { "tp8 x pp4, ZeRO-1", { strategy = "zero", zero_stage = 1, tp = 8, sequence_parallel = 1, pp = 4,
                           grad_accum = 64 } },
  { "tp8 x pp4 interleaved x2", { strategy = "zero", zero_stage = 1, tp = 8, sequence_parallel = 1, pp = 4,
                                  pp_schedule = "interleaved", pp_chunks = 2, grad_accum = 64 } },
  { "tp4 x pp8, ZeRO-1", { strategy = "zero", zero_stage = 1, tp = 4, sequence_parallel = 1, pp = 8,
                           grad_accum = 64 } },
}
for _, l in ipairs(layouts) do
  local r = run(l[1], merge(big, l[2]))
  print(string.format("  %-24s %-12s %8.0f %7.2f %5.1f %5.1f %6.2f %6.2f %5.1f/%-6.1f %4s", l[1],
    string.format("%d x %d x %d", r.dp, r.tp, r.pp), r.tokens_per_s, r.step_s, r.mfu_frac * 100,
    r.hfu_frac * 100, r.comm.pp_bubble_s, r.comm.tp_s, r.peak_bytes / GIB, r.capacity_bytes / GIB,
    r.fits and "yes" or "no"))
end

-- The pipeline's stages of the first tp x pp layout: which layers, how long, how much memory.
print()
print("  stages of tp8 x pp4 (ZeRO-1):")
for i, s in ipairs(assert(ec.stages(merge(big, layouts[3][2])))) do
  print(string.format("    stage %d: layers %2d-%2d  micro-batch %6.1f ms  %4.1f in flight  peak %5.1f GiB", i - 1,
    s.first_layer, s.first_layer + s.layers - 1, s.micro_s * 1e3, s.in_flight, s.memory.peak_bytes / GIB))
end

assert(ec.write_csv(out .. "/llm_layouts.csv", rows))
print()
print("wrote " .. out .. "/llm_layouts.csv")
