# harness.sh: the helpers every tests/cli/test_*.sh shares; a script sources it right after it sets
# EC (the epochcast binary, its first argument):   . "$(dirname "$0")/lib/harness.sh"
# It provides the counters fails and n (both 0), ok NAME and bad NAME [DETAIL] (print one ok/FAIL
# line and count it; DETAIL is shown indented), check NAME COND [DETAIL] (eval COND), expect and
# lacks (run $EC and check its exit status and output), col (a column of `predict --csv`'s row),
# and harness_tmp (a temporary folder in $tmp, removed on exit).  Each script still prints its own
# summary and exits [ "$fails" -eq 0 ].
# Not named test_*.sh, so the ctest glob in tests/CMakeLists.txt does not register it.
fails=0 n=0
ok()  { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/     /'; }
check() { if eval "$2"; then ok "$1"; else bad "$1" "${3:-}"; fi; }
harness_tmp() { tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; }
# col NAME CSV: the value of column NAME in the one data row of CSV text, as `predict --csv` prints
# it (no quoted commas before it: the config keys come first).  A script may define its own.
col() {
  awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } NR == 2 { print $c }' <<<"$2"
}

# expect NAME STATUS PATTERN -- ARGS...: run epochcast ARGS, check the exit status and that
# stdout+stderr contain PATTERN (fixed string; "" for any).
expect() {
  local name=$1 want=$2 pattern=$3; shift 4
  local out rc
  out=$("$EC" "$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$name" "exit $rc, wanted $want: $out"; return; fi
  if [ -n "$pattern" ] && ! grep -qF -- "$pattern" <<<"$out"; then bad "$name" "output lacks '$pattern': $out"; return; fi
  ok "$name"
}
# lacks NAME PATTERN -- ARGS...: exit 0 and no PATTERN (fixed string) in the output
lacks() {
  local name=$1 pattern=$2; shift 3
  local out rc
  out=$("$EC" "$@" 2>&1); rc=$?
  if [ "$rc" -ne 0 ] || grep -qF -- "$pattern" <<<"$out"; then bad "$name" "exit $rc, or '$pattern' in: $out"; return; fi
  ok "$name"
}
