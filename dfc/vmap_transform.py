"""`dfc.vmap`: a function mapped over a batch dimension of its arguments, compiled as one batched function.

`vmap(f, in_axes=0, out_axes=0)(*args)` computes what `np.stack([f(*args_i) for i in range(k)],
out_axes)` does, args_i the slices i of the batched arguments along their `in_axes`, in one call of
compiled code: `dfc.batching` rewrites f's IR with a leading batch dimension of k, as JAX's `vmap`
does (control flow included: dfc/batching_control.py), per specialisation of f and per batch size,
compiled once and cached. The result is IR like any other, so `grad`, `jacrev`, `jvp` and `vjp`
transform it (`vjp(vmap(f), xs)`), and `vmap` takes what they return (`vmap(grad(f))`). An op
with no batching rule raises `CompileError` at it, naming it: nothing is run one slice at a time.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.ir import Block, Region, SSAValue

from dfc.batching import batched
from dfc.batching_control import Unbatchable, lifted
from dfc.dialects import nn
from dfc.dialects import nn_shape as nns
from dfc.dialects.diagnostics import CompileError
from dfc.errors import user_errors
from dfc.function import Function
from dfc.transforms import _fresh, _keep_reachable, _prepared, _specialize

_DERIVED: weakref.WeakKeyDictionary[Function, dict[tuple, Function]] = weakref.WeakKeyDictionary()
"""Per `Function`, its batched Functions by (IR axes, batch size, out_axes)."""

Axes = int | None | Sequence[int | None]


def _per(axes: Axes, n: int, what: str) -> list[int | None]:
    if axes is None or isinstance(axes, int):
        return [axes] * n
    axes = list(axes)
    if len(axes) != n:
        raise ValueError(f"vmap {what} has {len(axes)} entries for {n} values")
    if not all(a is None or isinstance(a, int) for a in axes):
        raise TypeError(f"vmap {what} entries must be ints or None, got {axes}")
    return axes


class Vmapped:
    """What `vmap` returns: called like `f` on batched arguments; `specialize(*args)` gives the batched
    `Function`, so that it can be transformed again."""

    def __init__(self, f: Any, in_axes: Axes = 0, out_axes: Axes = 0):
        self.f = _prepared(f)
        self.in_axes, self.out_axes = in_axes, out_axes
        inner = getattr(self.f, "__name__", None) or getattr(self.f, "name", "f")
        self.__name__ = f"vmap_{inner}"
        self.__doc__ = f"dfc.vmap({inner})"

    def __repr__(self) -> str:
        return f"<dfc.vmap({self.f!r}, in_axes={self.in_axes!r}, out_axes={self.out_axes!r})>"

    @user_errors
    def specialize(self, *args: Any, **kwargs: Any) -> tuple[Function, list[Any], list[int]]:
        """(the batched Function for these arguments, its IR arguments, the IR position of each
        parameter): the protocol of `dfc.jit` functions."""
        if kwargs:  # jax.vmap maps them over axis 0; here in_axes counts positional arguments only
            raise TypeError(f"vmap: pass {', '.join(kwargs)} positionally, where in_axes says how it is batched")
        axes = _per(self.in_axes, len(args), "in_axes")
        arrays = [np.asarray(a) if ax is not None else a for a, ax in zip(args, axes)]
        sizes = set()
        for i, (a, ax) in enumerate(zip(arrays, axes)):
            if ax is None:
                continue
            if not -a.ndim <= ax < a.ndim:
                raise ValueError(f"vmap in_axes {ax} out of range for argument {i} of shape {a.shape}")
            axes[i] = ax % a.ndim
            sizes.add(a.shape[ax])
        if len(sizes) != 1:
            raise ValueError("vmap needs at least one batched argument" if not sizes else
                             f"vmap got batch sizes {sorted(sizes)}: the batched arguments must agree")
        k = sizes.pop()
        if k == 0:
            raise ValueError("vmap over an empty batch")
        slices = [np.take(a, 0, axis=ax) if ax is not None else a for a, ax in zip(arrays, axes)]
        fn, ir_slices, positions = _specialize(self.f, slices, {})
        ir_axes: list[int | None] = [None] * len(fn.inputs)
        for i, ax in enumerate(axes):
            if ax is not None:
                if positions[i] < 0:
                    raise TypeError(f"vmap: argument {i} of @{fn.name} is a compile-time constant; it cannot be batched")
                ir_axes[positions[i]] = ax
        outs = _per(self.out_axes, len(fn.outputs), "out_axes")
        batched_fn = batched_function(fn, ir_axes, k, outs)
        ir_args = list(ir_slices)
        for i, ax in enumerate(axes):
            if ax is not None:
                ir_args[positions[i]] = np.ascontiguousarray(arrays[i], dtype=np.asarray(ir_slices[positions[i]]).dtype)
        return batched_fn, ir_args, positions

    @user_errors
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn, ir_args, _ = self.specialize(*args, **kwargs)
        return fn(*ir_args)


def vmap(f: Any, in_axes: Axes = 0, out_axes: Axes = 0) -> Vmapped:
    """`f` (a `Function`, a `dfc.jit` or Python function, a `grad`...) mapped over the axis `in_axes` of
    its arguments (an int or None for all, or one per positional argument: None leaves it unbatched),
    its results stacked along `out_axes` (an int, or one per result; an unbatched result is repeated,
    as JAX's). Compiled as one batched function per specialisation and batch size; differentiable."""
    return Vmapped(f, in_axes, out_axes)


def batched_function(fn: Function, axes: Sequence[int | None], k: int, out_axes: Sequence[int | None]) -> Function:
    """The Function `@vmap_<name>` taking fn's arguments with a batch dimension of k at `axes` (None:
    unbatched) and returning its results with one at `out_axes`. Built once per fn and options."""
    key = (tuple(axes), k, tuple(out_axes))
    cache = _DERIVED.setdefault(fn, {})
    if key not in cache:
        cache[key] = _build(fn, list(axes), k, list(out_axes))
    return cache[key]


def _build(fn: Function, axes: list[int | None], k: int, out_axes: list[int | None]) -> Function:
    module = fn.module.clone()
    try:
        name, out_mask = batched(module, fn.name, [a is not None for a in axes], k)
    except Unbatchable as err:
        raise CompileError.at(err.op, f"vmap of @{fn.name}: {err}") from None
    callee = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    entry = next(op for op in fn.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == fn.name)
    inputs = [_at(t, k, a) if a is not None else t for t, a in zip(fn.inputs, axes)]
    block = Block(arg_types=inputs)
    ops: list[Any] = []

    def add(op: Any) -> SSAValue:
        ops.append(op)
        return op.results[0]

    args = [add(nn.TransposeOp(v, _to_front(t.get_num_dims(), a))) if a else v
            for v, t, a in zip(block.args, inputs, axes)]
    call = func.CallOp(name, args, callee.function_type.outputs.data)
    ops.append(call)
    results = []
    for i, (r, m, a) in enumerate(zip(call.results, out_mask, out_axes)):
        if a is None:
            if m:
                raise ValueError(f"vmap out_axes None for result {i} of @{fn.name}, which varies with the batch")
            results.append(r)
            continue
        if not m:
            if not isinstance(r.type, TensorType):
                raise TypeError(f"vmap: result {i} of @{fn.name} is a scalar that does not vary with the batch")
            shape = r.type.get_shape()
            r = add(nns.BroadcastInDimOp(r, [k, *shape], list(range(1, len(shape) + 1))))
        rank = r.type.get_num_dims()
        if not -rank <= a < rank:
            raise ValueError(f"vmap out_axes {a} out of range for result {i} of @{fn.name} (rank {rank})")
        a %= rank
        if a:
            order = [d for d in range(1, rank)]
            order.insert(a, 0)
            r = add(nn.TransposeOp(r, order))
        results.append(r)
    ops.append(func.ReturnOp(*results))
    for op in ops:
        op.location = entry.location
        block.add_op(op)
    names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    wrapper_name = _fresh(names, f"vmap_{fn.name}")
    wrapper = func.FuncOp(wrapper_name, FunctionType.from_lists(inputs, [v.type for v in results]), Region(block))
    wrapper.location = entry.location
    module.body.block.add_op(wrapper)
    _keep_reachable(module, wrapper_name)
    return Function(module, wrapper_name, fn.threads)


def _at(t: Any, k: int, axis: int) -> TensorType:
    """The type `t` with a dimension k inserted at `axis`."""
    if not isinstance(t, TensorType):
        return lifted(t, k)
    shape = list(t.get_shape())
    shape.insert(axis, k)
    return TensorType(t.element_type, shape)


def _to_front(rank: int, axis: int) -> list[int]:
    return [axis, *(d for d in range(rank) if d != axis)]
