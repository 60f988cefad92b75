"""_network.py: Context.network, a network description from Python dicts and lists turned into
the C description (ec_layer, ec_head, ec_network_def) and registered with ec_network_define, as
lua/l_network.c does for Lua tables (the same kinds, fields and choices; docs/networks.md).

    ec.network({"id": "tiny-llama", "default_seq_len": 2048,
                "layers": [{"kind": "embedding", "vocab": 32000, "dim": 2048},
                           ("repeat", {"times": 22},
                               ("residual", "save"), ("norm", "rms"),
                               {"kind": "attention", "heads": 32, "kv_heads": 4, "causal": True,
                                "position": "rope"},
                               ("residual", "add"), ("residual", "save"), ("norm", "rms"),
                               {"kind": "mlp", "ffn": 5632, "act": "silu", "gated": True},
                               ("residual", "add")),
                           ("norm", "rms")],
                "heads": [{"task": "lm", "kind": "causal_lm"}]})

A layer is a dict {"kind": ..., fields...} (a repeat's body under "body"), or a tuple/list
(kind, [shorthand choice], [dict of fields], body layers...) as in Lua.  Wrong kinds, fields,
choices or types raise BadValueError naming the layer; the library checks the shapes.
"""
import numbers

from ._context import raise_status
from ._errors import BadValueError
from ._lib import ffi, lib

KINDS = ["embedding", "patches", "linear", "conv2d", "norm", "attention", "mlp", "moe", "activation", "dropout",
         "residual", "pool", "repeat", "decoder"]
NORMS = ["layer", "rms", "batch"]
POSITIONS = ["none", "rope", "alibi", "relative"]
ACTS = ["gelu", "gelu_tanh", "relu", "silu", "tanh", "quick_gelu", "relu2", "gelu_python"]
RESIDUALS = ["save", "add", "add_relu"]
POOLS = ["max", "avg"]
HEAD_KINDS = ["causal_lm", "masked_lm", "pretrain", "classify", "token_classify", "span_qa", "image_classify"]
ATTENTION_IMPLS = ["config", "fused", "eager"]

I64, INT, BOOL = "i64", "int", "bool"
# kind -> {field: (member of the union, type or list of choices)}
FIELDS = {
    "embedding": {"vocab": I64, "dim": I64, "positions": I64, "type_vocab": I64, "fused": BOOL, "scale": BOOL,
                  "shared": BOOL, "idle_params": I64},
    "patches": {"cls_tokens": INT, "positions": BOOL},
    "linear": {"out": I64, "bias": BOOL},
    "conv2d": {"out": I64, "kernel": INT, "stride": INT, "padding": INT, "groups": INT, "bias": BOOL},
    "norm": {"kind": NORMS, "bias": BOOL, "low_precision": BOOL},
    "attention": {"heads": INT, "kv_heads": INT, "head_dim": INT, "causal": BOOL, "cross": BOOL, "qkv_fused": BOOL,
                  "qkv_bias": BOOL, "out_bias": BOOL, "position": POSITIONS, "window": I64, "rel_buckets": INT,
                  "dropout": BOOL, "qk_norm": BOOL, "softcap": BOOL, "relative_span": INT, "q_rank": INT,
                  "kv_rank": INT, "rope_dim": INT, "v_head_dim": INT, "sinks": BOOL},
    "mlp": {"ffn": I64, "act": ACTS, "gated": BOOL, "bias": BOOL, "dropout": BOOL},
    "moe": {"experts": INT, "top_k": INT, "ffn": I64, "act": ACTS, "gated": BOOL, "shared_experts": INT,
            "shared_ffn": I64, "shared_gate": BOOL, "bias": BOOL},
    "activation": {"act": ACTS},
    "dropout": {},
    "residual": {"op": RESIDUALS},
    "pool": {"kind": POOLS, "kernel": INT, "stride": INT, "padding": INT},
    "repeat": {"times": INT, "shared_params": BOOL, "checkpoint": BOOL},
    "decoder": {},
}
SHORTHAND = {"norm": "kind", "activation": "act", "residual": "op", "pool": "kind"}
NET_KEYS = ["id", "family", "layers", "heads", "default_task", "default_seq_len", "max_positions", "image_size",
            "image_channels", "loss_in_forward", "attention", "published_params", "published_task", "source"]
HEAD_FIELDS = {"task": str, "kind": HEAD_KINDS, "classes": I64, "transform": I64, "pooler": BOOL, "tied": BOOL,
               "bias": BOOL, "pool": BOOL, "fused_loss": BOOL, "metric_losses": INT}
MAX_DEPTH = 16


def _bad(msg):
    raise BadValueError("network: " + msg, lib.EC_EINVAL)


def _value(where, name, spec, v):
    if spec == BOOL:
        if isinstance(v, bool) or (isinstance(v, numbers.Integral) and v in (0, 1)):
            return int(bool(v))
        _bad("%s: field '%s' must be True or False" % (where, name))
    if isinstance(spec, list):
        if not isinstance(v, str):
            _bad("%s: field '%s' must be a name" % (where, name))
        if v not in spec:
            _bad("%s: field '%s': '%s' is not one of %s" % (where, name, v, ", ".join(spec)))
        return spec.index(v)
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        _bad("%s: field '%s' must be an integer" % (where, name))
    v = int(v)
    lim = 2 ** 31 - 1 if spec == INT else 2 ** 63 - 1
    if not -lim <= v <= lim:
        _bad("%s: field '%s' is out of range" % (where, name))
    return v


def _parse_layer(item, n):
    """(kind, fields dict, body list) of one layer item."""
    if isinstance(item, dict):
        fields = dict(item)
        kind = fields.pop("kind", None)
        body = fields.pop("body", None)
        if not isinstance(kind, str):
            _bad("layer %d: a dict layer needs 'kind' (%s, ...)" % (n, KINDS[0]))
        if kind in SHORTHAND and SHORTHAND[kind] == "kind" and "type" in fields:
            fields["kind"] = fields.pop("type")
        return kind, fields, list(body) if body is not None else []
    if isinstance(item, (list, tuple)) and item and isinstance(item[0], str):
        kind, rest = item[0], list(item[1:])
        fields, body = {}, []
        if rest and isinstance(rest[0], str):
            if kind not in SHORTHAND:
                _bad("layer %d (%s): unexpected item 2 '%s'" % (n, kind, rest[0]))
            fields[SHORTHAND[kind]] = rest.pop(0)
        if rest and isinstance(rest[0], dict) and "kind" not in rest[0]:
            fields.update(rest.pop(0))
        body = rest
        return kind, fields, body
    _bad("layer %d: must be a dict {'kind': ..., fields} or a tuple (kind, ...), not %r" % (n, item))


class _Builder:
    def __init__(self):
        self.layers = []  # (kind index, fields dict with C values), repeats' counts patched

    def read_list(self, items, depth):
        if not isinstance(items, (list, tuple)):
            _bad("'layers' must be a list of layers")
        for item in items:
            self.read_layer(item, depth)

    def read_layer(self, item, depth):
        n = len(self.layers) + 1
        kind, fields, body = _parse_layer(item, n)
        if kind not in KINDS:
            _bad("layer %d: unknown kind '%s' (%s)" % (n, kind, ", ".join(KINDS)))
        where = "layer %d (%s)" % (n, kind)
        specs = FIELDS[kind]
        vals = {}
        if kind == "conv2d":
            vals["padding"] = -1  # kernel / 2 unless given
        if kind == "repeat":
            vals["checkpoint"] = 1  # a repeated layer is a checkpointing unit unless said
        on_skip = 0
        for name, v in fields.items():
            if name == "on_skip":
                on_skip = _value(where, name, BOOL, v)
                continue
            if name not in specs:
                _bad("%s: unknown field '%s' (fields: %s)" % (where, name, ", ".join(["on_skip"] + list(specs))))
            vals[name] = _value(where, name, specs[name], v)
        if body and kind != "repeat":
            _bad("%s: only a repeat has a body" % where)
        at = len(self.layers)
        self.layers.append([kind, vals, on_skip])
        if kind == "repeat":
            if depth >= MAX_DEPTH:
                _bad("%s: repeats nested more than %d deep" % (where, MAX_DEPTH))
            self.read_list(body, depth + 1)
            self.layers[at][1]["layers"] = len(self.layers) - at - 1


def _heads(spec, keep):
    if isinstance(spec, dict):
        items = [(t, h) for t, h in sorted(spec.items())]
    elif isinstance(spec, (list, tuple)):
        items = [(None, h) for h in spec]
    else:
        _bad("'heads' must list at least one head ([{'task': 'lm', 'kind': 'causal_lm'}])")
    if not items:
        _bad("'heads' must list at least one head ([{'task': 'lm', 'kind': 'causal_lm'}])")
    if len(items) > 16:
        _bad("more than 16 heads")
    heads = ffi.new("ec_head[]", len(items))
    for i, (task, h) in enumerate(items):
        if not isinstance(h, dict):
            _bad("head %d must be a dict" % (i + 1))
        where = "head '%s'" % (task or h.get("task", "?"))
        if task is not None:
            h = dict(h, task=h.get("task", task))
        for name, v in h.items():
            spec = HEAD_FIELDS.get(name)
            if spec is None:
                _bad("%s: unknown field '%s' (%s)" % (where, name, ", ".join(HEAD_FIELDS)))
            if spec is str:
                if not isinstance(v, str):
                    _bad("%s: field 'task' must be a name" % where)
                s = ffi.new("char[]", v.encode())
                keep.append(s)
                heads[i].task = s
            elif name == "metric_losses" and not (isinstance(v, numbers.Integral) and 0 <= v <= 16):
                _bad("%s: field 'metric_losses' must be an integer in 0..16" % where)
            else:
                setattr(heads[i], name, _value(where, name, spec, v))
        if heads[i].task == ffi.NULL:
            _bad("a head needs a task ({'task': 'lm', 'kind': 'causal_lm'})")
    return heads, len(items)


def define(h, d):
    if not isinstance(d, dict):
        _bad("a network is a dict (id, layers, heads, ...), not a %s" % type(d).__name__)
    for k in d:
        if k not in NET_KEYS:
            _bad("unknown key '%s' (%s)" % (k, ", ".join(NET_KEYS)))
    keep = []

    def cstr(key):
        v = d.get(key)
        if v is None:
            return ffi.NULL
        if not isinstance(v, str):
            _bad("'%s' must be a string" % key)
        s = ffi.new("char[]", v.encode())
        keep.append(s)
        return s

    def cint(key):
        v = d.get(key, 0)
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or not 0 <= v <= 2 ** 31 - 1:
            _bad("'%s' must be an integer in 0..2147483647" % key)
        return int(v)

    nd = ffi.new("ec_network_def *")
    if d.get("id") is None:
        _bad("'id' (the name model= will accept) is required")
    nd.id = cstr("id")
    nd.family = cstr("family")
    nd.default_task = cstr("default_task")
    nd.published_task = cstr("published_task")
    nd.source = cstr("source")
    nd.default_seq_len = cint("default_seq_len")
    nd.max_positions = cint("max_positions")
    nd.image_size = cint("image_size")
    nd.image_channels = cint("image_channels")
    nd.loss_in_forward = 1 if d.get("loss_in_forward") is None else int(bool(d["loss_in_forward"]))
    if d.get("published_params") is not None:
        if not isinstance(d["published_params"], numbers.Real) or isinstance(d["published_params"], bool):
            _bad("'published_params' must be a number")
        nd.published_params = float(d["published_params"])
    if d.get("attention") is not None:
        nd.attention = _value("network", "attention", ATTENTION_IMPLS, d["attention"])
    b = _Builder()
    b.read_list(d.get("layers") if d.get("layers") is not None else [], 0)
    if not b.layers:
        _bad("'layers' is empty")
    layers = ffi.new("ec_layer[]", len(b.layers))
    for i, (kind, vals, on_skip) in enumerate(b.layers):
        layers[i].kind = KINDS.index(kind)
        layers[i].on_skip = on_skip
        u = getattr(layers[i].u, kind) if FIELDS[kind] else None
        for name, v in vals.items():
            setattr(u, name, v)
    nd.layers = layers
    nd.n_layers = len(b.layers)
    heads, nh = _heads(d.get("heads"), keep)
    nd.heads = heads
    nd.n_heads = nh
    st = lib.ec_network_define(h, nd)
    if st != 0:
        raise_status(h, st)
    return d["id"]
