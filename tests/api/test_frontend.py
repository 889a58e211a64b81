"""`dfc.jit` and the NumPy frontend: signatures and caching, NumPy's aliasing
semantics under value-semantics IR, in-place bufferization of slice updates,
calls between jitted functions, the printed stages, source locations, and
located errors for everything outside the subset."""

import inspect
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc

import dfc
from support.frontend_corpus import constructs, kernels, unsupported
from support.frontend_corpus.check import check


def _sum_sq(x):
    return np.sum(x * x)


def test_cached_per_signature_and_ints_are_constants():
    f = dfc.jit(kernels.jacobi_1d)
    a, b = np.random.rand(10), np.random.rand(10)
    first = f.specialize(3, a, b)[0]
    assert f.specialize(3, a.copy(), b.copy())[0] is first
    assert f.specialize(4, a, b)[0] is not first
    assert f.specialize(3, np.random.rand(12), np.random.rand(12))[0] is not first
    np.testing.assert_allclose(f(4, a.copy(), b.copy()), kernels.jacobi_1d(4, a.copy(), b.copy()), rtol=1e-12)


def test_annotations_with_size_names():
    @dfc.jit
    def gemv(A: dfc.f64["M", "N"], x: dfc.f64["N"], alpha: dfc.f64):
        return alpha * A @ x

    A, x = np.random.rand(3, 4), np.random.rand(4)
    np.testing.assert_allclose(gemv(A, x, 2.0), 2.0 * A @ x, rtol=1e-12)
    with pytest.raises(ValueError, match="size 'N' is 4 elsewhere but 5"):
        gemv(np.random.rand(3, 4), np.random.rand(5), 1.0)
    with pytest.raises(TypeError, match="must have dtype float64"):
        gemv(A.astype(np.float32), x, 1.0)


def test_float32_stays_float32():
    f = dfc.jit(lambda_free_scale)
    x = np.random.rand(5).astype(np.float32)
    out = f(x, 0.5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, x * 0.5 + 1.0, rtol=1e-6)


def lambda_free_scale(x, s):
    return x * s + 1.0


def aliasing(A):
    B = A  # the same array
    B[0] = 5.0
    v = A[1:]  # a view
    v[0] = 7.0
    s = A[2]  # a scalar copy
    A[2] = 9.0
    C = A.copy()
    C[3] = -1.0
    A *= 2.0
    return A + s + C


def test_numpy_aliasing_semantics():
    x = np.arange(6.0)
    np.testing.assert_array_equal(dfc.jit(aliasing)(x.copy()), aliasing(x.copy()))


def test_slice_update_in_a_time_loop_is_in_place():
    """The arguments are copied once (they are the caller's); no copy in the loop."""
    text = dfc.jit(kernels.jacobi_1d).mlir(4, np.random.rand(12), np.random.rand(12), stage="lowered")
    loop = text.index("scf.for")
    assert "memref.copy" not in text[loop:]


def inner(x, w):
    return np.sum(np.tanh(x) * w)


jitted_inner = dfc.jit(inner)


def outer(x, w):
    return jitted_inner(x * 2.0, w) + np.sum(x)


def test_calls_stay_calls_and_are_differentiated():
    f = dfc.jit(outer)
    x, w = np.random.rand(4), np.random.rand(4)
    assert "func.call @inner" in f.mlir(x, w)
    np.testing.assert_allclose(f(x, w), outer(x, w), rtol=1e-12)
    value, (gx, gw) = dfc.value_and_grad(f, (0, 1))(x, w)
    np.testing.assert_allclose(value, outer(x, w), rtol=1e-12)
    np.testing.assert_allclose(gx, 2 * (1 - np.tanh(2 * x) ** 2) * w + 1, rtol=1e-10)
    np.testing.assert_allclose(gw, np.tanh(2 * x), rtol=1e-10)


def test_grad_takes_plain_python_functions():
    x = np.random.rand(5)
    np.testing.assert_allclose(dfc.grad(_sum_sq)(x), 2 * x, rtol=1e-12)


def test_stages_print_what_opt_tool_reads(tmp_path):
    f = dfc.jit(kernels.mlp)
    args = kernels.CASES["mlp"](np.random.default_rng(0))
    frontend = f.mlir(*args)
    name = f.specialize(*args)[0].name  # "mlp", or "mlp_1", ... for a later signature
    assert "scf" not in frontend and "nn.dot_general" in frontend
    assert f"@{name}_grad" in f.mlir(*args, stage="autodiff")
    assert "df." not in f.mlir(*args, stage="lowered")
    path = tmp_path / "mlp.mlir"
    path.write_text(frontend)
    out = subprocess.run([sys.executable, "-m", "dfc.tools.opt_tool", str(path), "--autodiff", "--fuse"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"@{name}_grad" in out.stdout


def test_ops_carry_the_python_source_location():
    f = dfc.jit(kernels.trisolv)
    module = f.specialize(np.eye(4) * 2, np.ones(4), np.ones(4))[0].module
    lines, first = inspect.getsourcelines(kernels.trisolv)
    body = [op for op in module.walk() if not isinstance(op, func.FuncOp) and op.name != "builtin.module"]
    assert body
    for op in body:
        assert isinstance(op.location, FileLineColLoc), op.name
        assert op.location.filename.data.endswith("kernels.py")
        assert first <= op.location.line.data < first + len(lines)


def _error_line(fn):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if "# error" in line)


@pytest.mark.parametrize("name", sorted(unsupported.EXPECTED))
def test_unsupported_constructs_are_located_errors(name):
    fn = getattr(unsupported, name)
    with pytest.raises(dfc.FrontendError) as err:
        dfc.jit(fn)(np.arange(6.0))
    assert unsupported.EXPECTED[name] in err.value.message
    path, line, _col = err.value.location.rsplit(":", 2)
    assert path.endswith("unsupported.py") and int(line) == _error_line(fn)
    assert str(err.value).startswith(f"{err.value.location}: error: ")


def test_gradient_of_an_integer_argument_is_an_error():
    with pytest.raises(TypeError, match="not a float array"):
        dfc.grad(kernels.jacobi_1d, 0)(3, np.ones(5), np.ones(5))


def test_readme_example_runs(capsys, tmp_path):
    """The README's first example, as written (its block after the install command)."""
    import runpy
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme[readme.index("## NumPy in, gradients out"):]
    script = tmp_path / "readme_example.py"
    script.write_text(section.split("```python\n", 1)[1].split("```", 1)[0])
    scope = runpy.run_path(str(script))
    A, B, dA, dB = scope["A"], scope["B"], scope["dA"], scope["dB"]
    assert dA.shape == A.shape and dB.shape == B.shape
    assert "scf.for" in capsys.readouterr().out


def product_of_entries(x):
    y = x * 2.0
    return np.prod(y)  # a wcr(mul) reduction


def test_gradient_of_a_product():
    """np.prod's gradient (wcr(mul), refused until issue 12): each entry gets the product of the others."""
    x = np.random.rand(4) + 0.5
    np.testing.assert_allclose(dfc.jit(product_of_entries)(x), product_of_entries(x), rtol=1e-12)
    y = 2.0 * x
    want = np.array([2.0 * np.prod(np.delete(y, k)) for k in range(4)])
    np.testing.assert_allclose(dfc.grad(product_of_entries)(x), want, rtol=1e-12)


def test_gradient_ops_carry_the_python_lines():
    """autodiff's ops take their forward op's location, so its errors name the user's line."""
    x = np.random.rand(4) + 0.5
    check(product_of_entries, (x,))
    fn = dfc.jit(product_of_entries).specialize(x)[0]
    module = fn.autodiff_module()
    grad = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == f"{fn.name}_grad")
    lines, first = inspect.getsourcelines(product_of_entries)
    for op in grad.walk():
        assert isinstance(op.location, FileLineColLoc), op.name
        assert op.location.filename.data.endswith("test_frontend.py")
        assert first <= op.location.line.data < first + len(lines)


def twice(x, w):
    return jitted_inner(x, w) + jitted_inner(x[:3], w[:3] * 2.0)


def test_two_specialisations_of_one_callee():
    x, w = np.random.rand(4), np.random.rand(4)
    f = dfc.jit(twice)
    text = f.mlir(x, w)
    assert text.count("func.func @inner") == 2
    np.testing.assert_allclose(f(x, w), twice(x, w), rtol=1e-12)
    gx = dfc.grad(f)(x, w)
    want = (1 - np.tanh(x) ** 2) * w
    want[:3] += (1 - np.tanh(x[:3]) ** 2) * 2 * w[:3]
    np.testing.assert_allclose(gx, want, rtol=1e-10)


@pytest.mark.parametrize("name", sorted(constructs.CASES))
def test_listed_construct(name):
    check(getattr(constructs, name), constructs.CASES[name](np.random.default_rng(0)))


