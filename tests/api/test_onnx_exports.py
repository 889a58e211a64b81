"""ONNX import of models as people export them (`torch.onnx.export`, the TorchScript exporter at opsets 13, 17 and
20 and the dynamo exporter, with and without a dynamic batch axis): the forward equals onnxruntime's and eager
PyTorch's, and on a few models dfc's gradients of every weight equal PyTorch's autograd.

The default run reads one small export checked in under tests/data/onnx/ (`python
tests/support/onnx_export_zoo.py` rewrites it) and a hand-built graph of the shape arithmetic exporters emit;
the sweep over tests/support/onnx_export_zoo.py's models is `slow` (each model compiles for tens of seconds)
and skips a model whose zoo (torchvision, timm, transformers) does not import."""

from __future__ import annotations

import numpy as np
import pytest
from support.onnx_export_zoo import DATA, build, export

from dfc import CompileError, interpret
from dfc.compiler.engine import ExecutionEngine
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _relative(got: np.ndarray, want: np.ndarray, floor: float = 0.0) -> float:
    """The largest difference relative to the largest reference element (or `floor` when that is larger)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    return float(np.abs(got - want).max() / max(np.abs(want).max(), floor, np.finfo(np.float32).tiny))


def _onnxruntime(model: bytes, inputs: list[np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model)
    return session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})[0]


def test_exported_model_with_a_dynamic_batch_takes_its_shape_from_an_example():
    """TorchScript's `y.view(y.size(0), -1)` with a dynamic batch is Shape, Gather, Unsqueeze, Concat and
    Reshape; given an example of another batch than the export's, the chain folds to that batch."""
    data = (DATA / "viewhead_ts17dyn.onnx").read_bytes()
    model = onnx.load_from_string(data)
    assert {"Shape", "Gather", "Concat", "Reshape"} <= {n.op_type for n in model.graph.node}
    with pytest.raises(CompileError, match="input 'in0' has a dynamic dimension 'batch'.*`examples`"):
        from_onnx(model)
    rng = np.random.default_rng(0)
    for batch in (3,):
        x = rng.standard_normal((batch, 4, 6)).astype(np.float32)
        imported = from_onnx(model, examples={"in0": x})
        got = interpret(imported.module, "main", x, *imported.parameter_values())
        want = _onnxruntime(data, [x])
        assert got.shape == (batch, 5)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_shape_arithmetic_folds_by_the_onnx_reference():
    """Mod, Floor, Sqrt and Tile of a shape (not in the importer's own numpy table) are computed at import time
    by ONNX's reference, so the Slice and Tile reading them find them known; the IR holds no trace of them."""
    from onnx import TensorProto, helper

    def const(name: str, value: list) -> object:
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64,
                                                                                  [len(value)], value))

    nodes = [const("one", [1]), const("four", [4]), const("zero", [0]),
             helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "one"], ["d"]),                 # [6]
             helper.make_node("Mod", ["d", "four"], ["end"]),                     # [2]
             helper.make_node("Cast", ["d"], ["df"], to=TensorProto.FLOAT),
             helper.make_node("Sqrt", ["df"], ["root"]),
             helper.make_node("Floor", ["root"], ["floor"]),
             helper.make_node("Cast", ["floor"], ["reps1"], to=TensorProto.INT64),  # [2]
             helper.make_node("Concat", ["one", "reps1"], ["reps"], axis=0),
             helper.make_node("Tile", ["reps", "one"], ["reps_tiled"]),
             helper.make_node("Slice", ["reps_tiled", "zero", "end"], ["repeats"]),  # [1, 2]
             helper.make_node("Slice", ["x", "zero", "end", "one"], ["head"]),
             helper.make_node("Tile", ["head", "repeats"], ["y"])]
    graph = helper.make_graph(nodes, "shape_arithmetic",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
    imported = from_onnx(model, examples={"x": x})
    ops = {op.name for op in imported.module.walk()}
    assert not ops & {"nn.remainder", "nn.sqrt", "nn.floor", "nn.convert"}, ops
    got = interpret(imported.module, "main", x)
    np.testing.assert_array_equal(got, np.tile(x[:, :2], (1, 2)))
    np.testing.assert_array_equal(got, _onnxruntime(model.SerializeToString(), [x]))


# ---------------------------------------------------------------- the sweep (slow)

FULL = ("ts13", "ts17", "ts20", "ts17dyn", "dynamo", "dynamo_dyn")
EXPORTS: dict[str, tuple[str, ...]] = {
    "torchvision resnet18": FULL, "torchvision mobilenet_v2": ("ts17", "dynamo"),
    "torchvision mobilenet_v3_small": ("ts17", "dynamo"), "torchvision squeezenet1_1": ("ts13", "dynamo"),
    "torchvision efficientnet_b0": ("ts17", "dynamo"), "torchvision shufflenet_v2_x0_5": ("ts17", "dynamo"),
    "torchvision vit (tiny)": FULL, "torchvision densenet (tiny)": ("ts17", "dynamo"),
    "timm resnet10t": ("ts17", "dynamo"), "timm mobilenetv3_small_050": ("ts17", "dynamo"),
    "timm efficientnet_b0": ("ts17", "dynamo"), "timm convnext_atto": ("ts17", "dynamo"),
    "timm vit_tiny": ("ts17", "dynamo"), "timm deit_tiny_distilled": ("ts17", "dynamo"),
    "timm swin_tiny": ("ts17", "dynamo"), "timm levit_128s": ("ts17", "dynamo"), "timm mixer_s16": ("ts17", "dynamo"),
    "timm regnetx_002": ("ts17", "dynamo"), "timm ghostnet_050": ("ts17", "dynamo"),
    "timm test_vit": ("ts17", "dynamo"), "timm test_efficientnet": ("ts17", "dynamo"),
    "timm test_byobnet": ("ts17", "dynamo"), "timm test_nfnet": ("ts17", "dynamo"),
    "hf bert": FULL, "hf distilbert": ("ts17", "dynamo"), "hf gpt2": FULL, "hf t5 encoder": ("ts17", "dynamo"),
    "hf llama": ("ts17", "dynamo"), "hf whisper": ("ts17", "dynamo"), "hf vit": ("ts17", "dynamo"),
    "hf clip vision": ("ts17", "dynamo"), "nn lstm": ("ts17", "dynamo"), "nn attention": FULL,
    "nn viewhead": FULL,
}
GRADIENTS = {("hf bert", "ts17"), ("hf gpt2", "dynamo"), ("nn attention", "ts17dyn"), ("torchvision vit (tiny)", "ts17")}
"""Models and exporters whose weight gradients are compared with autograd: ones whose exporter keeps every weight
as PyTorch holds it, or transposed (the TorchScript exporter folds BatchNorm into the convolutions in eval mode,
and stores LSTM weights with their gates reordered: test_onnx_recurrent.py checks those). Each gradient is taken
relative to its largest element, or to 1e-3 times the model's largest gradient element when that is larger: a
gradient that is 0 in exact arithmetic (a key bias's, which softmax cancels) is rounding noise of the others'."""


def _batch_of_three(args: tuple) -> tuple:
    """The example inputs with a third batch element (a copy of the first): a dynamic batch not the export's."""
    import torch

    return tuple(torch.cat([a, a[:1]]) for a in args)


@pytest.mark.slow
@pytest.mark.parametrize("name,exporter", [(m, e) for m, es in EXPORTS.items() for e in es])
def test_export_imports_and_equals_onnxruntime(name, exporter):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    model, args = build(name)
    if model is None:
        pytest.skip(f"{name}: its zoo does not import")
    try:
        data = export(model, args, exporter)
    except Exception as err:  # noqa: BLE001 - the exporter's own failure, not the importer's
        pytest.skip(f"{name} does not export with {exporter}: {type(err).__name__}: {str(err)[:200]}")
    if exporter.endswith("dyn"):
        args = _batch_of_three(args)
    inputs = [a.numpy() for a in args]
    proto = onnx.load_from_string(data)
    names = [i.name for i in proto.graph.input if i.name not in {t.name for t in proto.graph.initializer}]
    imported = from_onnx(proto, examples=dict(zip(names, inputs)) if exporter.endswith("dyn") else None)
    want = _onnxruntime(data, inputs)
    with torch.no_grad():
        eager = model(*args).numpy()
    if (name, exporter) not in GRADIENTS:
        got = imported(*inputs)
        got = got[0] if isinstance(got, tuple) else got
        assert _relative(got, want) < 1e-5 and _relative(got, eager) < 1e-4
        return
    seed = np.random.default_rng(1).standard_normal(want.shape).astype(np.float32)
    floats = sum(x.dtype.kind == "f" for x in inputs)
    out, *grads = ExecutionEngine(imported.autodiff_module()).invoke("main_grad", *inputs,
                                                                      *imported.parameter_values(), seed)
    assert _relative(out, want) < 1e-5 and _relative(out, eager) < 1e-4
    model.zero_grad()
    model(*args).backward(torch.from_numpy(seed))
    floor = 1e-3 * max(p.grad.abs().max().item() for p in model.parameters() if p.grad is not None)
    matched = set()
    for (pname, value), grad in zip(imported.parameters, grads[floats:], strict=True):
        found = _counterpart(model, value)
        if found is None:  # a constant the exporter folded (GPT-2's causal mask): no PyTorch parameter
            continue
        (reference, transposed), matched = found[1:], matched | {found[0]}
        assert _relative(grad, reference.T if transposed else reference, floor) < 1e-4, pname
    unmatched = [n for n, p in model.named_parameters() if p.grad is not None and p.grad.abs().max() > 0
                 and n not in matched]
    assert not unmatched, f"PyTorch parameters with a gradient that no ONNX weight holds: {unmatched}"


def _counterpart(model, value: np.ndarray) -> tuple[str, np.ndarray, bool] | None:
    """(name, autograd gradient, stored transposed) of the PyTorch parameter an ONNX weight holds (found
    by value: the exporters rename weights and store some transposed), or None. A weight that is the
    leading rows of a parameter (the dynamo exporter folds GPT-2's position embedding lookup of positions
    0..n-1 into a [1, n, d] constant) has those rows' gradient (the other rows are not read: zero)."""
    for name, p in model.named_parameters():
        w = p.detach().numpy()
        if w.shape == value.shape and np.array_equal(w, value):
            return name, p.grad.numpy(), False
        if w.ndim == 2 and w.T.shape == value.shape and np.array_equal(w.T, value):
            return name, p.grad.numpy(), True
        rows = value.reshape(-1, w.shape[-1]) if w.ndim == 2 and value.shape[-1] == w.shape[-1] else None
        if rows is not None and rows.shape[0] <= w.shape[0] and np.array_equal(w[:rows.shape[0]], rows):
            return name, p.grad.numpy()[:rows.shape[0]].reshape(value.shape), False
    return None


def test_scan_over_a_constant_binds_its_scalar_elements():
    """A Scan over a 1-D tensor known at import time binds each element, a numpy scalar, as a constant
    (it was taken for an IR value: an internal error on ONNX's `test_scan9_scalar` with its inputs initializers)."""
    from onnx import TensorProto, helper, numpy_helper

    scalar = [helper.make_tensor_value_info(n, TensorProto.FLOAT, []) for n in ("s", "x", "s2", "y")]
    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Identity", ["s2"], ["y"])],
                             "body", scalar[:2], scalar[2:])
    scan = helper.make_node("Scan", ["init", "xs"], ["total", "running"], body=body, num_scan_inputs=1)
    graph = helper.make_graph([scan], "scan_constant", [],
                              [helper.make_tensor_value_info("total", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("running", TensorProto.FLOAT, [3])],
                              [numpy_helper.from_array(np.array(0.5, np.float32), "init"),
                               numpy_helper.from_array(np.array([1.0, 2.0, 4.0], np.float32), "xs")])
    imported = from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), parameters=[])
    total, running = interpret(imported.module, "main")
    np.testing.assert_array_equal(total, np.float32(7.5))
    np.testing.assert_array_equal(running, np.array([1.5, 3.5, 7.5], np.float32))
