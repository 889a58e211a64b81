"""The JAX programs the StableHLO importer is tested on, with example arguments.

`python tests/support/jax_programs.py` rewrites `tests/data/stablehlo/<name>.mlir`, the
StableHLO text JAX prints for each (`jax.jit(f).lower(*args).as_text()`), so
that the FileCheck tests and the jax-free tests run without JAX.
"""

from __future__ import annotations

import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parents[1] / "data" / "stablehlo"


def programs():
    """name -> (function, example arguments as numpy arrays, seeded)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def mlp(x, w1, b1, w2, b2):
        h = jax.nn.relu(x @ w1 + b1)
        return jnp.sum(jnp.tanh(h @ w2 + b2))

    def softmax_xent(logits, labels):
        lp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(lp, labels[:, None], axis=1))

    def attention(x, wq, wk, wv, wo):
        b, t, d = x.shape
        h = 2

        def heads(y):
            return y.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)

        q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
        p = jax.nn.softmax(jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // h), axis=-1)
        o = jnp.einsum("bhqk,bhkd->bhqd", p, v).transpose(0, 2, 1, 3).reshape(b, t, d)
        return jnp.sum(jnp.tanh(o @ wo))

    def convnet(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.relu(y + b[None, :, None, None])
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return jnp.mean(y * y)

    def jacobi2d(a):
        def sweep(i, a):
            return a.at[1:-1, 1:-1].set(0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]))

        return jnp.sum(lax.fori_loop(0, 4, sweep, a) ** 2)

    def lstm(xs, h0, c0, w, u, b):
        def cell(carry, x):
            h, c = carry
            i, f, g, o = jnp.split(x @ w + h @ u + b, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        (_, c), hs = lax.scan(cell, (h0, c0), xs)
        return jnp.sum(hs) + jnp.sum(c * c)

    def branch_argmax(x, p):
        y = lax.cond(p > 0, jnp.sin, jnp.cos, x)
        return jnp.sum(y * y), jnp.argmax(x)

    def library(x, y, ids):
        """jax.nn and jnp functions that lower to is_finite, reduce_window (cumsum), iota
        (one_hot), clamp, select, round_nearest_even, log_plus_one."""
        a = jax.nn.logsumexp(x, axis=-1)
        b = jnp.cumsum(y, axis=0)
        c = jax.nn.one_hot(ids, x.shape[1]) * x
        d = jnp.clip(x, -0.5, 0.5) + jnp.where(x > 0, x, 0.1 * x)
        e = jax.nn.gelu(x) + jax.nn.softplus(x) + jax.nn.silu(x) + jnp.round(3 * x)
        f = jnp.maximum(x, 0).max(axis=0) + jnp.abs(y).min()
        return jnp.sum(a) + jnp.sum(b) + jnp.sum(c) + jnp.sum(d) + jnp.sum(e) + jnp.sum(f) + jnp.mean(x.T @ y[:, :5])

    def newton_sqrt(x):
        def cond(c):
            y, i = c
            return jnp.logical_and(jnp.max(jnp.abs(y * y - x)) > 1e-5, i < 50)

        def body(c):
            y, i = c
            return 0.5 * (y + x / y), i + 1

        y, _ = lax.while_loop(cond, body, (x, 0))
        return jnp.sum(y)

    return {
        "mlp": (mlp, [normal(4, 8), normal(8, 16), normal(16), normal(16, 3), normal(3)]),
        "softmax_xent": (softmax_xent, [normal(4, 5), rng.integers(0, 5, 4).astype(np.int32)]),
        "attention": (attention, [normal(2, 3, 4), normal(4, 4), normal(4, 4), normal(4, 4), normal(4, 4)]),
        "convnet": (convnet, [normal(2, 3, 6, 6), normal(4, 3, 3, 3), normal(4)]),
        "jacobi2d": (jacobi2d, [normal(8, 8)]),
        "lstm": (lstm, [normal(5, 2, 3), normal(2, 4), normal(2, 4), normal(3, 16), normal(4, 16), normal(16)]),
        "branch_argmax": (branch_argmax, [normal(6), np.array(0.5, np.float32)]),
        "library": (library, [normal(4, 5), normal(4, 6), rng.integers(0, 5, 4).astype(np.int32)]),
        "newton_sqrt": (newton_sqrt, [rng.uniform(1, 4, 4).astype(np.float32)]),
    }


def main() -> None:
    import jax

    DATA.mkdir(parents=True, exist_ok=True)
    for name, (f, args) in programs().items():
        (DATA / f"{name}.mlir").write_text(jax.jit(f).lower(*args).as_text())


if __name__ == "__main__":
    main()
