#!/usr/bin/env bash
# test_hostile_budgets.sh: issue 42, defects 1, 2, 11 and 12: a scenario's budgets hold until
# the process ends (finalizers while the state closes, worker threads, gnuplot) and the
# sandbox's leftovers are closed.  Each check failed on the CLI before the fix; each run is
# bounded by `timeout -k` and small budgets, so the whole file takes seconds.  Peak memory is
# measured with /usr/bin/time (package `time`), skipped under the sanitizers.  Writes only
# under a fresh temporary folder; kills only the processes it started.
#   bash tests/cli/test_hostile_budgets.sh path/to/epochcast   (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_hostile_budgets.sh path/to/epochcast}
EC=$(cd "$(dirname "$EC")" && pwd)/$(basename "$EC")
tmp=$(mktemp -d)
gp_pids=
# kill what the stand-in gnuplot of section 11 started (the CLI before the fix left it running)
gp_kill() { local p; for p in $gp_pids; do kill -9 "$p" 2>/dev/null; done; gp_pids=; }
cleanup() {
  gp_kill
  chmod -R u+rwx "$tmp" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/lib/harness.sh"
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | head -20 | sed 's/^/     /'; }
# a sanitizer's report in $out (the sanitizer builds run this file too)
clean() { ! grep -qE "runtime error|AddressSanitizer|LeakSanitizer|ThreadSanitizer" <<<"$out"; }
sanitized() { [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; }

# timed SECS CMD...: stdout+stderr in $out, status in $rc, wall seconds (tenths) in $took;
# SIGTERM at SECS, SIGKILL a second later
timed() {
  local secs=$1; shift
  local t0; t0=$(date +%s%N)
  out=$(timeout -k 1 "$secs" "$@" 2>&1); rc=$?
  took=$((($(date +%s%N) - t0) / 100000000))
}
# peak KIB CMD...: the command's peak resident KiB in $kib (0 under a sanitizer), status in $rc
peak() {
  if [ -x /usr/bin/time ] && ! sanitized; then
    timeout -k 1 60 /usr/bin/time -f '%M' -o "$tmp/peak" "$@" >"$tmp/peak.out" 2>&1; rc=$?
    kib=$(tail -1 "$tmp/peak")
  else
    timeout -k 1 60 "$@" >"$tmp/peak.out" 2>&1; rc=$?; kib=0
  fi
  out=$(cat "$tmp/peak.out")
}

# ---- 1. finalizers run under both budgets, and a signal ends them --------------------------
# ThreadSanitizer holds an asynchronous signal until the thread makes an intercepted call,
# which a loop of pure VM code never does: under TSan the signal checks below cannot hold.
if [ -n "${TSAN_OPTIONS:-}" ]; then
  echo "skip 1: signals under ThreadSanitizer wait for an intercepted call (the loop makes none)"
else
  printf 'setmetatable({}, {__gc = function() while true do end end})\n' > "$tmp/gc_loop.lua"
  timed 6 "$EC" run --sandbox --max-seconds 1 "$tmp/gc_loop.lua"
  check "1: a looping __gc stops at the time budget (--max-seconds 1)" \
    '[ $rc -eq 1 ] && [ $took -le 25 ] && grep -q "time budget" <<<"$out" && grep -q "finalizers" <<<"$out" && clean' \
    "rc=$rc took=${took}/10 s $out"
  # the same under SIGTERM with no time budget: one signal ends it
  "$EC" run --max-seconds 0 "$tmp/gc_loop.lua" > "$tmp/term.out" 2>&1 & pid=$!
  sleep 1
  t0=$SECONDS
  kill -TERM $pid 2>/dev/null
  for i in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then kill -9 $pid 2>/dev/null; fi
  wait $pid; rc=$?; out=$(cat "$tmp/term.out")
  check "1: one SIGTERM while a __gc loops ends the run (exit 143)" '[ $rc -eq 143 ] && [ $((SECONDS - t0)) -le 3 ] && clean' \
    "rc=$rc $out"
  # a __gc that loops while the script runs (collectgarbage): the signal's 2 s grace ends it
  printf 'setmetatable({}, {__gc = function() while true do end end})\ncollectgarbage()\nprint("after")\n' > "$tmp/gc_mid.lua"
  "$EC" run --max-seconds 0 "$tmp/gc_mid.lua" > "$tmp/mid.out" 2>&1 & pid=$!
  sleep 0.5
  t0=$SECONDS
  kill -TERM $pid 2>/dev/null
  for i in $(seq 1 60); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then kill -9 $pid 2>/dev/null; fi
  wait $pid; rc=$?; out=$(cat "$tmp/mid.out")
  check "1: one SIGTERM while a __gc loops mid-script ends the run after the 2 s grace (exit 143)" \
    '[ $rc -eq 143 ] && [ $((SECONDS - t0)) -le 4 ] && grep -q "grace" <<<"$out" && ! grep -q after <<<"$out" && clean' "rc=$rc $out"
fi
cat > "$tmp/gc_alloc.lua" <<'EOF'
setmetatable({}, {__gc = function()
  local t = {}
  for i = 1, 3e6 do t[i] = string.rep("x", 100) .. i end -- 400 MB and more when unbounded
end})
EOF
peak "$EC" run --max-seconds 20 --max-memory-mb 50 "$tmp/gc_alloc.lua"
check "1: an allocating __gc is held to --max-memory-mb 50 and said so" \
  '[ $rc -eq 1 ] && grep -q "finalizer" <<<"$out" && grep -q "max-memory-mb" <<<"$out" && [ "$kib" -lt 102400 ] && clean' \
  "rc=$rc peak ${kib} KiB $out"
# a plain script is not affected: its output comes out whole, exit 0
printf 'print("done")\nsetmetatable({}, {__gc = function() print("gc ran") end})\n' > "$tmp/gc_ok.lua"
timed 10 "$EC" run --max-seconds 5 --max-memory-mb 64 "$tmp/gc_ok.lua"
check "1: a well-behaved __gc still runs at the end" '[ $rc -eq 0 ] && [ "$out" = "done
gc ran" ]' "rc=$rc $out"

# ---- 2. worker threads allocate inside --max-memory-mb ------------------------------------
cat > "$tmp/wide.lua" <<'EOF'
local ec = require "epochcast"
local n, threads = tonumber(arg[1]), tonumber(arg[2])
local layers = {{"embedding", vocab = 32000, dim = 1024}}
for _ = 1, n do
  layers[#layers + 1] = {"residual", "save"}; layers[#layers + 1] = {"norm", "rms"}
  layers[#layers + 1] = {"attention", heads = 16, causal = true}; layers[#layers + 1] = {"residual", "add"}
  layers[#layers + 1] = {"mlp", ffn = 4096, act = "gelu"}
end
assert(ec.network{id = "wide", default_seq_len = 512, layers = layers, heads = {{task = "lm", kind = "causal_lm"}}})
local s = {}
for i = 1, 64 do s[i] = 8 * i end
local rows = assert(ec.sweep({model = "wide", gpu = "a100-sxm4-80gb"}, {{"seq_len", s}, {"batch_per_gpu", {1, 2, 4, 8}}},
                             {threads = threads, fields = {"step_s"}}))
print(#rows)
EOF
# 1,501 layers: one thread needs about 90 MB; sixteen held 343 MB under a 100 MiB budget (exit 0)
peak "$EC" run --max-seconds 30 --max-memory-mb 100 "$tmp/wide.lua" 300 16
check "2: a 16-thread sweep stops at --max-memory-mb 100, naming it" \
  '[ $rc -eq 1 ] && grep -q "max-memory-mb" <<<"$out" && [ "$kib" -lt 153600 ] && clean' "rc=$rc peak ${kib} KiB $out"
peak "$EC" run --max-seconds 30 --max-memory-mb 400 "$tmp/wide.lua" 100 8
check "2: ... while one that fits its budget runs on 8 threads" '[ $rc -eq 0 ] && [ "$out" = 256 ] && clean' \
  "rc=$rc peak ${kib} KiB $out"

# ---- 11. gnuplot dies with the run and leaves no folder -----------------------------------
# A stand-in gnuplot on PATH that writes into its work folder and then draws "forever".
mkdir -p "$tmp/bin" "$tmp/tmpdir" "$tmp/plot"
cat > "$tmp/bin/gnuplot" <<'EOF'
#!/bin/sh
head -c 5000000 /dev/zero > "$(dirname "$3")/junk"
sleep 30 &
echo "$$ $!" > "$GP_MARK"
wait
EOF
chmod +x "$tmp/bin/gnuplot"
cat > "$tmp/plot/p.lua" <<'EOF'
local ec = require "epochcast"
print(ec.plot{kind = "line", rows = {{batch_per_gpu = 1, step_s = 1}, {batch_per_gpu = 2, step_s = 2}},
              x = "batch_per_gpu", y = "step_s", path = "p.png"})
EOF
# live (not zombie) processes of process group $1
group_alive() { ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/' | grep -q .; }
gp() { # SIGNAL|- SECONDS: run p.lua with the stand-in under --max-seconds SECONDS; with a
       # signal, send it to epochcast once gnuplot runs (a watchdog kills it after 15 s)
  rm -f "$tmp/gp.pid"
  GP_MARK="$tmp/gp.pid" TMPDIR="$tmp/tmpdir" PATH="$tmp/bin:$PATH" \
    env -C "$tmp/plot" "$EC" run --max-seconds "$2" p.lua > "$tmp/gp.out" 2>&1 & pid=$!
  (sleep 15; kill -9 $pid 2>/dev/null) & local dog=$!
  if [ "$1" != - ]; then
    for i in $(seq 1 100); do [ -s "$tmp/gp.pid" ] && break; sleep 0.1; done
    kill "-$1" $pid
  fi
  local t0=$SECONDS
  wait $pid; rc=$?; took=$((SECONDS - t0)); out=$(cat "$tmp/gp.out")
  kill $dog 2>/dev/null; wait $dog 2>/dev/null
  gp_pids=$(cat "$tmp/gp.pid" 2>/dev/null)
  sleep 0.2
  alive=0; [ -n "$gp_pids" ] && group_alive "${gp_pids%% *}" && alive=1
}
gp - 1
check "11: the time budget kills gnuplot's process group and removes its folder" \
  '[ $rc -eq 1 ] && [ $alive -eq 0 ] && [ "$(ls -A "$tmp/tmpdir")" = "" ] && [ ! -e "$tmp/plot/p.png" ] && clean' \
  "rc=$rc took=${took}s gnuplot alive=$alive left: $(ls -A "$tmp/tmpdir") $out"
gp_kill
rm -rf "${tmp:?}/tmpdir/"*
gp TERM 0
check "11: SIGTERM kills gnuplot's process group and removes its folder (exit 143)" \
  '[ $rc -eq 143 ] && [ $alive -eq 0 ] && [ "$(ls -A "$tmp/tmpdir")" = "" ] && clean' \
  "rc=$rc gnuplot alive=$alive left: $(ls -A "$tmp/tmpdir") $out"
gp_kill

# ---- 12. the sandbox's leftovers ----------------------------------------------------------
mkdir -p "$tmp/sb/data"
printf 'SECRET=42\n' > "$tmp/secret.txt"
printf 'tokens,count\n40,3\n' > "$tmp/sb/data/ok.csv"
ln -s "$tmp/secret.txt" "$tmp/sb/data/link.txt"
mkdir -p "$tmp/sb/ck"
ln -s "$tmp/secret.txt" "$tmp/sb/ck/config.json"
cat > "$tmp/sb/s.lua" <<'EOF'
local ec = require "epochcast"
local secret = arg[1]
local function try(name, f) local ok, v = pcall(f); print(name, ok and v ~= nil and "allowed" or "refused") end
try("io.tmpfile", function() return io.tmpfile end)
try("os.setlocale", function() return os.setlocale end)
try("io.open outside", function() return io.open(secret) end)
try("io.open through a link", function() return io.open("data/link.txt") end)
try("io.lines outside", function() return io.lines(secret) end)
try("io.input outside", function() return io.input(secret) end)
try("ec.load_runs outside", function() return ec.load_runs(secret) end)
try("model= outside", function() return ec.predict{model = secret, gpu = "t4", batch_per_gpu = 1} end)
try("model= a folder whose config.json links out", function() return ec.predict{model = "./ck", gpu = "t4", batch_per_gpu = 1} end)
try("require outside", function()
  package.path = secret:match("^(.*)/") .. "/?.txt;" .. package.path
  return require("secret")
end)
local f = io.open("data/ok.csv")
print("io.open inside", f ~= nil and f:read("l") or "refused")
EOF
timed 20 env -C "$tmp/sb" "$EC" run --sandbox s.lua "$tmp/secret.txt"
check "12: --sandbox has no io.tmpfile, no os.setlocale, and reads only below the scenario's folder" \
  '[ $rc -eq 0 ] && ! grep -q "allowed" <<<"$out" && grep -q "io.open inside	tokens,count" <<<"$out" && ! grep -q "SECRET" <<<"$out" && clean' \
  "rc=$rc $out"
printf 'io.open(arg[1])\n' > "$tmp/sb/why.lua"
timed 10 "$EC" run --sandbox "$tmp/sb/why.lua" "$tmp/secret.txt"
check "12: ... and says why" '[ $rc -eq 1 ] && grep -q "not below the scenario" <<<"$out"' "rc=$rc $out"
# a scenario on standard input runs sandboxed
timed 10 "$EC" run - <<<'print("os.execute", os.execute ~= nil)'
check "12: 'run -' runs in the sandbox, with a note" '[ $rc -eq 0 ] && grep -q "os.execute	false" <<<"$out" && grep -q "standard input" <<<"$out"' \
  "rc=$rc $out"
timed 10 "$EC" run --no-sandbox - <<<'print("os.execute", os.execute ~= nil)'
check "12: ... unless --no-sandbox trusts it" '[ $rc -eq 0 ] && grep -q "os.execute	true" <<<"$out"' "rc=$rc $out"
# a scenario others may change
printf 'print("os.execute", os.execute ~= nil)\n' > "$tmp/gw.lua"
chmod 664 "$tmp/gw.lua"
timed 10 "$EC" run "$tmp/gw.lua"
check "12: a group-writable scenario runs sandboxed, named in the note" \
  '[ $rc -eq 0 ] && grep -q "os.execute	false" <<<"$out" && grep -q "gw.lua" <<<"$out" && grep -q "group-writable" <<<"$out"' "rc=$rc $out"
timed 10 "$EC" run --no-sandbox "$tmp/gw.lua"
check "12: ... and --no-sandbox refuses it, naming the file" \
  '[ $rc -eq 1 ] && grep -q "gw.lua" <<<"$out" && ! grep -q "os.execute" <<<"$out"' "rc=$rc $out"
chmod 646 "$tmp/gw.lua"
timed 10 "$EC" run --no-sandbox "$tmp/gw.lua"
check "12: ... as it refuses a world-writable one" '[ $rc -eq 1 ] && grep -q "world-writable" <<<"$out"' "rc=$rc $out"
chmod 644 "$tmp/gw.lua"
timed 10 "$EC" run "$tmp/gw.lua"
check "12: the user's own 0644 scenario keeps every library" '[ $rc -eq 0 ] && grep -q "os.execute	true" <<<"$out"' "rc=$rc $out"

echo "$((n - fails))/$n passed"
[ "$fails" -eq 0 ]
