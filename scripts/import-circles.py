#!/usr/bin/env python3
"""Fails when the workspace's Rust code has an import circle.

A circle is a set of modules that import each other in a loop: none of
them can be read, tested or changed without the others. This checks every
level of each crate's `src/`: the files of one folder, and the folders
beside each other, up to the crate's top modules. An import is any
`crate::`, `super::` or `self::` path in code outside `#[cfg(test)]`.

A folder's face (`mod.rs`, `lib.rs`, `main.rs`) declares its children and
hands their names on; its paths into its own folder are structure, not
imports, and are not counted. A child's path up into its face is.

Usage: python3 scripts/import-circles.py [WORKSPACE]   (exit 1 on a circle)
"""

import re
import sys
from pathlib import Path

CRATES = ["protocol", "computerd", "host", "test-support"]
FACES = {"mod.rs", "lib.rs", "main.rs"}
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\b(crate|super|self)::((?:[A-Za-z_][A-Za-z0-9_]*::)*)\{([^{}]*)\}")


def module_of(src: Path, file: Path) -> tuple:
    """The module path of `file` under `src`: ("a", "b") for src/a/b.rs."""
    parts = list(file.relative_to(src).parts)
    if parts[-1] in FACES:
        parts.pop()
    else:
        parts[-1] = parts[-1][: -len(".rs")]
    return tuple(parts)


def code_of(file: Path) -> str:
    """The file without comments and without its test module."""
    text = file.read_text()
    text = re.sub(r"//[^\n]*", "", text)
    test = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))?\s+)?mod\s", text)
    return text[: test.start()] if test else text


def paths_in(code: str):
    """Each `crate::`/`super::`/`self::` path, with `use a::{b, c}` groups
    spread into `a::b` and `a::c` (one level of braces is enough here)."""
    for match in USE_GROUP.finditer(code):
        root, prefix, names = match.groups()
        for name in names.split(","):
            name = name.strip().split(" as ")[0].split("::")[0]
            if name:
                yield root, (prefix + name).split("::")
    for match in PATH.finditer(code):
        yield match.group(1), match.group(2).strip(":").split("::")


def resolve(here: tuple, root: str, names: list, modules: set) -> tuple:
    """The deepest module that `root::names` reaches from module `here`.
    In `a.rs` and `a/mod.rs` alike, `self` is `a` and `super` its parent."""
    base = {"crate": (), "self": here, "super": here[:-1]}[root]
    while names and names[0] == "super":
        base = base[:-1]
        names = names[1:]
    target = base
    for name in names:
        if target + (name,) not in modules:
            break
        target = target + (name,)
    return target


def circles(nodes: set, edges: dict) -> list:
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


def check_crate(crate: Path) -> list:
    src = crate / "src"
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(src, f): f for f in files}
    # Module-to-module imports, with the file each starts in.
    all_modules = set(modules)
    imports = set()
    for file in files:
        here = module_of(src, file)
        is_face = file.name in FACES
        for root, names in paths_in(code_of(file)):
            target = resolve(here, root, names, all_modules)
            if target == here:
                continue
            if is_face and target[: len(here)] == here:
                continue
            imports.add((here, target))
    problems = []
    # Every folder level: siblings under one parent, each standing for
    # everything inside it.
    parents = {m[:-1] for m in modules if m} | {()}
    for parent in sorted(parents):
        depth = len(parent)
        edges = {}
        for source, target in imports:
            if source[:depth] != parent or target[:depth] != parent:
                continue
            if len(source) <= depth or len(target) <= depth:
                continue
            a, b = source[depth], target[depth]
            if a != b:
                edges.setdefault(a, set()).add(b)
        nodes = set(edges) | {b for bs in edges.values() for b in bs}
        for component in circles(nodes, edges):
            where = "::".join(parent) or "the crate root"
            ties = [
                f"{'::'.join(s)} -> {'::'.join(t)}"
                for s, t in sorted(imports)
                if len(s) > depth and len(t) > depth
                and s[:depth] == parent and t[:depth] == parent
                and s[depth] in component and t[depth] in component
                and s[depth] != t[depth]
            ]
            problems.append(
                f"{crate.name}: circle among {', '.join(component)} in {where}:\n    "
                + "\n    ".join(ties)
            )
    return problems


def main() -> int:
    workspace = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent)
    problems = []
    for name in CRATES:
        problems += check_crate(workspace / name)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} import circle(s); break each by moving the shared piece "
              "into a module both may import, or by passing it in.")
        return 1
    print(f"no import circles in {', '.join(CRATES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
