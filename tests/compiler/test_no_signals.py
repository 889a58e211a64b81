"""Integer division never kills the process: a zero divisor raises
`ZeroDivisionError` from compiled code as from the interpreter, `MIN / -1`
wraps (x86's `idiv` raises SIGFPE for both), and the NumPy frontend gives
NumPy's results and warnings."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import dfc
from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.interpreter import interpret
from dfc.compiler.parsing import parse_module
from dfc.dialects.df import WARN_IF

OPS = ("divsi", "remsi", "divui", "remui", "floordivsi", "ceildivsi", "ceildivui")
SCALAR = """func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %r = arith.{op} %a, %b : {t}
  func.return %r : {t}
}}
"""
PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, -1), (0, 3), (5, 0), (0, 0), ("min", -1), ("min", 1), ("min", 0)]


def run_alone(program: str, tmp_path) -> subprocess.CompletedProcess:
    """`program` in a fresh Python process (from a file: `dfc.jit` reads the
    source); it must not die of a signal."""
    path = tmp_path / "case.py"
    path.write_text(program)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr}"
    return proc


def outcome(call, *args):
    try:
        return int(call(*args))
    except ZeroDivisionError:
        return ZeroDivisionError


@pytest.mark.parametrize("t", ["i64", "i32", "index"])
@pytest.mark.parametrize("op", OPS)
def test_division_agrees_with_the_interpreter(op, t):
    module = parse_module(SCALAR.format(op=op, t=t))
    smallest = -(2 ** (31 if t == "i32" else 63))
    with ExecutionEngine(module) as engine:
        for a, b in PAIRS:
            a = smallest if a == "min" else a
            want = outcome(interpret, module, "f", a, b)
            assert outcome(engine.invoke, "f", a, b) == want, (op, t, a, b)
            assert (want is ZeroDivisionError) == (b == 0)


def test_zero_divisor_in_a_parallel_map_names_the_division():
    """A divisor read from data, in a map split over threads."""
    source = """func.func @f(%a: tensor<64xi64>, %b: tensor<64xi64>) -> tensor<64xi64> {
  %e = tensor.empty() : tensor<64xi64>
  %r = df.map (%i) in (64) outs(%o = %e : tensor<64xi64>) {
    %x = df.read %a[%i] : tensor<64xi64>
    %y = df.read %b[%i] : tensor<64xi64>
    %q = arith.divsi %x, %y : i64
    df.write %q, %o[%i] : tensor<64xi64>
  } -> tensor<64xi64>
  func.return %r : tensor<64xi64>
}
"""
    a = np.arange(64, dtype=np.int64) - 32
    b = np.where(np.arange(64) % 5 == 4, -1, 3).astype(np.int64)
    with ExecutionEngine(parse_module(source), threads=2, parallel_min_work=0) as engine:
        np.testing.assert_array_equal(engine.invoke("f", a, b), interpret(parse_module(source), "f", a, b))
        b[40] = 0
        with pytest.raises(ZeroDivisionError, match=r"<string>:6:\d+: 'arith.divsi' integer division by zero"):
            engine.invoke("f", a, b)
        b[40] = 3
        np.testing.assert_array_equal(engine.invoke("f", a, b), np.trunc(a / b).astype(np.int64))


@dfc.jit
def floor_divide_sum(a, b):
    return np.sum(a // b)


@dfc.jit
def remainder(a, b):
    return a % b


@dfc.jit
def floor_divide(a, b):
    return a // b


def messages(call, *args):
    """The result of `call(*args)` and the messages of the RuntimeWarnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args)
    assert all(w.category is RuntimeWarning for w in caught)
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_frontend_division_follows_numpy(dtype):
    """Values and warnings, once per call however many elements divide by zero."""
    low = np.iinfo(dtype).min
    a = np.array([7, -7, 7, -7, 5, 0, low, low, 3, low, 9], dtype)
    for b in ([2, 2, -2, -2, 0, 0, -1, 1, -4, 0, 3], [2, 2, -2, -2, 1, 3, -1, 1, -4, 5, 3],
              [2, 2, -2, -2, 0, 3, 1, 1, -4, 5, 3], [2, 2, -2, -2, 1, 3, 2, 1, -4, 5, 3]):
        b = np.array(b, dtype)
        for ours, numpys in ((floor_divide, np.floor_divide), (remainder, np.remainder),
                             (floor_divide_sum, lambda a, b: np.sum(a // b))):
            (got, warned), (want, expected) = messages(ours, a, b), messages(numpys, a, b)
            np.testing.assert_array_equal(got, want)
            assert warned == expected, (ours, b)


def test_warning_flag_warns_in_the_interpreter_and_once_per_call_in_the_engine():
    source = f"""func.func @f(%a: tensor<8xi64>) -> tensor<8xi1> {{
  %e = tensor.empty() : tensor<8xi1>
  %r = df.map (%i) in (8) outs(%o = %e : tensor<8xi1>) {{
    %x = df.read %a[%i] : tensor<8xi64>
    %c0 = arith.constant 0 : i64
    %z = "arith.cmpi"(%x, %c0) <{{predicate = 0 : i64}}> {{"{WARN_IF}" = "a zero"}} : (i64, i64) -> i1
    df.write %z, %o[%i] : tensor<8xi1>
  }} -> tensor<8xi1>
  func.return %r : tensor<8xi1>
}}
"""
    module = parse_module(source)
    with ExecutionEngine(module, threads=2, parallel_min_work=0) as engine:
        for a in (np.arange(1, 9), np.array([0, 1, 0, 1, 0, 1, 0, 1])):
            got, warned = messages(engine.invoke, "f", a)
            want, interpreted = messages(interpret, module, "f", a)
            np.testing.assert_array_equal(got, want)
            assert warned == (["a zero"] if (a == 0).any() else [])
            assert interpreted == ["a zero"] * int((a == 0).sum())


ENGINE_CASES = """
from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.parsing import parse_module
for source, a, b in {cases!r}:
    engine = ExecutionEngine(parse_module(source))
    try:
        print(engine.invoke("f", a, b), flush=True)
    except ZeroDivisionError as err:
        print("ZeroDivisionError", err, flush=True)
"""
FRONTEND_CASE = """
@dfc.jit
def f{k}(a, b):
    return {expr}

print(f{k}(np.array([{a}, 1]), np.array([{b}, 1])).tolist(), flush=True)
"""


def test_engine_division_in_a_process_of_its_own(tmp_path):
    """Each case prints its outcome before the next starts: a signal names the case it killed."""
    cases = [("divsi", 5, 0, "ZeroDivisionError @f: <string>:2:8: 'arith.divsi' integer division by zero"),
             ("remsi", 5, 0, "ZeroDivisionError @f: <string>:2:8: 'arith.remsi' integer division by zero"),
             ("divsi", -2**63, -1, str(-2**63)),
             ("remsi", -2**63, -1, "0")]  # fmt: skip
    runs = [(SCALAR.format(op=op, t="i64"), a, b) for op, a, b, _ in cases]
    proc = run_alone(ENGINE_CASES.format(cases=runs), tmp_path)
    assert proc.stdout.splitlines() == [expected for *_, expected in cases], proc.stderr


def test_frontend_division_in_a_process_of_its_own(tmp_path):
    cases = [("a // b", 5, 0), ("a % b", 5, 0), ("a // b", -2**63, -1), ("np.sum(a % b)", -2**63, -1)]
    program = "import numpy as np\nimport dfc\n" + "".join(
        FRONTEND_CASE.format(k=k, expr=expr, a=a, b=b) for k, (expr, a, b) in enumerate(cases))
    proc = run_alone(program, tmp_path)
    wanted = []
    for expr, a, b in cases:
        with np.errstate(all="ignore"):
            want = eval(expr, {"np": np, "a": np.array([a, 1]), "b": np.array([b, 1])})
        wanted.append(str(np.asarray(want).tolist()))
    assert proc.stdout.splitlines() == wanted, proc.stderr
