#!/usr/bin/env python3
"""The outputs README.md and docs/ quote, against what the CLI prints today.

    python3 tools/check_doc_outputs.py [--cli build/epochcast] [--doc FILE ...]          # check
    python3 tools/check_doc_outputs.py [--cli build/epochcast] [--doc FILE ...] --write  # refresh

A page quotes the CLI in two ways, and both are checked:

  - a ```console block: `$ ./build/epochcast ...` (continued with a trailing backslash), then
    the lines it prints. Each quoted line must be the output's line (trailing blanks aside), in
    order; a line `...` stands for any number of lines left out. --write replaces the lines of
    a block that leaves nothing out with what the command prints now (never with the message
    of a command that exits 1: a refusal is quoted by hand).
  - a ```sh block of `./build/epochcast` commands followed by the marker line
        <!-- outputs quoted below: tools/check_doc_outputs.py -->
    and a paragraph that quotes their results in prose. Every number of that paragraph (with
    its thousands commas dropped) must be a number the commands print, and every `code span`
    with a digit and no `=` must appear in their output (runs of blanks as one; `...` inside
    a span stands for any text left out). Code spans
    with `=` are config words, not output, and are skipped with the numbers inside them.

The commands run in a scratch folder that links the repository's top-level entries, so files
they write (plan.csv, plan.png) land there and relative paths (scenarios/...) still resolve.
Exit 1 names each stale quote with its page and line and the command that disagrees; exit 2 on
a usage error or a quoted command that crashes (status above 1). Under ctest as lint_doc_outputs (tests/CMakeLists.txt).
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

MARKER = "<!-- outputs quoted below: tools/check_doc_outputs.py -->"
CLI_WORD = "./build/epochcast"
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
CODE_SPAN = re.compile(r"`([^`]+)`")


class Block:
    """One fenced block of a page: where it starts, its language, its lines."""

    def __init__(self, start, lang, lines, end):
        self.start, self.lang, self.lines, self.end = start, lang, lines, end


def fenced_blocks(lines):
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        yield Block(i, m.group(1), lines[i + 1:j], j)
        i = j + 1


def join_commands(lines, prompt=""):
    """(line index, argv) of each CLI command (a line `prompt` + ./build/epochcast), joined over
    backslashes; argv[0] is ./build/epochcast."""
    out, i = [], 0
    while i < len(lines):
        text = lines[i]
        if not text.startswith(prompt + CLI_WORD):
            i += 1
            continue
        first, text = i, text[len(prompt):]
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i].strip()
        out.append((first, shlex.split(text, comments=True)))
        i += 1
    return out


def fail(message):
    """A usage error or a quoted command that cannot run: exit 2, apart from stale quotes' 1."""
    print(f"check_doc_outputs: {message}", file=sys.stderr)
    sys.exit(2)


def run(cli, argv, cwd, where):
    """(stdout and stderr, exit status) of one quoted command."""
    try:
        p = subprocess.run([cli] + argv[1:], cwd=cwd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        fail(f"{where}: `{' '.join(argv)}` ran past 600 s")
    # A status above 1 is a crash or a signal; 1 is an answer a page may quote (a refusal's
    # message, plan's "none meets"), but --write never puts one in a page.
    if p.returncode > 1 or p.returncode < 0:
        fail(f"{where}: `{' '.join(argv)}` exited {p.returncode}:\n{p.stderr.strip()}")
    return p.stdout + p.stderr, p.returncode


def scratch_dir(root):
    d = tempfile.mkdtemp(prefix="ec-doc-outputs-")
    for name in os.listdir(root):
        if not name.startswith("."):
            os.symlink(os.path.join(root, name), os.path.join(d, name))
    return d


def check_console(doc, block, cli, cwd, write):
    """Problems of one console block; with write, its new lines (or None when it cannot)."""
    problems, new_lines, copied = [], [], 0  # copied: the block's lines new_lines holds so far
    for first, argv in join_commands(block.lines, "$ "):
        # its output: the lines after it up to the next prompt (any command) or the block's end
        k = first + 1
        while k < len(block.lines) and block.lines[k - 1].rstrip().endswith("\\"):
            k += 1
        stop = next((j for j in range(k, len(block.lines)) if block.lines[j].startswith("$ ")), len(block.lines))
        quoted = block.lines[k:stop]
        where = f"{doc}:{block.start + 2 + first}"
        text, status = run(cli, argv, cwd, where)
        got = [x.rstrip() for x in text.rstrip("\n").split("\n")]
        rewritable = "..." not in quoted and status == 0
        new_lines += block.lines[copied:k] + (got if rewritable else quoted)
        copied = stop
        pos, gap = 0, False
        for q, line in enumerate(quoted):
            if line.strip() == "...":
                gap = True
                continue
            want = line.rstrip()
            hit = next((p for p in range(pos, len(got)) if got[p] == want), None) if gap else \
                (pos if pos < len(got) and got[pos] == want else None)
            if hit is None:
                near = got[pos] if pos < len(got) and not gap else "(no such line)"
                problems.append(f"{doc}:{block.start + 2 + k + q}: quoted `{want.strip()}`, "
                                f"the CLI prints `{near.strip()}` ({' '.join(argv)})")
                break
            pos, gap = hit + 1, False
    return problems, (new_lines + block.lines[copied:] if write else None)


def prose_after(lines, start):
    """The paragraph after the marker line at `start`, as (first line index, text)."""
    k = start + 1
    while k < len(lines) and not lines[k].strip():
        k += 1
    first, para = k, []
    while k < len(lines) and lines[k].strip() and not lines[k].startswith("```"):
        para.append(lines[k])
        k += 1
    return first, " ".join(para)


def quoted_figures(text):
    """The numbers and output code spans of a paragraph (config code spans dropped)."""
    spans, plain = [], text
    for span in CODE_SPAN.findall(text):
        plain = plain.replace(f"`{span}`", " ")
        if "=" not in span and re.search(r"\d", span):
            spans.append(" ".join(span.split()))
    return numbers_in(plain), spans


def numbers_in(text):
    """The numbers of a text, thousands commas dropped (`1,963` is 1963)."""
    return [n.replace(",", "") for n in NUMBER.findall(text)]


def span_printed(span, flat):
    """Whether a quoted code span is in the output; `...` inside it stands for any text."""
    pattern = ".*?".join(re.escape(part.strip()) for part in span.split("..."))
    return re.search(pattern, flat) is not None


def check_prose(doc, lines, block, cli, cwd):
    first, text = prose_after(lines, block.end + 1)
    cmds = join_commands(block.lines)
    joined = "\n".join(run(cli, argv, cwd, f"{doc}:{block.start + 2 + i}")[0] for i, argv in cmds)
    printed = set(numbers_in(joined))
    flat = " ".join(joined.split())
    numbers, spans = quoted_figures(text)
    where = f"{doc}:{first + 1}"
    commands = "; ".join(" ".join(argv) for _, argv in cmds)
    problems = [f"{where}: the paragraph quotes {n}, which no command of the block above prints ({commands})"
                for n in numbers if n not in printed]
    problems += [f"{where}: the paragraph quotes `{s}`, which the block above does not print ({commands})"
                 for s in spans if not span_printed(s, flat)]
    return problems


def check_page(path, doc, cli, cwd, write):
    """Problems and the count of quoted outputs of the page at `path` (`doc`: its name in messages)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    problems, checked, edits = [], 0, []
    for block in fenced_blocks(lines):
        marked = block.end + 1 < len(lines) and lines[block.end + 1].strip() == MARKER
        if block.lang == "console" and join_commands(block.lines, "$ "):
            found, new_lines = check_console(doc, block, cli, cwd, write)
            problems += found
            checked += 1
            if new_lines is not None and new_lines != block.lines:
                edits.append((block, new_lines))
        elif block.lang == "sh" and marked and join_commands(block.lines):
            problems += check_prose(doc, lines, block, cli, cwd)
            checked += 1
        elif marked:
            problems.append(f"{doc}:{block.end + 2}: the marker follows a ```{block.lang} block; it must "
                            f"follow a ```sh block of {CLI_WORD} commands")
    for block, new_lines in reversed(edits):
        lines[block.start + 1:block.end] = new_lines
    if edits:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(path + ".tmp", path)
    return problems, checked


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description="check (or --write) the CLI outputs README.md and docs/ quote")
    ap.add_argument("--cli", default=os.path.join(root, "build", "epochcast"), help="the epochcast binary")
    ap.add_argument("--doc", action="append", help="a page (repeatable; default README.md and docs/*.md)")
    ap.add_argument("--write", action="store_true",
                    help="rewrite console blocks that leave nothing out with today's output")
    args = ap.parse_args()
    if not os.access(args.cli, os.X_OK):
        fail(f"no executable CLI at {args.cli} (--cli)")
    docs = args.doc or [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    for doc in docs:
        if not os.path.isfile(doc):
            fail(f"no page {doc} (--doc)")
    cwd = scratch_dir(root)
    try:
        problems, checked = [], 0
        for doc in docs:
            name = os.path.relpath(doc, root) if os.path.abspath(doc).startswith(root + os.sep) else doc
            found, n = check_page(doc, name, os.path.abspath(args.cli), cwd, args.write)
            problems += found
            checked += n
    finally:
        shutil.rmtree(cwd)
    for p in problems:
        print(p)
    print(f"check_doc_outputs: {checked} quoted outputs checked, {len(problems)} stale")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
