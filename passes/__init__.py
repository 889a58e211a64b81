"""The pass registry shared by opt-tool, PassManager and the engine.

Each project pass lives in its own module; `PROJECT_PASSES` maps its registered
name to `"module:Class"` so that importing the registry stays cheap.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes as get_xdsl_passes

PROJECT_PASSES: dict[str, str] = {
    "autodiff": "dfc.passes.autodiff.autodiff:AutodiffPass",
    "convert-stablehlo": "dfc.passes.convert_stablehlo:ConvertStableHLOPass",
    "expand-library": "dfc.passes.expand_library:ExpandLibraryPass",
    "fuse": "dfc.passes.fuse:FusePass",
    "scatter-to-gather": "dfc.passes.scatter_to_gather:ScatterToGatherPass",
    "bufferize": "dfc.passes.bufferize:BufferizePass",
    "check-bounds": "dfc.passes.check_bounds:CheckBoundsPass",
    "contraction-to-blas": "dfc.passes.contraction_to_blas:ContractionToBlasPass",
    "lower-dataflow": "dfc.passes.lower_dataflow:LowerDataflowPass",
    "mem-plan": "dfc.passes.mem_plan:MemPlanPass",
}

PIPELINES: dict[str, str] = {
    "default": "expand-library,canonicalize,cse,scatter-to-gather,fuse,canonicalize,cse,fuse,canonicalize,cse,bufferize,check-bounds,contraction-to-blas,lower-dataflow,canonicalize,cse,mem-plan",
}
"""Named pipelines, usable wherever a pass name is (`-p default`)."""


def pass_loader(target: str) -> Callable[[], type[ModulePass]]:
    """A loader of the pass class named by `target` (`"module:Class"`)."""
    module, cls = target.split(":")
    return lambda: getattr(import_module(module), cls)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass by name: xDSL's own, overridden by the project's."""
    passes = dict(get_xdsl_passes())
    passes.update({name: pass_loader(t) for name, t in PROJECT_PASSES.items()})
    return passes
