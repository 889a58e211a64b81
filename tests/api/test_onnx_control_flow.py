"""ONNX If, Loop and Scan (`dfc/importers/onnx_control_flow.py`) beyond ONNX's
node cases (test_onnx_coverage.py): run-time conditions (`scf.if`, a masked
Loop, a Loop of run-time length as `scf.while`) with subgraphs capturing outer values and weights, against onnxruntime,
and their gradients against float64 central differences of onnxruntime; Scan's
axes and directions; the refusals, named."""

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.importers.onnx_import import from_onnx, import_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F64 = TensorProto.DOUBLE


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, n) for n, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", opset)])


def _ort(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _central_differences(model, feeds, name, seed, eps=1e-6):
    """d(sum(seed * output 0)) / d feeds[name], by onnxruntime in float64."""
    grad = np.zeros_like(feeds[name])
    for k in range(grad.size):
        step = np.zeros_like(grad)
        step.flat[k] = eps
        up = _ort(model, {**feeds, name: feeds[name] + step})[0]
        down = _ort(model, {**feeds, name: feeds[name] - step})[0]
        grad.flat[k] = np.sum(seed * (up - down)) / (2 * eps)
    return grad


def _if_model():
    """y = tanh(x * w) if flag else x - w, both branches capturing x and the weight w."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["p"]), helper.make_node("Tanh", ["p"], ["t"])],
                             "then", [], [_info("t", F64, [3])])
    other = helper.make_graph([helper.make_node("Sub", ["x", "w"], ["d"])], "else", [], [_info("d", F64, [3])])
    node = helper.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other, name="if0")
    w = np.array([0.5, -1.5, 2.0])
    return _model([node], [_info("x", F64, [3]), _info("flag", TensorProto.BOOL, [])], [_info("y", F64, [3])],
                  [("w", w)]), w


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_a_run_time_condition_and_its_gradient(flag):
    model, w = _if_model()
    x, cond = np.array([0.3, 0.7, -1.1]), np.array(flag)
    f = from_onnx(model)
    assert any(op.name == "scf.if" for op in f.module.walk())
    want = _ort(model, {"x": x, "flag": cond})[0]
    np.testing.assert_allclose(interpret(f.module, "main", x, cond, w), want, rtol=1e-15)
    seed = np.array([1.0, -2.0, 0.5])
    y, dx, dw = interpret(f.autodiff_module(), "main_grad", x, cond, w, seed)
    np.testing.assert_allclose(y, want, rtol=1e-15)
    np.testing.assert_allclose(dx, _central_differences(model, {"x": x, "flag": cond}, "x", seed), rtol=1e-7)
    with_w = _model(model.graph.node, [*model.graph.input, _info("w", F64, [3])], model.graph.output)
    np.testing.assert_allclose(dw, _central_differences(with_w, {"x": x, "flag": cond, "w": w}, "w", seed), rtol=1e-7)


def test_if_on_a_known_condition_is_its_branch():
    model, w = _if_model()
    model.graph.initializer.append(numpy_helper.from_array(np.array(False), "flag"))
    del model.graph.input[1]
    module, names, _ = import_onnx(model, parameters=[])
    assert names == ["x"] and not any(op.name == "scf.if" for op in module.walk())
    x = np.array([0.3, 0.7, -1.1])
    np.testing.assert_allclose(interpret(module, "main", x), x - w, rtol=1e-15)


def test_if_branches_of_different_types_are_refused_at_run_time():
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "then", [], [_info("a", F64, [3])])
    other = helper.make_graph([helper.make_node("Slice", ["x", "s", "e"], ["b"])], "else", [],
                              [_info("b", F64, [2])])
    node = helper.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other, name="if0")
    model = _model([node], [_info("x", F64, [3]), _info("flag", TensorProto.BOOL, [])], [_info("y", F64, None)],
                   [("s", np.array([0])), ("e", np.array([2]))])
    with pytest.raises(CompileError, match=r"node 'if0' \(If\): If: output 0 is tensor<3xf64> in then_branch and "
                                           r"tensor<2xf64> in else_branch"):
        import_onnx(model)


def _loop_model(with_scan=False):
    """v = tanh(v * w) + x while sum(v) < 1.1, at most 6 times (the condition known only at run time)."""
    nodes = [helper.make_node("Mul", ["v_in", "w"], ["p"]), helper.make_node("Tanh", ["p"], ["t"]),
             helper.make_node("Add", ["t", "x"], ["v_out"]), helper.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0),
             helper.make_node("Less", ["s", "limit"], ["c_out"])]
    outputs = [_info("c_out", TensorProto.BOOL, []), _info("v_out", F64, [2])]
    if with_scan:
        nodes.append(helper.make_node("Identity", ["v_out"], ["scan"]))
        outputs.append(_info("scan", F64, [2]))
    body = helper.make_graph(nodes, "body", [_info("i", TensorProto.INT64, []), _info("c_in", TensorProto.BOOL, []),
                                            _info("v_in", F64, [2])], outputs)
    node = helper.make_node("Loop", ["M", "cond", "v0"], ["v", *(["vs"] if with_scan else [])], body=body, name="loop0")
    w = np.array([0.8, -0.6])
    model = _model([node], [_info("x", F64, [2]), _info("v0", F64, [2]), _info("cond", TensorProto.BOOL, [])],
                   [_info("v", F64, [2]), *([_info("vs", F64, None)] if with_scan else [])],
                   [("w", w), ("M", np.array(6)), ("limit", np.array(1.1))])
    return model, w


@pytest.mark.parametrize("x,start", [([0.4, 0.3], True), pytest.param([0.1, 0.05], True, marks=pytest.mark.slow),
                                     pytest.param([0.4, 0.3], False, marks=pytest.mark.slow)])
def test_loop_on_a_run_time_condition_masks_the_carried_values(x, start):
    """The trip count differs with x: 3 iterations (sum(v) 0.92, 0.91, 1.22), all 6 (sums below 0.43), or none."""
    model, w = _loop_model()
    x, v0, cond = np.array(x), np.array([0.2, -0.1]), np.array(start)
    feeds = {"x": x, "v0": v0, "cond": cond}
    f = from_onnx(model)
    want = _ort(model, feeds)[0]
    np.testing.assert_allclose(interpret(f.module, "main", x, v0, cond, w), want, rtol=1e-14)
    seed = np.array([1.5, -0.5])
    y, dx, dv0, dw = interpret(f.autodiff_module(), "main_grad", x, v0, cond, w, seed)
    np.testing.assert_allclose(y, want, rtol=1e-14)
    np.testing.assert_allclose(dx, _central_differences(model, feeds, "x", seed), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dv0, _central_differences(model, feeds, "v0", seed), rtol=1e-6, atol=1e-9)


def test_loop_refusals_name_the_node():
    model, _ = _loop_model(with_scan=True)
    model.graph.initializer.append(numpy_helper.from_array(np.array(True), "cond"))
    del model.graph.input[2]
    with pytest.raises(CompileError, match=r"node 'loop0' \(Loop\): Loop: the body's condition is known only at "
                                           r"run time, and the scan outputs' length would depend on it"):
        import_onnx(model)
    model, _ = _loop_model(with_scan=True)
    model.graph.initializer.pop(1)  # M
    model.graph.input.append(_info("M", TensorProto.INT64, []))
    with pytest.raises(CompileError, match=r"node 'loop0' \(Loop\): input 'M' must be a constant"):
        import_onnx(model)
    model, _ = _loop_model()
    model.graph.node[0].attribute[0].g.node[1].op_type = "StringSplit"
    with pytest.raises(CompileError, match=r"node 'loop0' \(Loop\): subgraph 'body' node '1' \(StringSplit\): "
                                           r"operator is not supported"):
        import_onnx(model)
    model, _ = _loop_model()
    model.graph.node[0].attribute[0].g.node[0].input[1] = "i"  # v * i: f64 times the int64 iteration number
    model.graph.initializer.pop(1)
    model.graph.input.append(_info("M", TensorProto.INT64, []))
    with pytest.raises(CompileError, match=r"node 'loop0' \(Loop\): subgraph 'body' node '0' \(Mul\)"):
        import_onnx(model)


@pytest.mark.parametrize("trips", ["run time", pytest.param("absent", marks=pytest.mark.slow),
                                   pytest.param(5000, marks=pytest.mark.slow)])
def test_loop_of_run_time_length_is_a_while_loop_and_its_gradient(trips):
    """The Loop above with its trip count an input (given 6), absent, or beyond the unrolling limit: one
    `scf.while`, equal to onnxruntime on the interpreter and the engine; its gradient equals central
    differences of onnxruntime (float64)."""
    model, w = _loop_model()
    x, v0, cond = np.array([0.4, 0.3]), np.array([0.2, -0.1]), np.array(True)
    feeds = {"x": x, "v0": v0, "cond": cond}
    if trips == "run time":
        model.graph.initializer.pop(1)
        model.graph.input.append(_info("M", TensorProto.INT64, []))
        feeds["M"] = np.array(6)
    elif trips == "absent":
        model.graph.node[0].input[0] = ""
    else:
        model.graph.initializer[1].CopyFrom(numpy_helper.from_array(np.array(trips), "M"))
    f = from_onnx(model)
    assert sum(op.name == "scf.while" for op in f.module.walk()) == 1
    args = [feeds[n] for n in f.input_names]
    want = _ort(model, feeds)[0]
    np.testing.assert_allclose(interpret(f.module, "main", *args, w), want, rtol=1e-14)
    np.testing.assert_allclose(f(*args), want, rtol=1e-14)
    seed = np.array([1.5, -0.5])
    y, dx, dv0, *_ = interpret(f.autodiff_module(), "main_grad", *args, w, seed)
    np.testing.assert_allclose(y, want, rtol=1e-14)
    np.testing.assert_allclose(dx, _central_differences(model, feeds, "x", seed), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dv0, _central_differences(model, feeds, "v0", seed), rtol=1e-6, atol=1e-9)


def test_loop_iteration_number_slices_an_outer_value_and_stacks_scan_outputs():
    """A body reading x[i] (a Slice at the iteration number) and capturing x; the scan output stacks."""
    nodes = [helper.make_node("Unsqueeze", ["i", "zero"], ["start"]), helper.make_node("Add", ["start", "one"], ["end"]),
             helper.make_node("Slice", ["x", "start", "end"], ["xi"]), helper.make_node("Mul", ["acc_in", "xi"], ["acc"]),
             helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["acc"], ["seen"])]
    body = helper.make_graph(nodes, "body", [_info("i", TensorProto.INT64, []), _info("c_in", TensorProto.BOOL, []),
                                            _info("acc_in", F64, [1])],
                             [_info("c_out", TensorProto.BOOL, []), _info("acc", F64, [1]), _info("seen", F64, [1])])
    node = helper.make_node("Loop", ["M", "", "a0"], ["prod", "partial"], body=body)
    model = _model([node], [_info("x", F64, [4]), _info("a0", F64, [1])],
                   [_info("prod", F64, [1]), _info("partial", F64, [4, 1])],
                   [("M", np.array(4)), ("zero", np.array([0])), ("one", np.array([1]))])
    x, a0 = np.array([1.5, -2.0, 0.5, 3.0]), np.array([2.0])
    got = interpret(import_onnx(model)[0], "main", x, a0)
    for g, w in zip(got, _ort(model, {"x": x, "a0": a0})):
        np.testing.assert_allclose(g, w, rtol=1e-15)


def test_scan_axes_and_directions():
    """Scan over axis 1 of one input read backwards, a state, and scan outputs stacked on axis 1 and reversed."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["s_out"]), helper.make_node("Mul", ["s_out", "b"], ["o1"]),
         helper.make_node("Identity", ["a"], ["o2"])], "body",
        [_info("s_in", F64, [2]), _info("a", F64, [2]), _info("b", F64, [2])],
        [_info("s_out", F64, [2]), _info("o1", F64, [2]), _info("o2", F64, [2])])
    node = helper.make_node("Scan", ["s0", "xa", "xb"], ["s", "y1", "y2"], body=body, num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[1, 0], scan_output_axes=[1, -2],
                            scan_output_directions=[0, 1])
    model = _model([node], [_info("s0", F64, [2]), _info("xa", F64, [2, 3]), _info("xb", F64, [3, 2])],
                   [_info("s", F64, [2]), _info("y1", F64, [2, 3]), _info("y2", F64, [3, 2])])
    rng = np.random.default_rng(0)
    feeds = {"s0": rng.standard_normal(2), "xa": rng.standard_normal((2, 3)), "xb": rng.standard_normal((3, 2))}
    module = import_onnx(model)[0]
    assert [op.name for op in module.walk()].count("scf.for") == 1
    got = interpret(module, "main", *feeds.values())
    for g, w in zip(got, _ort(model, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    single = _model(model.graph.node, list(model.graph.input), [model.graph.output[1]])
    seed = rng.standard_normal((2, 3))
    _, ds0, dxa, dxb = interpret(from_onnx(single).autodiff_module(), "main_grad", *feeds.values(), seed)
    for name, grad in (("s0", ds0), ("xa", dxa), ("xb", dxb)):
        np.testing.assert_allclose(grad, _central_differences(single, feeds, name, seed), rtol=1e-6, atol=1e-9)


def test_a_scan_whose_body_needs_its_elements_at_import_time_is_unrolled():
    """Scan elements that set a shape (Reshape's) are read from an initializer at each unrolled step."""
    body = helper.make_graph(
        [helper.make_node("Reshape", ["s_in", "shape"], ["r"]), helper.make_node("Transpose", ["r"], ["t"]),
         helper.make_node("Reshape", ["t", "flat"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["o"])],
        "body", [_info("s_in", F64, [6]), _info("shape", TensorProto.INT64, [2])],
        [_info("s_out", F64, [6]), _info("o", F64, [6])])
    node = helper.make_node("Scan", ["s0", "shapes"], ["s", "seen"], body=body, num_scan_inputs=1)
    model = _model([node], [_info("s0", F64, [6])], [_info("s", F64, [6]), _info("seen", F64, [3, 6])],
                   [("shapes", np.array([[2, 3], [3, 2], [6, 1]])), ("flat", np.array([-1]))])
    module = import_onnx(model)[0]
    assert "scf.for" not in [op.name for op in module.walk()]
    s0 = np.arange(6.0)
    for g, w in zip(interpret(module, "main", s0), _ort(model, {"s0": s0})):
        np.testing.assert_array_equal(g, w)


def test_a_loop_whose_body_imports_once_is_an_scf_for():
    """40 iterations of v = tanh(v * w + i * x) (the iteration number a run-time value) with a scan output:
    one `scf.for`; forward equals onnxruntime, gradients its float64 central differences."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F64), helper.make_node("Mul", ["fi", "x"], ["ix"]),
             helper.make_node("Mul", ["v_in", "w"], ["p"]), helper.make_node("Add", ["p", "ix"], ["q"]),
             helper.make_node("Tanh", ["q"], ["v_out"]), helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("ReduceSum", ["v_out"], ["seen"], keepdims=1)]
    body = helper.make_graph(nodes, "body", [_info("i", TensorProto.INT64, []), _info("c_in", TensorProto.BOOL, []),
                                            _info("v_in", F64, [2])],
                             [_info("c_out", TensorProto.BOOL, []), _info("v_out", F64, [2]), _info("seen", F64, [1])])
    node = helper.make_node("Loop", ["M", "", "v0"], ["v", "sums"], body=body)
    w = np.array([0.9, -0.7])
    model = _model([node], [_info("x", F64, [2]), _info("v0", F64, [2])],
                   [_info("v", F64, [2]), _info("sums", F64, [40, 1])], [("w", w), ("M", np.array(40))])
    f = from_onnx(model)
    assert [op.name for op in f.module.walk()].count("scf.for") == 1
    feeds = {"x": np.array([0.02, -0.03]), "v0": np.array([0.5, 0.1])}
    want = _ort(model, feeds)
    for g, w_ in zip(interpret(f.module, "main", *feeds.values(), w), want):
        np.testing.assert_allclose(g, w_, rtol=1e-14, atol=1e-15)
    for g, w_ in zip(f(*feeds.values()), want):  # the engine
        np.testing.assert_allclose(g, w_, rtol=1e-14, atol=1e-15)
    single = _model([node], list(model.graph.input), [model.graph.output[0]], [("w", w), ("M", np.array(40))])
    seed = np.array([1.0, -0.5])
    _, dx, dv0, _ = interpret(from_onnx(single).autodiff_module(), "main_grad", *feeds.values(), w, seed)
    np.testing.assert_allclose(dx, _central_differences(single, feeds, "x", seed), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dv0, _central_differences(single, feeds, "v0", seed), rtol=1e-6, atol=1e-9)


def test_narrow_format_codes_do_not_leave_a_subgraph():
    """A branch giving float8 codes (i8 in the IR) is refused by name rather than read as int8."""
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "then", [],
                             [_info("a", TensorProto.FLOAT8E4M3FN, [2])])
    node = helper.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=then, name="if0")
    model = _model([node], [_info("x", TensorProto.FLOAT8E4M3FN, [2]), _info("flag", TensorProto.BOOL, [])],
                   [_info("y", TensorProto.FLOAT8E4M3FN, [2])])
    with pytest.raises(CompileError, match=r"node 'if0' \(If\): subgraph 'then' output 'a' holds float8_e4m3fn codes"):
        import_onnx(model)
