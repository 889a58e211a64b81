"""`break`, `continue` and early `return` as structured control flow.

MLIR's `scf` has no jumps, so the frontend rewrites the Python AST before it
translates it (the rewritten nodes keep the original locations):

- in a loop body, the statements after an `if` that jumps are moved into both
  of its branches (where a branch jumps, what follows the jump is dropped), so
  `continue` becomes the end of its branch, and `break` sets a flag: the loop
  body runs under `if not flag` (a `for` loop: an `scf.for` whose remaining
  iterations do nothing, differentiable as any `scf.for`) or the condition of a
  `while` becomes `not flag and (cond)`;
- in the function body, an early `return` becomes an assignment of the result
  names (`$ret0`, ...) on its path, the rest of the function moves into the
  other branch, and one `return` of those names ends the function.

Hidden names start with `$`, which no Python name can.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Callable

_serial = itertools.count()

_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _at(new: ast.AST, old: ast.AST) -> ast.AST:
    return ast.copy_location(new, old)


def _walk_here(stmts: list[ast.stmt], into_loops: bool):
    """The statements of `stmts` and their nested statements, not entering nested
    functions (nor loops unless `into_loops`)."""
    stack = list(stmts)
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, _SCOPES) or isinstance(s, _LOOPS) and not into_loops:
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(s, field, []) or [])


def loop_jumps(body: list[ast.stmt]) -> tuple[bool, bool]:
    """(has a break, has a continue) of this loop body (not of nested loops)."""
    nodes = list(_walk_here(body, into_loops=False))
    return any(isinstance(s, ast.Break) for s in nodes), any(isinstance(s, ast.Continue) for s in nodes)


def returns_in(body: list[ast.stmt], into_loops: bool) -> list[ast.Return]:
    """The `return`s in `body` in source order (those of nested loops too if `into_loops`)."""
    found = [s for s in _walk_here(body, into_loops) if isinstance(s, ast.Return)]
    return sorted(found, key=lambda s: (s.lineno, s.col_offset))


def new_flag(kind: str) -> str:
    return f"${kind}{next(_serial)}"


def _name(id_: str, ctx: ast.expr_context, at: ast.AST) -> ast.Name:
    return _at(ast.Name(id=id_, ctx=ctx), at)  # type: ignore[return-value]


def _push_down(stmts: list[ast.stmt], is_jump: Callable[[ast.stmt], bool],
               on_jump: Callable[[ast.stmt], list[ast.stmt]], on_end: Callable[[], list[ast.stmt]]) -> list[ast.stmt]:
    """`stmts` with each jump replaced by `on_jump(jump)` (what follows it dropped)
    and the statements after an `if` that holds a jump moved into both branches;
    a path that reaches the end gets `on_end()`."""
    out: list[ast.stmt] = []
    for k, s in enumerate(stmts):
        if is_jump(s):
            return out + on_jump(s)
        if isinstance(s, ast.If) and any(is_jump(n) for n in _walk_here(s.body + s.orelse, into_loops=False)):
            rest = stmts[k + 1:]
            body = _push_down(s.body + copy.deepcopy(rest), is_jump, on_jump, on_end)
            orelse = _push_down(s.orelse + rest, is_jump, on_jump, on_end)
            out.append(_at(ast.If(test=s.test, body=body or [_at(ast.Pass(), s)], orelse=orelse), s))  # type: ignore[arg-type]
            return out
        out.append(s)
    return out + on_end()


def lower_loop_body(body: list[ast.stmt], flag: str | None) -> list[ast.stmt]:
    """A loop body without `break`/`continue`: a break sets `flag` (True)."""

    def on_jump(s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.Continue):
            return []
        assert flag is not None
        return [_at(ast.Assign(targets=[_name(flag, ast.Store(), s)], value=_at(ast.Constant(True), s)), s)]  # type: ignore[list-item]

    return _push_down(body, lambda s: isinstance(s, ast.Break | ast.Continue), on_jump, list)


def not_flag(flag: str, at: ast.AST) -> ast.expr:
    return _at(ast.UnaryOp(op=ast.Not(), operand=_name(flag, ast.Load(), at)), at)  # type: ignore[return-value]


def arity(node: ast.Return) -> int:
    """How many values a `return` gives: 0 (None), 1, or a tuple display's length."""
    if node.value is None:
        return 0
    return len(node.value.elts) if isinstance(node.value, ast.Tuple) else 1


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every path through `stmts` ends at a `return` (the last statement
    is one, or an `if` whose branches both always return)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and always_returns(last.body) and always_returns(last.orelse)


def lower_returns(body: list[ast.stmt], fail: Callable[[str, ast.AST], Exception]) -> list[ast.stmt]:
    """A function body with early returns (in `if`s and in loops): each path
    assigns the result names and one `return` of them ends the body.

    A `return` in a loop sets the result names and a flag and breaks (out of
    every enclosing loop); the statements after the loop run unless the flag is
    set. The result names start undefined (`$undefined`: the translator gives a
    loop's carried value its type from what the body assigns)."""
    returns = returns_in(body, into_loops=True)
    counts = {arity(r) for r in returns}
    if not always_returns(body):
        counts.add(0)  # falling off the end returns None
    if len(counts) > 1:
        raise fail("this function returns different numbers of values on different paths (a value on one, a tuple "
                   "or None on another): every return must give the same number", returns[0])
    n = counts.pop()
    names = [f"$ret{k}" for k in range(n)]
    flag = new_flag("returned")

    def assign(s: ast.Return) -> list[ast.stmt]:
        if not names:
            return []
        targets = _name(names[0], ast.Store(), s) if n == 1 else _at(
            ast.Tuple(elts=[_name(x, ast.Store(), s) for x in names], ctx=ast.Store()), s)
        return [_at(ast.Assign(targets=[targets], value=s.value), s)]  # type: ignore[list-item]

    def has_return(s: ast.stmt) -> bool:
        return bool(returns_in([s], into_loops=True))

    def set_flag(at: ast.AST) -> ast.stmt:
        return _at(ast.Assign(targets=[_name(flag, ast.Store(), at)], value=_at(ast.Constant(True), at)), at)  # type: ignore[return-value]

    def in_loop(stmts: list[ast.stmt]) -> list[ast.stmt]:
        """A loop body whose returns set the results and the flag and break out."""
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.Return):
                out += [*assign(s), set_flag(s), _at(ast.Break(), s)]  # type: ignore[list-item]
            elif isinstance(s, ast.If) and has_return(s):
                out.append(_at(ast.If(test=s.test, body=in_loop(s.body) or [_at(ast.Pass(), s)],
                                      orelse=in_loop(s.orelse)), s))  # type: ignore[arg-type]
            elif isinstance(s, _LOOPS) and has_return(s):
                out += [loop(s), _at(ast.If(test=_name(flag, ast.Load(), s), body=[_at(ast.Break(), s)], orelse=[]), s)]  # type: ignore[list-item]
            else:
                out.append(s)
        return out

    def loop(s: ast.stmt) -> ast.stmt:
        inside_else = returns_in(s.orelse, into_loops=True)  # type: ignore[attr-defined]
        if inside_else:
            raise fail("return in the else block of a loop is not supported; set a flag there and return after "
                       "the loop", inside_else[0])
        new = copy.copy(s)
        new.body = in_loop(s.body)  # type: ignore[attr-defined]
        return new

    def lower(stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for k, s in enumerate(stmts):
            rest = stmts[k + 1:]
            if isinstance(s, ast.Return):
                return out + assign(s)
            if isinstance(s, ast.If) and has_return(s):
                body = lower(s.body + copy.deepcopy(rest))
                out.append(_at(ast.If(test=s.test, body=body or [_at(ast.Pass(), s)], orelse=lower(s.orelse + rest)), s))  # type: ignore[arg-type]
                return out
            if isinstance(s, _LOOPS) and has_return(s):
                after = lower(rest)
                out.append(loop(s))
                if after:
                    out.append(_at(ast.If(test=not_flag(flag, s), body=after, orelse=[]), s))  # type: ignore[arg-type]
                return out
            out.append(s)
        return out

    lowered = lower(body)
    if any(returns_in([s], into_loops=False) != returns_in([s], into_loops=True) for s in body):
        first = body[0]
        start = [_at(ast.Assign(targets=[_name(x, ast.Store(), first)], value=_name("$undefined", ast.Load(), first)),
                     first) for x in [flag, *names]]
        start[0] = _at(ast.Assign(targets=[_name(flag, ast.Store(), first)], value=_at(ast.Constant(False), first)), first)
        lowered = start + lowered  # type: ignore[operator]
    last = returns[-1]
    value = None if not names else _name(names[0], ast.Load(), last) if n == 1 else _at(
        ast.Tuple(elts=[_name(x, ast.Load(), last) for x in names], ctx=ast.Load()), last)
    return lowered + [_at(ast.Return(value=value), last)]  # type: ignore[list-item]
