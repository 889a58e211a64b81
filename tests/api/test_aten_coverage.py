"""Every aten overload dfc.torch translates (`aten_ops.HANDLERS`), compiled by
`dfc.torch.compile` and compared with eager PyTorch in float64, element by
element and relatively; gradients against `torch.autograd` for a subset.

The cases are PyTorch's OpInfo samples (`op_db`: its inputs and argument
forms) for the OpInfos in `OPINFOS`, and hand-written ones (`hand_cases`) for the
overloads no OpInfo reaches and for edge forms: optional arguments omitted
and given, negative dims, size-1 and empty dims, keepdim both ways, integer
inputs. CI runs every hand-written case and one sample of each OpInfo
(`CI_SAMPLE`), as a few programs of many independent cases (one compile each);
`DFC_FULL_OPINFO=1` runs every sample of every OpInfo in `OPINFOS`. A sample
either matches eager or is refused with `UnsupportedOpError`, never a wrong
number.

The overloads each case exercised are read from the program dfc translated
(the exported graph's calls, by submodule), so `test_every_handler_has_a_case`
fails for a handler without a matching case.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import math
import os
import re
import sys
import types
import unittest
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils import _pytree as pytree  # noqa: E402

import dfc.torch  # noqa: E402
from dfc.torch import capture as capture_module  # noqa: E402
from dfc.torch.aten_linalg import LINALG_HANDLERS  # noqa: E402
from dfc.torch.aten_ops import HANDLERS  # noqa: E402
from dfc.torch.capture import KEPT, UnsupportedOpError, bind  # noqa: E402
from dfc.torch.module import FunctionModule  # noqa: E402

FULL = os.environ.get("DFC_FULL_OPINFO", "") == "1"
RTOL = 1e-9
"""Both sides compute in float64: only rounding differs."""
FLOOR = 1e-3
ATOL = 1e-12
"""An element's tolerance is RTOL relative to max(|expected|, FLOOR * the tensor's largest
|expected|), plus ATOL: a value that cancels to about 0 (a whole tensor of them, as the
gradient of a one-element layer norm) carries the rounding of terms of order 1."""
RTOL_F32 = 2.0 ** -21
"""A float32 result (of integer inputs) is eager's own float32 computation, not a float64 reference: a few ulp."""
F64 = torch.float64

OPINFOS = (
    "abs", "add", "addmm", "amax", "amin", "bmm", "cat", "clone", "cos", "div.no_rounding_mode", "eq", "erf",
    "exp", "expand", "expm1", "full_like", "ge", "gt", "le", "log", "log1p", "log_softmax", "logical_not", "lt",
    "maximum", "mean", "minimum", "mm", "mul", "ne", "neg", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.avg_pool2d", "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.cross_entropy",
    "nn.functional.embedding", "nn.functional.gelu", "nn.functional.hardsigmoid", "nn.functional.hardswish",
    "nn.functional.hardtanh", "nn.functional.layer_norm", "nn.functional.linear", "nn.functional.max_pool2d",
    "nn.functional.nll_loss", "nn.functional.relu", "nn.functional.relu6", "permute", "pow", "rsqrt", "scalar_tensor",
    "select", "sigmoid", "sin", "slice", "softmax", "sqrt", "square", "squeeze", "sub", "sum", "tanh",
    "torch.ops.aten._safe_softmax.default", "unsqueeze", "view", "view_copy", "where",
    "split_with_sizes", "repeat", "gather", "cumsum", "constant_pad_nd", "nn.functional.pad.constant",
    "nn.functional.interpolate.nearest", "nn.functional.interpolate.bilinear", "nn.functional.group_norm",
    "slice_scatter", "isnan", "__getitem__", "topk", "round", "sort", "argsort", "msort", "median",
    "tan", "sinh", "cosh", "atan", "asin", "acos", "asinh", "acosh", "atanh", "log2", "log10", "reciprocal", "atan2",
    "floor", "ceil", "trunc", "sign", "frac", "isinf", "nn.functional.elu", "nn.functional.leaky_relu",
    "logical_and", "logical_or", "logical_xor", "__rpow__", "fmod", "remainder", "div.floor_rounding",
    "div.trunc_rounding", "floor_divide", "clamp", "argmax", "argmin", "max.reduction_with_dim",
    "min.reduction_with_dim", "any", "prod", "var", "std", "var_mean", "flip", "index_select", "diagonal", "scatter",
    "scatter_add", "index_put", "index_add", "masked_fill", "tril", "triu", "roll", "nn.functional.pixel_shuffle",
    "logsumexp", "masked_scatter", "scatter_reduce.sum", "nn.functional.avg_pool3d", "nn.functional.max_pool3d",
    "nn.functional.adaptive_avg_pool3d", "as_strided", "_upsample_bilinear2d_aa",
    "linalg.vector_norm", "nn.functional.normalize", "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "cdist", "nn.functional.pdist", "kthvalue", "mode", "grid_sampler_2d",
    "nn.functional.grid_sample", "nn.functional.embedding_bag",
    "cumprod", "cummax", "cummin", "logcumsumexp", "addmv", "addbmm", "copysign", "signbit", "bitwise_left_shift",
    "bitwise_right_shift", "exp2", "fmax", "fmin", "logaddexp2",
    "lgamma", "digamma", "polygamma.polygamma_n_1", "i0", "special.i0e", "special.i1", "special.i1e", "erfc",
    "special.erfcx", "special.ndtri", "special.zeta", "special.modified_bessel_i0", "special.modified_bessel_i1",
    "round.decimals_3",
)
"""The OpInfos whose op is one overload in HANDLERS (or decomposes to a few)."""
CI_SAMPLE = {"nn.functional.adaptive_avg_pool2d": 6, "nn.functional.avg_pool2d": 5, "nn.functional.max_pool2d": 13,
             "nn.functional.nll_loss": 21, "cdist": 208, "grid_sampler_2d": 5, "nn.functional.grid_sample": 12}
"""The sample CI runs of the OpInfos whose first is a form dfc refuses (uneven adaptive
sizes, count_include_pad=False with padding, ceil_mode or return_indices, reduction='none')."""


@dataclass
class Case:
    """A function of tensors (or a module) and its inputs; `grad`: also compare gradients."""

    name: str
    module: nn.Module
    inputs: tuple
    grad: bool = False
    opinfo: bool = False
    exact: Callable[[nn.Module], None] | None = None
    """Applied to eager's copy of `module` where eager's own result is not exact in float64."""
    targets: set[str] = field(default_factory=set)
    """The aten overloads of the program dfc translated for this case."""


def case(name: str, fn: Callable | nn.Module, *inputs, grad: bool = False) -> Case:
    module = fn if isinstance(fn, nn.Module) else FunctionModule(fn)
    return Case(name, module, tuple(inputs), grad, exact=_exact_hardsigmoid)


def hardsigmoid(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    """torch's hardsigmoid (its values, and its gradient: 1/6 strictly inside
    (-3, 3)), without the float32 constant 1/6 of its float64 backward."""
    exact = torch.where((x > -3) & (x < 3), x / 6 + 0.5, (x >= 3).to(x.dtype))
    return exact + (F.hardsigmoid(x) - exact).detach()


def _exact_hardsigmoid(module: nn.Module) -> None:
    """Eager's hardsigmoid in `module` computed by `hardsigmoid`."""
    for m in module.modules():
        if isinstance(m, nn.Hardsigmoid):
            m.forward = hardsigmoid
        if isinstance(m, FunctionModule) and m.fn is F.hardsigmoid:
            m.fn = hardsigmoid


# --- comparison ------------------------------------------------------------------

def assert_matches(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """Equal shapes and dtypes; integers and booleans equal, floats within the
    tolerance of each element (RTOL), NaN and infinities where eager has them."""
    kinds = (got.shape, got.dtype), (want.shape, want.dtype)
    assert kinds[0] == kinds[1], f"{what}: {kinds[0]} != {kinds[1]}"
    if not want.is_floating_point():
        assert torch.equal(got, want), f"{what}: {got} != {want}"
        return
    got, want = got.detach().to(F64), want.detach().to(F64)
    finite = torch.isfinite(want)
    infinite = torch.isinf(want)
    same_special = torch.equal(torch.isnan(got), torch.isnan(want)) and torch.equal(got[infinite], want[infinite])
    assert same_special and torch.isfinite(got[finite]).all(), f"{what}: {got} != {want} (NaN or infinities)"
    if not finite.any():
        return
    scale = want[finite].abs()
    rtol = RTOL_F32 if kinds[1][1] == torch.float32 else RTOL
    bound = rtol * torch.maximum(scale, FLOOR * scale.max()) + ATOL
    error = (got[finite] - want[finite]).abs()
    worst = int(torch.argmax(error - bound))
    assert (error <= bound).all(), (
        f"{what}: element {worst} of the finite ones is {got[finite][worst].item()!r}, eager "
        f"{want[finite][worst].item()!r} (max relative error {float((error / scale.clamp_min(1e-300)).max()):.3g})")


def assert_all_match(got, want, what: str) -> None:
    got_leaves, got_spec = pytree.tree_flatten(got)
    want_leaves, want_spec = pytree.tree_flatten(want)
    assert got_spec == want_spec, f"{what}: output structure {got_spec} != {want_spec}"
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        assert_matches(g, w, f"{what} output {k}")


# --- running cases -----------------------------------------------------------------

class Batch(nn.Module):
    """Independent cases as one program: its inputs are theirs, in order, and its outputs a tuple of theirs."""

    def __init__(self, cases: list[Case]):
        super().__init__()
        self.cases = nn.ModuleList(c.module for c in cases)
        self.counts = [len(c.inputs) for c in cases]

    def forward(self, *inputs):
        outputs, start = [], 0
        for module, n in zip(self.cases, self.counts):
            outputs.append(module(*inputs[start:start + n]))
            start += n
        return tuple(outputs)


@contextlib.contextmanager
def recording():
    """The exported programs `capture` translates while the block runs."""
    programs = []
    export = capture_module.export

    def recorded(*args, **kwargs):
        programs.append(export(*args, **kwargs))
        return programs[-1]

    capture_module.export = recorded
    try:
        yield programs
    finally:
        capture_module.export = export


def _targets_by_case(program) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or not hasattr(node.target, "_schema"):
            continue
        for path, _ in (node.meta.get("nn_module_stack") or {}).values():
            if re.fullmatch(r"cases\.\d+(\..*)?", path):
                found.setdefault(int(path.split(".")[1]), set()).add(str(node.target))
                break
    return found


def _inputs(c: Case, grad: bool) -> tuple:
    return tuple(t.detach().clone().requires_grad_(grad and c.grad and t.is_floating_point()) for t in c.inputs)


def _gradients(outputs: list, wrt: list[list[torch.Tensor]], cotangents: list) -> list[list[torch.Tensor]]:
    """Per case, the gradients of its `wrt` for the cotangents of its float outputs
    (all cases in one backward: a compiled program runs its backward once)."""
    floats = [o for out in outputs for o in pytree.tree_leaves(out) if o.is_floating_point()]
    flat = [w for ws in wrt for w in ws]
    pairs = [(o, c) for o, c in zip(floats, cotangents) if o.requires_grad]
    grads = torch.autograd.grad([o for o, _ in pairs], flat, [c for _, c in pairs], allow_unused=True)
    grads = [torch.zeros_like(w) if g is None else g for g, w in zip(grads, flat)]
    split, start = [], 0
    for ws in wrt:
        split.append(grads[start:start + len(ws)])
        start += len(ws)
    return split


def run(cases: list[Case], grad: bool) -> dict[str, str]:
    """Compile `cases` as one program and compare each with eager (values, and
    with `grad` the gradients of the cases that ask for them): per case name,
    "pass", "refused: <why>" or "FAIL: <why>". The cases a refusal names are
    dropped and the rest compiled again; an error that names no case splits
    the batch in halves. Each passing case's `targets` are recorded."""
    status: dict[str, str] = {}
    cases = list(cases)
    while cases:
        try:
            status.update(_run_batch(cases, grad))
            return status
        except UnsupportedOpError as err:
            lines = {int(m.group(1)): line for line in str(err).splitlines()
                     if (m := re.search(r"\bcases\.(\d+)\b", line))}
            if not lines and len(cases) > 1:
                break
            for k in sorted(lines or {0: str(err)}, reverse=True):
                status[cases.pop(k).name] = f"refused: {(lines or {0: str(err)})[k]}"
        except IndexError as err:
            if len(cases) > 1:
                break
            status[cases.pop().name] = f"refused at run time: {err}"
        except Exception as err:  # noqa: BLE001 - reported as this case's failure
            if len(cases) > 1:
                break
            status[cases.pop().name] = f"FAIL: {type(err).__name__}: {err}"
    if cases:
        half = len(cases) // 2
        status.update(run(cases[:half], grad))
        status.update(run(cases[half:], grad))
    return status


def _run_batch(cases: list[Case], grad: bool) -> dict[str, str]:
    batch = Batch(cases)
    eager = copy.deepcopy(batch)
    for c, module in zip(cases, eager.cases):
        if c.exact is not None:
            c.exact(module)
    ours = [_inputs(c, grad) for c in cases]
    theirs = [_inputs(c, grad) for c in cases]
    flat_ours = [t for ts in ours for t in ts]
    flat_theirs = [t for ts in theirs for t in ts]
    with recording() as programs, torch.set_grad_enabled(grad):
        got = dfc.torch.compile(batch)(*flat_ours)
    with torch.set_grad_enabled(grad):
        want = eager(*flat_theirs)
    status = {}
    targets = _targets_by_case(programs[-1])
    for k, c in enumerate(cases):
        try:
            assert_all_match(got[k], want[k], c.name)
            for (name, a), b in zip(batch.cases[k].state_dict().items(), eager.cases[k].state_dict().values()):
                assert_matches(a, b, f"{c.name} state {name}")
            status[c.name] = "pass"
        except AssertionError as err:
            status[c.name] = f"FAIL: {err}"
        c.targets = targets.get(k, set())
    if grad:
        generator = torch.Generator().manual_seed(0)
        floats = [o for out in want for o in pytree.tree_leaves(out) if o.is_floating_point()]
        cotangents = [torch.randn(o.shape, dtype=o.dtype, generator=generator) for o in floats]
        wrt = [[t for t in ts if t.requires_grad] + list(m.parameters()) for ts, m in zip(ours, batch.cases)]
        eager_wrt = [[t for t in ts if t.requires_grad] + list(m.parameters()) for ts, m in zip(theirs, eager.cases)]
        mine = _gradients(list(got), wrt, cotangents)
        reference = _gradients(list(want), eager_wrt, cotangents)
        for k, c in enumerate(cases):
            try:
                assert wrt[k] or not c.grad, f"{c.name}: nothing to differentiate"
                for j, (a, b) in enumerate(zip(mine[k], reference[k])):
                    assert_matches(a, b, f"{c.name} gradient {j}")
            except AssertionError as err:
                status[c.name] = f"FAIL: {err}" if status[c.name] == "pass" else status[c.name]
    return status


# --- OpInfo samples ------------------------------------------------------------------

@functools.cache
def op_db() -> dict[str, object]:
    """PyTorch's OpInfos by name (`name.variant`). Its test helpers import
    `expecttest` for a TestCase base class only (a stand-in serves when it is
    not installed), and at import disable torch.backends' flag setters and wrap
    TorchScript calls: both are restored."""
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            sys.modules["expecttest"] = types.SimpleNamespace(TestCase=unittest.TestCase)
    saved = torch._C.ScriptFunction.__call__, torch._C.ScriptMethod.__call__, torch.backends.flags_frozen()
    try:
        from torch.testing._internal.common_methods_invocations import op_db as database
    finally:
        torch._C.ScriptFunction.__call__, torch._C.ScriptMethod.__call__ = saved[:2]
        if not saved[2]:  # the flag is a global of the module torch.backends wraps
            torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return {o.name + (f".{o.variant_test_name}" if o.variant_test_name else ""): o for o in database}


def _sample_fn(op, sample) -> tuple[Callable, tuple]:
    """The sample as a function of its tensors (its other arguments fixed)."""
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    where = [k for k, x in enumerate(leaves) if isinstance(x, torch.Tensor)]

    def fn(*tensors):
        filled = list(leaves)
        for k, t in zip(where, tensors):
            filled[k] = t
        x, args, kwargs = pytree.tree_unflatten(filled, spec)
        return op(x, *args, **kwargs)

    return fn, tuple(leaves[k] for k in where)


SELECTIONS = {"kthvalue": lambda x, k, dim=-1, keepdim=False: (dim, keepdim),
              "topk": lambda x, k, dim=-1, largest=True, sorted=True: (dim, True),
              "sort": lambda x, dim=-1, descending=False, stable=False: None if stable else (dim, True),
              "mode": lambda x, dim=-1, keepdim=False: (dim, keepdim)}
"""OpInfos whose index among equal values torch leaves unspecified, and where their arguments put the dim
(None: a form whose indices are specified, as a stable sort's): their samples compare the values and the
elements the indices point at (`_pointed`), not the indices."""


def _pointed(op: Callable, where: Callable) -> Callable:
    """`op` (values, indices) as its values and the elements of its input its indices name."""
    def fn(x, *args, **kwargs):
        values, indices = op(x, *args, **kwargs)
        if x.dim() == 0:
            return values, x
        if (place := where(x, *args, **kwargs)) is None:
            return values, indices
        dim, keepdim = place
        at = indices if keepdim else indices.unsqueeze(dim)
        named = torch.take_along_dim(x, at, dim)
        return values, named if keepdim else named.squeeze(dim)

    return fn


def opinfo_cases(name: str, ci: bool) -> list[Case]:
    """The samples of OpInfo `name` in float64: all, or CI's one (`CI_SAMPLE`, else the first)."""
    info = op_db()[name]
    torch.manual_seed(0)
    # its generator itself: `sample_inputs` wraps it to reseed before each sample and to find
    # the running unittest by walking the stack, which under pytest takes most of this file's time
    samples = list(enumerate(info.sample_inputs_func(info, "cpu", F64, False)))
    if ci:
        samples = [samples[CI_SAMPLE.get(name, 0)]]
    cases = []
    for k, sample in samples:
        fn, tensors = _sample_fn(_pointed(info.op, SELECTIONS[name]) if name in SELECTIONS else info.op, sample)
        if any(t.is_complex() for t in tensors):
            continue
        exact = None
        if info.op is F.hardsigmoid:
            def exact(module, sample=sample):
                module.fn = _sample_fn(hardsigmoid, sample)[0]
        # torch has no derivative for scatter with a reduce argument
        grad = info.supports_autograd and not (info.name == "scatter" and "reduce" in sample.kwargs)
        cases.append(Case(f"{name}#{k}", FunctionModule(fn), tensors, grad=grad, opinfo=True, exact=exact))
    return cases


# --- hand-written cases -------------------------------------------------------------

def _r(*shape, lo=-2.0, hi=2.0, generator=None) -> torch.Tensor:
    return torch.rand(*shape, dtype=F64, generator=generator) * (hi - lo) + lo


def _i(*shape, lo=-5, hi=6, generator=None) -> torch.Tensor:
    return torch.randint(lo, hi, shape, generator=generator)


class _MobileBlock(nn.Module):
    """A MobileNetV3 block: expand 1x1 with hardswish, depthwise 3x3 with batch
    norm (eval) and hardswish, squeeze-excite with hardsigmoid, project 1x1, residual."""

    def __init__(self, c=4, e=8):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(c, e, 1), nn.Hardswish())
        self.depthwise = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False), nn.BatchNorm2d(e),
                                       nn.Hardswish())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(e, 4, 1), nn.ReLU(), nn.Conv2d(4, e, 1),
                                nn.Hardsigmoid())
        self.project = nn.Conv2d(e, c, 1)

    def forward(self, x):
        h = self.depthwise(self.expand(x))
        return x + self.project(h * self.se(h))


def _mobile_block() -> nn.Module:
    torch.manual_seed(0)
    block = _MobileBlock().double()
    with torch.no_grad():
        for m in block.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5), m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5), m.bias.uniform_(-0.5, 0.5)
    return block.eval()


def _kinks() -> torch.Tensor:
    """Values around and at the kinks of clamp, hardtanh, hardswish, hardsigmoid and relu."""
    return torch.tensor([-4.0, -3.0, -2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 3.0, 3.5, 6.0, 7.0], dtype=F64)


def hand_cases() -> list[Case]:
    """Cases for the forms OpInfo samples miss; `grad=True` marks the subset whose
    gradients CI checks (every differentiable overload at least once)."""
    g = torch.Generator().manual_seed(0)

    def r(*shape, **kw):
        return _r(*shape, generator=g, **kw)

    def i(*shape, **kw):
        return _i(*shape, generator=g, **kw)

    x34, x234, y34 = r(3, 4), r(2, 3, 4), r(3, 4)
    pos = r(3, 4, lo=0.1, hi=3.0)
    k = _kinks()
    aten = torch.ops.aten
    logp = torch.log_softmax(r(5, 4), 1)
    target = torch.tensor([0, 3, 1, 1, 2])
    unary = (torch.relu, torch.tanh, torch.sigmoid, torch.exp, torch.neg, torch.abs, torch.erf, torch.sin, torch.cos,
             torch.expm1)
    positive = (torch.log, torch.sqrt, torch.rsqrt, torch.log1p)
    return [
        # the special functions' scalar forms (aten_special.py)
        case("zeta scalars", lambda q: torch.special.zeta(3.0, q) + torch.special.zeta(torch.full_like(q, 2.5), q)
             + torch.special.zeta(q.detach() + 2, 1.5), pos, grad=True),
        # issues 34 and 35: ops real models need
        case("arange", lambda x: x * torch.arange(4, dtype=F64), x34, grad=True),
        case("arange int start step", lambda: torch.arange(2, 11, 3)),
        case("arange negative step float32", lambda: torch.arange(1.0, -1.0, -0.25)),
        case("arange float64 fraction", lambda: torch.arange(0.1, 1.0, 0.1, dtype=F64)),
        case("split_with_sizes", lambda x: torch.split(x, [1, 3], 1), x34, grad=True),
        case("split equal -1", lambda x: torch.split(x, 2, -1), x234),
        case("chunk", lambda x: torch.chunk(x, 2, 0), r(5, 2)),
        case("repeat", lambda x: x.repeat(2, 1, 3), x34, grad=True),
        case("repeat ones", lambda x: x.repeat(1, 1), i(3, 4)),
        case("cumsum", lambda x: torch.cumsum(x, 1), r(3, 7), grad=True),
        case("sdpa causal, scale", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
             r(2, 4, 5), r(2, 6, 5), r(2, 6, 3), grad=True),
        case("sdpa bool mask with a fully masked row", lambda q, k, v, m: F.scaled_dot_product_attention(
            q, k, v, attn_mask=m), r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4),
             torch.tensor([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool), grad=True),
        case("sdpa float mask, broadcast batch", lambda q, k, v, m: F.scaled_dot_product_attention(
            q, k, v, attn_mask=m), r(2, 2, 3, 4), r(2, 1, 5, 4), r(2, 1, 5, 4), r(2, 1, 1, 5)),
        case("unfold (windows overlapping, with a gap, of a middle dimension)", lambda x: (
            x.unfold(1, 3, 2), x.unfold(-1, 2, 3), x.unfold(0, 2, 1)), r(3, 7, 5), grad=True),
        case("unfold of a 0-d tensor", lambda x: x.unfold(0, 1, 1), r(())),
        case("sdpa enable_gqa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
             r(2, 4, 3, 4), r(2, 2, 5, 4), r(2, 2, 5, 4)),
        case("cumsum -1 of int", lambda x: torch.cumsum(x, -1), i(2, 9)),
        case("cumsum of bool", lambda x: torch.cumsum(x > 0, 0), r(5)),
        case("cumsum dtype", lambda x: torch.cumsum(x, 0, dtype=F64), r(6, 2).float()),
        case("cumsum 0-d", lambda x: torch.cumsum(x, 0), torch.tensor(1.5, dtype=F64)),
        case("constant_pad_nd", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), x234, grad=True),
        case("constant_pad_nd crop", lambda x: F.pad(x, (-1, 2)), x34, grad=True),
        case("constant_pad_nd int", lambda x: F.pad(x, (2, 0), value=7), i(3, 4)),
        case("copy", lambda x, y: x.clone().copy_(y), x34, r(4), grad=True),
        case("copy int into float", lambda x, y: x.clone().copy_(y), x34, i(3, 4)),
        case("slice_scatter step", lambda x, y: torch.slice_scatter(x, y, 1, 1, 6, 2), r(3, 7), r(3, 3), grad=True),
        case("slice_scatter default", lambda x, y: torch.slice_scatter(x, y), x34, y34),
        case("slice_scatter negative", lambda x, y: torch.slice_scatter(x, y, -1, -3, None), x34, r(3, 3)),
        case("gather", lambda x, k: torch.gather(x, 1, k), r(3, 5), i(2, 4, lo=0, hi=5), grad=True),
        case("gather dim 0", lambda x, k: torch.gather(x, 0, k), x234, i(4, 3, 4, lo=0, hi=2)),
        case("gather -1", lambda x, k: x.gather(-1, k), x234, i(2, 3, 6, lo=0, hi=4)),
        case("gather of 0-d", lambda x, k: x.gather(0, k), torch.tensor(1.5, dtype=F64), torch.zeros(1, dtype=int),
             grad=True),
        case("index", lambda x, k: x[k], x34, i(2, 5, lo=-3, hi=3), grad=True),
        case("index middle", lambda x, k: x[:, k], x234, i(4, lo=-3, hi=3), grad=True),
        case("index adjacent broadcast", lambda x, j, k: x[:, j, k], x234, i(2, 1, lo=0, hi=3), i(5, lo=-4, hi=4)),
        case("index apart", lambda x, j, k: x[j, :, k], x234, i(3, lo=0, hi=2), i(3, lo=0, hi=4), grad=True),
        case("index int32", lambda x, k: x[k], i(5), i(3, lo=0, hi=5).int()),
        case("bitwise and or xor", lambda x, y: (x & y, x | y, x ^ y), i(3, 4), i(4)),
        case("logical and of bools", lambda x, y: (x > 0) & (y > 0), x34, y34),
        case("bitwise_not", lambda x, y: (~x, ~(y > 0)), i(3, 4), y34),
        case("round half to even", torch.round,
             torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 2.51, -3.7, 4.0], dtype=F64),
             grad=True),
        case("round int", torch.round, i(3, 4)),
        case("isnan", torch.isnan, torch.tensor([0.0, float("nan"), -float("inf"), 1.0], dtype=F64)),
        case("isnan int", torch.isnan, i(3)),
        case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), r(2, 4, 3, 3), r(4), r(4), grad=True),
        case("group_norm no affine eps", lambda x: F.group_norm(x, 3, eps=0.1), r(2, 6, 5), grad=True),
        case("instance_norm", nn.InstanceNorm2d(3).double(), r(2, 3, 4, 4), grad=True),
        case("upsample nearest 2", lambda x: F.interpolate(x, scale_factor=2), r(1, 2, 3, 4), grad=True),
        case("upsample nearest size", lambda x: F.interpolate(x, size=(5, 7)), r(1, 2, 3, 4)),
        case("upsample nearest down", lambda x: F.interpolate(x, scale_factor=0.6), r(2, 1, 5, 7)),
        case("upsample bilinear", lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), r(1, 2, 4, 5),
             grad=True),
        case("upsample bilinear align_corners", lambda x: F.interpolate(x, size=(7, 3), mode="bilinear",
                                                                        align_corners=True), r(1, 2, 4, 5),
             grad=True),
        case("upsample bilinear down", lambda x: F.interpolate(x, size=(3, 2), mode="bilinear"), r(1, 1, 5, 5)),
        case("upsample bicubic antialiased", lambda x: F.interpolate(x, size=(7, 3), mode="bicubic", antialias=True),
             r(2, 3, 4, 5), grad=True),
        case("upsample bicubic antialiased scale align_corners", lambda x: F.interpolate(
            x, scale_factor=(0.5, 1.7), mode="bicubic", antialias=True, align_corners=True), r(1, 2, 6, 4), grad=True),
        case("upsample bilinear antialiased down", lambda x: F.interpolate(x, size=(2, 9), mode="bilinear",
                                                                             antialias=True), r(1, 2, 5, 4), grad=True),
        # the core ATen set: trigonometric, hyperbolic, rounding, division modes, logical
        case("trigonometric and hyperbolic", lambda x: (torch.tan(x), torch.sinh(x), torch.cosh(x), torch.atan(x),
                                                        torch.asin(x), torch.acos(x), torch.asinh(x), torch.atanh(x)),
             torch.tensor([-0.9, -0.5, -1e-3, 0.0, 1e-9, 0.3, 0.75, 0.99], dtype=F64), grad=True),
        case("asinh large, acosh", lambda x: (torch.asinh(x), torch.asinh(-x), torch.acosh(x)),
             torch.tensor([1.0, 1.5, 3.0, 40.0, 1e5], dtype=F64), grad=True),
        case("inverse trigonometric of int", lambda x: (torch.asin(x), torch.atan(x), torch.cosh(x)),
             i(5, lo=-1, hi=2)),
        case("log2 log10 reciprocal", lambda x: (torch.log2(x), torch.log10(x), torch.reciprocal(x)), pos, grad=True),
        case("log2 of powers, reciprocal of int", lambda x, k: (torch.log2(x), torch.log10(x * 5), torch.reciprocal(k)),
             torch.tensor([1.0, 2.0, 1024.0, 0.125], dtype=F64), i(4, lo=1)),
        case("atan2", torch.atan2, r(3, 4), r(4), grad=True),
        case("floor ceil trunc sign frac", lambda x: (torch.floor(x), torch.ceil(x), torch.trunc(x), torch.sign(x),
                                                      torch.frac(x)),
             torch.tensor([-2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 3.7], dtype=F64), grad=True),
        case("floor ceil trunc sign of int and bool", lambda x: (torch.floor(x), torch.ceil(x), torch.trunc(x),
                                                                 torch.sign(x), torch.sign(x > 0)), i(3, 4)),
        case("isinf", lambda x, k: (torch.isinf(x), torch.isinf(k)),
             torch.tensor([0.0, float("inf"), float("nan"), -float("inf"), 1e308], dtype=F64), i(3)),
        case("elu", lambda x: (F.elu(x), F.elu(x, 0.5), F.selu(x), F.celu(x, 2.0)), k, grad=True),
        case("leaky_relu", lambda x: (F.leaky_relu(x), F.leaky_relu(x, 0.2)), k, grad=True),
        case("logical and or xor", lambda x, y: (torch.logical_and(x, y), torch.logical_or(x, y),
                                                 torch.logical_xor(x, y)),
             torch.tensor([0.0, 1.0, -2.0, 0.0], dtype=F64), torch.tensor([0, 0, 3, 5])),
        case("bitwise with scalars", lambda x, m: (x & 6, x | 3, x ^ -2, m & True), i(3, 4), r(4) > 0),
        case("pow of a number", lambda x: (2.0 ** x, torch.pow(0.5, x)), x34, grad=True),
        case("fmod remainder", lambda x, y: (torch.fmod(x, y), torch.remainder(x, y), torch.fmod(x, -1.5),
                                             torch.remainder(x, -1.5), x % 0.75),
             r(3, 4, lo=-5, hi=5), torch.tensor([1.5, -0.7, 2.0, -3.0], dtype=F64), grad=True),
        case("fmod remainder of int", lambda x, y: (torch.fmod(x, y), torch.remainder(x, y), x % 4, torch.fmod(x, -3)),
             i(3, 4, lo=-9, hi=10), torch.tensor([3, -2, 5, -7])),
        case("div floor trunc", lambda x, y: (torch.div(x, y, rounding_mode="floor"),
                                              torch.div(x, y, rounding_mode="trunc"),
                                              torch.div(x, -2.0, rounding_mode="trunc"),
                                              aten.div.Scalar_mode(x, 0.75, rounding_mode="floor")),
             r(3, 4, lo=-5, hi=5), torch.tensor([1.5, -0.7, 2.0, -3.0], dtype=F64), grad=True),
        case("div floor exact and signed zeros", lambda x, y: (torch.div(x, y, rounding_mode="floor"), x // 0.3),
             torch.tensor([6.0, -6.0, 0.0, -0.0, 0.5, -0.5, 1.0, 7.5], dtype=F64),
             torch.tensor([3.0, 3.0, 2.0, 2.0, -4.0, 4.0, 0.0, 2.5], dtype=F64)),
        case("div floor trunc of int", lambda x, y: (torch.div(x, y, rounding_mode="floor"),
                                                     torch.div(x, y, rounding_mode="trunc"), x // 4, x // -3),
             i(3, 4, lo=-9, hi=10), torch.tensor([3, -2, 5, -7])),
        case("clamp tensor bounds", lambda x, lo, hi: (torch.clamp(x, lo, hi), torch.clamp(x, min=lo),
                                                       torch.clamp(x, max=hi)),
             r(3, 4), r(4, lo=-2, hi=-0.5), r(3, 1, lo=0.5, hi=2), grad=True),
        case("clamp tensor bound broadcasting x", lambda x, lo: torch.clamp(x, min=lo), r(4), r(3, 4), grad=True),
        # index reductions, products, variance, any
        case("argmax argmin", lambda x: (torch.argmax(x), torch.argmin(x, 1), torch.argmax(x, -1, keepdim=True),
                                         torch.argmin(x, keepdim=True)), x234),
        case("argmax ties and NaN", lambda x: (torch.argmax(x, 1), torch.argmin(x, 1)),
             torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, float("nan"), 5.0, float("nan")], [0.0, 0.0, 0.0, 0.0]],
                          dtype=F64)),
        case("argmax of int32", lambda x: (torch.argmax(x.int(), 0), torch.argmin(x.int(), 1)),
             i(3, 4)),
        case("max min dim", lambda x: (torch.max(x, 1), torch.min(x, -1, keepdim=True)), x234, grad=True),
        case("max min dim ties", lambda x: (torch.max(x, 1), torch.min(x, 0)),
             torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], dtype=F64), grad=True),
        case("any", lambda x: (torch.any(x > 1), torch.any(x, 1), torch.any(x > 0, -1, keepdim=True),
                               torch.any(x, (0, 2))), x234),
        case("any of int", lambda x: (torch.any(x), torch.any(x, 0)), i(3, 4, lo=0, hi=2)),
        case("prod", lambda x: (torch.prod(x), torch.prod(x, 1), torch.prod(x, -1, keepdim=True)), r(2, 3, 5),
             grad=True),
        case("prod with zeros", lambda x: (torch.prod(x, 1), torch.prod(x)),
             torch.tensor([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, -2.0, 0.5]], dtype=F64), grad=True),
        case("prod of int and empty", lambda x, e: (torch.prod(x, 0), torch.prod(x), torch.prod(e, 1),
                                                    torch.prod(x, 1, dtype=F64)), i(3, 4, lo=-3, hi=4), r(2, 0)),
        case("var std", lambda x: (torch.var(x), torch.var(x, 1), torch.std(x, (0, 2), keepdim=True),
                                   torch.var(x, -1, correction=0), torch.var(x, 2, correction=2),
                                   torch.var_mean(x, 1)), x234, grad=True),
        case("native_dropout without dropping", lambda x: (torch.native_dropout(x, 0.0, True),
                                                           torch.native_dropout(x, 0.5, False)), x34, grad=True),
        # random draws (tests/api/test_torch_random.py checks their statistics): here forms whose values are
        # certain, so eager can be compared with
        case("native_dropout of everything", lambda x: torch.native_dropout(x, 1.0, True), x34, grad=True),
        case("random draws' ranges", lambda x: (
            torch.rand(3, 4) < 1, torch.rand_like(x) >= 0, torch.randn(5, dtype=F64).abs() < 7,
            torch.randn_like(x).abs() < 7, torch.bernoulli(x, 0.0), torch.bernoulli(x, 1.0),
            torch.randint(3, 4, (2, 3)), torch.randint(1, (4,)), torch.empty_like(x).uniform_(2.0, 2.0),
            torch.empty_like(x).normal_(1.5, 0.0), torch.randperm(6).sort().values), x34),
        # flips, diagonals, selections and scatters
        case("flip", lambda x: (torch.flip(x, (0, -1)), torch.flip(x, (1,))), x234, grad=True),
        case("index_select", lambda x, k: (torch.index_select(x, 1, k), torch.index_select(x, -1, k[:2])), x234,
             torch.tensor([2, 0, 2, 1]), grad=True),
        case("index_select of 0-d", lambda x, k: torch.index_select(x, 0, k), torch.tensor(1.5, dtype=F64),
             torch.tensor([0])),
        case("diagonal", lambda x: (torch.diagonal(x), torch.diagonal(x, 1), torch.diagonal(x, -1, 0, 2),
                                    torch.diagonal(x, 2, -1, -2), torch.diagonal(x, 5)), r(3, 4, 5), grad=True),
        case("scatter", lambda x, k, s: (torch.scatter(x, 1, k, s), torch.scatter(x, 0, k[:, :2] % 3, 0.5),
                                         torch.scatter_add(x, 1, k, s), torch.scatter_add(x, -1, k[:2], s[:2])),
             r(3, 5), torch.tensor([[0, 4, 2], [1, 2, 3], [4, 0, 2]]), r(3, 3), grad=True),
        case("scatter reduce add", lambda x, k, s: (torch.scatter(x, 1, k, s, reduce="add"),
                                                    torch.scatter(x, 1, k, 2.5, reduce="add")),
             r(3, 5), torch.tensor([[0, 4, 2], [1, 1, 3], [1, 0, 2]]), r(3, 4)),
        case("scatter_add duplicates, 3-d", lambda x, k, s: torch.scatter_add(x, 1, k, s), x234,
             torch.tensor([[[0, 1], [0, 2]], [[2, 2], [1, 0]]]), r(2, 2, 2), grad=True),
        case("scatter_reduce sum", lambda x, k, s: (torch.scatter_reduce(x, 1, k, s, "sum"),
                                                    torch.scatter_reduce(x, -1, k, s, "sum", include_self=False)),
             r(2, 5), torch.tensor([[0, 4, 4], [1, 1, 3]]), r(2, 3), grad=True),
        case("index_put", lambda x, k, v: (torch.index_put(x, (k,), v), torch.index_put(x, (k,), v, accumulate=True)),
             x34, torch.tensor([2, 0, -2]), r(4), grad=True),
        case("index_put accumulate duplicates", lambda x, j, k, v: aten.index_put.default(x, [j, None, k], v, True),
             x234,
             torch.tensor([1, 0, 1]), torch.tensor([3, 3, -1]), r(3, 3), grad=True),
        case("setitem", _setitem, x234, torch.tensor([1, 2]), r(1), grad=True),
        case("masked_scatter", lambda x, m, s: (torch.masked_scatter(x, m, s), torch.masked_scatter(x, m[0], s)),
             x34, r(3, 4) > 0, r(20), grad=True),
        case("empty filled", lambda x: (x + torch.empty_like(x).fill_(1.0), torch.empty(2, 3, dtype=F64).zero_(),
                                        torch.empty_strided((2, 2), (1, 2), dtype=F64).fill_(3.0)), x34),
        case("topk", lambda x: torch.topk(x, 3), r(4, 6), grad=True),
        case("topk smallest dim 0", lambda x: torch.topk(x, 2, 0, largest=False), r(5, 3), grad=True),
        case("topk infinities", lambda x: torch.topk(x, 4), torch.tensor([[1.0, -float("inf"), 2.0, 0.5, 3.0],
                                                                          [float("inf"), 0.0, -1.0, 7.0, -2.0]],
                                                                         dtype=F64)),
        case("topk all", lambda x: torch.topk(x, 4, -1), r(2, 4)),
        case("max_pool2d ceil_mode adding a window", lambda x: F.max_pool2d(x, 2, ceil_mode=True), r(1, 2, 5, 5),
             grad=True),
        case("max_pool2d ceil_mode stride padding", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), r(1, 1, 6, 8),
             grad=True),
        # issue 39: clamp with one bound kept hardtanh's other default
        case("clamp min alone", lambda x: torch.clamp(x, min=0.5), k, grad=True),
        case("clamp max alone", lambda x: x.clamp(max=-0.25), k, grad=True),
        case("clamp both", lambda x: torch.clamp(x, -1.0, 2.0), k, grad=True),
        case("clamp max=None given", lambda x: torch.clamp(x, min=-1, max=None), k),
        case("clamp min > max", lambda x: x.clamp(min=1.0, max=-1.0), k),
        case("clamp int", lambda x: x.clamp(min=-2), i(3, 4)),
        case("clamp int by a float", lambda x: x.clamp(max=0.5), i(3, 4)),
        case("clamp 0-d", lambda x: x.clamp(min=0.0), torch.tensor(-1.5, dtype=F64)),
        case("clamp empty", lambda x: x.clamp(max=0.0), r(0, 3)),
        case("hardtanh default", F.hardtanh, k, grad=True),
        case("hardtanh bounds", lambda x: F.hardtanh(x, -2.5, 0.5), k),
        case("relu6", F.relu6, k),
        case("hardswish", nn.Hardswish(), k, grad=True),
        case("hardsigmoid", nn.Hardsigmoid(), k, grad=True),
        case("relu at its kink", torch.relu, k, grad=True),
        case("mobilenet v3 block", _mobile_block(), r(2, 4, 6, 6)),
        # elementwise
        case("unary functions", lambda x, p: tuple(f(x) for f in unary) + tuple(f(p) for f in positive), x34, pos,
             grad=True),
        case("exp of int", torch.exp, i(3, 4)),
        case("sqrt of int", torch.sqrt, i(5, lo=0)),
        case("abs of int", torch.abs, i(3, 4)),
        case("neg of int", torch.neg, i(3, 4)),
        case("relu of int", torch.relu, i(3, 4)),
        case("tanh 0-d", torch.tanh, torch.tensor(0.3, dtype=F64)),
        case("log1p empty", torch.log1p, r(2, 0)),
        case("add alpha", lambda x, y: torch.add(x, y, alpha=2.5), x34, y34, grad=True),
        case("sub alpha broadcast", lambda x, y: torch.sub(x, y, alpha=-2), x234, y34[0], grad=True),
        case("add int and float", lambda x, y: x + y, i(3, 4), y34),
        case("div", lambda x, y: x / y, x34, pos, grad=True),
        case("div int by int", lambda x, y: x / y, i(3, 4), i(3, 4, lo=1)),
        case("mul by 0-d", lambda x, y: x * y, x34, torch.tensor(1.5, dtype=F64), grad=True),
        case("add.Scalar alpha", lambda x: aten.add.Scalar(x, 2.5, 3), x34, grad=True),
        case("sub.Scalar", lambda x: aten.sub.Scalar(x, 0.75), x34, grad=True),
        case("sub.Scalar alpha", lambda x: aten.sub.Scalar(x, 0.75, alpha=-2), x34),
        case("mul.Scalar", lambda x: aten.mul.Scalar(x, -3), x34, grad=True),
        case("div.Scalar", lambda x: aten.div.Scalar(x, 4.0), x34, grad=True),
        case("div rounding_mode=None", lambda x, y: torch.div(x, y, rounding_mode=None), x34, pos, grad=True),
        case("pow 3", lambda x: x ** 3, x34, grad=True),
        case("pow 0.5", lambda x: x ** 0.5, pos),
        case("pow int 2", lambda x: x ** 2, i(3, 4)),
        case("pow int 3", lambda x: x ** 3, i(3, 4)),
        case("pow int 0.5", lambda x: x ** 0.5, i(3, 4, lo=0)),
        case("pow tensor", torch.pow, pos, x34, grad=True),
        case("maximum int", torch.maximum, i(3, 4), i(4)),
        case("maximum minimum broadcast", lambda x, y: (torch.maximum(x, y), torch.minimum(x, y)), x234, y34,
             grad=True),
        case("gelu", F.gelu, x34, grad=True),
        case("gelu tanh", lambda x: F.gelu(x, approximate="tanh"), x34),
        # comparisons and selection
        case("lt.Scalar", lambda x: aten.lt.Scalar(x, 0.25), x34),
        case("le.Scalar", lambda x: aten.le.Scalar(x, -1.0), k),
        case("gt.Scalar", lambda x: aten.gt.Scalar(x, -1), x34),
        case("ge.Scalar int", lambda x: aten.ge.Scalar(x, 2), i(3, 4)),
        case("eq.Scalar", lambda x: aten.eq.Scalar(x, 3.0), k),
        case("ne.Scalar", lambda x: aten.ne.Scalar(x, 0), i(3, 4)),
        case("eq broadcast", torch.eq, i(3, 4, lo=0, hi=2), i(4, lo=0, hi=2)),
        case("lt float and int", torch.lt, x34, i(3, 4, lo=-1, hi=2)),
        case("where scalars", lambda c, x: torch.where(c, x, 0.5), y34 > 0, x234, grad=True),
        # creation and copies
        case("zeros float32", lambda: torch.zeros(2, 3)),
        case("ones_like int", lambda x: torch.ones_like(x, dtype=torch.int64), x34),
        case("scalar_tensor", lambda x: x * aten.scalar_tensor.default(3.5, dtype=F64), x34),
        case("clone", lambda x: x.clone() * 2, x34),
        case("alias", lambda x: torch.alias_copy(x) * x, x34, grad=True),
        case("tensor constant", lambda x: x + torch.tensor([1.0, -2.0, 3.0, 0.5], dtype=F64), x34),
        case("to float32 and back", lambda x: (x.float() * 3).to(F64), x34, grad=True),
        case("to int truncates", lambda x: x.to(torch.int64), r(3, 4, lo=-3, hi=3)),
        case("to bool", lambda x: x.bool(), torch.tensor([0.0, -0.0, 0.25, -3.0, float("nan")], dtype=F64)),
        case("int to double", lambda x: x.double() / 3, i(3, 4)),
        # shapes
        case("reshape", lambda x: x.reshape(4, 6).t(), x234, grad=True),
        case("view_copy", lambda x: torch.view_copy(x, (6, 4)), x234, grad=True),
        case("squeeze all", lambda x: x.squeeze(), r(1, 3, 1, 2)),
        case("squeeze -2", lambda x: x.squeeze(-2), r(1, 3, 1, 2), grad=True),
        case("squeeze a non-1 dim", lambda x: x.squeeze(1), r(1, 3, 1, 2)),
        case("unsqueeze -1", lambda x: x.unsqueeze(-1), x34, grad=True),
        case("unsqueeze 0 of 0-d", lambda x: x.unsqueeze(0), torch.tensor(2.0, dtype=F64)),
        case("permute negative", lambda x: x.permute(-1, 0, 1), x234),
        case("expand", lambda x: x.expand(2, 3, 4), r(3, 1), grad=True),
        case("expand -1", lambda x: x.expand(-1, 5), r(3, 1)),
        case("slice step", lambda x: x[:, 1::2], x34, grad=True),
        case("slice negative", lambda x: x[..., -3:-1], x234),
        case("slice past the end", lambda x: x[1:100], x34),
        case("slice empty", lambda x: x[2:2], x34),
        case("select negative", lambda x: x[:, -1], x234, grad=True),
        case("cat mixed dtypes", lambda x, y: torch.cat([x, y]), x34, i(2, 4)),
        case("cat with empty", lambda x, y: torch.cat([x, y], 0), x34, r(0, 4), grad=True),
        case("embedding", F.embedding, i(2, 5, lo=0, hi=7), r(7, 3), grad=True),
        case("embedding 0-d index", F.embedding, torch.tensor(4), r(7, 3)),
        case("embedding padding_idx", lambda i, w: F.embedding(i, w, padding_idx=2), torch.tensor([[2, 0, 2], [1, 2, 6]]),
             r(7, 3), grad=True),
        case("embedding padding_idx negative", lambda i, w: F.embedding(i, w, padding_idx=-1),
             torch.tensor([6, 0, 6, 3]), r(7, 3), grad=True),
        case("vector_norm with a zero row", lambda x: torch.linalg.vector_norm(x, dim=1),
             torch.tensor([[3.0, -4.0, 1.0], [0.0, 0.0, 0.0]], dtype=F64), grad=True),
        case("vector_norm orders", lambda x: [torch.linalg.vector_norm(x, p, d, k) for p, d, k in (
            (1, 0, False), (3.5, (0, 1), True), (float("inf"), 1, False), (-float("inf"), None, False), (0.5, -1, True))],
            r(3, 4), grad=True),
        case("vector_norm order 0", lambda x: torch.linalg.vector_norm(x * (x > 0), 0, 1), r(3, 4)),
        case("normalize", lambda x: F.normalize(x, dim=1), r(3, 4), grad=True),
        case("conv_transpose2d stride output_padding", lambda x, w, c: F.conv_transpose2d(
            x, w, c, stride=2, padding=1, output_padding=1), r(2, 4, 5, 5), r(4, 3, 3, 3), r(3), grad=True),
        case("conv_transpose2d groups dilation", lambda x, w: F.conv_transpose2d(
            x, w, stride=(2, 3), padding=(0, 2), dilation=(2, 1), groups=2), r(1, 4, 5, 4), r(4, 2, 2, 3), grad=True),
        case("conv_transpose1d padding beyond the kernel", lambda x, w: F.conv_transpose1d(
            x, w, stride=3, padding=5, output_padding=2, dilation=2), r(2, 3, 7), r(3, 2, 4), grad=True),
        case("detach", lambda x: x.detach() * x + x.detach().exp(), r(3, 2), grad=True),
        case("as_strided restride of channels-last", lambda x: F.adaptive_avg_pool2d(x, 1),
             r(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2), grad=True),
        case("as_strided overlapping", lambda x: torch.as_strided(x, (3, 2, 2), (2, 4, 1), 1), r(4, 4), grad=True),
        # contractions, convolution, pooling
        case("mm", torch.mm, r(3, 5), r(5, 2), grad=True),
        case("matmul 3-d", torch.matmul, r(2, 3, 5), r(2, 5, 4), grad=True),
        case("addmm beta alpha", lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=-2), r(4), r(3, 5), r(5, 4),
             grad=True),
        case("addmm beta=0 ignores NaN", lambda b, x, y: torch.addmm(b, x, y, beta=0),
             torch.full((4,), float("nan"), dtype=F64), r(3, 5), r(5, 4)),
        case("linear no bias", F.linear, x234, r(5, 4)),
        case("linear bias", F.linear, x234, r(5, 4), r(5), grad=True),
        case("linear 1-d input", F.linear, r(4), r(5, 4), r(5)),
        case("conv2d stride padding dilation groups",
             lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, dilation=2, groups=2), r(2, 4, 7, 7),
             r(6, 2, 3, 3), r(6), grad=True),
        case("max_pool2d stride padding", lambda x: F.max_pool2d(x, 3, stride=2, padding=1), r(2, 3, 7, 7),
             grad=True),
        case("max_pool2d dilation rect", lambda x: F.max_pool2d(x, (2, 3), dilation=2), r(1, 2, 8, 9)),
        case("max_pool2d unbatched", lambda x: F.max_pool2d(x, 2, 1), r(3, 5, 5)),
        case("max_pool2d ceil same shape", lambda x: F.max_pool2d(x, 2, ceil_mode=True), r(1, 2, 6, 6)),
        case("avg_pool2d padding", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), r(1, 2, 7, 7), grad=True),
        case("avg_pool2d count_include_pad=False unpadded",
             lambda x: F.avg_pool2d(x, (2, 3), count_include_pad=False), r(1, 2, 6, 6)),
        case("adaptive_avg_pool2d 1", lambda x: F.adaptive_avg_pool2d(x, 1), r(2, 3, 5, 7)),
        case("adaptive_avg_pool2d 3", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), r(2, 3, 6, 4), grad=True),
        case("avg_pool2d count_include_pad=False padded",
             lambda x: F.avg_pool2d(x, 3, padding=1, count_include_pad=False), r(1, 2, 5, 5), grad=True),
        case("avg_pool2d divisor_override", lambda x: F.avg_pool2d(x, 2, divisor_override=3), r(1, 1, 4, 4), grad=True),
        case("avg_pool2d ceil_mode adding a window", lambda x: (F.avg_pool2d(x, 2, ceil_mode=True),
                                                                F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
                                                                F.avg_pool2d(x, 3, 2, 1, True, False)), r(1, 2, 6, 6),
             grad=True),
        case("pooling 3-d", lambda x: (F.max_pool3d(x, 2), F.max_pool3d(x, 3, 2, 1, ceil_mode=True),
                                       F.avg_pool3d(x, 2), F.avg_pool3d(x, 3, 2, 1, ceil_mode=True,
                                                                        count_include_pad=False),
                                       F.adaptive_avg_pool3d(x, (2, 3, 1)), F.adaptive_avg_pool3d(x, (3, 2, 4)),
                                       F.adaptive_avg_pool3d(x, 1)), r(1, 2, 4, 6, 5), grad=True),
        case("adaptive_avg_pool2d uneven", lambda x: (F.adaptive_avg_pool2d(x, 3), F.adaptive_avg_pool2d(x, (4, 2))),
             r(2, 2, 5, 7), grad=True),
        # reductions and normalisation
        case("sum keepdim", lambda x: x.sum((0, 2), keepdim=True), x234, grad=True),
        case("sum dtype", lambda x: x.sum(0, dtype=F64), i(3, 4)),
        case("sum empty dim", lambda x: x.sum(1), r(3, 0)),
        case("sum 0-d", lambda x: x.sum(0), torch.tensor(2.5, dtype=F64)),
        case("sum size-1 dim", lambda x: x.sum(1, keepdim=True), r(3, 1, 2)),
        case("mean all", torch.mean, x234, grad=True),
        case("mean -2 keepdim", lambda x: x.mean(-2, keepdim=True), x234),
        case("mean dims", lambda x: x.mean((0, 1)), x234, grad=True),
        case("amax all", torch.amax, x234),
        case("amax -1 keepdim", lambda x: x.amax(-1, keepdim=True), x234, grad=True),
        case("amin dims", lambda x: x.amin((0, 2)), x234, grad=True),
        case("softmax -1", lambda x: torch.softmax(x, -1), x234, grad=True),
        case("softmax 0 dtype", lambda x: torch.softmax(x, 0, dtype=F64), x34.float()),
        case("softmax size-1", lambda x: torch.softmax(x, 1), r(3, 1)),
        case("softmax 0-d", lambda x: torch.softmax(x, 0), torch.tensor(0.7, dtype=F64)),
        case("log_softmax 1", lambda x: torch.log_softmax(x, 1), x234, grad=True),
        case("log_softmax -1 dtype", lambda x: torch.log_softmax(x, -1, dtype=F64), x34.float()),
        case("safe_softmax masked row", lambda x: aten._safe_softmax.default(x, -1),
             torch.tensor([[0.5, -1.0, 2.0], [float("-inf")] * 3, [float("-inf"), 0.25, 1.0]], dtype=F64),
             grad=True),
        case("layer_norm affine 2 dims", lambda x, w, b: F.layer_norm(x, (3, 4), w, b), x234, r(3, 4), r(3, 4),
             grad=True),
        case("layer_norm eps", lambda x, w: F.layer_norm(x, (4,), w, eps=0.1), x234, r(4)),
        case("batch_norm eval", _bn(nn.BatchNorm2d(3), train=False), r(2, 3, 4, 4), grad=True),
        case("batch_norm train", _bn(nn.BatchNorm2d(3, momentum=0.3), train=True), r(2, 3, 4, 4), grad=True),
        case("batch_norm 1d no stats", _bn(nn.BatchNorm1d(3, track_running_stats=False, affine=False), train=True),
             r(4, 3), grad=True),
        # losses
        case("nll_loss sum", lambda x, t: F.nll_loss(x, t, reduction="sum"), logp, target, grad=True),
        case("nll_loss ignore_index outside the classes", lambda x, t: F.nll_loss(x, t, ignore_index=7), logp,
             target),
        # issue 33: sorting (one stable nn.argsort): ties in index order, NaN last (first descending), every dtype
        case("sort", lambda x: (torch.sort(x), torch.sort(x, 0, descending=True), torch.msort(x),
                                torch.sort(x, stable=True, dim=0)), r(4, 5), grad=True),
        case("sort stable ties and NaN", lambda x: (
            torch.sort(x, stable=True, dim=1), torch.sort(x, dim=0, descending=True, stable=True),
            torch.argsort(x, 1), torch.argsort(x, 0, descending=True), torch.argsort(x, stable=True, dim=1)),
            torch.tensor([[1.0, float("nan"), -0.0, 1.0, float("-inf")], [0.0, 2.0, float("nan"), float("inf"), 0.0],
                          [float("nan"), 1.0, 1.0, -2.0, 1.0]], dtype=F64)),
        case("sort of integers and booleans", lambda a, m: (
            torch.sort(a, 1), torch.sort(a, 0, descending=True), torch.argsort(a), torch.sort(m, 1),
            torch.argsort(m, descending=True, stable=True), torch.sort(a.int(), dim=1, stable=True)),
            i(4, 6, lo=-3, hi=3), i(3, 5, lo=0, hi=2).bool()),
        case("topk of integers", lambda a: (torch.topk(a, 2), torch.topk(a, 3, 0, largest=False), torch.topk(a.int(), 1)),
             torch.tensor([[2**62, -7, 3, -2**63], [5, 2**63 - 1, -1, 0], [-5, 8, 4, 1]])),
        case("sort of 0-d", lambda x: (torch.sort(x), torch.argsort(x), torch.topk(x, 1)), torch.tensor(0.5, dtype=F64)),
        case("median", lambda x: (torch.median(x, 1), torch.median(x, 0, keepdim=True), torch.median(x)), r(4, 5),
             grad=True),
        # issues 33-35: results of data-dependent size (nn.nonzero's count), gathered by nn.gather_points
        case("nonzero, masked_select, boolean-mask indexing", lambda x, m: (
            torch.nonzero(x > 0), torch.argwhere(m), torch.masked_select(x, x > 0), x[m], x[:, m[0]], x[m].sum(),
            torch.masked_select(x, m[0]).mean()), r(3, 4), i(3, 4, lo=0, hi=2).bool(), grad=True),
        case("nonzero of nothing", lambda x: (torch.nonzero(x > 9), torch.masked_select(x, x > 9), x[x > 9].sum()),
             r(3, 4)),
        case("unique", lambda x, a: (torch.unique(x, return_inverse=True, return_counts=True), torch.unique(a),
                                     torch.unique(a > 0, sorted=False, return_counts=True)),
             torch.tensor([[2.0, -0.0, 5.0], [0.0, 3.0, 2.0]], dtype=F64), i(4, 5, lo=-3, hi=3)),
        case("median of ties, NaN and integers", lambda x, a: (torch.median(x, 1), torch.median(x), torch.median(a, 0),
                                                               torch.median(a)),
             torch.tensor([[1.0, 2.0, 1.0, 0.0], [float("nan"), 1.0, float("nan"), 3.0], [2.0, 2.0, 2.0, -1.0]],
                          dtype=F64), i(5, 3, lo=-2, hi=2)),
        # issues 34 and 35: distances, selection, sampling, bags
        case("cdist", lambda a, c: torch.cdist(a, c), r(4, 3), r(5, 3), grad=True),
        case("cdist p=1, inf and 0.5, batches broadcast", lambda a, c: (
            torch.cdist(a, c, 1.0), torch.cdist(a, c, float("inf")), torch.cdist(a, c, 0.5)),
             r(2, 1, 3, 4), r(2, 5, 4), grad=True),
        case("cdist zero distances and tied maxima", lambda a, c: (
            torch.cdist(a, c), torch.cdist(a, c, float("inf")), torch.cdist(a, c, 3.0), torch.cdist(a, c, 0.5),
            torch.cdist(a, c, 0.0)), torch.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 1.5]], dtype=F64),
             torch.tensor([[1.0, 2.0, 0.0], [2.0, 3.0, 1.0], [0.5, 0.0, 1.5]], dtype=F64), grad=True),
        case("cdist matrix-product form", lambda a, c: torch.ops.aten._cdist_forward(a, c, 2.0, 1), r(6, 3), r(4, 3),
             grad=True),
        case("pdist", lambda a: (F.pdist(a), F.pdist(a, 1.5), F.pdist(a, float("inf"))), r(5, 3), grad=True),
        case("kthvalue", lambda x: (torch.kthvalue(x, 2, 1), torch.kthvalue(x, 4, 0, keepdim=True)), r(4, 5),
             grad=True),
        case("mode", lambda x: (torch.mode(x, 1), torch.mode(x, 0, keepdim=True)),
             torch.tensor([[1.0, 3.0, 3.0, 0.5], [2.0, -1.0, 4.0, 0.0], [1.0, 3.0, 1.0, 0.5]], dtype=F64), grad=True),
        case("grid_sample", lambda x, g: (F.grid_sample(x, g, align_corners=False), F.grid_sample(
            x, g, "bicubic", "reflection", align_corners=True), F.grid_sample(x, g, "nearest", "border")),
             r(2, 2, 4, 5), r(2, 3, 2, 2, lo=-1.3, hi=1.3), grad=True),
        case("fold (col2im): dilation, padding, stride; unbatched", lambda x, u: (
            F.fold(x, (5, 6), (2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 1)), F.fold(u, 4, 2, stride=2)),
             r(2, 18, 24), r(12, 4), grad=True),
        case("embedding_bag sum and max by offsets", lambda w, k, o, p: (
            F.embedding_bag(k, w, o, mode="sum", per_sample_weights=p), F.embedding_bag(k, w, o, mode="max")),
             r(6, 3), torch.tensor([1, 4, 4, 0, 5, 2]), torch.tensor([0, 2, 2, 5]), r(6), grad=True),
        case("embedding_bag mean, padding_idx, include_last_offset", lambda w, k, o: F.embedding_bag(
            k, w, o, mode="mean", padding_idx=4, include_last_offset=True), r(6, 3), torch.tensor([1, 4, 4, 0, 5, 2]),
             torch.tensor([0, 2, 3, 3, 6]), grad=True),
        case("embedding_bag's offset2bag, bag_size and max_indices (every mode, padding_idx, include_last_offset)",
             lambda w, k, o: tuple(r for mode, pad, last in ((0, -1, False), (1, 4, False), (2, 4, True),
                                                             (2, -1, False))
                                   for r in torch.ops.aten._embedding_bag(w, k, o[:4] if not last else o, False, mode,
                                                                          False, None, last, pad)),
             r(6, 3), torch.tensor([1, 4, 4, 0, 5, 2]), torch.tensor([0, 2, 2, 5, 6])),
        case("grid_sample 3-d", lambda x, g: (F.grid_sample(x, g, align_corners=False), F.grid_sample(
            x, g, "bilinear", "reflection", align_corners=True), F.grid_sample(x, g, "nearest", "border")),
             r(2, 2, 3, 4, 3), r(2, 2, 1, 3, 3, lo=-1.3, hi=1.3), grad=True),
        case("affine_grid 2-d and 3-d", lambda t, u: (
            F.affine_grid(t, [2, 3, 4, 2], align_corners=False), F.affine_grid(u, [2, 1, 3, 2, 2], align_corners=True)),
             r(2, 2, 3), r(2, 3, 4), grad=True),
        # issue 35: torch.fft (aten_fft.py), complex values only between transforms, view_as_real and abs
        case("fft rfft ortho, fft of a real signal, view_as_real, .real/.imag, abs", lambda x: (
            torch.view_as_real(torch.fft.rfft(x, norm="ortho")), torch.fft.fft(x, dim=0).real,
            torch.fft.fft(x, dim=0).imag, torch.fft.rfft(x, n=7).abs()), r(3, 6), grad=True),
        case("fft fft2/ifft2 of a complex copy, irfft of n cut and padded", lambda x: (
            torch.view_as_real(torch.fft.ifft2(torch.fft.fft2(x), norm="forward")),
            torch.fft.irfft(torch.fft.rfft(x), n=5), torch.fft.irfft(torch.fft.rfft(x), n=11, dim=-1, norm="forward"),
            torch.fft.irfftn(torch.fft.rfftn(x))), r(3, 6), grad=True),
        # issue 34: complex arithmetic and data movement (aten_complex.py) on the packed parts
        case("complex + - * / (Smith's; by huge and by imaginary numbers), conj, exp, polar, complex, angle, abs "
             "(at 0 too), mm, permute, cat, sum", lambda a, c, m, t: (
            torch.view_as_real((torch.view_as_complex(a) * torch.view_as_complex(c) - torch.view_as_complex(c).conj()
                                + 2 * torch.view_as_complex(a) - torch.view_as_complex(a) / torch.view_as_complex(c)
                                + 1.5) / 3.0),
            torch.view_as_real(torch.exp(torch.view_as_complex(a)) * torch.polar(m, t) - torch.complex(m, t) / m
                               + torch.view_as_complex(a) / torch.complex(0 * t, m)),
            torch.view_as_complex(a).angle(), (torch.view_as_complex(a) / (torch.view_as_complex(c) * 1e200)).abs(),
            torch.view_as_complex(a * 0).angle() + torch.view_as_complex(a * 0).abs(),  # gradient 0 at 0
            torch.view_as_real(torch.cat([torch.view_as_complex(a).reshape(2, 2).T @ torch.view_as_complex(c)
                                          .reshape(2, 2), torch.view_as_complex(c).reshape(2, 2)]).sum(0))),
             r(4, 2), r(4, 2, lo=0.5), r(4, lo=0.5), r(4), grad=True),
        # issue 34: booleans and integers the op_db sweep (opinfo_sweep.py) found crashing or wrong
        case("bool + * maximum minimum clamp_min clamp_max < >= addr (False < True)", lambda x, y: (
            x + y, x * y, torch.maximum(x, y), torch.minimum(x, y), torch.clamp_min(x, y), torch.clamp_max(y, x),
            x < y, x >= y, torch.addr(x, x[:, 0], y[0])), r(4, 5) > 0, r(4, 5) > 0.5),
        case("integer mm, bmm, addmm, baddbmm (int64, int32)", lambda a, m, c: (
            a @ m, torch.bmm(c, c.transpose(1, 2)), torch.addmm(a[:, :3], a, m, beta=2, alpha=3),
            torch.baddbmm(c[:, :, :2], c, c[:, :3, :2], beta=-1), (a > 0).int() @ (m > 0).int()),
             i(4, 5), i(5, 3), i(2, 3, 3)),
        case("integer and bool sum, amax, amin (odd and empty dims)", lambda a: (
            a.sum(0), a.sum((0, 1)), a.amax(1), a.amin(0, keepdim=True), a[:, :0].sum(1), (a > 0).sum(1),
            (a > 0).amax(0), (a > 0).amin(1), a.int().sum(-1, dtype=torch.int32), torch.amax(a, (0, 1))), i(5, 7)),
        case("native_layer_norm's mean and rstd carry no gradient (as torch's), native_group_norm's do", lambda x: (
            torch.native_layer_norm(x, [4], None, None, 1e-5),
            torch.native_group_norm(x.reshape(2, 4, 3), None, None, 2, 4, 3, 2, 1e-5)), r(6, 4), grad=True),
        case("cumprod (with zeros), cummax, cummin (ties, NaN), logcumsumexp (-inf, inf)", lambda x, y, z: (
            torch.cumprod(x, 1), torch.cummax(y, 0), torch.cummin(y, -1), torch.logcumsumexp(z, 1),
            torch.cumprod(y.int(), 0), torch.cummax(y > 0, 1), torch.cummin(y.long(), 0)),
             r(3, 6) * (r(3, 6) > -1.5), torch.tensor([[1.0, 3.0, 3.0, float("nan"), 0.5], [2.0, 2.0, -1.0, 4.0, 4.0]],
                                                      dtype=F64),
             torch.tensor([[-math.inf, 0.5, 2.0, math.inf], [-math.inf, -math.inf, 1.0, -3.0]], dtype=F64)),
        case("cumprod, cummax, cummin, logcumsumexp gradients", lambda x: (
            torch.cumprod(x, 0), torch.cummax(x, 1)[0], torch.cummin(x, 0)[0], torch.logcumsumexp(x, -1)),
             r(4, 5), grad=True),
        case("copysign (tensor, number; -0.0, NaN's sign), signbit, shifts", lambda x, y, k: (
            torch.copysign(x, y), torch.copysign(x, -0.0), torch.copysign(k, 2), torch.signbit(y), torch.signbit(k),
            k << (k % 70), k >> (k % 70), k.int() << 3, k >> -1),
             r(6), torch.tensor([1.0, -0.0, 0.0, -2.0, float("nan"), -float("nan")], dtype=F64), i(6, lo=-70, hi=70)),
        case("copysign gradient", lambda x, y: torch.copysign(x, y) + torch.copysign(x, 1.5), r(5), r(5), grad=True),
        case("addmv beta 0 ignores NaN", lambda m, v, bias: torch.addmv(bias * math.nan, m, v, beta=0, alpha=2),
             r(4, 3), r(3), r(4)),
        case("addmv, addbmm (integers too)", lambda m, v, c, d, bias: (
            torch.addmv(bias[:4], m, v), torch.addmv(bias[:4], m, v, beta=0, alpha=2),
            torch.addbmm(bias[:4].reshape(2, 2), c, d, beta=0.5, alpha=-1), torch.addmv(m[:, 0].long(), m.long(), v.long()),
            torch.addbmm(c[0, :, :2].long(), c.long(), d.long())), r(4, 3) * 3, r(3) * 3, r(5, 2, 3) * 3, r(5, 3, 2) * 3,
             r(5), grad=True),
        case("bool index_put accumulate (or), integer linear", lambda x, k, v, a, w, c: (
            torch.index_put(x, (k,), v, accumulate=True), F.linear(a, w, c), F.linear(a, w)),
             r(5, 3) > 0.5, torch.tensor([0, 2, 0, 4]), r(4, 3) > 0, i(2, 3, 4), i(5, 4), i(5)),
        case("fmax, fmin (NaN on either side, ties), exp2", lambda x, y: (
            torch.fmax(x, y), torch.fmin(x, y), torch.fmax(x, 0.5 * y), torch.exp2(x * 4), torch.exp2(y.int())),
             torch.tensor([1.0, float("nan"), 2.0, float("nan"), -1.0, 3.0], dtype=F64),
             torch.tensor([0.5, 2.0, float("nan"), float("nan"), -1.0, 4.0], dtype=F64), grad=True),
    ]


def _setitem(x, k, v):
    y = x.clone()
    y[:, k] = v
    return y


def _bn(module: nn.Module, train: bool) -> nn.Module:
    torch.manual_seed(0)
    module = module.double().train(train)
    with torch.no_grad():
        if module.running_mean is not None:
            module.running_mean.uniform_(-0.5, 0.5), module.running_var.uniform_(0.5, 2.0)
        if module.weight is not None:
            module.weight.uniform_(0.5, 1.5), module.bias.uniform_(-0.5, 0.5)
    return module


def refused_forms() -> dict[str, tuple[Callable, tuple]]:
    """Forms with no translation, by name: each is an UnsupportedOpError at compile time."""
    g = torch.Generator().manual_seed(1)

    def r(*shape, **kw):
        return _r(*shape, generator=g, **kw)

    def i(*shape, **kw):
        return _i(*shape, generator=g, **kw)

    return {
        "nll_loss ignore_index of a class": (lambda x, t: F.nll_loss(x, t, ignore_index=1),
                                             (r(3, 4), torch.tensor([0, 1, 2]))),
        "arithmetic on a boolean-masked tensor": (lambda x, m: x[m] * 2,
                                                  (r(4), torch.tensor([True, False, True, True]))),
        "bitwise_and of floats": (lambda x, y: torch.ops.aten.bitwise_and.Tensor(x, y), (r(3), r(3))),
        "as_strided outside its input": (lambda x: torch.as_strided(x[1:], (2,), (1,), 0), (r(3, 2),)),
        "randint over more than 2^31 values": (lambda x: x + torch.randint(0, 2**40, (3,)), (i(3),)),
        "convolution of integers": (lambda x, w: F.conv1d(x, w), (i(1, 2, 5), i(3, 2, 2))),
        "var of one element": (lambda x: torch.var(x, 0), (r(1, 3),)),
        "index_put with a boolean mask": (lambda x, m: torch.index_put(x, (m,), torch.tensor(1.0, dtype=F64)),
                                          (r(4), torch.tensor([True, False, True, True]))),
        "sin of a complex tensor": (lambda x: torch.view_as_real(torch.sin(torch.fft.fft(x))), (r(4),)),
        "a complex tensor to a real dtype": (lambda x: torch.fft.fft(x).to(F64), (r(4),)),
    }


# --- the tests -----------------------------------------------------------------------

@functools.cache
def _cases(grad: bool) -> list[Case]:
    """With `grad`, the hand-written cases that ask for gradients (their values
    compared too); else the other hand-written cases and one sample of each
    OpInfo (values only: the full sweep compares their gradients)."""
    cases = [c for c in hand_cases() if c.grad == grad]
    if not grad:
        for name in OPINFOS:
            for c in opinfo_cases(name, ci=True):
                c.grad = False
                cases.append(c)
    return cases


PARTS = 8
"""The cases split into this many fixed parts (by a hash of the case's name, so that adding a case moves no
other); CI runs part 0, --slow all."""


@functools.cache
def results(grad: bool, part: int | None = None) -> tuple[list[Case], dict[str, str]]:
    """The cases (`part` 0 to PARTS - 1: those whose name's CRC-32 is `part` modulo PARTS;
    None: all) and their status, run in batches of 160."""
    if part is None:
        return _cases(grad), {k: v for p in range(PARTS) for k, v in results(grad, p)[1].items()}
    cases = [c for c in _cases(grad) if zlib.crc32(c.name.encode()) % PARTS == part]
    return cases, run_in_batches(cases, grad, 160)


def run_in_batches(cases: list[Case], grad: bool, size: int) -> dict[str, str]:
    status: dict[str, str] = {}
    for start in range(0, len(cases), size):
        status.update(run(cases[start:start + size], grad))
    return status


def _report(cases: list[Case], status: dict[str, str]) -> str:
    samples = [c for c in cases if c.opinfo]
    counts = {s: sum(status[c.name].startswith(s) for c in samples) for s in ("pass", "refused", "FAIL")}
    return f"OpInfo samples: {len(samples)} ({counts})"


@pytest.mark.parametrize("part", [0, *(pytest.param(p, marks=pytest.mark.slow) for p in range(1, PARTS))],
                         ids=[f"part{p}" for p in range(PARTS)])
@pytest.mark.parametrize("grad", [False, True], ids=["values", "gradients"])
def test_cases_match_eager(grad, part):
    """Every hand-written case and every CI OpInfo sample matches eager (values,
    and the gradients of those that ask); only OpInfo samples may be refused.
    CI runs a fixed quarter of the cases (part 0); --slow runs the others too."""
    cases, status = results(grad, part)
    print(_report(cases, status))
    failed = [f"{c.name}: {status[c.name]}" for c in cases if status[c.name].startswith("FAIL")]
    refused = [f"{c.name}: {status[c.name]}" for c in cases if not c.opinfo and status[c.name] != "pass"]
    assert not failed + refused, "\n".join(failed + refused)


def test_round_is_half_to_even_with_zero_gradient():
    """aten.round (nn.round_even): halfway cases go to the even neighbour, as torch's, and the gradient is 0."""
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 3.5, -2.7, 0.2], dtype=F64, requires_grad=True)
    compiled = dfc.torch.compile(torch.round, (x,))
    y = compiled(x)
    assert torch.equal(y, torch.tensor([0.0, 2.0, 2.0, -0.0, -2.0, 4.0, -3.0, 0.0], dtype=F64))
    assert torch.equal(torch.signbit(y), torch.signbit(torch.round(x)))
    y.backward(torch.ones_like(y))
    assert torch.equal(x.grad, torch.zeros_like(x))


@pytest.mark.slow
def test_every_handler_has_a_case():
    """Each overload in HANDLERS was in the program of a case that matched eager,
    and in one whose gradient matched unless it is not differentiable; an
    overload whose every form is refused has its case in `refused_forms`."""
    exercised = {}
    for grad in (False, True):
        cases, status = results(grad)
        exercised[grad] = set().union(*(c.targets for c in cases if status[c.name] == "pass"))
    elsewhere = set(LINALG_HANDLERS)  # tests/api/test_linalg_family.py: values and gradients against eager
    missing = sorted(set(HANDLERS) - exercised[False] - exercised[True] - set(ALWAYS_REFUSED) - elsewhere)
    assert not missing, f"no case for {missing}"
    missing = sorted(set(HANDLERS) - exercised[True] - set(ALWAYS_REFUSED) - NOT_DIFFERENTIABLE - elsewhere)
    assert not missing, f"no gradient case for {missing}"


ALWAYS_REFUSED: dict[str, str] = {}
"""Overloads whose handler refuses every form, and their case in `refused_forms`."""

NOT_DIFFERENTIABLE = {
    *(f"aten.{op}.{kind}" for op in ("eq", "ne", "lt", "le", "gt", "ge") for kind in ("Tensor", "Scalar")),
    "aten.logical_not.default", "aten.full.default", "aten.full_like.default", "aten.scalar_tensor.default",
    "aten._assert_tensor_metadata.default", "aten.arange.start_step", "aten.isnan.default", "aten.isinf.default",
    *(f"aten.logical_{op}.default" for op in ("and", "or", "xor")), "aten.argmax.default", "aten.argmin.default",
    "aten.any.default", "aten.any.dim", "aten.any.dims", "aten.empty.memory_format", "aten.empty_strided.default",
    "aten.empty_permuted.default", "aten.scatter.reduce", "aten.scatter.value_reduce",
    *(f"aten.bitwise_{op}.{kind}" for op in ("and", "or", "xor") for kind in ("Tensor", "Scalar")),
    "aten.bitwise_not.default", "aten._embedding_bag_forward_only.default",
    *(f"aten.{op}.default" for op in ("rand", "rand_like", "randn", "randn_like", "uniform", "normal_functional",
                                      "randint", "randperm")), "aten.randint.low", "aten.bernoulli.p",
    "aten._unique2.default", "aten.signbit.default", "aten.bitwise_left_shift.Tensor",
    "aten.bitwise_right_shift.Tensor", *(f"aten.__{d}shift__.{k}" for d in "lr" for k in ("Scalar", "Tensor")),
    # torch defines no derivative (dfc's is nn.bessel_i0's and i1's)
    "aten.special_modified_bessel_i0.default", "aten.special_modified_bessel_i1.default",
}
"""Overloads the gradient walk does not require: their results carry no gradient
(comparisons, logical and bitwise ops, index reductions, constants, random draws, a metadata check,
the export's form of embedding_bag when no gradient is wanted), or torch has no derivative to
compare with (scatter with a reduce argument, unique)."""


def test_untranslatable_forms_are_refused():
    """Compiled as one program, the forms of `refused_forms` are one UnsupportedOpError
    with a line naming each (and the overload of those in ALWAYS_REFUSED)."""
    cases = [case(name, fn, *inputs) for name, (fn, inputs) in refused_forms().items()]
    with pytest.raises(UnsupportedOpError) as refusal:
        dfc.torch.compile(Batch(cases), [t for c in cases for t in c.inputs])
    lines = str(refusal.value).splitlines()
    for k, c in enumerate(cases):
        named = [line for line in lines if re.search(rf"\bcases\.{k}\b", line)]
        assert named, f"{c.name} is not refused"
        overload = next((o for o, name in ALWAYS_REFUSED.items() if name == c.name), "")
        assert all(overload in line for line in named), named


def test_clamp_without_bounds_is_refused_by_torch():
    """torch.clamp needs a bound: there is no form of it to compare."""
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        torch.clamp(torch.zeros(3))


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_handler_receives_every_schema_argument(name):
    """Given only the arguments the overload's schema requires, `bind` passes the
    handler every argument of the schema (each positional one, each keyword-only
    one by name), so no default of the handler stands in for one."""
    _, op, overload = name.split(".")
    target = getattr(getattr(torch.ops.aten, op), overload)
    schema = target._schema.arguments
    required = tuple(object() for a in schema if not a.kwarg_only and not a.has_default_value())
    required_kw = {a.name: object() for a in schema if a.kwarg_only and not a.has_default_value()}
    handler = HANDLERS[name]
    args, kwargs = bind(target, handler, required, required_kw)
    assert len(args) == sum(not a.kwarg_only for a in schema)
    assert set(kwargs) == {a.name for a in schema if a.kwarg_only}
    parameters = inspect.signature(handler).parameters
    bound = inspect.signature(handler).bind(None, None, *args, **kwargs).arguments
    defaulted = {n for n, p in parameters.items() if n not in bound and p.default is not p.empty}
    assert not defaulted & {a.name for a in schema}, f"{name}: the handler's defaults of {defaulted} stand"


def test_bind_fills_the_schemas_defaults_not_the_handlers():
    """The class of issue 39: a handler whose defaults are another op's still gets the schema's."""
    def handler(b, node, x, lo=-1.0, hi=1.0):
        return lo, hi

    clamp = torch.ops.aten.clamp.default
    assert bind(clamp, handler, ("x", 0.5), {}) == (("x", 0.5, None), {})
    assert bind(clamp, handler, ("x",), {"max": 2}) == (("x", None, 2), {})
    assert bind(torch.ops.aten.hardtanh.default, handler, ("x",), {}) == (("x", -1, 1), {})
    gelu = torch.ops.aten.gelu.default
    assert bind(gelu, lambda b, node, x, approximate="tanh": None, ("x",), {}) == (("x",), {"approximate": "none"})
    with pytest.raises(UnsupportedOpError, match="takes no argument approximate"):
        bind(gelu, lambda b, node, x: None, ("x",), {"approximate": "tanh"})


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_handled_overloads_survive_the_export(name):
    """An overload the export decomposes (a composite it does not preserve, or one in its
    table) never reaches the translation: HANDLERS lists only overloads it can produce."""
    from torch.export.decomp_utils import PRESERVED_ATEN_CIA_OPS

    _, op, overload = name.split(".")
    target = getattr(getattr(torch.ops.aten, op), overload)
    if target in KEPT or target in PRESERVED_ATEN_CIA_OPS:
        assert target not in capture_module._decompositions(), name
        return
    assert not target.has_kernel_for_dispatch_key(torch._C.DispatchKey.CompositeImplicitAutograd), name
    assert target not in capture_module._decompositions(), name


@pytest.mark.skipif(not FULL, reason="the full OpInfo sweep runs with DFC_FULL_OPINFO=1")
@pytest.mark.parametrize("name", OPINFOS)
def test_every_opinfo_sample(name):
    """Every sample of the OpInfo matches eager (values, and gradients where
    the OpInfo supports autograd) or is refused with UnsupportedOpError."""
    cases = opinfo_cases(name, ci=False)
    status = run_in_batches(cases, False, 60)
    grad_status = run_in_batches([c for c in cases if c.grad and status[c.name] == "pass"], True, 30)
    counts = {s: sum(v.startswith(s) for v in status.values()) for s in ("pass", "refused", "FAIL")}
    print(f"{name}: {len(cases)} samples {counts}, gradients "
          f"{sum(v == 'pass' for v in grad_status.values())}/{len(grad_status)} pass")
    failed = [f"{n}: {s}" for n, s in {**status, **grad_status}.items() if s.startswith("FAIL")]
    assert not failed, "\n".join(failed)


CORE_EXCEPTIONS = {
    "aten._local_scalar_dense.default": "Tensor.item(): a Python number from tensor data (a graph break)",
    "aten.sym_numel.default": "symbolic shapes only (dfc compiles static shapes)",
    "aten.sym_storage_offset.default": "symbolic shapes only (dfc compiles static shapes)",
    "aten._native_batch_norm_legit.default": "the in-place form: the export emits the functional one",
}
"""The core ATen overloads without a handler, and why."""


def core_aten_overloads() -> set[str]:
    """torch's core ATen set (`torch.Tag.core`) as it can reach the translation: functional overloads
    (no `.out` or in-place forms, no backward ops) that the export's decompositions keep."""
    decomposed = capture_module._decompositions()
    core = set()
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name)
        if not isinstance(packet, torch._ops.OpOverloadPacket) or "backward" in name or name.endswith("_"):
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if torch.Tag.core in op.tags and not overload.startswith("out") and not overload.endswith("_out") \
                    and op not in decomposed:
                core.add(f"aten.{name}.{overload}")
    return core


def test_core_aten_coverage():
    """Every core ATen overload has a handler or is in CORE_EXCEPTIONS with its reason (and an exception
    that gained a handler leaves the list)."""
    core = core_aten_overloads()
    handled = core & set(HANDLERS)
    print(f"core ATen: {len(handled)} of {len(core)} overloads handled")
    assert not (core - handled) - set(CORE_EXCEPTIONS), f"core ops with neither a handler nor a reason: " \
                                                         f"{sorted((core - handled) - set(CORE_EXCEPTIONS))}"
    assert not set(CORE_EXCEPTIONS) & set(HANDLERS), sorted(set(CORE_EXCEPTIONS) & set(HANDLERS))
