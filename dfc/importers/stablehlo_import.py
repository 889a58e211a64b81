"""Importing JAX programs: StableHLO text -> library-level IR -> a callable.

`import_stablehlo(text)` parses a StableHLO module (pretty or generic form, as
`jax.jit(f).lower(*args).as_text()` prints it) and runs `convert-stablehlo`
and `dce`; the result holds func + nn + scf, ready for `autodiff` and the
engine. `from_jax(f, *example_args)` lowers `f` with JAX for the example
arguments' shapes and dtypes, imports it under the function's own name, and
returns a `JaxFunction`, a `dfc.Function` that compiles on its first call and
that `dfc.grad`/`dfc.value_and_grad` differentiate with the `autodiff` pass.
JAX is imported only by `from_jax`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from dfc.compiler.interpreter import dtype_of
from dfc.compiler.parsing import parse_module
from dfc.compiler.pass_manager import PassManager
from dfc.dialects.diagnostics import CompileError
from dfc.errors import require_extra, user_errors
from dfc.function import Function
from dfc.passes.autodiff.float_bits import UNMODELLED_GRADIENT


@user_errors
def import_stablehlo(text: str, filename: str = "<stablehlo>") -> ModuleOp:
    """The library-level module of a StableHLO module's text (debug locations
    become the source positions they name, see `compiler.location_aliases`);
    an error located in `text` shows its line."""
    try:
        module = parse_module(text, filename)
        PassManager.parse("convert-stablehlo,dce").run(module)
    except CompileError as err:
        if err.location and err.location.startswith(f"{filename}:"):
            err.with_source(text)
        raise
    return module


class JaxFunction(Function):
    """A JAX function imported as `module`'s `@name`: a `dfc.Function` (callable,
    accepted by `dfc.grad`/`dfc.value_and_grad`) whose arguments are first
    converted to the dtypes JAX lowered them to, as JAX does (float64 arrays
    and Python floats become f32). dfc computes with signless integers
    (`passes.stablehlo_unsigned`): where JAX lowered an argument or a result
    as unsigned (`input_dtypes`, `output_dtypes`), it crosses as the same bits.
    A complex argument or result crosses as the float array of shape
    `(*shape, 2)` its parts are packed in (`passes.stablehlo_complex`): numpy
    complex arrays are viewed so on the way in and back on the way out.
    The narrow types (float8, float6, float4, int4: `passes.stablehlo_narrow`) cross as their values in
    f64 and i8, and their results come back as JAX's dtypes.
    Gradients with respect to complex arguments are refused."""

    input_dtypes: tuple[np.dtype, ...] = ()
    output_dtypes: tuple[np.dtype, ...] = ()

    def arguments(self, *args: Any) -> list[np.ndarray]:
        """`args` as numpy arrays of the function's parameter dtypes."""
        if len(args) != len(self.inputs):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} arguments, got {len(args)}")
        out = []
        for k, (a, t) in enumerate(zip(args, self.inputs)):
            dtype = dtype_of(t.element_type)
            jax_dtype = self.input_dtypes[k] if k < len(self.input_dtypes) else dtype
            if jax_dtype.kind == "c":
                out.append(np.ascontiguousarray(np.asarray(a, dtype=jax_dtype)[..., None]).view(dtype))
            elif jax_dtype.kind == "u":
                out.append(np.asarray(a, dtype=jax_dtype).view(dtype))
            else:
                out.append(np.asarray(a, dtype=dtype))
        return out

    def with_jax_dtypes(self, result: Any) -> Any:
        """`result` (one value or a tuple) with the unsigned and the complex (packed) results viewed as
        JAX's dtypes."""
        values = result if isinstance(result, tuple) else (result,)
        dtypes = (*self.output_dtypes, *(np.dtype("O"),) * len(values))
        viewed = tuple(_as_jax_dtype(v, d) for v, d in zip(values, dtypes))
        return viewed if isinstance(result, tuple) else viewed[0]

    def __call__(self, *args: Any) -> Any:
        return self.with_jax_dtypes(super().__call__(*self.arguments(*args)))

    @property
    def complex_inputs(self) -> tuple[int, ...]:
        """The positions of the complex arguments (passed packed; `dfc.grad` refuses them)."""
        return tuple(k for k, d in enumerate(self.input_dtypes) if d.kind == "c")

    def gradient(self, wrt: Sequence[int]) -> Callable[..., tuple]:
        for k in wrt:
            if k in self.complex_inputs:
                raise TypeError(f"argument #{k} of @{self.name} is complex: gradients with respect to complex "
                                "arguments are not supported")
        call = super().gradient(wrt)
        n = len(self.inputs)

        def converted(*args: Any) -> tuple:
            return call(*self.arguments(*args[:n]), *args[n:])

        converted.n_outputs = call.n_outputs  # type: ignore[attr-defined]
        return converted


def _as_jax_dtype(v: Any, dtype: np.dtype) -> Any:
    """Result `v` as JAX's `dtype`: unsigned integers as their bits, complex numbers from their packed parts,
    the narrow types (ml_dtypes': float8, int4, ...; computed in f64 and i8) by value."""
    if dtype.kind == "V":
        return np.asarray(v).astype(dtype)[()]
    if dtype.kind == "u":
        return np.asarray(v).view(dtype)[()]
    if dtype.kind == "c":
        return np.ascontiguousarray(v).view(dtype)[..., 0][()]
    return v


_CUSTOM_RULES = {"custom_jvp_call": "jax.custom_jvp", "custom_vjp_call": "jax.custom_vjp",
                 "custom_vjp_call_jaxpr": "jax.custom_vjp"}  # the last: JAX before 0.7


def _custom_rule(eqn: Any, jax_dir: str) -> str | None:
    """What `eqn`, a `custom_jvp_call`/`custom_vjp_call`, calls ("jax.custom_vjp rule of `ste` (f_bwd at
    file:line)"), or None where both its primal and its rules are JAX's own (files under `jax_dir`: jax.nn.relu,
    softmax, logsumexp, sinc, ..., whose primal has the rule's derivative at ordinary points). A user's rule
    set by `defjvps` reads as JAX's (its wrapper is), so the primal's file decides there; one set by
    `jax.custom_gradient` has JAX's wrappers for primal and rules, and counts as the user's, as does
    `lax.custom_root`'s (the user's solver); where JAX names no
    source (older versions), every rule counts as the user's."""
    infos = [getattr(eqn.params.get("call_jaxpr"), "jaxpr", None)]
    infos += [eqn.params.get(k) for k in ("jvp_jaxpr_fun", "fwd_jaxpr_thunk", "bwd")]
    sources = [getattr(getattr(i, "debug_info", None), "func_src_info", None) or "" for i in infos]
    users = [s for s in sources if " at " in s and not s.rpartition(" at ")[2].startswith(jax_dir)]
    if any(s.rpartition(" at ")[2].startswith(os.path.join(jax_dir, "_src", "lax", "control_flow", "solves.py"))
           for s in sources):  # lax.custom_root's rule around the user's solver
        return "lax.custom_root (its gradient is implicit, not its solver's)"
    wrapped = sources[0].rpartition(" at ")[2].startswith(os.path.join(jax_dir, "_src", "custom_derivatives.py"))
    if not users and any(sources) and not wrapped:  # wrapped: jax.custom_gradient's primal wraps the user's
        return None
    primal = sources[0].partition(" at ")[0] or "?"
    rules = ", ".join(s for s in sources[1:] if s) or "?"
    return f"the {_CUSTOM_RULES[eqn.primitive.name]} rule of `{primal}` ({rules})".replace("@", "_")


def _stop_gradients(jaxpr: Any, jax_dir: str) -> list[tuple[str, str]]:
    """(what, `file:line:col`) of each call of `lax.stop_gradient`, of each gamma sample (`random_gamma`,
    which JAX differentiates implicitly, not through its sampler), of each function with a user's
    `jax.custom_jvp`/`jax.custom_vjp`/`jax.custom_gradient` rule (StableHLO holds its primal only) and of each
    `lax.custom_root` and `lax.custom_linear_solve` but the exact solves of `jnp.linalg.solve` (an iterative
    solver's gradient is implicit, JAX's `cg`, `gmres`, `bicgstab` included) in `jaxpr` (a closed jaxpr),
    the jaxprs of its equations' parameters (calls, loops, branches) included, except JAX's own
    stop_gradients and custom rules (under `jax_dir`: the maximum subtracted in softmax and logsumexp, which
    leaves the gradient as it is; jax.nn.relu's rule)."""
    found: list[tuple[str, str]] = []
    pending = [jaxpr]
    while pending:
        j = pending.pop()
        j = getattr(j, "jaxpr", j)
        for eqn in getattr(j, "eqns", ()):
            frames = eqn.source_info.traceback.frames if eqn.source_info.traceback else []
            user = next((fr for fr in frames if not fr.file_name.startswith(jax_dir)), None)
            at = f"{user.file_name}:{user.line_num}:1" if user else ""
            if eqn.primitive.name == "random_gamma":  # its gradient is JAX's implicit one, not the sampler's
                found.append(("jax.random.gamma", at))
            if eqn.primitive.name in _CUSTOM_RULES and (rule := _custom_rule(eqn, jax_dir)):
                found.append((rule, at))
            if eqn.primitive.name == "custom_linear_solve" and not any(
                    fr.file_name.startswith(os.path.join(jax_dir, "_src", "lax", "linalg.py")) for fr in frames):
                # the gradient is the implicit one (exact at the root or solution), not the solver's iterations
                found.append((f"lax.{eqn.primitive.name} (its gradient is implicit, not its solver's)", at))
            if eqn.primitive.name == "stop_gradient":
                called = [k for k, frame in enumerate(frames) if frame.function_name == "stop_gradient"]
                caller = frames[called[-1] + 1] if called and called[-1] + 1 < len(frames) else None
                if caller is None or not caller.file_name.startswith(jax_dir):
                    found.append(("lax.stop_gradient", f"{caller.file_name}:{caller.line_num}:1" if caller else ""))
            for value in eqn.params.values():
                for v in value if isinstance(value, tuple | list) else (value,):
                    if hasattr(v, "eqns") or hasattr(v, "jaxpr"):
                        pending.append(v)
    return found


def _symbol(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"f_{cleaned}"


@user_errors
def from_jax(f: Callable[..., Any], *example_args: Any) -> JaxFunction:
    """`f` lowered by `jax.jit` for arguments shaped like `example_args`, imported.

    The module's entry function (JAX's `@main`) is renamed after `f`; each op
    carries the position in the Python source of the JAX call it comes from,
    so errors point there. A function calling `lax.stop_gradient` (which
    StableHLO does not carry; JAX's own calls in softmax and logsumexp, which
    leave the gradient as it is, aside), sampling `jax.random.gamma` (JAX's
    gradient of a sample is implicit, not its sampler's) or calling a function
    with a user's `jax.custom_jvp`/`jax.custom_vjp` rule (StableHLO holds its
    primal only) is marked so that `autodiff` refuses it there.
    """
    jax = require_extra("jax", "jax", "dfc.from_jax")
    lowered = jax.jit(f, keep_unused=True).lower(*example_args)  # the module takes every argument f does
    text = lowered.as_text(debug_info=True)
    name = _symbol(getattr(f, "__name__", "main"))
    module = import_stablehlo(text, f"<jax:{name}>")
    stops = _stop_gradients(jax.make_jaxpr(f)(*example_args), os.path.dirname(jax.__file__))
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            op.sym_name = StringAttr(name)
            if stops:  # StableHLO carries neither: autodiff refuses to differentiate through them
                op.attributes[UNMODELLED_GRADIENT] = StringAttr("@".join(stops[0]))
    function = JaxFunction(module, name)
    function.input_dtypes = tuple(np.dtype(a.dtype) for a in jax.tree_util.tree_leaves(lowered.in_avals))
    function.output_dtypes = tuple(np.dtype(a.dtype) for a in jax.tree_util.tree_leaves(lowered.out_info))
    return function
