"""IR for lazy arrays: each consumer of an expression tree is one `df.map`.

- `materialize`: a map over the expression's shape writing a fresh tensor;
- `assign`: a map over a view of a named array whose output starts as that
  array (value semantics: a new SSA value; `bufferize` makes it in place);
- `reduce`: a map over the operand's shape writing with `wcr(add|mul|max|min)`
  (an `nn.reduce` when the operand is a whole named array);
- `contract`: `nn.dot_general` on two statically shaped operands, otherwise a
  map accumulating the product with `wcr(add)` (einsum, a dot over `x[:i]`).
The tasklet of a map computes the whole elementwise tree from the leaves'
`df.read`s; dynamic sizes (`x[:i]` in a loop) become dynamic map bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df, nn
from dfc.dialects.df_builders import REDUCE_IDENTITY, empty, map_op, read, splat, tasklet, write
from dfc.dialects.nn_contract import DotGeneralOp
from dfc.dialects.xdsl_fixes import RemFOp
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import (
    IR_TYPES,
    Const,
    Expr,
    Index,
    Iota,
    Op,
    View,
    dtype_name,
    is_float,
    is_unsigned,
    size_bound,
    tensor_type,
)

Fail = Callable[[str], Exception]
PIECEWISE = {"maximum", "minimum", "abs", "where", "sign", "compare", "floor", "ceil", "rint"}
"""Ops whose derivative is piecewise: a tasklet nests at most one level of them,
since autodiff's symbolic derivative of nested cases has no arith form."""


def _has_piecewise(e: Expr) -> bool:
    return isinstance(e, Op) and (e.name in PIECEWISE or any(_has_piecewise(a) for a in e.args))


def _tree_key(e: Expr) -> tuple:
    """A key equal for trees that compute the same values: the ops, dtypes and shapes, each leaf's tensor
    (by identity), indexing and constant."""
    common = (type(e).__name__, e.dtype, e.weak, tuple(e.shape))
    if isinstance(e, Op):
        return (*common, e.name, repr(e.attr), tuple(_tree_key(a) for a in e.args))
    if isinstance(e, View):
        gathers = tuple((tuple(g.col), _tree_key(g.index), tuple(g.dims)) for g in e.gathers)
        return (*common, id(e.source), tuple(e.offset), tuple(map(tuple, e.coef)), gathers)
    if isinstance(e, Const):
        return (*common, type(e.value).__name__, repr(e.value))
    if isinstance(e, Index):
        return (*common, e.value)
    assert isinstance(e, Iota)
    return (*common, e.start, e.step)


def bound(b: Builder, size: Affine) -> int | SSAValue:
    return size.static if size.static is not None else size.emit(b)


def aligned(ivs: Sequence[SSAValue | None], parent: list[Affine], child: list[Affine]) -> list[SSAValue | None]:
    """The child's index in a broadcast: trailing dims, 0 (None) where the child has size 1."""
    out = list(ivs[len(parent) - len(child):])
    for k, (c, p) in enumerate(zip(child, parent[len(parent) - len(child):])):
        if c.static == 1 and p.static != 1:
            out[k] = None
    return out


def _leading(value: SSAValue, shape: list[Affine]) -> View:
    """The leading `shape` block of a tensor (the whole tensor when `shape` is its
    static shape): a result whose size depends on a loop variable is computed
    into a tensor of its constant bound and read through this view."""
    n = len(shape)
    return View(value, list(shape), [Affine(0)] * n, [[int(r == c) for c in range(n)] for r in range(n)],
                dtype_name(value.type.element_type))  # type: ignore[attr-defined]


def _letter_bound(letter: str, size: Affine, operands: list[Expr], subscripts: list[str]) -> int | None:
    """A constant bound of an einsum letter's `size`: the smallest bound among the operands that have it
    (not broadcast from 1)."""
    if size.static is not None:
        return size.static
    bounds = [size_bound(e, subs.index(letter)) for e, subs in zip(operands, subscripts)
              if letter in subs and e.shape[subs.index(letter)] == size]
    return min((b for b in bounds if b is not None), default=None)


class Emitter:
    """Builds the maps for lazy arrays at the builder's insertion point."""

    def __init__(self, b: Builder, default_float: str, fail: Fail):
        self.b = b
        self.default_float = default_float
        self.fail = fail
        self._operands: dict[tuple, tuple[Expr, View]] = {}
        """The piecewise operands `prepare` stored, by `_tree_key` (the tree kept alive with its map): a lazy
        tree is an immutable value, so equal trees built apart (|re| in each use of a complex formula) are
        computed by one map of this block, not one each that fusion would have to merge back."""

    def concrete(self, e: Expr) -> str:
        """The dtype `e` is stored in (weak floats take the default float type)."""
        return self.default_float if e.weak and is_float(e.dtype) else e.dtype

    # -- scalars inside a map body ------------------------------------------------

    def scalar(self, mb: Builder, e: Expr, ivs: Sequence[SSAValue | None], dtype: str) -> SSAValue:
        """The element of `e` at `ivs`, as a value of `dtype` (reads + one tasklet)."""
        inputs: list[SSAValue] = []
        tree = self._leaves(mb, e, ivs, inputs, dtype)
        if isinstance(tree, tuple) and isinstance(tree[0], int) and tree[1] == dtype:
            return inputs[tree[0]]
        types = [v.type for v in inputs]

        def body(s: Builder, args: Sequence[SSAValue]) -> SSAValue:
            return _compute(s, tree, args, dtype)

        block = Block(arg_types=types)
        inner = Builder(InsertPoint.at_end(block))
        inner.insert(df.YieldOp(body(inner, block.args)))
        return mb.insert(df.TaskletOp(inputs, [IR_TYPES[dtype]], block)).res[0]

    def _leaves(self, mb: Builder, e: Expr, ivs: Sequence[SSAValue | None], inputs: list[SSAValue], context: str):
        """Reads the leaves of `e` in the map body; returns the tree with each leaf
        replaced by (its input position, its dtype). `context` is the dtype the
        parent computes in: an integer or boolean used as a float is computed and
        converted by tasklets of their own (their result is not a float, so autodiff
        never differentiates them; it has no rule for `sitofp`/`uitofp`)."""
        if is_float(context) and not is_float(e.dtype) and not isinstance(e, Const):
            inputs.append(self._as_float(mb, self.scalar(mb, e, ivs, e.dtype), e.dtype, context))
            return (len(inputs) - 1, context)
        if isinstance(e, View):
            inputs.append(read(mb, e.source, self.view_index(mb, e, ivs)))
            return (len(inputs) - 1, e.dtype)
        if isinstance(e, Index | Iota):
            value = e.value if isinstance(e, Index) else e.start + Affine(0)
            extra = {ivs[0]: e.step} if isinstance(e, Iota) and ivs[0] is not None else {}
            inputs.append(mb.insert(arith.IndexCastOp(value.emit(mb, extra), i64)).result)
            return (len(inputs) - 1, "i64")
        if isinstance(e, Const):
            return e
        assert isinstance(e, Op)
        if e.name == "bitcast" and is_float(e.dtype) and not is_float(e.attr):  # a tasklet of its own, as conversions
            bits = self.scalar(mb, e.args[0], aligned(ivs, e.shape, e.args[0].shape), e.attr)
            t = IR_TYPES[e.dtype]
            inputs.append(tasklet(mb, [bits], t, lambda s, v: s.b.insert(arith.BitcastOp(v[0], t)).result))
            return (len(inputs) - 1, e.dtype)
        contexts = {"compare": [e.attr[1]] * 2 if e.attr else [], "where": ["i1", e.dtype, e.dtype],
                    "bitcast": [e.attr]}.get(e.name, [e.dtype] * len(e.args))
        return (e, [self._leaves(mb, a, aligned(ivs, e.shape, a.shape), inputs, c) for a, c in zip(e.args, contexts)])

    def view_index(self, mb: Builder, e: View, ivs: Sequence[SSAValue | None]) -> list[SSAValue]:
        """The index into `e.source` of the view's element at `ivs` (its gathers' indices read from data)."""
        index = []
        for r, off in enumerate(e.offset):
            extra = {iv: e.coef[r][k] for k, iv in enumerate(ivs) if iv is not None and e.coef[r][k]}
            index.append(off.emit(mb, extra))
        for g in e.gathers:
            at = [ivs[d] if d is not None else None for d in g.dims]
            value = mb.insert(arith.IndexCastOp(self.scalar(mb, g.index, at, "i64"), IndexType())).result
            for r, c in enumerate(g.col):
                if c:
                    term = value if c == 1 else mb.insert(arith.MuliOp(value, Affine(c).emit(mb))).result
                    index[r] = mb.insert(arith.AddiOp(index[r], term)).result
        return index

    def _as_float(self, mb: Builder, value: SSAValue, src: str, dst: str) -> SSAValue:
        """`value` converted by a one-op tasklet."""
        block = Block(arg_types=[IR_TYPES[src]])
        inner = Builder(InsertPoint.at_end(block))
        inner.insert(df.YieldOp(_convert(inner, block.args[0], src, dst)))
        return mb.insert(df.TaskletOp([value], [IR_TYPES[dst]], block)).res[0]

    # -- maps ---------------------------------------------------------------------

    def static(self, e: Expr, what: str) -> list[int]:
        shape = e.static_shape
        if shape is None:
            sizes = ", ".join(map(str, e.shape))
            raise self.fail(f"{what} has shape ({sizes}), a size known only at run time (a loop variable, x[m], "
                            "np.nonzero, np.unique): this operation needs a static shape (elementwise arithmetic, "
                            "reductions, slices, gathers, 1-d sorts and products take run-time sizes)")
        return shape

    def prepare(self, e: Expr) -> Expr:
        """`e` with each piecewise operand of a piecewise op computed by a map of its own."""
        if not isinstance(e, Op):
            return e
        args = [self.prepare(a) for a in e.args]
        if e.name in PIECEWISE:
            args = [self._stored_operand(a) if _has_piecewise(a) and a.static_shape is not None else a
                    for a in args]
        return Op(e.name, args, e.shape, e.dtype, e.attr)

    def _stored_operand(self, e: Expr) -> View:
        key = _tree_key(e)
        if key not in self._operands:
            self._operands[key] = (e, View.whole(self.materialize(e)))
        return self._operands[key][1]

    def materialize(self, e: Expr, dtype: str | None = None) -> SSAValue:
        """A fresh tensor holding `e` (the viewed tensor itself for a whole view)."""
        dtype = dtype or self.concrete(e)
        e = self.prepare(e)
        if isinstance(e, View) and e.is_whole and e.dtype == dtype:
            return e.source
        if isinstance(e, Const) and e.static_shape is not None:
            return splat(self.b, tensor_type(dtype, e.static_shape), e.value)

        def build(mb: Builder, ivs, outs) -> None:
            write(mb, self.scalar(mb, e, list(ivs), dtype), outs[0], list(ivs))

        return map_op(self.b, [bound(self.b, d) for d in e.shape], [self.fresh(dtype, e.shape)], build).res[0]

    def fresh(self, dtype: str, shape: list[Affine], fill: float | int | None = None) -> SSAValue:
        """A new tensor of `shape` (a run-time size is a `?` dimension), every element `fill` (None: unset)."""
        if all(d.static is not None for d in shape):
            t = tensor_type(dtype, [d.static for d in shape])  # type: ignore[misc]
            return empty(self.b, t) if fill is None else splat(self.b, t, fill)
        t = TensorType(IR_TYPES[dtype], [DYNAMIC_INDEX if d.static is None else d.static for d in shape])
        out = self.b.insert(tensor.EmptyOp([d.emit(self.b) for d in shape if d.static is None], t)).tensor
        if fill is None:
            return out

        def build(mb: Builder, ivs, outs) -> None:
            t = IR_TYPES[dtype]
            value = FloatAttr(fill, t) if is_float(dtype) else IntegerAttr(int(fill), t)  # type: ignore[arg-type]
            write(mb, tasklet(mb, [], t, lambda s, v: s.b.insert(arith.ConstantOp(value)).result), outs[0], list(ivs))

        return map_op(self.b, [bound(self.b, d) for d in shape], [out], build).res[0]

    def assign(self, target: View, e: Expr) -> SSAValue:
        """`target.source` with `e` (broadcast) written at the view: the new value."""
        e = self.prepare(e)
        if len(e.shape) > len(target.shape):
            raise self.fail(f"cannot assign an array of rank {len(e.shape)} to a view of rank {len(target.shape)}")
        for t, s in zip(target.shape[len(target.shape) - len(e.shape):], e.shape):
            if s.static != 1 and t != s:
                raise self.fail(f"cannot assign an array of shape {e.shape} to a view of shape {target.shape}")
        bounds = [bound(self.b, d) for d in target.shape]

        def build(mb: Builder, ivs, outs) -> None:
            value = self.scalar(mb, e, aligned(list(ivs), target.shape, e.shape), target.dtype)
            index = []
            for r, off in enumerate(target.offset):
                extra = {iv: target.coef[r][k] for k, iv in enumerate(ivs) if target.coef[r][k]}
                index.append(off.emit(mb, extra))
            write(mb, value, outs[0], index)

        return map_op(self.b, bounds, [target.source], build).res[0]

    def reduce(self, e: Expr, axes: list[int], kind: str, keepdims: bool) -> Expr:
        e = self.prepare(e)
        dtype = self.concrete(e)
        if dtype == "i1":
            dtype = "i64"
        out_shape = [Affine(1) if k in axes else d for k, d in enumerate(e.shape) if keepdims or k not in axes]
        kept = [k for k in range(e.ndim) if keepdims or k not in axes]
        out_static = [1 if k in axes else size_bound(e, k) for k in kept]
        if (isinstance(e, View) and e.is_whole and e.static_shape is not None and e.dtype == dtype and is_float(dtype)
                and kind in ("add", "max", "min") and axes):
            r = self.b.insert(nn.ReduceOp(e.source, {"add": "sum"}.get(kind, kind), axes, keepdims)).result
            return View.whole(r)
        flip = Const(1 << (int(dtype[1:]) - 1), dtype, False) if is_unsigned(dtype) and kind in ("max", "min") else None
        if flip is not None:  # the unsigned order is the signed order of the values with their top bit flipped
            e = Op("xor", [e, flip], e.shape, dtype)
        identity = REDUCE_IDENTITY[kind] if is_float(dtype) else _integer_identity(kind, dtype)
        if any(d is None for d in out_static):  # a kept dimension of run-time size
            init = self.fresh(dtype, out_shape, identity)
        else:
            init = splat(self.b, tensor_type(dtype, out_static), identity)  # type: ignore[arg-type]

        def build(mb: Builder, ivs, outs) -> None:
            value = self.scalar(mb, e, list(ivs), dtype)
            zero = Affine(0).emit(mb) if keepdims and axes else None
            index = [zero if k in axes else iv for k, iv in enumerate(ivs)] if keepdims else [
                iv for k, iv in enumerate(ivs) if k not in axes]
            write(mb, value, outs[0], index, kind)

        result = _leading(map_op(self.b, [bound(self.b, d) for d in e.shape], [init], build).res[0], out_shape)
        return result if flip is None else Op("xor", [result, flip], out_shape, dtype)

    def contract(self, operands: list[Expr], subscripts: list[str], out: str) -> Expr:
        """einsum(subscripts -> out) of the operands."""
        operands = [self.prepare(e) for e in operands]
        sizes: dict[str, Affine] = {}
        for e, subs in zip(operands, subscripts):
            if len(subs) != e.ndim:
                raise self.fail(f"einsum subscripts '{subs}' do not match an operand of rank {e.ndim}")
            for letter, d in zip(subs, e.shape):
                if letter in sizes and sizes[letter] != d and d.static != 1:
                    if sizes[letter].static == 1:
                        sizes[letter] = d
                        continue
                    raise self.fail(f"contraction sizes disagree: {sizes[letter]} and {d} (subscript '{letter}')")
                sizes.setdefault(letter, d)
        dtype = self._float_dtype(operands)
        summed = [c for c in dict.fromkeys("".join(subscripts)) if c not in out]
        if (len(operands) == 2 and all(e.static_shape is not None for e in operands)
                and all(len(set(s)) == len(s) for s in subscripts) and summed
                and all(c in subscripts[0] and c in subscripts[1] for c in summed)
                and all(self.concrete(e) == dtype or e.weak for e in operands)):
            return self._dot_general(operands, subscripts, out, dtype)
        out_shape = [sizes[c] for c in out]
        out_static = [_letter_bound(c, sizes[c], operands, subscripts) for c in out]
        letters = list(out) + summed
        if any(d is None for d in out_static):  # an output dimension of run-time size
            init = self.fresh(dtype, out_shape, 0.0 if summed else None)
        else:
            out_t = tensor_type(dtype, out_static)  # type: ignore[arg-type]
            init = splat(self.b, out_t, 0.0) if summed else empty(self.b, out_t)
        def build(mb: Builder, ivs, outs) -> None:
            at = dict(zip(letters, ivs))
            inputs: list[SSAValue] = []
            trees = [self._leaves(mb, e, [at[c] for c in subs], inputs, dtype) for e, subs in zip(operands, subscripts)]
            block_types = [v.type for v in inputs]
            block = Block(arg_types=block_types)
            inner = Builder(InsertPoint.at_end(block))
            values = [_compute(inner, t, block.args, dtype) for t in trees]
            p = values[0]
            for v in values[1:]:
                p = inner.insert(arith.MulfOp(p, v)).result
            inner.insert(df.YieldOp(p))
            value = mb.insert(df.TaskletOp(inputs, [IR_TYPES[dtype]], block)).res[0]
            write(mb, value, outs[0], [at[c] for c in out], "add" if summed else None)

        return _leading(map_op(self.b, [bound(self.b, sizes[c]) for c in letters], [init], build).res[0], out_shape)

    def _float_dtype(self, operands: list[Expr]) -> str:
        from dfc.frontend.arrays import result_dtype

        dtype = result_dtype(operands)
        if not is_float(dtype):
            raise self.fail("contractions (@, dot, einsum) of integer arrays are not supported")
        return self.default_float if all(e.weak for e in operands) else dtype

    def _dot_general(self, operands: list[Expr], subscripts: list[str], out: str, dtype: str) -> Expr:
        (a, b), (sa, sb) = operands, subscripts
        batch = [c for c in sa if c in sb and c in out]
        contracting = [c for c in sa if c in sb and c not in out]
        lhs, rhs = self.materialize(a, dtype), self.materialize(b, dtype)
        op = self.b.insert(DotGeneralOp(
            lhs, rhs, ([sa.index(c) for c in batch], [sb.index(c) for c in batch]),
            ([sa.index(c) for c in contracting], [sb.index(c) for c in contracting]),
        ))
        order = batch + [c for c in sa if c not in sb] + [c for c in sb if c not in sa]
        view = View.whole(op.result)
        if order == list(out):
            return view
        perm = [order.index(c) for c in out]
        return view.columns([view.column(k) for k in perm], [view.shape[k] for k in perm])


def _convert(b: Builder, v: SSAValue, src: str, dst: str) -> SSAValue:
    """`v` of dtype `src` as a `dst` value, as NumPy's `astype` converts (unsigned sources zero-extend and
    convert by value; integers of one width and the other signedness are the same bits: `v` itself)."""
    if src == dst:
        return v
    t = IR_TYPES[dst]
    if is_float(src) and is_float(dst):
        wider = int(dst[1:]) > int(src[1:])
        return b.insert((arith.ExtFOp if wider else arith.TruncFOp)(v, t)).result
    if is_float(dst):
        return b.insert((arith.UIToFPOp if src == "i1" or is_unsigned(src) else arith.SIToFPOp)(v, t)).result
    if is_float(src) and is_unsigned(dst):
        return _float_to_unsigned(b, v, src, dst)
    if is_float(src):
        return b.insert(arith.FPToSIOp(v, t)).result
    if dst == "i1":
        return b.insert(arith.CmpiOp(v, b.insert(arith.ConstantOp(IntegerAttr(0, IR_TYPES[src]))).result, "ne")).result
    if src == "i1":
        return b.insert(arith.ExtUIOp(v, t)).result
    if int(dst[1:]) == int(src[1:]):
        return v
    if int(dst[1:]) > int(src[1:]):
        return b.insert((arith.ExtUIOp if is_unsigned(src) else arith.ExtSIOp)(v, t)).result
    return b.insert(arith.TruncIOp(v, t)).result


def _float_to_unsigned(b: Builder, v: SSAValue, src: str, dst: str) -> SSAValue:
    """A float as an unsigned integer: truncated toward zero and wrapped to the width, as the interpreter
    converts (and NumPy on x86: -1.0 is 255 as uint8). Through int64 below 64 bits (fptoui of a negative
    value is poison); for uint64, fptoui from 2^63 up and fptosi below (each is defined on its side; a
    float16 is below)."""
    if int(dst[1:]) < 64:
        return b.insert(arith.TruncIOp(b.insert(arith.FPToSIOp(v, IR_TYPES["i64"])).result, IR_TYPES[dst])).result
    if src == "f16":
        return b.insert(arith.FPToSIOp(v, IR_TYPES[dst])).result
    high = b.insert(arith.CmpfOp(v, _constant(b, 2.0 ** 63, src), "oge")).result
    unsigned = b.insert(arith.FPToUIOp(v, IR_TYPES[dst])).result
    return b.insert(arith.SelectOp(high, unsigned, b.insert(arith.FPToSIOp(v, IR_TYPES[dst])).result)).result


def _constant(b: Builder, value: float | int | bool, dtype: str) -> SSAValue:
    t = IR_TYPES[dtype]
    if is_float(dtype):
        attr = FloatAttr(float(value), t)
    elif dtype == "i1":
        attr = IntegerAttr(int(value), t)
    else:  # the value modulo 2^bits, as NumPy's casts wrap (np.int8(np.int64(300)) is 44; Python ints are
        bits = int(dtype[1:])  # checked before: weak_ints.py), in the signed range for a signed type
        wrapped = int(value) % (1 << bits)
        attr = IntegerAttr(wrapped - (1 << bits) if not is_unsigned(dtype) and wrapped >= 1 << (bits - 1) else wrapped, t)
    return b.insert(arith.ConstantOp(attr)).result


_FLOAT_BINARY = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
                 "maximum": arith.MaximumfOp, "minimum": arith.MinimumfOp, "pow": math.PowFOp, "fmod": RemFOp,
                 "copysign": math.CopySignOp}
_INT_BINARY = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "maximum": arith.MaxSIOp,
               "minimum": arith.MinSIOp, "and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}
_FLOAT_UNARY = {"exp": math.ExpOp, "log": math.LogOp, "sqrt": math.SqrtOp, "tanh": math.TanhOp, "sin": math.SinOp,
                "cos": math.CosOp, "abs": math.AbsFOp, "neg": arith.NegfOp, "log1p": math.Log1pOp,
                "floor": math.FloorOp, "ceil": math.CeilOp, "rint": math.RoundEvenOp, "erf": math.ErfOp,
                "asinh": math.AsinhOp, "acosh": math.AcoshOp, "atanh": math.AtanhOp, "cbrt": math.CbrtOp,
                "trunc": math.TruncOp}
_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_CMPUI = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
_UNSIGNED_BINARY = {**_INT_BINARY, "maximum": arith.MaxUIOp, "minimum": arith.MinUIOp}


def _compute(b: Builder, tree, args: Sequence[SSAValue], want: str) -> SSAValue:
    """The scalar ops of an expression tree inside a tasklet body, as a `want` value."""
    if isinstance(tree, tuple) and isinstance(tree[0], int):
        index, dtype = tree
        return _convert(b, args[index], dtype, want)
    if isinstance(tree, Const):
        return _constant(b, tree.value, want)
    e, children = tree
    assert isinstance(e, Op)
    return _convert(b, _op_value(b, e, children, args), e.dtype, want)


def _op_value(b: Builder, e: Op, children: list, args: Sequence[SSAValue]) -> SSAValue:
    if e.name == "convert":
        return _compute(b, children[0], args, e.dtype)
    if e.name == "bitcast":  # the bits of a value of dtype `e.attr` (as wide as e.dtype)
        return b.insert(arith.BitcastOp(_compute(b, children[0], args, e.attr), IR_TYPES[e.dtype])).result
    if e.name == "where":
        c = _compute(b, children[0], args, "i1")
        x, y = (_compute(b, t, args, e.dtype) for t in children[1:])
        return b.insert(arith.SelectOp(c, x, y)).result
    if e.name == "pow" and isinstance(e.args[1], Const) and float(e.args[1].value).is_integer():
        return _integer_power(b, _compute(b, children[0], args, e.dtype), int(e.args[1].value), e.dtype)
    operand = e.attr[1] if e.name == "compare" else e.dtype
    values = [_compute(b, t, args, operand) for t in children]
    if e.name == "pow" and not is_float(e.dtype):
        return _run_time_power(b, values[0], values[1], e.dtype)
    if e.name == "compare":
        if is_float(operand):
            return b.insert(arith.CmpfOp(values[0], values[1], _CMPF[e.attr[0]])).result
        predicates = _CMPUI if is_unsigned(operand) else _CMPI
        return b.insert(arith.CmpiOp(values[0], values[1], predicates[e.attr[0]])).result
    if e.name == "not":
        return b.insert(arith.XOrIOp(values[0], _constant(b, 1, "i1"))).result
    if e.name == "pow" and isinstance(e.args[1], Const) and float(e.args[1].value) == 0.5:
        return b.insert(math.SqrtOp(values[0])).result
    if e.name == "sign":
        zero = _constant(b, 0.0, e.dtype)
        one, minus = _constant(b, 1.0, e.dtype), _constant(b, -1.0, e.dtype)
        pos = b.insert(arith.SelectOp(b.insert(arith.CmpfOp(values[0], zero, "ogt")).result, one, zero)).result
        return b.insert(arith.SelectOp(b.insert(arith.CmpfOp(values[0], zero, "olt")).result, minus, pos)).result
    if is_float(e.dtype):
        if e.name in _FLOAT_BINARY:
            return b.insert(_FLOAT_BINARY[e.name](values[0], values[1])).result
        return b.insert(_FLOAT_UNARY[e.name](values[0])).result
    if e.name == "neg":
        return b.insert(arith.SubiOp(_constant(b, 0, e.dtype), values[0])).result
    if e.name == "abs" and is_unsigned(e.dtype):
        return values[0]
    if e.name == "abs":
        negated = b.insert(arith.SubiOp(_constant(b, 0, e.dtype), values[0])).result
        below = b.insert(arith.CmpiOp(values[0], _constant(b, 0, e.dtype), "slt")).result
        return b.insert(arith.SelectOp(below, negated, values[0])).result
    if e.name in ("floordiv", "mod"):
        return _numpy_division(b, e.name, values[0], values[1], e.dtype)
    if e.name in ("lshift", "rshift"):
        return _numpy_shift(b, e.name, values[0], values[1], e.dtype)
    return b.insert((_UNSIGNED_BINARY if is_unsigned(e.dtype) else _INT_BINARY)[e.name](values[0], values[1])).result


def _numpy_shift(b: Builder, name: str, x: SSAValue, y: SSAValue, dtype: str) -> SSAValue:
    """NumPy's `x << y` and `x >> y` (arithmetic, logical for unsigned `x`): a count outside [0, bits)
    (negative ones too) gives 0, or for a signed `>>` the sign (-1 or 0), where LLVM's shift is poison."""
    bits = int(dtype[1:])
    inside = b.insert(arith.CmpiOp(y, _constant(b, bits, dtype), "ult")).result
    count = b.insert(arith.SelectOp(inside, y, _constant(b, 0, dtype))).result
    if name == "lshift" or is_unsigned(dtype):
        shift = (arith.ShLIOp if name == "lshift" else arith.ShRUIOp)(x, count)
        return b.insert(arith.SelectOp(inside, b.insert(shift).result, _constant(b, 0, dtype))).result
    sign = b.insert(arith.ShRSIOp(x, _constant(b, bits - 1, dtype))).result
    return b.insert(arith.SelectOp(inside, b.insert(arith.ShRSIOp(x, count)).result, sign)).result


def _numpy_division(b: Builder, name: str, x: SSAValue, y: SSAValue, dtype: str) -> SSAValue:
    """NumPy's integer `x // y` or `x % y` (Python's signs: the remainder takes
    the divisor's), 0 where y is 0, and wrapping for MIN // -1 (MIN % -1 is 0),
    with NumPy's `RuntimeWarning`s for both (`df.WARN_IF`)."""
    ufunc = "floor_divide" if name == "floordiv" else "remainder"
    zero = _constant(b, 0, dtype)
    by_zero = b.insert(arith.CmpiOp(y, zero, "eq"))
    by_zero.attributes[df.WARN_IF] = StringAttr(f"divide by zero encountered in {ufunc}")
    safe = b.insert(arith.SelectOp(by_zero.result, _constant(b, 1, dtype), y)).result
    if is_unsigned(dtype):  # no signs to fix, no overflow
        r = b.insert((arith.DivUIOp if name == "floordiv" else arith.RemUIOp)(x, safe)).result
        return b.insert(arith.SelectOp(by_zero.result, zero, r)).result
    r = b.insert(arith.FloorDivSIOp(x, safe)).result
    if name == "mod":  # x - floor(x / y) * y
        r = b.insert(arith.SubiOp(x, b.insert(arith.MuliOp(r, safe)).result)).result
    else:  # MIN // -1 is MIN, which the select keeps alive with its warning
        smallest = b.insert(arith.CmpiOp(x, _constant(b, -(2 ** (int(dtype[1:]) - 1)), dtype), "eq")).result
        by_minus_one = b.insert(arith.CmpiOp(y, _constant(b, -1, dtype), "eq")).result
        overflow = b.insert(arith.AndIOp(smallest, by_minus_one))
        overflow.attributes[df.WARN_IF] = StringAttr(f"overflow encountered in {ufunc}")
        r = b.insert(arith.SelectOp(overflow.result, x, r)).result
    return b.insert(arith.SelectOp(by_zero.result, zero, r)).result


def _integer_power(b: Builder, x: SSAValue, n: int, dtype: str) -> SSAValue:
    if n == 0:
        return _constant(b, 1, dtype)
    mul = arith.MulfOp if is_float(dtype) else arith.MuliOp
    result, base, k = None, x, abs(n)
    while k:
        if k & 1:
            result = base if result is None else b.insert(mul(result, base)).result
        k >>= 1
        if k:
            base = b.insert(mul(base, base)).result
    assert result is not None
    if n < 0:
        result = b.insert(arith.DivfOp(_constant(b, 1.0, dtype), result)).result
    return result


def _run_time_power(b: Builder, x: SSAValue, n: SSAValue, dtype: str) -> SSAValue:
    """`x ** n` of integers, `n` not negative (the frontend admits unsigned and boolean exponents), wrapping
    as NumPy's: by squaring over every bit of `n` (a tasklet has no loops)."""
    bits = 1 if dtype == "i1" else int(dtype[1:])
    one = _constant(b, 1, dtype)
    result, base = one, x
    for k in range(bits):
        bit = b.insert(arith.AndIOp(b.insert(arith.ShRUIOp(n, _constant(b, k, dtype))).result if k else n, one)).result
        taken = b.insert(arith.CmpiOp(bit, _constant(b, 0, dtype), "ne")).result
        result = b.insert(arith.SelectOp(taken, b.insert(arith.MuliOp(result, base)).result, result)).result
        if k + 1 < bits:
            base = b.insert(arith.MuliOp(base, base)).result
    return result


def _integer_identity(kind: str, dtype: str) -> int:
    """The identity of reduction `kind` over signed integers of `dtype` ("i32", "i64"); for an unsigned
    `dtype`, the bits of the signed one (max/min reduce the values with their top bit flipped)."""
    bits = int(dtype[1:])
    value = {"add": 0, "mul": 1, "max": -(2 ** (bits - 1)), "min": 2 ** (bits - 1) - 1}[kind]
    return value % (1 << bits) if is_unsigned(dtype) else value
