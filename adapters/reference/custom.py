"""`jax.custom_jvp`, `jax.custom_vjp` and `jax.closure_convert`: the rules, each in one place.

This module holds `closure_convert` and gathers the public names; the rules are in `custom_vjp.py`,
`custom_jvp.py` and, for what the two share, `custom_call.py`.

- The Tracer check: `custom_call.check_for_tracers` (custom_vjp's nondiff_argnums may not hold Tracers;
  custom_jvp's may: they are passed through `stop_gradient`).
- The argument order of the rules: `custom_vjp.VJPCall.bwd_flat` (nondiff arguments first, then the
  residuals, then the output cotangent) and `custom_jvp.JVPCall.jvp_flat` (nondiff arguments first).
- What bwd may return: `custom_vjp.cotangents_from_bwd` (a tuple with one entry per differentiable
  argument; None for a zero; float0 for integer inputs; shapes checked, dtypes not).
- fwd's output: `VJPCall.fwd_flat` (a pair of primal output and residuals).
- What a custom_jvp rule must return: `JVPCall.jvp_flat` (a pair; primal and tangent outputs of
  one pytree structure) and `check_tangent_types` (each tangent of its primal's shape and tangent
  dtype, float0 for integers); where JAX stages the function first (jit or scan inside a
  transformation), the rule's or fwd's primal output must have the function's type
  (`custom_call.staged_output_type`, `custom_call.check_primal_type`).
- Arguments: keyword and default arguments are mapped to positions (`custom_call.resolve_args`); `defjvps`
  (one rule per argument, None a zero; not with nondiff_argnums).
- Symbolic zeros: `SymbolicZero` tangents for a `defjvp(symbolic_zeros=True)` rule
  (`JVPCall.jvp_flat`), `CustomVJPPrimal` for fwd, a SymbolicZero from bwd checked for its shape
  (`custom_vjp._leaf_cotangent`); `zero_from_primal`.
- `closure_convert` (here) hoists the closed-over values autodiff may perturb and checks the structure
  of the converted function's inputs.
How a call is processed under each transformation lives with the transformation
(`ad.py`, `vmap.py`, `jit.py`; the closure check in `core.py`).
Docs: https://docs.jax.dev/en/latest/notebooks/Custom_derivative_rules_for_Python_code.html
and https://docs.jax.dev/en/latest/jep/4008-custom-vjp-update.html
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jax_conformance.adapters.reference.ad import is_float
from jax_conformance.adapters.reference.core import Tracer, get_aval
from jax_conformance.adapters.reference.custom_call import SymbolicZero, zero_from_primal
from jax_conformance.adapters.reference.custom_jvp import custom_jvp
from jax_conformance.adapters.reference.custom_vjp import CustomVJPPrimal, checkpoint, custom_vjp
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "checkpoint",
    "closure_convert",
    "custom_jvp",
    "custom_vjp",
    "zero_from_primal",
]


def closure_convert(
    fun: Callable[..., Any], *example_args: Any
) -> tuple[Callable[..., Any], list[Any]]:
    """`jax.closure_convert`: fun with its closed-over Tracers hoisted into extra trailing arguments."""
    from jax_conformance.adapters.reference.jit import eval_ir, trace_to_ir

    leaves, in_tree = tree_flatten(example_args)
    ir, out_tree = trace_to_ir(
        lambda *flat: fun(*tree_unflatten(in_tree, list(flat))), [get_aval(x) for x in leaves]
    )
    hoist = [i for i, c in enumerate(ir.consts) if isinstance(c, Tracer) and is_float(get_aval(c))]

    def converted(*args: Any) -> Any:
        n = len(args) - len(
            hoist
        )  # the hoisted values come last; the rest must look like the example arguments
        consts = list(ir.consts)
        for i, value in zip(hoist, args[n:], strict=True):
            consts[i] = value
        flat, tree = tree_flatten(tuple(args[:n]))
        if tree != in_tree:
            if not mutant("closure-convert-structure-unchecked"):
                raise TypeError(
                    "The inputs to the closure produced by closure_convert must have the same Pytree structure as the "
                    f"example arguments passed when closure_convert was called. Expected {in_tree}, but got {tree}"
                )
            flat = flat[: in_tree.num_leaves]
        return tree_unflatten(out_tree, eval_ir(ir, consts, flat))

    return converted, [ir.consts[i] for i in hoist]
