"""torchvision's `deform_conv2d` through dfc.torch (dfc/torch/vision_ops.py, `nn.deform_conv`): values and
gradients to the input, offsets, mask, kernel and bias against torch's autograd of an independent
implementation (`support.deform_conv_reference`), with and without a mask. torchvision's operator is
used when torchvision imports; otherwise a stand-in registered here under torchvision's name and schema
(its eager kernel the reference) reaches the same handler, and the DeformConv2d module test skips.
CI checks the capture; the compiled comparisons (a minute on the 2-core VM) run with --slow."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from support.deform_conv_reference import torch_deform_conv  # noqa: E402

import dfc.torch  # noqa: E402

F64 = torch.float64
SCHEMA = ("(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, "
          "SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
          "bool use_mask) -> Tensor")


def _torchvision():
    try:
        import torchvision
    except Exception:  # a torchvision whose C extension does not load (built for another torch or CUDA)
        return None
    return torchvision


def _reference(x, w, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups,
               use_mask):
    return torch_deform_conv(x, w, offset, mask if use_mask else None, bias, (stride_h, stride_w), (pad_h, pad_w),
                             (dil_h, dil_w), groups, offset_groups)


def _deform_conv2d():
    """`torch.ops.torchvision.deform_conv2d`: torchvision's, else the stand-in (registered once)."""
    if _torchvision() is None and not hasattr(torch.ops.torchvision, "deform_conv2d"):
        library = torch.library.Library("torchvision", "FRAGMENT")
        library.define("deform_conv2d" + SCHEMA)
        library.impl("deform_conv2d", lambda *args: _reference(*args).detach(), "CPU")
        torch.library.register_fake("torchvision::deform_conv2d", lib=library)(
            lambda x, w, offset, *rest: x.new_empty(x.shape[0], w.shape[0], *offset.shape[2:]))
        _deform_conv2d.library = library  # kept alive: the registration lasts while it does
    return torch.ops.torchvision.deform_conv2d


class Deform(torch.nn.Module):
    """One deform_conv2d per case (one program: one compile)."""

    def forward(self, *inputs):
        return tuple(_deform_conv2d()(*inputs[5 * k:5 * k + 5], *geometry, use_mask)
                     for k, (geometry, _, _, _, use_mask) in enumerate(CASES.values()))


CASES = {
    # stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups; input, kernel, output shapes
    "mask, two groups and offset groups, stride, padding": ((2, 1, 1, 0, 1, 1, 2, 2), (2, 4, 5, 4), (6, 2, 2, 2),
                                                            (3, 3), True),
    "no mask, dilation": ((1, 1, 0, 1, 2, 1, 1, 1), (1, 2, 4, 4), (3, 2, 2, 3), (2, 4), False),
}


def _inputs(g, geometry, x_shape, w_shape, out, use_mask) -> list:
    taps, offset_groups = w_shape[2] * w_shape[3], geometry[7]
    inputs = [torch.randn(*x_shape, dtype=F64, generator=g), torch.randn(*w_shape, dtype=F64, generator=g),
              torch.rand(x_shape[0], 2 * offset_groups * taps, *out, dtype=F64, generator=g) * 4 - 2,
              torch.rand(x_shape[0], offset_groups * taps, *out, dtype=F64, generator=g) if use_mask else
              torch.zeros(x_shape[0], 1, dtype=F64), torch.randn(w_shape[0], dtype=F64, generator=g)]
    return [t.requires_grad_(use_mask or k != 3) for k, t in enumerate(inputs)]


def test_deform_conv2d_is_one_nn_deform_conv():
    """The capture (CI's check; the numbers are the --slow test's): each call one `nn.deform_conv` with
    torchvision's geometry, a mask of ones where torchvision's use_mask is false."""
    g = torch.Generator().manual_seed(3)
    inputs = [t for case in CASES.values() for t in _inputs(g, *case)]
    (text,) = dfc.torch.compile(Deform(), inputs).compiled_text()
    convs = [line for line in text.splitlines() if "nn.deform_conv" in line]
    assert len(convs) == 2
    assert ("strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 0>, "
            "dilations = array<i64: 1, 1>, group = 2 : i64, offset_group = 2 : i64") in convs[0]
    assert "tensor<1x6x2x4xf64>" in convs[1] and "dilations = array<i64: 2, 1>" in convs[1]
    assert "nn.full 1.00000000000000000e+00 : f64" in text or "value = 1.00000000000000000e+00 : f64" in text


@pytest.mark.slow
def test_deform_conv2d_equals_its_definition_with_gradients():
    """Each case's values, and its gradients to every input (the mask's where it is used)."""
    g = torch.Generator().manual_seed(3)
    inputs = [t for case in CASES.values() for t in _inputs(g, *case)]
    got = dfc.torch.compile(Deform())(*inputs)
    want = [_reference(*inputs[5 * k:5 * k + 5], *case[0], case[4]) for k, case in enumerate(CASES.values())]
    seeds = [torch.randn(w.shape, dtype=F64, generator=g) for w in want]
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    wrt = [t for t in inputs if t.requires_grad]
    loss = [sum((y * s).sum() for y, s in zip(ys, seeds)) for ys in (got, want)]
    for a, b in zip(torch.autograd.grad(loss[0], wrt), torch.autograd.grad(loss[1], wrt)):
        assert b.abs().max() > 0
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
def test_torchvision_deform_conv2d_module():
    torchvision = _torchvision()
    if torchvision is None:
        pytest.skip("torchvision does not import")
    torch.manual_seed(0)
    layer = torchvision.ops.DeformConv2d(2, 3, 3, padding=1).double()
    x, offset = torch.randn(1, 2, 4, 4, dtype=F64), torch.randn(1, 18, 4, 4, dtype=F64)
    got = dfc.torch.compile(layer)(x, offset)
    want = torch_deform_conv(x, layer.weight, offset, None, layer.bias, (1, 1), (1, 1), (1, 1), 1, 1)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got, layer(x, offset), rtol=1e-10, atol=1e-10)
