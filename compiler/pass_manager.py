"""`PassManager`: parse a pipeline of registered passes and run it on a module.

The same registry (`passes.get_all_passes`) serves opt-tool, this class and
the engine. Instrumentation follows MLIR: IR dumps after passes with
`// -----// IR Dump After Name (arg) //----- //` headers and a wall-time
report, both written to a stream (stderr by default).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    PassFailedException,
    VerifyException,
)

from dfc.compiler.context import make_context
from dfc.compiler.diagnostics import CompileError, verify_located
from dfc.passes import PIPELINES, get_all_passes


def _strip_anchor(spec: str) -> str:
    """`builtin.module(a,b)` (MLIR's anchored form) -> `a,b`."""
    spec = spec.strip()
    for anchor in ("builtin.module(", "any("):
        if spec.startswith(anchor) and spec.endswith(")"):
            return spec[len(anchor) : -1]
    return spec


def _expand_pipelines(specs: Sequence[ArgSpec]) -> list[ArgSpec]:
    """Replace named pipelines (`PIPELINES`) by their passes."""
    out: list[ArgSpec] = []
    for spec in specs:
        if spec.name in PIPELINES and not spec.parameters:
            out.extend(_expand_pipelines(list(parse_pipeline(PIPELINES[spec.name]))))
        else:
            out.append(spec)
    return out


def instantiate(spec: ArgSpec) -> ModulePass:
    """The pass `spec` names, with its options; `CompileError` if unknown or bad."""
    available = get_all_passes()
    if spec.name not in available:
        raise CompileError(f"unknown pass '{spec.name}'")
    cls = available[spec.name]()
    try:
        return cls.from_pass_spec(spec)
    except (ValueError, TypeError) as err:
        raise CompileError(f"bad options for pass '{spec.name}': {err}") from None


def parse_specs(pipeline: str) -> list[ArgSpec]:
    """The pass specs of a comma list like `cse,autodiff{wrt=0,1}`."""
    try:
        return _expand_pipelines(list(parse_pipeline(_strip_anchor(pipeline))))
    except (ArgSpecParseError, ValueError) as err:
        detail = " ".join(str(err).split())
        raise CompileError(f"bad pass pipeline '{pipeline}': {detail}") from None


@dataclass
class PassManager:
    """A sequence of passes with MLIR-style instrumentation."""

    passes: list[ModulePass] = field(default_factory=list)
    print_ir_after_all: bool = False
    print_ir_after: frozenset[str] = frozenset()
    print_ir_after_change: bool = False
    print_generic: bool = False
    time_passes: bool = False
    verify_each: bool = True
    stream: TextIO | None = None
    timings: list[tuple[str, float]] = field(default_factory=list)

    @classmethod
    def parse(cls, pipeline: str, **options: object) -> PassManager:
        """A manager for `pipeline`, e.g. `"cse,autodiff{wrt=0,1},default"`.

        `options` are the instrumentation fields: `print_ir_after_all`,
        `print_ir_after` (a set of pass names), `print_ir_after_change` (dump
        after every pass that changed the IR, like MLIR's
        `-mlir-print-ir-after-change`), `print_generic`, `time_passes`,
        `verify_each`, `stream`.
        """
        manager = cls(**options)  # type: ignore[arg-type]
        manager.passes = [instantiate(spec) for spec in parse_specs(pipeline)] if pipeline.strip() else []
        return manager

    def add(self, pipeline: str) -> PassManager:
        """Append the passes of `pipeline`; returns self for chaining."""
        self.passes.extend(instantiate(spec) for spec in parse_specs(pipeline))
        return self

    def run(self, module: ModuleOp, ctx: Context | None = None) -> ModuleOp:
        """Run every pass in order on `module`, in place; returns it.

        A pass that fails, or leaves IR that does not verify, raises
        `CompileError` naming the pass.
        """
        ctx = ctx or make_context()
        self.timings = []
        for p in self.passes:
            before = str(module) if self.print_ir_after_change else ""
            start = time.perf_counter()
            try:
                p.apply(ctx, module)
            except CompileError:
                raise
            except (PassFailedException, DiagnosticException, VerifyException, ValueError) as err:
                raise CompileError(f"pass '{p.name}' failed: {err}") from err
            self.timings.append((p.name, time.perf_counter() - start))
            if self.verify_each:
                try:
                    verify_located(module)
                except CompileError as err:
                    raise CompileError(f"IR after pass '{p.name}' does not verify: {err.message}", err.location) from err
            if self.print_ir_after_all or p.name in self.print_ir_after:
                self._dump(p, module)
            elif self.print_ir_after_change and str(module) != before:
                self._dump(p, module)
        if self.time_passes:
            self._report()
        return module

    def _out(self) -> TextIO:
        return self.stream or sys.stderr

    def _dump(self, p: ModulePass, module: ModuleOp) -> None:
        out = self._out()
        print(f"// -----// IR Dump After {type(p).__name__} ({p.name}) //----- //", file=out)
        Printer(stream=out, print_generic_format=self.print_generic).print_op(module)
        print(file=out)

    def _report(self) -> None:
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
