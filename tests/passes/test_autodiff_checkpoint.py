"""`df.checkpoint` calls (issue 37): autodiff inlines and stores an unmarked call,
and differentiates a marked one through `@callee_grad`, which recomputes the
callee's values in the backward sweep. The gradient is the same either way
(against central differences and against each other), and the compiled
gradient holds less memory with the checkpoints (`resident_bytes`: what the
functions it calls hold counted too), helped by mem-plan freeing each call's
results after their last use."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from benchmarks.autodiff_memory import layer_chain, lowered_resident_bytes
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.dialects.diagnostics import CompileError

RNG = np.random.default_rng(37)


def gradient_module(text: str):
    module = parse_module(text)
    PassManager.parse("autodiff{func=chain}").run(module)
    return module


def function(module, name: str):
    return next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == name)


@pytest.mark.parametrize("policy", [None, "nothing_saveable", "dots_saveable"], ids=["stored", "nothing", "dots"])
def test_chain_against_central_differences(policy):
    """2 layers of 4x3 activations, gradients in h0, w1 and w2 (interpreter; the
    engine for nothing_saveable: the stored form is every other test's, and the
    slow memory test compiles all three)."""
    args = [RNG.standard_normal((4, 3)), RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))]
    check_gradient(layer_chain(2, 4, 3, policy), "chain", args, [0, 1, 2], pipeline="autodiff{func=chain}",
                   engine=policy == "nothing_saveable")


def test_stored_calls_are_inlined_and_checkpointed_ones_call_the_callee_gradient():
    stored = gradient_module(layer_chain(3, 4, 3))
    assert [f.sym_name.data for f in stored.ops] == ["layer", "chain", "chain_grad"]
    assert not any(op.name == "func.call" for op in function(stored, "chain_grad").walk())
    marked = gradient_module(layer_chain(3, 4, 3, "nothing_saveable"))
    grad = function(marked, "chain_grad")
    callees = [op.callee.root_reference.data for op in grad.walk() if op.name == "func.call"]
    assert callees == ["layer"] * 3 + ["layer_grad"] * 3
    assert not any(op.name in ("nn.matmul", "nn.tanh") for op in grad.walk()), "the caller computes none of it"
    assert sum(op.name == "nn.matmul" for op in function(marked, "layer_grad").walk()) == 2 + 4  # recomputed, reversed


def test_dots_saveable_keeps_the_contractions_and_recomputes_the_rest():
    """The forward calls @layer_dots, which also returns both matmul results; @layer_grad_dots
    reads them (its matmuls are the backward's four) and recomputes the tanh from them."""
    module = gradient_module(layer_chain(3, 4, 3, "dots_saveable"))
    grad = function(module, "chain_grad")
    calls = [op for op in grad.walk() if op.name == "func.call"]
    assert [c.callee.root_reference.data for c in calls] == ["layer_dots"] * 3 + ["layer_grad_dots"] * 3
    assert all(len(c.results) == 3 for c in calls[:3])
    assert calls[3].operands[3:5] == calls[2].results[1:], "the last layer's matmul results, saved"
    backward = function(module, "layer_grad_dots")
    assert sum(op.name == "nn.matmul" for op in backward.walk()) == 4
    assert sum(op.name == "nn.tanh" for op in backward.walk()) == 2


LOOP = """func.func @g(%h: tensor<3x3xf64>, %w: tensor<3x3xf64>) -> tensor<3x3xf64> {
  %p = nn.matmul %h, %w : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
  %t = nn.tanh %p : (tensor<3x3xf64>) -> tensor<3x3xf64>
  func.return %t : tensor<3x3xf64>
}
func.func @f(%x: tensor<3x3xf64>, %w: tensor<3x3xf64>) -> tensor<3x3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<3x3xf64>) {
    %y = func.call @g(%h, %w) MARK : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
    scf.yield %y : tensor<3x3xf64>
  }
  func.return %r : tensor<3x3xf64>
}"""


@pytest.mark.parametrize("mark", ["", '{df.checkpoint = "nothing_saveable"}', '{df.checkpoint = "dots_saveable"}'],
                         ids=["stored", "nothing", "dots"])
def test_call_in_a_loop_against_central_differences(mark):
    args = [RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3)) / 2]
    check_gradient(LOOP.replace("MARK", mark), "f", args, [0, 1], engine=False)


@pytest.mark.parametrize("layers", [3, pytest.param(8, marks=pytest.mark.slow)])
def test_checkpoints_lower_the_memory_the_gradient_holds(layers):
    """256x32 float64 activations (64 KiB each): the stored gradient keeps each
    layer's matmul and tanh values for its backward sweep, the checkpointed one
    only the layers' inputs (and the callees' own buffers: a fixed cost),
    `dots_saveable` the inputs and both matmul results. Bytes held, stored /
    nothing / dots: 3 layers 1,073,280 / 737,408 / 934,272; 8 layers
    2,384,000 / 1,065,088 / 1,917,312 (nothing without freeing call results
    early: 2,105,472). With 8 layers the compiled gradients also agree (they are
    bit-identical)."""
    activation = 256 * 32 * 8
    args = [RNG.standard_normal((256, 32)), RNG.standard_normal((32, 32)) / 6, RNG.standard_normal((32, 32)) / 6]
    held, grads = {}, {}
    for policy in (None, "nothing_saveable", "dots_saveable"):
        module = gradient_module(layer_chain(layers, 256, 32, policy))
        held[policy] = lowered_resident_bytes(str(module), 1, "chain_grad")
        if layers > 3:
            grads[policy] = ExecutionEngine(module, threads=1).invoke("chain_grad", *args, np.array(1.0))[1:]
    assert held["nothing_saveable"] + layers * activation <= held[None], held
    assert held["nothing_saveable"] < held["dots_saveable"] < held[None], held
    for policy in grads:
        for got, want in zip(grads[policy], grads[None]):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.max(np.abs(want)))


def test_unknown_policy_is_a_located_error():
    module = parse_module(layer_chain(1, 4, 3, "everything_saveable"))
    with pytest.raises(CompileError, match='unknown df.checkpoint policy "everything_saveable"'):
        PassManager.parse("autodiff{func=chain}").run(module)


CALL_RESULTS = """func.func @g(%x: memref<16xf64>) -> memref<16xf64> {
  %y = memref.alloc() : memref<16xf64>
  "memref.copy"(%x, %y) : (memref<16xf64>, memref<16xf64>) -> ()
  func.return %y : memref<16xf64>
}
func.func @same(%x: memref<16xf64>) -> memref<16xf64> {
  func.return %x : memref<16xf64>
}
func.func @f(%x: memref<16xf64>, %o: memref<16xf64>) {
  %a = func.call @g(%x) : (memref<16xf64>) -> memref<16xf64>
  %b = func.call @g(%a) : (memref<16xf64>) -> memref<16xf64>
  %c = func.call @same(%b) : (memref<16xf64>) -> memref<16xf64>
  "memref.copy"(%c, %o) : (memref<16xf64>, memref<16xf64>) -> ()
  memref.dealloc %a : memref<16xf64>
  memref.dealloc %b : memref<16xf64>
  func.return
}"""


def test_mem_plan_frees_a_call_result_after_its_last_use():
    """%a is freed once @g has read it; %b is read through @same, which returns its
    argument: it stays held to the end."""
    module = parse_module(CALL_RESULTS)
    PassManager.parse("mem-plan").run(module)
    ops = [op for op in function(module, "f").body.block.ops]
    names = [op.name + (f" @{op.callee.root_reference.data}" if op.name == "func.call" else "") for op in ops]
    assert names == ["func.call @g", "func.call @g", "memref.dealloc", "func.call @same", "memref.copy",
                     "memref.dealloc", "func.return"], names
    assert ops[2].operands[0] is ops[0].results[0] and ops[5].operands[0] is ops[1].results[0]
