#!/usr/bin/env python3
"""Checks the shape of the library that the README's layout table promises.

- Layers: a file in sim/LAYER/ or include/relsim/LAYER/ includes only its own
  layer and the layers listed before it (core, parallel, exact, montecarlo,
  sweep, fleet, live, fit, ui, cli).
- Sizes: no source file under sim/ or include/ over 500 lines, no function
  over 80 lines (from the first line of its signature to its closing brace).
- Nothing under sim/ but main.cpp and CMakeLists.txt outside a layer folder.

Prints one line per finding and exits 1 if there is any; `--report` also
lists the longest files and functions. Run by ctest as `structure` (label unit).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["core", "parallel", "exact", "montecarlo", "sweep", "fleet", "live", "fit", "ui", "cli"]
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80


def sources():
    for top in ("sim", "include/relsim"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                if name.endswith((".cpp", ".hpp")):
                    path = os.path.join(folder, name)
                    yield top, os.path.relpath(path, os.path.join(ROOT, top)), path


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return re.sub(r"//.*", "", line)


def functions(lines):
    """(length, first line) of each function body opened outside any other
    body; namespace, extern and type bodies are looked into, not counted."""
    found, depth, open_scopes, start, body_depth = [], 0, [], None, None
    for i, raw in enumerate(lines):
        code = strip(raw)
        for k, ch in enumerate(code):
            if ch == "{":
                if start is None and depth == len(open_scopes):
                    head = code[:k]
                    if re.search(r"\bnamespace\b|extern\s*\"", head) or re.match(r"\s*namespace\b", code):
                        open_scopes.append(depth)
                    elif re.search(r"\b(struct|class|union|enum)\b", head) and "(" not in head:
                        open_scopes.append(depth)
                    else:
                        first = i
                        while first > 0 and lines[first - 1].strip() and not lines[first - 1].strip().startswith(
                                ("//", "#")) and not strip(lines[first - 1]).rstrip().endswith((";", "}", "{", ":")):
                            first -= 1
                        start, body_depth = first, depth
                depth += 1
            elif ch == "}":
                depth -= 1
                if open_scopes and open_scopes[-1] == depth:
                    open_scopes.pop()
                elif start is not None and depth == body_depth:
                    found.append((i - start + 1, start + 1))
                    start = None
    return found


def main():
    report = "--report" in sys.argv[1:]
    problems, sizes, longest = [], [], []
    for top, rel, path in sources():
        text = open(path, encoding="utf-8").read()
        lines = text.split("\n")
        name = os.path.relpath(path, ROOT)
        layer = rel.split("/")[0] if "/" in rel else None
        if layer is None and top == "sim" and rel != "main.cpp":
            problems.append(f"{name}: outside a layer folder (sim/LAYER/)")
        if layer is not None and layer not in LAYERS:
            problems.append(f"{name}: '{layer}' is not a layer ({', '.join(LAYERS)})")
        if layer in LAYERS:
            allowed = set(LAYERS[: LAYERS.index(layer) + 1])
            for n, line in enumerate(lines, 1):
                m = re.match(r'\s*#include "(?:relsim/)?([a-z_]+)/', line)
                if m and m.group(1) in LAYERS and m.group(1) not in allowed:
                    problems.append(f"{name}:{n}: layer {layer} includes layer {m.group(1)}, which comes after it")
        count = len(lines) - (1 if text.endswith("\n") else 0)
        sizes.append((count, name))
        if count > MAX_FILE_LINES:
            problems.append(f"{name}: {count} lines, over {MAX_FILE_LINES}")
        for length, first in functions(lines):
            longest.append((length, f"{name}:{first}"))
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{name}:{first}: a function of {length} lines, over {MAX_FUNCTION_LINES}")
    if report:
        print("longest files:", ", ".join(f"{n} {c}" for c, n in sorted(sizes, reverse=True)[:5]))
        print("longest functions:", ", ".join(f"{w} {c}" for c, w in sorted(longest, reverse=True)[:5]))
        print(f"{len(sizes)} files, {len(longest)} functions")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
