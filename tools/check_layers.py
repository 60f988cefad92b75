#!/usr/bin/env python3
"""check_layers.py: core/src's architecture, checked (issue 38; core/src/README.md).

  python3 tools/check_layers.py [--objects OBJ.o ...]

1. Layers: each file of core/src/<layer>/ includes only headers of its own layer and the
   layers below it (LAYERS, bottom first), always by their folder ("model/compute.h"),
   never core/src/internal.h (the umbrella for the programs outside the library).
2. No cycle among the includes of core/src's files.
3. With --objects (the library's object files, as the ctest `layers` passes them): the
   linker's view of who calls whom, from `nm`: a file calls only files of its own layer or
   below, and no files call each other in a cycle.
4. Sizes: no file over MAX_FILE_LINES lines, no function over MAX_FUNCTION_LINES lines
   (from the first line of its declarator to its closing brace), except the entries of
   PENDING, which may not grow.  Prints the largest file and function either way.

Exit status 0 when everything holds, 1 with one line per breach otherwise.
"""
import os
import re
import subprocess
import sys

LAYERS = ["base", "catalog", "model", "sim", "fit", "search"]
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 100
# Files and functions still over the limits, with the size they may not exceed.  The list only
# shrinks: what is taken apart leaves it.
PENDING = {
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "core", "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    """core/src/<layer>/<file>, relative to core/src, sorted."""
    out = []
    for layer in sorted(os.listdir(SRC)):
        d = os.path.join(SRC, layer)
        if os.path.isdir(d):
            out += [layer + "/" + f for f in sorted(os.listdir(d)) if f.endswith((".c", ".h"))]
    return out


def layer_of(path):
    return path.split("/", 1)[0]


def find_cycles(graph):
    """Strongly connected components of more than one node (Tarjan), or a node calling itself."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def check_includes(files, errors):
    graph = {}
    for f in files:
        text = open(os.path.join(SRC, f), encoding="utf-8").read()
        graph[f] = set()
        for inc in INCLUDE.findall(text):
            if inc == "epochcast.h":
                continue
            if inc == "internal.h":
                errors.append(f"{f}: includes internal.h (the umbrella for programs outside the library)")
                continue
            if "/" not in inc or layer_of(inc) not in LAYERS:
                errors.append(f"{f}: includes \"{inc}\": name a header by its folder, \"<layer>/<file>.h\"")
                continue
            if not os.path.exists(os.path.join(SRC, inc)):
                errors.append(f"{f}: includes \"{inc}\", which does not exist")
                continue
            if LAYERS.index(layer_of(inc)) > LAYERS.index(layer_of(f)):
                errors.append(f"{f}: includes {inc} from the layer above ({layer_of(inc)} over {layer_of(f)})")
            graph[f].add(inc)
    for comp in find_cycles(graph):
        errors.append("include cycle: " + " -> ".join(comp))
    return graph


def check_calls(objects, errors):
    """Who calls whom, by the symbols each object defines and leaves undefined."""
    defined, needed = {}, {}
    for obj in objects:
        m = re.search(r"src/(\w+/\w+\.c)\.o$", obj.replace(os.sep, "/"))
        if not m:
            errors.append(f"{obj}: not an object of core/src/<layer>/")
            continue
        name = m.group(1)
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        needed[name] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRW":
                defined[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                needed[name].add(parts[1])
    graph = {}
    for f, syms in needed.items():
        graph[f] = set()
        for s in syms:
            g = defined.get(s)
            if g is None or g == f:
                continue
            graph[f].add(g)
            if LAYERS.index(layer_of(g)) > LAYERS.index(layer_of(f)):
                errors.append(f"{f}: calls {s} of {g} in the layer above")
    for comp in find_cycles(graph):
        errors.append("call cycle: " + " -> ".join(comp))
    return graph


FUNC_NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")


def functions(path):
    """(name, first line, line count) of each function: its declarator, then '{' alone at
    column 0, to the next '}' at column 0."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("{"):
            j = i - 1
            head = ""
            while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith((";", "}", "*/")):
                head = lines[j] + " " + head
                if lines[j][:1].strip() and "(" in lines[j]:
                    break
                j -= 1
            m = FUNC_NAME.search(head)
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            if m:  # from the declarator's first line to the closing brace
                out.append((m.group(1), j + 1, end - j + 1))
            i = end
        i += 1
    return out


def check_sizes(files, errors):
    biggest_file, biggest_fn = ("", 0), ("", "", 0)
    for f in files:
        path = os.path.join(SRC, f)
        n = sum(1 for _ in open(path, encoding="utf-8"))
        if n > biggest_file[1]:
            biggest_file = (f, n)
        limit = PENDING.get(f, MAX_FILE_LINES)
        if n > limit:
            errors.append(f"{f}: {n} lines, over {limit}" + (" (pending, may not grow)" if f in PENDING else ""))
        if f.endswith(".c"):
            for name, line, count in functions(path):
                if count > biggest_fn[2]:
                    biggest_fn = (f"{f}:{line}", name, count)
                key = f"{f}:{name}"
                limit = PENDING.get(key, MAX_FUNCTION_LINES)
                if count > limit:
                    errors.append(f"{f}:{line}: {name} is {count} lines, over {limit}"
                                  + (" (pending, may not grow)" if key in PENDING else ""))
    print(f"largest file: {biggest_file[0]} ({biggest_file[1]} lines; limit {MAX_FILE_LINES})")
    print(f"largest function: {biggest_fn[1]} at {biggest_fn[0]} ({biggest_fn[2]} lines; limit {MAX_FUNCTION_LINES})")


def main(argv):
    objects = []
    if argv[:1] == ["--objects"]:
        # ctest hands $<TARGET_OBJECTS:...> over as one ;-separated word
        objects = [o for a in argv[1:] for o in a.split(";") if o]
    elif argv:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 2
    errors = []
    files = sources()
    stray = [f for f in os.listdir(SRC) if f.endswith(".c")]
    errors += [f"core/src/{f}: a source outside the layers' folders" for f in stray]
    unknown = sorted({layer_of(f) for f in files} - set(LAYERS))
    errors += [f"core/src/{u}/: a folder that is not a layer ({', '.join(LAYERS)})" for u in unknown]
    files = [f for f in files if layer_of(f) in LAYERS]
    inc = check_includes(files, errors)
    print(f"includes: {sum(len(v) for v in inc.values())} among {len(files)} files of {len(LAYERS)} layers")
    if objects:
        calls = check_calls(objects, errors)
        print(f"calls: {sum(len(v) for v in calls.values())} file-to-file edges among {len(calls)} objects")
    check_sizes(files, errors)
    for e in errors:
        print("breach:", e)
    print("layers: " + ("ok" if not errors else f"{len(errors)} breaches"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
