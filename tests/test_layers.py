"""The layering rule of docs/architecture.md, read from the installed package:
every import of a dfc module (module level or inside a function) goes to the
same layer or a lower one, and no modules import each other in a circle.

Layers, lowest first: `dfc.config` (the environment settings, a leaf),
`dfc.dialects` (IR: ops, verifiers, canonicalisation, the IR helpers they need), `dfc.passes` (transforms and conversions),
`dfc.compiler` (pipeline, backend, execution), the Python API (`dfc`,
`dfc.frontend`, `dfc.torch`, `dfc.importers`), `dfc.tools` (command lines).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os

LAYERS = ("dfc.config", "dfc.dialects", "dfc.passes", "dfc.compiler", "dfc", "dfc.tools")

KNOWN_UPWARD: set[str] = set()
KNOWN_CIRCLES: list[list[str]] = []
"""The exceptions left, each with its reason; a test fails when one is gone (remove it here) or a new one appears."""


def _modules() -> dict[str, str]:
    """Every module of the installed package: name -> file (the layers' packages
    are mapped from folders of their own, so each is walked from its root)."""
    out: dict[str, str] = {}
    todo = list(LAYERS)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, name
        out[name] = spec.origin
        for folder in spec.submodule_search_locations or []:
            for entry in sorted(os.listdir(folder)):
                path = os.path.join(folder, entry)
                if entry.endswith(".py") and entry != "__init__.py":
                    todo.append(f"{name}.{entry[:-3]}")
                elif os.path.isfile(os.path.join(path, "__init__.py")):
                    todo.append(f"{name}.{entry}")
    return out


def _imports(name: str, path: str, known: dict[str, str]) -> set[str]:
    """The dfc modules `name` imports anywhere in its file (`TYPE_CHECKING` blocks aside)."""
    tree = ast.parse(open(path).read(), path)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
               for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" for a in node.names]
            if not all(t in known for t in targets):  # names defined in `base` itself, not its submodules
                targets.append(base)
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _layer(module: str) -> int:
    """The index in LAYERS of the longest layer name that is `module` or a package above it."""
    matches = [layer for layer in LAYERS if module == layer or module.startswith(layer + ".")]
    return LAYERS.index(max(matches, key=len))


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Each module's dfc imports, read once per process (the tests only read it)."""
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (imports of a package's own `__init__` aside)."""
    imported = set().union(*graph.values())
    packages = {t for t in imported if (importlib.util.find_spec(t).origin or "").endswith("__init__.py")}
    graph = {m: targets - packages for m, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_imports_go_down_the_layers():
    upward = {f"{m} -> {t}" for m, targets in _graph().items() for t in targets if _layer(t) > _layer(m)}
    assert upward <= KNOWN_UPWARD, "imports from a lower layer into a higher one:\n" + "\n".join(sorted(upward - KNOWN_UPWARD))
    assert KNOWN_UPWARD <= upward, f"fixed, remove from KNOWN_UPWARD: {sorted(KNOWN_UPWARD - upward)}"


def test_no_import_circles():
    circles = _circles(_graph())
    new = [c for c in circles if c not in KNOWN_CIRCLES]
    assert not new, "modules importing each other in a circle:\n" + "\n".join(" ".join(c) for c in new)
    gone = [c for c in KNOWN_CIRCLES if c not in circles]
    assert not gone, f"fixed, remove from KNOWN_CIRCLES: {gone}"


def test_the_rule_sees_every_layer():
    """The walk finds modules in every layer, and a known import (so an empty graph cannot pass)."""
    graph = _graph()
    assert {LAYERS[_layer(m)] for m in graph} == set(LAYERS)
    assert "dfc.dialects.nn_base" in graph["dfc.dialects.nn"]
