#!/usr/bin/env bash
# test_trace.sh: `predict --trace` files load as Perfetto / chrome://tracing read the JSON Trace
# Event Format (issue 41): cli/check_trace.py checks every file (valid JSON, name/ph/ts/pid/tid on
# every event, dur >= 0, every track named, slices on a track nested properly), then what the
# step model says is in them: forward, backward and optimizer slices on the GPU's track that add
# up to the predicted step (ec.predict's step_s to 17 digits, tolerance 1e-6 for the file's 1 ns
# resolution); FSDP's 16 units of Llama-3.2-1B each all-gathered in forward and in backward and
# reduce-scattered; DDP's buckets, one all-reduce slice each, together every fp32 gradient of
# BERT-base (model-info's parameter count x 4 bytes); pp=4, four stage tracks.
#   bash tests/cli/test_trace.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_trace.sh path/to/epochcast}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
  echo "skip: no python3 to read the JSON"
  exit 0
fi
CHECK=$(cd "$(dirname "$0")" && pwd)/check_trace.py
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

cat > "$tmp/step.lua" <<'EOF'
local ec = require "epochcast"
local cfg = {}
for _, w in ipairs(arg) do
  local k, v = w:match("^([^=]+)=(.*)$")
  cfg[k] = v
end
print(string.format("%.17g", ec.predict(cfg).step_s))
EOF

# traced NAME CHECKS... -- WORDS...: predict WORDS --trace, then check_trace.py with CHECKS
# (STEP in a check stands for the predicted step time).
traced() {
  local name=$1; shift
  local checks=() words=()
  while [ "$1" != "--" ]; do checks+=("$1"); shift; done
  shift
  words=("$@")
  local out
  if ! out=$("$EC" predict "${words[@]}" --trace "$tmp/$name.json" 2>&1); then
    bad "$name: predict --trace" "$out"
    return
  fi
  local step
  step=$("$EC" run "$tmp/step.lua" "${words[@]}" 2>&1) || { bad "$name: step time" "$step"; return; }
  checks=("${checks[@]//STEP/$step}")
  if out=$("$PY" "$CHECK" "$tmp/$name.json" "${checks[@]}" 2>&1); then
    ok "$name"
  else
    bad "$name" "$out"
  fi
}

L1B="model=llama-3.2-1b gpu=h100-sxm5-80gb batch_per_gpu=4 seq_len=2048 precision=amp_bf16 num_gpus=8 data=synthetic"
BERT="model=bert-base gpu=a100-sxm4-40gb batch_per_gpu=32 seq_len=128 data=synthetic"

traced "single GPU: forward, backward, optimizer slices tile the step" \
  --count 'forward=1' --count 'backward=1' --count 'optimizer step=1' --step-sum STEP --tol 1e-6 \
  -- $BERT gpu=t4

traced "FSDP: 16 units gathered in forward and backward, reduce-scattered, per micro-step" \
  --count 'forward all-gather unit \d+=32' --count 'backward all-gather unit \d+=32' \
  --count 'reduce-scatter unit \d+=32' --count 'forward all-gather root=2' --count 'forward=2' \
  --step-sum STEP --tol 1e-6 \
  -- $L1B strategy=fsdp grad_accum=2

params=$("$EC" model-info model=bert-base | sed -n 's/^parameters *\([0-9,]*\).*/\1/p' | tr -d ,)
if [ -z "$params" ]; then
  bad "model-info gives BERT-base's parameter count"
else
  traced "DDP: one all-reduce slice per bucket, every fp32 gradient once" \
    --bytes "all-reduce bucket \\d+=$((params * 4))" --tol 1e-9 --count 'forward=4' \
    -- $BERT num_gpus=4 strategy=ddp grad_accum=4
  traced "DDP: the phases of 4 micro-steps tile the step" --step-sum STEP --tol 1e-6 \
    -- $BERT num_gpus=4 strategy=ddp grad_accum=4
fi

traced "pp=4: four stage tracks, each stage's micro-batches on its own" \
  --tracks 'stage \d+ \(layers \d+-\d+\)=4' --count 'micro-batch \d+=32' --count 'forward=32' \
  -- model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=2048 num_gpus=8 pp=4 \
     grad_accum=8 data=synthetic

traced "a real loader: host tracks, phases stretched to each batch, still nested" \
  --tracks 'DataLoader worker \d+=3' --tracks 'pin-memory thread=1' --count 'copy batch=1' \
  -- model=bert-base gpu=t4 batch_per_gpu=16 seq_len=256 padding=dynamic 'lengths=lognormal(80,0.8)' \
     num_workers=3 pin_memory=1 tokenize=on_the_fly num_gpus=2 dataset_samples=10000

# the checker itself must fail a file Perfetto would misdraw
printf '{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1},{"name":"b","ph":"X","ts":3,"dur":5,"pid":1,"tid":1}]}' \
  > "$tmp/bad.json"
if "$PY" "$CHECK" "$tmp/bad.json" >/dev/null 2>&1; then
  bad "check_trace.py fails overlapping slices and unnamed tracks"
else
  ok "check_trace.py fails overlapping slices and unnamed tracks"
fi

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
