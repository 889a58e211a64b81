"""The project's fixes to xDSL (`dialects/xdsl_fixes.py`) that change no answer, only its cost:
each agrees with the xDSL code it replaces."""

from pathlib import Path

from xdsl import traits
from xdsl.transforms import dead_code_elimination

from dfc.compiler import PassManager, parse_module
from dfc.dialects import op_effects, xdsl_fixes
from dfc.dialects.op_effects import EffectsKind
from dfc.passes import PIPELINES

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_effect_tests_agree_with_xdsls():
    """`result_only_effects` and `effects_kind` (first effect decides) answer
    as xDSL's `result_only_effects`, `is_side_effect_free` and
    `only_has_effect(op, READ)` (all effects collected) for every op of the
    mlp and jacobi-2d gradients, at the tensor level, in buffer form and after
    lowering to loops."""
    passes = PIPELINES["default"].split(",")
    checked = {True: 0, False: 0}
    kinds = set()
    for name, fn in (("mlp", "mlp"), ("jacobi2d", "jacobi2d")):
        module = parse_module((EXAMPLES / f"{name}.mlir").read_text())
        PassManager.parse(f"autodiff{{func={fn}}}").run(module)
        for stop in ("expand-library", "bufferize", "lower-dataflow"):
            stage = module.clone()
            PassManager.parse(",".join(passes[: passes.index(stop) + 1])).run(stage)
            for op in stage.walk():
                answer = op_effects.result_only_effects(op)
                assert answer == dead_code_elimination.result_only_effects(op), op.name
                checked[answer] += 1
                kind = op_effects.effects_kind(op)
                assert (kind is EffectsKind.NONE) == traits.is_side_effect_free(op), op.name
                assert (kind is not EffectsKind.OTHER) == traits.only_has_effect(op, traits.MemoryEffectKind.READ), op.name
                kinds.add(kind)
    assert checked[True] > 100 and checked[False] > 100, checked
    assert kinds == set(EffectsKind), kinds


def test_passes_answer_as_xdsls():
    """dfc's `canonicalize`, `cse` and `dce` (registered under xDSL's names)
    leave the same IR as xDSL's own passes on the mlp gradient, at the tensor
    level, in buffer form and after lowering to loops."""
    from xdsl.transforms.canonicalize import CanonicalizePass
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    from dfc.compiler.context import make_context
    from dfc.passes import get_all_passes

    registry = get_all_passes()
    pairs = [(registry[p.name]()(), p()) for p in (CanonicalizePass, CommonSubexpressionElimination, DeadCodeElimination)]
    assert all(type(ours).__module__ == "dfc.dialects.xdsl_fixes" for ours, _ in pairs)
    module = parse_module((EXAMPLES / "mlp.mlir").read_text())
    PassManager.parse("autodiff{func=mlp}").run(module)
    for stage in ("expand-library", "bufferize", "lower-dataflow,canonicalize"):
        PassManager.parse(stage).run(module)
        for ours, xdsls in pairs:
            a, b = module.clone(), module.clone()
            ours.apply(make_context(), a)
            xdsls.apply(make_context(), b)
            assert str(a) == str(b), (stage, ours.name)


def test_is_splat_answers_as_xdsls():
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, bf16, f32, i1, i64

    cases = [(f32, [1.5] * 6), (f32, [1.5] * 5 + [2.5]), (f32, [0.0]), (bf16, [2.0, 2.0, 3.0]),
             (i64, [7, 7, 7, 7]), (i64, [7, 7, 8, 7]), (i1, [1, 1, 1])]
    for element, values in cases:
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(element, [len(values)]), values)
        assert xdsl_fixes.is_splat(attr) == attr.is_splat(), (element, values)


def test_printer_prints_as_xdsls():
    """`module_text` (splats printed from their first element) is `str`, for
    modules holding splat and non-splat constants of every element kind."""
    from dfc.dialects.xdsl_fixes import module_text

    module = parse_module((EXAMPLES / "mlp.mlir").read_text())
    PassManager.parse("autodiff{func=mlp},expand-library,canonicalize").run(module)
    assert "dense<0.000000e+00>" in str(module)
    assert module_text(module) == str(module)
    module = parse_module("""func.func @f() -> (tensor<2xbf16>, tensor<3xi1>, tensor<2xindex>, tensor<2xcomplex<f32>>,
                                                  tensor<3xf16>, tensor<2xf32>, tensor<1xi64>) {
  %a = arith.constant dense<0xFF80> : tensor<2xbf16>
  %b = arith.constant dense<true> : tensor<3xi1>
  %c = arith.constant dense<[4, 5]> : tensor<2xindex>
  %d = arith.constant dense<(1.0, 2.0)> : tensor<2xcomplex<f32>>
  %e = arith.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf16>
  %g = arith.constant dense<0x7F800000> : tensor<2xf32>
  %h = arith.constant dense<-3> : tensor<1xi64>
  func.return %a, %b, %c, %d, %e, %g, %h : tensor<2xbf16>, tensor<3xi1>, tensor<2xindex>, tensor<2xcomplex<f32>>,
                                       tensor<3xf16>, tensor<2xf32>, tensor<1xi64>
}
""")
    assert module_text(module) == str(module)
