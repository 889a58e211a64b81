"""The public JAX functions people call, each with typical arguments, for the
JAX API sweep (tests/api/test_jax_api_sweep.py).

`CASES` maps a name (`jnp.sum`, `lax.scan`, `random.normal`, ...) to a `Case`:
the function and one builder per argument. A builder takes the float dtype the
sweep runs in (float32 or float64) and a seeded generator and returns a NumPy
array; integer and boolean arguments keep their own dtype. `grad` says whether
the sweep also compares `dfc.grad` of the case's scalar loss with `jax.grad`
(False where the function is piecewise constant, integer-valued, or takes no
float argument); `computes_in` names the precision JAX computes in inside
(float32 for `dot_product_attention`'s softmax). JAX is imported here, so import this module after
`pytest.importorskip("jax")`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

Builder = Callable[[np.dtype, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Case:
    fn: Callable
    args: tuple[Builder, ...]
    grad: bool = True
    computes_in: str | None = None
    """The float type JAX computes in inside the function whatever its arguments' (its converts), if any."""


def normal(*shape: int) -> Builder:
    return lambda dt, r: r.standard_normal(shape).astype(dt)


def positive(*shape: int) -> Builder:
    """Values in [0.5, 2.5): the domain of log, sqrt, gamma, ..."""
    return lambda dt, r: (0.5 + 2 * r.random(shape)).astype(dt)


def unit(*shape: int) -> Builder:
    """Values in (-0.9, 0.9): the domain of arcsin, arctanh, erfinv, ..."""
    return lambda dt, r: (1.8 * r.random(shape) - 0.9).astype(dt)


def above_one(*shape: int) -> Builder:
    return lambda dt, r: (1.5 + r.random(shape)).astype(dt)


def prob(*shape: int) -> Builder:
    """Values in (0.05, 0.95)."""
    return lambda dt, r: (0.05 + 0.9 * r.random(shape)).astype(dt)


def ints(*shape: int, low: int = -5, high: int = 6, dtype=np.int32) -> Builder:
    return lambda dt, r: r.integers(low, high, shape).astype(dtype)


def bools(*shape: int) -> Builder:
    return lambda dt, r: r.random(shape) > 0.5


def matrix(n: int, batch: tuple[int, ...] = ()) -> Builder:
    """A well-conditioned square matrix (the identity times n plus noise)."""
    return lambda dt, r: (r.standard_normal((*batch, n, n)) + n * np.eye(n)).astype(dt)


def spd(n: int) -> Builder:
    """A symmetric positive definite matrix."""
    def build(dt, r):
        a = r.standard_normal((n, n))
        return (a @ a.T + n * np.eye(n)).astype(dt)
    return build


def key(seed: int = 0) -> Builder:
    """A raw threefry PRNG key (uint32[2]), as `jax.random.PRNGKey(seed)`."""
    return lambda dt, r: np.array([0, seed], np.uint32)


def indices(values: list[int]) -> Builder:
    return lambda dt, r: np.asarray(values, np.int32)


def scalar_int(value: int) -> Builder:
    return lambda dt, r: np.int32(value)


X, Y = normal(3, 4), normal(3, 4)
V = normal(5)

UNARY = {
    "abs": X, "absolute": X, "arccos": unit(3, 4), "arccosh": above_one(3, 4), "arcsin": unit(3, 4),
    "arcsinh": X, "arctan": X, "arctanh": unit(3, 4), "cbrt": X, "cos": X, "cosh": X, "deg2rad": X,
    "degrees": X, "exp": X, "exp2": X, "expm1": X, "fabs": X, "log": positive(3, 4), "log10": positive(3, 4),
    "log1p": positive(3, 4), "log2": positive(3, 4), "negative": X, "positive": X, "rad2deg": X, "radians": X,
    "reciprocal": positive(3, 4), "sin": X, "sinc": X, "sinh": X, "sqrt": positive(3, 4), "square": X,
    "tan": unit(3, 4), "tanh": X, "i0": X, "nan_to_num": X, "conj": X, "real": X,
}
UNARY_FLAT = {  # piecewise constant or non-float results
    "ceil": X, "floor": X, "rint": X, "round": X, "sign": X, "trunc": X, "signbit": X, "isfinite": X,
    "isinf": X, "isnan": X, "isneginf": X, "isposinf": X, "spacing": X, "imag": X,
}
BINARY = {
    "add": (X, Y), "subtract": (X, Y), "multiply": (X, Y), "divide": (X, positive(3, 4)),
    "true_divide": (X, positive(3, 4)), "power": (positive(3, 4), X), "float_power": (positive(3, 4), X),
    "maximum": (X, Y), "minimum": (X, Y), "fmax": (X, Y), "fmin": (X, Y), "arctan2": (X, Y),
    "hypot": (X, Y), "logaddexp": (X, Y), "logaddexp2": (X, Y), "copysign": (X, Y), "heaviside": (X, Y),
    "fmod": (X, positive(3, 4)), "mod": (X, positive(3, 4)), "remainder": (X, positive(3, 4)),
    "ldexp": (X, ints(3, 4)),
}
BINARY_FLAT = {
    "floor_divide": (X, positive(3, 4)), "nextafter": (X, Y), "equal": (X, Y), "not_equal": (X, Y),
    "less": (X, Y), "less_equal": (X, Y), "greater": (X, Y), "greater_equal": (X, Y), "isclose": (X, Y),
}
REDUCTIONS = ["sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "ptp", "nansum", "nanprod",
              "nanmean", "nanstd", "nanvar", "nanmax", "nanmin", "median", "nanmedian", "cumsum", "cumprod",
              "nancumsum", "nancumprod", "average"]
REDUCTIONS_FLAT = ["argmax", "argmin", "nanargmax", "nanargmin", "all", "any", "count_nonzero"]
INT_BINARY = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm"]


def _jnp_cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for name, arg in UNARY.items():
        cases[f"jnp.{name}"] = Case(getattr(jnp, name), (arg,))
    for name, arg in UNARY_FLAT.items():
        cases[f"jnp.{name}"] = Case(getattr(jnp, name), (arg,), grad=False)
    cases["jnp.frexp"] = Case(jnp.frexp, (X,), grad=False)
    cases["jnp.modf"] = Case(jnp.modf, (X,))
    for name, args in BINARY.items():
        cases[f"jnp.{name}"] = Case(getattr(jnp, name), args, grad=name not in ("copysign", "heaviside"))
    for name, args in BINARY_FLAT.items():
        cases[f"jnp.{name}"] = Case(getattr(jnp, name), args, grad=False)
    cases["jnp.divmod"] = Case(jnp.divmod, (X, positive(3, 4)), grad=False)
    for name in REDUCTIONS:
        f = getattr(jnp, name)
        cases[f"jnp.{name}"] = Case(lambda x, f=f: (f(x), f(x, axis=1)), (normal(3, 5),))
    for name in REDUCTIONS_FLAT:
        f = getattr(jnp, name)
        cases[f"jnp.{name}"] = Case(lambda x, f=f: (f(x), f(x, axis=0)), (normal(3, 5),), grad=False)
    for name in INT_BINARY:
        low = 0 if "shift" in name else -9
        cases[f"jnp.{name}"] = Case(getattr(jnp, name), (ints(3, 4, low=low), ints(3, 4, low=0, high=5)),
                                    grad=False)
    cases["jnp.invert"] = Case(jnp.invert, (ints(3, 4),), grad=False)
    cases["jnp.bitwise_count"] = Case(jnp.bitwise_count, (ints(3, 4, low=-100, high=100),), grad=False)
    cases["jnp.logical_and_or_xor_not"] = Case(
        lambda a, b: (jnp.logical_and(a, b), jnp.logical_or(a, b), jnp.logical_xor(a, b), jnp.logical_not(a)),
        (bools(3, 4), bools(3, 4)), grad=False)
    m34, m45 = normal(3, 4), normal(4, 5)
    shape_cases = {
        "reshape": (lambda x: jnp.reshape(x, (4, 3)), (m34,)),
        "transpose": (lambda x: jnp.transpose(x), (m34,)),
        "swapaxes": (lambda x: jnp.swapaxes(x, 0, 2), (normal(2, 3, 4),)),
        "moveaxis": (lambda x: jnp.moveaxis(x, 0, -1), (normal(2, 3, 4),)),
        "expand_dims_squeeze": (lambda x: jnp.squeeze(jnp.expand_dims(x, 1), 1), (m34,)),
        "ravel": (jnp.ravel, (m34,)),
        "flip": (lambda x: (jnp.flip(x), jnp.fliplr(x), jnp.flipud(x)), (m34,)),
        "roll": (lambda x: (jnp.roll(x, 2), jnp.roll(x, -1, axis=1)), (m34,)),
        "rot90": (lambda x: jnp.rot90(x), (m34,)),
        "concatenate": (lambda x, y: jnp.concatenate([x, y], axis=1), (m34, normal(3, 2))),
        "stack": (lambda x, y: (jnp.stack([x, y]), jnp.hstack([x, y]), jnp.vstack([x, y]), jnp.dstack([x, y])),
                  (m34, m34)),
        "split": (lambda x: jnp.split(x, 2, axis=1), (m34,)),
        "array_split": (lambda x: jnp.array_split(x, 3, axis=1), (m34,)),
        "tile": (lambda x: jnp.tile(x, (2, 1)), (m34,)),
        "repeat": (lambda x: jnp.repeat(x, 2, axis=0), (m34,)),
        "broadcast_to": (lambda x: jnp.broadcast_to(x, (2, 3, 4)), (m34,)),
        "pad": (lambda x: (jnp.pad(x, 1), jnp.pad(x, ((1, 0), (0, 2)), mode="edge"),
                           jnp.pad(x, 1, mode="reflect"), jnp.pad(x, 1, mode="wrap")), (m34,)),
        "diag": (lambda x, v: (jnp.diag(x), jnp.diag(v), jnp.diagonal(x), jnp.trace(x)), (normal(4, 4), V)),
        "tril_triu": (lambda x: (jnp.tril(x), jnp.triu(x, 1)), (normal(4, 4),)),
        "where": (lambda c, x, y: jnp.where(c, x, y), (bools(3, 4), m34, m34)),
        "select": (lambda x: jnp.select([x < -0.5, x > 0.5], [x * 2, x * 3], 0.0), (m34,)),
        "clip": (lambda x: jnp.clip(x, -0.5, 0.5), (m34,)),
        "take": (lambda x, i: jnp.take(x, i, axis=1), (m34, ints(5, low=0, high=4))),
        "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1), (m34, ints(3, 2, low=0, high=4))),
        "indexing": (lambda x, i: (x[i], x[:, ::2], x[1, -1], x[None, 1:]), (m34, ints(2, low=0, high=3))),
        "at_set_add_mul_min_max": (lambda x, i, u: (x.at[i].set(u), x.at[i].add(u), x.at[i].multiply(u),
                                                    x.at[i].min(u), x.at[i].max(u)),
                                   (m34, indices([0, 2]), normal(2, 4))),
        "at_duplicate_add": (lambda x, u: x.at[jnp.array([1, 1, 0])].add(u), (normal(3), normal(3))),
        "sort": (lambda x: (jnp.sort(x), jnp.sort(x, axis=0), jnp.argsort(x)), (m34,)),
        "sort_descending": (lambda x: jnp.sort(x, descending=True), (m34,)),
        "lexsort": (lambda a, b: jnp.lexsort((a, b)), (ints(6), ints(6)), ),
        "partition": (lambda x: jnp.partition(x, 2), (normal(6),)),
        "searchsorted": (lambda a, v: jnp.searchsorted(a, v), (lambda dt, r: np.sort(r.standard_normal(6)).astype(dt),
                                                               normal(4))),
        "digitize": (lambda x: jnp.digitize(x, jnp.array([-1.0, 0.0, 1.0], x.dtype)), (normal(6),)),
        "matmul": (jnp.matmul, (m34, m45)),
        "dot": (jnp.dot, (m34, m45)),
        "vdot_inner_outer": (lambda a, b: (jnp.vdot(a, b), jnp.inner(a, b), jnp.outer(a, b)), (V, V)),
        "tensordot": (lambda a, b: jnp.tensordot(a, b, axes=1), (m34, m45)),
        "einsum": (lambda a, b: jnp.einsum("ij,jk->ik", a, b), (m34, m45)),
        "einsum_batched": (lambda a, b: jnp.einsum("bij,bjk->bi", a, b), (normal(2, 3, 4), normal(2, 4, 5))),
        "kron": (jnp.kron, (normal(2, 2), normal(2, 3))),
        "cross": (jnp.cross, (normal(4, 3), normal(4, 3))),
        "convolve": (lambda a, b: (jnp.convolve(a, b), jnp.convolve(a, b, mode="same")), (normal(8), normal(3))),
        "correlate": (lambda a, b: jnp.correlate(a, b, mode="full"), (normal(8), normal(3))),
        "diff": (lambda x: (jnp.diff(x), jnp.ediff1d(x)), (V,)),
        "gradient": (jnp.gradient, (normal(6),)),
        "trapezoid": (jnp.trapezoid, (normal(6),)),
        "interp": (lambda x: jnp.interp(x, jnp.linspace(-2, 2, 5), jnp.array([0.0, 1, 0, 2, 1])), (normal(6),)),
        "polyval": (lambda c, x: jnp.polyval(c, x), (normal(4), normal(5))),
        "polymul_add": (lambda a, b: (jnp.polymul(a, b), jnp.polyadd(a, b), jnp.polyder(a), jnp.polyint(a)),
                        (normal(3), normal(3))),
        "cov_corrcoef": (lambda x: (jnp.cov(x), jnp.corrcoef(x)), (normal(3, 6),)),
        "quantile": (lambda x: (jnp.quantile(x, 0.3), jnp.percentile(x, 70.0), jnp.nanquantile(x, 0.5)),
                     (normal(7),)),
        "histogram": (lambda x: jnp.histogram(x, bins=4, range=(-2, 2))[0], (normal(20),)),
        "bincount": (lambda i: jnp.bincount(i, length=6), (ints(10, low=0, high=6),)),
        "unique_size": (lambda i: jnp.unique(i, size=5, fill_value=0), (ints(10, low=0, high=4),)),
        "nonzero_size": (lambda x: jnp.nonzero(x > 0, size=6, fill_value=-1), (normal(10),)),
        "argwhere_size": (lambda x: jnp.argwhere(x > 0, size=6), (normal(10),)),
        "isin": (lambda a, b: jnp.isin(a, b), (ints(6), ints(4))),
        "creation": (lambda x: (jnp.zeros_like(x) + jnp.ones((3, 4), x.dtype), jnp.full_like(x, 2.5),
                                jnp.arange(4.0, dtype=x.dtype), jnp.linspace(0, 1, 5, dtype=x.dtype),
                                jnp.eye(3, dtype=x.dtype), jnp.tri(3, dtype=x.dtype),
                                jnp.logspace(0, 2, 3, dtype=x.dtype), jnp.geomspace(1, 8, 4, dtype=x.dtype)),
                     (m34,)),
        "meshgrid": (lambda a, b: jnp.meshgrid(a, b), (normal(3), normal(4))),
        "vander": (lambda x: jnp.vander(x, 3), (normal(4),)),
        "windows": (lambda x: x * (jnp.hanning(5) + jnp.hamming(5) + jnp.blackman(5) + jnp.bartlett(5)
                                   + jnp.kaiser(5, 3.0)).astype(x.dtype), (V,)),
        "atleast": (lambda x: (jnp.atleast_2d(x), jnp.atleast_3d(x)), (V,)),
        "unwrap": (lambda x: jnp.unwrap(x * 4), (V,)),
        "astype_int": (lambda x: (x * 10).astype(jnp.int32), (m34,)),
        "fill_diagonal": (lambda x: jnp.fill_diagonal(x, 0.0, inplace=False), (normal(3, 3),)),
        "put_along_axis": (lambda x, i: jnp.put_along_axis(x, i, 0.0, axis=1, inplace=False),
                           (m34, ints(3, 1, low=0, high=4))),
        "apply_along_axis": (lambda x: jnp.apply_along_axis(jnp.cumsum, 1, x), (m34,)),
        "piecewise": (lambda x: jnp.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * v]), (m34,)),
        "logsumexp_like": (lambda x: jnp.log(jnp.sum(jnp.exp(x))), (m34,)),
        "packbits": (lambda b: jnp.packbits(b), (bools(16),)),
        "ravel_multi_index": (lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="clip"), (ints(5, low=0, high=3),
                                                                             ints(5, low=0, high=4))),
        "unravel_index": (lambda i: jnp.unravel_index(i, (3, 4)), (ints(5, low=0, high=12),)),
        "cumulative_sum": (lambda x: (jnp.cumulative_sum(x, axis=1), jnp.cumulative_prod(x, axis=1)), (m34,)),
    }
    flat = {"sort", "lexsort", "searchsorted", "digitize", "bincount", "unique_size", "nonzero_size",
            "argwhere_size", "isin", "astype_int", "histogram", "packbits", "ravel_multi_index", "unravel_index",
            "meshgrid", "creation", "partition", "sort_descending"}
    for name, (f, args) in shape_cases.items():
        cases[f"jnp.{name}"] = Case(f, args, grad=name not in flat)
    return cases


def _linalg_cases() -> dict[str, Case]:
    la = jnp.linalg
    m3, s3 = matrix(3), spd(3)
    cases = {
        "inv": (la.inv, (m3,)), "det": (la.det, (m3,)), "det_lu": (la.det, (normal(5, 5),)), "slogdet": (lambda a: la.slogdet(a)[1], (m3,)),
        "solve": (la.solve, (m3, normal(3, 2))), "cholesky": (la.cholesky, (s3,)),
        "qr": (lambda a: la.qr(a)[1], (m3,)), "eigh": (lambda a: la.eigh(a)[0], (s3,)),
        "eigvalsh": (la.eigvalsh, (s3,)), "svdvals": (la.svdvals, (normal(4, 3),)),
        "svd": (lambda a: la.svd(a, compute_uv=False), (normal(4, 3),)),
        "norm": (lambda a, v: (la.norm(v), la.norm(a), la.norm(a, ord=1), la.norm(a, ord=jnp.inf),
                               la.vector_norm(v, ord=3), la.matrix_norm(a)), (m3, V)),
        "norm_2": (lambda a: la.norm(a, ord=2), (m3,)),
        "pinv": (la.pinv, (normal(4, 3),)), "lstsq": (lambda a, b: la.lstsq(a, b)[0], (normal(5, 3), normal(5))),
        "matrix_power": (lambda a: la.matrix_power(a, 3), (m3,)), "matrix_rank": (la.matrix_rank, (m3,)),
        "cond": (la.cond, (m3,)), "multi_dot": (lambda a, b, c: la.multi_dot([a, b, c]), (m3, m3, m3)),
        "eig": (lambda a: jnp.real(la.eigvals(a)), (m3,)), "tensorsolve": (la.tensorsolve, (m3, normal(3))),
        "inv_batched": (la.inv, (matrix(3, (2,)),)), "solve_triangular": (
            lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True), (m3, normal(3, 2))),
        "cho_solve": (lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor((a + a.T) / 2), b),
                      (s3, normal(3))),  # symmetrized: JAX's rule differentiates in symmetric directions only
        "lu": (lambda a: jax.scipy.linalg.lu(a)[2], (m3,)), "lu_pivoting": (jax.scipy.linalg.lu, (normal(4, 4),)),
        "solve_pivoting": (jnp.linalg.solve, (normal(4, 4), normal(4, 2))),
        "expm": (jax.scipy.linalg.expm, (normal(3, 3),)),
    }
    flat = {"matrix_rank"}
    return {f"linalg.{n}": Case(f, a, grad=n not in flat) for n, (f, a) in cases.items()}


def _fft_cases() -> dict[str, Case]:
    f = jnp.fft
    cases = {
        "fft": lambda x: (jnp.abs(f.fft(x)), jnp.real(f.ifft(x))), "rfft": lambda x: jnp.abs(f.rfft(x)),
        "irfft": lambda x: f.irfft(f.rfft(x)), "fft2": lambda x: jnp.real(f.fft2(x)),
        "fftn": lambda x: jnp.imag(f.fftn(x)), "rfft2": lambda x: jnp.abs(f.rfft2(x)),
        "hfft": lambda x: f.hfft(x), "fftshift": lambda x: (f.fftshift(x), f.ifftshift(x)),
        "fftfreq": lambda x: x[0] * f.fftfreq(4, dtype=x.dtype) + f.rfftfreq(4, dtype=x.dtype)[0],
    }
    return {f"fft.{n}": Case(g, (normal(3, 4),)) for n, g in cases.items()}


def _nn_cases() -> dict[str, Case]:
    n = jax.nn
    unary = ["relu", "relu6", "sigmoid", "softplus", "soft_sign", "silu", "swish", "log_sigmoid", "elu", "leaky_relu",
             "hard_tanh", "celu", "selu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "mish", "squareplus",
             "sparse_plus", "sparse_sigmoid", "tanh", "identity"]
    cases = {f"nn.{name}": Case(getattr(n, name), (normal(3, 4),)) for name in unary}
    cases["nn.gelu"] = Case(lambda x: (n.gelu(x), n.gelu(x, approximate=False)), (X,))
    cases["nn.softmax"] = Case(lambda x: (n.softmax(x), n.softmax(x, axis=0), n.log_softmax(x)), (X,))
    cases["nn.logsumexp"] = Case(lambda x: (n.logsumexp(x), n.logsumexp(x, axis=1)), (X,))
    cases["nn.standardize"] = Case(n.standardize, (X,))
    cases["nn.one_hot"] = Case(lambda i: n.one_hot(i, 5), (ints(4, low=0, high=5),), grad=False)
    cases["nn.log1mexp"] = Case(n.log1mexp, (positive(3, 4),))
    cases["nn.dot_product_attention"] = Case(
        lambda q, k, v: n.dot_product_attention(q, k, v), (normal(1, 4, 2, 8), normal(1, 5, 2, 8), normal(1, 5, 2, 8)),
        computes_in="float32")
    return cases


def _special_cases() -> dict[str, Case]:
    s = jss
    domain = {"erf": X, "erfc": X, "erfinv": unit(3, 4), "ndtr": X, "ndtri": prob(3, 4), "log_ndtr": X,
              "expit": X, "logit": prob(3, 4), "gammaln": positive(3, 4), "digamma": positive(3, 4),
              "gamma": positive(3, 4), "i0": X, "i0e": X, "i1": X, "i1e": X, "entr": positive(3, 4),
              "erfcx": X, "dawsn": X, "exp1": positive(3, 4), "expi": positive(3, 4), "spence": positive(3, 4),
              "loggamma": positive(3, 4), "gammasgn": X, "sinc": X}
    cases = {f"special.{n}": Case(getattr(s, n), (a,)) for n, a in domain.items() if hasattr(s, n)}
    two = {"xlogy": (X, positive(3, 4)), "xlog1py": (X, positive(3, 4)), "gammainc": (positive(3, 4), positive(3, 4)),
           "gammaincc": (positive(3, 4), positive(3, 4)), "betaln": (positive(3, 4), positive(3, 4)),
           "beta": (positive(3, 4), positive(3, 4)), "rel_entr": (positive(3, 4), positive(3, 4)),
           "kl_div": (positive(3, 4), positive(3, 4)), "zeta": (above_one(3, 4), positive(3, 4)),
           "poch": (positive(3, 4), positive(3, 4))}
    cases |= {f"special.{n}": Case(getattr(s, n), a) for n, a in two.items()}
    cases["special.betainc"] = Case(s.betainc, (positive(3, 4), positive(3, 4), prob(3, 4)),
                                    grad=False)  # JAX has no gradient in a and b
    cases["special.polygamma"] = Case(lambda x: s.polygamma(1, x), (positive(3, 4),))
    cases["special.logsumexp"] = Case(lambda x, b: s.logsumexp(x, b=b, axis=0), (X, positive(3, 4)))
    cases["special.softmax"] = Case(s.softmax, (X,))
    cases["special.multigammaln"] = Case(lambda x: s.multigammaln(x + 2, 2), (positive(3, 4),))
    return cases


def _lax_cases() -> dict[str, Case]:
    def scan_cumsum(x):
        return lax.scan(lambda c, v: (c * 0.9 + v, jnp.sin(c)), jnp.zeros_like(x[0]), x)

    def fori(x):
        return lax.fori_loop(0, 4, lambda i, c: c * 0.5 + jnp.tanh(c) + i, x)

    def while_(x):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1), (0, x))[1]

    def cond(p, x):
        return lax.cond(p > 0, jnp.sin, jnp.cos, x)

    def switch(i, x):
        return lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME")

    def conv_strided(x, w):
        return lax.conv_general_dilated(x, w, (2, 2), ((1, 0), (0, 1)), rhs_dilation=(1, 2))

    def conv_transpose(x, w):
        return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def conv_nhwc_grouped(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=2)

    cases = {
        "scan": (scan_cumsum, (normal(5, 3),)), "fori_loop": (fori, (X,)), "while_loop": (while_, (X,)),
        "cond": (cond, (normal(), X)), "switch": (switch, (scalar_int(1), X)),
        "conv_general_dilated": (conv, (normal(2, 3, 6, 6), normal(4, 3, 3, 3))),
        "conv_strided_dilated": (conv_strided, (normal(1, 2, 7, 7), normal(3, 2, 3, 2))),
        "conv_transpose": (conv_transpose, (normal(1, 2, 4, 4), normal(3, 2, 3, 3))),
        "conv_nhwc_grouped": (conv_nhwc_grouped, (normal(1, 5, 5, 4), normal(3, 3, 2, 6))),
        "reduce_window_max": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2), "VALID"),
                              (normal(2, 4, 6),)),
        "reduce_window_sum_pad": (lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 3), (1, 1), "SAME"), (X,)),
        "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i, jnp.int32(1)), (2, 2)), (X, scalar_int(1))),
        "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i, jnp.int32(0))),
                                 (X, normal(2, 2), scalar_int(2))),
        "dynamic_index": (lambda x, i: lax.dynamic_index_in_dim(x, i, 1), (X, scalar_int(3))),
        "gather_scatter": (lambda x, i, u: (x[i, i], x.at[i, i].add(u)), (X, ints(3, low=0, high=3), normal(3))),
        "sort_multi": (lambda k, v: lax.sort((k, v), num_keys=1), (normal(6), normal(6))),
        "top_k": (lambda x: lax.top_k(x, 2), (X,)),
        "cumsum": (lambda x: (lax.cumsum(x, 1), lax.cumprod(x, 1), lax.cummax(x, 1), lax.cummin(x, 0),
                              lax.cumlogsumexp(x, 1)), (X,)),
        "cumsum_reverse": (lambda x: lax.cumsum(x, 0, reverse=True), (X,)),
        "argmax": (lambda x: (lax.argmax(x, 1, jnp.int32), lax.argmin(x, 0, jnp.int32)), (X,)),
        "erf": (lambda x: (lax.erf(x), lax.erfc(x)), (X,)),
        "erf_inv": (lax.erf_inv, (unit(3, 4),)),
        "lgamma_digamma": (lambda x: (lax.lgamma(x), lax.digamma(x)), (positive(3, 4),)),
        "igamma": (lambda a, x: (lax.igamma(a, x), lax.igammac(a, x)), (positive(3, 4), positive(3, 4))),
        "random_gamma_grad": (lambda a, x: lax.random_gamma_grad(a, x), (positive(3, 4), positive(3, 4))),
        "bessel_i0e_i1e": (lambda x: (lax.bessel_i0e(x), lax.bessel_i1e(x)), (X,)),
        "polygamma_zeta": (lambda x: (lax.polygamma(jnp.ones_like(x), x), jss.zeta(jnp.full_like(x, 2.5), x)),
                           (positive(3, 4),)),
        "regularized_incomplete_beta": (lambda a, b, x: lax.betainc(a, b, x),
                                        (positive(3, 4), positive(3, 4), prob(3, 4))),
        "nextafter": (lax.nextafter, (X, Y)),
        "rsqrt_logistic": (lambda x: (lax.rsqrt(x), lax.logistic(x), lax.integer_pow(x, 3), lax.square(x)),
                           (positive(3, 4),)),
        "population_count": (lambda i: (lax.population_count(i), lax.clz(i)), (ints(3, 4, low=0, high=999),)),
        "reduce_precision": (lambda x: lax.reduce_precision(x, 5, 10), (X,)),
        "dot_general": (lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                        (normal(2, 3, 4), normal(2, 4, 5))),
        "map": (lambda x: lax.map(lambda r: jnp.sum(r ** 2), x), (X,)),
        "associative_scan": (lambda x: lax.associative_scan(jnp.add, x), (normal(8),)),
        "select_n": (lambda i, x, y: lax.select_n(i, x, y), (bools(3, 4), X, Y)),
        "rem_pow": (lambda x, y: (lax.rem(x, y), lax.pow(y, x)), (X, positive(3, 4))),
        "stop_gradient": (lambda x: x * lax.stop_gradient(x), (X,)),
        "custom_jvp": (lambda x: jax.nn.relu(x) + jax.numpy.linalg.norm(x), (X,)),
        "remat": (jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))), (X,)),
        "vmap": (jax.vmap(lambda r: jnp.dot(r, r)), (X,)),
        "jvp_inside": (lambda x: jax.jvp(jnp.sin, (x,), (jnp.ones_like(x),))[1], (X,)),
        "grad_inside": (lambda x: jax.grad(lambda v: jnp.sum(jnp.tanh(v) ** 2))(x), (X,)),
    }
    flat = {"argmax", "population_count", "sort_multi", "nextafter", "random_gamma_grad",
            "reduce_precision",  # dfc passes reduce_precision's cotangent unrounded, JAX rounds it (importers.md)
            "while_loop",  # JAX has no reverse mode for it (tests/api/test_stablehlo_jax.py compares with jacfwd)
            "regularized_incomplete_beta"}  # nor a gradient in a and b
    return {f"lax.{n}": Case(f, a, grad=n not in flat) for n, (f, a) in cases.items()}


def _random_cases() -> dict[str, Case]:
    r = jax.random
    k = key(0)

    def drawn(draw):
        return lambda kd, x: draw(kd, x.dtype) * x

    cases = {
        "bits": (lambda kd: r.bits(kd, (3, 4)), (k,), False),
        "split_fold_in": (lambda kd: (r.split(kd, 3), r.fold_in(kd, 7)), (k,), False),
        "randint": (lambda kd: r.randint(kd, (3, 4), 0, 10), (k,), False),
        "uniform": (drawn(lambda kd, dt: r.uniform(kd, (3, 4), dt)), (k, X), True),
        "normal": (drawn(lambda kd, dt: r.normal(kd, (3, 4), dt)), (k, X), True),
        "bernoulli": (lambda kd: r.bernoulli(kd, 0.3, (3, 4)), (k,), False),
        "categorical": (lambda kd, x: r.categorical(kd, x), (k, X), False),
        "permutation": (lambda kd, x: r.permutation(kd, x), (k, normal(6)), True),
        "choice": (lambda kd, x: r.choice(kd, x, (3,), replace=False), (k, normal(6)), True),
        "truncated_normal": (drawn(lambda kd, dt: r.truncated_normal(kd, -1.0, 1.0, (3, 4), dt)), (k, X), True),
        "exponential": (drawn(lambda kd, dt: r.exponential(kd, (3, 4), dt)), (k, X), True),
        "gumbel_laplace_logistic": (drawn(lambda kd, dt: r.gumbel(kd, (3, 4), dt) + r.laplace(kd, (3, 4), dt)
                                          + r.logistic(kd, (3, 4), dt)), (k, X), True),
        "gamma": (drawn(lambda kd, dt: r.gamma(kd, jnp.full((3, 4), 2.0, dt))), (k, X), True),
        "beta_dirichlet": (lambda kd, x: r.dirichlet(kd, jnp.ones((3,), x.dtype) + x[0, :3] ** 2), (k, X), True),
        "key_typed": (lambda x: r.normal(r.key(1), (3, 4), x.dtype) * x, (X,), True),
    }
    return {f"random.{n}": Case(f, a, g) for n, (f, a, g) in cases.items()}


CASES: dict[str, Case] = {**_jnp_cases(), **_linalg_cases(), **_fft_cases(), **_nn_cases(), **_special_cases(),
                          **_lax_cases(), **_random_cases()}
