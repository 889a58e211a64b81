"""The pass registry shared by opt-tool, PassManager and the engine.

Each project pass lives in its own module; `PROJECT_PASSES` maps its registered
name to `"module:Class"` so that importing the registry stays cheap.
"""

from collections.abc import Callable, Collection
from importlib import import_module

from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes as get_xdsl_passes

PROJECT_PASSES: dict[str, str] = {
    "autodiff": "dfc.passes.autodiff.autodiff:AutodiffPass",
    "jvp": "dfc.passes.autodiff.forward:JvpPass",
    "convert-stablehlo": "dfc.passes.convert_stablehlo:ConvertStableHLOPass",
    "expand-library": "dfc.passes.expand_library:ExpandLibraryPass",
    "fuse": "dfc.passes.fuse:FusePass",
    "scatter-to-gather": "dfc.passes.scatter_to_gather:ScatterToGatherPass",
    "bufferize": "dfc.passes.bufferize:BufferizePass",
    "check-bounds": "dfc.passes.check_bounds:CheckBoundsPass",
    "contraction-to-blas": "dfc.passes.contraction_to_blas:ContractionToBlasPass",
    "fuse-gemm-gather": "dfc.passes.fuse_gemm_gather:FuseGemmGatherPass",
    "fuse-gemm-epilogue": "dfc.passes.fuse_gemm_epilogue:FuseGemmEpiloguePass",
    "fuse-outer": "dfc.passes.fuse_outer:FuseOuterPass",
    "lower-dataflow": "dfc.passes.lower_dataflow:LowerDataflowPass",
    "reuse-sibling-loops": "dfc.passes.reuse_sibling_loops:ReuseSiblingLoopsPass",
    "pairwise-sums": "dfc.passes.pairwise_sums:PairwiseSumsPass",
    "mem-plan": "dfc.passes.mem_plan:MemPlanPass",
    "buffer-results-to-out-params": "dfc.passes.buffer_results_to_out_params:BufferResultsToOutParamsPass",
    "view-dataflow": "dfc.passes.view_dataflow:ViewDataflowPass",
}

PASS_SUMMARIES: dict[str, str] = {
    "autodiff": "reverse-mode gradients of tensor functions.",
    "jvp": "forward-mode Jacobian-vector products of tensor functions.",
    "expand-library": "replace every nn op by its pure df expansion.",
    "fuse": "producer-consumer and sibling map fusion, and tasklet merging.",
    "scatter-to-gather": "stencil-shaped `wcr(add)` scatters become gathers.",
    "bufferize": "tensors to memrefs, updating dead buffers in place.",
    "check-bounds": "mark the accesses that need a bounds check at run time.",
    "contraction-to-blas": "contraction maps become calls into an optimised BLAS.",
    "fuse-gemm-gather": "a `blas.gemm` factor that a copy map fills reads its source through offset tables instead.",
    "fuse-gemm-epilogue": "the elementwise maps around a `blas.gemm` run inside it, block by block.",
    "fuse-outer": "consecutive buffer maps over one outer dimension become one map.",
    "lower-dataflow": "buffer-form df maps to scf loops on memrefs.",
    "reuse-sibling-loops": "a value later loops recompute from an earlier one over the same range is kept in a buffer.",
    "pairwise-sums": "float sum loops run in fixed blocks whose sums are combined pairwise.",
    "mem-plan": "liveness-based buffer reuse, one static arena per function.",
    "buffer-results-to-out-params": "returned buffers become caller-provided arguments.",
    "convert-stablehlo": "StableHLO (as JAX emits it) into nn library ops and scf.",
    "view-dataflow": "Graphviz of the maps, memlets and tasklets of each function.",
}
"""One line per project pass for `opt-tool --help`: the first line of its
module's docstring (a test keeps them equal), here so that `--help` imports
no pass."""

DEFAULT_PIPELINE: tuple[str, ...] = (
    "expand-library", "canonicalize", "cse", "scatter-to-gather", "fuse", "canonicalize", "cse", "fuse",
    "canonicalize", "cse", "bufferize", "check-bounds", "contraction-to-blas", "fuse-gemm-gather",
    "fuse-gemm-epilogue", "fuse-outer", "lower-dataflow", "canonicalize", "cse", "reuse-sibling-loops",
    "pairwise-sums", "mem-plan",
)  # fmt: skip
"""The passes of the `default` pipeline, in order."""

PIPELINES: dict[str, str] = {"default": ",".join(DEFAULT_PIPELINE)}
"""Named pipelines, usable wherever a pass name is (`-p default`)."""


def default_pipeline(threads: int, blas: bool = True, fast_math: bool = True, without: Collection[str] = ()) -> str:
    """The `default` pipeline with `lower-dataflow` splitting maps for `threads`
    threads, `contraction-to-blas` rewriting only when `blas` (a CPU BLAS is
    installed), and, for code compiled without `fast_math` (each block of a sum
    added strictly in order, not in vector lanes), `pairwise-sums` blocks of 32;
    the passes named in `without` left out (for measuring what one pass does)."""
    unknown = set(without) - set(DEFAULT_PIPELINE)
    if unknown:
        raise ValueError(f"not in the default pipeline: {', '.join(sorted(unknown))}")
    options = {"lower-dataflow": f"{{threads={threads}}}", "contraction-to-blas": "" if blas else "{blas=false}",
               "pairwise-sums": "" if fast_math else "{block=32}"}
    return ",".join(name + options.get(name, "") for name in DEFAULT_PIPELINE if name not in without)


XDSL_REPLACEMENTS: dict[str, str] = {
    "canonicalize": "dfc.dialects.xdsl_fixes:CanonicalizePass",
    "cse": "dfc.dialects.xdsl_fixes:CommonSubexpressionElimination",
    "dce": "dfc.dialects.xdsl_fixes:DeadCodeElimination",
}
"""xDSL passes that dfc runs as subclasses of its own, under xDSL's names:
the same answers, faster (`dialects/xdsl_fixes.py` says why)."""


def pass_loader(target: str) -> Callable[[], type[ModulePass]]:
    """A loader of the pass class named by `target` (`"module:Class"`)."""
    module, cls = target.split(":")
    return lambda: getattr(import_module(module), cls)


XDSL_HIDDEN: dict[str, str] = {
    "apply-pdl-interp": "it runs the input's pdl_interp matcher, and dfc does not load the pdl_interp dialect",
    "apply-eqsat-pdl-interp": "it runs the input's pdl_interp matcher, and dfc does not load the pdl_interp dialect",
    "memref-to-dsd": "it lowers memrefs to CSL's data structure descriptors, a dialect dfc does not load",
    "test-constant-folding": "xDSL's test of its folding API, which assumes every operand is an op result",
}
"""xDSL passes that cannot work on dfc's IR, left out of the registry (why, by name)."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass by name: xDSL's own but `XDSL_HIDDEN` (`XDSL_REPLACEMENTS`
    for three of them), overridden by the project's."""
    passes = {name: load for name, load in get_xdsl_passes().items() if name not in XDSL_HIDDEN}
    passes.update({name: pass_loader(t) for name, t in XDSL_REPLACEMENTS.items()})
    passes.update({name: pass_loader(t) for name, t in PROJECT_PASSES.items()})
    return passes
