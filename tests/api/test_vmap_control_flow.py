"""`dfc.vmap` through control flow (dfc/batching_control.py): `scf.for`, `scf.while` with a trip count per
lane (every lane runs until the last is done, a finished lane masked), `scf.if` with a predicate per lane
(both branches, a select per lane), compared in float64 with `jax.vmap` of the same program written with
`lax.fori_loop`/`while_loop`/`cond`, and with a Python loop of NumPy over the batch; `vmap` of `grad` and
the gradient of `vmap` against JAX's forward mode (JAX refuses reverse mode through `while_loop`).

The default run compiles one batched function against NumPy (its `while` ends when the last lane is done:
the compiled `wcr(max)` over booleans of dfc/passes/wcr_arith.py, which gave false before it was fixed);
with --slow, every case against JAX, on the interpreter (the semantics) and compiled."""

import numpy as np
import pytest
from xdsl.dialects import func

import dfc
from dfc.compiler.interpreter import interpret

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture(autouse=True)
def _x64():
    """JAX in float64 for these tests only."""
    with jax.enable_x64(True):
        yield


def control(x, w):
    """A loop, a convergence loop (its trip count per lane: 0 to 4 here) with a float and an index counter
    (a batched scalar, read by a map), a branch."""
    for _ in range(3):
        x = np.tanh(x * w) + 0.5 * x
    s = 1.0
    n = 0
    while np.sum(x * x) > 0.5 and n < 10:
        x = x * 0.7
        s = s * 1.5
        n += 1
    if np.sum(x) > 0.0:
        y = np.sin(x) * s
    else:
        y = x * x * s
    return np.sum(y * w) * (n + 1.0)


def control_jax(x, w):
    x = jax.lax.fori_loop(0, 3, lambda i, x: jnp.tanh(x * w) + 0.5 * x, x)
    x, s, n = jax.lax.while_loop(lambda c: (jnp.sum(c[0] * c[0]) > 0.5) & (c[2] < 10),
                                 lambda c: (c[0] * 0.7, c[1] * 1.5, c[2] + 1), (x, 1.0, 0))
    y = jax.lax.cond(jnp.sum(x) > 0.0, lambda x: jnp.sin(x) * s, lambda x: x * x * s, x)
    return jnp.sum(y * w) * (n + 1.0)


def branchy(x, w):
    """No data-dependent loop: its gradient has no replayed trip count, so vmap(grad) batches it."""
    for _ in range(2):
        x = np.tanh(x * w)
    if np.sum(x) > 0.0:
        y = np.sin(x)
    else:
        y = x * x
    return np.sum(y * w)


def branchy_jax(x, w):
    x = jax.lax.fori_loop(0, 2, lambda i, x: jnp.tanh(x * w), x)
    return jnp.sum(jax.lax.cond(jnp.sum(x) > 0.0, jnp.sin, lambda x: x * x, x) * w)


RNG = np.random.default_rng(3)
XS, W = RNG.normal(size=(8, 4)), RNG.normal(size=4)
CONTROL, BRANCHY = dfc.jit(control), dfc.jit(branchy)


def _close(got, want):
    want = np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * np.abs(want).max())


def _run(transformed, compiled, *args):
    """The transformed function's result: compiled, or its IR on the interpreter."""
    fn, ir_args, _ = transformed.specialize(*args)
    return fn(*ir_args) if compiled else interpret(fn.module, fn.name, *ir_args)


def test_trip_counts_differ_between_lanes():
    """The batch exercises the masking: lanes take different numbers of steps, and both branches."""
    steps = []
    for x in XS:
        for _ in range(3):
            x = np.tanh(x * W) + 0.5 * x
        n = 0
        while np.sum(x * x) > 0.5:
            x, n = x * 0.7, n + 1
        steps.append((n, np.sum(x) > 0))
    assert len({n for n, _ in steps}) >= 3 and len({b for _, b in steps}) == 2


def test_vmap_equals_a_loop_over_the_batch():
    """Compiled: the batched function equals NumPy run lane by lane."""
    _close(dfc.vmap(CONTROL, in_axes=(0, None))(XS, W), np.stack([control(x, W) for x in XS]))


@pytest.mark.slow
@pytest.mark.parametrize("compiled", [False, True])
def test_vmap_equals_jax_vmap(compiled):
    _close(_run(dfc.vmap(CONTROL, in_axes=(0, None)), compiled, XS, W), jax.vmap(control_jax, (0, None))(XS, W))


@pytest.mark.slow
@pytest.mark.parametrize("compiled", [False, True])
def test_vmap_of_grad_equals_jax(compiled):
    got = _run(dfc.vmap(dfc.grad(BRANCHY, (0, 1)), in_axes=(0, None)), compiled, XS, W)
    want = jax.vmap(jax.grad(branchy_jax, (0, 1)), (0, None))(XS, W)
    for g, w in zip(got, want, strict=True):
        _close(g, w)


@pytest.mark.slow
@pytest.mark.parametrize("compiled", [False, True])
def test_gradient_of_vmap_through_a_masked_while_equals_jax(compiled):
    """The reverse pass through the batched loop (its recorded trip count, the masks' selects) equals JAX's
    forward mode of jax.vmap (in every lane and in the shared weights)."""
    fn, args, _ = dfc.vmap(CONTROL, in_axes=(0, None)).specialize(XS, W)
    seed = np.ones(len(XS))
    if compiled:
        _, gx, gw = fn.gradient([0, 1])(*args, seed)
    else:
        _, gx, gw = interpret(fn.autodiff_module((0, 1)), f"{fn.name}_grad", *args, seed)
    want = jax.jacfwd(lambda xs, w: jnp.sum(jax.vmap(control_jax, (0, None))(xs, w)), (0, 1))(XS, W)
    _close(gx, want[0])
    _close(gw, want[1])


def newton_sqrt(a):
    """Imported from JAX: a while loop carrying an integer counter, then a branch."""
    def step(c):
        x, n = c
        return 0.5 * (x + a / x), n + 1

    x, n = jax.lax.while_loop(lambda c: jnp.max(jnp.abs(c[0] * c[0] - a)) > 1e-12, step, (a, 0))
    return jax.lax.cond(n > 5, lambda: x * n, lambda: x - n)


@pytest.mark.slow
@pytest.mark.parametrize("compiled", [False, True])
def test_vmap_of_an_imported_jax_while_loop_equals_jax_vmap(compiled):
    a = np.array([[0.5, 2.0], [30.0, 4.0], [1e4, 9.0], [1.0, 1.0]])
    got = _run(dfc.vmap(dfc.from_jax(newton_sqrt, a[0])), compiled, a)
    _close(got, jax.vmap(newton_sqrt)(a))


def gated(a, w):
    """Batched in w only: a loop whose carried value becomes batched (its initial value is not), a while
    and a branch whose conditions do not vary with the batch (one trip count, one branch) around batched
    values."""
    z = a
    for _ in range(2):
        z = np.tanh(z * w) + a
    n = 0
    while n < 3:
        z = z * 0.5 + a
        n += 1
    if np.sum(a) > 0.0:
        y = np.sin(z) * w
    else:
        y = z * 2.0
    return y, a * 2.0


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.slow)])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_conditions_that_do_not_vary_with_the_batch(compiled, sign):
    """An unbatched result (a * 2) comes back repeated along the batch, as jax.vmap's out_axes=0 does."""
    a = sign * np.abs(W)
    y, twice = _run(dfc.vmap(dfc.jit(gated), in_axes=(None, 0)), compiled, a, XS)
    for lane, w in enumerate(XS):
        _close(y[lane], gated(a, w)[0])
        _close(twice[lane], a * 2.0)


def test_in_and_out_axes_move_the_batch():
    got = _run(dfc.vmap(CONTROL, in_axes=(1, None), out_axes=0), False, XS.T.copy(), W)
    _close(got, np.stack([control(x, W) for x in XS]))


@pytest.mark.slow
def test_vmap_of_grad_through_a_data_dependent_while_is_refused_at_the_loop():
    """The gradient replays the while loop as an scf.for of the recorded trip count, which would vary with
    the batch: refused, at the user's line, rather than run per lane."""
    with pytest.raises(dfc.CompileError, match="trip count that varies with the batch") as err:
        dfc.vmap(dfc.grad(CONTROL), in_axes=(0, None)).specialize(XS, W)
    assert "while np.sum(x * x) > 0.5" in str(err.value)


def test_keyword_arguments_are_refused():
    """jax.vmap maps keyword arguments over axis 0; rather than differ silently, vmap asks for them positionally."""
    with pytest.raises(TypeError, match="pass w positionally"):
        dfc.vmap(CONTROL)(XS, w=W)


def test_branch_with_side_effects_and_a_batched_predicate_is_refused():
    module = dfc.parse_module("""
    func.func private @log(tensor<f64>)
    func.func @f(%x: tensor<f64>) -> tensor<f64> {
      %t = nn.compare %x, %x {direction = "GT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %p = tensor.extract %t[] : tensor<i1>
      %r = scf.if %p -> (tensor<f64>) {
        func.call @log(%x) : (tensor<f64>) -> ()
        scf.yield %x : tensor<f64>
      } else {
        scf.yield %x : tensor<f64>
      }
      func.return %r : tensor<f64>
    }""")
    assert any(isinstance(op, func.FuncOp) and op.is_declaration for op in module.ops)
    with pytest.raises(dfc.CompileError, match="scf.if.*|side effects"):
        dfc.vmap(dfc.Function(module, "f")).specialize(np.zeros(3))


def _helper(x, w):
    if np.max(x) > 0.3:
        return np.tanh(x * w)
    return x * 0.9


def nested(x, w, m):
    """Loops and branches nested, a helper with a branch, lanes leaving the inner while at different trips."""
    t = 0.0
    for i in range(3):
        k = 0
        while np.sum(np.abs(x)) > 0.2 * (i + 1) and k < 6:
            x = _helper(x, w)
            if np.sum(x) > 0.0:
                t = t + np.sum(x)
            else:
                t = t - 1.0
            for j in range(2):
                x = x * m[j]
            k += 1
        x = x + 0.1 * i
    return x * t


@pytest.mark.slow
@pytest.mark.parametrize("axes", [(0, None, 0), (0, None, None), (None, 0, None)])
def test_nested_control_flow_equals_a_loop_over_the_batch(axes):
    ms = np.abs(RNG.normal(size=(len(XS), 2))) * 0.8 + 0.2
    ws = np.stack([W * (1 + 0.1 * i) for i in range(len(XS))])
    args = [XS if axes[0] == 0 else XS[0], ws if axes[1] == 0 else W, ms if axes[2] == 0 else ms[0]]
    want = np.stack([nested(*(a[i] if ax == 0 else a for a, ax in zip(args, axes))) for i in range(len(XS))])
    for compiled in (False, True):
        _close(_run(dfc.vmap(dfc.jit(nested), in_axes=axes), compiled, *args), want)


def damped(x, w):
    while np.sum(x * x) > 0.5:
        x = np.sin(x * w) * 0.7
    return np.tanh(x) * 2.0


def damped_jax(x, w):
    x = jax.lax.while_loop(lambda x: jnp.sum(x * x) > 0.5, lambda x: jnp.sin(x * w) * 0.7, x)
    return jnp.tanh(x) * 2.0


@pytest.mark.slow
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_through_a_data_dependent_while_in_one_batched_pass(transform):
    """The seeds do not change the trip count: @f_grad's replayed loop and its tape are batched in the seeds."""
    from dfc import basis_loops

    x, w = np.array([1.0, -0.8, 0.9]), np.array([1.1, 0.9, 1.3])
    got = getattr(dfc, transform)(damped, (0, 1))(x, w)
    for g, want in zip(got, jax.jacfwd(damped_jax, (0, 1))(x, w), strict=True):
        _close(g, want)
    engines = [e for fn, compiled in list(basis_loops._COMPILED.items()) if fn.name.endswith("damped")
               for e in compiled.values()]
    assert engines and all(any("_batched_" in name for name in e.signatures) for e in engines)


def deep(x, w1, w2):
    return np.tanh(np.tanh(x @ w1) @ w2)


@pytest.mark.slow
def test_seed_blocks_measured_hold_the_budget(monkeypatch):
    """Past `BATCH_BYTES` the Jacobian's seeds go in blocks sized by the measured bytes per seed
    (`basis_loops.seed_bytes`), not the model (every seeded value alive at once, more than measured here):
    larger blocks (20 of the 32 seeds), whose whole pass measures within the budget; the compiled Jacobian
    equals JAX's."""
    from dfc import basis_loops, batching
    from dfc.compiler.engine import lower
    from dfc.passes.resident_memory import resident_bytes

    args = (RNG.normal(size=(8, 8)), RNG.normal(size=(8, 16)) / 2, RNG.normal(size=(16, 4)) / 2)
    fn, ir_args, _ = dfc.jit(deep).specialize(*args)
    module = fn.autodiff_module((1,))
    callee = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == f"{fn.name}_grad")
    mask = [False] * 3 + [True]
    model = batching.bytes_per_row(module, callee.sym_name.data, mask)
    per_seed = basis_loops.seed_bytes(module, callee.sym_name.data, mask, 10**9)
    monkeypatch.setattr(basis_loops, "BATCH_BYTES", 20 * per_seed)
    assert 20 * per_seed // model < 20
    basis_loops.basis_loop(module, callee, 3, 0, [1], "jacobian_rows")
    batched = next(op for op in module.ops if op.sym_name.data.startswith(f"{fn.name}_grad_batched"))
    assert batched.function_type.inputs.data[3].get_shape()[0] == 20
    assert resident_bytes(lower(module, 1), batched.sym_name.data, 1) <= 20 * per_seed
    got = np.asarray(dfc.Function(module, "jacobian_rows")(*ir_args)).reshape(8, 4, 8, 16)
    want = jax.jacrev(lambda x, w1, w2: jnp.tanh(jnp.tanh(x @ w1) @ w2), 1)(*args)
    _close(got, want)


def growth_loss(x, w):
    """A data-dependent while: 7 trips for x0, 10 for x0 / 2."""
    h, p = x.copy(), w.copy()
    while np.sum(h) < 20.0:
        h, p = h * w + x, p * np.tanh(h)
    return np.sum(h * p)


def _central(f, args, k, eps=1e-6):
    g = np.zeros_like(args[k])
    for i in range(g.size):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[k][i] += eps
        minus[k][i] -= eps
        g[i] = (f(*plus) - f(*minus)) / (2 * eps)
    return g


@pytest.mark.slow
def test_a_replayed_while_tapes_or_recomputes_at_run_time_within_its_budget():
    """Under a budget, a replayed while's tape holds at most the rows the budget leaves (8 here), chosen at run
    time: 7 trips are taped, 10 recomputed, by the same compiled gradient; both equal the stored gradient
    (to 1e-14: other code, compiled with fast math) and central differences, and its measured memory (the
    tape at its bound) holds the budget."""
    from xdsl.dialects import arith

    from dfc.memory_budget import measured_bytes

    w, x0 = np.array([1.1, 1.3, 0.9, 1.2]), np.array([0.3, 0.5, 0.2, 0.4])
    budget = 1400
    fn, _, _ = dfc.grad(growth_loss, (0, 1), memory_budget=budget).specialize(x0, w)
    caps = [op.rhs.owner.value.value.data for op in fn.module.walk() if isinstance(op, arith.MinUIOp)]
    assert caps == [8]  # between the two trip counts: both paths run
    assert measured_bytes(fn) <= budget
    for x in (x0, x0 / 2):
        got = dfc.grad(growth_loss, (0, 1), memory_budget=budget)(x, w)
        stored = dfc.grad(growth_loss, (0, 1))(x, w)
        for k, (g, s) in enumerate(zip(got, stored, strict=True)):
            np.testing.assert_allclose(g, s, rtol=1e-14)
            np.testing.assert_allclose(g, _central(growth_loss, [x, w], k), rtol=1e-7)
