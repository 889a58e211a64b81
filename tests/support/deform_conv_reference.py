"""Deformable convolution by its definition, in torch (autograd gives its gradients): the independent
reference of ONNX's DeformConv and torchvision's deform_conv2d tests."""

from __future__ import annotations

import itertools
import math

import torch


def torch_deform_conv(x, w, offset, mask, bias, strides, pads, dilations, group, offset_group):
    """Deformable convolution of any spatial rank, by its definition: each tap's point is the output point times
    the stride, less the padding, plus the tap times the dilation, plus its offset; its value the sum over the
    2^r neighbours of their pixel (0 outside) times the product of 1 - |distance| along each axis."""
    n, c, *spatial = x.shape
    oc, cg, *kernel = w.shape
    rank, out = len(spatial), offset.shape[2:]
    taps, points = math.prod(kernel), math.prod(out)
    tap = torch.stack(torch.meshgrid(*(torch.arange(k) * d for k, d in zip(kernel, dilations)), indexing="ij"))
    start = torch.stack(torch.meshgrid(*(torch.arange(o) * s - p for o, s, p in zip(out, strides, pads)),
                                       indexing="ij"))
    position = (offset.reshape(n, offset_group, taps, rank, points) + tap.reshape(rank, taps).T[..., None]
                + start.reshape(rank, points))
    low = position.detach().floor()
    image = x.reshape(n, offset_group, c // offset_group, math.prod(spatial))
    sizes = torch.tensor(spatial).reshape(rank, 1)
    sampled = 0
    for corner in itertools.product((0, 1), repeat=rank):
        at = low + torch.tensor(corner, dtype=low.dtype).reshape(rank, 1)
        weight = (1 - (position - at).abs()).prod(3) * ((at >= 0) & (at <= sizes - 1)).all(3)
        flat = 0
        for a in range(rank):
            flat = flat * spatial[a] + at[:, :, :, a].clamp(0, spatial[a] - 1).long()
        index = flat.reshape(n, offset_group, 1, taps * points).expand(-1, -1, c // offset_group, -1)
        pixels = torch.gather(image, 3, index).reshape(n, offset_group, c // offset_group, taps, points)
        sampled = sampled + pixels * weight[:, :, None]
    if mask is not None:
        sampled = sampled * mask.reshape(n, offset_group, 1, taps, points)
    columns = sampled.reshape(n, group, cg * taps, points)
    y = torch.einsum("gok,ngkp->ngop", w.reshape(group, oc // group, cg * taps), columns).reshape(n, oc, *out)
    return y if bias is None else y + bias.reshape(oc, *[1] * rank)
