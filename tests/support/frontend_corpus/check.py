"""Runs one corpus kernel: forward against NumPy, gradients against float64
sixth-order (Richardson-extrapolated) central differences of the NumPy
function at rtol 1e-9; float32 runs against float64 central differences at
float32 tolerances.

`engine=False` runs the frontend's module and its `autodiff` gradient with the
reference interpreter (`dfc.interpret`, the semantics; fast to start);
`engine=True` goes through `dfc.jit` and `dfc.vjp` (compiled code).
"""

from __future__ import annotations

import numpy as np

import dfc


RTOL64 = 1e-9
"""Gradient tolerance in float64: |g - reference| <= RTOL64 * (|reference| + max(1, max|reference|))."""


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def float_positions(args):
    return [k for k, a in enumerate(args) if isinstance(a, float) or isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def numeric_gradient(loss, args, k, h):
    """d loss / d args[k] by central differences, element by element."""
    x = np.asarray(args[k], np.float64)
    grad = np.zeros(x.shape)
    for idx in np.ndindex(*x.shape):
        hi, lo = copies(args), copies(args)
        if x.ndim:
            for a, d in ((hi, h), (lo, -h)):
                moved = x.copy()
                moved[idx] += d
                a[k] = moved.astype(args[k].dtype)
        else:
            hi[k], lo[k] = args[k] + h, args[k] - h
        grad[idx] = (loss(*hi) - loss(*lo)) / (2 * h)
    return grad


def richardson_gradient(loss, args, k, h=1e-2):
    """d loss / d args[k] to sixth order: central differences at h, h/2, h/4
    combined by Richardson extrapolation (float64; smooth kernels reach ~1e-11)."""
    d = [numeric_gradient(loss, args, k, h / 2**j) for j in range(3)]
    return (64 * d[2] - 20 * d[1] + d[0]) / 45


def gradient_error(g, fd) -> float:
    """The smallest rtol with |g - fd| <= rtol * (|fd| + max(1, max|fd|))."""
    scale = max(1.0, float(np.max(np.abs(fd)))) if np.size(fd) else 1.0
    return float(np.max(np.abs(np.asarray(g) - fd) / (np.abs(fd) + scale))) if np.size(fd) else 0.0


def run(fn, args, engine: bool):
    """(forward value, gradients of every float argument) for cotangent `w` of the result."""
    jf = dfc.jit(fn)
    want = fn(*copies(args))
    w = np.random.default_rng(1).standard_normal(np.shape(want)) if np.ndim(want) else 1.0
    cotangent = np.asarray(w, np.asarray(want).dtype)
    floats = float_positions(args)
    if engine:
        value = jf(*copies(args))
        _, pullback = dfc.vjp(jf, *copies(args))
        grads = pullback(cotangent)
        return want, w, value, [grads[k] for k in floats]
    f, ir_args, positions = jf.specialize(*copies(args))
    value = dfc.interpret(f.module, f.name, *ir_args)
    module = f.autodiff_module(tuple(positions[k] for k in floats))
    out = dfc.interpret(module, f.name + "_grad", *ir_args, cotangent)
    return want, w, value, list(out[1:])


def as_float32(args):
    return [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a for a in args]


def check(fn, args, engine: bool = False, float32: bool = False):
    """Raises AssertionError on a wrong value or gradient. With `float32`, the
    kernel runs on float32 copies of the float64 arguments and is compared with
    the float64 NumPy value and central differences at float32 tolerances."""
    run_args = as_float32(args) if float32 else args
    want, w, value, grads = run(fn, run_args, engine)
    f32 = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in run_args)
    if float32:
        want = fn(*copies(args))
    rtol = 1e-4 if f32 else 1e-10
    np.testing.assert_allclose(np.asarray(value), want, rtol=rtol, atol=rtol * 1e-2, err_msg="forward")

    def loss(*a):
        return float(np.sum(np.asarray(fn(*copies(a)), np.float64) * w))

    reference_args = args if float32 else run_args
    f32_only = f32 and not float32  # no float64 version to difference: float32 steps
    for k, g in zip(float_positions(run_args), grads):
        if f32:
            fd = numeric_gradient(loss, reference_args, k, 1e-3 if f32_only else 1e-6)
            scale = max(1.0, float(np.max(np.abs(fd))))
            rtol, atol = (2e-2, 1e-3 * scale) if f32_only else (1e-3, 1e-4 * scale)
            np.testing.assert_allclose(np.asarray(g), fd, rtol=rtol, atol=atol, err_msg=f"gradient of argument {k}")
            continue
        # float64: sixth-order differences; a kink (relu, max, abs) within the
        # larger step spoils that estimate, so the smaller step is tried too
        error = gradient_error(g, richardson_gradient(loss, reference_args, k, 1e-2))
        if error > RTOL64:
            error = min(error, gradient_error(g, richardson_gradient(loss, reference_args, k, 1e-4)))
        assert error <= RTOL64, f"gradient of argument {k}: relative error {error:.2e} > {RTOL64:.0e}"
