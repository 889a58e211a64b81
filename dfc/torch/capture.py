"""Capture a PyTorch module with `torch.export` and translate it to nn-dialect IR.

`capture(module, args, kwargs)` exports the module for the given example
inputs, decomposes it to core aten (keeping the ops in `KEPT`, which the nn
library has as one op each), and writes one `func.func @forward` whose
arguments are the exported program's placeholders in order: parameters,
buffers, lifted constants, then the flattened user inputs. `Captured` records
which placeholder is which, so that each call passes the module's live
tensors (shared, not copied), which buffers the program updates (batch norm's
running statistics in training mode: their new values are its first
results), and how to rebuild the outputs' structure.

An aten op without a handler in `aten_ops.HANDLERS`, or a form of one its
handler refuses, is an `UnsupportedOpError` naming the op and the path of the
submodule it came from (`model.layers.2.attn`), raised here, at compile time:
one line per such op in the program (the ops that use its result are skipped).
"""

from __future__ import annotations

import functools
import inspect
import operator
import os
import re
import sysconfig
import traceback
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

from dfc.passes.autodiff.float_bits import UNMODELLED_GRADIENT
from dfc.torch.aten_complex import complex_handler
from dfc.torch.aten_dynamic import DYNAMIC_HANDLERS, DYNAMIC_INPUTS
from dfc.torch.aten_fft import ComplexValue, is_complex, packed_type
from dfc.torch.aten_ops import HANDLERS, Builder, UnsupportedOp, meta_type
from dfc.torch.custom_functions import FunctionWatch
from dfc.torch.grad_modes import GradientHookSpy, detach_no_grad_regions, module_backward_hook
from dfc.torch.ir_text import Value
from dfc.torch.vision_ops import VISION_HANDLERS

KEPT = (
    torch.ops.aten.linear.default,
    torch.ops.aten._safe_softmax.default,
    torch.ops.aten.nll_loss_forward.default,
    torch.ops.aten.hardsigmoid.default,
    torch.ops.aten.hardswish.default,
    torch.ops.aten.detach.default,
    torch.ops.aten.col2im.default,
    torch.ops.aten.scaled_dot_product_attention.default,
    torch.ops.aten.special_ndtr.default,
)
"""Ops left undecomposed: each is one nn op (`nn.linear`, `nn.softmax`, `nn.nll_loss`, `nn.col2im`: torch's
decomposition is an index_put of accumulated patches), or (scaled_dot_product_attention) one whose
decomposition gives the output other strides than eager's kernel, so a view of it fails in the export, or
(hardsigmoid, hardswish) a few whose gradient at the kinks then equals torch's, or
(detach) one whose decomposition (`alias`) would lose its meaning for the gradient, or (special_ndtr) one
whose decomposition through erf loses the lower tail."""


class UnsupportedOpError(NotImplementedError):
    """An aten op the translation does not cover, with the submodule it came from
    (one line for each such op in the program)."""


RNG_KEY = "rng_key"
"""The kind of the random key argument (`Captured.inputs`), which the caller draws per call (docs/random.md)."""

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep
_DFC_TORCH_DIR = os.path.dirname(__file__) + os.sep

_REFUSED = object()
"""The value of a node that has no translation, and of the nodes that use it."""


@dataclass(frozen=True)
class Captured:
    """A translated program and how to call it."""

    text: str
    """The MLIR module: one `func.func @forward` of nn ops."""
    inputs: list[tuple[InputKind | str, str | int]]
    """Per function argument: its kind and its name (parameters, buffers, constants) or the
    index of the user's input among the flattened inputs; a program that draws random numbers
    takes its key last, of kind `RNG_KEY`."""
    float_inputs: list[bool]
    outputs: list[str]
    """Element type of each result."""
    out_spec: Any
    constants: dict[str, torch.Tensor]
    mutated: list[str]
    """The buffers (by target) the program updates, in order: its first results
    are their new values (batch norm's running statistics), the user's outputs follow."""
    grad_traced: tuple[bool, ...] = ()
    """Per function argument: whether the capture traced gradients from it (`custom_functions`)."""
    untraced: str | None = None
    """Why a gradient from an argument the capture traced none from is refused, or None."""


@functools.cache
def _decompositions() -> dict:
    """The export's default decompositions but `KEPT`, materialised once (torch
    would otherwise enumerate the composite ops on every capture)."""
    table = torch.export.default_decompositions()
    for op in KEPT:
        table.pop(op, None)
    return dict(table)


def _without_error_checks(program: ExportedProgram) -> ExportedProgram:
    """The program without effect tokens when its only effects are linalg's error checks
    (`aten._linalg_check_errors`, of torch.linalg.cholesky, inv, solve: kept as plain calls, which
    aten_linalg.py translates to nothing, the failed decomposition's result holding NaN or infinities)."""
    from torch._higher_order_ops.effects import with_effects
    from torch.export._remove_effect_tokens_pass import _remove_effect_tokens

    effects = [n for n in program.graph.nodes if n.target is with_effects]
    if effects and all(n.args[1] is torch.ops.aten._linalg_check_errors.default for n in effects):
        return _remove_effect_tokens(program)
    return program


def export(module: torch.nn.Module, args: tuple, kwargs: dict | None = None) -> ExportedProgram:
    """The module as core aten (but `KEPT`), for inputs like `args`/`kwargs`."""
    name = type(module).__name__
    spy = GradientHookSpy(name)
    try:
        with spy:
            program = torch.export.export(module, tuple(args), kwargs or {}, strict=False)
        if (refusal := spy.refusal() or module_backward_hook(module, name)) is not None:
            raise UnsupportedOpError(refusal)
        detach_no_grad_regions(program, spy.no_grad_lines)
        with warnings.catch_warnings():
            # run_decompositions deep-copies the export's LeafSpecs, and torch's own copy warns that LeafSpec is
            # deprecated on every capture: the cause is in torch, so this one warning is hidden while decomposing
            warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning)
            program = program.run_decompositions(_decompositions())
        return _without_error_checks(program)
    except UnsupportedOpError:
        raise
    except GuardOnDataDependentSymNode as err:
        raise UnsupportedOpError(
            f"torch.export cannot capture {name}: its Python control flow depends on tensor "
            "values; torch.compile(model, backend='dfc') compiles the pieces between such branches"
        ) from err
    except Exception as err:  # noqa: BLE001 - whatever torch.export or a decomposition raises, named as its failure
        first = str(err).strip().split("\n")[0]
        hint = ("; a Hugging Face model exports with attn_implementation=\"eager\", whose attention torch can "
                "decompose") if "Cannot view a tensor" in first else ""
        raise UnsupportedOpError(
            f"torch.export could not capture {name} (an error of the model, or a limit of torch.export): "
            f"{type(err).__name__}: {first}{hint}{_raised_at(err)} (DFC_TRACEBACK=1 shows torch's traceback)"
        ) from err


def _raised_at(err: BaseException) -> str:
    """` (raised at file:line: code)` for the innermost frame of `err`'s traceback outside torch, dfc.torch
    and the standard library (the model's line), or "" when there is none (a failure inside torch itself)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not _outside_the_model(f.filename)]
    return f" (raised at {frames[-1].filename}:{frames[-1].lineno}: {frames[-1].line})" if frames else ""


def _outside_the_model(filename: str) -> bool:
    """Whether a frame in `filename` is torch's, dfc.torch's or the standard library's (not installed packages)."""
    return filename.startswith((_TORCH_DIR, _DFC_TORCH_DIR)) or (
        filename.startswith(_STDLIB_DIR) and "-packages" + os.sep not in filename) or filename.startswith("<")


def module_path(node: torch.fx.Node, root: str) -> str:
    """`root.layers.2.attn (Attention) at model.py:41` and the source line: where
    in the module tree and in the user's code `node` was traced."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return root + _source(node)
    path, cls = list(stack.values())[-1]
    cls_name = cls if isinstance(cls, str) else getattr(cls, "__name__", str(cls))
    where = f"{root}.{path}" if path else root
    return f"{where} ({cls_name.rsplit('.', 1)[-1]})" + _source(node)


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in [^\n]*\n(?P<code>[^\n]*)')


def _source(node: torch.fx.Node) -> str:
    """` at file:line` and the line's code, for the innermost frame of the
    node's trace outside torch (torch's own when every frame is torch's)."""
    frames = list(_FRAME.finditer(node.meta.get("stack_trace") or ""))
    if not frames:
        return ""
    frame = next((f for f in reversed(frames) if not f["file"].startswith(_TORCH_DIR)), frames[0])
    return f" at {frame['file']}:{frame['line']}\n    {frame['code'].strip()}"


def capture(module: torch.nn.Module, args: tuple, kwargs: dict | None = None, root: str = "model") -> Captured:
    with FunctionWatch(module) as watch:
        program = export(module, args, kwargs)
    refused_gradient = watch.refused(program)
    signature = program.graph_signature
    mutated = [spec.target for spec in signature.output_specs if spec.kind == OutputKind.BUFFER_MUTATION]
    kinds = [spec.kind for spec in signature.output_specs]
    for spec in signature.output_specs:
        if spec.kind not in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION):
            raise UnsupportedOpError(f"{root}: the module mutates {spec.target} ({spec.kind.name}); dfc.torch compiles "
                                     "functional forward passes, which may update buffers")
    if kinds != sorted(kinds, key=lambda k: k != OutputKind.BUFFER_MUTATION):
        raise UnsupportedOpError(f"{root}: buffer updates after the outputs in the exported program")
    b = Builder()
    env: dict[torch.fx.Node, Any] = {}
    params: list[Value] = []
    inputs: list[tuple[InputKind | str, str | int]] = []
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    user_leaf = 0
    for node, spec in zip(placeholders, signature.input_specs):
        val = node.meta.get("val")
        leaf = user_leaf
        user_leaf += spec.kind == InputKind.USER_INPUT
        if isinstance(val, int | float | bool) and spec.kind == InputKind.USER_INPUT:
            env[node] = val  # a Python number: export specialised the program to its value
            continue
        if not isinstance(val, torch.Tensor):
            raise UnsupportedOpError(f"{root}: input {node.name} is not a tensor ({type(val).__name__})")
        if is_complex(val):  # passed as its view_as_real (runtime.CompiledGraph.run)
            env[node] = ComplexValue(f"%arg_{node.name}", *packed_type(val))
        else:
            env[node] = Value(f"%arg_{node.name}", *_typed(node, val, root))
        params.append(env[node])
        inputs.append((spec.kind, leaf if spec.kind == InputKind.USER_INPUT else spec.target))
    results: list[Value] = []
    refused: list[UnsupportedOpError] = []
    for node in program.graph.nodes:
        if node.op == "call_function":
            if any(env[n] is _REFUSED for n in node.all_input_nodes):
                env[node] = _REFUSED
                continue
            try:
                env[node] = _translate(b, node, env, root)
            except UnsupportedOpError as err:  # the rest is translated too, to name every refusal at once
                refused.append(err)
                env[node] = _REFUSED
        elif node.op == "output":
            if refused:
                raise UnsupportedOpError("\n".join(str(err) for err in refused))
            results = [env[o] for o in node.args[0]]
            if not all(isinstance(r, Value) for r in results):
                raise UnsupportedOpError(f"{root}: every output must be a tensor")
            if any(isinstance(r, ComplexValue) for r in results):
                raise UnsupportedOpError(f"{root}: a complex output (dfc.torch returns real tensors: return "
                                         "torch.view_as_real(z), or z.real and z.imag)")
        elif node.op != "placeholder":
            raise UnsupportedOpError(f"{root}: graph node {node.op} {node.target}")
    if b.key is not None:
        params.append(b.key)
        inputs.append((RNG_KEY, RNG_KEY))
    text = b.function("forward", params, results)
    if refused_gradient:  # autodiff refuses the gradient there (runtime.CompiledGraph.run: at the backward)
        mark = refused_gradient.replace("\\", "\\\\").replace('"', '\\"')
        text = text.replace(") {\n", f') attributes {{{UNMODELLED_GRADIENT} = "{mark}"}} {{\n', 1)
    return Captured(
        text=text, inputs=inputs, float_inputs=[p.is_float for p in params], outputs=[r.dtype for r in results],
        out_spec=program.call_spec.out_spec, constants=dict(program.constants), mutated=mutated,
        grad_traced=tuple(watch.traced(n) for n in placeholders if isinstance(env.get(n), Value | ComplexValue)),
        untraced=watch.untraced(),
    )


def _typed(node: torch.fx.Node, val, root: str) -> tuple[tuple[int, ...], str]:
    try:
        return meta_type(val)
    except UnsupportedOp as err:
        raise UnsupportedOpError(f"{module_path(node, root)}: {node.name} has unsupported {err}") from None


def _translate(b: Builder, node: torch.fx.Node, env: dict, root: str) -> Any:
    args = torch.fx.node.map_arg(node.args, lambda n: env[n])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
    if (symbolic := _symbolic(node, args)) is not None:
        return None if symbolic is _DROPPED else symbolic
    if node.target is operator.getitem:
        value = args[0][args[1]]
        if value is None:
            raise UnsupportedOpError(
                f"{module_path(node, root)}: result {args[1]} of {node.args[0].target} is not supported"
            )
        return value
    name = str(node.target)
    try:
        handler = complex_handler(name, node, args) or HANDLERS.get(name) or VISION_HANDLERS.get(name)
    except UnsupportedOp as err:
        raise UnsupportedOpError(f"unsupported {name} in {module_path(node, root)}: {err}") from None
    if handler is None:
        raise UnsupportedOpError(f"unsupported aten op {name} in {module_path(node, root)}")
    args, kwargs = bind(node.target, handler, args, kwargs, lambda: f"{name} in {module_path(node, root)}")
    dynamic = name in DYNAMIC_HANDLERS or name == "aten.index.Tensor"  # index.Tensor: by a boolean mask
    if _data_dependent(node) and not dynamic:
        raise UnsupportedOpError(f"unsupported {name} in {module_path(node, root)}: the shape of its result "
                                 "depends on tensor values, and only nonzero, masked_select and boolean-mask "
                                 "indexing build such results")
    if _dynamic_operand(args) and not (dynamic and name != "aten.index.Tensor" or name in DYNAMIC_INPUTS):
        raise UnsupportedOpError(f"unsupported {name} in {module_path(node, root)}: it takes a tensor of "
                                 "data-dependent size (nonzero's, masked_select's, x[mask]'s), which only sums and "
                                 "means over all of it can take")
    try:
        result = _zeros(b, node) if _empty(node) else handler(b, node, *args, **kwargs)
    except UnsupportedOp as err:
        raise UnsupportedOpError(f"unsupported {name} in {module_path(node, root)}: {err}") from None
    if not node.target._schema.returns:
        return None
    first = result[0] if isinstance(result, tuple) else result
    expected = b.out(node)
    if (first.shape, first.dtype) != expected:
        raise UnsupportedOpError(
            f"{name} in {module_path(node, root)}: dfc computes {first.type}, torch expects "
            f"shape {list(expected[0])} of {expected[1]} (a form of the op the translation does not cover)"
        )
    return result


@functools.cache
def _accepts(handler) -> tuple[int, frozenset[str] | None]:
    """How many arguments after (b, node) `handler` takes by position (-1: any)
    and the keyword names it takes (None: any)."""
    params = list(inspect.signature(handler).parameters.values())[2:]
    kinds = {p.kind for p in params}
    positional = -1 if inspect.Parameter.VAR_POSITIONAL in kinds else sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    names = None if inspect.Parameter.VAR_KEYWORD in kinds else frozenset(
        p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return positional, names


def bind(target, handler, args: tuple, kwargs: dict, where=lambda: "") -> tuple[tuple, dict]:
    """The arguments of an aten call as its handler receives them: every
    positional argument of the op's schema, those the call omits set to the
    schema's default (so a handler's own defaults never decide a value), and
    every keyword-only argument the handler takes by name, likewise filled. A
    call the handler cannot take (an argument it has no parameter for) is an
    `UnsupportedOpError`."""
    schema = target._schema.arguments
    kwargs = dict(kwargs)
    args = list(args)
    positional = [a for a in schema if not a.kwarg_only]
    for arg in positional[len(args):]:
        if arg.name in kwargs:
            args.append(kwargs.pop(arg.name))
        elif arg.has_default_value():
            args.append(arg.default_value)
        else:
            raise UnsupportedOpError(f"{where()}: argument {arg.name} is missing")
    count, names = _accepts(handler)
    for arg in schema:
        if arg.kwarg_only and arg.name not in kwargs and arg.has_default_value() and (
                names is None or arg.name in names):
            kwargs[arg.name] = arg.default_value
    if count != -1 and len(args) > count or names is not None and not names.issuperset(kwargs):
        extra = [a.name for a in positional[count:]] if count != -1 and len(args) > count else []
        extra += sorted(set(kwargs) - (names or set()))
        raise UnsupportedOpError(f"{where()}: the translation takes no argument {', '.join(extra)}")
    return tuple(args), kwargs


def _data_dependent(node: torch.fx.Node) -> bool:
    """Whether a result of `node` has a dimension the export could not make a number."""
    val = node.meta.get("val")
    vals = val if isinstance(val, tuple | list) else (val,)
    return any(isinstance(v, torch.Tensor) and not all(isinstance(d, int) for d in v.shape) for v in vals)


def _empty(node: torch.fx.Node) -> bool:
    """Whether every result of `node` is a tensor without elements (known to have none) of a static shape
    (`nonzero` of a 0-d tensor has ? rows of 0: its handler decides)."""
    val = node.meta.get("val")
    vals = val if isinstance(val, tuple | list) else (val,)
    return bool(vals) and all(isinstance(v, torch.Tensor) and all(type(d) is int for d in v.shape)
                              and any(d == 0 for d in v.shape) for v in vals)


_SYMBOLIC = object()
"""The value of an export node that computes with a data-dependent size (its `sym_size`, the range checks)."""
_DROPPED = object()
"""What `_symbolic` gives for a runtime assertion on such a size (the node is left out)."""

_RANGE_CHECKS = (operator.ge, operator.le, operator.gt, operator.lt, operator.eq)


def _symbolic(node: torch.fx.Node, args: tuple) -> Any:
    """For the nodes the export adds about a data-dependent size: `sym_size` of one and the comparisons
    on it give `_SYMBOLIC`, and the runtime assertion of such a comparison `_DROPPED` (the export's checks
    that the count lies in [0, numel], which a count does); None for any other node. Any other use
    of the size is an `UnsupportedOpError`."""
    uses = any(a is _SYMBOLIC for a in args)
    if node.target is torch.ops.aten.sym_size.int and not isinstance(node.meta.get("val"), int):
        return _SYMBOLIC
    if node.target in _RANGE_CHECKS and uses:
        return _SYMBOLIC
    if node.target is torch.ops.aten._assert_scalar.default and uses:
        return _DROPPED
    if uses:
        raise UnsupportedOpError(f"unsupported {node.target} of a data-dependent size (nonzero's, masked_select's "
                                 "or x[mask]'s count): dfc computes with it only as the size of that result")
    return None


def _dynamic_operand(args: tuple) -> bool:
    """Whether a tensor among `args` (or in a list among them) has a data-dependent size."""
    flat = [v for a in args for v in (a if isinstance(a, list | tuple) else (a,))]
    return any(isinstance(v, Value) and -1 in v.shape for v in flat)


def _zeros(b: Builder, node: torch.fx.Node) -> Value | tuple[Value, ...]:
    """The results of an op whose results are all empty: nothing to compute, and no gradient to pass."""
    val = node.meta["val"]
    values = tuple(b.full(0, *meta_type(v)) for v in (val if isinstance(val, tuple | list) else (val,)))
    return values if isinstance(val, tuple | list) else values[0]
