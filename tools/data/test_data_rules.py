#!/usr/bin/env python3
"""Unit tests of the data scripts' rules that need no shared folder (ctest data_rules):
run_squad.py's steps run (make_dle_runs.squad_steps_run over tools/data/lambda_v0_squad_steps.csv)
must give STEP_COUNT, the steps the RTX 3090 logs show; the system check (other_system,
make_holdout.system_gpu) must flag a row made on another GPU's system and nothing else."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_dle_runs  # noqa: E402
import make_holdout  # noqa: E402


class StepsRun(unittest.TestCase):
    def setUp(self):
        self.steps = make_holdout.squad_steps(os.path.join(HERE, "lambda_v0_squad_steps.csv"))

    def test_step_count_rows_from_their_configs(self):
        # STEP_COUNT's rows were read from the runs' logs (make_dle_runs.py docstring)
        folder = {"4": "4x3090", "8": "8x3090"}
        for (gpu, model, n, prec, batch), want in make_dle_runs.STEP_COUNT.items():
            cfg = self.steps[(folder[n], model, "fp16" if prec == "fp16" else "fp32")]
            self.assertEqual(int(cfg["batch_per_gpu"]), int(batch))
            self.assertEqual(make_dle_runs.squad_steps_run(cfg, int(n), int(batch)), want)

    def test_a_run_that_reaches_max_steps(self):
        # one A5000, BERT-large fp32 b8, max_steps 100: its log ends at iteration 101
        cfg = self.steps[("A5000", "bert-large", "fp32")]
        self.assertEqual(make_dle_runs.squad_steps_run(cfg, 1, 8), (100, 100))

    def test_count_steps_run_scales_and_says_so(self):
        row = {"task": "squad", "harness": "Lambda v0, NGC 20.10-21.x", "resultdir": "16xA4000",
               "model": "bert-large", "precision": "amp_fp16", "num_gpus": 16, "batch_per_gpu": 8,
               "value": 1093.0, "src": "lambda:x.csv"}
        out = make_holdout.count_steps_run([dict(row)], self.steps)[0]
        self.assertAlmostEqual(out["value"], round(1093.0 * 1386 / 5000, 1))  # 693 steps x 2 epochs
        self.assertIn("the run made 1386 steps", out["src"])
        old = dict(row, harness="Lambda v0, NGC 20.01 (2020)")  # its own figure: not run_squad's
        self.assertEqual(make_holdout.count_steps_run([old], self.steps)[0]["value"], 1093.0)


class OtherSystem(unittest.TestCase):
    gpus = {"rtx a4000": "rtx-a4000"}

    def test_flags_the_two_mislabels(self):
        self.assertEqual(make_holdout.system_gpu("x; system=4x RTX A4000; y", "GeForce RTX 3090", self.gpus),
                         "rtx-a4000")
        self.assertEqual(make_holdout.system_gpu("system=4x V100 32GB; r", "Quadro RTX 8000", self.gpus), "?")

    def test_agreeing_and_unnamed_systems_pass(self):
        for notes, gpu in (("system=2x RTX 8000 NVLink;", "Quadro RTX 8000"),
                           ("system=Lambda Cloud — 4x GTX 1080Ti;", "GeForce GTX 1080 Ti"),
                           ("system=RTX 2080Ti;", "GeForce RTX 2080 Ti"),
                           ("system=p3.16xlarge;", "V100-SXM2-16GB"), ("system=Titan RTX;", "TITAN RTX"),
                           ("no system note", "RTX A6000")):
            self.assertIsNone(make_dle_runs.other_system(notes, gpu), notes)


if __name__ == "__main__":
    unittest.main()
