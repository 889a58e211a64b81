"""Importing ONNX models (the `onnx` package, extra `onnx`) into library-level IR.

`import_onnx(model)` reads a `ModelProto` (or a path to a `.onnx` file) and
builds one function, `@main(inputs..., parameters...) -> outputs...`, of nn
ops (and an elementwise df map for `Erf`). The graph inputs come first, then
every float initializer of more than one element (the model's weights; or
those named by `parameters`) as a parameter argument, so that `autodiff`
gives the gradient of each weight; other initializers (shapes, axes,
indices, the one-element constants exporters emit, Resize's scales) are constants. Whatever can be computed at import
time is: `Shape` of a static shape, and arithmetic, `Gather`, `Concat`, `Slice`, `Unsqueeze`, `Cast`, ... on
constants (numpy; any other operator by ONNX's reference, `onnx_reference_fold`), so the shape computations
exporters emit fold away. Shapes must be static (a dynamic dimension takes its size from an example).

A node's attributes not given take their defaults from ONNX's schema for the
model's opset (`schema_defaults`). Every axis goes through `normalize_axis`
(negative counts from the end; out of range is an error naming the node);
negative `Gather` indices count from the end, also when they are only known at run time.

`from_onnx(model)` returns an `OnnxFunction`: calling it with the graph inputs
runs the compiled function with the model's own weights.

Unsigned integers are the signless integers of their bits, the importer
tracking which values are unsigned (`onnx_unsigned`).

An operator or attribute outside what is covered is a `CompileError` naming
the node (`model.onnx: node 'Conv_3' (Conv): ...`). Covered: the elementwise
ops an nn op names as its ONNX op (`EXTERNAL`: Abs, Add, Ceil, Cos, Div, Exp,
Floor, Log, Mul, Neg, Relu, Round, Sigmoid, Sign, Sin, Sqrt, Sub, Tan, Tanh),
the `op_<Type>` methods here and in the mixins by family (`onnx_shape_ops`:
shapes and indexing; `onnx_nn_ops`: contractions, convolutions, pooling,
reductions, normalizations, losses; `onnx_math_ops`: activations and other
elementwise functions; `onnx_attention_ops`: Attention, RotaryEmbedding;
`onnx_image_ops`: CenterCropPad, Col2Im; `onnx_sample_ops`: GridSample,
AffineGrid, DeformConv; `onnx_roi_ops`: RoiAlign; `onnx_spectral_ops`: DFT, STFT, the windows;
`onnx_linalg_ops`: Det; `onnx_random_ops`: the random operators and Dropout; `onnx_control_flow`:
If, Loop, Scan (`onnx_loop_while`: Loops of run-time length);
`onnx_sequence_models`: LinearAttention, CausalConvWithState, FlexAttention
(`ai.onnx.preview`); `onnx_text_ops`: TfIdfVectorizer; `onnx_ml_ops`: Binarizer, ArrayFeatureExtractor,
TreeEnsemble (`ai.onnx.ml`); `onnx_training_ops`:
Adagrad, Adam, Momentum (`ai.onnx.preview.training`; `onnx_gradient`: Gradient); `onnx_sequences`:
sequences and optionals; `onnx_recurrent`: RNN, GRU, LSTM; `onnx_unsigned`:
BitShift and the unsigned forms; `onnx_narrow_types`: the narrow float and
integer formats, BitCast; `onnx_quantize`: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear), and the operators `fold` computes.
docs/importers.md has the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache, reduce
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i1,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import df_builders as dfb
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects.diagnostics import CompileError
from dfc.errors import require_extra, user_errors
from dfc.function import Function
from dfc.importers.narrow_formats import cast_array, is_narrow
from dfc.importers.onnx_attention_ops import AttentionOps
from dfc.importers.onnx_common import (
    NodeError,
    element_type,
    normalize_axes,
    normalize_axis,
    range_values,
    squeezed_shape,
    tensor_of,
    unsqueezed_shape,
)
from dfc.importers.onnx_control_flow import ControlFlowOps
from dfc.importers.onnx_gradient import GradientOps
from dfc.importers.onnx_image_ops import ImageOps
from dfc.importers.onnx_linalg_ops import LinalgOps
from dfc.importers.onnx_loop_while import WhileLoopOps
from dfc.importers.onnx_math_ops import MathOps
from dfc.importers.onnx_ml_ops import ML_OPS, MLOps
from dfc.importers.onnx_narrow_types import NarrowOps
from dfc.importers.onnx_nn_ops import NNOps
from dfc.importers.onnx_quantize import QuantizeOps
from dfc.importers.onnx_random_ops import RandomOps, new_key
from dfc.importers.onnx_recurrent import RecurrentOps
from dfc.importers.onnx_reference_fold import reference_fold
from dfc.importers.onnx_roi_ops import RoiOps
from dfc.importers.onnx_sample_ops import SampleOps
from dfc.importers.onnx_sequence_models import PREVIEW_OPS, SequenceModelOps
from dfc.importers.onnx_sequences import (
    SEQUENCE_OPS,
    SequenceOps,
    assemble,
    describe,
    input_structure,
    is_structured,
    layout,
    leaves,
    regroup,
)
from dfc.importers.onnx_shape_ops import ShapeOps
from dfc.importers.onnx_spectral_ops import SpectralOps
from dfc.importers.onnx_text_ops import TextOps
from dfc.importers.onnx_training_ops import TRAINING_OPS, TrainingOps
from dfc.importers.onnx_unsigned import SIGN_AGNOSTIC, UNSIGNED_AWARE, UnsignedOps, signless, with_onnx_dtype

_OTHER_DOMAINS = {("ai.onnx.preview", op) for op in PREVIEW_OPS} | {
    ("ai.onnx.preview.training", op) for op in TRAINING_OPS} | {("ai.onnx.ml", op) for op in ML_OPS}
"""(domain, operator) of the operators handled outside the default domain."""

_UNARY = nn.one_to_one("onnx", 1)

_BINARY = nn.one_to_one("onnx", 2)
"""The elementwise ops translated by name, from the nn ops' `EXTERNAL` declarations (an `op_<Type>` method
of the importer takes precedence)."""

_VARIADIC = {"Max": nne.MaximumOp, "Min": nne.MinimumOp}

_SETTING_INPUTS = {"Resize": (1, 2, 3)}
"""Float inputs that set a shape (Resize's roi, scales and sizes): an initializer used only there is a constant."""

_LOGICAL = {"And": nne.AndOp, "Or": nne.OrOp, "Xor": nne.XorOp, "BitwiseAnd": nne.AndOp, "BitwiseOr": nne.OrOp,
            "BitwiseXor": nne.XorOp}
"""Logical ops of booleans and the bitwise ones of integers: one nn op each (bitwise on integers, logical on i1)."""

_COMPARE = {"Equal": "EQ", "Less": "LT", "Greater": "GT", "LessOrEqual": "LE", "GreaterOrEqual": "GE"}

_NUMPY_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal, "Less": np.less,
    "Greater": np.greater, "Max": np.maximum, "Min": np.minimum,
}


def _onnx_dtype(value_info: Any) -> np.dtype:
    """The numpy dtype of a value info of the graph (its declared ONNX element type; of a sequence or
    optional, its tensors')."""
    from onnx import helper

    t = value_info.type
    while not t.HasField("tensor_type") and t.WhichOneof("value") in ("sequence_type", "optional_type"):
        t = getattr(t, t.WhichOneof("value")).elem_type
    return np.dtype(helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type))


def _name_hint(name: str) -> str | None:
    """An ONNX value name as an SSA name (`l1.weight` -> `l1_weight`)."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else None


@cache
def schema_defaults(op_type: str, opset: int, domain: str = "") -> dict[str, Any]:
    """The default value of each attribute of `op_type` (as of `opset`, in `domain`) that has one, from ONNX's
    schema."""
    from onnx import defs, helper

    try:
        schema = defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        return {}
    return {name: _attribute_value(helper.get_attribute_value(a.default_value))
            for name, a in schema.attributes.items() if a.default_value.type}


def _attribute_value(value: Any) -> Any:
    """An attribute value with strings as `str` (ONNX gives bytes)."""
    return value.decode() if isinstance(value, bytes) else value


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (ONNX's, C's), in integers."""
    q = np.floor_divide(a, b)
    return q + ((np.remainder(a, b) != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)


class OnnxImporter(ShapeOps, NNOps, MathOps, AttentionOps, ImageOps, ControlFlowOps, RecurrentOps, UnsignedOps,
                   NarrowOps, QuantizeOps, SequenceOps, WhileLoopOps, SequenceModelOps, SampleOps,
                   SpectralOps, TextOps, TrainingOps, LinalgOps, MLOps, RoiOps, RandomOps, GradientOps):
    """Builds `@main` node by node; `consts` holds the values known at import time, `values` the SSA values
    and the sequences and optionals (`onnx_sequences`)."""

    def __init__(self, model: Any, filename: str, parameters: Sequence[str] | None = None,
                 examples: dict[str, Any] | None = None):
        from onnx import numpy_helper

        self.model = model
        self.filename = filename
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self.consts: dict[str, np.ndarray] = {}
        self.values: dict[str, Any] = {}
        self.parameters: list[tuple[str, np.ndarray]] = []
        self.unsigned: set[str] = set()
        self.unsigned_inputs: set[int] = set()
        self.unsigned_outputs: set[int] | None = None
        self.formats: dict[str, str] = {}
        initializers = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        chosen = set(parameters or ())
        if unknown := chosen - set(initializers):
            raise CompileError(f"{filename}: no initializer named {sorted(unknown)[0]!r} to make a parameter")
        graph_inputs = [i for i in self.graph.input if i.name not in initializers]
        nodes = self.graph.node
        settings = {n.input[k] for n in nodes for k in _SETTING_INPUTS.get(n.op_type, ()) if k < len(n.input)}
        uses = {i for n in nodes for k, i in enumerate(n.input) if k not in _SETTING_INPUTS.get(n.op_type, ())}
        for name, value in initializers.items():
            weight = value.dtype.kind == "f" and value.size > 1 and (name in uses or name not in settings)
            if name in chosen if parameters is not None else weight:
                self.parameters.append((name, value))
            else:
                self.consts[name] = value
        structures = [self._input_structure(i, examples or {}) for i in graph_inputs]
        arg_types = [t for s in structures for t in leaves(s)]
        arg_types += [TensorType(element_type(v.dtype), v.shape) for _, v in self.parameters]
        self.block = Block(arg_types=arg_types)
        args = iter(self.block.args)
        for info, structure in zip(graph_inputs, structures):
            self.values[info.name] = assemble(structure, args)
            for arg in leaves(self.values[info.name]):
                arg.name_hint = _name_hint(info.name)
        for (name, _), arg in zip(self.parameters, args):
            self.values[name] = arg
            arg.name_hint = _name_hint(name)
        self.input_layout = [layout(self.values[i.name]) for i in graph_inputs]
        self.output_layout: list[Any] = []
        self.input_names = [i.name for i in graph_inputs]
        self.unsigned |= {i.name for i in graph_inputs if _onnx_dtype(i).kind == "u"}
        self.formats |= {i.name: _onnx_dtype(i).name for i in graph_inputs if is_narrow(_onnx_dtype(i))}
        self.b = Builder(InsertPoint.at_end(self.block))

    def _input_structure(self, value_info: Any, examples: dict[str, Any]) -> Any:
        """A graph input's `TensorType`, or its structure of them (a sequence or optional), from its example in
        `examples` where it has one (which a sequence, an optional and a tensor of dynamic dimensions need)."""
        if value_info.type.HasField("tensor_type") and value_info.name not in examples:
            return self._input_type(value_info)
        if value_info.name not in examples:
            kind = value_info.type.WhichOneof("value") or "undefined"
            raise CompileError(f"ONNX input '{value_info.name}' is of {kind}; dfc takes tensors, and sequences "
                               "and optionals given an example (`examples`)", self.filename)
        try:
            return input_structure(value_info, examples[value_info.name], "ONNX input")
        except NodeError as err:
            raise CompileError(str(err), self.filename) from None

    def _input_type(self, value_info: Any) -> TensorType:
        from onnx import helper

        if not value_info.type.HasField("tensor_type"):
            kind = value_info.type.WhichOneof("value") or "undefined"
            raise CompileError(f"ONNX input '{value_info.name}' is of {kind}; dfc takes tensors", self.filename)
        t = value_info.type.tensor_type
        dims = []
        for d in t.shape.dim:
            if not d.HasField("dim_value"):
                raise CompileError(f"ONNX input '{value_info.name}' has a dynamic dimension "
                                   f"'{d.dim_param or '?'}'; dfc needs static shapes (give an example: "
                                   "`examples`)", self.filename)
            dims.append(d.dim_value)
        try:
            return TensorType(element_type(helper.tensor_dtype_to_np_dtype(t.elem_type)), dims)
        except NodeError as err:
            raise CompileError(f"ONNX input '{value_info.name}': {err}", self.filename) from None

    # ------------------------------------------------------------ values

    def ins(self, op: Any) -> SSAValue:
        self.b.insert(op)
        return op.results[0]

    def value(self, name: str) -> SSAValue:
        """The SSA value of `name`, materialising a known constant on first use."""
        if name not in self.values:
            if name not in self.consts:
                raise NodeError(f"input '{name}' is not defined")
            self.values[name] = self.constant(self.consts[name])
            if self.consts[name].dtype.kind == "u":
                self.unsigned.add(name)
        if is_structured(self.values[name]):
            raise NodeError(f"input '{name}' is {describe(self.values[name])}, not a tensor")
        return self.values[name]

    def constant(self, array: np.ndarray) -> SSAValue:
        e = element_type(array.dtype)
        array = signless(array)
        flat = array.reshape(-1)
        if flat.size and (flat == flat[0]).all() and e != i1:
            attr = FloatAttr(float(flat[0]), e) if isinstance(e, AnyFloat) else IntegerAttr(int(flat[0]), e)
            return self.ins(nn.FullOp(attr, array.shape))  # type: ignore[arg-type]
        values = [bool(v) for v in flat] if e == i1 else flat.astype(np.float64).tolist() if isinstance(
            e, AnyFloat) else flat.tolist()
        dense = DenseIntOrFPElementsAttr.from_list(TensorType(e, array.shape), values)  # type: ignore[arg-type]
        return self.ins(nn.ConstantOp(dense))

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        return self.ins(nn.FullOp(FloatAttr(value, tensor_of(like).element_type), []))  # type: ignore[arg-type]

    def known(self, name: str) -> np.ndarray:
        if name not in self.consts:
            raise NodeError(f"input '{name}' must be a constant (it sets a shape, axis or index)")
        return self.consts[name]

    # ------------------------------------------------------------ driver

    def run(self) -> ModuleOp:
        for index, node in enumerate(self.graph.node):
            where = f"{self.filename}: node '{node.name or index}' ({node.op_type})"
            try:
                self.import_node(node)
            except NodeError as err:
                raise CompileError(f"{where}: {err}") from None
            except VerifyException as err:  # an nn op refusing its operands (types, shapes)
                raise CompileError(f"{where}: not supported for these operands: {err}") from None
        try:
            outputs = [self.item(o.name) for o in self.graph.output]
        except NodeError as err:
            raise CompileError(f"{self.filename}: graph output: {err}") from None
        self.output_layout = [layout(v) for v in outputs]
        results = [self.constant(v) if isinstance(v, np.ndarray) else v for v in leaves(outputs)]
        self.b.insert(func.ReturnOp(*results))
        f = func.FuncOp("main", (list(self.block.arg_types), [r.type for r in results]), Region(self.block))
        return ModuleOp([f])

    def import_node(self, node: Any) -> None:
        """One node: its outputs computed with numpy (`fold`) or built by its handler at `self.b`."""
        from onnx import helper

        given = {a.name: _attribute_value(helper.get_attribute_value(a)) for a in node.attribute}
        domain = "" if node.domain == "ai.onnx" else node.domain
        attrs = {**schema_defaults(node.op_type, self.opset, domain), **given}
        if domain and (domain, node.op_type) not in _OTHER_DOMAINS:
            raise NodeError(f"operator domain '{node.domain}' is not supported")
        if node.op_type in SEQUENCE_OPS or node.op_type == "Identity" and is_structured(
                self.values.get(node.input[0])):
            self.import_structured(node, attrs)
            return
        folded = self.fold(node, attrs)
        if folded is not None:
            for name, v in zip(node.output, folded):
                self.consts[name] = v
            return
        handler = self.handler(node.op_type)
        if handler is None:
            raise NodeError("operator is not supported")
        self.unsigned_inputs = {k for k, n in enumerate(node.input) if self.is_unsigned(n)}
        self.unsigned_outputs = None
        if self.unsigned_inputs and node.op_type not in SIGN_AGNOSTIC | UNSIGNED_AWARE:
            raise NodeError(f"{node.op_type} of unsigned integers is not supported")
        self.check_narrow_inputs(node)
        outputs = handler(node, attrs)
        self._record(node, outputs)
        self.record_narrow(node, outputs)

    def _record(self, node: Any, outputs: Sequence[SSAValue]) -> None:
        """The node's outputs as the values of its output names, those the handler says (`unsigned_outputs`)
        or, by default, those of an unsigned input's integer type unsigned."""
        unsigned_types = {tensor_of(self.value(node.input[k])).element_type for k in self.unsigned_inputs}
        for k, (name, v) in enumerate(zip(node.output, outputs)):
            if not name:
                continue
            self.values[name] = v
            if is_structured(v):
                continue
            e = tensor_of(v).element_type
            if (k in self.unsigned_outputs if self.unsigned_outputs is not None
                    else e in unsigned_types and e != i1 and not isinstance(e, AnyFloat)):
                self.unsigned.add(name)

    # ------------------------------------------------------------ constant folding (numpy)

    def fold(self, node: Any, attrs: dict[str, Any]) -> list[np.ndarray] | None:
        """The node's outputs computed with numpy when its inputs are known (None otherwise)."""
        op = node.op_type
        if op == "Constant":
            return [self._constant_attr(attrs)]
        if op == "Shape":
            name = node.input[0]
            shape = np.array(self.consts[name].shape if name in self.consts else tensor_of(self.value(name)).get_shape(),
                             np.int64)
            return [shape[attrs.get("start", 0): attrs.get("end", len(shape))]]
        if op == "Size":
            name = node.input[0]
            shape = self.consts[name].shape if name in self.consts else tensor_of(self.value(name)).get_shape()
            return [np.array(math.prod(shape), np.int64)]
        inputs = [n for n in node.input if n]
        if not inputs or not all(n in self.consts for n in inputs):
            return None
        c = [self.consts[n] if n else None for n in node.input]
        if op in _NUMPY_BINARY:
            with np.errstate(all="ignore"):
                return [np.asarray(reduce(_NUMPY_BINARY[op], [self.consts[n] for n in inputs]))]
        if op == "Div":
            with np.errstate(all="ignore"):
                return [np.asarray(_trunc_div(c[0], c[1]) if c[0].dtype.kind in "iu" else c[0] / c[1])]
        if op == "Identity":
            return [c[0]]
        if op == "Dropout":
            return self.folded_dropout(node, attrs, c[0])
        if op == "Cast":
            from onnx import helper

            return [cast_array(c[0], helper.tensor_dtype_to_np_dtype(attrs["to"]), attrs.get("saturate", 1),
                               attrs.get("round_mode", "up"))]
        if op == "CastLike":
            return [cast_array(c[0], c[1].dtype, attrs.get("saturate", 1))]
        if op == "Gather":
            axis = normalize_axis(attrs["axis"], c[0].ndim)
            return [np.take(c[0], self._wrapped_indices(c[1], c[0].shape[axis]), axis=axis)]
        if op == "Concat":
            values = [x for x in c if x is not None]
            self._check_concat_axis(attrs)
            return [np.concatenate(values, axis=normalize_axis(attrs["axis"], values[0].ndim))]
        if op == "Unsqueeze":
            return [c[0].reshape(unsqueezed_shape(c[0].shape, self._axes(node, attrs)))]
        if op == "Squeeze":
            return [c[0].reshape(squeezed_shape(c[0].shape, self._axes(node, attrs)))]
        if op == "Reshape":
            return [c[0].reshape(self._reshape_target(c[0].shape, c[1], attrs.get("allowzero")))]
        if op == "Slice":
            return [c[0][self._slices(c[0].shape, node, attrs)]]
        if op == "ConstantOfShape":
            value = attrs.get("value")
            fill = np.zeros(1, np.float32) if value is None else self._tensor_attr(value)
            return [np.full(tuple(c[0].tolist()), fill.reshape(-1)[0], dtype=fill.dtype)]
        if op == "Range":
            return [range_values(*c)]
        if op == "Where":
            return [np.where(c[0], c[1], c[2])]
        if op == "Neg":
            return [-c[0]]
        if op == "Not":
            return [np.asarray(np.logical_not(c[0]))]
        if op == "Transpose":
            return [np.transpose(c[0], attrs.get("perm"))]
        if op == "Expand":
            shape = np.broadcast_shapes(c[0].shape, tuple(c[1].tolist()))
            return [np.broadcast_to(c[0], shape).copy()]
        return reference_fold(node, c, self.opset)

    def _axes(self, node: Any, attrs: dict[str, Any]) -> list[int] | None:
        """The axes of a Squeeze/Unsqueeze/Reduce node: the attribute (before opset 13/18), the
        second input (known at import time), or None when neither is given."""
        if "axes" in attrs:
            return list(attrs["axes"])
        if len(node.input) > 1 and node.input[1]:
            return [int(a) for a in self.known(node.input[1]).reshape(-1)]
        return None

    @staticmethod
    def _wrapped_indices(indices: np.ndarray, size: int) -> np.ndarray:
        """Gather indices known at import time, negative ones counted from the end; outside [-size, size) is a NodeError."""
        if indices.size and (indices.min() < -size or indices.max() >= size):
            raise NodeError(f"Gather index {int(indices.min() if indices.min() < -size else indices.max())} "
                            f"is out of range for a dimension of {size}")
        return np.where(indices < 0, indices + size, indices).astype(np.int64)

    def _tensor_attr(self, value: Any) -> np.ndarray:
        from onnx import numpy_helper

        return numpy_helper.to_array(value)

    def _constant_attr(self, attrs: dict[str, Any]) -> np.ndarray:
        if "value" in attrs:
            return self._tensor_attr(attrs["value"])
        for key, dtype in (("value_float", np.float32), ("value_int", np.int64)):
            if key in attrs:
                return np.array(attrs[key], dtype)
        for key, dtype in (("value_floats", np.float32), ("value_ints", np.int64)):
            if key in attrs:
                return np.array(list(attrs[key]), dtype)
        raise NodeError(f"Constant with attributes {sorted(attrs)} is not supported")

    @staticmethod
    def _reshape_target(shape: Sequence[int], target: np.ndarray, allowzero: int = 0) -> list[int]:
        """Reshape's output shape: a 0 copies the input's dimension (unless `allowzero`), one -1 takes the rest."""
        out = [shape[k] if d == 0 and not allowzero else int(d) for k, d in enumerate(target.tolist())]
        if out.count(-1) > 1 or any(d < -1 for d in out):
            raise NodeError(f"Reshape to {target.tolist()}: at most one -1 and no other negative size")
        if -1 in out:
            known = math.prod(d for d in out if d != -1)
            if not known or math.prod(shape) % known:
                raise NodeError(f"Reshape of {list(shape)} to {target.tolist()}: no size fits the -1")
            out[out.index(-1)] = math.prod(shape) // known
        if math.prod(out) != math.prod(shape):
            raise NodeError(f"Reshape of {list(shape)} to {target.tolist()}: the sizes differ")
        return out

    def _slices(self, shape: Sequence[int], node: Any, attrs: dict[str, Any]) -> tuple[slice, ...]:
        if "starts" in attrs:
            starts, ends = list(attrs["starts"]), list(attrs["ends"])
            axes = list(attrs["axes"]) if "axes" in attrs else list(range(len(starts)))
            steps = [1] * len(starts)
        else:
            n = node.input
            starts, ends = self.known(n[1]).tolist(), self.known(n[2]).tolist()
            axes = self.known(n[3]).tolist() if len(n) > 3 and n[3] else list(range(len(starts)))
            steps = self.known(n[4]).tolist() if len(n) > 4 and n[4] else [1] * len(starts)
        if not len(starts) == len(ends) == len(axes) == len(steps) or 0 in steps:
            raise NodeError("Slice needs starts, ends, axes and steps of one length and no step of 0")
        index = [slice(None)] * len(shape)
        for a, s, e, st in zip(normalize_axes(axes, len(shape)), starts, ends, steps):
            index[a] = slice(s, e, st)
        return tuple(index)

    # ------------------------------------------------------------ elementwise

    def handler(self, op_type: str) -> Callable[[Any, dict[str, Any]], list[SSAValue]] | None:
        """The method that translates `op_type`: `op_<op_type>`, else the one-to-one elementwise translation."""
        explicit = getattr(self, f"op_{op_type}", None)
        if explicit is not None:
            return explicit
        return self._unary if op_type in _UNARY else self._binary if op_type in _BINARY else None

    def _binary(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = (self.value(n) for n in node.input)
        return [self.ins(_BINARY[node.op_type](a, b))]

    def op_Max(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        values = [self.value(n) for n in node.input]
        out = values[0]
        for v in values[1:]:
            if self.unsigned_inputs:
                out = self.unsigned_extreme(out, v, node.op_type == "Max")
            else:
                out = self.ins(_VARIADIC[node.op_type](out, v))
        return [out]

    def op_Div(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """IEEE division of floats; integers round toward zero; unsigned integers divide their values."""
        a, b = (self.value(n) for n in node.input)
        return [self.unsigned_divide(a, b) if self.unsigned_inputs else self.ins(nn.DivOp(a, b))]

    op_Min = op_Max

    def _unary(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.ins(_UNARY[node.op_type](self.value(node.input[0])))]

    def _erf(self, x: SSAValue) -> SSAValue:
        return dfb.elementwise(self.b, tensor_of(x), [x], lambda t, a: t.b.insert(xmath.ErfOp(a[0])).result)

    def op_Erf(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self._erf(self.value(node.input[0]))]

    def _compare(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = (self.value(n) for n in node.input)
        if self.unsigned_inputs:
            return [self.unsigned_compare(a, b, _COMPARE[node.op_type])]
        return [self.ins(nne.CompareOp(a, b, _COMPARE[node.op_type]))]

    op_Equal = op_Less = op_Greater = op_LessOrEqual = op_GreaterOrEqual = _compare

    def op_Where(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.ins(nne.SelectOp(*(self.value(n) for n in node.input)))]

    def op_Clip(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """min(max(x, min), max), a bound not given left out (inputs, or attributes before opset 11)."""
        x = self.value(node.input[0])
        e = tensor_of(x).element_type
        for k, (key, op) in enumerate((("min", nne.MaximumOp), ("max", nne.MinimumOp)), start=1):
            if len(node.input) > k and node.input[k] and self.unsigned_inputs:
                x = self.unsigned_extreme(x, self.value(node.input[k]), key == "min")
            elif len(node.input) > k and node.input[k]:
                x = self.ins(op(x, self.value(node.input[k])))
            elif key in attrs:
                x = self.ins(op(x, self.ins(nn.FullOp(FloatAttr(attrs[key], e), []))))  # type: ignore[arg-type]
        return [x]

    def _logical(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = (self.value(n) for n in node.input)
        return [self.ins(_LOGICAL[node.op_type](a, b))]

    op_And = op_Or = op_Xor = op_BitwiseAnd = op_BitwiseOr = op_BitwiseXor = _logical

    def op_Not(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.ins(nne.NotOp(self.value(node.input[0])))]

    op_BitwiseNot = op_Not

    def op_IsNaN(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self.ins(nne.CompareOp(x, x, "NE"))]

    def op_IsInf(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x == +inf (with `detect_positive`) or x == -inf (with `detect_negative`)."""
        x = self.value(node.input[0])
        found = []
        for key, value in (("detect_positive", math.inf), ("detect_negative", -math.inf)):
            if attrs[key]:
                found.append(self.ins(nne.CompareOp(x, self.scalar(value, x), "EQ")))
        if not found:
            return [self.constant(np.zeros(tensor_of(x).get_shape(), bool))]
        return [found[0] if len(found) == 1 else self.ins(nne.OrOp(*found))]

    def op_Cast(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Conversion to `to`; from or to unsigned integers by their values (`UnsignedOps.cast`)."""
        from onnx import helper

        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))
        return self._cast(node, attrs, element_type(dtype), dtype.kind == "u", dtype.name if is_narrow(dtype) else None)

    def op_CastLike(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Cast to the element type of the second input."""
        like = node.input[1]
        return self._cast(node, attrs, tensor_of(self.value(like)).element_type, self.is_unsigned(like),
                          self.format_of(like))

    def _cast(self, node: Any, attrs: dict[str, Any], e: Any, unsigned: bool, target: str | None) -> list[SSAValue]:
        """`node`'s input cast to `e` (the bits of an unsigned type if `unsigned`), or to the codes of the
        narrow format `target` (`saturate`), from the codes of its narrow format if it has one."""
        self.unsigned_outputs = {0} if unsigned else set()
        x, source = self.value(node.input[0]), self.format_of(node.input[0])
        if source is None and target is None:
            return [self.cast(x, 0 in self.unsigned_inputs, e, unsigned)]
        if target is not None:
            self.formats[node.output[0]] = target
        return [self.narrow_cast(x, source, 0 in self.unsigned_inputs, e, unsigned, target, attrs.get("saturate", 1),
                                 attrs.get("round_mode", "up"))]

    def op_Identity(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.value(node.input[0])]

    def op_Dropout(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self.dropout(node, attrs)

    # ------------------------------------------------------------ shapes


    # ------------------------------------------------------------ contractions


    # ------------------------------------------------------------ pooling and reductions


    # ------------------------------------------------------------ normalisation


def _load(model: Any) -> tuple[Any, str]:
    onnx = require_extra("onnx", "onnx", "importing ONNX models")
    if isinstance(model, onnx.ModelProto):
        return model, model.graph.name or "<onnx>"
    return onnx.load(str(model)), str(model)


def _imported(model: Any, parameters: Sequence[str] | None, examples: dict[str, Any] | None
              ) -> tuple[OnnxImporter, ModuleOp]:
    proto, filename = _load(model)
    importer = OnnxImporter(proto, filename, parameters, examples)
    return importer, importer.run()


@user_errors
def import_onnx(model: Any, parameters: Sequence[str] | None = None, examples: dict[str, Any] | None = None
                ) -> tuple[ModuleOp, list[str], list[tuple[str, np.ndarray]]]:
    """(`@main`'s module, the graph input names, the (name, value) parameters that
    follow them as arguments) of an ONNX model or `.onnx` path. A graph input that is a
    sequence or an optional needs an example in `examples` (`onnx_sequences`); its tensors
    are arguments in its place, and a sequence or optional output gives its tensors. A random
    node without a seed adds a last argument, the key (`onnx_random_ops`)."""
    importer, module = _imported(model, parameters, examples)
    return module, importer.input_names, importer.parameters


class OnnxFunction(Function):
    """An imported ONNX model, a `dfc.Function` of `@main(inputs..., parameters...)`.

    Calling it with the graph inputs (converted to the model's dtypes) runs the
    model with its own weights; `dfc.grad`/`dfc.value_and_grad` take every
    argument, weights included (`*f.parameter_values()`), so that gradients
    of the weights are available. Unsigned integers cross as the signed
    integers of their bits (`signless`); calling the model views its unsigned
    outputs back (`output_dtypes`, the model's declared ones). A sequence is passed and
    returned as a list of arrays, an optional as its value or None (`output_layout`). A model
    with a random node without a seed (`takes_key`) takes a key last, drawn per call when not given
    (`onnx_random_ops.new_key`)."""

    def __init__(self, module: ModuleOp, inputs: list[str], parameters: list[tuple[str, np.ndarray]],
                 output_dtypes: Sequence[np.dtype] = (), input_layout: Sequence[Any] = (),
                 output_layout: Sequence[Any] = (), takes_key: bool = False):
        super().__init__(module, "main")
        self.takes_key = takes_key
        self.input_names = inputs
        self.parameters = parameters
        self.output_dtypes = list(output_dtypes)
        self.input_layout = list(input_layout) or [0] * len(inputs)
        self.output_layout = list(output_layout)

    def parameter_values(self) -> list[np.ndarray]:
        return [v for _, v in self.parameters]

    def __call__(self, *args: Any) -> Any:
        """The model on its graph inputs (its own weights appended), or on every argument."""
        if len(args) == len(self.input_names):
            args = (*(x for a, t in zip(args, self.input_layout) for x in (leaves([a]) if t != 0 else [a])),
                    *self.parameter_values())
        if self.takes_key and len(args) == len(self.inputs) - 1:
            args = (*args, new_key())
        if len(args) != len(self.inputs):
            raise TypeError(f"the model takes {len(self.input_names)} inputs ({', '.join(self.input_names)}), "
                            f"or those and its {len(self.parameters)} parameters; got {len(args)} arguments")
        result = super().__call__(*(np.asarray(signless(x), dtype_of(t.element_type))
                                    for x, t in zip(args, self.inputs)))
        flat = iter(result if isinstance(result, tuple) else (result,))
        if not self.output_layout or all(t == 0 for t in self.output_layout):
            if not self.output_dtypes:
                return result
            outputs = [with_onnx_dtype(r, d) for r, d in zip(flat, self.output_dtypes)]
            return tuple(outputs) if isinstance(result, tuple) else outputs[0]
        outputs = [regroup(t, flat) for t in self.output_layout]
        return tuple(outputs) if len(outputs) > 1 else outputs[0]


def output_dtypes(model: Any) -> list[np.dtype]:
    """The numpy dtypes the graph of an ONNX model (`ModelProto` or path) declares for its outputs."""
    proto, _ = _load(model)
    return [_onnx_dtype(o) for o in proto.graph.output]


@user_errors
def from_onnx(model: Any, parameters: Sequence[str] | None = None, examples: dict[str, Any] | None = None
              ) -> OnnxFunction:
    """An ONNX model (`ModelProto` or path) imported and ready to call;
    `parameters` names the initializers that become arguments (default: every
    float initializer of more than one element); `examples` gives the sequence
    and optional graph inputs (`import_onnx`)."""
    proto, _ = _load(model)
    importer, module = _imported(proto, parameters, examples)
    return OnnxFunction(module, importer.input_names, importer.parameters,
                        output_dtypes=output_dtypes(proto), input_layout=importer.input_layout,
                        output_layout=importer.output_layout, takes_key=importer.key is not None)
