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
`FrontendError` there. This module holds the function and its statements
(assignment, augmented assignment, binding names); loops and branches are the
`ControlFlow` mixin (control_flow.py), subscripts the `Indexing` mixin
(indexing.py), expressions, operators and calls the `Expressions` mixin
(expressions.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.frontend import complex_calls, complex_values, dynamic_values, masks, scatter
from dfc.frontend.affine import Affine
from dfc.frontend.aliases import alias_cells
from dfc.frontend.arrays import Cell, Const, Expr, View, is_float, tensor_type
from dfc.frontend.complex_values import Complex
from dfc.frontend.control_flow import ControlFlow
from dfc.frontend.emit import Emitter
from dfc.frontend.errors import FrontendError
from dfc.frontend.expressions import BINOPS, Expressions, describe
from dfc.frontend.indexing import Indexing
from dfc.frontend.jumps import lower_returns, returns_in
from dfc.frontend.liveness import Future, read_later
from dfc.frontend.scopes import IDENTIFIER, Scope, Source, cell_serial
from dfc.frontend.shape_assignment import assign_shape
from dfc.frontend.weak_ints import check_python_int


class Translator(ControlFlow, Indexing, Expressions):
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
        self.views: list[list[int]] = []  # per result: the parameters whose memory NumPy's result may view
        self.complex_results: list[bool] = []  # per result: a complex value (returned packed, complex_values.py)
        self.param_cells: set[Cell] = set()
        self.future: list[Future] = []  # the statements still to run (liveness.py)
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
        self.future.append(Future([last] if last is not None else []))
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
        values = [dynamic_values.masked(self, v, node) if isinstance(v, masks.Masked) else v for v in values]
        exprs = [v if isinstance(v, Complex) else self.as_expr(v, node) for v in values]
        self.complex_results = [isinstance(e, Complex) for e in exprs]
        self.aliases = [params.get(e.cell) if isinstance(e, View) and e.cell is not None and e.is_whole or
                        isinstance(e, Complex) and complex_values.is_packed_whole(e) else None for e in exprs]
        self.views = [sorted({params[c] for c in alias_cells(e) if c in params}) for e in exprs]
        return [complex_values.store(self, e, node) if isinstance(e, Complex) else self.em.materialize(e)
                for e in exprs]

    # -- statements ---------------------------------------------------------------------

    def statements(self, body: list[ast.stmt]) -> None:
        for k, stmt in enumerate(body):
            self.future.append(Future(body[k + 1:]))
            try:
                self.statement(stmt)
            finally:
                self.future.pop()

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
            raise self.fail(f"unsupported statement: {describe(node)}", node)
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
        elif isinstance(target, ast.Attribute) and target.attr == "shape":
            assign_shape(self, target, value)
        else:
            raise self.fail(f"cannot assign to {describe(target)}", target)

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

    def _read_later(self, cell: Cell) -> bool:
        """Whether `cell` may be read after this statement: a parameter (the caller sees it), or a name holding it
        that is read before it is rebound."""
        return cell in self.param_cells or any(isinstance(v, View | Complex) and v.cell is cell and
                                               read_later(self.future, n) for n, v in self.env.items())

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

    def check_writable(self, view: View, node: ast.AST) -> None:
        """Refuse an update through `view` that would leave another name's value stale (or a temporary's)."""
        if view.cell is None:
            raise self.fail("cannot assign into a temporary array (only into named arrays and their views)", node)
        if any(self._read_later(other) for other in view.cell.shares):
            raise self.fail(
                "this array and another one are views of the same memory in NumPy (a reshape of a named array), or may be (an "
                "array chosen by a run-time condition, carried by a loop or returned by a call), but "
                "separate arrays here: updating one would leave the other stale; copy the reshaped array first "
                "(`.reshape(...).copy()`)", node)

    def write(self, view: View, value: Expr, node: ast.AST) -> None:
        """`view = value` (a scatter where the view has gathers, `scatter.py`)."""
        self.check_writable(view, node)
        assert view.cell is not None
        check_python_int(self, value, view.dtype, node)  # `a[0] = 300` of an int8 array: NumPy's OverflowError
        current = View(view.cell.value, view.shape, view.offset, view.coef, view.dtype, view.cell, view.gathers)
        self.update(view.cell, scatter.replace(self, current, value, node) if view.gathers
                    else self.em.assign(current, value))

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
        view = self.index(base, parts, target, keep_cell=True, scatter=True)
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
            snapshot = View(view.cell.value, view.shape, view.offset, view.coef, view.dtype,  # type: ignore[union-attr]
                            gathers=view.gathers)  # x[idx] += v reads x[idx] before any write (NumPy's buffering)
            new = self.as_expr(self.binop(op, snapshot, rhs, node), node)
            if is_float(new.dtype) and not is_float(snapshot.dtype):
                raise self.fail(f"cannot cast the {new.dtype} result into an {snapshot.dtype} array in place "
                                "(NumPy's 'same_kind' casting)", node)
            self.write(view, new, node)
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
            raise self.fail(f"cannot assign to {describe(node.target)}", node)


def _position(params: list[tuple[str, Any]], k: int) -> int:
    """The block argument of Python parameter `k` (static parameters have none)."""
    return sum(1 for p in params[:k] if p[0] != "static")
