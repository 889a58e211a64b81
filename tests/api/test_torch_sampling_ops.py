"""The forms of issues 34 and 35 that eager's own comparison cannot check alone: `kthvalue` and `mode`
among equal values (torch leaves the index unspecified: the value must be exact and the index must point
at it), embedding bags whose boundaries are run-time data (one compiled program, several offsets), and
`nn.grid_sample` on the reference interpreter (its semantics) against eager PyTorch (2-D bilinear in CI, every
mode and 3-D with --slow). The OpInfo samples and gradients, on the engine, are in `test_aten_coverage.py`."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import dfc  # noqa: E402
import dfc.torch  # noqa: E402
from dfc.dialects.nn_sample import SAMPLE_MODES  # noqa: E402

F64 = torch.float64


def test_kthvalue_and_mode_of_ties_give_exact_values_and_indices_of_them():
    """Rows full of equal values: the values equal eager's exactly, and each index names an element holding
    its value (the stable order's for kthvalue, the last occurrence for mode, as docs/torch.md says)."""
    x = torch.tensor([[2.0, 1.0, 2.0, 1.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0], [5.0, -1.0, 5.0, 5.0, -1.0]], dtype=F64)

    def fn(x):
        return torch.kthvalue(x, 2, 1), torch.kthvalue(x, 4, 1), torch.mode(x, 1), torch.mode(x, 0)

    got = dfc.torch.compile(fn, (x,))(x)
    for dim, (ours, eager) in zip((1, 1, 1, 0), zip(got, fn(x))):
        assert torch.equal(ours.values, eager.values)
        assert torch.equal(x.gather(dim, ours.indices.unsqueeze(dim)).squeeze(dim), ours.values)
    assert got[0].indices.tolist() == [3, 1, 4] and got[2].indices.tolist() == [3, 4, 3]


def test_embedding_bag_boundaries_are_run_time_data():
    """One compiled program, called with other offsets (an empty bag, a single one, shifted boundaries),
    matches eager for each: the bags come from the offsets' values, not from the capture's."""
    torch.manual_seed(0)
    weight = torch.randn(7, 3, dtype=F64)
    indices = torch.tensor([1, 6, 6, 0, 5, 2, 3])

    def fn(w, k, o):
        return (F.embedding_bag(k, w, o, mode="sum"), F.embedding_bag(k, w, o, mode="mean"),
                F.embedding_bag(k, w, o, mode="max"))

    compiled = dfc.torch.compile(fn, (weight, indices, torch.tensor([0, 2, 5])))
    for offsets in ([0, 2, 5], [0, 0, 7], [0, 6, 6], [0, 1, 2]):
        o = torch.tensor(offsets)
        for ours, eager in zip(compiled(weight, indices, o), fn(weight, indices, o)):
            torch.testing.assert_close(ours, eager, rtol=1e-12, atol=1e-12)


def _grid_sample_module(mode: str, padding: str, align: bool, x_shape: tuple, g_shape: tuple) -> str:
    flag = ", align_corners" if align else ""
    x, g = (f"tensor<{'x'.join(map(str, shape))}xf64>" for shape in (x_shape, g_shape))
    y = f"tensor<{'x'.join(map(str, (*x_shape[:2], *g_shape[1:-1])))}xf64>"
    return f"""
func.func @f(%x: {x}, %g: {g}) -> {y} {{
  %y = nn.grid_sample %x, %g {{mode = "{mode}", padding_mode = "{padding}"{flag}}} : ({x}, {g}) -> {y}
  func.return %y : {y}
}}
"""


GRIDS = {2: np.array([[[[-1.0, -1.0], [1.0, 1.0]], [[-1.7, 0.3], [0.25, 1.4]], [[2.9, -2.2], [0.1, -0.45]]]]),
         3: np.array([[[[[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]], [[-1.7, 0.3, 0.8], [0.25, 1.4, -1.2]]],
                       [[[2.9, -2.2, 0.4], [0.1, -0.45, 3.3]], [[0.6, 0.5, -0.5], [-2.4, 0.9, 1.05]]]]])}
"""Points inside, on the corners and outside the image (beyond both ends, more than a width away)."""


@pytest.mark.parametrize("rank,mode", [(2, "bilinear"),
                                       *(pytest.param(2, m, marks=pytest.mark.slow) for m in SAMPLE_MODES[1:]),
                                       *(pytest.param(3, m, marks=pytest.mark.slow) for m in SAMPLE_MODES[:2])])
def test_grid_sample_interpreter_matches_eager(rank, mode):
    """`nn.grid_sample`'s semantics (the interpreter running its expansion) equal F.grid_sample's (grid_sampler_2d
    and _3d), points outside the image and on its edges included, for each padding mode and both corner
    conventions."""
    rng = np.random.default_rng(1)
    x, grid = rng.standard_normal((1, 2, 4, 5) if rank == 2 else (1, 2, 3, 4, 5)), GRIDS[rank]
    for padding in ("zeros", "border", "reflection"):
        for align in (False, True):
            module = dfc.parse_module(_grid_sample_module(mode, padding, align, x.shape, grid.shape))
            got = dfc.interpret(module, "f", x, grid)
            want = F.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode, padding, align_corners=align)
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12, err_msg=f"{padding} {align}")
