"""ONNX RNN, GRU and LSTM (`dfc/importers/onnx_recurrent.py`): PyTorch's
`nn.LSTM`/`nn.GRU` exported with the TorchScript exporter, forward and gradients
(input and every weight) against PyTorch's autograd of the original module (the
dynamo exporter's too, with --slow); and
the attributes ONNX's node tests leave out (`sequence_lens` of different lengths
at run time, `clip`, parameterised activations, `input_forget`, GRU without
`linear_before_reset`, batch-first layout with initial states) against
onnxruntime. ONNX's own node cases run in test_onnx_coverage.py."""

import io

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.importers.onnx_import import from_onnx, import_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from onnx import helper, numpy_helper  # noqa: E402

TORCH_TO_ONNX_GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}
"""ONNX's gate blocks (LSTM i, o, f, c; GRU z, r, h) as indices of PyTorch's (i, f, g, o; r, z, n)."""


class Last(torch.nn.Module):
    """A recurrent layer's output sequence only (one graph output to seed)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)[0]


def _onnx_layout(grad: np.ndarray, kind: str, hidden: int) -> np.ndarray:
    """A PyTorch weight or bias gradient with its gate blocks in ONNX's order."""
    blocks = np.split(grad, len(TORCH_TO_ONNX_GATES[kind]), axis=0)
    return np.concatenate([blocks[k] for k in TORCH_TO_ONNX_GATES[kind]], axis=0)


@pytest.mark.parametrize("kind,bidirectional,batch_first,steps", [
    ("LSTM", False, True, 3), pytest.param("GRU", False, False, 3, marks=pytest.mark.slow),
    pytest.param("LSTM", True, True, 6, marks=pytest.mark.slow), pytest.param("GRU", True, False, 6, marks=pytest.mark.slow),
])
def test_torch_recurrent_layer_forward_and_gradients(kind, bidirectional, batch_first, steps):
    torch.manual_seed(0)
    hidden, batch, features = 5, 3, 4
    layer = getattr(torch.nn, kind)(features, hidden, batch_first=batch_first, bidirectional=bidirectional).double()
    x = torch.randn(*((batch, steps) if batch_first else (steps, batch)), features, dtype=torch.float64,
                    requires_grad=True)
    buffer = io.BytesIO()
    torch.onnx.export(Last(layer), (x,), buffer, dynamo=False, input_names=["x"], output_names=["y"])
    model = onnx.load_from_string(buffer.getvalue())
    assert kind in {n.op_type for n in model.graph.node}
    f = from_onnx(model)
    want = layer(x)[0]
    params = f.parameter_values()
    got = interpret(f.module, "main", x.detach().numpy(), *params)
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-12, atol=1e-14)

    seed = np.random.default_rng(1).standard_normal(got.shape)
    y, dx, *dparams = interpret(f.autodiff_module(), "main_grad", x.detach().numpy(), *params, seed)
    np.testing.assert_allclose(y, got, rtol=1e-15)
    want.backward(torch.from_numpy(seed))
    np.testing.assert_allclose(dx, x.grad.numpy(), rtol=1e-10, atol=1e-13)
    # the exporter's W, R, B: [directions, gates * hidden, ...], B = [Wb, Rb]; each against PyTorch's grads
    by_shape = {v.shape: g for v, g in zip(params, dparams)}
    directions = 2 if bidirectional else 1
    gates = len(TORCH_TO_ONNX_GATES[kind])
    grads = {name: p.grad.numpy() for name, p in layer.named_parameters()}
    for d, suffix in enumerate(["_l0", "_l0_reverse"][:directions]):
        for shape, names in (((directions, gates * hidden, features), ["weight_ih"]),
                             ((directions, gates * hidden, hidden), ["weight_hh"]),
                             ((directions, 2 * gates * hidden), ["bias_ih", "bias_hh"])):
            expected = np.concatenate([_onnx_layout(grads[n + suffix], kind, hidden) for n in names])
            np.testing.assert_allclose(by_shape[shape][d], expected, rtol=1e-10, atol=1e-13, err_msg=f"{names} {d}")


def _layer_model(op, inputs, attrs, outputs, dtype=np.float32):
    """One `op` node of the given inputs (all graph inputs, run-time values) and outputs."""
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
             for n, v in inputs.items() if v is not None]
    node = helper.make_node(op, [n if v is not None else "" for n, v in inputs.items()], outputs, name="rnn", **attrs)
    out = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None) for n in outputs]
    return helper.make_model(helper.make_graph([node], "g", infos, out), opset_imports=[helper.make_operatorsetid("", 14)])


def _random_inputs(op, directions, steps, batch, features, hidden, rng, layout=0, lengths=None, peepholes=False,
                   initial=False):
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    state = (batch, directions, hidden) if layout else (directions, batch, hidden)
    f32 = np.float32
    inputs = {
        "X": rng.standard_normal((batch, steps, features) if layout else (steps, batch, features)).astype(f32),
        "W": rng.standard_normal((directions, gates * hidden, features)).astype(f32),
        "R": rng.standard_normal((directions, gates * hidden, hidden)).astype(f32),
        "B": rng.standard_normal((directions, 2 * gates * hidden)).astype(f32),
        "sequence_lens": None if lengths is None else np.array(lengths, np.int32),
        "initial_h": rng.standard_normal(state).astype(f32) if initial else None,
    }
    if op == "LSTM":
        inputs["initial_c"] = rng.standard_normal(state).astype(f32) if initial else None
        inputs["P"] = rng.standard_normal((directions, 3 * hidden)).astype(f32) if peepholes else None
    while inputs and list(inputs.values())[-1] is None:
        inputs.pop(list(inputs)[-1])
    return inputs


ORT_CASES = {
    "lstm_lengths_bidirectional_peepholes": ("LSTM", "bidirectional", dict(lengths=[4, 1, 3], peepholes=True,
                                                                           initial=True), {}),
    "lstm_lengths_reverse_clip": ("LSTM", "reverse", dict(lengths=[2, 4, 3]), {"clip": 0.5}),
    "lstm_input_forget_layout1": ("LSTM", "forward", dict(layout=1, initial=True), {"input_forget": 1, "layout": 1}),
    "lstm_activations": ("LSTM", "forward", {}, {"activations": ["HardSigmoid", "LeakyRelu", "Softsign"],
                                                 "activation_alpha": [0.3, 0.2], "activation_beta": [0.6]}),
    "gru_reset_after_lengths": ("GRU", "bidirectional", dict(lengths=[3, 4, 1], initial=True), {}),
    "gru_linear_before_reset_clip": ("GRU", "reverse", {}, {"linear_before_reset": 1, "clip": 0.7}),
    "rnn_activations_lengths": ("RNN", "bidirectional", dict(lengths=[1, 4, 2]),
                                {"activations": ["Relu", "ThresholdedRelu"], "activation_alpha": [0.4]}),
    "rnn_layout1_elu": ("RNN", "forward", dict(layout=1, initial=True), {"layout": 1, "activations": ["Elu"]}),
}


def _onnxruntime(op, inputs, attrs, outputs):
    """onnxruntime's outputs; batch first (layout 1, which onnxruntime refuses) as the layout-0 model of the
    transposed inputs, its outputs transposed back."""
    given = {n: v for n, v in inputs.items() if v is not None}
    batch_first = bool(attrs.get("layout"))
    if batch_first:
        given = {n: v.transpose(1, 0, 2) if n in ("X", "initial_h", "initial_c") else v for n, v in given.items()}
        attrs = {**attrs, "layout": 0}
    model = _layer_model(op, {n: given.get(n) for n in inputs}, attrs, outputs)
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, given)
    if batch_first:
        got = [got[0].transpose(2, 0, 1, 3), *(v.transpose(1, 0, 2) for v in got[1:])]
    return got


CI_ORT_CASES = ("lstm_lengths_bidirectional_peepholes", "lstm_activations", "gru_linear_before_reset_clip",
                "rnn_layout1_elu")
"""The cases CI runs (the others with --slow)."""


@pytest.mark.parametrize("case", [c if c in CI_ORT_CASES else pytest.param(c, marks=pytest.mark.slow)
                                  for c in sorted(ORT_CASES)])
def test_recurrent_attributes_against_onnxruntime(case):
    op, direction, shape_args, attrs = ORT_CASES[case]
    directions = 2 if direction == "bidirectional" else 1
    hidden = 3
    inputs = _random_inputs(op, directions, 4, 3, 2, hidden, np.random.default_rng(0), **shape_args)
    outputs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    model = _layer_model(op, inputs, {"direction": direction, "hidden_size": hidden, **attrs}, outputs)
    given = {n: v for n, v in inputs.items() if v is not None}
    want = _onnxruntime(op, inputs, {"direction": direction, "hidden_size": hidden, **attrs}, outputs)
    module, names, _ = import_onnx(model)
    got = interpret(module, "main", *(given[n] for n in names))
    for name, g, w in zip(outputs, got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6, err_msg=f"{case}: {name}")


def test_recurrent_refusals_name_the_node():
    rng = np.random.default_rng(0)
    inputs = _random_inputs("RNN", 1, 2, 1, 2, 3, rng)
    bad = _layer_model("RNN", inputs, {"hidden_size": 3, "activations": ["Gelu"]}, ["Y"])
    with pytest.raises(CompileError, match=r"node 'rnn' \(RNN\): RNN activation 'Gelu' is not supported"):
        import_onnx(bad)
    wrong = _layer_model("RNN", inputs, {"hidden_size": 4}, ["Y"])
    with pytest.raises(CompileError, match=r"node 'rnn' \(RNN\): RNN weights .* for 1 direction\(s\) and hidden_size 4"):
        import_onnx(wrong)
    scaled = _layer_model("RNN", inputs, {"hidden_size": 3, "activations": ["ScaledTanh"]}, ["Y"])
    with pytest.raises(CompileError, match="ScaledTanh needs activation_alpha and activation_beta"):
        import_onnx(scaled)


def test_full_lengths_known_at_import_time_add_no_mask():
    """sequence_lens given as an initializer equal to the sequence length: no select in the IR, same result."""
    rng = np.random.default_rng(0)
    inputs = _random_inputs("GRU", 1, 4, 2, 2, 3, rng, lengths=[4, 4])
    model = _layer_model("GRU", inputs, {"hidden_size": 3}, ["Y", "Y_h"])
    model.graph.initializer.append(numpy_helper.from_array(inputs["sequence_lens"], "sequence_lens"))
    del model.graph.input[4]
    module, names, _ = import_onnx(model)
    assert not [op for op in module.walk() if op.name == "nn.select"]
    given = {n: v for n, v in inputs.items() if n != "sequence_lens"}
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, given)
    for g, w in zip(interpret(module, "main", *(given[n] for n in names)), want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_gru_of_opset_1_reads_its_schema_default_direction():
    """GRU-1's schema spells its default direction 'foward': read as forward, equal to onnxruntime's GRU-7."""
    inputs = _random_inputs("GRU", 1, 3, 2, 2, 3, np.random.default_rng(0))
    old = _layer_model("GRU", inputs, {"hidden_size": 3}, ["Y"])
    old.opset_import[0].version = 1
    new = _layer_model("GRU", inputs, {"hidden_size": 3}, ["Y"])
    want = ort.InferenceSession(new.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)
    module, names, _ = import_onnx(old)
    np.testing.assert_allclose(interpret(module, "main", *(inputs[n] for n in names)), want[0], rtol=2e-5, atol=2e-6)



@pytest.mark.slow
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_dynamo_exported_recurrent_layer(kind):
    """PyTorch's dynamo exporter also emits one LSTM/GRU node (with Reshape/Transpose): forward and the input's
    gradient equal autograd's."""
    pytest.importorskip("onnxscript")
    torch.manual_seed(0)
    layer = getattr(torch.nn, kind)(4, 5).double()
    x = torch.randn(4, 3, 4, dtype=torch.float64, requires_grad=True)
    model = torch.onnx.export(Last(layer), (x,), dynamo=True, verbose=False).model_proto
    assert kind in {n.op_type for n in model.graph.node}
    f = from_onnx(model)
    want = layer(x)[0]
    seed = np.random.default_rng(1).standard_normal(tuple(want.shape))
    y, dx, *_ = interpret(f.autodiff_module(), "main_grad", x.detach().numpy(), *f.parameter_values(), seed)
    np.testing.assert_allclose(y, want.detach().numpy(), rtol=1e-12, atol=1e-14)
    want.backward(torch.from_numpy(seed))
    np.testing.assert_allclose(dx, x.grad.numpy(), rtol=1e-10, atol=1e-13)
