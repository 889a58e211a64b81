"""`index_exprs.affine_form` and the questions it answers without SymPy
(`used_variables`, `translation`, `constant_difference`, `provably_equal`)
agree with SymPy, the independent reference, on random index expressions:
affine ones (sums, differences, products by constants, casts) and ones where a
floor division, remainder, max, min or product of variables enters."""

import random

import pytest
import sympy

from dfc.compiler import parse_module
from dfc.dialects.index_exprs import (
    IndexSymbols,
    affine_form,
    constant_difference,
    provably_equal,
    simplified,
    translation,
    used_variables,
)

_AFFINE_OPS = ["addi", "subi", "muli", "cast"]
_OTHER_OPS = ["floordivsi", "remsi", "maxsi", "minsi", "muli"]


def _random_function(seed: int, affine: int = 30) -> str:
    """A function of %i, %j, %n computing `affine` values by random sums,
    differences, products by constants and casts of earlier values, then one
    of each of a floor division and remainder by a constant, a max, a min and
    a product of two values (a fixed seed)."""
    rng = random.Random(seed)
    constants = ["%c1", "%c2", "%c3", "%cm2", "%c0"]
    lines = [f"  %c{k} = arith.constant {k} : index" for k in range(4)] + ["  %cm2 = arith.constant -2 : index"]
    values = ["%i", "%j", "%n"]
    for k, op in enumerate([rng.choice(_AFFINE_OPS) for _ in range(affine)] + _OTHER_OPS):
        a, b = rng.choice(values), rng.choice(values)
        if op == "cast":
            lines.append(f"  %t{k} = arith.index_cast {a} : index to i64")
            lines.append(f"  %v{k} = arith.index_cast %t{k} : i64 to index")
            values.append(f"%v{k}")
            continue
        if op in ("floordivsi", "remsi"):  # by a nonzero constant: SymPy's Mod refuses a zero divisor
            b = rng.choice(constants[:-1])
        elif op == "muli" and k < affine:
            a, b = (a, rng.choice(constants))[:: rng.choice((1, -1))]
        elif op in ("addi", "subi") and rng.random() < 0.3:
            b = rng.choice(constants)
        lines.append(f"  %v{k} = arith.{op} {a}, {b} : index")
        values.append(f"%v{k}")
    body = "\n".join(lines)
    return f"func.func @f(%i: index, %j: index, %n: index) -> index {{\n{body}\n  func.return %i : index\n}}\n"


@pytest.fixture(scope="module", params=[0, 1])
def values(request):
    func = parse_module(_random_function(request.param)).body.block.first_op
    args = list(func.body.block.args)
    computed = [op.results[0] for op in func.body.block.ops if op.results and op.results[0].name_hint[0] == "v"]
    return args, computed


def test_affine_forms_are_sympys_expansions(values):
    args, computed = values
    affine = 0
    for v in args + computed:
        form = affine_form(v)
        symbols = IndexSymbols()
        expanded = sympy.expand(symbols.to_sympy(v))
        if form is None:
            continue
        affine += 1
        terms, constant = form
        assert all(c != 0 for c in terms.values())
        assert expanded == sum((c * symbols.symbol(k) for k, c in terms.items()), sympy.Integer(constant))
    assert affine >= 3 + 30  # every value built by sums, differences, products by constants and casts
    assert all(affine_form(v) is None for v in computed[-5:-1])  # floor division, remainder, max, min


def test_answers_agree_with_sympy(values):
    args, computed = values
    rng = random.Random(7)
    everything = args + computed
    for _ in range(80):
        a, b = rng.choice(everything), rng.choice(everything)
        symbols = IndexSymbols()
        difference = sympy.expand(symbols.to_sympy(a) - symbols.to_sympy(b))
        assert constant_difference(a, b) == (int(difference) if difference.is_Integer else None)
        assert provably_equal(a, b) == (simplified(symbols.to_sympy(a) - symbols.to_sympy(b)) == 0)
        free = simplified(symbols.to_sympy(a)).free_symbols | simplified(symbols.to_sympy(b)).free_symbols
        assert used_variables([a, b], args) == {x for x in args if symbols.symbol(x) in free}
        for v in args:
            offset = sympy.expand(symbols.to_sympy(a) - symbols.symbol(v))
            assert translation([a], [v]) == ([int(offset)] if offset.is_Integer else None)
