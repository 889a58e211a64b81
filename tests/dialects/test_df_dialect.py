"""The df dialect's builders, effects and symbolic index analysis."""

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, TensorType, f32
from xdsl.ir import Block
from xdsl.traits import is_side_effect_free

from dfc.compiler import parse_module
from dfc.dialects import df
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.index_exprs import is_injective, used_variables
from dfc.dialects.xdsl_fixes import dense_values


def _map_body(text: str) -> df.MapOp:
    module = parse_module(text)
    return next(op for op in module.walk() if isinstance(op, df.MapOp))


def _indices_program(index_ops: str, indices: str, bounds: str = "4, 8") -> str:
    return f"""
    func.func @f(%x: tensor<64x64xf32>, %init: tensor<64x64xf32>) -> tensor<64x64xf32> {{
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %y = df.map (%i, %j) in ({bounds}) outs(%o = %init : tensor<64x64xf32>) {{
        {index_ops}
        %v = df.read %x[{indices}] : tensor<64x64xf32>
        df.write %v, %o[{indices}] wcr(add) : tensor<64x64xf32>
      }} -> tensor<64x64xf32>
      func.return %y : tensor<64x64xf32>
    }}"""


@pytest.mark.parametrize(
    "index_ops, indices, injective",
    [
        ("", "%i, %j", True),
        ("", "%j, %i", True),
        ("%a = arith.addi %i, %c1 : index", "%a, %j", True),
        ("%a = arith.addi %i, %j : index", "%a, %c1", False),
        ("%a = arith.muli %i, %c8 : index\n %b = arith.addi %a, %j : index", "%b, %c1", True),
        ("%a = arith.muli %i, %c2 : index\n %b = arith.addi %a, %j : index", "%b, %c1", False),
        ("%a = arith.addi %i, %j : index", "%a, %j", True),
        ("%a = arith.floordivsi %j, %c2 : index", "%i, %a", False),
        ("%a = arith.subi %j, %j : index", "%i, %a", False),
        ("%a = arith.addi %c2, %i : index", "%j, %a", True),  # without SymPy
        ("", "%c1, %j", False),  # without SymPy: no index depends on %i
        # affine, neither index a mixed radix: the coefficient matrix's rank decides (in integers, without SymPy)
        ("%a = arith.addi %i, %j : index\n %t = arith.muli %j, %c2 : index\n %b = arith.addi %i, %t : index",
         "%a, %b", True),
        ("%a = arith.addi %i, %j : index\n %b = arith.muli %a, %c2 : index", "%a, %b", False),
    ],
)
def test_injectivity(index_ops, indices, injective):
    m = _map_body(_indices_program(index_ops, indices))
    read = next(op for op in m.body.block.ops if isinstance(op, df.ReadOp))
    assert is_injective(read.indices, m.ivs, m.static_extents) is injective


def test_unit_extent_variables_do_not_count():
    m = _map_body(_indices_program("", "%i, %c1", bounds="4, 1"))
    read = next(op for op in m.body.block.ops if isinstance(op, df.ReadOp))
    assert is_injective(read.indices, m.ivs, m.static_extents)


def test_used_variables_sees_through_cancellation():
    m = _map_body(_indices_program("%a = arith.subi %j, %j : index\n %b = arith.addi %a, %i : index", "%b, %c1"))
    read = next(op for op in m.body.block.ops if isinstance(op, df.ReadOp))
    assert used_variables(read.indices, m.ivs) == {m.ivs[0]}


def test_builders_infer_types_and_verify():
    x = Block(arg_types=[TensorType(f32, [4, 8])]).args[0]
    init = arith.ConstantOp.from_int_and_width(0, IndexType())
    body = Block(arg_types=[IndexType(), IndexType(), x.type])
    read = df.ReadOp(x, body.args[:2])
    write = df.WriteOp(read.res, body.args[2], body.args[:2])
    body.add_ops([read, write])
    m = df.MapOp([4, 8], [x], body)
    assert read.res.type == f32
    assert m.res.types == (x.type,)
    assert m.bounds == [4, 8] and m.static_extents == [4, 8]
    assert m.out_args == (body.args[2],)
    del init


def test_map_with_dynamic_bound_reports_its_value():
    m = _map_body(
        """
        func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
          %c0 = arith.constant 0 : index
          %n = tensor.dim %x, %c0 : tensor<?xf32>
          %y = df.map (%i) in (%n) outs(%o = %x : tensor<?xf32>) {
            %v = df.read %x[%i] : tensor<?xf32>
            df.write %v, %o[%i] : tensor<?xf32>
          } -> tensor<?xf32>
          func.return %y : tensor<?xf32>
        }"""
    )
    assert m.static_extents == [None]
    assert m.bounds[0] is m.dyn_bounds[0]


def test_map_effects_hide_own_writes_but_not_outer_ones():
    module = parse_module(
        """
        func.func @f(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
          %y = df.map (%i) in (4) outs(%o = %init : tensor<4xf32>) {
            df.map (%j) in (8) {
              %v = df.read %x[%i, %j] : tensor<4x8xf32>
              df.write %v, %o[%i] wcr(add) : tensor<4xf32>
            }
          } -> tensor<4xf32>
          func.return %y : tensor<4xf32>
        }"""
    )
    outer, inner = [op for op in module.walk() if isinstance(op, df.MapOp)]
    assert is_side_effect_free(outer)
    assert not is_side_effect_free(inner)


def test_write_collision_is_rejected_from_python():
    with pytest.raises(CompileError, match="collides across iterations"):
        parse_module(_indices_program("", "%i, %c1").replace(" wcr(add)", ""))


def test_hex_float_dense_literal_is_a_bit_pattern():
    """`dense<0xFF800000> : tensor<..xf32>` is -inf, as in MLIR, and round-trips."""
    text = """func.func @f() -> tensor<2xf32> {
  %c = arith.constant dense<0xFF800000> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}"""
    module = parse_module(text)
    const = next(op for op in module.walk() if op.name == "arith.constant")
    assert list(dense_values(const.value)) == [float("-inf")] * 2
    assert "dense<0xff800000>" in str(module)
    assert str(parse_module(str(module))) == str(module)
