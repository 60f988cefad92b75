#!/usr/bin/env bash
# test_optimize.sh: `epochcast optimize`: the issue's 70B search lists ranked layouts with
# tokens/s, MFU and memory and the search's size; -o writes them as CSV; one thread and two give
# the same listing; bad input (an unknown key, a global batch the sequence does not divide, no
# global batch, a bad option) is refused naming the key, with nothing written.
#   bash tests/cli/test_optimize.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_optimize.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

issue="model=llama-3.1-70b gpu=h100-sxm5-80gb num_gpus=64 seq_len=8192 global_batch_tokens=4194304"
# shellcheck disable=SC2086
out=$("$EC" optimize $issue -o "$tmp/o.csv" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -qE '^search: [0-9]+ layouts considered, [0-9]+ pruned \(cannot divide\), [0-9]+ pruned \(model states exceed memory\), [0-9]+ priced' <<<"$out" \
   && grep -q 'tokens/s' <<<"$out" && grep -q 'MFU%' <<<"$out" && grep -qE '^1 +[0-9]+ ' <<<"$out" \
   && grep -qE '^2 .*(communication|bubble|recompute|compute|overhead|ties)' <<<"$out"; then
  ok "the issue's 70B search ranks layouts, says why #2 lost and the search's size"
else bad "the issue's 70B search" "exit $rc: $out"; fi
# The best row: dp x tp x pp x cp = 64 and it fits (peak <= capacity).
best=$(grep -E '^1 ' <<<"$out")
read -r _ dp tp pp cp _ <<<"$best"
peak=$(grep -oE '[0-9.]+/[0-9.]+' <<<"$best" | head -1)
if [ $((dp * tp * pp * cp)) -eq 64 ] && awk -F/ '{exit !($1 <= $2)}' <<<"$peak"; then ok "best divides 64 GPUs and fits ($peak GiB)"
else bad "best divides and fits" "$best"; fi
rows=$(($(wc -l <"$tmp/o.csv") - 1))
fit=$(sed -nE 's/.* ([0-9]+) fit;.*/\1/p' <<<"$out")
if head -1 "$tmp/o.csv" | grep -q '^rank,fits,gpu,num_gpus,global_batch,dp,tp,pp,cp,ep,' && [ "$rows" -ge "${fit:-1}" ] \
   && sed -n 2p "$tmp/o.csv" | grep -q '^1,1,h100-sxm5-80gb,64,512,'; then ok "-o CSV: $rows rows, the best first"
else bad "-o CSV" "$(head -3 "$tmp/o.csv")"; fi
# One thread and two: the same listing (the search line's time aside).
# shellcheck disable=SC2086
a=$("$EC" optimize $issue --threads 1 --top 20 | sed -E 's/; [0-9.]+ s on [0-9]+ threads?//')
# shellcheck disable=SC2086
b=$("$EC" optimize $issue threads=2 top=20 | sed -E 's/; [0-9.]+ s on [0-9]+ threads?//')
[ "$a" = "$b" ] && ok "threads 1 and 2 list the same layouts" || bad "threads 1 and 2" "$(diff <(echo "$a") <(echo "$b") | head)"

expect "optimize --help" 0 "usage: epochcast optimize" -- optimize --help
expect "--help lists optimize" 0 "optimize model=ID" -- --help
expect "unknown key named" 1 "unknown key 'bach'" -- optimize $issue bach=3
expect "global batch not divisible names the key" 1 "global_batch_tokens=4194000 is not divisible by seq_len=8192" -- \
  optimize model=llama-3.1-70b gpu=h100-sxm5-80gb num_gpus=64 seq_len=8192 global_batch_tokens=4194000
expect "no global batch" 1 "global_batch_tokens=" -- optimize model=llama-3.1-70b gpu=h100-sxm5-80gb num_gpus=64
expect "bad searched value names the key" 1 "tp" -- optimize $issue tp=1,x
expect "bad goal" 1 "goal='fast'" -- optimize $issue goal=fast
expect "unknown option" 2 "unknown option" -- optimize $issue --fast
rm -f "$tmp/bad.csv"
"$EC" optimize $issue bach=3 -o "$tmp/bad.csv" >/dev/null 2>&1
[ ! -e "$tmp/bad.csv" ] && ok "a refused search writes no CSV" || bad "a refused search writes no CSV"
expect "nothing fits: exit 1" 1 "no layout fits" -- optimize model=llama-3.1-70b gpu=t4 num_gpus=2 seq_len=4096 global_batch=8

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
