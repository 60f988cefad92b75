#!/usr/bin/env bash
# test_plot.sh: the CLI's pictures (issue 41): `sweep --plot FILE` draws the points,
# `validate --plot` one panel per metric with the out-of-memory outcomes counted in the title
# and not drawn; the legend below the axes.  The gnuplot script is read back through
# EPOCHCAST_PLOT_SCRIPT (kept even without gnuplot); the pictures are checked where gnuplot
# is installed, skipped (said) where it is not.
#   bash tests/cli/test_plot.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_plot.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
have_gnuplot=0
command -v gnuplot >/dev/null && have_gnuplot=1
[ $have_gnuplot = 1 ] || echo "skip the pictures themselves: gnuplot is not on PATH"
mkdir -p "$tmp/empty"

# ---- sweep --plot ---------------------------------------------------------------------------
sweep=(sweep model=bert-base gpu=t4,a10g,a100-sxm4-80gb,h100-sxm5-80gb precision=fp32,amp_fp16,amp_bf16
       batch_per_gpu=8,16,32,64 dataset_samples=10000)
out=$(EPOCHCAST_PLOT_SCRIPT="$tmp/sweep.gp" "$EC" "${sweep[@]}" --plot "$tmp/sweep.png" 2>&1); rc=$?
if [ $have_gnuplot = 1 ]; then
  if [ $rc -eq 0 ] && grep -qF "wrote $tmp/sweep.png" <<<"$out" && [ "$(head -c 4 "$tmp/sweep.png" | tail -c 3)" = PNG ]; then
    ok "sweep --plot FILE draws a PNG"
  else
    bad "sweep --plot FILE draws a PNG" "rc=$rc $out"
  fi
fi
gp=$(cat "$tmp/sweep.gp" 2>/dev/null)
# 4 GPUs x 3 precisions = 12 series against batch_per_gpu
if [ "$(grep -c "ecdata index [0-9]* using 1:2 with linespoints" <<<"$gp")" -eq 12 ] \
   && grep -qF "set key outside below" <<<"$gp" && grep -qF "set xlabel 'batch per GPU (samples)'" <<<"$gp" \
   && grep -qF "set ylabel 'epoch time (s)'" <<<"$gp" \
   && [ "$(grep -o "with linespoints lw 2 lc rgb '#[0-9a-f]*'" <<<"$gp" | sort -u | wc -l)" -eq 12 ]; then
  ok "sweep --plot: epoch time against the batch, 12 series in 12 colours, the legend below"
else
  bad "sweep --plot: epoch time against the batch, 12 series in 12 colours, the legend below" "$gp"
fi
out=$(EPOCHCAST_PLOT_SCRIPT="$tmp/bars.gp" "$EC" sweep model=bert-base gpu=t4,a10g batch_per_gpu=8 \
      --plot "$tmp/bars.svg" 2>&1); rc=$?
if grep -qF "rowstacked" "$tmp/bars.gp" 2>/dev/null && { [ $have_gnuplot = 0 ] || { [ $rc -eq 0 ] && grep -q "<svg" "$tmp/bars.svg"; }; }; then
  ok "sweep --plot without a numeric axis: the step's breakdown, one bar per point"
else
  bad "sweep --plot without a numeric axis: the step's breakdown, one bar per point" "rc=$rc $out"
fi
out=$("$EC" sweep model=bert-base gpu=t4,a10g batch_per_gpu=8 --plot 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -qF "needs a file name" <<<"$out"; then ok "sweep --plot without a file: usage error"
else bad "sweep --plot without a file: usage error" "rc=$rc $out"; fi
out=$("$EC" sweep model=bert-base gpu=t4,a10g batch_per_gpu=8 --plot "$tmp/x.jpg" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -qF "must end in .png or .svg" <<<"$out" && ! grep -qF "points" <<<"$out"; then
  ok "sweep --plot with another extension: a usage error before the sweep"
else bad "sweep --plot with another extension: a usage error before the sweep" "rc=$rc $out"; fi
out=$(PATH="$tmp/empty" "$EC" sweep model=bert-base gpu=t4,a10g batch_per_gpu=8 --plot "$tmp/none.png" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -qF "gnuplot was not found on PATH" <<<"$out" && grep -qF "2 points" <<<"$out" \
   && [ ! -e "$tmp/none.png" ]; then
  ok "sweep --plot without gnuplot: the table, then exit 1 and a clear message"
else
  bad "sweep --plot without gnuplot: the table, then exit 1 and a clear message" "rc=$rc $out"
fi

# ---- validate --plot: one panel per metric --------------------------------------------------
cat > "$tmp/runs.csv" <<'CSV'
id,model,gpu,batch_per_gpu,seq_len,precision,metric,memory_reading,value,source
a1,bert-base,t4,16,128,amp_fp16,samples_per_s,,150,test
a2,bert-base,a100-sxm4-80gb,32,128,amp_fp16,samples_per_s,,900,test
b1,bert-base,t4,16,128,amp_fp16,step_time_ms,,110,test
b2,bert-base,a100-sxm4-80gb,32,128,amp_fp16,step_time_ms,,35,test
c1,bert-base,t4,16,128,amp_fp16,peak_bytes,,4000000000,test
c2,bert-base,a100-sxm4-80gb,32,128,amp_fp16,peak_bytes,reserved,6000000000,test
o1,bert-base,t4,512,512,fp32,oom,,1,test
o2,bert-base,t4,8,128,fp32,oom,,0,test
CSV
out=$(EPOCHCAST_PLOT_SCRIPT="$tmp/v.gp" "$EC" validate "$tmp/runs.csv" --plot "$tmp/v.png" 2>&1); rc=$?
gp=$(cat "$tmp/v.gp" 2>/dev/null)
# 4 metrics (samples/s, step time, nvml and reserved peak bytes): 4 panels and the legend's
if [ "$(grep -c "^set multiplot layout" <<<"$gp")" -eq 1 ] && [ "$(grep -c "with filledcurves" <<<"$gp")" -eq 4 ] \
   && [ "$(grep -c "^plot " <<<"$gp")" -eq 5 ] && grep -qF "1 caught, 0 missed, 0 false alarms" <<<"$gp" \
   && [ "$(grep -c . "$tmp/v.gp.dat")" -eq 6 ] && grep -qF "set title 'reserved memory (GiB)'" <<<"$gp"; then
  ok "validate --plot: one panel per metric, the oom outcomes counted in the title, not drawn"
else
  bad "validate --plot: one panel per metric, the oom outcomes counted in the title, not drawn" "rc=$rc $out $gp"
fi
if [ $have_gnuplot = 1 ]; then
  if [ $rc -eq 0 ] && [ "$(head -c 4 "$tmp/v.png" | tail -c 3)" = PNG ]; then ok "validate --plot draws a PNG"
  else bad "validate --plot draws a PNG" "rc=$rc $out"; fi
fi

echo "$((n - fails)) of $n tests passed"
[ $fails -eq 0 ]
