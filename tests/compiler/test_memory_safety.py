"""No input makes compiled code touch memory outside its buffers: an index the
compiler cannot prove in bounds is checked where it runs, and the call raises
IndexError naming the access. The cases run in a child process, so that a
missing check shows as a crash (a signal) instead of taking pytest down."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dfc import CompileError, ExecutionEngine, PassManager, interpret, parse_module

GATHER = """func.func @f(%x: tensor<8xf64>, %idx: tensor<{n}xi64>) -> tensor<{n}xf64> {{
  %e = tensor.empty() : tensor<{n}xf64>
  %r = df.map (%i) in ({n}) outs(%o = %e : tensor<{n}xf64>) {{
    %k = df.read %idx[%i] : tensor<{n}xi64>
    %j = arith.index_cast %k : i64 to index
    %v = df.read %x[%j] : tensor<8xf64>
    df.write %v, %o[%i] : tensor<{n}xf64>
  }} -> tensor<{n}xf64>
  func.return %r : tensor<{n}xf64>
}}"""

SCATTER = """func.func @f(%x: tensor<{n}xf64>, %idx: tensor<{n}xi64>) -> tensor<8xf64> {{
  %z = arith.constant dense<0.0> : tensor<8xf64>
  %r = df.map (%i) in ({n}) outs(%o = %z : tensor<8xf64>) {{
    %k = df.read %idx[%i] : tensor<{n}xi64>
    %j = arith.index_cast %k : i64 to index
    %v = df.read %x[%i] : tensor<{n}xf64>
    df.write %v, %o[%j] wcr(add) : tensor<8xf64>
  }} -> tensor<8xf64>
  func.return %r : tensor<8xf64>
}}"""

INTERNAL_BUFFER = """func.func @f(%a: tensor<?xf64>, %b: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %na = tensor.dim %a, %c0 : tensor<?xf64>
  %nb = tensor.dim %b, %c0 : tensor<?xf64>
  %e = tensor.empty(%na) : tensor<?xf64>
  %r = df.map (%i) in (%nb) outs(%o = %e : tensor<?xf64>) {
    %v = df.read %b[%i] : tensor<?xf64>
    df.write %v, %o[%i] : tensor<?xf64>
  } -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}"""

LOOP_BOUND = """func.func @f(%x: tensor<4x4xf64>, %n: index) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<4xf64>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<4xf64>) {
    %m = df.map (%i) in (4) outs(%o = %acc : tensor<4xf64>) {
      %v = df.read %x[%t, %i] : tensor<4x4xf64>
      %w = df.read %acc[%i] : tensor<4xf64>
      %s = arith.addf %v, %w : f64
      df.write %s, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %m : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}"""

EXTRACT = """func.func @f(%x: tensor<3x4xf64>, %i: index, %j: index) -> f64 {
  %v = tensor.extract %x[%i, %j] : tensor<3x4xf64>
  func.return %v : f64
}"""

NLL = """func.func @f(%logp: tensor<4x10xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %l = nn.nll_loss %logp, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  func.return %l : tensor<f32>
}"""

# (name, program, threads, arguments as (dtype, values), expected: "ok" or "IndexError")
CASES = [
    ("gather in range", GATHER.format(n=4), 1, [("f8", list(range(8))), ("i8", [0, 7, 3, 1])], "ok"),
    ("gather past the end", GATHER.format(n=4), 1, [("f8", list(range(8))), ("i8", [0, 8, 3, 1])], "IndexError"),
    ("gather before the start", GATHER.format(n=4), 1, [("f8", list(range(8))), ("i8", [-1, 0, 3, 1])], "IndexError"),
    ("gather far away", GATHER.format(n=4), 1, [("f8", list(range(8))), ("i8", [2**40, 0, 0, 0])], "IndexError"),
    ("parallel gather, one bad index", GATHER.format(n=100000), 2,
     [("f8", list(range(8))), ("i8", [k % 8 for k in range(50000)] + [9] + [0] * 49999)], "IndexError"),
    ("parallel gather in range", GATHER.format(n=100000), 2, [("f8", list(range(8))), ("i8", [k % 8 for k in range(100000)])], "ok"),
    ("scatter past the end", SCATTER.format(n=4), 1, [("f8", [1, 2, 3, 4]), ("i8", [0, 1, 8, 2])], "IndexError"),
    ("scatter in range", SCATTER.format(n=4), 1, [("f8", [1, 2, 3, 4]), ("i8", [0, 1, 7, 1])], "ok"),
    ("write into a shorter internal buffer", INTERNAL_BUFFER, 1, [("f8", [1, 2, 3]), ("f8", [1, 2, 3, 4, 5])], "IndexError"),
    ("internal buffer large enough", INTERNAL_BUFFER, 1, [("f8", [1, 2, 3, 4, 5]), ("f8", [1, 2, 3])], "ok"),
    ("loop bound past the rows", LOOP_BOUND, 1, [("f8", [[1.0] * 4] * 4), ("index", 5)], "IndexError"),
    ("loop bound within the rows", LOOP_BOUND, 1, [("f8", [[1.0] * 4] * 4), ("index", 4)], "ok"),
    ("extract past the end", EXTRACT, 1, [("f8", [[1.0] * 4] * 3), ("index", 3), ("index", 0)], "IndexError"),
    ("extract with a negative index", EXTRACT, 1, [("f8", [[1.0] * 4] * 3), ("index", 0), ("index", -1)], "IndexError"),
    ("nll_loss label out of range", NLL, 1, [("f4", [[0.0] * 10] * 4), ("i8", [0, 10, 1, 2])], "IndexError"),
    ("nll_loss negative label", NLL, 1, [("f4", [[0.0] * 10] * 4), ("i8", [0, -1, 1, 2])], "IndexError"),
    ("nll_loss labels in range", NLL, 1, [("f4", [[0.0] * 10] * 4), ("i8", [0, 9, 1, 2])], "ok"),
]

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from dfc import ExecutionEngine, PassManager, interpret, parse_module
    cases = json.loads(sys.stdin.read())
    for name, text, threads, raw, _ in cases:
        args = [v if dtype == "index" else np.array(v, dtype) for dtype, v in raw]
        try:
            got = ExecutionEngine(parse_module(text, name), threads=threads).invoke("f", *args)
            reference = parse_module(text)
            PassManager.parse("expand-library").run(reference)
            want = interpret(reference, "f", *args)
            if name == "internal buffer large enough":  # past b's length, tensor.empty's elements are undefined
                got, want = got[:len(args[1])], want[:len(args[1])]
            same = bool(np.allclose(got, want))
            print(json.dumps([name, "ok" if same else "wrong result", ""]), flush=True)
        except IndexError as err:
            print(json.dumps([name, "IndexError", str(err)]), flush=True)
""")


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[str, str]]:
    run = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(CASES), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"the child process died (exit {run.returncode}):\n{run.stderr[-3000:]}"
    return {name: (outcome, message) for name, outcome, message in map(json.loads, run.stdout.splitlines())}


@pytest.mark.parametrize("name,expected", [(c[0], c[4]) for c in CASES])
def test_engine_checks_every_access_it_cannot_prove(outcomes, name, expected):
    outcome, message = outcomes[name]
    assert outcome == expected, message
    if expected == "IndexError":
        assert re.fullmatch(r"@f: .+:\d+:\d+: '[a-z_.]+' index out of bounds", message)  # the access's source location


@pytest.mark.parametrize("labels", [[0, 10, 1, 2], [0, -1, 1, 2]])
def test_interpreter_raises_on_bad_labels(labels):
    module = parse_module(NLL)
    PassManager.parse("expand-library").run(module)
    with pytest.raises(IndexError):
        interpret(module, "f", np.zeros((4, 10), np.float32), np.array(labels))


def test_provably_out_of_bounds_programs_are_rejected_with_their_location():
    text = GATHER.format(n=4).replace("%j = arith.index_cast %k : i64 to index", "%j = arith.constant 8 : index")
    with pytest.raises(CompileError, match=r"^prog.mlir:6:10: .*index 0 ranges over \[8, 8\], outside dimension 0 of size 8"):
        parse_module(text, "prog.mlir")


def test_proven_accesses_cost_nothing():
    """The examples' kernels (forward and gradient) have no check left but the
    labels' gather in nll_loss."""
    from pathlib import Path

    examples = Path(__file__).parents[2] / "examples"
    for name in ("softmax", "jacobi2d", "gemm_sum", "mlp"):
        module = parse_module((examples / f"{name}.mlir").read_text())
        PassManager.parse("autodiff,default").run(module)
        checked = [op for op in module.walk() if "check_bounds" in op.attributes]
        assert len(checked) == (2 if name == "mlp" else 0), [op.name for op in checked]


def test_checked_kernels_agree_with_the_interpreter_on_many_threads():
    rng = np.random.default_rng(0)
    x, idx = rng.standard_normal(8), rng.integers(0, 8, 100000)
    module = parse_module(GATHER.format(n=100000))
    np.testing.assert_array_equal(ExecutionEngine(module, threads=2).invoke("f", x, idx), x[idx])
