"""The JAX API as people call it (`jax.numpy`, `jnp.linalg`, `jnp.fft`, `jax.nn`,
`jax.lax`, `jax.scipy.special`, `jax.random`; tests/support/jax_api_cases.py),
imported with `dfc.from_jax` in float32 and float64 (JAX's 64-bit mode on).

Each case is classified: right (the interpreter's result equals JAX's), refused
(a `CompileError` naming the construct), wrong (a number differs) or crash (any
other exception). Where the case has float results, the gradient of a scalar
loss (each float result times a fixed random weight, summed) is classified the
same way: dfc's `autodiff` of the imported loss against `jax.grad`. Floats
compare relatively (RTOL of the element, float32's where JAX computes in
float32 inside) with an absolute floor of RTOL times the result's largest
magnitude (an element near 0 by cancellation); integers and booleans exactly.

The sweep runs with --slow and fails on a wrong number or a crash;
`python tests/api/test_jax_api_sweep.py` prints each case's class and the
counts. The default run holds a fixed subset (`FAST`).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from support.jax_api_cases import CASES  # noqa: E402

from dfc import CompileError, interpret  # noqa: E402
from dfc.importers.stablehlo_import import from_jax  # noqa: E402

DTYPES = ("float32", "float64")
RTOL = {"float32": 2e-5, "float64": 1e-11}
"""About 170 ulp in float32 and 45000 in float64: JAX's and dfc's expansions of a special function differ
(rational approximations against series); a wrong formula differs by far more."""


def _leaves(value) -> list[np.ndarray]:
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(value)]


def _compare(got, want, rtol: float) -> str | None:
    """None when `got` equals `want`, else what differs."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} vs JAX's {want.dtype}{list(want.shape)}"
    if want.dtype.kind not in "fc":
        bad = got != want
    else:
        finite = np.abs(want[np.isfinite(want)])
        floor = rtol * float(finite.max()) if finite.size else 0.0
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(got - want) <= rtol * np.abs(want) + floor) | (np.isnan(got) & np.isnan(want))
                    | (got == want))
    if not bad.any():
        return None
    k = np.unravel_index(int(np.argmax(bad)), bad.shape)
    return f"{int(bad.sum())} of {bad.size} differ, e.g. at {list(k)}: {got[k]!r} vs JAX's {want[k]!r}"


def _arguments(name: str, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(f"{name}/{dtype}".encode()))
    return [build(np.dtype(dtype), rng) for build in CASES[name].args]


def _run(fn, args, rtol, grad_of: tuple[int, ...] | None = None) -> tuple[str, str]:
    """(class, detail) of `fn` at `args` imported; with `grad_of`, of the gradient of `fn` (scalar)."""
    try:
        want = jax.jit(jax.grad(fn, argnums=grad_of) if grad_of else fn)(*args)
    except Exception as err:  # JAX itself does not take these arguments: the case is wrong, not dfc
        raise AssertionError(f"JAX refuses the case: {type(err).__name__}: {err}") from err
    try:
        imported = from_jax(fn, *args)
        if grad_of:
            module = imported.autodiff_module(grad_of)
            seed = np.ones((), np.dtype(jax.eval_shape(fn, *args).dtype))
            got = interpret(module, f"{imported.name}_grad", *imported.arguments(*args), seed)[1:]
        else:
            got = imported.with_jax_dtypes(interpret(imported.module, imported.name, *imported.arguments(*args)))
    except CompileError as err:
        return "refused", str(err).splitlines()[0]
    except Exception as err:
        return "crash", f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return "wrong", f"{len(got_leaves)} results vs JAX's {len(want_leaves)}"
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        diff = _compare(g, w, rtol)
        if diff:
            return "wrong", f"result {k}: {diff}"
    return "right", ""


def _loss(fn, args):
    """The scalar loss of `fn`'s real float results (each times a fixed weight, summed), or None."""
    out = jax.eval_shape(fn, *args)
    shapes = [(k, o) for k, o in enumerate(jax.tree_util.tree_leaves(out)) if jax.numpy.issubdtype(o.dtype,
                                                                                                     np.floating)]
    if not shapes:
        return None
    rng = np.random.default_rng(7)
    weights = {k: rng.standard_normal(o.shape).astype(o.dtype) for k, o in shapes}

    def loss(*a):
        leaves = jax.tree_util.tree_leaves(fn(*a))
        return sum(jax.numpy.sum(leaves[k] * w) for k, w in weights.items())

    return loss


def classify(name: str, dtype: str) -> dict[str, tuple[str, str]]:
    """{'forward': (class, detail), 'gradient': (class, detail)} (no gradient entry when not applicable)."""
    case, args = CASES[name], _arguments(name, dtype)
    rtol = RTOL[case.computes_in or dtype]
    with jax.enable_x64(True):
        result = {"forward": _run(case.fn, args, rtol)}
        floats = tuple(k for k, a in enumerate(args) if a.dtype.kind == "f")
        loss = _loss(case.fn, args) if case.grad and floats else None
        if loss is not None and result["forward"][0] != "refused":
            result["gradient"] = _run(loss, args, rtol, floats)
    return result


SWEEP = [(n, d) for n in CASES for d in DTYPES]


@pytest.mark.slow
@pytest.mark.parametrize("name,dtype", SWEEP, ids=[f"{n}-{d}" for n, d in SWEEP])
def test_sweep_has_no_wrong_number_or_crash(name, dtype):
    for what, (status, detail) in classify(name, dtype).items():
        assert status in ("right", "refused"), f"{name} {dtype} {what}: {status}: {detail}"


FAST = ["jnp.imag"]
"""A fixed subset for the default run: a function whose argument JAX would prune (`keep_unused`); the chlo
decompositions' default cases are in test_stablehlo_coverage.py."""


@pytest.mark.parametrize("name", [*FAST, pytest.param("jnp.arccosh", marks=pytest.mark.slow)])
def test_fast_subset_equals_jax(name):
    for what, (status, detail) in classify(name, "float64").items():
        assert status == "right", f"{name} {what}: {status}: {detail}"


def test_a_gradient_through_the_bits_of_a_float_is_refused():
    """jnp.ldexp rebuilds its result from the bits of x (JAX differentiates it by a rule StableHLO does not
    carry): dfc refuses the gradient instead of returning 0."""
    x = np.array([0.75, -3.0])
    imported = from_jax(lambda v: jax.numpy.sum(jax.numpy.ldexp(v, 3)), x)
    with pytest.raises(CompileError, match=r"autodiff: the gradient through the bits of a float"):
        imported.autodiff_module((0,))


def test_a_gradient_through_stop_gradient_is_refused_at_its_line():
    """StableHLO does not carry lax.stop_gradient (x * stop_gradient(x) lowers to x * x): dfc refuses the
    gradient at the call instead of returning 2x where JAX returns x."""
    import inspect

    def f(x):
        return jax.numpy.sum(x * jax.lax.stop_gradient(x))

    line = inspect.getsourcelines(f)[1] + 1
    imported = from_jax(f, np.array([0.5, 2.0]))
    np.testing.assert_allclose(imported(np.array([0.5, 2.0])), 4.25)
    with pytest.raises(CompileError, match=r"gradient of @f through lax.stop_gradient is not supported") as err:
        imported.autodiff_module((0,))
    assert str(err.value).startswith(f"{__file__}:{line}:")


if __name__ == "__main__":
    import sys
    from collections import Counter

    names = sys.argv[1:] or list(CASES)
    counts: Counter = Counter()
    for name in names:
        for dtype in DTYPES:
            try:
                classes = classify(name, dtype)
            except AssertionError as err:  # JAX does not take the case's arguments: a mistake in the case
                print(f"{name:36s} {dtype:8s} case     invalid  {str(err).splitlines()[0][:160]}", flush=True)
                continue
            for what, (status, detail) in classes.items():
                counts[what, status] += 1
                print(f"{name:36s} {dtype:8s} {what:8s} {status:8s} {detail[:160]}", flush=True)
    print(sorted(counts.items()))
