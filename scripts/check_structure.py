#!/usr/bin/env python3
"""Checks the shape of the library that the README's layout table promises.

- Layers: a file in sim/LAYER/ or include/relsim/LAYER/ includes only its own
  layer and the layers listed before it (LAYERS below; docs/architecture.md
  says what each holds), and another layer's code only through its public
  headers: a quoted include of a private header ("LAYER/...", not
  "relsim/LAYER/...") names the file's own layer.
- Sizes: no source file under sim/ or include/ over 500 lines, no function
  over 80 lines (from the first line of its signature to its closing brace),
  no layer over 5,000 lines (sim/LAYER/ and include/relsim/LAYER/ together).
- Headers: each has a source of the same name beside it (sim/L/x.hpp:
  sim/L/x.cpp; include/relsim/L/x.hpp: sim/L/x.cpp), or says why not in its
  first comment line ("Header only" or "No x.cpp: ...").
- Nothing under sim/ but main.cpp and CMakeLists.txt outside a layer folder.
- The README's layout table: a row for each folder of sim/ that holds
  sources, naming each of its files and public headers by stem (`name`, `name.hpp`, or a
  pattern such as `kernel_*`), and no row for a folder that is gone.

Prints one line per finding and exits 1 if there is any; `--report` also
lists the longest files and functions. Run by ctest as `structure` (label unit).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["core", "parallel", "formats", "exact", "montecarlo", "sweep", "fleet", "server", "client", "live", "audit",
          "tools", "bughunt", "fit", "ui", "contention", "options", "cli"]
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
MAX_LAYER_LINES = 5000


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


def source_of(top, rel):
    """The path of the .cpp a header at top/rel is defined in, by name."""
    return os.path.join(ROOT, "sim", os.path.splitext(rel)[0] + ".cpp")


def says_why(lines):
    """The header's first comment line says it is header only or why no
    source of its name exists."""
    for line in lines:
        text = line.strip()
        if text.startswith("//"):
            return re.match(r"//\s*(Header only|No [a-z_]+\.cpp\b)", text) is not None
        if text and not text.startswith("#pragma"):
            return False
    return False


def layout_problems():
    """The README's layout table against the tree."""
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    rows = {}
    for m in re.finditer(r"^\| `sim/([a-z_/]+)/` \|(.*)\|\s*$", readme, re.M):
        rows[m.group(1)] = set(re.findall(r"`([^`]+)`", m.group(2)))
    problems = []
    folders = {}
    for folder, _, names in os.walk(os.path.join(ROOT, "sim")):
        rel = os.path.relpath(folder, os.path.join(ROOT, "sim"))
        stems = sorted({os.path.splitext(n)[0] for n in names if n.endswith((".cpp", ".hpp"))})
        public = os.path.join(ROOT, "include", "relsim", rel)
        if rel != "." and os.path.isdir(public):
            stems = sorted(set(stems) | {os.path.splitext(n)[0] for n in os.listdir(public) if n.endswith(".hpp")})
        if rel != "." and stems and not rel.startswith("ui/web"):
            folders[rel] = stems
    for rel, stems in sorted(folders.items()):
        if rel not in rows:
            problems.append(f"README.md: the layout table has no row for sim/{rel}/")
            continue
        named = rows[rel]
        patterns = [n[:-1] for n in named if n.endswith("*") or n.endswith("*.cpp")]
        patterns += [n[: -len("*.cpp")] for n in named if n.endswith("*.cpp")]
        for stem in stems:
            if stem in named or f"{stem}.hpp" in named or f"{stem}.cpp" in named:
                continue
            if any(p and stem.startswith(p.rstrip("*")) for p in patterns):
                continue
            problems.append(f"README.md: the row of sim/{rel}/ does not name {stem}")
    for rel in sorted(set(rows) - set(folders)):
        problems.append(f"README.md: the layout table has a row for sim/{rel}/, which holds no sources")
    return problems


def main():
    report = "--report" in sys.argv[1:]
    problems, sizes, longest = [], [], []
    layer_lines = {}
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
                private = re.match(r'\s*#include "([a-z_]+)/', line)
                if private and private.group(1) in LAYERS and private.group(1) != layer:
                    problems.append(f"{name}:{n}: layer {layer} reaches into a private header of layer "
                                    f"{private.group(1)} (make it public in include/relsim/{private.group(1)}/)")
        count = len(lines) - (1 if text.endswith("\n") else 0)
        if layer in LAYERS:
            layer_lines[layer] = layer_lines.get(layer, 0) + count
        if path.endswith(".hpp") and not os.path.exists(source_of(top, rel)) and not says_why(lines):
            problems.append(f"{name}: no {os.path.basename(source_of(top, rel))} beside it, and its first comment "
                            "line does not say why (\"Header only\" or \"No NAME.cpp: ...\")")
        sizes.append((count, name))
        if count > MAX_FILE_LINES:
            problems.append(f"{name}: {count} lines, over {MAX_FILE_LINES}")
        for length, first in functions(lines):
            longest.append((length, f"{name}:{first}"))
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{name}:{first}: a function of {length} lines, over {MAX_FUNCTION_LINES}")
    for layer, count in sorted(layer_lines.items()):
        if count > MAX_LAYER_LINES:
            problems.append(f"sim/{layer}/ and include/relsim/{layer}/: {count} lines, over {MAX_LAYER_LINES}")
    problems += layout_problems()
    if report:
        print("lines per layer:", ", ".join(f"{layer} {layer_lines.get(layer, 0)}" for layer in LAYERS))
        print("longest files:", ", ".join(f"{n} {c}" for c, n in sorted(sizes, reverse=True)[:5]))
        print("longest functions:", ", ".join(f"{w} {c}" for c, w in sorted(longest, reverse=True)[:5]))
        print(f"{len(sizes)} files, {len(longest)} functions")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
