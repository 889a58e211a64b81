"""Second-order and Jacobian transforms: dfc, JAX and PyTorch (torch.func) in one run.

    python -m benchmarks.second_order [--quick]

Rows, float64, each time the median of warm calls (compilation excluded):

* Hessian-vector product of an MLP loss (`sum(tanh(tanh(x W1) W2) ** 2)`, 64x256-128-10;
  all three forward over reverse: `dfc.hvp`, `jax.jvp(jax.grad)` under `jax.jit`,
  `torch.func.jvp(torch.func.grad)`);
* Hessian-vector product of a stencil loss (50 steps of 1-d Jacobi with tanh on 512 points);
* the Jacobian of `tanh(W x) * 2` (64 -> 64) by reverse mode: `dfc.jacrev`, `jax.jit(jax.jacrev)`,
  `torch.func.jacrev`;
* the Hessian of `sum(tanh(W x) ** 2)` for 32 inputs: `dfc.hessian`, `jax.jit(jax.hessian)`,
  `torch.func.hessian`.

Each framework's time and JAX's time divided by it (above 1: faster than JAX). The dfc and JAX results are checked equal
(relatively, 1e-9) before timing.
"""

from __future__ import annotations

import argparse

import numpy as np

import dfc
from benchmarks.common import median_time, optional, row


def mlp_loss(x, w1, w2):
    h = np.tanh(x @ w1)
    return np.sum(np.tanh(h @ w2) ** 2)


STEPS = 50


def stencil_loss(a):
    for _ in range(STEPS):
        a[1:-1] = np.tanh(0.33 * (a[:-2] + a[1:-1] + a[2:]))
    return np.sum(a * a)


def tall(x, w):
    return np.tanh(w @ x) * 2.0


def squared(x, w):
    return np.sum(np.tanh(w @ x) ** 2)


def _times(cases: dict, repeats: int) -> dict[str, float | None]:
    return {k: None if f is None else median_time(f, repeats=repeats) for k, f in cases.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and fewer repeats")
    quick = parser.parse_args().quick
    repeats = 3 if quick else 7
    jax, torch = optional("jax"), optional("torch")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        jnp = jax.numpy
    rng = np.random.default_rng(0)
    batch, width = (16, 64) if quick else (64, 256)
    x, w1, w2 = rng.standard_normal((batch, width)), rng.standard_normal((width, 128)) / 16, \
        rng.standard_normal((128, 10)) / 11
    tangents = [rng.standard_normal(a.shape) for a in (x, w1, w2)]
    points, steps = (128 if quick else 512), STEPS
    a, da = rng.standard_normal(points), rng.standard_normal(points)
    n = 16 if quick else 64
    xs, ws = rng.standard_normal(n), rng.standard_normal((n, n)) / np.sqrt(n)
    hx, hw = rng.standard_normal(32), rng.standard_normal((8, 32)) / 6

    rows = {}
    mlp, stencil_label = f"hvp mlp {batch}x{width}-128-10", f"hvp stencil {points} x{steps}"
    rows[mlp] = {"dfc": lambda: dfc.hvp(mlp_loss, (x, w1, w2), tangents)}
    rows[stencil_label] = {"dfc": lambda: dfc.hvp(stencil_loss, (a.copy(),), (da,))}
    rows[f"jacrev {n}->{n}"] = {"dfc": lambda: dfc.jacrev(tall)(xs, ws)}
    rows["hessian 32 inputs"] = {"dfc": lambda: dfc.hessian(squared)(hx, hw)}
    checks = {f"jacrev {n}->{n}": dfc.jacrev(tall)(xs, ws), "hessian 32 inputs": dfc.hessian(squared)(hx, hw),
              mlp: dfc.hvp(mlp_loss, (x, w1, w2), tangents), stencil_label: dfc.hvp(stencil_loss, (a.copy(),), (da,))}
    if jax is not None:
        def j_mlp(x, w1, w2):
            return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2)

        def j_stencil(a):
            for _ in range(steps):
                a = a.at[1:-1].set(jnp.tanh(0.33 * (a[:-2] + a[1:-1] + a[2:])))
            return jnp.sum(a * a)

        jhvp = jax.jit(lambda p, t: jax.jvp(jax.grad(j_mlp, (0, 1, 2)), p, t)[1])
        shvp = jax.jit(lambda p, t: jax.jvp(jax.grad(j_stencil), (p,), (t,))[1])
        jjac = jax.jit(jax.jacrev(lambda x, w: jnp.tanh(w @ x) * 2.0))
        jhes = jax.jit(jax.hessian(lambda x, w: jnp.sum(jnp.tanh(w @ x) ** 2)))
        want = {mlp: jhvp((x, w1, w2), tuple(tangents)), stencil_label: shvp(a, da),
                f"jacrev {n}->{n}": jjac(xs, ws), "hessian 32 inputs": jhes(hx, hw)}
        for label, got in checks.items():
            for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want[label])):
                np.testing.assert_allclose(g, np.asarray(w), rtol=1e-9, atol=1e-12 * np.abs(np.asarray(w)).max())
        rows[mlp]["jax"] = lambda: jax.block_until_ready(jhvp((x, w1, w2), tuple(tangents)))
        rows[stencil_label]["jax"] = lambda: jax.block_until_ready(shvp(a, da))
        rows[f"jacrev {n}->{n}"]["jax"] = lambda: jjac(xs, ws).block_until_ready()
        rows["hessian 32 inputs"]["jax"] = lambda: jhes(hx, hw).block_until_ready()
    if torch is not None:
        from torch.func import grad, hessian, jacrev, jvp

        t = [torch.from_numpy(v) for v in (x, w1, w2)]
        tt = [torch.from_numpy(v) for v in tangents]

        def t_mlp(x, w1, w2):
            return torch.sum(torch.tanh(torch.tanh(x @ w1) @ w2) ** 2)

        def t_stencil(a):
            for _ in range(steps):
                a = torch.cat([a[:1], torch.tanh(0.33 * (a[:-2] + a[1:-1] + a[2:])), a[-1:]])
            return torch.sum(a * a)

        ta, tda = torch.from_numpy(a), torch.from_numpy(da)
        txs, tws, thx, thw = (torch.from_numpy(v) for v in (xs, ws, hx, hw))
        rows[mlp]["torch"] = lambda: jvp(grad(t_mlp, (0, 1, 2)), tuple(t), tuple(tt))
        rows[stencil_label]["torch"] = lambda: jvp(grad(t_stencil), (ta,), (tda,))
        rows[f"jacrev {n}->{n}"]["torch"] = lambda: jacrev(lambda x: torch.tanh(tws @ x) * 2.0)(txs)
        rows["hessian 32 inputs"]["torch"] = lambda: hessian(lambda x: torch.sum(torch.tanh(thw @ x) ** 2))(thx)
    for label, cases in rows.items():
        for name in ("dfc", "jax", "torch"):
            cases.setdefault(name, None)
        times = _times(cases, repeats)
        print(row(label, times, baseline="jax" if times.get("jax") else "dfc"), flush=True)


if __name__ == "__main__":
    main()
