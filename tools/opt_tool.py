"""opt-tool: the project's `mlir-opt`.

    opt-tool [file] [--PASS[{opts}] ...] [-p PIPELINE] [-o OUT] [flags]

Every registered pass (xDSL's and the project's) is a flag, and the flags run
in command-line order, interleaved with `-p` pipelines; `-O1`..`-O3` stand for
the `default` pipeline (`-O0` for nothing). Errors print as
`file:line:col: error: message` and exit 1.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from dfc.compiler.diagnostics import CompileError
from dfc.compiler.targets import TARGETS
from dfc.compiler.parsing import decode_source, parse_module
from dfc.compiler.pass_manager import PassManager
from dfc.passes import PIPELINES, get_all_passes
from dfc.tools.diagnostics_check import check, expectations

SPLIT_MARKER = "// -----"
OPT_LEVELS = {"-O0": "", "-O1": "default", "-O2": "default", "-O3": "default"}
"""`-On` shorthands: -O0 adds nothing, the others the default pipeline to the engine's IR."""


class _ArgumentParser(argparse.ArgumentParser):
    """Reports bad arguments as a `CompileError` (exit 1), not argparse's exit 2."""

    def error(self, message: str) -> NoReturn:
        raise CompileError(message, self.prog)


def _parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="opt-tool",
        description="Parse, transform and print df/nn MLIR. Each registered pass is also a "
        "flag (--cse, '--autodiff{wrt=0,1}' or --autodiff=wrt=0,1), run in command-line order; "
        "see --list-passes.",
    )
    parser.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    parser.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
    parser.add_argument("-p", "--pass-pipeline", action="append", default=[], metavar="PIPELINE",
                        help="comma-separated passes, e.g. 'cse,autodiff{wrt=0}'")
    parser.add_argument("--split-input-file", action="store_true",
                        help=f"process each '{SPLIT_MARKER}'-separated chunk separately")
    parser.add_argument("--verify-diagnostics", action="store_true",
                        help="check errors against '// expected-error {{...}}' annotations")
    parser.add_argument("--print-ir-after-all", action="store_true", help="dump IR to stderr after every pass")
    parser.add_argument("--print-ir-after", action="append", default=[], metavar="PASS",
                        help="dump IR to stderr after the named passes (repeat or comma-separate)")
    parser.add_argument("--print-ir-after-change", action="store_true",
                        help="dump IR to stderr after every pass that changed it")
    parser.add_argument("--print-op-generic", action="store_true", help="print ops in generic form")
    parser.add_argument("--time-passes", action="store_true", help="report each pass's wall time on stderr")
    parser.add_argument("--list-passes", action="store_true", help="list registered passes and pipelines")
    parser.add_argument("--import-onnx", action="store_true",
                        help="read the input as an ONNX model (.onnx; needs the 'onnx' package)")
    parser.add_argument("-t", "--target", default="mlir", choices=["mlir", *TARGETS],
                        help="print MLIR (default), optimised LLVM IR, host assembly or PTX")
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


def _print(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue() + "\n"


def run(argv: Sequence[str]) -> int:
    pipeline, rest = split_pass_flags(argv)
    args = _parser().parse_args(rest)
    if args.list_passes:
        for name in sorted(get_all_passes()):
            print(name)
        for name, spec in sorted(PIPELINES.items()):
            print(f"{name} = {spec}")
        return 0
    after = frozenset(n for item in args.print_ir_after for n in item.split(","))
    manager = PassManager.parse(
        ",".join(pipeline),
        print_ir_after_all=args.print_ir_after_all,
        print_ir_after=after,
        print_ir_after_change=args.print_ir_after_change,
        print_generic=args.print_op_generic,
        time_passes=args.time_passes,
    )
    if args.import_onnx:
        module = manager.run(_onnx_module(args.input))
        _write(args.output, _print(module, args.print_op_generic) if args.target == "mlir"
               else _translate(module, args.target))
        return 0
    text, filename = _read(args.input)
    outputs: list[str] = []
    failed = False
    for chunk, first_line in _chunks(text, args.split_input_file):
        padded = "\n" * (first_line - 1) + chunk  # keeps line numbers those of the file
        error: CompileError | None = None
        try:
            module = manager.run(parse_module(padded, filename))
            if args.target == "mlir":
                outputs.append(_print(module, args.print_op_generic))
            else:
                outputs.append(_translate(module, args.target))
        except CompileError as err:
            error = err
        if args.verify_diagnostics:
            problems = check(expectations(chunk, first_line), error, filename)
            for problem in problems:
                print(problem, file=sys.stderr)
            failed |= bool(problems)
        elif error is not None:
            print(error, file=sys.stderr)
            failed = True
    _write(args.output, f"{SPLIT_MARKER}\n".join(outputs))
    return 1 if failed else 0


def _onnx_module(path: str) -> ModuleOp:
    """The module `import_onnx` builds from the model at `path`."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise CompileError("--import-onnx needs the 'onnx' package (pip install 'dfc[onnx]')") from None
    from dfc.compiler.onnx_import import import_onnx

    if path == "-":
        raise CompileError("--import-onnx reads a file, not stdin")
    try:
        return import_onnx(path)[0]
    except OSError as err:
        raise CompileError(f"cannot open input file '{path}': {err.strerror}") from None


def _translate(module: ModuleOp, target: str) -> str:
    """`module` printed by a code generator; its failures are compile errors."""
    try:
        return TARGETS[target](module)
    except NotImplementedError as err:
        raise CompileError(f"cannot generate {target}: {err}") from None


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
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
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # a compiler bug: report it briefly, as a crash
        if os.environ.get("DFC_TRACEBACK"):
            raise
        print(f"opt-tool: internal error: {type(err).__name__}: {err} "
              "(set DFC_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
