"""Importing and using dfc leaves xDSL as it is: dfc's fixes are subclasses
and functions of its own (`dialects/xdsl_fixes.py`), and the one patch,
location propagation (`compiler/locations.py`), is undone when a pass
manager's run ends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from xdsl.ir import Block

from dfc.compiler import locations

ROOT = Path(__file__).parent.parent

CHILD = r'''
import importlib, json, pkgutil, sys

XDSL = ["xdsl.ir", "xdsl.ir.core", "xdsl.irdl", "xdsl.context", "xdsl.builder", "xdsl.rewriter",
        "xdsl.pattern_rewriter", "xdsl.printer", "xdsl.parser", "xdsl.parser.core", "xdsl.parser.attribute_parser",
        "xdsl.parser.base_parser", "xdsl.parser.generic_parser", "xdsl.utils.lexer", "xdsl.utils.mlir_lexer",
        "xdsl.traits", "xdsl.passes", "xdsl.universe", "xdsl.dialects.builtin", "xdsl.dialects.arith",
        "xdsl.dialects.func", "xdsl.dialects.math", "xdsl.dialects.scf", "xdsl.dialects.tensor",
        "xdsl.dialects.memref", "xdsl.dialects.llvm", "xdsl.transforms", "xdsl.transforms.canonicalize",
        "xdsl.transforms.common_subexpression_elimination", "xdsl.transforms.dead_code_elimination"]
for name in XDSL:
    importlib.import_module(name)

from xdsl.ir import Dialect


def snapshot():
    """id of every module-level attribute of every loaded xDSL module, of every
    attribute of the classes (nested ones too) they define, and what each
    dialect holds."""
    seen = {}
    for mn, mod in list(sys.modules.items()):
        if not mn.startswith("xdsl") or mod is None:
            continue
        todo = []
        for key, value in list(vars(mod).items()):
            seen[f"{mn}:{key}"] = id(value)
            if isinstance(value, type) and value.__module__ == mn:
                todo.append((f"{mn}:{key}", value))
            if isinstance(value, Dialect):
                seen[f"{mn}:{key}.<contents>"] = hash((tuple(map(id, value.operations)),
                                                      tuple(map(id, value.attributes)),
                                                      tuple(map(id, value._interfaces))))
        done = set()
        while todo:
            where, cls = todo.pop()
            if id(cls) in done:
                continue
            done.add(id(cls))
            for key, value in list(vars(cls).items()):
                seen[f"{where}.{key}"] = id(value)
                if isinstance(value, type) and value.__module__ == mn:
                    todo.append((f"{where}.{key}", value))
    return seen


before = snapshot()

import dfc, dfc.compiler, dfc.passes, dfc.dialects, dfc.frontend, dfc.tools.opt_tool  # noqa: E401
for package in (dfc.compiler, dfc.passes, dfc.dialects, dfc.frontend):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)

import numpy as np

@dfc.jit
def f(x, y):
    return np.sum(np.exp(x) * y + x[::-1])

x, y = np.linspace(0, 1, 16), np.linspace(1, 2, 16)
assert np.isclose(f(x, y), np.sum(np.exp(x) * y + x[::-1]))
dx = dfc.grad(f)(x, y)
assert np.allclose(dx, np.exp(x) * y + 1), dx

from dfc.compiler import PassManager, parse_module
module = parse_module(open(sys.argv[1]).read(), sys.argv[1])
PassManager.parse("autodiff{func=mlp},default").run(module)
text = 'func.func @g() -> tensor<2xf32> attributes {s = "a\\"b\\n"} {\n' \
       '  %c = arith.constant dense<0xFF800000> : tensor<2xf32>\n  func.return %c : tensor<2xf32>\n}\n'
assert "dense<0xff800000>" in str(parse_module(text))
assert dfc.tools.opt_tool.main([sys.argv[1], "--autodiff", "-p", "expand-library,canonicalize,cse,dce,fuse",
                                "-o", sys.argv[2]]) == 0

after = snapshot()
print(json.dumps(sorted(k for k in before if k in after and before[k] != after[k])))
'''


def test_importing_and_using_dfc_changes_no_xdsl_attribute(tmp_path):
    """In a fresh interpreter: snapshot xDSL's modules, classes and dialects,
    import every dfc subpackage, compile, run and differentiate a NumPy
    function, run a pipeline and opt-tool through the Python API, compare."""
    script = tmp_path / "child.py"  # a file: the frontend reads the jitted function's source
    script.write_text(CHILD)
    run = subprocess.run(
        [sys.executable, str(script), str(ROOT / "examples" / "mlp.mlir"), str(tmp_path / "out.mlir")],
        check=False, capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    changed = json.loads(run.stdout.strip().splitlines()[-1])
    assert changed == [], changed
    assert "func.func @mlp_grad" in (tmp_path / "out.mlir").read_text()


def test_location_propagation_is_undone_after_nested_entries():
    xdsl = (Block.__dict__["insert_op_before"], Block.__dict__["_attach_op"])
    with locations.propagated():
        patched = (Block.__dict__["insert_op_before"], Block.__dict__["_attach_op"])
        assert patched != xdsl
        with locations.propagated():
            pass
        assert (Block.__dict__["insert_op_before"], Block.__dict__["_attach_op"]) == patched
    assert (Block.__dict__["insert_op_before"], Block.__dict__["_attach_op"]) == xdsl
