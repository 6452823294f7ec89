#!/usr/bin/env python3
"""Checks that kiln's layers include only downward.

Every `#include "..."` in a source file of the tree is resolved against the
public include roots of the layers and against the including file's own
directory. The layers, lowest first:

  runtime   runtime/, tools/kiln-run/       (no LLVM/MLIR, nothing of the compiler)
  ir        ir/
  passes    passes/
  backends  backends/
  compiler  compiler/
  tools     tools/ (other than kiln-run), examples/, test/, bench/

A file may include its own layer's headers and those of lower layers only.
The runtime layer may not include LLVM or MLIR headers at all. A relative
include that leaves the including file's top-level source folder
(`#include "../common/X.h"` from backends/cpu/ reaching another folder of the
same library is fine only through an include root, never through `..`) is an
error too: such includes hide a dependency the build does not state.

Usage: check_layering.py SOURCE_ROOT
Prints one line per violation (file:line: message) and exits 1 if there is
any, 0 otherwise.
"""

import os
import re
import sys

LAYERS = ["runtime", "ir", "passes", "backends", "compiler", "tools"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Public include roots, each owned by one layer.
INCLUDE_ROOTS = [
    ("runtime/include", "runtime"),
    ("ir/include", "ir"),
    ("passes/include", "passes"),
    ("passes/fusion/include", "passes"),
    ("backends/include", "backends"),
    ("compiler/include", "compiler"),
]

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".def", ".inc")
SKIP_DIRS = {".git", "__pycache__", "Inputs"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def layer_of(relpath):
    """The layer a file of the tree belongs to, or None if it is in none."""
    parts = relpath.split(os.sep)
    top = parts[0]
    if top == "runtime" or (top == "tools" and len(parts) > 1
                            and parts[1] == "kiln-run"):
        return "runtime"
    if top in ("ir", "passes", "backends", "compiler"):
        return top
    if top in ("tools", "examples", "test", "bench"):
        return "tools"
    return None


def is_build_dir(root, name):
    path = os.path.join(root, name)
    return name.startswith("build") or os.path.exists(
        os.path.join(path, "CMakeCache.txt"))


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith(".")
                             and not is_build_dir(dirpath, d))
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, name)


def resolve(root, including, target):
    """The layer owning `target`, included from file `including`, or None
    when it is not one of the tree's headers (system, LLVM, generated)."""
    for include_root, layer in INCLUDE_ROOTS:
        if os.path.isfile(os.path.join(root, include_root, target)):
            return layer
    local = os.path.normpath(
        os.path.join(os.path.dirname(including), target))
    if os.path.isfile(local):
        return layer_of(os.path.relpath(local, root))
    return None


def check(root):
    errors = []
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        layer = layer_of(rel)
        if layer is None:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(2)
            where = f"{rel}:{number}"
            if layer == "runtime" and re.match(r"(mlir|llvm|llvm-c)/", target):
                errors.append(f"{where}: the runtime includes '{target}' "
                              "(it must not depend on LLVM or MLIR)")
                continue
            if m.group(1) == '"' and target.startswith("../"):
                errors.append(f"{where}: relative include '{target}' crosses "
                              "folders; include it through its library's "
                              "include directory")
            owner = resolve(root, path, target)
            if owner is not None and RANK[owner] > RANK[layer]:
                errors.append(f"{where}: layer '{layer}' includes '{target}' "
                              f"of the higher layer '{owner}'")
    return errors


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.stderr.write("usage: check_layering.py SOURCE_ROOT\n")
        return 2
    errors = check(os.path.abspath(argv[1]))
    for error in errors:
        print(error)
    if errors:
        print(f"{len(errors)} layering violation(s)")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
