"""The special-function nn ops (dialects/nn_special.py) against mpmath at 40 digits, relatively (an absolute
floor where the function crosses 0), over wide ranges: negative non-integers, near the poles, large
arguments; float32 against the float64 reference; gradients against torch.autograd and finite differences
in float64; their ways in (dfc.torch, JAX's chlo ops) against eager."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret

mpmath = pytest.importorskip("mpmath")
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(35)


def _wide(n: int, lo: float, hi: float) -> np.ndarray:
    return RNG.uniform(lo, hi, n)


def _negative_non_integers(n: int) -> np.ndarray:
    """Points of (-30, 0) near and far from the poles (a millionth to a half away)."""
    k = RNG.integers(0, 30, n).astype(float)
    return -(k + np.where(RNG.uniform(size=n) < 0.5, 10.0 ** RNG.uniform(-6, -0.3, n), RNG.uniform(0, 1, n)))


def _mp(fn, *args) -> float:
    with mpmath.workdps(40):
        return float(mpmath.re(fn(*(mpmath.mpf(float(a)) for a in args))))


MP = {
    "nn.lgamma": lambda x: mpmath.log(abs(mpmath.gamma(x))),
    "nn.digamma": mpmath.digamma,
    "nn.bessel_i0": lambda x: mpmath.besseli(0, x),
    "nn.bessel_i0e": lambda x: mpmath.besseli(0, x) * mpmath.exp(-abs(x)),
    "nn.bessel_i1": lambda x: mpmath.besseli(1, x),
    "nn.bessel_i1e": lambda x: mpmath.besseli(1, x) * mpmath.exp(-abs(x)),
    "nn.erfc": mpmath.erfc,
    "nn.erfcx": lambda x: mpmath.exp(x * x) * mpmath.erfc(x),
    "nn.ndtri": lambda y: mpmath.sqrt(2) * mpmath.erfinv(2 * y - 1),
    "nn.log_ndtr": lambda x: mpmath.log(mpmath.ncdf(x)),
}
"""mpmath's definition of each unary op."""


def _points(op: str, n: int) -> np.ndarray:
    if op == "nn.ndtri":
        return np.concatenate([RNG.uniform(0, 1, n), 10.0 ** RNG.uniform(-12, -1, n // 4)])
    if op in ("nn.lgamma", "nn.digamma"):
        return np.concatenate([_wide(n, -30, 30), _negative_non_integers(n // 2), 10.0 ** RNG.uniform(-8, 8, n // 2),
                               [1.0, 2.0, 0.5, 1.4616321449683623, 1e-300]])
    if op in ("nn.bessel_i0", "nn.bessel_i1"):
        return np.concatenate([_wide(n, -30, 30), _wide(n // 4, -700, 700)])
    if op == "nn.log_ndtr":
        return np.concatenate([_wide(n, -40, 8), -(10.0 ** RNG.uniform(0, 5, n // 4))])
    if op == "nn.erfc":
        return np.concatenate([_wide(n, -6, 27), [0.0, 1.0, -1.0, 26.5]])
    return np.concatenate([_wide(n, -30, 30), 10.0 ** RNG.uniform(-8, 5, n // 4) * RNG.choice([-1, 1], n // 4)])


def _program(ops: list[tuple[str, str, int]], dtype: str = "f64") -> str:
    """One function applying each (op, attributes, length) to an argument of its own."""
    params = ", ".join(f"%a{k}: tensor<{n}x{dtype}>" for k, (_, _, n) in enumerate(ops))
    body = "\n".join(f"  %r{k} = {op} %a{k} {attrs} : (tensor<{n}x{dtype}>) -> tensor<{n}x{dtype}>"
                     for k, (op, attrs, n) in enumerate(ops))
    types = ", ".join(f"tensor<{n}x{dtype}>" for _, _, n in ops)
    results = ", ".join(f"%r{k}" for k in range(len(ops)))
    return f"func.func @f({params}) -> ({types}) {{\n{body}\n  func.return {results} : {types}\n}}"


def _assert_close(got, want, what: str, rtol: float, atol: float) -> None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaN where the reference has none, or not"
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]), f"{what}: infinities"
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol, err_msg=what)


def _check_unary(ops: list[str], n: int, rtol: float) -> None:
    xs = [_points(op, n) for op in ops]
    got = ExecutionEngine(parse_module(_program([(op, "", len(x)) for op, x in zip(ops, xs)]))).invoke("f", *xs)
    for op, x, g in zip(ops, xs, got):
        want = np.array([_mp(MP[op], v) for v in x])
        # lgamma crosses 0 at 1 and 2, digamma at 1.46...: there the rounding of terms of order 1 stays
        _assert_close(g, want, op, rtol=rtol, atol=1e-15 if op in ("nn.lgamma", "nn.digamma") else 0.0)


def test_unary_special_functions_match_mpmath():
    _check_unary(["nn.lgamma", "nn.bessel_i1", "nn.erfcx"], 16, rtol=1e-13)


@pytest.mark.slow
def test_unary_special_functions_match_mpmath_widely():
    _check_unary(sorted(MP), 300, rtol=1e-13)


@pytest.mark.slow
def test_polygamma_and_zeta_match_mpmath_and_torch():
    """polygamma n = 1..3 across poles and beyond 2^52 (asymptotic form), zeta with q > 0 against mpmath and
    with negative q (Cephes' longer direct sum) against torch's own Cephes in float64."""
    x = np.concatenate([_wide(12, -20, 20), _negative_non_integers(8), [1e17, 0.25, 3e-5]])
    s = np.floor(_wide(16, 1.0, 12.0)) + np.where(_wide(16, 0, 1) < 0.5, 0.0, _wide(16, 0, 1))
    q = np.concatenate([10.0 ** _wide(10, -3, 2), -_wide(6, 0.01, 20.0)])
    s[10:] = np.floor(s[10:])  # an integer order: Cephes' negative q needs one
    t = f"tensor<{len(x)}xf64>"
    z = f"tensor<{len(s)}xf64>"
    text = (f"func.func @f(%x: {t}, %s: {z}, %q: {z}) -> ({t}, {t}, {t}, {z}) {{\n"
            + "".join(f"  %p{n} = nn.polygamma %x {{n = {n} : i64}} : ({t}) -> {t}\n" for n in (1, 2, 3))
            + f"  %z = nn.zeta %s, %q : ({z}, {z}) -> {z}\n  func.return %p1, %p2, %p3, %z : {t}, {t}, {t}, {z}\n}}")
    *pg, zeta = ExecutionEngine(parse_module(text)).invoke("f", x, s, q)
    for n, got in zip((1, 2, 3), pg):
        _assert_close(got, [_mp(lambda v: mpmath.polygamma(n, v), v) for v in x], f"polygamma({n})", 1e-12, 0.0)
    _assert_close(zeta[:10], [_mp(mpmath.zeta, a, b) for a, b in zip(s[:10], q[:10])], "zeta", 1e-12, 0.0)
    _assert_close(zeta[10:], torch.special.zeta(torch.tensor(s[10:]), torch.tensor(q[10:])).numpy(),
                  "zeta, q < 0", 1e-12, 0.0)


EDGES = np.array([0.0, -0.0, -1.0, -2.0, 1.0, 2.0, math.inf, -math.inf, math.nan, 1e-310, 0.5, -0.5, 1e300, -1e300])


@pytest.mark.slow
def test_edge_values_are_torchs():
    """Poles, zeros, infinities, NaN, subnormals: the values torch gives (except polygamma(1)'s finite 6.6e32 at
    -1 and -2, where dfc gives the pole's inf)."""
    ops = {"nn.lgamma": torch.lgamma, "nn.digamma": torch.digamma, "nn.bessel_i0": torch.i0,
           "nn.bessel_i0e": torch.special.i0e, "nn.bessel_i1": torch.special.i1, "nn.bessel_i1e": torch.special.i1e,
           "nn.erfc": torch.erfc, "nn.erfcx": torch.special.erfcx, "nn.log_ndtr": torch.special.log_ndtr,
           "nn.ndtri": torch.special.ndtri}
    got = ExecutionEngine(parse_module(_program([(op, "", len(EDGES)) for op in ops]))).invoke(
        "f", *[EDGES] * len(ops))
    for (op, fn), g in zip(ops.items(), got):
        _assert_close(g, fn(torch.tensor(EDGES)).numpy(), op, rtol=1e-13, atol=0.0)
    finite = EDGES[np.isfinite(EDGES) & ((EDGES > 0) | (EDGES != np.floor(EDGES)))]
    got = ExecutionEngine(parse_module(_program([("nn.polygamma", "{n = 2 : i64}", len(finite))]))).invoke("f", finite)
    _assert_close(got, torch.polygamma(2, torch.tensor(finite)).numpy(), "polygamma(2)", 1e-13, 0.0)


@pytest.mark.slow
def test_float32_is_the_float64_result_rounded_and_the_interpreter_agrees():
    ops = ["nn.lgamma", "nn.digamma", "nn.bessel_i1e", "nn.erfcx", "nn.log_ndtr", "nn.erfc"]
    xs = [_points(op, 40).astype(np.float32) for op in ops]
    text = _program([(op, "", len(x)) for op, x in zip(ops, xs)], "f32")
    wide = ExecutionEngine(parse_module(_program([(op, "", len(x)) for op, x in zip(ops, xs)]))).invoke(
        "f", *[x.astype(np.float64) for x in xs])
    narrow = ExecutionEngine(parse_module(text)).invoke("f", *xs)
    module = parse_module(text)
    PassManager.parse("expand-library,canonicalize,cse").run(module)
    interpreted = interpret(module, "f", *xs)
    for op, w, g, i in zip(ops, wide, narrow, interpreted):
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, w.astype(np.float32), err_msg=op)
        np.testing.assert_array_equal(i, g, err_msg=op)


def _full(x, pos, unit):
    return (torch.lgamma(x) + torch.digamma(x) + torch.polygamma(2, x) + torch.i0(x) + torch.special.i0e(x)
            + torch.special.i1(x) + torch.special.i1e(x) + torch.special.erfcx(x) + torch.erfc(x),
            torch.mvlgamma(pos + 2, 3) + torch.special.zeta(3.0, pos), torch.special.ndtri(unit))


def _small(x, pos, unit):
    return (torch.lgamma(x) + torch.special.i0e(x),)


@pytest.mark.parametrize("f", [_small, pytest.param(_full, marks=pytest.mark.slow)])
def test_torch_special_functions_and_their_gradients_match_eager(f):
    """Through dfc.torch.compile: values and the gradient of every input against eager in float64."""
    import dfc.torch

    inputs = (torch.linspace(-5.7, 6.3, 11, dtype=torch.float64), torch.linspace(0.3, 6.1, 9, dtype=torch.float64),
              torch.linspace(0.02, 0.97, 7, dtype=torch.float64))
    inputs = tuple(t.clone().requires_grad_() for t in inputs)
    got, want = dfc.torch.compile(lambda *a: f(*a))(*inputs), f(*inputs)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-9, atol=1e-12)  # torch's trigamma: 5e-10
    seeds = [torch.rand_like(w) for w in want]
    used = inputs if f is _full else inputs[:1]
    grads = torch.autograd.grad(sum((g * s).sum() for g, s in zip(got, seeds)), used)
    expected = torch.autograd.grad(sum((w * s).sum() for w, s in zip(want, seeds)), used)
    for g, w in zip(grads, expected):
        torch.testing.assert_close(g, w, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_gradients_against_finite_differences():
    """The rules (nn ops) against float64 finite differences (I1e near its kink at 0)."""
    from support.autodiff_checks import check_gradient

    t = "tensor<6xf64>"
    text = f"""func.func @f(%x: {t}, %q: {t}) -> {t} {{
  %a = nn.digamma %q : ({t}) -> {t}
  %b = nn.bessel_i1e %x : ({t}) -> {t}
  %c = nn.bessel_i1 %x : ({t}) -> {t}
  %s = nn.full {{value = 3.0 : f64}} : {t}
  %d = nn.zeta %s, %q : ({t}, {t}) -> {t}
  %e = nn.log_ndtr %x : ({t}) -> {t}
  %f = nn.ndtri %q : ({t}) -> {t}
  %g = nn.erfc %x : ({t}) -> {t}
  %ab = nn.add %a, %b : ({t}, {t}) -> {t}
  %cd = nn.add %c, %d : ({t}, {t}) -> {t}
  %ef = nn.add %e, %f : ({t}, {t}) -> {t}
  %r0 = nn.add %ab, %cd : ({t}, {t}) -> {t}
  %r1 = nn.add %r0, %ef : ({t}, {t}) -> {t}
  %r = nn.add %r1, %g : ({t}, {t}) -> {t}
  func.return %r : {t}
}}"""
    x = np.array([-2.3, -0.4, 1e-3, 0.7, 3.1, 9.5])
    q = np.array([0.35, 0.45, 0.55, 0.6, 0.8, 0.9])  # moderate values: finite differences of sums of 1e4 lose 1e-6
    check_gradient(text, "f", [x, q], [0, 1], rtol=1e-6, atol=1e-8)


def test_zeta_gradient_in_its_order_is_refused():
    from dfc.dialects.diagnostics import CompileError

    t = "tensor<3xf64>"
    text = f"func.func @f(%s: {t}, %q: {t}) -> {t} {{\n  %z = nn.zeta %s, %q : ({t}, {t}) -> {t}\n" \
           f"  func.return %z : {t}\n}}"
    with pytest.raises(CompileError, match="nn.zeta in its first argument"):
        PassManager.parse("autodiff").run(parse_module(text))


@pytest.mark.slow
def test_jax_chlo_special_functions():
    """jax.scipy.special's digamma (NaN at 0, as XLA), polygamma, zeta and lax.bessel_i1e through from_jax,
    values and gradients against JAX in float64."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.scipy import special

    import dfc

    def f(x, q):
        return (special.digamma(x) + special.polygamma(2, x) + jax.lax.bessel_i1e(x) + special.gammaln(x),
                special.zeta(3.0, q))

    x = np.array([-3.3, -0.5, 0.0, 0.4, 2.0, 7.7])
    q = np.array([0.1, 0.7, 1.5, 4.0, 9.0, 30.0])
    got = dfc.from_jax(f, x, q)(x, q)
    for g, w in zip(got, f(jnp.asarray(x), jnp.asarray(q))):
        _assert_close(g, np.asarray(w), "jax", 1e-12, 1e-15)
    loss = lambda x, q: sum(jnp.sum(jnp.where(jnp.isfinite(v), v, 0.0)) for v in f(x, q))  # noqa: E731
    x = x[x != 0]
    grads = dfc.from_jax(jax.grad(loss, argnums=(0, 1)), x, q)(x, q)
    for g, w in zip(grads, jax.grad(loss, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(q))):
        _assert_close(g, np.asarray(w), "jax gradient", 1e-10, 1e-12)
