"""`jax.lax` control flow (`scan`, `cond`, `while_loop`) and the public helpers `clamp` and
`stop_gradient`: plain Python over the primitives of `lax` and `lax_indexing`, no rules of their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
from jax_conformance.adapters.reference.core import Array, get_aval
from jax_conformance.adapters.reference.lax import broadcast_to, full_like, ne, select
from jax_conformance.adapters.reference.lax_indexing import scatter_add

# ---------------------------------------------------------------- public lax helpers


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002 - lax's argument names
    """`lax.clamp(min, x, max)`."""
    from jax_conformance.adapters.reference import numpy_api

    return numpy_api.clip(x, min, max)


def stop_gradient(x: Any) -> Any:
    """`lax.stop_gradient`: the value with every autodiff transformation stripped off."""
    from jax_conformance.adapters.reference.ad import strip_autodiff
    from jax_conformance.adapters.reference.tree_util import tree_map

    return tree_map(strip_autodiff, x)


# ---------------------------------------------------------------- control flow (custom-rule specs use them)


def scan(
    f: Callable[..., Any],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int = 1,
) -> Any:
    """`lax.scan`, unrolled. JAX stages the body before running it, so inside another
    transformation each step runs as under an inner jit (`core.inline_jit`): custom rules see
    their function staged first. The `y`s are stacked along a new leading axis."""
    from jax_conformance.adapters.reference import core
    from jax_conformance.adapters.reference.tree_util import tree_flatten, tree_map, tree_unflatten

    x_leaves, x_tree = tree_flatten(xs)
    n = length if length is not None else get_aval(x_leaves[0]).shape[0]
    carry = tree_map(_as_value, init)
    ys = []
    with core.inline_jit() if len(core.trace_stack) > 1 else contextlib.nullcontext():
        for i in reversed(range(n)) if reverse else range(n):
            x = tree_unflatten(x_tree, [leaf[i] for leaf in x_leaves]) if xs is not None else None
            carry, y = f(carry, x)
            ys.append(y)
    if all(y is None for y in ys):
        return carry, None
    if reverse:
        ys.reverse()
    return carry, tree_map(lambda *steps: _stack(steps), *ys)


def _stack(steps: Any) -> Any:
    """The per-step outputs of a scan, stacked along a new leading axis."""
    aval = get_aval(steps[0])
    out = Array(np.zeros((len(steps), *aval.shape), aval.dtype))
    for i, y in enumerate(steps):
        out = scatter_add(out, y, i)
    return out


def cond(
    pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any
) -> Any:
    """`lax.cond`: both branches are traced (run), as in JAX; the predicate picks the result."""
    from jax_conformance.adapters.reference.core import Tracer
    from jax_conformance.adapters.reference.tree_util import tree_map

    on_true, on_false = true_fun(*operands), false_fun(*operands)
    if not isinstance(pred, Tracer):
        return on_true if bool(pred) else on_false
    return tree_map(
        lambda a, b: select(broadcast_to(ne(pred, full_like(pred, 0)), get_aval(a).shape), a, b),
        on_true,
        on_false,
    )


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """`lax.while_loop`: a Python loop on concrete values (not reverse-differentiable in JAX either);
    while jit traces (the bound may be a tracer) the loop is staged as one primitive (`staged.py`)."""
    from jax_conformance.adapters.reference import core
    from jax_conformance.adapters.reference.jit import JitTrace
    from jax_conformance.adapters.reference.staged import staged_while
    from jax_conformance.adapters.reference.tree_util import tree_map

    val = tree_map(_as_value, init_val)
    if any(m.trace_type is JitTrace for m in core.trace_stack):
        return staged_while(cond_fun, body_fun, val)
    while bool(cond_fun(val)):
        val = body_fun(val)
    return val


def _as_value(x: Any) -> Any:
    from jax_conformance.adapters.reference.core import Tracer

    if isinstance(x, (Array, Tracer)):
        return x
    aval = get_aval(x)
    return Array(np.asarray(x, aval.dtype), aval.weak_type)
