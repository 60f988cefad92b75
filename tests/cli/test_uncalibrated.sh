#!/usr/bin/env bash
# test_uncalibrated.sh: calibration that knows what it has seen (issue 39 items 2 and 3).  With
# the shipped models/profile.csv (no Hopper rows, no Ampere CUDA-core rows), a prediction on an
# H100, or in fp32 on an A100, says that the fit has no calibration runs there and has a wider
# p10-p90 (the profile's error_log_sd_unseen_arch) than an A100 in amp_fp16 (error_log_sd); a
# profile= without the leave-one-architecture-out row still warns and says it cannot widen.
#   bash tests/cli/test_uncalibrated.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_uncalibrated.sh path/to/epochcast}
MODELS=${EPOCHCAST_MODELS:?EPOCHCAST_MODELS must name the models/ folder}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

# ratio GPU PRECISION [KEY=VALUE]: step_p90_s / step_p10_s of BERT-base, then the warnings.
ratio() {
  "$EC" predict model=bert-base batch_per_gpu=32 gpu="$1" precision="$2" ${3:+"$3"} --csv |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "step_p10_s") a = i; if ($i == "step_p90_s") b = i } }
             NR == 2 { printf "%.6f\n", $b / $a }'
}
text() { "$EC" predict model=bert-base batch_per_gpu=32 gpu="$1" precision="$2" ${3:+"$3"} 2>&1; }

t=$(text h100-sxm5-80gb amp_bf16)
if grep -qF "no calibration runs on hopper" <<<"$t" && grep -qF "interval widened" <<<"$t"; then
  ok "h100: no calibration runs on hopper, interval widened"
else bad "h100 warning" "$t"; fi
t=$(text a100-sxm4-80gb amp_fp16)
if grep -qF "no calibration runs" <<<"$t"; then bad "a100 amp_fp16 is calibrated" "$t"; else ok "a100 amp_fp16: no warning"; fi
t=$(text a100-sxm4-80gb fp32)
if grep -qF "no calibration runs on ampere with matmuls on CUDA cores" <<<"$t"; then
  ok "a100 fp32: CUDA-core matmuls uncalibrated"
else bad "a100 fp32 warning" "$t"; fi

h=$(ratio h100-sxm5-80gb amp_bf16) a=$(ratio a100-sxm4-80gb amp_fp16)
sd=$(awk -F, '$1 == "error_log_sd" { print $3 }' "$MODELS/profile.csv")
# the unseen-architecture sd of the prediction's class: host-bound when its GPU utilization is
# below constants.csv host_bound_util_frac (and the profile has the host-bound row)
util=$("$EC" predict model=bert-base batch_per_gpu=32 gpu=h100-sxm5-80gb precision=amp_bf16 --csv |
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gpu_util_frac") u = i } NR == 2 { print $u }')
bound=$(awk -F, '$1 == "host_bound_util_frac" { print $2 }' "$MODELS/constants.csv")
su=$(awk -F, '$1 == "error_log_sd_unseen_arch" { print $3 }' "$MODELS/profile.csv")
suh=$(awk -F, '$1 == "error_log_sd_unseen_arch_host" { print $3 }' "$MODELS/profile.csv")
su=$(awk -v u="$util" -v b="$bound" -v su="$su" -v suh="$suh" 'BEGIN { print (u < b && suh > 0 ? suh : su) }')
if awk -v h="$h" -v a="$a" -v sd="$sd" -v su="$su" 'BEGIN {
     z = 1.2815515655446004; eh = exp(2 * z * (su > sd ? su : sd)); ea = exp(2 * z * sd)
     exit !(h > a && (h / eh - 1) ^ 2 < 1e-8 && (a / ea - 1) ^ 2 < 1e-8) }'; then
  ok "p90/p10: h100 $h (unseen-architecture sd $su at GPU utilization $util) > a100 $a (sd $sd)"
else bad "interval widths" "h100 $h a100 $a sd $sd unseen $su util $util"; fi

# the text output prints the interval the warning speaks of: p10 < step < p90, as --csv gives them
csvline=$("$EC" predict model=bert-base batch_per_gpu=32 gpu=h100-sxm5-80gb precision=amp_bf16 --csv |
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "step_s") s = i; if ($i == "step_p10_s") a = i; if ($i == "step_p90_s") b = i } }
           NR == 2 { printf "%.4g %.4g %.4g\n", $s * 1e3, $a * 1e3, $b * 1e3 }')
line=$(text h100-sxm5-80gb amp_bf16 | grep -F "step time")
if read -r s lo hi <<<"$csvline" && awk -v l="$line" -v s="$s" -v lo="$lo" -v hi="$hi" 'BEGIN {
     if (!match(l, /\(p10 [0-9.]+, p90 [0-9.]+ ms\)/)) exit 1
     split(substr(l, RSTART + 5, RLENGTH - 9), v, /, p90 /)
     exit !(lo < s && s < hi && (v[1] / lo - 1) ^ 2 < 1e-6 && (v[2] / hi - 1) ^ 2 < 1e-6) }'; then
  ok "text output: step time with its p10 and p90 ($line)"
else bad "text output interval" "$line vs $csvline"; fi

printf 'parameter,architecture,value\ngemm_scale,ampere,0.9\nmem_scale,ampere,0.9\nerror_log_sd,,0.1\n' >"$tmp/p.csv"
t=$(text h100-sxm5-80gb amp_bf16 profile="$tmp/p.csv")
if grep -qF "no leave-one-architecture-out error" <<<"$t"; then ok "old profile: says it cannot widen"
else bad "old profile" "$t"; fi

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
