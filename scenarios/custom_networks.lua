-- custom_networks.lua: networks that are not presets, written in Lua with ec.network{...}.
--
--   epochcast run scenarios/custom_networks.lua [OUT_DIR]
--
-- A network is a list of layers (shapes flow down the list: each layer says only what it
-- changes) plus the task heads it can train with.  This scenario defines a 1.1B-parameter
-- decoder (grouped-query attention, RoPE, SwiGLU, RMSNorm: TinyLlama's shapes) and a small
-- residual CNN for 32x32 images, checks their parameter counts against the closed forms,
-- asks which GPU trains each fastest, and writes the predictions to OUT_DIR/custom.csv.
-- The same ids then work wherever model= does: ec.predict, ec.sweep, ec.max_batch.
-- A Hugging Face config.json works as well: model = "path/to/config.json" (or its folder).

local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/lib/?.lua;" .. package.path
local ec = require "epochcast"
local out_dir = require("audit").outdir("custom_networks", ...)

local GIB = 1024 ^ 3

-- 1. A decoder.  A repeat's array items are its body; {"residual", "save"} marks where a
--    residual branch starts and {"residual", "add"} adds it back.
local H, L, F, V = 2048, 22, 5632, 32000
assert(ec.network {
  id = "my-decoder-1b", family = "llama-like", default_seq_len = 2048,
  layers = {
    { "embedding", vocab = V, dim = H },
    { "repeat", times = L,
      { "residual", "save" }, { "norm", "rms" },
      { "attention", heads = 32, kv_heads = 4, causal = true, position = "rope" },
      { "residual", "add" },
      { "residual", "save" }, { "norm", "rms" },
      { "mlp", ffn = F, act = "silu", gated = true },
      { "residual", "add" } },
    { "norm", "rms" },
  },
  heads = { { task = "lm", kind = "causal_lm" },
            { task = "classify", kind = "classify", classes = 3 } },
})

-- 2. A CNN: a stem, then stages of basic residual blocks; the first block of a stage halves
--    the map and widens it, with a 1x1 projection on the skip path (on_skip).
local function block(width, stride, project)
  local b = { { "residual", "save" },
    { "conv2d", out = width, kernel = 3, stride = stride }, { "norm", "batch" }, { "activation", "relu" },
    { "conv2d", out = width, kernel = 3 }, { "norm", "batch" } }
  if project then
    b[#b + 1] = { "conv2d", out = width, kernel = 1, stride = stride, on_skip = true }
    b[#b + 1] = { "norm", "batch", on_skip = true }
  end
  b[#b + 1] = { "residual", "add_relu" }
  return b
end
local cnn = { { "conv2d", out = 32, kernel = 3 }, { "norm", "batch" }, { "activation", "relu" } }
for stage, width in ipairs { 32, 64, 128 } do
  for _, l in ipairs(block(width, stage == 1 and 1 or 2, stage > 1)) do cnn[#cnn + 1] = l end
  local rep = { "repeat", times = 3, checkpoint = false }
  for _, l in ipairs(block(width, 1, false)) do rep[#rep + 1] = l end
  cnn[#cnn + 1] = rep
end
assert(ec.network {
  id = "my-resnet-cifar", image_size = 32, loss_in_forward = false, layers = cnn,
  heads = { imagenet = { "image_classify", classes = 10, pool = true, bias = true } },
})

-- 3. Their sizes.  Decoder: V·H + L·(2·H·H + 2·H·(H/8) + 3·H·F + 2·H) + H, no biases, the LM
--    head untied (V·H more).
local function params(id)
  for _, m in ipairs(ec.models()) do if m.id == id then return m.params end end
end
local expect = V * H + L * (2 * H * H + 2 * H * (H // 8) + 3 * H * F + 2 * H) + H + V * H
print(string.format("my-decoder-1b: %d parameters (closed form %d)", params("my-decoder-1b"), expect))
print(string.format("my-resnet-cifar: %d parameters", params("my-resnet-cifar")))

-- 4. Which GPU trains each fastest, and does it fit?
local rows = {}
local function show(title, cfg, gpus)
  print()
  print(title)
  print(string.format("  %-16s %9s %12s %6s %-10s %14s %5s", "gpu", "step_ms", "samples/s", "util%",
    "bottleneck", "peak/cap GiB", "fits"))
  for _, gpu in ipairs(gpus) do
    local c = {}
    for k, v in pairs(cfg) do c[k] = v end
    c.gpu = gpu
    local r = assert(ec.predict(c))
    print(string.format("  %-16s %9.4g %12.5g %6.1f %-10s %6.2f/%-7.2f %5s", gpu, r.step_s * 1e3,
      r.samples_per_s, r.gpu_util_frac * 100, r.bottleneck, r.peak_bytes / GIB, r.capacity_bytes / GIB,
      r.fits and "yes" or "no"))
    local row = {}
    for k, v in pairs(c) do row[k] = v end
    for k, v in pairs(r) do row[k] = v end
    rows[#rows + 1] = row
  end
end
show("my-decoder-1b, causal LM, seq_len 2048, batch 4, amp_bf16, activation checkpointing:",
  { model = "my-decoder-1b", seq_len = 2048, batch_per_gpu = 4, precision = "amp_bf16", checkpointing = true,
    data = "synthetic" },
  { "a100-sxm4-80gb", "h100-sxm5-80gb", "rtx4090" })
show("my-resnet-cifar, 32x32 images, batch 256, amp_fp16, 4 DataLoader workers:",
  { model = "my-resnet-cifar", batch_per_gpu = 256, precision = "amp_fp16", num_workers = 4, pin_memory = true,
    sample_cpu_s = 0.0002 },
  { "t4", "a10", "a100-sxm4-80gb" })

-- 5. The largest decoder batch that fits on a 24 GB card, with and without checkpointing.
print()
for _, ckpt in ipairs { false, true } do
  local n = assert(ec.max_batch { model = "my-decoder-1b", gpu = "rtx4090", seq_len = 2048,
    precision = "amp_bf16", checkpointing = ckpt })
  print(string.format("max batch of my-decoder-1b on an RTX 4090, seq_len 2048, checkpointing %-5s: %d",
    tostring(ckpt), n))
end

local path = out_dir .. "/custom.csv"
assert(ec.write_csv(path, rows))
print()
print(string.format("wrote %d rows to %s", #rows, path:match("[^/]+$")))
