"""Models as people export them to ONNX: torchvision and timm convnets and vision transformers, Hugging Face
transformers with tiny random configurations (eager attention), and torch.nn blocks; each builder returns
(model in eval mode, example inputs). `export` runs `torch.onnx.export` with one of the exporters of
`EXPORTERS`. Used by tests/api/test_onnx_exports.py; `python tests/support/onnx_export_zoo.py` rewrites the
small exported model the default tests read (tests/data/onnx/)."""

from __future__ import annotations

import importlib
import io
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

EXPORTERS = ("ts13", "ts17", "ts20", "ts17dyn", "dynamo", "dynamo_dyn")
"""TorchScript (`dynamo=False`) at opsets 13, 17 and 20, and the dynamo exporter at its default opset; `dyn`:
the first dimension of every input dynamic (`dynamic_axes`, `dynamic_shapes`)."""
DATA = Path(__file__).resolve().parents[1] / "data" / "onnx"


def zoo(name: str) -> Any:
    """The zoo package `name`, or None when it does not import (timm and transformers import torchvision)."""
    _torchvision_without_extension()
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - missing, or built for another torch
        return None


@cache
def _torchvision_without_extension() -> None:
    """A torchvision whose C extension does not load (built for another torch) fails on import registering fake
    kernels for `torchvision::nms` and `qnms`, which the extension would have defined: define their schemas
    and import it again, so that its Python model definitions (and timm) import."""
    import torch

    try:
        importlib.import_module("torchvision")
    except ModuleNotFoundError:
        return
    except RuntimeError:
        for module in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[module]
        library = torch.library.Library("torchvision", "DEF")
        for op in ("nms", "qnms"):
            library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _LIBRARIES.append(library)
        try:
            importlib.import_module("torchvision")
        except Exception:  # noqa: BLE001 - broken otherwise: its models are skipped
            return


_LIBRARIES: list[Any] = []
"""The `torch.library.Library` objects defining those schemas (kept alive: the definitions go with them)."""


def export(model: Any, args: tuple, exporter: str) -> bytes:
    """`model` exported by `exporter` (one of `EXPORTERS`), inputs named in0, in1, ..."""
    import torch

    names = [f"in{k}" for k in range(len(args))]
    buffer = io.BytesIO()
    if exporter.startswith("ts"):
        dynamic = {n: {0: "batch"} for n in names} if exporter.endswith("dyn") else None
        torch.onnx.export(model, args, buffer, dynamo=False, opset_version=int(exporter[2:4]), input_names=names,
                          dynamic_axes=dynamic)
    else:
        batch = torch.export.Dim("batch")
        shapes = tuple({0: batch} for _ in args) if exporter.endswith("dyn") else None
        torch.onnx.export(model, args, buffer, dynamo=True, input_names=names, dynamic_shapes=shapes)
    return buffer.getvalue()


def _image(size: int = 32) -> tuple:
    import torch

    return (torch.randn(2, 3, size, size),)


def _ids(length: int = 8) -> Any:
    import torch

    return torch.randint(3, 100, (2, length))


def _torchvision(name: str, size: int = 32, **kwargs: Any) -> tuple:
    models = zoo("torchvision.models")
    return (None, ()) if models is None else (getattr(models, name)(num_classes=10, **kwargs), _image(size))


def _timm(name: str, size: int = 32, **kwargs: Any) -> tuple:
    timm = zoo("timm")
    return (None, ()) if timm is None else (timm.create_model(name, pretrained=False, num_classes=10, **kwargs),
                                            _image(size))


def _hugging_face(config: str, model: str, inputs: dict, **sizes: Any) -> tuple:
    """A transformers model of a random tiny `config`, eager attention, dropout 0, returning its first output."""
    import torch

    transformers = zoo("transformers")
    if transformers is None:
        return None, ()
    cfg = getattr(transformers, config)(**sizes)
    for key, value in cfg.to_dict().items():
        if ("dropout" in key or key.endswith("_prob")) and isinstance(value, float):
            setattr(cfg, key, 0.0)
    inner = getattr(transformers, model)._from_config(cfg, attn_implementation="eager")

    class FirstOutput(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = inner

        def forward(self, *args: Any) -> Any:
            return self.model(**dict(zip(inputs, args)))[0]

    return FirstOutput(), tuple(inputs.values())


def _nn(name: str) -> tuple:
    import torch
    from torch import nn

    class LSTMHead(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm, self.fc = nn.LSTM(8, 16, num_layers=2, batch_first=True), nn.Linear(16, 3)

        def forward(self, x: Any) -> Any:
            return self.fc(self.lstm(x)[0])

    class AttentionBlock(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn, self.norm = nn.MultiheadAttention(8, 2, batch_first=True), nn.LayerNorm(8)

        def forward(self, x: Any) -> Any:
            return self.norm(x + self.attn(x, x, x, need_weights=False)[0])

    class ViewHead(nn.Module):
        """`y.view(y.size(0), -1)`: Shape, Gather, Unsqueeze, Concat, Reshape when the batch is dynamic."""

        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(4 * 8, 5)

        def forward(self, x: Any) -> Any:
            y = torch.relu(self.fc1(x))
            return torch.softmax(self.fc2(y.view(y.size(0), -1)), -1)

    return {"lstm": (LSTMHead(), (torch.randn(2, 5, 8),)), "attention": (AttentionBlock(), (torch.randn(2, 5, 8),)),
            "viewhead": (ViewHead(), (torch.randn(2, 4, 6),))}[name]


TEXT = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=64)
TINY_VIT = dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=64)

MODELS: dict[str, Callable[[], tuple]] = {
    "torchvision resnet18": lambda: _torchvision("resnet18"),
    "torchvision mobilenet_v2": lambda: _torchvision("mobilenet_v2"),
    "torchvision mobilenet_v3_small": lambda: _torchvision("mobilenet_v3_small"),
    "torchvision squeezenet1_1": lambda: _torchvision("squeezenet1_1", 64),
    "torchvision efficientnet_b0": lambda: _torchvision("efficientnet_b0"),
    "torchvision shufflenet_v2_x0_5": lambda: _torchvision("shufflenet_v2_x0_5"),
    "torchvision vit (tiny)": lambda: _torchvision("VisionTransformer", image_size=32, patch_size=8, num_layers=2,
                                                  num_heads=2, hidden_dim=32, mlp_dim=64),
    "torchvision densenet (tiny)": lambda: _torchvision("DenseNet", growth_rate=8, block_config=(2, 2),
                                                       num_init_features=16),
    "timm resnet10t": lambda: _timm("resnet10t"),
    "timm mobilenetv3_small_050": lambda: _timm("mobilenetv3_small_050"),
    "timm efficientnet_b0": lambda: _timm("efficientnet_b0"),
    "timm convnext_atto": lambda: _timm("convnext_atto"),
    "timm vit_tiny": lambda: _timm("vit_tiny_patch16_224", img_size=32, depth=2),
    "timm deit_tiny_distilled": lambda: _timm("deit_tiny_distilled_patch16_224", img_size=32, depth=2),
    "timm swin_tiny": lambda: _timm("swin_tiny_patch4_window7_224", 56, img_size=56, depths=(1, 1, 1, 1),
                                    embed_dim=24, num_heads=(1, 1, 2, 2)),
    "timm levit_128s": lambda: _timm("levit_128s", 64, img_size=64),
    "timm mixer_s16": lambda: _timm("mixer_s16_224", img_size=32),
    "timm regnetx_002": lambda: _timm("regnetx_002"),
    "timm ghostnet_050": lambda: _timm("ghostnet_050"),
    "timm test_vit": lambda: _timm("test_vit", 160),
    "timm test_efficientnet": lambda: _timm("test_efficientnet", 64),
    "timm test_byobnet": lambda: _timm("test_byobnet", 64),
    "timm test_nfnet": lambda: _timm("test_nfnet", 64),
    "hf bert": lambda: _hugging_face("BertConfig", "BertModel", {"input_ids": _ids()}, **TEXT),
    "hf distilbert": lambda: _hugging_face("DistilBertConfig", "DistilBertModel", {"input_ids": _ids()},
                                           vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                           max_position_embeddings=64),
    "hf gpt2": lambda: _hugging_face("GPT2Config", "GPT2Model", {"input_ids": _ids()}, vocab_size=100, n_embd=32,
                                     n_layer=2, n_head=2, n_positions=64),
    "hf t5 encoder": lambda: _hugging_face("T5Config", "T5EncoderModel", {"input_ids": _ids()}, vocab_size=100,
                                           d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=2),
    "hf llama": lambda: _hugging_face("LlamaConfig", "LlamaModel", {"input_ids": _ids()}, num_key_value_heads=1,
                                      **TEXT),
    "hf whisper": lambda: _hugging_face(
        "WhisperConfig", "WhisperModel", {"input_features": _whisper_features(), "decoder_input_ids": _ids(4)},
        vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
        max_source_positions=20, max_target_positions=32, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=0),
    "hf vit": lambda: _hugging_face("ViTConfig", "ViTModel", {"pixel_values": _image()[0]}, **TINY_VIT),
    "hf clip vision": lambda: _hugging_face("CLIPVisionConfig", "CLIPVisionModel", {"pixel_values": _image()[0]},
                                            **TINY_VIT),
    "nn lstm": lambda: _nn("lstm"),
    "nn attention": lambda: _nn("attention"),
    "nn viewhead": lambda: _nn("viewhead"),
}


def _whisper_features() -> Any:
    import torch

    return torch.randn(2, 16, 40)


def build(name: str) -> tuple:
    """(model in eval mode with its parameters perturbed, inputs), or (None, ()) when its zoo does not import.
    Every parameter gets noise of 0.05 times its spread (at least 0.02), so that no two hold equal values (an
    exporter merges equal initializers; the tests find PyTorch's parameter of each ONNX weight by value) and
    zero-initialised heads do not make every output 0."""
    import torch

    torch.manual_seed(0)
    model, args = MODELS[name]()
    if model is None:
        return None, ()
    with torch.no_grad():
        for p in model.parameters():
            spread = p.std().item() if p.numel() > 1 else 0.0
            p.add_(torch.randn_like(p) * max(0.05 * spread, 0.02))
    return model.eval(), args


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    model, args = build("nn viewhead")
    (DATA / "viewhead_ts17dyn.onnx").write_bytes(export(model, args, "ts17dyn"))
