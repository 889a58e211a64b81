"""opt-tool: the project's `mlir-opt`.

    opt-tool [file] [--PASS[{opts}] ...] [-p PIPELINE] [-o OUT] [flags]

Every registered pass (xDSL's and the project's) is a flag, and the flags run
in command-line order, interleaved with `-p` pipelines (MLIR's nested form
`builtin.module(func.func(cse))` included); `-O1`..`-O3` stand for the
`default` pipeline (`-O0` for nothing). mlir-opt's `--mlir-...` spellings of
the instrumentation flags are accepted. Errors print as
`file:line:col: error: message` and exit 1.

Start-up stays cheap: `--help`, `--version` and `--list-passes` import no
pass, SymPy or LLVM (the dialects come with `dfc.dialects`' diagnostics), and
the compiler is imported only once the arguments are read.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from dfc.dialects.diagnostics import CompileError
from dfc.passes import PASS_SUMMARIES, PIPELINES, PROJECT_PASSES, get_all_passes

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from dfc.compiler.pass_manager import PassManager

SPLIT_MARKER = "// -----"
OPT_LEVELS = {"-O0": "", "-O1": "default", "-O2": "default", "-O3": "default"}
"""`-On` shorthands: -O0 adds nothing, the others the default pipeline to the engine's IR."""
TARGET_NAMES = ("mlir", "llvm", "asm", "gpu")
DEPRECATED_TARGETS = {"ptx": "gpu"}
"""Old spellings of `-t` names, accepted with a warning."""


class _ArgumentParser(argparse.ArgumentParser):
    """Reports bad arguments as a `CompileError` (exit 1) with a "did you mean"."""

    def error(self, message: str) -> NoReturn:
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            flags = [*self._option_string_actions, *(f"--{n}" for n in get_all_passes())]
            hints = []
            for arg in message[len(prefix) :].split():
                close = difflib.get_close_matches(arg.split("=", 1)[0].split("{", 1)[0], flags, n=1)
                hints.append(f"unknown argument '{arg}'" + (f"; did you mean '{close[0]}'?" if close else ""))
            message = "; ".join(hints)
        raise CompileError(message, self.prog)


def _wrap(first: str, items: list[str], sep: str, width: int = 100) -> list[str]:
    """`items` joined by `sep` after `first`, broken into lines only after a separator."""
    lines, line = [], first
    for k, item in enumerate(items):
        piece = item + (sep if k + 1 < len(items) else "")
        if len(line) + len(piece.rstrip()) > width and line.strip():
            lines.append(line.rstrip())
            line = "    "
        line += piece
    return [*lines, line]


def _help_epilog() -> str:
    lines = ["project passes (each also a flag: --NAME, '--NAME{opt=value}'; docs/passes.md):"]
    width = max(map(len, PROJECT_PASSES)) + 1
    for name in PROJECT_PASSES:
        lines.append(f"  --{name:<{width}}{PASS_SUMMARIES[name]}")
    lines.append("\noptimisation levels:")
    lines.append(f"  {'-O0':<{width + 2}}no passes (as when no pass is given)")
    lines.append(f"  {'-O1, -O2, -O3':<{width + 2}}the `default` pipeline (below)")
    lines.append("\nnamed pipelines:")
    for name, spec in PIPELINES.items():
        lines += _wrap(f"  {name} = ", spec.split(","), ",")
    xdsl = sorted(set(get_all_passes()) - set(PROJECT_PASSES))
    lines.append("\nxDSL passes (https://xdsl.dev; canonicalize, cse and dce know the df/nn patterns):")
    lines += _wrap("  ", xdsl, ", ")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="opt-tool",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
        description="Parse, transform and print df/nn MLIR, as mlir-opt does. Each registered pass is "
        "also a flag, run in command-line order.",
        epilog=_help_epilog(),
    )
    add = parser.add_argument
    add("input", nargs="?", default="-", help="input file (default: stdin)")
    add("-o", dest="output", default="-", help="output file (default: stdout)")
    add("-p", "--pass-pipeline", action="append", default=[], metavar="PIPELINE",
        help="passes, e.g. 'cse,autodiff{wrt=0}' or 'builtin.module(func.func(cse))'")
    add("-t", "--target", default="mlir", choices=TARGET_NAMES + tuple(DEPRECATED_TARGETS),
        help="print MLIR (default), optimised LLVM IR, host assembly or the GPU kernels as PTX "
             "('ptx': deprecated spelling of 'gpu')")
    add("--version", action="store_true", help="print the versions of dfc, xDSL and LLVM")

    info = parser.add_argument_group("information")
    info.add_argument("--list-passes", action="store_true",
                      help="list the project's passes (with what they do), named pipelines, then xDSL's")
    info.add_argument("--show-dialects", action="store_true", help="list the dialects opt-tool reads")
    info.add_argument("--help-env", action="store_true",
                      help="list the DFC_* environment settings (docs/configuration.md) with their values now")
    info.add_argument("--dump-pass-pipeline", action="store_true",
                      help="print the pipeline that will run (anchored form) to stderr")

    inp = parser.add_argument_group("input")
    inp.add_argument("--split-input-file", action="store_true",
                     help=f"process each '{SPLIT_MARKER}'-separated chunk separately")
    inp.add_argument("--verify-diagnostics", action="store_true",
                     help="check diagnostics against '// expected-error {{...}}' annotations")
    inp.add_argument("--allow-unregistered-dialect", action="store_true",
                     help="accept ops of dialects dfc does not know")
    inp.add_argument("--import-onnx", action="store_true",
                     help="read the input as an ONNX model (.onnx; needs the 'onnx' package)")

    dump = parser.add_argument_group("instrumentation (also spelt --mlir-...)")
    dump.add_argument("--print-ir-before-all", "--mlir-print-ir-before-all", action="store_true",
                      help="dump IR to stderr before every pass")
    dump.add_argument("--print-ir-before", "--mlir-print-ir-before", action="append", default=[], metavar="PASS",
                      help="dump IR to stderr before the named passes (repeat or comma-separate)")
    dump.add_argument("--print-ir-after-all", "--mlir-print-ir-after-all", action="store_true",
                      help="dump IR to stderr after every pass")
    dump.add_argument("--print-ir-after", "--mlir-print-ir-after", action="append", default=[], metavar="PASS",
                      help="dump IR to stderr after the named passes (repeat or comma-separate)")
    dump.add_argument("--print-ir-after-change", "--mlir-print-ir-after-change", action="store_true",
                      help="dump IR to stderr after every pass that changed it")
    dump.add_argument("--print-ir-after-failure", "--mlir-print-ir-after-failure", action="store_true",
                      help="dump the IR a failing pass left to stderr")
    dump.add_argument("--print-op-generic", "--mlir-print-op-generic", action="store_true",
                      help="print ops in generic form")
    dump.add_argument("--print-debuginfo", "--mlir-print-debuginfo", action="store_true",
                      help="print each op's source location, loc(\"file\":line:col)")
    dump.add_argument("--time-passes", "--mlir-timing", action="store_true",
                      help="report the wall time of every pass and backend stage on stderr")
    dump.add_argument("--pass-statistics", "--mlir-pass-statistics", action="store_true",
                      help="report the op count before and after each pass on stderr")
    dump.add_argument("--no-progress", action="store_true",
                      help="no progress line on an interactive terminal")
    return parser


def split_pass_flags(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Separate pass flags from tool flags, keeping the passes' order.

    Returns (pipeline elements in order, remaining tool arguments); `-p X` is
    kept in place as an element of the pipeline.
    """
    registered = set(get_all_passes()) | set(PIPELINES)
    pipeline: list[str] = []
    rest: list[str] = []
    args = list(argv)
    k = 0
    while k < len(args):
        arg = args[k]
        if arg in OPT_LEVELS:
            pipeline += [OPT_LEVELS[arg]] if OPT_LEVELS[arg] else []
            k += 1
            continue
        if arg in ("-p", "--pass-pipeline") and k + 1 < len(args):
            pipeline.append(args[k + 1])
            k += 2
            continue
        if arg.startswith("--pass-pipeline="):
            pipeline.append(arg.split("=", 1)[1])
        elif arg.startswith("--") and _pass_name(arg[2:]) in registered:
            body = arg[2:]
            name = _pass_name(body)
            if body.startswith(name + "="):
                body = f"{name}{{{body[len(name) + 1:]}}}"
            pipeline.append(body)
        else:
            rest.append(arg)
        k += 1
    return pipeline, rest


def _pass_name(flag: str) -> str:
    for stop in "{=":
        flag = flag.split(stop, 1)[0]
    return flag


def _read(path: str) -> tuple[str, str]:
    from dfc.compiler.parsing import decode_source

    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        text = sys.stdin.read() if stream is None else decode_source(stream.read(), "<stdin>")
        return text, "<stdin>"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise CompileError(f"cannot open input file '{path}': {err.strerror}") from None
    return decode_source(data, path), path


def _chunks(text: str, split: bool) -> list[tuple[str, int]]:
    """(chunk text, 1-based first line) pairs."""
    if not split:
        return [(text, 1)]
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    first = 1
    for k, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.strip() == SPLIT_MARKER:
            chunks.append(("".join(current), first))
            current, first = [], k + 1
        else:
            current.append(line)
    chunks.append(("".join(current), first))
    return chunks


def _print(module: ModuleOp, generic: bool, debuginfo: bool) -> str:
    import io

    from dfc.dialects.xdsl_fixes import DfcPrinter

    out = io.StringIO()
    DfcPrinter(stream=out, print_generic_format=generic, print_debuginfo=debuginfo).print_op(module)
    return out.getvalue() + "\n"


class Progress:
    """A one-line `[k/n] pass` display on an interactive terminal, erased when done."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.shown = False

    def __call__(self, k: int, n: int, name: str) -> None:
        self.stream.write(f"\r\033[K[{k + 1}/{n}] {name}")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    import dfc

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    return f"dfc {dfc.__version__} (xDSL {of('xdsl')}, llvmlite {of('llvmlite')})"


def _names(items: list[str]) -> frozenset[str]:
    return frozenset(n for item in items for n in item.split(",") if n)


def run(argv: Sequence[str]) -> int:
    pipeline, rest = split_pass_flags(argv)
    args = _parser().parse_args(rest)
    if args.target in DEPRECATED_TARGETS:
        new = DEPRECATED_TARGETS[args.target]
        print(f"opt-tool: warning: '-t {args.target}' is deprecated, use '-t {new}'", file=sys.stderr)
        args.target = new
    if args.version:
        print(_version())
        return 0
    if args.list_passes:
        print(_help_epilog())
        return 0
    if args.help_env:
        from dfc import config

        print(config.describe())
        return 0
    if args.show_dialects:
        from dfc.compiler.context import make_context

        print("Available Dialects: " + ", ".join(sorted(make_context().registered_dialect_names)))
        return 0
    from dfc.compiler.pass_manager import PassManager

    progress = None
    dumping = args.print_ir_before_all or args.print_ir_after_all or args.print_ir_before or args.print_ir_after
    if sys.stderr.isatty() and not (args.no_progress or dumping or args.print_ir_after_change):
        progress = Progress(sys.stderr)
    start = time.perf_counter()
    manager = PassManager.parse(
        ",".join(pipeline),
        print_ir_before_all=args.print_ir_before_all,
        print_ir_before=_names(args.print_ir_before),
        print_ir_after_all=args.print_ir_after_all,
        print_ir_after=_names(args.print_ir_after),
        print_ir_after_change=args.print_ir_after_change,
        print_ir_after_failure=args.print_ir_after_failure,
        print_generic=args.print_op_generic,
        print_debuginfo=args.print_debuginfo,
        statistics=args.pass_statistics,
        progress=progress,
    )
    manager.timings.append(("load passes", time.perf_counter() - start))
    if args.dump_pass_pipeline:
        print(f"Pass Manager with {len(manager.passes)} passes:\n{manager.pipeline_text()}", file=sys.stderr)
    if args.import_onnx:
        module = manager.run(_onnx_module(args.input))
        _write(args.output, _print(module, args.print_op_generic, args.print_debuginfo) if args.target == "mlir"
               else _translate(module, args.target, manager))
        return 0
    text, filename = _read(args.input)
    try:
        outputs, failed = _process(args, manager, text, filename, progress)
    finally:
        if progress is not None:
            progress.clear()
    if args.time_passes:
        manager.report_timing()
    _write(args.output, f"{SPLIT_MARKER}\n".join(outputs))
    return 1 if failed else 0


def _process(
    args: argparse.Namespace, manager: PassManager, text: str, filename: str, progress: Progress | None
) -> tuple[list[str], bool]:
    """Each chunk parsed, run through `manager` and printed; (outputs, whether any failed)."""
    from dfc.compiler.parsing import parse_module
    from dfc.tools.diagnostics_check import check, expectations

    outputs: list[str] = []
    failed = False
    for chunk, first_line in _chunks(text, args.split_input_file):
        padded = "\n" * (first_line - 1) + chunk  # keeps line numbers those of the file
        error: CompileError | None = None
        try:
            with manager.stage("parse"):
                module = parse_module(padded, filename, allow_unregistered=args.allow_unregistered_dialect)
            manager.run(module)
            if args.target == "mlir":
                with manager.stage("print"):
                    outputs.append(_print(module, args.print_op_generic, args.print_debuginfo))
            else:
                outputs.append(_translate(module, args.target, manager))
        except CompileError as err:
            error = err
        if progress is not None:
            progress.clear()  # messages start on a clean line
        if args.verify_diagnostics:
            problems = check(expectations(chunk, first_line), error, filename)
            for problem in problems:
                print(problem, file=sys.stderr)
            failed |= bool(problems)
        elif error is not None:
            if error.location and error.location.startswith(f"{filename}:"):
                error.with_source(padded)
            print(error, file=sys.stderr)
            failed = True
    return outputs, failed


def _onnx_module(path: str) -> ModuleOp:
    """The module `import_onnx` builds from the model at `path`."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise CompileError("--import-onnx needs the 'onnx' package (pip install 'dfc[onnx]')") from None
    from dfc.importers.onnx_import import import_onnx

    if path == "-":
        raise CompileError("--import-onnx reads a file, not stdin")
    try:
        return import_onnx(path)[0]
    except OSError as err:
        raise CompileError(f"cannot open input file '{path}': {err.strerror}") from None


def _translate(module: ModuleOp, target: str, manager: PassManager) -> str:
    """`module` printed by a code generator; its failures are compile errors."""
    from dfc.compiler.targets import TARGETS

    try:
        return TARGETS[target](module, manager)
    except NotImplementedError as err:
        raise CompileError(f"cannot generate {target}: {err}") from None


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as err:
        raise CompileError(f"cannot write output file '{path}': {err.strerror}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: never lets a Python traceback reach the user."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (`opt-tool --list-passes | head`)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the exit flush does not fail again
        return 141
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # a compiler bug: report it briefly, as a crash
        from dfc import config

        if config.TRACEBACK.value():
            raise
        print(f"opt-tool: internal error: {type(err).__name__}: {err} "
              "(set DFC_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
