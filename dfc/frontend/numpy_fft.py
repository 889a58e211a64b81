"""NumPy's `np.fft`: the transforms `fft`, `ifft`, `rfft`, `irfft`, `fft2`, `ifft2`, `fftn`, `ifftn`,
`rfft2`, `irfft2`, `rfftn`, `irfftn`, `hfft`, `ihfft` as `nn.dft`s (one per axis, `dialects.nn_fft_builders`) on
complex arrays packed as (*shape, 2) (complex_values.py; `hfft` is `irfft` of the conjugate and `ihfft` the
conjugate of `rfft`, each with the opposite norm, as NumPy defines them), and the helpers `fftfreq`, `rfftfreq`,
`fftshift`, `ifftshift`.

Types are NumPy 2's: float32 and float16 signals give complex64 (float32 parts), others
complex128; `irfft` gives the real type of its parts. `n`/`s` cut or zero-pad each axis, `norm`
is "backward" (None), "ortho" or "forward". `out=` and a complex `rfft` input (NumPy's
TypeError) are refused. Gradients pass through the real transforms (`rfft` of a real array
then `.real`, `abs`, ...); complex values themselves take none (complex_values.py).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from dfc.dialects.nn_fft_builders import dft_axes, fit_length
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import View
from dfc.frontend.complex_values import Complex, conj, lift, part_dtype, store, unpacked
from dfc.frontend.numpy_args import Handler, astype, bind, expr_of, static

_SCALES = {(None, False): "none", (None, True): "n", ("backward", False): "none", ("backward", True): "n",
           ("ortho", False): "sqrt", ("ortho", True): "sqrt", ("forward", False): "n", ("forward", True): "none"}
"""`nn.dft`'s scale of NumPy's `norm` and direction (inverse or not)."""


def _scale(tr, norm: Any, inverse: bool, what: str, node: ast.AST) -> str:
    norm = static(norm)
    if (norm, inverse) not in _SCALES:
        raise tr.fail(f"{what}'s norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}", node)
    return _SCALES[norm, inverse]


def _parts_dtype(tr, a: Any) -> str:
    """The float type of the result's parts: f32 for float16/float32 (complex64) signals, else f64."""
    d = part_dtype(tr, a) if isinstance(a, Complex) else tr.em.concrete(a)
    return "f32" if d in ("f16", "f32") else "f64"


def _packed(tr, a: Any, node: ast.AST) -> tuple[SSAValue, str]:
    """`a` as a packed complex tensor (*shape, 2) and its parts' dtype."""
    d = _parts_dtype(tr, a if isinstance(a, Complex) else expr_of(tr, a, node))
    return store(tr, lift(tr, a, node, d), node, d), d


def _real(tr, a: Any, what: str, node: ast.AST) -> SSAValue:
    if isinstance(a, Complex):
        raise tr.fail(f"{what} of a complex array (NumPy's TypeError: it takes a real signal)", node)
    e = expr_of(tr, a, node)
    tr.em.static(e, f"the signal of {what}")
    d = _parts_dtype(tr, e)
    return tr.em.materialize(astype(tr, e, d, node), d)


def _ndim(tr, a: Any, node: ast.AST) -> int:
    return a.ndim if isinstance(a, Complex) else expr_of(tr, a, node).ndim


def _axes(tr, a: Any, s: Any, axes: Any, default: tuple[int, ...] | None, what: str, node: ast.AST
          ) -> tuple[list[int], list[int | None]]:
    """The transformed axes (in NumPy's order, non-negative) and each one's length (None: its size)."""
    ndim = _ndim(tr, a, node)
    sizes = None if s is None else [static(v) if not isinstance(v, Affine) else v.static for v in _items(s)]
    if sizes is not None and any(not isinstance(v, int) or v < 1 for v in sizes):
        raise tr.fail(f"{what}'s s must hold positive constant lengths, got {s}", node)
    if axes is None:
        chosen = list(default) if default is not None else list(range(-len(sizes), 0)) if sizes else list(range(ndim))
    else:
        chosen = [tr.integer(v, node).static for v in _items(axes)]
    out = []
    for k in chosen:
        if k is None or not -ndim <= k < ndim:
            raise tr.fail(f"{what}'s axis {k} is out of range for an array of rank {ndim}", node)
        out.append(k % ndim)
    if len(set(out)) != len(out):
        raise tr.fail(f"{what}'s axes {tuple(out)} repeat an axis", node)
    if sizes is not None and len(sizes) != len(out):
        raise tr.fail(f"{what}'s s and axes differ in length ({len(sizes)} and {len(out)})", node)
    return out, sizes or [None] * len(out)


def _items(v: Any) -> list:
    return list(v) if isinstance(v, tuple | list) else [v]


def _insert(tr):
    return lambda op: tr.em.b.insert(op).results[0]


def _signal_axis(x: SSAValue, axis: int, n: int | None) -> int:
    """The transform length of `axis` of `x`: `n`, or its size."""
    return n if n is not None else x.type.get_shape()[axis]  # type: ignore[attr-defined]


def _complex_transform(tr, a: Any, axes: list[int], sizes: list, inverse: bool, scale: str, node: ast.AST) -> Complex:
    x, _ = _packed(tr, a, node)
    insert = _insert(tr)
    for axis, n in zip(axes, sizes):
        x = fit_length(insert, x, axis, _signal_axis(x, axis, n))
    return unpacked(dft_axes(insert, x, axes, "c2c", inverse=inverse, scale=scale))


def _real_transform(tr, a: Any, axes: list[int], sizes: list, scale: str, what: str, node: ast.AST) -> Complex:
    x = _real(tr, a, what, node)
    insert = _insert(tr)
    for axis, n in zip(axes, sizes):
        x = fit_length(insert, x, axis, _signal_axis(x, axis, n))
    return unpacked(dft_axes(insert, x, axes, "r2c", scale=scale))


def _inverse_real_transform(tr, a: Any, axes: list[int], sizes: list, scale: str, node: ast.AST) -> View:
    """`irfftn`: the last axis' length is given or 2 (m - 1); its input is cut or padded to n // 2 + 1."""
    x, _ = _packed(tr, a, node)
    insert = _insert(tr)
    *rest, last = axes
    for axis, n in zip(rest, sizes):
        x = fit_length(insert, x, axis, _signal_axis(x, axis, n))
    n = sizes[-1] if sizes[-1] is not None else 2 * (x.type.get_shape()[last] - 1)  # type: ignore[attr-defined]
    if n < 1:
        raise tr.fail(f"irfft of {n} points (an axis of one frequency needs n=)", node)
    x = fit_length(insert, x, last, n // 2 + 1)
    return View.whole(dft_axes(insert, x, axes, "c2r", inverse=True, scale=scale, length=n))


def _no_out(tr, out: Any, what: str, node: ast.AST) -> None:
    if out is not None:
        raise tr.fail(f"{what} with out= is not supported", node)


def _one_axis(what: str, kind: str, inverse: bool) -> Handler:
    """`np.fft.<what>(a, n=None, axis=-1, norm=None, out=None)`."""

    def handler(tr, args, kwargs, node):
        a, n, axis, norm, out = bind(tr, args, kwargs, node, f"np.fft.{what}", ("a", "n", "axis", "norm", "out"),
                                     (None, -1, None, None))
        _no_out(tr, out, f"np.fft.{what}", node)
        axes, sizes = _axes(tr, a, None if n is None else (n,), (axis,), (-1,), f"np.fft.{what}", node)
        return _transform(tr, a, kind, axes, sizes, inverse, norm, what, node)

    return handler


def _many_axes(what: str, kind: str, inverse: bool, default: tuple[int, ...] | None) -> Handler:
    """`np.fft.<what>(a, s=None, axes=<default>, norm=None, out=None)`."""

    def handler(tr, args, kwargs, node):
        a, s, axes, norm, out = bind(tr, args, kwargs, node, f"np.fft.{what}", ("a", "s", "axes", "norm", "out"),
                                     (None, default, None, None))
        _no_out(tr, out, f"np.fft.{what}", node)
        chosen, sizes = _axes(tr, a, s, axes, None, f"np.fft.{what}", node)
        if not chosen:
            raise tr.fail(f"np.fft.{what} over no axes", node)
        return _transform(tr, a, kind, chosen, sizes, inverse, norm, what, node)

    return handler


_OPPOSITE_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
"""NumPy's `_swap_direction`: the norm of the transform `hfft` and `ihfft` are computed by."""


def _hermitian(what: str, inverse: bool) -> Handler:
    """`np.fft.hfft(a, n=None, axis=-1, norm=None, out=None)`: `irfft(conj(a), n)` (n: 2 (m - 1) by default)
    with the opposite norm, a real signal of a Hermitian-symmetric one's half; `ihfft`: `conj(rfft(a, n))`."""

    def handler(tr, args, kwargs, node):
        a, n, axis, norm, out = bind(tr, args, kwargs, node, f"np.fft.{what}", ("a", "n", "axis", "norm", "out"),
                                     (None, -1, None, None))
        _no_out(tr, out, f"np.fft.{what}", node)
        _scale(tr, norm, inverse, f"np.fft.{what}", node)  # refuses an unknown norm by its own name
        axes, sizes = _axes(tr, a, None if n is None else (n,), (axis,), (-1,), f"np.fft.{what}", node)
        opposite = _OPPOSITE_NORM[static(norm)]
        if inverse:
            spectrum = _real_transform(tr, a, axes, sizes, _scale(tr, opposite, False, what, node), f"np.fft.{what}",
                                       node)
            return conj(tr, spectrum, node)
        return _inverse_real_transform(tr, conj(tr, lift(tr, a, node), node), axes, sizes,
                                       _scale(tr, opposite, True, what, node), node)

    return handler


def _transform(tr, a, kind, axes, sizes, inverse, norm, what, node):
    scale = _scale(tr, norm, inverse, f"np.fft.{what}", node)
    if kind == "c2c":
        return _complex_transform(tr, a, axes, sizes, inverse, scale, node)
    if kind == "r2c":
        return _real_transform(tr, a, axes, sizes, scale, f"np.fft.{what}", node)
    return _inverse_real_transform(tr, a, axes, sizes, scale, node)


def _frequencies(tr, args, kwargs, node, what: str, onesided: bool):
    """`np.fft.fftfreq(n, d=1.0)`: [0, 1, ..., -(n // 2), ..., -1] / (d n); `rfftfreq`: [0, ..., n // 2] / (d n)."""
    from dfc.frontend.numpy_calls import call

    n, d, device = bind(tr, args, kwargs, node, f"np.fft.{what}", ("n", "d", "device"), (1.0, None))
    del device  # NumPy 2's array-API argument: the CPU's, or the GPU's when the function runs there
    size = tr.integer(n, node).static
    if size is None or size < 1:
        raise tr.fail(f"np.fft.{what} needs a positive constant n, got {n}", node)
    if onesided:
        k = call(tr, np.arange, [Affine(size // 2 + 1)], {}, node)
    else:
        k = call(tr, np.concatenate, [(call(tr, np.arange, [Affine((size + 1) // 2)], {}, node),
                                       call(tr, np.arange, [Affine(-(size // 2)), Affine(0)], {}, node))], {}, node)
    return tr.binop("div", k, tr.binop("mul", d, float(size), node), node)


def _shift(what: str, inverse: bool) -> Handler:
    """`np.fft.fftshift(x, axes=None)`: a roll by n // 2 along each axis (ifftshift: by -(n // 2))."""

    def handler(tr, args, kwargs, node):
        from dfc.frontend.numpy_calls import call

        x, axes = bind(tr, args, kwargs, node, f"np.fft.{what}", ("x", "axes"), (None,))
        shape = x.shape if isinstance(x, Complex) else expr_of(tr, x, node).shape
        chosen, _ = _axes(tr, x, None, axes, None, f"np.fft.{what}", node)
        sizes = [shape[k].static for k in chosen]
        if any(v is None for v in sizes):
            raise tr.fail(f"np.fft.{what} of an array whose size along the shifted axes is not constant", node)
        shifts, along = tuple(Affine(-(v // 2) if inverse else v // 2) for v in sizes), tuple(Affine(k) for k in chosen)
        if isinstance(x, Complex):
            return Complex(*(call(tr, np.roll, [part, shifts, along], {}, node) for part in (x.re, x.im)))
        return call(tr, np.roll, [x, shifts, along], {}, node)

    return handler


FFT_HANDLERS: dict[Any, Handler] = {
    np.fft.fft: _one_axis("fft", "c2c", False), np.fft.ifft: _one_axis("ifft", "c2c", True),
    np.fft.rfft: _one_axis("rfft", "r2c", False), np.fft.irfft: _one_axis("irfft", "c2r", True),
    np.fft.fft2: _many_axes("fft2", "c2c", False, (-2, -1)), np.fft.ifft2: _many_axes("ifft2", "c2c", True, (-2, -1)),
    np.fft.rfft2: _many_axes("rfft2", "r2c", False, (-2, -1)),
    np.fft.irfft2: _many_axes("irfft2", "c2r", True, (-2, -1)),
    np.fft.fftn: _many_axes("fftn", "c2c", False, None), np.fft.ifftn: _many_axes("ifftn", "c2c", True, None),
    np.fft.rfftn: _many_axes("rfftn", "r2c", False, None), np.fft.irfftn: _many_axes("irfftn", "c2r", True, None),
    np.fft.hfft: _hermitian("hfft", False), np.fft.ihfft: _hermitian("ihfft", True),
    np.fft.fftfreq: lambda tr, args, kwargs, node: _frequencies(tr, args, kwargs, node, "fftfreq", False),
    np.fft.rfftfreq: lambda tr, args, kwargs, node: _frequencies(tr, args, kwargs, node, "rfftfreq", True),
    np.fft.fftshift: _shift("fftshift", False), np.fft.ifftshift: _shift("ifftshift", True),
}
"""The `np.fft` functions, by the function object: complex_calls.py dispatches every call of one here, of a
real array too (the transforms' results are complex)."""
