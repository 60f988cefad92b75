"""Shared pieces of the parameter counter tools/data/hf_param_count.py: the ConfigError every
counting rule raises, the torch module sizes (nn.Linear, nn.LayerNorm, RMSNorm, nn.Embedding,
nn.Conv2d), req() to read a config.json field, and Count, the named components a rule adds to.

No inputs of its own: the config dicts come from the config.json files hf_param_count.py reads.
Imported by hf_param_count.py and by every hf_count_*.py module (stdlib only)."""


class ConfigError(Exception):
    pass


# --------------------------------------------------------------------------- primitives

def linear(i, o, bias=True):
    """torch.nn.Linear(i, o, bias): weight o x i, bias o."""
    return i * o + (o if bias else 0)


def layernorm(d, bias=True):
    """torch.nn.LayerNorm(d): weight d, bias d (bias=False since torch 2.1)."""
    return d * (2 if bias else 1)


def rmsnorm(d):
    """Llama/Mistral/Qwen/Gemma/Phi3 RMSNorm: a weight of d, no bias."""
    return d


def embedding(n, d):
    return n * d


def conv2d(ci, co, k, bias=True):
    return ci * co * k * k + (co if bias else 0)


def req(cfg, *keys, default=None, required=True):
    """First present key of cfg; missing -> ConfigError naming the keys (or default)."""
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return cfg[k]
    if required and default is None:
        raise ConfigError("missing field %s" % "/".join(keys))
    return default


class Count:
    """Named components, so that -v can show where the parameters are."""

    def __init__(self):
        self.parts = []

    def add(self, name, n):
        self.parts.append((name, int(n)))

    @property
    def total(self):
        return sum(n for _, n in self.parts)
