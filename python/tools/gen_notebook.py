#!/usr/bin/env python3
"""gen_notebook.py: examples/python/qlora_vs_fsdp.ipynb from the script beside it, cell for cell
("# %%" starts a code cell, "# %% [markdown]" a text cell of "# " comment lines).

    /usr/bin/python3 python/tools/gen_notebook.py            # rewrite the notebook
    /usr/bin/python3 python/tools/gen_notebook.py --check    # exit 1 when it is stale (ctest python_notebook)
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "python", "qlora_vs_fsdp.py")
NOTEBOOK = os.path.join(ROOT, "examples", "python", "qlora_vs_fsdp.ipynb")


def notebook(src):
    body = src.split("# %%", 1)[1]
    cells = []
    for chunk in ("# %%" + body).split("# %%")[1:]:
        if chunk.startswith(" [markdown]"):
            text = chunk[len(" [markdown]"):].strip("\n")
            lines = [l[2:] if l.startswith("# ") else l.lstrip("#") for l in text.split("\n")]
            cells.append({"cell_type": "markdown", "metadata": {},
                          "source": [l + "\n" for l in lines[:-1]] + [lines[-1]]})
        else:
            code = chunk.strip("\n")
            lines = code.split("\n")
            cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                          "source": [l + "\n" for l in lines[:-1]] + [lines[-1]]})
    intro = {"cell_type": "markdown", "metadata": {}, "source": [
        "# Fine-tuning Llama-3.1-8B: QLoRA on one GPU against FSDP, with epochcast\n", "\n",
        "The same as `examples/python/qlora_vs_fsdp.py`, cell for cell. Needs the `epochcast` package\n",
        "(`pip install ./python`, see docs/python.md); figures go to the notebook's folder."]}
    # in a notebook the figures show inline; the script's argv handling is harmless there
    nb = {"cells": [intro] + cells,
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


def main():
    with open(SCRIPT, encoding="utf-8") as f:
        text = notebook(f.read())
    if "--check" in sys.argv[1:]:
        with open(NOTEBOOK, encoding="utf-8") as f:
            if f.read() != text:
                print("%s is stale: run /usr/bin/python3 python/tools/gen_notebook.py" % NOTEBOOK)
                return 1
        return 0
    with open(NOTEBOOK, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
