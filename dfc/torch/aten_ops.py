"""How each aten op becomes nn library ops: the handlers of every op family, merged.

`HANDLERS` maps an aten overload's name (`"aten.relu.default"`) to a function
`(b: Builder, node, *args, **kwargs)` whose tensor arguments are already
`Value`s; it returns a `Value`, or a tuple of them for ops with several
results (None for a result it does not compute). It receives every argument
of the op's schema (`capture.bind`): each positional one, and each keyword-only
one it names, an omitted argument carrying the schema's default, so a
handler's own default values never decide a result. The keys are overloads
that the export can produce: none is decomposed by it (tests/api/test_aten_coverage.py
checks this, and compares each against eager PyTorch). The node's fake tensor
(`node.meta["val"]`) gives the shape and dtype torch expects; the translator
checks every handler's result against it.

Ops the export keeps (see `capture.KEPT`) map to one library op where the
library has it (`linear`, `softmax`, `nll_loss`); the rest are the core aten
set, mostly one op each. Layer norm and eval-mode batch norm are written out as
reductions and elementwise ops, so autodiff differentiates them like any
other program. Anything else raises `UnsupportedOp`.

The handlers live in one module per op family, each with its own table
(`aten_elementwise.py`, `aten_shape.py`, `aten_nn.py`, `aten_fft.py`, ...), on the helpers of
`aten_common.py` (`Builder`, `handler_table`); this module merges the tables
and is what the translator (`capture.py`) imports.
"""

from __future__ import annotations

from dfc.torch.aten_attention import ATTENTION_HANDLERS
from dfc.torch.aten_bags import BAG_HANDLERS
from dfc.torch.aten_common import Builder, Handler, UnsupportedOp, meta_type
from dfc.torch.aten_distance import DISTANCE_HANDLERS
from dfc.torch.aten_dynamic import DYNAMIC_HANDLERS
from dfc.torch.aten_elementwise import ELEMENTWISE_HANDLERS
from dfc.torch.aten_fft import FFT_HANDLERS
from dfc.torch.aten_linalg import LINALG_HANDLERS
from dfc.torch.aten_nn import NN_HANDLERS
from dfc.torch.aten_random import RANDOM_HANDLERS
from dfc.torch.aten_scans import SCAN_HANDLERS
from dfc.torch.aten_shape import SHAPE_HANDLERS
from dfc.torch.aten_sort import SORT_HANDLERS
from dfc.torch.aten_special import SPECIAL_HANDLERS

__all__ = ["FAMILIES", "HANDLERS", "Builder", "Handler", "UnsupportedOp", "meta_type"]

FAMILIES: dict[str, dict[str, Handler]] = {
    "elementwise": ELEMENTWISE_HANDLERS, "shape": SHAPE_HANDLERS, "nn": NN_HANDLERS, "sort": SORT_HANDLERS,
    "distance": DISTANCE_HANDLERS, "bags": BAG_HANDLERS, "random": RANDOM_HANDLERS, "fft": FFT_HANDLERS,
    "dynamic": DYNAMIC_HANDLERS, "scans": SCAN_HANDLERS, "attention": ATTENTION_HANDLERS,
    "special": SPECIAL_HANDLERS,
    "linalg": LINALG_HANDLERS,
}
"""Each op family's handlers (its module: `aten_<family>.py`)."""

HANDLERS: dict[str, Handler] = {name: fn for table in FAMILIES.values() for name, fn in table.items()}
assert len(HANDLERS) == sum(map(len, FAMILIES.values())), "an aten overload is handled by two families"
