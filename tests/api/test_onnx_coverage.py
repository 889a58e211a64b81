"""ONNX's own backend node tests through `dfc.import_onnx` and the interpreter.

Each case is one node with inputs and the outputs ONNX computed for them
(`onnx.backend.test.case.node`, generated in memory: the wheel ships the
generators, not `data/node`), plus the model files ONNX ships under
`onnx/backend/test/data/{pytorch-converted,pytorch-operator,simple}`. A case
ends as one of:

* pass: every output has the expected shape and dtype, and equals the
  expected one (integers and booleans exactly; floats element by element
  within a relative tolerance of the dtype, NaN where NaN is expected);
* refused: `import_onnx` raises a `CompileError` (an unsupported type,
  attribute or operator, named);
* wrong: a result that differs, or of another shape or dtype;
* internal: any other exception.

A case runs as given ("graph"); inputs the importer needs at import time (it
says "input 'x' must be a constant") are then given as initializers, and the
case's values of sequence, optional and dynamically shaped inputs are their
examples (`import_onnx(examples=...)`); a sequence output is compared element
by element. Cases of ops `OnnxImporter.fold` computes with numpy whose inputs
are all tensors also run with every input an initializer ("folded"), which
checks the folding.

CI runs `SUBSET` (every handler passes at least one case, checked by
`test_every_handler_has_a_passing_case`); `DFC_ONNX_NODE_SUITE=1` runs every
node case of a handled op and every shipped model, and requires wrong and
internal to be zero. `python tests/api/test_onnx_coverage.py` prints the counts.
Cases run on the interpreter, those over `LARGE` elements on the engine
(`DFC_ONNX_NODE_ENGINE=1`: every case on the engine).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import warnings
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import numpy_helper  # noqa: E402

import dfc  # noqa: E402
from dfc import CompileError, interpret  # noqa: E402
from dfc.importers.onnx_import import OnnxImporter, from_onnx, import_onnx, output_dtypes  # noqa: E402
from dfc.importers.onnx_random_ops import RANDOM_OPS, new_key  # noqa: E402
from dfc.importers.onnx_sequences import SEQUENCE_OPS, leaves  # noqa: E402
from dfc.importers.onnx_unsigned import signless, with_onnx_dtype  # noqa: E402

FULL = bool(os.environ.get("DFC_ONNX_NODE_SUITE"))
NODE_PACKAGE = "onnx.backend.test.case.node"
DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
MODEL_DIRS = ("pytorch-converted", "pytorch-operator", "simple")
TOLERANCE = {np.dtype(np.float16): (1e-3, 1e-4), np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float64): (1e-12, 1e-13),
             np.dtype("bfloat16"): (2.0 ** -7, 2.0 ** -10)}
"""(rtol, floor) per float dtype: an element may differ from the expected one by rtol of
its magnitude or by floor times the largest expected magnitude of the output (where a
result near 0 comes from cancellation, as LayerNormalization's shift); rtol is about one unit in the
last place (bfloat16's: 2^-7)."""
EXACT = {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn", "int4",
         "uint4", "int2", "uint2"}
"""dtypes compared exactly: each value (the sign of 0 included) or NaN, i.e. the code up to a NaN's sign."""
ENGINE = bool(os.environ.get("DFC_ONNX_NODE_ENGINE"))
LARGE = 50_000
"""Cases with more elements (inputs and outputs) run on the engine, the others on the interpreter."""


def handler_ops() -> set[str]:
    """The ops `OnnxImporter` builds IR for: its `op_*` methods, the elementwise ops it translates by name and
    the sequence and optional ops (`SEQUENCE_OPS`)."""
    from dfc.importers import onnx_import

    return {name[3:] for name in dir(OnnxImporter) if name.startswith("op_")} | set(onnx_import._UNARY) | set(
        onnx_import._BINARY) | SEQUENCE_OPS


@cache
def fold_ops() -> set[str]:
    """The ops `OnnxImporter.fold` computes with numpy, read off its source."""
    from dfc.importers import onnx_import

    source = inspect.getsource(OnnxImporter.fold)
    names = set(re.findall(r'op == "(\w+)"', source))
    for group in re.findall(r"op in \(([^)]*)\)", source):
        names |= set(re.findall(r'"(\w+)"', group))
    return names | set(onnx_import._NUMPY_BINARY)


# ---------------------------------------------------------------- cases


class Case:
    """One model with its inputs and expected outputs."""

    def __init__(self, name: str, model, inputs: list[np.ndarray], outputs: list[np.ndarray]):
        self.name, self.model, self.inputs, self.outputs = name, model, inputs, outputs

    @property
    def ops(self) -> set[str]:
        """The operators of the model's nodes, those of its subgraphs (If, Loop, Scan, SequenceMap bodies) too."""
        def walk(graph) -> set[str]:
            found = {n.op_type for n in graph.node}
            for node in graph.node:
                for a in node.attribute:
                    found |= walk(a.g) if a.HasField("g") else set()
            return found

        return walk(self.model.graph)


def _array(value):
    """A case's input or output as numpy: a tensor as an array, a sequence as a list of them."""
    if value is None:  # an optional without a value
        return None
    if isinstance(value, list):
        return [_array(v) for v in value]
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def _modules(ops: set[str]) -> list[str]:
    """The node-case modules that build a node of one of `ops` (`make_node("Op", ...)`, or a module
    named after the op: scan.py writes its nodes in ONNX's text syntax), those of the `ai.onnx.ml` domain
    (the subpackage `ai_onnx_ml`) too, as names relative to the package."""
    root = Path(importlib.import_module(NODE_PACKAGE).__file__).parent
    lowered = {op.lower() for op in ops}
    found = []
    for path in sorted([*root.glob("*.py"), *root.glob("ai_onnx_ml/*.py")]):
        if set(re.findall(r'make_node\(\s*"(\w+)"', path.read_text())) & ops or path.stem.strip("_") in lowered:
            found.append(".".join(path.relative_to(root).with_suffix("").parts))
    return found


@cache
def node_cases(ops: frozenset[str]) -> dict[str, Case]:
    """ONNX's node cases of one node whose op is in `ops` (generating a module's
    cases imports it: its `export_*` functions run once)."""
    package = importlib.import_module(NODE_PACKAGE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in _modules(set(ops)):
            importlib.import_module(f"{NODE_PACKAGE}.{module}")
    cases = {}
    for c in package._NodeTestCases:
        if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type in ops:
            inputs, outputs = c.data_sets[0]
            cases[c.name] = Case(c.name, c.model, [_array(x) for x in inputs], [_array(y) for y in outputs])
    return cases


def model_cases() -> dict[str, Case]:
    """The model files ONNX ships (`model.onnx` + `test_data_set_0/{input,output}_*.pb`)."""
    cases = {}
    for kind in MODEL_DIRS:
        for folder in sorted((DATA / kind).iterdir()):
            data = folder / "test_data_set_0"
            if not (folder / "model.onnx").exists() or not data.exists():
                continue

            def read(prefix: str) -> list[np.ndarray]:
                files = sorted(data.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
                return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in files]

            cases[f"{kind}/{folder.name}"] = Case(f"{kind}/{folder.name}", onnx.load(str(folder / "model.onnx")),
                                                  read("input"), read("output"))
    return cases


# ---------------------------------------------------------------- running


def _with_initializers(model, values: dict[str, np.ndarray]):
    """`model` with the graph inputs named in `values` turned into initializers of those values."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    kept = [i for i in model.graph.input if i.name not in values]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    model.graph.initializer.extend(numpy_helper.from_array(v, n) for n, v in values.items())
    return model


def _compare(got: np.ndarray, want: np.ndarray) -> str | None:
    """Why `got` differs from `want`, or None when equal (see the module docstring)."""
    got = np.asarray(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.dtype.name in EXACT:
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))
        if not same.all():
            k = int(np.argmin(same.reshape(-1)))
            return f"element {k}: got {got.reshape(-1)[k]!r}, expected {want.reshape(-1)[k]!r} (exactly)"
        return None
    if want.dtype in TOLERANCE:
        rtol, floor = TOLERANCE[want.dtype]
        got, want = got.astype(np.float64), want.astype(np.float64)
        finite = np.abs(want[np.isfinite(want)])
        scale = floor * float(finite.max()) if finite.size else 0.0
        close = np.isclose(got, want, rtol=rtol, atol=scale, equal_nan=True) & (np.isnan(got) == np.isnan(want))
        if not close.all():
            k = int(np.argmin(close.reshape(-1)))
            return f"element {k}: got {got.reshape(-1)[k]!r}, expected {want.reshape(-1)[k]!r} (rtol {rtol})"
        return None
    if not np.array_equal(got, want):
        k = np.argmax((got != want).reshape(-1))
        return f"element {k}: got {got.reshape(-1)[k]!r}, expected {want.reshape(-1)[k]!r}"
    return None


ROUNDED_EXPECTED = {"test_averagepool_2d_ceil_last_window_starts_on_pad": 4, "test_gridsample_bicubic": 4,
                    "test_roialign_aligned_false": 4, "test_roialign_aligned_true": 4, "test_roialign_mode_max": 4}
"""Cases whose expected outputs ONNX wrote rounded (to this many decimals): they are compared with ONNX's
reference evaluator instead, which must agree with the written outputs to that rounding."""


def _expected(case: Case) -> list[np.ndarray]:
    """The outputs a case expects (`ROUNDED_EXPECTED`: the reference evaluator's)."""
    if case.name not in ROUNDED_EXPECTED:
        return case.outputs
    from onnx.reference import ReferenceEvaluator

    names = [i.name for i in case.model.graph.input]
    exact = ReferenceEvaluator(case.model).run(None, dict(zip(names, case.inputs)))
    for e, w in zip(exact, case.outputs):
        assert np.abs(e - w).max() <= 10.0 ** -ROUNDED_EXPECTED[case.name], case.name
    return exact


def is_random(case: Case) -> bool:
    """Whether the case's one node draws random numbers: a random operator, or Dropout in training mode
    with a ratio above 0. Its expected outputs are draws of NumPy's generator, which dfc's does not
    reproduce (ONNX calls these operators non-deterministic), so it is checked by property
    (`_random_property`); test_onnx_random.py checks the distributions."""
    nodes = case.model.graph.node
    if len(nodes) != 1 or nodes[0].op_type not in RANDOM_OPS | {"Dropout"}:
        return False
    if nodes[0].op_type != "Dropout":
        return True
    return len(case.inputs) == 3 and bool(case.inputs[2]) and float(case.inputs[1]) != 0.0


def _random_property(case: Case, got: tuple) -> str | None:
    """Why a random case's outputs are impossible draws, or None: each output of the expected shape and
    dtype; Bernoulli's values 0 or 1 (0 where p = 0, 1 where p = 1); Dropout's output x / (1 - ratio)
    where its mask (or, without a mask output, its value) says kept and 0 elsewhere."""
    for k, (g, w) in enumerate(zip(got, case.outputs)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {k}: got {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
    op, x = case.model.graph.node[0].op_type, case.inputs[0]
    if op == "Bernoulli":
        y = got[0].astype(np.float64)
        if not np.isin(y, (0.0, 1.0)).all() or (y[x == 0] != 0).any() or (y[x == 1] != 1).any():
            return f"Bernoulli drew {sorted(set(y.reshape(-1).tolist()))[:4]} (0 or 1, 0 at p = 0, 1 at p = 1)"
        return None
    scaled = x.astype(np.float64) / (1.0 - float(case.inputs[1]))
    kept = got[1] if len(got) > 1 else got[0] != 0
    want = np.where(kept, scaled, 0.0)
    if not np.allclose(got[0], want, rtol=TOLERANCE[x.dtype][0], atol=0):
        return "Dropout's output is not x / (1 - ratio) where kept and 0 elsewhere"
    return None


CONSTANT_INPUT = re.compile(r"input '([^']*)' must be a constant")


def run_case(case: Case, folded: bool = False) -> tuple[str, str]:
    """(outcome, detail): outcome one of pass, refused, wrong, internal."""
    names = [i.name for i in case.model.graph.input]
    given = dict(zip(names, case.inputs))
    known = dict(given) if folded else {}
    examples = {i.name: given[i.name] for i in case.model.graph.input if not i.type.HasField("tensor_type") or any(
        not d.HasField("dim_value") for d in i.type.tensor_type.shape.dim)}
    try:
        while True:
            try:
                module, inputs, _ = import_onnx(_with_initializers(case.model, known), parameters=[],
                                                examples=examples)
                break
            except CompileError as err:
                wanted = CONSTANT_INPUT.search(str(err))
                if folded or not wanted or wanted.group(1) not in given or wanted.group(1) in known:
                    raise
                known[wanted.group(1)] = given[wanted.group(1)]
        if folded and any(op.name not in ("nn.constant", "nn.full", "func.func", "func.return", "builtin.module")
                          for op in module.walk()):
            return "refused", "not folded (an input left it to the graph)"
        args = [signless(x) for x in leaves([given[n] for n in inputs])]
        if len(next(iter(module.ops)).args) == len(args) + 1:  # a random node's key (onnx_random_ops)
            args.append(new_key())
        if ENGINE or sum(x.size for x in [*args, *leaves(case.outputs)]) > LARGE:
            from dfc.compiler.engine import ExecutionEngine

            got = ExecutionEngine(module).invoke("main", *args)
        else:
            got = interpret(module, "main", *args)
    except CompileError as err:
        return "refused", str(err).splitlines()[0]
    except Exception as err:  # noqa: BLE001 - every other exception is an internal error
        return "internal", f"{type(err).__name__}: {err}"
    got = got if isinstance(got, tuple) else (got,)
    expected = _expected(case)
    dtypes = [d for d, w in zip(output_dtypes(case.model), expected) for _ in leaves([w])]
    got = tuple(with_onnx_dtype(g, d) for g, d in zip(got, dtypes))
    if len(got) != len(leaves(expected)):
        return "wrong", f"{len(got)} outputs (tensors of sequences counted), expected {len(leaves(expected))}"
    if is_random(case):
        why = _random_property(case, got)
        return ("pass", "random: checked by property") if why is None else ("wrong", why)
    for k, (g, w) in enumerate(zip(got, leaves(expected))):
        if (why := _compare(g, w)) is not None:
            return "wrong", f"output {k}: {why}"
    return "pass", ""


# ---------------------------------------------------------------- the cases CI runs

SUBSET: dict[str, tuple[str, ...]] = {
    # op -> node cases CI runs as graphs (model files: "<dir>/<name>")
    "Abs": ("test_abs",),
    "Add": ("test_add_bcast",),
    "AveragePool": ("test_averagepool_2d_pads", "test_averagepool_2d_same_lower", "test_averagepool_2d_ceil",
                    "test_averagepool_2d_ceil_last_window_starts_on_pad"),
    "BatchNormalization": ("test_batchnorm_epsilon", "test_batchnorm_example_training_mode"),
    "Cast": ("test_cast_FLOAT_to_DOUBLE", "test_cast_DOUBLE_to_FLOAT16", "test_cast_FLOAT_to_FLOAT8E4M3FN",
             "test_cast_FLOAT8E5M2_to_FLOAT16", "test_cast_FLOAT_to_INT4", "test_cast_FLOAT_to_BFLOAT16",
             "test_cast_e8m0_FLOAT16_to_FLOAT8E8M0"),
    "Concat": ("test_concat_2d_axis_1", "test_concat_3d_axis_negative_3"),
    "Conv": ("test_conv_with_strides_and_asymmetric_padding", "test_basic_conv_without_padding"),
    "Div": ("test_div_bcast", "test_div_int32_trunc", "test_div_int8", "test_div_int16", "test_div_uint64"),
    "Dropout": ("test_dropout_default_mask_ratio", "test_training_dropout_zero_ratio_mask", "test_training_dropout_mask"),
    "Bernoulli": ("test_bernoulli_seed",),
    "Equal": ("test_equal_bcast",),
    "Erf": ("test_erf",),
    "Exp": ("test_exp",),
    "Expand": ("test_expand_dim_changed",),
    "Flatten": ("test_flatten_axis0", "test_flatten_default_axis", "test_flatten_negative_axis1",
                "test_flatten_negative_axis2", "test_flatten_negative_axis3", "test_flatten_negative_axis4"),
    "Gather": ("test_gather_1", "test_gather_2d_indices", "test_gather_negative_indices"),
    "Gelu": ("test_gelu_default_1", "test_gelu_tanh_1"),
    "Gemm": ("test_gemm_all_attributes", "test_gemm_default_no_bias", "test_gemm_transposeA"),
    "GlobalAveragePool": ("test_globalaveragepool",),
    "Greater": ("test_greater_bcast",),
    "GreaterOrEqual": ("test_greater_equal_bcast",),
    "LayerNormalization": ("test_layer_normalization_default_axis", "test_layer_normalization_4d_axis1",
                           "test_layer_normalization_3d_axis_negative_2_epsilon"),
    "Less": ("test_less_bcast", "test_less_int8", "test_less_uint16"),
    "LessOrEqual": ("test_less_equal_bcast",),
    "Log": ("test_log",),
    "LogSoftmax": ("test_logsoftmax_default_axis", "test_logsoftmax_negative_axis", "pytorch-converted/test_LogSoftmax"),
    "MatMul": ("test_matmul_2d", "test_matmul_1d_1d", "test_matmul_4d_1d", "test_matmul_bcast"),
    "Max": ("test_max_example", "test_max_one_input", "test_max_int64"),
    "MaxPool": ("test_maxpool_2d_same_upper", "test_maxpool_2d_same_lower", "pytorch-converted/test_MaxPool1d_stride", "pytorch-converted/test_MaxPool2d", "test_maxpool_2d_ceil",
                "test_maxpool_with_argmax_2d_precomputed_strides",
                "test_maxpool_2d_ceil_output_size_reduce_by_one", "test_maxpool_2d_uint8"),
    "Min": ("test_min_example",),
    "Mul": ("test_mul_bcast",),
    "Neg": ("test_neg",),
    "Pow": ("test_pow_bcast_array", "test_pow_types_float32_int64", "test_pow_types_int64_int64",
            "test_pow_types_int32_float32", "test_pow_types_float32_uint32"),
    "ReduceMax": ("test_reduce_max_negative_axes_keepdims_example", "test_reduce_max_bool_inputs",
                  "test_reduce_max_empty_set"),
    "ReduceMean": ("test_reduce_mean_default_axes_keepdims_example", "test_reduce_mean_do_not_keepdims_example"),
    "ReduceMin": ("test_reduce_min_negative_axes_keepdims_example", "test_reduce_min_empty_set"),
    "ReduceSum": ("test_reduce_sum_default_axes_keepdims_example", "test_reduce_sum_empty_axes_input_noop_example",
                  "test_reduce_sum_negative_axes_keepdims_example"),
    "Relu": ("test_relu",),
    "Reshape": ("test_reshape_zero_and_negative_dim", "test_reshape_allowzero_reordered"),
    "Sigmoid": ("test_sigmoid",),
    "Slice": ("test_slice_neg_steps", "test_slice_negative_axes", "test_slice_default_axes", "test_slice_end_out_of_bounds"),
    "Softmax": ("test_softmax_axis_0", "test_softmax_negative_axis", "test_softmax_large_number",
                "pytorch-converted/test_Softmax"),
    "Sqrt": ("test_sqrt",),
    "Squeeze": ("test_squeeze_negative_axes",),
    "Sub": ("test_sub_bcast",),
    "Tanh": ("test_tanh",),
    "Transpose": ("test_transpose_default", "test_transpose_all_permutations_4"),
    "Unsqueeze": ("test_unsqueeze_negative_axes", "test_unsqueeze_unsorted_axes", "test_unsqueeze_three_axes"),
    "Where": ("test_where_long_example",),
    "QuantizeLinear": ("test_quantizelinear_blocked_asymmetric", "test_quantizelinear_e4m3fn"),
    "DequantizeLinear": ("test_dequantizelinear_axis", "test_dequantizelinear_int4"),
    "DynamicQuantizeLinear": ("test_dynamicquantizelinear",),
    "MatMulInteger": ("test_matmulinteger",), "QLinearMatMul": ("test_qlinearmatmul_3D_uint8_float16",),
    "ConvInteger": ("test_convinteger_with_padding",), "QLinearConv": ("test_qlinearconv",),
    "Sign": ("test_sign",), "Floor": ("test_floor",), "Ceil": ("test_ceil",), "Round": ("test_round",),
    "Sin": ("test_sin",), "Cos": ("test_cos",), "Tan": ("test_tan",),
    "Range": ("test_range_float_type_positive_delta",),
    "Split": ("test_split_variable_parts_2d_opset13", "test_split_2d_uneven_split_opset18",
              "test_split_zero_size_splits_opset18", "test_split_equal_parts_default_axis_opset13"),
    "Tile": ("test_tile",),
    "Pad": ("test_constant_pad", "test_constant_pad_negative_axes", "test_edge_pad", "test_reflect_pad",
            "test_wrap_pad"),
    "GatherElements": ("test_gather_elements_1", "test_gather_elements_negative_indices"),
    "GatherND": ("test_gathernd_example_float32", "test_gathernd_example_int32_batch_dim1"),
    "CumSum": ("test_cumsum_2d_negative_axis", "test_cumsum_1d_reverse_exclusive", "test_cumsum_1d_int32_exclusive"),
    "Clip": ("test_clip", "test_clip_default_min", "test_clip_default_max", "test_clip_min_greater_than_max"),
    "And": ("test_and_bcast4v2d",), "Or": ("test_or_bcast3v1d",), "Xor": ("test_xor3d",), "Not": ("test_not_2d",),
    "IsNaN": ("test_isnan",), "IsInf": ("test_isinf", "test_isinf_negative"),
    "BitwiseAnd": ("test_bitwise_and_ui8_bcast_4v3d",), "BitwiseOr": ("test_bitwise_or_i16_4d",),
    "BitwiseXor": ("test_bitwise_xor_ui64_bcast_3v1d",), "BitwiseNot": ("test_bitwise_not_3d",),
    "GroupNormalization": ("test_group_normalization_example", "test_group_normalization_epsilon"),
    "Resize": ("test_resize_upsample_scales_nearest", "test_resize_downsample_sizes_nearest_not_larger",
               "test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric",
               "test_resize_upsample_sizes_nearest_floor_align_corners", "test_resize_upsample_scales_linear",
               "test_resize_downsample_scales_linear_align_corners",
               "test_resize_downsample_sizes_linear_pytorch_half_pixel",
               "test_resize_upsample_scales_linear_half_pixel_symmetric",
               "test_resize_upsample_scales_nearest_axes_3_2", "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
               "test_resize_downsample_sizes_linear_antialias", "test_resize_tf_crop_and_resize_axes_2_3",
               "test_resize_tf_crop_and_resize_extrapolation_value"),
    "TopK": ("test_top_k", "test_top_k_smallest", "test_top_k_negative_axis", "test_top_k_uint64",
             "test_top_k_same_values_2d"),
    "InstanceNormalization": ("test_instancenorm_example", "test_instancenorm_epsilon"),
    "Einsum": ("test_einsum_batch_matmul", "test_einsum_sum", "test_einsum_inner_prod", "test_einsum_transpose",
               "test_einsum_batch_diagonal"),
    "Reciprocal": ("test_reciprocal",), "Softplus": ("test_softplus",), "Softsign": ("test_softsign",),
    "Elu": ("test_elu",), "Selu": ("test_selu_default",), "Celu": ("test_celu",), "LeakyRelu": ("test_leakyrelu",),
    "PRelu": ("test_prelu_broadcast", "pytorch-converted/test_PReLU_2d_multiparam"), "ThresholdedRelu": ("test_thresholdedrelu",),
    "HardSigmoid": ("test_hardsigmoid",), "HardSwish": ("test_hardswish",), "Mish": ("test_mish",),
    "Swish": ("test_swish",), "Shrink": ("test_shrink_hard", "test_shrink_soft"),
    "Sinh": ("test_sinh",), "Cosh": ("test_cosh",), "Atan": ("test_atan",), "Asin": ("test_asin",),
    "Acos": ("test_acos",), "Asinh": ("test_asinh",), "Acosh": ("test_acosh",), "Atanh": ("test_atanh",),
    "Mod": ("test_mod_mixed_sign_int32", "test_mod_mixed_sign_float32", "test_mod_float_edge_cases_fmod_0_float32",
            "test_mod_broadcast"),
    "Sum": ("test_sum_example",), "Mean": ("test_mean_example",),
    "ReduceL1": ("test_reduce_l1_keep_dims_random",), "ReduceL2": ("test_reduce_l2_negative_axes_keep_dims_random",),
    "ReduceSumSquare": ("test_reduce_sum_square_do_not_keepdims_random",),
    "ReduceLogSum": ("test_reduce_log_sum_asc_axes",),
    "ReduceLogSumExp": ("test_reduce_log_sum_exp_keepdims_random", "test_reduce_log_sum_exp_empty_set"),
    "ReduceProd": ("test_reduce_prod_do_not_keepdims_random", "test_reduce_prod_empty_set"),
    "ArgMax": ("test_argmax_negative_axis_keepdims_random_select_last_index", "test_argmax_no_keepdims_example"),
    "ArgMin": ("test_argmin_keepdims_example_select_last_index",),
    "Hardmax": ("test_hardmax_axis_1", "test_hardmax_one_hot"), "LpNormalization": ("test_l2normalization_axis_0",),
    "GlobalMaxPool": ("test_globalmaxpool",), "RMSNormalization": ("test_rms_normalization_4d_axis_negative_2",),
    "Trilu": ("test_triu_one_row", "test_tril_neg", "test_triu_zero"),
    "DepthToSpace": ("test_depthtospace_example", "test_depthtospace_crd_mode_example"),
    "DFT": ("test_dft_inverse", "test_dft_irfft_opset19"), "STFT": ("test_stft_with_window",),
    "SpaceToDepth": ("test_spacetodepth_example", "test_spacetodepth_crd_mode_example"),
    "OneHot": ("test_onehot_negative_indices", "test_onehot_with_axis"), "EyeLike": ("test_eyelike_with_dtype",),
    "CumProd": ("test_cumprod_2d_axis_1", "test_cumprod_1d_reverse_exclusive"),
    "CastLike": ("test_castlike_FLOAT_to_DOUBLE",),
    "ConstantOfShape": ("test_constantofshape_int_zeros",),
    "ConvTranspose": ("test_convtranspose_output_shape", "test_convtranspose_pads", "test_convtranspose_group_2",
                      "test_convtranspose_autopad_same", "test_convtranspose_dilations", "test_convtranspose_3d"),
    "LpPool": ("test_lppool_2d_pads", "test_lppool_2d_same_upper", "test_lppool_2d_dilations"),
    "ScatterND": ("test_scatternd", "test_scatternd_add", "test_scatternd_max"),
    "ScatterElements": ("test_scatter_elements_with_negative_indices", "test_scatter_elements_with_duplicate_indices",
                        "test_scatter_elements_with_reduction_mul"),
    "Scatter": ("test_scatter_with_axis",), "LRN": ("test_lrn",), "MeanVarianceNormalization": ("test_mvn",),
    "NegativeLogLikelihoodLoss": ("test_nllloss_NCd1d2_with_weight_reduction_mean", "test_nllloss_NCd1d2d3_none_no_weight_negative_ii",
                                  "test_nllloss_NCd1d2d3d4d5_mean_weight"),
    "SoftmaxCrossEntropyLoss": ("test_sce_mean_weight_ii_log_prob", "test_sce_NCd1d2d3_sum_weight_high_ii",
                                "test_sce_none"),
    "BitShift": ("test_bitshift_right_uint64", "test_bitshift_left_uint8", "test_bitshift_right_int8_negative_input",
                 "test_bitshift_left_int32_shift_ge_width"),
    "Attention": ("test_attention_3d_gqa_causal", "test_attention_4d_attn_mask_bool_4d",
                  "test_attention_4d_gqa_with_past_and_present_fp16", "test_attention_4d_gqa_causal_nonpad_decode",
                  "test_attention_3d_with_past_and_present_qk_matmul_softcap", "test_attention_local_window_with_past",
                  "test_attention_23_boolmask_fullymasked_row_nan_robustness",
                  "test_attention_24_qk_matmul_output_mode3_softmax_precision"),
    "LinearAttention": ("test_linear_attention_gated_delta_gqa", "test_linear_attention_fp16"),
    "CausalConvWithState": ("test_causal_conv_with_state_silu_with_past_state", "test_causal_conv_with_state_kernel_size_one"),
    "FlexAttention": ("test_flexattention_causal_mask", "test_flexattention_fp16"),
    "TfIdfVectorizer": ("test_tfidfvectorizer_tf_batch_uniandbigrams_skip5",),
    "SwiGLU": ("test_swiglu_alpha", "test_swiglu_float16"), "ReverseSequence": ("test_reversesequence_time",),
    "HannWindow": ("test_hannwindow",), "HammingWindow": ("test_hammingwindow_symmetric",),
    "BlackmanWindow": ("test_blackmanwindow",),
    "Adagrad": ("test_adagrad_multiple",), "Adam": ("test_adam",), "Momentum": ("test_nesterov_momentum",),
    "Gradient": ("simple/test_gradient_of_add_and_mul",),
    "TensorScatter": ("test_tensorscatter_circular",),
    "MaxUnpool": ("test_maxunpool_export_with_output_shape",),
    "Det": ("test_det_nd",),
    "Upsample": ("test_upsample_nearest",),
    "If": ("test_if", "test_if_seq"), "Loop": ("test_loop11", "test_loop13_seq", "test_loop16_seq_none"),
    "Identity": ("test_identity", "test_identity_sequence", "test_identity_opt"),
    "SequenceEmpty": ("simple/test_sequence_model1",), "SequenceInsert": ("test_sequence_insert_at_front",),
    "SequenceAt": ("simple/test_sequence_model7",), "SequenceConstruct": ("simple/test_sequence_model3",),
    "SequenceErase": ("simple/test_sequence_model3",), "ConcatFromSequence": ("simple/test_sequence_model5",),
    "SplitToSequence": ("test_split_to_sequence_2", "test_split_to_sequence_nokeepdims"),
    "SequenceLength": ("simple/test_sequence_model6",),
    "SequenceMap": ("test_sequence_map_add_1_sequence_1_tensor", "test_sequence_map_extract_shapes"),
    "Optional": ("test_if_opt",), "OptionalHasElement": ("test_optional_has_element_empty_optional_input",),
    "OptionalGetElement": ("test_optional_get_element_optional_sequence",), "Scan": ("test_scan9_sum", "test_scan_sum"),
    "LSTM": ("test_lstm_with_peepholes", "test_lstm_bidirectional"), "GRU": ("test_gru_seq_length",),
    "RNN": ("test_simple_rnn_batchwise",),
    "GridSample": ("test_gridsample_reflection_padding", "test_gridsample_bilinear_align_corners_1_additional_1",
                   "test_gridsample_nearest_align_corners_0_additional_1",
                   "test_gridsample_volumetric_nearest_align_corners_1"),
    "AffineGrid": ("test_affine_grid_2d_align_corners", "test_affine_grid_3d"),
    "DeformConv": ("test_deform_conv_with_mask_bias",),
    "RotaryEmbedding": ("test_rotary_embedding_3d_input", "test_rotary_embedding_with_interleaved_rotary_dim",
                        "test_rotary_embedding_no_position_ids_rotary_dim"),
    "BitCast": ("test_bitcast_float32_to_int32", "test_bitcast_uint16_to_int16", "test_bitcast_bool_to_uint8"),
    "CenterCropPad": ("test_center_crop_pad_crop_and_pad", "test_center_crop_pad_crop_negative_axes_hwc"),
    "Col2Im": ("test_col2im_dilations", "test_col2im_5d"),
    "Binarizer": ("test_ai_onnx_ml_binarizer",), "ArrayFeatureExtractor": ("test_ai_onnx_ml_array_feature_extractor",),
    "TreeEnsemble": ("test_ai_onnx_ml_tree_ensemble_set_membership",),
    "RoiAlign": ("test_roialign_aligned_true", "test_roialign_mode_max"), "MelWeightMatrix": ("test_melweightmatrix",),
    "NonZero": ("test_nonzero_example",), "Compress": ("test_compress_0", "test_compress_default_axis"),
    "Unique": ("test_unique_not_sorted_without_axis", "test_unique_sorted_without_axis",
               "test_unique_sorted_with_axis_3d"),
    "NonMaxSuppression": ("test_nonmaxsuppression_suppress_by_IOU_and_scores", "test_nonmaxsuppression_two_classes"),
}
FOLDED: dict[str, tuple[str, ...]] = {
    # op -> node cases CI runs with every input an initializer (OnnxImporter.fold)
    "Add": ("test_add_bcast",), "Sub": ("test_sub_bcast",), "Mul": ("test_mul_bcast",),
    "Div": ("test_div_int32_trunc", "test_div_bcast"), "Equal": ("test_equal_bcast",), "Less": ("test_less_bcast", "test_less_int8"),
    "Greater": ("test_greater_bcast",), "Max": ("test_max_example", "test_max_one_input"), "Min": ("test_min_example",),
    "Identity": ("test_identity",), "Dropout": ("test_dropout_default_mask_ratio", "test_training_dropout_zero_ratio_mask"),
    "Cast": ("test_cast_FLOAT_to_DOUBLE", "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2"), "Gather": ("test_gather_negative_indices", "test_gather_2d_indices"),
    "Concat": ("test_concat_3d_axis_negative_3",), "Unsqueeze": ("test_unsqueeze_negative_axes",),
    "Squeeze": ("test_squeeze_negative_axes",), "Reshape": ("test_reshape_allowzero_reordered",),
    "Slice": ("test_slice_neg_steps", "test_slice_negative_axes"),
    "ConstantOfShape": ("test_constantofshape_float_ones", "test_constantofshape_int_shape_zero"),
    "Range": ("test_range_float_type_positive_delta", "test_range_int32_type_negative_delta"),
    "Transpose": ("test_transpose_default", "test_transpose_all_permutations_4"),
    "Where": ("test_where_long_example",), "Neg": ("test_neg",), "Not": ("test_not_2d",), "Expand": ("test_expand_dim_changed",),
    "Constant": ("test_constant",), "Shape": ("test_shape_start_negative_1", "test_shape_end_negative_1", "test_shape_clip_end"),
    "Size": ("test_size",), "CastLike": ("test_castlike_FLOAT_to_DOUBLE",),
}


def _cases(names: set[str], ops: set[str]) -> dict[str, Case]:
    """The node cases of `ops` and the model cases among `names`."""
    cases = dict(node_cases(frozenset(ops)))
    for name in names:
        if "/" in name:
            folder = DATA / name
            data = folder / "test_data_set_0"

            def read(prefix: str) -> list[np.ndarray]:
                files = sorted(data.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
                return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in files]

            cases[name] = Case(name, onnx.load(str(folder / "model.onnx")), read("input"), read("output"))
    return cases


@cache
def ci_cases() -> dict[str, Case]:
    names = {n for group in (*SUBSET.values(), *FOLDED.values()) for n in group}
    return _cases(names, {op for op in (*SUBSET, *FOLDED) if any("/" not in n for n in SUBSET.get(op, FOLDED.get(op)))})


@cache
def all_cases() -> dict[str, Case]:
    return {**node_cases(frozenset(handler_ops() | fold_ops())), **model_cases()}


def _runs() -> list[tuple[str, bool]]:
    """(case name, folded) of every run of this session: the CI subset, or every case."""
    if not FULL:
        return sorted({(n, False) for names in SUBSET.values() for n in names}
                      | {(n, True) for names in FOLDED.values() for n in names})
    cases, folds = all_cases(), fold_ops()
    return [(n, f) for n, c in cases.items() for f in (False, True) if not f or c.ops <= folds and all(
        i.type.HasField("tensor_type") for i in c.model.graph.input) and not is_random(c)]


@cache
def outcome(name: str, folded: bool) -> tuple[str, str]:
    cases = all_cases() if FULL else ci_cases()
    return run_case(cases[name], folded)


@pytest.mark.parametrize("name,folded", _runs(), ids=lambda v: v if isinstance(v, str) else "folded" if v else "graph")
def test_node_case(name, folded):
    """CI's cases pass; in the full suite each case passes or is refused with a CompileError."""
    result, detail = outcome(name, folded)
    allowed = ("pass", "refused") if FULL else ("pass",)
    assert result in allowed, f"{name}{' (folded)' if folded else ''}: {result}: {detail}"


WITHOUT_NODE_CASES = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial"}
"""Handled operators ONNX ships no node case of (random ones): tests/api/test_onnx_random.py tests them."""


def test_every_handler_has_a_passing_case():
    """Each `op_*` handler passes a graph case of CI's subset containing its op, and each op
    `fold` computes passes a folded case of it."""
    cases = ci_cases()
    missing = []
    for op in sorted(handler_ops() - WITHOUT_NODE_CASES):
        if not any(op in cases[n].ops and outcome(n, False)[0] == "pass" for n in SUBSET.get(op, ())):
            missing.append(op)
    for op in sorted(fold_ops()):
        if not any(op in cases[n].ops and outcome(n, True)[0] == "pass" for n in FOLDED.get(op, ())):
            missing.append(f"{op} (folded)")
    assert not missing, f"handlers without a passing case: {missing}"


def test_hand_written_defaults_agree_with_the_schema():
    """The importer reads schema defaults (`schema_defaults`); a default it writes itself
    (`attrs.get(name, default)`) is for an attribute whose schema has none, or equals the
    schema's in every opset of every handled op that has it."""
    import ast

    from dfc.importers import (
        onnx_control_flow,
        onnx_import,
        onnx_math_ops,
        onnx_nn_ops,
        onnx_random_ops,
        onnx_recurrent,
        onnx_shape_ops,
    )

    modules = (onnx_import, onnx_math_ops, onnx_nn_ops, onnx_shape_ops, onnx_control_flow, onnx_recurrent,
               onnx_random_ops)
    trees = [ast.parse(inspect.getsource(m)) for m in modules]
    written = []
    for node in (n for tree in trees for n in ast.walk(tree)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "attrs" and len(node.args) == 2):
            written.append((node.args[0].value, node.args[1]))
    assert written
    ops = handler_ops() | fold_ops()
    for name, default in written:
        for op in ops:
            for opset in range(1, onnx.defs.onnx_opset_version() + 1):
                schema = onnx_import.schema_defaults(op, opset)
                if name in schema:
                    assert isinstance(default, ast.Constant) and schema[name] == default.value, (op, opset, name)


def test_schema_defaults_are_read():
    from dfc.importers.onnx_import import schema_defaults

    assert schema_defaults("Flatten", 13)["axis"] == 1
    assert schema_defaults("Softmax", 11)["axis"] == 1 and schema_defaults("Softmax", 13)["axis"] == -1
    assert schema_defaults("Gelu", 20)["approximate"] == "none"
    assert "perm" not in schema_defaults("Transpose", 13)


def main() -> None:
    """Print each run's outcome and the counts (`DFC_ONNX_NODE_SUITE=1` for every case)."""
    counts: Counter[str] = Counter()
    for name, folded in _runs():
        result, detail = outcome(name, folded)
        counts[result] += 1
        print(f"{result:9s} {name}{' [folded]' if folded else ''}: {detail[:160]}", flush=True)
    print(f"{sum(counts.values())} runs: " + ", ".join(f"{k} {counts[k]}" for k in ("pass", "refused", "wrong", "internal")))


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------- regressions and axis checks


def _model(nodes, inputs, outputs, initializers=(), opset=18):
    """A model of `nodes`; `inputs`/`outputs` map names to (numpy dtype, shape)."""
    from onnx import helper

    def info(name, dtype, shape):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)

    graph = helper.make_graph(nodes, "g", [info(n, *t) for n, t in inputs.items()],
                              [info(n, *t) for n, t in outputs.items()],
                              [numpy_helper.from_array(v, n) for n, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", opset)])


@pytest.mark.parametrize("axis,indices", [(0, [-1, 0, -2]), (1, [[-1, 0], [-3, 2]])])
def test_gather_wraps_negative_indices_given_at_run_time(axis, indices):
    """Forward equals onnxruntime; the table's gradient equals torch's autograd (float64), on
    the interpreter and (axis 0) the engine."""
    ort = pytest.importorskip("onnxruntime")
    torch = pytest.importorskip("torch")
    from onnx import helper

    rng = np.random.default_rng(0)
    table, ids = rng.standard_normal((4, 3)), np.array(indices, np.int64)
    out_shape = np.take(table, ids, axis=axis).shape
    model = _model([helper.make_node("Gather", ["table", "ids"], ["y"], axis=axis)], {"ids": (np.int64, ids.shape)},
                   {"y": (np.float64, out_shape)}, [("table", table)])
    f = from_onnx(model)
    assert [n for n, _ in f.parameters] == ["table"]
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"ids": ids})[0]
    np.testing.assert_array_equal(interpret(f.module, "main", ids, table), want)

    seed = rng.standard_normal(out_shape)
    y, d_table = interpret(f.autodiff_module(), "main_grad", ids, table, seed)
    np.testing.assert_array_equal(y, want)
    t = torch.tensor(table, requires_grad=True)
    (t[torch.from_numpy(ids)] if axis == 0 else t[:, torch.from_numpy(ids)]).backward(torch.from_numpy(seed))
    np.testing.assert_allclose(d_table, t.grad.numpy(), rtol=1e-15)
    if axis == 0:  # the engine too (`f(ids)` compiles the module)
        np.testing.assert_array_equal(f(ids), want)
        _, pullback = dfc.vjp(f, ids, table)
        np.testing.assert_allclose(pullback(seed)[1], t.grad.numpy(), rtol=1e-15)


def test_gather_clamps_run_time_indices_outside_the_dimension():
    """The documented behaviour outside [-size, size) (onnxruntime raises): the nearest end."""
    from onnx import helper

    table, ids = np.arange(12.0).reshape(4, 3), np.array([4, 9, -5, -9], np.int64)
    model = _model([helper.make_node("Gather", ["table", "ids"], ["y"])], {"ids": (np.int64, [4])},
                   {"y": (np.float64, [4, 3])}, [("table", table)])
    f = from_onnx(model)
    np.testing.assert_array_equal(interpret(f.module, "main", ids, table), table[[3, 3, 0, 0]])


def test_gather_refuses_constant_indices_outside_the_dimension():
    from onnx import helper

    model = _model([helper.make_node("Gather", ["table", "ids"], ["y"], name="g0")], {"table": (np.float32, [4, 3])},
                   {"y": (np.float32, [2, 3])}, [("ids", np.array([1, -5], np.int64))])
    with pytest.raises(CompileError, match=r"node 'g0' \(Gather\): Gather index -5 is out of range for a dimension of 4"):
        import_onnx(model)


@pytest.mark.parametrize("axis,shape", [(-1, (6, 4)), (-2, (2, 12)), (-3, (1, 24)), (0, (1, 24)), (3, (24, 1))])
def test_flatten_axis_counts_from_the_end(axis, shape):
    """Flatten of a 2x3x4 tensor at `axis` (negative: `axis + rank`) equals onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper

    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    model = _model([helper.make_node("Flatten", ["x"], ["y"], axis=axis)], {"x": (np.float32, x.shape)},
                   {"y": (np.float32, shape)})
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    assert want.shape == shape
    got = interpret(import_onnx(model)[0], "main", x)
    assert got.shape == shape
    np.testing.assert_array_equal(got, want)


def test_softmax_before_opset_13_runs_on_the_2d_view():
    """Opset 11 Softmax with axis 1 of a 2x3x4 tensor normalises over 3x4 together, as onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper

    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for op in ("Softmax", "LogSoftmax"):
        model = _model([helper.make_node(op, ["x"], ["y"], axis=1)], {"x": (np.float32, x.shape)},
                       {"y": (np.float32, x.shape)}, opset=11)
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
        np.testing.assert_allclose(interpret(import_onnx(model)[0], "main", x), want, rtol=1e-6, err_msg=op)


def _refusal(op, attrs, shape, extra=(), outputs=1):
    from onnx import helper

    names = ["x", *[n for n, _ in extra]]
    return _model([helper.make_node(op, names, [f"y{k}" for k in range(outputs)], name="n0", **attrs)],
                  {"x": (np.float32, shape)}, {f"y{k}": (np.float32, None) for k in range(outputs)}, list(extra))


AXIS_ERRORS = {
    "flatten": (("Flatten", {"axis": 4}, [2, 3, 4]), r"axis 4 is out of range \[-3, 3\] for rank 3"),
    "flatten_negative": (("Flatten", {"axis": -4}, [2, 3, 4]), r"axis -4 is out of range \[-3, 3\]"),
    "concat": (("Concat", {"axis": -3}, [2, 3]), r"axis -3 is out of range \[-2, 1\] for rank 2"),
    "gather": (("Gather", {"axis": 2}, [2, 3], [("i", np.array([0], np.int64))]), r"axis 2 is out of range"),
    "softmax": (("Softmax", {"axis": -4}, [2, 3, 4]), r"axis -4 is out of range \[-3, 2\]"),
    "layernorm": (("LayerNormalization", {"axis": 2}, [2, 2], [("s", np.ones(2, np.float32))]), r"axis 2 is out"),
    "reduce": (("ReduceSum", {}, [2, 3], [("a", np.array([1, -1], np.int64))]), r"axes \[1, -1\] name a dimension twice"),
    "reduce_range": (("ReduceMax", {"axes": [2]}, [2, 3], (), 1), r"axes 2 is out of range"),
    "squeeze": (("Squeeze", {}, [2, 1], [("a", np.array([0], np.int64))]), r"Squeeze of axes \[0\] of shape \[2, 1\]: a squeezed dimension is not 1"),
    "unsqueeze": (("Unsqueeze", {}, [2, 3], [("a", np.array([3], np.int64))]), r"axes 3 is out of range \[-3, 2\]"),
    "transpose": (("Transpose", {"perm": [0, 0]}, [2, 3]), r"Transpose perm \[0, 0\] is not a permutation"),
    "slice": (("Slice", {}, [2, 3], [("s", np.array([0], np.int64)), ("e", np.array([1], np.int64)),
                                     ("a", np.array([2], np.int64))]), r"axes 2 is out of range"),
}


@pytest.mark.parametrize("name", AXIS_ERRORS)
def test_an_axis_outside_the_rank_is_refused_naming_the_node(name):
    (op, attrs, shape, *rest), message = AXIS_ERRORS[name]
    extra = rest[0] if rest else ()
    model = _refusal(op, attrs, shape, extra)
    if name == "reduce_range":
        model.opset_import[0].version = 13
    with pytest.raises(CompileError, match=rf"node 'n0' \({op}\): {message}"):
        import_onnx(model)


GRADIENT_CASES = ("resize linear", "resize linear align_corners", "resize nearest", "pad reflect", "pad edge",
                  "pad wrap", "pad constant", "cumsum reverse exclusive", "gather_elements", "gather_nd",
                  "group_norm", "einsum", "tile", "clip", "resize pytorch_half_pixel", "elu", "selu", "celu",
                  "leaky_relu", "prelu", "thresholded_relu", "hard_sigmoid", "hard_swish", "softplus", "softsign",
                  "mish", "swish", "gelu tanh", "reciprocal", "sinh", "cosh", "atan", "asin", "acos", "asinh", "acosh",
                  "atanh", "mod fmod", "sum", "mean", "reduce_l1", "reduce_l2", "reduce_sum_square", "reduce_log_sum",
                  "reduce_log_sum_exp", "reduce_prod", "lp_normalization", "rms_normalization", "trilu",
                  "depth_to_space", "space_to_depth", "cumprod exclusive", "hardmax", "global_max_pool",
                  "nll_loss weight ignore_index", "softmax_cross_entropy spatial weight", "softmax_cross_entropy sum",
                  "shrink", "attention causal", "attention 3d gqa mask softcap", "scatter_nd add",
                  "scatter_elements", "lrn", "mean_variance_normalization", "average_pool exclude pad",
                  "conv_transpose groups", "lp_pool")


def _grad_cases():
    """(name, node of x, its constant inputs, x's shape, torch's function of x, opset), one per op (and
    form) built of nn ops, which differentiate it: the result and x's gradient are compared."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    from onnx import helper

    def node(op, inputs=(), **attrs):
        return helper.make_node(op, ["x", *inputs], ["y"], **attrs)

    rng = np.random.default_rng(1)
    ids = rng.integers(-3, 3, (2, 4))
    ids_nd = np.array([[[1, -1], [0, 2]], [[0, 0], [1, 1]]], np.int64)
    w, b, m = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal((5, 4))
    f64 = np.float64
    return [
        ("resize linear", node("Resize", ["", "s"], mode="linear"), [("s", np.array([1, 1, 2, 2], np.float32))],
         (1, 2, 3, 4), lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), 19),
        ("resize linear align_corners", node("Resize", ["", "", "n"], mode="linear",
                                             coordinate_transformation_mode="align_corners"),
         [("n", np.array([1, 2, 5, 7], np.int64))], (1, 2, 3, 4),
         lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True), 19),
        ("resize nearest", node("Resize", ["", "", "n"], coordinate_transformation_mode="asymmetric",
                                nearest_mode="floor"), [("n", np.array([1, 2, 5, 7], np.int64))], (1, 2, 3, 4),
         lambda x: F.interpolate(x, size=(5, 7)), 19),
        ("pad reflect", node("Pad", ["p"], mode="reflect"), [("p", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))],
         (1, 2, 4, 5), lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), 18),
        ("pad edge", node("Pad", ["p"], mode="edge"), [("p", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))],
         (1, 2, 4, 5), lambda x: F.pad(x, (2, 1, 1, 2), mode="replicate"), 18),
        ("pad wrap", node("Pad", ["p"], mode="wrap"), [("p", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))],
         (1, 2, 4, 5), lambda x: F.pad(x, (2, 1, 1, 2), mode="circular"), 19),
        ("pad constant", node("Pad", ["p", "v"]), [("p", np.array([1, -1, 0, 2], np.int64)), ("v", np.array(0.5))],
         (3, 4), lambda x: F.pad(x, (-1, 2, 1, 0), value=0.5), 18),
        ("cumsum reverse exclusive", node("CumSum", ["a"], reverse=1, exclusive=1), [("a", np.array(1))], (3, 6),
         lambda x: x.flip(1).cumsum(1).flip(1) - x, 14),
        ("gather_elements", node("GatherElements", ["i"], axis=1), [("i", ids)], (3, 5),
         lambda x: torch.gather(x, 1, torch.from_numpy(np.where(ids < 0, ids + 5, ids))), 13),
        ("gather_nd", node("GatherND", ["i"], batch_dims=1), [("i", ids_nd)], (2, 3, 4),
         lambda x: x[torch.tensor([[0, 0], [1, 1]]), torch.from_numpy(ids_nd[..., 0] % 3),
                     torch.from_numpy(ids_nd[..., 1] % 4)], 13),
        ("group_norm", node("GroupNormalization", ["w", "b"], num_groups=2, epsilon=0.25),
         [("w", w), ("b", b)], (2, 4, 3),
         lambda x: F.group_norm(x, 2, torch.from_numpy(w), torch.from_numpy(b), eps=0.25), 21),
        ("einsum", helper.make_node("Einsum", ["x", "m"], ["y"], equation="bij,kj->bki"), [("m", m)], (2, 3, 4),
         lambda x: torch.einsum("bij,kj->bki", x, torch.from_numpy(m)), 13),
        ("tile", node("Tile", ["r"]), [("r", np.array([2, 1, 3], np.int64))], (2, 3, 2),
         lambda x: x.repeat(2, 1, 3), 13),
        ("clip", node("Clip", ["lo", "hi"]), [("lo", np.array(-0.5)), ("hi", np.array(0.7))], (4, 5),
         lambda x: x.clamp(-0.5, 0.7), 13),
        ("resize pytorch_half_pixel", node("Resize", ["", "s"], mode="linear",
                                           coordinate_transformation_mode="pytorch_half_pixel"),
         [("s", np.array([1, 1, 0.5, 1.5], np.float32))], (1, 1, 6, 4),
         lambda x: F.interpolate(x, scale_factor=(0.5, 1.5), mode="bilinear"), 19),
        *_grad_cases_of_functions(torch, node, rng),
    ], f64


def _grad_cases_of_functions(torch, node, rng):
    """The elementwise functions, reductions and rearrangements built of nn ops (as `_grad_cases`, and
    optionally a map of the random x into the function's domain)."""
    F = torch.nn.functional

    slope = rng.standard_normal((1, 5))
    scale = rng.standard_normal(5) + 1
    m = rng.standard_normal((3, 5))
    labels, labels2 = np.array([1, 2, 4], np.int64), rng.integers(0, 4, (3, 2))
    keys, values = rng.standard_normal((1, 2, 5, 4)), rng.standard_normal((1, 2, 5, 4))
    keys3, values3 = rng.standard_normal((1, 5, 4)), rng.standard_normal((1, 5, 6))
    rows, updates = np.array([[1], [-1], [1]], np.int64), rng.standard_normal((3, 5))
    columns = np.array([[4, 0], [-1, 2], [3, 1]], np.int64)
    kernel = rng.standard_normal((4, 3, 2, 3))
    mask = rng.random((3, 5)) < 0.7
    mask[:, 0] = True
    s35 = (3, 5)
    return [
        ("elu", node("Elu", alpha=0.75), [], s35, lambda x: F.elu(x, 0.75), 22),
        ("selu", node("Selu"), [], s35, lambda x: float(np.float32(1.0507009873554805)) * F.elu(
            x, float(np.float32(1.6732632423543772))), 22),
        ("celu", node("Celu", alpha=1.5), [], s35, lambda x: F.celu(x, 1.5), 12),
        ("leaky_relu", node("LeakyRelu", alpha=0.125), [], s35, lambda x: F.leaky_relu(x, 0.125), 16),
        ("prelu", node("PRelu", ["s"]), [("s", slope)], s35, lambda x: torch.where(x < 0, x * torch.from_numpy(slope), x),
         16),
        ("thresholded_relu", node("ThresholdedRelu", alpha=0.25), [], s35, lambda x: F.threshold(x, 0.25, 0.0), 22),
        ("hard_sigmoid", node("HardSigmoid", alpha=0.375, beta=0.625), [], s35, lambda x: (0.375 * x + 0.625).clamp(0, 1), 22),
        ("hard_swish", node("HardSwish"), [], s35, F.hardswish, 22),
        ("softplus", node("Softplus"), [], s35, F.softplus, 22),
        ("softsign", node("Softsign"), [], s35, F.softsign, 22),
        ("mish", node("Mish"), [], s35, F.mish, 22),
        ("swish", node("Swish", alpha=1.5), [], s35, lambda x: x * torch.sigmoid(1.5 * x), 24),
        ("gelu tanh", node("Gelu", approximate="tanh"), [], s35, lambda x: F.gelu(x, approximate="tanh"), 20),
        ("reciprocal", node("Reciprocal"), [], s35, torch.reciprocal, 13),
        ("sinh", node("Sinh"), [], s35, torch.sinh, 22),
        ("cosh", node("Cosh"), [], s35, torch.cosh, 22),
        ("atan", node("Atan"), [], s35, torch.atan, 22),
        ("asin", node("Asin"), [], s35, torch.asin, 22, np.tanh),
        ("acos", node("Acos"), [], s35, torch.acos, 22, np.tanh),
        ("asinh", node("Asinh"), [], s35, torch.asinh, 22),
        ("acosh", node("Acosh"), [], s35, torch.acosh, 22, lambda x: x * x + 1.5),
        ("atanh", node("Atanh"), [], s35, torch.atanh, 22, np.tanh),
        ("mod fmod", node("Mod", ["m"], fmod=1), [("m", m)], s35, lambda x: torch.fmod(x, torch.from_numpy(m)), 13),
        ("sum", node("Sum", ["m", "x"]), [("m", m)], s35, lambda x: x + torch.from_numpy(m) + x, 13),
        ("mean", node("Mean", ["m"]), [("m", m)], s35, lambda x: (x + torch.from_numpy(m)) / 2, 13),
        ("reduce_l1", node("ReduceL1", keepdims=0), [], s35, lambda x: x.abs().sum(), 13),
        ("reduce_l2", node("ReduceL2", axes=[1]), [], s35, lambda x: x.norm(dim=1, keepdim=True), 13),
        ("reduce_sum_square", node("ReduceSumSquare", axes=[0]), [], s35, lambda x: (x * x).sum(0, keepdim=True), 13),
        ("reduce_log_sum", node("ReduceLogSum", axes=[1]), [], s35, lambda x: x.sum(1, keepdim=True).log(), 13,
         np.abs),
        ("reduce_log_sum_exp", node("ReduceLogSumExp", axes=[1], keepdims=0), [], s35,
         lambda x: torch.logsumexp(x, 1), 13),
        ("reduce_prod", node("ReduceProd", axes=[1]), [], s35, lambda x: x.prod(1, keepdim=True), 13),
        ("lp_normalization", node("LpNormalization", axis=1), [], s35, lambda x: F.normalize(x, dim=1), 22),
        ("rms_normalization", node("RMSNormalization", ["s"], epsilon=0.125), [("s", scale)], s35,
         lambda x: x / (x * x).mean(-1, keepdim=True).add(0.125).sqrt() * torch.from_numpy(scale), 23),
        ("trilu", node("Trilu", ["k"], upper=0), [("k", np.array(1, np.int64))], s35, lambda x: torch.tril(x, 1), 14),
        ("depth_to_space", node("DepthToSpace", blocksize=2, mode="CRD"), [], (1, 8, 2, 3),
         lambda x: F.pixel_shuffle(x, 2), 13),
        ("space_to_depth", node("SpaceToDepth", blocksize=2), [], (1, 2, 4, 6),
         lambda x: x.reshape(1, 2, 2, 2, 3, 2).permute(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3), 13),
        ("cumprod exclusive", node("CumProd", ["a"], exclusive=1), [("a", np.array(1))], s35,
         lambda x: torch.cat([torch.ones(3, 1, dtype=x.dtype), x[:, :-1]], 1).cumprod(1), 26),
        ("hardmax", node("Hardmax"), [], s35, lambda x: F.one_hot(x.argmax(-1), 5).to(x.dtype) + 0 * x, 13),
        ("global_max_pool", node("GlobalMaxPool"), [], (2, 3, 4, 5), lambda x: x.amax((2, 3), keepdim=True), 13),
        ("nll_loss weight ignore_index", node("NegativeLogLikelihoodLoss", ["t", "w"], ignore_index=2),
         [("t", labels), ("w", scale)], s35, lambda x: F.nll_loss(x, torch.from_numpy(labels), torch.from_numpy(scale),
                                                                   ignore_index=2), 13),
        ("softmax_cross_entropy spatial weight", node("SoftmaxCrossEntropyLoss", ["t", "w"]),
         [("t", labels2), ("w", scale[:4])], (3, 4, 2), lambda x: F.cross_entropy(
             x, torch.from_numpy(labels2), torch.from_numpy(scale[:4])), 13),
        ("softmax_cross_entropy sum", node("SoftmaxCrossEntropyLoss", ["t"], reduction="sum"), [("t", labels)], s35,
         lambda x: F.cross_entropy(x, torch.from_numpy(labels), reduction="sum"), 13),
        ("shrink", node("Shrink", lambd=0.375, bias=0.125), [], s35, lambda x: torch.where(
            x < -0.375, x + 0.125, torch.where(x > 0.375, x - 0.125, 0 * x)), 13),
        ("attention causal", node("Attention", ["k", "v"], is_causal=1), [("k", keys), ("v", values)], (1, 2, 3, 4),
         lambda x: F.scaled_dot_product_attention(x, torch.from_numpy(keys), torch.from_numpy(values), is_causal=True),
         23),
        ("attention 3d gqa mask softcap", node("Attention", ["k3", "v3", "mask"], q_num_heads=4, kv_num_heads=2,
                                               softcap=2.0), [("k3", keys3), ("v3", values3), ("mask", mask)], (1, 3, 8),
         lambda x: _torch_attention(torch, x, keys3, values3, mask, 4, 2, 2.0), 23),
        ("scatter_nd add", node("ScatterND", ["i", "u"], reduction="add"), [("i", rows), ("u", updates)], s35,
         lambda x: x.index_put((torch.from_numpy(rows[:, 0] % 3),), torch.from_numpy(updates), accumulate=True), 16),
        ("scatter_elements", node("ScatterElements", ["i", "u"], axis=1), [("i", columns), ("u", updates[:, :2])], s35,
         lambda x: x.scatter(1, torch.from_numpy(columns % 5), torch.from_numpy(updates[:, :2])), 16),
        ("lrn", node("LRN", size=3, alpha=0.5, beta=0.75, bias=1.5), [], (2, 5, 3, 2),
         lambda x: F.local_response_norm(x, 3, 0.5, 0.75, 1.5), 13),
        ("mean_variance_normalization", node("MeanVarianceNormalization"), [], (2, 3, 4, 2),
         lambda x: (x - x.mean((0, 2, 3), keepdim=True)) / (x.var((0, 2, 3), unbiased=False, keepdim=True).sqrt()
                                                         + 1e-9), 13),
        ("average_pool exclude pad", node("AveragePool", kernel_shape=[3, 2], pads=[1, 1, 1, 0], strides=[2, 1]), [],
         (1, 2, 5, 4), lambda x: _torch_average_pool(torch, x), 13),
        ("conv_transpose groups", node("ConvTranspose", ["w"], group=2, strides=[2, 3], pads=[1, 0, 0, 2],
                                       output_padding=[1, 0], dilations=[1, 2]), [("w", kernel)], (1, 4, 3, 4),
         lambda x: F.conv_transpose2d(x, torch.from_numpy(kernel), stride=(2, 3), padding=0, output_padding=(1, 0),
                                      groups=2, dilation=(1, 2))[:, :, 1:, :-2], 13),
        ("lp_pool", node("LpPool", kernel_shape=[2, 3], strides=[2, 1], p=2), [], (1, 2, 4, 5),
         lambda x: F.lp_pool2d(x, 2, (2, 3), (2, 1)), 18),
    ]


def _torch_average_pool(torch, x):
    """The mean over the window's elements inside x (3x2 window, strides 2x1, pads (1, 1) before, (1, 0) after)."""
    padded = torch.nn.functional.pad(x, (1, 0, 1, 1))
    ones = torch.nn.functional.pad(torch.ones_like(x), (1, 0, 1, 1))
    total = torch.nn.functional.avg_pool2d(padded, (3, 2), (2, 1), divisor_override=1)
    return total / torch.nn.functional.avg_pool2d(ones, (3, 2), (2, 1), divisor_override=1)


def _torch_attention(torch, x, k, v, mask, q_heads, kv_heads, softcap):
    """Grouped-query attention of 3-D [B, S, H * D] inputs with a boolean mask and softcap, in torch."""
    def heads(t, h):
        b, s, hd = t.shape
        return t.reshape(b, s, h, hd // h).transpose(1, 2)

    q, k, v = heads(x, q_heads), heads(torch.from_numpy(k), kv_heads), heads(torch.from_numpy(v), kv_heads)
    k, v = (t.repeat_interleave(q_heads // kv_heads, 1) for t in (k, v))
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    scores = torch.tanh(scores / softcap) * softcap
    scores = scores.masked_fill(~torch.from_numpy(mask), -float("inf"))
    y = torch.softmax(scores, -1) @ v
    return y.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)


@pytest.mark.parametrize("k", range(len(GRADIENT_CASES)), ids=lambda k: GRADIENT_CASES[k])
def test_gradients_equal_torch(k):
    """The forward and the gradient of x (float64, a seed of random numbers) equal torch's autograd (the
    gradient up to 1e-14 of its largest element)."""
    torch = pytest.importorskip("torch")
    cases, f64 = _grad_cases()
    assert [c[0] for c in cases] == list(GRADIENT_CASES)
    name, node, constants, shape, fn, opset, *domain = cases[k]
    x = np.random.default_rng(k).standard_normal(shape)
    x = domain[0](x) if domain else x
    t = torch.tensor(x, requires_grad=True)
    want = fn(t)
    model = _model([node], {"x": (f64, shape)}, {"y": (f64, None)}, constants, opset=opset)
    f = from_onnx(model, parameters=[])
    seed = np.random.default_rng(k + 100).standard_normal(tuple(want.shape))
    y, dx = interpret(f.autodiff_module(), "main_grad", x, seed)
    want.backward(torch.from_numpy(seed))
    np.testing.assert_allclose(y, want.detach().numpy(), rtol=1e-12, atol=0, err_msg=name)
    floor = 1e-14 * float(np.abs(t.grad.numpy()).max())  # an exact 0 where torch's rounding leaves 1e-17
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-12, atol=floor, err_msg=name)


@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_orders_ties_and_infinities_by_index(largest):
    """TopK of rows with ties and infinities equals a stable argsort (the lower index first among equal
    values, every index once); the gradient of the values goes to the elements taken (float64)."""
    from onnx import helper

    inf = np.inf
    x = np.array([[1.0, 3.0, 3.0, -inf, 0.5, 3.0], [-inf, -inf, 2.0, inf, inf, -inf], [inf, 0.0, -inf, 0.0, inf, inf]])
    k = 5
    model = _model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=largest)],
                   {"x": (np.float64, x.shape)}, {"v": (np.float64, (3, k)), "i": (np.int64, (3, k))},
                   [("k", np.array([k], np.int64))], opset=11)
    f = from_onnx(model, parameters=[])
    order = np.argsort(-x if largest else x, axis=1, kind="stable")[:, :k]
    values, indices = interpret(f.module, "main", x)
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, 1))
    seed = np.arange(15.0).reshape(3, k) + 1
    _, _, dx = interpret(f.autodiff_module(), "main_grad", x, seed)
    want = np.zeros_like(x)
    np.put_along_axis(want, order, seed, 1)
    np.testing.assert_array_equal(dx, want)


def test_resize_scales_initializer_is_a_constant():
    """A float initializer of several elements used only as Resize's scales (as the dynamo exporter writes
    it) is a constant, not a weight; the result equals onnxruntime's."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper

    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    model = _model([helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")], {"x": (np.float32, x.shape)},
                   {"y": (np.float32, (1, 2, 6, 8))}, [("s", np.array([1, 1, 2, 2], np.float32))])
    f = from_onnx(model)
    assert f.parameters == []
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(f(x), want, rtol=1e-6)


UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("op", ["Div", "Mod", "Less", "GreaterOrEqual", "Max", "Min", "Add", "Sub", "Mul"])
def test_unsigned_integers_use_their_values(op, dtype):
    """Operands at the top of the range (the top bit set, where the signed bits differ), on the interpreter
    and, through `from_onnx`'s calling convention, the engine: equal to numpy's unsigned arithmetic."""
    from onnx import helper

    top = np.iinfo(dtype).max
    a = np.array([top, top - 1, top // 2 + 1, 7, 0, 200, top // 3], dtype)
    b = np.array([1, top, 3, top // 2 + 2, 5, 7, 2], dtype)
    want = {"Div": a // b, "Mod": a % b, "Less": a < b, "GreaterOrEqual": a >= b, "Max": np.maximum(a, b),
            "Min": np.minimum(a, b), "Add": a + b, "Sub": a - b, "Mul": a * b}[op]
    model = _model([helper.make_node(op, ["a", "b"], ["y"])], {"a": (dtype, [7]), "b": (dtype, [7])},
                   {"y": (want.dtype, [7])}, opset=13)
    f = from_onnx(model)
    got = with_onnx_dtype(interpret(f.module, "main", signless(a), signless(b)), want.dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(f(a, b), want)


@pytest.mark.parametrize("source,target", [(np.uint64, np.float64), (np.uint64, np.float32), (np.uint32, np.float32),
                                           (np.uint8, np.int32), (np.uint16, np.uint64), (np.float64, np.uint64),
                                           (np.float32, np.uint8), (np.int8, np.uint16), (np.uint32, np.int64)])
def test_cast_of_unsigned_integers_converts_their_values(source, target):
    from onnx import helper

    if np.dtype(source).kind == "u":
        x = np.array([np.iinfo(source).max, 1 << (np.iinfo(source).bits - 1), 3, 0], source)
    elif np.dtype(source).kind == "i":
        x = np.array([-1, -128, 5, 0], source)
    else:
        x = np.array([2.0 ** 63 + 2.0 ** 40, 255.0, 3.0, 0.0] if target == np.uint64 else [255.0, 128.0, 3.0, 0.0],
                     source)
    want = x.astype(target)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=helper.np_dtype_to_tensor_dtype(np.dtype(target)))],
                   {"x": (source, [4])}, {"y": (target, [4])}, opset=13)
    np.testing.assert_array_equal(from_onnx(model)(x), want)
    got = with_onnx_dtype(interpret(import_onnx(model)[0], "main", signless(x)), target)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_an_operator_without_an_unsigned_form_refuses_unsigned_operands():
    from onnx import helper

    model = _model([helper.make_node("Sign", ["x"], ["y"], name="s0")], {"x": (np.uint8, [3])}, {"y": (np.uint8, [3])},
                   opset=13)
    with pytest.raises(CompileError, match=r"node 's0' \(Sign\): Sign of unsigned integers is not supported"):
        import_onnx(model)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint8, np.int8])
def test_top_k_of_integers_ranks_their_values(dtype):
    """Integers of every width (unsigned ones by value, the top bit set too): values and indices equal a
    stable argsort's (of Python integers: int64 and uint64 have no common exact numpy type)."""
    from onnx import helper

    info = np.iinfo(dtype)
    x = np.array([[info.max, 3, info.min, 3, 0], [1, info.max - 1, 7, info.min + 1, 7]], dtype)
    model = _model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)], {"x": (dtype, x.shape)},
                   {"v": (dtype, (2, 3)), "i": (np.int64, (2, 3))}, [("k", np.array([3], np.int64))], opset=11)
    order = np.array([sorted(range(5), key=lambda j: -int(row[j]))[:3] for row in x])
    values, indices = from_onnx(model)(x)
    np.testing.assert_array_equal(indices, order)
    assert values.dtype == x.dtype
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, 1))
