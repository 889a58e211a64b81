"""dfc's own GEMM (`compiler/codegen/gemm_kernel.py`): every layout, edge and
scaling against numpy in float64, at each vector width the kernel is built
for (those narrower than the host's with --slow); nothing read or written
outside the three matrices; and `blas.gemm` calling it (or OpenBLAS) as
`DFC_GEMM` says."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.codegen import blas_runtime, gemm_kernel
from dfc.compiler.codegen.gemm_kernel import _transpose
from dfc.compiler.codegen.target import host_target_machine
from tests.passes.test_contraction_to_blas import contraction

pytestmark = pytest.mark.skipif(not blas_runtime.available(), reason="scipy-openblas64 is not installed")

WIDTHS = [pytest.param(bits, marks=pytest.mark.slow) if bits < gemm_kernel.vector_bits() else bits
          for bits in (128, 256, 512)]
"""The kernel's vector widths: CI runs the host's (the one its GEMMs use; wider ones skip),
--slow the narrower ones too."""
NO_TRANS, TRANS = 111, 112


def kernel(elem: str, bits: int):
    """The kernel as a ctypes function (skips when the host lacks `bits`-wide vectors)."""
    if bits > gemm_kernel.vector_bits():
        pytest.skip(f"the host has no {bits}-bit vectors")
    scalar = ctypes.c_float if elem == "f32" else ctypes.c_double
    i32, i64, ptr = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p
    signature = ctypes.CFUNCTYPE(None, i32, i32, i32, i64, i64, i64, scalar, ptr, i64, ptr, i64, scalar, ptr, i64)
    return signature(gemm_kernel.compiled(elem, bits).address)


def call(fn, a, b, c, *, ta: bool, tb: bool, alpha: float, beta: float) -> None:
    """C = alpha op(a) op(b) + beta C through `fn`; a, b, c may be strided row views."""
    m, n = c.shape
    k = a.shape[0] if ta else a.shape[1]
    lds = [max(x.strides[0] // x.itemsize, x.shape[1], 1) for x in (a, b, c)]
    fn(101, TRANS if ta else NO_TRANS, TRANS if tb else NO_TRANS, m, n, k, alpha, a.ctypes.data, lds[0],
       b.ctypes.data, lds[1], beta, c.ctypes.data, lds[2])


def operands(m: int, n: int, k: int, ta: bool, tb: bool, dtype, pad: int = 0, seed: int = 0):
    """a, b, c with `pad` extra columns in memory (leading dimensions above the sizes)."""
    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int) -> np.ndarray:
        return rng.standard_normal((rows, cols + pad)).astype(dtype)[:, :cols]

    a = matrix(k, m) if ta else matrix(m, k)
    b = matrix(n, k) if tb else matrix(k, n)
    return a, b, matrix(m, n)


# (m, n, k): tiles with and without row and column edges, one vector, narrower
# than one (OpenBLAS), several column blocks (NB = 512) and depth blocks
# (KC = 256), depths below one transposed block and not a multiple of the unroll
SHAPES = [(1, 1, 1), (5, 3, 7), (12, 32, 16), (13, 33, 17), (37, 53, 29), (24, 16, 4), (7, 600, 9), (30, 70, 300),
          (2, 17, 1), (50, 40, 0)]


@pytest.mark.parametrize("bits", WIDTHS)
@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_kernel_agrees_with_numpy(elem, bits):
    fn = kernel(elem, bits)
    dtype = np.float32 if elem == "f32" else np.float64
    tol = 2e-5 if elem == "f32" else 1e-13
    for m, n, k in SHAPES:
        for ta in (False, True):
            for tb in (False, True):
                for alpha, beta, pad in ((1.0, 0.0, 0), (1.5, 1.0, 3), (-0.5, 0.25, 0)):
                    a, b, c = operands(m, n, k, ta, tb, dtype, pad)
                    expected = alpha * ((a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64))
                    expected += beta * c
                    call(fn, a, b, c, ta=ta, tb=tb, alpha=alpha, beta=beta)
                    scale = max(1.0, np.abs(expected).max())
                    np.testing.assert_allclose(c, expected, rtol=0, atol=tol * scale * max(k, 1) ** 0.5,
                                               err_msg=f"{m}x{n}x{k} ta={ta} tb={tb} beta={beta}")


EPILOGUE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *[ctypes.c_int64] * 5)


@pytest.mark.parametrize("bits", WIDTHS)
@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_epilogue_runs_once_on_each_final_element(elem, bits):
    """The epilogue entry calls back on blocks that cover every element of C
    exactly once, each when its values are final (they equal the result after
    the call: several depth and column blocks, row and column edges, and the
    narrow products OpenBLAS computes), with the batch entry and the block's
    offsets added to the indices it passes."""
    if bits > gemm_kernel.vector_bits():
        pytest.skip(f"the host has no {bits}-bit vectors")
    scalar = ctypes.c_float if elem == "f32" else ctypes.c_double
    i32, i64, ptr = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p
    fn = ctypes.CFUNCTYPE(None, i32, i32, i32, i64, i64, i64, scalar, ptr, i64, ptr, i64, scalar, ptr, i64,
                          ptr, ptr, i64, i64, i64)(gemm_kernel.compiled(elem, bits).epilogue_address)
    dtype = np.float32 if elem == "f32" else np.float64
    t, row0, col0 = 3, 100, 1000
    for m, n, k in SHAPES:
        for tb in (False, True):
            a, b, c = operands(m, n, k, False, tb, dtype)
            seen = np.zeros((m, n), np.int64)
            snapshots = []

            def epilogue(_ctx, bt, i0, i1, j0, j1):
                assert bt == t
                rows, cols = slice(i0 - row0, i1 - row0), slice(j0 - col0, j1 - col0)
                seen[rows, cols] += 1
                snapshots.append(((rows, cols), c[rows, cols].copy()))

            callback = EPILOGUE(epilogue)
            lds = [x.strides[0] // x.itemsize for x in (a, b, c)]
            fn(101, NO_TRANS, TRANS if tb else NO_TRANS, m, n, k, 1.0, a.ctypes.data, lds[0], b.ctypes.data, lds[1],
               0.0, c.ctypes.data, lds[2], ctypes.cast(callback, ctypes.c_void_p), None, t, row0, col0)
            assert (seen == 1).all(), (m, n, k, tb)
            for (rows, cols), block in snapshots:
                np.testing.assert_array_equal(block, c[rows, cols], err_msg=f"{m}x{n}x{k} tb={tb}")


def gather_kernel(elem: str, bits: int):
    """The gather entry (CBLAS's arguments, four offset tables, an epilogue) as a ctypes function."""
    if bits > gemm_kernel.vector_bits():
        pytest.skip(f"the host has no {bits}-bit vectors")
    scalar = ctypes.c_float if elem == "f32" else ctypes.c_double
    i32, i64, ptr = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p
    return ctypes.CFUNCTYPE(None, i32, i32, i32, i64, i64, i64, scalar, ptr, i64, ptr, i64, scalar, ptr, i64,
                            ptr, ptr, ptr, ptr, ptr, ptr, i64, i64, i64)(gemm_kernel.compiled(elem, bits).gather_address)


def patch_tables(channels: int, taps: tuple[int, int], image: tuple[int, int], batch: int, out: tuple[int, int]):
    """im2col's offsets into a (batch, channels, *image) array: one per
    (channel, tap) and one per (image, output position)."""
    (kh, kw), (h, w), (oh, ow) = taps, image, out
    c, i, j = np.meshgrid(np.arange(channels), np.arange(kh), np.arange(kw), indexing="ij")
    by_tap = (c * h * w + i * w + j).ravel()
    n, y, x = np.meshgrid(np.arange(batch), np.arange(oh), np.arange(ow), indexing="ij")
    by_position = (n * channels * h * w + y * w + x).ravel()
    return by_tap.astype(np.int64), by_position.astype(np.int64)


# (channels, taps, image, batch): output rows of 6 (every vector gathers, two runs or more),
# 16 and 32 (runs as long as a vector), 28 (runs broken inside vectors); column and depth edges
GATHER_CASES = [(3, (3, 3), (8, 8), 2), (2, (1, 1), (16, 16), 1), (4, (5, 5), (32, 32), 1), (3, (5, 5), (20, 32), 2),
                (40, (3, 3), (18, 18), 1)]


@pytest.mark.parametrize("bits", WIDTHS)
@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_gathered_operands_agree_with_numpy(elem, bits):
    """The gather entry with a convolution's patches as B (taps x positions,
    as a forward product reads them), as B transposed (a weight gradient's)
    and as A (positions x taps), with the other factor a plain matrix, and
    with both factors gathered: numpy's product of the materialised patches,
    with alpha, beta, an epilogue and the kernel's blocks (several depth and
    column blocks, row and column edges)."""
    fn = gather_kernel(elem, bits)
    dtype = np.float32 if elem == "f32" else np.float64
    tol = 2e-5 if elem == "f32" else 1e-12
    rng = np.random.default_rng(5)
    for channels, taps, image, batch in GATHER_CASES:
        out = (image[0] - taps[0] + 1, image[1] - taps[1] + 1)
        x = rng.standard_normal((batch, channels, *image)).astype(dtype)
        by_tap, by_position = patch_tables(channels, taps, image, batch, out)
        patches = x.ravel()[by_tap[:, None] + by_position[None, :]].astype(np.float64)  # taps x positions
        depth, positions = patches.shape
        features = 13
        w = rng.standard_normal((features, depth)).astype(dtype)
        g = rng.standard_normal((features, positions)).astype(dtype)
        null = None
        cases = [  # (m, n, k, a, (a_rows, a_cols), b, (b_rows, b_cols), tb, expected)
            (features, positions, depth, w, (null, null), x, (by_tap, by_position), False, w @ patches),
            (features, depth, positions, g, (null, null), x, (by_position, by_tap), False, g @ patches.T),
            (positions, features, depth, x, (by_position, by_tap), w, (null, null), True, patches.T @ w.T),
            (positions, positions, depth, x, (by_position, by_tap), x, (by_tap, by_position), False,
             patches.T @ patches),
        ]
        for m, n, k, a, (a_rows, a_cols), b, (b_rows, b_cols), tb, expected in cases:
            c = rng.standard_normal((m, n)).astype(dtype)
            want = 1.5 * expected + 0.5 * c
            seen = np.zeros((m, n), np.int64)

            def epilogue(_ctx, _t, i0, i1, j0, j1):
                seen[i0:i1, j0:j1] += 1

            callback = EPILOGUE(epilogue)
            lda = a.shape[-1] if a_rows is None else 0
            ldb = (b.shape[-1]) if b_rows is None else 0
            tables = [None if t is None else t.ctypes.data for t in (a_rows, a_cols, b_rows, b_cols)]
            fn(101, NO_TRANS, TRANS if tb else NO_TRANS, m, n, k, 1.5, a.ctypes.data, lda, b.ctypes.data, ldb, 0.5,
               c.ctypes.data, n, *tables, ctypes.cast(callback, ctypes.c_void_p), None, 0, 0, 0)
            np.testing.assert_allclose(c, want, rtol=tol, atol=tol * np.sqrt(k),
                                       err_msg=f"{channels} {taps} {image} {m}x{n}x{k}")
            assert (seen == 1).all()


@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_beta_zero_does_not_read_c(elem):
    """As in BLAS, beta = 0 overwrites C: NaNs in it do not propagate (they
    do with beta = 1), in whole tiles and at the edges."""
    fn = kernel(elem, gemm_kernel.vector_bits())
    dtype = np.float32 if elem == "f32" else np.float64
    a, b, _ = operands(37, 53, 29, False, False, dtype)
    c = np.full((37, 53), np.nan, dtype)
    call(fn, a, b, c, ta=False, tb=False, alpha=1.0, beta=0.0)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    c[:] = np.nan
    call(fn, a, b, c, ta=False, tb=False, alpha=1.0, beta=1.0)
    assert np.isnan(c).all()


GUARDED = textwrap.dedent("""
    import ctypes, mmap, sys
    import numpy as np
    sys.path.insert(0, "tests")  # the tests' support package, as pytest has it
    from tests.compiler.test_gemm_kernel import call, kernel, SHAPES
    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    keep = []

    def guarded(rows, cols, dtype, at_end):
        # a rows x cols array flush against an inaccessible page (after it, or before it)
        nbytes = max(rows * cols, 1) * np.dtype(dtype).itemsize
        pages = -(-nbytes // PAGE)
        region = mmap.mmap(-1, (pages + 2) * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(region))
        assert libc.mprotect(base, PAGE, 0) == 0
        assert libc.mprotect(base + (pages + 1) * PAGE, PAGE, 0) == 0
        offset = PAGE + (pages * PAGE - nbytes if at_end else 0)
        keep.append(region)
        return np.frombuffer(region, dtype, rows * cols, offset).reshape(rows, cols)

    elem, bits = sys.argv[1], int(sys.argv[2])
    fn = kernel(elem, bits)
    dtype = np.float32 if elem == "f32" else np.float64
    for m, n, k in SHAPES:
        for ta in (False, True):
            for tb in (False, True):
                for at_end in (True, False):
                    a = guarded(*((k, m) if ta else (m, k)), dtype, at_end)
                    b = guarded(*((n, k) if tb else (k, n)), dtype, at_end)
                    c = guarded(m, n, dtype, at_end)
                    a[:] = 1.0
                    b[:] = 2.0
                    c[:] = 1.0
                    call(fn, a, b, c, ta=ta, tb=tb, alpha=1.0, beta=1.0)
                    assert (c == 1.0 + 2.0 * k).all(), (m, n, k, ta, tb)
    print("ok")
""")


@pytest.mark.parametrize("bits", WIDTHS)
@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_kernel_stays_inside_its_matrices(elem, bits):
    """Each matrix flush against an inaccessible page, after its end and
    before its start: a read or write outside it would end the child
    process with a signal."""
    if bits > gemm_kernel.vector_bits():
        pytest.skip(f"the host has no {bits}-bit vectors")
    run = subprocess.run([sys.executable, "-c", GUARDED, elem, str(bits)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


GUARDED_GATHER = GUARDED.split("elem, bits =")[0].replace("call, kernel, SHAPES", "gather_kernel, patch_tables, GATHER_CASES") + \
    textwrap.dedent("""
    elem, bits = sys.argv[1], int(sys.argv[2])
    fn = gather_kernel(elem, bits)
    dtype = np.float32 if elem == "f32" else np.float64
    for channels, taps, image, batch in GATHER_CASES:
        out = (image[0] - taps[0] + 1, image[1] - taps[1] + 1)
        tables = patch_tables(channels, taps, image, batch, out)
        depth, positions = (len(t) for t in tables)
        for at_end in (True, False):
            by_tap, by_position = (guarded(1, len(t), np.int64, at_end)[0] for t in tables)
            by_tap[:], by_position[:] = tables
            x = guarded(1, batch * channels * image[0] * image[1], dtype, at_end)
            x[:] = 1.0
            w = np.full((5, depth), 2.0, dtype)
            y = np.zeros((5, positions), dtype)
            fn(101, 111, 111, 5, positions, depth, 1.0, w.ctypes.data, depth, x.ctypes.data, 0, 0.0, y.ctypes.data,
               positions, None, None, by_tap.ctypes.data, by_position.ctypes.data, None, None, 0, 0, 0)
            assert (y == 2.0 * depth).all()
            z = np.zeros((positions, 5), dtype)
            fn(101, 111, 112, positions, 5, depth, 1.0, x.ctypes.data, 0, w.ctypes.data, depth, 0.0, z.ctypes.data, 5,
               by_position.ctypes.data, by_tap.ctypes.data, None, None, None, None, 0, 0, 0)
            assert (z == 2.0 * depth).all()
            g = np.full((5, positions), 2.0, dtype)
            u = np.zeros((5, depth), dtype)
            fn(101, 111, 111, 5, depth, positions, 1.0, g.ctypes.data, positions, x.ctypes.data, 0, 0.0, u.ctypes.data,
               depth, None, None, by_position.ctypes.data, by_tap.ctypes.data, None, None, 0, 0, 0)
            assert (u == 2.0 * positions).all()
    print("ok")
    """)


@pytest.mark.parametrize("bits", WIDTHS)
@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_gathered_factors_stay_inside_their_source(elem, bits):
    """A gathered factor's source and tables flush against an inaccessible
    page, after their end and before their start: the packing's loads and
    masked gathers (B) and the panel copies (A) read only the table entries
    of the product's rows and columns and the elements they name."""
    if bits > gemm_kernel.vector_bits():
        pytest.skip(f"the host has no {bits}-bit vectors")
    run = subprocess.run([sys.executable, "-c", GUARDED_GATHER, elem, str(bits)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@pytest.mark.parametrize("threads", [1, 2])
def test_blas_gemm_calls_the_chosen_kernel(gemm_mode, threads):
    """`DFC_GEMM=dfc` calls dfc's kernel, `blas` OpenBLAS's; both give numpy's
    product, on one thread and on blocks split over two."""
    sizes = {"b": 1, "i": 96, "j": 200, "k": 70}
    engine = ExecutionEngine(parse_module(contraction("ij", "ik", "jk", sizes, "f32")), threads=threads)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((96, 70)).astype(np.float32)
    y = rng.standard_normal((200, 70)).astype(np.float32)
    np.testing.assert_allclose(engine.invoke("f", x, y), x.astype(np.float64) @ y.T, rtol=1e-4, atol=1e-4)
    ours = gemm_kernel.symbol("f32") in engine.jit.llvm_ir
    assert ours == (gemm_mode == "dfc")
    assert (blas_runtime.symbol("sgemm") in engine.jit.llvm_ir) == (gemm_mode == "blas")


def test_mode_is_checked(monkeypatch):
    monkeypatch.setenv("DFC_GEMM", "fastest")
    with pytest.raises(ValueError, match="DFC_GEMM='fastest': expected one of auto, dfc, blas"):
        gemm_kernel.enabled()
    monkeypatch.setenv("DFC_GEMM", "auto")
    assert gemm_kernel.enabled() == (gemm_kernel.vector_bits() >= 512)


def test_transpose_in_registers():
    """The W x W register transpose of the packing, at every width it is built for."""
    for w in (2, 4, 8, 16):
        module = ir.Module()
        vec = ir.VectorType(ir.IntType(32), w)
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType()] * 2), "t")
        builder = ir.IRBuilder(fn.append_basic_block())
        rows = [builder.load(builder.gep(fn.args[0], [ir.Constant(ir.IntType(64), r * w)], source_etype=ir.IntType(32)),
                             typ=vec, align=4) for r in range(w)]
        for r, column in enumerate(_transpose(builder, rows)):
            builder.store(column, builder.gep(fn.args[1], [ir.Constant(ir.IntType(64), r * w)],
                                              source_etype=ir.IntType(32)), align=4)
        builder.ret_void()
        tm = host_target_machine(2)
        mod = llvm.parse_assembly(str(module))
        mod.triple = tm.triple
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        src = np.arange(w * w, dtype=np.int32).reshape(w, w)
        dst = np.zeros_like(src)
        ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(engine.get_function_address("t"))(
            src.ctypes.data, dst.ctypes.data)
        np.testing.assert_array_equal(dst, src.T)
