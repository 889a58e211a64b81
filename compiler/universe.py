"""The `xdsl.universe` plugin: makes xDSL's own tools (`xdsl-opt`, ...) know
the df, nn, blas and stablehlo dialects and the project's passes.

Registered in pyproject.toml under `[project.entry-points."xdsl.universe"]`;
xDSL's `Multiverse` discovers it, so `xdsl-opt -p fuse in.mlir` works once
`dfc` is installed.
"""

from xdsl.universe import Universe

from dfc.passes import PROJECT_PASSES, pass_loader


def _df():
    from dfc.dialects.df import DF

    return DF


def _nn():
    from dfc.dialects.nn import NN

    return NN


def _blas():
    from dfc.dialects.blas import BLAS

    return BLAS


def _stablehlo():
    from dfc.dialects.stablehlo import StableHLO

    return StableHLO


DFC_UNIVERSE = Universe(
    all_dialects={"df": _df, "nn": _nn, "blas": _blas, "stablehlo": _stablehlo},
    all_passes={name: pass_loader(target) for name, target in PROJECT_PASSES.items()},
)
