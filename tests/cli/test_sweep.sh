#!/usr/bin/env bash
# test_sweep.sh: `epochcast sweep` (table, --csv, -o, refused points, usage errors) and
# `epochcast validate --plot` (a picture, or exit 1 with a clear message without gnuplot).
#   bash tests/cli/test_sweep.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_sweep.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

expect "sweep --help" 0 "usage: epochcast sweep" -- sweep --help
expect "--help lists sweep" 0 "sweep key=v1,v2" -- --help
expect "sweep table" 0 "4 points" -- sweep model=bert-base gpu=t4,a10g batch_per_gpu=8,16
expect "sweep without an axis" 2 "no axis" -- sweep model=bert-base gpu=t4 batch_per_gpu=8
# the table's p10-p90 column is the step interval predict gives the same point (in ms, %.4g)
band=$("$EC" sweep model=bert-base gpu=t4,a10g batch_per_gpu=8,16 2>&1 | awk '$1 == "a10g" && $2 == "16" { print $4 }')
want=$("$EC" predict model=bert-base gpu=a10g batch_per_gpu=16 --csv 2>/dev/null |
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "step_p10_s") a = i; if ($i == "step_p90_s") b = i } }
           NR == 2 { printf "%.4g-%.4g\n", $a * 1e3, $b * 1e3 }')
if [ -n "$band" ] && [ "$band" = "$want" ]; then ok "sweep table: p10-p90 $band ms as predict's"
else bad "sweep p10-p90 column" "'$band' vs predict's '$want'"; fi
expect "sweep bad value names key and value" 1 "'-2'" -- sweep model=bert-base gpu=t4 batch_per_gpu=8,-2
expect "sweep unknown key" 1 "unknown key 'bach'" -- sweep model=bert-base gpu=t4 bach=8,16
# A refused point: the sweep goes on, lists the refused points at the end and exits 1 (issue 21:
# it exited 0, so a script could not tell).
expect "sweep refused point goes on" 1 "error: key 'topology'" -- sweep model=bert-base gpu=t4 batch_per_gpu=8 topology=nvlink num_gpus=1,2
expect "sweep lists the refused points" 1 "1 of 2 sweep points refused:" -- sweep model=bert-base gpu=t4 batch_per_gpu=8 topology=nvlink num_gpus=1,2
expect "sweep names a refused point's values" 1 "  num_gpus=2: key 'topology'" -- sweep model=bert-base gpu=t4 batch_per_gpu=8 topology=nvlink num_gpus=1,2 --csv
expect "sweep table has epoch and cost columns" 0 "USD 0.00" -- sweep model=bert-base gpu=t4,a10g batch_per_gpu=8 dataset_samples=1000
expect "sweep unknown option" 2 "unknown option" -- sweep model=bert-base gpu=t4 batch_per_gpu=8,16 --xml

# --csv: header + one line per point, config keys first, first axis slowest; -o the same file.
out=$("$EC" sweep model=bert-base gpu=t4,a10g batch_per_gpu=8,16 --csv -o "$tmp/s.csv" 2>&1); rc=$?
lines=$(printf '%s\n' "$out" | wc -l)
bcol=$(head -1 <<<"$out" | tr ',' '\n' | grep -n '^batch_per_gpu$' | cut -d: -f1)
order=$(printf '%s\n' "$out" | tail -n +2 | cut -d, -f3,"${bcol:-0}" | tr '\n' ' ')
if [ $rc -eq 0 ] && [ "$lines" -eq 5 ] && head -1 <<<"$out" | grep -q '^model,task,gpu,.*,step_s,samples_per_s,.*,error$' \
   && [ "$order" = "t4,8 t4,16 a10g,8 a10g,16 " ] && [ "$(cat "$tmp/s.csv")" = "$out" ]; then
  ok "sweep --csv and -o: header, order, same file"
else
  bad "sweep --csv and -o: header, order, same file" "rc=$rc order='$order' $out"
fi
# A refused point in CSV: empty results, the message in error.
out=$("$EC" sweep model=bert-base gpu=t4 batch_per_gpu=8 topology=nvlink num_gpus=1,2 --csv 2>&1)
if tail -1 <<<"$out" | grep -q 'EINVAL: key .topology.'; then ok "sweep --csv error column"; else bad "sweep --csv error column" "$out"; fi
# Commas inside parentheses do not split a value.
expect "sweep keeps lengths=lognormal(60,0.7) whole" 0 "" -- sweep model=bert-base gpu=t4 batch_per_gpu=8,16 "lengths=lognormal(60,0.7)"
expect "sweep -o into a missing folder fails" 1 "epochcast: " -- sweep model=bert-base gpu=t4 batch_per_gpu=8,16 -o "$tmp/no/such/dir.csv"
[ ! -e "$tmp/no" ] && ok "no partial output" || bad "no partial output"

# validate --plot
runs="$tmp/runs.csv"
cat > "$runs" <<'CSV'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,value,source
a,bert-base,t4,16,128,amp_fp16,samples_per_s,150,test
b,bert-base,a10g,16,128,amp_fp16,samples_per_s,400,test
CSV
if command -v gnuplot >/dev/null; then
  expect "validate --plot" 0 "wrote $tmp/v.png" -- validate "$runs" --plot "$tmp/v.png"
  [ -s "$tmp/v.png" ] && ok "validate --plot wrote a PNG" || bad "validate --plot wrote a PNG"
fi
out=$(PATH="$tmp/empty" "$EC" validate "$runs" --plot "$tmp/w.png" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -qF "gnuplot was not found on PATH" <<<"$out" && [ ! -e "$tmp/w.png" ]; then
  ok "validate --plot without gnuplot: exit 1, clear message"
else
  bad "validate --plot without gnuplot: exit 1, clear message" "rc=$rc $out"
fi
expect "validate --plot without a file" 2 "--plot needs a file name" -- validate "$runs" --plot

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
