"""`strided_loops`: an innermost loop whose accesses are mostly strided is
emitted with LLVM's `vectorize.enable false` hint (LLVM's dependence analysis
of the widened loop took a second per kernel), one over contiguous elements
is not; both compute the channel sums NumPy does."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from dfc.compiler import parse_module
from dfc.compiler.codegen.llvm.jit import JitModule
from dfc.compiler.codegen.llvm.module import emit_module

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# y[c] += sum over h, w of x[n, c, h, w] (NCHW: the loop over c steps 16
# elements per read) or x[n, h, w, c] (NHWC: one element per read)
CHANNEL_SUMS = """
func.func @sums(%x: memref<{shape}xf32>, %y: memref<64xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c2 step %c1 {{
    scf.for %c = %c0 to %c64 step %c1 {{
      %s = scf.for %h = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (f32) {{
        %t = scf.for %w = %c0 to %c4 step %c1 iter_args(%b = %a) -> (f32) {{
          %v = memref.load %x[{indices}] : memref<{shape}xf32>
          %u = arith.addf %b, %v : f32
          scf.yield %u : f32
        }}
        scf.yield %t : f32
      }}
      %old = memref.load %y[%c] : memref<64xf32>
      %new = arith.addf %old, %s : f32
      memref.store %new, %y[%c] : memref<64xf32>
    }}
  }}
  func.return
}}
"""
LAYOUTS = {"nchw": ("2x64x4x4", "%n, %c, %h, %w", (0, 2, 3)), "nhwc": ("2x4x4x64", "%n, %h, %w, %c", (0, 1, 2))}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_strided_channel_loop_is_not_vectorised(layout):
    shape, indices, axes = LAYOUTS[layout]
    src = CHANNEL_SUMS.format(shape=shape, indices=indices)
    hinted = '"llvm.loop.vectorize.enable", i1 0' in str(emit_module(parse_module(src)))
    jit = JitModule(parse_module(src))
    assert hinted == (layout == "nchw")
    assert ("<8 x float>" in jit.llvm_ir) == (layout == "nhwc")  # vectorised exactly when not hinted
    x = np.random.default_rng(0).standard_normal([int(d) for d in shape.split("x")]).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    expected = y.astype(np.float64) + x.astype(np.float64).sum(axis=axes)
    desc = np.array([x.ctypes.data, y.ctypes.data], np.int64)
    _ENTRY(jit.entry_address("sums"))(desc.ctypes.data)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
