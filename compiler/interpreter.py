"""A reference evaluator of df-level IR on numpy values: the project's oracle.

`interpret(module, name, *args)` runs `@name` as an ExecutionEngine's `invoke`
would: numpy arrays and Python scalars in, numpy results out. It walks the IR op
by op, sequentially, with value semantics: a `df.map` runs its iteration space
in row-major order on copies of its `outs`, and its results are those copies.
Simple and obviously right, not fast.

Scalars are numpy scalars of the type's dtype (`f32` stays float32; `i1` is
bool; `index` is int64). Integer ops compute on Python ints and wrap to the
type's width, so signed/unsigned variants follow MLIR; `wcr(max|min)` propagate
NaN like `arith.maximumf`/`minimumf`. `tensor.empty` yields
zeros; programs must not rely on that. An nn library op means its pure
expansion (`dialects.nn_expand`): the interpreter builds that df code once per
op, in a detached block over the op's operands, and runs it. A df.map body that reads its own output
sees the writes of earlier iterations (one valid serialisation of undefined
behaviour).
"""

from __future__ import annotations

import itertools
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    ShapedType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.nn import NNOp
from dfc.dialects.nn_expand import EXPANSIONS, expand
from dfc.dialects.xdsl_fixes import RemFOp, splat_element

_Eval = Callable[..., Sequence[Any]]
"""Evaluates one op: (frame, *operand values) -> result values."""
_Builder = Callable[[Any], _Eval]
"""Makes the evaluator of an op, reading its static attributes once."""

_FLOAT_DTYPES = {
    Float16Type: np.float16,
    BFloat16Type: ml_dtypes.bfloat16,
    Float32Type: np.float32,
    Float64Type: np.float64,
}


def _width(t: Attribute) -> int:
    """The bit width of an integer or index type."""
    if isinstance(t, IndexType):
        return 64
    assert isinstance(t, IntegerType)
    return t.width.data


def is_float_dtype(dtype: Any) -> bool:
    """Whether `dtype` holds floats (numpy's kinds, and ml_dtypes' bfloat16)."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype == ml_dtypes.bfloat16


def dtype_of(t: Attribute) -> np.dtype:
    """The numpy dtype holding values of the scalar type `t`."""
    if type(t) in _FLOAT_DTYPES:
        return np.dtype(_FLOAT_DTYPES[type(t)])
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType) and t.width.data <= 64:
        w = t.width.data
        if w == 1:
            return np.dtype(np.bool_)
        bits = next(b for b in (8, 16, 32, 64) if b >= w)
        unsigned = t.signedness.data == Signedness.UNSIGNED
        return np.dtype(f"{'u' if unsigned else ''}int{bits}")
    raise NotImplementedError(f"interpret: no numpy dtype for type {t}")


def _signed(v: Any, w: int) -> int:
    x = int(v) & ((1 << w) - 1)
    return x - (1 << w) if x >> (w - 1) else x


def _unsigned(v: Any, w: int) -> int:
    return int(v) & ((1 << w) - 1)


def _converter(t: Attribute) -> Callable[[Any], Any]:
    """Makes a numpy scalar of type `t` from a number; integers wrap to its width;
    floats round once to nearest even."""
    dtype = dtype_of(t)
    if dtype == ml_dtypes.bfloat16:
        return _to_bfloat16
    if is_float_dtype(dtype):
        return dtype.type
    w = _width(t)
    read = _unsigned if dtype.kind == "u" else _signed
    return lambda x: dtype.type(read(x, w))


def _to_bfloat16(x: Any) -> Any:
    """`x` rounded once to bfloat16 (ml_dtypes rounds a double through float, twice): a double goes to
    float rounding to odd (toward zero, the last bit set when inexact), which the rounding to bfloat16
    then keeps correct."""
    if not isinstance(x, float | np.float64) or not np.isfinite(x):
        return ml_dtypes.bfloat16(x)
    f = np.float32(x)
    if float(f) != x:
        bits = int(np.array(f).view(np.uint32))
        if abs(float(f)) > abs(x):
            bits -= 1
        f = np.array(bits | 1, np.uint32).view(np.float32)[()]
    return ml_dtypes.bfloat16(f)


class _Step(NamedTuple):
    """One op of a block: its evaluator (None for the terminator) and the
    keys of its operand and result values."""

    evaluate: _Eval | None
    operands: tuple[int, ...]
    results: tuple[int, ...]


class _Program:
    """The module being run, with each block's steps built on first use."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self._plans: dict[int, tuple[Block, tuple[int, ...], list[_Step]]] = {}
        """Keyed by the block's id (a block hashes in Python, a call per run of
        a map body); each entry holds its block, so that the id stays its own."""
        self._functions: dict[str, func.FuncOp] = {}

    def function(self, name: str) -> func.FuncOp:
        if name not in self._functions:
            self._functions[name] = _lookup(self.module, name)
        return self._functions[name]

    def plan(self, block: Block) -> tuple[Block, tuple[int, ...], list[_Step]]:
        plan = self._plans.get(id(block))
        if plan is None:
            plan = self._plans[id(block)] = (block, tuple(map(id, block.args)), [_step(op) for op in block.ops])
        return plan


def _step(op: Operation) -> _Step:
    operands, results = tuple(map(id, op.operands)), tuple(map(id, op.results))
    if isinstance(op, _TERMINATORS):
        return _Step(None, operands, results)
    build = _BUILDERS.get(type(op))
    if build is None and isinstance(op, NNOp):
        build = _library
    if build is None:
        raise NotImplementedError(f"interpret: no semantics for '{op.name}'")
    if op.dialect_name() in ("arith", "math") and any(
        isinstance(v.type, ShapedType) for v in op.operands
    ):
        raise NotImplementedError(
            f"interpret: '{op.name}' on tensors is not supported, only on scalars"
        )
    evaluate = build(op)
    if df.WARN_IF in op.attributes:
        evaluate = _warning(evaluate, op.attributes[df.WARN_IF].data)  # type: ignore[attr-defined]
    return _Step(evaluate, operands, results)


def _warning(evaluate: _Eval, message: str) -> _Eval:
    """`evaluate`, issuing a `RuntimeWarning` with `message` where its i1 result is true (`df.WARN_IF`)."""

    def warn(frame: _Frame, *values: Any) -> Sequence[Any]:
        results = evaluate(frame, *values)
        if results[0]:
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        return results

    return warn


class _Frame:
    """The values of one function activation (a tasklet gets its own)."""

    def __init__(self, program: _Program):
        self.program = program
        self.env: dict[int, Any] = {}

    def run(self, block: Block, args: Sequence[Any]) -> list[Any]:
        """Bind `args` to the block arguments, evaluate the block and return
        the terminator's operand values (none for a block without one)."""
        _, arg_keys, steps = self.program.plan(block)
        env = self.env
        env.update(zip(arg_keys, args, strict=True))
        value_of = env.__getitem__
        for evaluate, operands, results in steps:
            if evaluate is None:
                return list(map(value_of, operands))
            values = evaluate(self, *map(value_of, operands))
            env.update(zip(results, values, strict=True))
        return []

    def call(self, callee: func.FuncOp, args: Sequence[Any]) -> list[Any]:
        return _Frame(self.program).run(callee.body.block, args)


def _lookup(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            if not op.body.blocks:
                raise ValueError(f"interpret: @{name} is a declaration without a body")
            return op
    raise ValueError(f"interpret: no function @{name} in the module")


def _index(op: Operation, array: np.ndarray, indices: Sequence[Any]) -> tuple[int, ...]:
    """The element index tuple of `array`; out of bounds is an error."""
    index = tuple(map(int, indices))
    for i, n in zip(index, array.shape, strict=True):
        if not 0 <= i < n:
            raise IndexError(
                f"interpret: '{op.name}' index {index} out of bounds "
                f"for shape {array.shape}"
            )
    return index


# --- func, scf ------------------------------------------------------------------------


def _call(op: func.CallOp) -> _Eval:
    name = op.callee.root_reference.data
    return lambda frame, *args: frame.call(frame.program.function(name), args)


def _for(op: scf.ForOp) -> _Eval:
    body, make_iv = op.body.block, _converter(op.lb.type)

    def evaluate(frame: _Frame, lb: Any, ub: Any, step: Any, *values: Any) -> list[Any]:
        if step <= 0:
            raise ValueError(f"interpret: 'scf.for' step must be positive, got {step}")
        for iv in range(int(lb), int(ub), int(step)):
            values = frame.run(body, [make_iv(iv), *values])
        return list(values)

    return evaluate


def _while(op: scf.WhileOp) -> _Eval:
    before, after = op.before_region.block, op.after_region.block

    def evaluate(frame: _Frame, *values: Any) -> list[Any]:
        while True:
            cond, *values = frame.run(before, list(values))
            if not cond:
                return values
            values = frame.run(after, values)

    return evaluate


def _if(op: scf.IfOp) -> _Eval:
    then, otherwise = op.true_region, op.false_region

    def evaluate(frame: _Frame, cond: Any) -> list[Any]:
        region = then if cond else otherwise
        return frame.run(region.block, []) if region.blocks else []

    return evaluate


# --- arith, math ----------------------------------------------------------------------


def _constant(op: arith.ConstantOp) -> _Eval:
    value, t = op.value, op.result.type
    if isinstance(value, DenseIntOrFPElementsAttr):
        assert isinstance(t, TensorType)
        dtype = dtype_of(t.element_type)
        if (element := splat_element(value)) is not None:
            result = np.full(t.get_shape(), element, dtype=dtype)
        else:
            result = np.array(value.get_values(), dtype=dtype).reshape(t.get_shape())
    else:
        assert isinstance(value, IntegerAttr | FloatAttr)
        result = _converter(t)(value.value.data)
    return lambda frame: [result]


def _elementwise(fn: Callable[..., Any]) -> _Builder:
    """The builder of an op computing `fn` of its operand values."""
    return lambda op: lambda frame, *values: [fn(*values)]


def _int_op(fn: Callable[..., int], signed: bool = True) -> _Builder:
    """`fn` of the operands read as signed (or unsigned) ints, wrapped to the
    result type."""

    def build(op: Operation) -> _Eval:
        w, make = _width(op.results[0].type), _converter(op.results[0].type)
        read = _signed if signed else _unsigned
        return lambda frame, *values: [make(fn(*(read(v, w) for v in values)))]

    return build


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_CMP = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}  # fmt: skip


def _cmpi(op: arith.CmpiOp) -> _Eval:
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    compare = _CMP[predicate[-2:]]
    read = _unsigned if predicate.startswith("u") else _signed
    w = _width(op.lhs.type)
    return lambda frame, lhs, rhs: [np.bool_(compare(read(lhs, w), read(rhs, w)))]


def _cmpf(op: arith.CmpfOp) -> _Eval:
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]

    def evaluate(frame: _Frame, lhs: Any, rhs: Any) -> list[Any]:
        unordered = bool(np.isnan(lhs) or np.isnan(rhs))
        if predicate in ("false", "true"):
            return [np.bool_(predicate == "true")]
        if predicate in ("ord", "uno"):
            return [np.bool_(unordered == (predicate == "uno"))]
        holds = _CMP[predicate[1:]](lhs, rhs)
        if predicate[0] == "u":
            return [np.bool_(unordered or holds)]
        return [np.bool_(not unordered and holds)]

    return evaluate


def _select(op: arith.SelectOp) -> _Eval:
    return lambda frame, cond, lhs, rhs: [lhs if cond else rhs]


def _cast(read: Callable[[Any, int], int] | None = None) -> _Builder:
    """A cast to the result type; `read` first reinterprets an integer input.

    Without `read`, floats convert to floats, or to integers truncating toward
    zero and wrapping to the width (MLIR: poison when out of range).
    """

    def build(op: Operation) -> _Eval:
        (source,) = op.operands
        make = _converter(op.results[0].type)
        if read is not None:
            w = _width(source.type)
            return lambda frame, value: [make(read(value, w))]
        if is_float_dtype(dtype_of(op.results[0].type)):
            return lambda frame, value: [make(value)]

        def truncate(frame: _Frame, value: Any) -> list[Any]:
            if not np.isfinite(value):
                raise ValueError(f"interpret: '{op.name}' of {value} is undefined")
            return [make(int(value))]

        return truncate

    return build


def _bitcast(op: arith.BitcastOp) -> _Eval:
    """The bits of the input read as the result type (numpy's view of the same bytes)."""
    source, target = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
    return lambda frame, value: [np.asarray(value, dtype=source).view(target)[()]]


def _erf(x: Any) -> Any:
    return type(x)(math.erf(x))


def _round_half_away(x: Any) -> Any:
    """`math.round`: to the nearest integer, halfway cases away from zero."""
    whole = np.trunc(x)
    return whole + np.sign(x) if abs(x - whole) >= 0.5 else whole


def _fma(a: Any, b: Any, c: Any) -> Any:
    return a * b + c


# --- tensor, df -----------------------------------------------------------------------


def _empty(op: tensor.EmptyOp) -> _Eval:
    t = op.tensor.type
    dtype = dtype_of(t.element_type)

    def evaluate(frame: _Frame, *sizes: Any) -> list[Any]:
        dynamic = iter(sizes)
        shape = [int(next(dynamic)) if n == DYNAMIC_INDEX else n for n in t.get_shape()]
        return [np.zeros(shape, dtype)]

    return evaluate


def _dim(op: tensor.DimOp) -> _Eval:
    return lambda frame, array, index: [np.int64(array.shape[int(index)])]


def _extract(op: tensor.ExtractOp) -> _Eval:
    return lambda frame, array, *indices: [array[_index(op, array, indices)]]


def _insert(op: tensor.InsertOp) -> _Eval:
    def evaluate(
        frame: _Frame, scalar: Any, dest: np.ndarray, *indices: Any
    ) -> list[Any]:
        result = dest.copy()
        result[_index(op, result, indices)] = scalar
        return [result]

    return evaluate


def _map(op: df.MapOp) -> _Eval:
    """Runs the body for every point, in row-major order, on copies of the outs."""
    static, body = op.static_bounds.get_values(), op.body.block
    n_dynamic = len(op.dyn_bounds)

    def evaluate(frame: _Frame, *values: Any) -> list[Any]:
        dynamic = iter(values[:n_dynamic])
        extents = [int(next(dynamic)) if b == DYNAMIC_INDEX else b for b in static]
        if min(extents, default=0) < 0:
            raise ValueError(
                f"interpret: 'df.map' bounds must be non-negative, got {extents}"
            )
        outs = [v.copy() for v in values[n_dynamic:]]
        for point in itertools.product(*map(range, extents)):
            frame.run(body, [*map(np.int64, point), *outs])
        return outs

    return evaluate


def _read(op: df.ReadOp) -> _Eval:
    return lambda frame, array, *indices: [array[_index(op, array, indices)]]


_WCR = {"add": operator.add, "mul": operator.mul, "max": np.maximum, "min": np.minimum}


def _write(op: df.WriteOp) -> _Eval:
    """Stores into the (copied) output of the map that owns `op.dest`."""
    combine = _WCR[op.wcr_kind] if op.wcr_kind is not None else None

    def evaluate(
        frame: _Frame, value: Any, dest: np.ndarray, *indices: Any
    ) -> list[Any]:
        index = _index(op, dest, indices)
        dest[index] = value if combine is None else combine(dest[index], value)
        return []

    return evaluate


def _tasklet(op: df.TaskletOp) -> _Eval:
    body = op.body.block
    return lambda frame, *values: _Frame(frame.program).run(body, values)


def _library(op: NNOp) -> _Eval:
    """An nn op as its pure expansion, built in a block of its own whose
    arguments stand for the op's operands."""
    if type(op) not in EXPANSIONS:
        raise NotImplementedError(f"interpret: no semantics for '{op.name}'")
    block = Block(arg_types=[v.type for v in op.operands])
    clone = op.clone(value_mapper=dict(zip(op.operands, block.args)))
    block.add_op(clone)
    result = expand(Builder(InsertPoint.before(clone)), clone)
    block.add_op(func.ReturnOp(result))
    clone.detach()
    clone.erase()
    return lambda frame, *values: _Frame(frame.program).run(block, values)


_TERMINATORS = (func.ReturnOp, scf.YieldOp, scf.ConditionOp, df.YieldOp)

_BUILDERS: dict[type[Operation], _Builder] = {
    func.CallOp: _call,
    scf.ForOp: _for,
    scf.IfOp: _if,
    scf.WhileOp: _while,
    arith.ConstantOp: _constant,
    arith.AddfOp: _elementwise(operator.add),
    arith.SubfOp: _elementwise(operator.sub),
    arith.MulfOp: _elementwise(operator.mul),
    arith.DivfOp: _elementwise(operator.truediv),
    arith.NegfOp: _elementwise(operator.neg),
    RemFOp: _elementwise(np.fmod),
    arith.MaximumfOp: _elementwise(np.maximum),
    arith.MinimumfOp: _elementwise(np.minimum),
    arith.MaxnumfOp: _elementwise(np.fmax),
    arith.MinnumfOp: _elementwise(np.fmin),
    arith.AddiOp: _int_op(operator.add),
    arith.SubiOp: _int_op(operator.sub),
    arith.MuliOp: _int_op(operator.mul),
    arith.DivSIOp: _int_op(_trunc_div),
    arith.DivUIOp: _int_op(operator.floordiv, signed=False),
    arith.FloorDivSIOp: _int_op(operator.floordiv),
    arith.CeilDivSIOp: _int_op(lambda a, b: -(-a // b)),
    arith.CeilDivUIOp: _int_op(lambda a, b: -(-a // b), signed=False),
    arith.RemSIOp: _int_op(lambda a, b: a - b * _trunc_div(a, b)),
    arith.RemUIOp: _int_op(operator.mod, signed=False),
    arith.MaxSIOp: _int_op(max),
    arith.MinSIOp: _int_op(min),
    arith.MaxUIOp: _int_op(max, signed=False),
    arith.MinUIOp: _int_op(min, signed=False),
    arith.AndIOp: _int_op(operator.and_),
    arith.OrIOp: _int_op(operator.or_),
    arith.XOrIOp: _int_op(operator.xor),
    arith.ShLIOp: _int_op(operator.lshift),
    arith.ShRSIOp: _int_op(operator.rshift),
    arith.ShRUIOp: _int_op(operator.rshift, signed=False),
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.IndexCastOp: _cast(_signed),
    arith.ExtSIOp: _cast(_signed),
    arith.ExtUIOp: _cast(_unsigned),
    arith.TruncIOp: _cast(_signed),
    arith.SIToFPOp: _cast(_signed),
    arith.UIToFPOp: _cast(_unsigned),
    arith.FPToSIOp: _cast(),
    arith.FPToUIOp: _cast(),
    arith.ExtFOp: _cast(),
    arith.TruncFOp: _cast(),
    arith.BitcastOp: _bitcast,
    xmath.AbsFOp: _elementwise(np.abs),
    xmath.ExpOp: _elementwise(np.exp),
    xmath.Exp2Op: _elementwise(np.exp2),
    xmath.ExpM1Op: _elementwise(np.expm1),
    xmath.LogOp: _elementwise(np.log),
    xmath.Log2Op: _elementwise(np.log2),
    xmath.Log10Op: _elementwise(np.log10),
    xmath.Log1pOp: _elementwise(np.log1p),
    xmath.SqrtOp: _elementwise(np.sqrt),
    xmath.RsqrtOp: _elementwise(lambda x: 1 / np.sqrt(x)),
    xmath.TanhOp: _elementwise(np.tanh),
    xmath.SinOp: _elementwise(np.sin),
    xmath.CosOp: _elementwise(np.cos),
    xmath.TanOp: _elementwise(np.tan),
    xmath.Atan2Op: _elementwise(np.arctan2),
    xmath.CbrtOp: _elementwise(np.cbrt),
    xmath.AsinhOp: _elementwise(np.arcsinh),
    xmath.AcoshOp: _elementwise(np.arccosh),
    xmath.AtanhOp: _elementwise(np.arctanh),
    xmath.PowFOp: _elementwise(np.power),
    xmath.ErfOp: _elementwise(_erf),
    xmath.FloorOp: _elementwise(np.floor),
    xmath.CeilOp: _elementwise(np.ceil),
    xmath.RoundOp: _elementwise(_round_half_away),
    xmath.RoundEvenOp: _elementwise(np.rint),
    xmath.TruncOp: _elementwise(np.trunc),
    xmath.CopySignOp: _elementwise(np.copysign),
    xmath.FmaOp: _elementwise(_fma),
    tensor.EmptyOp: _empty,
    tensor.DimOp: _dim,
    tensor.ExtractOp: _extract,
    tensor.InsertOp: _insert,
    df.MapOp: _map,
    df.ReadOp: _read,
    df.WriteOp: _write,
    df.TaskletOp: _tasklet,
}


_ACCEPTED = {
    "b": (bool, np.bool_),
    "i": (int, np.integer),
    "u": (int, np.integer),
    "f": (int, float, np.integer, np.floating),
}


def _argument(callee: func.FuncOp, k: int, value: Any, t: Attribute) -> Any:
    """`value` checked against parameter type `t` and converted to its dtype."""
    hint = callee.body.block.args[k].name_hint
    where = f"@{callee.sym_name.data} argument {'%' + hint if hint else '#' + str(k)}"
    if isinstance(t, TensorType):
        if not isinstance(value, np.ndarray):
            raise TypeError(
                f"{where}: expected a numpy array for {t}, got {type(value).__name__}"
            )
        dtype = dtype_of(t.element_type)
        if value.dtype != dtype:
            raise TypeError(
                f"{where}: expected dtype {dtype} for {t}, got {value.dtype}"
            )
        shape = t.get_shape()
        if len(value.shape) != len(shape) or any(
            n != DYNAMIC_INDEX and n != m for n, m in zip(shape, value.shape)
        ):
            raise ValueError(f"{where}: expected shape {t}, got {value.shape}")
        return value
    if isinstance(t, ShapedType):
        raise NotImplementedError(
            f"{where}: {t} arguments are not supported (tensors only)"
        )
    kind = "f" if is_float_dtype(dtype_of(t)) else dtype_of(t).kind
    if isinstance(value, bool | np.bool_) != (kind == "b") or not isinstance(
        value, _ACCEPTED[kind]
    ):
        raise TypeError(f"{where}: expected a {t} scalar, got {type(value).__name__}")
    return _converter(t)(value)


def interpret(module: ModuleOp, name: str, *args: Any) -> Any:
    """Evaluate `@name` of `module` on `args`.

    Returns the single result, a tuple of several, or None when there are none.
    Raises TypeError/ValueError for arguments not matching the signature and
    NotImplementedError for an op without semantics here.
    """
    callee = _lookup(module, name)
    params = callee.function_type.inputs.data
    if len(args) != len(params):
        raise TypeError(f"@{name} takes {len(params)} arguments, got {len(args)}")
    values = [_argument(callee, k, a, t) for k, (a, t) in enumerate(zip(args, params))]
    with np.errstate(all="ignore"):
        results = _Frame(_Program(module)).call(callee, values)
    # results never alias the caller's arrays
    results = [r.copy() if isinstance(r, np.ndarray) else r for r in results]
    if not results:
        return None
    return results[0] if len(results) == 1 else tuple(results)
