"""Second derivatives, as JAX's: `hessian` and `hvp` (exported as `dfc.hessian`,
`dfc.hvp`), forward over reverse: the forward-mode transforms of
`dfc.forward_transforms` applied to a `grad` of `dfc.transforms`, whose
specialisation is IR (`@grad_f`) that the `jvp` pass carries tangents through.
A module above both, since forward mode builds on the reverse-mode helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dfc.errors import user_errors
from dfc.forward_transforms import jacfwd, jvp
from dfc.transforms import grad


def hessian(f: Any, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Hessian of scalar-valued `f`, as `jax.hessian`: forward over reverse,
    `jacfwd(grad(f, argnums), argnums)`; shape `A + A` for an argument of shape
    `A`, nested tuples `H[i][j]` for a tuple `argnums`. (`jacrev(grad(f))`,
    reverse over reverse, gives the same numbers.)"""
    jacobian = jacfwd(grad(f, argnums), argnums)
    jacobian._dfc_not_differentiable = "hessian"  # type: ignore[attr-defined]
    return jacobian


@user_errors
def hvp(f: Any, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The Hessian of scalar-valued `f` at `primals` (a tuple of its arguments,
    all float) applied to `tangents` (one per primal), forward over reverse:
    `jvp(grad(f, argnums), primals, tangents)[1]` with every primal in
    `argnums`. An array for one primal, a tuple for several."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"hvp: {len(primals)} primals but {len(tangents)} tangents")
    return jvp(grad(f, tuple(range(len(primals)))), primals, tangents)[1]
