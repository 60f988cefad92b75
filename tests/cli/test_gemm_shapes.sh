#!/usr/bin/env bash
# test_gemm_shapes.sh: GEMM efficiency by shape as data (issue 39 item 1).  models/gemm.csv holds
# the utilization curve's parameters per architecture and models/gemm_shapes.csv the public
# measurements of GEMM throughput by shape, dtype and GPU behind them; checked here:
#   - a row of either without a source is refused, naming the file and line;
#   - on every architecture of the table, each measured series (one GPU, dtype and source) reaches
#     a smaller fraction of its best shape at its smallest GEMM than at its largest, and the
#     skinny H100 shapes of XLA's table (a dimension of 256) stay below its large training-sized one;
#   - Hopper against Ampere: at the 1024^3 size class (2 GFLOP) in 16 bits the H100s reach a
#     smaller fraction of their best shape than the Ampere GPUs (median), while from 4096^3
#     (137 GFLOP) up both reach at least 0.88 of it (the 1024^3 H100 rows are near the eager
#     dispatch limit of about 10 us per call: models/README.md, gemm_shapes.csv).
#   bash tests/cli/test_gemm_shapes.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_gemm_shapes.sh path/to/epochcast}
MODELS=${EPOCHCAST_MODELS:?EPOCHCAST_MODELS must name the models/ folder}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
SHAPES="$MODELS/gemm_shapes.csv"

# a row without a source: refused with file and line, no prediction written
for t in gemm gemm_shapes; do
  rm -rf "$tmp/m" && cp -r "$MODELS" "$tmp/m"
  # blank the last field (the source) of the second data row
  awk -v OFS=, 'NR == 3 { sub(/,"[^"]*"$|,[^,]*$/, ",") } { print }' "$MODELS/$t.csv" >"$tmp/m/$t.csv"
  # gemm.csv's line 3 is its hopper row
  line=3
  out=$(EPOCHCAST_MODELS="$tmp/m" "$EC" predict model=bert-base batch_per_gpu=32 gpu=a100-sxm4-80gb 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && echo "$out" | grep -q "$t.csv:$line: .*empty source"; then
    ok "$t.csv: a row without a source is refused ($t.csv:$line)"
  else
    bad "$t.csv: a row without a source is refused" "rc=$rc: $out"
  fi
done

# the shipped tables load
if "$EC" predict model=bert-base batch_per_gpu=32 gpu=h100-sxm5-80gb >/dev/null 2>&1; then ok "shipped gemm.csv and gemm_shapes.csv load"
else bad "shipped gemm.csv and gemm_shapes.csv load"; fi

# per series (architecture, gpu, dtype, best): fraction at the smallest and the largest GEMM
series=$(awk -F, 'NR > 1 {
    key = $1 "|" $2 "|" $3 "|" $9; f = 2 * $4 * $5 * $6 * $7; frac = $8 / $9
    if (!(key in lo) || f < lof[key]) { lof[key] = f; lo[key] = frac }
    if (!(key in hi) || f > hif[key]) { hif[key] = f; hi[key] = frac }
  } END { for (k in lo) printf "%s %.4f %.4f %g %g\n", k, lo[k], hi[k], lof[k], hif[k] }' "$SHAPES")
for arch in $(awk -F, 'NR > 1 { print $1 }' "$SHAPES" | sort -u); do
  s=$(echo "$series" | grep "^$arch|")
  worse=$(echo "$s" | awk '$4 < $5 && !($2 < $3) { print }')
  if [ -n "$s" ] && [ -z "$worse" ]; then
    ok "$arch: the smallest GEMM of each series reaches a smaller fraction than its largest ($(echo "$s" | wc -l) series)"
  else
    bad "$arch: the smallest GEMM of each series reaches a smaller fraction than its largest" "$worse"
  fi
done

# skinny shapes (a dimension of 256 or less) against the large training-sized shape, XLA's H100 bf16
# rows (with one dimension at 512 the longest ones, 2 x 4096 x 512 x 4096, reach 0.93 of the best)
r=$(awk -F, 'NR > 1 && $1 == "hopper" && $2 == "" && $3 == "bf16" {
    frac = $8 / $9; m = $4; if ($5 < m) m = $5; if ($6 < m) m = $6
    if (m <= 256 && frac > skinny) skinny = frac
    if (m >= 2048 && $4 * $5 * $6 * $7 >= 2 * 4096 * 4096 * 2048 && frac > large) large = frac
  } END { printf "%.4f %.4f", skinny, large }' "$SHAPES")
read -r sk lg <<<"${r:-0 0}"
if awk -v s="$sk" -v l="$lg" 'BEGIN { exit !(s > 0 && l > 0 && s < l - 0.1) }'; then
  ok "hopper: skinny GEMMs (best $sk of the best shape) below the large training-sized one ($lg)"
else
  bad "hopper: skinny GEMMs below the large training-sized one" "skinny $sk large $lg"
fi

# Hopper against Ampere, 16-bit square GEMMs by size class
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print -1; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
class() { # ARCH N: the fractions of 16-bit N^3 rows
  awk -F, -v a="$1" -v n="$2" 'NR > 1 && $1 == a && ($3 == "bf16" || $3 == "fp16") && $4 == n && $5 == n && $6 == n && $7 == 1 {
    print $8 / $9 }' "$SHAPES"
}
h1=$(class hopper 1024 | median) a1=$(class ampere 1024 | median)
if awk -v h="$h1" -v a="$a1" 'BEGIN { exit !(h > 0 && a > 0 && h < a) }'; then
  ok "1024^3 in 16 bits: Hopper reaches $h1 of its best shape, Ampere $a1 (median)"
else
  bad "1024^3 in 16 bits: Hopper below Ampere" "hopper $h1 ampere $a1"
fi
lo=$(awk -F, 'NR > 1 && ($1 == "hopper" || $1 == "ampere") && ($3 == "bf16" || $3 == "fp16") && $4 * $5 * $6 * $7 >= 4096 * 4096 * 4096 {
    f = $8 / $9; if (min == "" || f < min) min = f } END { print min }' "$SHAPES")
if awk -v m="$lo" 'BEGIN { exit !(m != "" && m >= 0.88) }'; then
  ok "from 4096^3 up both Hopper and Ampere reach at least 0.88 of their best shape (lowest $lo)"
else
  bad "from 4096^3 up both reach at least 0.88 of their best shape" "lowest $lo"
fi

echo "$((n - fails))/$n passed"
[ $fails -eq 0 ]
