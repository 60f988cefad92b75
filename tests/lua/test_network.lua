-- test_network.lua: ec.network{...}, networks defined in Lua.  A network written out layer by
-- layer must price exactly like the preset built from the same shapes (GPT-2, ResNet-50); the
-- id works everywhere model= does; bad descriptions raise (misuse: an unknown kind, field or
-- choice) or return nil, msg, code (a description the library refuses), and register nothing.

local ec = require "epochcast"

local T = dofile("harness.lua")
local test, check, eq, raises = T.test, T.check, T.eq, T.raises

local function refused(pattern, def)
  local id, msg, code = ec.network(def)
  check(id == nil, "expected a refusal containing '" .. pattern .. "'")
  check(type(code) == "string", "a code")
  check(msg:find(pattern, 1, true), "message '" .. tostring(msg) .. "' does not contain '" .. pattern .. "'")
end

local function params_of(id, task)
  for _, m in ipairs(ec.models()) do
    if m.id == id then return m.params end
  end
  if task then error("no model " .. id) end
end

-- GPT-2 small as models/networks/gpt2.json makes it (modeling_gpt2.py): wte + wpe in one pass,
-- pre-norm layers with fused c_attn, gelu_new, dropout 0.1 everywhere, a tied LM head.
local function gpt2_layers()
  return {
    {"embedding", vocab = 50257, dim = 768, positions = 1024, fused = true},
    {"dropout"},
    {"repeat", times = 12,
      {"residual", "save"}, {"norm", "layer", bias = true},
      {"attention", heads = 12, causal = true, qkv_fused = true, qkv_bias = true, out_bias = true, dropout = true},
      {"dropout"}, {"residual", "add"},
      {"residual", "save"}, {"norm", "layer", bias = true},
      {"mlp", ffn = 3072, act = "gelu_tanh", bias = true},
      {"dropout"}, {"residual", "add"}},
    {"norm", "layer", bias = true},
  }
end

test("a GPT-2 written in Lua prices exactly like the gpt2 preset", function()
  local id = assert(ec.network{id = "lua-gpt2", family = "gpt2", default_seq_len = 1024, max_positions = 1024,
    layers = gpt2_layers(),
    heads = {{task = "lm", kind = "causal_lm", tied = true},
             {task = "classify", kind = "classify", classes = 2}}})
  eq(id, "lua-gpt2", "id")
  eq(params_of("lua-gpt2"), params_of("gpt2"), "parameters")
  for _, cfg in ipairs{
    {gpu = "a100-sxm4-80gb", precision = "amp_bf16", batch_per_gpu = 8, seq_len = 512},
    {gpu = "t4", precision = "fp32", batch_per_gpu = 2, seq_len = 1024, attention = "eager", checkpointing = true},
    {gpu = "a100-sxm4-80gb", precision = "amp_fp16", batch_per_gpu = 4, num_gpus = 4, task = "classify"},
  } do
    cfg.model = "gpt2"
    local a = assert(ec.predict(cfg))
    cfg.model = "lua-gpt2"
    local b = assert(ec.predict(cfg))
    eq(b.step_s, a.step_s, "step_s")
    eq(b.memory.peak_bytes, a.memory.peak_bytes, "peak_bytes")
  end
end)

-- torchvision resnet50: stem, then per stage a first bottleneck with its downsample on the
-- skip path and a repeat of identical ones (not checkpointing units).
local function bottleneck(w, stride, downsample)
  local b = {{"residual", "save"},
    {"conv2d", out = w, kernel = 1}, {"norm", "batch"}, {"activation", "relu"},
    {"conv2d", out = w, kernel = 3, stride = stride}, {"norm", "batch"}, {"activation", "relu"},
    {"conv2d", out = 4 * w, kernel = 1}, {"norm", "batch"}}
  if downsample then
    b[#b + 1] = {"conv2d", out = 4 * w, kernel = 1, stride = stride, on_skip = true}
    b[#b + 1] = {"norm", "batch", on_skip = true}
  end
  b[#b + 1] = {"residual", "add_relu"}
  return b
end

test("a ResNet-50 written in Lua prices exactly like the resnet50 preset", function()
  local layers = {{"conv2d", out = 64, kernel = 7, stride = 2}, {"norm", "batch"}, {"activation", "relu"},
    {"pool", "max", kernel = 3, stride = 2, padding = 1}}
  for s, depth in ipairs{3, 4, 6, 3} do
    local w = 64 << (s - 1)
    for _, l in ipairs(bottleneck(w, s > 1 and 2 or 1, true)) do layers[#layers + 1] = l end
    local rep = {"repeat", times = depth - 1, checkpoint = false}
    for _, l in ipairs(bottleneck(w, 1, false)) do rep[#rep + 1] = l end
    layers[#layers + 1] = rep
  end
  assert(ec.network{id = "lua-resnet50", image_size = 224, loss_in_forward = false, layers = layers,
    heads = {imagenet = {"image_classify", classes = 1000, pool = true, bias = true}}})
  eq(params_of("lua-resnet50"), params_of("resnet50"), "parameters")
  for _, cfg in ipairs{
    {gpu = "a100-sxm4-80gb", precision = "amp_fp16", batch_per_gpu = 256},
    {gpu = "v100-sxm2-16gb", precision = "fp32", batch_per_gpu = 64, num_gpus = 8},
  } do
    cfg.model = "resnet50"
    local a = assert(ec.predict(cfg))
    cfg.model = "lua-resnet50"
    local b = assert(ec.predict(cfg))
    eq(b.step_s, a.step_s, "step_s")
    eq(b.memory.peak_bytes, a.memory.peak_bytes, "peak_bytes")
  end
end)

test("a defined network works with max_batch, sweep and the published-count warning", function()
  assert(ec.network{id = "tiny-llama", default_seq_len = 2048, published_params = 1.2e9,
    layers = {{"embedding", vocab = 32000, dim = 2048},
      {"repeat", times = 22, {"residual", "save"}, {"norm", "rms"},
        {"attention", heads = 32, kv_heads = 4, causal = true, position = "rope"},
        {"residual", "add"}, {"residual", "save"}, {"norm", "rms"},
        {"mlp", ffn = 5632, act = "silu", gated = true}, {"residual", "add"}},
      {"norm", "rms"}},
    heads = {{task = "lm", kind = "causal_lm"}}})
  -- TinyLlama-1.1B: 1,100,048,384 parameters from these shapes
  eq(params_of("tiny-llama"), 1100048384, "parameters")
  local r = assert(ec.predict{model = "tiny-llama", gpu = "a100-sxm4-80gb", precision = "amp_bf16", batch_per_gpu = 4})
  local found = false
  for _, w in ipairs(r.warnings) do found = found or w:find("source states", 1, true) ~= nil end
  check(found, "a published count 9% off warns")
  check(ec.max_batch{model = "tiny-llama", gpu = "a100-sxm4-80gb", precision = "amp_bf16"} >= 4, "max_batch")
  local rows = ec.sweep({model = "tiny-llama", gpu = "a100-sxm4-80gb", precision = "amp_bf16"},
    {{"batch_per_gpu", {1, 2}}})
  eq(#rows, 2, "sweep rows")
end)

test("misuse raises, naming the layer and the field", function()
  local heads = {{task = "lm", kind = "causal_lm"}}
  raises("unknown kind 'attenion'", ec.network, {id = "bad", layers = {{"attenion", heads = 2}}, heads = heads})
  raises("layer 2 (attention): unknown field 'heds'", ec.network,
    {id = "bad", layers = {{"embedding", vocab = 10, dim = 64}, {"attention", heds = 2}}, heads = heads})
  raises("field 'heads' must be an integer", ec.network,
    {id = "bad", layers = {{"embedding", vocab = 10, dim = 64}, {"attention", heads = "two"}}, heads = heads})
  raises("field 'op': 'addd' is not one of save, add, add_relu", ec.network,
    {id = "bad", layers = {{"embedding", vocab = 10, dim = 64}, {"residual", "addd"}}, heads = heads})
  raises("unknown key 'layer'", ec.network, {id = "bad", layer = {}, heads = heads})
  raises("'id' (the name model= will accept) is required", ec.network, {layers = {}, heads = heads})
  raises("'heads' must list at least one head", ec.network, {id = "bad", layers = {{"embedding", vocab = 4, dim = 4}}})
  raises("field 'kind': 'causal' is not one of", ec.network,
    {id = "bad", layers = {{"embedding", vocab = 4, dim = 4}}, heads = {{task = "lm", kind = "causal"}}})
end)

test("a description the library refuses returns nil, msg, code and registers nothing", function()
  local lm = {{task = "lm", kind = "causal_lm"}}
  local before = #ec.models()
  refused("heads (5) must divide the stream width (64)",
    {id = "bad1", layers = {{"embedding", vocab = 10, dim = 64}, {"attention", heads = 5}}, heads = lm})
  refused("a repeated block must leave the tensor as it found it",
    {id = "bad2", layers = {{"embedding", vocab = 10, dim = 64}, {"repeat", times = 2, {"linear", out = 32}}},
     heads = lm})
  refused("RESIDUAL add of tensors of different shapes",
    {id = "bad3", layers = {{"embedding", vocab = 10, dim = 64}, {"residual", "save"}, {"linear", out = 32},
      {"residual", "add"}}, heads = lm})
  refused("this head needs a token stream; the network ends in a feature map",
    {id = "bad4", image_size = 32, layers = {{"conv2d", out = 8, kernel = 3}}, heads = lm})
  refused("field 'vocab' = -5 is out of range",
    {id = "bad5", layers = {{"embedding", vocab = -5, dim = 64}}, heads = lm})
  refused("field 'times' = 0 is out of range",
    {id = "bad6", layers = {{"embedding", vocab = 5, dim = 64}, {"repeat", times = 0, {"dropout"}}}, heads = lm})
  refused("network 'gpt2' is already defined",
    {id = "gpt2", layers = {{"embedding", vocab = 5, dim = 64}}, heads = lm})
  refused("unknown task 'generate'",
    {id = "bad7", layers = {{"embedding", vocab = 5, dim = 64}}, heads = {{task = "generate", kind = "causal_lm"}}})
  eq(#ec.models(), before, "nothing registered")
  local r, msg = ec.predict{model = "bad1", gpu = "t4", batch_per_gpu = 1}
  check(r == nil and msg:find("unknown model 'bad1'", 1, true), "bad1 is not a model")
end)

test("low_precision norms and fused_loss: the MPT config written in Lua prices like the config file", function()
  -- the layers arch.c builds for bench/data/mpt/mpt-125m-s2048.json (d 768, 12 heads, 12 layers)
  local lp = true
  local id = assert(ec.network{id = "mpt-125m-lua", layers = {
    {"embedding", vocab = 50368, dim = 768, positions = 2048},
    {"repeat", times = 12, checkpoint = true,
      {"residual", "save"}, {"norm", "layer", bias = true, low_precision = lp},
      {"attention", heads = 12, causal = true, qkv_fused = true, qkv_bias = true, out_bias = true},
      {"residual", "add"}, {"residual", "save"}, {"norm", "layer", bias = true, low_precision = lp},
      {"mlp", ffn = 3072, act = "gelu", bias = true}, {"residual", "add"}},
    {"norm", "layer", bias = true, low_precision = lp}},
    heads = {{task = "lm", kind = "causal_lm", tied = true, fused_loss = true, metric_losses = 2}}})
  local cfg = {gpu = "a100-sxm4-80gb", precision = "amp_bf16", batch_per_gpu = 8, seq_len = 2048,
               num_gpus = 8, strategy = "fsdp"}
  cfg.model = id
  local a = assert(ec.predict(cfg))
  cfg.model = "../../bench/data/mpt/mpt-125m-s2048.json"
  local b = assert(ec.predict(cfg))
  eq(a.step_s, b.step_s, "step_s")
  raises("fused_loss: booleans", ec.network, {id = "x", layers = {{"embedding", vocab = 5, dim = 64}},
    heads = {{task = "lm", kind = "causal_lm", fused_loss = 1}}})
end)

-- act = "gelu_python" (the erf GELU as Python ops, transformers' gelu_python) prices as the activation key
test("act = gelu_python in Lua prices like activation=gelu_python on the gelu network", function()
  local function net(id, act)
    return assert(ec.network{id = id, layers = {
      {"embedding", vocab = 1000, dim = 256, positions = 512},
      {"repeat", times = 2, {"residual", "save"}, {"attention", heads = 4}, {"residual", "add"},
        {"norm", "layer", bias = true}, {"residual", "save"}, {"mlp", ffn = 1024, act = act, bias = true},
        {"residual", "add"}, {"norm", "layer", bias = true}}},
      heads = {{task = "lm", kind = "causal_lm", tied = true}}})
  end
  local cfg = {gpu = "a100-sxm4-80gb", precision = "fp16", batch_per_gpu = 8, seq_len = 512}
  cfg.model = net("act-python", "gelu_python")
  local a = assert(ec.predict(cfg))
  cfg.model = net("act-gelu", "gelu")
  local plain = assert(ec.predict(cfg))
  cfg.activation = "gelu_python"
  local keyed = assert(ec.predict(cfg))
  eq(a.step_s, keyed.step_s, "step_s")
  assert(a.step_s > plain.step_s, "five kernels cost more than one")
  -- a network without MLP layers (linear and activation layers only, not a CNN): the key has no
  -- effect, and the warning says so
  cfg.model = assert(ec.network{id = "act-none", layers = {{"embedding", vocab = 1000, dim = 256},
    {"linear", out = 1024}, {"activation", act = "gelu"}, {"linear", out = 256}},
    heads = {{task = "lm", kind = "causal_lm", tied = true}}})
  local with = assert(ec.predict(cfg))
  cfg.activation = nil
  local without = assert(ec.predict(cfg))
  eq(with.step_s, without.step_s, "step_s")
  local said = false
  for _, w in ipairs(with.warnings) do said = said or w:find("activation (a network with MLP", 1, true) ~= nil end
  assert(said, "the ignored key is named")
end)

-- gpt-oss-20b as models/networks/gpt-oss-20b.json makes it (issue 41): a sink logit per head,
-- sliding windows on the even layers, 32 experts with biases and the quick-gelu GLU, untied head.
test("gpt-oss-20b written in Lua (sinks, moe bias) prices like the preset", function()
  local function layer(window)
    return {"residual", "save"}, {"norm", "rms"},
      {"attention", heads = 64, kv_heads = 8, head_dim = 64, causal = true, qkv_bias = true, out_bias = true,
       position = "rope", window = window, sinks = true},
      {"residual", "add"}, {"residual", "save"}, {"norm", "rms"},
      {"moe", experts = 32, top_k = 4, ffn = 2880, act = "quick_gelu", gated = true, bias = true},
      {"residual", "add"}
  end
  local body = {"repeat", times = 12}
  for _, w in ipairs{128, 0} do
    for _, l in ipairs{layer(w)} do body[#body + 1] = l end
  end
  local id = assert(ec.network{id = "lua-gpt-oss-20b", family = "gpt_oss", default_seq_len = 2048,
    loss_in_forward = true,
    layers = {{"embedding", vocab = 201088, dim = 2880}, body, {"norm", "rms"}},
    heads = {{task = "lm", kind = "causal_lm"}}})
  eq(params_of(id), params_of("gpt-oss-20b"), "parameters")
  eq(params_of(id), 20914757184, "parameters (model card: 20.9B)")
  for _, attention in ipairs{"sdpa", "flash"} do
    local cfg = {gpu = "h100-sxm5-80gb", precision = "amp_bf16", batch_per_gpu = 1, seq_len = 1024,
                 attention = attention, model = "gpt-oss-20b"}
    local a = assert(ec.predict(cfg))
    cfg.model = id
    local b = assert(ec.predict(cfg))
    eq(b.step_s, a.step_s, "step_s " .. attention)
    eq(b.memory.peak_bytes, a.memory.peak_bytes, "peak_bytes " .. attention)
  end
  refused("q_rank", {id = "bad-mla", layers = {{"embedding", vocab = 100, dim = 64},
    {"attention", heads = 4, head_dim = 16, causal = true, q_rank = 8}},
    heads = {{task = "lm", kind = "causal_lm"}}})
end)

T.finish()
