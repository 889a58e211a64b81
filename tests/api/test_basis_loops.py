"""`jacrev` and `jacfwd` of functions whose results and differentiated arguments
are static tensors run one compiled basis loop (`dfc.basis_loops`) per seeded
result or argument, not a call from Python per row: their Jacobians equal
JAX's for several results and both arguments (tests/api/test_forward_transforms.py and
test_transforms_family.py take the loop for the other forms), and the per-row path
(the reference the loop replaced) gives the same numbers."""

import numpy as np
import pytest

import dfc
from dfc import basis_loops, batching
from dfc.transforms import _specialize

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture(autouse=True)
def _x64():
    """JAX in float64 for these tests only (a global switch would change other tests' JAX programs)."""
    with jax.enable_x64(True):
        yield

RNG = np.random.default_rng(5)
X, W = RNG.standard_normal(5), RNG.standard_normal((3, 5))


def two_results(x, w):
    return np.tanh(w @ x) * 2.0, np.sum(x * x)


def two_results_jax(x, w):
    return jnp.tanh(w @ x) * 2.0, jnp.sum(x * x)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_basis_loop_jacobians_equal_jax(transform, argnums=(0, 1)):
    got = getattr(dfc, transform)(two_results, argnums)(X, W)
    want = getattr(jax, transform)(two_results_jax, argnums)(X, W)
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    fn = _specialize(two_results.__dfc_jit__, (X, W), {})[0]
    kind = "rev" if transform == "jacrev" else "fwd"
    assert (kind, (0, 1)) in basis_loops._COMPILED[fn], "the Jacobian did not run as a basis loop"


def test_basis_loop_equals_rows_called_from_python(monkeypatch):
    """The loop's Jacobian and the per-row path's (taken when the loop is not) are equal."""
    looped = dfc.jacrev(two_results, (0, 1))(X, W)
    monkeypatch.setattr("dfc.transforms.batchable", lambda types: False)
    rows = dfc.jacrev(two_results, (0, 1))(X, W)
    for a, b in zip(jax.tree_util.tree_leaves(looped), jax.tree_util.tree_leaves(rows)):
        np.testing.assert_array_equal(a, b)


def layers(x, w1, w2):
    """Matrix products both ways round (their cotangents' and tangents' products batched on either side)."""
    h = np.tanh(x @ w1)
    return np.tanh(h @ w2).T * np.sum(x)


def layers_jax(x, w1, w2):
    return jnp.tanh(jnp.tanh(x @ w1) @ w2).T * jnp.sum(x)


def stepped(x, w):
    """A loop: its Jacobian's seeds batched through scf.for (dfc/batching_control.py) like the layers'."""
    for _ in range(3):
        x = np.tanh(w @ x)
    return x


def stepped_jax(x, w):
    for _ in range(3):
        x = jnp.tanh(w @ x)
    return x


def layers_loss(x, w1, w2):
    return np.sum(np.tanh(np.tanh(x @ w1) @ w2) ** 2 * np.sum(x))


def layers_loss_jax(x, w1, w2):
    return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2 * jnp.sum(x))


def stepped_loss(x, w):
    for _ in range(3):
        x = np.tanh(w @ x)
    return np.sum(x * x)


def stepped_loss_jax(x, w):
    return jnp.sum(stepped_jax(x, w) ** 2)


LAYER_ARGS = (RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)) / 2, RNG.standard_normal((5, 2)) / 2)
STEP_ARGS = (X, RNG.standard_normal((5, 5)) / 2)
SLOW = pytest.mark.slow


@pytest.mark.parametrize("transform, f, f_jax, args, batched", [
    pytest.param("jacrev", layers, layers_jax, LAYER_ARGS, True, marks=SLOW),
    pytest.param("jacfwd", layers, layers_jax, LAYER_ARGS, True, marks=SLOW),
    pytest.param("hessian", layers_loss, layers_loss_jax, LAYER_ARGS, True, marks=SLOW),
    pytest.param("jacrev", stepped, stepped_jax, STEP_ARGS, True, marks=SLOW),
    pytest.param("jacfwd", stepped, stepped_jax, STEP_ARGS, True, marks=SLOW),
    pytest.param("hessian", stepped_loss, stepped_loss_jax, STEP_ARGS, True, marks=SLOW),
], ids=["layers-jacrev", "layers-jacfwd", "layers-hessian", "loop-jacrev", "loop-jacfwd", "loop-hessian"])
def test_seeds_batched_in_one_pass(transform, f, f_jax, args, batched):
    """All seeds in one batched pass of @f_grad/@f_jvp (dfc.batching), the loops' (scf.for, their tapes) too:
    equal to JAX's Jacobians and Hessians, in every argument
    (with --slow: each compiles a module per argument; CI's batched case is the test below)."""
    argnums = tuple(range(len(args)))
    got = getattr(dfc, transform)(f, argnums)(*args)
    want = getattr(jax, transform)(f_jax, argnums)(*args)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14 * np.abs(w).max())
    engines = [e for fn, compiled in list(basis_loops._COMPILED.items()) if fn.name.endswith(f.__name__)
               for e in compiled.values()]
    assert engines and all(any("_batched_" in name for name in e.signatures) == batched for e in engines)


@pytest.mark.parametrize("rows_per_pass", [20, 6])
def test_batched_hessian_on_the_interpreter_equals_jax(monkeypatch, rows_per_pass):
    """The Hessian's basis function batches @grad_f_jvp (a call of the batched @f_grad_jvp, whose maps write
    primal and tangent outputs side by side); on the interpreter (the semantics) it gives JAX's Hessian, in one
    pass of all 20 seeds or, under a smaller `BATCH_BYTES`, in blocks of 6 (the last one 4 rows past the end).
    (The compiled batched passes: the tests above, and test_seeds_batched_in_one_pass with --slow.)"""
    fn, ir_args, _ = dfc.grad(layers_loss, 1).specialize(*LAYER_ARGS)
    module = fn.jvp_module((1,))
    callee = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == f"{fn.name}_jvp")
    row = batching.bytes_per_row(module, callee.sym_name.data, [False] * 3 + [True])
    monkeypatch.setattr(basis_loops, "BATCH_BYTES", row * rows_per_pass)
    monkeypatch.setattr(basis_loops, "seed_bytes", lambda *_: row)  # not measured: blocks of rows_per_pass
    basis_loops.basis_loop(module, callee, 3, 0, [1], "hessian_basis")
    batched = next(op for op in module.ops if op.sym_name.data.startswith(f"{fn.name}_jvp_batched"))
    assert batched.function_type.inputs.data[3].get_shape()[0] == rows_per_pass
    got = np.asarray(dfc.interpret(module, "hessian_basis", *ir_args))
    want = np.asarray(jax.hessian(layers_loss_jax, 1)(*LAYER_ARGS))
    assert got.shape == (20, 4, 5) and want.shape == (4, 5, 4, 5)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-14 * np.abs(want).max())


def pieces(x, w):
    """Ops batched through their pure expansion (a concatenation, a slice, a max against 0, a softmax)."""
    z = w @ x
    e = np.exp(z - np.max(z))
    return np.concatenate([np.maximum(z, 0.0), x[1:4] * 2.0, e / np.sum(e)])


def pieces_jax(x, w):
    z = w @ x
    e = jnp.exp(z - jnp.max(z))
    return jnp.concatenate([jnp.maximum(z, 0.0), x[1:4] * 2.0, e / jnp.sum(e)])


@pytest.mark.parametrize("kind", [pytest.param("rev", marks=SLOW), "fwd"])
def test_expanded_ops_batched_on_the_interpreter(kind):
    """Ops without a batching rule of their own are batched through their expansion: each basis function is
    one batched pass, and on the interpreter it gives JAX's Jacobian (CI: jacfwd's columns; jacrev's rows, 12 s
    on the interpreter, with --slow)."""
    fn, ir_args, _ = _specialize(pieces, (X, W), {})
    module = fn.autodiff_module((0, 1)) if kind == "rev" else fn.jvp_module((0, 1))
    name = f"pieces_{'grad' if kind == 'rev' else 'jvp'}"
    callee = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == name)
    want = [np.asarray(j) for j in (jax.jacrev if kind == "rev" else jax.jacfwd)(pieces_jax, (0, 1))(X, W)]
    if kind == "rev":  # one cotangent seed: the rows of d out / d x and d out / d w
        basis_loops.basis_loop(module, callee, 2, 0, [1, 2], "basis")
        got = dfc.interpret(module, "basis", *ir_args)
    else:  # one tangent seed per argument: the columns of d out / d x, then of d out / d w
        for which in (0, 1):
            basis_loops.basis_loop(module, callee, 2, which, [1], f"basis_{which}")
        got = [np.moveaxis(dfc.interpret(module, f"basis_{k}", *ir_args), 0, -1).reshape(j.shape)
               for k, j in enumerate(want)]
    assert any(op.sym_name.data.startswith(f"{callee.sym_name.data}_batched") for op in module.ops)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14 * np.abs(w).max())


def test_a_function_batched_twice_gets_two_names():
    """Two seeds of one module may batch a callee in the same arguments by different k: two functions."""
    fn, _, _ = _specialize(two_results, (X, W), {})
    module = fn.autodiff_module((0,))
    mask = [False, False, True, False]
    (first, _), (second, _) = (batching.batched(module, "two_results_grad", mask, k) for k in (3, 5))
    assert first != second
    module.verify()
    seeds = {op.sym_name.data: op.function_type.inputs.data[2] for op in module.ops
             if op.sym_name.data in (first, second)}
    assert seeds[first].get_shape()[0] == 3 and seeds[second].get_shape()[0] == 5
