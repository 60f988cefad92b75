"""mlperf_logs.py: what the MLPerf transcription scripts (mlperf_llama31_from_logs.py,
mlperf_lora_from_logs.py) read from a mirrored mlcommons/training_results_* git directory: files at
HEAD with `git show`, a run's MLLOG events, and the logged batch layout.  Python 3 stdlib."""
import json
import subprocess


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), check=True, capture_output=True,
                          text=True).stdout


def events(gitdir, path):
    """The MLLOG events of one result file, in order."""
    return [json.loads(line.split(":::MLLOG", 1)[1]) for line in git(gitdir, "show", "HEAD:" + path).splitlines()
            if ":::MLLOG" in line]


def logged(runs_events, key):
    """The one value every run logged for key (global_batch_size, gradient_accumulation_steps, ...),
    as an int; SystemExit when the runs disagree or none logged it."""
    values = {int(float(e["value"])) for evs in runs_events for e in evs if e["key"] == key}
    if len(values) != 1:
        raise SystemExit("runs log %s as %s" % (key, sorted(values) or "nothing"))
    return values.pop()


def tracked(runs_events, stat):
    """Every tracked_stats value named stat over the runs, as floats."""
    return [float(e["value"][stat]) for evs in runs_events for e in evs
            if e["key"] == "tracked_stats" and isinstance(e["value"], dict) and stat in e["value"]]
