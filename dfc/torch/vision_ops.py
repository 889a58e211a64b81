"""Handlers of torchvision's operators (`torch.ops.torchvision.*`), which torchvision's Python layers
call and `torch.export` keeps whole: `deform_conv2d` (`torchvision.ops.deform_conv2d`, `DeformConv2d`)
is `nn.deform_conv`, the op ONNX's DeformConv imports to. The table is keyed by the op's name in the
exported graph; torchvision itself is not imported (its operators exist once it is)."""

from __future__ import annotations

from dfc.torch.aten_common import Handler

VISION_HANDLERS: dict[str, Handler] = {}


def _deform_conv2d(b, node, x, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                   groups, offset_groups, use_mask):
    """torchvision's deformable convolution v1 (`use_mask` false: the mask argument, a placeholder, is
    replaced by ones) or v2; padding `pad_h`, `pad_w` on both sides. Its gradients are nn.deform_conv's
    expansion's: to the input, offsets, mask, kernel and bias."""
    shape, dtype = b.out(node)
    n, _, *out = shape
    if not use_mask:
        mask = b.full(1.0, [n, offset_groups * weight.shape[2] * weight.shape[3], *out], dtype)
    return b.op("nn.deform_conv", [x, weight, offset, mask, bias], shape, dtype, strides=[stride_h, stride_w],
                padding_low=[pad_h, pad_w], padding_high=[pad_h, pad_w], dilations=[dilation_h, dilation_w],
                group=groups, offset_group=offset_groups)


VISION_HANDLERS["torchvision.deform_conv2d.default"] = _deform_conv2d
