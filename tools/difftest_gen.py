"""Random valid programs over the df/nn/scf subset, for differential testing.

A `Program` is a list of `Stmt`s over a few tensor *kinds* (shapes named by
symbolic dims: `("N", "M")`, `("N",)`, `("M",)`, `()`, and `("M", "N")`,
`("N", "N")` from nn ops). Arguments are one tensor of each of the first three
kinds; every statement defines one new tensor from earlier ones, so deleting a
statement (the shrinker's move) replaces its uses by an earlier value of the
same kind. `render` prints the program as a module with `@{name}` and its
helper functions.

A `contract` statement is a map over (row, depth[, column]) in a random
order: `out[r, c] += x[r, k] * y[k, c]` (either factor maybe transposed) or
`out[r] += x[r, k] * y[k]`.

Valid by construction: every index stays in bounds (offset reads run over a
range one shorter; reversed reads use `n - 1 - i`; a loop's trip count is at
most N), no two plain writes of one map hit one element, and values stay
moderate (tasklets mix `tanh`, bounded rational functions and short products).
`FEATURES` names the switches; a feature that is off is never generated.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

FEATURES = ("offset", "nested", "wcr", "loop", "inplace", "if", "call", "dynamic", "nn", "f32", "minmax", "sin",
            "contract")
"""Generator switches: shifted/reversed indices, nested maps, wcr reductions
(add, mul, max, min), scf.for with tensor iter_args, in-place map updates of a
loop-carried or pre-loop tensor, scf.if on tensors, func.call, dynamic shapes,
nn library ops, f32 programs (else f64 only), `arith.maximumf`/`minimumf` and
`math.sin` in tasklets, and contraction maps (matrix and matrix-vector
products in every layout, accumulating into zeros or into an earlier value,
often followed by an elementwise map: what `contraction-to-blas` and
`fuse-gemm-epilogue` rewrite), with sizes up to 24 in a third of such
programs so that products cross the GEMM kernel's tiles."""

Kind = tuple[str, ...]
A: Kind = ("N", "M")
V: Kind = ("N",)
W: Kind = ("M",)
S: Kind = ()
ARG_KINDS = (A, V, W)
WCR_INIT = {"add": "0.0", "mul": "1.0", "max": "-1.0e+30", "min": "1.0e+30"}

# Tasklet expressions over operands u0.. : nested tuples (op, *children) or ("arg", k)
_UNARY = ("tanh", "neg", "sq1", "sin")
_BINARY = ("addf", "subf", "mulf", "maximumf", "minimumf")


@dataclass(frozen=True)
class Stmt:
    """One statement: `op` (the template), its operand value ids, its result kind."""

    op: str
    kind: Kind
    args: tuple[int, ...]
    params: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Program:
    dtype: str
    sizes: dict[str, int]
    dynamic: bool
    stmts: tuple[Stmt, ...]
    results: tuple[int, ...]

    def kind_of(self, v: int) -> Kind:
        return ARG_KINDS[v] if v < len(ARG_KINDS) else self.stmts[v - len(ARG_KINDS)].kind

    def shape(self, kind: Kind) -> tuple[int, ...]:
        return tuple(self.sizes[d] for d in kind)


# --- generation ------------------------------------------------------------------------


def _expr(rng: random.Random, n_args: int, depth: int, features: frozenset[str]) -> tuple:
    if depth == 0 or rng.random() < 0.3:
        return ("arg", rng.randrange(n_args))
    if rng.random() < 0.4:
        unary = [u for u in _UNARY if u != "sin" or "sin" in features]
        return (rng.choice(unary), _expr(rng, n_args, depth - 1, features))
    binary = [b for b in _BINARY if "minmax" in features or b not in ("maximumf", "minimumf")]
    return (rng.choice(binary), _expr(rng, n_args, depth - 1, features), _expr(rng, n_args, depth - 1, features))


def _uses_all(expr: tuple, n: int, rng: random.Random) -> tuple:
    """`expr` extended so that every operand u0..u{n-1} appears."""
    used = set()

    def walk(e: tuple) -> None:
        if e[0] == "arg":
            used.add(e[1])
        else:
            for c in e[1:]:
                walk(c)

    walk(expr)
    for k in range(n):
        if k not in used:
            expr = (rng.choice(("addf", "mulf", "subf")), expr, ("arg", k))
    return expr


def _bounded(expr: tuple) -> tuple:
    """`expr`, under a tanh when it multiplies (values stay moderate through loops)."""
    return ("tanh", expr) if "mulf" in repr(expr) else expr


def _readable(kind: Kind, from_kind: Kind) -> bool:
    """Whether a map over `kind` can read a value of `from_kind` at its own point
    (same kind), at one of its dims (a 1-D or 0-D value), or at no index."""
    return from_kind == kind or from_kind == () or (len(from_kind) == 1 and from_kind[0] in kind)


class Generator:
    def __init__(self, rng: random.Random, features: frozenset[str], size: int):
        self.rng, self.features, self.size = rng, features, size

    def on(self, feature: str) -> bool:
        return feature in self.features

    def program(self) -> Program:
        rng = self.rng
        dtype = "f32" if self.on("f32") and rng.random() < 0.3 else "f64"
        big = self.on("contract") and rng.random() < 0.3
        n = rng.randint(9, 24) if big else rng.randint(1, 4)
        sizes = {"N": n, "M": rng.choice((n, rng.randint(9, 24) if big else rng.randint(1, 5)))}
        dynamic = self.on("dynamic") and rng.random() < 0.25
        stmts: list[Stmt] = []
        for _ in range(rng.randint(1, self.size)):
            stmts.append(self.stmt(stmts, dynamic))
        produced = range(len(ARG_KINDS), len(ARG_KINDS) + len(stmts))
        used = {a for s in stmts for a in s.args}
        leaves = [v for v in produced if v not in used][-3:]
        return Program(dtype, sizes, dynamic, tuple(stmts), tuple(leaves))

    def values(self, stmts: list[Stmt], pred) -> list[int]:
        kinds = list(ARG_KINDS) + [s.kind for s in stmts]
        return [v for v, k in enumerate(kinds) if pred(k)]

    def stmt(self, stmts: list[Stmt], dynamic: bool) -> Stmt:
        rng = self.rng
        options = ["map"] * 4
        if self.on("wcr"):
            options += ["reduce"] * 2
        if self.on("loop"):
            options += ["loop"] * 2
        if self.on("if"):
            options.append("if")
        if self.on("call"):
            options.append("call")
        if self.on("nn") and not dynamic:  # nn ops take static shapes only
            options += ["nn"] * 2
        if self.on("contract") and self.values(stmts, lambda k: len(k) == 2):
            options += ["contract"] * 2
        if stmts and stmts[-1].op == "contract" and rng.random() < 0.5:  # an epilogue candidate
            return self.map(stmts, stmts[-1].kind, first=len(ARG_KINDS) + len(stmts) - 1)
        op = rng.choice(options)
        if op == "contract":
            return self.contract(stmts)
        if op == "nn":
            s = self.nn(stmts)
            if s is not None:
                return s
            op = "map"
        if op == "reduce":
            return self.reduce(stmts)
        kinds = sorted({k for k in [*ARG_KINDS, *(s.kind for s in stmts)] if k != ()})
        kind = rng.choice(kinds)
        if op == "loop":
            return self.loop(stmts, kind)
        body = self.map(stmts, kind)
        if op == "if":
            cond = rng.choice(self.values(stmts, lambda k: len(k) <= 1))
            other = rng.choice(self.values(stmts, lambda k: k == kind))
            return Stmt("if", kind, (cond, other, *body.args), {"then": body.params})
        if op == "call":
            return replace(body, op="call")
        return body

    def map(self, stmts: list[Stmt], kind: Kind, extra: int = 0, plain: bool = False, first: int | None = None) -> Stmt:
        """An elementwise map over `kind`, maybe shifted, reversed or nested; its
        tasklet also takes `extra` leading operands the caller provides. It
        reads `first` (a value of `kind`) first, if given."""
        rng = self.rng
        same = self.values(stmts, lambda k: k == kind)
        readable = self.values(stmts, lambda k: _readable(kind, k))
        args = [rng.choice(same) if first is None else first] + [rng.choice(readable) for _ in range(rng.randint(0, 2))]
        n = extra + len(args)
        params: dict = {"expr": _bounded(_uses_all(_expr(rng, n, 3, self.features), n, rng))}
        if len(kind) == 2 and self.on("nested") and rng.random() < 0.4:
            params["nested"] = True
        if kind and not plain and self.on("offset") and rng.random() < 0.35:
            params["offset"] = (rng.randrange(len(kind)), rng.choice(("read+1", "write+1", "reverse")))
            if params["offset"][1] != "reverse":
                params["base"] = True  # outs start from a value: the map leaves one slice unwritten
                return Stmt("map", kind, (rng.choice(same), *args), params)
        return Stmt("map", kind, tuple(args), params)

    def reduce(self, stmts: list[Stmt]) -> Stmt:
        """A map reducing one axis of a 1-D or 2-D value with a wcr write."""
        rng = self.rng
        src = rng.choice(self.values(stmts, lambda k: len(k) >= 1))
        src_kind = (list(ARG_KINDS) + [s.kind for s in stmts])[src]
        keep = None if len(src_kind) == 1 else rng.randrange(2)
        kind = () if keep is None else (src_kind[keep],)
        params = {
            "wcr": rng.choice(("add", "mul", "max", "min")),
            "expr": (rng.choice(("tanh", "sq1", "sin") if self.on("sin") else ("tanh", "sq1")), ("arg", 0)),
            "keep": keep,
            "nested": keep is not None and self.on("nested") and rng.random() < 0.4,
        }
        init = self.values(stmts, lambda k: k == kind)
        if init and rng.random() < 0.5:
            return Stmt("reduce", kind, (src, rng.choice(init)), params)
        return Stmt("reduce", kind, (src,), params)

    def contract(self, stmts: list[Stmt]) -> Stmt:
        """A product map: x (2-D) along one of its dims times y (2-D or 1-D)
        along a dim of the same size, accumulated into zeros or an earlier value."""
        rng = self.rng
        kinds = list(ARG_KINDS) + [s.kind for s in stmts]
        x = rng.choice(self.values(stmts, lambda k: len(k) == 2))
        x_depth = rng.randrange(2)
        depth, row = kinds[x][x_depth], kinds[x][1 - x_depth]
        y = rng.choice(self.values(stmts, lambda k: 1 <= len(k) <= 2 and depth in k))
        y_kind = kinds[y]
        y_depth = rng.choice([a for a, d in enumerate(y_kind) if d == depth])
        kind = (row,) + tuple(d for a, d in enumerate(y_kind) if a != y_depth)
        roles = ["row", "depth", "col"][: len(kind) + 1]
        rng.shuffle(roles)
        params = {"x_depth": x_depth, "y_depth": y_depth, "order": tuple(roles)}
        init = self.values(stmts, lambda k: k == kind)
        if init and rng.random() < 0.4:
            return Stmt("contract", kind, (x, y, init[-1] if rng.random() < 0.6 else rng.choice(init)), params)
        return Stmt("contract", kind, (x, y), params)

    def loop(self, stmts: list[Stmt], kind: Kind) -> Stmt:
        """scf.for over min(N, 3) trips: acc' = map(acc, x) in place or fresh; or
        the pre-loop tensor pattern of issue 12 item 1 (kinds with an N dim)."""
        rng = self.rng
        init = rng.choice(self.values(stmts, lambda k: k == kind))
        style = "fresh"
        if self.on("inplace"):
            style = rng.choice(("inplace", "fresh", "preloop") if kind == V else ("inplace", "fresh"))
        body = self.map(stmts, kind, extra=2 if style == "preloop" else 1, plain=True)
        pre = rng.choice(self.values(stmts, lambda k: k == kind))
        params = {"body": body.params, "style": style, "trips": rng.randint(1, 3)}
        return Stmt("loop", kind, (init, pre, *body.args), params)

    def nn(self, stmts: list[Stmt]) -> Stmt | None:
        rng = self.rng
        vals = self.values(stmts, lambda k: len(k) >= 1)
        x = rng.choice(vals)
        kind = (list(ARG_KINDS) + [s.kind for s in stmts])[x]
        choices = ["unary", "binary", "reduce"]
        if len(kind) == 2:
            choices += ["softmax", "transpose", "matmul"]
        what = rng.choice(choices)
        if what == "unary":
            return Stmt("nn." + rng.choice(("relu", "tanh", "neg", "sigmoid")), kind, (x,))
        if what == "binary":
            y = rng.choice(self.values(stmts, lambda k: k == kind))
            return Stmt("nn." + rng.choice(("add", "sub", "mul")), kind, (x, y))
        if what == "reduce":
            axis = rng.randrange(len(kind))
            out = tuple(d for a, d in enumerate(kind) if a != axis)
            return Stmt("nn.reduce", out, (x,), {"kind": rng.choice(("sum", "max", "min", "mean")), "axis": axis})
        if what == "softmax":
            return Stmt(rng.choice(("nn.softmax", "nn.log_softmax")), kind, (x,), {"axis": rng.randrange(2)})
        if what == "transpose":
            return Stmt("nn.transpose", (kind[1], kind[0]), (x,))
        rhs = self.values(stmts, lambda k: len(k) == 2 and k[0] == kind[1])
        if not rhs:
            return None
        y = rng.choice(rhs)
        other = (list(ARG_KINDS) + [s.kind for s in stmts])[y]
        return Stmt("nn.matmul", (kind[0], other[1]), (x, y))


def generate(seed: int, features: frozenset[str], size: int = 5) -> Program:
    """The program of `seed` (deterministic)."""
    return Generator(random.Random(seed), features, size).program()


# --- rendering -------------------------------------------------------------------------

_UNARY_MLIR = {"tanh": "math.tanh", "sin": "math.sin", "neg": "arith.negf"}


class _Writer:
    """Prints one function: value names, types, fresh temporaries."""

    def __init__(self, program: Program, lines: list[str], dims: dict[str, str]):
        self.p, self.lines, self.dims = program, lines, dims
        self.t = program.dtype
        self.counter = 0

    def fresh(self, stem: str = "t") -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    def emit(self, line: str, indent: int = 2) -> None:
        self.lines.append(" " * indent + line)

    def type(self, kind: Kind) -> str:
        if self.p.dynamic:
            shape = "?x" * len(kind)
        else:
            shape = "".join(f"{self.p.sizes[d]}x" for d in kind)
        return f"tensor<{shape}{self.t}>"

    def bound(self, dim: str, minus: int = 0) -> str:
        """A map bound: a literal, or an SSA size in dynamic mode."""
        if not self.p.dynamic:
            return str(self.p.sizes[dim] - minus)
        return self.dims[dim] if not minus else self.dims[dim + "-1"]

    def empty(self, kind: Kind, ind: int) -> str:
        v = self.fresh("e")
        sizes = ", ".join(self.dims[d] for d in kind) if self.p.dynamic else ""
        self.emit(f"{v} = tensor.empty({sizes}) : {self.type(kind)}", ind)
        return v

    def fill(self, kind: Kind, value: str, ind: int) -> str:
        v = self.fresh("f")
        if not self.p.dynamic:
            self.emit(f"{v} = arith.constant dense<{value}> : {self.type(kind)}", ind)
            return v
        e = self.empty(kind, ind)
        ivs = [f"%z{k}" for k in range(len(kind))]
        o, c = self.fresh("o"), self.fresh("c")
        self.emit(f"{v} = df.map ({', '.join(ivs)}) in ({', '.join(self.bound(d) for d in kind)}) "
                  f"outs({o} = {e} : {self.type(kind)}) {{", ind)
        self.emit(f"  {c} = arith.constant {value} : {self.t}", ind)
        self.emit(f"  df.write {c}, {o}[{', '.join(ivs)}] : {self.type(kind)}", ind)
        self.emit(f"}} -> {self.type(kind)}", ind)
        return v

    def tasklet(self, expr: tuple, inputs: list[str], ind: int) -> str:
        t, out = self.t, self.fresh("p")
        params = ", ".join(f"%u{k}: {t}" for k in range(len(inputs)))
        self.emit(f"{out} = df.tasklet ({', '.join(inputs)}) : ({', '.join([t] * len(inputs))}) -> {t} {{", ind)
        self.emit(f"^bb0({params}):", ind)
        def go(e: tuple) -> str:
            if e[0] == "arg":
                return f"%u{e[1]}"
            xs = [go(c) for c in e[1:]]
            r = self.fresh("x")
            if e[0] == "sq1":  # x / (1 + x*x)
                one, sq, den = self.fresh("x"), self.fresh("x"), self.fresh("x")
                self.emit(f"  {one} = arith.constant 1.0 : {t}", ind)
                self.emit(f"  {sq} = arith.mulf {xs[0]}, {xs[0]} : {t}", ind)
                self.emit(f"  {den} = arith.addf {one}, {sq} : {t}", ind)
                self.emit(f"  {r} = arith.divf {xs[0]}, {den} : {t}", ind)
            elif e[0] in _UNARY_MLIR:
                self.emit(f"  {r} = {_UNARY_MLIR[e[0]]} {xs[0]} : {t}", ind)
            else:
                self.emit(f"  {r} = arith.{e[0]} {xs[0]}, {xs[1]} : {t}", ind)
            return r

        self.emit(f"  df.yield {go(expr)} : {t}", ind)
        self.emit("}", ind)
        return out

    def index(self, kind: Kind, ivs: list[str], of: Kind, shifted: dict[int, str]) -> str:
        """The index of a value of kind `of` read by a map over `kind` at `ivs`."""
        if of == kind:
            return ", ".join(shifted.get(a, iv) for a, iv in enumerate(ivs))
        if of == ():
            return ""
        a = kind.index(of[0])
        return shifted.get(a, ivs[a])

    def map(self, kind: Kind, args: list[str], arg_kinds: list[Kind], params: dict, ind: int,
            outs: str | None = None, extra: list[tuple[str, Kind]] = ()) -> str:
        """An elementwise map; returns its result's name."""
        offset = params.get("offset")
        if params.get("base"):
            outs, args, arg_kinds = args[0], args[1:], arg_kinds[1:]
        if outs is None:
            outs = self.empty(kind, ind)
        ivs = [f"%i{k}" for k in range(len(kind))]
        bounds = [self.bound(d) for d in kind]
        if offset is not None and offset[1] != "reverse":
            bounds[offset[0]] = self.bound(kind[offset[0]], 1)
        r, ty, o = self.fresh("m"), self.type(kind), self.fresh("o")
        nested = params.get("nested") and len(kind) == 2
        if nested:
            self.emit(f"{r} = df.map ({ivs[0]}) in ({bounds[0]}) outs({o} = {outs} : {ty}) {{", ind)
            self.emit(f"  df.map ({ivs[1]}) in ({bounds[1]}) {{", ind)
            body = ind + 4
        else:
            self.emit(f"{r} = df.map ({', '.join(ivs)}) in ({', '.join(bounds)}) outs({o} = {outs} : {ty}) {{", ind)
            body = ind + 2
        shifted: dict[int, str] = {}
        write_at = list(ivs)
        if offset is not None:
            axis, mode = offset
            k = self.fresh("k")
            if mode == "reverse":
                last = self.fresh("n")
                if self.p.dynamic:
                    self.emit(f"{k} = arith.subi {self.dims[kind[axis] + '-1']}, {ivs[axis]} : index", body)
                else:
                    self.emit(f"{last} = arith.constant {self.p.sizes[kind[axis]] - 1} : index", body)
                    self.emit(f"{k} = arith.subi {last}, {ivs[axis]} : index", body)
            else:
                one = self.fresh("one")
                self.emit(f"{one} = arith.constant 1 : index", body)
                self.emit(f"{k} = arith.addi {ivs[axis]}, {one} : index", body)
            if mode == "write+1":
                write_at[axis] = k
            else:
                shifted[axis] = k
        reads = []
        for v, vk in [*extra, *zip(args, arg_kinds)]:
            x = self.fresh("r")
            self.emit(f"{x} = df.read {v}[{self.index(kind, ivs, vk, shifted)}] : {self.type(vk)}", body)
            reads.append(x)
        p = self.tasklet(params["expr"], reads, body)
        self.emit(f"df.write {p}, {o}[{', '.join(write_at)}] : {ty}", body)
        if nested:
            self.emit("  }", ind)
        self.emit(f"}} -> {ty}", ind)
        return r

    def reduce(self, stmt: Stmt, args: list[str], ind: int) -> str:
        src_kind = self.p.kind_of(stmt.args[0])
        wcr, keep = stmt.params["wcr"], stmt.params["keep"]
        outs = args[1] if len(args) > 1 else self.fill(stmt.kind, WCR_INIT[wcr], ind)
        ivs = [f"%i{k}" for k in range(len(src_kind))]
        bounds = [self.bound(d) for d in src_kind]
        r, ty, o = self.fresh("m"), self.type(stmt.kind), self.fresh("o")
        at = "" if keep is None else ivs[keep]
        if stmt.params.get("nested"):
            other = 1 - keep
            self.emit(f"{r} = df.map ({ivs[keep]}) in ({bounds[keep]}) outs({o} = {outs} : {ty}) {{", ind)
            self.emit(f"  df.map ({ivs[other]}) in ({bounds[other]}) {{", ind)
            body = ind + 4
        else:
            self.emit(f"{r} = df.map ({', '.join(ivs)}) in ({', '.join(bounds)}) outs({o} = {outs} : {ty}) {{", ind)
            body = ind + 2
        x = self.fresh("r")
        self.emit(f"{x} = df.read {args[0]}[{', '.join(ivs)}] : {self.type(src_kind)}", body)
        p = self.tasklet(stmt.params["expr"], [x], body)
        self.emit(f"df.write {p}, {o}[{at}] wcr({wcr}) : {ty}", body)
        if stmt.params.get("nested"):
            self.emit("  }", ind)
        self.emit(f"}} -> {ty}", ind)
        return r

    def contract(self, stmt: Stmt, args: list[str], ind: int) -> str:
        x_kind, y_kind = self.p.kind_of(stmt.args[0]), self.p.kind_of(stmt.args[1])
        params, kind = stmt.params, stmt.kind
        outs = args[2] if len(args) > 2 else self.fill(kind, "0.0", ind)
        order = params["order"]
        iv = {role: f"%i{order.index(role)}" for role in order}
        dims = {"row": kind[0], "depth": x_kind[params["x_depth"]], "col": kind[-1]}
        x_at = [iv["depth"], iv["row"]] if params["x_depth"] == 0 else [iv["row"], iv["depth"]]
        y_at = [iv["depth"]] if len(y_kind) == 1 else (
            [iv["depth"], iv["col"]] if params["y_depth"] == 0 else [iv["col"], iv["depth"]])
        r, ty, o = self.fresh("m"), self.type(kind), self.fresh("o")
        self.emit(f"{r} = df.map ({', '.join(iv[role] for role in order)}) in "
                  f"({', '.join(self.bound(dims[role]) for role in order)}) outs({o} = {outs} : {ty}) {{", ind)
        x, y = self.fresh("r"), self.fresh("r")
        self.emit(f"{x} = df.read {args[0]}[{', '.join(x_at)}] : {self.type(x_kind)}", ind + 2)
        self.emit(f"{y} = df.read {args[1]}[{', '.join(y_at)}] : {self.type(y_kind)}", ind + 2)
        p = self.tasklet(("mulf", ("arg", 0), ("arg", 1)), [x, y], ind + 2)
        out_at = [iv["row"], iv["col"]] if len(kind) == 2 else [iv["row"]]
        self.emit(f"df.write {p}, {o}[{', '.join(out_at)}] wcr(add) : {ty}", ind + 2)
        self.emit(f"}} -> {ty}", ind)
        return r

    def loop(self, stmt: Stmt, args: list[str], ind: int) -> str:
        kind, ty = stmt.kind, self.type(stmt.kind)
        style = stmt.params["style"]
        trips = min(stmt.params["trips"], self.p.sizes["N"]) if style == "preloop" else stmt.params["trips"]
        body_args, body_kinds = args[2:], [self.p.kind_of(v) for v in stmt.args[2:]]
        n, r, t, acc = self.fresh("trips"), self.fresh("l"), self.fresh("t"), self.fresh("acc")
        self.emit(f"{n} = arith.constant {trips} : index", ind)
        self.emit(f"{r} = scf.for {t} = %c0 to {n} step %c1 iter_args({acc} = {args[0]}) -> ({ty}) {{", ind)
        body = ind + 2
        extra = [(acc, kind)]
        outs = acc if style == "inplace" else None
        if style == "preloop":
            m1, o, v = self.fresh("m"), self.fresh("o"), self.fresh("r")
            self.emit(f"{m1} = df.map (%q) in (1) outs({o} = {args[1]} : {ty}) {{", body)
            self.emit(f"  {v} = df.read {acc}[{t}] : {ty}", body)
            self.emit(f"  df.write {v}, {o}[{t}] : {ty}", body)
            self.emit(f"}} -> {ty}", body)
            extra = [(m1, kind), (acc, kind)]
        m = self.map(kind, body_args, body_kinds, stmt.params["body"], body, outs=outs, extra=extra)
        self.emit(f"scf.yield {m} : {ty}", body)
        self.emit("}", ind)
        return r

    def branch(self, stmt: Stmt, args: list[str], ind: int) -> str:
        ty, t = self.type(stmt.kind), self.t
        cond_kind = self.p.kind_of(stmt.args[0])
        e, z, b, r = self.fresh("e"), self.fresh("z"), self.fresh("b"), self.fresh("if")
        at = "%c0" if cond_kind else ""
        self.emit(f"{e} = tensor.extract {args[0]}[{at}] : {self.type(cond_kind)}", ind)
        self.emit(f"{z} = arith.constant 0.0 : {t}", ind)
        self.emit(f"{b} = arith.cmpf ogt, {e}, {z} : {t}", ind)
        self.emit(f"{r} = scf.if {b} -> ({ty}) {{", ind)
        kinds = [self.p.kind_of(v) for v in stmt.args[2:]]
        m = self.map(stmt.kind, args[2:], kinds, stmt.params["then"], ind + 2)
        self.emit(f"scf.yield {m} : {ty}", ind + 2)
        self.emit("} else {", ind)
        self.emit(f"scf.yield {args[1]} : {ty}", ind + 2)
        self.emit("}", ind)
        return r

    def nn(self, stmt: Stmt, args: list[str], ind: int) -> str:
        r = self.fresh("nn")
        types = [self.type(self.p.kind_of(v)) for v in stmt.args]
        sig = f"({', '.join(types)}) -> {self.type(stmt.kind)}"
        attrs = ""
        if stmt.op == "nn.reduce":
            attrs = f' {{kind = "{stmt.params["kind"]}", axes = array<i64: {stmt.params["axis"]}>}}'
        elif stmt.op in ("nn.softmax", "nn.log_softmax"):
            attrs = f" {{axis = {stmt.params['axis']} : i64}}"
        elif stmt.op == "nn.transpose":
            attrs = " {permutation = array<i64: 1, 0>}"
        self.emit(f"{r} = {stmt.op} {', '.join(args)}{attrs} : {sig}", ind)
        return r


def _signature(w: _Writer, kinds: list[Kind]) -> list[str]:
    return [w.type(k) for k in kinds]


def _prologue(w: _Writer, first: str) -> None:
    """Index constants, and in dynamic mode the sizes (from `first`, a value of kind A)."""
    w.emit("%c0 = arith.constant 0 : index")
    w.emit("%c1 = arith.constant 1 : index")
    if w.p.dynamic:
        ty = w.type(A)
        w.emit(f"%N = tensor.dim {first}, %c0 : {ty}")
        w.emit(f"%M = tensor.dim {first}, %c1 : {ty}")
        w.emit("%N1 = arith.subi %N, %c1 : index")
        w.emit("%M1 = arith.subi %M, %c1 : index")


DIMS = {"N": "%N", "M": "%M", "N-1": "%N1", "M-1": "%M1"}


def render(p: Program, name: str = "f") -> str:
    """The module text of `p`: `@{name}(a: NxM, v: N, w: M) -> (results...)` and
    one helper function per `call` statement (which takes the A-kind argument
    first, for its sizes)."""
    helpers: list[str] = []
    lines: list[str] = []
    w = _Writer(p, lines, DIMS)
    names = {0: "%a", 1: "%v", 2: "%w"}
    params = ", ".join(f"{names[k]}: {w.type(kind)}" for k, kind in enumerate(ARG_KINDS))
    results = [p.kind_of(v) for v in p.results]
    lines.append(f"func.func @{name}({params}) -> ({', '.join(_signature(w, results))}) {{")
    _prologue(w, "%a")
    for k, stmt in enumerate(p.stmts):
        args = [names[v] for v in stmt.args]
        kinds = [p.kind_of(v) for v in stmt.args]
        if stmt.op == "map":
            r = w.map(stmt.kind, args, kinds, stmt.params, 2)
        elif stmt.op == "reduce":
            r = w.reduce(stmt, args, 2)
        elif stmt.op == "loop":
            r = w.loop(stmt, args, 2)
        elif stmt.op == "contract":
            r = w.contract(stmt, args, 2)
        elif stmt.op == "if":
            r = w.branch(stmt, args, 2)
        elif stmt.op == "call":
            r = w.fresh("call")
            helper = f"{name}_h{k}"
            h_lines: list[str] = []
            hw = _Writer(p, h_lines, DIMS)
            h_args = [f"%arg{j}" for j in range(len(args))]
            h_params = ", ".join(f"{a}: {hw.type(kk)}" for a, kk in zip(["%size", *h_args], [A, *kinds]))
            h_lines.append(f"func.func @{helper}({h_params}) -> {hw.type(stmt.kind)} {{")
            _prologue(hw, "%size")
            hr = hw.map(stmt.kind, h_args, kinds, stmt.params, 2)
            hw.emit(f"func.return {hr} : {hw.type(stmt.kind)}")
            h_lines.append("}")
            helpers.append("\n".join(h_lines))
            types = ", ".join(w.type(kk) for kk in [A, *kinds])
            w.emit(f"{r} = func.call @{helper}(%a, {', '.join(args)}) : ({types}) -> {w.type(stmt.kind)}")
        else:
            r = w.nn(stmt, args, 2)
        names[len(ARG_KINDS) + k] = r
    w.emit(f"func.return {', '.join(names[v] for v in p.results)} : {', '.join(_signature(w, results))}")
    lines.append("}")
    return "\n".join(["\n".join(lines), *helpers]) + "\n"
