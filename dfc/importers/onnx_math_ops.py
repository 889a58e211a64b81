"""The ONNX importer's elementwise functions built of nn ops: the activations
(Elu, Celu, Selu, LeakyRelu, PRelu, ThresholdedRelu, HardSigmoid, HardSwish,
Softplus, Softsign, Mish, Swish, Shrink), Reciprocal, the hyperbolic and
inverse trigonometric functions, Mod, Pow, and the variadic Sum and Mean.

Each follows the formula of ONNX's operator specification, written in the
numerically careful form where the naive one loses precision (`log1p` and
`expm1` near 0, `(1 - x)(1 + x)` for `1 - x^2`); autodiff differentiates the
composition."""

from __future__ import annotations

import math
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerAttr, IntegerType, f64, i1
from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects.nn_arith_builders import NNArithmetic
from dfc.importers.onnx_common import NodeError, tensor_of


class MathOps(NNArithmetic):
    """Elementwise `op_<Type>` methods, mixed into `OnnxImporter` (whose `value`, `ins` and `scalar` they use)."""

    # ------------------------------------------------------------ helpers

    def op_Pow(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`x ** y` in `x`'s type, as numpy's `power(x, y).astype(x.dtype)` (ONNX's reference). A float
        base: `nn.power`, an integer exponent converted by its value (in f64 for exponents of 32 bits or
        more, as numpy promotes them). An integer base and exponent: exact (`integer_power`). An integer
        base and a float exponent: in f64, truncated toward zero."""
        x, y = (self.value(n) for n in node.input)
        x_unsigned, y_unsigned = 0 in self.unsigned_inputs, 1 in self.unsigned_inputs
        e, ey = tensor_of(x).element_type, tensor_of(y).element_type
        if isinstance(e, AnyFloat):
            if isinstance(ey, IntegerType) and ey.width.data >= 32:
                wide = self.ins(nne.PowerOp(self.cast(x, False, f64, False), self.cast(y, y_unsigned, f64, False)))
                return [self.cast(wide, False, e, False)]
            return [self.ins(nne.PowerOp(x, self.cast(y, y_unsigned, e, False)))]
        if not isinstance(e, IntegerType) or e == i1:
            raise NodeError(f"Pow of {tensor_of(x)} is not supported")
        if isinstance(ey, AnyFloat):
            wide = self.ins(nne.PowerOp(self.cast(x, x_unsigned, f64, False), self.cast(y, False, f64, False)))
            return [self.cast(wide, False, e, x_unsigned)]
        self.unsigned_outputs = {0} if x_unsigned else set()
        return [self.integer_power(x, y, x_unsigned, y_unsigned)]

    def integer_power(self, x: SSAValue, y: SSAValue, x_unsigned: bool, y_unsigned: bool) -> SSAValue:
        """x^y of integers, wrapping as their products do: square and multiply over the bits of y, an
        `scf.for` over them carrying (x^y so far, x^(2^k), y >> k). A negative y gives the truncation of
        1 / x^|y|: 1 for x = 1, +-1 for x = -1 (signed), 0 otherwise (numpy refuses; the specification
        leaves it open)."""
        e, shape = tensor_of(x).element_type, tensor_of(x).get_shape()
        width = tensor_of(y).element_type.width.data  # type: ignore[union-attr]
        one, zero_y = self.num(1, x), self.num(0, y)
        carried = [self.ins(nn.FullOp(IntegerAttr(1, e), shape)), x, y]  # type: ignore[arg-type]
        block = Block(arg_types=[IndexType(), *(v.type for v in carried)])
        result, square, rest = block.args[1:]
        outer = self.b
        self.b = Builder(InsertPoint.at_end(block))
        try:
            taken = self.ins(nne.CompareOp(self.ins(nne.AndOp(rest, self.num(1, y))), zero_y, "NE"))
            result = self.ins(nne.SelectOp(taken, self.ins(nn.MulOp(result, square)), result))
            square = self.ins(nn.MulOp(square, square))
            self.b.insert(scf.YieldOp(result, square, self.ins(nne.ShiftRightLogicalOp(rest, self.num(1, y)))))
        finally:
            self.b = outer
        bounds = [self.b.insert(arith.ConstantOp.from_int_and_width(v, IndexType())).result for v in (0, width, 1)]
        result = self.b.insert(scf.ForOp(*bounds, carried, block)).results[0]
        if y_unsigned:
            return result
        negative = self.ins(nne.CompareOp(y, zero_y, "LT"))
        zeros = self.ins(nn.FullOp(IntegerAttr(0, e), shape))  # type: ignore[arg-type]
        inverse = self.ins(nne.SelectOp(self.ins(nne.CompareOp(x, one, "EQ")), result, zeros))
        if not x_unsigned:  # (-1)^y is +-1 (the parity of y's lowest bit); x^-n of other x truncates to 0
            minus_one = self.ins(nne.CompareOp(x, self.num(-1, x), "EQ"))
            inverse = self.ins(nne.SelectOp(minus_one, result, inverse))
        return self.ins(nne.SelectOp(negative, inverse, result))

    def _float_input(self, node: Any) -> SSAValue:
        x = self.value(node.input[0])
        if not isinstance(tensor_of(x).element_type, AnyFloat):
            raise NodeError(f"{node.op_type} of {tensor_of(x)} (not float) is not supported")
        return x

    def _softplus(self, x: SSAValue) -> SSAValue:
        """log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)) (no overflow)."""
        tail = self.ins(nne.Log1pOp(self.ins(nn.ExpOp(self.ins(nn.NegOp(self.ins(nne.AbsOp(x))))))))
        return self.add(self.ins(nn.ReluOp(x)), tail)

    def _hard_sigmoid(self, x: SSAValue, alpha: float, beta: float) -> SSAValue:
        """max(0, min(1, alpha x + beta))."""
        y = self.add(self.mul(x, self.scalar(alpha, x)), self.scalar(beta, x))
        return self.ins(nne.MaximumOp(self.ins(nne.MinimumOp(y, self.scalar(1.0, x))), self.scalar(0.0, x)))

    def _one_minus_square(self, x: SSAValue) -> SSAValue:
        """1 - x^2 as (1 - x)(1 + x), exact where x^2 is near 1."""
        one = self.scalar(1.0, x)
        return self.mul(self.sub(one, x), self.add(one, x))

    # ------------------------------------------------------------ activations

    def op_Reciprocal(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self._float_input(node)
        return [self.ins(nn.DivOp(self.scalar(1.0, x), x))]

    def op_Softplus(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self._softplus(self._float_input(node))]

    def op_Softsign(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x / (1 + |x|)."""
        x = self._float_input(node)
        return [self.ins(nn.DivOp(x, self.add(self.scalar(1.0, x), self.ins(nne.AbsOp(x)))))]

    def _elu(self, x: SSAValue, alpha: float) -> SSAValue:
        """x where x > 0, else alpha (exp(x) - 1)."""
        negative = self.mul(self.ins(nne.Expm1Op(x)), self.scalar(alpha, x))
        return self.where(self.cmp(x, self.scalar(0.0, x), "GT"), x, negative)

    def op_Elu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self._elu(self._float_input(node), attrs["alpha"])]

    def op_Selu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """gamma * (x where x > 0, else alpha (exp(x) - 1))."""
        x = self._float_input(node)
        return [self.mul(self._elu(x, attrs["alpha"]), self.scalar(attrs["gamma"], x))]

    def op_Celu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
        x = self._float_input(node)
        alpha = attrs["alpha"]
        if alpha == 0:
            raise NodeError("Celu with alpha = 0 is not defined")
        scaled = self.mul(self.ins(nne.Expm1Op(self.mul(x, self.scalar(1 / alpha, x)))), self.scalar(alpha, x))
        return [self.add(self.ins(nn.ReluOp(x)), self.ins(nne.MinimumOp(scaled, self.scalar(0.0, x))))]

    def op_LeakyRelu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """alpha x where x < 0, else x."""
        x = self._float_input(node)
        return [self.where(self.cmp(x, self.scalar(0.0, x), "LT"), self.mul(x, self.scalar(attrs["alpha"], x)), x)]

    def op_PRelu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """slope x where x < 0, else x; `slope` broadcasts to x (before opset 7, which did not specify
        broadcasting, a slope of C elements for x of [N, C, ...] is per channel, as Caffe's and PyTorch's)."""
        x, slope = self.value(node.input[0]), self.value(node.input[1])
        shape, per = tensor_of(x).get_shape(), tensor_of(slope).get_shape()
        if self.opset < 7 and len(per) == 1 and len(shape) > 2 and per[0] == shape[1] != shape[-1]:
            slope = self._reshape(slope, [per[0]] + [1] * (len(shape) - 2))
        negative = self.mul(x, slope)
        if list(tensor_of(negative).get_shape()) != list(tensor_of(x).get_shape()):
            raise NodeError(f"PRelu slope of {tensor_of(slope)} does not broadcast to {tensor_of(x)}")
        return [self.where(self.cmp(x, self.num(0, x), "LT"), negative, x)]

    def op_ThresholdedRelu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x where x > alpha, else 0."""
        x = self._float_input(node)
        return [self.where(self.cmp(x, self.scalar(attrs["alpha"], x), "GT"), x, self.scalar(0.0, x))]

    def op_HardSigmoid(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self._hard_sigmoid(self._float_input(node), attrs["alpha"], attrs["beta"])]

    def op_HardSwish(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x * HardSigmoid(x) with alpha 1/6, beta 1/2."""
        x = self._float_input(node)
        return [self.mul(x, self._hard_sigmoid(x, 1 / 6, 0.5))]

    def op_Mish(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x tanh(softplus(x))."""
        x = self._float_input(node)
        return [self.mul(x, self.ins(nn.TanhOp(self._softplus(x))))]

    def op_Swish(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x sigmoid(alpha x)."""
        x = self._float_input(node)
        return [self.mul(x, self.ins(nn.SigmoidOp(self.mul(x, self.scalar(attrs["alpha"], x)))))]

    def op_SwiGLU(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Swish(A) B: A sigmoid(alpha A) B, A and B of one type (no broadcasting, as ONNX says)."""
        a, b = self._float_input(node), self.value(node.input[1])
        if tensor_of(a) != tensor_of(b):
            raise NodeError(f"SwiGLU of {tensor_of(a)} and {tensor_of(b)}: A and B need one type")
        return [self.mul(self.op_Swish(node, attrs)[0], b)]

    def op_Shrink(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x + bias where x < -lambd, x - bias where x > lambd, else 0 (in x's type: integers too)."""
        x = self.value(node.input[0])
        lambd, bias = attrs["lambd"], attrs["bias"]
        if not isinstance(tensor_of(x).element_type, AnyFloat) and (lambd != int(lambd) or bias != int(bias)):
            raise NodeError(f"Shrink of {tensor_of(x)} with a fractional lambd or bias is not supported")
        below = self.cmp(x, self.num(-lambd, x), "LT")
        above = self.cmp(x, self.num(lambd, x), "GT")
        inner = self.where(above, self.sub(x, self.num(bias, x)), self.num(0, x))
        return [self.where(below, self.add(x, self.num(bias, x)), inner)]

    # ------------------------------------------------------------ hyperbolic and inverse trigonometric

    def op_Sinh(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """(expm1(x) - expm1(-x)) / 2."""
        x = self._float_input(node)
        d = self.sub(self.ins(nne.Expm1Op(x)), self.ins(nne.Expm1Op(self.ins(nn.NegOp(x)))))
        return [self.mul(d, self.scalar(0.5, x))]

    def op_Cosh(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """(exp(x) + exp(-x)) / 2."""
        x = self._float_input(node)
        s = self.add(self.ins(nn.ExpOp(x)), self.ins(nn.ExpOp(self.ins(nn.NegOp(x)))))
        return [self.mul(s, self.scalar(0.5, x))]

    def op_Atan(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self._float_input(node)
        return [self.ins(nne.Atan2Op(x, self.scalar(1.0, x)))]

    def op_Asin(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """atan2(x, sqrt((1 - x)(1 + x))) (NaN outside [-1, 1])."""
        x = self._float_input(node)
        return [self.ins(nne.Atan2Op(x, self.ins(nn.SqrtOp(self._one_minus_square(x)))))]

    def op_Acos(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """atan2(sqrt((1 - x)(1 + x)), x) (NaN outside [-1, 1])."""
        x = self._float_input(node)
        return [self.ins(nne.Atan2Op(self.ins(nn.SqrtOp(self._one_minus_square(x))), x))]

    def op_Asinh(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))."""
        x = self._float_input(node)
        a = self.ins(nne.AbsOp(x))
        square = self.mul(x, x)
        one = self.scalar(1.0, x)
        inner = self.add(a, self.ins(nn.DivOp(square, self.add(one, self.ins(nn.SqrtOp(self.add(one, square)))))))
        return [self.mul(self.ins(nne.SignOp(x)), self.ins(nne.Log1pOp(inner)))]

    def op_Acosh(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """log1p((x - 1) + sqrt((x - 1)(x + 1))) (NaN below 1)."""
        x = self._float_input(node)
        one = self.scalar(1.0, x)
        below = self.sub(x, one)
        root = self.ins(nn.SqrtOp(self.mul(below, self.add(x, one))))
        return [self.ins(nne.Log1pOp(self.add(below, root)))]

    def op_Atanh(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """(log1p(x) - log1p(-x)) / 2."""
        x = self._float_input(node)
        d = self.sub(self.ins(nne.Log1pOp(x)), self.ins(nne.Log1pOp(self.ins(nn.NegOp(x)))))
        return [self.mul(d, self.scalar(0.5, x))]

    # ------------------------------------------------------------ arithmetic

    def op_Mod(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`fmod = 1`: C's fmod, the sign of the dividend; `fmod = 0`: numpy's `mod` (Python's %), the sign
        of the divisor: fmod's remainder plus the divisor where the two signs differ (a zero remainder of
        floats takes the divisor's sign)."""
        a, b = (self.value(n) for n in node.input)
        if self.unsigned_inputs:  # both rules agree for unsigned values: a - floor(a / b) b
            return [self.sub(a, self.mul(self.unsigned_divide(a, b), b))]
        r = self.ins(nne.RemainderOp(a, b))
        if attrs["fmod"]:
            return [r]
        zero = self.num(0, r)
        differ = self.ins(nne.XorOp(self.cmp(r, zero, "LT"), self.cmp(b, zero, "LT")))
        fix = self.ins(nne.AndOp(differ, self.cmp(r, zero, "NE")))
        out = self.where(fix, self.add(r, b), r)
        if isinstance(tensor_of(r).element_type, AnyFloat):
            signed_zero = self.where(self.cmp(b, zero, "LT"), self.scalar(-0.0, r), zero)
            out = self.where(self.cmp(r, zero, "EQ"), signed_zero, out)
        return [out]

    def op_Sum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The inputs added (numpy broadcasting)."""
        values = [self.value(n) for n in node.input if n]
        out = values[0]
        for v in values[1:]:
            out = self.add(out, v)
        return [out]

    def op_Mean(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The inputs' sum divided by their number."""
        out = self.op_Sum(node, attrs)[0]
        if not isinstance(tensor_of(out).element_type, AnyFloat):
            raise NodeError(f"Mean of {tensor_of(out)} (not float) is not supported")
        n = len([i for i in node.input if i])
        return [out if n == 1 else self.mul(out, self.scalar(1 / n, out))]

    def op_Gelu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """0.5 x (1 + erf(x / sqrt 2)); `approximate = tanh`: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
        x = self._float_input(node)
        if attrs["approximate"] == "tanh":
            cube = self.mul(self.mul(x, x), x)
            inner = self.add(x, self.mul(cube, self.scalar(0.044715, x)))
            inner = self.ins(nn.TanhOp(self.mul(inner, self.scalar(math.sqrt(2 / math.pi), x))))
        elif attrs["approximate"] == "none":
            inner = self._erf(self.mul(x, self.scalar(1 / math.sqrt(2), x)))
        else:
            raise NodeError(f"Gelu with approximate='{attrs['approximate']}' is not supported")
        return [self.mul(self.mul(x, self.add(inner, self.scalar(1.0, x))), self.scalar(0.5, x))]
