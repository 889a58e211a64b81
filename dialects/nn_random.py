"""Random numbers in the nn dialect: counter-based, so a pure function of a key and an index.

`nn.random_bits` is Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC'11; cuRAND's and JAX's `philox` stream): element i of a draw is word i mod 4 of the block
Philox(key, counter = (i div 4 low, i div 4 high, stream, 0)). No state is carried between
elements, so every thread count, loop order and the GPU lowering give the same numbers.
`nn.random_uniform` and `nn.random_normal` are built on it (`dialects.nn_expand_random`).
Where the key comes from is the caller's policy (docs/random.md: `dfc.torch` draws it from
torch's generator per call); `stream` tells apart the draws of one program under one key.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, IntegerAttr, TensorType, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _static


def _key(t: Attribute) -> None:
    if not (isinstance(t, TensorType) and t.element_type == i32 and t.get_shape() == (2,)):
        raise VerifyException(f"key must be a tensor<2xi32> (two 32-bit words), got {t}")


class RandomOp(NNOp):
    """A draw of the result's shape from `key` (tensor<2xi32>) and `stream` (a 32-bit counter word)."""

    key = operand_def(TensorType)
    stream = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$key attr-dict `:` functional-type(operands, results)"

    def __init__(self, key: SSAValue, stream: int, result_type: TensorType):
        super().__init__(operands=[key], result_types=[result_type], properties={"stream": IntegerAttr(stream, i64)})

    def infer_type(self) -> TensorType:
        _key(self.key.type)
        if not 0 <= self.stream.value.data < 2**32:
            raise VerifyException(f"stream must be a 32-bit unsigned number, got {self.stream.value.data}")
        out = _static(self.result.type, "result")
        self.check_element(out.element_type)
        return out

    def check_element(self, element: Attribute) -> None:
        if not isinstance(element, AnyFloat):
            raise VerifyException(f"result must have a float element type, got {element}")


@irdl_op_definition
class RandomBitsOp(RandomOp):
    """Uniform 32-bit words: element i (row-major) is word i mod 4 of Philox-4x32-10 of `key` at
    counter (i div 4 as 64 bits, stream, 0). Syntax:
    `%b = nn.random_bits %key {stream = 0 : i64} : (tensor<2xi32>) -> tensor<4x3xi32>`."""

    name = "nn.random_bits"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (rng_bit_generator PHILOX: another counter layout)")

    def check_element(self, element: Attribute) -> None:
        if element != i32:
            raise VerifyException(f"result must have element type i32, got {element}")


@irdl_op_definition
class RandomUniformOp(RandomOp):
    """Uniform numbers in [0, 1): `nn.random_bits`' word w of each element, its top m bits times
    2^-m, m = 11 (f16), 24 (f32), 32 (f64: one word per element). Exact, never 1. Syntax:
    `%u = nn.random_uniform %key {stream = 0 : i64} : (tensor<2xi32>) -> tensor<8xf32>`."""

    name = "nn.random_uniform"
    EXTERNAL: ClassVar[External] = External(onnx="RandomUniform, RandomUniformLike (scaled by a handler)",
                                            aten=("rand", "rand_like", "uniform", "bernoulli", "native_dropout"))


@irdl_op_definition
class RandomNormalOp(RandomOp):
    """Standard normal numbers by Box-Muller: with u, v the uniforms of `nn.random_uniform` of
    shape (2, N) (N the element count), element i is sqrt(-2 log(1 - u_i)) cos(2 pi v_i). Syntax:
    `%z = nn.random_normal %key {stream = 0 : i64} : (tensor<2xi32>) -> tensor<8xf32>`."""

    name = "nn.random_normal"
    EXTERNAL: ClassVar[External] = External(onnx="RandomNormal, RandomNormalLike (scaled by a handler)",
                                            aten=("randn", "randn_like", "normal"))


RANDOM_OPS = [RandomBitsOp, RandomUniformOp, RandomNormalOp]
KEY_TYPE = TensorType(i32, [2])
"""The type of a key: two 32-bit words."""
