#!/usr/bin/python3
"""memory_report.py: how well epochcast predicts public peak-memory and out-of-memory runs.

Input: a run file of peak_bytes (with memory_reading nvml / reserved / allocated) and oom rows,
by default bench/data/memory_runs.csv (made by bench/data/memory/make_memory_runs.py; its
sources in bench/data/memory/README.md).  It runs `epochcast validate RUNS -o PER_RUN.csv`,
joins each prediction with its row (the per-run file's metric column does not name the
reading) and prints Markdown: MAPE and bias of the memory rows by reading kind, GPU, model
family and source group (the `split` column: each group is held out, nothing is fitted here),
and the out-of-memory rows as caught / missed -- an oom row is never averaged into a MAPE.
Rows whose source ran a setting epochcast has no key for (note_unexpressed) are counted in
"all" and also reported apart.  Standard library only.

    /usr/bin/python3 bench/memory_report.py [--epochcast BIN] [--profile P] [RUNS.csv] > OUT.md
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="?", default=os.path.join(ROOT, "bench", "data", "memory_runs.csv"))
    ap.add_argument("--epochcast", default=None, help="the epochcast binary (default: build-h/ or build/)")
    ap.add_argument("--profile", default=None, help="passed to epochcast validate --profile")
    return ap.parse_args(argv)


def find_binary(given):
    if given:
        return given
    for d in ("build-h", "build"):
        p = os.path.join(ROOT, d, "epochcast")
        if os.access(p, os.X_OK):
            return p
    sys.exit("memory_report.py: no epochcast binary in build-h/ or build/: pass --epochcast BIN")


def families(binary):
    """preset id -> family, from `epochcast models`."""
    out = subprocess.run([binary, "models"], capture_output=True, text=True, check=True).stdout
    fam = {}
    for line in out.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2 and not line.startswith("model="):
            fam[parts[0]] = parts[1]
    return fam


def family_of(model, fam, runs_dir):
    if model in fam:
        return fam[model]
    path = model if os.path.isabs(model) else os.path.join(runs_dir, model)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("model_type", "?")
    except (OSError, ValueError):
        return "?"


def validate(binary, runs, profile):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "per_run.csv")
        cmd = [binary, "validate", runs, "-o", out]
        if profile:
            cmd += ["--profile", profile]
        # bytes, not text: validate's per-model summary can print a garbled label for model paths
        # over 40 bytes (lua/epochcast.c intern() returns a popped long string); only -o is read here
        r = subprocess.run(cmd, capture_output=True)
        if r.returncode != 0:
            sys.exit(f"memory_report.py: {' '.join(cmd)} failed:\n{r.stderr.decode(errors='replace')}")
        with open(out, newline="", encoding="utf-8") as f:
            return {row["id"]: row for row in csv.DictReader(f)}


def stats(errs):
    n = len(errs)
    if n == 0:
        return "0 | - | - | - |"
    mape = sum(abs(e) for e in errs) / n
    bias = sum(errs) / n
    w10 = 100.0 * sum(abs(e) <= 10 for e in errs) / n
    return f"{n} | {mape:.1f} | {bias:+.1f} | {w10:.0f} |"


def table(title, mem, key):
    groups = {}
    for r in mem:
        groups.setdefault(key(r), []).append(r)
    lines = [f"### {title}", "", f"| {title.split(' by ')[-1]} | n | MAPE % | bias % | within 10 % | "
             "n expressible | MAPE % expressible |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for k in sorted(groups):
        rs = groups[k]
        ex = [r["err"] for r in rs if not r["unexpressed"]]
        exs = f"{len(ex)} | {sum(abs(e) for e in ex) / len(ex):.1f} |" if ex else "0 | - |"
        lines.append(f"| {k} | {stats([r['err'] for r in rs])} {exs}")
    return lines + [""]


def main(argv):
    a = parse_args(argv)
    binary = find_binary(a.epochcast)
    runs = a.runs
    with open(runs, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    pred = validate(binary, runs, a.profile)
    fam = families(binary)
    runs_dir = os.path.dirname(os.path.abspath(runs))
    mem, oom = [], []
    for r in rows:
        p = pred.get(r["id"])
        if p is None:
            continue
        rec = {"id": r["id"], "gpu": r["gpu"], "split": r.get("split") or "(none)",
               "reading": r.get("memory_reading") or "nvml (unstated)",
               "stated": r.get("note_reading_stated", "") != "0",
               "family": family_of(r["model"], fam, runs_dir),
               "unexpressed": r.get("note_unexpressed", ""),
               "measured": float(r["value"]), "predicted": float(p["predicted"])}
        if r["metric"] == "oom":
            oom.append(rec)
        elif r["metric"] == "peak_bytes":
            rec["err"] = 100.0 * (rec["predicted"] - rec["measured"]) / rec["measured"]
            mem.append(rec)
    rel = os.path.relpath(runs, ROOT)
    cmd = f"/usr/bin/python3 bench/memory_report.py{' --profile ' + a.profile if a.profile else ''} {rel}"
    out = ["# Peak memory on public runs (issue 40)", "",
           f"Command: `{cmd} > bench/results/memory_public.md`", "",
           f"{len(rows)} rows of `{rel}` ({len(mem)} peak readings, {len(oom)} out-of-memory outcomes), "
           "each predicted by `epochcast validate` and compared with the reading its source names. "
           "Nothing is fitted to these rows: every source group is held out. Error = (predicted - measured) / "
           "measured. \"expressible\": rows whose source ran no setting that epochcast lacks a key for "
           "(the others name it in `note_unexpressed`: chunked cross-entropy, optimizer_in_bwd, "
           "per-op selective checkpointing, an evaluation by generate() inside the measured window). "
           "Readings a source does not name are counted under the reading the README assumes for them "
           "(see `note_reading_stated`).", ""]
    out += ["## Peak memory", "", "| rows | n | MAPE % | bias % | within 10 % |", "| --- | ---: | ---: | ---: | ---: |",
            f"| all | {stats([r['err'] for r in mem])}",
            f"| expressible | {stats([r['err'] for r in mem if not r['unexpressed']])}",
            f"| reading stated by the source | {stats([r['err'] for r in mem if r['stated']])}",
            f"| expressible, reading stated | {stats([r['err'] for r in mem if r['stated'] and not r['unexpressed']])}",
            ""]
    out += table("Peak memory by reading kind", mem, lambda r: r["reading"])
    out += table("Peak memory by GPU", mem, lambda r: r["gpu"])
    out += table("Peak memory by model family", mem, lambda r: r["family"])
    out += table("Peak memory by held-out source group", mem, lambda r: r["split"])
    died = [r for r in oom if r["measured"] == 1]
    ran = [r for r in oom if r["measured"] == 0]
    caught = [r for r in died if r["predicted"] == 1]
    missed = [r for r in died if r["predicted"] != 1]
    false_oom = [r for r in ran if r["predicted"] == 1]
    out += ["## Out of memory", "",
            f"- Runs that died of CUDA out-of-memory: {len(died)}; predicted not to fit (caught): {len(caught)}; "
            f"predicted to fit (missed): {len(missed)}.",
            f"- Runs that ran (oom=0): {len(ran)}; predicted not to fit (false alarm): {len(false_oom)}.", ""]
    out += ["| source group | died | caught | missed | ran | false alarm |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for g in sorted({r["split"] for r in oom}):
        d = [r for r in died if r["split"] == g]
        rn = [r for r in ran if r["split"] == g]
        out.append(f"| {g} | {len(d)} | {sum(r['predicted'] == 1 for r in d)} | {sum(r['predicted'] != 1 for r in d)} | "
                   f"{len(rn)} | {sum(r['predicted'] == 1 for r in rn)} |")
    out += ["", "Missed (died, predicted to fit): " + (", ".join(f"`{r['id']}`" for r in missed) or "none") + ".",
            "", "False alarms (ran, predicted not to fit): " + (", ".join(f"`{r['id']}`" for r in false_oom) or "none") + ".",
            "", "## Every memory row", "", "| id | reading | measured GiB | predicted GiB | error % | unexpressed |",
            "| --- | --- | ---: | ---: | ---: | --- |"]
    for r in sorted(mem, key=lambda r: r["id"]):
        out.append(f"| {r['id']} | {r['reading']}{'' if r['stated'] else ' (assumed)'} | {r['measured'] / 2**30:.2f} | "
                   f"{r['predicted'] / 2**30:.2f} | {r['err']:+.1f} | {r['unexpressed']} |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
