"""The GPU's inline math (`compiler.codegen.gpu_math`) against numpy/scipy: the
emitter's IR compiled for the host (`device_math`) over wide input ranges and the
special values, with the maximum error in ulp asserted (the bounds are the accuracy
table of `gpu_math`); the ops in a kernel on the simulated device (which runs the same
IR); and PTX with every op in f16, f32 and f64 through ptxas."""

import shutil
import subprocess
import zlib

import numpy as np
import pytest
import scipy.special
from support.device_math import device_math
from support.gpu_sim import simulated_engine

from dfc.compiler import parse_module
from dfc.compiler.codegen.gpu_math import SINCOS_LIMIT
from dfc.compiler.codegen.nvptx import emit_ptx

RNG = np.random.default_rng(23)

UNARY = {  # op -> (numpy reference, max ulp f32, max ulp f64)
    "math.sin": (np.sin, 2, 1),
    "math.cos": (np.cos, 2, 1),
    "math.tan": (np.tan, 3, 3),
    "math.atan": (np.arctan, 3, 2),
    "math.expm1": (np.expm1, 2, 2),
    "math.log1p": (np.log1p, 3, 2),
    "math.cbrt": (np.cbrt, 1, 3),
    "math.erf": (scipy.special.erf, 3, 3),
    "math.exp": (np.exp, 2, 2),
    "math.log": (np.log, 2, 2),
    "math.tanh": (np.tanh, 3, 3),
    "math.asin": (np.arcsin, 3, 3),
    "math.acos": (np.arccos, 3, 3),
    "math.atanh": (np.arctanh, 4, 3),
    "math.sinh": (np.sinh, 4, 3),
    "math.cosh": (np.cosh, 3, 3),
    "math.exp2": (np.exp2, 1, 2),
    "math.asinh": (np.arcsinh, 4, 3),
    "math.acosh": (np.arccosh, 4, 4),
}
BINARY = {"math.atan2": (np.arctan2, 2, 2), "math.powf": (np.power, 1, None), "arith.remf": (np.fmod, 0, 0)}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1e-30, -1e-30,
           1e30, -1e30, 1e-310, 1e300, 0.1, 7.5]  # fmt: skip


@pytest.fixture(autouse=True)
def reseed(request):
    """Each test draws its own inputs, whichever tests run before it."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))


def signed(magnitudes: np.ndarray) -> np.ndarray:
    return np.where(RNG.random(magnitudes.shape) < 0.5, -magnitudes, magnitudes)


def wide(n: int, lo: float, hi: float) -> np.ndarray:
    """n values of both signs, log-uniform in magnitude over [10^lo, 10^hi]."""
    return signed(10.0 ** RNG.uniform(lo, hi, n))


def inputs(op: str, dtype) -> np.ndarray:
    f32 = dtype == np.float32
    if op in ("math.sin", "math.cos", "math.tan"):
        limit = np.log10(SINCOS_LIMIT[32 if f32 else 64])
        return np.concatenate([wide(60000, -8, limit), RNG.uniform(-10, 10, 20000)])
    if op == "math.cbrt":
        return wide(60000, -44 if f32 else -320, 38 if f32 else 308)
    if op in ("math.expm1", "math.exp"):
        return np.concatenate([wide(40000, -10, 1.9 if f32 else 2.8), RNG.uniform(-2, 2, 20000)])
    if op in ("math.log1p", "math.log"):
        magnitudes = np.abs(wide(40000, -40 if f32 else -300, 38 if f32 else 300))
        return np.concatenate([magnitudes, RNG.uniform(-1, 3, 20000)])
    if op in ("math.asin", "math.acos", "math.atanh"):
        return np.concatenate([wide(40000, -10, 0), RNG.uniform(-1, 1, 40000)])
    if op in ("math.sinh", "math.cosh"):
        return np.concatenate([wide(40000, -10, 1.9 if f32 else 2.8), RNG.uniform(-3, 3, 20000)])
    if op == "math.exp2":
        return np.concatenate([wide(40000, -10, 2.1 if f32 else 3.0), RNG.uniform(-3, 3, 20000)])
    if op == "math.acosh":
        return np.concatenate([np.abs(wide(30000, 0, 30)), 1 + np.abs(wide(30000, -10, 0)), RNG.uniform(0.5, 3, 20000)])
    if op == "math.erf":
        return np.concatenate([wide(20000, -10, 0.5), RNG.uniform(-7, 7, 40000)])
    return np.concatenate([wide(60000, -30, 30), RNG.uniform(-3, 3, 20000)])


def ulps(got: np.ndarray, want64: np.ndarray, dtype) -> np.ndarray:
    """|got - want| in ulp of the rounded reference; 0 where both are the same NaN/inf/zero."""
    with np.errstate(all="ignore"):
        want = want64.astype(dtype)
        err = np.abs(got.astype(np.float64) - want64) / np.spacing(np.abs(want)).astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err[same] = 0
    err[np.isnan(err)] = np.inf  # a NaN or inf where the reference is finite (or the converse)
    return err


def reference(fn, *args: np.ndarray) -> np.ndarray:
    """`fn` rounded to float64 from long double where numpy has it (the correctly rounded result but
    for rare double roundings; a libm's float64 function may itself be off by ulps: glibc 2.36's cbrt
    by 2.4), else in float64."""
    wide = np.longdouble if isinstance(fn, np.ufunc) and any(t.startswith("g" * fn.nin) for t in fn.types) else np.float64
    with np.errstate(all="ignore"):
        return fn(*(a.astype(wide) for a in args)).astype(np.float64)


def assert_bound(name: str, err: np.ndarray, bound: float, *args: np.ndarray) -> None:
    k = int(np.argmax(err))
    where = ", ".join(repr(a.flat[k]) for a in args)
    assert err[k] <= bound, f"{name}({where}): {err[k]} ulp > {bound}"


def assert_same_signs(got: np.ndarray, want: np.ndarray) -> None:
    """Signed zeros and infinities as the reference has them (NaN's sign is free)."""
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_accuracy_and_special_values(op, dtype):
    fn, bound32, bound64 = UNARY[op]
    special = SPECIAL
    if op in ("math.sin", "math.cos", "math.tan"):  # beyond the limit: NaN (test below)
        special = [v for v in SPECIAL if not abs(v) > SINCOS_LIMIT[32 if dtype == np.float32 else 64] or np.isinf(v)]
    with np.errstate(over="ignore"):
        x = np.concatenate([inputs(op, dtype), special]).astype(dtype)
    with np.errstate(all="ignore"):
        got = device_math(op, dtype)(x)
    want = reference(fn, x)
    err = ulps(got, want, dtype)
    assert_bound(op, err, bound32 if dtype == np.float32 else bound64, x)
    assert_same_signs(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_accuracy_and_special_values(op, dtype):
    fn, bound32, bound64 = BINARY[op]
    if op == "math.powf":
        x = np.abs(wide(40000, -3, 3))
        y = RNG.uniform(-30, 30, 40000)
        y[::4] = np.round(y[::4])
        x[1::4] = -x[1::4]  # negative bases with integer exponents
    else:
        x, y = wide(60000, -30, 30), wide(60000, -30, 30)
    grid_x, grid_y = np.meshgrid(SPECIAL, SPECIAL)
    with np.errstate(over="ignore"):
        x = np.concatenate([x, grid_x.ravel()]).astype(dtype)
        y = np.concatenate([y, grid_y.ravel()]).astype(dtype)
    with np.errstate(all="ignore"):
        got = device_math(op, dtype)(x, y)
    err = ulps(got, reference(fn, x, y), dtype)
    if bound64 is None and dtype == np.float64:  # pow in f64: 1 + |y ln x|/16 ulp (documented)
        with np.errstate(all="ignore"):
            scale = 1 + np.abs(y.astype(np.float64) * np.log(np.abs(x.astype(np.float64)))) / 16
        err = np.where(np.isfinite(scale), err / np.where(np.isfinite(scale), scale, 1), err)
        bound64 = 1
    assert_bound(op, err, bound32 if dtype == np.float32 else bound64, x, y)
    assert_same_signs(got, reference(fn, x, y))


def test_remf_is_exact_far_beyond_2_24():
    x = np.array([1e30, -3e38, 16777217.0, 2.0**100, 1e-40], np.float32)
    y = np.array([3.0, 7.1, 0.1, 1e-38, 3e-45], np.float32)
    np.testing.assert_array_equal(device_math("arith.remf", np.float32)(x, y), np.fmod(x, y))
    x64, y64 = np.array([1e300, 2.0**1000 + 2.0**948, -5e-324]), np.array([3.0, 1e-300, 5e-324])
    np.testing.assert_array_equal(device_math("arith.remf", np.float64)(x64, y64), np.fmod(x64, y64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sin_beyond_the_reduction_limit_is_nan_not_garbage(dtype):
    limit = SINCOS_LIMIT[32 if dtype == np.float32 else 64]
    x = np.array([limit * 2, -limit * 1e3], dtype)
    for op in ("math.sin", "math.cos", "math.tan"):
        assert np.isnan(device_math(op, dtype)(x)).all()


# ---------------------------------------------------------------------------
# In kernels

_TY = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}


def math_program(ty: str) -> str:
    """@f(x, y) -> every unary op of x, then atan2/powf/remf of (x, y), stacked in rows."""
    ops = sorted(UNARY) + sorted(BINARY)
    lines = []
    for k, op in enumerate(ops):
        args = "%a" if op in UNARY else "%a, %b"
        lines.append(f"""      %r{k} = {op} {args} : {ty}
      df.write %r{k}, %o[%c{k}, %i] : tensor<{len(ops)}x64x{ty}>""")
    consts = "\n".join(f"      %c{k} = arith.constant {k} : index" for k in range(len(ops)))
    return f"""func.func @f(%x: tensor<64x{ty}>, %y: tensor<64x{ty}>) -> tensor<{len(ops)}x64x{ty}> {{
  %e = tensor.empty() : tensor<{len(ops)}x64x{ty}>
  %r = df.map (%i) in (64) outs(%o = %e : tensor<{len(ops)}x64x{ty}>) {{
      %a = df.read %x[%i] : tensor<64x{ty}>
      %b = df.read %y[%i] : tensor<64x{ty}>
{consts}
{chr(10).join(lines)}
  }} -> tensor<{len(ops)}x64x{ty}>
  func.return %r : tensor<{len(ops)}x64x{ty}>
}}"""


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_every_op_in_a_kernel_on_the_simulated_device(dtype):
    x = np.concatenate([RNG.uniform(0.05, 3, 56), [0.0, -0.0, np.inf, 1.0, 0.5, 2.0, 3.0, 1e-3]]).astype(dtype)
    y = np.concatenate([RNG.uniform(-3, 3, 56), [1.0, 2.0, 1.0, np.nan, -0.5, 0.25, 2.0, 3.0]]).astype(dtype)
    got = simulated_engine(parse_module(math_program(_TY[dtype]))).invoke("f", x, y)
    ops = sorted(UNARY) + sorted(BINARY)
    compute = np.float32 if dtype == np.float16 else dtype
    for row, op in zip(got, ops):
        fn = UNARY[op][0] if op in UNARY else BINARY[op][0]
        args = (x,) if op in UNARY else (x, y)
        want = reference(fn, *args).astype(compute).astype(dtype)  # f16: f32 math, one rounding
        bound = 1 if dtype == np.float16 else 4
        assert_bound(op, ulps(row, want.astype(np.float64), dtype), bound, *args)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) is not installed")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_every_op_assembles_with_ptxas(dtype, tmp_path):
    ptx = emit_ptx(parse_module(math_program(_TY[dtype])))
    assert "call" not in ptx.replace("call.uni", "")  # everything inline, no libdevice
    (tmp_path / "m.ptx").write_text(ptx)
    result = subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "m.ptx"), "-o", str(tmp_path / "m.cubin")],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_device_math_keeps_zero_d_values():  # uniform values in the simulator are 0-d
    r = device_math("math.tanh", np.float32)(np.float32(0.5))
    assert r.shape == () and r == device_math("math.tanh", np.float32)(np.array([0.5], np.float32))[0]
