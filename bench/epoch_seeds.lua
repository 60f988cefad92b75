-- epoch_seeds.lua: the spread of a simulated epoch over seeds, for telling whether a change to
-- the loader simulation (pipeline.c, lengths.c) moved its statistics rather than its numbers:
-- BERT-base on an A100, seq_len 512, dynamic padding with lengths=lognormal(120,0.6), 4 workers,
-- 10,000 steps, batches 1, 8 and 32; the mean and standard deviation of epoch_s over N seeds.
-- Run it with the build before and after and compare (the standard error is sd / sqrt(N)):
--   ./build/epochcast run bench/epoch_seeds.lua [N]      (default 200)
local ec = require "epochcast"
local n = tonumber(arg and arg[1]) or 200
print("batch\tseeds\tepoch_mean_s\tepoch_sd_s")
for _, b in ipairs{1, 8, 32} do
  local s1, s2 = 0, 0
  for seed = 1, n do
    local r = assert(ec.predict{model = "bert-base", gpu = "a100-sxm4-80gb", seq_len = 512, batch_per_gpu = b,
      precision = "amp_fp16", num_workers = 4, lengths = "lognormal(120,0.6)", padding = "dynamic",
      seed = seed, dataset_samples = b * 10000})
    s1 = s1 + r.epoch_s
    s2 = s2 + r.epoch_s ^ 2
  end
  local mean = s1 / n
  print(string.format("%d\t%d\t%.6f\t%.6f", b, n, mean, math.sqrt(math.max(0, s2 / n - mean ^ 2))))
end
