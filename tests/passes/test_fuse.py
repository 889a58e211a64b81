"""Fused programs compute what unfused ones do, with fewer maps and intermediates."""

from pathlib import Path

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module

EXAMPLES = Path(__file__).parents[2] / "examples"
RNG = np.random.default_rng(11)
UNFUSED = "expand-library,canonicalize,cse,bufferize,lower-dataflow,canonicalize,cse"


def _counts(module) -> tuple[int, int]:
    """(top-level maps, full-size tensor intermediates written by maps) of a module."""
    maps = [o for o in module.walk() if o.name == "df.map" and o.parent_op().name in ("func.func", "scf.for")]
    big = [r for m in maps for r in m.results if r.type.get_shape() and max(r.type.get_shape()) > 64]
    return len(maps), len(big)


def test_softmax_loss_gradient_has_fewer_maps_and_intermediates():
    text = (EXAMPLES / "softmax.mlir").read_text()
    before = parse_module(text)
    PassManager.parse("autodiff,expand-library,canonicalize,cse").run(before)
    after = parse_module(text)
    PassManager.parse("autodiff,expand-library,canonicalize,cse,fuse,canonicalize,cse").run(after)
    (maps_before, big_before), (maps_after, big_after) = _counts(before), _counts(after)
    assert maps_after < maps_before
    assert big_after < big_before


CASES = {
    "softmax": ("softmax_loss", lambda: [RNG.standard_normal((64, 512)).astype(np.float32) for _ in range(2)]),
    "jacobi2d": ("jacobi2d", lambda: [RNG.standard_normal((64, 64))]),
    "mlp": ("mlp", lambda: [RNG.standard_normal((8, 784)).astype(np.float32), RNG.integers(0, 10, 8)]
            + [(RNG.standard_normal(s) * 0.05).astype(np.float32)
               for s in [(120, 784), (120,), (32, 120), (32,), (10, 32), (10,)]]),
}


@pytest.mark.parametrize("example", sorted(CASES))
@pytest.mark.parametrize("gradient", [False, True])
def test_fused_matches_unfused(example, gradient):
    name, make_args = CASES[example]
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    args = make_args()
    if gradient:
        PassManager.parse("autodiff").run(module)
        out_type = np.float64 if example == "jacobi2d" else np.float32
        args, name = args + [np.array(1.0, out_type)], f"{name}_grad"
    fused = ExecutionEngine(module).invoke(name, *args)
    unfused = ExecutionEngine(module, pipeline=UNFUSED).invoke(name, *args)
    for f, u in zip(fused if isinstance(fused, tuple) else [fused], unfused if isinstance(unfused, tuple) else [unfused]):
        rtol = 1e-12 if f.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(f, u, rtol=rtol, atol=1e-6 * max(1.0, float(np.abs(u).max())))


def _two_reader_chain(n: int) -> str:
    """`@f(x, y)`: v_k = tanh(v_{k-1} * v_{k-2}) + 0.5, elementwise, so every
    value is read by the next two maps."""
    t = "tensor<8x8xf64>"
    lines = [f"func.func @f(%x: {t}, %y: {t}) -> {t} {{"]
    older, prev = "%x", "%y"
    for k in range(n):
        lines += [
            f"  %e{k} = tensor.empty() : {t}",
            f"  %v{k} = df.map (%i, %j) in (8, 8) outs(%o = %e{k} : {t}) {{",
            f"    %a = df.read {prev}[%i, %j] : {t}",
            f"    %b = df.read {older}[%i, %j] : {t}",
            "    %h = arith.constant 0.5 : f64",
            "    %m = arith.mulf %a, %b : f64",
            "    %t = math.tanh %m : f64",
            "    %r = arith.addf %t, %h : f64",
            f"    df.write %r, %o[%i, %j] : {t}",
            f"  }} -> {t}",
        ]
        older, prev = prev, f"%v{k}"
    return "\n".join([*lines, f"  func.return {prev} : {t}", "}"])


def test_recomputation_is_bounded_in_a_chain_of_shared_values():
    """Recomputing a value for each of its two readers doubled the code at
    every step (Fibonacci: 14 maps fused into 4,950 ops, 18 took two minutes
    to fuse); beyond RECOMPUTE_MAX_OPS a shared value is stored and read
    instead. The code then grows linearly, and the result is the
    interpreter's."""
    from dfc.compiler.interpreter import interpret

    sizes = []
    for n in (7, 14):
        module = parse_module(_two_reader_chain(n))
        PassManager.parse("fuse").run(module)
        sizes.append(sum(1 for _ in module.walk()))
    assert sizes[1] < 2.5 * sizes[0], sizes
    x, y = RNG.standard_normal((8, 8)), RNG.standard_normal((8, 8))
    want = interpret(parse_module(_two_reader_chain(18)), "f", x, y)
    np.testing.assert_allclose(ExecutionEngine(parse_module(_two_reader_chain(18))).invoke("f", x, y), want, rtol=1e-12)


def _two_results_one_large(chain: int) -> str:
    """`@f(x)`: one map writes a small value s = x + 1 and a large one l (a
    chain of `chain` tanh ops); the next map reads both, and a later one
    reads l again."""
    t = "tensor<8xf64>"
    ops = "\n".join(f"      %t{k} = math.tanh %t{k - 1} : f64" for k in range(1, chain))
    return f"""func.func @f(%x: {t}) -> ({t}, {t}) {{
  %e = tensor.empty() : {t}
  %s, %l = df.map (%i) in (8) outs(%o = %e : {t}, %q = %e : {t}) {{
    %a = df.read %x[%i] : {t}
    %one = arith.constant 1.0 : f64
    %b = arith.addf %a, %one : f64
    df.write %b, %o[%i] : {t}
    %c = df.tasklet (%a) : (f64) -> f64 {{
    ^bb0(%t0: f64):
{ops}
      df.yield %t{chain - 1} : f64
    }}
    df.write %c, %q[%i] : {t}
  }} -> {t}, {t}
  %u = df.map (%i) in (8) outs(%o = %e : {t}) {{
    %p = df.read %s[%i] : {t}
    %r = df.read %l[%i] : {t}
    %m = arith.mulf %p, %r : f64
    df.write %m, %o[%i] : {t}
  }} -> {t}
  %w = df.map (%i) in (8) outs(%o = %e : {t}) {{
    %r = df.read %l[%i] : {t}
    %m = arith.addf %r, %r : f64
    df.write %m, %o[%i] : {t}
  }} -> {t}
  func.return %u, %w : {t}, {t}
}}"""


def test_a_consumer_still_reading_another_result_stays_after_its_producer():
    """The small result is recomputed in its reader, the large one (past
    RECOMPUTE_MAX_OPS, read elsewhere too) still read from the producer: the
    fused reader must stay after the producer (placed before it, it read a
    value not yet defined and `fuse` left IR that does not verify)."""
    from dfc.compiler.interpreter import interpret
    from dfc.passes.fuse import RECOMPUTE_MAX_OPS

    text = _two_results_one_large(RECOMPUTE_MAX_OPS + 8)
    module = parse_module(text)
    PassManager.parse("fuse").run(module)  # verifies after the pass
    x = RNG.standard_normal(8)
    want = interpret(parse_module(text), "f", x)
    for got, expected in zip(ExecutionEngine(parse_module(text)).invoke("f", x), want):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
