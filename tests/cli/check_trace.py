#!/usr/bin/python3
"""check_trace.py: check a trace file against the Trace Event Format that ui.perfetto.dev and
chrome://tracing load (the JSON object form), then against what the caller expects of it.

  check_trace.py FILE [--count REGEX=N]... [--tracks REGEX=N]... [--bytes REGEX=B]...
                      [--step-sum SECONDS] [--tol REL]

Format (always): valid JSON; an object whose traceEvents is a list; every event has a string
name and ph, a number ts >= 0 and integer pid and tid; ph is "X" (complete) or "M" (metadata);
an X event has a number dur >= 0; an M event is process_name, thread_name or
thread_sort_index with args; every process and thread that holds an X event is named; on each
thread the X events nest properly (each one ends before the next starts, or holds it whole),
exactly (the file's times are whole nanoseconds).
Expectations, over the first optimizer step's events (args.step == 0): --count, the X events
whose name matches REGEX whole; --bytes, the sum of their args.bytes (within --tol); --step-sum,
the top-level slices of the "GPU compute" thread sum to SECONDS within --tol (relative,
default 1e-5: the CSV's six digits); --tracks, the threads whose name matches REGEX.
Exit 0 when all hold, 1 with a line per failure.  Used by test_trace.sh.
"""
import json
import re
import sys

EPS_US = 1e-6  # the file's times are whole nanoseconds: slices that meet must meet exactly


def fail(msgs, text):
    msgs.append(text)


def check_format(doc, msgs):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail(msgs, "not an object with a traceEvents list")
        return []
    events = doc["traceEvents"]
    procs, threads = set(), set()
    used = set()
    for i, e in enumerate(events):
        where = "event %d (%s)" % (i, e.get("name") if isinstance(e, dict) else e)
        if not isinstance(e, dict):
            fail(msgs, where + ": not an object")
            continue
        if not isinstance(e.get("name"), str) or not isinstance(e.get("ph"), str):
            fail(msgs, where + ": name or ph missing")
            continue
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            fail(msgs, where + ": ts missing or negative")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            fail(msgs, where + ": pid or tid missing")
            continue
        if e["ph"] == "M":
            if e["name"] not in ("process_name", "thread_name", "thread_sort_index", "process_sort_index") \
                    or not isinstance(e.get("args"), dict):
                fail(msgs, where + ": unknown metadata or no args")
            elif e["name"] == "process_name":
                procs.add(e["pid"])
            elif e["name"] == "thread_name":
                threads.add((e["pid"], e["tid"]))
        elif e["ph"] == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                fail(msgs, where + ": dur missing or negative")
                continue
            used.add((e["pid"], e["tid"]))
        else:
            fail(msgs, where + ": ph %r (only X and M are written)" % e["ph"])
    for pid, tid in sorted(used):
        if pid not in procs:
            fail(msgs, "process %d holds events but has no process_name" % pid)
        if (pid, tid) not in threads:
            fail(msgs, "thread %d/%d holds events but has no thread_name" % (pid, tid))
    check_nesting(events, msgs)
    return events


def check_nesting(events, msgs):
    tracks = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and isinstance(e.get("dur"), (int, float)):
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, evs in tracks.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - EPS_US:
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + EPS_US:
                top = stack[-1]
                fail(msgs, "thread %d/%d: %r [%g, %g] overlaps %r [%g, %g] without nesting" % (
                    key[0], key[1], e["name"], e["ts"], e["ts"] + e["dur"], top["name"], top["ts"],
                    top["ts"] + top["dur"]))
                return
            stack.append(e)


def thread_names(events):
    return {(e["pid"], e["tid"]): e["args"].get("name", "") for e in events
            if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "thread_name"}


def first_step(events):
    return [e for e in events if e.get("ph") == "X" and isinstance(e.get("args"), dict)
            and e["args"].get("step") == 0]


def top_level_sum(events, names):
    compute = [k for k, v in names.items() if v.startswith("GPU compute")]
    evs = sorted((e for e in first_step(events) if (e["pid"], e["tid"]) in compute),
                 key=lambda e: (e["ts"], -e["dur"]))
    total, end = 0.0, -1.0
    for e in evs:
        if e["ts"] >= end - EPS_US:  # not inside the last top-level slice
            total += e["dur"]
            end = e["ts"] + e["dur"]
    return total / 1e6


def split(arg):
    regex, _, value = arg.rpartition("=")
    return re.compile(regex), float(value)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    msgs = []
    try:
        with open(argv[1], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as err:
        print("FAIL %s: %s" % (argv[1], err))
        return 1
    events = check_format(doc, msgs)
    names = thread_names(events)
    step0 = first_step(events)
    tol = 1e-5
    args = argv[2:]
    if "--tol" in args:
        tol = float(args[args.index("--tol") + 1])
    for opt, val in zip(args, args[1:]):
        if opt == "--count":
            regex, want = split(val)
            got = sum(1 for e in step0 if regex.fullmatch(e["name"]))
            if got != want:
                fail(msgs, "%d events match %r in step 0, want %d" % (got, regex.pattern, want))
        elif opt == "--bytes":
            regex, want = split(val)
            got = sum(e["args"].get("bytes", 0) for e in step0 if regex.fullmatch(e["name"]))
            if abs(got - want) > tol * want:
                fail(msgs, "bytes of %r in step 0: %.0f, want %.0f" % (regex.pattern, got, want))
        elif opt == "--tracks":
            regex, want = split(val)
            got = sum(1 for v in names.values() if regex.fullmatch(v))
            if got != want:
                fail(msgs, "%d threads named %r, want %d" % (got, regex.pattern, want))
        elif opt == "--step-sum":
            want = float(val)
            got = top_level_sum(events, names)
            if abs(got - want) > tol * want:
                fail(msgs, "step 0's phases sum to %.9g s, the step is %.9g s (tolerance %g)" % (got, want, tol))
    for m in msgs:
        print("FAIL " + m)
    return 1 if msgs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
