"""Gradient checks shared by the autodiff tests: the gradient function run by
the interpreter and by the engine, against float64 central differences."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret


def _as_tuple(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


# Above this many perturbed elements the central differences evaluate `@name`
# with the engine (after checking that it agrees with the interpreter at the
# point itself): two interpreter runs per element dominate the suite's time.
ENGINE_EVALUATIONS = 24


def finite_differences(
    text: str, name: str, args: list, wrt: list[int], seed, eps: float = 1e-6, output: int = 0,
    engine: bool = True,
) -> list:
    """d sum(seed * f(args)[output]) / d args[k] for k in wrt, by float64 central
    differences of `@name` (interpreted; compiled when `engine` and there are
    more than ENGINE_EVALUATIONS elements, once the compiled value at `args`
    equals the interpreted one)."""
    many = sum(np.size(args[k]) for k in wrt) > ENGINE_EVALUATIONS
    run = _evaluator(text, name, output, args if engine and many else None)

    def objective(values: list) -> float:
        return float(np.sum(np.asarray(seed) * run(values)))

    grads = []
    for k in wrt:
        if not isinstance(args[k], np.ndarray):  # a float scalar
            plus, minus = list(args), list(args)
            plus[k], minus[k] = args[k] + eps, args[k] - eps
            grads.append((objective(plus) - objective(minus)) / (2 * eps))
            continue
        g = np.zeros_like(args[k])
        for index in np.ndindex(args[k].shape):
            plus, minus = _copies(args), _copies(args)
            plus[k][index] += eps
            minus[k][index] -= eps
            g[index] = (objective(plus) - objective(minus)) / (2 * eps)
        grads.append(g)
    return grads


def _evaluator(text: str, name: str, output: int, check_at: list | None):
    """`values -> f(values)[output]`: the interpreter's (after expand-library), or
    with `check_at` the engine's, once it equals the interpreter's there."""
    module = parse_module(text)
    PassManager.parse("expand-library").run(module)

    def interpreted(values: list):
        return _as_tuple(interpret(module, name, *values))[output]

    if check_at is None:
        return interpreted
    engine = ExecutionEngine(parse_module(text))

    def compiled(values: list):
        return _as_tuple(engine.invoke(name, *values))[output]

    want = np.asarray(interpreted(_copies(check_at)), np.float64)
    scale = float(np.max(np.abs(want), initial=1.0))  # reassociated sums differ by ulps of the largest term
    np.testing.assert_allclose(compiled(_copies(check_at)), want, rtol=1e-10, atol=1e-12 * scale,
                               err_msg="the compiled function differs from the interpreter's")
    return compiled


def _copies(args: list) -> list:
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def check_gradient(
    text: str, name: str, args: list, wrt: list[int], pipeline: str = "autodiff", engine: bool = True,
    rtol: float = 1e-6, atol: float = 1e-8, output: int = 0,
) -> None:
    """`@name_grad` built by `pipeline` (differentiating result `output`), run by
    the interpreter (and the engine), agrees with finite differences of `@name`
    for a random seed."""
    module = parse_module(text)
    PassManager.parse(f"{pipeline},expand-library").run(module)
    shape = np.shape(_as_tuple(interpret(module, name, *args))[output])
    seed = np.asarray(np.random.default_rng(3).standard_normal(shape) if shape else 0.75)
    result_type = next(op for op in module.ops if op.sym_name.data == name).function_type.outputs.data[output]
    if not isinstance(result_type, TensorType):
        seed = float(seed)
    expected = finite_differences(text, name, args, wrt, seed, output=output, engine=engine)
    n = len(_as_tuple(interpret(module, name, *args)))
    got = _as_tuple(interpret(module, f"{name}_grad", *args, seed))[n:]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg="interpreter")
    if engine:
        compiled = parse_module(text)
        PassManager.parse(pipeline).run(compiled)
        engine_ = ExecutionEngine(compiled)
        got = _as_tuple(engine_.invoke(f"{name}_grad", *args, seed))[n:]
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg="engine")
