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

from dfc.dialects.df_builders import splat
from dfc.frontend.affine import Affine, opaque
from dfc.frontend.aliases import alias_cells, share
from dfc.frontend.arrays import NUMPY_NAMES, Cell, Expr, View
from dfc.frontend.complex_values import Complex, store, unpacked
from dfc.frontend.emit import Emitter
from dfc.frontend.jumps import loop_jumps, lower_loop_body, new_flag, not_flag
from dfc.frontend.liveness import Future
from dfc.frontend.scopes import IDENTIFIER, Cond, Scope, Undefined, cell_serial


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

    def _jumps(self, node: ast.For | ast.While) -> tuple[list[ast.stmt], str | None]:
        """The loop's body without break/continue (see jumps.py) and its break flag (bound to False here)."""
        has_break, has_continue = loop_jumps(node.body)
        if not (has_break or has_continue):
            return node.body, None
        flag = new_flag("break") if has_break else None
        body = lower_loop_body(node.body, flag)
        if flag is not None:
            self.bind(flag, False, node)
        return body, flag

    def _else(self, node: ast.For | ast.While, flag: str | None) -> None:
        """A loop's `else` block: it runs unless the loop ended by a break."""
        if node.orelse:
            self.statements(node.orelse if flag is None else [
                ast.copy_location(ast.If(test=not_flag(flag, node), body=node.orelse, orelse=[]), node)])

    def _builtin_call(self, it: ast.expr, name: str) -> bool:
        return (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == name
                and self.lookup(name, it.func) is getattr(builtins, name))

    def _iteration(self, node: ast.For) -> list[ast.stmt]:
        """`for v in x`, `for i, v in enumerate(x)`, `for a, b in zip(x, y)` over arrays as a loop over
        `range(len(...))` whose body first binds the target to the elements (`x[i]`: a view, so updates of x
        made by the loop are seen, as NumPy's iterator sees them); a tuple or list of values is unrolled."""
        it = node.iter

        def at(new: ast.AST) -> ast.AST:
            return ast.copy_location(new, it)

        def name(id_: str, ctx=None) -> ast.Name:
            return at(ast.Name(id=id_, ctx=ctx or ast.Load()))  # type: ignore[return-value]

        sources: list[ast.expr] = []
        i = new_flag("i")

        def pattern(e: ast.expr) -> ast.expr:
            """The element of iterable `e` at index i (enumerate and zip nest), collecting the arrays in `sources`."""
            if self._builtin_call(e, "enumerate"):
                args = list(e.args) + [k.value for k in e.keywords if k.arg == "start"]  # type: ignore[attr-defined]
                if not 1 <= len(args) <= 2 or any(k.arg != "start" for k in e.keywords):  # type: ignore[attr-defined]
                    raise self.fail("enumerate takes an iterable and an optional start", e)
                index = name(i) if len(args) == 1 else at(ast.BinOp(left=name(i), op=ast.Add(), right=args[1]))
                return at(ast.Tuple(elts=[index, pattern(args[0])], ctx=ast.Load()))  # type: ignore[return-value]
            if self._builtin_call(e, "zip"):
                if e.keywords or not e.args:  # type: ignore[attr-defined]
                    raise self.fail("zip takes iterables (no keywords)", e)
                return at(ast.Tuple(elts=[pattern(a) for a in e.args], ctx=ast.Load()))  # type: ignore[attr-defined, return-value]
            sources.append(e)
            return at(ast.Subscript(value=name(f"$seq{i}_{len(sources) - 1}"), slice=name(i), ctx=ast.Load()))  # type: ignore[return-value]

        value = pattern(it)
        seqs = [f"$seq{i}_{k}" for k in range(len(sources))]
        out: list[ast.stmt] = [at(ast.Assign(targets=[name(q, ast.Store())], value=src)) for q, src in zip(seqs, sources)]  # type: ignore[misc]
        self.statements(out)
        values = [self.env[q] for q in seqs]
        if len(values) == 1 and isinstance(values[0], tuple) and value is not None and isinstance(value, ast.Subscript):
            return self._unrolled(node, values[0])
        for v in values:
            if not isinstance(v, Expr | Complex) or not v.ndim:
                raise self.fail("a for loop iterates over range(...), an array (its first axis), enumerate or zip of "
                                "arrays, or a tuple of values", it)
        lengths = [at(ast.Call(func=name("len"), args=[name(q)], keywords=[])) for q in seqs]
        count = lengths[0] if len(lengths) == 1 else at(ast.Call(func=name("min"), args=lengths, keywords=[]))
        bind = at(ast.Assign(targets=[node.target], value=value))
        loop = at(ast.For(target=name(i, ast.Store()), iter=at(ast.Call(func=name("range"), args=[count], keywords=[])),
                          body=[bind, *node.body], orelse=node.orelse, type_comment=None))
        return [loop]  # type: ignore[list-item]

    def _unrolled(self, node: ast.For, items: tuple) -> list[ast.stmt]:
        """A loop over a tuple of values, one copy of the body per value (no break or continue)."""
        if any(loop_jumps(node.body)) or node.orelse:
            raise self.fail("a loop over a tuple of values is unrolled: break, continue and else are not supported "
                            "there (loop over range(len(...)))", node)
        for k, item in enumerate(items):
            self.future.append(Future(node.body * (len(items) - k - 1)))  # the copies still to run
            try:
                self.assign(node.target, item)
                self.statements(node.body)
            finally:
                self.future.pop()
        return []

    def for_loop(self, node: ast.For) -> None:
        it = node.iter
        if (isinstance(it, ast.Call) and not it.keywords and isinstance(it.func, ast.Attribute | ast.Name)
                and self.expr(it.func) is np.arange):  # integers as a range: affine indices, no array
            rng = ast.copy_location(ast.Name(id="range", ctx=ast.Load()), it.func)
            node = ast.copy_location(ast.For(target=node.target, iter=ast.copy_location(
                ast.Call(func=rng, args=it.args, keywords=[]), it), body=node.body, orelse=node.orelse,
                type_comment=None), node)
        if not self._builtin_call(node.iter, "range"):
            self.statements(self._iteration(node))
            return
        start, stop, step = self._range(node)
        body, flag = self._jumps(node)
        if flag is not None:  # after a break the remaining iterations do nothing
            body = [ast.copy_location(ast.If(test=not_flag(flag, node), body=body, orelse=[]), node)]
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
            self._else(node, None)
            return
        if (count is not None and count <= UNROLL_MAX and flag is None and not node.orelse
                and not any(loop_jumps(node.body)) and _exponent_of(node.body, node.target.id)):
            self._unrolled(node, tuple(start + Affine(k * step) for k in range(count)))
            return
        names, cells = self._guess_carried(body)
        for _ in range(4):
            attempt = self._loop_attempt(node, body, lb, ub, start, step, names, cells)
            if attempt is None:
                self._else(node, flag)
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
                            if isinstance(v, Complex) and v.cell is not None:  # carried as its packed array
                                v = View.whole(v.cell.value, v.cell)
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
        if isinstance(value, Undefined):
            if value.like is None:
                raise self.fail("internal error: a value without a type is carried by a loop or branch", node)
            known, t, _ = value.like
            if known == "index":
                return Affine(0).emit(self.b), "index"
            if known == "cond":
                return self.b.insert(arith.ConstantOp.from_int_and_width(0, 1)).result, "cond"
            return splat(self.b, t, 0), known  # zeros until a return in the loop sets it
        if isinstance(value, Affine) and kind in (None, "index"):
            return value.emit(self.b), "index"
        if isinstance(value, Cond):
            return value.value, "cond"
        if isinstance(value, bool):
            return self.b.insert(arith.ConstantOp.from_int_and_width(int(value), 1)).result, "cond"
        if isinstance(value, Complex):
            return store(self, value, node), "complex"
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
        if kind == "complex":
            return unpacked(value, self.new_cell(value))
        v = View.whole(value)
        v.weak = weak
        return v

    def _loop_attempt(self, node: ast.For, body: list[ast.stmt], lb: Affine, ub: Affine, start: Affine, step: int,
                      names: dict[str, str | None], cells: dict[Cell, None]):
        """Translate the loop carrying `names` (with kinds) and `cells`; None when
        that was enough, else the larger sets to try again with."""
        env_before = dict(self.env)
        names = self._typed(names)
        self._check_aliases(names, cells, node)
        inits, kinds, weak = self._carried_inits(names, cells, node)
        lb_v, ub_v = lb.emit(self.b), ub.emit(self.b)
        step_v = Affine(step if step > 0 else 1).emit(self.b)
        block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
        outer_b, outer_em = self.b, self.em
        self.b = Builder(InsertPoint.at_end(block))
        self.em = Emitter(self.b, self.default_float, outer_em.fail)
        iv = block.args[0]
        iv.name_hint = node.target.id  # type: ignore[attr-defined]
        self.loop_ranges[iv] = (lb, ub - 1)
        scope = Scope(next(cell_serial))
        outer_scopes, self.scopes = self.scopes, [scope]  # outer scopes see the loop's results only
        values_before = {c: c.value for c in cells}
        try:
            entered = self._enter(block.args[1:], names, kinds, weak, cells)
            self.env[node.target.id] = Affine.of(iv) if step > 0 else start - Affine.of(iv).scale(-step)  # type: ignore[attr-defined]
            self.future.append(Future(body, again=True))  # the next iteration
            try:
                self.statements(body)
            finally:
                self.future.pop()
            self.node = node
            self._learn(env_before, node)
            more_names = {n: names.get(n) for n in scope.names if n in env_before and n != node.target.id}  # type: ignore[attr-defined]
            yields, retry = self._carried_yields(names, kinds, inits, cells, more_names, node, block.args[1:])
            ends = self._carried_views(names, entered, node)
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
        self._leave(loop.results, names, kinds, weak, cells, ends, skipped=(ub - lb).static in (None, 0))
        return None

    def _enter(self, args, names: dict[str, str | None], kinds: dict, weak: dict,
               cells: dict[Cell, None]) -> dict[str, Cell]:
        """Bind the carried names and cells to a loop region's block arguments; the cell each array name
        entered with (it may view what the name viewed before: `aliases.py`)."""
        args = iter(args)
        entered = {}
        for n in names:
            arg = next(args)
            arg.name_hint = n if IDENTIFIER.fullmatch(n) else None
            before = alias_cells(self.env.get(n))
            self.env[n] = self._from_slot(arg, kinds[n], weak[n])
            if getattr(self.env[n], "cell", None) is not None:
                entered[n] = share(self.env[n].cell, before)
        for c in cells:
            c.value = next(args)
        return entered

    def _carried_yields(self, names, kinds, inits, cells, more_names, node, entered) -> tuple[list[SSAValue], bool]:
        """The values a loop body yields for its carried names and cells (`entered`: the body's arguments for
        them), and whether to translate it again (an integer became a run-time value: `more_names` says which
        kind). An array of run-time size must keep its size (it is carried in one buffer)."""
        yields, retry = [], False
        for k, n in enumerate(names):
            if (wider := _promoted_in_loop(kinds[n], self.env[n])) is not None:
                more_names[n] = wider  # NumPy's promotion changed its dtype: carry the wider one
                retry = True
                continue
            value, kind = self._slot_value(self.env[n], kinds[n] if kinds[n] != "index" else None, node)
            if kind != kinds[n] or value.type != inits[k].type:
                if kinds[n] == "index" and kind != "index":
                    more_names[n] = kind
                    retry = True
                    continue
                raise self.fail(f"'{_shown(n)}' changes its type or shape in the loop ({inits[k].type} -> {value.type})", node)
            if kind == "array" and View.whole(value).shape != View.whole(entered[k]).shape:
                raise self.fail(f"'{_shown(n)}' may change its size in the loop (an array of run-time size, "
                                f"{value.type}, rebound to one of another size: `z = z[z > t]`); compiled loops "
                                "carry an array of a fixed size: keep the whole array and a mask "
                                "(`keep &= z > t`, np.where)", node)
            yields.append(value)
        return yields + [c.value for c in cells], retry

    def _typed(self, names: dict[str, str | None]) -> dict[str, str | None]:
        """`names` without the undefined ones whose type is not known yet (the body's first translation learns it)."""
        return {n: k for n, k in names.items() if not (isinstance(self.env.get(n), Undefined) and self.env[n].like is None)}

    def _learn(self, env_before: dict, node: ast.AST) -> None:
        """Give each undefined name the body assigned the type of its value there."""
        for n, v in env_before.items():
            if isinstance(v, Undefined) and v.like is None and not isinstance(self.env.get(n), Undefined):
                value, kind = self._slot_value(self.env[n], None, node)
                v.like = (kind, value.type, getattr(self.env[n], "weak", False))

    def _carried_inits(self, names, cells, node) -> tuple[list[SSAValue], dict, dict]:
        inits, kinds, weak = [], {}, {}
        for n in names:
            v, kinds[n] = self._slot_value(self.env[n], names[n], node)
            weak[n] = getattr(self.env[n], "weak", False)
            inits.append(v)
        return inits + [c.value for c in cells], kinds, weak

    def while_loop(self, node: ast.While) -> None:
        """`while cond:` as `scf.while`: the before region evaluates the condition on the
        carried values (names the body rebinds, arrays it updates), the after region the body."""
        body, flag = self._jumps(node)
        test = node.test
        if flag is not None:
            test = ast.copy_location(ast.BoolOp(op=ast.And(), values=[not_flag(flag, node), test]), node.test)
        names, cells = self._guess_carried(body)
        for _ in range(4):
            attempt = self._while_attempt(node, test, body, names, cells)
            if attempt is None:
                self._else(node, flag)
                return
            names, cells = attempt
        raise self.fail("could not determine the values this loop carries", node)

    def _while_attempt(self, node: ast.While, test: ast.expr, body: list[ast.stmt],
                       names: dict[str, str | None], cells: dict[Cell, None]):
        """As `_loop_attempt`, for a while loop."""
        env_before = dict(self.env)
        names = self._typed(names)
        self._check_aliases(names, cells, node)
        inits, kinds, weak = self._carried_inits(names, cells, node)
        types = [v.type for v in inits]
        before, after = Block(arg_types=types), Block(arg_types=types)
        outer_b, outer_em = self.b, self.em
        scope = Scope(next(cell_serial))
        outer_scopes, self.scopes = self.scopes, [scope]
        values_before = {c: c.value for c in cells}
        never = False
        try:
            self.b = Builder(InsertPoint.at_end(before))
            self.em = Emitter(self.b, self.default_float, outer_em.fail)
            self._enter(before.args, names, kinds, weak, cells)
            cond = self.condition(self.expr(test), test)
            if scope.cells or any(c.value is not a for c, a in zip(cells, before.args[len(names):])):
                raise self.fail("the condition of a while loop updates an array (a call that updates its argument)", test)
            if cond is True:
                raise self.fail("this while loop never ends: its condition is always true and it has no break", node)
            never = cond is False
            if not never:
                self.b.insert(scf.ConditionOp(cond, *before.args))
            self.env = dict(env_before)
            self.b = Builder(InsertPoint.at_end(after))
            self.em = Emitter(self.b, self.default_float, outer_em.fail)
            entered = self._enter(after.args, names, kinds, weak, cells)
            if not never:
                self.future.append(Future([ast.Expr(value=test), *body], again=True))  # the next iteration
                try:
                    self.statements(body)
                finally:
                    self.future.pop()
            self.node = node
            self._learn(env_before, node)
            more_names = {n: names.get(n) for n in scope.names if n in env_before}
            yields, retry = self._carried_yields(names, kinds, inits, cells, more_names, node, after.args)
            ends = self._carried_views(names, entered, node)
        finally:
            self.scopes = outer_scopes
            self.b, self.em = outer_b, outer_em
            for c, v in {**scope.before, **values_before}.items():
                c.value = v
            self.env = env_before
        if never:  # the condition is false before the first iteration (and does not depend on the body)
            return None
        if retry or any(n not in names for n in more_names) or any(c not in cells for c in scope.cells):
            for n, k in names.items():
                more_names.setdefault(n, k)
            return more_names, {**cells, **dict.fromkeys(scope.cells)}
        Builder(InsertPoint.at_end(after)).insert(scf.YieldOp(*yields))
        loop = self.b.insert(scf.WhileOp(inits, types, Region(before), Region(after)))
        self._leave(loop.results, names, kinds, weak, cells, ends)
        return None

    def _carried_views(self, names, entered: dict[str, Cell], node: ast.AST) -> dict[str, list[Cell]]:
        """The cells each carried name may view at the end of a loop body (`aliases.py`; `entered`: the cell
        each name entered the body with). Refused: a name the next iteration would enter as a copy of an
        array a name the loop does not carry, or the caller, holds (`v = x.reshape(...)`, `v = x`, arguments
        swapped `A, B = B, A`); arrays only the carried names hold (local buffers swapped) are values."""
        ends = {}
        for n in names:
            ends[n] = alias_cells(self.env[n])
            known = [entered[n], *entered[n].shares] if n in entered else []
            for c in ends[n]:
                if c in known or c in entered.values():
                    continue
                held = [m for m, v in self.env.items() if m not in names and getattr(v, "cell", None) is c]
                if held or c in self.param_cells:
                    shown = f"the array '{_shown(held[0])}' holds" if held else "an argument's array"
                    raise self.fail(f"'{_shown(n)}' is carried by this loop as a view of {shown} "
                                    "(NumPy shares their memory; the next iteration would read a copy): bind a "
                                    f"copy (`{_shown(n)} = ....copy()`)", node)
        return ends

    def _leave(self, results, names, kinds, weak, cells, ends: dict[str, list[Cell]], skipped: bool = True) -> None:
        """Bind the carried names and cells to a loop's results (each may view what it did at the end of the
        body, `ends`, or before the loop where the body may not run: `skipped`)."""
        results = iter(results)
        for n in names:
            before = alias_cells(self.env.get(n)) if skipped else []
            self.env[n] = self._from_slot(next(results), kinds[n], weak[n])
            if getattr(self.env[n], "cell", None) is not None:
                share(self.env[n].cell, before + ends[n])
            for s in self.scopes:
                s.names[n] = None
        for c in cells:
            self.update(c, next(results))

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
        kinds: dict[str, str] = {}
        outs: list[dict[str, SSAValue]] = [{}, {}]
        for undefined in (False, True):  # a name undefined in one branch takes the other's type (zeros)
            for k, (block, env, _) in enumerate(branches):
                outer_b, outer_em = self.b, self.em
                self.b = Builder(InsertPoint.at_end(block))
                self.em = Emitter(self.b, self.default_float, outer_em.fail)
                try:
                    for n in names:
                        v = env[n]
                        if isinstance(v, Undefined) != undefined:
                            continue
                        if undefined and v.like is None:
                            other = outs[1 - k].get(n)
                            if other is None:
                                continue  # undefined in both branches: still undefined after the if
                            v.like = (kinds[n], other.type, False)
                        want = kinds.get(n)
                        outs[k][n], kinds[n] = self._slot_value(v, want if want not in ("index", "cond", "array") else None, node)
                finally:
                    self.b, self.em = outer_b, outer_em
        names = [n for n in names if n in outs[0] and n in outs[1]]
        yields = [[out[n] for n in names] + [values.get(c, scope.before[c]) for c in cells]
                  for out, (_, _, values) in zip(outs, branches)]
        for k, (a, c) in enumerate(zip(*yields)):
            if a.type != c.type:
                what = f"'{_shown(names[k])}'" if k < len(names) else "an array"
                raise self.fail(f"the branches of this if give {what} different types ({a.type}, {c.type}); an array "
                                "rebound to one of another size in one branch (`z = z[m]`, also in a loop with `break`, "
                                "whose rest of the body is such a branch) is not carried: keep the whole array and a "
                                "mask (np.where)", node)
        for (block, _, _), out in zip(branches, yields):
            Builder(InsertPoint.at_end(block)).insert(scf.YieldOp(*out))
        op = self.b.insert(scf.IfOp(cond, [v.type for v in yields[0]], Region(branches[0][0]), Region(branches[1][0])))
        results = iter(op.results)
        for n in names:
            self.env[n] = self._from_slot(next(results), kinds[n], getattr(branches[0][1][n], "weak", False))
            if getattr(self.env[n], "cell", None) is not None:  # NumPy's value is the branch's array: may view it
                share(self.env[n].cell, [c for _, env, _ in branches for c in alias_cells(env[n])])
            for s in self.scopes:
                s.names[n] = None
        for c in cells:
            self.update(c, next(results))


def _shown(name: str) -> str:
    """A name as the user wrote it (the frontend's hidden names, `$ret0`, say what they stand for)."""
    if name.startswith("$returned"):
        return "the return flag"
    if name.startswith("$ret"):
        return "the returned value"
    if name.startswith("$break"):
        return "the break flag"
    return name


UNROLL_MAX = 64
"""The most iterations a `for i in range(n)` loop is unrolled to, where `i` is an exponent (`R ** i`): its
powers are then constants, as sizes computed from them must be (stockham_fft's reshapes)."""


def _exponent_of(body: list[ast.stmt], name: str) -> bool:
    """Whether `name` appears in the exponent of a `**` in `body`."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and any(
        isinstance(m, ast.Name) and m.id == name for m in ast.walk(n.right)) for s in body for n in ast.walk(s))


def _promoted_in_loop(kind: str | None, value: Any) -> str | None:
    """The dtype of a scalar the loop body made strictly wider than the `kind` it entered
    with (`s = s + y[i]`, int8 `s`, int16 `y`: NumPy's `s` becomes int16), else None."""
    if kind in (None, "index", "array", "cond") or not isinstance(value, Expr) or value.weak or value.ndim:
        return None
    if value.dtype == kind or np.result_type(NUMPY_NAMES[kind], NUMPY_NAMES[value.dtype]) != NUMPY_NAMES[value.dtype]:
        return None
    return value.dtype
