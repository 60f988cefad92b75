-- predictions_digest.lua: 2,880 predictions (8 networks x 5 GPUs x 8 batch sizes x 9 layouts and
-- input pipelines) printed to 17 significant digits, one line each, for telling whether a change
-- to the simulator moved any number: run it with the build before and after and compare, e.g.
--   ./build-before/epochcast run bench/predictions_digest.lua > before.txt
--   ./build/epochcast run bench/predictions_digest.lua > after.txt
--   python3 bench/digest_diff.py before.txt after.txt    (the largest relative change)
-- A line is "model gpu batch layout step_s epoch_s peak_bytes cpu_overhead_s gpu_util_frac",
-- or the refusal's code for a config the library refuses (the same in both builds).
local ec = require "epochcast"
local models = { "bert-large", "bert-base", "resnet50", "resnet152", "llama-3.1-8b", "gpt2", "mixtral-8x7b", "vit-b16" }
local gpus = { "a100-sxm4-80gb", "t4", "h100-sxm5-80gb", "a10g", "v100-sxm2-16gb" }
local layouts = {
  {}, { num_gpus = 8, strategy = "ddp" }, { checkpointing = 1 }, { num_gpus = 16, strategy = "fsdp" },
  { num_gpus = 64, tp = 2, pp = 4, grad_accum = 8, network = "ib-ndr-400" }, { num_gpus = 4, strategy = "dp" },
  { num_workers = 4, lengths = "lognormal(120,0.6)", padding = "dynamic" },
  { num_workers = 8, pin_memory = 1 }, { num_workers = 2, pin_memory = 1, persistent_workers = 1 },
}
for _, m in ipairs(models) do
  for _, g in ipairs(gpus) do
    for b = 1, 64, 9 do
      for li, extra in ipairs(layouts) do
        local cfg = { model = m, gpu = g, batch_per_gpu = b,
                      precision = (g == "t4" or g == "v100-sxm2-16gb") and "amp_fp16" or "amp_bf16" }
        for k, v in pairs(extra) do cfg[k] = v end
        local r, _, code = ec.predict(cfg)
        if r then
          print(m, g, b, li, string.format("%.17g %.17g %.17g %.17g %.17g", r.step_s, r.epoch_s or 0,
            r.memory.peak_bytes, r.breakdown.cpu_overhead_s, r.gpu_util_frac))
        else
          print(m, g, b, li, code)
        end
      end
    end
  end
end
