#!/usr/bin/env python3
"""Regenerate models/prices.csv (on-demand list prices) from the figures below.

Every price is copied from a dated machine-readable listing that a public project fetched
from the provider's own API; the source cell names the repository, commit and file, the
date is the listing's own date (AWS: the generation time written in the file) or, where
the listing carries none, the day it was read here.  Python 3 stdlib only.

    python3 tools/data/make_prices.py            # writes models/prices.csv
    python3 tools/data/make_prices.py --check    # prints it instead

Prices change; a user's own table goes in through prices=PATH (same columns), and
price_per_gpu_hour=X overrides any table.
"""
import csv
import io
import os
import sys

COLUMNS = ["provider", "instance", "gpu", "gpus", "price_per_hour", "currency", "region", "date", "source"]

AWS_SRC = ("AWS Price List API, Linux on-demand, as generated into aws/karpenter-provider-aws@031e72b "
           "pkg/providers/pricing/zz_generated.pricing_aws.go (generated at 2026-01-19T13:23:24Z for us-east-1); "
           "GPUs per instance from the EC2 instance-type pages")
AWS_DATE = "2026-01-19"
# instance, gpu profile id, GPUs per instance, USD per hour
AWS = [
    ("g4dn.xlarge", "t4", 1, 0.526), ("g4dn.12xlarge", "t4", 4, 3.912), ("g4dn.metal", "t4", 8, 7.824),
    ("g5.xlarge", "a10g", 1, 1.006), ("g5.12xlarge", "a10g", 4, 5.672), ("g5.48xlarge", "a10g", 8, 16.288),
    ("g6.xlarge", "l4", 1, 0.8048), ("g6.12xlarge", "l4", 4, 4.6016), ("g6.48xlarge", "l4", 8, 13.3504),
    ("g6e.xlarge", "l40s", 1, 1.861), ("g6e.12xlarge", "l40s", 4, 10.49264), ("g6e.48xlarge", "l40s", 8, 30.13118),
    ("p3.2xlarge", "v100-sxm2-16gb", 1, 3.06), ("p3.8xlarge", "v100-sxm2-16gb", 4, 12.24),
    ("p3.16xlarge", "v100-sxm2-16gb", 8, 24.48), ("p3dn.24xlarge", "v100-sxm2-32gb", 8, 31.212),
    ("p4d.24xlarge", "a100-sxm4-40gb", 8, 21.957642), ("p4de.24xlarge", "a100-sxm4-80gb", 8, 27.44705),
    ("p5.4xlarge", "h100-sxm5-80gb", 1, 6.88), ("p5.48xlarge", "h100-sxm5-80gb", 8, 55.04),
    ("p5en.48xlarge", "h200-sxm-141gb", 8, 63.296), ("p6-b200.48xlarge", "b200", 8, 113.9328),
]

LAMBDA_SRC = ("Lambda instance-types API as listed in skypilot-org/skypilot-catalog@0f40703 "
              "catalogs/v8/lambda/vms.csv (the same price in every region; read 2026-11-23)")
LAMBDA_DATE = "2026-11-23"
LAMBDA = [
    ("gpu_1x_a10", "a10", 1, 1.29),
    ("gpu_1x_a6000", "rtx-a6000", 1, 1.09), ("gpu_2x_a6000", "rtx-a6000", 2, 2.18),
    ("gpu_4x_a6000", "rtx-a6000", 4, 4.36),
    ("gpu_8x_v100", "v100-sxm2-16gb", 8, 6.32),
    ("gpu_1x_a100_sxm4", "a100-sxm4-40gb", 1, 1.99), ("gpu_8x_a100", "a100-sxm4-40gb", 8, 15.92),
    ("gpu_8x_a100_80gb_sxm4", "a100-sxm4-80gb", 8, 22.32),
    ("gpu_1x_h100_pcie", "h100-pcie-80gb", 1, 3.29),
    ("gpu_1x_h100_sxm5", "h100-sxm5-80gb", 1, 4.29), ("gpu_2x_h100_sxm5", "h100-sxm5-80gb", 2, 8.38),
    ("gpu_4x_h100_sxm5", "h100-sxm5-80gb", 4, 16.36), ("gpu_8x_h100_sxm5", "h100-sxm5-80gb", 8, 31.92),
    ("gpu_1x_gh200", "gh200", 1, 2.29),
    ("gpu_1x_b200_sxm6", "b200", 1, 6.99), ("gpu_2x_b200_sxm6", "b200", 2, 13.78),
    ("gpu_8x_b200_sxm6", "b200", 8, 53.52),
]

RUNPOD_SRC = ("RunPod API (secure cloud) as listed in skypilot-org/skypilot-catalog@01acdfd "
              "catalogs/v8/runpod/vms.csv (GpuInfo 'A100 PCIe'; read 2026-11-23)")
RUNPOD_DATE = "2026-11-23"
RUNPOD = [
    ("1x_A100-80GB_SECURE", "a100-pcie-80gb", 1, 1.39), ("2x_A100-80GB_SECURE", "a100-pcie-80gb", 2, 2.78),
]


def rows():
    out = []
    for inst, gpu, n, p in AWS:
        out.append(["aws", inst, gpu, n, p, "USD", "us-east-1", AWS_DATE, AWS_SRC])
    for inst, gpu, n, p in LAMBDA:
        out.append(["lambda", inst, gpu, n, p, "USD", "us-east-1", LAMBDA_DATE, LAMBDA_SRC])
    for inst, gpu, n, p in RUNPOD:
        out.append(["runpod", inst, gpu, n, p, "USD", "US", RUNPOD_DATE, RUNPOD_SRC])
    return out


def main():
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows():
        w.writerow(["%g" % c if isinstance(c, float) else c for c in r])
    if "--check" in sys.argv:
        sys.stdout.write(buf.getvalue())
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "models", "prices.csv")
    with open(path, "w", newline="") as f:
        f.write(buf.getvalue())
    print("wrote %s (%d rows)" % (path, len(rows())))


if __name__ == "__main__":
    main()
