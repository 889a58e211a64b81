"""Symbolic tasklet gradients against finite differences, kinks and errors."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.rewriter import InsertPoint

from dfc.compiler import parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects import df
from dfc.passes.autodiff.tasklet_diff import (
    UnsupportedOpError,
    gradient_tasklet,
    tasklet_to_sympy,
)

POINTS = [(0.7, 1.3), (1.6, 0.4)]


def program(body: str, types=("f64", "f64"), results=("f64",), yields="%r") -> str:
    """@f(inputs) -> results: one tasklet over block arguments %x, %y, %z, ..."""
    args = [f"%a{k}" for k in range(len(types))]
    names = [f"%r{k}" for k in range(len(results))]
    block_args = ", ".join(f"%{n}: {t}" for n, t in zip("xyzw", types))
    res = ", ".join(results)
    return f"""
    func.func @f({", ".join(f"{a}: {t}" for a, t in zip(args, types))}) -> ({res}) {{
      {", ".join(names)} = df.tasklet ({", ".join(args)}) : ({", ".join(types)}) -> ({res}) {{
      ^bb0({block_args}):
        {body}
        df.yield {yields} : {res}
      }}
      func.return {", ".join(names)} : {res}
    }}"""


def with_gradient(text: str, wrt=None) -> ModuleOp:
    """The module of `text` plus @grad(inputs..., seeds...) -> gradients of @f's tasklet."""
    module = parse_module(text)
    grad = next(op for op in module.ops if isinstance(op, func.FuncOp)).clone()
    grad.sym_name = StringAttr("grad")
    module.body.block.add_op(grad)
    block = grad.body.block
    tasklet = next(op for op in block.ops if isinstance(op, df.TaskletOp))
    seeds = [block.insert_arg(t, len(block.args)) for t in tasklet.res.types]
    wrt = range(len(tasklet.inputs)) if wrt is None else wrt
    ret = block.last_op
    grads = gradient_tasklet(tasklet, seeds, wrt, Builder(InsertPoint.before(ret)))
    ret.detach()
    ret.erase()
    tasklet.detach()
    tasklet.erase()
    block.add_op(func.ReturnOp(*grads))
    grad.function_type = FunctionType.from_lists(block.arg_types, [g.type for g in grads])
    module.verify()
    return module


def results(module: ModuleOp, name: str, *args) -> list[float]:
    out = interpret(module, name, *args)
    return list(out) if isinstance(out, tuple) else [out]


def finite_difference(f, point, k: int, h: float = 1e-3) -> np.ndarray:
    """d f / d point[k] by the fourth-order central stencil, for every result of f."""

    def at(step):
        p = list(point)
        p[k] += step * h
        return np.array(f(*p), dtype=np.float64)

    return (at(-2) - 8 * at(-1) + 8 * at(1) - at(2)) / (12 * h)


def check_gradient(text: str, point, seeds=None, ref=None, rtol: float = 1e-6):
    """@grad at `point` agrees with finite differences of @f (or of `ref`)."""
    module = with_gradient(text)
    n_results = len(next(op for op in module.walk() if isinstance(op, df.TaskletOp)).res)
    seeds = seeds or [1.0 + 0.5 * r for r in range(n_results)]
    f = ref or (lambda *p: results(module, "f", *p))
    grads = results(module, "grad", *point, *seeds)
    for k, g in enumerate(grads):
        expected = float(np.dot(seeds, finite_difference(f, point, k)))
        assert g == pytest.approx(expected, rel=rtol, abs=1e-9), f"d/d input {k}"
    return grads


def gradient_ops(module: ModuleOp) -> list[str]:
    grad = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "grad")
    tasklet = next(op for op in grad.walk() if isinstance(op, df.TaskletOp))
    return [op.name for op in tasklet.body.block.ops]


UNARY = ["exp", "log", "log1p", "sqrt", "rsqrt", "tanh", "sin", "cos", "erf"]

CASES = {
    "addf": "%r = arith.addf %x, %y : f64",
    "subf": "%r = arith.subf %x, %y : f64",
    "mulf": "%r = arith.mulf %x, %y : f64",
    "divf": "%r = arith.divf %x, %y : f64",
    "negf": "%m = arith.mulf %x, %y : f64\n %r = arith.negf %m : f64",
    "constant": "%c = arith.constant 2.5 : f64\n %m = arith.mulf %c, %x : f64\n %r = arith.subf %m, %y : f64",
    "maximumf": "%r = arith.maximumf %x, %y : f64",
    "minimumf": "%r = arith.minimumf %x, %y : f64",
    "maxnumf": "%r = arith.maxnumf %x, %y : f64",
    "minnumf": "%r = arith.minnumf %x, %y : f64",
    "fma": "%r = math.fma %x, %y, %x : f64",
    "absf": "%d = arith.subf %x, %y : f64\n %r = math.absf %d : f64",
    "powf": "%r = math.powf %x, %y : f64",
    "sigmoid": """%one = arith.constant 1.0 : f64
        %m = arith.mulf %x, %y : f64
        %n = arith.negf %m : f64
        %e = math.exp %n : f64
        %d = arith.addf %one, %e : f64
        %r = arith.divf %one, %d : f64""",
    **{op: f"%m = arith.mulf %x, %y : f64\n %r = math.{op} %m : f64" for op in UNARY},
    # nested max/min: the derivative's conditions nest (SymPy's ITE), once refused (issue 12)
    "nested-extrema": """%s = arith.addf %x, %y : f64
        %t = math.tanh %s : f64
        %m = arith.maximumf %y, %x : f64
        %n = arith.negf %m : f64
        %r = arith.minimumf %t, %n : f64""",
    # SymPy recursed without bound on these as nested Piecewise (found by difftest, issue 12)
    "deep-extrema": """%a = arith.maximumf %x, %y : f64
        %b = arith.maximumf %y, %a : f64
        %c = arith.minimumf %y, %x : f64
        %d = arith.negf %c : f64
        %e = arith.maximumf %b, %d : f64
        %f = arith.minimumf %e, %x : f64
        %r = arith.maximumf %f, %c : f64""",
    # the derivative's tie weights as Piecewise: SymPy collapsed their conditions without end
    "function-of-extremum": """%t = math.tanh %x : f64
        %d = arith.subf %t, %x : f64
        %q = arith.mulf %x, %x : f64
        %s = arith.addf %t, %q : f64
        %m = arith.minimumf %d, %s : f64
        %w = math.tanh %m : f64
        %r = arith.mulf %w, %y : f64""",
    "extremum-of-extrema": """%a = arith.minimumf %x, %y : f64
        %b = arith.mulf %x, %y : f64
        %c = arith.maximumf %b, %x : f64
        %r = arith.maximumf %a, %c : f64""",
}


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_op_matches_finite_differences(case, point):
    check_gradient(program(CASES[case]), point)


PREDICATES = [o + p for o in "ou" for p in ("eq", "gt", "ge", "lt", "le", "ne")] + ["ord", "uno", "true", "false"]


@pytest.mark.parametrize("predicate", PREDICATES)
def test_cmpf_select(predicate):
    body = f"""%c = arith.cmpf {predicate}, %x, %y : f64
        %p = arith.mulf %x, %y : f64
        %s = math.sin %x : f64
        %r = arith.select %c, %p, %s : f64"""
    for point in POINTS:
        check_gradient(program(body), point)
    # on the tie (no finite differences across the jump): the selected branch's gradient
    holds = predicate in ("oeq", "oge", "ole", "ueq", "uge", "ule", "ord", "true")
    expected = [0.9, 0.9] if holds else [math.cos(0.9), 0.0]
    assert results(with_gradient(program(body)), "grad", 0.9, 0.9, 1.0) == pytest.approx(expected)


@pytest.mark.parametrize("n", [3, -2, 1, 0])
def test_fpowi_constant_exponent(n):
    # the interpreter has no math.fpowi: compare with numpy's power instead
    body = f"%n = arith.constant {n} : i32\n %p = math.fpowi %x, %n : f64, i32\n %r = arith.mulf %p, %y : f64"
    module = with_gradient(program(body))
    assert "math.fpowi" not in gradient_ops(module)
    check_gradient(program(body), (1.3, 0.6), ref=lambda x, y: [x**n * y])


def test_gradients_share_subexpressions():
    module = with_gradient(program("%m = arith.mulf %x, %y : f64\n %r = math.exp %m : f64"))
    assert gradient_ops(module).count("math.exp") == 1


def test_sqrt_and_rsqrt_emit_sqrt_ops():
    ops = gradient_ops(with_gradient(program("%r = math.sqrt %x : f64")))
    assert "math.rsqrt" in ops and "math.powf" not in ops


def test_f32_tasklet_computes_in_f32():
    body = "%m = arith.mulf %x, %y : f32\n %r = math.tanh %m : f32"
    module = with_gradient(program(body, types=("f32", "f32"), results=("f32",)))
    gx, gy = results(module, "grad", 0.7, 1.3, 1.0)
    assert gx.dtype == np.float32 and gy.dtype == np.float32
    sech2 = 1 - math.tanh(0.7 * 1.3) ** 2
    assert gx == pytest.approx(sech2 * 1.3, rel=1e-5) and gy == pytest.approx(sech2 * 0.7, rel=1e-5)


def test_f16_tasklet_computes_in_f16():
    module = with_gradient(program("%r = arith.mulf %x, %y : f16", types=("f16", "f16"), results=("f16",)))
    gx, gy = results(module, "grad", 0.5, 3.0, 1.0)
    assert gx.dtype == np.float16 and (gx, gy) == (3.0, 0.5)


def test_casts_pass_the_derivative_through():
    body = """%xe = arith.extf %x : f32 to f64
        %m = arith.mulf %xe, %y : f64
        %e = math.exp %m : f64
        %t = arith.truncf %e : f64 to f32
        %u = arith.mulf %t, %x : f32
        %r = arith.extf %u : f32 to f64"""
    module = with_gradient(program(body, types=("f32", "f64")))
    ops = gradient_ops(module)
    assert "arith.extf" in ops and "arith.truncf" in ops
    x, y = np.float32(0.7), 1.3
    gx, gy = results(module, "grad", x, y, 2.0)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    e = math.exp(float(x) * y)
    assert gx == pytest.approx(2 * (e * y * x + e), rel=1e-5)
    assert gy == pytest.approx(2 * e * x * x, rel=1e-5)


RELU_SELECT = """%z = arith.constant 0.0 : f64
    %c = arith.cmpf ogt, %x, %z : f64
    %r = arith.select %c, %x, %z : f64"""


@pytest.mark.parametrize(
    "body",
    [
        RELU_SELECT,
        "%z = arith.constant 0.0 : f64\n %r = arith.maximumf %x, %z : f64",
        "%z = arith.constant 0.0 : f64\n %r = arith.maximumf %z, %x : f64",
        "%z = arith.constant 0.0 : f64\n %n = arith.negf %x : f64\n"
        " %m = arith.minimumf %n, %z : f64\n %r = arith.negf %m : f64",
    ],
    ids=["select", "maximumf", "maximumf-constant-first", "minimumf"],
)
def test_relu_kink(body):
    module = with_gradient(program(body))
    assert results(module, "grad", 0.0, 0.0, 1.0) == [0.0, 0.0]
    assert results(module, "grad", 2.0, 0.0, 1.0) == [1.0, 0.0]
    assert results(module, "grad", -2.0, 0.0, 1.0) == [0.0, 0.0]


def test_abs_kink_is_zero():
    module = with_gradient(program("%r = math.absf %x : f64"))
    assert [results(module, "grad", x, 0.0, 1.0)[0] for x in (-1.0, 0.0, 1.0)] == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("op", ["maximumf", "minimumf", "maxnumf", "minnumf"])
def test_extremum_tie_splits_evenly(op):
    module = with_gradient(program(f"%r = arith.{op} %x, %y : f64"))
    assert results(module, "grad", 0.3, 0.3, 2.0) == [1.0, 1.0]


def test_multi_result_tasklet_with_seeds():
    body = """%r0 = arith.mulf %x, %y : f64
        %s = math.sin %x : f64
        %yy = arith.mulf %y, %y : f64
        %r1 = arith.addf %s, %yy : f64"""
    text = program(body, results=("f64", "f64"), yields="%r0, %r1")
    gx, gy = check_gradient(text, (0.7, 1.3), seeds=[0.5, -2.0])
    assert gx == pytest.approx(0.5 * 1.3 - 2.0 * math.cos(0.7))
    assert gy == pytest.approx(0.5 * 0.7 - 2.0 * 2 * 1.3)
    (only_y,) = results(with_gradient(text, wrt=[1]), "grad", 0.7, 1.3, 0.5, -2.0)
    assert only_y == pytest.approx(gy)
    assert results(with_gradient(text, wrt=[1, 0]), "grad", 0.7, 1.3, 0.5, -2.0) == pytest.approx([gy, gx])


def test_unsupported_op_is_named():
    text = program(
        "%c = math.ctlz %y : i32\n %r = arith.addf %x, %x : f64", types=("f64", "i32")
    )
    module = parse_module(text)
    tasklet = next(op for op in module.walk() if isinstance(op, df.TaskletOp))
    with pytest.raises(UnsupportedOpError, match="'math.ctlz'") as err:
        tasklet_to_sympy(tasklet)
    assert err.value.op.name == "math.ctlz"
    with pytest.raises(UnsupportedOpError, match="'math.atan': no symbolic rule"):
        with_gradient(program("%r = math.atan %x : f64"))


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "roundeven", "trunc"])
def test_step_functions_have_derivative_zero(op):
    """As in JAX and PyTorch: d floor(x) * y / dx = 0, / dy = floor(x)."""
    module = with_gradient(program(f"%f = math.{op} %x : f64\n %r = arith.mulf %f, %y : f64"))
    rounded = {"floor": 2.0, "ceil": 3.0, "round": 3.0, "roundeven": 2.0, "trunc": 2.0}[op]
    assert results(module, "grad", 2.5, 7.0, 1.0) == [0.0, rounded]
    assert results(module, "grad", -0.5, 7.0, 1.0)[0] == 0.0


def test_sign_has_derivative_zero():
    copysign = with_gradient(program("%r = math.copysign %x, %y : f64"))
    assert results(copysign, "grad", -1.5, 2.0, 1.0) == [-1.0, 0.0]
    assert results(copysign, "grad", 1.5, -2.0, 1.0) == [-1.0, 0.0]
    check_gradient(program("%r = math.copysign %x, %y : f64"), (0.7, -1.3))
    selects = """%z = arith.constant 0.0 : f64
        %one = arith.constant 1.0 : f64
        %m = arith.constant -1.0 : f64
        %p = arith.cmpf ogt, %x, %z : f64
        %n = arith.cmpf olt, %x, %z : f64
        %s = arith.select %n, %m, %z : f64
        %t = arith.select %p, %one, %s : f64
        %r = arith.mulf %t, %y : f64"""
    module = with_gradient(program(selects))
    assert [results(module, "grad", x, 3.0, 1.0) for x in (-2.0, 0.0, 2.0)] == [[0.0, -1.0], [0.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("predicate,nan_branch", [("ugt", True), ("ogt", False), ("uno", True), ("ord", False)])
def test_unordered_predicates_hold_at_nan(predicate, nan_branch):
    """relu written as select(x ugt 0, x, 0) passes the gradient at NaN, as PyTorch does."""
    module = with_gradient(program(f"%z = arith.constant 0.0 : f64\n %c = arith.cmpf {predicate}, %x, %z : f64\n"
                                   " %r = arith.select %c, %x, %y : f64"))
    assert results(module, "grad", math.nan, 5.0, 1.0) == ([1.0, 0.0] if nan_branch else [0.0, 1.0])


def test_tasklet_to_sympy():
    symbols, (expr,) = tasklet_to_sympy(
        next(op for op in parse_module(program(CASES["sigmoid"])).walk() if isinstance(op, df.TaskletOp))
    )
    x, y = symbols
    assert expr.subs({x: 0.5, y: 2.0}) == pytest.approx(1 / (1 + math.exp(-1.0)))


# --- random expressions -------------------------------------------------------------

LEAF = st.sampled_from(["%x", "%y"]) | st.floats(-2, 2).map(lambda c: round(c, 3))
OPS = ["add", "sub", "mul", "div", "exp", "tanh", "sin", "logsq"]


def trees(depth: int):
    if depth == 0:
        return LEAF
    sub = trees(depth - 1)
    return LEAF | st.tuples(st.sampled_from(OPS[4:]), sub) | st.tuples(st.sampled_from(OPS[:4]), sub, sub)


def render(tree) -> str:
    """The MLIR body computing `tree` into %r; `a / b` is a / (1 + b^2) and logsq(a) log(1 + a^2)."""
    lines = ["%one = arith.constant 1.0 : f64", "%zero = arith.constant 0.0 : f64"]

    def line(rhs: str) -> str:
        name = f"%v{len(lines)}"
        lines.append(f"{name} = {rhs} : f64")
        return name

    def one_plus_square(a: str) -> str:
        return line(f"arith.addf %one, {line(f'arith.mulf {a}, {a}')}")

    def go(node) -> str:
        if isinstance(node, str):
            return node
        if isinstance(node, float):
            return line(f"arith.constant {node:e}")
        op, *args = node
        a, *rest = map(go, args)
        if op in ("add", "sub", "mul"):
            return line(f"arith.{op}f {a}, {rest[0]}")
        if op == "div":
            return line(f"arith.divf {a}, {one_plus_square(rest[0])}")
        if op == "logsq":
            return line(f"math.log {one_plus_square(a)}")
        return line(f"math.{op} {a}")

    out = go(tree)
    return "\n".join([*lines, f"%r = arith.addf {out}, %zero : f64"])


@settings(max_examples=30, deadline=None, database=None)
@given(trees(3), st.floats(-1, 1), st.floats(-1, 1), st.floats(0.5, 2))
def test_random_expressions_match_finite_differences(tree, x, y, seed):
    module = with_gradient(program(render(tree)))
    value = results(module, "f", x, y)[0]
    assume(math.isfinite(value) and abs(value) < 1e6)
    grads = results(module, "grad", x, y, seed)
    for k, g in enumerate(grads):
        fd = seed * finite_difference(lambda *p: results(module, "f", *p), (x, y), k)[0]
        assert abs(g - fd) <= 1e-6 * abs(fd) + 1e-9 * (1 + abs(value)), (k, g, fd)
