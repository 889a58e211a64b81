"""`for ... in range(...)` and `if` statements of the NumPy frontend: the part of
`translate.Translator` that builds `scf.for` and `scf.if` (see translate.py's
docstring for how loops find the values they carry)."""

from __future__ import annotations

import ast
import builtins
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, i1
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.frontend.affine import Affine, opaque
from dfc.frontend.arrays import Cell, Expr, View
from dfc.frontend.emit import Emitter
from dfc.frontend.scopes import IDENTIFIER, Cond, Scope, cell_serial


class ControlFlow:
    """Loops and branches, mixed into `Translator`, whose builder (`b`),
    emitter (`em`), names (`env`), scopes and expression methods they use."""


    def _range(self, node: ast.For) -> tuple[Affine, Affine, int]:
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and self.lookup("range", it.func) is builtins.range):
            raise self.fail("only `for ... in range(...)` loops are supported", it)
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.fail("range takes one to three positional arguments", it)
        args = [self.integer(self.expr(a), a) for a in it.args]
        start, stop = (Affine(0), args[0]) if len(args) == 1 else (args[0], args[1])
        step = args[2] if len(args) == 3 else Affine(1)
        if step.static is None or step.static == 0:
            raise self.fail("the step of range must be a nonzero constant", it)
        return start, stop, step.static

    def for_loop(self, node: ast.For) -> None:
        if node.orelse:
            raise self.fail("for ... else is not supported", node)
        start, stop, step = self._range(node)
        if not isinstance(node.target, ast.Name):
            raise self.fail("the loop variable must be a name", node.target)
        if step > 0:
            lb, ub = start, stop
        elif step == -1:
            lb, ub = Affine(0), start - stop
        else:
            lb, ub = Affine(0), opaque(self.b, arith.FloorDivSIOp, start - stop - step - 1, Affine(-step))
        count = (ub - lb).static
        if count is not None and count <= 0:
            return
        names, cells = self._guess_carried(node.body)
        for _ in range(4):
            attempt = self._loop_attempt(node, lb, ub, start, step, names, cells)
            if attempt is None:
                return
            names, cells = attempt
        raise self.fail("could not determine the values this loop carries", node)

    def _guess_carried(self, body: list[ast.stmt]) -> tuple[dict[str, str | None], dict[Cell, None]]:
        names: dict[str, str | None] = {}
        cells: dict[Cell, None] = {}
        for stmt in body:
            for n in ast.walk(stmt):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign | ast.AnnAssign) else []
                for t in targets:
                    for leaf in ast.walk(t):
                        if isinstance(leaf, ast.Name) and leaf.id in self.env:
                            v = self.env[leaf.id]
                            mutated = t is not leaf and isinstance(t, ast.Subscript) or (
                                isinstance(n, ast.AugAssign) and isinstance(v, View) and v.ndim > 0)
                            if mutated and isinstance(v, View) and v.cell is not None:
                                cells[v.cell] = None
                            elif isinstance(t, ast.Name | ast.Tuple | ast.List):
                                names[leaf.id] = None
        return names, cells

    def _check_aliases(self, names: dict[str, str | None], cells: dict[Cell, None], node: ast.AST) -> None:
        """A loop rebinding a name gives it a fresh array per iteration; another
        name for the same array would miss the updates the loop makes through it."""
        for n in names:
            v = self.env.get(n)
            if isinstance(v, View) and v.cell is not None and v.cell in cells:
                for other, w in self.env.items():
                    if other not in names and isinstance(w, View) and w.cell is v.cell:
                        raise self.fail(f"'{n}' is rebound in this loop while '{other}' names the same array; "
                                        f"use a copy (np.copy) for one of them", node)

    def _slot_value(self, value: Any, kind: str | None, node: ast.AST) -> tuple[SSAValue, str]:
        """A carried value as an SSA value; kind 'index' or a dtype (None: choose)."""
        if isinstance(value, Affine) and kind in (None, "index"):
            return value.emit(self.b), "index"
        if isinstance(value, Cond):
            return value.value, "cond"
        if isinstance(value, bool):
            return self.b.insert(arith.ConstantOp.from_int_and_width(int(value), 1)).result, "cond"
        if isinstance(value, View) and value.cell is not None and value.ndim:
            if not value.is_whole:
                raise self.fail("a view of another array is carried by a loop or branch; bind a copy (np.copy)", node)
            return value.cell.value, "array"
        e = self.as_expr(value, node)
        if e.ndim:
            return self.em.materialize(e), "array"
        dtype = kind if kind not in (None, "index", "array", "cond") else self.em.concrete(e)
        return self.em.materialize(e, dtype), dtype  # type: ignore[arg-type]

    def _from_slot(self, value: SSAValue, kind: str, weak: bool) -> Any:
        if kind == "index":
            return Affine.of(value)
        if kind == "cond":
            return Cond(value)
        if kind == "array":
            return View.whole(value, self.new_cell(value))
        v = View.whole(value)
        v.weak = weak
        return v

    def _loop_attempt(self, node: ast.For, lb: Affine, ub: Affine, start: Affine, step: int,
                      names: dict[str, str | None], cells: dict[Cell, None]):
        """Translate the loop carrying `names` (with kinds) and `cells`; None when
        that was enough, else the larger sets to try again with."""
        env_before = dict(self.env)
        self._check_aliases(names, cells, node)
        inits, kinds, weak = [], {}, {}
        for n in names:
            v, kinds[n] = self._slot_value(self.env[n], names[n], node)
            weak[n] = getattr(self.env[n], "weak", False)
            inits.append(v)
        inits += [c.value for c in cells]
        lb_v, ub_v = lb.emit(self.b), ub.emit(self.b)
        step_v = Affine(step if step > 0 else 1).emit(self.b)
        block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
        outer_b, outer_em = self.b, self.em
        self.b = Builder(InsertPoint.at_end(block))
        self.em = Emitter(self.b, self.default_float, outer_em.fail)
        iv = block.args[0]
        iv.name_hint = node.target.id  # type: ignore[attr-defined]
        scope = Scope(next(cell_serial))
        outer_scopes, self.scopes = self.scopes, [scope]  # outer scopes see the loop's results only
        values_before = {c: c.value for c in cells}
        try:
            args = iter(block.args[1:])
            for n in names:
                arg = next(args)
                arg.name_hint = n if IDENTIFIER.fullmatch(n) else None
                self.env[n] = self._from_slot(arg, kinds[n], weak[n])
            for c in cells:
                c.value = next(args)
            self.env[node.target.id] = Affine.of(iv) if step > 0 else start - Affine.of(iv).scale(-step)  # type: ignore[attr-defined]
            self.statements(node.body)
            self.node = node
            more_names = {n: names.get(n) for n in scope.names if n in env_before and n != node.target.id}  # type: ignore[attr-defined]
            yields, retry = [], False
            for k, n in enumerate(names):
                value, kind = self._slot_value(self.env[n], kinds[n] if kinds[n] != "index" else None, node)
                if kind != kinds[n] or value.type != inits[k].type:
                    if kinds[n] == "index" and kind != "index":
                        more_names[n] = kind
                        retry = True
                        continue
                    raise self.fail(f"'{n}' changes its type or shape in the loop ({inits[k].type} -> {value.type})", node)
                yields.append(value)
            yields += [c.value for c in cells]
        finally:
            self.scopes = outer_scopes
            self.b, self.em = outer_b, outer_em
            for c, v in {**scope.before, **values_before}.items():
                c.value = v
            self.env = env_before
        if retry or any(n not in names for n in more_names) or any(c not in cells for c in scope.cells):
            for n, k in names.items():
                more_names.setdefault(n, k)
            return more_names, {**cells, **dict.fromkeys(scope.cells)}
        Builder(InsertPoint.at_end(block)).insert(scf.YieldOp(*yields))
        loop = self.b.insert(scf.ForOp(lb_v, ub_v, step_v, inits, block))
        results = iter(loop.results)
        for n in names:
            self.env[n] = self._from_slot(next(results), kinds[n], weak[n])
            for s in self.scopes:
                s.names[n] = None
        for c in cells:
            self.update(c, next(results))
        return None

    def condition(self, value: Any, node: ast.AST) -> bool | SSAValue:
        if isinstance(value, bool | np.bool_):
            return bool(value)
        if isinstance(value, Affine):
            if value.static is not None:
                return value.static != 0
            return self.b.insert(arith.CmpiOp(value.emit(self.b), Affine(0).emit(self.b), "ne")).result
        if isinstance(value, Cond):
            return value.value
        if isinstance(value, Expr):
            if value.ndim:
                raise self.fail("the truth value of an array is ambiguous; use np.any/np.all or a scalar", node)
            t = self.em.materialize(value, "i1")
            return self.b.insert(tensor.ExtractOp(t, [], i1)).result
        if isinstance(value, int | float):
            return bool(value)
        raise self.fail(f"cannot use {type(value).__name__} as a condition", node)

    def if_statement(self, node: ast.If) -> None:
        cond = self.condition(self.expr(node.test), node.test)
        if isinstance(cond, bool):
            self.statements(node.body if cond else node.orelse)
            return
        env_before = dict(self.env)
        scope = Scope(next(cell_serial))
        branches = []
        for body in (node.body, node.orelse):
            block = Block()
            outer_b, outer_em = self.b, self.em
            self.b = Builder(InsertPoint.at_end(block))
            self.em = Emitter(self.b, self.default_float, outer_em.fail)
            self.scopes.append(scope)
            try:
                self.statements(body)
            finally:
                self.scopes.pop()
                self.b, self.em = outer_b, outer_em
            branches.append((block, dict(self.env), {c: c.value for c in scope.cells}))
            for c, v in scope.before.items():
                c.value = v
            self.env = dict(env_before)
        self.node = node
        names = [n for n in scope.names if n in env_before or all(n in env for _, env, _ in branches)]
        cells = list(scope.cells)
        yields: list[list[SSAValue]] = []
        kinds: dict[str, str] = {}
        for block, env, values in branches:
            outer_b, outer_em = self.b, self.em
            self.b = Builder(InsertPoint.at_end(block))
            self.em = Emitter(self.b, self.default_float, outer_em.fail)
            try:
                out = []
                for n in names:
                    want = kinds.get(n)
                    v, kinds[n] = self._slot_value(env[n], want if want not in ("index", "cond", "array") else None, node)
                    out.append(v)
                out += [values.get(c, scope.before[c]) for c in cells]
            finally:
                self.b, self.em = outer_b, outer_em
            yields.append(out)
        for a, c in zip(*yields):
            if a.type != c.type:
                raise self.fail(f"the branches of this if give a value different types ({a.type}, {c.type})", node)
        for (block, _, _), out in zip(branches, yields):
            Builder(InsertPoint.at_end(block)).insert(scf.YieldOp(*out))
        op = self.b.insert(scf.IfOp(cond, [v.type for v in yields[0]], Region(branches[0][0]), Region(branches[1][0])))
        results = iter(op.results)
        for n in names:
            self.env[n] = self._from_slot(next(results), kinds[n], getattr(branches[0][1][n], "weak", False))
            for s in self.scopes:
                s.names[n] = None
        for c in cells:
            self.update(c, next(results))
