"""The Python embedding: PassManager shares opt-tool's registry and instrumentation."""

import gc
import io

import pytest

from dfc.compiler import PassManager, parse_module
from dfc.dialects.diagnostics import CompileError
from dfc.tools.opt_tool import main, split_pass_flags

TEXT = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = nn.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}"""


def test_parse_and_run_in_order_with_dumps_and_timing():
    stream = io.StringIO()
    pm = PassManager.parse("cse,expand-library", print_ir_after_all=True, time_passes=True, stream=stream)
    assert [p.name for p in pm.passes] == ["cse", "expand-library"]
    module = pm.run(parse_module(TEXT))
    assert str(module).count("math.exp") == 1  # cse ran before the expansion
    log = stream.getvalue()
    assert log.index("IR Dump After CommonSubexpressionElimination (cse)") < log.index(
        "IR Dump After ExpandLibraryPass (expand-library)"
    )
    assert [name for name, _ in pm.timings] == ["cse", "expand-library"]
    assert "Total Execution Time" in log


def test_print_after_named_pass_only():
    stream = io.StringIO()
    PassManager.parse("cse,dce", print_ir_after=frozenset({"dce"}), stream=stream).run(parse_module(TEXT))
    assert "(dce)" in stream.getvalue() and "(cse)" not in stream.getvalue()


@pytest.mark.parametrize(
    "pipeline,message",
    [("nope", "unknown pass 'nope'"), ("cse{x=1}", "bad options for pass 'cse'"), ("cse{", "bad pass pipeline")],
)
def test_bad_pipelines(pipeline, message):
    with pytest.raises(CompileError, match=message):
        PassManager.parse(pipeline)


def test_pass_flags_keep_command_line_order():
    pipeline, rest = split_pass_flags(["in.mlir", "--cse", "-p", "dce,cse", "--canonicalize=", "-o", "x"])
    assert pipeline == ["cse", "dce,cse", "canonicalize{}"]
    assert rest == ["in.mlir", "-o", "x"]


def test_main_reports_errors_without_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  %x = arith.constant 1 : i32\n  func.return %x : i32\n}\n")
    assert main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:3:3: error: 'func.return' op")
    assert "Traceback" not in err


def test_the_collector_is_paused_while_compiling(monkeypatch):
    """Python's cyclic collector is off while passes run and while the engine
    compiles (`compiler.gc_pause`), on again after; one the caller disabled
    stays disabled."""
    from dfc.compiler import ExecutionEngine, engine

    states: list[bool] = []
    apply = PassManager._apply
    monkeypatch.setattr(PassManager, "_apply", staticmethod(lambda p, ctx, m: (states.append(gc.isenabled()),
                                                                                apply(p, ctx, m))))  # fmt: skip
    module = parse_module("func.func @f(%x: f64) -> f64 {\n  func.return %x : f64\n}")
    PassManager.parse("cse,dce").run(module)
    assert states == [False, False] and gc.isenabled()
    gc.disable()
    try:
        PassManager.parse("cse").run(module)
        assert not gc.isenabled()
    finally:
        gc.enable()
    lowering = engine.lower
    monkeypatch.setattr(engine, "lower", lambda *a: (states.append(gc.isenabled()), lowering(*a))[1])
    engine.clear_jit_cache()
    states.clear()
    assert ExecutionEngine(module).invoke("f", 2.0) == 2.0
    assert states == [False] and gc.isenabled()
