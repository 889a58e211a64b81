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
new int value compiles a new specialisation); defaults and keywords bind as
in Python. A function may update its array arguments and return nothing:
called from Python, the compiled function also returns their final values,
which the wrapper copies into the caller's arrays; called from another jitted
function, the caller stores them where the arguments live. Plain Python
helpers called from a jitted function are compiled with it (`helper`).
docs/frontend.md lists the supported subset and how each construct maps to IR.
"""

from __future__ import annotations

import ast
import functools
import html
import inspect
import sys
import textwrap
import types
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from dfc import config
from dfc.dialects.diagnostics import CompileError
from dfc.errors import user_errors
from dfc.frontend import complex_values
from dfc.frontend.complex_values import Complex
from dfc.frontend.dtypes import ArrayType, dtype_from_numpy, f16, f32, f64, i32, i64
from dfc.frontend.errors import FrontendError
from dfc.frontend.unsigned import result_views, signless_types
from dfc.frontend.weak_ints import out_of_bounds
from dfc.function import view_results
from dfc.importers.onnx_unsigned import signless

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
        self._modules: dict[tuple, tuple[ModuleOp, str, list[int], list[int | None]]] = {}
        self._outputs: dict[tuple, list] = {}  # per module key: its function's result types, unsigned ones kept
        self._calls: dict[tuple, tuple[Any, list[int], list[int | None]]] = {}
        self._fast: dict[tuple, _FastCall] = {}
        self._translating: set[tuple] = set()
        self._complex: dict[tuple, list[bool]] = {}  # per module key: which results are complex (returned packed)
        self._views: dict[tuple, list[list[int]]] = {}  # per module key: the parameters each result may view
        self._signature = inspect.signature(fn)
        plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self._positional = sum(1 for p in self._signature.parameters.values() if p.kind in plain)
        if self._positional != len(self._signature.parameters):
            self._positional = -1  # keyword-only or variadic parameters: always bind

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
        out = []
        for p in self._signature.parameters.values():
            a = p.annotation
            if isinstance(a, str):
                try:
                    a = eval(a, self.fn.__globals__)  # noqa: S307 - the user's own annotation
                except Exception:
                    a = inspect.Parameter.empty
            out.append(a if isinstance(a, ArrayType) else None)
        return out

    def bind(self, args: tuple, kwargs: dict) -> list[Any]:
        """The value of each parameter, in order: `args` and `kwargs` bound as Python binds
        them (its `TypeError` for a bad call), defaults filled in."""
        if not kwargs and len(args) == self._positional:
            return list(args)  # the common call: no binding to do
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"{self.fn.__qualname__}(): {err}") from None
        bound.apply_defaults()
        values = []
        for name, value in bound.arguments.items():
            kind = self._signature.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(f"{self.fn.__qualname__}(): *args and **kwargs parameters are not supported by dfc.jit")
            values.append(value)
        return values

    def params(self, args: list) -> tuple[list[tuple], list[Any], list[int]]:
        """The translation parameters, the IR arguments and each parameter's IR
        position (-1 for compile-time ones), for the bound parameter values `args`."""
        annotations = self._annotations()
        sizes: dict[str, int] = {}
        params: list[tuple] = []
        ir_args: list[Any] = []
        positions: list[int] = []
        for k, (a, ann) in enumerate(zip(args, annotations)):
            if ann is not None and ann.shape is None:
                params.append(("float", ann.dtype))
                ir_args.append(self._scalar(k, a, ann))
            elif ann is None and isinstance(a, np.ndarray | complex | np.complexfloating) and np.asarray(a).dtype in (
                    np.complex64, np.complex128):  # packed (*shape, 2) float view (complex_values.py)
                part = "f32" if np.asarray(a).dtype == np.complex64 else "f64"
                kind = "weak" if isinstance(a, complex) else "array" if isinstance(a, np.ndarray) else "scalar"
                params.append(("complex", part, np.shape(a), kind))
                ir_args.append(_packed(a))
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
                    raise self._dtype_error(k, array.dtype)
                if array.ndim == 0 and dtype == "i1":
                    params.append(("static", array.item(), "0-d array"))  # a constant that must not be updated
                elif array.ndim == 0 and not dtype.startswith("f"):  # strongly typed, like a NumPy integer
                    params.append(("static", array.item(), "0-d array", array.dtype.name))
                else:  # a 0-d float array too: strongly typed (NEP 50), updated in place by `s += 1`
                    params.append(("array", dtype, array.shape))
                if params[-1][0] == "static":
                    positions.append(-1)
                    continue
                ir_args.append(signless(array) if array.dtype.kind == "u" else array)
            elif isinstance(a, np.integer):  # strongly typed (NEP 50): its dtype is part of the signature
                params.append(("static", int(a), "scalar", a.dtype.name))
                positions.append(-1)
                continue
            elif isinstance(a, bool | int):
                params.append(("static", int(a) if not isinstance(a, bool) else a))
                positions.append(-1)
                continue
            elif isinstance(a, float | np.floating):
                dtype = "f64" if isinstance(a, float) else dtype_from_numpy(np.asarray(a).dtype)
                if dtype is None:
                    raise self._dtype_error(k, np.asarray(a).dtype)
                params.append(("float", dtype))
                ir_args.append(np.asarray(a, np.dtype({"f16": "float16", "f32": "float32", "f64": "float64"}[dtype])))
            elif isinstance(a, complex | np.complexfloating):
                raise self._dtype_error(k, np.asarray(a).dtype)
            else:
                raise TypeError(f"argument {k} of {self.fn.__qualname__}: expected an array or a number, got {type(a).__name__}")
            positions.append(len(ir_args) - 1)
        return params, ir_args, positions

    def _scalar(self, k: int, a: Any, ann: ArrayType) -> np.ndarray:
        """The 0-d array passed for a scalar-annotated parameter (`n: dfc.i32`). An integer-annotated one takes
        a 0-d integer (or bool) value in the dtype's range, checked at every call: an out-of-range Python int is
        NumPy's OverflowError and a float would be truncated, both refused at the parameter (`FrontendError`)."""
        if ann.dtype[0] not in "iu" or ann.dtype == "i1":
            return np.asarray(a, ann.numpy)
        value = np.asarray(a)
        name = list(self._signature.parameters)[k]
        where = f"argument '{name}' of {self.fn.__qualname__} (annotated {ann!r})"
        if value.ndim or value.dtype.kind not in "biu":
            raise self._located(k, f"{where} takes an integer, got {a!r} (a float would be truncated: convert it)")
        if message := out_of_bounds(int(value), ann.dtype):
            raise self._located(k, f"{where}: {message}")
        return value.astype(ann.numpy)

    def _dtype_error(self, k: int, dtype: np.dtype) -> FrontendError:
        """The refusal of an argument's dtype, located at its parameter in the `def` (a `FrontendError`)."""
        name = list(self._signature.parameters)[k]
        where = f"argument '{name}' of {self.fn.__qualname__} has dtype {dtype}"
        if dtype.kind == "c":
            why = "extended-precision complex numbers are not supported: convert it, e.g. .astype(np.complex128)"
        else:
            return self._located(k, f"{where}, not a supported dtype (bool, int8-int64, uint8-uint64, float16, "
                                    "float32, float64)")
        return self._located(k, f"{where}: {why}")

    def _located(self, k: int, message: str) -> FrontendError:
        """A `FrontendError` at parameter `k` in the `def` (unlocated when the source cannot be read)."""
        name = list(self._signature.parameters)[k]
        try:
            src = self.source()
            node = next(a for a in (*src.tree.args.posonlyargs, *src.tree.args.args, *src.tree.args.kwonlyargs)
                        if a.arg == name)
            location = f"{src.filename}:{src.line_offset + node.lineno}:{src.col_offset + node.col_offset + 1}"
        except (FrontendError, StopIteration):
            location = None
        return FrontendError(message, location)

    def module_for(self, params: list[tuple], writeback: bool = False) -> tuple[ModuleOp, str, list[int], list[int | None]]:
        """The module (this function and its callees) for one signature, the
        function's name, the Python parameters it updates in place, and per result
        the parameter it returns as it is (`return A`; else None).

        With `writeback` (a call from another jitted function) the function also
        returns the final value of each updated array parameter, after its own
        results, so that the caller can store them where NumPy would have."""
        key = (*params, ("writeback",)) if writeback else tuple(params)
        if key in self._translating:
            raise FrontendError(f"{self.fn.__qualname__} calls itself with the same signature: recursion is not "
                                "supported in compiled functions (write it as a loop)")
        if key not in self._modules:
            from dfc.frontend.translate import Translator

            module = ModuleOp([])
            name = _unique(self.fn, key)

            def add(f: func.FuncOp) -> None:
                names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
                if f.sym_name.data not in names:
                    module.body.block.add_op(f)

            translator = Translator(self.source(), name, add, _call_jitted)
            self._translating.add(key)
            try:
                f = translator.function(list(params), writeback)
            except CompileError:
                raise
            except Exception as err:  # a frontend bug: still located at the user's statement
                raise translator.fail(f"internal error translating this statement: {type(err).__name__}: {err}") from err
            finally:
                self._translating.discard(key)
            self._outputs[key] = list(f.function_type.outputs.data)
            signless_types(f)
            module.body.block.add_op(f)
            _verify(module, self.source())
            self._modules[key] = (module, name, translator.updated, translator.aliases)
            self._complex[key] = translator.complex_results
            self._views[key] = translator.views
        return self._modules[key]

    @user_errors
    def specialize(self, *args: Any, **kwargs: Any):
        """(the `Function` for these arguments, its arguments, IR position of each
        parameter). The Function has value semantics: it does not update its arguments."""
        params, ir_args, positions = self.params(self.bind(args, kwargs))
        return self._function(params), ir_args, positions

    def _function(self, params: list[tuple]):
        from dfc.function import Function

        key = tuple(params)
        if key not in self._specialisations:
            module, name, _, _ = self.module_for(params)

            self._specialisations[key] = Function(module, name, self.threads, result_views(self._outputs[key]))
            if any(p[0] == "complex" for p in params) or any(self._complex[key]):
                self._specialisations[key].complex_signature = True  # transforms refuse it (no complex gradients)
        return self._specialisations[key]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the function; the arrays it updates in place are updated in the caller's
        arguments too (their final values come back as extra results and are copied in).

        The common call (positional arrays of rank 1 or more and Python floats)
        takes a fast path: the arguments' (dtype, shape) pairs key a cache of
        what the first such call prepared, so that binding, `params` and the
        annotation checks (which depend only on dtypes and shapes) are not
        redone; the engine still checks every argument (dtype, shape,
        contiguity) and the in-place checks of `_check_target` still run."""
        try:
            if not kwargs and len(args) == self._positional:
                key = _fast_key(args)
                fast = self._fast.get(key) if key is not None else None
                if fast is not None and fast.function._engine is not None:
                    return fast.call(args)
            else:
                key = None
            return self._call(args, kwargs, key)
        except CompileError as err:
            err.with_source()
            if config.TRACEBACK.value():
                raise
            raise err.with_traceback(None) from None

    def _call(self, args: tuple, kwargs: dict, fast_key: tuple | None) -> Any:
        """`__call__`'s full path; with `fast_key`, it also prepares the fast path of that key."""
        values = self.bind(args, kwargs)
        params, ir_args, positions = self.params(values)
        key = tuple(params)
        if key not in self._calls:
            self._calls[key] = self._entry(params)
        fn, updated, aliases = self._calls[key]
        complex_results = self._complex[(*key, ("writeback",)) if updated else key]
        if any(complex_results) or any(p[0] == "complex" for p in params):  # complex values cross packed
            out = self._run(fn, len(fn.outputs), updated, aliases, values, ir_args, positions)
            if not complex_results:
                return None
            results = out if len(complex_results) != 1 else (out,)
            results = tuple(_unpacked(r) if c and not (k is not None and r is values[k]) else r
                            for r, c, k in zip(results, complex_results, aliases))
            return _python_results(results if len(results) != 1 else results[0], len(results))
        if fast_key is not None and positions == list(range(len(args))) and all(
                v is a or type(a) is float and v.dtype == np.float64 or type(a) is np.ndarray and a.dtype.kind == "u"
                for a, v in zip(args, ir_args)):
            # each IR argument is the argument itself (or a float's 0-d float64 array, an unsigned array's signless
            # view), as the fast path passes them
            result = _python_results(fn(*ir_args), len(fn.outputs)) if not updated and all(
                k is None for k in aliases) else self._run(fn, len(fn.outputs), updated, aliases, values, ir_args,
                                                          positions)
            self._fast[fast_key] = _FastCall(self, fn, updated, aliases, any(type(a) is float for a in args),
                                             _signless_dtypes(args, ir_args))
            return result
        if not updated and not any(k is not None for k in aliases):
            return _python_results(fn(*ir_args), len(fn.outputs))
        return self._run(fn, len(fn.outputs), updated, aliases, values, ir_args, positions)

    def _run(self, fn, n_outputs: int, updated: list[int], aliases: list[int | None], values: list,
             ir_args: list, positions: list[int]) -> Any:
        """Call `fn` (`n_outputs` results) for a function that updates arguments in place or returns
        one: copy the updated values into the caller's arrays, return the aliased arrays themselves."""
        targets = [ir_args[positions[k]] for k in updated]
        for k, target in zip(updated, targets):
            _check_target(self, k, values, target, [a for j, a in enumerate(ir_args) if j != positions[k]])
        out = fn(*ir_args)
        out = out if n_outputs != 1 else (out,)
        n = n_outputs - len(updated)
        for target, value in zip(targets, out[n:]):
            np.copyto(target, value)
        results = [values[k] if k is not None and isinstance(values[k], np.ndarray) else r  # `return A`: A itself
                   for r, k in zip(out[:n], aliases)]
        return _python_results(tuple(results) if n != 1 else results[0], n)

    def _entry(self, params: list[tuple]) -> tuple[Any, list[int], list[int | None]]:
        """What a call from Python runs for `params`: the Function, the parameters
        it updates (the Function then returns their final values last) and its results' aliases."""
        from dfc.function import Function

        _, _, updated, aliases = self.module_for(params)
        if not updated:
            return self._function(params), [], aliases
        module, name, updated, aliases = self.module_for(params, writeback=True)
        views = result_views(self._outputs[(*params, ("writeback",))])
        return Function(module, name, self.threads, views), updated, aliases

    @user_errors
    def mlir(self, *args: Any, stage: str = "frontend", **kwargs: Any) -> str:
        """The module for these arguments at `stage` ("frontend", "autodiff", "lowered")."""
        fn, _, _ = self.specialize(*args, **kwargs)
        return fn.mlir(stage)


def _fast_key(args: tuple) -> tuple | None:
    """The fast path's key of positional `args`: (dtype, shape) per array of rank 1
    or more, `float` per Python float; None when any other value is passed (an int
    is a compile-time constant, a 0-d array may be one: those take the full path)."""
    key = []
    for a in args:
        if type(a) is np.ndarray and a.shape:
            key.append((a.dtype, a.shape))
        elif type(a) is float:
            key.append(float)
        else:
            return None
    return tuple(key)


class _FastCall:
    """What a fast-path call runs: the Function of one specialisation, called with the
    arguments themselves (a Python float as a 0-d float64 array, an unsigned array as the signed
    integers of its bits: their IR arguments)."""

    __slots__ = ("jit", "function", "name", "n_outputs", "simple", "updated", "aliases", "floats", "unsigned",
                 "positions")

    def __init__(self, jit: JitFunction, function: Any, updated: list[int], aliases: list[int | None], floats: bool,
                 unsigned: tuple[np.dtype | None, ...] | None):
        """`unsigned`: per argument, the signed dtype an unsigned array is viewed as (None: as it is), or None
        when no argument is unsigned."""
        self.jit, self.function, self.name = jit, function, function.name
        self.n_outputs = len(function.outputs)
        self.simple = not updated and all(k is None for k in aliases)
        self.updated, self.aliases, self.floats, self.unsigned = updated, aliases, floats, unsigned
        self.positions = range(len(function.inputs))

    def call(self, args: tuple) -> Any:
        ir_args = [np.array(a) if type(a) is float else a for a in args] if self.floats else args
        if self.unsigned:
            ir_args = [a if d is None else a.view(d) for a, d in zip(ir_args, self.unsigned)]
        if not self.simple:
            return self.jit._run(self.run, self.n_outputs, self.updated, self.aliases, args, ir_args, self.positions)
        return self.run(*ir_args)

    def run(self, *ir_args: Any) -> Any:
        """What `Function.__call__` does for array arguments, without its conversions."""
        out = self.function._engine.invoke(self.name, *ir_args)
        if any(self.function.result_views):
            out = view_results(out, self.function.result_views)
        n = self.n_outputs
        if n == 1:
            return out[()] if type(out) is np.ndarray and not out.shape else out
        return None if n == 0 else tuple(x[()] if type(x) is np.ndarray and not x.shape else x for x in out)


def _packed(a: Any) -> np.ndarray:
    """A complex array (or number) as the float array of shape (*shape, 2) the compiled function takes: a view
    of its memory (an in-place update written back into it updates the caller's array)."""
    if not isinstance(a, np.ndarray):
        return np.array([a.real, a.imag], np.float32 if isinstance(a, np.complex64) else np.float64)
    real = a.real
    return np.lib.stride_tricks.as_strided(real, (*a.shape, 2), (*a.strides, real.itemsize),
                                           writeable=a.flags.writeable)


def _unpacked(r: Any) -> Any:
    """A packed complex result (shape (*shape, 2)) as NumPy's complex array (a 0-d one as a NumPy scalar)."""
    z = np.ascontiguousarray(r).view(np.complex64 if r.dtype == np.float32 else np.complex128)[..., 0]
    return z[()] if not z.shape else z


def _signless_dtypes(args: tuple, ir_args: list) -> tuple[np.dtype | None, ...] | None:
    """Per positional argument, the dtype of its IR argument where that is the signless view of an unsigned
    array (None elsewhere); None when no argument is one."""
    dtypes = tuple(v.dtype if type(a) is np.ndarray and a.dtype.kind == "u" else None for a, v in zip(args, ir_args))
    return dtypes if any(d is not None for d in dtypes) else None


def _python_results(out: Any, n: int) -> Any:
    """A Function's results as the Python function returns them: None for none."""
    return None if n == 0 else out


def _check_target(jf: JitFunction, k: int, values: list, target: np.ndarray, others: list) -> None:
    """Refuse an in-place update the caller could not see as NumPy would show it."""
    def where() -> str:
        return f"{jf.fn.__qualname__} updates its argument '{list(jf._signature.parameters)[k]}' in place"

    if not isinstance(values[k], np.ndarray):
        raise TypeError(f"{where()}, but a {type(values[k]).__name__} was passed: pass a NumPy array")
    if not target.flags.writeable:
        raise ValueError(f"{where()}, but the array passed is read-only")
    if any(isinstance(a, np.ndarray) and np.may_share_memory(target, a) and np.shares_memory(target, a) for a in others):
        raise ValueError(f"{where()}, and another argument shares its memory: calls whose arguments share memory "
                         "with an updated one are not supported")


def _verify(module: ModuleOp, source) -> None:
    from xdsl.utils.exceptions import VerifyException

    try:
        module.verify()
    except VerifyException as err:
        raise FrontendError(f"internal error: the frontend built invalid IR: {err}",
                            f"{source.filename}:{source.line_offset + source.tree.lineno}:1") from err


def _call_jitted(tr, callee: JitFunction, args: list, kwargs: dict, node, checkpoint: str | None = None) -> Any:
    """`callee(*args)` inside a function being translated: a `func.call`, carrying
    `{df.checkpoint = checkpoint}` when that policy is given (`dfc.checkpoint`).

    An array argument the callee updates in place is updated in the caller too
    when it names memory there (a named array or a basic view of one), as in
    NumPy; an update of a temporary (`np.sqrt(Y)`, a fancy-indexed copy) is not
    visible, as in NumPy."""
    from xdsl.dialects.builtin import StringAttr, TensorType

    from dfc.frontend.affine import Affine
    from dfc.frontend.arrays import Const, View, dtype_name
    from dfc.passes.autodiff.checkpoint import ATTRIBUTE

    try:
        callee.source()
    except FrontendError as err:
        raise (err if err.location is not None else tr.fail(err.message, node)) from None
    try:
        bound = callee._signature.bind(*args, **kwargs)
    except TypeError as err:
        raise tr.fail(f"{callee.fn.__qualname__}(): {err}", node) from None
    bound.apply_defaults()
    args = list(bound.arguments.values())
    params, values = [], []
    for k, a in enumerate(args):
        if isinstance(a, View) and a.cell is not None and not a.gathers:
            # the array as it is at the call (an earlier argument's call may have updated it)
            args[k] = a = View(a.cell.value, a.shape, a.offset, a.coef, a.dtype, a.cell)
        if isinstance(a, Affine) and a.static is not None:
            params.append(("static", a.static))
        elif isinstance(a, bool):
            params.append(("static", a))
        elif isinstance(a, Complex | complex | np.complexfloating):  # passed packed, as from Python
            a = args[k] = complex_values.lift(tr, a, node)
            v = complex_values.store(tr, a, node)
            params.append(("complex", dtype_name(v.type.element_type), tuple(v.type.get_shape())[:-1],
                           "weak" if a.weak else "array"))
            values.append(v)
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
    try:
        module, name, updated, aliases = callee.module_for(params, writeback=True)
    except FrontendError as err:
        raise (err if err.location is not None else tr.fail(err.message, node)) from None
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            tr.add_function(op.clone())
    call = tr.b.insert(func.CallOp(name, values, callee._outputs[(*params, ("writeback",))]))  # unsigned types kept
    if checkpoint is not None:
        call.attributes[ATTRIBUTE] = StringAttr(checkpoint)
    n_results = len(call.results) - len(updated)
    _write_back(tr, callee, [args[k] for k in updated], updated, call.results[n_results:], args, node)
    complex_results = callee._complex[(*params, ("writeback",))]
    views = callee._views[(*params, ("writeback",))]
    results = tuple(_returned(tr, args[k] if k is not None else None, r, c, [args[j] for j in v])
                    for r, k, c, v in zip(call.results[:n_results], aliases, complex_results, views))
    return results[0] if len(results) == 1 else (results or None)


def _returned(tr, argument: Any, value, is_complex: bool = False, viewed: list | None = None) -> Any:
    """A result of a call: the caller's array itself when the callee returns one
    of its arguments as it is (`return A`) and that argument names the caller's memory;
    a complex result (packed) as a `Complex`. A result NumPy gives as a view of arguments (`viewed`:
    `return a[1:]`, `a.reshape(...)`) shares their cells (`aliases.py`)."""
    from dfc.frontend.aliases import alias_cells, share
    from dfc.frontend.arrays import View

    if isinstance(argument, View | Complex) and argument.cell is not None and not getattr(argument, "gathers", None):
        return tr.as_expr(argument, tr.node) if isinstance(argument, View) else argument
    cells = [c for a in viewed or [] for c in alias_cells(a)]
    if is_complex:
        return complex_values.unpacked(value, share(tr.new_cell(value), cells))
    return View.whole(value, share(tr.new_cell(value), cells)) if cells else View.whole(value)


def _write_back(tr, callee: JitFunction, targets: list, positions: list[int], values, args: list, node) -> None:
    """Store the callee's final value of each updated parameter into the caller's array."""
    from dfc.frontend.arrays import View

    for target, k, value in zip(targets, positions, values):
        if isinstance(target, Complex) and target.cell is not None:
            if any(j != k and getattr(a, "cell", None) is target.cell for j, a in enumerate(args)):
                raise tr.fail(f"{callee.fn.__qualname__} updates its argument {k} in place, and another argument is "
                              "the same complex array (or a view of it): not supported", node)
            complex_values.write(tr, target, complex_values.unpacked(value), node)
            continue
        if not (isinstance(target, View) and target.cell is not None and not target.gathers):
            continue  # a temporary: NumPy drops its update too
        shared = [j for j, a in enumerate(args) if j != k and isinstance(a, View) and a.cell is target.cell]
        if shared:
            raise tr.fail(
                f"{callee.fn.__qualname__} updates its argument {k} in place, and argument {shared[0]} is the same "
                "array (or a view of it): calls whose arguments share memory with an updated one are not supported",
                node)
        tr.write(target, View.whole(value), node)


_LIBRARIES = {"numpy", "scipy", "dfc", *sys.stdlib_module_names}


def helper(fn: types.FunctionType) -> JitFunction | None:
    """The `JitFunction` compiling a plain Python function called from a jitted
    one (cached on the function object, so it lives as long as the function), or
    None for a library's function (NumPy's, the standard library's: only the
    frontend's own translations of those apply).

    A lambda or a decorated function (`__wrapped__`: its source is not what it
    runs) is a `FrontendError`, located by the caller at the call."""
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if module in _LIBRARIES:
        return None
    if fn.__name__ == "<lambda>":
        raise FrontendError(f"a lambda ({fn.__qualname__}) cannot be compiled: define it with `def`")
    if hasattr(fn, "__wrapped__"):
        raise FrontendError(f"{fn.__qualname__} is wrapped by a decorator, whose code dfc cannot compile: call "
                            "the undecorated function, or decorate it with @dfc.jit")
    if "_dfc_helper" not in fn.__dict__:
        fn.__dict__["_dfc_helper"] = JitFunction(fn)
    return fn.__dict__["_dfc_helper"]


def jit(fn: Any = None, *, threads: int | None = None) -> Any:
    """Compile `fn` (a decorator; `@dfc.jit(threads=2)` also works)."""
    if fn is None:
        return lambda f: JitFunction(f, threads)
    if isinstance(fn, JitFunction):
        return fn
    return JitFunction(fn, threads)
