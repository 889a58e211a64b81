"""The NumPy frontend: `@dfc.jit` parses a Python function's AST into
library-level IR (nn + df maps + scf), specialised per signature.

    @dfc.jit
    def loss(x: dfc.f64["N"], w: dfc.f64["N"]):
        return np.sum(np.tanh(x * w) ** 2)

    loss(x, w)                  # compiled on first call, cached per signature
    dfc.grad(loss, 1)(x, w)     # the autodiff pass on the same IR
    loss.mlir(x, w)             # the IR right after the frontend

Array parameters are annotated (`dfc.f32[64, 512]`, a string for a size
name) or specialised on the first call's shapes and dtypes; Python floats
become 0-d float parameters and Python ints are compile-time constants (a
new int value compiles a new specialisation). docs/frontend.md lists the
supported subset and how each construct maps to IR.
"""

from __future__ import annotations

import ast
import functools
import html
import inspect
import textwrap
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from dfc.dialects.diagnostics import CompileError
from dfc.errors import user_errors
from dfc.frontend.dtypes import ArrayType, dtype_from_numpy, f16, f32, f64, i32, i64
from dfc.frontend.errors import FrontendError

__all__ = ["jit", "JitFunction", "FrontendError", "ArrayType", "f16", "f32", "f64", "i32", "i64"]

_names: dict[tuple[Any, tuple], str] = {}
_used_names: set[str] = set()


def _unique(fn: Any, params: tuple) -> str:
    """The symbol of `fn`'s specialisation for `params`: its Python name for the
    first, then `name_1`, ...; unique in the process, so a module calling several
    specialisations (or functions of the same name) never mixes them up."""
    key = (fn, params)
    if key not in _names:
        base, k = fn.__name__, 0
        while (name := base if k == 0 else f"{base}_{k}") in _used_names:
            k += 1
        _used_names.add(name)
        _names[key] = name
    return _names[key]


class JitFunction:
    """What `dfc.jit` returns: calling it compiles the function for the arguments'
    signature (dtypes, shapes, int values; cached) and runs it (see the module docstring)."""

    def __init__(self, fn: Any, threads: int | None = None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.threads = threads
        self._source = None
        self._specialisations: dict[tuple, Any] = {}
        self._modules: dict[tuple, tuple[ModuleOp, str, list[int]]] = {}

    def __repr__(self) -> str:
        return f"<dfc.jit {self.fn.__qualname__}>"

    def _repr_html_(self) -> str:
        """The notebook display: the Python signature, then each signature compiled so far."""
        head = f"<p><b>dfc.jit</b> <code>{html.escape(self.fn.__name__ + str(inspect.signature(self.fn)))}</code>"
        if not self._specialisations:
            return head + " (compiled on its first call)</p>"
        return head + "</p>" + "".join(f._repr_html_() for f in self._specialisations.values())

    def source(self):
        """The function's parsed source and where it lives (read once; a `FrontendError` when Python
        kept no source: a function typed at the plain REPL)."""
        from dfc.frontend.scopes import Source

        if self._source is None:
            try:
                lines, first = inspect.getsourcelines(self.fn)
                filename = inspect.getsourcefile(self.fn) or "<unknown>"
            except (OSError, TypeError) as err:
                name = self.fn.__qualname__
                raise FrontendError(
                    f"cannot read the source of {name}: {err}. dfc.jit translates a function's source text, "
                    "which Python keeps for functions defined in a file or a notebook cell (IPython, Jupyter) but "
                    f"not for those typed at the plain `python` prompt or given to `python -c`: define {name} in "
                    "a file and import it, or work in IPython or Jupyter") from None
            text = "".join(lines)
            dedented = textwrap.dedent(text)
            indent = len(lines[0]) - len(lines[0].lstrip())
            tree = ast.parse(dedented)
            fdef = tree.body[0]
            if not isinstance(fdef, ast.FunctionDef):
                raise FrontendError(f"{self.fn.__qualname__} is not a plain function definition", f"{filename}:{first}:1")
            closure = inspect.getclosurevars(self.fn)
            scope = {**self.fn.__globals__, **closure.nonlocals}
            self._source = Source(fdef, filename, first - 1, indent, scope)
        return self._source

    # -- signatures ---------------------------------------------------------------------

    def _annotations(self) -> list[Any]:
        sig = inspect.signature(self.fn)
        out = []
        for p in sig.parameters.values():
            a = p.annotation
            if isinstance(a, str):
                try:
                    a = eval(a, self.fn.__globals__)  # noqa: S307 - the user's own annotation
                except Exception:
                    a = inspect.Parameter.empty
            out.append(a if isinstance(a, ArrayType) else None)
        return out

    def params(self, args: tuple) -> tuple[list[tuple], list[Any], list[int]]:
        """The translation parameters, the IR arguments and each Python argument's IR position."""
        annotations = self._annotations()
        if len(args) != len(annotations):
            raise TypeError(f"{self.fn.__qualname__}() takes {len(annotations)} arguments, got {len(args)}")
        sizes: dict[str, int] = {}
        params: list[tuple] = []
        ir_args: list[Any] = []
        positions: list[int] = []
        for k, (a, ann) in enumerate(zip(args, annotations)):
            if ann is not None and ann.shape is None:
                params.append(("float", ann.dtype))
                ir_args.append(np.asarray(a, ann.numpy))
            elif isinstance(a, np.ndarray) or ann is not None:
                array = np.asarray(a)
                dtype = dtype_from_numpy(array.dtype)
                if ann is not None:
                    if dtype != ann.dtype:
                        raise TypeError(f"argument {k} of {self.fn.__qualname__} must have dtype {ann.numpy}, got {array.dtype}")
                    if len(ann.shape) != array.ndim:
                        raise ValueError(f"argument {k} of {self.fn.__qualname__} must have rank {len(ann.shape)}, got shape {array.shape}")
                    for want, got in zip(ann.shape, array.shape):
                        if isinstance(want, str):
                            if sizes.setdefault(want, got) != got:
                                raise ValueError(f"size '{want}' is {sizes[want]} elsewhere but {got} in argument {k} of {self.fn.__qualname__}")
                        elif want != got:
                            raise ValueError(f"argument {k} of {self.fn.__qualname__} must have shape {ann.shape}, got {array.shape}")
                if dtype is None:
                    raise TypeError(f"argument {k}: unsupported dtype {array.dtype}")
                if array.ndim == 0:
                    params.append(("float", dtype) if dtype.startswith("f") else ("static", array.item()))
                else:
                    params.append(("array", dtype, array.shape))
                if params[-1][0] == "static":
                    positions.append(-1)
                    continue
                ir_args.append(array)
            elif isinstance(a, bool | int | np.integer):
                params.append(("static", int(a) if not isinstance(a, bool) else a))
                positions.append(-1)
                continue
            elif isinstance(a, float | np.floating):
                dtype = "f64" if isinstance(a, float) else dtype_from_numpy(np.asarray(a).dtype)
                params.append(("float", dtype))
                ir_args.append(np.asarray(a, np.dtype({"f16": "float16", "f32": "float32", "f64": "float64"}[dtype])))
            else:
                raise TypeError(f"argument {k} of {self.fn.__qualname__}: expected an array or a number, got {type(a).__name__}")
            positions.append(len(ir_args) - 1)
        return params, ir_args, positions

    def module_for(self, params: list[tuple], writeback: bool = False) -> tuple[ModuleOp, str, list[int]]:
        """The module (this function and its callees) for one signature, the
        function's name, and the Python parameters it updates in place.

        With `writeback` (a call from another jitted function) the function also
        returns the final value of each updated array parameter, after its own
        results, so that the caller can store them where NumPy would have."""
        key = (*params, ("writeback",)) if writeback else tuple(params)
        if key not in self._modules:
            from dfc.frontend.translate import Translator

            module = ModuleOp([])
            name = _unique(self.fn, key)

            def add(f: func.FuncOp) -> None:
                names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
                if f.sym_name.data not in names:
                    module.body.block.add_op(f)

            translator = Translator(self.source(), name, add, _call_jitted)
            try:
                f = translator.function(list(params), writeback)
            except CompileError:
                raise
            except Exception as err:  # a frontend bug: still located at the user's statement
                raise translator.fail(f"internal error translating this statement: {type(err).__name__}: {err}") from err
            module.body.block.add_op(f)
            _verify(module, self.source())
            self._modules[key] = (module, name, translator.updated)
        return self._modules[key]

    @user_errors
    def specialize(self, *args: Any):
        """(the `Function` for these arguments, its arguments, IR position of each)."""
        from dfc.function import Function

        params, ir_args, positions = self.params(args)
        key = tuple(params)
        if key not in self._specialisations:
            module, name, _ = self.module_for(params)
            self._specialisations[key] = Function(module, name, self.threads)
        return self._specialisations[key], ir_args, positions

    @user_errors
    def __call__(self, *args: Any) -> Any:
        fn, ir_args, _ = self.specialize(*args)
        return fn(*ir_args)

    @user_errors
    def mlir(self, *args: Any, stage: str = "frontend") -> str:
        """The module for these arguments at `stage` ("frontend", "autodiff", "lowered")."""
        fn, _, _ = self.specialize(*args)
        return fn.mlir(stage)


def _verify(module: ModuleOp, source) -> None:
    from xdsl.utils.exceptions import VerifyException

    try:
        module.verify()
    except VerifyException as err:
        raise FrontendError(f"internal error: the frontend built invalid IR: {err}",
                            f"{source.filename}:{source.line_offset + source.tree.lineno}:1") from err


def _call_jitted(tr, callee: JitFunction, args: list, kwargs: dict, node) -> Any:
    """`callee(*args)` inside a function being translated: a `func.call`.

    An array argument the callee updates in place is updated in the caller too
    when it names memory there (a named array or a basic view of one), as in
    NumPy; an update of a temporary (`np.sqrt(Y)`, a fancy-indexed copy) is not
    visible, as in NumPy."""
    from xdsl.dialects.builtin import TensorType

    from dfc.frontend.affine import Affine
    from dfc.frontend.arrays import Const, View, dtype_name

    if kwargs:
        raise tr.fail("keyword arguments to compiled functions are not supported", node)
    params, values = [], []
    for k, a in enumerate(args):
        if isinstance(a, View) and a.cell is not None and not a.gathers:
            # the array as it is at the call (an earlier argument's call may have updated it)
            args[k] = a = View(a.cell.value, a.shape, a.offset, a.coef, a.dtype, a.cell)
        if isinstance(a, Affine) and a.static is not None:
            params.append(("static", a.static))
        elif isinstance(a, bool):
            params.append(("static", a))
        else:
            e = tr.as_expr(a, node)
            if isinstance(e, Const) and not e.shape and isinstance(e.value, int) and not isinstance(e.value, bool):
                params.append(("static", e.value))
                continue
            v = tr.em.materialize(e)
            t = v.type
            assert isinstance(t, TensorType)
            shape = tuple(t.get_shape())
            params.append(("array", dtype_name(t.element_type), shape) if shape else ("float", dtype_name(t.element_type)))
            values.append(v)
    module, name, updated = callee.module_for(params, writeback=True)
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            tr.add_function(op.clone())
    f = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    call = tr.b.insert(func.CallOp(name, values, f.function_type.outputs.data))
    n_results = len(call.results) - len(updated)
    _write_back(tr, callee, [args[k] for k in updated], updated, call.results[n_results:], args, node)
    results = tuple(View.whole(r) for r in call.results[:n_results])
    return results[0] if len(results) == 1 else results


def _write_back(tr, callee: JitFunction, targets: list, positions: list[int], values, args: list, node) -> None:
    """Store the callee's final value of each updated parameter into the caller's array."""
    from dfc.frontend.arrays import View

    for target, k, value in zip(targets, positions, values):
        if not (isinstance(target, View) and target.cell is not None and not target.gathers):
            continue  # a temporary: NumPy drops its update too
        shared = [j for j, a in enumerate(args) if j != k and isinstance(a, View) and a.cell is target.cell]
        if shared:
            raise tr.fail(
                f"{callee.fn.__qualname__} updates its argument {k} in place, and argument {shared[0]} is the same "
                "array (or a view of it): calls whose arguments share memory with an updated one are not supported",
                node)
        tr.write(target, View.whole(value), node)


def jit(fn: Any = None, *, threads: int | None = None) -> Any:
    """Compile `fn` (a decorator; `@dfc.jit(threads=2)` also works)."""
    if fn is None:
        return lambda f: JitFunction(f, threads)
    if isinstance(fn, JitFunction):
        return fn
    return JitFunction(fn, threads)
