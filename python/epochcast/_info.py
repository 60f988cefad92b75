"""_info.py: Context.model_info, what a model is (epochcast model-info): the registry entry
(ec_model_find), the summary for a config (ec_model_summary_get) and its layer table."""
from ._context import _model_row, raise_status
from ._lib import ffi, lib
from . import _table

SUMMARY = ("params", "tokens_per_sample", "fwd_flop_per_sample", "bwd_flop_per_sample", "weights_bytes",
           "grads_bytes", "optimizer_bytes", "activations_bytes_per_sample")


class ModelInfo:
    """.info (the registry entry: id, family, default_task, tasks, params, published_params,
    source, ...), the summary's figures as attributes (params, fwd_flop_per_sample, ...,
    activations_bytes_per_sample), .layers (a table: index, depth, kind, times, params,
    fwd_flop_per_sample, saved_bytes_per_sample) and .to_dict()."""

    def __init__(self, info, summary, layers):
        self.info = info
        self._summary = summary
        self.layers = layers
        for k, v in summary.items():
            setattr(self, k, v)

    def to_dict(self):
        d = dict(self.info)
        d.update(self._summary)
        return d

    def __repr__(self):
        i, s = self.info, self._summary
        return ("%s (%s; tasks %s): %.4g parameters, %.4g forward flop per sample, weights %.3g GiB, "
                "optimizer %.3g GiB, activations %.3g GiB per sample" % (
                    i["id"], i["family"], i["tasks"], s["params"], s["fwd_flop_per_sample"],
                    s["weights_bytes"] / 2 ** 30, s["optimizer_bytes"] / 2 ** 30,
                    s["activations_bytes_per_sample"] / 2 ** 30))


def model_info(ctx, keys):
    h = ctx._h()
    if keys.get("model") is None:
        from ._errors import BadValueError
        raise BadValueError("model_info: key 'model' is required (a preset id or a config.json path)",
                            lib.EC_EINVAL, "model")
    cfg = ctx._config(h, keys)
    mi = ffi.new("ec_model_info *")
    st = lib.ec_model_find(h, cfg.model, mi)
    if st != 0:
        raise_status(h, st, key="model")
    info = _model_row(mi)
    summ = ffi.new("ec_model_summary *")
    st = lib.ec_model_summary_get(h, cfg, summ, ffi.NULL, 0)
    if st != 0:
        raise_status(h, st)
    n = summ.n_rows
    rows = ffi.new("ec_layer_row[]", max(n, 1))
    st = lib.ec_model_summary_get(h, cfg, summ, rows, n)
    if st != 0:
        raise_status(h, st)
    layers = [{"index": r.index, "depth": r.depth, "kind": ffi.string(r.kind).decode(), "times": r.times,
               "params": r.params, "fwd_flop_per_sample": r.fwd_flop_per_sample,
               "saved_bytes_per_sample": r.saved_bytes_per_sample} for r in (rows[i] for i in range(n))]
    summary = {k: getattr(summ, k) for k in SUMMARY}
    return ModelInfo(info, summary, _table.from_rows(layers, ["index", "depth", "kind", "times", "params",
                                                               "fwd_flop_per_sample", "saved_bytes_per_sample"]))
