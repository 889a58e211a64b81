"""`DFC_PERF_MAP`: JIT functions named in perf's map file."""

from __future__ import annotations

import os

import numpy as np

from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.codegen import perf_map
from dfc.compiler.engine import clear_jit_cache

PARALLEL = """func.func @f(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = nn.exp %x : (tensor<512x512xf32>) -> tensor<512x512xf32>
  func.return %r : tensor<512x512xf32>
}"""


def test_functions_and_addresses(tmp_path):
    """The entry and the outlined parallel body (objects of their own: one
    part per kernel) are listed with their sizes, and the entry at the address
    MCJIT gives it."""
    engine = ExecutionEngine(parse_module(PARALLEL), threads=2)
    jit = engine.jit
    names = {name for obj in jit.object.objs for name, _, _, size in perf_map.functions(obj) if size > 0}
    assert "_dfc_entry_f" in names and any(".par" in n for n in names)
    path = tmp_path / "perf.map"
    assert sum(perf_map.write(obj, jit._engine.get_function_address, str(path)) for obj in jit.object.objs) == len(names)
    lines = {line.split()[2]: line.split() for line in path.read_text().splitlines()}
    assert int(lines["_dfc_entry_f"][0], 16) == jit.entry_address("f")
    np.testing.assert_allclose(engine.invoke("f", np.ones((512, 512), np.float32)), np.e, rtol=1e-6)


def test_the_environment_variable_writes_the_process_map(monkeypatch):
    path = f"/tmp/perf-{os.getpid()}.map"
    before = open(path).read() if os.path.exists(path) else ""
    monkeypatch.setenv("DFC_PERF_MAP", "1")
    clear_jit_cache()  # a module compiled before is not loaded again
    engine = ExecutionEngine(parse_module(PARALLEL.replace("nn.exp", "nn.tanh")), threads=2)
    added = open(path).read()[len(before):]
    assert f"{engine.jit.entry_address('f'):x} " in added and "_dfc_entry_f" in added
    monkeypatch.setenv("DFC_PERF_MAP", "0")
    assert not perf_map.enabled()
