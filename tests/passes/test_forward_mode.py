"""Forward mode (`jvp` pass, passes/autodiff/forward.py): @f_jvp(x, t) returns
f(x) and J t. Checked on the interpreter (the semantics) against float64
central differences along t and against the reverse pass: <w, J t> must equal
<J^T w, t> for the reverse mode's gradient with a random seed w, at ties of
max/min too (the two modes share one convention); one test compiles the
programs with the engine and compares."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError

RNG = np.random.default_rng(37)


def _tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def _jvp_module(text: str, name: str, wrt: list[int]):
    module = parse_module(text)
    PassManager.parse(f"jvp{{func={name} wrt={','.join(map(str, wrt))}}}").run(module)
    return module


def check_jvp(text: str, name: str, args: list, wrt: list[int], fd: bool = True,
              tangents: list | None = None, rtol: float = 1e-6, reverse: bool = True) -> None:
    """@name_jvp on random tangents (or `tangents`) against finite differences
    (where `fd`) and against the reverse pass's gradient (dot-product test,
    where `reverse`)."""
    module = _jvp_module(text, name, wrt)
    if tangents is None:
        tangents = [np.asarray(RNG.standard_normal(np.shape(args[k]))) if isinstance(args[k], np.ndarray)
                    else float(RNG.standard_normal()) for k in wrt]
    values = _tuple(interpret(module, name, *args))
    out = _tuple(interpret(module, f"{name}_jvp", *args, *tangents))
    n = len(values)
    for v, o in zip(values, out[:n]):
        np.testing.assert_array_equal(o, v)
    jvps = out[n:]
    if fd:
        eps = 1e-6
        moved = [list(args), list(args)]
        for k, t in zip(wrt, tangents):
            moved[0][k] = np.asarray(args[k] + eps * t) if isinstance(args[k], np.ndarray) else args[k] + eps * t
            moved[1][k] = np.asarray(args[k] - eps * t) if isinstance(args[k], np.ndarray) else args[k] - eps * t
        plus, minus = (_tuple(interpret(module, name, *m)) for m in moved)
        for j, p, m in zip(jvps, plus, minus):
            np.testing.assert_allclose(j, (p - m) / (2 * eps), rtol=rtol, atol=1e-7, err_msg="finite differences")
    if reverse:
        gradient = parse_module(text)
        PassManager.parse(f"autodiff{{func={name} wrt={','.join(map(str, wrt))}}}").run(gradient)
        seeds = [np.asarray(RNG.standard_normal(np.shape(v))) if isinstance(v, np.ndarray)
                 else float(RNG.standard_normal()) for v in values]
        grads = _tuple(interpret(gradient, f"{name}_grad", *args, *seeds))[n:]
        forward = sum(float(np.sum(np.asarray(s) * j)) for s, j in zip(seeds, jvps))
        backward = sum(float(np.sum(g * np.asarray(t))) for g, t in zip(grads, tangents))
        assert forward == pytest.approx(backward, rel=1e-10, abs=1e-12), "<w, J t> != <J^T w, t>"


def _reduce_map(kind: str, n: int = 6) -> str:
    init = {"add": "0.0", "mul": "1.0", "max": "-1.0e+30", "min": "1.0e+30"}[kind]
    return f"""
func.func @f(%x: tensor<{n}xf64>, %w: tensor<{n}xf64>, %c: tensor<f64>) -> (tensor<f64>, tensor<{n}xf64>) {{
  %init = arith.constant dense<{init}> : tensor<f64>
  %e = tensor.empty() : tensor<{n}xf64>
  %m, %y = df.map (%i) in ({n}) outs(%o = %init : tensor<f64>, %p = %e : tensor<{n}xf64>) {{
    %r = df.read %x[%i] : tensor<{n}xf64>
    %s = df.read %w[%i] : tensor<{n}xf64>
    %q = df.tasklet (%r, %s) : (f64, f64) -> f64 {{
    ^bb0(%u: f64, %v: f64):
      %t = arith.mulf %u, %v : f64
      %h = math.tanh %t : f64
      %z = arith.addf %h, %u : f64
      df.yield %z : f64
    }}
    df.write %q, %o[] wcr({kind}) : tensor<f64>
    df.write %q, %p[%i] : tensor<{n}xf64>
  }} -> tensor<f64>, tensor<{n}xf64>
  %cv = tensor.extract %c[] : tensor<f64>
  %mv = tensor.extract %m[] : tensor<f64>
  %sum = arith.addf %mv, %cv : f64
  %r = tensor.insert %sum into %m[] : tensor<f64>
  func.return %r, %y : tensor<f64>, tensor<{n}xf64>
}}"""


@pytest.mark.parametrize("kind", ["add", "mul", "max", "min"])
def test_map_reductions(kind):
    x, w = RNG.standard_normal(6), RNG.standard_normal(6)
    check_jvp(_reduce_map(kind), "f", [x, w, np.array(0.5)], [0, 1, 2])


def test_mul_with_a_zero_factor():
    """One factor is exactly 0: its tangent times the product of the others."""
    x, w = RNG.standard_normal(6), RNG.standard_normal(6)
    x[2] = 0.0
    check_jvp(_reduce_map("mul"), "f", [x, w, np.array(0.5)], [0, 1, 2], fd=False)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_extremum_ties_follow_the_reverse_convention(kind):
    """Tied candidates share the tangent equally (the mean of their tangents),
    as the reverse mode shares the seed: <w, J t> = <J^T w, t> exactly."""
    x = np.array([0.5, -1.0, 0.5, 0.25, 0.5, -0.75] if kind == "max" else [-0.5, 1.0, -0.5, 0.25, -0.5, 0.75])
    w = np.zeros(6)  # tanh(0) + x: the candidates are x, three tied
    module = _jvp_module(_reduce_map(kind), "f", [0])
    t = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    _, _, tangent, _ = interpret(module, "f_jvp", x, w, np.array(0.0), t)
    assert tangent == (1.0 + 4.0 + 16.0) / 3  # d(tanh(xw) + x) = t at w = 0: the mean of the tied ones
    check_jvp(_reduce_map(kind), "f", [x, w, np.array(0.0)], [0, 1], fd=False)


ROW_MAX = """
func.func @f(%w: tensor<3x4xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %m = df.map (%i) in (3) outs(%o = %b : tensor<3xf64>) {
    df.map (%j) in (4) {
      %r = df.read %w[%i, %j] : tensor<3x4xf64>
      %p = df.tasklet (%r) : (f64) -> f64 {
      ^bb0(%u: f64):
        %sq = arith.mulf %u, %u : f64
        df.yield %sq : f64
      }
      df.write %p, %o[%i] wcr(max) : tensor<3xf64>
    }
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}"""


def test_nested_map_max_with_the_initial_value_tied():
    w = RNG.standard_normal((3, 4))
    b = np.array([0.1, float(np.max(w[1] ** 2)), 50.0])  # row 1: the initial value ties; row 2: it wins
    check_jvp(ROW_MAX, "f", [w, b], [0, 1], fd=False)
    check_jvp(ROW_MAX, "f", [w, np.array([0.1, 0.2, 50.0])], [0, 1])


JACOBI = """
func.func @f(%a: tensor<10xf64>, %k: tensor<f64>) -> tensor<10xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 5 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%h = %a) -> (tensor<10xf64>) {
    %y = df.map (%i) in (8) outs(%o = %h : tensor<10xf64>) {
      %c1i = arith.constant 1 : index
      %c2i = arith.constant 2 : index
      %i1 = arith.addi %i, %c1i : index
      %i2 = arith.addi %i, %c2i : index
      %l = df.read %h[%i] : tensor<10xf64>
      %m = df.read %h[%i1] : tensor<10xf64>
      %rr = df.read %h[%i2] : tensor<10xf64>
      %kk = df.read %k[] : tensor<f64>
      %v = df.tasklet (%l, %m, %rr, %kk) : (f64, f64, f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64, %s: f64, %c: f64):
        %sum = arith.addf %p, %s : f64
        %mid = arith.mulf %c, %q : f64
        %all = arith.addf %sum, %mid : f64
        %third = arith.constant 0.33 : f64
        %out = arith.mulf %all, %third : f64
        %sq = math.sin %out : f64
        df.yield %sq : f64
      }
      df.write %v, %o[%i1] : tensor<10xf64>
    } -> tensor<10xf64>
    scf.yield %y : tensor<10xf64>
  }
  func.return %r : tensor<10xf64>
}"""


def test_jacobi_time_loop():
    check_jvp(JACOBI, "f", [RNG.standard_normal(10), np.array(1.3)], [0, 1])


CONTROL = """
func.func private @helper(%x: tensor<4xf64>, %s: f64) -> (tensor<4xf64>, f64) {
  %y = nn.tanh %x : (tensor<4xf64>) -> tensor<4xf64>
  %t = arith.mulf %s, %s : f64
  func.return %y, %t : tensor<4xf64>, f64
}
func.func @f(%x: tensor<4xf64>, %s: f64) -> (tensor<4xf64>, f64) {
  %y, %t = func.call @helper(%x, %s) : (tensor<4xf64>, f64) -> (tensor<4xf64>, f64)
  %half = arith.constant 0.5 : f64
  %big = arith.cmpf ogt, %t, %half : f64
  %z = scf.if %big -> (tensor<4xf64>) {
    %e = nn.exp %y : (tensor<4xf64>) -> tensor<4xf64>
    scf.yield %e : tensor<4xf64>
  } else {
    scf.yield %y : tensor<4xf64>
  }
  %u = arith.mulf %t, %s : f64
  func.return %z, %u : tensor<4xf64>, f64
}"""


@pytest.mark.parametrize("s", [0.9, 0.3])
def test_call_and_if(s):
    check_jvp(CONTROL, "f", [RNG.uniform(-0.5, 0.5, 4), s], [0, 1])
    assert "func.func private @helper_jvp(%x: tensor<4xf64>, %s: f64, %tangent: tensor<4xf64>, %tangent_1: f64)" in str(
        _jvp_module(CONTROL, "f", [0, 1]))


LOOP = """
func.func @f(%x: tensor<4xf64>, %s: f64, %n: index) -> (tensor<4xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  LOOP
  func.return %w#1, %w#2 : tensor<4xf64>, f64
}"""
WHILE = """%w:3 = scf.while (%i = %c0, %acc = %x, %u = %s) : (index, tensor<4xf64>, f64) -> (index, tensor<4xf64>, f64) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %acc, %u : index, tensor<4xf64>, f64
  } do {
  ^bb0(%i: index, %acc: tensor<4xf64>, %u: f64):
    BODY
    %next = arith.addi %i, %c1 : index
    scf.yield %next, %m, %u2 : index, tensor<4xf64>, f64
  }"""
FOR = """%r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %u = %s) -> (tensor<4xf64>, f64) {
    BODY
    scf.yield %m, %u2 : tensor<4xf64>, f64
  }
  %w:3 = "test.unused"() : () -> (index, tensor<4xf64>, f64)"""
BODY = """%m = nn.mul %acc, %acc : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %u2 = arith.mulf %u, %s : f64"""


def test_while_loop_against_finite_differences_and_the_same_for_loop():
    """Loops carrying a float scalar (which the reverse mode refuses, as it
    refuses scf.while): the JVP of an scf.while equals that of the same loop
    as scf.for, checked against finite differences."""
    text = LOOP.replace("LOOP", WHILE).replace("BODY", BODY)
    as_for = LOOP.replace("LOOP", FOR).replace("BODY", BODY).replace("%w#1, %w#2", "%r#0, %r#1").replace(
        '\n  %w:3 = "test.unused"() : () -> (index, tensor<4xf64>, f64)', "")
    args, tangents = [RNG.uniform(-0.9, 0.9, 4), 0.7, 3], [RNG.standard_normal(4), 0.25]
    check_jvp(as_for, "f", args, [0, 1], tangents=tangents, reverse=False)
    module = _jvp_module(text, "f", [0, 1])
    got = interpret(module, "f_jvp", *args, *tangents)
    want = interpret(_jvp_module(as_for, "f", [0, 1]), "f_jvp", *args, *tangents)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-14)


GATHER = """
func.func @f(%x: tensor<5xf64>, %idx: tensor<3xi64>) -> tensor<3xf64> {
  %e = tensor.empty() : tensor<3xf64>
  %y = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %j = df.read %idx[%i] : tensor<3xi64>
    %k = arith.index_cast %j : i64 to index
    %v = df.read %x[%k] : tensor<5xf64>
    %p = df.tasklet (%v) : (f64) -> f64 {
    ^bb0(%u: f64):
      %e2 = math.exp %u : f64
      df.yield %e2 : f64
    }
    df.write %p, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  func.return %y : tensor<3xf64>
}"""


def test_integer_indices_have_no_tangent():
    check_jvp(GATHER, "f", [RNG.standard_normal(5), np.array([4, 0, 4])], [0])


NN = {
    "matmul_softmax": ("""
func.func @f(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %z = nn.matmul %a, %b : (tensor<3x4xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>
  %s = nn.softmax %z {axis = 1 : i64} : (tensor<3x5xf64>) -> tensor<3x5xf64>
  func.return %s : tensor<3x5xf64>
}""", [(3, 4), (4, 5)]),
    "conv_maxpool": ("""
func.func @f(%x: tensor<1x2x6x6xf64>, %k: tensor<2x2x3x3xf64>) -> tensor<1x2x2x2xf64> {
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x2x6x6xf64>, tensor<2x2x3x3xf64>) -> tensor<1x2x4x4xf64>
  %p = nn.reduce_window %r {kind = "max", window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>, window_dilations = array<i64: 1, 1, 1, 1>, padding_low = array<i64: 0, 0, 0, 0>, padding_high = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf64>) -> tensor<1x2x2x2xf64>
  func.return %p : tensor<1x2x2x2xf64>
}""", [(1, 2, 6, 6), (2, 2, 3, 3)]),
    "reductions": ("""
func.func @f(%x: tensor<3x4xf64>) -> (tensor<3xf64>, tensor<4xf64>, tensor<f64>) {
  %m = nn.reduce %x {kind = "max", axes = array<i64: 1>} : (tensor<3x4xf64>) -> tensor<3xf64>
  %s = nn.reduce %x {kind = "sum", axes = array<i64: 0>} : (tensor<3x4xf64>) -> tensor<4xf64>
  %p = nn.reduce %x {kind = "mean", axes = array<i64: 0, 1>} : (tensor<3x4xf64>) -> tensor<f64>
  func.return %m, %s, %p : tensor<3xf64>, tensor<4xf64>, tensor<f64>
}""", [(3, 4)]),
}


@pytest.mark.parametrize("case", sorted(NN))
def test_nn_ops_through_their_expansion(case):
    text, shapes = NN[case]
    args = [RNG.standard_normal(s) for s in shapes]
    check_jvp(text, "f", args, list(range(len(args))))


def test_output_and_wrt_options_and_idempotence():
    module = parse_module(JACOBI)
    PassManager.parse("jvp{func=f wrt=1},jvp{func=f wrt=1}").run(module)
    text = str(module)
    assert text.count("func.func @f_jvp(") == 1
    assert "-> (tensor<10xf64>, tensor<10xf64>)" in text and 'autodiff.mode = "forward"' in text


@pytest.mark.parametrize("text, message", [
    ("""
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  func.return %x : tensor<4xf64>
}
func.func @f_jvp() {
  func.return
}""", "already has a function of that name"),
    ("""
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = func.call @f(%x) : (tensor<4xf64>) -> tensor<4xf64>
  func.return %y : tensor<4xf64>
}""", "cannot differentiate the recursive call to @f"),
    ("""
func.func @f(%x: f64) -> f64 {
  %y = math.atan %x : f64
  func.return %y : f64
}""", "cannot differentiate 'math.atan'"),
])
def test_refusals(text, message):
    with pytest.raises(CompileError, match=message):
        _jvp_module(text, "f", [0])


NESTED_OUTS = """
func.func @f(%x: tensor<4x5xf64>) -> tensor<4x5xf64> {
  %e = tensor.empty() : tensor<4x5xf64>
  %m = df.map (%i) in (4) outs(%o = %e : tensor<4x5xf64>) {
    %e2 = tensor.empty() : tensor<5xf64>
    %n = df.map (%j) in (5) outs(%p = %e2 : tensor<5xf64>) {
      %v = df.read %x[%i, %j] : tensor<4x5xf64>
      %s = df.tasklet (%v) : (f64) -> f64 {
      ^bb0(%a: f64):
        %c = math.cos %a : f64
        df.yield %c : f64
      }
      df.write %s, %p[%j] : tensor<5xf64>
    } -> tensor<5xf64>
    df.map (%j) in (5) {
      %v = df.read %n[%j] : tensor<5xf64>
      %w = df.read %x[%i, %j] : tensor<4x5xf64>
      %s = df.tasklet (%v, %w) : (f64, f64) -> f64 {
      ^bb0(%a: f64, %b: f64):
        %c = arith.mulf %a, %b : f64
        df.yield %c : f64
      }
      df.write %s, %o[%i, %j] : tensor<4x5xf64>
    }
  } -> tensor<4x5xf64>
  func.return %m : tensor<4x5xf64>
}"""


def test_nested_map_with_its_own_outputs():
    """A nested map with outputs of its own (which the reverse mode refuses)."""
    check_jvp(NESTED_OUTS, "f", [RNG.standard_normal((4, 5))], [0], reverse=False)


def test_forward_over_reverse_is_a_hessian_vector_product():
    """jvp of the reverse pass's @f_grad (seed fixed): H t, against central
    differences of the gradient (the Hessian-vector product of issue 37)."""
    text, shapes = NN["matmul_softmax"]
    module = parse_module(text)
    PassManager.parse("autodiff{func=f},jvp{func=f_grad wrt=0,1}").run(module)
    a, b = (RNG.standard_normal(s) for s in shapes)
    seed = RNG.standard_normal((3, 5))
    ta, tb = (RNG.standard_normal(s) for s in shapes)
    _, ga, gb, _, ha, hb = interpret(module, "f_grad_jvp", a, b, seed, ta, tb)
    eps = 1e-6
    _, pa, pb = interpret(module, "f_grad", a + eps * ta, b + eps * tb, seed)
    _, ma, mb = interpret(module, "f_grad", a - eps * ta, b - eps * tb, seed)
    np.testing.assert_allclose(ha, (pa - ma) / (2 * eps), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hb, (pb - mb) / (2 * eps), rtol=1e-5, atol=1e-8)


def test_engine_agrees_with_the_interpreter():
    """One compiled module (compiling costs more than the checks): a wcr(max)
    with ties (the engine's fast-math must not lose the tied candidates: they
    are stored, not recomputed), a wcr(mul) with a zero factor, the jacobi time
    loop, and the call and branch."""
    programs = {"rmax": _reduce_map("max"), "rmul": _reduce_map("mul"), "jacobi": JACOBI, "ctl": CONTROL}
    text = "\n".join(t.replace("@f(", f"@{name}(").replace("@helper", f"@helper_{name}")
                     for name, t in programs.items())
    module = parse_module(text)
    PassManager.parse(",".join(f"jvp{{func={name} wrt=0,1}}" for name in programs)).run(module)
    engine = ExecutionEngine(module.clone())
    ties, zero = np.array([0.5, -1.0, 0.5, 0.25, 0.5, -0.75]), RNG.standard_normal(6)
    zero[3] = 0.0
    cases = {
        "rmax": [ties, np.zeros(6), np.array(0.0), RNG.standard_normal(6), RNG.standard_normal(6)],
        "rmul": [zero, RNG.standard_normal(6), np.array(0.5), RNG.standard_normal(6), RNG.standard_normal(6)],
        "jacobi": [RNG.standard_normal(10), np.array(1.3), RNG.standard_normal(10), np.array(0.4)],
        "ctl": [RNG.uniform(-0.5, 0.5, 4), 0.9, RNG.standard_normal(4), 0.3],
    }
    for name, args in cases.items():
        got, want = (_tuple(run(f"{name}_jvp", *args)) for run in (engine.invoke, partial(interpret, module)))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, err_msg=name)


LOOP_IN_MAP = """
func.func @f(%x: tensor<3x4xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %e = tensor.empty() : tensor<3xf64>
  %z = arith.constant dense<0.0> : tensor<3xf64>
  %m, %s = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>, %acc = %z : tensor<3xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %one = arith.constant 1.0 : f64
    %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %one) -> (f64) {
      %v = df.read %x[%i, %k] : tensor<3x4xf64>
      %p = df.tasklet (%a, %v) : (f64, f64) -> f64 {
      ^bb0(%u: f64, %w: f64):
        %q = arith.mulf %u, %w : f64
        %t = math.sin %q : f64
        df.yield %t : f64
      }
      df.write %p, %acc[%i] wcr(add) : tensor<3xf64>
      scf.yield %p : f64
    }
    df.write %r, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>, tensor<3xf64>
  func.return %m, %s : tensor<3xf64>, tensor<3xf64>
}"""


def test_scalar_loop_in_a_map_body():
    """A scalar scf.for in a map body (its tangent iter_arg), writing with wcr(add) from inside."""
    check_jvp(LOOP_IN_MAP, "f", [RNG.standard_normal((3, 4))], [0], reverse=False)
    check_jvp(LOOP_IN_MAP.replace("      df.write %p, %acc[%i] wcr(add) : tensor<3xf64>\n", ""), "f",
              [RNG.standard_normal((3, 4))], [0])


def test_second_order_modes_agree():
    """sum_k w_k H_k t three ways: forward over reverse (jvp of @f_grad), reverse
    over forward (the gradient of <w, J t> from @f_jvp_grad); and forward over
    forward (jvp of @f_jvp) against second differences along t."""
    text, shapes = NN["matmul_softmax"]
    module = parse_module(text)
    PassManager.parse("autodiff{func=f},jvp{func=f_grad wrt=0,1},jvp{func=f},autodiff{func=f_jvp wrt=0,1},"
                      "jvp{func=f_jvp wrt=0,1,2,3}").run(module)
    a, b = (RNG.standard_normal(s) for s in shapes)
    ta, tb = (RNG.standard_normal(s) for s in shapes)
    w = RNG.standard_normal((3, 5))
    forward_over_reverse = interpret(module, "f_grad_jvp", a, b, w, ta, tb)[-2:]
    reverse_over_forward = interpret(module, "f_jvp_grad", a, b, ta, tb, np.zeros((3, 5)), w)[-2:]
    for x, y in zip(forward_over_reverse, reverse_over_forward, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-13)
    second = interpret(module, "f_jvp_jvp", a, b, ta, tb, ta, tb, np.zeros_like(ta), np.zeros_like(tb))[-1]
    eps = 1e-4
    values = [interpret(module, "f", a + s * ta, b + s * tb) for s in (eps, 0.0, -eps)]
    np.testing.assert_allclose(second, (values[0] - 2 * values[1] + values[2]) / eps**2, rtol=1e-5, atol=1e-6)


DYNAMIC = """
func.func @f(%x: tensor<?xf64>) -> (tensor<f64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %init = arith.constant dense<INIT> : tensor<f64>
  %e = tensor.empty(%n) : tensor<?xf64>
  %m, %y = df.map (%i) in (%n) outs(%o = %init : tensor<f64>, %p = %e : tensor<?xf64>) {
    %r = df.read %x[%i] : tensor<?xf64>
    %q = df.tasklet (%r) : (f64) -> f64 {
    ^bb0(%u: f64):
      %h = math.sin %u : f64
      df.yield %h : f64
    }
    df.write %q, %o[] wcr(KIND) : tensor<f64>
    df.write %q, %p[%i] : tensor<?xf64>
  } -> tensor<f64>, tensor<?xf64>
  func.return %m, %y : tensor<f64>, tensor<?xf64>
}"""


@pytest.mark.parametrize("kind, init", [("max", "-1.0e+30"), ("mul", "1.0")])
def test_dynamic_shapes(kind, init):
    """Stored candidates and zero tangents of a dynamically shaped map."""
    check_jvp(DYNAMIC.replace("KIND", kind).replace("INIT", init), "f", [RNG.standard_normal(7)], [0])
