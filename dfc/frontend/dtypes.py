"""Array annotations for `@dfc.jit` parameters: `x: dfc.f32[64, 512]`,
`A: dfc.f64["N", "N"]` (a string is a symbolic size, bound by the first
argument that has it and checked against the others), `dfc.f64` alone for a
float scalar."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dfc.frontend.arrays import NUMPY_NAMES


@dataclass(frozen=True)
class ArrayType:
    """An element type, optionally with a shape of ints and size names."""

    dtype: str
    shape: tuple[int | str, ...] | None = None

    def __getitem__(self, shape: object) -> ArrayType:
        dims = shape if isinstance(shape, tuple) else (shape,)
        for d in dims:
            if not isinstance(d, int | str):
                raise TypeError(f"array sizes are ints or size names, got {d!r}")
        return ArrayType(self.dtype, tuple(dims))  # type: ignore[arg-type]

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(NUMPY_NAMES[self.dtype])

    def __repr__(self) -> str:
        return f"dfc.{self.dtype}" + (f"[{', '.join(map(repr, self.shape))}]" if self.shape is not None else "")


f16, f32, f64 = ArrayType("f16"), ArrayType("f32"), ArrayType("f64")
i32, i64 = ArrayType("i32"), ArrayType("i64")

_NUMPY_TO_DTYPE = {np.dtype(v): k for k, v in NUMPY_NAMES.items()}


def dtype_from_numpy(dtype: object) -> str | None:
    """'f32' for np.float32, 'float32', np.dtype('float32'), dfc.f32, float, ..."""
    if isinstance(dtype, ArrayType):
        return dtype.dtype
    if dtype is float:
        return "f64"
    if dtype is int:
        return "i64"
    if dtype is bool:
        return "i1"
    try:
        return _NUMPY_TO_DTYPE.get(np.dtype(dtype))  # type: ignore[arg-type]
    except TypeError:
        return None
