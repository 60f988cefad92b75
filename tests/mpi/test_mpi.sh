#!/usr/bin/env bash
# test_mpi.sh: `mpirun -n 2 epochcast-mpi sweep|optimize ...` writes what one process writes: the
# sweep's CSV on stdout and its -o file byte for byte (refused points and the list of them
# included), the search's listing and its -o CSV; a refused sweep under mpirun exits 1 with
# the message, without hanging; and (issue 42) no rank left waiting: a -o target rank 0 refuses,
# a rank stopped in the middle of a sweep and a rank that fails alone each end every rank within
# seconds, non-zero, with a message.  Run by ctest only when CMake found MPI.
#   bash tests/mpi/test_mpi.sh path/to/epochcast-mpi path/to/mpiexec   (EPOCHCAST_MODELS set)
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

# ---- issue 42: no rank waits for one that has gone --------------------------------------
# secs: the seconds since $1 (date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
quick() { awk -v s="$1" 'BEGIN { exit !(s < 20) }'; }
# stop a run that hangs (the code before issue 42): SIGTERM to mpirun, which ends its ranks
mpi_t() { timeout -k 5 60 "$MPIEXEC" -n "$1" --oversubscribe "${@:2}"; }

# rank 0 refuses its -o target (a link, a FIFO, a folder, an input): every rank ends, exit 1, the
# message (before: rank 0 left, rank 1 waited in MPI_Allreduce for ever)
ln -s "$tmp/elsewhere.csv" "$tmp/link.csv"
mkfifo "$tmp/fifo.csv"
mkdir "$tmp/dir.csv"
printf 'tokens,count\n10,5\n20,5\n' >"$tmp/len.csv"
for target in link fifo dir len; do
  extra=""
  [ $target = len ] && extra="lengths=$tmp/len.csv"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  out=$(mpi_t 2 "$EC" sweep model=bert-base gpu=t4 batch_per_gpu=1,2,4 $extra -o "$tmp/$target.csv" 2>&1); rc=$?
  secs=$(since "$t0")
  if [ $rc -eq 1 ] && quick "$secs" && grep -qF "epochcast: $tmp/$target.csv:" <<<"$out" && [ ! -e "$tmp/elsewhere.csv" ]; then
    ok "sweep -o a refused $target under mpirun -n 2: exit 1 in $secs s, the message"
  else bad "sweep -o a refused $target under mpirun -n 2" "exit $rc after $secs s: $(head -3 <<<"$out")"; fi
done
t0=$(date +%s.%N)
out=$(mpi_t 2 "$EC" optimize model=llama-3.1-8b gpu=h100-sxm5-80gb num_gpus=16 seq_len=4096 global_batch_tokens=1048576 \
  -o "$tmp/dir.csv" 2>&1); rc=$?
secs=$(since "$t0")
[ $rc -eq 1 ] && quick "$secs" && grep -qF "is not a regular file (a folder)" <<<"$out" && ! grep -q "^search:" <<<"$out" \
  && ok "optimize -o a folder under mpirun -n 2: refused before the search, exit 1 in $secs s" \
  || bad "optimize -o a folder under mpirun" "exit $rc after $secs s: $(head -3 <<<"$out")"

# a rank stopped in the middle of a sweep (SIGTERM to rank 1 alone, as a scheduler or the OOM
# handling of one node does): every rank ends within seconds, non-zero, rank 1's message
b=$(seq -s, 1 1000)
long="model=bert-base,gpt2,bert-large,distilbert-base,llama-3.1-8b gpu=t4,a10g,a100-sxm4-80gb,h100-sxm5-80gb
      batch_per_gpu=$b precision=fp32,amp_fp16,amp_bf16 seq_len=128,256,384,512,768,1024,1536,2048"
# shellcheck disable=SC2086
"$MPIEXEC" -n 2 --oversubscribe "$EC" sweep $long --csv --threads 1 >"$tmp/long.out" 2>"$tmp/long.err" &
mpipid=$!
rank1=""
for _ in $(seq 1 100); do  # rank 1: the child of mpirun whose environment says so
  for c in $(pgrep -P $mpipid); do
    tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && rank1=$c
  done
  [ -n "$rank1" ] && [ -s "$tmp/long.out" ] && break
  sleep 0.1
done
if [ -z "$rank1" ]; then
  kill $mpipid 2>/dev/null; wait $mpipid 2>/dev/null
  bad "a rank stopped mid-sweep" "rank 1 not found among mpirun's children"
else
  sleep 0.5
  t0=$(date +%s.%N)
  kill -TERM "$rank1"
  ( sleep 60; kill $mpipid 2>/dev/null ) & guard=$!
  wait $mpipid; rc=$?
  secs=$(since "$t0")
  kill $guard 2>/dev/null; wait $guard 2>/dev/null
  rows=$(wc -l <"$tmp/long.out")
  if [ $rc -ne 0 ] && quick "$secs" && [ "$rows" -lt 960001 ] && grep -qF "MPI rank 1: sweep: cancelled (stopping every MPI rank)" "$tmp/long.err"; then
    ok "rank 1 stopped mid-sweep ($((rows - 1)) of 960000 rows out): every rank ended in $secs s, exit $rc, rank 1's message"
  else bad "rank 1 stopped mid-sweep" "exit $rc after $secs s, $rows rows: $(head -3 "$tmp/long.err")"; fi
fi

# a rank that fails alone before the split (here its own command line: mpirun's MPMD form)
# leaves the others in the split's first collective: it stops them after EXIT_WAIT_S
t0=$(date +%s.%N)
out=$(timeout -k 5 60 "$MPIEXEC" --oversubscribe -n 1 "$EC" sweep model=bert-base gpu=t4 batch_per_gpu=1,2,4 : \
  -n 1 "$EC" sweep model=bert-base gpu=t4 bach=1,2,4 2>&1); rc=$?
secs=$(since "$t0")
[ $rc -ne 0 ] && [ $rc -ne 124 ] && quick "$secs" && grep -qF "MPI rank 1: failed on its own" <<<"$out" \
  && ok "a rank that fails alone stops the others: exit $rc in $secs s, its message" \
  || bad "a rank that fails alone" "exit $rc after $secs s: $(head -3 <<<"$out")"

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
