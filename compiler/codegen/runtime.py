"""The parallel runtime that JIT-compiled modules carry, emitted in LLVM IR.

`parallel_for(module, num_threads)` adds (once per module) the internal
function

    void __dfc_parallel_for(ptr body, ptr ctx, i64 lb, i64 ub, i64 step,
                            i64 min_iters)

which runs `body(ctx, lo, hi)` over the induction values [lb, ub) with the
given positive step, split into contiguous chunks. `body` iterates
`for (iv = lo; iv < hi; iv += step)`. The number of chunks is
`min(num_threads, trip_count / min_iters)`, so each chunk gets at least
`min_iters` iterations; with one chunk the body runs on the calling thread
without starting any thread. Otherwise chunks 1.. run on fresh pthreads
(pthread_create / pthread_join; a chunk whose thread cannot be created runs on
the caller) and chunk 0 runs on the calling thread. Chunk lengths are rounded
up to a multiple of 16 iterations, so neighbouring threads rarely write the
same cache line.

No Python is involved: the caller reaches this code through ctypes, which
releases the GIL, so the threads run on every core.
"""

from __future__ import annotations

import llvmlite.ir as ir

__all__ = ["parallel_for", "BODY_TYPE", "opaque"]

_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_I8 = ir.IntType(8)
_PTR = ir.PointerType()

BODY_TYPE = ir.FunctionType(ir.VoidType(), [_PTR, _I64, _I64])
"""The type of an outlined parallel body: void (ptr ctx, i64 lo, i64 hi)."""

# struct task { ptr body; ptr ctx; i64 lo; i64 hi; }
_TASK = ir.LiteralStructType([_PTR, _PTR, _I64, _I64])
_CHUNK_ALIGN = 16


class _Callee:
    """A function pointer value that llvmlite's `call` accepts as a callee
    (opaque pointers carry no function type)."""

    def __init__(self, value: ir.Value, fnty: ir.FunctionType):
        self.value = value
        self.type = value.type
        self.function_type = fnty

    def get_reference(self) -> str:
        return self.value.get_reference()


def opaque(value: ir.Value) -> ir.Value:
    """`value`, typed as an opaque `ptr`. llvmlite's IR layer gives allocas
    and globals typed pointers by default, whose element-type checks reject
    the loads and stores of other types that opaque pointers allow."""
    value.type = _PTR
    return value


def _declare(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, fnty, name)
    return fn


def _thread_main(module: ir.Module) -> ir.Function:
    name = "__dfc_thread_main"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(_PTR, [_PTR]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    task = fn.args[0]
    field = lambda k, t: b.load(  # noqa: E731
        b.gep(task, [ir.Constant(_I32, 0), ir.Constant(_I32, k)], inbounds=True, source_etype=_TASK),
        typ=t,
    )
    body, ctx, lo, hi = field(0, _PTR), field(1, _PTR), field(2, _I64), field(3, _I64)
    b.call(_Callee(body, BODY_TYPE), [ctx, lo, hi])
    b.ret(ir.Constant(_PTR, None))
    return fn


def parallel_for(module: ir.Module, num_threads: int) -> ir.Function:
    """The module's `__dfc_parallel_for`, emitted on first use for at most
    `num_threads` threads (the caller's included)."""
    name = "__dfc_parallel_for"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    nt_max = max(1, int(num_threads))
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _I64, _I64, _I64, _I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    body, ctx, lb, ub, step, min_iters = fn.args
    for a, n in zip(fn.args, ("body", "ctx", "lb", "ub", "step", "min_iters")):
        a.name = n
    callee = _Callee(body, BODY_TYPE)
    pthread_create = _declare(module, "pthread_create", ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR]))
    pthread_join = _declare(module, "pthread_join", ir.FunctionType(_I32, [_I64, _PTR]))
    thread_main = _thread_main(module)

    entry = fn.append_basic_block("entry")
    nonempty = fn.append_basic_block("nonempty")
    direct = fn.append_basic_block("direct")
    par = fn.append_basic_block("parallel")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    c = lambda v: ir.Constant(_I64, v)  # noqa: E731
    tasks = opaque(b.alloca(ir.ArrayType(_TASK, nt_max), name="tasks"))
    tids = opaque(b.alloca(ir.ArrayType(_I64, nt_max), name="tids"))
    created = opaque(b.alloca(ir.ArrayType(_I8, nt_max), name="created"))
    b.cbranch(b.icmp_signed("<", lb, ub), nonempty, done)

    b.position_at_end(nonempty)
    trip = b.add(b.udiv(b.sub(b.sub(ub, lb), c(1)), step), c(1), name="trip")
    per = b.select(b.icmp_signed("<", min_iters, c(1)), c(1), min_iters)
    nt = b.udiv(trip, per)
    nt = b.select(b.icmp_unsigned("<", nt, c(nt_max)), nt, c(nt_max), name="nt")
    b.cbranch(b.icmp_unsigned("<=", nt, c(1)), direct, par)

    b.position_at_end(direct)
    b.call(callee, [ctx, lb, ub])
    b.branch(done)

    b.position_at_end(par)
    chunk = b.udiv(b.add(trip, b.sub(nt, c(1))), nt)
    chunk = b.and_(b.add(chunk, c(_CHUNK_ALIGN - 1)), c(-_CHUNK_ALIGN), name="chunk")
    nchunks = b.udiv(b.add(trip, b.sub(chunk, c(1))), chunk, name="nchunks")
    span = b.mul(chunk, step, name="span")

    def bounds(k: ir.Value) -> tuple[ir.Value, ir.Value]:
        lo = b.add(lb, b.mul(k, span))
        rest = b.sub(ub, lo)
        hi = b.select(b.icmp_signed("<", span, rest), b.add(lo, span), ub)
        return lo, hi

    # for k in 1..nchunks-1: start a thread (or run inline if that fails)
    spawn_head = fn.append_basic_block("spawn.head")
    spawn_body = fn.append_basic_block("spawn.body")
    spawn_fail = fn.append_basic_block("spawn.fail")
    spawn_next = fn.append_basic_block("spawn.next")
    own = fn.append_basic_block("own")
    b.branch(spawn_head)
    b.position_at_end(spawn_head)
    k = b.phi(_I64, name="k")
    k.add_incoming(c(1), par)
    b.cbranch(b.icmp_unsigned("<", k, nchunks), spawn_body, own)

    b.position_at_end(spawn_body)
    lo, hi = bounds(k)
    task = b.gep(tasks, [c(0), k], inbounds=True, source_etype=tasks.allocated_type)
    for i, v in enumerate((body, ctx, lo, hi)):
        slot = b.gep(task, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True, source_etype=_TASK)
        b.store(v, slot)
    tid = b.gep(tids, [c(0), k], inbounds=True, source_etype=tids.allocated_type)
    flag = b.gep(created, [c(0), k], inbounds=True, source_etype=created.allocated_type)
    rc = b.call(pthread_create, [tid, ir.Constant(_PTR, None), thread_main, task])
    ok = b.icmp_signed("==", rc, ir.Constant(_I32, 0))
    b.store(b.zext(ok, _I8), flag)
    b.cbranch(ok, spawn_next, spawn_fail)

    b.position_at_end(spawn_fail)
    b.call(callee, [ctx, lo, hi])
    b.branch(spawn_next)

    b.position_at_end(spawn_next)
    k_next = b.add(k, c(1))
    k.add_incoming(k_next, spawn_next)
    b.branch(spawn_head)

    # chunk 0 on the calling thread
    b.position_at_end(own)
    lo0, hi0 = bounds(c(0))
    b.call(callee, [ctx, lo0, hi0])
    join_head = fn.append_basic_block("join.head")
    join_body = fn.append_basic_block("join.body")
    join_do = fn.append_basic_block("join.do")
    join_next = fn.append_basic_block("join.next")
    b.branch(join_head)

    b.position_at_end(join_head)
    j = b.phi(_I64, name="j")
    j.add_incoming(c(1), own)
    b.cbranch(b.icmp_unsigned("<", j, nchunks), join_body, done)

    b.position_at_end(join_body)
    flag = b.load(b.gep(created, [c(0), j], inbounds=True, source_etype=created.allocated_type), typ=_I8)
    b.cbranch(b.icmp_unsigned("!=", flag, ir.Constant(_I8, 0)), join_do, join_next)

    b.position_at_end(join_do)
    tid_v = b.load(b.gep(tids, [c(0), j], inbounds=True, source_etype=tids.allocated_type), typ=_I64)
    b.call(pthread_join, [tid_v, ir.Constant(_PTR, None)])
    b.branch(join_next)

    b.position_at_end(join_next)
    j.add_incoming(b.add(j, c(1)), join_next)
    b.branch(join_head)

    b.position_at_end(done)
    b.ret_void()
    return fn
