"""ONNX's sequence-model operators (LinearAttention, CausalConvWithState, and
FlexAttention of `ai.onnx.preview`) in float64: forward and the gradients of
every input against PyTorch's autograd of the operators' definitions written in
torch (ONNX's node tests, run by test_onnx_coverage.py, check the forward in
f16 and f32 against ONNX's reference)."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

from onnx import TensorProto, helper  # noqa: E402

RNG = np.random.default_rng(27)


def _model(op, inputs, outputs, domain="", opset=27, **attrs):
    """One `op` node over float64 `inputs` (name -> shape) giving `outputs` (name -> shape)."""
    node = helper.make_node(op, list(inputs), list(outputs), domain=domain, **attrs)
    info = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, s) for n, s in inputs.items()]
    out = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, s) for n, s in outputs.items()]
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(helper.make_graph([node], op, info, out), opset_imports=imports)


def _check(model, arrays, reference):
    """Forward and the gradient of every input (cotangents: random) against `reference` under autograd."""
    f = from_onnx(model)
    got = interpret(f.module, "main", *arrays)
    got = got if isinstance(got, tuple) else (got,)
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    want = reference(*leaves)
    seeds = [RNG.standard_normal(w.shape) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-12, atol=1e-14 * np.abs(w.detach().numpy()).max())
    out = interpret(f.autodiff_module(), "main_grad", *arrays, *seeds)
    torch.autograd.backward(want, [torch.tensor(s) for s in seeds])
    for g, leaf in zip(out[len(want):], leaves):
        np.testing.assert_allclose(g, leaf.grad.numpy(), rtol=1e-10, atol=1e-12 * np.abs(leaf.grad.numpy()).max())


def _linear_attention(q, k, v, past, decay, beta, hq, hkv):
    """LinearAttention's gated-delta recurrence (the operator's definition) in torch."""
    b, t, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    q4, k4, v4 = (x.reshape(b, t, h, -1).transpose(1, 2) for x, h in ((q, hq), (k, hkv), (v, hkv)))
    g4 = decay.reshape(b, t, hkv, dk).transpose(1, 2)
    b4 = beta.reshape(b, t, hkv, 1).transpose(1, 2)
    state, outs = past, []
    for i in range(t):
        state = state * torch.exp(g4[:, :, i])[..., None]
        v_t = b4[:, :, i] * (v4[:, :, i] - torch.einsum("bhdm,bhd->bhm", state, k4[:, :, i]))
        state = state + k4[:, :, i, :, None] * v_t[..., None, :]
        shared = torch.repeat_interleave(state, hq // hkv, dim=1)
        outs.append(torch.einsum("bhd,bhdm->bhm", q4[:, :, i], shared) / np.sqrt(dk))
    return torch.stack(outs, 2).transpose(1, 2).reshape(b, t, hq * dv), state


def test_linear_attention_gated_delta_gradients():
    """Gated delta rule, grouped query heads (4 over 2), a past state: one scf.for over the 3 steps."""
    b, t, hq, hkv, d = 1, 3, 4, 2, 2
    shapes = {"query": [b, t, hq * d], "key": [b, t, hkv * d], "value": [b, t, hkv * d],
              "past_state": [b, hkv, d, d], "decay": [b, t, hkv * d], "beta": [b, t, hkv]}
    arrays = [RNG.standard_normal(s) / 2 for s in shapes.values()]
    model = _model("LinearAttention", shapes, {"y": [b, t, hq * d], "state": [b, hkv, d, d]},
                   q_num_heads=hq, kv_num_heads=hkv)
    _check(model, arrays, lambda *x: _linear_attention(*x, hq, hkv))


def test_causal_conv_with_state_gradients():
    """Depthwise causal convolution after a past state, with bias and SiLU: output and present state."""
    b, c, n, k = 2, 3, 5, 3
    shapes = {"input": [b, c, n], "weight": [c, 1, k], "bias": [c], "past_state": [b, c, k - 1]}
    arrays = [RNG.standard_normal(s) for s in shapes.values()]
    model = _model("CausalConvWithState", shapes, {"y": [b, c, n], "state": [b, c, k - 1]}, activation="silu")

    def reference(x, w, bias, past):
        padded = torch.cat([past, x], 2)
        y = torch.nn.functional.conv1d(padded, w, bias, groups=c)
        return y * torch.sigmoid(y), padded[:, :, -(k - 1):]

    _check(model, arrays, reference)


def test_flex_attention_score_mod_gradients():
    """FlexAttention (ai.onnx.preview) with a soft-cap score modifier subgraph and grouped query heads."""
    b, hq, hkv, n, s, e = 1, 4, 2, 3, 5, 4
    shapes = {"Q": [b, hq, n, e], "K": [b, hkv, s, e], "V": [b, hkv, s, e]}
    arrays = [RNG.standard_normal(x) for x in shapes.values()]
    cap = helper.make_tensor("cap", TensorProto.DOUBLE, [], [2.0])
    score_mod = helper.make_graph(
        [helper.make_node("Div", ["scores", "cap"], ["ratio"]), helper.make_node("Tanh", ["ratio"], ["bounded"]),
         helper.make_node("Mul", ["bounded", "cap"], ["capped"])], "soft_cap",
        [helper.make_tensor_value_info("scores", TensorProto.DOUBLE, [b, hq, n, s])],
        [helper.make_tensor_value_info("capped", TensorProto.DOUBLE, [b, hq, n, s])], [cap])
    model = _model("FlexAttention", shapes, {"Y": [b, hq, n, e]}, domain="ai.onnx.preview", score_mod=score_mod)

    def reference(q, k, v):
        k, v = (torch.repeat_interleave(x, hq // hkv, dim=1) for x in (k, v))
        root = float(np.sqrt(np.float32(1 / np.sqrt(e))))
        scores = (q * root) @ (k * root).transpose(-1, -2)
        return (torch.softmax(torch.tanh(scores / 2) * 2, -1) @ v,)

    _check(model, arrays, reference)
