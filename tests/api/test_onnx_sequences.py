"""ONNX sequences and optionals (`onnx_sequences`): structured inputs and outputs of `from_onnx` against
onnxruntime, gradients through sequence ops against finite differences, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

import dfc  # noqa: E402
from dfc import CompileError  # noqa: E402
from dfc.importers.onnx_import import from_onnx, import_onnx  # noqa: E402


def _model(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", opset)])


def _sequence_info(name, shape=None):
    return helper.make_tensor_sequence_value_info(name, TensorProto.DOUBLE, shape)


def _split_insert_concat():
    """seq -> insert x at 1 -> erase the last -> concat along 0; and the seq after the insert."""
    nodes = [
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.INT64, [], [1])),
        helper.make_node("SequenceInsert", ["seq", "x", "one"], ["inserted"]),
        helper.make_node("SequenceErase", ["inserted"], ["erased"]),
        helper.make_node("ConcatFromSequence", ["erased"], ["y"], axis=0),
    ]
    return _model(nodes, [_sequence_info("seq"), helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])],
                  [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None), _sequence_info("inserted")])


def test_sequence_inputs_and_outputs_equal_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(0)
    seq = [rng.standard_normal((k, 3)) for k in (1, 4, 2)]
    x = rng.standard_normal((2, 3))
    model = _split_insert_concat()
    f = from_onnx(model, examples={"seq": seq})
    y, inserted = f(seq, x)
    want_y, want_inserted = ort.InferenceSession(model.SerializeToString()).run(None, {"seq": seq, "x": x})
    np.testing.assert_array_equal(y, want_y)
    assert isinstance(inserted, list) and len(inserted) == len(want_inserted) == 4
    for got, want in zip(inserted, want_inserted):
        np.testing.assert_array_equal(got, want)


def test_gradient_through_sequence_ops_equals_finite_differences():
    """d sum(y * seed) / d(seq, x) of the concatenation above, against central differences in float64."""
    rng = np.random.default_rng(1)
    seq = [rng.standard_normal((k, 3)) for k in (1, 4, 2)]
    x = rng.standard_normal((2, 3))
    model = _split_insert_concat()
    model.graph.output.pop()  # only y
    module, inputs, _ = import_onnx(model, examples={"seq": seq})
    f = dfc.Function(module, "main")
    seed = rng.standard_normal((7, 3))  # rows 1 + 2 (x) + 4 (the last, 2, erased)
    args = [*seq, x]
    _, pullback = dfc.vjp(f, *args)
    grads = pullback(seed)
    eps = 1e-6
    for k, a in enumerate(args):
        numeric = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            plus, minus = [b.copy() for b in args], [b.copy() for b in args]
            plus[k][index] += eps
            minus[k][index] -= eps
            numeric[index] = (np.sum(f(*plus) * seed) - np.sum(f(*minus) * seed)) / (2 * eps)
        np.testing.assert_allclose(grads[k], numeric, rtol=1e-7, atol=1e-9)


def test_optional_input_without_a_value():
    """An optional input given None: OptionalHasElement is false and the If takes its else branch."""
    opt = helper.make_value_info("opt", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.DOUBLE, [2])))
    then = helper.make_graph([helper.make_node("OptionalGetElement", ["opt"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.DOUBLE, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.DOUBLE, [2])])
    nodes = [helper.make_node("OptionalHasElement", ["opt"], ["has"]),
             helper.make_node("If", ["has"], ["y"], then_branch=then, else_branch=other)]
    model = _model(nodes, [opt, helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    x, held = np.array([1.0, 2.0]), np.array([5.0, 6.0])
    np.testing.assert_array_equal(from_onnx(model, examples={"opt": None})(None, x), x)
    np.testing.assert_array_equal(from_onnx(model, examples={"opt": held})(held, x), held)
    get = _model([helper.make_node("OptionalGetElement", ["opt"], ["y"], name="get")], [opt],
                 [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    with pytest.raises(CompileError, match=r"node 'get' \(OptionalGetElement\): OptionalGetElement of 'opt', an empty"):
        import_onnx(get, examples={"opt": None})


def test_refusals_name_the_input_and_the_node():
    seq = [np.zeros(2), np.ones(2)]
    model = _split_insert_concat()
    with pytest.raises(CompileError, match="ONNX input 'seq' is of sequence_type; .* an example"):
        import_onnx(model)
    with pytest.raises(CompileError, match=r"ONNX input 'seq'\[1\]: the example's shape \[3\]"):
        import_onnx(_model([helper.make_node("SequenceLength", ["seq"], ["n"])],
                           [_sequence_info("seq", [2])], [helper.make_tensor_value_info("n", TensorProto.INT64, [])]),
                    examples={"seq": [np.zeros(2), np.zeros(3)]})
    at = _model([helper.make_node("SequenceAt", ["seq", "k"], ["y"], name="at")],
                [_sequence_info("seq"), helper.make_tensor_value_info("k", TensorProto.INT64, [])],
                [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    with pytest.raises(CompileError, match=r"node 'at' \(SequenceAt\): input 'k' must be a constant"):
        import_onnx(at, examples={"seq": seq})
    add = _model([helper.make_node("Add", ["seq", "seq"], ["y"], name="add")], [_sequence_info("seq")],
                 [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    with pytest.raises(CompileError, match=r"node 'add' \(Add\): input 'seq' is a sequence of 2 tensors, not a tensor"):
        import_onnx(add, examples={"seq": seq})


def test_loop_carrying_a_sequence_of_data_dependent_length_is_refused():
    """A Loop appending to a sequence while a run-time condition holds: the length depends on the data."""
    from onnx import numpy_helper

    body = helper.make_graph(
        [helper.make_node("Less", ["x", "two"], ["c_out"]), helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), _sequence_info("s_in")],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), _sequence_info("s_out")])
    graph = helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.DOUBLE),
         helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body, name="loop0")],
        "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [])], [_sequence_info("s")],
        [numpy_helper.from_array(np.array(3), "M"), numpy_helper.from_array(np.array(2.0), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 18)])
    with pytest.raises(CompileError, match=r"node 'loop0' \(Loop\): Loop: loop-carried value 0 is a sequence or "
                                           r"optional and the body's condition is known only at run time"):
        import_onnx(model)
