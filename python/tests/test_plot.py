"""The .plot() helpers draw with matplotlib (Agg) when it imports."""
import pytest

import epochcast as ec
from conftest import BERT

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")


def test_plots(tmp_path, runs_csv):
    import matplotlib.pyplot as plt
    r = ec.predict(**BERT)
    for kind in ("breakdown", "memory"):
        ax = r.plot(kind)
        ax.figure.savefig(tmp_path / ("%s.png" % kind))
    with pytest.raises(ValueError):
        r.plot("pie")
    t = ec.sweep({"model": "bert-base", "seq_len": 128}, {"gpu": ["t4", "a10"], "batch_per_gpu": [8, 16, 32]})
    ec.plot.sweep(t, x="batch_per_gpu", y="samples_per_s", group="gpu").figure.savefig(tmp_path / "sweep.png")
    p = ec.plan(model="bert-base", seq_len=128, dataset_samples=1000000, gpu=["t4", "a10"], num_gpus=[1, 2],
                deadline_h=5)
    p.plot().figure.savefig(tmp_path / "plan.png")
    ec.validate(runs_csv).plot().figure.savefig(tmp_path / "validate.png")
    ec.optimize(model="llama-3.1-8b", gpu="h100-sxm5-80gb", num_gpus=8, seq_len=4096,
                global_batch_tokens=1048576, top=4).plot().figure.savefig(tmp_path / "layouts.png")
    plt.close("all")
    assert all((tmp_path / f).stat().st_size > 1000 for f in
               ("breakdown.png", "memory.png", "sweep.png", "plan.png", "validate.png", "layouts.png"))
