"""Gradient cost: time(f_grad) / time(f) for dfc, PyTorch and JAX, in one run.

    python benchmarks/autodiff_cost.py [--quick]

mlp (the example's sizes), softmax_loss over 4096x4096 and jacobi2d over
512x512 for 200 steps. Each line shows forward and gradient times and their
ratio per framework (JAX: jit of the function and jit of its grad;
torch.compile: inductor's forward, and through AOTAutograd its backward, for
the mlp and softmax_loss; jacobi2d's 200 unrolled steps are left out).
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import median_time, optional
from benchmarks.cpu_kernels import scaled_example
from dfc.compiler import ExecutionEngine, PassManager, parse_module


def dfc_pair(text: str, name: str, args: list, seed_dtype, repeats: int = 5) -> tuple[float, float]:
    module = parse_module(text)
    PassManager.parse(f"autodiff{{func={name}}}").run(module)
    engine = ExecutionEngine(module)
    seed = np.array(1.0, seed_dtype)
    forward = median_time(lambda: engine.invoke(name, *args), repeats=repeats)
    backward = median_time(lambda: engine.invoke(f"{name}_grad", *args, seed), repeats=repeats)
    return forward, backward


def fmt(label: str, pairs: dict[str, tuple[float, float] | None]) -> str:
    cells = []
    for name, pair in pairs.items():
        if pair is None:
            cells.append(f"{name}: n/a")
        else:
            f, g = pair
            cells.append(f"{name}: f {f * 1e3:7.2f} ms, grad {g * 1e3:7.2f} ms ({g / f:4.2f}x)")
    return f"{label:<22}" + " | ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch, jax = optional("torch"), optional("jax")
    if jax is not None:
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    rows, size, steps = (512, 128, 20) if args.quick else (4096, 512, 200)

    # mlp
    shapes = [(120, 784), (120,), (32, 120), (32,), (10, 32), (10,)]
    params = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in shapes]
    x, labels = rng.standard_normal((8, 784)).astype(np.float32), rng.integers(0, 10, 8)
    tiny = 201  # calls of well under a millisecond: many repeats for a stable median
    pairs = {"dfc": dfc_pair(open("examples/mlp.mlir").read(), "mlp", [x, labels, *params], np.float32, tiny)}
    if torch:
        tp = [torch.tensor(p, requires_grad=True) for p in params]
        tx, tl = torch.tensor(x, requires_grad=True), torch.tensor(labels)

        def tf():
            h = torch.relu(torch.nn.functional.linear(tx, tp[0], tp[1]))
            h = torch.relu(torch.nn.functional.linear(h, tp[2], tp[3]))
            return torch.nn.functional.nll_loss(torch.log_softmax(torch.nn.functional.linear(h, tp[4], tp[5]), -1), tl)

        def tg():
            loss = tf()
            return torch.autograd.grad(loss, [tx, *tp])

        pairs["torch"] = (median_time(lambda: tf().item(), repeats=tiny), median_time(tg, repeats=tiny))
        ctf = torch.compile(tf)  # inductor: the forward, and through AOTAutograd the backward
        pairs["torch.compile"] = (median_time(lambda: ctf().item(), repeats=tiny),
                                  median_time(lambda: torch.autograd.grad(ctf(), [tx, *tp]), repeats=tiny))
    if jax is not None:
        def jf(x, *p):
            h = jax.nn.relu(x @ p[0].T + p[1])
            h = jax.nn.relu(h @ p[2].T + p[3])
            logp = jax.nn.log_softmax(h @ p[4].T + p[5], -1)
            return -logp[jnp.arange(8), labels].mean()

        jp = [jnp.asarray(p) for p in params]
        f, g = jax.jit(jf), jax.jit(jax.grad(jf, argnums=tuple(range(7))))
        pairs["jax"] = (median_time(lambda: f(x, *jp).block_until_ready(), repeats=tiny),
                        median_time(lambda: jax.block_until_ready(g(x, *jp)), repeats=tiny))
    print(fmt("mlp 8x784", pairs))

    # softmax_loss
    text = scaled_example("softmax", {"64x512": f"{rows}x{rows}", "64xf32": f"{rows}xf32", "in (64, 512)": f"in ({rows}, {rows})", "in (64)": f"in ({rows})"})
    a, w = rng.standard_normal((rows, rows)).astype(np.float32), rng.standard_normal((rows, rows)).astype(np.float32)
    pairs = {"dfc": dfc_pair(text, "softmax_loss", [a, w], np.float32)}
    if torch:
        ta, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
        loss = lambda p, q: (torch.softmax(p, -1) * q).sum()  # noqa: E731
        for name, fn in (("torch", loss), ("torch.compile", torch.compile(loss))):
            pairs[name] = (median_time(lambda fn=fn: fn(ta, tw).item(), repeats=5),
                           median_time(lambda fn=fn: torch.autograd.grad(fn(ta, tw), [ta, tw]), repeats=5))
    if jax is not None:
        sf = lambda p, q: (jax.nn.softmax(p, -1) * q).sum()  # noqa: E731
        ja, jw = jnp.asarray(a), jnp.asarray(w)
        f, g = jax.jit(sf), jax.jit(jax.grad(sf, argnums=(0, 1)))
        pairs["jax"] = (median_time(lambda: f(ja, jw).block_until_ready(), repeats=5),
                        median_time(lambda: jax.block_until_ready(g(ja, jw)), repeats=5))
    print(fmt(f"softmax {rows}^2", pairs))

    # jacobi2d
    text = scaled_example("jacobi2d", {"64x64": f"{size}x{size}", "(62, 62)": f"({size - 2}, {size - 2})", "(64, 64)": f"({size}, {size})", "arith.constant 20 : index": f"arith.constant {steps} : index"})
    grid = rng.standard_normal((size, size))
    pairs = {"dfc": dfc_pair(text, "jacobi2d", [grid], np.float64)}

    def sweep(p):
        q = p.clone()
        q[1:-1, 1:-1] = 0.2 * (p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[2:, 1:-1] + p[:-2, 1:-1])
        r = p.clone()
        r[1:-1, 1:-1] = 0.2 * (q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[2:, 1:-1] + q[:-2, 1:-1])
        return r

    if torch:
        tgr = torch.tensor(grid, requires_grad=True)

        def tj():
            p = tgr
            for _ in range(steps):
                p = sweep(p)
            return p.sum()

        pairs["torch"] = (median_time(lambda: tj().item(), repeats=3), median_time(lambda: torch.autograd.grad(tj(), [tgr]), repeats=3))
    if jax is not None:
        def step(p, _):
            q = p.at[1:-1, 1:-1].set(0.2 * (p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[2:, 1:-1] + p[:-2, 1:-1]))
            return q.at[1:-1, 1:-1].set(0.2 * (q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[2:, 1:-1] + q[:-2, 1:-1])), None

        jj = lambda p: jax.lax.scan(step, p, None, length=steps)[0].sum()  # noqa: E731
        jg = jnp.asarray(grid)
        f, g = jax.jit(jj), jax.jit(jax.grad(jj))
        pairs["jax"] = (median_time(lambda: f(jg).block_until_ready(), repeats=3),
                        median_time(lambda: g(jg).block_until_ready(), repeats=3))
    print(fmt(f"jacobi2d {size}^2 x{steps}", pairs))


if __name__ == "__main__":
    main()
