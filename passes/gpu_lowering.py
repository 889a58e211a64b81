"""`lower-dataflow{target=gpu}`: top-level df maps to GPU kernels (upstream `gpu` dialect).

Kernels. Each top-level buffer-form `df.map` becomes a `gpu.func @<func>_k<n> kernel`
in `gpu.module @dfc_kernels` (the top module gets `gpu.container_module`):

* Arguments: the values the map uses from outside it, its output buffers first,
  then in first-use order; `arith.constant`s are re-created inside instead.
  `arg_attrs` marks a memref argument `llvm.noalias` when it is the only
  argument of its allocation (function argument, alloc or global, through
  casts and reshapes) and `llvm.readonly` when the kernel never writes it.
* Threads: the iteration space is flattened row-major; thread
  `t = block_id.x * block_dim.x + thread_id.x` runs iteration `t`, the map
  variables recovered with `divui`/`remui`, under `scf.if t < total` (the
  ragged last block). Blocks are `BLOCK_SIZE` threads, or fewer (a multiple
  of 32) for a small static space; `gpu.known_block_size` records the size.
* Bodies: reads are `memref.load`, plain writes `memref.store`, tasklets are
  inlined, nested maps are `scf.for` nests run by the thread; a wcr write is a
  `memref.atomic_rmw` (addf/addi, mulf/muli, maximumf/maxs, minimumf/mins),
  which the NVPTX emitter aggregates per warp. An access `check-bounds` marked
  keeps its mark, and the NVPTX emitter guards it (see `codegen.nvptx`).

Row reductions. A map whose writes are all wcr writes indexed by its leading
variables alone (softmax's maximum and sum, a sum or mean over the last axes, a
loss's total: `gpu_rows.row_plan`) becomes a kernel built by `passes.gpu_rows`
instead: a block per row, coalesced loads combined in registers, a tree in shared
memory, and one store (or atomic) per block.

Gemms. Each `blas.gemm` (`contraction-to-blas{target=gpu}` makes them)
becomes a kernel built by `passes.gpu_gemm` (256 threads per 64 x 64 tile
of C, the factors staged through two shared-memory `memref.global`s of the
kernel module) and its launch on ceil(n/64) * ceil(m/64) * batch blocks.

Host. The map is replaced by `gpu.launch_func @dfc_kernels::@k blocks in
(ceil(total / block), 1, 1) threads in (block, 1, 1) args(...)`; loops around
it stay on the host (one launch per iteration). Every memref of a host
function is device memory: `memref.alloc`/`dealloc`/`copy` become
`gpu.alloc`/`gpu.dealloc`/`gpu.memcpy`, and arguments and results are device
buffers (the CUDA engine copies them in and out). A launch with a zero grid
does nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dfc.dialects import df
from dfc.dialects.blas import GemmOp
from dfc.dialects.diagnostics import CompileError
from dfc.passes.check_bounds import checked
from dfc.passes.gpu_gemm import THREADS as GEMM_THREADS
from dfc.passes.gpu_gemm import build_gemm, grid_size, shared_tiles
from dfc.passes.gpu_rows import build_rows, row_buffers, row_grid, row_plan
from dfc.passes.scf_builders import for_loop
from dfc.passes.wcr_arith import combine, identity

KERNEL_MODULE = "dfc_kernels"
BLOCK_SIZE = 256
ATOMIC_KINDS = {("add", True): 0, ("add", False): 1, ("max", True): 3, ("max", False): 4,
                ("min", True): 6, ("min", False): 7, ("mul", True): 9, ("mul", False): 10}  # fmt: skip
"""memref.atomic_rmw `kind` (MLIR's AtomicRMWKind) for (wcr, is_float)."""

_X = gpu.DimensionAttr(gpu.DimensionEnum.X)
_VIEWS = ("memref.cast", "memref.collapse_shape", "memref.expand_shape")
_WRITES = ("memref.store", "memref.atomic_rmw")


def _index(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def _total(b: Builder, bounds: Sequence[int | SSAValue]) -> SSAValue:
    """The product of `bounds` (a constant when they all are)."""
    static = math.prod(x for x in bounds if isinstance(x, int))
    total = None
    for x in bounds:
        if not isinstance(x, int):
            total = x if total is None else b.insert(arith.MuliOp(total, x)).result
    if total is None or static != 1:
        constant = _index(b, static)
        total = constant if total is None else b.insert(arith.MuliOp(total, constant)).result
    return total


def _root(value: SSAValue) -> object | None:
    """The allocation a host memref certainly is, through views; None if unknown."""
    value = _view_root(value)
    owner = value.owner
    if isinstance(owner, Block):
        return value if isinstance(owner.parent_op(), func.FuncOp) else None
    if isinstance(owner, memref.GetGlobalOp):
        return owner.name_.root_reference.data
    return owner if isinstance(owner, memref.AllocOp | gpu.AllocOp) else None


def _view_root(value: SSAValue) -> SSAValue:
    """The memref `value` views (itself when it is not a view)."""
    while isinstance(value.owner, Operation) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _inside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    node = owner if isinstance(owner, Operation) else owner.parent_op()
    while node is not None and node is not op:
        node = node.parent_op()
    return node is op


class _Kernel:
    """A gpu.func being built: `args` are the host values it is passed, captured
    on first use (`v`); `entry` builds at the end of its body."""

    def __init__(self, op: Operation):
        self.op = op
        self.block = Block()
        self.args: list[SSAValue] = []
        self.values: dict[SSAValue, SSAValue] = {}
        b = Builder(InsertPoint.at_end(self.block))
        self.tid = b.insert(gpu.ThreadIdOp(_X)).result
        self.prologue = Builder(InsertPoint.before(self.tid.owner))
        self.entry = b

    def v(self, value: SSAValue) -> SSAValue:
        """The kernel's value for `value`, capturing it on first use from outside."""
        if value in self.values:
            return self.values[value]
        assert not _inside(value, self.op), f"gpu lowering: {value} used before its definition"
        if isinstance(value.owner, arith.ConstantOp):
            mapped = self.prologue.insert(value.owner.clone()).result
        else:
            mapped = self.block.insert_arg(value.type, len(self.block.args))
            self.args.append(value)
        self.values[value] = mapped
        return mapped

    def finish(self, name: str, block_size: int) -> gpu.FuncOp:
        """The kernel `name`, its body ended by a return."""
        self.entry.insert(gpu.ReturnOp([]))
        kernel = gpu.FuncOp(name, ([a.type for a in self.args], []), Region(self.block), kernel=True,
                            known_block_size=[block_size, 1, 1])  # fmt: skip
        written = {_view_root(op.operands[1]) for op in self.block.walk() if op.name in _WRITES}
        kernel.attributes["arg_attrs"] = ArrayAttr([DictionaryAttr(self.arg_attrs(k, written))
                                                    for k in range(len(self.args))])  # fmt: skip
        return kernel

    def arg_attrs(self, k: int, written: set[SSAValue]) -> dict[str, Attribute]:
        value = self.args[k]
        if not isinstance(value.type, MemRefType):
            return {}
        attrs: dict[str, Attribute] = {}
        root = _root(value)
        if root is not None and sum(_root(a) == root for a in self.args) == 1:
            attrs["llvm.noalias"] = UnitAttr()
        if self.block.args[k] not in written:
            attrs["llvm.readonly"] = UnitAttr()
        return attrs


class _MapKernel(_Kernel):
    """The kernel of one map: thread t runs iteration t of its flattened space."""

    def __init__(self, op: df.MapOp):
        super().__init__(op)
        self.map = op
        self.accumulators: dict[df.WriteOp, SSAValue] = {}
        """wcr writes that combine into a register (`gpu_rows`), with its current value."""
        self.valid: SSAValue | None = None
        """When set, a write into a register combines only where this i1 holds (`gpu_rows`' loads past a row's end)."""
        for arg, buf in zip(op.out_args, op.outs):
            self.values[arg] = self.v(buf)

    def bound(self, b: Builder, bound: int | SSAValue) -> SSAValue:
        return _index(b, bound) if isinstance(bound, int) else self.v(bound)

    def build(self, name: str, block_size: int) -> gpu.FuncOp:
        b = self.entry
        bid = b.insert(gpu.BlockIdOp(_X)).result
        dim = b.insert(gpu.BlockDimOp(_X)).result
        thread = b.insert(arith.AddiOp(b.insert(arith.MuliOp(bid, dim)).result, self.tid)).result
        bounds = [self.bound(b, x) for x in self.map.bounds]
        total = _total(b, [self.v(x) if isinstance(x, SSAValue) else x for x in self.map.bounds])
        inside = b.insert(arith.CmpiOp(thread, total, "ult")).result
        then = Block()
        b.insert(scf.IfOp(inside, [], Region(then)))
        tb = Builder(InsertPoint.at_end(then))
        rest = thread
        for iv, x, static in reversed(list(zip(self.map.ivs, bounds, self.map.static_extents))):
            if static == 1:
                self.values[iv] = _index(tb, 0)
            elif iv is self.map.ivs[0]:
                self.values[iv] = rest
            else:
                self.values[iv] = tb.insert(arith.RemUIOp(rest, x)).result
                rest = tb.insert(arith.DivUIOp(rest, x)).result
        self.body(tb, self.map.body.block)
        tb.insert(scf.YieldOp())
        return self.finish(name, block_size)

    # -- the per-thread body

    def body(self, b: Builder, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, df.ReadOp):
                load = checked(op, memref.LoadOp.get(self.v(op.source), [self.v(i) for i in op.indices]))
                self.values[op.res] = b.insert(load).res
            elif isinstance(op, df.WriteOp):
                self.write(b, op)
            elif isinstance(op, df.TaskletOp):
                self.inline(b, op)
            elif isinstance(op, df.MapOp):
                for arg, buf in zip(op.out_args, op.outs):
                    self.values[arg] = self.v(buf)
                self.nest(b, op, list(op.ivs), op.bounds)
            elif op.regions:
                raise CompileError.at(op, f"lower-dataflow{{target=gpu}}: '{op.name}' in a df.map is not supported")
            else:
                for operand in op.operands:
                    self.v(operand)
                clone = b.insert(op.clone(value_mapper=dict(self.values)))
                self.values.update(zip(op.results, clone.results))

    def nest(self, b: Builder, op: df.MapOp, ivs: Sequence[BlockArgument], bounds: Sequence[int | SSAValue]) -> None:
        """A nested map: serial loops in the thread."""
        if not ivs:
            self.body(b, op.body.block)
            return
        loop, inner = for_loop(b, _index(b, 0), self.bound(b, bounds[0]))
        self.values[ivs[0]] = loop.body.block.args[0]
        self.nest(inner, op, ivs[1:], bounds[1:])
        inner.insert(scf.YieldOp())

    def write(self, b: Builder, op: df.WriteOp) -> None:
        value = self.v(op.value)
        if op in self.accumulators:
            assert op.wcr_kind is not None
            if self.valid is not None:
                value = b.insert(arith.SelectOp(self.valid, value, identity(b, op.wcr_kind, value.type))).result
            self.accumulators[op] = combine(b, op.wcr_kind, self.accumulators[op], value)
            return
        self.update(b, op, value, [self.v(i) for i in op.indices])

    def update(self, b: Builder, op: df.WriteOp, value: SSAValue, indices: Sequence[SSAValue]) -> None:
        """`op`'s write of `value` at `indices` (kernel values): a store, or an atomic for a wcr write."""
        dest = self.v(op.dest)
        indices = list(indices)
        if op.wcr_kind is None:
            b.insert(checked(op, memref.StoreOp.get(value, dest, indices)))
            return
        kind = ATOMIC_KINDS[(op.wcr_kind, isinstance(value.type, AnyFloat))]
        b.insert(checked(op, memref.AtomicRMWOp(operands=[value, dest, indices], result_types=[value.type],
                                                 properties={"kind": IntegerAttr(kind, i64)})))  # fmt: skip

    def inline(self, b: Builder, op: df.TaskletOp) -> None:
        mapping: dict[SSAValue, SSAValue] = {a: self.v(x) for a, x in zip(op.body.block.args, op.inputs)}
        for inner in op.body.block.ops:
            if isinstance(inner, df.YieldOp):
                self.values.update((r, mapping.get(y, y)) for r, y in zip(op.res, inner.values))
                return
            clone = b.insert(inner.clone(value_mapper=mapping))
            mapping.update(zip(inner.results, clone.results))


def _launch(op: Operation, kernel: _Kernel, symbol: SymbolRefAttr, grid: SSAValue, block_size: int) -> None:
    """Replace `op` by the launch of its kernel on `grid` blocks (built before `op`)."""
    b = Builder(InsertPoint.before(op))
    one = _index(b, 1)
    b.insert(gpu.LaunchFuncOp(symbol, [grid, one, one], [_index(b, block_size), one, one], kernelOperands=kernel.args))
    op.detach()
    op.erase(safe_erase=False)


def _map_grid(op: df.MapOp, block_size: int) -> SSAValue:
    """Blocks of `block_size` threads covering `op`'s iterations (host code before `op`)."""
    b = Builder(InsertPoint.before(op))
    total = _total(b, op.bounds)
    if isinstance(total.owner, arith.ConstantOp):
        return _index(b, -(-total.owner.value.value.data // block_size))
    padded = b.insert(arith.AddiOp(total, _index(b, block_size - 1))).result
    return b.insert(arith.DivUIOp(padded, _index(b, block_size))).result


def _block_size(op: df.MapOp) -> int:
    extents = op.static_extents
    if any(e is None for e in extents):
        return BLOCK_SIZE
    return min(BLOCK_SIZE, max(32, -(-math.prod(extents) // 32) * 32))  # type: ignore[arg-type]


def _kernel_module(module: ModuleOp) -> gpu.ModuleOp:
    for op in module.ops:
        if isinstance(op, gpu.ModuleOp) and op.sym_name.data == KERNEL_MODULE:
            return op
    kernels = gpu.ModuleOp(StringAttr(KERNEL_MODULE), Region(Block()))  # type: ignore[arg-type]
    module.body.block.add_op(kernels)
    return kernels


def _to_device_memory(f: func.FuncOp) -> None:
    """Host memref.alloc/dealloc/copy to their gpu counterparts."""
    for op in list(f.walk()):
        if isinstance(op, memref.AllocOp):
            new: Operation = gpu.AllocOp(op.memref.type, op.dynamic_sizes)  # type: ignore[arg-type]
        elif isinstance(op, memref.DeallocOp):
            new = gpu.DeallocOp(op.memref)
        elif isinstance(op, memref.CopyOp):
            if op.source.type != op.destination.type:
                raise CompileError.at(op, "lower-dataflow{target=gpu}: memref.copy between different types")
            new = gpu.MemcpyOp(op.source, op.destination)
        else:
            continue
        Rewriter.replace_op(op, new)


def outline_kernels(module: ModuleOp, maps: Sequence[df.MapOp]) -> None:
    """Replace each of `maps` (the top-level df maps of `module`) and each
    `blas.gemm` by a kernel launch."""
    module.attributes["gpu.container_module"] = UnitAttr()
    kernels = _kernel_module(module)
    taken = {op.sym_name.data for op in kernels.body.block.ops if isinstance(op, gpu.FuncOp)}
    outlined = set(maps)
    for op in [o for o in module.walk() if o in outlined or isinstance(o, GemmOp)]:
        if isinstance(op, df.MapOp) and not op.is_buffer_form and op.outs:
            raise CompileError.at(op, "lower-dataflow: run bufferize first (this df.map has tensor outputs)")
        host = op.parent_op()
        while not isinstance(host, func.FuncOp):
            if host is None:
                raise CompileError.at(op, f"lower-dataflow{{target=gpu}}: a {op.name} outside a func.func")
            host = host.parent_op()
        n = 0
        while f"{host.sym_name.data}_k{n}" in taken:
            n += 1
        name = f"{host.sym_name.data}_k{n}"
        taken.add(name)
        symbol = SymbolRefAttr(KERNEL_MODULE, [name])
        if isinstance(op, GemmOp):
            kernel = _Kernel(op)
            build_gemm(op, kernel, name)
            for tile in shared_tiles(name, op):
                kernels.body.block.add_op(tile)
            kernels.body.block.add_op(kernel.finish(name, GEMM_THREADS))
            _launch(op, kernel, symbol, grid_size(op, Builder(InsertPoint.before(op))), GEMM_THREADS)
        elif (plan := row_plan(op)) is not None:
            kernel = _MapKernel(op)
            build_rows(op, plan, kernel, name)
            for buffer in row_buffers(name, op, plan):
                kernels.body.block.add_op(buffer)
            kernels.body.block.add_op(kernel.finish(name, plan.threads))
            _launch(op, kernel, symbol, row_grid(op, plan, Builder(InsertPoint.before(op))), plan.threads)
        else:
            size = _block_size(op)
            kernel = _MapKernel(op)
            kernels.body.block.add_op(kernel.build(name, size))
            _launch(op, kernel, symbol, _map_grid(op, size), size)
    for f in module.ops:
        if isinstance(f, func.FuncOp):
            _to_device_memory(f)
