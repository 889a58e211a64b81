"""The checked-in StableHLO texts (printed by JAX, tests/data/stablehlo) without
JAX: the pretty form reads, prints in the generic form and reads back to the
same module, and `convert-stablehlo` leaves no stablehlo op."""

import pathlib

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.compiler.location_aliases import resolve_locations
from dfc.compiler.parsing import parse_module
from dfc.importers.stablehlo_import import import_stablehlo

TEXTS = sorted((pathlib.Path(__file__).parents[1] / "data" / "stablehlo").glob("*.mlir"))


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.stem)
def test_pretty_and_generic_forms_read_the_same_module(path):
    module = parse_module(path.read_text(), str(path))
    again = parse_module(str(module), "<printed>")
    assert str(again) == str(module)
    assert any(op.name.startswith("stablehlo.") for op in module.walk())


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.stem)
def test_conversion_leaves_library_ops_only(path):
    module = import_stablehlo(path.read_text(), str(path))
    names = {op.name for op in module.walk()}
    assert not [n for n in names if n.startswith("stablehlo.")]
    assert any(n.startswith("nn.") for n in names)
    assert "func.call" not in names


def test_case_index_out_of_range_runs_the_last_branch():
    text = """
    func.func @f(%k: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "stablehlo.case"(%k) ({
        %a = stablehlo.negate %x : tensor<2xf32>
        stablehlo.return %a : tensor<2xf32>
      }, {
        %b = stablehlo.exponential %x : tensor<2xf32>
        stablehlo.return %b : tensor<2xf32>
      }, {
        stablehlo.return %x : tensor<2xf32>
      }) : (tensor<i32>) -> tensor<2xf32>
      func.return %0 : tensor<2xf32>
    }"""
    module = import_stablehlo(text)
    x = np.array([0.5, -1.0], np.float32)
    expected = {0: -x, 1: np.exp(x), 2: x, 7: x, -1: x}
    for k, want in expected.items():
        np.testing.assert_allclose(interpret(module, "f", np.array(k, np.int32), x), want, rtol=1e-6)


def test_static_while_runs_its_trip_count():
    text = """
    func.func @f(%x: tensor<f32>) -> tensor<f32> {
      %c = stablehlo.constant dense<-3> : tensor<i32>
      %0:2 = stablehlo.while(%i = %c, %y = %x) : tensor<i32>, tensor<f32>
      cond {
        %n = stablehlo.constant dense<4> : tensor<i32>
        %p = stablehlo.compare LE, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      } do {
        %s = stablehlo.constant dense<2> : tensor<i32>
        %j = stablehlo.add %s, %i : tensor<i32>
        %two = stablehlo.constant dense<2.0> : tensor<f32>
        %z = stablehlo.multiply %y, %two : tensor<f32>
        stablehlo.return %j, %z : tensor<i32>, tensor<f32>
      }
      func.return %0#1 : tensor<f32>
    }"""
    module = import_stablehlo(text)
    assert any(op.name == "scf.for" for op in module.walk())
    trips = len(range(-3, 4 + 1, 2))  # i = -3, -1, 1, 3
    np.testing.assert_allclose(interpret(module, "f", np.array(1.5, np.float32)), 1.5 * 2**trips)


def test_round_nearest_even_and_is_finite():
    text = """
    func.func @f(%x: tensor<12xf32>) -> (tensor<12xf32>, tensor<12xi1>) {
      %0 = stablehlo.round_nearest_even %x : tensor<12xf32>
      %1 = stablehlo.is_finite %x : (tensor<12xf32>) -> tensor<12xi1>
      func.return %0, %1 : tensor<12xf32>, tensor<12xi1>
    }"""
    module = import_stablehlo(text)
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6, 7.0, np.inf, -np.inf, np.nan], np.float32)
    rounded, finite = interpret(module, "f", x)
    np.testing.assert_array_equal(rounded, np.round(x))  # numpy rounds half to even
    np.testing.assert_array_equal(finite, np.isfinite(x))


def test_unsupported_mode_is_located():
    text = """func.func @f(%x: tensor<2xi32>) -> tensor<2xi1> {
  %0 = stablehlo.compare LT, %x, %x, TOTALORDER : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  func.return %0 : tensor<2xi1>
}"""
    with pytest.raises(CompileError) as err:
        import_stablehlo(text, "prog.mlir")
    assert str(err.value).splitlines() == [
        "prog.mlir:2:8: error: convert-stablehlo: compare LT with compare_type TOTALORDER is not supported",
        "  %0 = stablehlo.compare LT, %x, %x, TOTALORDER : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>",
        "       ^",
    ]


def test_debug_locations_resolve_to_the_innermost_source_position():
    text = """#loc1 = loc("x")
func.func @f(%x: tensor<2xf32> loc("x")) -> tensor<2xf32> {
  %0 = stablehlo.sine %x : tensor<2xf32> loc(#loc5)
  %1 = stablehlo.multiply %0, %0 : tensor<2xf32> loc(#loc6)
  func.return %1 : tensor<2xf32> loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("model.py":4:8 to :18)
#loc3 = loc("main.py":9:1 to :20)
#loc4 = loc(callsite(#loc2 at #loc3))
#loc5 = loc("jit(f)/sin"(#loc4))
#loc6 = loc("jit(f)"(#loc3))
"""
    resolved = resolve_locations(text)
    assert len(resolved.splitlines()) == len(text.splitlines())
    assert 'stablehlo.sine %x : tensor<2xf32> loc("model.py":4:8)' in resolved
    assert 'loc("main.py":9:1)' in resolved and "#loc" not in resolved
    module = import_stablehlo(text)
    sine, mul = [op for op in module.walk() if op.name in ("nn.sine", "nn.mul")]
    assert (sine.location.filename.data, sine.location.line.data) == ("model.py", 4)
    assert (mul.location.filename.data, mul.location.line.data) == ("main.py", 9)


COMPOSITE = """
func.func private @cube.impl(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf64>
  %1 = stablehlo.multiply %0, %x : tensor<3xf64>
  func.return %1 : tensor<3xf64>
}
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.composite "my.cube" %x {composite_attributes = {n = 3 : i64}, decomposition = @cube.impl}
    : (tensor<3xf64>) -> tensor<3xf64>
  func.return %0 : tensor<3xf64>
}"""


def test_a_composite_is_its_decomposition_and_reads_back_from_its_generic_form():
    from dfc.compiler.pass_manager import PassManager

    module = import_stablehlo(COMPOSITE)
    assert [f.sym_name.data for f in module.ops] == ["f"]  # the private decomposition is inlined and erased
    x = np.array([1.5, -2.0, 0.5])
    np.testing.assert_array_equal(interpret(module, "f", x), x ** 3)
    PassManager.parse("autodiff{func=f}").run(module)
    _, grad = interpret(module, "f_grad", x, np.ones(3))
    np.testing.assert_allclose(grad, 3 * x ** 2, rtol=1e-15)
    generic = str(parse_module(COMPOSITE))
    assert '"stablehlo.composite"' in generic and str(parse_module(generic)) == generic
