"""`index_exprs.differ_somewhere`: a refutation by evaluation is sound (SymPy,
the independent reference, never proves a refuted pair equal), and it
refutes the clamped gather indices fusion asks about."""

import pytest

from dfc.compiler import parse_module
from dfc.dialects.index_exprs import IndexSymbols, differ_somewhere, simplified

IR = """
func.func @f(%i: index, %j: index, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c63 = arith.constant 63 : index
  %ip1 = arith.addi %i, %c1 : index
  %hi = arith.maxsi %ip1, %c0 : index
  %clamp = arith.minsi %hi, %c63 : index
  %i2 = arith.muli %i, %c2 : index
  %same = arith.subi %i2, %i : index
  %same2 = arith.minsi %i, %ip1 : index
  %ij = arith.muli %i, %j : index
  %q = arith.floordivsi %i2, %c2 : index
  %neg = arith.subi %c0, %i : index
  %r = arith.remsi %neg, %c3 : index
  %fd = arith.floordivsi %neg, %c3 : index
  %r0 = arith.remsi %i, %c0 : index
  %cast = arith.index_cast %i : index to i64
  %back = arith.index_cast %cast : i64 to index
  func.return %clamp : index
}
"""


@pytest.fixture(scope="module")
def values():
    func = parse_module(IR).body.block.first_op
    named = {a.name_hint: a for a in func.body.block.args}
    named.update({op.results[0].name_hint: op.results[0] for op in func.body.block.ops if op.results})
    return named


def _proved_equal(a, b) -> bool:
    symbols = IndexSymbols()
    return simplified(symbols.to_sympy(a) - symbols.to_sympy(b)) == 0


@pytest.mark.parametrize(("a", "b", "differ"), [
    ("clamp", "i", True), ("ip1", "i", True), ("j", "i", True), ("ij", "i", True), ("r", "i", True),
    ("fd", "neg", True), ("same", "i", False), ("same2", "i", False), ("q", "i", False), ("back", "i", False),
    ("r0", "i", False), ("i", "i", False),
])  # fmt: skip
def test_refutes_only_what_sympy_cannot_prove_equal(values, a, b, differ):
    assert differ_somewhere([(values[a], values[b])]) is differ
    if differ:
        assert not _proved_equal(values[a], values[b])
    elif a not in ("r0",):  # remsi by zero: undefined, neither refuted nor proved
        assert _proved_equal(values[a], values[b])


def test_any_refuted_pair_refutes_the_tuple(values):
    assert differ_somewhere([(values["i"], values["i"]), (values["clamp"], values["i"])])
    assert not differ_somewhere([(values["same"], values["i"]), (values["back"], values["i"])])
