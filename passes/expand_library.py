"""`expand-library`: replace every nn op by its pure df expansion."""

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects.nn import NNOp
from dfc.dialects.nn_expand import expand


@dataclass(frozen=True)
class ExpandLibraryPass(ModulePass):
    """Lower nn library ops to df maps and tasklets (see `dialects.nn_expand`). A composite
    expansion writes other nn ops (`nn.grid_sample`'s), which are expanded in turn."""

    name = "expand-library"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        while nn_ops := [o for o in op.walk() if isinstance(o, NNOp)]:
            for nn_op in nn_ops:
                value = expand(Builder(InsertPoint.before(nn_op)), nn_op)
                nn_op.results[0].replace_all_uses_with(value)
                nn_op.detach()
                nn_op.erase()
