#!/usr/bin/env bash
# test_mpi.sh: `mpirun -n 2 epochcast sweep|optimize ...` writes what one process writes: the
# sweep's CSV on stdout and its -o file byte for byte (refused points and the list of them
# included), the search's listing and its -o CSV; a refused sweep under mpirun exits 1 with
# the message, without hanging.  Run by ctest only when CMake found MPI.
#   bash tests/mpi/test_mpi.sh path/to/epochcast path/to/mpiexec   (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_mpi.sh path/to/epochcast path/to/mpiexec}
MPIEXEC=${2:?usage: test_mpi.sh path/to/epochcast path/to/mpiexec}
# Root in a container: Open MPI refuses to run as root unless told (both variables).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok()  { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/     /'; }
mpi() { timeout 120 "$MPIEXEC" -n "$1" --oversubscribe "${@:2}"; }

# 486 points, 135 refused (tp=2 on one GPU, tp for resnet-50): 2 blocks of 256 points, one per rank.
axes="model=bert-base,resnet-50,gpt2 gpu=t4,a100-sxm4-80gb,h100-sxm5-80gb batch_per_gpu=1,8,64
      num_gpus=1,2,8 precision=fp32,amp_fp16,bf16 tp=1,2"
# shellcheck disable=SC2086
"$EC" sweep $axes --csv -o "$tmp/one.csv" >"$tmp/one.out" 2>"$tmp/one.err"; rc1=$?
for k in 2 3; do
  # shellcheck disable=SC2086
  mpi $k "$EC" sweep $axes --csv -o "$tmp/mpi$k.csv" >"$tmp/mpi$k.out" 2>"$tmp/mpi$k.err"; rc=$?
  lines=$(wc -l <"$tmp/one.err")
  if [ $rc -ne $rc1 ]; then bad "sweep -n $k: exit status" "exit $rc, one process $rc1: $(head -3 "$tmp/mpi$k.err")"
  elif ! cmp -s "$tmp/one.out" "$tmp/mpi$k.out"; then bad "sweep -n $k: CSV on stdout" "$(diff "$tmp/one.out" "$tmp/mpi$k.out" | head -5)"
  elif ! cmp -s "$tmp/one.csv" "$tmp/mpi$k.csv"; then bad "sweep -n $k: -o file"
  elif ! cmp -s "$tmp/one.err" <(head -n "$lines" "$tmp/mpi$k.err"); then bad "sweep -n $k: the refused list"
  else ok "sweep under mpirun -n $k: stdout CSV, -o file and refused list identical to one process"; fi
done
[ "$(($(wc -l <"$tmp/one.out") - 1))" -eq 486 ] && [ "$rc1" -eq 1 ] && ok "the compared sweep has 486 rows and refused points" \
  || bad "the compared sweep" "rc $rc1"

# A larger sweep without refusals: 4 x 4 x 8 x 2 x 3 = 768 points, threads inside each rank.
big="model=bert-base,gpt2,bert-large,distilbert-base gpu=t4,a10g,a100-sxm4-80gb,h100-sxm5-80gb
     batch_per_gpu=1,2,4,8,16,32,64,128 num_gpus=1,4 precision=fp32,amp_fp16,amp_bf16"
# shellcheck disable=SC2086
"$EC" sweep $big --csv --threads 2 >"$tmp/big1.out" 2>/dev/null
# shellcheck disable=SC2086
mpi 2 "$EC" sweep $big --csv --threads 2 >"$tmp/big2.out" 2>/dev/null
cmp -s "$tmp/big1.out" "$tmp/big2.out" && [ "$(wc -l <"$tmp/big1.out")" -eq 769 ] \
  && ok "768-point sweep, 2 ranks x 2 threads: identical" || bad "768-point sweep under mpirun"

opt="model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=16 seq_len=4096 global_batch_tokens=1048576 --top 15"
# shellcheck disable=SC2086
"$EC" optimize $opt -o "$tmp/opt1.csv" | sed -E 's/; [0-9.]+ s on .*//; /^wrote /d' >"$tmp/opt1.out"
# shellcheck disable=SC2086
mpi 2 "$EC" optimize $opt -o "$tmp/opt2.csv" | sed -E 's/; [0-9.]+ s on .*//; /^wrote /d' >"$tmp/opt2.out"
if cmp -s "$tmp/opt1.csv" "$tmp/opt2.csv" && cmp -s "$tmp/opt1.out" "$tmp/opt2.out" && [ -s "$tmp/opt1.csv" ]; then
  ok "optimize under mpirun -n 2: listing and -o CSV identical to one process"
else bad "optimize under mpirun" "$(diff "$tmp/opt1.out" "$tmp/opt2.out" | head -5)"; fi

out=$(mpi 2 "$EC" sweep model=bert-base gpu=t4 bach=8,16 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "unknown key 'bach'" <<<"$out" && ok "a refused sweep under mpirun: exit 1, the message" \
  || bad "a refused sweep under mpirun" "exit $rc: $out"
out=$(mpi 2 "$EC" optimize model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=16 seq_len=4096 global_batch_tokens=1000 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "global_batch_tokens=1000 is not divisible" <<<"$out" \
  && ok "a refused search under mpirun: exit 1, the message" || bad "a refused search under mpirun" "exit $rc: $out"

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
