"""Special functions as elementwise nn ops: log-gamma and its derivatives, Hurwitz zeta, the modified
Bessel functions of order 0 and 1, erfcx and the normal distribution's quantile and log-CDF.

Each is evaluated in f64 whatever the operand's float type (an f32, f16 or bf16 element is widened and the
result rounded back), with the algorithms of Cephes that PyTorch uses, so float32 results are PyTorch's
to float32's rounding. The expansions are in `dialects.nn_expand_special`, the backward rules in
`passes.autodiff.rules_special`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import ElementwiseBinaryOp, ElementwiseUnaryOp, External, NNOp, _float_tensor


@irdl_op_definition
class LgammaOp(ElementwiseUnaryOp):
    """Elementwise `log |Gamma(x)|`: +inf at the poles (0, -1, -2, ...) and at +-inf. Derivative digamma."""

    name = "nn.lgamma"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.lgamma)", aten=("lgamma",))


@irdl_op_definition
class DigammaOp(ElementwiseUnaryOp):
    """Elementwise `digamma(x) = Gamma'(x) / Gamma(x)`: NaN at the poles 0, -1, -2, ... and -inf, +inf at
    +inf. Derivative `polygamma(1, x)`."""

    name = "nn.digamma"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.digamma)", aten=("digamma", "special_psi"))


@irdl_op_definition
class PolygammaOp(NNOp):
    """Elementwise `polygamma(n, x)`, the n-th derivative of digamma (n >= 0, a property; n = 0 is digamma):
    `(-1)^(n+1) n! zeta(n + 1, x)` for x >= 1/2, the reflection of `psi^(n)(1 - x)` by the n-th derivative of
    `pi cot(pi x)` below, `(-1)^(n+1) (n-1)! x^-n (1 + n / (2x))` beyond 2^52; `(-1)^(n+1) inf` at the poles
    0, -1, -2, ... (PyTorch's polygamma(1) gives a large finite value at -1, -2, ...), 0 at +inf, NaN at -inf.
    Derivative `polygamma(n + 1, x)`. Syntax: `%y = nn.polygamma %x {n = 2 : i64} : (tensor<4xf64>) -> tensor<4xf64>`.
    """

    name = "nn.polygamma"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.polygamma of a constant n)",
                                            aten=("polygamma", "special_polygamma"))

    input = operand_def(TensorType)
    n = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, n: int):
        super().__init__(operands=[input], result_types=[_float_tensor(input.type, "input")],
                         properties={"n": IntegerAttr(n, i64)})

    def infer_type(self) -> TensorType:
        if self.n.value.data < 0:
            raise VerifyException(f"n must be >= 0, got {self.n.value.data}")
        return _float_tensor(self.input.type, "input")


@irdl_op_definition
class ZetaOp(ElementwiseBinaryOp):
    """Elementwise Hurwitz zeta `zeta(lhs, rhs) = sum_k (rhs + k)^-lhs` (Cephes': 9 or more terms summed,
    then Euler-Maclaurin): +inf at lhs = 1 or rhs a non-positive integer, NaN for lhs < 1 or for rhs < 0
    with a non-integer lhs. A negative non-integer rhs needs |rhs| + 9 terms: below -21 the result is NaN
    (the expansion sums at most 30). Derivative `-lhs zeta(lhs + 1, rhs)` in rhs; none is defined in lhs."""

    name = "nn.zeta"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.zeta)", aten=("special_zeta",))


@irdl_op_definition
class BesselI0Op(ElementwiseUnaryOp):
    """Elementwise modified Bessel function of the first kind of order 0, `I0(x)` (Cephes' Chebyshev series).
    Derivative `I1(x)`."""

    name = "nn.bessel_i0"
    EXTERNAL: ClassVar[External] = External(aten=("i0", "special_i0"))


@irdl_op_definition
class BesselI0eOp(ElementwiseUnaryOp):
    """Elementwise exponentially scaled `I0`: `exp(-|x|) I0(x)`. Derivative `I1e(x) - sign(x) I0e(x)`."""

    name = "nn.bessel_i0e"
    EXTERNAL: ClassVar[External] = External(aten=("special_i0e",))


@irdl_op_definition
class BesselI1Op(ElementwiseUnaryOp):
    """Elementwise modified Bessel function of the first kind of order 1, `I1(x)` (odd).
    Derivative `I0(x) - I1(x) / x` (1/2 at 0)."""

    name = "nn.bessel_i1"
    EXTERNAL: ClassVar[External] = External(aten=("special_i1",))


@irdl_op_definition
class BesselI1eOp(ElementwiseUnaryOp):
    """Elementwise exponentially scaled `I1`: `exp(-|x|) I1(x)`.
    Derivative `I0e(x) - I1e(x) (sign(x) + 1 / x)` (1/2 at 0)."""

    name = "nn.bessel_i1e"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.bessel_i1e)", aten=("special_i1e",))


@irdl_op_definition
class ErfcxOp(ElementwiseUnaryOp):
    """Elementwise scaled complementary error function `exp(x^2) erfc(x)`: `exp(x^2) (1 - erf(x))` on
    [0, 1), Cephes' erfc fractions without their Gaussian factor beyond, `2 exp(x^2) - erfcx(-x)` below 0
    (+inf below -26.6). Derivative `2 x erfcx(x) - 2 / sqrt(pi)`."""

    name = "nn.erfcx"
    EXTERNAL: ClassVar[External] = External(aten=("special_erfcx",))


@irdl_op_definition
class ErfcOp(ElementwiseUnaryOp):
    """Elementwise complementary error function `1 - erf(x)` without its cancellation: `1 - erf(x)` on
    (-1, 1), `exp(-x^2) erfcx(|x|)` beyond (`2 -` that below -1), exp(-x^2) with x^2 split exactly.
    Derivative `-2 / sqrt(pi) exp(-x^2)`."""

    name = "nn.erfc"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.erfc)", onnx="-", aten=("erfc",))


@irdl_op_definition
class NdtriOp(ElementwiseUnaryOp):
    """Elementwise quantile of the standard normal distribution (the inverse of `ndtr`), Cephes' `ndtri`:
    -inf at 0, +inf at 1, NaN outside [0, 1]. Derivative `sqrt(2 pi) exp(ndtri(x)^2 / 2)`."""

    name = "nn.ndtri"
    EXTERNAL: ClassVar[External] = External(aten=("special_ndtri",))


@irdl_op_definition
class LogNdtrOp(ElementwiseUnaryOp):
    """Elementwise log of the standard normal CDF: `log(erfcx(-x / sqrt 2) / 2) - x^2 / 2` below -1,
    `log1p(-erfc(x / sqrt 2) / 2)` above. Derivative `exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi)`."""

    name = "nn.log_ndtr"
    EXTERNAL: ClassVar[External] = External(aten=("special_log_ndtr",))


SPECIAL_OPS = [
    LgammaOp, DigammaOp, PolygammaOp, ZetaOp, BesselI0Op, BesselI0eOp, BesselI1Op, BesselI1eOp, ErfcOp, ErfcxOp,
    NdtriOp, LogNdtrOp,
]  # fmt: skip
