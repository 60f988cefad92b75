#!/usr/bin/env bash
# test_hf_id.sh: model=owner/name, a Hugging Face id, as issue 41 asked: the preset its name
# matches (case ignored, a release suffix such as -Instruct or -it taken off), the same answer
# as the preset itself; an id no preset matches says where to download its config.json.  Before
# issue 41 every id here was "cannot open: No such file or directory"; and the model types of
# 2026 (qwen3, gemma3, llama4) were "not supported".
#   bash tests/cli/test_hf_id.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_hf_id.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
step() { "$EC" predict "model=$1" gpu=h100-sxm5-80gb batch_per_gpu=1 seq_len=1024 precision=amp_bf16 2>&1 | grep -F "step time"; }

# ---- an id resolves to the preset of its name ---------------------------------------------
for pair in meta-llama/Llama-3.1-8B:llama-3.1-8b meta-llama/Llama-3.1-8B-Instruct:llama-3.1-8b \
            Qwen/Qwen3-8B:qwen3-8b \
            meta-llama/Llama-4-Scout-17B-16E-Instruct:llama-4-scout-17b-16e; do
  id=${pair%%:*} preset=${pair#*:}
  expect "model-info $id is preset $preset" 0 "$preset: " -- model-info "model=$id"
  a=$(step "$id") b=$(step "$preset")
  if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "predict $id = predict $preset ($a)"; else bad "predict $id = $preset" "'$a' vs '$b'"; fi
done

# ---- no preset: where to put the config.json ------------------------------------------------
expect "unknown id: the download address" 1 \
  "download https://huggingface.co/acme/NoSuchModel-7B/resolve/main/config.json into a folder and pass model=FOLDER" \
  -- predict model=acme/NoSuchModel-7B gpu=h100-sxm5-80gb batch_per_gpu=1
expect "unknown id: no file or folder of that name" 1 "model 'acme/NoSuchModel-7B': no file or folder of that name" \
  -- predict model=acme/NoSuchModel-7B gpu=h100-sxm5-80gb batch_per_gpu=1
# a path that is not an id shape keeps the path message
expect "a missing relative path is still a path" 1 "cannot open" -- predict model=./no/such/config.json gpu=t4 batch_per_gpu=1
# a folder holding a config.json wins over an id of the same spelling
expect "a fixture folder is read as a path" 0 "qwen3" -- model-info model=data/hf/qwen3-8b

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
