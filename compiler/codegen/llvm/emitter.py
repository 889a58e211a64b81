"""The walker: a module's LLVM context, and blocks translated op by op through a table of handlers.

    ModuleEmitter(module, handlers=..., triple=..., data_layout=..., **options)
    FunctionEmitter(module_emitter, ir_function, func_op, in_parallel=...)

A handler is `handler(e, op)`: it emits `op` at `e.b` (an llvmlite
IRBuilder) and binds each result in `e.values` (an `ir.Value`, or a
`values.MemRef` for a memref). Each dialect module of this package has one
table (`Handlers`) of its ops; a target composes the tables it supports and
gives them to its `ModuleEmitter` (the host: `module.HOST_HANDLERS`; the GPU:
`nvptx.KERNEL_HANDLERS`). Handlers reach the module through `e.m`: its
options, `declare`, `intrinsic`, the `funcs` and `globals` tables.

Extension surface, what a target's function emitter overrides:

* `terminators`: the op names that end a region (`emit_ops` returns them
  unemitted);
* `handler(op)`: the handler for `op` (by default from the module's table),
  raising `unsupported` when there is none;
* `unsupported(what)`: the error for what this emitter cannot translate;
* `report_out_of_bounds(op)`: what a failed check of an access marked by
  `check-bounds` records (on the host: the exported counter `BOUNDS_FAILURES`
  and message `BOUNDS_SITE`);
* `report_warning(message)`: what an op's true `df.WARN_IF` result records
  (on the host: the message's bit in the exported mask `WARNINGS`, whose
  messages `WARNING_MESSAGES` lists; the GPU emitter records nothing);
* `checks_division`: whether integer divisions by a divisor not known to be
  safe are guarded (on the host: a zero divisor is recorded like a failed
  bounds check with the message `DIVISION_BY_ZERO`, and `MIN / -1` wraps,
  so no division traps; the GPU emitter, whose division does not trap,
  divides plainly).

and the builders handlers share: `get`/`getv`/`getm`, `bind`,
`flat_operands`, `emit_ops`, `loop`, `address`, `num_elements`,
`entry_alloca`, `fflags`, `call_intrinsic`, `call_libm`.

Float arithmetic carries `reassoc contract` (plus any flags the op itself
states) unless the module's `fast_math` is off, which emits no flags at all;
`reassoc` is what lets LLVM vectorise float reductions. `ninf`/`nnan` are
never added by default: programs use -inf initialisers and rely on NaN
semantics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from dfc.compiler.codegen.ir_loop import counted_loop
from dfc.compiler.codegen.llvm.values import (
    I64,
    NARROW_FLOATS,
    PTR,
    MemRef,
    flat_types,
    flatten,
    is_float,
    memref_extent,
    type_suffix,
    unflatten,
    unsupported,
)
from dfc.compiler.codegen.runtime import opaque
from dfc.dialects.df import WARN_IF
from dfc.dialects.diagnostics import location_of

__all__ = ["ModuleEmitter", "FunctionEmitter", "Handler", "Handlers", "TERMINATORS", "DEFAULT_PARALLEL_MIN_WORK",
           "BOUNDS_FAILURES", "BOUNDS_SITE", "DIVISION_BY_ZERO", "WARNINGS", "WARNING_MESSAGES", "bounds_message",
           "run_time_error"]  # fmt: skip

DEFAULT_PARALLEL_MIN_WORK = 1 << 17
"""Default `parallel_min_work`: estimated ops each thread must get before a
parallel loop uses the runtime's thread pool. Handing a loop to awake
(spinning) workers costs a few microseconds on the development machine, and
waking sleeping ones tens; 128K ops (tens of microseconds of vectorised work)
is about the break-even."""

BOUNDS_FAILURES = "__dfc_bounds_failures"
"""An exported i64 counting the module's failed bounds checks (`check-bounds`):
the engine compares it before and after a call."""
BOUNDS_SITE = "__dfc_bounds_site"
"""An exported pointer to the message of the last failed bounds check (or
division by zero, which counts in `BOUNDS_FAILURES` too)."""
DIVISION_BY_ZERO = "integer division by zero"
"""How the message of an integer division by zero ends."""
WARNINGS = "__dfc_warnings"
"""An exported i64 mask of the module's warnings (`df.WARN_IF`) since the
engine last cleared it, bit k for message k of `WARNING_MESSAGES`: after a
call the engine clears it and issues a `RuntimeWarning` per bit set."""
WARNING_MESSAGES = "__dfc_warning_messages"
"""An exported array of `MAX_WARNINGS` pointers to the module's warning messages (null: none)."""
MAX_WARNINGS = 64

STOP_STRIP = 4096
"""Iterations of a loop without inner loops between two tests for a failed
bounds check (`FunctionEmitter.loop`)."""

TERMINATORS = frozenset({"scf.yield", "scf.condition", "scf.reduce", "func.return"})
"""Region terminators: `emit_ops` returns them to the op owning the region."""


def bounds_message(op: Operation) -> str:
    """What a failed check of the marked access `op` reports."""
    where = location_of(op) or "<unknown location>"
    what = op.attributes["check_bounds"].data  # type: ignore[attr-defined]
    return f"{where}: '{what}' index out of bounds"


def run_time_error(message: str) -> Exception:
    """The exception a call raises for the failure `message` (see `BOUNDS_SITE`):
    `ZeroDivisionError` for a division by zero, else `IndexError`."""
    return (ZeroDivisionError if message.endswith(DIVISION_BY_ZERO) else IndexError)(message)


Handler = Callable[["FunctionEmitter", Operation], None]
"""Emits one op at `e.b` and binds its results in `e.values`."""


class Handlers(dict[str, Handler]):
    """A table of handlers by op name."""

    def register(self, *names: str) -> Callable[[Handler], Handler]:
        """Decorator: the function handles the ops `names`."""

        def deco(f: Handler) -> Handler:
            for n in names:
                self[n] = f
            return f

        return deco


class ModuleEmitter:
    """One LLVM module being emitted, and what its functions share: the
    options, declarations, constant strings, alias scopes, the emitted
    functions and globals by MLIR symbol name.

    `fast_math`: float flags (see the module docstring). `num_threads`: the
    threads an `scf.parallel` may use (1: serial). `parallel_min_work`:
    estimated ops per thread below which a parallel loop runs serially.
    `vector_math`: inline polynomials for f32/f64 exp, log and tanh.
    `own_gemm`: `blas.gemm` calls dfc's kernels instead of OpenBLAS."""

    def __init__(
        self,
        module: ModuleOp,
        *,
        handlers: Handlers,
        triple: str,
        data_layout: str,
        fast_math: bool = True,
        num_threads: int = 1,
        parallel_min_work: int = DEFAULT_PARALLEL_MIN_WORK,
        vector_math: bool = False,
        own_gemm: bool = False,
    ):
        if int(num_threads) < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        self.module = module
        self.handlers = handlers
        self.fast_math = fast_math
        self.num_threads = int(num_threads)
        self.parallel_min_work = max(0, int(parallel_min_work))
        self.vector_math = vector_math
        self.own_gemm = own_gemm
        self.ir = ir.Module(name="dfc")
        self.ir.triple = triple
        self.ir.data_layout = data_layout
        self.funcs: dict[str, tuple[Operation, ir.Function]] = {}
        """func.func symbol -> (op, its LLVM function)."""
        self.globals: dict[str, tuple[Operation, ir.GlobalVariable]] = {}
        """memref.global symbol -> (op, its LLVM global)."""
        self._outlined = 0
        self._messages: dict[str, ir.GlobalVariable] = {}
        self._warnings: list[str] = []
        self._scopes: dict[Operation, dict[tuple, tuple[ir.MDValue, ir.MDValue]]] = {}

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type], *, pure: bool = False) -> ir.Function:
        """The function `name` of the module, declared on first use (`pure`: nounwind readnone)."""
        fn = self.ir.globals.get(name)
        if fn is None:
            fn = ir.Function(self.ir, ir.FunctionType(ret, list(args)), name)
            if pure:
                fn.attributes.add("nounwind")
                fn.attributes.add("readnone")
        return fn

    def intrinsic(self, base: str, types: Sequence[ir.Type], ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """`llvm.<base>` overloaded on `types`."""
        name = "llvm." + base + "".join("." + type_suffix(t) for t in types)
        return self.declare(name, ret, args)

    def bounds_state(self) -> tuple[ir.GlobalVariable, ir.GlobalVariable]:
        """The module's failed-bounds-check counter and last failure message (created on first use)."""
        if BOUNDS_FAILURES not in self.ir.globals:
            count = ir.GlobalVariable(self.ir, I64, BOUNDS_FAILURES)
            count.initializer = ir.Constant(I64, 0)
            site = ir.GlobalVariable(self.ir, PTR, BOUNDS_SITE)
            site.initializer = ir.Constant(PTR, None)
            opaque(count)
            opaque(site)
        return self.ir.globals[BOUNDS_FAILURES], self.ir.globals[BOUNDS_SITE]

    def warning_bit(self, message: str) -> tuple[ir.GlobalVariable, int]:
        """The module's warning mask (see `WARNINGS`) and the bit of `message` in it."""
        if WARNINGS not in self.ir.globals:
            opaque(ir.GlobalVariable(self.ir, I64, WARNINGS)).initializer = ir.Constant(I64, 0)
            opaque(ir.GlobalVariable(self.ir, ir.ArrayType(PTR, MAX_WARNINGS), WARNING_MESSAGES))
        if message not in self._warnings:
            if len(self._warnings) == MAX_WARNINGS:
                raise unsupported(f"more than {MAX_WARNINGS} distinct warning messages in a module")
            self._warnings.append(message)
            table = self.ir.globals[WARNING_MESSAGES]
            table.initializer = ir.Constant(table.value_type, [self.message(m) for m in self._warnings]
                                            + [ir.Constant(PTR, None)] * (MAX_WARNINGS - len(self._warnings)))
        return self.ir.globals[WARNINGS], self._warnings.index(message)

    def message(self, text: str) -> ir.GlobalVariable:
        """A private, NUL-terminated constant string."""
        if text not in self._messages:
            data = bytearray(text.encode() + b"\0")
            gv = ir.GlobalVariable(self.ir, ir.ArrayType(ir.IntType(8), len(data)), f"__dfc_msg.{len(self._messages)}")
            gv.initializer = ir.Constant(gv.value_type, data)
            gv.global_constant = True
            gv.linkage = "private"
            self._messages[text] = opaque(gv)
        return self._messages[text]

    def view_scopes(self, func_op: Operation) -> dict[tuple, tuple[ir.MDValue, ir.MDValue]]:
        """For each byte range (`memref_extent`) of the views in `func_op` that
        other views of the same allocation do not overlap (mem-plan's slots):
        its `!alias.scope` and the `!noalias` list of the ranges disjoint from it."""
        if func_op not in self._scopes:
            extents = list(dict.fromkeys(
                x for op in func_op.walk() if op.name == "memref.view" and (x := memref_extent(op.results[0]))
            ))  # fmt: skip
            disjoint = {x: [y for y in extents if y[0] == x[0] and (y[2] <= x[1] or x[2] <= y[1])] for x in extents}
            scoped = [x for x in extents if disjoint[x]]
            name = func_op.sym_name.data
            domain = self.ir.add_metadata([f"dfc.views.{name}"]) if scoped else None
            scope = {x: self.ir.add_metadata([f"dfc.view.{name}.{k}", domain]) for k, x in enumerate(scoped)}
            self._scopes[func_op] = {
                x: (self.ir.add_metadata([scope[x]]), self.ir.add_metadata([scope[y] for y in disjoint[x]]))
                for x in scoped
            }
        return self._scopes[func_op]

    def fresh_name(self, base: str) -> str:
        """A new function name `base.parN` (outlined bodies, GEMM helpers)."""
        self._outlined += 1
        return f"{base}.par{self._outlined}"


class FunctionEmitter:
    """Emits the body of one LLVM function `fn` from the ops of `func_op`
    (a func.func, or a region outlined from it). `in_parallel`: the code runs
    inside a parallel loop (nested parallel loops and GEMMs then run serially)."""

    terminators: frozenset[str] = TERMINATORS
    stops_early = True
    """Whether loops holding checked accesses end after a failure (`loop`)."""
    checks_division = True

    def __init__(self, mod: ModuleEmitter, fn: ir.Function, func_op: Operation, *, in_parallel: bool):
        self.m = mod
        self.fn = fn
        self.func_op = func_op
        self.in_parallel = in_parallel
        # allocas go in `entry`, which only branches to `start`
        self.entry = fn.append_basic_block("entry")
        start = fn.append_basic_block("start")
        self._entry_br = ir.IRBuilder(self.entry).branch(start)
        self.b = ir.IRBuilder(start)
        self.values: dict[SSAValue, ir.Value | MemRef] = {}
        self.view_scopes = mod.view_scopes(func_op)
        self.outline_nests = False
        """Whether the top-level loop nests become functions (`outline.OUTLINE_MIN_NESTS`)."""
        self.messages: dict[str, ir.Value] = {}
        """Failure messages this function takes as arguments (an outlined body), by text."""

    # -- extension points

    def unsupported(self, what: str) -> NotImplementedError:
        """The error for what this emitter cannot translate."""
        return unsupported(what)

    def handler(self, op: Operation) -> Handler:
        """The handler that emits `op`."""
        handler = self.m.handlers.get(op.name)
        if handler is None:
            raise self.unsupported(f"op '{op.name}'")
        return handler

    def report_out_of_bounds(self, op: Operation) -> None:
        """Count a failed bounds check of `op` and record where it happened (see `BOUNDS_FAILURES`)."""
        self.report_failure(bounds_message(op))

    def report_failure(self, message: str) -> None:
        """Count a failure in `BOUNDS_FAILURES` and make `message` the one reported."""
        failures, site = self.m.bounds_state()
        self.b.atomic_rmw("add", failures, ir.Constant(I64, 1), "monotonic")
        text = self.messages.get(message)
        self.b.store(self.m.message(message) if text is None else text, site, align=8)  # any one failure's message

    def report_warning(self, message: str) -> None:
        """Set the bit of `message` in `WARNINGS`."""
        mask, bit = self.m.warning_bit(message)
        self.b.atomic_rmw("or", mask, ir.Constant(I64, (1 << bit) - (1 << 64 if bit == 63 else 0)), "monotonic")

    # -- values

    def get(self, v: SSAValue) -> ir.Value | MemRef:
        try:
            return self.values[v]
        except KeyError:
            raise AssertionError(f"LLVM emitter: value {v} used before definition") from None

    def getv(self, v: SSAValue) -> ir.Value:
        """The scalar value of `v`."""
        r = self.get(v)
        assert not isinstance(r, MemRef)
        return r

    def getm(self, v: SSAValue) -> MemRef:
        """The memref value of `v`."""
        r = self.get(v)
        assert isinstance(r, MemRef)
        return r

    def bind(self, vals: Sequence[SSAValue], flat: Sequence[ir.Value]) -> None:
        """Bind `vals` (block arguments or results) to their flattened parts."""
        k = 0
        for a in vals:
            n = len(flat_types(a.type))
            self.values[a] = unflatten(a.type, flat[k : k + n])
            k += n

    def flat_operands(self, vals: Sequence[SSAValue]) -> list[ir.Value]:
        """The flattened parts of `vals`."""
        return [x for v in vals for x in flatten(self.get(v))]

    def entry_alloca(self, ty: ir.Type, align: int, name: str = "") -> ir.Value:
        """A stack slot allocated once, in the function's entry block."""
        eb = ir.IRBuilder(self.entry)
        eb.position_before(self._entry_br)
        a = eb.alloca(ty, name=name)
        a.align = align
        return opaque(a)

    def fflags(self, op: Operation) -> tuple[str, ...]:
        """The fast-math flags of float op `op`: the module's defaults and its own."""
        if not self.m.fast_math:
            return ()
        flags = {"reassoc", "contract"}
        attr = op.properties.get("fastmath")
        if attr is not None:
            flags |= {str(getattr(f, "value", f)) for f in attr.data}
        return tuple(sorted(flags))

    def explicit_fflags(self, op: Operation) -> tuple[str, ...]:
        """Only the fast-math flags `op` states (comparisons)."""
        attr = op.properties.get("fastmath")
        if not self.m.fast_math or attr is None:
            return ()
        return tuple(sorted(str(getattr(f, "value", f)) for f in attr.data))

    # -- blocks

    def emit_ops(self, block: Block) -> Operation | None:
        """Emit every op of `block` but its region terminator, which is returned."""
        for op in block.ops:
            if op.name in self.terminators:
                if op is not block.last_op:
                    raise self.unsupported(f"op '{op.name}' before the end of a block")
                return op
            self.handler(op)(self, op)
            if WARN_IF in op.attributes:
                with self.b.if_then(self.getv(op.results[0]), likely=False):
                    self.report_warning(op.attributes[WARN_IF].data)  # type: ignore[attr-defined]
            for r in op.results:
                self.name_value(r)
        return None

    def name_value(self, v: SSAValue) -> None:
        """Give the LLVM value of `v` its MLIR name, for readable IR."""
        if v.name_hint is None or v not in self.values:
            return
        x = flatten(self.values[v])[0]
        if isinstance(x, (ir.Instruction, ir.Argument)) and x.name.startswith("."):
            x.name = v.name_hint

    def single_block(self, region, what: str) -> Block:
        if len(region.blocks) != 1:
            raise unsupported(f"{what} with {len(region.blocks)} blocks")
        return region.blocks[0]

    def emit_func_body(self) -> None:
        """Emit the body of the func.func `func_op` into `fn` (whose parameters
        are its flattened arguments) and return its flattened results."""
        op = self.func_op
        block = self.single_block(op.body, f"func.func @{op.sym_name.data}")
        k = 0
        for i, arg in enumerate(block.args):
            n = len(flat_types(arg.type))
            for j, a in enumerate(self.fn.args[k : k + n]):
                a.name = (arg.name_hint or f"arg{i}") + (f".size{j - 1}" if j else "")
            self.values[arg] = unflatten(arg.type, self.fn.args[k : k + n])
            k += n
        term = self.emit_ops(block)
        if term is None or term.name != "func.return":
            raise unsupported("func.func body without func.return")
        flat = self.flat_operands(term.operands)
        ret_ty = self.fn.function_type.return_type
        if not flat:
            self.b.ret_void()
        elif len(flat) == 1 and not isinstance(ret_ty, ir.LiteralStructType):
            self.b.ret(flat[0])
        else:
            agg = ir.Constant(ret_ty, ir.Undefined)
            for i, v in enumerate(flat):
                agg = self.b.insert_value(agg, v, i)
            self.b.ret(agg)

    # -- loops, addressing, calls

    def loop(
        self,
        lb: ir.Value,
        ub: ir.Value,
        step: ir.Value,
        inits: list[ir.Value],
        body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]],
        name: str = "for",
        checked: bool = False,
        nested: bool = True,
        hints: dict[str, ir.MDValue] | None = None,
    ) -> list[ir.Value]:
        """`for (iv = lb; iv < ub; iv += step)` with loop-carried `inits`;
        `body(iv, carried)` emits one iteration and returns the next values.
        Returns the carried values on exit. `checked` (the body holds accesses
        marked by `check-bounds`): where `stops_early`, the loop ends soon
        after a failure (`BOUNDS_FAILURES` changed since the loop began, a
        relaxed atomic read): before the next iteration when the body holds
        loops (`nested`), else before the next strip of `STOP_STRIP`
        iterations, the strip a plain loop that LLVM may vectorise. `hints`:
        `llvm.loop` metadata for the loop over the body (`strided_loops`)."""
        if not (checked and self.stops_early):
            return counted_loop(self.fn, self.b, lb, ub, step, inits, body, name, metadata=hints)
        failures, _ = self.m.bounds_state()
        start = self.b.load_atomic(failures, "monotonic", 8, typ=I64)

        def keep_going() -> ir.Value:
            return self.b.icmp_unsigned("==", self.b.load_atomic(failures, "monotonic", 8, typ=I64), start)

        if nested:
            return counted_loop(self.fn, self.b, lb, ub, step, inits, body, name, keep_going, hints)
        span = self.b.mul(step, ir.Constant(step.type, STOP_STRIP))

        def strip(first: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            last = self.call_intrinsic("smin", step.type, [self.b.add(first, span), ub])
            return counted_loop(self.fn, self.b, first, last, step, carried, body, name, metadata=hints)

        return counted_loop(self.fn, self.b, lb, ub, span, inits, strip, f"{name}.strip", keep_going)

    def address(self, m: MemRef, indices: Sequence[SSAValue]) -> ir.Value:
        """The address of element `indices` of `m`."""
        if not indices:
            return m.ptr
        b = self.b
        idx = self.getv(indices[0])
        for k in range(1, len(indices)):
            idx = b.add(b.mul(idx, m.sizes[k], flags=("nsw",)), self.getv(indices[k]), flags=("nsw",))
        return b.gep(m.ptr, [idx], inbounds=True, source_etype=m.elem)

    def num_elements(self, m: MemRef) -> ir.Value:
        n: ir.Value = ir.Constant(I64, 1)
        for s in m.sizes:
            n = self.b.mul(n, s, flags=("nsw",)) if not (isinstance(n, ir.Constant) and n.constant == 1) else s
        return n

    def call_intrinsic(self, base: str, ty: ir.Type, args: list[ir.Value], flags=()) -> ir.Value:
        """`llvm.<base>.<ty>(args)`; `flags` apply to float types."""
        fn = self.m.intrinsic(base, [ty], ty, [a.type for a in args])
        return self.b.call(fn, args, fastmath=flags if is_float(ty) else ())

    def call_libm(self, base: str, args: list[ir.Value], flags=()) -> ir.Value:
        """libm's `base` (`basef` for f32; f16 and bf16 through f32)."""
        ty = args[0].type
        b = self.b
        if isinstance(ty, NARROW_FLOATS):
            wide = [b.fpext(a, ir.FloatType()) for a in args]
            return b.fptrunc(self.call_libm(base, wide, flags), ty)
        name = base + ("f" if isinstance(ty, ir.FloatType) else "")
        fn = self.m.declare(name, ty, [ty] * len(args), pure=True)
        return b.call(fn, args, fastmath=flags)
