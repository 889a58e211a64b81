"""`dfc.grad(f, memory_budget=B)`: the compiled gradient holds at most B bytes, measured.

The `autodiff` pass plans under a budget in its model of what is stored (the
float tensors of the straight-line code the backward sweep reads, the loops'
tapes), which is not the memory the compiled gradient holds: the model leaves
out the arguments' gradients, the backward's own buffers, what a recomputed
segment holds while it runs, and the 64-byte rounding, and mem-plan reuses
memory it cannot see. So the plan is measured and tightened:

1. plan with the model budget m (first B): `autodiff{memory_budget=m}`, which
   records the bytes its plan stores in the model, u <= m when it fits;
2. lower a copy with the pipeline the gradient will be compiled with and
   measure `resident_bytes` (passes/resident_memory.py) of the derived entry: the
   arenas and stack frames of every function it reaches and the peak of the heap
   buffers along its calls;
3. if that is at most B, this is the gradient; else tighten, m = u - excess (as
   if what the model leaves out stayed the same), which forces a plan storing
   less in the model, and repeat until the plan is the least the pass makes
   (everything it can recompute recomputed: the model did not fit, or m
   reached 0);
4. recomputing more does not always hold less (a recomputed layer's own
   buffers can outweigh what it frees), so then every plan is measured in
   turn, from the stored gradient (m unbounded) down, m = u - 1, and the first
   that fits is the gradient;
5. none fits: `MemoryBudgetError`, whose `least` is the least measured bytes.

A plan whose compiled code allocates a buffer of run-time size (a tensor of
dynamic shape: the pass gives a loop of run-time trip count no tape under a
budget, but the program's own values may have one) has no bound to hold:
`UnboundedMemoryError`, a `MemoryBudgetError` naming the buffer, rather than a
measure that leaves it out.

What is guaranteed: the measured peak of the returned gradient, as compiled
for the Function's thread count, is at most B, and every B at least the least
of the pass's plans is met; the gradient is the same function (recomputation
replays the forward values exactly). Each plan measured costs one lowering
(no LLVM; the last 64 plans' bytes are remembered); a budget that fits the
stored gradient costs one. The engine then compiles the chosen plan from its
measured lowering (`compiler.engine.lower` keeps the last few measured),
not lowering it again.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from dfc import config
from dfc.compiler.engine import lower
from dfc.dialects.diagnostics import CompileError, location_of
from dfc.dialects.xdsl_fixes import module_text
from dfc.function import Function
from dfc.passes.autodiff.autodiff import MODEL_ATTRIBUTE
from dfc.passes.resident_memory import dynamic_buffers, resident_bytes

UNBOUNDED = 2**62
"""A model budget every plan fits: the stored gradient's."""


class MemoryBudgetError(CompileError):
    """A `memory_budget` below the least memory the gradient can be compiled to
    hold: `least`, in bytes, measured."""

    def __init__(self, message: str, location: str | None = None, least: int = 0):
        super().__init__(message, location)
        self.least = least


class UnboundedMemoryError(MemoryBudgetError):
    """A `memory_budget` that cannot be guaranteed: the compiled gradient
    allocates a buffer whose size is known only at run time."""


def measured_bytes(fn: Function) -> int:
    """`resident_bytes` of fn's entry, compiled by the default pipeline for its
    threads (remembered for the last `MEASURED_KEPT` modules: a sweep of budgets
    meets the same plans again); an `UnboundedMemoryError` when that code
    allocates a buffer of run-time size."""
    threads = fn.threads or config.default_threads()
    text = module_text(fn.module)
    key = (hashlib.sha256(text.encode()).hexdigest(), fn.name, threads)
    if key not in _MEASURED:
        lowered = lower(fn.module, threads, text=text, keep=True)  # the engine compiling this plan takes it
        if dynamic := dynamic_buffers(lowered, fn.name):
            entry = next(op for op in fn.module.ops if getattr(op, "sym_name", None) == StringAttr(fn.name))
            raise UnboundedMemoryError(
                f"memory_budget cannot be guaranteed for @{fn.name}: its compiled code allocates "
                f"{len(dynamic)} buffer{'s' if len(dynamic) != 1 else ''} of a size known only at run time "
                f"(the first a {dynamic[0].memref.type}), which no budget bounds",
                location_of(dynamic[0]) or location_of(entry))
        _MEASURED[key] = resident_bytes(lowered, fn.name, threads)
        if len(_MEASURED) > MEASURED_KEPT:
            _MEASURED.popitem(last=False)
    _MEASURED.move_to_end(key)
    return _MEASURED[key]


MEASURED_KEPT = 64
_MEASURED: OrderedDict[tuple[str, str, int], int] = OrderedDict()


def within_budget(build: Callable[[int], Function], budget: int, at: Operation | None) -> Function:
    """The Function `build(m)` gives for a model budget m whose measured bytes
    are at most `budget` (see the module docstring); a `MemoryBudgetError` at `at`
    (the differentiated function) when no plan of the pass fits."""
    if budget < 0:
        raise ValueError(f"memory_budget must be a number of bytes >= 0, not {budget}")
    held: dict[str, int] = {}  # measured bytes by plan (the module's text)

    def measure(model: int) -> tuple[Function, int, int]:
        fn = build(model)
        bytes_ = held[str(fn.module)] = measured_bytes(fn)
        return fn, bytes_, _model_bytes(fn)

    model = budget
    while True:  # tighten by the excess
        fn, bytes_, planned = measure(model)
        if bytes_ <= budget:
            return fn
        if model == 0 or planned > model:  # the least the pass stores: every candidate recomputed
            break
        model = max(0, planned - (bytes_ - budget))  # as if what the model leaves out stayed the same
    model = UNBOUNDED  # recomputing more need not hold less: every plan, from the stored one down
    while True:
        fn, bytes_, planned = measure(model)
        if bytes_ <= budget:
            return fn
        if model == 0 or planned > model:
            break
        model = max(0, planned - 1)
    least = min(held.values())
    raise MemoryBudgetError(
        f"memory_budget={budget} bytes is below the least the gradient of {_name(at)} can hold: "
        f"{least} bytes measured (of {len(held)} plan{'s' if len(held) != 1 else ''}, "
        "from storing every value to recomputing all it can)",
        location_of(at), least)


def _model_bytes(fn: Function) -> int:
    """What the gradient's plan stores in the pass's model (the largest over its gradients)."""
    return max((op.attributes[MODEL_ATTRIBUTE].value.data for op in fn.module.walk()
                if MODEL_ATTRIBUTE in op.attributes), default=0)


def _name(op: Operation | None) -> str:
    name = getattr(op, "sym_name", None)
    return f"@{name.data}" if name is not None else "the function"
