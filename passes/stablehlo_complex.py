"""Complex numbers in `convert-stablehlo`.

nn computes with real numbers, so before the conversion `make_real` retypes
every `tensor<S x complex<fT>>` value of a function (arguments, results, block
arguments of regions, op results) to the packed `tensor<S x 2 x fT>`: each
element's real and imaginary parts next to each other on a trailing dimension
of 2 (NumPy's memory layout of a complex array, which the NumPy frontend and
ONNX's DFT use too), remembering which operands and results of each op were
complex. The converter then builds each op of complex operands or results as
`complex_form` says:

* the ops that act on the packed tensor as on a real one (`PACKED_AS_REAL`:
  add, subtract, negate, reshape, reverse, concatenate, bitcast_convert,
  control flow, reduce with an add body) convert as the real ones;
* the shape and indexing ops (transpose, broadcast_in_dim, slice, pad,
  dynamic_slice, dynamic_update_slice, gather, scatter, select, iota) keep the
  trailing dimension out of their dimension numbers;
* multiply, divide, the elementwise functions, compare (EQ, NE), maximum and
  minimum (lexicographic, as the spec orders complex numbers), dot_general
  (four real products) and reduce with a multiply, maximum or minimum body
  (or the compare-and-select body `jnp.max`/`jnp.min` write, `lexicographic_extreme`)
  and triangular_solve (the real substitution on the parts; ADJOINT
  conjugates) are built from the parts (`passes.stablehlo_complex_math`); fft is
  `nn.dft`s over its axes, which take the packed layout;
* complex, real, imag and convert pack and unpack the parts;

any other op of complex operands (a sort, a convolution, an ordering compare,
...) is a `CompileError` naming it. The function's signature becomes the packed
one: its callers pass and receive float arrays of shape `(*S, 2)` (`numpy`
complex arrays viewed as floats, which `JaxFunction` does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.dialects import nn_shape as nns
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_fft_builders import dft_axes
from dfc.dialects.stablehlo_bits import TriangularSolveOp
from dfc.dialects.stablehlo_fft import FftOp
from dfc.passes.stablehlo_complex_math import ComplexMath, Pair

Flags = tuple[tuple[bool, ...], tuple[bool, ...]]
"""Which operands and which results of an op were complex."""

PACKED_AS_REAL = frozenset({
    "add", "subtract", "negate", "reshape", "reverse", "concatenate", "bitcast_convert", "optimization_barrier",
    "while", "if", "case", "get_dimension_size",
})
"""Ops whose conversion for real tensors computes the right packed result from packed operands."""

UNARY: dict[str, Callable[[ComplexMath, Pair], Pair]] = {
    "exponential": ComplexMath.c_exp, "exponential_minus_one": ComplexMath.c_expm1, "log": ComplexMath.c_log,
    "log_plus_one": ComplexMath.c_log1p, "sqrt": ComplexMath.c_sqrt, "rsqrt": ComplexMath.c_rsqrt,
    "cbrt": ComplexMath.c_cbrt, "logistic": ComplexMath.c_logistic, "sine": ComplexMath.c_sin,
    "cosine": ComplexMath.c_cos, "tan": ComplexMath.c_tan, "tanh": ComplexMath.c_tanh, "sign": ComplexMath.c_sign,
}
BINARY: dict[str, Callable[[ComplexMath, Pair, Pair], Pair]] = {
    "multiply": ComplexMath.c_mul, "divide": ComplexMath.c_div, "power": ComplexMath.c_pow,
    "atan2": ComplexMath.c_atan2,
}
"""The complex elementwise functions by stablehlo op name."""


def _is_complex(t: Attribute) -> bool:
    """Whether `t` is a tensor of complex<f32> or complex<f64>, the complex types of StableHLO (others are
    left to be refused by name)."""
    return (isinstance(t, TensorType) and isinstance(t.element_type, ComplexType)
            and isinstance(t.element_type.element_type, Float32Type | Float64Type))


def packed(t: Attribute) -> Attribute:
    """`tensor<S x complex<fT>>` as `tensor<S x 2 x fT>`; other types unchanged."""
    if _is_complex(t):
        return TensorType(t.element_type.element_type, [*t.get_shape(), 2])
    return t


def make_real(f: func.FuncOp) -> dict[Operation, Flags]:
    """Retype `f`'s complex tensors as packed real ones; the complex operands and results of each op
    that had one. A constant keeps its complex literal (its conversion reads it)."""
    flags: dict[Operation, Flags] = {}
    for op in f.walk():
        operands = tuple(_is_complex(v.type) for v in op.operands)
        results = tuple(_is_complex(v.type) for v in op.results)
        if any(operands) or any(results):
            flags[op] = (operands, results)
    if not flags and not any(_is_complex(t) for t in f.function_type.inputs.data):
        return flags
    for op in f.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    if packed(arg.type) != arg.type:
                        Rewriter.replace_value_with_new_type(arg, packed(arg.type))
        for result in list(op.results):
            if packed(result.type) != result.type:
                Rewriter.replace_value_with_new_type(result, packed(result.type))
    f.function_type = FunctionType.from_lists([packed(t) for t in f.function_type.inputs.data],
                                              [packed(t) for t in f.function_type.outputs.data])
    return flags


def lexicographic_extreme(block: Block) -> str | None:
    """"stablehlo.maximum" ("minimum") when `block` (a reduction body of arguments a, b) is the
    compare-and-select `jnp.max` (`jnp.min`) of complex numbers lowers to: select(real(a) == real(b) ?
    imag(a) > imag(b) : real(a) > real(b), a, b) (< for min); else None. (NaN: JAX's body keeps the
    value the order of the reduction puts second; the conversion propagates it, as NumPy does.)"""
    ops = list(block.ops)
    if len(block.args) != 2 or len(ops) != 10 or not isinstance(ops[-1], shlo.ReturnOp):
        return None
    a, b = block.args
    part = {}  # value -> (argument, "real" / "imag")
    compares = {}  # value -> (direction, operands' parts)
    selects = []
    for o in ops[:-1]:
        if isinstance(o, shlo.RealOp | shlo.ImagOp) and o.operand in (a, b):
            part[o.results[0]] = (o.operand, "real" if isinstance(o, shlo.RealOp) else "imag")
        elif isinstance(o, shlo.CompareOp) and o.lhs in part and o.rhs in part:
            compares[o.results[0]] = (o.comparison_direction.data, part[o.lhs], part[o.rhs])
        elif isinstance(o, shlo.SelectOp):
            selects.append(o)
        else:
            return None
    if len(selects) != 2 or list(ops[-1].operands) != [selects[1].results[0]]:
        return None
    inner, outer = selects
    if (outer.pred != inner.results[0] or (outer.on_true, outer.on_false) != (a, b)
            or not all(v in compares for v in (inner.pred, inner.on_true, inner.on_false))):
        return None
    equal, by_imag, by_real = (compares[v] for v in (inner.pred, inner.on_true, inner.on_false))
    direction = by_real[0]
    if (equal != ("EQ", (a, "real"), (b, "real")) or by_real[1:] != ((a, "real"), (b, "real"))
            or by_imag != (direction, (a, "imag"), (b, "imag")) or direction not in ("GT", "LT")):
        return None
    return "stablehlo.maximum" if direction == "GT" else "stablehlo.minimum"


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


class ComplexConversions(ComplexMath):
    """The conversions of stablehlo ops of complex operands or results (`as_complex_<op>`), mixed into
    the converter; `complex_ops` is what `make_real` returned."""

    b: Builder
    complex_ops: dict[Operation, Flags]
    unsigned_ops: dict[Operation, tuple[tuple[bool, ...], tuple[bool, ...]]]
    _swap_last: Callable[[SSAValue], SSAValue]

    def complex_form(self, op: Operation) -> Sequence[SSAValue] | None:
        """`op` converted for its complex operands or results, or None where the real conversion is the
        same (no complex value, an op in `PACKED_AS_REAL`); a `CompileError` at `op` where there is none."""
        if op not in self.complex_ops:
            return None
        short = op.name.split(".", 1)[1]
        handler = getattr(self, f"as_complex_{short}", None)
        if handler is not None:
            return handler(op)
        if short in UNARY:
            return [self.pack(UNARY[short](self, self.split(op.operands[0])))]
        if short in BINARY:
            return [self.pack(BINARY[short](self, self.split(op.operands[0]), self.split(op.operands[1])))]
        if short in PACKED_AS_REAL:
            return None
        raise CompileError.at(op, f"convert-stablehlo: '{op.name}' of complex numbers is not supported")

    # ------------------------------------------------------------ packing

    def split(self, z: SSAValue) -> Pair:
        """The real and imaginary parts of packed `z`."""
        shape = _shape(z)[:-1]
        rank = len(shape)
        parts = []
        for k in (0, 1):
            part = self.ins(nns.SliceOp(z, [0] * rank + [k], [*shape, k + 1], [1] * (rank + 1)))
            parts.append(self.ins(nn.ReshapeOp(part, shape)))
        return parts[0], parts[1]

    def pack(self, z: Pair) -> SSAValue:
        """Parts `z` (of one shape, or one 0-d) packed."""
        shape = max((_shape(p) for p in z), key=len)
        columns = [self.ins(nns.BroadcastInDimOp(p, [*shape, 1], range(len(_shape(p))) if _shape(p) else []))
                   for p in z]
        return self.ins(nns.ConcatenateOp(columns, len(shape)))

    # ------------------------------------------------------------ parts and conversions

    def as_complex_constant(self, op: shlo.ConstantOp) -> Sequence[SSAValue]:
        value = op.value
        shape = _shape(op.output)[:-1]
        t = packed(value.type)
        assert isinstance(t, TensorType)
        data = value.data.data
        if math.prod(shape) > 1 and len(data) == 2 * t.element_type.compile_time_size:  # the splat form
            pair = self.ins(nn.ConstantOp(DenseIntOrFPElementsAttr(TensorType(t.element_type, [2]), BytesAttr(data))))
            return [self.ins(nns.BroadcastInDimOp(pair, t.get_shape(), [len(shape)]))]
        return [self.ins(nn.ConstantOp(DenseIntOrFPElementsAttr(t, BytesAttr(data))))]

    def as_complex_iota(self, op: shlo.IotaOp) -> Sequence[SSAValue]:
        t = _tensor_type(op.output)
        iota = self.ins(nns.IotaOp(TensorType(t.element_type, t.get_shape()[:-1]), op.iota_dimension.value.data))
        return [self.pack((iota, self.num(0.0, iota)))]

    def as_complex_complex(self, op: shlo.ComplexOp) -> Sequence[SSAValue]:
        return [self.pack((op.lhs, op.rhs))]

    def on_real(self, op: shlo.RealOp) -> Sequence[SSAValue]:
        """A real operand (not complex: `as_complex_real`) is its own real part."""
        return [op.operand]

    def on_imag(self, op: shlo.ImagOp) -> Sequence[SSAValue]:
        """A real operand's imaginary part is 0."""
        return [self.ins(nn.FullOp(FloatAttr(0.0, _tensor_type(op.operand).element_type),  # type: ignore[arg-type]
                                   _shape(op.operand)))]

    def as_complex_real(self, op: shlo.RealOp) -> Sequence[SSAValue]:
        return [self.split(op.operand)[0]]

    def as_complex_imag(self, op: shlo.ImagOp) -> Sequence[SSAValue]:
        return [self.split(op.operand)[1]]

    def as_complex_convert(self, op: shlo.ConvertOp) -> Sequence[SSAValue]:
        """complex -> real keeps the real part (nonzero for i1); real -> complex has 0 as imaginary part."""
        (source,), (target,) = self.complex_ops[op]
        unsigned = self.unsigned_ops.get(op, ((False,), (False,)))
        t = _tensor_type(op.result)
        e = t.element_type
        if source and target:
            return [op.operand if op.operand.type == t else self.ins(nne.ConvertOp(op.operand, e))]
        if source:
            return [self.cast(self.split(op.operand)[0], False, e, unsigned[1][0])]  # type: ignore[attr-defined]
        re = self.cast(op.operand, unsigned[0][0], e, False)  # type: ignore[attr-defined]
        return [self.pack((re, self.num(0.0, re)))]

    def as_complex_abs(self, op: shlo.UnaryOp) -> Sequence[SSAValue]:
        return [self.c_abs(self.split(op.operand))]

    def as_complex_compare(self, op: shlo.CompareOp) -> Sequence[SSAValue]:
        """EQ: both parts equal; NE: either differs (NaN differs from everything, -0 equals +0)."""
        direction = op.comparison_direction.data
        if direction not in ("EQ", "NE"):
            raise CompileError.at(op, f"convert-stablehlo: compare {direction} of complex numbers is not supported "
                                      "(EQ and NE are)")
        (a, b), (c, d) = self.split(op.lhs), self.split(op.rhs)
        join = self.both if direction == "EQ" else self.either
        return [join(self.cmp(a, c, direction), self.cmp(b, d, direction))]

    def as_complex_maximum(self, op: shlo.BinaryOp) -> Sequence[SSAValue]:
        return [self.pack(self.extreme(self.split(op.lhs), self.split(op.rhs), larger=True))]

    def as_complex_minimum(self, op: shlo.BinaryOp) -> Sequence[SSAValue]:
        return [self.pack(self.extreme(self.split(op.lhs), self.split(op.rhs), larger=False))]

    def extreme(self, x: Pair, y: Pair, larger: bool) -> Pair:
        """The larger (smaller) of `x` and `y` in the lexicographic order of (real, imaginary); `x` for
        equal ones; a value with a NaN part wins (NaN propagates, as for real numbers)."""
        direction = "GT" if larger else "LT"
        x_wins = self.either(self.cmp(x[0], y[0], direction),
                             self.both(self.cmp(x[0], y[0], "EQ"), self.cmp(x[1], y[1], "GE" if larger else "LE")))
        x_wins = self.either(self.has_nan(x), self.both(x_wins, self.ins(nne.NotOp(self.has_nan(y)))))
        return self.where(x_wins, x[0], y[0]), self.where(x_wins, x[1], y[1])

    # ------------------------------------------------------------ shapes and indexing

    def as_complex_select(self, op: shlo.SelectOp) -> Sequence[SSAValue]:
        pred = op.pred
        if _shape(pred):
            pred = self.ins(nn.ReshapeOp(pred, [*_shape(pred), 1]))
        return [self.ins(nne.SelectOp(pred, op.on_true, op.on_false))]

    def as_complex_transpose(self, op: shlo.TransposeOp) -> Sequence[SSAValue]:
        perm = op.permutation.get_values()
        return [self.ins(nn.TransposeOp(op.operand, [*perm, len(perm)]))]

    def as_complex_broadcast_in_dim(self, op: shlo.BroadcastInDimOp) -> Sequence[SSAValue]:
        shape = _shape(op.result)
        dims = op.broadcast_dimensions.get_values()
        return [self.ins(nns.BroadcastInDimOp(op.operand, shape, [*dims, len(shape) - 1]))]

    def as_complex_slice(self, op: shlo.SliceOp) -> Sequence[SSAValue]:
        return [self.ins(nns.SliceOp(op.operand, [*op.start_indices.get_values(), 0],
                                     [*op.limit_indices.get_values(), 2], [*op.strides.get_values(), 1]))]

    def _zero_index(self, like: SSAValue) -> SSAValue:
        return self.ins(nn.FullOp(IntegerAttr(0, _tensor_type(like).element_type), []))  # type: ignore[arg-type]

    def as_complex_dynamic_slice(self, op: shlo.DynamicSliceOp) -> Sequence[SSAValue]:
        starts = list(op.start_indices)
        zero = self._zero_index(starts[0]) if starts else self._index_zero()
        return [self.ins(nns.DynamicSliceOp(op.operand, [*starts, zero], [*op.slice_sizes.get_values(), 2]))]

    def as_complex_dynamic_update_slice(self, op: shlo.DynamicUpdateSliceOp) -> Sequence[SSAValue]:
        starts = list(op.start_indices)
        zero = self._zero_index(starts[0]) if starts else self._index_zero()
        return [self.ins(nns.DynamicUpdateSliceOp(op.operand, op.update, [*starts, zero]))]

    def _index_zero(self) -> SSAValue:
        return self.ins(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(i64, []), [0])))

    def as_complex_pad(self, op: shlo.PadOp) -> Sequence[SSAValue]:
        low, high = op.edge_padding_low.get_values(), op.edge_padding_high.get_values()
        interior = op.interior_padding.get_values()
        x, fill = self.split(op.operand), self.split(op.padding_value)
        return [self.pack(tuple(self.ins(nns.PadOp(p, v, low, high, interior))  # type: ignore[arg-type]
                                for p, v in zip(x, fill)))]

    def as_complex_gather(self, op: shlo.GatherOp) -> Sequence[SSAValue]:
        """The trailing dimension is one more offset dimension, sliced whole."""
        d = op.dimension_numbers
        dims = {n: d.ints(n) for n in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                       "start_indices_batching_dims", "start_index_map")}
        dims["offset_dims"] = (*dims["offset_dims"], len(_shape(op.result)) - 1)
        dims["slice_sizes"] = (*op.slice_sizes.get_values(), 2)
        return [self.ins(nni.GatherOp(op.operand, op.start_indices, dims, d.int("index_vector_dim")))]

    def as_complex_scatter(self, op: shlo.ScatterOp) -> Sequence[SSAValue]:
        """A replace or add body (add acts on the parts alone); the trailing dimension is one more
        window dimension of the updates."""
        operand, indices, updates, kind, dims, index_dim = self.scatter_parts(  # type: ignore[attr-defined]
            op, "scatter of complex numbers")
        dims["update_window_dims"] = (*dims["update_window_dims"], len(_shape(updates)) - 1)
        return [self.ins(nni.ScatterOp(operand, indices, updates, kind, dims, index_dim))]

    # ------------------------------------------------------------ contractions and reductions

    def as_complex_fft(self, op: FftOp) -> Sequence[SSAValue]:
        """`nn.dft`s over the trailing `len(fft_length)` signal dimensions (`nn_fft_builders.dft_axes`):
        FFT c2c, IFFT c2c inverse scaled by 1/n, RFFT r2c one-sided, IRFFT c2r inverse scaled by 1/n."""
        kind = op.fft_type.data
        lengths = op.fft_length.get_values()
        (complex_in,), _ = self.complex_ops[op]
        rank = len(_shape(op.operand)) - complex_in
        if not 1 <= len(lengths) <= rank:
            raise CompileError.at(op, f"convert-stablehlo: fft of length {list(lengths)} on a signal of rank {rank}")
        axes = range(rank - len(lengths), rank)
        inverse = kind in ("IFFT", "IRFFT")
        dft_kind = {"FFT": "c2c", "IFFT": "c2c", "RFFT": "r2c", "IRFFT": "c2r"}[kind]
        result = dft_axes(self.ins, op.operand, axes, dft_kind, inverse=inverse, scale="n" if inverse else "none",
                          length=lengths[-1] if kind == "IRFFT" else None)
        signal = _shape(op.result if kind == "IRFFT" else op.operand)[rank - len(lengths):rank]
        if result.type != op.result.type or tuple(signal) != tuple(lengths):
            raise CompileError.at(op, f"convert-stablehlo: {kind} of length {list(lengths)} of {op.operand.type} "
                                      f"gives {result.type}, not its result type {op.result.type}")
        return [result]

    def as_complex_dot_general(self, op: shlo.DotGeneralOp) -> Sequence[SSAValue]:
        """(a + bi)(c + di) as four real products: ac - bd + (ad + bc)i."""
        d = op.dot_dimension_numbers
        batching = (d.ints("lhs_batching_dimensions"), d.ints("rhs_batching_dimensions"))
        contracting = (d.ints("lhs_contracting_dimensions"), d.ints("rhs_contracting_dimensions"))
        return [self._product(op, batching, contracting)]

    def as_complex_dot(self, op: shlo.DotOp) -> Sequence[SSAValue]:
        lhs_complex = self.complex_ops[op][0][0]
        rank = len(_shape(op.lhs)) - (1 if lhs_complex else 0)
        return [self._product(op, ((), ()), ((rank - 1,), (0,)))]

    def _product(self, op: Operation, batching: tuple[Sequence[int], Sequence[int]],
                 contracting: tuple[Sequence[int], Sequence[int]]) -> SSAValue:
        (lhs_complex, rhs_complex), _ = self.complex_ops[op]
        lhs, rhs = op.operands

        def dot(x: SSAValue, y: SSAValue) -> SSAValue:
            return self.ins(nnc.DotGeneralOp(x, y, batching, contracting))

        if not lhs_complex:
            c, d = self.split(rhs)
            result = self.pack((dot(lhs, c), dot(lhs, d)))
        elif not rhs_complex:
            a, b = self.split(lhs)
            result = self.pack((dot(a, rhs), dot(b, rhs)))
        else:
            (a, b), (c, d) = self.split(lhs), self.split(rhs)
            result = self.pack((self.sub(dot(a, c), dot(b, d)), self.add(dot(a, d), dot(b, c))))
        if result.type != op.results[0].type:
            raise CompileError.at(op, f"convert-stablehlo: '{op.name}' gives {result.type}, not its result type "
                                      f"{op.results[0].type}")
        return result

    def as_complex_triangular_solve(self, op: TriangularSolveOp) -> Sequence[SSAValue]:
        """The real conversion's substitution (`passes.stablehlo_linalg`) on the parts: op(a) is a, its
        transpose or its adjoint (the conjugate transpose); each row is a complex product and division."""
        a, b = op.a, op.b
        shape = _shape(a)[:-1]
        if len(shape) < 2 or shape[-1] != shape[-2] or _shape(b)[:-3] != shape[:-2]:
            raise CompileError.at(op, f"convert-stablehlo: triangular_solve of {a.type} and {b.type}: a must be "
                                      "square matrices with b's batch dimensions")
        left, lower = bool(op.left_side.value.data), bool(op.lower.value.data)
        transposed = op.transpose_a.data != "NO_TRANSPOSE"
        ar, ai = self.split(a)
        if op.transpose_a.data == "ADJOINT":
            ai = self.neg(ai)
        br, bi = self.split(b)
        c = (br, bi) if left else (self._swap_last(br), self._swap_last(bi))
        if _shape(c[0])[-2] != shape[-1]:
            raise CompileError.at(op, f"convert-stablehlo: triangular_solve: b {b.type} does not match a {a.type}")
        flip = transposed == left  # x op(a) = b is op(a)^T x^T = b^T
        rank, n = len(shape), shape[-1]
        rows = self.ins(nns.IotaOp(TensorType(i64, [n, n]), 0))
        cols = self.ins(nns.IotaOp(TensorType(i64, [n, n]), 1))
        strict = self.ins(nne.CompareOp(rows, cols, "GT" if lower else "LT"))
        strict = self.ins(nns.BroadcastInDimOp(strict, shape, [rank - 2, rank - 1]))
        m = [self.where(strict, p, self.num(0.0, p)) for p in (ar, ai)]
        if flip:
            m = [self._swap_last(p) for p in m]
        diagonal = None if bool(op.unit_diagonal.value.data) else (ar, ai)
        xr, xi = self._complex_substitute((m[0], m[1]), diagonal, c, lower != flip, shape[:-2], n)
        if not left:
            xr, xi = self._swap_last(xr), self._swap_last(xi)
        return [self.pack((xr, xi))]

    def _complex_substitute(self, m: Pair, a: Pair | None, c: Pair, forward: bool, batch: tuple[int, ...],
                            n: int) -> Pair:
        """x with (m + diag(a)) x = c, m strictly triangular (lower when `forward`), row by row in an
        `scf.for` carrying x's parts; a None `a` is a unit diagonal."""
        k = _shape(c[0])[-1]
        nb = len(batch)
        e = _tensor_type(c[0]).element_type
        x0 = [self.ins(nn.FullOp(FloatAttr(0.0, e), _shape(p))) for p in c]  # type: ignore[arg-type]
        t0 = self.ins(nn.FullOp(IntegerAttr(0, i64), []))
        body = Block(arg_types=[IndexType(), x0[0].type, x0[1].type, t0.type])
        _, xr, xi, t = body.args
        saved, self.b = self.b, Builder(InsertPoint.at_end(body))
        zero = self.ins(nn.FullOp(IntegerAttr(0, i64), []))
        i = t if forward else self.ins(nn.SubOp(self.ins(nn.FullOp(IntegerAttr(n - 1, i64), [])), t))

        def rows_of(v: SSAValue, width: int) -> SSAValue:
            return self.ins(nns.DynamicSliceOp(v, [zero] * nb + [i, zero], [*batch, 1, width]))

        def dot(u: SSAValue, v: SSAValue) -> SSAValue:
            return self.ins(nnc.DotGeneralOp(u, v, (list(range(nb)), list(range(nb))), ([nb + 1], [nb])))

        row = (rows_of(m[0], n), rows_of(m[1], n))
        product = (self.sub(dot(row[0], xr), dot(row[1], xi)), self.add(dot(row[0], xi), dot(row[1], xr)))
        xi_row = (self.sub(rows_of(c[0], k), product[0]), self.sub(rows_of(c[1], k), product[1]))
        if a is not None:
            d = [self.ins(nns.DynamicSliceOp(p, [zero] * nb + [i, i], [*batch, 1, 1])) for p in a]
            xi_row = self.c_div(xi_row, (d[0], d[1]))
        new = [self.ins(nns.DynamicUpdateSliceOp(x, v, [zero] * nb + [i, zero])) for x, v in zip((xr, xi), xi_row)]
        t_new = self.ins(nn.AddOp(t, self.ins(nn.FullOp(IntegerAttr(1, i64), []))))
        body.add_op(scf.YieldOp(*new, t_new))
        self.b = saved
        bounds = [self.ins(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, n, 1)]
        loop = scf.ForOp(*bounds, [*x0, t0], Region(body))
        self.b.insert(loop)
        return loop.results[0], loop.results[1]

    def as_complex_reduce(self, op: shlo.ReduceOp) -> Sequence[SSAValue] | None:
        """An add body reduces the packed tensor as a real one; multiply, maximum and minimum bodies fold
        the complex values pairwise."""
        if len(op.inputs) != 1:
            raise CompileError.at(op, "convert-stablehlo: a reduce of several complex inputs is not supported")
        body = self._body_kind(op, op.body)  # type: ignore[attr-defined]
        if body == "stablehlo.add":
            return self.on_reduce(op)  # type: ignore[attr-defined]
        combine: dict[str, Callable[[Pair, Pair], Pair]] = {
            "stablehlo.multiply": self.c_mul,
            "stablehlo.maximum": lambda x, y: self.extreme(x, y, larger=True),
            "stablehlo.minimum": lambda x, y: self.extreme(x, y, larger=False),
        }
        if body not in combine:
            raise CompileError.at(op, f"convert-stablehlo: reduce of complex numbers with a '{body}' body is not "
                                      "supported")
        dims = op.dimensions.get_values()
        init = op.init_values[0]
        if any(_shape(op.inputs[0])[k] == 0 for k in dims):  # nothing to combine: the init value
            return [self.ins(nns.BroadcastInDimOp(init, _shape(op.results[0]), [len(_shape(op.results[0])) - 1]))]
        folded = self.fold(op.inputs[0], dims, combine[body])
        return [self.pack(combine[body](self.split(folded), self.split(init)))]

    def fold(self, z: SSAValue, dims: Sequence[int], combine: Callable[[Pair, Pair], Pair]) -> SSAValue:
        """Packed `z` with `dims` (none empty) folded away by `combine`, pairwise (halves combined until one
        is left)."""
        shape = _shape(z)[:-1]
        kept = [k for k in range(len(shape)) if k not in dims]
        out = [shape[k] for k in kept]
        count = math.prod(shape[k] for k in dims)
        moved = self.ins(nn.TransposeOp(z, [*kept, *sorted(dims), len(shape)]))
        x = self.ins(nn.ReshapeOp(moved, [*out, count, 2]))
        rank = len(out)

        def rows(v: SSAValue, lo: int, hi: int) -> SSAValue:
            return self.ins(nns.SliceOp(v, [0] * rank + [lo, 0], [*out, hi, 2], [1] * (rank + 2)))

        while count > 1:
            half = count // 2
            pair = self.pack(combine(self.split(rows(x, 0, half)), self.split(rows(x, half, 2 * half))))
            x = pair if count % 2 == 0 else self.ins(nns.ConcatenateOp([pair, rows(x, 2 * half, count)], rank))
            count = half + count % 2
        return self.ins(nn.ReshapeOp(x, [*out, 2]))


def _tensor_type(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type

