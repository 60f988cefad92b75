#!/usr/bin/env python3
"""test_harness.py: the parts of train.py that need no torch or GPU: key=value parsing, run
records in the calibration.csv schema, atomic appends, and (when EC_CLI names the epochcast
binary) that `epochcast validate` reads the records the harness writes."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pressure  # noqa: E402
import train  # noqa: E402


class ParseTest(unittest.TestCase):
    def test_defaults_and_derived(self):
        cfg = train.parse_words(["model=bert-base", "batch_per_gpu=32", "seq_len=384", "task=squad"])
        self.assertEqual(cfg["precision"], "fp32")
        self.assertEqual(cfg["num_workers"], 0)
        self.assertEqual(cfg["prefetch_factor"], 2)
        self.assertEqual(cfg["image_size"], "")  # not a vision model
        cfg = train.parse_words(["model=resnet50", "batch_per_gpu=64", "num_gpus=2"])
        self.assertEqual(cfg["task"], "imagenet")
        self.assertEqual(cfg["strategy"], "ddp")  # several GPUs, no strategy: DDP (DESIGN 2)
        self.assertEqual(cfg["seq_len"], "")

    def test_errors_name_the_word(self):
        for words, text in [(["model=bert-base"], "missing batch_per_gpu"),
                            (["model=gpt9", "batch_per_gpu=1"], "model=gpt9"),
                            (["model=bert-base", "batch_per_gpu=x"], "batch_per_gpu=x"),
                            (["model=bert-base", "batch_per_gpu=2", "precision=fp8"], "precision=fp8"),
                            (["model=bert-base", "batch_per_gpu=2", "colour=red"], "unknown key 'colour'"),
                            (["model=bert-base", "batch_per_gpu"], "expected key=value"),
                            (["model=bert-base", "batch_per_gpu=0"], ">= 1")]:
            with self.assertRaises(train.ConfigError) as e:
                train.parse_words(words)
            self.assertIn(text, str(e.exception))


class RecordTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "runs.csv")
        self.columns = ["id"] + train.RECORD_KEYS + ["metric", "value", "source"]

    def tearDown(self):
        self.dir.cleanup()

    def write(self, words, step_s, gpu="t4"):
        cfg = train.parse_words(words + [f"gpu={gpu}"])
        res = {"step_s": step_s, "samples_per_s": cfg["batch_per_gpu"] / step_s}
        train.append_csv(self.path, self.columns, train.records(cfg, res, "unit test"))
        return cfg

    def test_records_append(self):
        self.write(["model=bert-base", "batch_per_gpu=16", "seq_len=128", "precision=amp_fp16"], 0.1)
        self.write(["model=resnet50", "batch_per_gpu=32", "num_workers=4", "pin_memory=1"], 0.25)
        with open(self.path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 4)  # samples_per_s and step_time_ms per run
        self.assertEqual({r["metric"] for r in rows}, {"samples_per_s", "step_time_ms"})
        sps = [r for r in rows if r["metric"] == "samples_per_s"][0]
        self.assertAlmostEqual(float(sps["value"]), 160.0, places=3)
        self.assertFalse(os.path.exists(self.path + ".tmp"))
        with self.assertRaises(train.ConfigError):  # a different header is refused, not mixed
            train.append_csv(self.path, ["id", "x"], [{"id": 1, "x": 2}])

    @unittest.skipUnless(os.environ.get("EC_CLI"), "EC_CLI not set")
    def test_epochcast_validate_reads_them(self):
        self.write(["model=bert-base", "batch_per_gpu=16", "seq_len=128", "precision=amp_fp16"], 0.1)
        self.write(["model=resnet50", "batch_per_gpu=32", "num_workers=4", "pin_memory=1"], 0.25, gpu="Tesla T4")
        out = subprocess.run([os.environ["EC_CLI"], "validate", self.path], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("4 runs", out.stdout)


class PressureTest(unittest.TestCase):
    def test_edge_search_finds_the_largest_batch_that_fits(self):
        for edge in (1, 3, 8, 9, 63, 64, 65, 1000):
            tried = []
            got = pressure.find_edge(lambda b: tried.append(b) or b <= edge)
            self.assertEqual(got, edge)
            self.assertLessEqual(len(tried), 2 * edge.bit_length() + 3)  # doubling then bisection
        self.assertIsNone(pressure.find_edge(lambda b: False))

    def test_plan_holds_the_extra_at_the_edge_and_at_half(self):
        runs = pressure.plan(50, 3 << 30)
        self.assertEqual([(b, r) for _, b, r, _ in runs if r], [(50, 3 << 30), (25, 3 << 30)])
        self.assertIn(("edge + DDP bucket temporary", 50, 0, 25 << 20), runs)

    def test_summary_reports_slowdown_and_failures(self):
        def row(label, batch, ms, reserve=0, retries=0):
            return {"label": label, "batch": batch, "step_time_ms": ms, "samples_per_s": 1000.0 * batch / ms,
                    "alloc_retries": retries, "reserve_bytes": reserve, "step_temp_bytes": 0}
        text = "\n".join(pressure.summarize([row("edge", 64, 800.0), row("edge + multi-GPU extra", 64, 1200.0, 1 << 30, 300),
                                              row("half", 32, 400.0), row("half + multi-GPU extra", 32, 404.0, 1 << 30)]))
        self.assertIn("1.500x at the edge batch and 1.010x at half", text)
        self.assertIn("| 300 |", text)
        failed = pressure.summarize([row("edge", 64, 800.0), {"label": "edge + multi-GPU extra", "batch": 64,
                                                            "reserve_bytes": 1 << 30, "step_temp_bytes": 0}])
        self.assertIn("failed (out of memory?)", "\n".join(failed))
        self.assertIn("no slowdown computed", "\n".join(failed))

    def test_bad_word_is_named_before_any_run(self):
        with self.assertRaises(SystemExit) as e, tempfile.TemporaryDirectory() as d:
            pressure.main([d, "model=gpt9", "--dry-run", "--extra-bytes", "0"])
        self.assertEqual(e.exception.code, 2)

    def test_train_refuses_negative_reserve(self):
        with self.assertRaises(SystemExit):
            train.main(["model=bert-base", "batch_per_gpu=2", "--reserve-bytes", "-1"])


if __name__ == "__main__":
    unittest.main()
