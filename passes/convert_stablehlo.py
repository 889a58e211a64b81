"""`convert-stablehlo`: StableHLO (as JAX emits it) into nn library ops and scf.

Most ops map one to one onto the nn op of the same semantics: the
elementwise ones by the name each nn op declares (`EXTERNAL`, read by
`nn.one_to_one`), the others by a handler `on_<op>`. Beyond those:

* `reduce` with an add/maximum/minimum body becomes `nn.reduce` (sum/max/min),
  and/or bodies on i1 go through f32 min/max; an init value that is not the
  body's identity is combined with the result afterwards. The two-input
  reduce JAX writes for `argmax`/`argmin` (values and an iota along the reduced
  dimension, a compare-and-select body) becomes `nn.argmax`/`nn.argmin`.
* `reduce_window` with a max/min/add body and the identity as init becomes
  `nn.reduce_window`, any other (integers, base dilations, ...) is folded tap
  by tap (`passes.stablehlo_windows`); `scatter` with a replace or add body
  `nn.scatter`.
* `while` whose condition is `counter < N` (or `<=`) on a carried integer
  that starts at a constant and grows by a constant step in the body (what
  `lax.fori_loop` and `lax.scan` emit) becomes an `scf.for` with the static trip
  count, the counter still carried; any other `while` becomes `scf.while`
  (it runs forward; autodiff refuses it at the loop).
* `sort` with the comparator JAX writes (one key or several), and
  `chlo.top_k`, become `nn.argsort` and gathers by its permutation
  (`passes.stablehlo_sort`).
* Unsigned integers are retyped as signless ones first, the ops whose result
  depends on the sign built in their unsigned form
  (`passes.stablehlo_unsigned`); integer reductions, dot_general, power,
  popcnt, count_leading_zeros, `chlo.mulhi` and boolean arithmetic are built
  from nn ops (`passes.stablehlo_integers`), bitcast_convert and
  reduce_precision on the bits (`passes.stablehlo_bits`), triangular_solve
  and map in `passes.stablehlo_linalg`.
* Complex tensors are packed first, as real tensors with a trailing dimension of 2
  (real and imaginary parts), and the ops of complex operands built from the parts
  (`passes.stablehlo_complex`).
* The 4-, 6- and 8-bit floats are computed in f64 and i4/ui4 in i8, each
  result rounded back into its type (`passes.stablehlo_narrow`).
* `chlo.scan` becomes an `scf.for` over the scanned dimension
  (`passes.stablehlo_scan`); the `chlo` elementwise ops (square, sinh,
  asin, erf, erfc, erf_inv, lgamma, digamma, next_after, ...) are decomposed
  into nn ops (`passes.stablehlo_chlo`); the LAPACK calls JAX emits on CPU
  for Cholesky and triangular solves are built from nn ops too
  (`passes.stablehlo_lapack`), other custom calls are errors naming them.
* `case` becomes nested `scf.if`s on `index == k` (an out-of-range index runs
  the last branch, as StableHLO says; a single branch runs whatever the index),
  `if` an `scf.if`.
* Calls to functions of the module, and composites (calls of their
  decomposition), are inlined, and callees left without callers are erased,
  so that fusion and autodiff see one function.

`is_finite` is `x - x == 0`; `dot` is a `dot_general` contracting lhs's last and
rhs's first dimension; `optimization_barrier` passes its operands on. A mode
the conversion does not cover is a `CompileError` at the op naming it (a
base dilation, a TOTALORDER compare, ...); ops and attributes
the `stablehlo` dialect does not define are parse errors naming them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    f32,
    i1,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.dialects import nn_shape as nns
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.stablehlo_sort import SortOp, TopKOp
from dfc.dialects.xdsl_fixes import dense_values, splat_element
from dfc.passes import stablehlo_sort
from dfc.passes.stablehlo_bits import BitConversions
from dfc.passes.stablehlo_chlo import ChloConversions
from dfc.passes.stablehlo_complex import ComplexConversions, lexicographic_extreme, make_real
from dfc.passes.stablehlo_convolution import ConvolutionConversions
from dfc.passes.stablehlo_integers import ASSOCIATIVE, BOOLEAN_BINARY, IntegerConversions, is_boolean
from dfc.passes.stablehlo_lapack import LapackConversions
from dfc.passes.stablehlo_linalg import LinalgConversions
from dfc.passes.stablehlo_narrow import NarrowConversions, Narrowed, make_wide
from dfc.passes.stablehlo_scan import ScanConversions
from dfc.passes.stablehlo_unsigned import Flags, UnsignedConversions, make_signless
from dfc.passes.stablehlo_windows import IDENTITY, REDUCE_KIND, WindowConversions

UNARY: dict[str, type[Operation]] = nn.one_to_one("stablehlo", 1)
BINARY: dict[str, type[Operation]] = nn.one_to_one("stablehlo", 2)
"""The elementwise ops translated by name, from the nn ops' `EXTERNAL` declarations."""
LOGICAL_REDUCE = {"stablehlo.and": "min", "stablehlo.or": "max"}
"""i1 reduce bodies, computed as f32 min/max of 0/1."""
COMBINE = {"sum": nn.AddOp, "max": nne.MaximumOp, "min": nne.MinimumOp}
MAX_INLINE_DEPTH = 16


def _tensor(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def splat_value(v: SSAValue) -> float | int | None:
    """The value of every element of `v` when it is a splat constant (before or after conversion)."""
    op = v.owner
    if isinstance(op, shlo.ConstantOp | nn.ConstantOp):
        value = op.value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        if (element := splat_element(value)) is not None:
            return element
    if isinstance(op, nn.FullOp):
        return op.value.value.data  # type: ignore[union-attr]
    if isinstance(op, shlo.BroadcastInDimOp | nns.BroadcastInDimOp):
        return splat_value(op.operand)
    return None


def constant_values(v: SSAValue) -> tuple[int | float, ...] | None:
    """The elements of `v` (row-major) when it is a constant (before or after conversion)."""
    op = v.owner
    if isinstance(op, shlo.ConstantOp | nn.ConstantOp):
        return tuple(dense_values(op.value))
    if (splat := splat_value(v)) is not None:
        return (splat,) * math.prod(_tensor(v).get_shape())
    return None


def _static_operand(op: Operation, v: SSAValue, what: str, want: Sequence[int] | None = None) -> tuple[int, ...]:
    """The constant values of `op`'s operand `v` (`what`), which must equal `want` when given;
    a `CompileError` at `op` otherwise (dfc's shapes are static)."""
    values = constant_values(v)
    if values is None:
        raise CompileError.at(op, f"convert-stablehlo: '{op.name}' with {what} computed at run time is not supported")
    values = tuple(int(x) for x in values)
    if want is not None and values != tuple(want):
        raise CompileError.at(op, f"convert-stablehlo: the {what} {list(values)} of '{op.name}' differs from "
                                  f"its result type's shape {list(want)}")
    return values


def _locate(first: Operation | None, op: Operation) -> None:
    """Give the ops from `first` up to `op` (what replaced it) `op`'s location where they have none."""
    while first is not None and first is not op:
        for inner in first.walk():
            if not isinstance(inner.location, FileLineColLoc):
                inner.location = op.location
        first = first.next_op


def _check_dims(op: Operation, dims: Sequence[int], rank: int) -> None:
    """StableHLO dimension numbers are in [0, rank): another one is a `CompileError` at `op`."""
    for d in dims:
        if not 0 <= d < rank:
            raise CompileError.at(op, f"convert-stablehlo: dimension {d} of '{op.name}' is out of range [0, {rank})")


ELEMENT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type, IntegerType)
"""The element types dfc computes with (integers of 1 to 64 bits); others, such as the
8-, 6- and 4-bit floats, are refused by name (complex tensors are packed as real ones
first, `passes.stablehlo_complex`)."""


def _check_element_types(op: Operation) -> None:
    """A tensor operand or result of `op` whose element type dfc does not compute with
    is a `CompileError` at `op`."""
    for v in (*op.operands, *op.results):
        if isinstance(v.type, TensorType):
            e = v.type.element_type
            if not isinstance(e, ELEMENT_TYPES) or isinstance(e, IntegerType) and e.width.data > 64:
                raise CompileError.at(op, f"convert-stablehlo: '{op.name}' on element type {e} is not supported "
                                          "(dfc computes with f16, bf16, f32, f64 and integers of up to 64 bits)")


def _verify(first: Operation | None, op: Operation) -> None:
    """Verify the nn ops from `first` up to `op` (what replaced it): one that refuses its
    operands (an element type, a shape) is a `CompileError` at `op`."""
    while first is not None and first is not op:
        if first.dialect_name() == "nn":
            try:
                first.verify()
            except VerifyException as err:
                raise CompileError.at(op, f"convert-stablehlo: '{op.name}' is not supported here: {err}") from None
        first = first.next_op


class Converter(UnsignedConversions, ComplexConversions, LinalgConversions, IntegerConversions, BitConversions,
                WindowConversions, NarrowConversions, ConvolutionConversions, ScanConversions, ChloConversions,
                LapackConversions):
    """Rewrites the stablehlo ops of one function, block by block, in order; `unsigned_ops` says which
    operands and results of each op were unsigned (`stablehlo_unsigned.make_signless`), `complex_ops`
    which were complex (`stablehlo_complex.make_real`)."""

    def __init__(self, unsigned_ops: dict[Operation, Flags] | None = None,
                 complex_ops: dict[Operation, Flags] | None = None,
                 narrow_ops: dict[Operation, Narrowed] | None = None) -> None:
        self.b = Builder(InsertPoint.at_start(Block()))
        self.unsigned_ops = unsigned_ops or {}
        self.complex_ops = complex_ops or {}
        self.narrow_ops = narrow_ops or {}

    splat = staticmethod(splat_value)

    def ins(self, op: Operation) -> SSAValue:
        self.b.insert(op)
        return op.results[0]

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            if op.dialect_name() in ("stablehlo", "chlo") and not isinstance(op, shlo.ReturnOp):
                self.b = Builder(InsertPoint.before(op))
                prev = op.prev_op
                _check_element_types(op)
                try:
                    new = self.op(op)
                    if op in self.narrow_ops:
                        new = self.narrowed(op, new, self.narrow_ops[op])
                except VerifyException as err:
                    raise CompileError.at(op, f"convert-stablehlo: '{op.name}' is not supported here: {err}") from None
                first = prev.next_op if prev is not None else block.first_op
                _locate(first, op)
                _verify(first, op)
                for old, value in zip(op.results, new):
                    old.replace_all_uses_with(value)
                Rewriter.erase_op(op)

    def op(self, op: Operation) -> Sequence[SSAValue]:
        short = op.name.split(".", 1)[1]
        handler: Callable[[Operation], Sequence[SSAValue]] | None = getattr(self, f"on_{short}", None)
        if (complex_form := self.complex_form(op)) is not None:
            return complex_form
        if (unsigned := self.unsigned_form(op)) is not None:
            return unsigned
        if short in UNARY:
            return [self.unary(op, short)]
        if short in BINARY:
            lhs, rhs = op.operands
            if short == "power" and isinstance(_tensor(lhs).element_type, IntegerType) and lhs.type == rhs.type:
                return [self.integer_power(lhs, rhs, any(self.unsigned_ops.get(op, ((), ()))[0]))]
            if short in BOOLEAN_BINARY and is_boolean(lhs):
                return [self.ins(BOOLEAN_BINARY[short](lhs, rhs))]
            return [self.ins(BINARY[short](lhs, rhs))]
        if handler is None:
            raise CompileError.at(op, f"convert-stablehlo: '{op.name}' is not supported")
        return handler(op)

    # ------------------------------------------------------------ elementwise

    def unary(self, op: Operation, short: str) -> SSAValue:
        x = op.operands[0]
        if short == "negate" and isinstance(_tensor(x).element_type, IntegerType):
            zero = self.ins(nn.FullOp(IntegerAttr(0, _tensor(x).element_type), []))
            return self.ins(nn.SubOp(zero, x))
        return self.ins(UNARY[short](x))

    def _finite(self, x: SSAValue) -> SSAValue:
        """`x - x == 0`: true where `x` is neither infinite nor NaN."""
        zero = self.ins(nn.FullOp(FloatAttr(0.0, _tensor(x).element_type), []))  # type: ignore[arg-type]
        return self.ins(nne.CompareOp(self.ins(nn.SubOp(x, x)), zero, "EQ"))

    def on_is_finite(self, op: shlo.UnaryOp) -> Sequence[SSAValue]:
        return [self._finite(op.operand)]

    def on_convert(self, op: shlo.ConvertOp) -> Sequence[SSAValue]:
        t = _tensor(op.result)
        if op.operand.type == t:
            return [op.operand]
        return [self.ins(nne.ConvertOp(op.operand, t.element_type))]

    def on_select(self, op: shlo.SelectOp) -> Sequence[SSAValue]:
        return [self.ins(nne.SelectOp(op.pred, op.on_true, op.on_false))]

    def on_clamp(self, op: shlo.ClampOp) -> Sequence[SSAValue]:
        return [self.ins(nne.ClampOp(op.min, op.operand, op.max))]

    def on_compare(self, op: shlo.CompareOp) -> Sequence[SSAValue]:
        kind = op.compare_type.data if op.compare_type is not None else None
        direction = op.comparison_direction.data
        if kind == "UNSIGNED":
            return [self.unsigned_compare(op.lhs, op.rhs, direction)]
        if kind == "TOTALORDER":
            raise CompileError.at(op, f"convert-stablehlo: compare {direction} with compare_type {kind} is not supported")
        return [self.ins(nne.CompareOp(op.lhs, op.rhs, direction))]

    # ------------------------------------------------------------ constants and shapes

    def on_constant(self, op: shlo.ConstantOp) -> Sequence[SSAValue]:
        t = _tensor(op.output)
        e = t.element_type
        splat = splat_value(op.output)
        if splat is not None and isinstance(e, AnyFloat):
            return [self.ins(nn.FullOp(FloatAttr(float(splat), e), t.get_shape()))]
        if splat is not None and isinstance(e, IntegerType) and e.width.data > 1:
            return [self.ins(nn.FullOp(IntegerAttr(int(splat), e), t.get_shape()))]
        return [self.ins(nn.ConstantOp(op.value))]

    def on_get_dimension_size(self, op: shlo.GetDimensionSizeOp) -> Sequence[SSAValue]:
        shape = _tensor(op.operand).get_shape()
        dim = op.dimension.value.data
        _check_dims(op, [dim], len(shape))
        if shape[dim] < 0:
            raise CompileError.at(op, f"convert-stablehlo: get_dimension_size of dynamic dimension {dim} "
                                      "is not supported")
        return [self.ins(nn.FullOp(IntegerAttr(shape[dim], _tensor(op.result).element_type), ()))]

    def on_dynamic_iota(self, op: shlo.DynamicIotaOp) -> Sequence[SSAValue]:
        _static_operand(op, op.output_shape, "output shape", _tensor(op.result).get_shape())
        return [self.ins(nns.IotaOp(_tensor(op.result), op.iota_dimension.value.data))]

    def on_dynamic_reshape(self, op: shlo.DynamicReshapeOp) -> Sequence[SSAValue]:
        _static_operand(op, op.output_shape, "output shape", _tensor(op.result).get_shape())
        return [self.ins(nn.ReshapeOp(op.operand, _tensor(op.result).get_shape()))]

    def on_dynamic_broadcast_in_dim(self, op: shlo.DynamicBroadcastInDimOp) -> Sequence[SSAValue]:
        shape = _tensor(op.result).get_shape()
        _static_operand(op, op.output_dimensions, "output shape", shape)
        return [self.ins(nns.BroadcastInDimOp(op.operand, shape, op.broadcast_dimensions.get_values()))]

    def on_dynamic_pad(self, op: shlo.DynamicPadOp) -> Sequence[SSAValue]:
        low, high, interior = (_static_operand(op, v, what) for v, what in (
            (op.edge_padding_low, "low padding"), (op.edge_padding_high, "high padding"),
            (op.interior_padding, "interior padding")))
        return [self.ins(nns.PadOp(op.operand, op.padding_value, low, high, interior))]

    def on_dynamic_gather(self, op: shlo.DynamicGatherOp) -> Sequence[SSAValue]:
        sizes = _static_operand(op, op.slice_sizes, "slice sizes")
        return [self.gather(op.operand, op.start_indices, op.dimension_numbers, sizes)]

    def on_dynamic_conv(self, op: shlo.DynamicConvOp) -> Sequence[SSAValue]:
        pad = _static_operand(op, op.padding, "padding")
        if len(pad) != 2 * len(op.dimension_numbers.ints("input_spatial_dimensions")):
            raise CompileError.at(op, f"convert-stablehlo: the padding of '{op.name}' has {len(pad)} elements, not a "
                                      "(low, high) pair per spatial dimension")
        return [self.convolution(op, pad)]

    def on_iota(self, op: shlo.IotaOp) -> Sequence[SSAValue]:
        return [self.ins(nns.IotaOp(_tensor(op.output), op.iota_dimension.value.data))]

    def on_broadcast_in_dim(self, op: shlo.BroadcastInDimOp) -> Sequence[SSAValue]:
        dims = op.broadcast_dimensions.get_values()
        return [self.ins(nns.BroadcastInDimOp(op.operand, _tensor(op.result).get_shape(), dims))]

    def on_reshape(self, op: shlo.ReshapeOp) -> Sequence[SSAValue]:
        return [self.ins(nn.ReshapeOp(op.operand, _tensor(op.result).get_shape()))]

    def on_transpose(self, op: shlo.TransposeOp) -> Sequence[SSAValue]:
        return [self.ins(nn.TransposeOp(op.operand, op.permutation.get_values()))]

    def on_reverse(self, op: shlo.ReverseOp) -> Sequence[SSAValue]:
        return [self.ins(nns.ReverseOp(op.operand, op.dimensions.get_values()))]

    def on_slice(self, op: shlo.SliceOp) -> Sequence[SSAValue]:
        return [self.ins(nns.SliceOp(op.operand, op.start_indices.get_values(), op.limit_indices.get_values(),
                                     op.strides.get_values()))]

    def on_dynamic_slice(self, op: shlo.DynamicSliceOp) -> Sequence[SSAValue]:
        return [self.ins(nns.DynamicSliceOp(op.operand, list(op.start_indices), op.slice_sizes.get_values()))]

    def on_dynamic_update_slice(self, op: shlo.DynamicUpdateSliceOp) -> Sequence[SSAValue]:
        return [self.ins(nns.DynamicUpdateSliceOp(op.operand, op.update, list(op.start_indices)))]

    def on_concatenate(self, op: shlo.ConcatenateOp) -> Sequence[SSAValue]:
        _check_dims(op, [op.dimension.value.data], _tensor(op.inputs[0]).get_num_dims())
        return [self.ins(nns.ConcatenateOp(list(op.inputs), op.dimension.value.data))]

    def on_pad(self, op: shlo.PadOp) -> Sequence[SSAValue]:
        return [self.ins(nns.PadOp(op.operand, op.padding_value, op.edge_padding_low.get_values(),
                                   op.edge_padding_high.get_values(), op.interior_padding.get_values()))]

    # ------------------------------------------------------------ contractions

    def on_dot_general(self, op: shlo.DotGeneralOp) -> Sequence[SSAValue]:
        d = op.dot_dimension_numbers
        batching = (d.ints("lhs_batching_dimensions"), d.ints("rhs_batching_dimensions"))
        contracting = (d.ints("lhs_contracting_dimensions"), d.ints("rhs_contracting_dimensions"))
        target = _tensor(op.result).element_type
        unsigned = self.unsigned_ops.get(op, ((False, False), (False,)))
        lhs, rhs = (self.cast(v, unsigned[0][k], target, unsigned[1][0]) for k, v in enumerate((op.lhs, op.rhs)))
        if isinstance(target, IntegerType):
            result = self.integer_dot(lhs, rhs, batching, contracting)
        else:
            result = self.ins(nnc.DotGeneralOp(lhs, rhs, batching, contracting))
        if result.type != op.result.type:
            raise CompileError.at(op, f"convert-stablehlo: dot_general gives {result.type}, not its result type "
                                      f"{op.result.type}")
        return [result]

    def on_dot(self, op: shlo.DotOp) -> Sequence[SSAValue]:
        contracting = ((_tensor(op.lhs).get_num_dims() - 1,), (0,))
        return [self.ins(nnc.DotGeneralOp(op.lhs, op.rhs, ((), ()), contracting))]

    def on_optimization_barrier(self, op: shlo.OptimizationBarrierOp) -> Sequence[SSAValue]:
        return list(op.operand)

    # ------------------------------------------------------------ reductions

    def _body_kind(self, op: Operation, region: Region) -> str:
        """The name of the single binary op of a reduction body applied to its two arguments."""
        block = region.block
        ops = list(block.ops)
        ret = ops[-1]
        if (len(ops) == 2 and ops[0].name.removeprefix("stablehlo.") in BINARY
                and set(ops[0].operands) == set(block.args) and list(ret.operands) == [ops[0].results[0]]):
            return ops[0].name
        if (extreme := lexicographic_extreme(block)) is not None:
            return extreme
        raise CompileError.at(op, f"convert-stablehlo: '{op.name}' with this body is not supported "
                                  f"(one add, maximum, minimum, and or or of the two arguments is)")

    def on_reduce(self, op: shlo.ReduceOp) -> Sequence[SSAValue]:
        dims = op.dimensions.get_values()
        _check_dims(op, dims, _tensor(op.inputs[0]).get_num_dims())
        if len(set(dims)) != len(dims):
            raise CompileError.at(op, f"convert-stablehlo: reduce dimensions {list(dims)} repeat a dimension")
        if len(op.inputs) == 2:
            return self.arg_reduce(op, dims)
        if len(op.inputs) != 1:
            raise CompileError.at(op, f"convert-stablehlo: reduce of {len(op.inputs)} inputs is not supported")
        body = self._body_kind(op, op.body)
        x, init = op.inputs[0], op.init_values[0]
        if body in LOGICAL_REDUCE:
            as_float = self.ins(nne.ConvertOp(x, f32))
            kind = LOGICAL_REDUCE[body]
            r = self.ins(nn.ReduceOp(as_float, kind, dims))
            r = self.ins(COMBINE[kind](r, self.ins(nne.ConvertOp(init, f32))))
            return [self.ins(nne.ConvertOp(r, i1))]
        if body not in REDUCE_KIND or not isinstance(_tensor(x).element_type, AnyFloat):
            if body not in ASSOCIATIVE:
                raise CompileError.at(op, f"convert-stablehlo: reduce with a '{body}' body is not supported")
            unsigned = any(self.unsigned_ops.get(op, ((), ()))[0])
            return [self.pairwise_reduce(x, init, dims, self.combiner(body, unsigned))]
        kind = REDUCE_KIND[body]
        r = self.ins(nn.ReduceOp(x, kind, dims))
        if splat_value(init) != IDENTITY[kind]:
            r = self.ins(COMBINE[kind](r, init))
        return [r]

    def arg_reduce(self, op: shlo.ReduceOp, dims: Sequence[int]) -> Sequence[SSAValue]:
        """JAX's argmax/argmin: reduce (values, iota along the dimension) with a pair body."""
        x, idx = op.inputs
        directions = [o.comparison_direction.data for o in op.body.block.ops if isinstance(o, shlo.CompareOp)
                      and o.lhs.type == o.rhs.type and isinstance(_tensor(o.lhs).element_type, AnyFloat)]
        kind = "max" if "GT" in directions else "min" if "LT" in directions else None
        iota = idx.owner
        if (kind is None or len(dims) != 1 or not isinstance(iota, nns.IotaOp)
                or iota.iota_dimension.value.data != dims[0] or splat_value(op.init_values[1]) != 0
                or splat_value(op.init_values[0]) != IDENTITY[kind]):
            raise CompileError.at(op, "convert-stablehlo: a reduce of two inputs is supported only as JAX's "
                                      "argmax/argmin (values and an iota along the one reduced dimension)")
        arg = nnc.ArgMaxOp if kind == "max" else nnc.ArgMinOp
        index = self.ins(arg(x, dims[0], _tensor(op.results[1]).element_type))
        value = self.ins(nn.ReduceOp(x, kind, dims)) if op.results[0].uses else op.results[0]
        return [value, index]

    def on_sort(self, op: SortOp) -> Sequence[SSAValue]:
        return stablehlo_sort.sort(self.ins, op, self.unsigned_ops)

    def on_top_k(self, op: TopKOp) -> Sequence[SSAValue]:
        return stablehlo_sort.top_k(self.ins, op)

    # ------------------------------------------------------------ indexing

    def on_gather(self, op: shlo.GatherOp) -> Sequence[SSAValue]:
        return [self.gather(op.operand, op.start_indices, op.dimension_numbers, op.slice_sizes.get_values())]

    def gather(self, operand: SSAValue, indices: SSAValue, d, slice_sizes: Sequence[int]) -> SSAValue:
        """`gather` of `operand` at `indices` with dimension numbers `d` (a `GatherAttr`)."""
        dims = {n: d.ints(n) for n in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                       "start_indices_batching_dims", "start_index_map")}
        dims["slice_sizes"] = tuple(slice_sizes)
        return self.ins(nni.GatherOp(operand, indices, dims, d.int("index_vector_dim")))

    def on_scatter(self, op: shlo.ScatterOp) -> Sequence[SSAValue]:
        operand, indices, updates, kind, dims, index_dim = self.scatter_parts(op, "scatter")
        return [self.ins(nni.ScatterOp(operand, indices, updates, kind, dims, index_dim))]

    def scatter_parts(self, op: shlo.ScatterOp, what: str) -> tuple[SSAValue, SSAValue, SSAValue, str, dict, int]:
        """(operand, indices, updates, `nn.scatter`'s kind, its dimension numbers, index_vector_dim) of a
        scatter of one input whose update computation replaces or adds (else a CompileError naming `what`)."""
        if len(op.all_operands) != 3:
            raise CompileError.at(op, "convert-stablehlo: scatter of several inputs is not supported")
        operand, indices, updates = op.all_operands
        block = op.update_computation.block
        ops = list(block.ops)
        if len(ops) == 1 and list(ops[0].operands) == [block.args[1]]:
            kind = "replace"
        elif self._body_kind(op, op.update_computation) == "stablehlo.add":
            kind = "add"
        else:
            raise CompileError.at(op, f"convert-stablehlo: {what} with this update computation is not supported "
                                      "(replace and add are)")
        d = op.scatter_dimension_numbers
        dims = {n: d.ints(n) for n in ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                                       "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")}
        return operand, indices, updates, kind, dims, d.int("index_vector_dim")

    # ------------------------------------------------------------ control flow

    def _scalar(self, t: SSAValue) -> SSAValue:
        return self.ins(tensor.ExtractOp(t, [], _tensor(t).element_type))

    def _region(self, region: Region, terminator: Callable[[Sequence[SSAValue]], Operation]) -> Region:
        """`region` converted, its `stablehlo.return` replaced by `terminator(values)`, detached."""
        block = region.block
        saved = self.b
        self.block(block)
        self.b = saved
        ret = block.last_op
        assert isinstance(ret, shlo.ReturnOp)
        values = list(ret.operands)
        Rewriter.erase_op(ret)
        block.add_op(terminator(values))
        return region.parent_op().detach_region(region) if region.parent_op() else region  # type: ignore[union-attr]

    def on_while(self, op: shlo.WhileOp) -> Sequence[SSAValue]:
        trip = static_trip_count(op, self.unsigned_ops)
        if trip is not None:
            saved = self.b
            body = self._region(op.body, lambda vs: scf.YieldOp(*vs))
            self.b = saved
            body.block.insert_arg(IndexType(), 0)
            lb, ub, step = (self.ins(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, trip, 1))
            loop = scf.ForOp(lb, ub, step, list(op.operand), body)
            self.b.insert(loop)
            return list(loop.results)
        saved = self.b
        after = self._region(op.body, lambda vs: scf.YieldOp(*vs))
        before_block = op.cond.block
        self.b = Builder(InsertPoint.before(before_block.last_op))  # type: ignore[arg-type]
        self.block(before_block)
        ret = before_block.last_op
        assert isinstance(ret, shlo.ReturnOp)
        self.b = Builder(InsertPoint.before(ret))
        flag = self._scalar(ret.operands[0])
        Rewriter.erase_op(ret)
        before_block.add_op(scf.ConditionOp(flag, *before_block.args))
        before = op.detach_region(op.cond)
        self.b = saved
        loop = scf.WhileOp(list(op.operand), [v.type for v in op.results], before, after)
        self.b.insert(loop)
        return list(loop.results)

    def _if(self, flag: SSAValue, then: Region, other: Region, types: Sequence) -> Sequence[SSAValue]:
        op = scf.IfOp(flag, list(types), then, other)
        self.b.insert(op)
        return list(op.results)

    def on_if(self, op: shlo.IfOp) -> Sequence[SSAValue]:
        saved = self.b
        true_branch, false_branch = op.true_branch, op.false_branch  # both read before `_region` detaches one
        then = self._region(true_branch, lambda vs: scf.YieldOp(*vs))
        other = self._region(false_branch, lambda vs: scf.YieldOp(*vs))
        self.b = saved
        return self._if(self._scalar(op.pred), then, other, [r.type for r in op.results])

    def on_case(self, op: shlo.CaseOp) -> Sequence[SSAValue]:
        saved = self.b
        regions = list(op.branches)
        if len(regions) == 1:  # the one branch runs whatever the index: an if on true with it on both sides
            regions = [regions[0].clone(), regions[0]]
        branches = [self._region(r, lambda vs: scf.YieldOp(*vs)) for r in regions]
        self.b = saved
        if len(op.branches) == 1:
            true = self.ins(arith.ConstantOp(IntegerAttr(1, i1)))
            return self._if(true, branches[0], branches[1], [r.type for r in op.results])
        return self._case_chain(self._scalar(op.index), 0, branches, [r.type for r in op.results])

    def _case_chain(self, index: SSAValue, k: int, branches: list[Region], types: Sequence) -> Sequence[SSAValue]:
        """`index == k ? branch k : (the chain from k + 1)`; the last branch takes every other index."""
        key = self.ins(arith.ConstantOp(IntegerAttr(k, index.type)))  # type: ignore[arg-type]
        flag = self.ins(arith.CmpiOp(index, key, "eq"))
        if k == len(branches) - 2:
            other = branches[-1]
        else:
            block = Block()
            saved, self.b = self.b, Builder(InsertPoint.at_end(block))
            block.add_op(scf.YieldOp(*self._case_chain(index, k + 1, branches, types)))
            self.b = saved
            other = Region(block)
        return self._if(flag, branches[k], other, types)


def static_trip_count(op: shlo.WhileOp, unsigned: Container[Operation] = ()) -> int | None:
    """The trip count of `while (counter < N)` with a constant start and step, else None (also for an
    unsigned comparison: an op in `unsigned` or of compare_type UNSIGNED)."""
    cond = list(op.cond.block.ops)
    ret = cond[-1]
    cmp = ret.operands[0].owner if ret.operands else None
    if not isinstance(cmp, shlo.CompareOp) or cmp.comparison_direction.data not in ("LT", "LE"):
        return None
    if cmp in unsigned or (cmp.compare_type is not None and cmp.compare_type.data == "UNSIGNED"):
        return None
    args = list(op.cond.block.args)
    if cmp.lhs not in args or any(o is not cmp and not isinstance(o, shlo.ConstantOp | shlo.ReturnOp) for o in cond):
        return None
    k = args.index(cmp.lhs)
    bound, start = splat_value(cmp.rhs), splat_value(op.operand[k])
    if not isinstance(bound, int) or not isinstance(start, int):
        return None
    body_ret = op.body.block.last_op
    assert body_ret is not None
    step_op = body_ret.operands[k].owner
    if not isinstance(step_op, shlo.BinaryOp) or step_op.name != "stablehlo.add":
        return None
    counter = op.body.block.args[k]
    if counter not in step_op.operands:
        return None
    other = step_op.rhs if step_op.lhs == counter else step_op.lhs
    step = splat_value(other)
    if not isinstance(step, int) or step <= 0:
        return None
    end = bound + (1 if cmp.comparison_direction.data == "LE" else 0)
    return max(0, -(-(end - start) // step))


def _callee(op: Operation) -> str | None:
    """The function `op` calls: a `func.call`'s callee, a `stablehlo.composite`'s decomposition."""
    if isinstance(op, func.CallOp):
        return op.callee.root_reference.data
    if isinstance(op, shlo.CompositeOp):
        return op.decomposition.root_reference.data
    return None


def inline_calls(module: ModuleOp) -> None:
    """Replace each `func.call` to a function of the module, and each `stablehlo.composite` (the call of
    its decomposition), by a copy of its body; erase private functions left without callers."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    for depth in range(MAX_INLINE_DEPTH + 1):
        calls = [c for c in module.walk() if (name := _callee(c)) is not None
                 and (f := functions.get(name)) is not None and not f.is_declaration]
        if not calls:
            break
        if depth == MAX_INLINE_DEPTH:
            raise CompileError.at(calls[0], f"convert-stablehlo: calls nest deeper than {MAX_INLINE_DEPTH} "
                                            "(a recursive function?); they are not inlined")
        for call in calls:
            callee = functions[_callee(call)]
            if callee.is_ancestor(call):
                raise CompileError.at(call, f"convert-stablehlo: @{callee.sym_name.data} calls itself; "
                                            "recursion is not inlined")
            body = callee.body.clone()
            block = body.block
            for arg, value in zip(block.args, call.operands):
                arg.replace_all_uses_with(value)
            ret = block.last_op
            assert isinstance(ret, func.ReturnOp)
            results = list(ret.arguments)
            for inner in list(block.ops):
                if inner is ret:
                    break
                inner.detach()
                Rewriter.insert_op(inner, InsertPoint.before(call))
            for old, new in zip(call.results, results):
                old.replace_all_uses_with(new)
            Rewriter.erase_op(call)
    called = {name for c in module.walk() if (name := _callee(c)) is not None}
    for name, f in functions.items():
        if f.sym_visibility is not None and f.sym_visibility.data == "private" and name not in called:
            Rewriter.erase_op(f)


@dataclass(frozen=True)
class ConvertStableHLOPass(ModulePass):
    """StableHLO ops (as JAX emits them) into nn library ops and scf control flow."""

    name = "convert-stablehlo"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op)
        for f in [f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration]:
            unsigned = make_signless(f)
            Converter(unsigned, make_real(f), make_wide(f)).block(f.body.block)
