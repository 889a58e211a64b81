"""What the aten handlers share: `Builder` (an `IRWriter` with the helpers
that write common nn op patterns), `UnsupportedOp`, `meta_type`, and
`handler_table`, which each op family (`aten_elementwise.py`, `aten_shape.py`,
`aten_nn.py`) uses to fill its own table of handlers (`aten_ops.HANDLERS`
merges them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dfc.torch.ir_text import DTYPES, IRWriter, Raw, Value


class UnsupportedOp(Exception):
    """An aten op (or a form of one) that has no translation; the translator adds where it came from."""


Handler = Callable[..., "Value | tuple[Value | None, ...]"]


def handler_table() -> tuple[dict[str, Handler], Callable[..., Callable[[Handler], Handler]]]:
    """A family's table (overload name -> handler) and its decorator: `@handles("relu.default", ...)` puts
    the function in the table under `"aten.relu.default"` and each other name given."""
    table: dict[str, Handler] = {}

    def handles(*names: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            for n in names:
                table[f"aten.{n}"] = fn
            return fn

        return register

    return table, handles


def meta_type(val) -> tuple[tuple[int, ...], str]:
    """Shape and MLIR element type of a fake tensor; a size the export left symbolic (a data-dependent
    count, `aten_dynamic`) is -1 (`?`)."""
    dtype = str(val.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        raise UnsupportedOp(f"dtype {val.dtype}")
    return tuple(d if isinstance(d, int) else -1 for d in val.shape), DTYPES[dtype]


BOOLEAN_ARITHMETIC = {"nn.add": "nn.or", "nn.mul": "nn.and", "nn.maximum": "nn.or", "nn.minimum": "nn.and"}
"""torch's arithmetic of booleans as the logical op it is (the nn dialect's arithmetic takes no i1)."""


class Builder(IRWriter):
    """`IRWriter` with the helpers the handlers share."""

    key: Value | None = None
    """The program's random key (`%arg_rng_key`, two 32-bit words), made by the first draw: the caller
    passes a new one per call (docs/random.md)."""
    streams = 0

    def random(self, op: str, shape: Sequence[int], dtype: str) -> Value:
        """A draw of `op` (`nn.random_uniform`, `nn.random_normal`) from the program's key, on a stream
        of its own."""
        if self.key is None:
            self.key = Value("%arg_rng_key", (2,), "i32")
        self.streams += 1
        return self.op(op, [self.key], shape, dtype, stream=self.streams - 1)

    def out(self, node) -> tuple[tuple[int, ...], str]:
        """Shape and element type of the node's (first) result; a complex one's packed (aten_fft.py)."""
        val = node.meta["val"]
        val = val[0] if isinstance(val, tuple | list) else val
        if str(val.dtype) in ("torch.complex64", "torch.complex128"):
            return (*(int(d) for d in val.shape), 2), "f32" if str(val.dtype) == "torch.complex64" else "f64"
        return meta_type(val)

    def convert(self, a: Value, dtype: str) -> Value:
        return a if a.dtype == dtype else self.op("nn.convert", [a], a.shape, dtype)

    def tensor(self, x: Value | float | int | bool, dtype: str) -> Value:
        """`x` as a tensor of `dtype` (a Python number becomes a 0-d `nn.full`)."""
        if isinstance(x, Value):
            return self.convert(x, dtype)
        return self.full(x, (), dtype)

    def binary(self, name: str, a, b, dtype: str | None = None) -> Value:
        """Elementwise `name` with numpy broadcasting, both operands in `dtype`
        (default: the float one's, else the first tensor's)."""
        if dtype is None:
            tensors = [x for x in (a, b) if isinstance(x, Value)]
            floats = [t.dtype for t in tensors if t.is_float]
            dtype = floats[0] if floats else tensors[0].dtype
            if not floats and any(isinstance(x, float) for x in (a, b)):
                dtype = "f32"
        a, b = self.tensor(a, dtype), self.tensor(b, dtype)
        shape = np.broadcast_shapes(a.shape, b.shape)
        if dtype == "i1":
            name = BOOLEAN_ARITHMETIC.get(name, name)
        result = "i1" if name == "nn.compare" else dtype
        return self.op(name, [a, b], shape, result)

    def compare(self, direction: str, a, b) -> Value:
        """`a (direction) b` as torch orders them: booleans as 0 and 1 (nn.compare's integers are signed,
        and the i1 True is -1)."""
        tensors = [x for x in (a, b) if isinstance(x, Value)]
        floats = [t.dtype for t in tensors if t.is_float]
        dtype = floats[0] if floats else ("f32" if any(isinstance(x, float) for x in (a, b)) else tensors[0].dtype)
        dtype = "i32" if dtype == "i1" else dtype
        a, b = self.tensor(a, dtype), self.tensor(b, dtype)
        return self.op("nn.compare", [a, b], np.broadcast_shapes(a.shape, b.shape), "i1", direction=direction)

    def unary(self, name: str, a: Value) -> Value:
        return self.op(name, [a], a.shape, a.dtype)

    def reshape(self, a: Value, shape: Sequence[int]) -> Value:
        return a if tuple(shape) == a.shape else self.op("nn.reshape", [a], shape, a.dtype)

    def transpose(self, a: Value, perm: Sequence[int]) -> Value:
        perm = [p % len(a.shape) for p in perm] if a.shape else []
        if perm == sorted(perm):
            return a
        return self.op("nn.transpose", [a], [a.shape[p] for p in perm], a.dtype, permutation=perm)

    def broadcast(self, a: Value, shape: Sequence[int]) -> Value:
        return a if tuple(shape) == a.shape else self.op("nn.broadcast", [a], shape, a.dtype)

    def reduce(self, kind: str, a: Value, axes: Sequence[int] | None, keepdims: bool = False) -> Value:
        rank = len(a.shape)
        if rank == 0:
            return a
        axes = sorted({d % rank for d in axes}) if axes else list(range(rank))
        if not axes:
            return a
        shape = [1 if d in axes else n for d, n in enumerate(a.shape)] if keepdims else [
            n for d, n in enumerate(a.shape) if d not in axes
        ]
        if not a.is_float:
            for axis in axes:
                a = self._integer_reduce(kind, a, axis)
            return self.reshape(a, shape)
        props: dict[str, object] = {"kind": kind, "axes": axes}
        if keepdims:
            props["keepdims"] = Raw("unit")
        return self.op("nn.reduce", [a], shape, a.dtype, **props)

    def _integer_reduce(self, kind: str, a: Value, axis: int) -> Value:
        """`kind` (sum, max, min) of integers or booleans over `axis`, kept as size 1, which nn.reduce (of floats)
        does not take: the two halves combined elementwise until one element is left, an odd count padded
        with the identity (exact, and wrapping as torch's)."""
        if kind not in ("sum", "max", "min"):
            raise UnsupportedOp(f"a {kind} of {a.dtype}")
        name = {"sum": "nn.add", "max": "nn.maximum", "min": "nn.minimum"}[kind]
        bits = 1 if a.dtype == "i1" else int(a.dtype[1:])
        identity = {"sum": 0, "max": -(2 ** (bits - 1)), "min": 2 ** (bits - 1) - 1}[kind]
        identity = {"max": 0, "min": 1}.get(kind, 0) if a.dtype == "i1" else identity
        rank = len(a.shape)
        if a.shape[axis] == 0:
            return self.full(identity, [1 if d == axis else n for d, n in enumerate(a.shape)], a.dtype)
        while a.shape[axis] > 1:
            n = a.shape[axis]
            if n % 2:
                a = self.pad(a, [0] * rank, [int(d == axis) for d in range(rank)], identity)
            half = (n + 1) // 2
            parts = [self.op("nn.slice", [a], [half if d == axis else m for d, m in enumerate(a.shape)], a.dtype,
                             start_indices=[start if d == axis else 0 for d in range(rank)],
                             limit_indices=[start + half if d == axis else m for d, m in enumerate(a.shape)],
                             strides=[1] * rank) for start in (0, half)]
            a = self.binary(name, *parts, a.dtype)
        return a

    def along(self, v: Value, rank: int, axis: int) -> Value:
        """A 1-d `v` reshaped to broadcast along `axis` of a rank-`rank` tensor."""
        return self.reshape(v, [v.shape[0] if d == axis else 1 for d in range(rank)])

    def constant(self, array: np.ndarray, dtype: str) -> Value:
        """`array` (numbers) as an `nn.constant` of `dtype` (a float or integer type)."""
        array = np.asarray(array)
        literal = np.array2string(array.astype(np.float64 if dtype.startswith("f") else np.int64), separator=", ",
                                  threshold=array.size + 1, floatmode="unique", max_line_width=2**31)
        t = f"tensor<{''.join(f'{d}x' for d in array.shape)}{dtype}>"
        return self.op("nn.constant", [], array.shape, dtype, value=Raw(f"dense<{literal}> : {t}"))

    def pad(self, x: Value, low: Sequence[int], high: Sequence[int], value: float | int | bool = 0,
            interior: Sequence[int] | None = None) -> Value:
        """`nn.pad` of x with `value` (negative amounts remove elements)."""
        interior = list(interior or [0] * len(x.shape))
        shape = [lo + hi + d + max(d - 1, 0) * i for lo, hi, d, i in zip(low, high, x.shape, interior)]
        return self.op("nn.pad", [x, self.full(value, (), x.dtype)], shape, x.dtype, edge_padding_low=list(low),
                       edge_padding_high=list(high), interior_padding=interior)

    def take(self, x: Value, axis: int, indices: Value) -> Value:
        """numpy's `take(x, indices, axis)` (indices in range), an `nn.gather` of size-1 slices."""
        rank, k = len(x.shape), len(indices.shape)
        shape = [*x.shape[:axis], *indices.shape, *x.shape[axis + 1:]]
        return self.op(
            "nn.gather", [x, indices], shape, x.dtype, offset_dims=[*range(axis), *range(axis + k, rank - 1 + k)],
            collapsed_slice_dims=[axis], operand_batching_dims=[], start_indices_batching_dims=[],
            start_index_map=[axis], index_vector_dim=k, slice_sizes=[1 if d == axis else n for d, n in
                                                                     enumerate(x.shape)],
        )


def int_list(x, n: int) -> list[int]:
    if isinstance(x, int):
        return [x] * n
    x = list(x)
    return x * n if len(x) == 1 else x
