"""The GPU's inline math (`compiler.codegen.gpu_math`) run on the host CPU.

    device_math("math.sin", np.float32)(x) -> np.ndarray     elementwise, as a kernel computes it

The emitter's LLVM IR (no fast-math flags, only exactly-rounded operations
and intrinsics) is compiled for the host and run over numpy arrays, so the
simulated device (`gpu_sim`) and the accuracy tests compute what the kernel
computes. f16 is computed in f32 and rounded, as the NVPTX emitter does.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from dfc.compiler.codegen.gpu_math import MATH1, MATH2
from dfc.compiler.codegen.target import host_target_machine

__all__ = ["device_math", "DEVICE_MATH_OPS"]

DEVICE_MATH_OPS = frozenset(MATH1) | frozenset(MATH2)

_TYPES = {np.dtype(np.float32): ir.FloatType(), np.dtype(np.float64): ir.DoubleType()}
_I64 = ir.IntType(64)
_SUFFIX = {ir.FloatType: "f32", ir.DoubleType: "f64"}
_ENGINES: list[llvm.ExecutionEngine] = []  # kept alive with their code


class _Emitter:
    """What the gpu_math emitters use of a function emitter."""

    def __init__(self, module: ir.Module, fn: ir.Function, b: ir.IRBuilder):
        self.m, self.fn, self.b = module, fn, b

    def call_intrinsic(self, base: str, ty: ir.Type, args: list[ir.Value]) -> ir.Value:
        name = f"llvm.{base}.{_SUFFIX[type(ty)]}"
        fn = self.m.globals.get(name) or ir.Function(self.m, ir.FunctionType(ty, [a.type for a in args]), name)
        return self.b.call(fn, args)


@functools.cache
def _compiled(name: str, dtype: np.dtype) -> Callable[..., None]:
    ty = _TYPES[dtype]
    arity = 1 if name in MATH1 else 2
    module = ir.Module("device_math")
    ptr = ir.PointerType()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (arity + 1) + [_I64]), "apply")
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    n = fn.args[-1]
    b.cbranch(b.icmp_signed(">", n, ir.Constant(_I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(_I64)
    i.add_incoming(ir.Constant(_I64, 0), entry)
    xs = [b.load(b.gep(fn.args[k], [i], source_etype=ty), typ=ty) for k in range(arity)]
    e = _Emitter(module, fn, b)
    r = (MATH1 if arity == 1 else MATH2)[name](e, *xs)
    b.store(r, b.gep(fn.args[arity], [i], source_etype=ty))
    nxt = b.add(i, ir.Constant(_I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    tm = host_target_machine(2)
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    engine = llvm.create_mcjit_compiler(parsed, tm)
    engine.finalize_object()
    _ENGINES.append(engine)
    proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (arity + 1), ctypes.c_int64)
    return proto(engine.get_function_address("apply"))


def device_math(name: str, dtype) -> Callable[..., np.ndarray]:
    """`name` (a key of MATH1 or MATH2) elementwise on arrays of `dtype` (f16, f32, f64)."""
    dtype = np.dtype(dtype)
    compute = np.dtype(np.float32) if dtype == np.float16 else dtype
    fn = _compiled(name, compute)

    def apply(*args: np.ndarray) -> np.ndarray:
        arrays = np.broadcast_arrays(*args)
        xs = [np.ascontiguousarray(a, dtype=compute).reshape(-1) for a in arrays]  # 0-d: one element
        out = np.empty(xs[0].shape, compute)
        fn(*[x.ctypes.data for x in xs], out.ctypes.data, out.size)
        return out.reshape(arrays[0].shape).astype(dtype)

    return apply
