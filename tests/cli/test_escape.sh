#!/usr/bin/env bash
# test_escape.sh: every command's error message shows the control characters of a value it
# echoes as \xNN (lua/cli_message.c), so an argument cannot drive the terminal: plan, compare,
# max-batch, optimize and model-info as predict, sweep and validate do (issue 20's defect 8
# covered predict and sweep; these five printed ESC, BEL, CR, DEL raw).  For each command and
# each kind of message (a usage error, an unknown option, the library's message on a bad
# value): a non-zero exit, no raw control byte on stdout or on stderr, the value shown escaped.
#   bash tests/cli/test_escape.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_escape.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | head -20 | sed 's/^/     /'; }

# ESC (a colour code), BEL, backspace, vertical tab, CR, DEL: none may reach the terminal
X=$'\e[31mred\a\b\v\r\x7f'
# raw control bytes other than tab and line feed in a file (grep -P where it works, else od)
has_raw() {
  if printf 'a\x1bb\n' | grep -qP '[\x00-\x08\x0b-\x1f\x7f]' 2>/dev/null; then
    LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$1"
  else
    od -An -tu1 -v "$1" | tr -s ' ' '\n' | awk '$1 != "" && ($1 < 9 || ($1 > 10 && $1 < 32) || $1 == 127) { f = 1 } END { exit !f }'
  fi
}

# refused NAME ARGS...: the command exits non-zero, prints no raw control byte, shows \x1b
refused() {
  local name=$1; shift
  timeout 60 "$EC" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local shown
  shown=$(cat -v "$tmp/err" "$tmp/out")
  if [ $rc -eq 0 ] || [ $rc -ge 124 ]; then
    bad "$name: exits 1 or 2" "rc=$rc $shown"
  elif has_raw "$tmp/out" || has_raw "$tmp/err"; then
    bad "$name: no raw control byte on stdout or stderr" "rc=$rc $shown"
  elif ! grep -qF '\x1b[31mred\x07\x08\x0b\x0d\x7f' "$tmp/err"; then
    bad "$name: the value shown escaped on stderr" "rc=$rc $shown"
  else
    ok "$name"
  fi
}

P="model=bert-base gpu=t4 batch_per_gpu=16 seq_len=128"
# the check itself must be able to fail: a raw ESC is found
printf 'epochcast: \e[31m\n' > "$tmp/raw"
if has_raw "$tmp/raw"; then ok "has_raw finds a raw ESC"; else bad "has_raw finds a raw ESC"; fi

refused "plan: a word without '='" plan $P "$X"
refused "plan: an unknown option" plan $P "--$X"
refused "plan: the library's message on a bad value" plan $P precision="$X"
refused "plan: a bad axis value" plan $P batch_per_gpu=8,"$X"
refused "compare: a word without '='" compare $P -- "$X"
refused "compare: an unknown option" compare $P "--$X" -- batch_per_gpu=32
refused "compare: the library's message on A's value" compare $P gpu="$X" -- batch_per_gpu=32
refused "compare: the library's message on B's value" compare $P -- gpu="$X"
refused "max-batch: an unknown option" max-batch "--$X" $P
refused "max-batch: --limit's value" max-batch --limit "$X" $P
refused "max-batch: the library's message on a bad value" max-batch model=bert-base gpu="$X"
refused "optimize: a word without '='" optimize $P "$X"
refused "optimize: an unknown option" optimize "--$X" $P
refused "optimize: the library's message on a bad value" optimize model=bert-base gpu="$X" num_gpus=8
refused "model-info: a word without '='" model-info "$X"
refused "model-info: the library's message on a bad model" model-info model="bert$X"
# the commands that already escaped stay so
refused "predict: the library's message on a bad model" predict model="bert$X" gpu=t4 batch_per_gpu=8
refused "sweep: the library's message on a bad value" sweep model=bert-base gpu="$X" batch_per_gpu=8,16

# a message longer than the 4 KiB buffer is shown whole, its end escaped too
long=$(head -c 6000 /dev/zero | tr '\0' a)
timeout 60 "$EC" plan $P "x$long$X" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -qF "x$long"'\x1b[31mred' "$tmp/err" && ! has_raw "$tmp/err"; then
  ok "a 6000-character value is echoed whole and escaped"
else
  bad "a 6000-character value is echoed whole and escaped" "rc=$rc $(head -c 300 "$tmp/err" | cat -v)"
fi

echo "$((n - fails))/$n passed"
[ $fails -eq 0 ]
