"""Symbolic differentiation of df.tasklet bodies with SymPy.

`tasklet_to_sympy` turns a tasklet body into one SymPy expression per result;
`gradient_tasklet` differentiates them with `sympy.diff` (no further
simplification: SymPy's automatic evaluation only, full `simplify` is slow),
shares common subexpressions with `sympy.cse` and emits the vector-Jacobian
product as a new tasklet of arith/math ops; `tangent_tasklet` emits the
Jacobian-vector product (forward mode, `forward.py`) from the same derivatives.

Conventions:
- Unordered `arith.cmpf` predicates hold where an operand is NaN: `ugt(a, b)`
  is `a > b | unordered(a, b)`, so a derivative selected by one keeps its
  NaN branch (relu'(NaN) passes the gradient on, as in PyTorch).
  `maxnumf`/`minnumf` are treated as `maximumf`/`minimumf`.
- Kinks follow PyTorch/JAX. `select(x > 0, x, 0)` and `maximumf(x, c)` or
  `minimumf(x, c)` with a constant `c` have derivative 0 at the tie (relu'(0) =
  0); `absf` has derivative 0 at 0; a tie of `maximumf(a, b)`/`minimumf(a, b)`
  of two non-constants sends half of the gradient to each operand (JAX).
- `extf`/`truncf` pass the derivative through. Each emitted op computes in the
  widest float type among its operands (constants take their context's type),
  and each gradient is cast to the type of its input.
- `math.fpowi` needs a constant exponent; integer powers are emitted as
  multiplications (and a division for negative ones), half-integer powers via
  `math.sqrt`/`math.rsqrt`, other powers as `math.powf`.
- `floor`, `ceil`, `round`, `roundeven`, `trunc` and `copysign`'s sign
  operand have derivative 0 (as in JAX and PyTorch), and so has a sign
  written as selects.
- `arith.remf` (C's fmod) is a - b * trunc(a / b): derivatives 1 and
  -trunc(a / b).
- A derivative with no closed form (e.g. of `math.atan2`: an unevaluated
  `Derivative`, `Subs`, `Heaviside` or `DiracDelta`) raises
  `UnsupportedOpError`; it is never silently zero.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from functools import partial
from math import isfinite

import sympy
from sympy.logic.boolalg import ITE, Boolean, BooleanAtom, BooleanFunction, Xor
from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, i1
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.xdsl_fixes import RemFOp


class UnsupportedOpError(Exception):
    """A tasklet op without a symbolic rule or a closed-form derivative."""

    def __init__(self, op: Operation, reason: str):
        super().__init__(f"cannot differentiate '{op.name}': {reason}")
        self.op = op


class _Cast(sympy.Function):
    """A conversion to the float type `target`, whose derivative is 1."""

    target: Attribute

    @classmethod
    def eval(cls, x: sympy.Expr) -> sympy.Expr | None:
        return x if x.is_number else None

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        return sympy.S.One


_CASTS: dict[Attribute, type[_Cast]] = {}


def _cast(t: Attribute, x: sympy.Expr) -> sympy.Expr:
    if t not in _CASTS:
        _CASTS[t] = type(f"to_{t}", (_Cast,), {"target": t})
    return _CASTS[t](x)


class _Share(sympy.Function):
    """d max(a, b)/d a (`wins` = gt) or d min(a, b)/d a (lt): 1 where `a`
    wins, 0 where `b` does, and on a tie 1/2 (0 when `b` is a constant:
    relu'(0) = 0). Kept whole and emitted as two compares and selects: as a
    Piecewise, SymPy's collapsing of its conditions can recurse without end
    (tanh(min(tanh(u) - u, tanh(u) + u**2)) did)."""

    wins: Callable
    predicate: str

    @classmethod
    def eval(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        if a.is_number and b.is_number and sympy.nan not in (a, b):
            if cls.wins(a, b) == sympy.true:
                return sympy.S.One
            return sympy.S.Zero if cls.wins(b, a) == sympy.true or b.is_number else sympy.S.Half
        return None

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        return sympy.S.Zero


class _Extremum(sympy.Function):
    """max (`wins` = gt) or min (lt) of two operands, kept whole (emitted as
    `op`): as nested Piecewise, deep max/min chains sent SymPy into unbounded
    recursion. Its derivative is `share`."""

    wins: Callable
    op: type[Operation]
    share: type[_Share]

    @classmethod
    def eval(cls, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
        if a.is_number and b.is_number and sympy.nan not in (a, b):
            return a if cls.wins(a, b) == sympy.true else b
        return None

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        mine, other = self.args if argindex == 1 else reversed(self.args)
        return type(self).share(mine, other)


def _extremum_kind(name: str, wins: Callable, op: type[Operation]) -> type[_Extremum]:
    predicate = "ogt" if wins is operator.gt else "olt"
    share = type(f"d_{name}", (_Share,), {"wins": staticmethod(wins), "predicate": predicate})
    return type(name, (_Extremum,), {"wins": staticmethod(wins), "op": op, "share": share})


class _Unordered(BooleanFunction):
    """True where `a` or `b` is NaN (`arith.cmpf uno`)."""

    @classmethod
    def eval(cls, a: sympy.Expr, b: sympy.Expr) -> Boolean | None:
        if a.is_number and b.is_number:
            return sympy.true if sympy.nan in (a, b) else sympy.false
        return None  # the symbols are real, but NaN inputs are not modelled by SymPy's assumptions


class _Step(sympy.Function):
    """A piecewise-constant function (floor, ceil, round, ...): derivative 0
    everywhere, as in JAX and PyTorch. `op` is the math op computing it."""

    op: type[Operation]

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        return sympy.S.Zero


class _SignBit(_Step):
    """+1 or -1 by the sign bit of x (`math.copysign(1.0, x)`)."""


class _FMod(sympy.Function):
    """C's fmod(a, b) (`arith.remf`): a - b * trunc(a / b), whose derivatives are 1 and -trunc(a / b)."""

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        a, b = self.args
        return sympy.S.One if argindex == 1 else -_STEPS["math.trunc"](a / b)


class _Cbrt(sympy.Function):
    """The real cube root (`math.cbrt`; SymPy's cbrt is complex for negative x): derivative 1 / (3 cbrt(x)^2)."""

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        return 1 / (3 * self**2)


_STEPS: dict[str, type[_Step]] = {
    op.name: type(f"step_{op.name[5:]}", (_Step,), {"op": op})
    for op in (math.FloorOp, math.CeilOp, math.RoundOp, math.RoundEvenOp, math.TruncOp)
}



_RULES: dict[str, Callable[..., sympy.Basic]] = {
    "arith.addf": operator.add,
    "arith.subf": operator.sub,
    "arith.mulf": operator.mul,
    "arith.divf": operator.truediv,
    "arith.negf": operator.neg,
    "arith.maximumf": _extremum_kind("maximumf", operator.gt, arith.MaximumfOp),
    "arith.maxnumf": _extremum_kind("maxnumf", operator.gt, arith.MaxnumfOp),
    "arith.minimumf": _extremum_kind("minimumf", operator.lt, arith.MinimumfOp),
    "arith.minnumf": _extremum_kind("minnumf", operator.lt, arith.MinnumfOp),
    "arith.select": lambda c, a, b: sympy.Piecewise((a, c), (b, True)),
    "math.fma": lambda a, b, c: a * b + c,
    "math.absf": lambda a: sympy.Piecewise((a, a > 0), (-a, a < 0), (0, True)),
    "math.exp": sympy.exp,
    "math.log": sympy.log,
    "math.log1p": lambda a: sympy.log(1 + a),
    "math.sqrt": sympy.sqrt,
    "math.rsqrt": lambda a: 1 / sympy.sqrt(a),
    "math.tanh": sympy.tanh,
    "math.sin": sympy.sin,
    "math.cos": sympy.cos,
    "math.erf": sympy.erf,
    "math.asinh": sympy.asinh,
    "math.acosh": sympy.acosh,
    "math.atanh": sympy.atanh,
    "math.cbrt": _Cbrt,
    "math.powf": operator.pow,
    "math.copysign": lambda a, b: sympy.Abs(a) * _SignBit(b),
    "arith.remf": _FMod,
    **_STEPS,
}
"""Op name -> SymPy builder of its result from its operands' expressions."""

_RELATIONS = {"eq": sympy.Eq, "ne": sympy.Ne, "gt": sympy.Gt, "ge": sympy.Ge, "lt": sympy.Lt, "le": sympy.Le}
_PREDICATES: dict[str, Callable[..., Boolean]] = {
    "false": lambda a, b: sympy.false,
    "true": lambda a, b: sympy.true,
    "ord": lambda a, b: sympy.Not(_Unordered(a, b)),
    "uno": _Unordered,
    **{"o" + name: rel for name, rel in _RELATIONS.items()},
    **{"u" + name: partial(lambda rel, a, b: sympy.Or(rel(a, b), _Unordered(a, b)), rel) for name, rel in _RELATIONS.items()},
}


def _constant(op: arith.ConstantOp) -> sympy.Basic:
    value = op.value
    if isinstance(value, FloatAttr):
        x = value.value.data
        return sympy.Rational(x) if isfinite(x) else sympy.sympify(x)  # exact, or oo/-oo/nan
    if not isinstance(value, IntegerAttr):
        raise UnsupportedOpError(op, f"non-scalar constant {value}")
    if value.type == i1:
        return sympy.true if value.value.data else sympy.false
    return sympy.Integer(value.value.data)


def _rule(op: Operation, args: list[sympy.Basic]) -> sympy.Basic:
    """The SymPy expression of `op`'s result, given its operands' expressions."""
    if isinstance(op, arith.ConstantOp):
        return _constant(op)
    if isinstance(op, arith.CmpfOp):
        return _PREDICATES[arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]](*args)
    if isinstance(op, arith.ExtFOp | arith.TruncFOp):
        return _cast(op.result.type, args[0])
    if isinstance(op, math.FPowIOp):
        if not args[1].is_Integer:
            raise UnsupportedOpError(op, "the exponent must be a constant")
        return args[0] ** args[1]
    if op.name not in _RULES:
        raise UnsupportedOpError(op, "no symbolic rule")
    return _RULES[op.name](*args)


def _forward(tasklet: df.TaskletOp) -> tuple[list[sympy.Symbol], dict[SSAValue, sympy.Basic]]:
    """A symbol per block argument and the expression of every body value."""
    block = tasklet.body.block
    symbols = [
        sympy.Dummy(a.name_hint or f"arg{k}", **({"real": True} if isinstance(a.type, AnyFloat) else {}))
        for k, a in enumerate(block.args)
    ]
    env: dict[SSAValue, sympy.Basic] = dict(zip(block.args, symbols))
    for op in list(block.ops)[:-1]:
        env[op.results[0]] = _rule(op, [env[v] for v in op.operands])
    return symbols, env


def tasklet_to_sympy(tasklet: df.TaskletOp) -> tuple[list[sympy.Symbol], list[sympy.Expr]]:
    """Symbols for the block arguments and one expression per yielded result."""
    symbols, env = _forward(tasklet)
    return symbols, [env[v] for v in tasklet.body.block.last_op.operands]


def gradient_tasklet(
    tasklet: df.TaskletOp, seeds: Sequence[SSAValue | None], wrt: Sequence[int], builder: Builder
) -> list[SSAValue]:
    """Insert at `builder` a new df.TaskletOp taking those of (tasklet's operands..., the
    given seeds) its body uses and returning, for each input index in `wrt`, sum_r seed_r * d result_r / d input_k,
    built as arith/math ops. A result whose seed is None (e.g. a non-float one) is
    left out. Returns the new tasklet's results."""
    inputs, results = tasklet.inputs.types, tasklet.res.types
    if len(seeds) != len(results) or any(s is not None and s.type != t for s, t in zip(seeds, results)):
        raise ValueError(f"expected one seed (or None) per result, of types {', '.join(map(str, results))}")
    seeded = [r for r, s in enumerate(seeds) if s is not None]
    if not all(isinstance(t, AnyFloat) for t in (*(results[r] for r in seeded), *(inputs[k] for k in wrt))):
        raise ValueError("the seeded results and the differentiated inputs must be floats")
    symbols, exprs = tasklet_to_sympy(tasklet)
    seed_symbols = [sympy.Dummy(f"seed{r}", real=True) for r in seeded]
    grads = [sympy.Add(*(s * exprs[r].diff(symbols[k]) for s, r in zip(seed_symbols, seeded))) for k in wrt]
    return _derivative_tasklet(tasklet, symbols, seed_symbols, [seeds[r] for r in seeded], grads,
                               [inputs[k] for k in wrt], builder)


def tangent_tasklet(tasklet: df.TaskletOp, tangents: Sequence[SSAValue | None], builder: Builder) -> list[SSAValue | None]:
    """Insert at `builder` a new df.TaskletOp taking those of (tasklet's operands..., the
    given tangents) its body uses and returning, for each float result r, the
    Jacobian-vector product sum_k d result_r / d input_k * tangent_k over the inputs
    with a tangent (forward mode; the same derivatives as `gradient_tasklet`, ties
    and kinks included). Returns one value per result: None for a non-float one."""
    inputs, results = tasklet.inputs.types, tasklet.res.types
    given = [k for k, t in enumerate(tangents) if t is not None]
    if len(tangents) != len(inputs) or any(tangents[k].type != inputs[k] or not isinstance(inputs[k], AnyFloat) for k in given):
        raise ValueError(f"expected one tangent (or None) per float input, of types {', '.join(map(str, inputs))}")
    floats = [r for r, t in enumerate(results) if isinstance(t, AnyFloat)]
    symbols, exprs = tasklet_to_sympy(tasklet)
    tangent_symbols = [sympy.Dummy(f"tangent{k}", real=True) for k in given]
    products = [sympy.Add(*(t * exprs[r].diff(symbols[k]) for t, k in zip(tangent_symbols, given))) for r in floats]
    new = _derivative_tasklet(tasklet, symbols, tangent_symbols, [tangents[k] for k in given], products,
                              [results[r] for r in floats], builder)
    found: list[SSAValue | None] = [None] * len(results)
    for r, v in zip(floats, new):
        found[r] = v
    return found


def _derivative_tasklet(tasklet: df.TaskletOp, symbols: list, extra: list, extra_values: list[SSAValue],
                        exprs: list, types: list, builder: Builder) -> list[SSAValue]:
    """Insert at `builder` a df.TaskletOp computing `exprs` (of `types`) of the
    tasklet's inputs (`symbols`) and of `extra` symbols bound to `extra_values`
    (seeds or tangents), taking only the operands its body uses."""
    shared, exprs = sympy.cse(exprs, symbols=sympy.numbered_symbols("t", cls=sympy.Dummy))
    block = Block(arg_types=[*tasklet.inputs.types, *(v.type for v in extra_values)])
    emitter = _Emitter(Builder(InsertPoint.at_end(block)), dict(zip([*symbols, *extra], block.args)), dict(shared))
    try:
        outs = [emitter.emit(e, t) for e, t in zip(exprs, types)]
    except _NoForm as err:
        raise _blame(tasklet, err.expr) from None
    emitter.b.insert(df.YieldOp(*outs))
    operands = [*tasklet.inputs, *extra_values]
    for arg in reversed(block.args):  # only the values the derivative needs
        if not arg.uses:
            del operands[arg.index]
            block.erase_arg(arg)
    return list(builder.insert(df.TaskletOp(operands, list(types), block)).res)


_UNEVALUATED = (sympy.Derivative, sympy.Subs, sympy.Heaviside, sympy.DiracDelta)


class _NoForm(Exception):
    """`expr` has no arith/math form."""

    def __init__(self, expr: sympy.Basic):
        self.expr = expr


def _blame(tasklet: df.TaskletOp, expr: sympy.Basic) -> UnsupportedOpError:
    """The error naming the first op whose own derivative has no closed form."""
    _, env = _forward(tasklet)
    for op in list(tasklet.body.block.ops)[:-1]:
        if not isinstance(op.results[0].type, AnyFloat):
            continue
        points = {k: sympy.Dummy("x", real=True) for k, v in enumerate(op.operands) if isinstance(v.type, AnyFloat)}
        local = _rule(op, [points.get(k, env[v]) for k, v in enumerate(op.operands)])
        for point in points.values():
            derivative = local.diff(point)
            if derivative.has(type(expr), *_UNEVALUATED):
                return UnsupportedOpError(op, f"its derivative {derivative} has no closed form")
    return UnsupportedOpError(tasklet, f"the derivative holds {expr}, which has no arith/math form")


def _widest(types: Sequence[Attribute | None]) -> Attribute | None:
    return max((t for t in types if isinstance(t, AnyFloat)), key=lambda t: t.bitwidth, default=None)


_UNARY: dict[type[sympy.Basic], type[Operation]] = {
    sympy.exp: math.ExpOp,
    sympy.log: math.LogOp,
    sympy.tanh: math.TanhOp,
    sympy.sin: math.SinOp,
    sympy.cos: math.CosOp,
    sympy.erf: math.ErfOp,
    sympy.Abs: math.AbsFOp,
    sympy.asinh: math.AsinhOp,
    sympy.acosh: math.AcoshOp,
    sympy.atanh: math.AtanhOp,
    _Cbrt: math.CbrtOp,
}
_CMPF = {sympy.Gt: "ogt", sympy.Ge: "oge", sympy.Lt: "olt", sympy.Le: "ole", sympy.Eq: "oeq", sympy.Ne: "une"}


class _Emitter:
    """Emits SymPy expressions as arith/math ops, each (subexpression, type) once."""

    def __init__(self, b: Builder, values: dict[sympy.Symbol, SSAValue], shared: dict[sympy.Symbol, sympy.Expr]):
        self.b = b
        self.values = values
        self.shared = shared
        self.types: dict[sympy.Basic, Attribute | None] = {s: v.type for s, v in values.items()}
        self.default = _widest(list(self.types.values()))
        self.cache: dict[tuple[sympy.Basic, Attribute], SSAValue] = {}

    def type(self, e: sympy.Basic) -> Attribute | None:
        """i1 for a condition, None for a number, else the widest float type of its leaves."""
        if e not in self.types:
            if e in self.shared:
                t = self.type(self.shared[e])
            elif isinstance(e, _Cast):
                t = e.target
            elif isinstance(e, Boolean):
                t = i1
            elif e.is_number:
                t = None
            elif isinstance(e, sympy.Piecewise):
                t = _widest([self.type(x) for x, _ in e.args])
            else:
                t = _widest([self.type(a) for a in e.args])
            self.types[e] = t
        return self.types[e]

    def emit(self, e: sympy.Basic, want: Attribute | None = None) -> SSAValue:
        """The value of `e`, in type `want` where given (a float type is converted to)."""
        t = self.type(e) or want
        assert t is not None
        if (e, t) not in self.cache:
            self.cache[e, t] = self._build(e, t)
        if not isinstance(want, AnyFloat) or want == t:
            return self.cache[e, t]
        if (e, want) not in self.cache:
            convert = arith.ExtFOp if want.bitwidth > t.bitwidth else arith.TruncFOp
            self.cache[e, want] = self._op(convert(self.cache[e, t], want))
        return self.cache[e, want]

    def _op(self, op: Operation) -> SSAValue:
        return self.b.insert(op).results[0]

    def _fold(self, op: type[Operation], exprs: Sequence[sympy.Basic], t: Attribute) -> SSAValue:
        value = self.emit(exprs[0], t)
        for x in exprs[1:]:
            value = self._op(op(value, self.emit(x, t)))
        return value

    def _build(self, e: sympy.Basic, t: Attribute) -> SSAValue:
        if e in self.values:
            return self.values[e]
        if e in self.shared:
            return self.emit(self.shared[e], t)
        if isinstance(e, _Cast):
            return self.emit(e.args[0], e.target)
        if isinstance(e, BooleanAtom):
            return self._op(arith.ConstantOp(IntegerAttr(int(bool(e)), i1)))
        if not isinstance(e, Boolean) and e.is_number and not e.has(*_UNEVALUATED):
            try:
                value = float(e)
            except TypeError:  # complex infinity or a non-real number: NaN, as in IEEE
                value = float("nan")
            return self._op(arith.ConstantOp(FloatAttr(value, t)))
        if isinstance(e, sympy.Add):
            return self._add(e, t)
        if isinstance(e, sympy.Mul):
            return self._mul(e, t)
        if isinstance(e, sympy.Pow):
            return self._pow(e, t)
        if isinstance(e, sympy.Piecewise):
            return self._piecewise(e, t)
        if isinstance(e, sympy.sign):
            (a,) = e.args
            return self.emit(sympy.Piecewise((1, a > 0), (-1, a < 0), (0, True)), t)
        if isinstance(e, sympy.log):
            constant, rest = e.args[0].as_coeff_Add()
            if constant == 1:
                return self._op(math.Log1pOp(self.emit(rest, t)))
        if type(e) in _UNARY:
            return self._op(_UNARY[type(e)](self.emit(e.args[0], t)))
        if type(e) in _CMPF:
            compared = _widest([self.type(a) for a in e.args]) or self.default
            lhs, rhs = (self.emit(a, compared) for a in e.args)
            return self._op(arith.CmpfOp(lhs, rhs, _CMPF[type(e)]))
        if isinstance(e, sympy.And | sympy.Or):
            return self._fold(arith.AndIOp if isinstance(e, sympy.And) else arith.OrIOp, e.args, i1)
        if isinstance(e, _Unordered):
            compared = _widest([self.type(a) for a in e.args]) or self.default
            lhs, rhs = (self.emit(a, compared) for a in e.args)
            return self._op(arith.CmpfOp(lhs, rhs, "uno"))
        if isinstance(e, _SignBit):
            return self._op(math.CopySignOp(self.emit(sympy.S.One, t), self.emit(e.args[0], t)))
        if isinstance(e, _Extremum):
            return self._op(e.op(*(self.emit(a, t) for a in e.args)))
        if isinstance(e, _Share):
            return self._share(e, t)
        if isinstance(e, _Step):
            return self._op(e.op(self.emit(e.args[0], t)))
        if isinstance(e, _FMod):
            return self._op(RemFOp(*(self.emit(a, t) for a in e.args)))
        if isinstance(e, ITE):  # conditions of nested max/min: a select on i1
            c, x, y = (self.emit(a, i1) for a in e.args)
            return self._op(arith.SelectOp(c, x, y))
        if isinstance(e, Xor):
            return self._fold(arith.XOrIOp, e.args, i1)
        if isinstance(e, sympy.Not):
            return self._op(arith.XOrIOp(self.emit(e.args[0], i1), self.emit(sympy.true, i1)))
        raise _NoForm(e)

    def _share(self, e: _Share, t: Attribute) -> SSAValue:
        """select(a wins, 1, select(b wins, 0, tie)) (see `_Share`)."""
        mine, other = e.args
        compared = _widest([self.type(a) for a in e.args]) or self.default
        a, b = self.emit(mine, compared), self.emit(other, compared)
        wins = self._op(arith.CmpfOp(a, b, e.predicate))
        loses = self._op(arith.CmpfOp(b, a, e.predicate))
        tie = sympy.S.Zero if other.is_number else sympy.S.Half
        rest = self._op(arith.SelectOp(loses, self.emit(sympy.S.Zero, t), self.emit(tie, t)))
        return self._op(arith.SelectOp(wins, self.emit(sympy.S.One, t), rest))

    def _add(self, e: sympy.Add, t: Attribute) -> SSAValue:
        """Positive terms summed, then negative ones subtracted."""
        negative = [-a for a in e.args if a.as_coeff_Mul()[0].is_negative]
        positive = [a for a in e.args if not a.as_coeff_Mul()[0].is_negative]
        if positive:
            value = self._fold(arith.AddfOp, positive, t)
        else:
            value, negative = self._op(arith.NegfOp(self.emit(negative[0], t))), negative[1:]
        for a in negative:
            value = self._op(arith.SubfOp(value, self.emit(a, t)))
        return value

    def _mul(self, e: sympy.Mul, t: Attribute) -> SSAValue:
        """A product of numerator factors divided by one of denominator factors
        (negative powers but x**-1/2, which is rsqrt)."""
        c, factors = e.as_coeff_mul()
        below = [f.is_Pow and f.exp.is_Number and f.exp < 0 and f.exp != -sympy.S.Half for f in factors]
        numerator = [f for f, b in zip(factors, below) if not b]
        denominator = [1 / f for f, b in zip(factors, below) if b]
        if c.is_Rational and 1 < c.q < 2**20:  # 1/3 as a division; 0.2 (exactly p/2**54) as a constant
            denominator.append(sympy.Integer(c.q))
            c = sympy.Integer(c.p)
        if c not in (1, -1):
            numerator.insert(0, c)
        value = self._fold(arith.MulfOp, numerator or [sympy.S.One], t)
        if denominator:
            value = self._op(arith.DivfOp(value, self._fold(arith.MulfOp, denominator, t)))
        return self._op(arith.NegfOp(value)) if c == -1 else value

    def _pow(self, e: sympy.Pow, t: Attribute) -> SSAValue:
        """Integer powers by repeated squaring, half-integer ones via sqrt/rsqrt, else powf."""
        base, exp = e.args
        if exp.is_Integer:
            value = self._power(self.emit(base, t), abs(int(exp)))
            return self._op(arith.DivfOp(self.emit(sympy.S.One, t), value)) if exp < 0 else value
        if exp.is_Rational and exp.q == 2:
            if abs(exp.p) == 1:
                return self._op((math.SqrtOp if exp > 0 else math.RsqrtOp)(self.emit(base, t)))
            root = self.emit(base ** sympy.Rational(sympy.sign(exp.p), 2), t)
            return self._power(root, abs(exp.p))
        return self._op(math.PowFOp(self.emit(base, t), self.emit(exp, t)))

    def _power(self, value: SSAValue, n: int) -> SSAValue:
        """value**n for n >= 1."""
        result = None
        while n:
            if n & 1:
                result = value if result is None else self._op(arith.MulfOp(result, value))
            n >>= 1
            if n:
                value = self._op(arith.MulfOp(value, value))
        assert result is not None
        return result

    def _piecewise(self, e: sympy.Piecewise, t: Attribute) -> SSAValue:
        """A chain of selects; NaN where no condition holds."""
        pairs = list(e.args)
        if pairs[-1][1] is not sympy.true:
            pairs.append((sympy.nan, sympy.true))
        value = self.emit(pairs[-1][0], t)
        for x, cond in reversed(pairs[:-1]):
            value = self._op(arith.SelectOp(self.emit(cond, i1), self.emit(x, t), value))
        return value
