"""`autodiff`: reverse-mode gradients of tensor functions.

For each selected function `@f` the pass adds `@f_grad(args..., seeds...) ->
(results..., grads...)`: f's arguments, one seed per differentiated result
(same type as the result), f's results, then the gradient of each `wrt`
argument in order. With `split=true` it adds instead `@f_fwd(args...) ->
(results..., saved...)` and `@f_bwd(saved..., seeds...) -> (grads...)`; the
attributes `autodiff.saved` (on both: what each saved value is) and
`autodiff.wrt`/`autodiff.outputs` (on `@f_bwd`) record the correspondence,
read back in Python by `split_info`.

Options: `func` (default: every public function with a float result), `wrt`
(argument indices; default: every float tensor argument), `outputs` (result
indices; default: every float result), `split`, `recompute` (loops rerun the
forward iterations the backward pass needs instead of keeping them on a tape).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    FileLineColLoc,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
    IndexType,
    IntegerAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.compiler.diagnostics import CompileError
from dfc.passes.autodiff.loops import resolve_placeholders
from dfc.passes.autodiff.reverse import Reverser, mark_varied


def _selected(module: ModuleOp, name: str) -> list[func.FuncOp]:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name:
        chosen = [f for f in functions if f.sym_name.data == name]
        if not chosen:
            raise CompileError(f"autodiff: no function @{name}")
        if chosen[0].is_declaration:
            raise CompileError.at(chosen[0], f"autodiff: @{name} is a declaration; it has no body to differentiate")
        return chosen
    return [
        f for f in functions
        if not f.is_declaration and (f.sym_visibility is None or f.sym_visibility.data == "public")
        and any(_float(t) for t in f.function_type.outputs.data)
        and "autodiff.of" not in f.attributes
    ]


def function_named(module: ModuleOp, name: str) -> func.FuncOp | None:
    return next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)


def _provenance(f: func.FuncOp, wrt: list[int], outputs: list[int]) -> dict:
    return {
        "autodiff.of": StringAttr(f.sym_name.data),
        "autodiff.wrt": DenseArrayBase.from_list(i64, wrt),
        "autodiff.outputs": DenseArrayBase.from_list(i64, outputs),
    }


def is_gradient_of(g: func.FuncOp, f: func.FuncOp, wrt: list[int], outputs: list[int]) -> bool:
    """Whether `g` is what autodiff generated for `f` with these `wrt` and `outputs`."""
    return all(g.attributes.get(k) == v for k, v in _provenance(f, wrt, outputs).items())


def gradient_for_call(module: ModuleOp, f: func.FuncOp, wrt: list[int], outputs: list[int], recompute: bool) -> func.FuncOp:
    """The gradient function of `f` for these `wrt` and `outputs`: an existing
    one, or a new one named `@f_grad` (`@f_grad_1`, ... if that name is taken)."""
    for k in range(len(list(module.ops)) + 1):
        name = f"{f.sym_name.data}_grad" + (f"_{k}" if k else "")
        existing = function_named(module, name)
        if existing is None:
            grad, _ = gradient_function(f, wrt, outputs, module, recompute)
            grad.sym_name = StringAttr(name)
            module.body.block.insert_op_after(grad, f)
            return grad
        if is_gradient_of(existing, f, wrt, outputs):
            return existing
    raise AssertionError("unreachable: some name is free")


def _float_tensor(t) -> bool:
    return isinstance(t, TensorType) and isinstance(t.element_type, AnyFloat)


def _float(t) -> bool:
    """A float tensor or a float scalar (results may be either)."""
    return _float_tensor(t) or isinstance(t, AnyFloat)


def _indices(f: func.FuncOp, given: tuple[int, ...], types, what: str) -> list[int]:
    """The differentiated arguments (float tensors) or results (float tensors or scalars)."""
    accepted = _float_tensor if what == "argument" else _float
    if not given:
        return [k for k, t in enumerate(types) if accepted(t)]
    for k in given:
        if not 0 <= k < len(types):
            raise CompileError.at(f, f"autodiff: @{f.sym_name.data} has no {what} #{k}")
        if not accepted(types[k]):
            kinds = "float tensors" if what == "argument" else "float tensors and float scalars"
            raise CompileError.at(
                f, f"autodiff: {what} #{k} of @{f.sym_name.data} has type {types[k]}; "
                f"gradients exist only for {kinds}"
            )
    return list(given)


def gradient_function(
    f: func.FuncOp, wrt: list[int], outputs: list[int], module: ModuleOp, recompute: bool = False
) -> tuple[func.FuncOp, int]:
    """`@f_grad`: f's forward computation followed by its reverse sweep; loops
    keep the forward values their reversal needs on a tape, or recompute them.
    Also returns how many of its first ops are the forward computation."""
    g = f.clone()
    g.sym_name = StringAttr(f"{f.sym_name.data}_grad")
    block = g.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = list(ret.arguments)
    ret.detach()
    ret.erase()
    forward = list(block.ops)
    boundary = arith.ConstantOp(IntegerAttr(0, IndexType()))  # kept: tapes may be added before it
    block.add_op(boundary)
    seeds = [block.insert_arg(results[k].type, len(block.args)) for k in outputs]
    for s in seeds:
        s.name_hint = "seed"
    varied = {block.args[k] for k in wrt}
    mark_varied(forward, varied)
    reverser = Reverser(Builder(InsertPoint.at_end(block)), varied)
    reverser.module = module
    reverser.recompute = recompute
    for k, seed in zip(outputs, seeds):
        reverser.add(results[k], seed)
    reverser.block(forward)
    grads = [reverser.adj.get(block.args[k]) or reverser.zeros_like(block.args[k]) for k in wrt]
    block.add_op(func.ReturnOp(*results, *grads))
    if reverser.placeholders:
        resolve_placeholders(g, reverser.placeholders, recompute, keep=boundary)
    n_forward = list(block.ops).index(boundary)
    boundary.detach()
    boundary.erase()
    g.function_type = FunctionType.from_lists(
        list(f.function_type.inputs.data) + [s.type for s in seeds],
        list(f.function_type.outputs.data) + [x.type for x in grads],
    )
    g.attributes.update(_provenance(f, wrt, outputs))
    _locate(g)
    return g, n_forward


def _locate(op: Operation) -> None:
    """Give each op without a source location its closest located parent's."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if not isinstance(inner.location, FileLineColLoc):
                    inner.location = op.location
                _locate(inner)


def _describe(value: SSAValue) -> str:
    if isinstance(value.owner, Operation):
        return f"%{value.name_hint or 'v'} = {value.owner.name}"
    return f"%{value.name_hint or 'arg'} (argument #{value.index})"


def split(grad: func.FuncOp, f: func.FuncOp, n_forward: int, wrt: list[int], outputs: list[int]) -> list[func.FuncOp]:
    """Cut `@f_grad` after its first `n_forward` ops into `@f_fwd` and `@f_bwd`."""
    block = grad.body.block
    ops = list(block.ops)
    forward, backward = ops[:n_forward], ops[n_forward:]
    n_args = len(f.function_type.inputs.data)
    args, seeds = block.args[:n_args], block.args[n_args:]
    defined = set(args) | {r for o in forward for r in o.results}
    saved: list[SSAValue] = []
    for o in backward[:-1]:  # all but the return
        for inner in o.walk():
            for v in inner.operands:
                if v in defined and v not in saved and not isinstance(v.owner, arith.ConstantOp):
                    saved.append(v)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    n_results = len(f.function_type.outputs.data)
    results, grads = list(ret.arguments[:n_results]), list(ret.arguments[n_results:])
    saved_names = ArrayAttr([StringAttr(_describe(v)) for v in saved])

    fwd = func.FuncOp(f"{f.sym_name.data}_fwd", ([a.type for a in args], [*[r.type for r in results], *[v.type for v in saved]]))
    fwd.location = f.location
    fwd_block = fwd.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(args, fwd_block.args))
    for a, n in zip(args, fwd_block.args):
        n.name_hint = a.name_hint
    for o in forward:
        clone = o.clone(value_mapper=mapping)
        fwd_block.add_op(clone)
        mapping.update(zip(o.results, clone.results))
    fwd_block.add_op(func.ReturnOp(*[mapping[v] for v in results + saved]))
    fwd.attributes["autodiff.saved"] = saved_names
    fwd.attributes.update(_provenance(f, wrt, outputs))

    bwd = func.FuncOp(f"{f.sym_name.data}_bwd", ([*[v.type for v in saved], *[s.type for s in seeds]], [g.type for g in grads]))
    bwd.location = f.location
    bwd_block = bwd.body.block
    mapping = dict(zip([*saved, *seeds], bwd_block.args))
    used = {v for o in backward[:-1] for inner in o.walk() for v in inner.operands}
    for o in forward:
        if isinstance(o, arith.ConstantOp) and o.result in used:  # rematerialised, not saved
            clone = o.clone()
            bwd_block.add_op(clone)
            mapping[o.result] = clone.result
    for o in backward[:-1]:
        clone = o.clone(value_mapper=mapping)
        bwd_block.add_op(clone)
        mapping.update(zip(o.results, clone.results))
    bwd_block.add_op(func.ReturnOp(*[mapping.get(v, v) for v in grads]))
    bwd.attributes["autodiff.saved"] = saved_names
    bwd.attributes.update(_provenance(f, wrt, outputs))
    _locate(fwd)
    _locate(bwd)
    return [fwd, bwd]


@dataclass(frozen=True)
class SplitInfo:
    """Which saved value is which forward value, and which gradient is whose."""

    saved: list[str]
    wrt: list[int]
    outputs: list[int]


def split_info(module: ModuleOp, name: str) -> SplitInfo:
    """The correspondence recorded on `@name_bwd` by `autodiff{split=true}`."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == f"{name}_bwd":
            saved = op.attributes["autodiff.saved"]
            assert isinstance(saved, ArrayAttr)
            wrt, outs = op.attributes["autodiff.wrt"], op.attributes["autodiff.outputs"]
            assert isinstance(wrt, DenseArrayBase) and isinstance(outs, DenseArrayBase)
            return SplitInfo([s.data for s in saved.data], list(wrt.get_values()), list(outs.get_values()))
    raise KeyError(f"no @{name}_bwd in the module")


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Add gradient functions (see the module docstring for the options)."""

    name = "autodiff"

    func: str = ""
    wrt: tuple[int, ...] = ()
    outputs: tuple[int, ...] = ()
    split: bool = False
    recompute: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in _selected(op, self.func):
            wrt = _indices(f, self.wrt, f.function_type.inputs.data, "argument")
            outputs = _indices(f, self.outputs, f.function_type.outputs.data, "result")
            if not outputs:
                raise CompileError.at(f, f"autodiff: @{f.sym_name.data} has no float result to differentiate")
            names = [f"{f.sym_name.data}_{s}" for s in (("fwd", "bwd") if self.split else ("grad",))]
            existing = [function_named(op, n) for n in names]
            if all(g is not None and is_gradient_of(g, f, wrt, outputs) for g in existing):
                continue  # already differentiated: the pass is idempotent
            for n, g in zip(names, existing):
                if g is not None:
                    raise CompileError.at(
                        g, f"autodiff: cannot add @{n} for @{f.sym_name.data}: the module already has a function "
                        f"of that name{' (a gradient for other options)' if 'autodiff.of' in g.attributes else ''}"
                    )
            grad, n_forward = gradient_function(f, wrt, outputs, op, self.recompute)
            new = split(grad, f, n_forward, wrt, outputs) if self.split else [grad]
            for g in reversed(new):
                op.body.block.insert_op_after(g, f)
