"""_table.py: how tables come back: a pandas DataFrame when pandas imports, else a list of
dicts (one per row, columns in order).  epochcast.set_tables("dicts") asks for the plain form
even with pandas present (and "pandas" insists on pandas); the tests run both paths.
"""
try:
    import pandas as _pd
except ImportError:  # the plain path
    _pd = None

_mode = ["auto"]


def set_tables(mode):
    """"auto" (a DataFrame when pandas imports, else a list of dicts), "pandas" or "dicts".
    Returns the previous mode."""
    if mode not in ("auto", "pandas", "dicts"):
        raise ValueError("set_tables: mode is 'auto', 'pandas' or 'dicts', not %r" % (mode,))
    if mode == "pandas" and _pd is None:
        raise ImportError("set_tables('pandas'): pandas is not importable here")
    old = _mode[0]
    _mode[0] = mode
    return old


def use_pandas():
    return _pd is not None and _mode[0] != "dicts"


def from_columns(columns, order):
    """A table from {name: list or numpy array}, columns in `order`."""
    if use_pandas():
        return _pd.DataFrame({c: columns[c] for c in order}, columns=list(order))
    cols = [list(columns[c]) for c in order]
    return [dict(zip(order, vals)) for vals in zip(*cols)] if cols else []


def from_rows(rows, order=None):
    """A table from a list of dicts (order: the columns, else the union in first-seen order)."""
    if order is None:
        seen = {}
        for r in rows:
            for k in r:
                seen.setdefault(k, None)
        order = list(seen)
    if use_pandas():
        return _pd.DataFrame(rows, columns=list(order))
    return [{k: r.get(k) for k in order} for r in rows]


def rows_of(table):
    """The rows of a table this module made (or of any DataFrame / list of dicts) as dicts."""
    if _pd is not None and isinstance(table, _pd.DataFrame):
        return table.to_dict("records")
    return list(table)
