#!/usr/bin/env bash
# test_doc_outputs.sh: tools/check_doc_outputs.py, the check that README.md and docs/ quote what
# the CLI prints (ctest lint_doc_outputs runs it on the real pages).  On made-up pages:
#   - a console block whose quoted line the CLI no longer prints fails, naming page, line and command;
#   - --write puts today's output in it, after which the check passes;
#   - a quoted prose figure and a code span no command of the block prints fail; `...` in a span
#     and config spans (with `=`) are not taken as output;
#   - a refused command's quote is compared with its message and never rewritten;
#   - the marker anywhere but after a sh block of CLI commands is named;
#   - no CLI at --cli: a usage error.
#   bash tests/cli/test_doc_outputs.sh path/to/epochcast      (cwd tests/, EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_doc_outputs.sh path/to/epochcast}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp
CHECK="$(cd "$(dirname "$0")/../.." && pwd)/tools/check_doc_outputs.py"
PY=$(command -v python3) || { echo "skipped: no python3"; exit 0; }
run_check() { "$PY" "$CHECK" --cli "$EC" --doc "$tmp/page.md" "$@" 2>&1; }
CMD="./build/epochcast predict model=bert-base gpu=t4 precision=amp_fp16 batch_per_gpu=16 seq_len=128"

# ---- a console block ----------------------------------------------------------------------------
printf '# page\n\n```console\n$ %s\nbert-base (lm task) on t4 x 1, amp_fp16\n  step time   1.000 ms\n```\n' "$CMD" >"$tmp/page.md"
out=$(run_check); rc=$?
check "stale console block: exit 1 naming page line 5 and the command" \
  '[ $rc -eq 1 ] && grep -q "page.md:5: quoted .bert-base (lm task)" <<<"$out" && grep -qF "predict model=bert-base" <<<"$out"' "$out"
out=$(run_check --write); rc=$?
fresh=$(cd "$tmp" && "$EC" predict model=bert-base gpu=t4 precision=amp_fp16 batch_per_gpu=16 seq_len=128 2>&1)
block=$(sed -n '5,/^```$/p' "$tmp/page.md" | sed '$d')
check "--write: the block holds what the command prints" '[ "$block" = "$fresh" ]' "$block"
out=$(run_check); rc=$?
check "after --write the check passes" '[ $rc -eq 0 ] && grep -q "1 quoted outputs checked, 0 stale" <<<"$out"' "$out"
# a block that also quotes another program: the CLI's output ends at the next prompt, and --write
# leaves the other command and its lines as they were
printf '```console\n$ %s\nstale\n$ lua5.4 -v\nLua 5.4 as quoted\n```\n' "$CMD" >"$tmp/page.md"
out=$(run_check --write); rc=$?
check "a console block with another program: --write rewrites the CLI's part only" \
  '[ "$(sed -n "3,/^\\$ lua5.4/p" "$tmp/page.md" | sed "\$d")" = "$fresh" ] && grep -qxF "Lua 5.4 as quoted" "$tmp/page.md" \
   && [ "$(run_check >/dev/null; echo $?)" -eq 0 ]' "$(cat "$tmp/page.md")"
# a block that leaves lines out (...) is checked line by line in order, never rewritten
step=$(grep "step time" <<<"$fresh")
printf '```console\n$ %s\n...\n%s\n...\n```\n' "$CMD" "$step" >"$tmp/page.md"
out=$(run_check); rc=$?
check "a block with ... passes when its lines are printed in order" '[ $rc -eq 0 ]' "$out"
printf '```console\n$ %s\n...\n  step time   1.000 ms\n```\n' "$CMD" >"$tmp/page.md"
cp "$tmp/page.md" "$tmp/before.md"
out=$(run_check --write); rc=$?
check "a block with ... and a stale line fails and is left as it was" \
  '[ $rc -eq 1 ] && cmp -s "$tmp/page.md" "$tmp/before.md"' "$out"

# ---- a sh block with a marked paragraph ---------------------------------------------------------
samples=$(awk '/samples\/s/ { print $2 }' <<<"$fresh")
marker='<!-- outputs quoted below: tools/check_doc_outputs.py -->'
printf '```sh\n%s\n```\n%s\n\nIt trains %s samples/s, `peak ... fits: yes` with `batch_per_gpu=16` (seq 128).\n' \
  "$CMD" "$marker" "$samples" >"$tmp/page.md"
out=$(run_check); rc=$?
check "a marked paragraph quoting printed figures passes (config spans and ... skipped)" '[ $rc -eq 0 ]' "$out"
printf '```sh\n%s\n```\n%s\n\nIt trains 12345.6 samples/s and prints `peak 99.99 of 15.00`.\n' "$CMD" "$marker" >"$tmp/page.md"
out=$(run_check); rc=$?
check "a figure and a code span nobody prints: exit 1, both named with page and line" \
  '[ $rc -eq 1 ] && grep -q "page.md:6: the paragraph quotes 12345.6" <<<"$out" && grep -q "quotes .peak 99.99 of 15.00." <<<"$out"' "$out"
printf '```text\nx\n```\n%s\n\nsome 1.5 text\n' "$marker" >"$tmp/page.md"
out=$(run_check); rc=$?
check "the marker after a block that is not sh: exit 1, named" '[ $rc -eq 1 ] && grep -q "must follow" <<<"$out"' "$out"

# ---- errors ---------------------------------------------------------------------------------------
printf '```console\n$ ./build/epochcast predict model=no-such-net gpu=t4 batch_per_gpu=1\nx\n```\n' >"$tmp/page.md"
cp "$tmp/page.md" "$tmp/before.md"
out=$(run_check --write); rc=$?
check "a refused command's quote is compared with its message; --write leaves it as it was" \
  '[ $rc -eq 1 ] && grep -q "page.md:3: quoted .x., the CLI prints .epochcast: unknown model" <<<"$out" && cmp -s "$tmp/page.md" "$tmp/before.md"' "$out"
printf '```sh\nls -l\n```\n%s\n\nsome 1.5 text\n' "$marker" >"$tmp/page.md"
out=$(run_check); rc=$?
check "the marker after a sh block without the CLI: exit 1, named" '[ $rc -eq 1 ] && grep -q "page.md:4: the marker follows" <<<"$out"' "$out"
out=$("$PY" "$CHECK" --cli "$tmp/none" --doc "$tmp/page.md" 2>&1); rc=$?
check "no CLI at --cli: exit 2 naming it" '[ $rc -ne 0 ] && [ $rc -ne 1 ] && grep -qF "$tmp/none" <<<"$out"' "$out"

echo "test_doc_outputs: $((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
