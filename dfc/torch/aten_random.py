"""ATen's random ops on dfc's counter-based generator (`nn.random_uniform`, `nn.random_normal`).

Each draw takes a stream of its own under the program's key (`Builder.random`), an argument
that `CompiledModule` fills per call from torch's default generator (docs/random.md): the
numbers are not torch's, but `torch.manual_seed` makes a run reproducible and no two calls
draw the same numbers. An explicit `generator=` argument is refused by the translation.
"""

from __future__ import annotations

from dfc.torch.aten_common import Builder, UnsupportedOp, handler_table
from dfc.torch.aten_sort import argsort
from dfc.torch.ir_text import Value

RANDOM_HANDLERS, handles = handler_table()


def _float_out(b: Builder, node) -> tuple[tuple[int, ...], str]:
    shape, dtype = b.out(node)
    if not dtype.startswith("f"):
        raise UnsupportedOp(f"random numbers of dtype {dtype} (float ones only)")
    return shape, dtype


def _scaled(b: Builder, op: str, shape, dtype: str, scale: float, shift: float) -> Value:
    """`shift + scale * draw` (draw of `op`), without the arithmetic when it is the identity."""
    x = b.random(op, shape, dtype)
    if scale != 1:
        x = b.binary("nn.mul", x, float(scale), dtype)
    return x if shift == 0 else b.binary("nn.add", x, float(shift), dtype)


@handles("rand.default", "rand_like.default")
def _rand(b, node, *args, **kwargs):
    """Uniform in [0, 1)."""
    return b.random("nn.random_uniform", *_float_out(b, node))


@handles("randn.default", "randn_like.default")
def _randn(b, node, *args, **kwargs):
    """Standard normal."""
    return b.random("nn.random_normal", *_float_out(b, node))


@handles("uniform.default")
def _uniform(b, node, x, low, high, generator=None):
    """Uniform in [low, high) of `x`'s shape (the functional `uniform_`)."""
    _no_generator(generator)
    return _scaled(b, "nn.random_uniform", *_float_out(b, node), high - low, low)


@handles("normal_functional.default")
def _normal(b, node, x, mean, std, generator=None):
    """Normal of mean `mean` and standard deviation `std`, `x`'s shape (the functional `normal_`)."""
    _no_generator(generator)
    if std < 0:
        raise UnsupportedOp(f"normal with std={std} < 0 (torch refuses it)")
    return _scaled(b, "nn.random_normal", *_float_out(b, node), std, mean)


@handles("bernoulli.p")
def _bernoulli(b, node, x, p, generator=None):
    """1 with probability p, else 0, `x`'s shape and dtype: a uniform draw below p."""
    _no_generator(generator)
    if not 0 <= p <= 1:
        raise UnsupportedOp(f"bernoulli with p={p} outside [0, 1]")
    shape, dtype = _float_out(b, node)
    return b.convert(b.compare("LT", b.random("nn.random_uniform", shape, dtype), float(p)), dtype)


@handles("randint.low", "randint.default")
def _randint(b, node, *args, **kwargs):
    """Integers uniform in [low, high): low + floor(u (high - low)) of a float64 uniform u (32 random bits,
    so each value's probability is off by at most one part in 2^32 / (high - low))."""
    low, high = (0, args[0]) if str(node.target) == "aten.randint.default" else args[:2]
    if not 0 < high - low <= 2**31:
        raise UnsupportedOp(f"randint over [{low}, {high}) (a range of 1 to 2^31 values)")
    shape, dtype = b.out(node)
    u = b.random("nn.random_uniform", shape, "f64")
    picked = b.unary("nn.floor", b.binary("nn.mul", u, float(high - low), "f64"))
    return b.binary("nn.add", b.convert(picked, dtype), b.full(low, (), dtype), dtype)


@handles("randperm.default")
def _randperm(b, node, n, *args, **kwargs):
    """A random permutation of 0..n-1: the stable argsort of n float64 uniforms (32 random bits each; equal
    keys, about n^2 / 2^33 pairs of them, keep their order)."""
    shape, dtype = b.out(node)
    return b.convert(argsort(b, b.random("nn.random_uniform", shape, "f64"), 0, False), dtype)


@handles("native_dropout.default")
def _native_dropout(b, node, x, p, train):
    """Dropout: each element kept with probability 1 - p (a uniform draw >= p) and scaled by 1 / (1 - p),
    and the mask of the kept ones; p = 0 or not training keep everything, p = 1 drops everything. The
    gradient goes through the kept elements, scaled alike (the mask is one value, so the backward uses
    the forward's)."""
    if not 0 <= p <= 1:
        raise UnsupportedOp(f"dropout with p={p} outside [0, 1]")
    if train is False or p == 0:
        return x, b.full(True, x.shape, "i1")
    if p == 1:
        return b.binary("nn.mul", x, 0.0), b.full(False, x.shape, "i1")
    keep = b.compare("GE", b.random("nn.random_uniform", x.shape, x.dtype), float(p))
    scaled = b.binary("nn.mul", x, b.convert(keep, x.dtype))
    return b.binary("nn.mul", scaled, 1.0 / (1.0 - p)), keep


def _no_generator(generator) -> None:
    if generator is not None:
        raise UnsupportedOp("an explicit generator= (dfc draws from its own key per call: docs/random.md)")
