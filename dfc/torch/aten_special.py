"""aten's special functions (`torch.special`, `lgamma`, `digamma`, `polygamma`, `i0`, `erfc`, `ndtr`) as the nn ops of
`dialects.nn_special`, and `round.decimals`. `mvlgamma` reaches here as the export's sum of `lgamma`s."""

from __future__ import annotations

import math

from dfc.torch.aten_common import handler_table

SPECIAL_HANDLERS, handles = handler_table()

for _aten, _nn in {
    "lgamma": "nn.lgamma", "digamma": "nn.digamma", "i0": "nn.bessel_i0", "special_i0e": "nn.bessel_i0e",
    "special_i1": "nn.bessel_i1", "special_i1e": "nn.bessel_i1e", "special_modified_bessel_i0": "nn.bessel_i0",
    "special_modified_bessel_i1": "nn.bessel_i1", "special_erfcx": "nn.erfcx", "special_ndtri": "nn.ndtri",
    "erfc": "nn.erfc",
}.items():
    handles(f"{_aten}.default")(lambda b, node, x, _nn=_nn: b.unary(_nn, b.convert(x, b.out(node)[1])))


@handles("special_ndtr.default")
def _ndtr(b, node, x):
    """The normal CDF as torch's kernel computes it, erfc(-x / sqrt 2) / 2 (kept from the export, whose
    decomposition 0.5 (1 + erf(x / sqrt 2)) loses the lower tail: float32 Phi(-3) was 4.5e-5 off)."""
    x = b.convert(x, b.out(node)[1])
    return b.binary("nn.mul", b.unary("nn.erfc", b.binary("nn.mul", x, -math.sqrt(0.5))), 0.5)


@handles("polygamma.default")
def _polygamma(b, node, n, x):
    """polygamma(n, x): `nn.polygamma` with n its property (torch.polygamma requires n >= 0)."""
    x = b.convert(x, b.out(node)[1])
    return b.op("nn.polygamma", [x], x.shape, x.dtype, n=int(n))


@handles("special_zeta.default", "special_zeta.self_scalar", "special_zeta.other_scalar")
def _zeta(b, node, x, q):
    """Hurwitz zeta(x, q), either argument a number."""
    return b.binary("nn.zeta", x, q, b.out(node)[1])


@handles("round.decimals")
def _round_decimals(b, node, x, decimals=0):
    """torch's `nearbyint(x * 10^d) / 10^d` (`nearbyint(x / 10^-d) * 10^-d` for d < 0) in x's type, 10^d
    rounded to it once as torch's kernel does; gradient 0."""
    if decimals == 0:
        return b.unary("nn.round_even", x)
    scale = float(10.0 ** abs(decimals))
    if decimals > 0:
        return b.binary("nn.div", b.unary("nn.round_even", b.binary("nn.mul", x, scale)), scale)
    return b.binary("nn.mul", b.unary("nn.round_even", b.binary("nn.div", x, scale)), scale)
