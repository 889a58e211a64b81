"""The nn dialect: library ops on statically shaped tensors.

Every op is pure and infers its result type from its operands and properties;
the verifier checks the written result type against that inference. The
semantics follow numpy/PyTorch (broadcasting, `linear` = x @ W^T + b,
`nll_loss` = mean negative log-likelihood of integer labels). Each op has a
pure expansion into df maps and tasklets in `dialects.nn_expand`.

Syntax: `%r = nn.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>`,
with properties in the attribute dictionary, e.g. `{axis = -1 : i64}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import (
    _BINARY_FORMAT,
    _UNARY_FORMAT,
    REDUCE_KINDS,
    ArithmeticBinaryOp,
    ElementwiseBinaryOp,
    ElementwiseUnaryOp,
    External,
    NNOp,
    _float_tensor,
    _static,
    broadcast_shapes,
    normalize_axis,
)
from dfc.dialects.nn_contract import CONTRACT_OPS
from dfc.dialects.nn_conv import CONV_OPS
from dfc.dialects.nn_dynamic import DYNAMIC_OPS
from dfc.dialects.nn_elementwise import ELEMENTWISE_OPS, BitwiseBinaryOp, NotOp
from dfc.dialects.nn_fft import FFT_OPS
from dfc.dialects.nn_indexing import INDEXING_OPS
from dfc.dialects.nn_random import RANDOM_OPS
from dfc.dialects.nn_sample import SAMPLE_OPS
from dfc.dialects.nn_shape import SHAPE_OPS
from dfc.dialects.nn_sort import SORT_OPS
from dfc.dialects.nn_special import SPECIAL_OPS
from dfc.dialects.nn_window import WINDOW_OPS


class ShapeCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls):
        return SHAPE_PATTERNS


class NegCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls):
        return NEG_PATTERNS


@irdl_op_definition
class AddOp(ArithmeticBinaryOp):
    """Elementwise `lhs + rhs`, with numpy broadcasting (integers wrap)."""

    name = "nn.add"
    EXTERNAL: ClassVar[External] = External(stablehlo="add", onnx="Add")


@irdl_op_definition
class SubOp(ArithmeticBinaryOp):
    """Elementwise `lhs - rhs`, with numpy broadcasting (integers wrap)."""

    name = "nn.sub"
    EXTERNAL: ClassVar[External] = External(stablehlo="subtract", onnx="Sub")


@irdl_op_definition
class MulOp(ArithmeticBinaryOp):
    """Elementwise `lhs * rhs`, with numpy broadcasting (integers wrap)."""

    name = "nn.mul"
    EXTERNAL: ClassVar[External] = External(stablehlo="multiply", onnx="Mul")


@irdl_op_definition
class DivOp(ArithmeticBinaryOp):
    """Elementwise `lhs / rhs`, with numpy broadcasting: IEEE division for floats; for integers
    toward zero, with x / 0 = -1 and MIN / -1 = MIN (as XLA)."""

    name = "nn.div"
    EXTERNAL: ClassVar[External] = External(stablehlo="divide", onnx="Div")

@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """Elementwise `-input`."""

    name = "nn.neg"
    EXTERNAL: ClassVar[External] = External(stablehlo="negate", onnx="Neg")

    traits = traits_def(Pure(), NegCanonicalization())


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """Elementwise `exp(input)`."""

    name = "nn.exp"
    EXTERNAL: ClassVar[External] = External(stablehlo="exponential", onnx="Exp")


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Elementwise natural logarithm (NaN below 0, -inf at 0)."""

    name = "nn.log"
    EXTERNAL: ClassVar[External] = External(stablehlo="log", onnx="Log")


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """Elementwise `tanh(input)`."""

    name = "nn.tanh"
    EXTERNAL: ClassVar[External] = External(stablehlo="tanh", onnx="Tanh")


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Elementwise square root (NaN below 0)."""

    name = "nn.sqrt"
    EXTERNAL: ClassVar[External] = External(stablehlo="sqrt", onnx="Sqrt")


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """Elementwise `max(input, 0)`; NaN stays NaN, as in PyTorch. Its derivative at 0 is 0."""

    name = "nn.relu"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (maximum with 0)", onnx="Relu")


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """Elementwise logistic function `1 / (1 + exp(-input))`."""

    name = "nn.sigmoid"
    EXTERNAL: ClassVar[External] = External(stablehlo="logistic", onnx="Sigmoid")


@irdl_op_definition
class MatmulOp(NNOp):
    """`lhs @ rhs` of 2-D tensors: (M x K) @ (K x N) -> M x N."""

    name = "nn.matmul"
    EXTERNAL: ClassVar[External] = External(stablehlo="dot_general (2-D)", onnx="MatMul (2-D)")

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = _BINARY_FORMAT

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[_matmul_type(lhs.type, rhs.type)])

    def infer_type(self) -> TensorType:
        return _matmul_type(self.lhs.type, self.rhs.type)


def _matmul_type(lhs: Attribute, rhs: Attribute) -> TensorType:
    a, b = _float_tensor(lhs, "lhs"), _float_tensor(rhs, "rhs")
    if a.get_num_dims() != 2 or b.get_num_dims() != 2:
        raise VerifyException(f"matmul operands must be 2-D, got {a} and {b}")
    if a.element_type != b.element_type:
        raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
    (m, k), (k2, n) = a.get_shape(), b.get_shape()
    if k != k2:
        raise VerifyException(f"contraction dimensions differ: {a} and {b}")
    return TensorType(a.element_type, [m, n])


@irdl_op_definition
class LinearOp(NNOp):
    """PyTorch's `linear`: input (N x in) @ weight(out x in)^T + bias(out)."""

    name = "nn.linear"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (dot_general, add)", onnx="Gemm (transB = 1)")

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, weight: SSAValue, bias: SSAValue):
        super().__init__(
            operands=[input, weight, bias],
            result_types=[_linear_type(input.type, weight.type, bias.type)],
        )

    def infer_type(self) -> TensorType:
        return _linear_type(self.input.type, self.weight.type, self.bias.type)


def _linear_type(x: Attribute, w: Attribute, b: Attribute) -> TensorType:
    xt, wt, bt = _float_tensor(x, "input"), _float_tensor(w, "weight"), _float_tensor(b, "bias")
    if xt.get_num_dims() != 2 or wt.get_num_dims() != 2 or bt.get_num_dims() != 1:
        raise VerifyException(f"linear expects a 2-D input, 2-D weight and 1-D bias, got {xt}, {wt}, {bt}")
    if not xt.element_type == wt.element_type == bt.element_type:
        raise VerifyException("input, weight and bias element types differ")
    (n, fan_in), (fan_out, w_in), (b_out,) = xt.get_shape(), wt.get_shape(), bt.get_shape()
    if w_in != fan_in:
        raise VerifyException(f"weight {wt} does not take {fan_in} input features")
    if b_out != fan_out:
        raise VerifyException(f"bias {bt} does not have {fan_out} elements")
    return TensorType(xt.element_type, [n, fan_out])


@irdl_op_definition
class ReduceOp(NNOp):
    """`kind` (sum, max, min, mean) over `axes`, dropping them unless `keepdims`."""

    name = "nn.reduce"
    EXTERNAL: ClassVar[External] = External(stablehlo="reduce (add, max, min bodies)", onnx="ReduceSum, ReduceMax, ReduceMin, ReduceMean")

    input = operand_def(TensorType)
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    assembly_format = _UNARY_FORMAT

    def __init__(self, input: SSAValue, kind: str, axes: Sequence[int], keepdims: bool = False):
        props: dict[str, Attribute] = {"kind": StringAttr(kind), "axes": DenseArrayBase.from_list(i64, axes)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        t = _reducible(input.type, axes)
        shape = _reduced_shape(t.get_shape(), _normalize_axes(axes, t.get_num_dims()), keepdims)
        super().__init__(operands=[input], result_types=[TensorType(t.element_type, shape)], properties=props)

    @property
    def reduced_axes(self) -> tuple[int, ...]:
        """The reduced axes, non-negative and sorted."""
        assert isinstance(self.input.type, TensorType)
        return _normalize_axes(self.axes.get_values(), self.input.type.get_num_dims())

    def infer_type(self) -> TensorType:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(f"reduce kind must be one of {', '.join(REDUCE_KINDS)}, got '{self.kind.data}'")
        t = _reducible(self.input.type, self.axes.get_values())
        shape = _reduced_shape(t.get_shape(), self.reduced_axes, self.keepdims is not None)
        return TensorType(t.element_type, shape)


def _reducible(t: Attribute, axes: Sequence[int]) -> TensorType:
    """A float tensor whose dynamic dimensions (a data-dependent count, `nn.nonzero`'s) are all reduced."""
    if isinstance(t, TensorType):
        reduced = _normalize_axes(axes, t.get_num_dims())
        t = TensorType(t.element_type, [1 if d == DYNAMIC_INDEX and k in reduced else d for k, d in enumerate(t.get_shape())])
    return _float_tensor(t, "input")


def _normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    normalized = sorted(normalize_axis(a, rank) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise VerifyException(f"axes {list(axes)} repeat an axis")
    return tuple(normalized)


def _reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> list[int]:
    if keepdims:
        return [1 if k in axes else d for k, d in enumerate(shape)]
    return [d for k, d in enumerate(shape) if k not in axes]


@irdl_op_definition
class BroadcastOp(NNOp):
    """numpy's `broadcast_to(input, shape of the result)`."""

    name = "nn.broadcast"
    EXTERNAL: ClassVar[External] = External(stablehlo="broadcast_in_dim (numpy rules)", onnx="Expand")

    traits = traits_def(Pure(), ShapeCanonicalization())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = _UNARY_FORMAT

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        t = _static(input.type, "input")
        super().__init__(operands=[input], result_types=[TensorType(t.element_type, shape)])

    def infer_type(self) -> TensorType:
        t = _static(self.input.type, "input")
        out = _static(self.result.type, "result")
        try:
            ok = broadcast_shapes(t.get_shape(), out.get_shape()) == out.get_shape()
        except ValueError:
            ok = False
        if not ok or t.get_num_dims() > out.get_num_dims():
            raise VerifyException(f"{t} does not broadcast to {out}")
        return TensorType(t.element_type, out.get_shape())


@irdl_op_definition
class TransposeOp(NNOp):
    """Permutes dimensions: result dim k is input dim `permutation[k]`."""

    name = "nn.transpose"
    EXTERNAL: ClassVar[External] = External(stablehlo="transpose", onnx="Transpose")

    traits = traits_def(Pure(), ShapeCanonicalization())

    input = operand_def(TensorType)
    permutation = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = _UNARY_FORMAT

    def __init__(self, input: SSAValue, permutation: Sequence[int]):
        t = _static(input.type, "input")
        shape = [t.get_shape()[p] for p in permutation]
        super().__init__(
            operands=[input],
            result_types=[TensorType(t.element_type, shape)],
            properties={"permutation": DenseArrayBase.from_list(i64, permutation)},
        )

    def infer_type(self) -> TensorType:
        t = _static(self.input.type, "input")
        perm = self.permutation.get_values()
        if sorted(perm) != list(range(t.get_num_dims())):
            raise VerifyException(f"permutation {list(perm)} is not a permutation of {t.get_num_dims()} dimensions")
        return TensorType(t.element_type, [t.get_shape()[p] for p in perm])


@irdl_op_definition
class ReshapeOp(NNOp):
    """Row-major reshape to the result type's shape (same element count)."""

    name = "nn.reshape"
    EXTERNAL: ClassVar[External] = External(stablehlo="reshape", onnx="Reshape, Flatten, Squeeze, Unsqueeze")

    traits = traits_def(Pure(), ShapeCanonicalization())

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = _UNARY_FORMAT

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        t = _static(input.type, "input")
        super().__init__(operands=[input], result_types=[TensorType(t.element_type, shape)])

    def infer_type(self) -> TensorType:
        t = _static(self.input.type, "input")
        out = _static(self.result.type, "result")
        if t.element_count() != out.element_count():
            raise VerifyException(f"cannot reshape {t} ({t.element_count()} elements) to {out}")
        if t.element_type != out.element_type:
            raise VerifyException(f"reshape cannot change the element type {t.element_type} to {out.element_type}")
        return out


class AxisOp(NNOp):
    """An op normalising over one axis of a float tensor."""

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = _UNARY_FORMAT

    def __init__(self, input: SSAValue, axis: int = -1):
        super().__init__(
            operands=[input],
            result_types=[_float_tensor(input.type, "input")],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @property
    def normalized_axis(self) -> int:
        t = _float_tensor(self.input.type, "input")
        return normalize_axis(self.axis.value.data, t.get_num_dims())

    def infer_type(self) -> TensorType:
        t = _float_tensor(self.input.type, "input")
        if t.get_num_dims() == 0:
            raise VerifyException("input must have at least one dimension")
        _ = self.normalized_axis
        return t


@irdl_op_definition
class SoftmaxOp(AxisOp):
    """`exp(x - max) / sum(exp(x - max))` along `axis` (default -1)."""

    name = "nn.softmax"
    EXTERNAL: ClassVar[External] = External(stablehlo="-", onnx="Softmax")


@irdl_op_definition
class LogSoftmaxOp(AxisOp):
    """`x - max - log(sum(exp(x - max)))` along `axis` (default -1)."""

    name = "nn.log_softmax"
    EXTERNAL: ClassVar[External] = External(stablehlo="-", onnx="LogSoftmax")


@irdl_op_definition
class NllLossOp(NNOp):
    """Mean negative log-likelihood: -mean_i(input[i, labels[i]]).

    `input` is N x C log-probabilities, `labels` N integers in [0, C); a label
    outside that range is an IndexError when the program runs, as in PyTorch.
    """

    name = "nn.nll_loss"
    EXTERNAL: ClassVar[External] = External(stablehlo="-", onnx="NegativeLogLikelihoodLoss (mean)")

    input = operand_def(TensorType)
    labels = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $labels attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, labels: SSAValue):
        t = _float_tensor(input.type, "input")
        super().__init__(operands=[input, labels], result_types=[TensorType(t.element_type, [])])

    def infer_type(self) -> TensorType:
        t = _float_tensor(self.input.type, "input")
        labels = _static(self.labels.type, "labels")
        if t.get_num_dims() != 2:
            raise VerifyException(f"input must be 2-D (N x C), got {t}")
        if not isinstance(labels.element_type, IntegerType) or labels.get_shape() != (t.get_shape()[0],):
            raise VerifyException(f"labels must be a 1-D integer tensor of {t.get_shape()[0]} elements, got {labels}")
        return TensorType(t.element_type, [])


@irdl_op_definition
class ConstantOp(NNOp):
    """A tensor of the given dense elements: `nn.constant {value = dense<...> : tensor<...>}`."""

    name = "nn.constant"
    EXTERNAL: ClassVar[External] = External(stablehlo="constant", onnx="Constant")

    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def infer_type(self) -> TensorType:
        return _static(self.value.type, "value")


@irdl_op_definition
class FullOp(NNOp):
    """A tensor with every element equal to `value`: `nn.full {value = 0.5 : f32}`."""

    name = "nn.full"
    EXTERNAL: ClassVar[External] = External(stablehlo="constant (splat)", onnx="ConstantOfShape")

    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: FloatAttr | IntegerAttr, shape: Sequence[int]):
        super().__init__(result_types=[TensorType(value.type, shape)], properties={"value": value})

    def infer_type(self) -> TensorType:
        out = _static(self.result.type, "result")
        if out.element_type != self.value.type:
            raise VerifyException(f"value type {self.value.type} is not the element type of {out}")
        return out


# Canonicalization patterns (run by `canonicalize`): shape ops that do nothing
# disappear, chains compose, a double negation cancels.


class DropNoOpShapeOp(RewritePattern):
    """`reshape`/`broadcast`/`transpose` to the input's type, identity permutation."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ReshapeOp | BroadcastOp | TransposeOp):
            return
        if isinstance(op, TransposeOp) and list(op.permutation.get_values()) != list(
            range(len(op.permutation.get_values()))
        ):
            return
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ReshapeOp) and isinstance(inner := op.input.owner, ReshapeOp):
            assert isinstance(op.result.type, TensorType)
            rewriter.replace(op, ReshapeOp(inner.input, op.result.type.get_shape()))


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p o q)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, TransposeOp) and isinstance(inner := op.input.owner, TransposeOp):
            p, q = inner.permutation.get_values(), op.permutation.get_values()
            rewriter.replace(op, TransposeOp(inner.input, [p[k] for k in q]))


class CancelDoubleNegation(RewritePattern):
    """neg(neg(x)) -> x."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, NegOp) and isinstance(inner := op.input.owner, NegOp):
            rewriter.replace(op, [], [inner.input])


SHAPE_PATTERNS = (DropNoOpShapeOp(), ComposeReshapes(), ComposeTransposes())
NEG_PATTERNS = (CancelDoubleNegation(),)


NN = Dialect(
    "nn",
    [
        AddOp, SubOp, MulOp, DivOp,
        NegOp, ExpOp, LogOp, TanhOp, SqrtOp, ReluOp, SigmoidOp,
        MatmulOp, LinearOp, ReduceOp, BroadcastOp, TransposeOp, ReshapeOp,
        SoftmaxOp, LogSoftmaxOp, NllLossOp, ConstantOp, FullOp,
        *ELEMENTWISE_OPS,
        *SHAPE_OPS,
        *CONTRACT_OPS,
        *WINDOW_OPS,
        *INDEXING_OPS,
        *CONV_OPS,
        *SORT_OPS,
        *SAMPLE_OPS,
        *RANDOM_OPS,
        *FFT_OPS,
        *SPECIAL_OPS,
        *DYNAMIC_OPS,
    ],
)


def one_to_one(way: str, arity: int) -> dict[str, type[NNOp]]:
    """The elementwise nn ops an importer translates by name: `EXTERNAL` names an
    op of `way` ("stablehlo" or "onnx") bare, and the op takes `arity` tensors
    and infers its result from them. Maps the external name to the op class."""
    kinds = (ElementwiseUnaryOp, NotOp) if arity == 1 else (ElementwiseBinaryOp, BitwiseBinaryOp)
    out: dict[str, type[NNOp]] = {}
    for op in NN.operations:
        name = op.EXTERNAL.one_to_one(way)  # type: ignore[attr-defined]
        if name and issubclass(op, kinds):
            out[name] = op  # type: ignore[assignment]
    return out
