"""exp, log and tanh as inline LLVM IR: range reduction and polynomials that vectorise.

    emit_exp(e, x), emit_log(e, x), emit_tanh(e, x) -> value     f32 or f64 `x`

`e` needs `e.b` (an llvmlite IRBuilder) and `e.call_intrinsic(base, ty,
args)` (a call of `llvm.<base>.<ty>`). Only intrinsics that vectorise and
that NVPTX lowers to single instructions are called (fma, fabs, minnum,
maxnum, roundeven, copysign), with no fast-math flags: the reductions rely
on exact rounding steps. IEEE special values are kept (inf, NaN, signed
zeros). The host emitter uses them for `vector_math` (LLVM scalarises
`llvm.exp`/`llvm.log` and libm calls in vectorised loops); the GPU's math
(`gpu_math`) builds on them.
"""

from __future__ import annotations

import llvmlite.ir as ir

from dfc.compiler.codegen.llvm.values import I32, I64

__all__ = ["emit_exp", "emit_log", "emit_tanh"]


def _fma(e, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    return e.call_intrinsic("fma", a.type, [a, b, c])


def emit_exp(e, x: ir.Value) -> ir.Value:
    """exp(x): Cody-Waite reduction x = n*ln2 + r with |r| <= ln2/2, a minimax
    polynomial for exp(r), and 2^n built from the exponent bits (split in two
    factors so that n down to -2*bias stays accurate into the subnormals).
    x = -inf -> 0, large x -> inf, NaN -> NaN. Within 1-2 ulp over the full
    range (f32 and f64)."""
    b = e.b
    ty = x.type
    f64 = isinstance(ty, ir.DoubleType)
    ity = I64 if f64 else I32
    c = lambda v: ir.Constant(ty, v)  # noqa: E731
    ci = lambda v: ir.Constant(ity, v)  # noqa: E731
    if f64:
        hi_lim, lo_lim = 709.782712893384, -745.1332191019412
        ln2_hi, ln2_lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10
        # least-squares fit of exp on [-ln2/2, ln2/2] (max error < 1 ulp)
        coeffs = [1.0, 1.0, 0.5000000000000002, 0.16666666666666707, 0.04166666666661554, 0.008333333333315252,
                  0.0013888888921140484, 0.0001984126991121241, 2.480151537461439e-05, 2.7557210961068024e-06,
                  2.762285143342878e-07, 2.5123105322213725e-08]  # fmt: skip
        mant, bias = 52, 1023
    else:
        hi_lim, lo_lim = 88.72283935546875, -103.97283172607422
        ln2_hi, ln2_lo = 0.693145751953125, 1.428606765330187045e-06
        coeffs = [1.0, 1.0, 0.5, 0.1666657030582428, 0.04166644811630249, 0.008364385925233364, 0.001393545768223703]
        mant, bias = 23, 127
    xc = e.call_intrinsic("minnum", ty, [e.call_intrinsic("maxnum", ty, [x, c(lo_lim)]), c(hi_lim)])
    n = e.call_intrinsic("roundeven", ty, [b.fmul(xc, c(1.4426950408889634))])
    r = b.fsub(xc, b.fmul(n, c(ln2_hi)))
    r = b.fsub(r, b.fmul(n, c(ln2_lo)))
    p = c(coeffs[-1])
    for k in reversed(coeffs[:-1]):
        p = e.call_intrinsic("fma", ty, [p, r, c(k)])
    # 2^n = 2^(n1) * 2^(n - n1), each factor a normal number
    ni = b.fptosi(n, ity)
    n1 = b.ashr(ni, ci(1))
    n2 = b.sub(ni, n1)
    s1 = b.bitcast(b.shl(b.add(n1, ci(bias)), ci(mant)), ty)
    s2 = b.bitcast(b.shl(b.add(n2, ci(bias)), ci(mant)), ty)
    y = b.fmul(b.fmul(p, s1), s2)
    y = b.select(b.fcmp_ordered(">", x, c(hi_lim)), c(float("inf")), y)
    y = b.select(b.fcmp_ordered("<", x, c(lo_lim)), c(0.0), y)
    return b.select(b.fcmp_unordered("uno", x, x), x, y)


def emit_log(e, x: ir.Value) -> ir.Value:
    """log(x): x = m * 2^k with m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1),
    log(m) = 2 atanh(s) as an odd series in s (|s| < 0.172), k*ln2 split in two
    parts. Subnormals are scaled first; 0 -> -inf, x < 0 -> NaN, inf -> inf,
    NaN -> NaN. Within 1-2 ulp (f32 and f64)."""
    b = e.b
    ty = x.type
    f64 = isinstance(ty, ir.DoubleType)
    ity = I64 if f64 else I32
    mant, bias, terms = (52, 1023, 11) if f64 else (23, 127, 5)
    ln2_hi, ln2_lo = (6.93147180369123816490e-01, 1.90821492927058770002e-10) if f64 else (0.693145751953125, 1.428606765330187e-06)  # fmt: skip
    c = lambda v: ir.Constant(ty, v)  # noqa: E731
    ci = lambda v: ir.Constant(ity, v)  # noqa: E731
    tiny = b.fcmp_ordered("<", x, c(2.0 ** (-1022 if f64 else -126)))
    xs = b.select(tiny, b.fmul(x, c(2.0**mant)), x)
    bits = b.bitcast(xs, ity)
    k = b.sub(b.lshr(bits, ci(mant)), b.select(tiny, ci(bias + mant), ci(bias)))
    m = b.bitcast(b.or_(b.and_(bits, ci((1 << mant) - 1)), ci(bias << mant)), ty)
    big = b.fcmp_ordered(">", m, c(2.0**0.5))
    m = b.select(big, b.fmul(m, c(0.5)), m)
    k = b.select(big, b.add(k, ci(1)), k)
    s = b.fdiv(b.fsub(m, c(1.0)), b.fadd(m, c(1.0)))
    z = b.fmul(s, s)
    p = c(2.0 / (2 * terms + 1))
    for j in reversed(range(1, terms)):
        p = _fma(e, p, z, c(2.0 / (2 * j + 1)))
    log_m = _fma(e, b.fmul(s, z), p, b.fmul(s, c(2.0)))
    kf = b.sitofp(k, ty)
    r = _fma(e, kf, c(ln2_hi), _fma(e, kf, c(ln2_lo), log_m))
    r = b.select(b.fcmp_ordered("==", x, c(float("inf"))), x, r)
    r = b.select(b.fcmp_ordered("<", x, c(0.0)), c(float("nan")), r)
    r = b.select(b.fcmp_ordered("==", x, c(0.0)), c(float("-inf")), r)
    return b.select(b.fcmp_unordered("uno", x, x), x, r)


def emit_tanh(e, x: ir.Value) -> ir.Value:
    """tanh(x) from `emit_exp`: for |x| >= 0.625, sign(x)*(1 - 2/(e^(2|x|)+1));
    below, an odd minimax polynomial (no cancellation near 0)."""
    b = e.b
    ty = x.type
    c = lambda v: ir.Constant(ty, v)  # noqa: E731
    ax = e.call_intrinsic("fabs", ty, [x])
    ex = emit_exp(e, b.fmul(ax, c(2.0)))
    big = b.fsub(c(1.0), b.fdiv(c(2.0), b.fadd(ex, c(1.0))))
    big = e.call_intrinsic("copysign", ty, [big, x])
    x2 = b.fmul(x, x)
    # tanh(x) = x + x^3 P(x^2) on |x| < 0.625, least-squares fits (< 1 ulp)
    if isinstance(ty, ir.DoubleType):
        coeffs = [-0.3333333333333291, 0.1333333333326529, -0.053968253932078054, 0.02186948758384334,
                  -0.008863221000085133, 0.003591988512106368, -0.001454952883597452, 0.0005862900088214364,
                  -0.00022849897134066181, 7.705898988207414e-05, -1.602608790031079e-05]  # fmt: skip
    else:
        coeffs = [-0.3333328521293425, 0.13331512468516818, -0.05374464034403045, 0.020653063925050674,
                  -0.005718891533459834]  # fmt: skip
    p = c(coeffs[-1])
    for k in reversed(coeffs[:-1]):
        p = e.call_intrinsic("fma", ty, [p, x2, c(k)])
    small = e.call_intrinsic("fma", ty, [b.fmul(p, x2), x, x])
    small = e.call_intrinsic("copysign", ty, [small, x])  # tanh(-0) = -0
    return b.select(b.fcmp_ordered("<", ax, c(0.625)), small, big)
