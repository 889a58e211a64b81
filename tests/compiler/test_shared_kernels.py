"""Outlined kernels of one shape at different arena offsets compile once.

An outlined loop nest takes the views of a writable global (mem-plan's arena)
as arguments (`outline.Outlined`), with their alignment and size, so that
nests that differ only in where their buffers lie are the same function but
for their names and LLVM's `mergefunc` keeps one; the results are those of
the nests run element by element in NumPy (the interpreter takes no memrefs).
"""

from __future__ import annotations

import re

import numpy as np

from dfc.compiler import parse_module
from dfc.compiler.codegen.llvm.jit import merge_identical_functions
from dfc.compiler.codegen.llvm.module import emit_module
from dfc.compiler.codegen.llvm.outline import OUTLINE_MIN_NESTS
from dfc.compiler.codegen.target import host_target_machine

_N = 64


def _nest(dst: str, src: str, op: str, check: tuple[str, int] | None = None) -> str:
    """`dst[i] = src[i] op src[i]` over the 64 elements; with `check` (offset
    k, line), `src[i + k]` read with a bounds check at `model.py:line`."""
    load = f"%v = memref.load {src}[%i] : memref<64xf64>"
    if check is not None:
        load = (f"%j = arith.addi %i, {check[0]} : index\n    %v = memref.load {src}[%j] "
                f'{{check_bounds = "x[i]"}} : memref<64xf64> loc("model.py":{check[1]}:3)')
    return f"""
  scf.for %i = %c0 to %n step %c1 {{
    {load}
    %w = arith.{op} %v, %v : f64
    memref.store %w, {dst}[%i] : memref<64xf64>
  }}"""


def _program(checks: dict[int, tuple[str, int]] | None = None) -> str:
    """@f(x) -> y through arena views a, b, c, d (`%vK` at byte 512 K; `%s`, a
    second view of a's bytes): x -> a, then the same two nests on (a, b) and
    on (c, d) (kernels of one shape at different offsets), an in-place nest
    on a through two views of its bytes, and one on the overlapping views b
    and `%o` (half of b, half of c). `checks`: nest -> `_nest`'s `check`, for
    a program taking the offsets `%a` and `%b` too."""
    checks = checks or {}
    views = "".join(f"""
  %off{k} = arith.constant {512 * k} : index
  %v{k} = memref.view %arena[%off{k}][] : memref<4096xi8> to memref<64xf64>""" for k in range(4))
    nests = [
        _nest("%v0", "%x", "addf"),
        _nest("%v1", "%v0", "mulf", checks.get(1)), _nest("%v0", "%v1", "addf"),
        _nest("%v2", "%v0", "mulf", checks.get(3)), _nest("%v3", "%v2", "addf"),
        _nest("%v2", "%v3", "mulf"), _nest("%v1", "%v2", "addf"),
        _nest("%s", "%v1", "mulf").replace("memref.load %v1", "memref.load %v0"),
        _nest("%o", "%v1", "addf"),
        _nest("%y", "%v2", "addf"),
    ]
    return f"""
"memref.global"() <{{sym_name = "arena", type = memref<4096xi8>, initial_value, sym_visibility = "private", alignment = 64 : i64}}> : () -> ()
func.func @f(%x: memref<64xf64>, %y: memref<64xf64>{", %a: index, %b: index" if checks else ""}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {_N} : index
  %arena = memref.get_global @arena : memref<4096xi8>{views}
  %s = memref.view %arena[%off0][] : memref<4096xi8> to memref<64xf64>
  %offo = arith.constant 768 : index
  %o = memref.view %arena[%offo][] : memref<4096xi8> to memref<64xf64>{"".join(nests)}
  func.return
}}"""


def _defined(text: str, kind: str) -> list[str]:
    return re.findall(rf'^define internal void @"?(f\.{kind}[\w.]*)"?\((.*)\)[^()]*$', text, re.M)


def test_kernels_at_different_arena_offsets_compile_once():
    import llvmlite.binding as llvm

    text = _program()
    assert text.count("scf.for") >= OUTLINE_MIN_NESTS
    emitted = str(emit_module(parse_module(text)))
    bodies = _defined(emitted, "nest")
    assert len(bodies) == 10
    signatures = [params for _, params in bodies]
    # a view of the arena is an argument, aligned and as large as the view; both views of a's bytes are one argument
    view = 'ptr captures(none) noalias align 64 dereferenceable(512) %".{}"'
    assert signatures[1] == signatures[3] == f"{view.format(1)}, {view.format(2)}"
    assert signatures[7].count("ptr") == 1  # %s and %v0: one argument
    # b and the view over half of b and half of c overlap: neither is noalias
    assert signatures[8] == f"{view.format(1)}, {view.format(2)}".replace(" noalias", "")
    tm = host_target_machine(3)
    mod = llvm.parse_assembly(emitted)
    merge_identical_functions(mod, tm)
    merged = {name for name, _ in _defined(str(mod), "nest")}
    # nests 1, 3 and 5 (a mulf from one view into another), 2, 4 and 6 (an addf) are one function each
    assert len(merged) == 10 - 4

    from dfc.compiler import ExecutionEngine

    x = np.random.default_rng(0).standard_normal(_N)
    y = np.zeros(_N)
    ExecutionEngine(parse_module(text)).invoke("f", x, y)
    # the nests one element at a time on an array of the arena's float64 slots
    arena, buffers = np.zeros(512), {"%x": x, "%y": np.zeros(_N)}
    buffers |= {f"%v{k}": arena[64 * k : 64 * k + 64] for k in range(4)} | {"%s": arena[:64], "%o": arena[96:160]}
    for src, op, dst in re.findall(r"load (%\w+).*?arith\.(\w+).*?store %w, (%\w+)", text, re.S):
        for i in range(_N):
            v = buffers[src][i]
            buffers[dst][i] = v + v if op == "addf" else v * v
    np.testing.assert_array_equal(y, buffers["%y"])



def test_a_merged_kernel_reports_its_own_bounds_failure():
    """Nests 1 and 3 read `src[i + a]` and `src[i + b]` with bounds checks at
    two source lines: one function, which takes its message as an argument;
    a failure names the line of the nest that failed."""
    import pytest

    from dfc.compiler import ExecutionEngine

    text = _program({1: ("%a", 11), 3: ("%b", 7)})
    signatures = [params for _, params in _defined(str(emit_module(parse_module(text))), "nest")]
    assert signatures[1] == signatures[3] and signatures[1].endswith('ptr %".4"')  # views, the offset, the message
    engine = ExecutionEngine(parse_module(text))
    x = np.random.default_rng(0).standard_normal(_N)
    engine.invoke("f", x, np.zeros(_N), 0, 0)
    with pytest.raises(IndexError, match=r"model\.py:7:3"):
        engine.invoke("f", x, np.zeros(_N), 0, 1)
    with pytest.raises(IndexError, match=r"model\.py:11:3"):
        engine.invoke("f", x, np.zeros(_N), 1, 0)
