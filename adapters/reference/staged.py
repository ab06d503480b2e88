"""`lax.while_loop` while jit is tracing: the loop is staged as one primitive, run at evaluation.

Under jit the loop's bound may be a tracer (`lambda x: x < n` with `n` traced), so the Python
loop cannot run while tracing. As JAX does, the condition and the body are traced to IRs at the
current flag values (x64 included), and a `while` primitive carries them; evaluating it runs the
loop on concrete values. Values they close over (outer tracers) become the primitive's inputs.
The primitive gives one carry leaf per bind, so it has the ordinary one-output shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax_conformance.adapters.reference.core import Array, Primitive, ShapedArray, bind, get_aval


class _WhilePrimitive(Primitive):
    def abstract_eval(self, avals: list[ShapedArray], params: dict[str, Any]) -> ShapedArray:
        return avals[params["out_index"]]  # the carry keeps its types


def _run(
    *values: np.ndarray,
    cond_ir: Any,
    body_ir: Any,
    n_carry: int,
    n_cond: int,
    out_index: int,
    weak: tuple[bool, ...],
) -> np.ndarray:
    from jax_conformance.adapters.reference.jit import eval_ir

    arrays = [Array(v, w) for v, w in zip(values[:n_carry], weak, strict=True)]
    cond_consts = [Array(v) for v in values[n_carry : n_carry + n_cond]]
    body_consts = [Array(v) for v in values[n_carry + n_cond :]]
    while bool(eval_ir(cond_ir, cond_consts, arrays)[0]):
        arrays = eval_ir(body_ir, body_consts, arrays)
    return np.asarray(arrays[out_index])


while_p = _WhilePrimitive("while", _run, lambda avals, params: avals[params["out_index"]].weak_type)


def staged_while(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """The loop as a staged primitive (used while jit traces)."""
    from jax_conformance.adapters.reference.jit import trace_to_ir
    from jax_conformance.adapters.reference.tree_util import tree_flatten, tree_unflatten

    leaves, tree = tree_flatten(init_val)
    avals = [get_aval(x) for x in leaves]
    cond_ir, _ = trace_to_ir(lambda *flat: cond_fun(tree_unflatten(tree, list(flat))), avals)
    body_ir, _ = trace_to_ir(
        lambda *flat: tree_flatten(body_fun(tree_unflatten(tree, list(flat))))[0], avals
    )
    params = {
        "cond_ir": cond_ir,
        "body_ir": body_ir,
        "n_carry": len(leaves),
        "n_cond": len(cond_ir.consts),
        "weak": tuple(a.weak_type for a in avals),
    }
    ins = [*leaves, *cond_ir.consts, *body_ir.consts]
    return tree_unflatten(
        tree, [bind(while_p, *ins, out_index=i, **params) for i in range(len(leaves))]
    )
