#!/usr/bin/env python3
"""Unit tests of the data scripts' rules that need no shared folder (ctest data_rules):
run_squad.py's steps run (make_dle_runs.squad_steps_run over tools/data/lambda_v0_squad_steps.csv)
must give STEP_COUNT, the steps the RTX 3090 logs show; the system check (other_system,
dle_measurements.system_gpu) must flag a row made on another GPU's system and nothing else; an NGC
20.01 figure must take its own log's steady rate (make_dle_runs.steady_member / steady_value, the
logs read by lambda_log_steady.read_log_2001) and no other row's; a multi-GPU run in a cloud VM
on PCIe GPUs must run through host memory and stay apart from bare-metal runs (make_holdout)."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_dle_runs  # noqa: E402
import make_holdout  # noqa: E402
import dle_measurements  # noqa: E402
import lambda_log_steady  # noqa: E402


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
        self.assertEqual(dle_measurements.system_gpu("x; system=4x RTX A4000; y", "GeForce RTX 3090", self.gpus),
                         "rtx-a4000")
        self.assertEqual(dle_measurements.system_gpu("system=4x V100 32GB; r", "Quadro RTX 8000", self.gpus), "?")

    def test_agreeing_and_unnamed_systems_pass(self):
        for notes, gpu in (("system=2x RTX 8000 NVLink;", "Quadro RTX 8000"),
                           ("system=Lambda Cloud — 4x GTX 1080Ti;", "GeForce GTX 1080 Ti"),
                           ("system=RTX 2080Ti;", "GeForce RTX 2080 Ti"),
                           ("system=p3.16xlarge;", "V100-SXM2-16GB"), ("system=Titan RTX;", "TITAN RTX"),
                           ("no system note", "RTX A6000")):
            self.assertIsNone(make_dle_runs.other_system(notes, gpu), notes)


# the end of a June 2020 log (run_squad.sh's block: I, n, b, T) and a March 2020 one (no block)
JUNE = ("Epoch:  50%|#####     | 1/2 [00:05<00:05,  5.70s/it]\r"
        "Iteration:  67%|######6   | 2/3 [00:01<00:00,  1.14it/s]\r"
        "Iteration: 100%|##########| 3/3 [00:02<00:00,  1.32it/s]\n"
        "Epoch: 100%|##########| 2/2 [00:09<00:00,  4.66s/it]\n"
        " training throughput: 556.223\nxxxxxxxx\n3\n8\n108\n4.66\nDONE!\n")
MARCH = ("python -m torch.distributed.launch --nproc_per_node=8 run_squad.py --train_batch_size=72 --fp16\n"
         "Epoch:  50%|#####     | 1/2 [00:23<00:23, 23.11s/it]\n"
         "Iteration:  97%|#########7| 35/36 [00:16<00:00,  2.06it/s]\r"
         "Iteration: 100%|##########| 36/36 [00:16<00:00,  2.12it/s]\n"
         "Epoch: 100%|##########| 2/2 [00:40<00:00, 21.04s/it]\n training throughput: 985.551\nDONE!\n")


class SteadyNgc2001(unittest.TestCase):
    logs = {("8xQuadroRTX8000_trt2", "bert-base", "FP16", "8", "108"): [(657.9, 817.7)],
            ("8xQuadroRTX8000NVlink_trt2", "bert-base", "FP16", "8", "108"): [(525.8, 771.4)]}

    def member(self, **kw):
        row = {"task": "squad", "harness": "Lambda v0, NGC 20.01 (2020)", "resultdir": "8xQuadroRTX8000_trt2",
               "model": "bert-base", "precision": "amp_fp16", "num_gpus": 8, "batch_per_gpu": 108, "value": 657.0}
        row.update(kw)
        return row

    def test_a_figure_takes_the_steady_rate_of_the_log_it_truncates(self):
        self.assertEqual(make_dle_runs.steady_member(self.member(), self.logs), 817.7)
        self.assertIsNone(make_dle_runs.steady_member(self.member(value=600.0), self.logs))  # another run
        self.assertIsNone(make_dle_runs.steady_member(self.member(harness="Lambda v0, NGC 20.10-21.x"), self.logs))
        self.assertIsNone(make_dle_runs.steady_member(self.member(task="imagenet"), self.logs))

    def test_a_median_row_takes_the_median_of_its_members_steady_rates(self):
        key = tuple(["bert-base", "squad", "quadro-rtx8000", "8", "ddp", "amp_fp16", "108", "384", "", "1", "adam",
                     "0", "0", "real", "samples_per_s"])
        run = {"id": "x", "precision": "fp16", "torch_version": "1.4", "value": "591.0",
               "source": "median of 2: lambda:x.csv"}  # after convert(): its names, its torch release
        medians = {key: (591.0, (817.7 + 771.4) / 2, 2, 2)}
        out = make_dle_runs.steady_value(run, key, 591.0, medians)
        self.assertEqual(out["value"], "794.5")  # (817.7 + 771.4) / 2 = 794.55, printed to 0.1
        self.assertEqual(out["torch_version"], "1.4")
        self.assertIn("steady rate of 2 of its 2 runs", out["source"])
        # a row whose value is not that median, or a part split_by_run gave another value, is left alone
        self.assertEqual(make_dle_runs.steady_value(dict(run, value="600.0"), key, 600.0, medians)["value"], "600.0")
        self.assertEqual(make_dle_runs.steady_value(dict(run, value="12.0"), key, 591.0, medians)["value"], "12.0")

    def test_the_two_log_formats(self):
        # June: I=3, n=8, b=108, T=4.66; E1 5.70; 3 iterations run; tqdm step 1 / 1.14 it/s
        self.assertEqual(lambda_log_steady.read_log_2001(JUNE)[:6], (3, 8, 108, 4.66, 5.70, 3))
        self.assertAlmostEqual(lambda_log_steady.read_log_2001(JUNE)[6], 1 / 1.14)
        # March: n, b from the command; T the last Epoch bar; I = 985.551 x 21.04 / (8 x 72) = 36.0
        got = lambda_log_steady.read_log_2001(MARCH)
        self.assertEqual(got[:6], (36, 8, 72, 21.04, 23.11, 36))
        self.assertAlmostEqual(got[6], 1 / 2.06)
        self.assertIsNone(lambda_log_steady.read_log_2001("Epoch: 100% no figure"))


class CloudVm(unittest.TestCase):
    """make_holdout's cloud-VM rule: several PCIe GPUs in a VM run through host memory, and such a
    run is not merged with a bare-metal run of the same configuration; NVLink GPUs and one GPU keep
    their default."""

    def row(self, resultdir, gpu="rtx-a6000", n=2, value=100.0):
        r = {c: "" for c in dle_measurements.MEMBER_KEY}
        r.update(model="bert-base", task="squad", gpu=gpu, num_gpus=n, batch_per_gpu=32, metric="samples_per_s",
                 value=value, src="lambda:x.csv", harness="Lambda v0", resultdir=resultdir)
        return r

    def test_through_host(self):
        pcie = {"rtx-a6000", "quadro-rtx6000"}
        self.assertTrue(make_holdout.through_host(self.row("LambdaCloud_2xA6000"), pcie))
        self.assertTrue(make_holdout.through_host(self.row("Linode_2xQuadroRTX6000", "quadro-rtx6000"), pcie))
        self.assertFalse(make_holdout.through_host(self.row("2xA6000"), pcie))                 # bare metal
        self.assertFalse(make_holdout.through_host(self.row("LambdaCloud_A6000", n=1), pcie))  # one GPU
        self.assertFalse(make_holdout.through_host(self.row("LambdaCloud_8xV10016G", "v100-sxm2-16gb", 8), pcie))

    def test_merge_keeps_vm_runs_apart(self):
        pcie = {"rtx-a6000"}
        rows = [self.row("2xA6000", value=120.0), self.row("LambdaCloud_2xA6000", value=80.0)]
        merged = sorted(make_holdout.merge(rows, pcie), key=lambda r: r["value"])
        self.assertEqual([(r["value"], r["topology"]) for r in merged], [(80.0, "pcie-host"), (120.0, "")])
        self.assertIn("run in a cloud VM, LambdaCloud_2xA6000", merged[0]["source"])
        # without the PCIe set (the calibration GPUs' --check) the two are one median, as before
        self.assertEqual([r["value"] for r in make_holdout.merge(rows)], [100.0])

    def test_gpus_csv_pcie_set(self):
        pcie = make_holdout.pcie_topologies(os.path.join(HERE, "..", "..", "models", "gpus.csv"))
        self.assertIn("quadro-rtx6000", pcie)
        self.assertNotIn("v100-sxm2-16gb", pcie)


class EpycHost(unittest.TestCase):
    """make_dle_runs' host rule: a Lambda multi-GPU row of a machine EPYC_THROUGH_HOST names (its
    harness, its GPU counts) takes host=server-epyc; one GPU, another harness, another machine's
    GPU count or another publisher keep the default host."""

    def row(self, gpu, n, source="median of 1: lambda:pytorch/pytorch-train-throughput-fp16.csv"):
        return {"gpu": gpu, "num_gpus": str(n), "source": source}

    def test_rule(self):
        host = make_dle_runs.host_of
        self.assertEqual(host(self.row("a100-sxm4-80gb", 8), "v1"), "server-epyc")
        self.assertEqual(host(self.row("a100-sxm4-80gb", 8), "v0"), "")           # v0: NVLink, P2P on
        self.assertEqual(host(self.row("a100-sxm4-80gb", 1), "v1"), "")           # no ring
        self.assertEqual(host(self.row("rtx3070", 2), None), "server-epyc")        # any harness
        self.assertEqual(host(self.row("rtx3090", 4), "v0"), "server-epyc")
        self.assertEqual(host(self.row("rtx3090", 2), "v0"), "")                  # the workstation's 2x runs
        self.assertEqual(host(self.row("a100-sxm4-80gb", 24), "v1"), "")         # a count, not a digit
        self.assertEqual(host(self.row("rtx2080ti", 8), "v0"), "")                # not an EPYC machine
        self.assertEqual(host(self.row("rtx3070", 2, "median of 1: nvidia:README.md"), "v0"), "")

    def test_hosts_csv_has_the_host(self):
        with open(os.path.join(HERE, "..", "..", "models", "hosts.csv"), newline="") as f:
            ids = {line.split(",", 1)[0] for line in f}
        self.assertIn("server-epyc", ids)


if __name__ == "__main__":
    unittest.main()
