"""The ONNX importer's random operators on dfc's counter-based generator (`nn.random_uniform`,
`nn.random_normal`; docs/random.md): RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
Bernoulli, Multinomial and Dropout in training mode.

The numbers are not onnxruntime's (ONNX calls these operators non-deterministic, even with a seed), but
they have the distribution the specification gives. Each draw of a model takes a stream of its own
(0, 1, ... in node order). A node with a `seed` attribute draws from the key of its seed (the float64
bits of the seed as two 32-bit words), so every call of the model gives the same numbers, as ONNX's
reference evaluator does; the other nodes draw from the model's key, an argument (`tensor<2xi32>`) after
the parameters that `OnnxFunction` fills per call from NumPy's global generator (`np.random.seed`
makes a run reproducible). A random node inside a subgraph built once as a loop body would draw the same
numbers in every iteration, so one inside an If, Loop or Scan body is refused."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, FloatAttr, TensorType, f64, i1, i32, i64
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects.nn_random import KEY_TYPE, RandomNormalOp, RandomUniformOp
from dfc.importers.onnx_common import NodeError, element_type, tensor_of

RANDOM_OPS = frozenset({"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
                        "Multinomial"})
"""The random operators this module builds (and Dropout in training mode, through `dropout`)."""

_DRAWN = ("float16", "float32", "float64")
"""The float dtypes `nn.random_uniform` and `nn.random_normal` draw."""


def new_key() -> np.ndarray:
    """A fresh key (two 32-bit words) from NumPy's global generator, for a model that takes one."""
    return np.random.randint(-(2 ** 31), 2 ** 31, size=2, dtype=np.int64).astype(np.int32)


def seed_key(seed: float) -> np.ndarray:
    """The key of a node's `seed` attribute: the float64 bits of the seed as two 32-bit words."""
    return np.array([seed], np.float64).view(np.int32).copy()


def _dtype(code: int) -> np.dtype:
    from onnx import helper

    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


class RandomOps:
    """`op_RandomUniform`, `op_RandomNormal`, their `Like` forms, `op_Bernoulli`, `op_Multinomial` and
    `dropout`, mixed into `OnnxImporter` (whose `block`, `b`, `value`, `ins`, `constant` and
    `scalar` they use). `key` is the model's key argument once a node without a seed has drawn."""

    key: SSAValue | None = None
    streams: int = 0

    def _draw(self, node: Any, attrs: dict[str, Any], kind: type, shape: list[int], dtype: np.dtype) -> SSAValue:
        """A draw of `kind` (`RandomUniformOp`, `RandomNormalOp`) of `shape` and float `dtype` on the node's
        key (its seed's, or the model's) and the next stream."""
        if self.b.insertion_point.block is not self.block:
            raise NodeError(f"{node.op_type} inside an If, Loop or Scan body is not supported (a loop body "
                            "built once would draw the same numbers in every iteration)")
        if dtype.name not in _DRAWN:
            raise NodeError(f"{node.op_type} of dtype {dtype.name} (random numbers are drawn as float16, "
                            "float32 or float64)")
        if attrs.get("seed") is not None:
            key = self.constant(seed_key(float(attrs["seed"])))
        else:
            if self.key is None:
                self.key = self.block.insert_arg(KEY_TYPE, len(self.block.args))
                self.key.name_hint = "rng_key"
            key = self.key
        self.streams += 1
        return self.ins(kind(key, self.streams - 1, TensorType(element_type(dtype), shape)))

    def _affine(self, x: SSAValue, scale: float, shift: float) -> SSAValue:
        """shift + scale x, without the arithmetic that is the identity."""
        if scale != 1.0:
            x = self.ins(nn.MulOp(x, self.scalar(scale, x)))
        return x if shift == 0.0 else self.ins(nn.AddOp(x, self.scalar(shift, x)))

    def _like_shape(self, node: Any, attrs: dict[str, Any]) -> tuple[list[int], np.dtype]:
        """(shape, dtype) of a `Like` node: its input's shape, its `dtype` attribute or the input's dtype."""
        x = tensor_of(self.value(node.input[0]))
        dtype = _dtype(attrs["dtype"]) if attrs.get("dtype") is not None else None
        if dtype is None:
            dtype = np.dtype(dtype_of(x.element_type))
        return list(x.get_shape()), dtype

    def op_RandomUniform(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Uniform in [low, high) of the `shape` attribute: low + (high - low) u."""
        u = self._draw(node, attrs, RandomUniformOp, list(attrs["shape"]), _dtype(attrs["dtype"]))
        return [self._affine(u, attrs["high"] - attrs["low"], attrs["low"])]

    def op_RandomNormal(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normal of mean `mean` and standard deviation `scale`, of the `shape` attribute."""
        z = self._draw(node, attrs, RandomNormalOp, list(attrs["shape"]), _dtype(attrs["dtype"]))
        return [self._affine(z, attrs["scale"], attrs["mean"])]

    def op_RandomUniformLike(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        u = self._draw(node, attrs, RandomUniformOp, *self._like_shape(node, attrs))
        return [self._affine(u, attrs["high"] - attrs["low"], attrs["low"])]

    def op_RandomNormalLike(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        z = self._draw(node, attrs, RandomNormalOp, *self._like_shape(node, attrs))
        return [self._affine(z, attrs["scale"], attrs["mean"])]

    def op_Bernoulli(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """1 where a uniform draw (of the input's float type) is below the input probability, else 0, as
        `dtype` (default: the input's)."""
        shape, dtype = self._like_shape(node, attrs)
        p = self.value(node.input[0])
        source = tensor_of(p).element_type
        if not isinstance(source, AnyFloat):
            raise NodeError(f"Bernoulli of {tensor_of(p)} (probabilities are floats)")
        u = self._draw(node, attrs, RandomUniformOp, shape, np.dtype(dtype_of(source)))
        hit = self.ins(nne.CompareOp(u, p, "LT"))
        target = element_type(dtype)
        self.unsigned_outputs = {0} if dtype.kind == "u" else set()
        return [hit if target == i1 else self.ins(nne.ConvertOp(hit, target))]

    def op_Multinomial(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`sample_size` class indices per row of the [batch, classes] unnormalized log-probabilities: the
        number of classes whose cumulative probability (exp(x - max), summed up to the class, by a
        product with an upper triangle of ones) is at most u times the row's total, u uniform in [0, 1)
        (float64), capped at the last class. Output int32 or int64 (`dtype`), [batch, sample_size]."""
        x = self.value(node.input[0])
        t = tensor_of(x)
        if not isinstance(t.element_type, AnyFloat) or len(t.get_shape()) != 2:
            raise NodeError(f"Multinomial of {t} (a [batch, classes] float tensor)")
        dtype = _dtype(attrs["dtype"])
        if dtype.name not in ("int32", "int64"):
            raise NodeError(f"Multinomial of dtype {dtype.name} (int32 or int64)")
        batch, classes = t.get_shape()
        samples = int(attrs["sample_size"])
        x = x if t.element_type == f64 else self.ins(nne.ConvertOp(x, f64))
        top = self.ins(nn.ReduceOp(x, "max", [1], keepdims=True))
        weights = self.ins(nn.ExpOp(self.ins(nn.SubOp(x, top))))
        cumulative = self.ins(nn.MatmulOp(weights, self.constant(np.triu(np.ones((classes, classes))))))
        total = self.ins(nn.ReduceOp(weights, "sum", [1], keepdims=True))
        u = self._draw(node, attrs, RandomUniformOp, [batch, samples], np.dtype(np.float64))
        target = self.ins(nn.MulOp(u, total))
        below = self.ins(nne.CompareOp(self.ins(nn.ReshapeOp(cumulative, [batch, 1, classes])),
                                       self.ins(nn.ReshapeOp(target, [batch, samples, 1])), "LE"))
        count = self.ins(nn.ReduceOp(self.ins(nne.ConvertOp(below, f64)), "sum", [2]))
        picked = self.ins(nne.MinimumOp(count, self.ins(nn.FullOp(FloatAttr(classes - 1.0, f64), []))))
        return [self.ins(nne.ConvertOp(picked, i64 if dtype.name == "int64" else i32))]

    def _dropout_ratio(self, node: Any, attrs: dict[str, Any]) -> float:
        """The ratio of a Dropout in training mode (the `training_mode` input, or `is_test = 0` before
        opset 7), in [0, 1]; 0 when not training (the identity)."""
        training = len(node.input) > 2 and node.input[2] and bool(self.known(node.input[2]))
        training = training or attrs.get("is_test") == 0
        ratio = float(self.known(node.input[1])) if len(node.input) > 1 and node.input[1] else attrs.get("ratio", 0.5)
        if not 0.0 <= ratio <= 1.0:
            raise NodeError(f"Dropout ratio {ratio} (in [0, 1])")
        return ratio if training else 0.0

    def _mask_dtype(self, x: np.dtype) -> np.dtype:
        """Dropout's mask type: bool from opset 10, the data's before."""
        return np.dtype(bool) if self.opset >= 10 else x

    def folded_dropout(self, node: Any, attrs: dict[str, Any], x: np.ndarray) -> list[np.ndarray] | None:
        """A Dropout of a known input that is the identity (with a mask of ones), or None (random)."""
        if self._dropout_ratio(node, attrs):
            return None
        return [x, np.ones(x.shape, self._mask_dtype(x.dtype))]

    def dropout(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Dropout: the identity and a mask of ones, or in training mode with a ratio above 0 each element
        kept where a uniform draw is at least the ratio and scaled by 1 / (1 - ratio), the mask what is kept
        (a ratio of 1 drops everything)."""
        ratio = self._dropout_ratio(node, attrs)
        x = self.value(node.input[0])
        t = tensor_of(x)
        shape = list(t.get_shape())
        if ratio == 0.0:
            y, keep = x, self.constant(np.ones(shape, bool))
        elif not isinstance(t.element_type, AnyFloat):
            raise NodeError(f"Dropout of {t} in training mode (float data)")
        elif ratio == 1.0:
            y, keep = self.ins(nn.MulOp(x, self.scalar(0.0, x))), self.constant(np.zeros(shape, bool))
        else:
            u = self._draw(node, attrs, RandomUniformOp, shape, np.dtype(dtype_of(t.element_type)))
            keep = self.ins(nne.CompareOp(u, self.scalar(ratio, u), "GE"))
            kept = self.ins(nn.MulOp(x, self.ins(nne.ConvertOp(keep, t.element_type))))
            y = self.ins(nn.MulOp(kept, self.scalar(1.0 / (1.0 - ratio), x)))
        if len(node.output) < 2 or not node.output[1]:
            return [y]
        mask = element_type(self._mask_dtype(np.dtype(dtype_of(t.element_type))))
        return [y, keep if mask == i1 else self.ins(nne.ConvertOp(keep, mask))]
