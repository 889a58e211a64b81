"""`dfc.grad(f, memory_budget=B)`: the compiled gradient holds at most B bytes, measured.

The `autodiff` pass plans under a budget in its model of what is stored (the
float tensors the straight-line code keeps, the loops' tapes), which is not the
memory the compiled gradient holds: the model counts values the backward sweep
never reads and leaves out the backward's own buffers, the functions' arenas
and the 64-byte rounding. So the plan is measured and tightened:

1. plan with the model budget m (first B): `autodiff{memory_budget=m}`, which
   records the bytes its plan stores in the model, u <= m when it fits;
2. lower a copy with the pipeline the gradient will be compiled with and
   measure `resident_bytes` (passes/resident_memory.py) of the derived entry: the
   arenas and stack frames of every function it reaches and the peak of the heap
   buffers along its calls;
3. if that is at most B, this is the gradient; else tighten, m = min(m - excess,
   u - 1), which forces a plan storing less in the model, and repeat;
4. when the plan is already the least the pass makes (everything it can
   recompute recomputed: the model did not fit, or m reached 0) and still
   exceeds B, raise `MemoryBudgetError` naming the least measured bytes.

What is guaranteed: the measured peak of the returned gradient, as compiled
for the Function's thread count, is at most B; the gradient is the same
function (recomputation replays the forward values exactly). Each round costs
one lowering (no LLVM); a budget that fits the stored gradient costs one.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

from dfc import config
from dfc.compiler.engine import lower
from dfc.dialects.diagnostics import CompileError
from dfc.function import Function
from dfc.passes.autodiff.autodiff import MODEL_ATTRIBUTE
from dfc.passes.resident_memory import resident_bytes


class MemoryBudgetError(CompileError):
    """A `memory_budget` below the least memory the gradient can be compiled to hold."""


def measured_bytes(fn: Function) -> int:
    """`resident_bytes` of fn's entry, compiled by the default pipeline for its threads."""
    threads = fn.threads or config.default_threads()
    return resident_bytes(lower(fn.module, threads), fn.name, threads)


def within_budget(build: Callable[[int], Function], budget: int, at: Operation | None) -> Function:
    """The Function `build(m)` gives for the largest model budget m this search
    tries whose measured bytes are at most `budget` (see the module docstring);
    a `MemoryBudgetError` at `at` (the differentiated function) when even the least plan exceeds it."""
    if budget < 0:
        raise ValueError(f"memory_budget must be a number of bytes >= 0, not {budget}")
    model = budget
    while True:
        fn = build(model)
        held = measured_bytes(fn)
        if held <= budget:
            return fn
        planned = _model_bytes(fn)
        if model == 0 or planned > model:
            raise MemoryBudgetError.at(
                at, f"memory_budget={budget} bytes is below the least the gradient of {_name(at)} can hold: "
                f"{held} bytes measured with every layer and loop it can recompute recomputed")
        model = max(0, min(model - (held - budget), planned - 1))


def _model_bytes(fn: Function) -> int:
    """What the gradient's plan stores in the pass's model (the largest over its gradients)."""
    return max((op.attributes[MODEL_ATTRIBUTE].value.data for op in fn.module.walk()
                if MODEL_ATTRIBUTE in op.attributes), default=0)


def _name(op: Operation | None) -> str:
    name = getattr(op, "sym_name", None)
    return f"@{name.data}" if name is not None else "the function"
