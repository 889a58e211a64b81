"""The Python AST of one function to a `func.func` on tensors (nn + df + scf).

Names hold lazy arrays (`arrays.py`), integers (`Affine`) or Python objects.
A named array lives in a `Cell`; slice assignment and augmented assignment
replace the cell's value by a `df.map` whose output starts as the old value
(value semantics; `bufferize` turns it into an in-place write), so every name
and view of that array sees the update, as in NumPy. `for i in range(...)`
becomes `scf.for`: the arrays a loop updates and the names it rebinds are its
`iter_args` (found by translating the body; a second translation adds what the
first one discovered). `if` on a run-time condition becomes `scf.if` yielding
what either branch changed. Every op carries the `file:line:col` of the
Python statement it comes from; anything outside the subset raises
`FrontendError` there. Loops and branches are the `ControlFlow` mixin
(control_flow.py), subscripts the `Indexing` mixin (indexing.py).
"""

from __future__ import annotations

import ast
import builtins
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    StringAttr,
    UnknownLoc,
    i1,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects.df_builders import splat
from dfc.frontend import complex_calls, complex_values, masks, weak_ints
from dfc.frontend.affine import Affine, opaque
from dfc.frontend.arrays import (
    EXACT_FLOAT,
    Cell,
    Const,
    Expr,
    Index,
    Op,
    View,
    is_float,
    result_dtype,
    tensor_type,
)
from dfc.frontend.complex_values import Complex
from dfc.frontend.control_flow import ControlFlow
from dfc.frontend.emit import Emitter
from dfc.frontend.errors import FrontendError
from dfc.frontend.indexing import Indexing, broadcast
from dfc.frontend.jumps import lower_returns, returns_in
from dfc.frontend.numpy_calls import array_attribute, call
from dfc.frontend.numpy_linalg import matmul
from dfc.frontend.numpy_ufuncs import invert
from dfc.frontend.scopes import IDENTIFIER, Cond, Scope, Source, Undefined, cell_serial

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.MatMult: "matmul",
          ast.LShift: "lshift", ast.RShift: "rshift"}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PY_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}


class Translator(ControlFlow, Indexing):
    """Translates one `Source` for one signature into `func.func @name`."""

    def __init__(self, source: Source, name: str, module_add: Callable[[func.FuncOp], None], callee: Callable):
        self.src = source
        self.name = name
        self.add_function = module_add
        self.callee = callee
        self.env: dict[str, Any] = {}
        self.node: ast.AST = source.tree
        self.scopes: list[Scope] = []
        self.default_float = "f64"
        self.updated: list[int] = []  # the Python parameters the function updates in place
        self.aliases: list[int | None] = []  # per result: the parameter it is (`return A`), as NumPy returns it
        self.complex_results: list[bool] = []  # per result: a complex value (returned packed, complex_values.py)
        self.param_cells: set[Cell] = set()
        self.constant_arrays: set[str] = set()  # parameters that are 0-d int arrays, compiled as constants
        self.runtime_ints: dict[tuple, Affine] = {}  # Indexing's integers read from data, slice bounds of them
        self.data_symbols: set[SSAValue] = set()  # the index symbols of integers read from data
        self.loop_ranges: dict[SSAValue, tuple[Affine, Affine]] = {}  # loop variable: its first and last value
        self.b: Builder
        self.em: Emitter

    # -- errors and locations ---------------------------------------------------------

    def loc(self, node: ast.AST) -> tuple[int, int]:
        return getattr(node, "lineno", 1) + self.src.line_offset, getattr(node, "col_offset", 0) + self.src.col_offset + 1

    def fail(self, message: str, node: ast.AST | None = None) -> FrontendError:
        line, col = self.loc(node or self.node)
        return FrontendError(message, f"{self.src.filename}:{line}:{col}")

    def _locate(self, root: Operation, node: ast.AST) -> None:
        line, col = self.loc(node)
        loc = FileLineColLoc(StringAttr(self.src.filename), IntAttr(line), IntAttr(col))
        for op in root.walk():
            if isinstance(op.location, UnknownLoc):
                op.location = loc

    # -- the function -------------------------------------------------------------------

    def function(self, params: list[tuple[str, Any]], writeback: bool = False) -> func.FuncOp:
        """`params`: per Python parameter ('array', dtype, shape) | ('float', dtype) | ('static', value)
        | ('static', value, '0-d array' | 'scalar', numpy dtype name) (a 0-d integer array, a constant that may
        not be updated in place, or a NumPy integer: both strongly typed, NEP 50) | ('static', value, '0-d array')
        (a 0-d bool array).

        Sets `updated` to the array parameters updated in place; with `writeback`
        the function returns their final values after its own results."""
        tree = self.src.tree
        names = [a.arg for a in (*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs)]
        if tree.args.vararg or tree.args.kwarg:
            raise self.fail("*args and **kwargs parameters are not supported", tree)
        floats = [p[1] for p in params if p[0] in ("array", "complex") and is_float(p[1]) and p[-1] != "weak"]
        self.default_float = max(floats, key=lambda d: int(d[1:])) if floats else "f64"
        types = []
        for p in params:
            if p[0] == "array":
                types.append(tensor_type(p[1], list(p[2])))
            elif p[0] == "complex":  # packed: (*shape, 2), complex_values.py
                types.append(tensor_type(p[1], [*p[2], 2]))
            elif p[0] == "float":
                types.append(tensor_type(p[1], []))
        block = Block(arg_types=types)
        self.b = Builder(InsertPoint.at_end(block))
        self.em = Emitter(self.b, self.default_float, lambda m: self.fail(m))
        args = iter(block.args)
        cells: dict[int, Cell] = {}
        for k, (name, p) in enumerate(zip(names, params)):
            if p[0] == "static":
                if len(p) > 3:  # a NumPy integer (or 0-d integer array): strongly typed in arithmetic
                    self.env[name] = np.dtype(p[3]).type(p[1])
                else:
                    self.env[name] = Affine(p[1]) if isinstance(p[1], int) and not isinstance(p[1], bool) else p[1]
                if len(p) > 2 and p[2] == "0-d array":
                    self.constant_arrays.add(name)
                continue
            arg = next(args)
            arg.name_hint = name
            if p[0] == "complex" and p[-1] in ("weak", "scalar"):  # a number (Python's: weak), rebound by `z += 1`
                self.env[name] = complex_values.unpacked(arg)
                self.env[name].weak = p[-1] == "weak"
            elif p[0] in ("array", "complex"):
                cells[k] = Cell(arg)
                self.param_cells.add(cells[k])
                self.env[name] = View.whole(arg, cells[k]) if p[0] == "array" else complex_values.unpacked(arg, cells[k])
            else:
                v = View.whole(arg)
                v.weak = True  # a Python float: NumPy keeps the array's precision
                self.env[name] = v
        body = list(tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if any(r is not body[-1] for r in returns_in(body, into_loops=True)):
            body = lower_returns(body, lambda m, n: self.fail(m, n))  # early returns: one return at the end
        last = body[-1] if body and isinstance(body[-1], ast.Return) else None
        self.statements(body[:-1] if last is not None else body)
        results = self.returned(last, {cell: k for k, cell in cells.items()}) if last is not None else []
        self.updated = [k for k, cell in cells.items() if cell.value is not block.args[_position(params, k)]]
        if writeback:
            results += [cells[k].value for k in self.updated]
        f = func.FuncOp(self.name, (types, [r.type for r in results]), Region(block))
        self.b.insert(func.ReturnOp(*results))
        self._locate(f, last or tree)
        f.location = FileLineColLoc(StringAttr(self.src.filename), IntAttr(self.loc(tree)[0]), IntAttr(self.loc(tree)[1]))
        return f

    def returned(self, node: ast.Return, params: dict[Cell, int]) -> list[SSAValue]:
        """The values of the final `return` (none for a bare `return`); sets `aliases`."""
        self.node = node
        if node.value is None:
            return []
        value = self.expr(node.value)
        values = list(value) if isinstance(value, tuple) else [value]
        exprs = [v if isinstance(v, Complex) else self.as_expr(v, node) for v in values]
        self.complex_results = [isinstance(e, Complex) for e in exprs]
        self.aliases = [params.get(e.cell) if isinstance(e, View) and e.cell is not None and e.is_whole or
                        isinstance(e, Complex) and complex_values.is_packed_whole(e) else None for e in exprs]
        return [complex_values.store(self, e, node) if isinstance(e, Complex) else self.em.materialize(e) for e in exprs]

    # -- statements ---------------------------------------------------------------------

    def statements(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, node: ast.stmt) -> None:
        self.node = node
        start = self._mark()
        if isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, self.expr(node.value))
        elif isinstance(node, ast.AugAssign):
            self.aug_assign(node)
        elif isinstance(node, ast.For):
            self.for_loop(node)
        elif isinstance(node, ast.While):
            self.while_loop(node)
        elif isinstance(node, ast.If):
            self.if_statement(node)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            pass  # a string used as a comment
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.expr(node.value)  # evaluated for its errors; its value is unused
        elif isinstance(node, ast.Return):
            raise self.fail("return inside a loop is not supported; break out of the loop (a flag set before the "
                            "break) and return after it", node)
        else:
            raise self.fail(f"unsupported statement: {_describe(node)}", node)
        self._locate_since(start, node)

    def _mark(self) -> Operation | None:
        return self.b.insertion_point.block.last_op

    def _locate_since(self, start: Operation | None, node: ast.AST) -> None:
        block = self.b.insertion_point.block
        op = start.next_op if start is not None and start.parent is block else (block.first_op if start is None else None)
        while op is not None:
            self._locate(op, node)
            op = op.next_op

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, target)
        elif isinstance(target, ast.Tuple | ast.List):
            if not isinstance(value, tuple):
                if isinstance(value, Expr) and value.ndim >= 1 and value.shape[0].static == len(target.elts):
                    value = tuple(self.index(value, (Affine(k),), target) for k in range(len(target.elts)))
                else:
                    raise self.fail("tuple assignment needs a tuple (or a matching array) on the right", target)
            if len(value) != len(target.elts):
                raise self.fail(f"cannot unpack {len(value)} values into {len(target.elts)} names", target)
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            view = self.target_view(target)
            if isinstance(view, complex_calls.ComplexTarget):
                complex_calls.assign(self, view, value, None, target)
            elif isinstance(view, tuple):
                masks.assign(self, *view, value, None, target)
            else:
                self.write(view, self.as_expr(value, target), target)
        else:
            raise self.fail(f"cannot assign to {_describe(target)}", target)

    def bind(self, name: str, value: Any, node: ast.AST) -> None:
        if name.startswith("$ret") and isinstance(value, View) and value.cell is not None and not value.is_whole:
            value = View.whole(self.em.materialize(value))  # a returned view: its value (branches merge values)
        if isinstance(value, Expr) and not (isinstance(value, View) and value.cell is not None):
            if isinstance(value, Const) and not value.shape:
                pass  # a Python number stays one
            else:
                src = self.em.materialize(value)
                if src.name_hint is None and isinstance(src.owner, Operation) and IDENTIFIER.fullmatch(name):
                    src.name_hint = name
                if value.ndim:
                    value = View.whole(src, self.new_cell(src))
                else:
                    weak = value.weak
                    value = View.whole(src)
                    value.weak = weak
        if isinstance(value, Complex):
            value = complex_values.bind_value(self, value, name, node)
        for scope in self.scopes:
            scope.names[name] = None
        self.env[name] = value
        self.constant_arrays.discard(name)

    def _live(self, cell: Cell) -> bool:
        """Whether `cell` can still be read: a name holds it, or it is a parameter (callers see its updates)."""
        return cell in self.param_cells or any(isinstance(v, View | Complex) and v.cell is cell for v in self.env.values())

    def new_cell(self, value: SSAValue) -> Cell:
        cell = Cell(value)
        cell.serial = next(cell_serial)  # type: ignore[attr-defined]
        return cell

    def update(self, cell: Cell, value: SSAValue) -> None:
        for scope in self.scopes:
            if getattr(cell, "serial", -1) < scope.first_cell and cell not in scope.cells:
                scope.cells[cell] = None
                scope.before[cell] = cell.value
        cell.value = value

    def write(self, view: View, value: Expr, node: ast.AST) -> None:
        if view.cell is None:
            raise self.fail("cannot assign into a temporary array (only into named arrays and their views)", node)
        if any(self._live(other) for other in view.cell.shares):
            raise self.fail(
                "this array and another one are views of the same memory in NumPy (a reshape of a named array) but "
                "separate arrays here: updating one would leave the other stale; copy the reshaped array first "
                "(`.reshape(...).copy()`)", node)
        current = View(view.cell.value, view.shape, view.offset, view.coef, view.dtype, view.cell)
        self.update(view.cell, self.em.assign(current, value))

    def target_view(self, target: ast.Subscript) -> View | tuple[View, masks.Masked]:
        """The view a subscript assigns to; (the array, its masked read) for a boolean mask."""
        base = self.expr(target.value)
        if isinstance(base, Complex):
            return complex_calls.target(self, base, self.subscript(target.slice), target)
        if not isinstance(base, View) or base.cell is None:
            raise self.fail("cannot assign into a temporary array (only into named arrays and their views)", target)
        parts = self.subscript(target.slice)
        if any(masks.is_mask(p) for p in parts):
            return base, masks.split(self, base, parts, target)
        view = self.index(base, parts, target, keep_cell=True)
        assert isinstance(view, View)
        return view

    def aug_assign(self, node: ast.AugAssign) -> None:
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.fail(f"unsupported operator {type(node.op).__name__}", node)
        rhs = self.expr(node.value)
        if isinstance(node.target, ast.Subscript):
            view = self.target_view(node.target)
            if isinstance(view, complex_calls.ComplexTarget):
                complex_calls.assign(self, view, rhs, op, node)
                return
            if isinstance(view, tuple):
                masks.assign(self, *view, rhs, op, node)
                return
            snapshot = View(view.cell.value, view.shape, view.offset, view.coef, view.dtype)  # type: ignore[union-attr]
            self.write(view, self.as_expr(self.binop(op, snapshot, rhs, node), node), node)
        elif isinstance(node.target, ast.Name):
            if node.target.id in self.constant_arrays:
                raise self.fail(f"'{node.target.id}' is a 0-d integer array argument, compiled as a constant: updating "
                                "it in place is not supported (pass a Python int, or a 1-element array)", node)
            current = self.lookup(node.target.id, node.target)
            new = self.binop(op, current, rhs, node)
            if isinstance(current, Complex) and complex_calls.update_name(self, current, new, node):
                return
            if isinstance(current, View) and current.cell is not None and (current.ndim or current.cell in self.param_cells):
                if isinstance(new, Expr) and new.dtype != current.dtype and is_float(new.dtype) and not is_float(current.dtype):
                    raise self.fail(f"cannot cast the {new.dtype} result into an {current.dtype} array in place", node)
                self.write(current, self.as_expr(new, node), node)  # in place, as NumPy
            else:
                self.bind(node.target.id, new, node)
        else:
            raise self.fail(f"cannot assign to {_describe(node.target)}", node)

    # -- expressions ------------------------------------------------------------------------

    def lookup(self, name: str, node: ast.AST) -> Any:
        if name == "$undefined":  # jumps.py: the results of a return in a loop, before it runs
            return Undefined()
        if name in self.env:
            v = self.env[name]
            if isinstance(v, View) and v.cell is not None:
                return View(v.cell.value, v.shape, v.offset, v.coef, v.dtype, v.cell)
            return v
        if name in self.src.scope:
            return self.src.scope[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.fail(f"name '{name}' is not defined here", node)

    def integer(self, value: Any, node: ast.AST) -> Affine:
        if isinstance(value, Affine):
            return value
        if isinstance(value, bool | np.bool_):
            return Affine(int(value))
        if isinstance(value, int | np.integer):
            return Affine(int(value))
        if isinstance(value, Const) and not value.shape and isinstance(value.value, int | np.integer):
            return Affine(int(value.value))
        if isinstance(value, Expr) and value.ndim == 0 and value.dtype[0] in "iu" and value.dtype != "i1":
            return self.runtime_integer(value)
        raise self.fail(f"expected an integer here, got {_kind(value)}", node)

    def as_expr(self, value: Any, node: ast.AST) -> Expr:
        """`value` as an array expression; a view of a named array reads the array
        as it is now (a call in the same expression may have updated it in place)."""
        if isinstance(value, View) and value.cell is not None and value.source is not value.cell.value and not value.gathers:
            return View(value.cell.value, value.shape, value.offset, value.coef, value.dtype, value.cell)
        if isinstance(value, Expr):
            return value
        if isinstance(value, Affine):
            return Const(value.static, "i64") if value.static is not None else Index(value)
        if isinstance(value, bool | np.bool_):
            return Const(bool(value), "i1")
        if isinstance(value, int | float):
            return Const(value, "f64" if isinstance(value, float) else "i64")
        if isinstance(value, np.integer | np.floating):  # strongly typed (NEP 50)
            dtype = _np_dtype(value)
            if dtype is None:
                raise self.fail(f"a NumPy number of dtype {value.dtype} used as an array value, not a supported dtype "
                                "(bool, int8-int64, uint8-uint64, float16-float64)", node)
            return Const(value.item(), dtype, False)
        if isinstance(value, Cond):
            t = splat(self.b, tensor_type("i1", []), 0)
            return View.whole(self.b.insert(tensor.InsertOp(value.value, t, [])).result)
        if isinstance(value, np.ndarray):
            raise self.fail("NumPy arrays from outside the function are not supported; pass them as arguments", node)
        if isinstance(value, masks.Masked):
            raise self.fail(masks.SHAPE_MESSAGE.format(what="a boolean-masked array (x[m])"), node)
        if isinstance(value, Complex | complex | np.complexfloating):
            raise self.fail(complex_values.REAL_NEEDED, node)
        raise self.fail(f"expected an array or a number, got {_kind(value)}", node)

    def expr(self, node: ast.expr) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"unsupported expression: {_describe(node)}", node)
        return method(node)

    def _Constant(self, node: ast.Constant) -> Any:
        v = node.value
        if isinstance(v, bool) or v is None or isinstance(v, str) or v is Ellipsis:
            return v
        if isinstance(v, int):
            return Affine(v)
        if isinstance(v, float):
            return Const(v, "f64")
        if isinstance(v, complex):
            return complex_values.constant(v)
        raise self.fail(f"unsupported constant {v!r}", node)

    def _Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def _Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.expr(e) for e in node.elts)

    _List = _Tuple

    def _Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, Complex):
            return complex_calls.attribute(self, base, node.attr, node)
        if isinstance(base, Expr | masks.Masked):
            return array_attribute(self, base, node.attr, node)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.fail(f"{_kind(base)} has no attribute '{node.attr}'", node) from None

    def _Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        if isinstance(base, tuple):
            k = self.integer(self.expr(node.slice), node.slice)
            if k.static is None:
                raise self.fail("a tuple index must be a constant", node)
            return base[k.static]
        if base is np.mgrid or base is np.ogrid:
            from dfc.frontend.numpy_creation import grid

            return grid(self, base is np.ogrid, node.slice, node)
        if isinstance(base, masks.Masked):
            raise self.fail(masks.SHAPE_MESSAGE.format(what="a boolean-masked array (x[m])"), node)
        if isinstance(base, Complex):
            return complex_calls.subscript(self, base, self.subscript(node.slice), node)
        if not isinstance(base, Expr):
            raise self.fail(f"cannot index {_kind(base)}", node)
        parts = self.subscript(node.slice)
        if any(masks.is_mask(p) for p in parts):
            return masks.split(self, base, parts, node)
        return self.index(base, parts, node)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if isinstance(v, Complex):
                return complex_values.negate(self, v, node)
            if isinstance(v, masks.Masked):
                return masks.binop(self, "mul", v, Const(-1, "i64"), node)
            if isinstance(v, Affine):
                return -v
            if isinstance(v, float | np.integer) or isinstance(v, int) and not isinstance(v, bool):
                with np.errstate(over="ignore"):
                    return -v  # a Python number (np.inf) or NumPy integer: still a compile-time constant
            if isinstance(v, Const) and not v.shape:
                return Const(-v.value, v.dtype, v.weak)
            e = self.as_expr(v, node)
            return Op("neg", [e], e.shape, e.dtype)
        if isinstance(node.op, ast.Not):
            c = self.condition(v, node)
            if isinstance(c, bool):
                return not c
            return Cond(self.b.insert(arith.XOrIOp(c, self.b.insert(arith.ConstantOp.from_int_and_width(1, 1)).result)).result)
        if isinstance(node.op, ast.Invert):
            return invert(self, v, node)
        raise self.fail(f"unsupported operator {type(node.op).__name__}", node)

    def _BinOp(self, node: ast.BinOp) -> Any:
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.fail(f"unsupported operator {type(node.op).__name__}", node)
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: str, a: Any, b: Any, node: ast.AST) -> Any:
        if complex_values.is_complex(a) or complex_values.is_complex(b):
            if op == "matmul":
                return complex_calls.matmul(self, a, b, node)
            return complex_values.binop(self, op, a, b, node)
        if isinstance(a, masks.Masked) or isinstance(b, masks.Masked):
            return masks.binop(self, op, a, b, node)
        if op == "matmul":
            return matmul(self, self.as_expr(a, node), self.as_expr(b, node), node)
        if isinstance(a, Affine) and isinstance(b, Affine) and op not in ("div", "pow"):
            return self.int_binop(op, a, b, node)
        try:
            folded = _numpy_integer_fold(op, a, b)
        except OverflowError as err:  # a Python int out of the NumPy integer's range (NEP 50)
            raise self.fail(str(err), node) from None
        if folded is not None:
            return folded
        if _number(a) is not None and _number(b) is not None:
            x, y = _number(a), _number(b)
            value = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
                     "pow": lambda: x ** y, "floordiv": lambda: x // y, "mod": lambda: x % y}.get(op)
            if value is not None:
                r = value()
                return Affine(r) if isinstance(r, int) else Const(float(r), "f64")
        return self.elementwise(op, [self.as_expr(a, node), self.as_expr(b, node)], node)

    def int_binop(self, op: str, a: Affine, b: Affine, node: ast.AST) -> Affine:
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if a.static is not None and b.static is not None:
            x, y = a.static, b.static
            table = {"mul": x * y, "floordiv": x // y if y else None, "mod": x % y if y else None, "and": x & y,
                     "or": x | y, "xor": x ^ y, "lshift": x << y if y >= 0 else None, "rshift": x >> y if y >= 0 else None}
            if op in table and table[op] is not None:
                return Affine(table[op])
        if op == "mul":
            if a.static is not None:
                return b.scale(a.static)
            if b.static is not None:
                return a.scale(b.static)
            return opaque(self.b, arith.MuliOp, a, b)
        if op == "floordiv":
            return opaque(self.b, arith.FloorDivSIOp, a, b)
        if op == "mod":
            q = opaque(self.b, arith.FloorDivSIOp, a, b)
            return a - opaque(self.b, arith.MuliOp, q, b)
        if op in ("and", "or", "xor"):  # exact on 64-bit two's complement
            return opaque(self.b, {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}[op], a, b)
        if op in ("lshift", "rshift") and b.static is not None and 0 <= b.static < 63:  # Python's shifts by constants
            return a.scale(1 << b.static) if op == "lshift" else opaque(self.b, arith.ShRSIOp, a, b)
        raise self.fail(f"unsupported integer operation '{op}'", node)

    def elementwise(self, op: str, args: list[Expr], node: ast.AST, dtype: str | None = None, attr: object = None) -> Op:
        shape = broadcast([a.shape for a in args], lambda m: self.fail(m, node))
        if dtype is None:
            floating = op in ("div", "exp", "log", "sqrt", "tanh", "sin", "cos", "log1p", "erf")
            dtype = result_dtype(args, floating)
            small = [a.dtype for a in args if not a.weak]
            if floating and op != "div" and small and all(d in ("i8", "i16", "u8", "u16") for d in small):
                dtype = EXACT_FLOAT[max(small, key=lambda d: int(d[1:]))]  # NumPy: np.sqrt of int8 is float16
            if op in BITWISE and any(is_float(a.dtype) for a in args):
                raise self.fail(f"{BITWISE[op]} needs integer or boolean operands (NumPy refuses floats)", node)
            if op in ("lshift", "rshift") and dtype == "i1":
                dtype = "i8"  # NumPy: bool << bool is int8
            if all(a.weak for a in args) and is_float(dtype):
                dtype = self.default_float
        if op == "mod" and is_float(dtype):
            x, y = args
            return self.elementwise("sub", [x, self.elementwise("mul", [self.elementwise("floor", [self.elementwise("div", [x, y], node)], node), y], node)], node)
        if op == "floordiv" and is_float(dtype):
            return self.elementwise("floor", [self.elementwise("div", args, node)], node)
        if not is_float(dtype) and op not in INTEGER_OPS and not (op == "pow" and _natural(args[1])):
            raise self.fail(f"'{op}' on integer arrays is not supported (convert with .astype(float))", node)
        weak_ints.check_arithmetic(self, op, args, dtype, node)
        r = Op(op, args, shape, dtype, attr)
        r.weak = False
        return r

    def _Compare(self, node: ast.Compare) -> Any:
        result: Any = None
        left = self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            name = CMPOPS.get(type(op))
            if name is None:
                raise self.fail(f"unsupported comparison {type(op).__name__}", node)
            right = self.expr(comp)
            value = self.compare(name, left, right, node)
            result = value if result is None else self.logical("and", result, value, node)
            left = right
        return result

    def compare(self, name: str, a: Any, b: Any, node: ast.AST) -> Any:
        if complex_values.is_complex(a) or complex_values.is_complex(b):
            return complex_values.compare(self, name, a, b, node)
        if isinstance(a, masks.Masked) or isinstance(b, masks.Masked):
            return masks.elementwise(self, lambda tr, v, kw, n: self.compare(name, *v, n), [a, b], {}, node)
        if all(isinstance(v, Affine | int | np.integer) for v in (a, b)):
            a, b = (Affine.of(int(v) if isinstance(v, np.integer) else v) for v in (a, b))
            d = a - b
            if d.static is not None:
                return _PY_CMP[name](d.static, 0)
            return Cond(self.b.insert(arith.CmpiOp(a.emit(self.b), b.emit(self.b), _CMPI[name])).result)
        if _number(a) is not None and _number(b) is not None:
            return _PY_CMP[name](_number(a), _number(b))
        x, y = self.as_expr(a, node), self.as_expr(b, node)
        operand = result_dtype([x, y])
        if all(v.weak for v in (x, y)) and is_float(operand):
            operand = self.default_float
        decided = weak_ints.decided_compare(name, x, y, operand, x.shape if x.ndim >= y.ndim else y.shape)
        return decided or self.elementwise("compare", [x, y], node, "i1", (name, operand))

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        """`a and b`, `a or b` as conditions; a run-time `a` evaluates `b` in an `scf.if`
        (Python's short circuit: `i < n and x[i] > 0` does not read `x[n]`)."""
        is_and = isinstance(node.op, ast.And)
        first = self.expr(node.values[0])
        if len(node.values) == 1:
            return first
        rest = node.values[1] if len(node.values) == 2 else ast.copy_location(
            ast.BoolOp(op=node.op, values=node.values[1:]), node.values[1])
        if isinstance(first, Expr) and first.ndim:
            raise self.fail("'and'/'or' on arrays is ambiguous; use & and |", node)
        c = self.condition(first, node)
        if isinstance(c, bool):
            if c != is_and:  # decided: False and ..., True or ...
                return c
            second = self.condition(self.expr(rest), rest)
            return second if isinstance(second, bool) else Cond(second)
        block = Block()
        outer_b, outer_em = self.b, self.em
        self.b = Builder(InsertPoint.at_end(block))
        self.em = Emitter(self.b, self.default_float, outer_em.fail)
        try:
            v = self.condition(self.expr(rest), rest)
            if isinstance(v, bool):
                v = self.b.insert(arith.ConstantOp.from_int_and_width(int(v), 1)).result
            self.b.insert(scf.YieldOp(v))
        finally:
            self.b, self.em = outer_b, outer_em
        decided = Block()
        Builder(InsertPoint.at_end(decided)).insert(scf.YieldOp(
            Builder(InsertPoint.at_end(decided)).insert(arith.ConstantOp.from_int_and_width(int(not is_and), 1)).result))
        regions = (Region(block), Region(decided)) if is_and else (Region(decided), Region(block))
        return Cond(self.b.insert(scf.IfOp(c, [i1], *regions)).results[0])

    def logical(self, op: str, a: Any, b: Any, node: ast.AST) -> Any:
        if isinstance(a, Expr) and a.ndim or isinstance(b, Expr) and b.ndim:
            raise self.fail("'and'/'or' on arrays is ambiguous; use & and |", node)
        x, y = self.condition(a, node), self.condition(b, node)
        if isinstance(x, bool) and isinstance(y, bool):
            return x and y if op == "and" else x or y
        if isinstance(x, bool):
            return (y if x else False) if op == "and" else (True if x else y)
        if isinstance(y, bool):
            return (x if y else False) if op == "and" else (True if y else x)
        return Cond(self.b.insert((arith.AndIOp if op == "and" else arith.OrIOp)(x, y)).result)

    def _IfExp(self, node: ast.IfExp) -> Any:
        c = self.condition(self.expr(node.test), node.test)
        if isinstance(c, bool):
            return self.expr(node.body if c else node.orelse)
        x, y = self.as_expr(self.expr(node.body), node), self.as_expr(self.expr(node.orelse), node)
        return self.elementwise("where", [self.as_expr(Cond(c), node), x, y], node, result_dtype([x, y]))

    def _Call(self, node: ast.Call) -> Any:
        f = self.expr(node.func)
        if f is builtins.print:  # compiled code has no Python to print with: skipped, arguments unevaluated
            where = (self.src.filename, self.loc(node)[0])
            if where not in _WARNED:
                _WARNED.add(where)
                warnings.warn_explicit(f"print() in the compiled function {self.src.tree.name} is ignored",
                                       UserWarning, *where)
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.fail("*args and **kwargs in calls are not supported", node)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if complex_calls.takes_complex(f, args, kwargs):
            return complex_calls.call(self, f, args, kwargs, node)
        return call(self, f, args, kwargs, node)


_WARNED: set[tuple[str, int]] = set()
"""The source lines whose `print` was warned about: each warns once per process."""


def _position(params: list[tuple[str, Any]], k: int) -> int:
    """The block argument of Python parameter `k` (static parameters have none)."""
    return sum(1 for p in params[:k] if p[0] != "static")


BITWISE = {"and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}
INTEGER_OPS = {"add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "and", "or", "xor", "lshift", "rshift",
               "neg", "not",
               "compare", "where", "convert", "abs"}


def _natural(e: Expr) -> bool:
    """A constant non-negative integer exponent."""
    return isinstance(e, Const) and not e.shape and float(e.value).is_integer() and e.value >= 0


def _np_dtype(value: np.generic) -> str | None:
    """The frontend dtype of a NumPy number, None when it has none (longdouble)."""
    from dfc.frontend.dtypes import dtype_from_numpy

    return dtype_from_numpy(value.dtype)


_NUMPY_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
              "floordiv": np.floor_divide, "mod": np.remainder}


def _numpy_integer_fold(op: str, a: Any, b: Any) -> np.generic | None:
    """`a op b` for a NumPy integer and an integer constant, computed by NumPy (NEP 50's
    dtype, wraparound), so that it stays a compile-time integer; None otherwise."""
    if op not in _NUMPY_OPS or not (isinstance(a, np.integer) or isinstance(b, np.integer)):
        return None
    x, y = (v.static if isinstance(v, Affine) else v for v in (a, b))
    if not all(isinstance(v, np.integer) or type(v) is int for v in (x, y)) or (op != "div" and y == 0):
        return None
    with np.errstate(over="ignore", divide="ignore"):
        return _NUMPY_OPS[op](x, y)


def _number(v: Any) -> float | int | None:
    if isinstance(v, Affine):
        return v.static
    if isinstance(v, Const) and not v.shape and v.weak:
        return v.value  # type: ignore[return-value]
    if isinstance(v, int | float) and not isinstance(v, bool):
        return v
    return None


def _kind(value: Any) -> str:
    if isinstance(value, Expr):
        return f"an array of rank {value.ndim}"
    if isinstance(value, Affine):
        return "an integer"
    return f"a {type(value).__name__}"


def _describe(node: ast.AST) -> str:
    names = {
        ast.While: "while loop", ast.Break: "break", ast.Continue: "continue", ast.With: "with statement",
        ast.Try: "try statement", ast.Raise: "raise", ast.FunctionDef: "nested function", ast.Lambda: "lambda",
        ast.ListComp: "list comprehension", ast.GeneratorExp: "generator expression", ast.DictComp: "dict comprehension",
        ast.Dict: "dict", ast.Set: "set", ast.Global: "global statement", ast.Nonlocal: "nonlocal statement",
        ast.Delete: "del statement", ast.Assert: "assert", ast.Import: "import", ast.ImportFrom: "import",
        ast.Starred: "starred expression", ast.JoinedStr: "f-string", ast.Await: "await", ast.Yield: "yield",
        ast.ClassDef: "class definition", ast.NamedExpr: "assignment expression (:=)", ast.Match: "match statement",
    }
    return names.get(type(node), type(node).__name__)
