"""Store or recompute per value under `autodiff{memory_budget=B}` (issue 37, item 3):
the straight-line code of a chain of layers is cut between layers, and as many
segments as the budget needs, equal layers and the distinct tail alike, are
outlined into functions called as `nothing_saveable` checkpoints
(passes/autodiff/budget_segments.py). Lower budgets recompute more segments and
hold less memory (`resident_bytes` of the compiled gradient); the gradient is
the stored one's and central differences'."""

import re
from itertools import pairwise

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from benchmarks.autodiff_memory import layer_chain, lowered_resident_bytes
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.passes.autodiff.budget_segments import outline_under_budget, stored_bytes
from dfc.passes.autodiff.checkpoint import inline_stored_calls

RNG = np.random.default_rng(373)


def chain_function(module):
    return next(op for op in module.ops if op.sym_name.data == "chain")


def plan(layers: int, batch: int, width: int, budget: int):
    """(the model's stored bytes, how many segments are outlined, the stored bytes before) for `budget`."""
    module = parse_module(layer_chain(layers, batch, width))
    f = chain_function(module)
    inline_stored_calls(f, module, frozenset())
    before = stored_bytes(f.body.block)
    stored = outline_under_budget(f, module, budget)
    calls = [op for op in f.walk() if op.name == "func.call"]
    assert all(op.attributes["df.checkpoint"].data == "nothing_saveable" for op in calls)
    assert len({op.callee.root_reference.data for op in calls}) <= 2, "equal layers share one function"
    return stored, len(calls), before


def test_lower_budgets_outline_more_segments_within_the_budget():
    """5 layers of 8x4 float64 (256-byte activations): the tail (layer 5 and the
    loss, 6 activations internal) saves the most per FLOP and goes first, then
    layers 1-4 (4 each, one shared function): the plans are 0, 1, 2, 3 and 5
    segments, the model within the budget down to its least (4 activations, the
    cut values, and the loss); below that, best effort: every segment."""
    act = 8 * 4 * 8
    full, none, before = plan(5, 8, 4, 10**9)
    assert none == 0 and full == before == 26 * act + 8  # 5 values a layer, the square, the loss
    least, most, _ = plan(5, 8, 4, 0)
    assert most == 5 and least == 4 * act + 8
    counts = []
    for budget in (full, full - 1, 20 * act + 8, 20 * act + 7, 12 * act + 8, least):
        stored, count, _ = plan(5, 8, 4, budget)
        assert stored <= budget, (budget, stored)
        counts.append(count)
    assert counts == [0, 1, 1, 2, 3, 5], counts
    assert plan(5, 8, 4, least - 1)[:2] == (least, 5)  # infeasible: the least this scheme stores


@pytest.mark.parametrize("budget", [1000, pytest.param(0, marks=pytest.mark.slow)], ids=str)
def test_gradient_against_central_differences_and_the_stored_one(budget):
    """4 layers of 4x3 (96-byte activations; of the forward values, the backward
    reads 1,160 bytes; 1,000 bytes: the tail outlined, 0: the tail and the 3
    equal layers), gradient in all three arguments,
    interpreter (and engine with --slow); the interpreter's equal to the gradient
    without a budget."""
    args = [RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))]
    pipeline = f"autodiff{{func=chain memory_budget={budget}}}"
    check_gradient(layer_chain(4, 4, 3), "chain", args, [0, 1, 2], pipeline=pipeline, engine=budget == 0)
    stored, budgeted = gradient(4, 4, 3, None), gradient(4, 4, 3, budget)
    grad = next(op for op in budgeted.ops if op.sym_name.data == "chain_grad")
    calls = [op.callee.root_reference.data for op in grad.walk() if op.name == "func.call"]
    layers = ["chain_grad_segment_1"] * {1000: 0, 0: 3}[budget]  # the tail is chain_grad_segment
    assert calls == [*layers, "chain_grad_segment", "chain_grad_segment_grad", *(n + "_grad" for n in layers)]
    for module in (stored, budgeted):
        PassManager.parse("expand-library").run(module)
    want = interpret(stored, "chain_grad", *args, np.array(1.0))[1:]
    for g, w in zip(interpret(budgeted, "chain_grad", *args, np.array(1.0))[1:], want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13 * np.max(np.abs(w)))


def gradient(layers: int, batch: int, width: int, budget: int | None):
    module = parse_module(layer_chain(layers, batch, width))
    PassManager.parse("autodiff{func=chain" + ("" if budget is None else f" memory_budget={budget}") + "}").run(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("layers", [4, 5])
def test_lower_budgets_hold_less_memory_with_the_same_gradient(layers):
    """32x8 float64 (2 KiB activations), the compiled gradient's `resident_bytes`
    at budgets giving 0, 1, 2, ... segments outlined decreases strictly, and its
    gradient is bit-identical to the stored one's. 5 layers: 58,176 bytes stored,
    50,944 / 44,800 / 22,656 with 1 / 2 / 5 segments recomputed (about 2
    compilations of 5 s each a budget: with --slow)."""
    act = 32 * 8 * 8
    budgets = [None, 0] if layers == 4 else [None, 13 * act + 8, 11 * act + 8, 0]  # the model: 15 act + 8 stored
    args = [RNG.standard_normal((32, 8)), RNG.standard_normal((8, 8)) / 3, RNG.standard_normal((8, 8)) / 3]
    held, want = [], None
    for budget in budgets:
        module = gradient(layers, 32, 8, budget)
        held.append(lowered_resident_bytes(str(module), 1, "chain_grad"))
        got = ExecutionEngine(module, threads=1).invoke("chain_grad", *args, np.array(1.0))[1:]
        want = got if want is None else want
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert all(a > b for a, b in pairwise(held)), held
    assert held[0] - held[-1] >= 2 * layers * act, held  # two activations a layer at least


def numpy_layer(h, w1, w2):
    return h + np.tanh(np.tanh(h @ w1) @ w2)


def numpy_loss(x, w1, w2):
    h = numpy_layer(numpy_layer(numpy_layer(x, w1, w2), w1, w2), w1, w2)
    return np.sum(h * h)


@pytest.mark.slow
def test_numpy_frontend_maps_are_outlined():
    """The NumPy frontend's elementwise maps (df.map regions) go into segments too:
    under `autodiff{memory_budget=0}` every layer of its module is recomputed, and
    the compiled gradient is the stored one's (dfc.grad's; two compilations: with
    --slow). Whether that holds less memory is dfc.grad's to measure
    (tests/api/test_memory_budget.py)."""
    import dfc

    args = [RNG.standard_normal((6, 4)), RNG.standard_normal((4, 4)) / 3, RNG.standard_normal((4, 4)) / 3]
    want = dfc.grad(numpy_loss, argnums=(0, 1, 2))(*args)
    fn, ir_args, _ = dfc.jit(numpy_loss).specialize(*args)
    module = fn.module.clone()
    PassManager.parse("autodiff{func=numpy_loss memory_budget=0}").run(module)
    names = [op.sym_name.data for op in module.ops]
    assert sum(bool(re.fullmatch(r"numpy_loss_grad_segment(_\d+)?_grad", n)) for n in names) == 2, names  # layers, tail
    got = ExecutionEngine(module, threads=1).invoke("numpy_loss_grad", *ir_args, np.array(1.0))[1:]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13 * np.max(np.abs(w)))


def test_split_gradient_saves_fewer_values_with_the_same_gradient():
    """With `split=true`, @chain_fwd hands @chain_bwd 15 values stored, 6 with every
    segment recomputed (interpreter)."""
    args = [RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))]
    grads, saved = [], []
    for options in ("split=true", "split=true memory_budget=0"):
        module = parse_module(layer_chain(4, 4, 3))
        PassManager.parse(f"autodiff{{func=chain {options}}},expand-library").run(module)
        forward = interpret(module, "chain_fwd", *args)[1:]
        saved.append(len(forward))
        grads.append(interpret(module, "chain_bwd", *forward, np.array(1.0)))
    assert saved == [15, 6], saved
    for g, w in zip(grads[1], grads[0], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13 * np.max(np.abs(w)))
