"""Complex values of the NumPy frontend: a pair of real lazy arrays.

The IR has no complex element type, so a complex array is carried as its real
and imaginary parts (`Complex.re`, `Complex.im`: lazy arrays of one float
dtype, f32 for complex64, f64 for complex128) and each NumPy operation becomes
the real operations on the parts, as NumPy computes them (its formulas: Smith's
division, `abs` as an overflow-safe hypot, integer powers by repeated
multiplication). A named complex array is stored *packed*: one float tensor of
shape `(*shape, 2)` (NumPy's own memory layout, re and im interleaved) in one
`Cell`; its parts are views of that tensor, so loops, branches, in-place
updates and calls carry it as one value. Arguments and results cross the
boundary as such tensors (`x.view(float64)` on the host, no copy for
contiguous arrays). A boolean-masked read of a complex array is a `Complex` of
two `masks.Masked` parts. Gradients of complex values are refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from dfc.dialects.df_builders import empty
from dfc.frontend import masks
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Op, View, dtype_name, result_dtype, tensor_type
from dfc.frontend.numpy_args import astype

REAL_NEEDED = ("a complex value where a real one is needed (an operation without complex support, or a store into "
               "a real array, which would drop the imaginary part): docs/frontend.md lists the complex operations")

COMPLEX_OF = {"f32": np.complex64, "f64": np.complex128}
"""The NumPy complex dtype of each part dtype (float16 parts widen to complex64, as NumPy's promotion)."""


@dataclass(eq=False)
class Complex:
    """A complex value: `re` and `im` are lazy arrays (`Expr`, or `Masked` for a masked read) of the same
    shape; `weak` for a Python complex number (it takes the other operand's precision)."""

    re: Any
    im: Any
    weak: bool = False

    @property
    def shape(self) -> list[Affine]:
        return _base(self.re).shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def cell(self):
        """The packed array's cell when both parts are views of it (a named array or its view), else None."""
        r, i = self.re, self.im
        if isinstance(r, View) and isinstance(i, View) and r.cell is not None and r.cell is i.cell and not r.gathers:
            return r.cell
        return None

    def number(self) -> complex | None:
        """The Python complex number this is, when both parts are constants."""
        if isinstance(self.re, Const) and isinstance(self.im, Const) and not self.re.shape and not self.im.shape:
            return complex(self.re.value, self.im.value)
        return None


def _base(part: Any) -> Expr:
    return part.base if isinstance(part, masks.Masked) else part


def part_dtype(tr, z: Complex) -> str:
    """The float dtype of `z`'s parts once stored: NumPy's complex promotion (complex64 at least)."""
    d = result_dtype([_base(z.re), _base(z.im)])
    if z.weak:
        d = tr.default_float
    return widen(d)


def widen(d: str) -> str:
    """The part dtype of the complex type NumPy promotes real dtype `d` to (f16 -> complex64, ints -> complex128)."""
    return d if d in ("f32", "f64") else "f32" if d == "f16" else "f64"


def is_complex(v: Any) -> bool:
    return isinstance(v, Complex | complex | np.complexfloating)


def complex_dtype(dtype: Any) -> str | None:
    """The part dtype of a complex dtype object (np.complex128, complex, 'complex64', ...); None for others."""
    if dtype is complex:
        return "f64"
    try:
        d = np.dtype(dtype)
    except TypeError:
        return None
    return {np.dtype(np.complex64): "f32", np.dtype(np.complex128): "f64"}.get(d)


def constant(value: complex, dtype: str | None = None) -> Complex:
    """A complex number: weak (a Python complex) unless `dtype` gives its precision."""
    weak = dtype is None
    d = dtype or "f64"
    return Complex(Const(float(value.real), d, weak), Const(float(value.imag), d, weak), weak)


def lift(tr, v: Any, node: ast.AST, dtype: str | None = None) -> Complex:
    """`v` (complex, real array, mask, number) as a Complex, its parts converted to `dtype` when given."""
    if isinstance(v, np.complexfloating) and v.dtype not in (np.complex64, np.complex128):
        raise tr.fail(f"a NumPy number of dtype {v.dtype}: extended-precision complex numbers are not supported", node)
    if isinstance(v, complex | np.complexfloating):
        z = constant(complex(v), None if isinstance(v, complex) else "f32" if v.dtype == np.complex64 else "f64")
    elif isinstance(v, Complex):
        z = v
    else:
        e = v if isinstance(v, masks.Masked) else tr.as_expr(v, node)
        weak = _base(e).weak
        z = Complex(e, Const(0.0, "f64", True, list(_base(e).shape)), weak)
    if dtype is None:
        return z
    return Complex(_convert(tr, z.re, dtype, node), _convert(tr, z.im, dtype, node), False)


def _convert(tr, part: Any, dtype: str, node: ast.AST) -> Any:
    if isinstance(part, masks.Masked):
        return masks.Masked(_convert(tr, part.base, dtype, node), part.mask, part.lead)
    if isinstance(part, Const):
        return Const(float(part.value), dtype, False, part.shape)
    if part.dtype == dtype and not part.weak:
        return part
    return astype(tr, part, dtype, node)


def common(tr, values: list, node: ast.AST) -> tuple[list[Complex], str | None]:
    """The values lifted to one complex type (NumPy's promotion); None for the dtype when all are weak
    (Python numbers: they stay weak)."""
    exprs, weak = [], True
    for v in values:
        if isinstance(v, Complex):
            if not v.weak:  # a weak one (a Python complex) takes the others' precision
                exprs += [_base(v.re), _base(v.im)]
            weak = weak and v.weak
        elif isinstance(v, complex):
            continue
        elif isinstance(v, np.complexfloating):
            exprs.append(Const(0.0, "f32" if v.dtype == np.complex64 else "f64", False))
            weak = False
        else:
            e = _base(v) if isinstance(v, masks.Masked) else tr.as_expr(v, node)
            exprs.append(e)
            weak = weak and e.weak
    if weak:
        return [lift(tr, v, node) for v in values], None
    d = widen(result_dtype([e for e in exprs if not e.weak] or exprs))
    return [lift(tr, v, node, d) for v in values], d


# -- storage ----------------------------------------------------------------------------


def part_view(packed: SSAValue, k: int, cell=None) -> View:
    """Part `k` (0: re, 1: im) of a packed tensor of shape (*shape, 2)."""
    t = packed.type
    assert isinstance(t, TensorType)
    n = t.get_num_dims() - 1
    coef = [[int(r == c) for c in range(n)] for r in range(n)] + [[0] * n]
    return View(packed, [Affine(d) for d in t.get_shape()[:-1]], [Affine(0)] * n + [Affine(k)], coef,
                dtype_name(t.element_type), cell)


def unpacked(packed: SSAValue, cell=None) -> Complex:
    """The Complex whose parts are the halves of a packed tensor (named when `cell` is given)."""
    return Complex(part_view(packed, 0, cell), part_view(packed, 1, cell))


def is_packed_whole(z: Complex) -> bool:
    """Whether `z` is a whole named packed array (its parts the two halves of its cell's tensor)."""
    cell = z.cell
    if cell is None:
        return False
    return all(_same_view(p, part_view(cell.value, k)) for k, p in enumerate((z.re, z.im)))


def _same_view(a: View, b: View) -> bool:
    """Whether two views of the same cell select the same elements (a named view reads its cell's current value)."""
    return a.shape == b.shape and a.offset == b.offset and a.coef == b.coef and not a.gathers


def store(tr, z: Complex, node: ast.AST, dtype: str | None = None) -> SSAValue:
    """The packed tensor (shape (*shape, 2)) holding `z`: the named array itself when `z` is one."""
    d = dtype or part_dtype(tr, z)
    cell = z.cell
    if cell is not None and is_packed_whole(z) and z.re.dtype == d:
        return cell.value
    for part in (z.re, z.im):
        if isinstance(part, masks.Masked):
            raise tr.fail(masks.SHAPE_MESSAGE.format(what="a boolean-masked complex array (z[m])"), node)
    re, im = tr.as_expr(z.re, node), tr.as_expr(z.im, node)
    shape = tr.em.static(tr.elementwise("add", [re, im], node, d), "the complex array")
    out = empty(tr.b, tensor_type(d, [*shape, 2]))
    out = tr.em.assign(part_view(out, 0), re)
    return tr.em.assign(part_view(out, 1), im)


def bind_value(tr, z: Complex, name: str, node: ast.AST) -> Complex:
    """What a name bound to `z` holds: `z` itself when it names an array (as NumPy aliases) or is a number,
    else a fresh packed array in a new cell."""
    if z.cell is not None or z.number() is not None:
        return z
    value = store(tr, z, node)
    value.name_hint = name if name.isidentifier() else None
    cell = tr.new_cell(value)
    for part in (z.re, z.im):  # reshapes of a named array: NumPy's views of its memory, separate values here
        if isinstance(part, View) and part.cell is not None and not tr._live(part.cell):
            for other in part.cell.shares:
                if other not in cell.shares:
                    cell.shares.append(other)
                    other.shares.append(cell)
    out = unpacked(value, cell)
    out.weak = z.weak and not z.ndim  # a Python complex stays weak, as a Python float does
    return out


def write(tr, target: Complex, value: Any, node: ast.AST) -> None:
    """`target[...] = value` for a view of a named complex array (both parts; the value is read first)."""
    z = lift(tr, value, node)
    re, im = tr.as_expr(z.re, node), tr.as_expr(z.im, node)  # both read before either part is written
    tr.write(target.re, re, node)
    tr.write(_current(target.im), im, node)


def _current(v: View) -> View:
    """`v` reading its cell's current value (the re part's write replaced it)."""
    return View(v.cell.value, v.shape, v.offset, v.coef, v.dtype, v.cell, v.gathers)


def assign_masked(tr, target: Complex, mask_parts: tuple, value: Any, op: str | None, node: ast.AST) -> None:
    """`target[m] = value` (or `op=`) of a named complex array: both parts as `where(m, new, old)`."""
    current = Complex(mask_parts[0], mask_parts[1])
    new = binop(tr, op, current, value, node) if op is not None else value
    z, _ = common(tr, [new], node)
    new = z[0]
    for k, (view, m, part) in enumerate(zip((target.re, target.im), mask_parts, (new.re, new.im))):
        view = _current(view) if k else view
        masks.assign(tr, view, masks.Masked(view, m.mask), part, None, node)


# -- arithmetic ---------------------------------------------------------------------------


def shared(tr, e: Any) -> Any:
    """`e` computed once when it is a large tree used several times (a complex formula reads each part
    more than once; lazy trees would repeat the work, exponentially in chains)."""
    base = _base(e)
    if not isinstance(base, Op) or _size(base) < 6 or base.static_shape is None:
        return e
    stored = View.whole(tr.em.materialize(base))
    stored.weak = base.weak
    return masks.Masked(stored, e.mask, e.lead) if isinstance(e, masks.Masked) else stored


def _size(e: Expr) -> int:
    return 1 + sum(_size(a) for a in e.args) if isinstance(e, Op) else 1


def shared_z(tr, z: Complex) -> Complex:
    return Complex(shared(tr, z.re), shared(tr, z.im), z.weak)


def unmasked(tr, fn, values: list, node: ast.AST) -> Any:
    """`fn(*values)` for values that may be boolean-masked reads with one mask (masks.py): computed on the
    whole arrays and masked again, as masks.py treats real elementwise functions."""
    found = [p for v in values for p in ((v.re, v.im) if isinstance(v, Complex) else (v,))
             if isinstance(p, masks.Masked)]
    if not found:
        return fn(*values)
    mask, lead = found[0].mask, found[0].lead
    found = [p.mask for p in found]
    if any(not masks.same(m, mask) for m in found):
        raise tr.fail("combining masked arrays with different masks: their elements do not correspond", node)

    def base(p: Any) -> Any:
        if isinstance(p, masks.Masked):
            return p.base
        if isinstance(p, Expr) and p.ndim and not isinstance(p, Const):
            raise tr.fail("combining an array and a boolean-masked one: the masked one has a data-dependent shape; "
                          "mask both the same way (y[m]) or use np.where", node)
        return p

    out = fn(*(Complex(base(v.re), base(v.im), v.weak) if isinstance(v, Complex) else base(v) for v in values))
    if isinstance(out, Complex):
        return Complex(masks.Masked(tr.as_expr(out.re, node), mask, lead),
                       masks.Masked(tr.as_expr(out.im, node), mask, lead))
    return masks.Masked(tr.as_expr(out, node), mask, lead)


def binop(tr, op: str, a: Any, b: Any, node: ast.AST) -> Any:
    """`a op b` where one operand is complex (+ - * / **, NumPy's formulas)."""
    return unmasked(tr, lambda x, y: _binop(tr, op, x, y, node), [a, b], node)


def _binop(tr, op: str, a: Any, b: Any, node: ast.AST) -> Any:
    (x, y), _ = common(tr, [a, b], node)
    p, q = x.number(), y.number()
    if p is not None and q is not None and x.weak and y.weak:
        return _python(op, p, q, tr, node)
    if op in ("add", "sub"):
        return Complex(tr.binop(op, x.re, y.re, node), tr.binop(op, x.im, y.im, node), x.weak and y.weak)
    if op == "mul":
        return multiply(tr, x, y, node)
    if op == "div":
        return divide(tr, x, y, node)
    if op == "pow":
        return power(tr, x, y, node)
    what = {"floordiv": "//", "mod": "%", "matmul": "@"}.get(op, op)
    raise tr.fail(f"'{what}' of complex values is not supported", node)


def _python(op: str, p: complex, q: complex, tr, node: ast.AST) -> Complex:
    try:
        value = {"add": lambda: p + q, "sub": lambda: p - q, "mul": lambda: p * q, "div": lambda: p / q,
                 "pow": lambda: p ** q}[op]()
    except KeyError:
        raise tr.fail(f"'{op}' of complex numbers is not supported", node) from None
    except ZeroDivisionError:
        raise tr.fail("complex division by zero", node) from None
    return constant(value)


def multiply(tr, x: Complex, y: Complex, node: ast.AST) -> Complex:
    """(a + bi)(c + di) = (ac - bd) + (ad + bc)i, NumPy's formula."""
    x, y = shared_z(tr, x), shared_z(tr, y)
    m = tr.binop
    re = m("sub", m("mul", x.re, y.re, node), m("mul", x.im, y.im, node), node)
    im = m("add", m("mul", x.re, y.im, node), m("mul", x.im, y.re, node), node)
    return Complex(re, im, x.weak and y.weak)


def _np(tr, f: Any, *args: Any, node: ast.AST) -> Any:
    from dfc.frontend.numpy_calls import call

    return call(tr, f, list(args), {}, node)


def divide(tr, x: Complex, y: Complex, node: ast.AST) -> Complex:
    """NumPy's complex division (Smith's method, scaled by the larger part of the divisor; 0/0 gives NaN)."""
    x, y = shared_z(tr, x), shared_z(tr, y)
    m = tr.binop
    abs_r, abs_i = _np(tr, np.abs, y.re, node=node), _np(tr, np.abs, y.im, node=node)
    big = tr.compare("ge", abs_r, abs_i, node)
    rat = shared(tr, _np(tr, np.where, big, m("div", y.im, y.re, node), m("div", y.re, y.im, node), node=node))
    scale = shared(tr, m("div", 1.0, _np(tr, np.where, big, m("add", y.re, m("mul", y.im, rat, node), node),
                                          m("add", y.im, m("mul", y.re, rat, node), node), node=node), node))
    re = _np(tr, np.where, big, m("add", x.re, m("mul", x.im, rat, node), node),
             m("add", m("mul", x.re, rat, node), x.im, node), node=node)
    im = _np(tr, np.where, big, m("sub", x.im, m("mul", x.re, rat, node), node),
             m("sub", m("mul", x.im, rat, node), x.re, node), node=node)
    zero = shared(tr, _np(tr, np.logical_and, tr.compare("eq", abs_r, 0.0, node), tr.compare("eq", abs_i, 0.0, node),
                           node=node))
    re = _np(tr, np.where, zero, m("div", x.re, abs_r, node), m("mul", re, scale, node), node=node)
    im = _np(tr, np.where, zero, m("div", x.im, abs_r, node), m("mul", im, scale, node), node=node)
    return Complex(re, im, x.weak and y.weak)


def power(tr, x: Complex, y: Complex, node: ast.AST) -> Complex:
    """NumPy's complex power: a constant integer exponent below 100 in magnitude by repeated squaring (its
    loop, 1/x^n for negative n); otherwise exp(y log x), with x**0 = 1 and 0**y = 0 for real y > 0 (else NaN)."""
    q = y.number()
    if q is not None and q.imag == 0 and float(q.real).is_integer() and abs(q.real) < 100:
        n = int(q.real)
        if n == 0:
            return constant(1.0, part_dtype(tr, x)) if x.ndim == 0 else ones_like(tr, x, node)
        result, base, k = None, shared_z(tr, x), abs(n)
        while True:
            if k & 1:
                result = base if result is None else multiply(tr, result, base, node)
            k >>= 1
            if not k:
                break
            base = shared_z(tr, multiply(tr, base, base, node))
        return divide(tr, lift(tr, 1.0, node), result, node) if n < 0 else result
    x, y = shared_z(tr, x), shared_z(tr, y)
    r = shared_z(tr, exp(tr, multiply(tr, y, log(tr, x, node), node), node))
    m = tr.binop
    y_zero = _np(tr, np.logical_and, tr.compare("eq", y.re, 0.0, node), tr.compare("eq", y.im, 0.0, node), node=node)
    x_zero = _np(tr, np.logical_and, tr.compare("eq", x.re, 0.0, node), tr.compare("eq", x.im, 0.0, node), node=node)
    positive = _np(tr, np.logical_and, tr.compare("gt", y.re, 0.0, node), tr.compare("eq", y.im, 0.0, node), node=node)
    nan = m("mul", y.re, float("nan"), node)
    parts = []
    for part, one in ((r.re, 1.0), (r.im, 0.0)):
        at_zero = _np(tr, np.where, positive, m("mul", y.re, 0.0, node), nan, node=node)
        parts.append(_np(tr, np.where, y_zero, m("add", m("mul", y.re, 0.0, node), one, node),
                         _np(tr, np.where, x_zero, at_zero, part, node=node), node=node))
    return Complex(parts[0], parts[1], x.weak and y.weak)


def ones_like(tr, z: Complex, node: ast.AST) -> Complex:
    d = part_dtype(tr, z)
    return Complex(Const(1.0, d, False, list(z.shape)), Const(0.0, d, False, list(z.shape)))


def negate(tr, z: Complex, node: ast.AST) -> Complex:
    if (n := z.number()) is not None and z.weak:
        return constant(-n)
    return Complex(neg_part(tr, z.re, node), neg_part(tr, z.im, node), z.weak)


def neg_part(tr, part: Any, node: ast.AST) -> Any:
    if isinstance(part, Const) and not part.shape:
        return Const(-part.value, part.dtype, part.weak)
    if isinstance(part, masks.Masked):
        return masks.Masked(neg_part(tr, part.base, node), part.mask, part.lead)
    e = tr.as_expr(part, node)
    return Op("neg", [e], e.shape, e.dtype)


def conj(tr, z: Complex, node: ast.AST) -> Complex:
    return Complex(z.re, neg_part(tr, z.im, node), z.weak)


def absolute(tr, z: Complex, node: ast.AST) -> Any:
    """|z| as NumPy's hypot: max * sqrt(1 + (min/max)^2), 0 for 0, inf when a part is infinite (even NaN)."""
    if (n := z.number()) is not None and z.weak:
        return Const(abs(n), "f64")
    a, b = shared(tr, _np(tr, np.abs, z.re, node=node)), shared(tr, _np(tr, np.abs, z.im, node=node))
    big = shared(tr, _np(tr, np.maximum, a, b, node=node))
    small = _np(tr, np.minimum, a, b, node=node)
    m = tr.binop
    q = m("div", small, big, node)
    r = m("mul", big, _np(tr, np.sqrt, m("add", 1.0, m("mul", q, q, node), node), node=node), node)
    r = _np(tr, np.where, tr.compare("eq", big, 0.0, node), big, r, node=node)
    inf = _np(tr, np.logical_or, _np(tr, np.isinf, a, node=node), _np(tr, np.isinf, b, node=node), node=node)
    return _np(tr, np.where, inf, float("inf"), r, node=node)


def angle(tr, z: Complex, node: ast.AST) -> Any:
    return _np(tr, np.arctan2, z.im, z.re, node=node)


def exp(tr, z: Complex, node: ast.AST) -> Complex:
    """exp(a) (cos b + i sin b); a real argument (b == 0) gives b as the imaginary part, as NumPy's cexp.
    C99's special values (Annex G) where b is infinite or NaN and a infinite: exp(+inf + ib) = inf + i NaN,
    exp(-inf + ib) = 0 + i 0 with b's sign (the formula would give NaN: 0 * cos(inf), inf * cos(NaN))."""
    z = shared_z(tr, z)
    e = shared(tr, _np(tr, np.exp, z.re, node=node))
    m = tr.binop
    not_finite = _np(tr, np.logical_not, _np(tr, np.isfinite, z.im, node=node), node=node)
    to_zero = shared(tr, _np(tr, np.logical_and, tr.compare("eq", z.re, -np.inf, node), not_finite, node=node))
    to_inf = shared(tr, _np(tr, np.logical_and, tr.compare("eq", z.re, np.inf, node), not_finite, node=node))
    re = m("mul", e, _np(tr, np.cos, z.im, node=node), node)
    re = _np(tr, np.where, to_zero, 0.0, _np(tr, np.where, to_inf, np.inf, re, node=node), node=node)
    im = _np(tr, np.where, to_inf, np.nan, m("mul", e, _np(tr, np.sin, z.im, node=node), node), node=node)
    im = _np(tr, np.where, to_zero, copysign(tr, 0.0, z.im, node), im, node=node)
    im = _np(tr, np.where, tr.compare("eq", z.im, 0.0, node), z.im, im, node=node)
    return Complex(re, im, z.weak)


def log(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    return Complex(_np(tr, np.log, absolute(tr, z, node), node=node), angle(tr, z, node), z.weak)


def sqrt(tr, z: Complex, node: ast.AST) -> Complex:
    """NumPy's csqrt: t = sqrt((|a| + |z|) / 2); (t, b / 2t) for a >= 0, else (|b| / 2t, t with b's sign);
    +0 for 0 (the imaginary part keeps b). A huge z is scaled by 1/4 first (the root by 2 after), as NumPy
    scales, so that |a| + |z| does not overflow. An infinite b gives C99's inf + ib (Annex G)."""
    z = shared_z(tr, z)
    m = tr.binop
    big = shared(tr, tr.compare("gt", absolute(tr, z, node), 1e300 if part_dtype(tr, z) == "f64" else 1e37, node))
    scale = shared(tr, _np(tr, np.where, big, 0.25, 1.0, node=node))
    a, b = shared(tr, m("mul", z.re, scale, node)), shared(tr, m("mul", z.im, scale, node))
    a_abs = shared(tr, _np(tr, np.abs, a, node=node))
    t = shared(tr, _np(tr, np.sqrt, m("mul", m("add", a_abs, absolute(tr, Complex(a, b), node), node), 0.5, node),
                        node=node))
    two_t = shared(tr, m("mul", t, 2.0, node))
    nonneg = tr.compare("ge", a, 0.0, node)
    re = _np(tr, np.where, nonneg, t, m("div", _np(tr, np.abs, b, node=node), two_t, node), node=node)
    signed = _np(tr, np.where, signbit(tr, b, node), neg_part(tr, t, node), t, node=node)  # -0.0: below the cut
    im = _np(tr, np.where, nonneg, m("div", b, two_t, node), signed, node=node)
    unscale = shared(tr, _np(tr, np.where, big, 2.0, 1.0, node=node))
    zero = _np(tr, np.logical_and, tr.compare("eq", a, 0.0, node), tr.compare("eq", b, 0.0, node), node=node)
    re = _np(tr, np.where, zero, m("mul", a_abs, 0.0, node), m("mul", re, unscale, node), node=node)
    im = _np(tr, np.where, zero, z.im, m("mul", im, unscale, node), node=node)
    infinite = shared(tr, _np(tr, np.isinf, z.im, node=node))  # C99: sqrt(x + i inf) = inf + i inf, x NaN too
    return Complex(_np(tr, np.where, infinite, np.inf, re, node=node), _np(tr, np.where, infinite, z.im, im, node=node),
                   z.weak)


def signbit(tr, v: Any, node: ast.AST) -> Any:
    """Whether `v` is negative, -0.0 included (1 / -0.0 is -inf): the side of a branch cut a zero is on."""
    below = tr.compare("lt", v, 0.0, node)
    return _np(tr, np.where, tr.compare("eq", v, 0.0, node), tr.compare("lt", tr.binop("div", 1.0, v, node), 0.0, node),
               below, node=node)


def copysign(tr, x: Any, s: Any, node: ast.AST) -> Any:
    """|x| with the sign of `s` (-0.0 counting as negative), as np.copysign."""
    magnitude = shared(tr, _np(tr, np.abs, x, node=node))
    return _np(tr, np.where, signbit(tr, s, node), neg_part(tr, magnitude, node), magnitude, node=node)


def compare(tr, name: str, a: Any, b: Any, node: ast.AST) -> Any:
    """`==` and `!=` of complex values (both parts) and the orderings `<`, `<=`, `>`, `>=` in NumPy's
    lexicographic order (its CLT/CLE/CGT/CGE: the real parts decide, unless an imaginary part is NaN; the
    imaginary parts decide between equal real parts)."""
    return unmasked(tr, lambda x, y: _compare(tr, name, x, y, node), [a, b], node)


def _compare(tr, name: str, a: Any, b: Any, node: ast.AST) -> Any:
    (x, y), _ = common(tr, [a, b], node)
    p, q = x.number(), y.number()
    if p is not None and q is not None and x.weak and y.weak:
        if name not in ("eq", "ne"):
            raise tr.fail(f"ordering comparison ('{name}') of two Python complex numbers (Python's TypeError)", node)
        return (p == q) == (name == "eq")
    if name in ("eq", "ne"):
        r, i = tr.compare(name, x.re, y.re, node), tr.compare(name, x.im, y.im, node)
        return _np(tr, np.logical_and if name == "eq" else np.logical_or, r, i, node=node)
    x, y = shared_z(tr, x), shared_z(tr, y)
    strictly = tr.compare("lt" if name in ("lt", "le") else "gt", x.re, y.re, node)
    imag_numbers = _np(tr, np.logical_not, _np(tr, np.logical_or, _np(tr, np.isnan, x.im, node=node),
                                                _np(tr, np.isnan, y.im, node=node), node=node), node=node)
    tie = _np(tr, np.logical_and, tr.compare("eq", x.re, y.re, node), tr.compare(name, x.im, y.im, node), node=node)
    return _np(tr, np.logical_or, _np(tr, np.logical_and, strictly, imag_numbers, node=node), tie, node=node)
