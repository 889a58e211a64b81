"""`jvp`: forward-mode Jacobian-vector products of tensor functions.

For each selected function `@f(args...) -> (results...)` the pass adds
`@f_jvp(args..., tangents...) -> (results..., result tangents...)`: f's
arguments, one tangent per `wrt` argument (of its type), f's results, then
the tangent of each `outputs` result in order, J t (J the Jacobian of f at the
arguments, t the tangents). It carries `autodiff.of`, `autodiff.wrt` and
`autodiff.outputs` as the reverse pass's functions do, `autodiff.mode =
"forward"`, and the source location of `@f`. The pass is idempotent as
`autodiff` is; a function `@f_jvp` that is not this derivative is an error.
One forward sweep gives one column combination J t, where reverse mode gives
one row combination w^T J: forward mode is the cheap one for few inputs and
many outputs.

Tangents propagate op by op, each next to its value; a value that does not
depend on a `wrt` argument (every integer among them) has tangent 0 and gets
none:
- an nn library op linear in its float operands (`nn.add`, `nn.transpose`,
  `nn.slice`, `nn.gather`, a sum or mean `nn.reduce`, ...: `_LINEAR`) has
  for tangent the same op on their tangents; a bilinear one (`nn.mul`,
  `nn.matmul`, `nn.dot_general`, `nn.convolution`) the sum of the op with
  one operand replaced by its tangent (the product rule), so that a JVP keeps
  its GEMMs; any other is replaced by its pure expansion (the df code the
  pipeline runs anyway) and differentiated through it, as the reverse mode
  does without a rule;
- a `df.tasklet` gets a tangent tasklet beside it: the Jacobian-vector
  product of its body by SymPy (`tasklet_diff.tangent_tasklet`), with the
  reverse mode's conventions at kinks and ties (relu'(0) = 0, a tie of
  `maximumf` of two variables takes the mean of both tangents);
- a `df.map` is rebuilt with one more output per float output, its tangent. A
  read of a tensor with a tangent also reads the tangent at the same indices;
  a plain write writes the value's tangent (0 for a value without one), a
  `wcr(add)` write adds it. A `wcr(max|min)` output's tangent is the mean of
  the tangents of the candidates (the initial value and each written value)
  equal to the extremum, the reverse mode's tie convention: the map also
  stores every written value with its tangent, and a second map compares
  those very values with the result (a recomputation may round differently
  under fast-math). A `wcr(mul)` output's tangent is sum_i t_i * (product of
  the other factors), from the count of zero factors and the product of the
  nonzero ones, as in reverse;
- `scf.for` and `scf.while` carry one more iter_arg per float one (its
  tangent), `scf.if` yields one more result per float result; `func.call`
  calls the callee's `@callee_jvp` (generated once per callee and `wrt`, named
  `@callee_jvp_1`, ... when taken); `tensor.extract` and `tensor.insert` move
  tangents as they move values.

Anything else with a float result that depends on a `wrt` argument is an
error naming the op, as are recursive calls, calls to declarations and maps
on memrefs (differentiate before `bufferize`).

Options: `func` (default: every public function with a float result that
autodiff did not generate), `wrt` (argument indices, float tensors or
scalars; default: every float tensor argument), `outputs` (result indices,
floats; default: every float result).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func, scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df, nn
from dfc.dialects.df_builders import tasklet
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_expand import expand
from dfc.passes.autodiff.autodiff import (
    differentiated_indices,
    function_named,
    in_tasklets,
    locate_nested,
    provenance,
    selected_functions,
)
from dfc.passes.autodiff.reverse import Reverser, defined_inside, is_float, product_share, used_from_outside

_TERMINATORS = (func.ReturnOp, scf.YieldOp, scf.ConditionOp, df.YieldOp)
_LINEAR = {
    "nn.neg", "nn.add", "nn.sub", "nn.broadcast", "nn.broadcast_in_dim", "nn.transpose", "nn.reshape", "nn.slice",
    "nn.pad", "nn.concatenate", "nn.reverse", "nn.dynamic_slice", "nn.dynamic_update_slice", "nn.gather", "nn.select",
    "nn.convert",
}
"""nn ops linear in their float operands together (indices, predicates fixed)."""
_LINEAR_KINDS = {"nn.reduce": ("sum", "mean"), "nn.reduce_window": ("sum", "mean")}
"""nn ops linear for these `kind`s."""
_BILINEAR = {"nn.mul", "nn.matmul", "nn.dot_general", "nn.convolution"}
"""nn ops linear in each of their two operands."""
_NO_TANGENT = {"nn.stop_gradient"}
"""nn ops whose results have no tangent although their expansion (the identity) would pass one."""


def _zeros(b: Builder, value: SSAValue) -> SSAValue:
    """A zero tangent for `value` (a tensor of its shape, or a float scalar), built at `b`."""
    return Reverser(b, set()).zeros_like(value)


def _one_if_equal(s, a):
    return s.select(s.eq(a[0], a[1]), s.const(1.0, a[0].type), s.const(0.0, a[0].type))


def _if_equal(s, a):
    """a[2] where a[0] == a[1], else 0."""
    return s.select(s.eq(a[0], a[1]), a[2], s.const(0.0, a[2].type))


def _is_zero(s, a):
    return s.select(s.eq(a[0], s.const(0.0, a[0].type)), s.const(1.0, a[0].type), s.const(0.0, a[0].type))


def _or_one(s, a):
    return s.select(s.eq(a[0], s.const(0.0, a[0].type)), s.const(1.0, a[0].type), a[0])


class Forward:
    """Builds tangents next to the ops of a function, in place, first op first.

    `tan` maps each value that has a tangent to it; `stored` maps each write to
    a `wcr(max|min|mul)` output to where its map stores the written values and
    their tangents (and at which indices: the map variables down to the write)."""

    def __init__(self, module: ModuleOp, in_progress: frozenset[str]):
        self.module = module
        self.in_progress = in_progress
        self.tan: dict[SSAValue, SSAValue] = {}
        self.stored: dict[df.WriteOp, tuple[SSAValue, SSAValue, list[SSAValue]]] = {}

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            if not isinstance(op, _TERMINATORS):
                self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, df.WriteOp):
            self.write(op)
            return
        if not any(v in self.tan for v in used_from_outside(op)) and not (
            isinstance(op, df.MapOp) and any(w in self.stored for w in op.walk())
        ):
            return  # nothing it uses varies, and it writes no stored candidate
        handlers: dict[type[Operation], Callable] = {
            df.MapOp: self.map, scf.ForOp: self.loop, scf.WhileOp: self.while_loop, scf.IfOp: self.branch,
            func.CallOp: self.call, df.TaskletOp: self.tasklet, df.ReadOp: self.read,
            tensor.ExtractOp: self.extract, tensor.InsertOp: self.insert,
        }
        handler = handlers.get(type(op))
        if handler is not None:
            handler(op)
        elif isinstance(op, nn.NNOp):
            self.library(op)
        elif any(is_float(r) for r in op.results):
            raise CompileError.at(op, f"jvp: cannot differentiate '{op.name}': no tangent rule")

    def replace(self, old: Operation, new: Operation, positions: Sequence[int]) -> None:
        """`new` (inserted) stands for `old`, with the tangents of `old`'s results
        at `positions` as its extra results."""
        n = len(old.results)
        for o, r in zip(old.results, new.results):
            o.replace_all_uses_with(r)
        for j, k in enumerate(positions):
            self.tan[new.results[k]] = new.results[n + j]
        old.detach()
        old.erase()

    def extend_terminator(self, block: Block, positions: Sequence[int]) -> None:
        """Append to `block`'s scf.yield/scf.condition the tangents of its operands at `positions`."""
        term = block.last_op
        b = Builder(InsertPoint.before(term))
        if isinstance(term, scf.ConditionOp):
            values = list(term.args)
            tangents = [self.tan.get(values[k]) or _zeros(b, values[k]) for k in positions]
            b.insert(scf.ConditionOp(term.condition, *values, *tangents))
        else:
            assert isinstance(term, scf.YieldOp)
            values = list(term.arguments)
            tangents = [self.tan.get(values[k]) or _zeros(b, values[k]) for k in positions]
            b.insert(scf.YieldOp(*values, *tangents))
        term.detach()
        term.erase()

    # -- scalars and tensor elements --------------------------------------------

    def tasklet(self, op: df.TaskletOp) -> None:
        tangents = [self.tan.get(v) if is_float(v) else None for v in op.inputs]
        if all(t is None for t in tangents) or not any(is_float(r) for r in op.res):
            return
        from dfc.passes.autodiff.tasklet_diff import UnsupportedOpError, tangent_tasklet  # SymPy: on first use

        try:
            outs = tangent_tasklet(op, tangents, Builder(InsertPoint.after(op)))
        except UnsupportedOpError as err:
            raise CompileError.at(err.op, f"jvp: {err}") from None
        for r, t in zip(op.res, outs):
            if t is not None:
                self.tan[r] = t

    def read(self, op: df.ReadOp) -> None:
        if op.source in self.tan and is_float(op.res):
            self.tan[op.res] = Builder(InsertPoint.after(op)).insert(df.ReadOp(self.tan[op.source], op.indices)).res

    def write(self, w: df.WriteOp) -> None:
        b = Builder(InsertPoint.after(w))
        t = self.tan.get(w.value)
        if w in self.stored:
            values, tangents, ivs = self.stored[w]
            b.insert(df.WriteOp(w.value, values, ivs))
            b.insert(df.WriteOp(t or _zeros(b, w.value), tangents, ivs))
        elif w.dest in self.tan and (t is not None or w.wcr_kind != "add"):
            b.insert(df.WriteOp(t or _zeros(b, w.value), self.tan[w.dest], w.indices, w.wcr_kind))

    def extract(self, op: tensor.ExtractOp) -> None:
        if op.tensor in self.tan and is_float(op.result):
            b = Builder(InsertPoint.after(op))
            self.tan[op.result] = b.insert(tensor.ExtractOp(self.tan[op.tensor], op.indices, op.result.type)).result

    def insert(self, op: tensor.InsertOp) -> None:
        b = Builder(InsertPoint.after(op))
        scalar = self.tan.get(op.scalar) or _zeros(b, op.scalar)
        dest = self.tan.get(op.dest) or _zeros(b, op.dest)
        self.tan[op.result] = b.insert(tensor.InsertOp(scalar, dest, op.indices)).result

    def library(self, op: nn.NNOp) -> None:
        """An nn op by its linearity (`_LINEAR`, `_BILINEAR`), else through its expansion."""
        if not is_float(op.results[0]) or op.name in _NO_TANGENT:
            return
        kind = op.properties.get("kind")
        linear = op.name in _LINEAR or isinstance(kind, StringAttr) and kind.data in _LINEAR_KINDS.get(op.name, ())
        if linear or op.name in _BILINEAR:
            b = Builder(InsertPoint.after(op))
            positions = [k for k, v in enumerate(op.operands) if v in self.tan]
            groups = [positions] if linear else [[k] for k in positions]
            terms = []
            for group in groups:  # one term per operand of a bilinear op, one of all for a linear one
                operands = [self.tan[v] if k in group else v for k, v in enumerate(op.operands)]
                if linear:  # every other float operand's tangent is 0
                    operands = [_zeros(b, v) if k not in group and is_float(v) else v for k, v in enumerate(operands)]
                term = op.clone()
                term.operands = operands
                terms.append(b.insert(term).results[0])
            tangent = terms[0]
            for t in terms[1:]:
                tangent = Reverser(b, set()).sum(tangent, t)
            self.tan[op.results[0]] = tangent
            return
        block = op.parent_block()
        assert block is not None
        before = op.prev_op
        value = expand(Builder(InsertPoint.before(op)), op)
        start = before.next_op if before is not None else block.first_op
        expansion = []
        while start is not op:
            assert start is not None
            expansion.append(start)
            start = start.next_op
        op.results[0].replace_all_uses_with(value)
        op.detach()
        op.erase()
        for o in expansion:
            self.op(o)

    # -- control flow and calls -------------------------------------------------

    def loop(self, op: scf.ForOp) -> None:
        floats = [k for k, v in enumerate(op.iter_args) if is_float(v)]
        b = Builder(InsertPoint.before(op))
        inits = [self.tan.get(op.iter_args[k]) or _zeros(b, op.iter_args[k]) for k in floats]
        body = op.body.block
        for k in floats:
            self.tan[body.args[1 + k]] = body.insert_arg(body.args[1 + k].type, len(body.args))
        self.block(body)
        self.extend_terminator(body, floats)
        new = b.insert(scf.ForOp(op.lb, op.ub, op.step, [*op.iter_args, *inits], op.detach_region(op.body)))
        self.replace(op, new, floats)

    def while_loop(self, op: scf.WhileOp) -> None:
        before, after = op.before_region.block, op.after_region.block
        floats_in = [k for k, v in enumerate(op.arguments) if is_float(v)]
        floats_out = [k for k, r in enumerate(op.res) if is_float(r)]
        b = Builder(InsertPoint.before(op))
        inits = [self.tan.get(op.arguments[k]) or _zeros(b, op.arguments[k]) for k in floats_in]
        for k in floats_in:
            self.tan[before.args[k]] = before.insert_arg(before.args[k].type, len(before.args))
        self.block(before)
        self.extend_terminator(before, floats_out)
        for k in floats_out:
            self.tan[after.args[k]] = after.insert_arg(after.args[k].type, len(after.args))
        self.block(after)
        self.extend_terminator(after, floats_in)
        types = [*op.res.types, *(op.res[k].type for k in floats_out)]
        regions = [op.detach_region(r) for r in (op.before_region, op.after_region)]
        new = b.insert(scf.WhileOp([*op.arguments, *inits], types, *regions))
        self.replace(op, new, floats_out)

    def branch(self, op: scf.IfOp) -> None:
        floats = [k for k, r in enumerate(op.results) if is_float(r)]
        for region in (op.true_region, op.false_region):
            if region.blocks:
                self.block(region.block)
                if floats:
                    self.extend_terminator(region.block, floats)
        if floats:
            types = [*op.result_types, *(op.results[k].type for k in floats)]
            regions = [op.detach_region(r) for r in (op.true_region, op.false_region)]
            new = Builder(InsertPoint.before(op)).insert(scf.IfOp(op.cond, types, *regions))
            self.replace(op, new, floats)

    def call(self, op: func.CallOp) -> None:
        name = op.callee.root_reference.data
        callee = function_named(self.module, name)
        if callee is None or callee.is_declaration:
            raise CompileError.at(op, f"jvp: cannot differentiate the call to @{name}: it has no body")
        if name in self.in_progress:
            raise CompileError.at(op, f"jvp: cannot differentiate the recursive call to @{name}")
        wrt = [k for k, v in enumerate(op.arguments) if v in self.tan]
        outputs = [k for k, r in enumerate(op.res) if is_float(r)]
        if not outputs:
            return
        derivative = jvp_for_call(self.module, callee, wrt, outputs, self.in_progress)
        tangents = [self.tan[op.arguments[k]] for k in wrt]
        call = Builder(InsertPoint.before(op)).insert(
            func.CallOp(derivative.sym_name.data, [*op.arguments, *tangents], derivative.function_type.outputs.data)
        )
        self.replace(op, call, outputs)

    # -- maps ---------------------------------------------------------------------

    def map(self, op: df.MapOp) -> None:
        if op.is_buffer_form:
            raise CompileError.at(op, "jvp: differentiate before bufferize (this map writes memrefs)")
        outs = list(op.out_args)
        writes: dict[int, list[df.WriteOp]] = {}
        for w in op.walk():
            if isinstance(w, df.WriteOp) and w.dest in outs:
                writes.setdefault(outs.index(w.dest), []).append(w)
        floats = [k for k, r in enumerate(op.res) if is_float(r)]
        kinds: dict[int, str | None] = {}
        for k in floats:
            found = {w.wcr_kind for w in writes.get(k, [])}
            if len(found) > 1:
                raise CompileError.at(op, f"jvp: output #{k} is written with different wcr kinds")
            kinds[k] = found.pop() if found else None
        reduced = [k for k in floats if kinds[k] in ("max", "min", "mul")]
        plain = [k for k in floats if k not in reduced]
        b = Builder(InsertPoint.before(op))
        inits = [self.tan.get(op.outs[k]) or _zeros(b, op.outs[k]) for k in plain]
        stores = [self.store(b, op, w) for k in reduced for w in writes[k]]  # (write, (values, tangents, ivs))
        if not inits and not stores:
            self.block(op.body.block)  # a map without float outputs: only its nested writes may need tangents
            return
        for k in reduced:
            if any(isinstance(u.operation, df.ReadOp) for u in outs[k].uses):
                raise CompileError.at(op, f"jvp: the map reads its wcr({kinds[k]}) output #{k} while reducing into it")
        init_tangents = {k: self.tan.get(op.outs[k]) for k in reduced}
        block = op.body.detach_block(0)
        tangent_args = [block.insert_arg(v.type, len(block.args)) for v in inits]
        store_inits = [e for _, (values, tangents, _) in stores for e in (values, tangents)]
        store_args = [block.insert_arg(e.type, len(block.args)) for e in store_inits]
        new = df.MapOp(op.bounds, [*op.outs, *inits, *store_inits], Region(block))
        new.attributes |= op.attributes
        new.location = op.location
        b.insert(new)
        n = len(op.outs)
        self.replace(op, new, [])
        for k, a in zip(plain, tangent_args):
            self.tan[block.args[new.rank + k]] = a
        for j, (w, (_, _, ivs)) in enumerate(stores):
            self.stored[w] = (store_args[2 * j], store_args[2 * j + 1], ivs)
        self.block(block)
        for k, r in zip(plain, new.res[n:]):
            self.tan[new.res[k]] = r
        after = Builder(InsertPoint.after(new))
        for k in reduced:
            self.tan[new.res[k]] = self.reduced_tangent(after, new, k, writes[k], kinds[k], init_tangents[k])

    def store(self, b: Builder, op: df.MapOp, w: df.WriteOp) -> tuple[df.WriteOp, tuple[SSAValue, SSAValue, list]]:
        """Two empty tensors over the iteration space of `w` (the map's and its
        nested maps' variables) for its written values and their tangents."""
        chain: list[df.MapOp] = []
        m = w.parent_op()
        while m is not op:
            if not isinstance(m, df.MapOp):
                raise CompileError.at(w, f"jvp: a wcr({w.wcr_kind}) write in '{m.name}' of a map body is not "
                                         "supported (one candidate per map iteration is stored)")
            chain.insert(0, m)
            m = m.parent_op()
        bounds = [*op.bounds, *(x for inner in chain for x in inner.bounds)]
        if any(not isinstance(x, int) and defined_inside(x, op) for x in bounds):
            raise CompileError.at(w, "jvp: wcr(max|min|mul) in a nested map whose bounds depend on the enclosing map "
                                     "is not differentiable (its candidates cannot be stored)")
        t = TensorType(w.value.type, [x if isinstance(x, int) else DYNAMIC_INDEX for x in bounds])
        dynamic = [x for x in bounds if not isinstance(x, int)]
        values, tangents = (b.insert(tensor.EmptyOp(dynamic, t)).tensor for _ in range(2))
        ivs = [*op.ivs, *(iv for inner in chain for iv in inner.ivs)]
        return w, (values, tangents, ivs)

    def reduced_tangent(
        self, b: Builder, m: df.MapOp, k: int, writes: list[df.WriteOp], kind: str | None, init_tangent: SSAValue | None
    ) -> SSAValue:
        """The tangent of `m`'s wcr(max|min|mul) output k, from the stored candidates."""
        shapes = Reverser(b, set())
        result, init = m.res[k], m.outs[k]
        dinit = init_tangent or _zeros(b, result)
        if kind in ("max", "min"):  # the mean tangent of the candidates equal to the extremum
            start = [shapes.pointwise(result, [init, result, dinit], _if_equal),
                     shapes.pointwise(result, [init, result], _one_if_equal)]
            sums = b.insert(df.MapOp(m.bounds, start))

            def tie(mb: Builder, value: SSAValue, tangent: SSAValue, idx: list[SSAValue]) -> None:
                r = mb.insert(df.ReadOp(result, idx)).res
                mb.insert(df.WriteOp(tasklet(mb, [value, r, tangent], r.type, _if_equal), sums.out_args[0], idx, "add"))
                mb.insert(df.WriteOp(tasklet(mb, [value, r], r.type, _one_if_equal), sums.out_args[1], idx, "add"))

            self.revisit(m, m, sums, {}, writes, tie)
            return shapes.pointwise(result, list(sums.res), lambda s, a: s.div(a[0], a[1]))
        # wcr(mul): t_i times the product of the other factors, summed
        start = [shapes.pointwise(result, [init], _is_zero), shapes.pointwise(result, [init], _or_one)]
        factors = b.insert(df.MapOp(m.bounds, start))

        def factor(mb: Builder, value: SSAValue, tangent: SSAValue, idx: list[SSAValue]) -> None:
            mb.insert(df.WriteOp(tasklet(mb, [value], value.type, _is_zero), factors.out_args[0], idx, "add"))
            mb.insert(df.WriteOp(tasklet(mb, [value], value.type, _or_one), factors.out_args[1], idx, "mul"))

        self.revisit(m, m, factors, {}, writes, factor)
        zeros, product = factors.res
        sums = b.insert(df.MapOp(m.bounds, [shapes.pointwise(result, [init, dinit, zeros, product], product_share)]))

        def share(mb: Builder, value: SSAValue, tangent: SSAValue, idx: list[SSAValue]) -> None:
            z, p = (mb.insert(df.ReadOp(x, idx)).res for x in (zeros, product))
            share = tasklet(mb, [value, tangent, z, p], value.type, product_share)
            mb.insert(df.WriteOp(share, sums.out_args[0], idx, "add"))

        self.revisit(m, m, sums, {}, writes, share)
        return sums.res[0]

    def revisit(self, top: df.MapOp, source: df.MapOp, target: df.MapOp, mapping: dict, writes: list[df.WriteOp],
                visit: Callable[[Builder, SSAValue, SSAValue, list[SSAValue]], None]) -> None:
        """`visit(builder, value, tangent, indices)` for each of `writes` in
        `source` (or its nested maps), with the value and tangent it stored and
        its indices, in `target` (over `source`'s space, nested maps rebuilt);
        the index computations (the ops of non-float results) are cloned."""
        mapping = {**mapping, **dict(zip(source.ivs, target.ivs))}
        b = Builder(InsertPoint.at_end(target.body.block))
        for o in source.body.block.ops:
            if isinstance(o, df.MapOp):
                if any(w in writes for w in o.walk()):
                    nested = b.insert(df.MapOp([x if isinstance(x, int) else mapping.get(x, x) for x in o.bounds], []))
                    self.revisit(top, o, nested, mapping, writes, visit)
            elif isinstance(o, df.WriteOp):
                if o in writes:
                    if any(defined_inside(i, top) and i not in mapping for i in o.indices):
                        raise CompileError.at(
                            o, f"jvp: the indices of this wcr({o.wcr_kind}) write depend on float values")
                    values, tangents, ivs = self.stored[o]  # the map's block arguments: read its results
                    at = [mapping[iv] for iv in ivs]
                    value, tangent = (b.insert(df.ReadOp(top.res[x.index - top.rank], at)).res
                                      for x in (values, tangents))
                    visit(b, value, tangent, [mapping.get(i, i) for i in o.indices])
            elif o.results and not any(is_float(r) for r in o.results) and all(
                v in mapping or not defined_inside(v, top) for v in used_from_outside(o)
            ):
                clone = b.insert(o.clone(value_mapper=mapping))
                mapping.update(zip(o.results, clone.results))


# -- the pass ------------------------------------------------------------------------


def is_jvp_of(g: func.FuncOp, f: func.FuncOp, wrt: list[int], outputs: list[int]) -> bool:
    """Whether `g` is what the jvp pass generated for `f` with these `wrt` and `outputs`."""
    expected = {**provenance(f, wrt, outputs), "autodiff.mode": StringAttr("forward")}
    return all(g.attributes.get(k) == v for k, v in expected.items())


def jvp_for_call(
    module: ModuleOp, f: func.FuncOp, wrt: list[int], outputs: list[int], in_progress: frozenset[str]
) -> func.FuncOp:
    """The JVP function of `f` for these `wrt` and `outputs`: an existing one, or
    a new one named `@f_jvp` (`@f_jvp_1`, ... if that name is taken)."""
    for k in range(len(list(module.ops)) + 1):
        name = f"{f.sym_name.data}_jvp" + (f"_{k}" if k else "")
        existing = function_named(module, name)
        if existing is None:
            g = jvp_function(f, wrt, outputs, module, in_progress)
            g.sym_name = StringAttr(name)
            module.body.block.insert_op_after(g, f)
            return g
        if is_jvp_of(existing, f, wrt, outputs):
            return existing
    raise AssertionError("unreachable: some name is free")


def jvp_function(
    f: func.FuncOp, wrt: list[int], outputs: list[int], module: ModuleOp, in_progress: frozenset[str] = frozenset()
) -> func.FuncOp:
    """`@f_jvp`: f's computation with the tangents of its values beside them."""
    g = f.clone()
    g.sym_name = StringAttr(f"{f.sym_name.data}_jvp")
    in_tasklets(g)
    block = g.body.block
    forward = Forward(module, in_progress | {f.sym_name.data})
    for k in wrt:
        tangent = block.insert_arg(block.args[k].type, len(block.args))
        tangent.name_hint = "tangent"
        forward.tan[block.args[k]] = tangent
    forward.block(block)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    b = Builder(InsertPoint.before(ret))
    results = list(ret.arguments)
    tangents = [forward.tan.get(results[k]) or _zeros(b, results[k]) for k in outputs]
    b.insert(func.ReturnOp(*results, *tangents))
    ret.detach()
    ret.erase()
    inputs, types = list(f.function_type.inputs.data), list(f.function_type.outputs.data)
    g.function_type = FunctionType.from_lists([*inputs, *(inputs[k] for k in wrt)],
                                              [*types, *(types[k] for k in outputs)])
    g.attributes.update(provenance(f, wrt, outputs))
    g.attributes["autodiff.mode"] = StringAttr("forward")
    locate_nested(g)
    return g


@dataclass(frozen=True)
class JvpPass(ModulePass):
    """Add Jacobian-vector product functions (see the module docstring for the options)."""

    name = "jvp"

    func: str = ""
    wrt: tuple[int, ...] = ()
    outputs: tuple[int, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in selected_functions(op, self.func, "jvp"):
            wrt = differentiated_indices(f, self.wrt, f.function_type.inputs.data, "argument", "jvp", "tangents")
            outputs = differentiated_indices(f, self.outputs, f.function_type.outputs.data, "result", "jvp", "tangents")
            name = f"{f.sym_name.data}_jvp"
            existing = function_named(op, name)
            if existing is not None:
                if is_jvp_of(existing, f, wrt, outputs):
                    continue  # already differentiated: the pass is idempotent
                raise CompileError.at(
                    existing, f"jvp: cannot add @{name} for @{f.sym_name.data}: the module already has a function of "
                    f"that name{' (a derivative for other options)' if 'autodiff.of' in existing.attributes else ''}"
                )
            op.body.block.insert_op_after(jvp_function(f, wrt, outputs, op), f)
