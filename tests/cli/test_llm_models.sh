#!/usr/bin/env bash
# test_llm_models.sh: the model configs of bench/data/llm/models.csv that NeMo 24.07 and
# Megatron-Bridge ran (NeMo's GPT-3 5B/20B/175B, Nemotron 8B/22B and Nemotron-4 340B, Qwen3
# 235B-A22B) load, and their parameter counts are (a) exactly what the architecture's formula
# gives from the shapes models.csv cites, worked out here term by term, and (b) within NAMED_TOL of
# the size the model is published under.  Before these configs the rows were "unknown model".
#   bash tests/cli/test_llm_models.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_llm_models.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
DIR=../bench/data/llm/models
# The published sizes are names ("8B", "340 billion", "235B in total"): they round the count.
# The widest gap is Nemotron 8B's 8.54e9 (its untied 256,000-token embeddings hold 2.1e9), +6.8%.
NAMED_TOL=0.07

params() { "$EC" model-info "model=$DIR/$1.json" 2>&1 | awk '/^parameters/ {gsub(",", "", $2); print $2}'; }

# GPT-2 form (Megatron GPT: learned positions, LayerNorm and linears with biases, tied head):
# V h + P h + L (12 h^2 + 13 h) + 2 h
gpt() { awk -v V="$1" -v P="$2" -v h="$3" -v L="$4" 'BEGIN {printf "%.0f", V*h + P*h + L*(12*h*h + 13*h) + 2*h}'; }
# Nemotron (LayerNorm1P with bias, GQA without biases, up/down MLP, untied head):
# 2 V h + L (h (h + 2 kv d) + h^2 + 2 h f + 4 h) + 2 h
nemotron() { awk -v V="$1" -v h="$2" -v L="$3" -v heads="$4" -v kv="$5" -v f="$6" \
  'BEGIN {d = h / heads; printf "%.0f", 2*V*h + L*(h*(h + 2*kv*d) + h*h + 2*h*f + 4*h) + 2*h}'; }
# Qwen3-MoE (RMSNorm, q/k norms of head_dim, GQA, every layer E experts of 3 h f, a router, untied):
# 2 V h + L (h (heads d) + 2 h (kv d) + heads d h + 2 d + E 3 h f + E h + 2 h) + h
qwen3moe() { awk -v V="$1" -v h="$2" -v L="$3" -v heads="$4" -v kv="$5" -v d="$6" -v E="$7" -v f="$8" \
  'BEGIN {printf "%.0f", 2*V*h + L*(h*heads*d + 2*h*kv*d + heads*d*h + 2*d + E*3*h*f + E*h + 2*h) + h}'; }

while read -r id want named; do
  got=$(params "$id")
  check "$id: $got parameters = the formula's $want" '[ "$got" = "$want" ]' "got '$got'"
  check "$id: within $NAMED_TOL of its published $named" \
    "awk -v g='${got:-0}' -v n='$named' -v t='$NAMED_TOL' 'BEGIN {r = (g - n) / n; exit !(r <= t && r >= -t)}'"
done <<EOF
nemo-gpt3-5b $(gpt 50304 2048 4096 24) 5e9
nemo-gpt3-20b $(gpt 50432 2048 6144 44) 20e9
nemo-gpt3-175b $(gpt 50688 2048 12288 96) 175e9
nemo-nemotron-8b $(nemotron 256000 4096 32 32 32 16384) 8e9
nemo-nemotron-22b $(nemotron 256000 6144 40 48 48 24576) 22e9
nemotron-4-340b-base $(nemotron 256000 18432 96 96 8 73728) 340e9
qwen3-235b-a22b $(qwen3moe 151936 4096 94 64 4 128 128 1536) 235e9
EOF

# every config models.csv names exists and loads
while IFS=, read -r id cfg _; do
  [ "$id" = id ] && continue
  expect "models.csv $id: $cfg loads" 0 "parameters" -- model-info "model=../$cfg"
done < ../bench/data/llm/models.csv

echo "$n checks, $fails failed"
[ "$fails" -eq 0 ]
