"""The JAX transform family (`grad`/`value_and_grad` with `has_aux`, nested
`grad`, `jacrev`, `hessian`, `hvp`) against JAX in float64 and against float64
finite differences, on NumPy-frontend functions (the frontend corpus, traced by
JAX from the same source with `np` bound to `jax.numpy`), imported JAX
programs, an ONNX model and an IR `Function`. Relative errors: |got - want| <= 1e-9 |want|
elementwise, with an absolute floor of 1e-12 times the largest |want|."""

import types
from pathlib import Path

import numpy as np
import pytest
from support.frontend_corpus import constructs, kernels
from support.jax_programs import programs

import dfc

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

EXAMPLES = Path(__file__).parents[2] / "examples"
RTOL = 1e-9


@pytest.fixture(autouse=True, scope="module")
def x64():
    """JAX in float64 for this module only (the other JAX tests lower float32)."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def as_jax(fn):
    """`fn`, NumPy source, with `np` bound to `jax.numpy`: the same code traced by JAX."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__, fn.__defaults__, fn.__closure__)


def relative_error(got, want) -> float:
    want = np.asarray(want, np.float64)
    scale = max(float(np.max(np.abs(want))), 1e-300) if want.size else 1.0
    return float(np.max(np.abs(np.asarray(got, np.float64) - want) / (np.abs(want) + 1e-3 * scale))) if want.size else 0.0


def assert_close(got, want, rtol=RTOL):
    """Same structure (nested tuples), shapes and values within `rtol` relatively."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple) and len(got) == len(want), f"structure: got {type(got).__name__}, want {len(want)}"
        for g, w in zip(got, want):
            assert_close(g, w, rtol)
        return
    want = np.asarray(want)
    assert np.shape(got) == want.shape
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=1e-3 * rtol * scale)


def args_of(name):
    return list(kernels.CASES[name](np.random.default_rng(0)))


# --- grad / value_and_grad with has_aux ------------------------------------------------------


def tanh_layer(x, w):
    z = np.tanh(x @ w)
    return np.sum(z * z), z, np.max(z)


def test_has_aux_matches_jax():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))

    def with_aux(*a):  # JAX's form: (value, aux), the aux a tuple here
        value, *aux = as_jax(tanh_layer)(*a)
        return value, tuple(aux)

    assert_close(dfc.grad(tanh_layer, (0, 1), has_aux=True)(x, w), jax.grad(with_aux, (0, 1), has_aux=True)(x, w))
    assert_close(dfc.value_and_grad(tanh_layer, 1, has_aux=True)(x, w),
                 jax.value_and_grad(with_aux, 1, has_aux=True)(x, w))


def test_has_aux_of_an_imported_jax_program():
    """`branch_argmax` returns (loss, argmax): the argmax, an integer, is the aux."""
    f, args = programs()["branch_argmax"]
    args = [a.astype(np.float64) for a in args]
    imported = dfc.from_jax(f, *args)
    assert_close(dfc.grad(imported, has_aux=True)(*args), jax.grad(f, has_aux=True)(*args))
    assert_close(dfc.value_and_grad(imported, has_aux=True)(*args), jax.value_and_grad(f, has_aux=True)(*args))


# --- nested grad -------------------------------------------------------------------------------


def wave(x, a):
    return np.sin(x * np.sum(a * a)) * x ** 3 + np.sum(np.exp(-x * a))


def test_nested_grad_matches_jax():
    x, a = 0.7, np.linspace(-0.5, 0.8, 5)
    jw = as_jax(wave)
    # d/dx and d/da of d/dx: the second-order function differentiated once for both
    assert_close(dfc.grad(dfc.grad(wave), (0, 1))(x, a), jax.grad(jax.grad(jw), (0, 1))(x, a))
    inner = dfc.grad(wave)
    fn, _, _ = inner.specialize(x, a)
    assert isinstance(fn, dfc.Function) and inner.specialize(x, a)[0] is fn  # derived once, then cached
    assert dfc.grad(wave).specialize(x, a)[0] is fn  # per specialisation, whoever asks
    assert "@grad_wave" in fn.mlir() and "@wave_grad" in fn.mlir()


@pytest.mark.slow
def test_third_derivative_matches_jax():
    x, a = 0.7, np.linspace(-0.5, 0.8, 5)
    assert_close(dfc.grad(dfc.grad(dfc.grad(wave)))(x, a), jax.grad(jax.grad(jax.grad(as_jax(wave))))(x, a))


# --- jacrev --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, argnums", [
    ("softmax", 0), pytest.param("layernorm", (0, 1, 2), marks=pytest.mark.slow),
    pytest.param("outer_normalize", (0, 1), marks=pytest.mark.slow),
])
def test_jacrev_matches_jax(name, argnums):
    fn, args = getattr(kernels, name), args_of(name)
    assert_close(dfc.jacrev(fn, argnums)(*args), jax.jacrev(as_jax(fn), argnums)(*args))


@pytest.mark.slow
def test_jacrev_of_several_results_and_has_aux():
    x, w = np.random.default_rng(2).standard_normal((3, 4)), np.random.default_rng(3).standard_normal((4, 2))
    jf = as_jax(tanh_layer)
    assert_close(dfc.jacrev(tanh_layer, (0, 1))(x, w), jax.jacrev(jf, (0, 1))(x, w))

    def with_aux(*a):
        value, *aux = jf(*a)
        return value, tuple(aux)

    assert_close(dfc.jacrev(tanh_layer, 1, has_aux=True)(x, w), jax.jacrev(with_aux, 1, has_aux=True)(x, w))


# --- hessian and hvp ------------------------------------------------------------------------------


@pytest.mark.parametrize("name, argnums", [
    ("einsum_bilinear", (0, 2)), *(pytest.param(*case, marks=pytest.mark.slow) for case in [
        ("logistic_regression", 1), ("log_softmax_ce", (0, 1)), ("nbody_energy", 0), ("rnn", 3)]),
])
def test_hessian_matches_jax(name, argnums):
    fn, args = getattr(kernels, name), args_of(name)
    assert_close(dfc.hessian(fn, argnums)(*args), jax.hessian(as_jax(fn), argnums)(*args))


def jax_hvp(f, primals, tangents):
    return jax.jvp(jax.grad(f, tuple(range(len(primals)))), primals, tangents)[1]


@pytest.mark.parametrize("name", ["log_softmax_ce", pytest.param("attention_loss", marks=pytest.mark.slow)])
def test_hvp_matches_jax(name):
    fn = getattr(kernels, name, None) or globals()[name]
    args = args_of(name) if name in kernels.CASES else [np.random.default_rng(4).standard_normal(s) for s in ((4, 3), (5, 3), (5, 2))]
    rng = np.random.default_rng(5)
    tangents = [rng.standard_normal(np.shape(a)) for a in args]
    want = jax_hvp(as_jax(fn), tuple(args), tuple(tangents))
    assert_close(dfc.hvp(fn, args, tangents), want)


def attention_loss(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return np.sum((p / p.sum(axis=1, keepdims=True) @ v) ** 2)


@pytest.mark.slow
def test_hessian_of_an_imported_jax_program():
    """The softmax cross-entropy in its logits (the labels are ints), imported from JAX in float64."""
    f, (logits, labels) = programs()["softmax_xent"]
    logits = logits.astype(np.float64)
    imported = dfc.from_jax(f, logits, labels)
    assert_close(dfc.hessian(imported)(logits, labels), jax.hessian(f)(logits, labels))


@pytest.mark.slow
def test_hvp_of_an_imported_jax_program():
    """The LSTM (a lax.scan) in all its arguments."""
    f, args = programs()["lstm"]
    args = [a.astype(np.float64) for a in args]
    imported = dfc.from_jax(f, *args)
    tangents = [np.random.default_rng(6).standard_normal(a.shape) for a in args]
    assert_close(dfc.hvp(imported, args, tangents), jax_hvp(f, tuple(args), tuple(tangents)))


def softmax_ir():
    """`examples/softmax.mlir` (df maps with wcr max and add) at 3x5 in float64, as a
    `dfc.Function`, with arguments and the same function in JAX."""
    text = (EXAMPLES / "softmax.mlir").read_text().replace("64x512", "3x5").replace("(64, 512)", "(3, 5)")
    text = text.replace("64xf32", "3xf32").replace("f32", "f64").replace("0xFF800000", "0xFFF0000000000000")
    rng = np.random.default_rng(7)

    def reference(x, w):
        return jnp.sum(jax.nn.softmax(x, axis=-1) * w)

    fn = dfc.Function(dfc.parse_module(text), "softmax_loss")
    return fn, (rng.standard_normal((3, 5)), rng.standard_normal((3, 5))), reference


@pytest.mark.slow  # CI: the Hessians of frontend functions above and the batched Hessian of test_basis_loops
def test_hessian_of_an_ir_function():
    fn, args, reference = softmax_ir()
    assert_close(dfc.hessian(fn)(*args), jax.hessian(reference)(*args))


@pytest.mark.slow
def test_mixed_derivative_of_an_ir_function():
    fn, args, reference = softmax_ir()
    assert_close(dfc.jacrev(dfc.grad(fn, 0), 1)(*args), jax.jacrev(jax.grad(reference, 0), 1)(*args))


@pytest.mark.slow
def test_hessian_of_an_onnx_model():
    """The weights of an imported ONNX model are arguments like its inputs."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Tanh", ["h"], ["t"]),
             helper.make_node("ReduceSum", ["t"], ["y"], keepdims=0)]
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((2, 4)), rng.standard_normal((4, 3))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [])],
                              [onnx.numpy_helper.from_array(w, "w")])
    model = dfc.from_onnx(helper.make_model(graph), parameters=["w"])

    def reference(x, w):
        return jnp.sum(jnp.tanh(x @ w))

    assert_close(dfc.hessian(model, 1)(x, w), jax.hessian(reference, 1)(x, w))


# --- finite differences ---------------------------------------------------------------------------


def central(f, x, h=1e-3):
    """d f / d x (f: array -> array) by sixth-order (Richardson) central differences."""
    def step(h):
        out = np.zeros(np.shape(f(x)) + x.shape)
        for idx in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[idx] = h
            out[(...,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
        return out
    d = [step(h / 2**j) for j in range(3)]
    return (64 * d[2] - 20 * d[1] + d[0]) / 45


@pytest.mark.parametrize("name, fn, k", [
    pytest.param("matrix_power_trace", kernels.matrix_power_trace, 0, marks=pytest.mark.slow),  # an int argument, a loop
    pytest.param("triangular_slices", constructs.triangular_slices, 1, marks=pytest.mark.slow),  # a loop of slices
])
def test_hessian_matches_finite_differences(name, fn, k):
    args = args_of(name) if name in kernels.CASES else [np.random.default_rng(8).standard_normal((4, 4)),
                                                        np.random.default_rng(9).standard_normal(4)]

    def gradient_at(x):
        a = list(args)
        a[k] = x
        return dfc.grad(fn, k)(*a)

    assert_close(dfc.hessian(fn, k)(*args), central(gradient_at, np.asarray(args[k])), rtol=1e-8)


def test_jacrev_matches_finite_differences():
    """`cumsum_loop` writes its result in place, element by element."""
    x = args_of("cumsum_loop")[0]
    assert_close(dfc.jacrev(kernels.cumsum_loop)(x), central(kernels.cumsum_loop, x), rtol=1e-8)


# --- errors ---------------------------------------------------------------------------------------


def test_errors_name_the_problem():
    x = np.ones(3)
    with pytest.raises(TypeError, match="cannot be transformed again"):
        dfc.grad(dfc.jacrev(kernels.softmax))
    with pytest.raises(TypeError, match=r"grad needs a function with one scalar float result; @softmax\w* returns tensor<1x3xf64>"):
        dfc.grad(kernels.softmax)(x[None])
    with pytest.raises(TypeError, match="scalar float first result"):
        dfc.grad(kernels.softmax, has_aux=True)(x[None])
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        dfc.hvp(kernels.dot_loop, (x, x), (x,))
