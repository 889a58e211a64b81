"""`PassManager`: parse a pipeline of registered passes and run it on a module.

The same registry (`passes.get_all_passes`) serves opt-tool, this class and
the engine. Instrumentation follows MLIR: IR dumps before and after passes
with `// -----// IR Dump After Name (arg) //----- //` headers (and after the
failing pass), pass statistics (ops before and after each pass), a progress
line, and a wall-time report that also counts stages that are not passes
(`stage`: the backend's LLVM IR emission, optimisation, code generation), all
written to a stream (stderr by default).
"""

from __future__ import annotations

import difflib
import logging
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

from dfc.compiler import locations, progress
from dfc.compiler.context import make_context
from dfc.compiler.gc_pause import paused_gc
from dfc.compiler.pipeline_syntax import PipelineElement, format_pipeline, parse_elements
from dfc.dialects.diagnostics import CompileError, verify_located
from dfc.dialects.xdsl_fixes import DfcPrinter, module_text
from dfc.passes import PIPELINES, get_all_passes

log = logging.getLogger(__name__)
"""Each stage's wall time at INFO (a child of the `dfc` logger)."""


def instantiate(spec: ArgSpec) -> ModulePass:
    """The pass `spec` names, with its options; `CompileError` if unknown or bad."""
    available = get_all_passes()
    if spec.name not in available:
        close = difflib.get_close_matches(spec.name, [*available, *PIPELINES], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else " (see opt-tool --list-passes)"
        raise CompileError(f"unknown pass '{spec.name}'{hint}")
    cls = available[spec.name]()
    try:
        return cls.from_pass_spec(spec)
    except (ValueError, TypeError) as err:
        raise CompileError(f"bad options for pass '{spec.name}': {err}") from None


def parse_specs(pipeline: str) -> list[ArgSpec]:
    """The pass specs of a pipeline like `cse,autodiff{wrt=0,1}` (anchors flattened)."""
    return [e.spec for e in parse_elements(pipeline)]


def op_counts(module: ModuleOp) -> Counter[str]:
    """How many ops of each name `module` holds (itself excluded)."""
    return Counter(op.name for op in module.walk() if op is not module)


@dataclass
class PassManager:
    """A sequence of passes with MLIR-style instrumentation."""

    passes: list[ModulePass] = field(default_factory=list)
    print_ir_before_all: bool = False
    print_ir_before: frozenset[str] = frozenset()
    print_ir_after_all: bool = False
    print_ir_after: frozenset[str] = frozenset()
    print_ir_after_change: bool = False
    print_ir_after_failure: bool = False
    print_generic: bool = False
    print_debuginfo: bool = False
    time_passes: bool = False
    statistics: bool = False
    progress: Callable[[int, int, str], None] | None = None
    verify_each: bool = True
    stream: TextIO | None = None
    timings: list[tuple[str, float]] = field(default_factory=list)
    """(pass or stage, seconds) of everything run since the manager was made."""
    op_statistics: list[tuple[str, int, int]] = field(default_factory=list)
    elements: list[PipelineElement] = field(default_factory=list)

    @classmethod
    def parse(cls, pipeline: str, **options: object) -> PassManager:
        """A manager for `pipeline`, e.g. `"cse,autodiff{wrt=0,1},default"` or
        `"builtin.module(func.func(cse))"`.

        `options` are the instrumentation fields: `print_ir_before_all`,
        `print_ir_before` and `print_ir_after` (sets of pass names),
        `print_ir_after_all`, `print_ir_after_change` (dump after every pass
        that changed the IR), `print_ir_after_failure` (dump the IR a failing
        pass left), `print_generic`, `print_debuginfo` (locations in dumps),
        `time_passes`, `statistics` (op counts before/after each pass),
        `progress` (called with (k, n, pass name) before each pass),
        `verify_each`, `stream`.
        """
        manager = cls(**options)  # type: ignore[arg-type]
        return manager.add(pipeline) if pipeline.strip() else manager

    def add(self, pipeline: str) -> PassManager:
        """Append the passes of `pipeline`; returns self for chaining."""
        elements = parse_elements(pipeline)
        self.passes.extend(instantiate(e.spec) for e in elements)
        self.elements.extend(elements)
        return self

    def pipeline_text(self) -> str:
        """The pipeline as mlir-opt prints it (`--dump-pass-pipeline`)."""
        elements = self.elements or [PipelineElement(p.pipeline_pass_spec()) for p in self.passes]
        return format_pipeline(elements)

    def run(self, module: ModuleOp, ctx: Context | None = None) -> ModuleOp:
        """Run every pass in order on `module`, in place; returns it.

        A pass that fails, or leaves IR that does not verify, raises
        `CompileError` naming the pass. Python's cyclic garbage collector is
        paused meanwhile (`compiler.gc_pause`), and ops inserted take the
        location of the op they are inserted before (`locations.propagated`).
        """
        ctx = ctx or make_context()
        with paused_gc(), locations.propagated():
            self._run(module, ctx)
        if self.time_passes:
            self.report_timing()
        if self.statistics:
            self.report_statistics()
        return module

    def _run(self, module: ModuleOp, ctx: Context) -> None:
        for k, p in enumerate(self.passes):
            if self.progress is not None:
                self.progress(k, len(self.passes), p.name)
            if self.print_ir_before_all or p.name in self.print_ir_before:
                self._dump("Before", p, module)
            before = module_text(module) if self.print_ir_after_change else ""
            counts = op_counts(module) if self.statistics else None
            try:
                with self.stage(p.name):
                    self._apply(p, ctx, module)
                if self.verify_each:
                    try:
                        verify_located(module)
                    except CompileError as err:
                        raise CompileError(
                            f"IR after pass '{p.name}' does not verify: {err.message}", err.location
                        ) from None
            except CompileError:
                if self.print_ir_after_failure:
                    self._dump("After", p, module, " Failed")
                raise
            if counts is not None:
                self.op_statistics.append((p.name, sum(counts.values()), sum(op_counts(module).values())))
            if self.print_ir_after_all or p.name in self.print_ir_after:
                self._dump("After", p, module)
            elif self.print_ir_after_change and module_text(module) != before:
                self._dump("After", p, module)

    @staticmethod
    def _apply(p: ModulePass, ctx: Context, module: ModuleOp) -> None:
        try:
            p.apply(ctx, module)
        except CompileError:
            raise
        except (PassFailedException, DiagnosticException, VerifyException, ValueError) as err:
            raise CompileError(f"pass '{p.name}' failed: {err}") from None

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage under `name` in the timing report (a pass, or a backend step),
        also logged at INFO on the `dfc` logger and shown on the progress line."""
        progress.stage(name)
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self.timings.append((name, elapsed))
            log.info("%s: %.1f ms", name, elapsed * 1e3)

    def _out(self) -> TextIO:
        return self.stream or sys.stderr

    def _dump(self, when: str, p: ModulePass, module: ModuleOp, failed: str = "") -> None:
        out = self._out()
        print(f"// -----// IR Dump {when} {type(p).__name__}{failed} ({p.name}) //----- //", file=out)
        DfcPrinter(stream=out, print_generic_format=self.print_generic, print_debuginfo=self.print_debuginfo).print_op(
            module
        )
        print(file=out)

    def report_timing(self) -> None:
        """Print the wall time of every pass and stage, as `--mlir-timing` does."""
        out = self._out()
        total = sum(t for _, t in self.timings) or 1e-12
        rule = "===" + "-" * 73 + "==="
        print(rule, file=out)
        print("... Execution time report ...".center(79), file=out)
        print(rule, file=out)
        print(f"  Total Execution Time: {total:.4f} seconds\n", file=out)
        print("  ----Wall Time----  ----Name----", file=out)
        for name, t in self.timings:
            print(f"  {t:8.4f} ({100 * t / total:5.1f}%)  {name}", file=out)
        print(f"  {total:8.4f} (100.0%)  Total", file=out)

    def report_statistics(self) -> None:
        """Print the op count before and after each pass (`--mlir-pass-statistics`)."""
        out = self._out()
        print("===" + "-" * 73 + "===", file=out)
        print("... Pass statistics report ...".center(79), file=out)
        print("===" + "-" * 73 + "===", file=out)
        for name, before, after in self.op_statistics:
            print(f"{name}", file=out)
            print(f"  (S) {before:6d} ops-before - operations in the module before the pass", file=out)
            print(f"  (S) {after:6d} ops-after  - operations in the module after the pass", file=out)
