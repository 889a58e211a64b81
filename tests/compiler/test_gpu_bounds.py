"""Bounds guards in GPU kernels: an access `check-bounds` marks (an index read from data)
skips and counts a failing thread in the PTX module's global counter, which the CUDA
engine reads back after the call and turns into IndexError with the access's location.
On the simulated device (tests/support/gpu_sim.py), which faults on any access outside a live
buffer, so a guard that lets one through fails the test; the PTX through ptxas; and on a
real GPU where there is one."""

import shutil
import subprocess

import numpy as np
import pytest
from support.gpu_sim import simulated_engine
from test_gpu import cuda_or_skip
from test_memory_safety import CASES as MEMORY_SAFETY_CASES
from test_memory_safety import GATHER, SCATTER

from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.codegen.nvptx import bounds_sites, emit_ptx, lower_for_gpu

X = np.arange(8.0)
CASES = [  # (program, x, idx, error location or None)
    (GATHER, X, [0, 7, 3, 1], None),
    (GATHER, X, [0, 8, 3, 1], r"<string>:6:\d+: 'df.read' index out of bounds"),
    (GATHER, X, [-1, 0, 3, 1], r"<string>:6:\d+: 'df.read' index out of bounds"),
    (GATHER, X, [2**40, 0, 0, 0], r"<string>:6:\d+: 'df.read' index out of bounds"),
    (SCATTER, np.array([1.0, 2, 3, 4]), [0, 1, 7, 1], None),
    (SCATTER, np.array([1.0, 2, 3, 4]), [0, 1, 8, 2], r"<string>:7:\d+: 'df.write' index out of bounds"),
]


def _check_access(engine, module, x, idx, error) -> None:
    """`engine` agrees with the CPU engine, or raises the IndexError naming `error`."""
    idx = np.array(idx, np.int64)
    if error is None:
        np.testing.assert_array_equal(engine.invoke("f", x, idx), ExecutionEngine(module).invoke("f", x, idx))
    else:
        with pytest.raises(IndexError, match=f"^@f: {error}$"):
            engine.invoke("f", x, idx)


@pytest.mark.parametrize("program, x, idx, error", CASES)
def test_data_dependent_access_on_the_simulated_gpu(program, x, idx, error):
    module = parse_module(program.format(n=len(idx)))
    engine = simulated_engine(module)
    _check_access(engine, module, x, idx, error)
    assert engine.driver.live == {}  # arguments and results freed, also after the error


@pytest.mark.parametrize("name, program, threads, args, expected", MEMORY_SAFETY_CASES,
                         ids=[c[0] for c in MEMORY_SAFETY_CASES])  # fmt: skip
def test_every_memory_safety_case_on_the_simulated_gpu(name, program, threads, args, expected):
    values = [v if dtype == "index" else np.array(v, dtype) for dtype, v in args]
    engine = simulated_engine(parse_module(program))
    if expected == "ok":
        got = np.asarray(engine.invoke("f", *values))
        want = np.asarray(ExecutionEngine(parse_module(program)).invoke("f", *values))
        written = ~np.isnan(got)  # fresh simulated memory is NaN: the elements a program leaves unwritten
        assert written.any()
        np.testing.assert_array_equal(got[written], want[written])
    else:
        with pytest.raises(IndexError, match="index out of bounds"):
            engine.invoke("f", *values)
    assert engine.driver.live == {}


def test_a_failure_does_not_leak_into_the_next_call():
    engine = simulated_engine(parse_module(GATHER.format(n=4)))
    with pytest.raises(IndexError):
        engine.invoke("f", X, np.array([0, 9, 0, 0]))
    np.testing.assert_array_equal(engine.invoke("f", X, np.array([5, 6, 7, 0])), [5.0, 6.0, 7.0, 0.0])
    with pytest.raises(IndexError):  # run (device-resident) checks too
        engine.run("f", X, np.array([0, 0, 0, 100]))


def test_many_threads_one_bad_index():
    n = 5000
    idx = np.arange(n) % 8
    idx[3777] = -5
    with pytest.raises(IndexError, match="'df.read' index out of bounds"):
        simulated_engine(parse_module(GATHER.format(n=n))).invoke("f", X, idx)


def test_affine_accesses_are_not_guarded():
    ptx = emit_ptx(parse_module(GATHER.format(n=4)))
    lowered = lower_for_gpu(parse_module(GATHER.format(n=4)))
    assert [op.attributes["check_bounds"].data for op in bounds_sites(lowered)] == ["df.read"]  # not idx[i], o[i]
    assert ptx.count("atom.global.add.u64") == 1


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) is not installed")
@pytest.mark.parametrize("program", [GATHER, SCATTER], ids=["gather", "scatter"])
def test_guarded_ptx_assembles(program, tmp_path):
    ptx = emit_ptx(parse_module(program.format(n=4)))
    assert ".visible .global .align 8 .u64 __dfc_bounds_failures;" in ptx
    (tmp_path / "k.ptx").write_text(ptx)
    result = subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("program, x, idx, error", CASES)
def test_data_dependent_access_on_a_real_gpu(program, x, idx, error):
    cuda_or_skip()
    module = parse_module(program.format(n=len(idx)))
    _check_access(ExecutionEngine(module, target="gpu"), module, x, idx, error)


UNIFORM = """func.func @f(%v: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %c1 step %c1 iter_args(%acc = %v) -> (tensor<?xf64>) {
    %m = df.map (%q) in (1) outs(%o = %v : tensor<?xf64>) {
      %x = df.read %acc[%t] : tensor<?xf64>
      %y = math.tanh %x : f64
      df.write %y, %o[%t] : tensor<?xf64>
    } -> tensor<?xf64>
    scf.yield %m : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}"""


def test_guarded_access_at_a_uniform_index():  # every thread reads the same checked element
    module = parse_module(UNIFORM)
    v = np.array([0.5, 2.0])
    lowered = lower_for_gpu(module)
    assert bounds_sites(lowered)  # the loop variable is not related to the dynamic size
    want = ExecutionEngine(module).invoke("f", v)
    np.testing.assert_allclose(simulated_engine(module).invoke("f", v), want, rtol=1e-15)
    with pytest.raises(IndexError):
        simulated_engine(module).invoke("f", np.zeros(0))
