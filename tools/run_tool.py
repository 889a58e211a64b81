"""run-tool: the project's `mlir-runner`.

    run-tool FILE --entry NAME [-p PIPELINE] [--arg NAME=x.npy ...]
             [--random-args SEED] [--print-results] [--threads N]

Parses FILE, optionally runs a pipeline, compiles with the ExecutionEngine
(which lowers what is still at df/nn level) and calls @NAME. Arguments come
from .npy files (by argument name or index) or are random (floats standard
normal, integers in [0, 10)). The seeds of a gradient function that autodiff
generated (`@f_grad`, `@f_bwd`: the last arguments, one per differentiated
result) are never random: they default to ones, so the gradients are those
of the sum of the results (of the loss, for a scalar), unless given with
`--arg`. Results print as `result #K: TYPE = VALUES`; `--save-results DIR`
writes each as `DIR/result_K.npy`, which `--arg` reads back.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, StringAttr, TensorType

from dfc import config
from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.interpreter import dtype_of, is_float_dtype
from dfc.compiler.parsing import parse_module
from dfc.compiler.pass_manager import PassManager
from dfc.dialects.diagnostics import CompileError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run-tool", description="Compile and run one function of an MLIR file.")
    p.add_argument("input", help="input .mlir file")
    p.add_argument("--entry", required=True, help="the function to call")
    p.add_argument("-p", "--pass-pipeline", default="", help="passes to run before compiling")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an argument from a .npy file, by name (%%x or x) or index")
    p.add_argument("--random-args", type=int, metavar="SEED", help="random values for arguments not given")
    p.add_argument("--print-results", action="store_true", help="print the results")
    p.add_argument("--save-results", metavar="DIR", help="save result K as DIR/result_K.npy")
    p.add_argument("--threads", type=int, help="worker threads (default: DFC_NUM_THREADS or CPU count)")
    return p


def seed_arguments(f: func.FuncOp) -> range:
    """Indices of the seed arguments of a gradient function autodiff generated
    (`@f_grad`, `@f_bwd`: one per differentiated result, last); empty otherwise."""
    of, outputs = f.attributes.get("autodiff.of"), f.attributes.get("autodiff.outputs")
    if not isinstance(of, StringAttr) or not isinstance(outputs, DenseArrayBase):
        return range(0)
    if f.sym_name.data not in (f"{of.data}_grad", f"{of.data}_bwd"):
        return range(0)
    n = len(f.function_type.inputs.data)
    return range(n - len(outputs.get_values()), n)


def _arguments(f: func.FuncOp, given: Sequence[str], seed: int | None) -> list[object]:
    names = [a.name_hint for a in f.body.block.args]
    seeds = seed_arguments(f)
    values: dict[int, object] = {}
    for item in given:
        if "=" not in item:
            raise CompileError(f"--arg expects NAME=FILE.npy, got '{item}'")
        key, path = item.split("=", 1)
        key = key.lstrip("%")
        k = int(key) if key.isdigit() else names.index(key) if key in names else None
        if k is None or k >= len(names):
            raise CompileError(f"@{f.sym_name.data} has no argument '{key}'")
        try:
            values[k] = np.load(path)
        except (OSError, ValueError) as err:
            raise CompileError(f"cannot load '{path}': {err}") from None
    rng = np.random.default_rng(seed)
    out = []
    for k, t in enumerate(f.function_type.inputs.data):
        if k in values:
            out.append(values[k])
        elif k in seeds:
            out.append(_ones(t))
        elif seed is None:
            raise CompileError(f"argument #{k} (%{names[k]}) of @{f.sym_name.data} is not given (use --arg or --random-args)")
        else:
            out.append(_random(rng, t, k))
    return out


def _random(rng: np.random.Generator, t, k: int) -> object:
    shaped = isinstance(t, TensorType | MemRefType)
    element = t.element_type if shaped else t
    shape = tuple(t.get_shape()) if shaped else ()
    if any(d < 0 for d in shape):
        raise CompileError(f"argument #{k} has dynamic shape {t}: pass it with --arg")
    dtype = dtype_of(element)
    if is_float_dtype(dtype):
        value = rng.standard_normal(shape).astype(dtype)
    else:
        value = rng.integers(0, 10, shape).astype(dtype)
    return value if shaped else value.item()


def _ones(t) -> object:
    if isinstance(t, TensorType | MemRefType):
        return np.ones(tuple(t.get_shape()), dtype_of(t.element_type))
    return dtype_of(t).type(1)


def _save(directory: str, results: Sequence[object]) -> None:
    try:
        os.makedirs(directory, exist_ok=True)
        for k, r in enumerate(results):
            np.save(os.path.join(directory, f"result_{k}.npy"), np.asarray(r))
    except OSError as err:
        raise CompileError(f"cannot save results to '{directory}': {err.strerror}") from None


def run(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        with open(args.input) as fh:
            text = fh.read()
    except OSError as err:
        raise CompileError(f"cannot open input file '{args.input}': {err.strerror}") from None
    module = parse_module(text, args.input)
    if args.pass_pipeline:
        PassManager.parse(args.pass_pipeline).run(module)
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if args.entry not in functions:
        raise CompileError(f"no function @{args.entry} in {args.input}")
    f = functions[args.entry]
    values = _arguments(f, args.arg, args.random_args)
    engine = ExecutionEngine(module, threads=args.threads)
    try:
        results = engine.invoke(args.entry, *values)
    except (TypeError, ValueError) as err:
        raise CompileError(str(err)) from None
    if not isinstance(results, tuple):
        results = (results,)
    if args.print_results:
        for k, (r, t) in enumerate(zip(results, f.function_type.outputs.data)):
            text = np.array2string(np.asarray(r), precision=6, separator=", ", threshold=64)
            print(f"result #{k}: {t} = {text}")
    if args.save_results:
        _save(args.save_results, results)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: errors print one line and exit 1, never a traceback."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except CompileError as err:
        print(f"run-tool: {err}", file=sys.stderr)
        return 1
    except Exception as err:
        if config.TRACEBACK.value():
            raise
        print(f"run-tool: internal error: {type(err).__name__}: {err} "
              "(set DFC_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
