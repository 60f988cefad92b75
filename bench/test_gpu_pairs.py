#!/usr/bin/env python3
"""test_gpu_pairs.py: bench/gpu_pairs.py's pairing rules on a made-up set of runs (ctest gpu_pairs_rules).

Rows pair only when every configuration column but the hardware ones and the kernel picked for
the GPU is equal; several rows of one GPU give their median; the older GPU is A; the ratio error
is predicted B/A over measured B/A - 1.
"""
import csv
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_pairs  # noqa: E402

HEADER = ["id", "gpu", "network", "num_gpus", "batch_per_gpu", "attention", "metric", "value", "source"]
ROWS = [  # id, gpu, network, GPUs, batch, attention, metric
    ("a-h100-1", "h100-sxm5-80gb", "ib-ndr-400", 8, 1, "flash3", "tokens_per_s"),
    ("a-b200-1", "b200", "", 8, 1, "flash4", "tokens_per_s"),       # pairs with a-h100-1 (attention picked by GPU)
    ("a-b200-2", "b200", "", 8, 1, "flash4", "tokens_per_s"),       # a second B200 row: the median of the two
    ("b-h100-1", "h100-sxm5-80gb", "", 8, 2, "flash3", "tokens_per_s"),  # batch 2: no partner
    ("c-b200-1", "b200", "", 16, 1, "flash4", "tokens_per_s"),      # 16 GPUs: no partner
    ("d-h100-1", "h100-sxm5-80gb", "", 8, 1, "flash3", "tokens_per_s"),  # not priced: left out
]
# measured, predicted
PRICED = {"a-h100-1": (100.0, 110.0), "a-b200-1": (200.0, 240.0), "a-b200-2": (220.0, 240.0),
          "b-h100-1": (50.0, 50.0), "c-b200-1": (400.0, 400.0)}
ORDER = {"h100-sxm5-80gb": (9.0, 9.894e14, "h100-sxm5-80gb"), "b200": (10.0, 2.25e15, "b200")}


class PairingRules(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".csv")
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(HEADER)
            for rid, gpu, net, n, b, attn, metric in ROWS:
                w.writerow([rid, gpu, net, n, b, attn, metric, 1, "made up"])

    def tearDown(self):
        os.unlink(self.path)

    def test_groups_only_identical_configurations(self):
        groups = gpu_pairs.groups(self.path, PRICED, "tokens_per_s")
        self.assertEqual([[r["id"] for r in g] for g in groups], [["a-h100-1", "a-b200-1", "a-b200-2"]])

    def test_pair_medians_order_and_ratio(self):
        (group,) = gpu_pairs.groups(self.path, PRICED, "tokens_per_s")
        ((a, b, na, nb, measured, predicted, err_a, err_b, differs),) = gpu_pairs.pairs(group, PRICED, ORDER)
        self.assertEqual((a, b, na, nb), ("h100-sxm5-80gb", "b200", 1, 2))
        self.assertAlmostEqual(measured, 210.0 / 100.0)   # the two B200 rows' median measurement
        self.assertAlmostEqual(predicted, 240.0 / 110.0)
        self.assertAlmostEqual(err_a, 0.10)
        self.assertAlmostEqual(err_b, 30.0 / 210.0)
        self.assertEqual(differs, ["attention"])

    def test_label_drops_the_gpu_words(self):
        (group,) = gpu_pairs.groups(self.path, PRICED, "tokens_per_s")
        self.assertEqual(gpu_pairs.label(group), "a")  # "1" is not in a-b200-2


if __name__ == "__main__":
    unittest.main()
