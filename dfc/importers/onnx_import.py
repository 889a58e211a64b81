"""Importing ONNX models (the `onnx` package, extra `onnx`) into library-level IR.

`import_onnx(model)` reads a `ModelProto` (or a path to a `.onnx` file) and
builds one function, `@main(inputs..., parameters...) -> outputs...`, of nn
ops (and an elementwise df map for `Erf`). The graph inputs come first, then
every float initializer of more than one element (the model's weights; or
those named by `parameters`) as a parameter argument, so that `autodiff`
gives the gradient of each weight; other initializers (shapes, axes,
indices, the one-element constants exporters emit, Resize's scales) are constants. Whatever can be computed at import
time is: `Shape` of a static shape, and arithmetic, `Gather`, `Concat`,
`Slice`, `Unsqueeze`, `Cast`, ... on constants (numpy), so the shape
computations exporters emit fold away. Shapes must be static.

A node's attributes not given take their defaults from ONNX's schema for the
model's opset (`schema_defaults`). Every axis goes through `normalize_axis`
(negative counts from the end; out of range is an error naming the node);
negative `Gather` indices count from the end, also when they are only known
at run time.

`from_onnx(model)` returns an `OnnxFunction`: calling it with the graph inputs
runs the compiled function with the model's own weights.

An operator or attribute outside what is covered is a `CompileError` naming
the node (`model.onnx: node 'Conv_3' (Conv): ...`). Covered: the elementwise
ops an nn op names as its ONNX op (`EXTERNAL`: Abs, Add, Ceil, Cos, Div, Exp,
Floor, Log, Mul, Neg, Relu, Round, Sigmoid, Sign, Sin, Sqrt, Sub, Tan, Tanh),
and And, AveragePool, BatchNormalization (inference), Cast, Clip, Concat,
Constant, ConstantOfShape, Conv, CumSum, Dropout (inference), Einsum, Equal,
Erf, Expand, Flatten, Gather, GatherElements, GatherND, Gelu, Gemm,
GlobalAveragePool, Greater, GreaterOrEqual, GroupNormalization, Identity,
InstanceNormalization, IsInf, IsNaN, LayerNormalization, Less, LessOrEqual, LogSoftmax, MatMul, Max,
MaxPool, Min, Not, Or, Pad, Pow, Range, ReduceMax, ReduceMean, ReduceMin,
ReduceSum, Reshape, Resize, Shape, Slice, Softmax, Split, Squeeze, Tile,
TopK, Transpose, Unsqueeze, Where, Xor.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache, reduce
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import df_builders as dfb
from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_conv as nnconv
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.dialects import nn_shape as nns
from dfc.dialects import nn_window as nnw
from dfc.dialects.diagnostics import CompileError
from dfc.errors import require_extra, user_errors
from dfc.function import Function

_ELEMENT_TYPES: dict[str, Attribute] = {
    "float32": f32, "float64": f64, "float16": f16, "int64": i64, "int32": i32, "bool": i1,
}
_UNARY = nn.one_to_one("onnx", 1)
_BINARY = nn.one_to_one("onnx", 2)
"""The elementwise ops translated by name, from the nn ops' `EXTERNAL` declarations (an `op_<Type>` method
of the importer takes precedence)."""
_VARIADIC = {"Max": nne.MaximumOp, "Min": nne.MinimumOp}
_SETTING_INPUTS = {"Resize": (1, 2, 3)}
"""Float inputs that set a shape (Resize's roi, scales and sizes): an initializer used only there is a constant."""
_LOGICAL = {"And": nne.AndOp, "Or": nne.OrOp, "Xor": nne.XorOp}
_COMPARE = {"Equal": "EQ", "Less": "LT", "Greater": "GT", "LessOrEqual": "LE", "GreaterOrEqual": "GE"}
_NUMPY_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal, "Less": np.less,
    "Greater": np.greater, "Max": np.maximum, "Min": np.minimum,
}


def element_type(dtype: np.dtype) -> Attribute:
    name = np.dtype(dtype).name
    if name not in _ELEMENT_TYPES:
        raise NodeError(f"ONNX element type {name} is not supported")
    return _ELEMENT_TYPES[name]


def _name_hint(name: str) -> str | None:
    """An ONNX value name as an SSA name (`l1.weight` -> `l1_weight`)."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else None


def _tensor(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


class NodeError(Exception):
    """An unsupported node feature; becomes a `CompileError` naming the node."""


def normalize_axis(axis: int, rank: int, what: str = "axis", between: bool = False) -> int:
    """`axis` as a dimension index in [0, rank): a negative one counts from the
    end (`axis + rank`). `between` accepts [-rank, rank] (a position between
    dimensions, as Flatten's axis); otherwise [-rank, rank). Outside: NodeError."""
    if not -rank <= axis < rank + between:
        bound = rank if between else rank - 1
        raise NodeError(f"{what} {axis} is out of range [{-rank}, {bound}] for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> list[int]:
    """Every axis of `axes` normalised (`normalize_axis`); a repeated dimension is a NodeError."""
    out = [normalize_axis(int(a), rank, what) for a in axes]
    if len(set(out)) != len(out):
        raise NodeError(f"{what} {list(axes)} name a dimension twice")
    return out


def unsqueezed_shape(shape: Sequence[int], axes: Sequence[int] | None) -> list[int]:
    """Unsqueeze: `axes` index the result (rank + len(axes)) and get a size-1 dimension."""
    if axes is None:
        raise NodeError("Unsqueeze needs axes")
    out = list(shape)
    for a in sorted(normalize_axes(axes, len(shape) + len(axes))):
        out.insert(a, 1)
    return out


def squeezed_shape(shape: Sequence[int], axes: Sequence[int] | None) -> list[int]:
    """Squeeze: `shape` without `axes` (each of size 1), or without every size-1 dimension."""
    if axes is None:
        return [d for d in shape if d != 1]
    drop = set(normalize_axes(axes, len(shape)))
    if any(shape[a] != 1 for a in drop):
        raise NodeError(f"Squeeze of axes {list(axes)} of shape {list(shape)}: a squeezed dimension is not 1")
    return [d for k, d in enumerate(shape) if k not in drop]


def flattened_shape(shape: Sequence[int], axis: int) -> list[int]:
    """Flatten: [product of the dimensions before `axis`, product of the rest]; `axis` in [-rank, rank]."""
    axis = normalize_axis(axis, len(shape), between=True)
    return [math.prod(shape[:axis]), math.prod(shape[axis:])]


@cache
def schema_defaults(op_type: str, opset: int) -> dict[str, Any]:
    """The default value of each attribute of `op_type` (as of `opset`) that has one, from ONNX's schema."""
    from onnx import defs, helper

    try:
        schema = defs.get_schema(op_type, opset, "")
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


def _range(start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Range: start + k * delta for k < ceil((limit - start) / delta), in start's type."""
    return np.arange(start, limit, delta).astype(start.dtype)


def _resize_source(mode: str, size: int, out: int, scale: float) -> np.ndarray:
    """Resize's source coordinate of each of `out` output positions (float64, as ONNX's reference)."""
    y, width = np.arange(out, dtype=np.float64), scale * size
    if mode == "align_corners":
        return np.zeros(out) if width == 1 else y * (size - 1) / (width - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        return size / 2 * (1 - out / width) + (y + 0.5) / scale - 0.5
    raise NodeError(f"coordinate_transformation_mode '{mode}' is not supported")


class OnnxImporter:
    """Builds `@main` node by node; `consts` holds the values known at import time."""

    def __init__(self, model: Any, filename: str, parameters: Sequence[str] | None = None):
        from onnx import numpy_helper

        self.model = model
        self.filename = filename
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self.consts: dict[str, np.ndarray] = {}
        self.values: dict[str, SSAValue] = {}
        self.parameters: list[tuple[str, np.ndarray]] = []
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
        arg_types = [self._input_type(i) for i in graph_inputs]
        arg_types += [TensorType(element_type(v.dtype), v.shape) for _, v in self.parameters]
        self.block = Block(arg_types=arg_types)
        names = [i.name for i in graph_inputs] + [n for n, _ in self.parameters]
        for name, arg in zip(names, self.block.args):
            self.values[name] = arg
            arg.name_hint = _name_hint(name)
        self.input_names = [i.name for i in graph_inputs]
        self.b = Builder(InsertPoint.at_end(self.block))

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
                                   f"'{d.dim_param or '?'}'; dfc needs static shapes", self.filename)
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
        return self.values[name]

    def constant(self, array: np.ndarray) -> SSAValue:
        e = element_type(array.dtype)
        flat = array.reshape(-1)
        if flat.size and (flat == flat[0]).all() and e != i1:
            attr = FloatAttr(float(flat[0]), e) if array.dtype.kind == "f" else IntegerAttr(int(flat[0]), e)
            return self.ins(nn.FullOp(attr, array.shape))  # type: ignore[arg-type]
        values = [bool(v) for v in flat] if e == i1 else flat.tolist()
        dense = DenseIntOrFPElementsAttr.from_list(TensorType(e, array.shape), values)  # type: ignore[arg-type]
        return self.ins(nn.ConstantOp(dense))

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        return self.ins(nn.FullOp(FloatAttr(value, _tensor(like).element_type), []))  # type: ignore[arg-type]

    def known(self, name: str) -> np.ndarray:
        if name not in self.consts:
            raise NodeError(f"input '{name}' must be a constant (it sets a shape, axis or index)")
        return self.consts[name]

    # ------------------------------------------------------------ driver

    def run(self) -> ModuleOp:
        from onnx import helper

        for index, node in enumerate(self.graph.node):
            given = {a.name: _attribute_value(helper.get_attribute_value(a)) for a in node.attribute}
            attrs = {**schema_defaults(node.op_type, self.opset), **given}
            where = f"{self.filename}: node '{node.name or index}' ({node.op_type})"
            try:
                if node.domain not in ("", "ai.onnx"):
                    raise NodeError(f"operator domain '{node.domain}' is not supported")
                folded = self.fold(node, attrs)
                if folded is None:
                    handler = self.handler(node.op_type)
                    if handler is None:
                        raise NodeError("operator is not supported")
                    outputs = handler(node, attrs)
                    for name, v in zip(node.output, outputs):
                        if name:
                            self.values[name] = v
                else:
                    for name, v in zip(node.output, folded):
                        self.consts[name] = v
            except NodeError as err:
                raise CompileError(f"{where}: {err}") from None
            except VerifyException as err:  # an nn op refusing its operands (types, shapes)
                raise CompileError(f"{where}: not supported for these operands: {err}") from None
        try:
            results = [self.value(o.name) for o in self.graph.output]
        except NodeError as err:
            raise CompileError(f"{self.filename}: graph output: {err}") from None
        self.b.insert(func.ReturnOp(*results))
        f = func.FuncOp("main", (list(self.block.arg_types), [r.type for r in results]), Region(self.block))
        return ModuleOp([f])

    # ------------------------------------------------------------ constant folding (numpy)

    def fold(self, node: Any, attrs: dict[str, Any]) -> list[np.ndarray] | None:
        """The node's outputs computed with numpy when its inputs are known (None otherwise)."""
        op = node.op_type
        if op == "Constant":
            return [self._constant_attr(attrs)]
        if op == "Shape":
            name = node.input[0]
            shape = np.array(self.consts[name].shape if name in self.consts else _tensor(self.value(name)).get_shape(),
                             np.int64)
            return [shape[attrs.get("start", 0): attrs.get("end", len(shape))]]
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
            self._check_inference_dropout(node, attrs)
            return [c[0], np.ones(c[0].shape, bool)]
        if op == "Cast":
            from onnx import helper

            return [c[0].astype(helper.tensor_dtype_to_np_dtype(attrs["to"]))]
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
            return [_range(*c)]
        if op == "Where":
            return [np.where(c[0], c[1], c[2])]
        if op == "Neg":
            return [-c[0]]
        if op == "Transpose":
            return [np.transpose(c[0], attrs.get("perm"))]
        if op == "Expand":
            shape = np.broadcast_shapes(c[0].shape, tuple(c[1].tolist()))
            return [np.broadcast_to(c[0], shape).copy()]
        return None

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


    def op_Pow(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`x ** y` for a float `x`; an integer exponent is converted to `x`'s type first."""
        x, y = (self.value(n) for n in node.input)
        e = _tensor(x).element_type
        if e not in (f16, f32, f64):
            raise NodeError(f"Pow of {_tensor(x)} (an integer base) is not supported")
        if _tensor(y).element_type != e:
            y = self.ins(nne.ConvertOp(y, e))
        return [self.ins(nne.PowerOp(x, y))]

    def op_Max(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        values = [self.value(n) for n in node.input]
        out = values[0]
        for v in values[1:]:
            out = self.ins(_VARIADIC[node.op_type](out, v))
        return [out]

    op_Min = op_Max

    def _unary(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.ins(_UNARY[node.op_type](self.value(node.input[0])))]


    def _erf(self, x: SSAValue) -> SSAValue:
        return dfb.elementwise(self.b, _tensor(x), [x], lambda t, a: t.b.insert(xmath.ErfOp(a[0])).result)

    def op_Erf(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self._erf(self.value(node.input[0]))]

    def op_Gelu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        if attrs["approximate"] != "none":
            raise NodeError("Gelu with approximate='tanh' is not supported")
        inner = self._erf(self.ins(nn.MulOp(x, self.scalar(1 / math.sqrt(2), x))))
        one_plus = self.ins(nn.AddOp(inner, self.scalar(1.0, x)))
        return [self.ins(nn.MulOp(self.ins(nn.MulOp(x, one_plus)), self.scalar(0.5, x)))]

    def _compare(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = (self.value(n) for n in node.input)
        return [self.ins(nne.CompareOp(a, b, _COMPARE[node.op_type]))]

    op_Equal = op_Less = op_Greater = op_LessOrEqual = op_GreaterOrEqual = _compare

    def op_Where(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.ins(nne.SelectOp(*(self.value(n) for n in node.input)))]

    def op_Clip(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """min(max(x, min), max), a bound not given left out (inputs, or attributes before opset 11)."""
        x = self.value(node.input[0])
        e = _tensor(x).element_type
        for k, (key, op) in enumerate((("min", nne.MaximumOp), ("max", nne.MinimumOp)), start=1):
            if len(node.input) > k and node.input[k]:
                x = self.ins(op(x, self.value(node.input[k])))
            elif key in attrs:
                x = self.ins(op(x, self.ins(nn.FullOp(FloatAttr(attrs[key], e), []))))  # type: ignore[arg-type]
        return [x]

    def _logical(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = (self.value(n) for n in node.input)
        return [self.ins(_LOGICAL[node.op_type](a, b))]

    op_And = op_Or = op_Xor = _logical

    def op_Not(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.ins(nne.NotOp(self.value(node.input[0])))]

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
            return [self.constant(np.zeros(_tensor(x).get_shape(), bool))]
        return [found[0] if len(found) == 1 else self.ins(nne.OrOp(*found))]

    def op_Cast(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        from onnx import helper

        x = self.value(node.input[0])
        e = element_type(helper.tensor_dtype_to_np_dtype(attrs["to"]))
        return [x if _tensor(x).element_type == e else self.ins(nne.ConvertOp(x, e))]

    def op_Identity(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self.value(node.input[0])]

    def _check_inference_dropout(self, node: Any, attrs: dict[str, Any]) -> None:
        """Dropout is the identity unless in training mode (the `training_mode` input, or
        `is_test = 0` before opset 7) with a ratio above 0 (random: a NodeError)."""
        training = len(node.input) > 2 and node.input[2] and bool(self.known(node.input[2]))
        training = training or attrs.get("is_test") == 0
        ratio = float(self.known(node.input[1])) if len(node.input) > 1 and node.input[1] else attrs.get("ratio", 0.5)
        if training and ratio != 0.0:
            raise NodeError("Dropout in training mode is not supported")

    def op_Dropout(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The input, and a mask of ones (what is kept)."""
        self._check_inference_dropout(node, attrs)
        x = self.value(node.input[0])
        if len(node.output) < 2 or not node.output[1]:
            return [x]
        return [x, self.constant(np.ones(_tensor(x).get_shape(), bool))]

    # ------------------------------------------------------------ shapes

    def _reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return x if list(_tensor(x).get_shape()) == list(shape) else self.ins(nn.ReshapeOp(x, shape))

    def op_Reshape(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x, target = self.value(node.input[0]), self.known(node.input[1])
        return [self._reshape(x, self._reshape_target(_tensor(x).get_shape(), target, attrs.get("allowzero")))]

    def op_Flatten(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self._reshape(x, flattened_shape(_tensor(x).get_shape(), attrs["axis"]))]

    def op_Unsqueeze(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self._reshape(x, unsqueezed_shape(_tensor(x).get_shape(), self._axes(node, attrs)))]

    def op_Squeeze(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self._reshape(x, squeezed_shape(_tensor(x).get_shape(), self._axes(node, attrs)))]

    def op_Range(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Range's length is its inputs' values, so they must be known at import time."""
        return [self.constant(_range(*(self.known(n) for n in node.input)))]

    def op_Split(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Slices along `axis` of the sizes given (the `split` input or attribute), else `num_outputs`
        (or one per output) parts of ceil(d / n) elements, the last one smaller."""
        x = self.value(node.input[0])
        shape = _tensor(x).get_shape()
        axis = normalize_axis(attrs["axis"], len(shape))
        d = shape[axis]
        if len(node.input) > 1 and node.input[1]:
            sizes = [int(n) for n in self.known(node.input[1]).reshape(-1)]
        elif "split" in attrs:
            sizes = list(attrs["split"])
        else:
            n = attrs.get("num_outputs") or len(node.output)
            part = -(-d // n)
            sizes = [max(0, min(part, d - k * part)) for k in range(n)]
        if sum(sizes) != d or len(sizes) != len(node.output) or min(sizes) < 0:
            raise NodeError(f"Split of a dimension of {d} into {sizes} for {len(node.output)} outputs")
        outputs, start = [], 0
        for size in sizes:
            lo = [start if k == axis else 0 for k in range(len(shape))]
            hi = [start + size if k == axis else n for k, n in enumerate(shape)]
            outputs.append(self.ins(nns.SliceOp(x, lo, hi, [1] * len(shape))))
            start += size
        return outputs

    def op_Tile(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x repeated `repeats[k]` times along each dimension k: (1, d0, 1, d1, ...) broadcast to
        (r0, d0, r1, d1, ...), then merged."""
        x = self.value(node.input[0])
        shape = _tensor(x).get_shape()
        repeats = [int(r) for r in self.known(node.input[1]).reshape(-1)]
        if len(repeats) != len(shape) or min(repeats, default=0) < 0:
            raise NodeError(f"Tile of a rank-{len(shape)} tensor by repeats {repeats}")
        y = self._reshape(x, [n for d in shape for n in (1, d)])
        y = self.ins(nn.BroadcastOp(y, [n for r, d in zip(repeats, shape) for n in (r, d)]))
        return [self._reshape(y, [r * d for r, d in zip(repeats, shape)])]

    def op_Pad(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`pads` (begin values, then end values, of `axes` or every dimension) in `mode` constant (the
        `constant_value`, default 0), edge, reflect or wrap; negative pads crop."""
        x = self.value(node.input[0])
        shape = _tensor(x).get_shape()
        rank = len(shape)
        pads = [int(p) for p in (self.known(node.input[1]).reshape(-1) if len(node.input) > 1 else attrs["pads"])]
        axes = list(range(rank))
        if len(node.input) > 3 and node.input[3]:
            axes = normalize_axes(self.known(node.input[3]).reshape(-1).tolist(), rank)
        if len(pads) != 2 * len(axes):
            raise NodeError(f"Pad with {len(pads)} pads for {len(axes)} axes")
        low, high = [0] * rank, [0] * rank
        for k, a in enumerate(axes):
            low[a], high[a] = pads[k], pads[k + len(axes)]
        e = _tensor(x).element_type
        mode = attrs["mode"]
        if mode == "constant":
            if len(node.input) > 2 and node.input[2]:
                value = self._reshape(self.value(node.input[2]), [])
            elif "value" in attrs:
                value = self.constant(np.array(attrs["value"], dtype_of(e)))
            else:
                value = self.ins(nn.FullOp(FloatAttr(0.0, e) if e in (f16, f32, f64) else IntegerAttr(0, e), []))
            return [self.ins(nns.PadOp(x, value, low, high, [0] * rank))]
        if mode not in ("edge", "reflect", "wrap"):
            raise NodeError(f"Pad mode '{mode}' is not supported")
        for a in range(rank):
            x = self._pad_axis(x, a, low[a], high[a], mode)
        return [x]

    def _cut(self, x: SSAValue, axis: int, start: int, stop: int) -> SSAValue:
        shape = _tensor(x).get_shape()
        lo = [start if k == axis else 0 for k in range(len(shape))]
        hi = [stop if k == axis else n for k, n in enumerate(shape)]
        return self.ins(nns.SliceOp(x, lo, hi, [1] * len(shape)))

    def _pad_axis(self, x: SSAValue, axis: int, low: int, high: int, mode: str) -> SSAValue:
        """Pad (edge, reflect or wrap) along one axis, as a concatenation of slices of x."""
        d = _tensor(x).get_shape()[axis]
        x = self._cut(x, axis, max(-low, 0), d - max(-high, 0))
        d = _tensor(x).get_shape()[axis]
        low, high = max(low, 0), max(high, 0)
        if not low and not high:
            return x
        if mode == "reflect" and (low >= d or high >= d):
            raise NodeError(f"Pad mode 'reflect' of {max(low, high)} elements of a dimension of {d}")
        if mode == "wrap" and (low > d or high > d):
            raise NodeError(f"Pad mode 'wrap' of {max(low, high)} elements of a dimension of {d}")

        def edge(start: int, count: int) -> SSAValue:
            one = self._cut(x, axis, start, start + 1)
            shape = list(_tensor(one).get_shape())
            shape[axis] = count
            return self.ins(nn.BroadcastOp(one, shape))

        parts = {
            "edge": (lambda: edge(0, low), lambda: edge(d - 1, high)),
            "reflect": (lambda: self.ins(nns.ReverseOp(self._cut(x, axis, 1, low + 1), [axis])),
                        lambda: self.ins(nns.ReverseOp(self._cut(x, axis, d - 1 - high, d - 1), [axis]))),
            "wrap": (lambda: self._cut(x, axis, d - low, d), lambda: self._cut(x, axis, 0, high)),
        }[mode]
        pieces = ([parts[0]()] if low else []) + [x] + ([parts[1]()] if high else [])
        return self.ins(nns.ConcatenateOp(pieces, axis))

    def op_Transpose(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        rank = _tensor(x).get_num_dims()
        perm = list(attrs["perm"]) if "perm" in attrs else list(range(rank - 1, -1, -1))
        if sorted(perm) != list(range(rank)):
            raise NodeError(f"Transpose perm {perm} is not a permutation of the {rank} dimensions")
        return [self.ins(nn.TransposeOp(x, perm))]

    def op_Expand(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        shape = np.broadcast_shapes(tuple(_tensor(x).get_shape()), tuple(self.known(node.input[1]).tolist()))
        return [x if tuple(_tensor(x).get_shape()) == shape else self.ins(nn.BroadcastOp(x, shape))]

    @staticmethod
    def _check_concat_axis(attrs: dict[str, Any]) -> None:
        if "axis" not in attrs:  # optional before opset 4, its default only in prose
            raise NodeError("Concat without an axis attribute is not supported")

    def op_Concat(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        values = [self.value(n) for n in node.input if n]
        self._check_concat_axis(attrs)
        return [self.ins(nns.ConcatenateOp(values, normalize_axis(attrs["axis"], _tensor(values[0]).get_num_dims())))]

    def op_Slice(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        shape = _tensor(x).get_shape()
        starts, limits, strides, reverse = [], [], [], []
        for k, (s, d) in enumerate(zip(self._slices(shape, node, attrs), shape)):
            start, stop, step = s.indices(d)
            if step < 0:  # a reversed slice: reverse, then slice forward
                reverse.append(k)
                start, stop, step = d - 1 - start, d - 1 - stop, -step
            starts.append(start)
            limits.append(max(start, stop))
            strides.append(step)
        if reverse:
            x = self.ins(nns.ReverseOp(x, reverse))
        return [self.ins(nns.SliceOp(x, starts, limits, strides))]

    def op_Gather(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """numpy's `take(data, indices, axis)`: a gather of size-1 slices along `axis`.

        Negative indices count from the end: known ones are wrapped now (outside
        [-size, size) a NodeError), others at run time (`indices + size` where
        `indices < 0`); a run-time index still outside [0, size) is clamped by
        `nn.gather` to the nearest end."""
        data = self.value(node.input[0])
        shape = _tensor(data).get_shape()
        axis = normalize_axis(attrs["axis"], len(shape))
        if node.input[1] in self.consts:
            indices = self.constant(self._wrapped_indices(self.consts[node.input[1]], shape[axis]))
        else:
            indices = self._wrap_negative(self.value(node.input[1]), shape[axis])
        rank = _tensor(indices).get_num_dims()
        dims = {
            "offset_dims": [*range(axis), *range(axis + rank, len(shape) - 1 + rank)],
            "collapsed_slice_dims": [axis],
            "start_index_map": [axis],
            "slice_sizes": [1 if k == axis else d for k, d in enumerate(shape)],
        }
        return [self.ins(nni.GatherOp(data, indices, dims, rank))]

    def _indices(self, name: str, sizes: Sequence[int]) -> SSAValue:
        """The integer tensor `name` with negative entries counted from the end, as i64: its last
        dimension's entries of `sizes[k]` elements (or all of `sizes[0]`, one size given)."""
        if name in self.consts:
            known = self.consts[name].astype(np.int64)
            size = np.array(sizes, np.int64) if len(sizes) > 1 else sizes[0]
            if known.size and ((known < -size) | (known >= size)).any():
                raise NodeError(f"an index of {known.reshape(-1).tolist()} is out of range for {list(sizes)}")
            return self.constant(np.where(known < 0, known + size, known))
        indices = self.value(name)
        if _tensor(indices).element_type != i64:
            indices = self.ins(nne.ConvertOp(indices, i64))
        if len(sizes) == 1:
            return self._wrap_negative(indices, sizes[0])
        zero = self.ins(nn.FullOp(IntegerAttr(0, i64), []))  # type: ignore[arg-type]
        shifted = self.ins(nn.AddOp(indices, self.constant(np.array(sizes, np.int64))))
        return self.ins(nne.SelectOp(self.ins(nne.CompareOp(indices, zero, "LT")), shifted, indices))

    def op_GatherElements(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """out[i][j] = data[i][indices[i][j]] (axis 1): an `nn.gather` of single elements whose other
        dimensions are batching dimensions (data cropped to the indices' extent in them first)."""
        data = self.value(node.input[0])
        shape = _tensor(data).get_shape()
        rank = len(shape)
        axis = normalize_axis(attrs["axis"], rank)
        index_shape = (self.consts[node.input[1]].shape if node.input[1] in self.consts
                       else _tensor(self.value(node.input[1])).get_shape())
        if len(index_shape) != rank or any(i > d for k, (i, d) in enumerate(zip(index_shape, shape)) if k != axis):
            raise NodeError(f"GatherElements of {list(shape)} by indices of {list(index_shape)}")
        indices = self._indices(node.input[1], [shape[axis]])
        crop = [d if k == axis else i for k, (i, d) in enumerate(zip(index_shape, shape))]
        if crop != list(shape):
            data = self.ins(nns.SliceOp(data, [0] * rank, crop, [1] * rank))
        others = [k for k in range(rank) if k != axis]
        dims = {"collapsed_slice_dims": [axis], "operand_batching_dims": others, "start_indices_batching_dims": others,
                "start_index_map": [axis], "slice_sizes": [1] * rank}
        return [self.ins(nni.GatherOp(data, indices, dims, rank))]

    def op_GatherND(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """data indexed by the vectors along the indices' last dimension (after `batch_dims` shared leading
        dimensions): an `nn.gather` of the slices of data's remaining dimensions."""
        data = self.value(node.input[0])
        shape = _tensor(data).get_shape()
        index_shape = (self.consts[node.input[1]].shape if node.input[1] in self.consts
                       else _tensor(self.value(node.input[1])).get_shape())
        b, k, q = attrs.get("batch_dims", 0), index_shape[-1], len(index_shape)  # opset 12 on
        if b + k > len(shape) or list(index_shape[:b]) != list(shape[:b]):
            raise NodeError(f"GatherND of {list(shape)} by indices of {list(index_shape)} (batch_dims {b})")
        indices = self._indices(node.input[1], shape[b:b + k])
        batch = list(range(b))
        dims = {"offset_dims": list(range(q - 1, q - 1 + len(shape) - b - k)),
                "collapsed_slice_dims": list(range(b, b + k)), "operand_batching_dims": batch,
                "start_indices_batching_dims": batch, "start_index_map": list(range(b, b + k)),
                "slice_sizes": [1] * (b + k) + list(shape[b + k:])}
        return [self.ins(nni.GatherOp(data, indices, dims, q - 1))]

    def _wrap_negative(self, indices: SSAValue, size: int) -> SSAValue:
        """`indices < 0 ? indices + size : indices`, elementwise on the integer tensor."""
        e = _tensor(indices).element_type
        zero = self.ins(nn.FullOp(IntegerAttr(0, e), []))  # type: ignore[arg-type]
        negative = self.ins(nne.CompareOp(indices, zero, "LT"))
        shifted = self.ins(nn.AddOp(indices, self.ins(nn.FullOp(IntegerAttr(size, e), []))))  # type: ignore[arg-type]
        return self.ins(nne.SelectOp(negative, shifted, indices))

    # ------------------------------------------------------------ contractions

    def op_MatMul(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """numpy's `matmul`: a 1-D operand is a row (lhs) or column (rhs) whose dimension is then
        dropped; batch dimensions broadcast."""
        a, b = (self.value(n) for n in node.input)
        sa, sb = list(_tensor(a).get_shape()), list(_tensor(b).get_shape())
        if not sa or not sb:
            raise NodeError("MatMul of a 0-d tensor is not defined")
        row, column = len(sa) == 1, len(sb) == 1
        if row:
            a, sa = self._reshape(a, [1, *sa]), [1, *sa]
        if column:
            b, sb = self._reshape(b, [*sb, 1]), [*sb, 1]
        try:
            batch = list(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
        except ValueError:
            batch = None
        if batch is None or sa[-1] != sb[-2]:
            raise NodeError(f"MatMul of shapes {_tensor(a).get_shape()} and {_tensor(b).get_shape()}: they do not match")
        if len(sa) == 2 and len(sb) == 2:
            y = self.ins(nn.MatmulOp(a, b))
        elif len(sb) == 2:
            y = self.ins(nnc.DotGeneralOp(a, b, ((), ()), ((len(sa) - 1,), (0,))))
        else:
            if sa[:-2] != batch:
                a = self.ins(nn.BroadcastOp(a, [*batch, *sa[-2:]]))
            if sb[:-2] != batch:
                b = self.ins(nn.BroadcastOp(b, [*batch, *sb[-2:]]))
            dims = tuple(range(len(batch)))
            y = self.ins(nnc.DotGeneralOp(a, b, (dims, dims), ((len(batch) + 1,), (len(batch),))))
        out = [*batch, *([] if row else [sa[-2]]), *([] if column else [sb[-1]])]
        return [self._reshape(y, out)]

    def op_Gemm(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = self.value(node.input[0]), self.value(node.input[1])
        alpha, beta = attrs["alpha"], attrs["beta"]
        ta, tb = attrs["transA"], attrs["transB"]
        c = self.value(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if not ta and tb and alpha == 1.0 and beta == 1.0 and c is not None and _tensor(c).get_num_dims() == 1:
            return [self.ins(nn.LinearOp(a, b, c))]
        y = self.ins(nnc.DotGeneralOp(a, b, ((), ()), ((0 if ta else 1,), (1 if tb else 0,))))
        if alpha != 1.0:
            y = self.ins(nn.MulOp(y, self.scalar(alpha, y)))
        if c is not None:
            if beta != 1.0:
                c = self.ins(nn.MulOp(c, self.scalar(beta, c)))
            y = self.ins(nn.AddOp(y, c))
        return [y]

    def op_Einsum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """numpy's einsum of float operands: each operand's letters found only there and not in the output
        summed out, then the operands contracted left to right (`dot_general`: letters of both kept later are
        batch dimensions, the others contracted), then transposed to the output's order. An ellipsis
        stands for the same leading dimensions in every operand; a repeated letter (a diagonal) is refused."""
        values = [self.value(n) for n in node.input]
        equation = attrs["equation"].replace(" ", "")
        lhs, arrow, out = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(values):
            raise NodeError(f"Einsum equation '{equation}' for {len(values)} operands")
        ellipsis = max((_tensor(v).get_num_dims() - len(t.replace("...", "")) for t, v in zip(terms, values)
                        if "..." in t), default=0)
        fill = "".join(chr(0x100 + k) for k in range(ellipsis))
        terms = [t.replace("...", fill[len(fill) - (_tensor(v).get_num_dims() - len(t) + 3):] if "..." in t else "")
                 for t, v in zip(terms, values)]
        if arrow:
            out = out.replace("...", fill)
        else:
            counts = Counter("".join(terms))
            out = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
        sizes: dict[str, int] = {}
        for t, v in zip(terms, values):
            shape = _tensor(v).get_shape()
            if len(t) != len(shape) or len(set(t)) != len(t):
                raise NodeError(f"Einsum term '{t}' of a rank-{len(shape)} operand (a repeated letter is a "
                                "diagonal, not supported)")
            for c, d in zip(t, shape):
                if sizes.setdefault(c, d) != d:
                    raise NodeError(f"Einsum letter '{c}' of sizes {sizes[c]} and {d}")
        for k, (t, v) in enumerate(zip(terms, values)):
            elsewhere = set(out).union(*(terms[j] for j in range(len(terms)) if j != k))
            summed = [a for a, c in enumerate(t) if c not in elsewhere]
            if summed:
                values[k] = self.ins(nn.ReduceOp(v, "sum", summed))
                terms[k] = "".join(c for c in t if c in elsewhere)
        acc, letters = values[0], terms[0]
        for k in range(1, len(values)):
            later = set(out).union(*terms[k + 1:])
            both = [c for c in letters if c in terms[k]]
            batch = [c for c in both if c in later]
            contract = [c for c in both if c not in later]
            acc = self.ins(nnc.DotGeneralOp(
                acc, values[k], ([letters.index(c) for c in batch], [terms[k].index(c) for c in batch]),
                ([letters.index(c) for c in contract], [terms[k].index(c) for c in contract])))
            letters = "".join(batch) + "".join(c for c in letters if c not in both) + "".join(
                c for c in terms[k] if c not in both)
        if set(letters) != set(out):
            raise NodeError(f"Einsum equation '{equation}': output letters {out!r} not found once in the operands")
        perm = [letters.index(c) for c in out]
        return [acc if perm == sorted(perm) else self.ins(nn.TransposeOp(acc, perm))]

    def op_TopK(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The k largest (`largest`, else smallest) elements along `axis` in order, and their indices, the
        lower index first among equal values: k rounds of argmax (argmin) over the elements not yet taken
        (those set to -inf, or +inf; where only such remain, the first index not taken). Float inputs."""
        x = self.value(node.input[0])
        t = _tensor(x)
        shape, e = t.get_shape(), t.element_type
        if e not in (f16, f32, f64):
            raise NodeError(f"TopK of {t} (not float) is not supported")
        axis = normalize_axis(attrs["axis"], len(shape))
        k = int(self.known(node.input[1]).reshape(-1)[0]) if len(node.input) > 1 else attrs["k"]
        if not 0 <= k <= shape[axis]:
            raise NodeError(f"TopK of {k} elements of a dimension of {shape[axis]}")
        largest = attrs.get("largest", 1)
        arg, extreme = (nnc.ArgMaxOp, "max") if largest else (nnc.ArgMinOp, "min")
        fill = self.scalar(-math.inf if largest else math.inf, x)
        positions = self.ins(nns.IotaOp(TensorType(i64, shape), axis))
        picked = [1 if d == axis else n for d, n in enumerate(shape)]
        others = [d for d in range(len(shape)) if d != axis]
        dims = {"collapsed_slice_dims": [axis], "operand_batching_dims": others, "start_indices_batching_dims": others,
                "start_index_map": [axis], "slice_sizes": [1] * len(shape)}
        values, indices, taken, rest = [], [], None, x
        for _ in range(k):
            index = self.ins(arg(rest, axis))
            if taken is not None:
                free = self.ins(nne.ConvertOp(self.ins(nne.NotOp(taken)), f32))
                stuck = self.ins(nne.CompareOp(self.ins(nn.ReduceOp(rest, extreme, [axis])), fill, "EQ"))
                index = self.ins(nne.SelectOp(stuck, self.ins(nnc.ArgMaxOp(free, axis)), index))
            index = self._reshape(index, picked)
            hit = self.ins(nne.CompareOp(positions, index, "EQ"))
            taken = hit if taken is None else self.ins(nne.OrOp(taken, hit))
            rest = self.ins(nne.SelectOp(taken, fill, x))
            values.append(self.ins(nni.GatherOp(x, index, dims, len(shape))))
            indices.append(index)
        if k == 0:
            empty = [0 if d == axis else n for d, n in enumerate(shape)]
            return [self.constant(np.zeros(empty, dtype_of(e))), self.constant(np.zeros(empty, np.int64))]
        return [self.ins(nns.ConcatenateOp(values, axis)) if k > 1 else values[0],
                self.ins(nns.ConcatenateOp(indices, axis)) if k > 1 else indices[0]]

    def _spatial(self, attrs: dict[str, Any], spatial: int) -> tuple[list[int], ...]:
        """(strides, low pads, high pads, dilations) of a convolution or pooling node."""
        if attrs["auto_pad"] != "NOTSET":
            raise NodeError(f"auto_pad = {attrs['auto_pad']} is not supported (explicit pads are)")
        pads = list(attrs.get("pads", [0] * (2 * spatial)))
        strides = list(attrs.get("strides", [1] * spatial))
        dilations = list(attrs.get("dilations", [1] * spatial))
        return strides, pads[:spatial], pads[spatial:], dilations

    def op_Conv(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x, w = self.value(node.input[0]), self.value(node.input[1])
        spatial = _tensor(x).get_num_dims() - 2
        strides, low, high, dilations = self._spatial(attrs, spatial)
        layout = tuple(range(spatial + 2))
        y = self.ins(nnconv.ConvolutionOp(x, w, (layout, layout, layout), (strides, low, high, dilations),
                                          attrs["group"]))
        if len(node.input) > 2 and node.input[2]:
            bias = self.value(node.input[2])
            y = self.ins(nn.AddOp(y, self._reshape(bias, [_tensor(bias).get_shape()[0]] + [1] * spatial)))
        return [y]

    # ------------------------------------------------------------ pooling and reductions

    def _pool(self, node: Any, attrs: dict[str, Any], kind: str) -> list[SSAValue]:
        """A pooling window; with `ceil_mode` (MaxPool) the output rounds up, but a last window must start
        inside the input or its low padding, and reaches into more high padding."""
        if len(node.output) > 1 and node.output[1]:
            raise NodeError("the Indices output is not supported")
        x = self.value(node.input[0])
        shape = _tensor(x).get_shape()
        spatial = len(shape) - 2
        kernel = list(attrs["kernel_shape"])
        strides, low, high, dilations = self._spatial(attrs, spatial)
        if attrs.get("ceil_mode"):
            if kind != "max":
                raise NodeError("AveragePool with ceil_mode = 1 is not supported")
            for k, (d, w, s, lo, hi, r) in enumerate(zip(shape[2:], kernel, strides, low, high, dilations)):
                span = (w - 1) * r + 1
                out = -(-(d + lo + hi - span) // s) + 1
                out -= (out - 1) * s >= d + lo
                high[k] = max(hi, (out - 1) * s + span - d - lo)
        if kind == "mean" and any(low + high) and not attrs.get("count_include_pad"):
            raise NodeError("AveragePool with padding and count_include_pad = 0 is not supported")
        return [self.ins(nnw.ReduceWindowOp(x, kind, [1, 1, *kernel], [1, 1, *strides], [1, 1, *dilations],
                                            [0, 0, *low], [0, 0, *high]))]

    def op_MaxPool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._pool(node, attrs, "max")

    def op_AveragePool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._pool(node, attrs, "mean")

    def op_CumSum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Prefix sums along `axis` in log2(n) steps (x + x shifted by 1, 2, 4, ...); `reverse` sums from
        the end, `exclusive` leaves each element out of its own sum."""
        x = self.value(node.input[0])
        shape = _tensor(x).get_shape()
        rank = len(shape)
        axis = normalize_axis(int(self.known(node.input[1]).reshape(-1)[0]), rank)
        e = _tensor(x).element_type
        zero = self.ins(nn.FullOp(FloatAttr(0.0, e) if e in (f16, f32, f64) else IntegerAttr(0, e), []))

        def shifted(v: SSAValue, by: int) -> SSAValue:
            low = [by if k == axis else 0 for k in range(rank)]
            return self.ins(nns.PadOp(v, zero, low, [-n for n in low], [0] * rank))

        if attrs["reverse"]:
            x = self.ins(nns.ReverseOp(x, [axis]))
        if attrs["exclusive"]:
            x = shifted(x, 1)
        by = 1
        while by < shape[axis]:
            x = self.ins(nn.AddOp(x, shifted(x, by)))
            by *= 2
        return [self.ins(nns.ReverseOp(x, [axis])) if attrs["reverse"] else x]

    def op_Resize(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`nearest` or `linear` resampling of each resized axis in turn (as ONNX's reference): the
        source coordinate of each output position by `coordinate_transformation_mode`, then its nearest
        element (`nearest_mode`) or its two neighbours weighted, indices clamped to the input (edge values).
        The output size is floor(size * scale) (`scales`) or `sizes` (with `keep_aspect_ratio_policy`)."""
        x = self.value(node.input[0])
        shape = list(_tensor(x).get_shape())
        rank = len(shape)
        mode, coordinates = attrs["mode"], attrs.get("coordinate_transformation_mode")
        if self.opset < 11:
            raise NodeError("Resize before opset 11 is not supported")
        if mode not in ("nearest", "linear") or coordinates == "tf_crop_and_resize":
            raise NodeError(f"Resize with mode '{mode}' and coordinate_transformation_mode '{coordinates}' "
                            "is not supported (nearest and linear are)")
        axes = normalize_axes(attrs["axes"], rank) if "axes" in attrs else list(range(rank))
        scales_given = len(node.input) > 2 and node.input[2] and self.known(node.input[2]).size
        if scales_given:
            scales = [float(v) for v in self.known(node.input[2]).reshape(-1)]
            sizes = [int(scale * shape[a]) for scale, a in zip(scales, axes)]
        elif len(node.input) > 3 and node.input[3]:
            sizes = [int(v) for v in self.known(node.input[3]).reshape(-1)]
            scales = [n / shape[a] for n, a in zip(sizes, axes)]
            policy = attrs.get("keep_aspect_ratio_policy")  # opset 18 on
            if policy not in (None, "stretch"):
                scale = (min if policy == "not_larger" else max)(scales)
                scales = [scale] * len(axes)
                sizes = [int(math.floor(scale * shape[a] + 0.5)) for a in axes]
        else:
            raise NodeError("Resize needs scales or sizes")
        if len(sizes) != len(axes):
            raise NodeError(f"Resize with {len(sizes)} scales or sizes for {len(axes)} axes")
        if mode == "linear" and attrs.get("antialias") and min(scales) < 1:
            raise NodeError("Resize with antialias when downsampling is not supported")
        for axis, scale, out in zip(axes, scales, sizes):
            if out == shape[axis] and scale == 1.0:
                continue
            source = _resize_source(coordinates, shape[axis], out, scale)
            floor = np.floor(source)
            below = floor.astype(np.int64)
            if mode == "nearest":
                ratio = source - floor
                up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": ratio < 0,
                      "ceil": ratio > 0}[attrs["nearest_mode"]]
                x = self._take(x, axis, np.clip(below + up, 0, shape[axis] - 1))
            else:
                e = _tensor(x).element_type
                weight = (source - floor).astype(dtype_of(e))
                along = [out if k == axis else 1 for k in range(rank)]
                low = self._take(x, axis, np.clip(below, 0, shape[axis] - 1))
                high = self._take(x, axis, np.clip(below + 1, 0, shape[axis] - 1))
                low = self.ins(nn.MulOp(low, self.constant((1 - weight).reshape(along))))
                x = self.ins(nn.AddOp(low, self.ins(nn.MulOp(high, self.constant(weight.reshape(along))))))
            shape[axis] = out
        return [x]

    def _take(self, x: SSAValue, axis: int, indices: np.ndarray) -> SSAValue:
        """numpy's `take(x, indices, axis)` of known, in-range 1-D indices."""
        shape = _tensor(x).get_shape()
        dims = {"offset_dims": [k for k in range(len(shape)) if k != axis], "collapsed_slice_dims": [axis],
                "start_index_map": [axis], "slice_sizes": [1 if k == axis else d for k, d in enumerate(shape)]}
        return self.ins(nni.GatherOp(x, self.constant(indices.astype(np.int64)), dims, 1))

    def op_GlobalAveragePool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self.ins(nn.ReduceOp(x, "mean", list(range(2, _tensor(x).get_num_dims())), keepdims=True))]

    def _reduce(self, node: Any, attrs: dict[str, Any], kind: str) -> list[SSAValue]:
        """`kind` over the axes (attribute or input); none or an empty list means every axis,
        or none with `noop_with_empty_axes`. Max/min of booleans go through f32 0/1."""
        x = self.value(node.input[0])
        rank = _tensor(x).get_num_dims()
        axes = self._axes(node, attrs)
        if not axes:
            if attrs.get("noop_with_empty_axes"):
                return [x]
            axes = list(range(rank))
        axes = normalize_axes(axes, rank)
        keepdims = bool(attrs["keepdims"])
        e = _tensor(x).element_type
        if e == i1 and kind in ("max", "min"):
            r = self.ins(nn.ReduceOp(self.ins(nne.ConvertOp(x, f32)), kind, axes, keepdims=keepdims))
            return [self.ins(nne.CompareOp(r, self.scalar(0.5, r), "GT"))]
        if e not in (f16, f32, f64):
            raise NodeError(f"{node.op_type} of {_tensor(x)} (not float) is not supported")
        return [self.ins(nn.ReduceOp(x, kind, axes, keepdims=keepdims))]

    def op_ReduceMean(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "mean")

    def op_ReduceSum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "sum")

    def op_ReduceMax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "max")

    def op_ReduceMin(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "min")

    def _softmax(self, node: Any, attrs: dict[str, Any], op: type) -> list[SSAValue]:
        """Along `axis`; before opset 13, over the 2-D view [dimensions before `axis`, the rest]."""
        x = self.value(node.input[0])
        shape = list(_tensor(x).get_shape())
        axis = normalize_axis(attrs["axis"], len(shape))
        if self.opset >= 13 or axis == len(shape) - 1:
            return [self.ins(op(x, axis))]
        y = self.ins(op(self._reshape(x, flattened_shape(shape, axis)), 1))
        return [self._reshape(y, shape)]

    def op_Softmax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._softmax(node, attrs, nn.SoftmaxOp)

    def op_LogSoftmax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._softmax(node, attrs, nn.LogSoftmaxOp)

    # ------------------------------------------------------------ normalisation

    def _normalize(self, x: SSAValue, mean: SSAValue, var: SSAValue, eps: float) -> SSAValue:
        centred = self.ins(nn.SubOp(x, mean))
        std = self.ins(nn.SqrtOp(self.ins(nn.AddOp(var, self.scalar(eps, var)))))
        return self.ins(nn.DivOp(centred, std))

    def op_LayerNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised over the dimensions from `axis` on (in the input's type, whatever
        `stash_type`), scaled and shifted; the Mean and InvStdDev outputs keep those dimensions as 1."""
        x = self.value(node.input[0])
        rank = _tensor(x).get_num_dims()
        axes = list(range(normalize_axis(attrs["axis"], rank), rank))
        mean = self.ins(nn.ReduceOp(x, "mean", axes, keepdims=True))
        centred = self.ins(nn.SubOp(x, mean))
        var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", axes, keepdims=True))
        std = self.ins(nn.SqrtOp(self.ins(nn.AddOp(var, self.scalar(attrs["epsilon"], var)))))
        y = self.ins(nn.MulOp(self.ins(nn.DivOp(centred, std)), self.value(node.input[1])))
        if len(node.input) > 2 and node.input[2]:
            y = self.ins(nn.AddOp(y, self.value(node.input[2])))
        if len(node.output) < 3 or not node.output[2]:
            return [y, mean]
        return [y, mean, self.ins(nn.DivOp(self.scalar(1.0, std), std))]

    def op_InstanceNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised over the spatial dimensions of each sample and channel, then scaled and shifted per channel."""
        x, scale, bias = (self.value(n) for n in node.input)
        shape = _tensor(x).get_shape()
        axes = list(range(2, len(shape)))
        mean = self.ins(nn.ReduceOp(x, "mean", axes, keepdims=True))
        centred = self.ins(nn.SubOp(x, mean))
        var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", axes, keepdims=True))
        y = self._normalize(x, mean, var, attrs["epsilon"])
        scale, bias = (self._reshape(v, [shape[1]] + [1] * len(axes)) for v in (scale, bias))
        return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias))]

    def op_GroupNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised over each of `num_groups` groups of channels with their spatial dimensions, then
        scaled and shifted per channel (opset 21) or per group (opset 18, `scale` of num_groups elements)."""
        x, scale, bias = (self.value(n) for n in node.input)
        shape = _tensor(x).get_shape()
        groups = attrs["num_groups"]
        if len(shape) < 2 or shape[1] % groups:
            raise NodeError(f"GroupNormalization of {list(shape)} into {groups} groups")
        grouped = self._reshape(x, [shape[0], groups, math.prod(shape[1:]) // groups])
        mean = self.ins(nn.ReduceOp(grouped, "mean", [2], keepdims=True))
        centred = self.ins(nn.SubOp(grouped, mean))
        var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", [2], keepdims=True))
        y = self._normalize(grouped, mean, var, attrs["epsilon"])
        per = _tensor(scale).get_shape()[0]
        if per == groups and groups != shape[1]:
            scale, bias = (self._reshape(v, [groups, 1]) for v in (scale, bias))
            return [self._reshape(self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias)), shape)]
        y = self._reshape(y, shape)
        scale, bias = (self._reshape(v, [per] + [1] * (len(shape) - 2)) for v in (scale, bias))
        return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias))]

    def op_BatchNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        if attrs.get("training_mode") or any(node.output[1:]):
            raise NodeError("BatchNormalization in training mode is not supported (export the model in eval mode)")
        x, scale, bias, mean, var = (self.value(n) for n in node.input)
        per_channel = [_tensor(scale).get_shape()[0]] + [1] * (_tensor(x).get_num_dims() - 2)
        scale, bias, mean, var = (self._reshape(v, per_channel) for v in (scale, bias, mean, var))
        y = self._normalize(x, mean, var, attrs["epsilon"])
        return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias))]


def _load(model: Any) -> tuple[Any, str]:
    onnx = require_extra("onnx", "onnx", "importing ONNX models")
    if isinstance(model, onnx.ModelProto):
        return model, model.graph.name or "<onnx>"
    return onnx.load(str(model)), str(model)


@user_errors
def import_onnx(model: Any, parameters: Sequence[str] | None = None
                ) -> tuple[ModuleOp, list[str], list[tuple[str, np.ndarray]]]:
    """(`@main`'s module, the graph input names, the (name, value) parameters that
    follow them as arguments) of an ONNX model or `.onnx` path."""
    proto, filename = _load(model)
    importer = OnnxImporter(proto, filename, parameters)
    module = importer.run()
    return module, importer.input_names, importer.parameters


class OnnxFunction(Function):
    """An imported ONNX model, a `dfc.Function` of `@main(inputs..., parameters...)`.

    Calling it with the graph inputs (converted to the model's dtypes) runs the
    model with its own weights; `dfc.grad`/`dfc.value_and_grad` take every
    argument, weights included (`*f.parameter_values()`), so that gradients
    of the weights are available."""

    def __init__(self, module: ModuleOp, inputs: list[str], parameters: list[tuple[str, np.ndarray]]):
        super().__init__(module, "main")
        self.input_names = inputs
        self.parameters = parameters

    def parameter_values(self) -> list[np.ndarray]:
        return [v for _, v in self.parameters]

    def __call__(self, *args: Any) -> Any:
        """The model on its graph inputs (its own weights appended), or on every argument."""
        if len(args) == len(self.input_names):
            args = (*args, *self.parameter_values())
        elif len(args) != len(self.inputs):
            raise TypeError(f"the model takes {len(self.input_names)} inputs ({', '.join(self.input_names)}), "
                            f"or those and its {len(self.parameters)} parameters; got {len(args)} arguments")
        return super().__call__(*(np.asarray(x, dtype_of(t.element_type)) for x, t in zip(args, self.inputs)))


@user_errors
def from_onnx(model: Any, parameters: Sequence[str] | None = None) -> OnnxFunction:
    """An ONNX model (`ModelProto` or path) imported and ready to call;
    `parameters` names the initializers that become arguments (default: every
    float initializer of more than one element)."""
    return OnnxFunction(*import_onnx(model, parameters))

