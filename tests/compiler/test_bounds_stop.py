"""A failed bounds check stops the loops holding it: a map of 2^40 iterations
(hours of work) whose first out-of-bounds access comes early raises IndexError
at once, serially and on two threads, whether the checked access is in an
innermost loop (tested once per strip) or below a loop nest (tested once per
outer iteration). The calls run in a child process with a timeout, so a loop
that does not stop fails the test instead of hanging it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PROGRAM = """
func.func @flat(%x: tensor<16xf32>, %n: index) -> tensor<f32> {
  %z = arith.constant dense<0.0> : tensor<f32>
  %s = df.map (%i) in (%n) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<16xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @nest(%x: tensor<16xf32>, %n: index) -> tensor<f32> {
  %z = arith.constant dense<0.0> : tensor<f32>
  %s = df.map (%i, %j) in (%n, %n) outs(%o = %z : tensor<f32>) {
    %k = arith.addi %i, %j : index
    %v = df.read %x[%k] : tensor<16xf32>
    df.write %v, %o[] wcr(max) : tensor<f32>
  } -> tensor<f32>
  func.return %s : tensor<f32>
}
"""

CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from dfc import ExecutionEngine, parse_module
    engine = ExecutionEngine(parse_module(sys.stdin.read()), threads=int(sys.argv[1]))
    x = np.arange(16, dtype=np.float32)
    assert engine.invoke("flat", x, 16) == 120 and engine.invoke("nest", x, 8) == 14
    for name, n in (("flat", 1 << 40), ("nest", 1 << 20)):
        try:
            engine.invoke(name, x, n)
        except IndexError as err:
            print(name, err)
""")


@pytest.mark.parametrize("threads", [1, 2])
def test_out_of_bounds_stops_the_loop(threads):
    done = subprocess.run([sys.executable, "-c", CHILD, str(threads)], input=PROGRAM, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["flat", "nest"]
    assert all("'df.read' index out of bounds" in line for line in lines)
