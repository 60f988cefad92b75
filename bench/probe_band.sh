#!/usr/bin/env bash
# probe_band.sh: how one changed prior of models/constants.csv moves issue 39's coverage band.
# Copies models/ to OUT_DIR/models, sets each NAME=VALUE there (a constants.csv name; no pair:
# the shipped priors, which reproduces loao.md), refits the shipped way (bench/arch_fold.sh none:
# the profile, the LLM report predicted with it: the Hopper fold), fits and predicts every
# leave-one-architecture-out fold (bench/arch_fold.sh ARCH) with that catalog, and prints
# coverage_scan.py's table: each fold's rows inside their p10-p90, and whether some rescaling of
# the sds puts every fold inside 70-90%.  Nothing under models/ or bench/results/ is touched.
# About 5 minutes on two cores.  From the repository root:
#   bash bench/probe_band.sh [--build DIR] [--out DIR] [--device-profile FILE] [NAME=VALUE ...]
# e.g. bash bench/probe_band.sh sdpa_mask_eff_frac=0.885
# --device-profile FILE: the device_profile.csv bench/harness/device_check.sh wrote on a GPU; its
# attn_mask_eff row (the masked SDPA kernel over the same kernel without a mask, measured) becomes
# sdpa_mask_eff_frac, the prior that decides the band (loao.md, "What would move the band").
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: probe_band.sh [--build DIR] [--out DIR] [--device-profile FILE] [NAME=VALUE ...] (NAME: a models/constants.csv name)" >&2; exit 2; }
build=build out= pairs=()
# The attn_mask_eff value of a device_profile.csv (device_check.sh's profile.py), named on stderr
# with the kernel and GPU it was measured on; a file without one is refused naming it.
device_mask_eff() {
  python3 - "$1" <<'PY'
import csv, math, sys
path = sys.argv[1]
try:
    rows = list(csv.DictReader(open(path, newline="")))
except OSError as e:
    sys.exit("probe_band.sh: --device-profile %s: %s" % (path, e.strerror))
hits = [r for r in rows if r.get("parameter") == "attn_mask_eff"]
try:
    value = float(hits[0]["value"]) if hits else float("nan")
except (TypeError, ValueError):
    value = float("nan")
if not math.isfinite(value) or value <= 0:
    sys.exit("probe_band.sh: --device-profile %s: no attn_mask_eff row with a positive value (device_check.sh "
             "writes one when its sdpa_mask cells ran)" % path)
print("%s: attn_mask_eff %g (%s; kernels %s)" % (path, value, hits[0].get("meaning", ""), hits[0].get("kernels", "")),
      file=sys.stderr)
print(value)
PY
}
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --device-profile) [ $# -ge 2 ] || usage; pairs+=("sdpa_mask_eff_frac=$(device_mask_eff "$2")") || exit 2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *=*) pairs+=("$1"); shift ;;
    *) echo "probe_band.sh: '$1' is not NAME=VALUE" >&2; usage ;;
  esac
done
for bin in bench/bench_stack bench/bench_llm_runs epochcast; do
  [ -x "$build/$bin" ] || { echo "probe_band.sh: $build/$bin is missing (build the project first, or --build DIR)" >&2; exit 2; }
done
# each pair checked against models/constants.csv (the name must exist, the value be a number)
# before anything is written, then set in the copy
constants=$(python3 - models/constants.csv "${pairs[@]+"${pairs[@]}"}" <<'PY'
import csv, io, math, sys
path, pairs = sys.argv[1], sys.argv[2:]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
col = rows[0].index("value")
names = {r[0]: i for i, r in enumerate(rows) if i > 0 and r}
for pair in pairs:
    name, value = pair.split("=", 1)
    if name not in names:
        sys.exit("probe_band.sh: '%s' is not a name of models/constants.csv" % name)
    try:
        ok = math.isfinite(float(value))
    except ValueError:
        ok = False
    if not ok:
        sys.exit("probe_band.sh: %s: '%s' is not a number" % (name, value))
    print("%s: %s -> %s (models/constants.csv line %d)" % (name, rows[names[name]][col], value, names[name] + 1),
          file=sys.stderr)
    rows[names[name]][col] = value
buf = io.StringIO()
csv.writer(buf, lineterminator="\n").writerows(rows)
sys.stdout.write(buf.getvalue())
PY
)
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/probe_band.XXXXXX")
mkdir -p "$out"
rm -rf "$out/models"
cp -r models "$out/models"
printf '%s\n' "$constants" > "$out/models/constants.csv"
export EPOCHCAST_MODELS="$out/models"
bash bench/arch_fold.sh none "$build" "$out" > /dev/null
cp "$out/profile_no_none.csv" "$out/models/profile.csv"
cp "$out/llm_no_none.md" "$out/llm_validation.md"  # the Hopper fold, as the shipped fit (first columns) predicts it
"$build/bench/bench_llm_runs" --models "$out/models" -o "$out/llm_validation.md" > /dev/null
folds=()
for a in ampere turing volta ada blackwell; do
  echo "fold $a ..." >&2
  bash bench/arch_fold.sh "$a" "$build" "$out" > /dev/null
  folds+=(--fold "$a" "$out")
done
grep -E "^error_log_sd" "$out/models/profile.csv" | cut -d, -f1,3
python3 bench/coverage_scan.py "$out/models" --hopper "$out/llm_validation.md" "${folds[@]}"
