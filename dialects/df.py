"""The df (dataflow) dialect: parallel maps, memlets and scalar tasklets.

Value semantics: a `df.map` result is its `outs` initial value with every
`df.write` of the map applied. `df.read`/`df.write` are the memlets, indexed by
SSA index expressions of the map variables; `wcr(...)` resolves conflicting
writes as a reduction. A `df.tasklet` is a pure scalar function of its operands.

Buffer form (after `bufferize`): a map's `outs` may instead be memrefs, updated
in place; such a map has no results, and reads/writes then touch memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    DenseArrayBase,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    NoTerminator,
    Pure,
    get_effects,
)
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.index_exprs import depends_on, used_variables
from dfc.dialects.index_ranges import IndexedAccess, IterationSpace, out_of_bounds
from dfc.dialects.limits import MAX_DIM

WCR_KINDS = ("add", "mul", "max", "min")
WARN_IF = "dfc.warn_if"
"""A discardable attribute of an op with one i1 result (`arith.cmpi`,
`arith.andi`): a string; where the result is true, the program issues a
`RuntimeWarning` with that message (the NumPy frontend's integer division by
zero). The interpreter warns at each such value; compiled code once per call."""


CANONICALIZATION_PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {}
"""The canonicalization patterns of each df op, keyed by its class. The module
that defines them (`dialects.df_canonicalization`, which builds df ops) fills
the table when imported, and the `dfc.dialects` package imports it, so the
table is full before any df op exists; df itself never imports the patterns."""


class MapCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return CANONICALIZATION_PATTERNS.get(MapOp, ())


class ReadCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return CANONICALIZATION_PATTERNS.get(ReadOp, ())


class TaskletCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return CANONICALIZATION_PATTERNS.get(TaskletOp, ())


class MapIterationSpace(IterationSpace):
    """A map's variables range over [0, bound); its results have its outputs' shapes."""

    def variable_bounds(self, op: Operation) -> list[int | SSAValue]:
        assert isinstance(op, MapOp)
        return op.bounds

    def tied_operand(self, op: Operation, result: SSAValue) -> SSAValue | None:
        assert isinstance(op, MapOp)
        return op.outs[list(op.res).index(result)]


class ReadAccess(IndexedAccess):
    def access(self, op: Operation) -> tuple[SSAValue, list[SSAValue]] | None:
        assert isinstance(op, ReadOp)
        return op.source, list(op.indices)


class WriteAccess(IndexedAccess):
    """A write touches its map's output (the initial value its block argument stands for)."""

    def access(self, op: Operation) -> tuple[SSAValue, list[SSAValue]] | None:
        assert isinstance(op, WriteOp)
        target = op.target_map()
        if target is None:
            return None
        return target.outs[list(target.out_args).index(op.dest)], list(op.indices)


class MapEffects(MemoryEffect):
    """A map is as pure as its body, once writes to its own outputs are hidden."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance] | None:
        assert isinstance(op, MapOp)
        own = dict(zip(op.out_args, op.outs))
        buffers = op.is_buffer_form
        effects: set[EffectInstance] = set()
        for child in op.body.block.ops:
            child_effects = get_effects(child)
            if child_effects is None:
                return None
            for e in child_effects:
                if e.value not in own:
                    effects.add(e)
                elif buffers:  # in buffer form the body's writes reach the memref
                    effects.add(EffectInstance(e.kind, own[e.value]))
        return effects


class ReadEffect(MemoryEffect):
    """A read of a tensor is pure; a read of a memref reads memory."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance]:
        assert isinstance(op, ReadOp)
        if isinstance(op.source.type, MemRefType):
            return {EffectInstance(MemoryEffectKind.READ, op.source)}
        return set()


class WriteEffect(MemoryEffect):
    """A write mutates the enclosing map's output it names."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance]:
        assert isinstance(op, WriteOp)
        return {EffectInstance(MemoryEffectKind.WRITE, op.dest)}


@irdl_op_definition
class MapOp(IRDLOperation):
    """A parallel iteration space `(%i, ...) in (N, ...)` over independent iterations.

    Bounds are static integers or SSA `index` values (lower bound 0, step 1).
    The body's block arguments are the map variables followed by one argument
    per `outs` value; results are the final values of the outputs:

        %y, %s = df.map (%i, %j) in (64, %n)
            outs(%y0 = %empty : tensor<64x?xf32>, %s0 = %zeros : tensor<64xf32>) {
          %a = df.read %x[%i, %j] : tensor<64x?xf32>
          df.write %a, %y0[%i, %j] : tensor<64x?xf32>
          df.write %a, %s0[%i] wcr(add) : tensor<64xf32>
        } -> tensor<64x?xf32>, tensor<64xf32>
    """

    name = "df.map"

    dyn_bounds = var_operand_def(IndexType)
    outs = var_operand_def(TensorType | MemRefType)
    static_bounds = prop_def(DenseArrayBase.constr(i64))
    res = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(MapEffects(), NoTerminator(), MapCanonicalization(), MapIterationSpace())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        bounds: Sequence[int | SSAValue],
        outs: Sequence[SSAValue],
        body: Region | Block | None = None,
    ):
        static = [b if isinstance(b, int) else DYNAMIC_INDEX for b in bounds]
        dynamic = [b for b in bounds if not isinstance(b, int)]
        out_types = [o.type for o in outs]
        result_types = [t for t in out_types if isinstance(t, TensorType)]
        if body is None:
            body = Block(arg_types=[IndexType()] * len(bounds) + out_types)
        if isinstance(body, Block):
            body = Region(body)
        super().__init__(
            operands=[dynamic, outs],
            result_types=[result_types],
            properties={"static_bounds": DenseArrayBase.from_list(i64, static)},
            regions=[body],
        )

    @property
    def is_buffer_form(self) -> bool:
        """Whether the outputs are memrefs updated in place (after bufferize)."""
        # the other operands, the dynamic bounds, are indices: no segment look-up needed
        return any(isinstance(o.type, MemRefType) for o in self.operands)

    @property
    def rank(self) -> int:
        return len(self.static_bounds)

    @property
    def ivs(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args[: self.rank]

    @property
    def out_args(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args[self.rank :]

    @property
    def bounds(self) -> list[int | SSAValue]:
        """Each bound: an int when static, else the SSA value giving it."""
        dynamic = iter(self.operands)  # the dynamic bounds come first
        return [
            next(dynamic) if b == DYNAMIC_INDEX else b
            for b in self.static_bounds.get_values()
        ]

    @property
    def static_extents(self) -> list[int | None]:
        return [None if b == DYNAMIC_INDEX else b for b in self.static_bounds.get_values()]

    def verify_(self) -> None:
        static = self.static_bounds.get_values()
        if sum(b == DYNAMIC_INDEX for b in static) != len(self.dyn_bounds):
            raise VerifyException(
                "expected one dynamic bound operand per dynamic bound"
            )
        if any(b < 0 and b != DYNAMIC_INDEX for b in static):
            raise VerifyException("map bounds must be non-negative")
        if any(b > MAX_DIM for b in static):
            raise VerifyException(f"map bound {max(static)} exceeds the limit of {MAX_DIM}")
        args = self.body.block.args
        if len(args) != self.rank + len(self.outs):
            raise VerifyException(
                f"expected {self.rank} map variables and {len(self.outs)} output "
                f"block arguments, got {len(args)} block arguments"
            )
        for iv in self.ivs:
            if not isinstance(iv.type, IndexType):
                raise VerifyException(f"map variable must be index, got {iv.type}")
        if self.is_buffer_form:
            if not all(isinstance(o.type, MemRefType) for o in self.outs) or self.res:
                raise VerifyException(
                    "a map on memref outputs has only memref outputs and no results"
                )
            for k, (out, arg) in enumerate(zip(self.outs, self.out_args)):
                if out.type != arg.type:
                    raise VerifyException(
                        f"output #{k}: buffer and block argument types differ "
                        f"({out.type}, {arg.type})"
                    )
            return
        for k, (out, arg, res) in enumerate(zip(self.outs, self.out_args, self.res)):
            if not (out.type == arg.type == res.type):
                raise VerifyException(
                    f"output #{k}: initial value, block argument and result types "
                    f"differ ({out.type}, {arg.type}, {res.type})"
                )
        if len(self.res) != len(self.outs):
            raise VerifyException("expected one result per output")

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.ivs, printer.print_ssa_value)
        printer.print_string(") in (")
        printer.print_list(
            self.bounds,
            lambda b: printer.print_string(str(b))
            if isinstance(b, int)
            else printer.print_ssa_value(b),
        )
        printer.print_string(")")
        if self.outs:
            printer.print_string(" outs(")

            def print_out(pair: tuple[BlockArgument, SSAValue]) -> None:
                printer.print_ssa_value(pair[0])
                printer.print_string(" = ")
                printer.print_ssa_value(pair[1])
                printer.print_string(" : ")
                printer.print_attribute(pair[1].type)

            printer.print_list(zip(self.out_args, self.outs), print_out)
            printer.print_string(")")
        printer.print_op_attributes(
            self.attributes, reserved_attr_names=(), print_keyword=True
        )
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        if self.res:
            printer.print_string(" -> ")
            printer.print_list(self.res.types, printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        ivs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        parser.parse_keyword("in")

        def parse_bound() -> int | UnresolvedOperand:
            value = parser.parse_optional_unresolved_operand()
            if value is not None:
                return value
            start = parser.pos
            bound = parser.parse_integer()
            if not 0 <= bound <= MAX_DIM:
                parser.raise_error(f"map bound {bound} is not in [0, {MAX_DIM}]", start, parser.pos)
            return bound

        raw_bounds = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parse_bound
        )
        if len(raw_bounds) != len(ivs):
            parser.raise_error(
                f"expected {len(ivs)} bounds for {len(ivs)} map variables, "
                f"got {len(raw_bounds)}"
            )
        bounds = [
            b if isinstance(b, int) else parser.resolve_operand(b, IndexType())
            for b in raw_bounds
        ]
        out_args: list[Parser.UnresolvedArgument] = []
        outs: list[SSAValue] = []
        if parser.parse_optional_keyword("outs"):

            def parse_out() -> None:
                out_args.append(parser.parse_argument(expect_type=False))
                parser.parse_punctuation("=")
                value = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                outs.append(parser.resolve_operand(value, parser.parse_type()))

            parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_out)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        args = [a.resolve(IndexType()) for a in ivs] + [
            a.resolve(v.type) for a, v in zip(out_args, outs)
        ]
        region = parser.parse_region(args)
        if parser.parse_optional_punctuation("->"):
            start = parser.pos
            types = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_type
            )
            if types != [o.type for o in outs]:
                parser.raise_error(
                    "result types must equal the outs types", start, parser.pos
                )
        op = cls(bounds, outs, region)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


def enclosing_maps(op: Operation) -> list[MapOp]:
    """The df.map ops around `op`, innermost first."""
    maps: list[MapOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, MapOp):
            maps.append(parent)
        parent = parent.parent_op()
    return maps


def product_parts(m: MapOp) -> tuple[ReadOp, ReadOp, WriteOp] | None:
    """The two reads and the write of a map whose body is exactly `x * y`
    added into its one output: two `df.read`s, their product (an
    `arith.mulf`, or a tasklet whose one op it is) and a `df.write` with
    wcr(add). None for any other body."""
    ops = list(islice(m.body.block.ops, 5))  # not the whole body: canonicalize asks this of every read in it
    if len(ops) != 4 or len(m.outs) != 1:
        return None
    x, y, mul, w = ops
    if not (isinstance(x, ReadOp) and isinstance(y, ReadOp) and isinstance(w, WriteOp)):
        return None
    if w.dest is not m.out_args[0] or w.wcr_kind != "add" or w.value is not mul.results[0]:
        return None
    if isinstance(mul, TaskletOp):
        inner = list(mul.body.block.ops)
        if len(inner) != 2 or not isinstance(inner[0], arith.MulfOp) or tuple(inner[1].operands) != (inner[0].result,):
            return None
        if {inner[0].lhs, inner[0].rhs} != set(mul.body.block.args) or len(mul.body.block.args) != 2:
            return None
        factors = set(mul.inputs)
    elif isinstance(mul, arith.MulfOp):
        factors = {mul.lhs, mul.rhs}
    else:
        return None
    if factors != {x.res, y.res} or x.res is y.res:
        return None
    return x, y, w


def _verify_indices(indices: Sequence[SSAValue], tensor: Attribute) -> None:
    assert isinstance(tensor, TensorType | MemRefType)
    rank = len(tensor.get_shape())
    if len(indices) != rank:
        raise VerifyException(
            f"expected {rank} indices for {tensor}, got {len(indices)}"
        )


def _print_access(printer: Printer, tensor: SSAValue, indices: Sequence[SSAValue]):
    printer.print_ssa_value(tensor)
    printer.print_string("[")
    printer.print_list(indices, printer.print_ssa_value)
    printer.print_string("]")


def _parse_access(parser: Parser) -> tuple[UnresolvedOperand, list[SSAValue]]:
    tensor = parser.parse_unresolved_operand()
    indices = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_operand(IndexType())
    )
    return tensor, indices


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Reads one element: `%v = df.read %t[%i, %j] : tensor<...>`."""

    name = "df.read"

    source = operand_def(TensorType | MemRefType)
    indices = var_operand_def(IndexType)
    res = result_def()

    traits = traits_def(ReadEffect(), ReadCanonicalization(), ReadAccess())

    def __init__(self, source: SSAValue, indices: Sequence[SSAValue]):
        assert isinstance(source.type, TensorType | MemRefType)
        super().__init__(
            operands=[source, indices], result_types=[source.type.element_type]
        )

    def verify_(self) -> None:
        _verify_indices(self.indices, self.source.type)
        assert isinstance(self.source.type, TensorType | MemRefType)
        if self.res.type != self.source.type.element_type:
            raise VerifyException(
                f"result type {self.res.type} must be the element type of "
                f"{self.source.type}"
            )
        _verify_in_bounds(self)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self.source, self.indices)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        source, indices = _parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(source, parser.parse_type()), indices)
        op.attributes |= attributes
        return op


def _verify_in_bounds(op: Operation) -> None:
    """Reject an access whose index provably leaves its buffer (`dialects.index_ranges`)."""
    found = out_of_bounds(op)
    if found is not None:
        dim, low, high, extent = found
        raise VerifyException(
            f"index {dim} ranges over [{low}, {high}], outside dimension {dim} of size {extent}"
        )


def wcr_supported(kind: str, element: Attribute) -> bool:
    """Whether a write-conflict resolution `kind` is defined for `element`."""
    if isinstance(element, AnyFloat):
        return True
    if isinstance(element, IntegerType):
        return element.width.data > 1 or kind in ("max", "min")
    return False


@irdl_op_definition
class WriteOp(IRDLOperation):
    """Writes one element of an enclosing map's output, optionally reducing.

    `df.write %v, %out[%i] wcr(add) : tensor<...>`
    """

    name = "df.write"

    value = operand_def()
    dest = operand_def(TensorType | MemRefType)
    indices = var_operand_def(IndexType)
    wcr = opt_prop_def(StringAttr)

    traits = traits_def(WriteEffect(), WriteAccess())

    def __init__(
        self,
        value: SSAValue,
        dest: SSAValue,
        indices: Sequence[SSAValue],
        wcr: str | None = None,
    ):
        super().__init__(
            operands=[value, dest, indices],
            properties={"wcr": StringAttr(wcr)} if wcr else {},
        )

    @property
    def wcr_kind(self) -> str | None:
        return self.wcr.data if self.wcr is not None else None

    def target_map(self) -> MapOp | None:
        """The map whose output this write updates."""
        dest = self.dest
        if isinstance(dest, BlockArgument):
            owner = dest.block.parent_op()
            if isinstance(owner, MapOp) and dest in owner.out_args:
                return owner
        return None

    def verify_(self) -> None:
        dest_type = self.dest.type
        assert isinstance(dest_type, TensorType | MemRefType)
        _verify_indices(self.indices, dest_type)
        if self.value.type != dest_type.element_type:
            raise VerifyException(
                f"written value of type {self.value.type} does not match element "
                f"type of {dest_type}"
            )
        target = self.target_map()
        if target is None or target not in enclosing_maps(self):
            raise VerifyException(
                "df.write must write into an output block argument of an "
                "enclosing df.map"
            )
        _verify_in_bounds(self)
        kind = self.wcr_kind
        if kind is not None:
            if kind not in WCR_KINDS:
                raise VerifyException(
                    f"unknown wcr kind '{kind}', expected one of {', '.join(WCR_KINDS)}"
                )
            if not wcr_supported(kind, dest_type.element_type):
                raise VerifyException(
                    f"wcr({kind}) is not supported on element type "
                    f"{dest_type.element_type}"
                )
            return
        self._verify_no_collision(target)

    def _verify_no_collision(self, target: MapOp) -> None:
        """Reject a plain write whose index provably ignores a map variable."""
        maps = enclosing_maps(self)
        maps = maps[: maps.index(target) + 1]
        variables = [(iv, e) for m in maps for iv, e in zip(m.ivs, m.static_extents)]
        needed = [iv for iv, extent in variables if extent is not None and extent > 1]
        used: set[SSAValue] = set()
        for index in self.indices:
            used |= depends_on(index, needed)
        if used == set(needed) and not all(i in needed for i in self.indices):
            used = used_variables(self.indices, needed)
        for iv, extent in variables:
            if iv in needed and iv not in used:
                raise VerifyException(
                    f"plain write collides across iterations: its index does not "
                    f"depend on map variable {iv.name_hint and '%' + iv.name_hint or '#' + str(iv.index)} "
                    f"(extent {extent}); use wcr(add|mul|max|min) to reduce"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        _print_access(printer, self.dest, self.indices)
        if self.wcr is not None:
            printer.print_string(f" wcr({self.wcr.data})")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.dest.type)

    @classmethod
    def parse(cls, parser: Parser) -> WriteOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        dest, indices = _parse_access(parser)
        wcr = None
        if parser.parse_optional_keyword("wcr"):
            parser.parse_punctuation("(")
            wcr = parser.parse_identifier()
            parser.parse_punctuation(")")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        start = parser.pos
        dest_type = parser.parse_type()
        if not isinstance(dest_type, TensorType | MemRefType):
            parser.raise_error(
                f"expected a tensor or memref type, got {dest_type}", start, parser.pos
            )
        op = cls(
            parser.resolve_operand(value, dest_type.element_type),
            parser.resolve_operand(dest, dest_type),
            indices,
            wcr,
        )
        op.attributes |= attributes
        return op


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a tasklet, returning its scalar results."""

    name = "df.yield"

    values = var_operand_def()

    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(TaskletOp)))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


@irdl_op_definition
class TaskletOp(IRDLOperation):
    """A pure scalar function applied to its operands.

    `%r = df.tasklet (%a, %b) : (f32, f32) -> f32 { ^bb0(%u: f32, %v: f32): ... }`
    """

    name = "df.tasklet"

    inputs = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), Pure(), TaskletCanonicalization())

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region | Block,
    ):
        if isinstance(body, Block):
            body = Region(body)
        super().__init__(operands=[inputs], result_types=[result_types], regions=[body])

    @property
    def function_type(self) -> FunctionType:
        return FunctionType.from_lists(self.inputs.types, self.res.types)

    def verify_(self) -> None:
        block = self.body.block
        if tuple(block.arg_types) != tuple(self.inputs.types):
            raise VerifyException(
                "tasklet block argument types "
                f"({', '.join(map(str, block.arg_types))}) do not match its operand "
                f"types ({', '.join(map(str, self.inputs.types))})"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("tasklet body must end with df.yield")
        if tuple(terminator.values.types) != tuple(self.res.types):
            raise VerifyException(
                f"df.yield types ({', '.join(map(str, terminator.values.types))}) do "
                f"not match the tasklet result types "
                f"({', '.join(map(str, self.res.types))})"
            )
        for op in block.ops:
            if op is not terminator and op.dialect_name() not in ("arith", "math"):
                raise VerifyException(
                    f"tasklet bodies hold only arith and math ops, found {op.name}"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_attribute(self.function_type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> TaskletOp:
        pos = parser.pos
        inputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        operands = parser.resolve_operands(inputs, function_type.inputs.data, pos)
        region = parser.parse_region()
        op = cls(operands, function_type.outputs.data, region)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


DF = Dialect("df", [MapOp, ReadOp, WriteOp, TaskletOp, YieldOp])
