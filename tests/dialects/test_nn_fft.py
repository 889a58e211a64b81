"""nn.dft (dialects/nn_fft.py): every kind, sign and scale against numpy.fft (float64
reference, relative error) through the interpreter and the engine; gradients against float64
finite differences (c2c by its rule, r2c and c2r through their expansion) and PyTorch's."""

from functools import cache

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects import nn_expand_fft
from tests.dialects.test_nn_elementwise import _t

RNG = np.random.default_rng(5)
NUMPY_NORM = {("none", False): "backward", ("n", True): "backward", ("sqrt", False): "ortho",
              ("sqrt", True): "ortho", ("n", False): "forward", ("none", True): "forward"}
"""numpy's `norm` of (scale, inverse)."""


def _packed(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], -1)


def _complex(x: np.ndarray) -> np.ndarray:
    return x[..., 0] + 1j * x[..., 1]


def _attrs(axis, kind, scale, inverse=False, onesided=False, length=None) -> str:
    extra = "".join([", inverse" * inverse, ", onesided" * onesided,
                     f", length = {length} : i64" * (length is not None)])
    return f'{{axis = {axis} : i64, kind = "{kind}", scale = "{scale}"{extra}}}'


def _function(name, in_shape, out_shape, attrs, dtype) -> str:
    x, r = _t(in_shape, dtype), _t(out_shape, dtype)
    return f"""func.func @{name}(%x: {x}) -> {r} {{
  %r = nn.dft %x {attrs} : ({x}) -> {r}
  func.return %r : {r}
}}"""


def _case(kind, shape, axis, scale, inverse, onesided=False, length=None):
    """(input, numpy's float64 result) of one transform."""
    norm = NUMPY_NORM[scale, inverse]
    if kind == "c2c":
        x = RNG.standard_normal([*shape, 2])
        fn = np.fft.ifft if inverse else np.fft.fft
        return x, _packed(fn(_complex(x), axis=axis, norm=norm))
    if kind == "r2c":
        x = RNG.standard_normal(shape)
        z = np.fft.fft(x, axis=axis, norm=norm) if not inverse else np.fft.ifft(x, axis=axis, norm=norm)
        if onesided:
            z = np.take(z, range(shape[axis] // 2 + 1), axis=axis)
        return x, _packed(z)
    half = list(shape)
    half[axis] = length // 2 + 1
    x = RNG.standard_normal([*half, 2])
    fn = np.fft.irfft if inverse else np.fft.hfft
    return x, fn(_complex(x), n=length, axis=axis, norm=norm)


CASES = {  # id: (kind, shape (the signal's), axis, scale, inverse, onesided, length)
    "c2c_forward_last": ("c2c", [3, 8], 1, "none", False, False, None),
    "c2c_inverse_first_odd": ("c2c", [7, 2], 0, "n", True, False, None),
    "c2c_ortho_middle": ("c2c", [2, 5, 3], 1, "sqrt", False, False, None),
    "c2c_forward_norm_inverse": ("c2c", [6], 0, "none", True, False, None),
    "c2c_length_one": ("c2c", [2, 1], 1, "none", False, False, None),
    "r2c_onesided_even": ("r2c", [3, 8], 1, "none", False, True, None),
    "r2c_onesided_odd_axis0": ("r2c", [9, 2], 0, "sqrt", False, True, None),
    "r2c_twosided": ("r2c", [4, 5], 1, "n", False, False, None),
    "r2c_inverse_sign": ("r2c", [6], 0, "n", True, False, None),
    "c2r_even": ("c2r", [3, 8], 1, "n", True, False, 8),
    "c2r_odd_axis0": ("c2r", [7, 2], 0, "sqrt", True, False, 7),
    "c2r_forward_sign": ("c2r", [2, 6], 1, "none", False, False, 6),
    "c2r_length_one": ("c2r", [1], 0, "n", True, False, 1),
    "r2c_pow2_16": ("r2c", [2, 16], 1, "none", False, True, None),
    "c2c_radix2": ("c2c", [2, 512], 1, "n", True, False, None),
    "r2c_radix2_axis0": ("r2c", [1024, 2], 0, "sqrt", False, True, None),
}


F32_CASES = ("c2c_ortho_middle", "r2c_onesided_odd_axis0", "c2r_even")
"""The cases CI runs in f32 too; `--slow` runs every case (the long radix-2 ones too) in both types, on the
engine too."""


def _runs(slow: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The functions (`f_<case>_<dtype>`) run by the interpreter and those run by the engine too."""
    every = tuple(f"f_{case}_{dtype}" for case in sorted(CASES) for dtype in ("f64", "f32"))
    ci = tuple(n for n in every if (n.endswith("f64") or n[2:-4] in F32_CASES) and "radix2" not in n)
    return (every, every) if slow else (ci, ())


@cache
def _programs(slow: bool):
    """The inputs and numpy's results of the functions `_runs` chooses, the module of those expanded
    for the interpreter, and the engine compiled for its share."""
    interpreted, compiled = _runs(slow)
    inputs, texts = {}, {}
    for name in interpreted:
        kind, shape, axis, scale, inverse, onesided, length = CASES[name[2:-4]]
        x, expected = _case(kind, shape, axis, scale, inverse, onesided, length)
        dtype = name[-3:]
        inputs[name] = (x.astype(np.float32) if dtype == "f32" else x, expected)
        texts[name] = _function(name, x.shape, expected.shape, _attrs(axis, kind, scale, inverse, onesided, length),
                                dtype)
    module = parse_module("\n".join(texts.values()))
    PassManager.parse("expand-library").run(module)
    assert not any(o.name.startswith("nn.") for o in module.walk())
    return inputs, module, ExecutionEngine(parse_module("\n".join(texts[n] for n in compiled))) if compiled else None


def _relative_error(got, expected) -> float:
    return float(np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-300))


@pytest.mark.parametrize("name", _runs(True)[0])
def test_dft_matches_numpy(name, request):
    """Within a few units in the last place of the largest magnitude (the error of an O(n^2) sum, or of
    log2 n butterfly stages for the radix-2 cases: RADIX2_MIN and longer powers of two)."""
    slow = request.config.getoption("--slow")
    interpreted, compiled = _runs(slow)
    if name not in interpreted:
        pytest.skip("f32 of this case, or a long radix-2 one: runs with --slow")
    inputs, module, engine = _programs(slow)
    x, expected = inputs[name]
    bound = {"f64": 1e-14, "f32": 2e-6}[name[-3:]]
    runs = {"interpreter": interpret(module, name, x)}
    if name in compiled:
        runs["engine"] = engine.invoke(name, x)
    for where, got in runs.items():
        assert got.dtype == x.dtype and got.shape == expected.shape, where
        assert _relative_error(got, expected) < bound, (where, _relative_error(got, expected))


CHAIN = """func.func @f(%x: tensor<4x6xf32>) -> (tensor<4x4x2xf32>, tensor<4x6xf32>) {
  %a = nn.dft %x {axis = 1 : i64, kind = "r2c", scale = "none", onesided} : (tensor<4x6xf32>) -> tensor<4x4x2xf32>
  %b = nn.dft %a {axis = 0 : i64, kind = "c2c", scale = "sqrt", inverse} : (tensor<4x4x2xf32>) -> tensor<4x4x2xf32>
  %c = nn.dft %b {axis = 1 : i64, kind = "c2r", scale = "n", inverse, length = 6 : i64} :
    (tensor<4x4x2xf32>) -> tensor<4x6xf32>
  func.return %b, %c : tensor<4x4x2xf32>, tensor<4x6xf32>
}"""


def test_engine_runs_each_kind():
    """One compile for CI: rfft along the rows, an orthonormal ifft down the columns, irfft back along the rows."""
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    b = np.fft.ifft(np.fft.rfft(x.astype(np.float64), axis=1), axis=0, norm="ortho")
    c = np.fft.irfft(b, n=6, axis=1)
    got_b, got_c = ExecutionEngine(parse_module(CHAIN)).invoke("f", x)
    assert got_b.dtype == got_c.dtype == np.float32
    assert _relative_error(got_b, _packed(b)) < 2e-6 and _relative_error(got_c, c) < 2e-6


@pytest.mark.parametrize("kind, shape, axis, inverse", [("c2c", [3, 8], 1, False), ("c2c", [16, 2], 0, True),
                                                      ("r2c", [2, 16], 1, False), ("c2c", [2, 2], 1, False)])
def test_radix2_matches_numpy(kind, shape, axis, inverse, monkeypatch):
    """The radix-2 FFT (`_radix2`, from RADIX2_MIN on) on short powers of two, by lowering RADIX2_MIN."""
    monkeypatch.setattr(nn_expand_fft, "RADIX2_MIN", 2)
    calls = []
    radix2 = nn_expand_fft._radix2
    monkeypatch.setattr(nn_expand_fft, "_radix2", lambda *a: calls.append(a) or radix2(*a))
    x, expected = _case(kind, shape, axis, "n" if inverse else "none", inverse, kind == "r2c")
    attrs = _attrs(axis, kind, "n" if inverse else "none", inverse, kind == "r2c")
    module = parse_module(_function("f", x.shape, expected.shape, attrs, "f64"))
    PassManager.parse("expand-library").run(module)
    assert len(calls) == 1
    assert _relative_error(interpret(module, "f", x), expected) < 1e-15


def test_empty_batch_gives_an_empty_result():
    module = parse_module(_function("f", [0, 4, 2], [0, 4, 2], _attrs(1, "c2c", "none"), "f64"))
    PassManager.parse("expand-library").run(module)
    assert interpret(module, "f", np.zeros((0, 4, 2))).shape == (0, 4, 2)


def _jacobian(case) -> tuple[np.ndarray, tuple[int, ...], np.ndarray]:
    """An input of `case`, its result's shape and numpy's transform as a matrix (the transforms are linear: column i is
    the transform of the i-th unit input)."""
    kind, shape, axis, scale, inverse, onesided, length = CASES[case]
    x, expected = _case(kind, shape, axis, scale, inverse, onesided, length)
    norm = NUMPY_NORM[scale, inverse]

    def apply(u):
        if kind == "c2c":
            return _packed((np.fft.ifft if inverse else np.fft.fft)(_complex(u), axis=axis, norm=norm))
        if kind == "r2c":
            z = (np.fft.ifft if inverse else np.fft.fft)(u, axis=axis, norm=norm)
            return _packed(np.take(z, range(shape[axis] // 2 + 1), axis=axis) if onesided else z)
        return (np.fft.irfft if inverse else np.fft.hfft)(_complex(u), n=length, axis=axis, norm=norm)

    columns = [apply(np.eye(x.size)[i].reshape(x.shape)).reshape(-1) for i in range(x.size)]
    return x, expected.shape, np.stack(columns, 1)


GRADIENT_CASES = ["c2c_ortho_middle", "c2c_inverse_first_odd", "r2c_onesided_even", "r2c_onesided_odd_axis0",
                  "r2c_twosided", "c2r_even", "c2r_odd_axis0", "c2r_forward_sign"]


@pytest.mark.parametrize("case", GRADIENT_CASES)
def test_gradient_is_the_transposed_transform(case):
    """The gradient is J^T seed, J numpy's transform as a matrix; for c2r the input's imaginary parts
    of frequency 0 (and n / 2) get none, as numpy ignores them."""
    _check_transposed(case)


@pytest.mark.parametrize("case", ["r2c_pow2_16", "c2c_forward_last"])
def test_radix2_gradient_is_the_transposed_transform(case, monkeypatch):
    """Through the radix-2 expansion (r2c) and the rule's transform of the opposite sign (c2c)."""
    monkeypatch.setattr(nn_expand_fft, "RADIX2_MIN", 2)
    _check_transposed(case)


def _check_transposed(case):
    x, y_shape, jacobian = _jacobian(case)
    kind, _, axis, scale, inverse, onesided, length = CASES[case]
    module = parse_module(_function("f", x.shape, y_shape, _attrs(axis, kind, scale, inverse, onesided, length), "f64"))
    PassManager.parse("autodiff,expand-library").run(module)
    seed = RNG.standard_normal(y_shape)
    got = interpret(module, "f_grad", x, seed)[1]
    expected = (jacobian.T @ seed.reshape(-1)).reshape(x.shape)
    assert _relative_error(got, expected) < 1e-14


@pytest.mark.parametrize("case", ["c2r_odd_axis0", pytest.param("c2c_inverse_first_odd", marks=pytest.mark.slow),
                                  pytest.param("r2c_onesided_even", marks=pytest.mark.slow)])
def test_gradient_matches_finite_differences(case):
    kind, shape, axis, scale, inverse, onesided, length = CASES[case]
    x, expected = _case(kind, shape, axis, scale, inverse, onesided, length)
    text = _function("f", x.shape, expected.shape, _attrs(axis, kind, scale, inverse, onesided, length), "f64")
    check_gradient(text, "f", [x], [0], engine=False, rtol=1e-7, atol=1e-9)


def test_c2c_gradient_is_the_conjugate_transform_by_its_rule():
    """The rule writes one nn.dft of the opposite sign, not the expansion's matrix product."""
    text = _function("f", [4, 2], [4, 2], _attrs(0, "c2c", "sqrt"), "f64")
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    grad = next(op for op in module.ops if op.sym_name.data == "f_grad")
    dfts = [op for op in grad.walk() if op.name == "nn.dft"]
    assert len(dfts) == 2 and dfts[1].inverse is not None and dfts[1].scale.data == "sqrt"
    assert not any(op.name == "nn.matmul" for op in grad.walk())


@pytest.mark.parametrize("case", ["r2c_onesided_even", pytest.param("c2r_odd_axis0", marks=pytest.mark.slow),
                                  pytest.param("c2c_ortho_middle", marks=pytest.mark.slow)])
def test_gradient_matches_torch(case):
    torch = pytest.importorskip("torch")
    kind, shape, axis, scale, inverse, onesided, length = CASES[case]
    x, expected = _case(kind, shape, axis, scale, inverse, onesided, length)
    seed = RNG.standard_normal(expected.shape)
    attrs = _attrs(axis, kind, scale, inverse, onesided, length)
    module = parse_module(_function("f", x.shape, expected.shape, attrs, "f64"))
    PassManager.parse("autodiff,expand-library").run(module)
    got = interpret(module, "f_grad", x, seed)[1]
    tx = torch.tensor(x, requires_grad=True)
    norm = NUMPY_NORM[scale, inverse]
    if kind == "r2c":
        y = torch.view_as_real(torch.fft.rfft(tx, dim=axis, norm=norm))
    elif kind == "c2r":
        y = torch.fft.irfft(torch.view_as_complex(tx), n=length, dim=axis, norm=norm)
    else:
        y = torch.view_as_real(torch.fft.fft(torch.view_as_complex(tx), dim=axis, norm=norm))
    (y * torch.tensor(seed)).sum().backward()
    np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
