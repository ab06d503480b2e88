"""What custom_jvp and custom_vjp share: one call of a custom function (`CustomCall`: its nondiff and
differentiable arguments, keyword and default arguments mapped to positions by `resolve_args`),
the nondiff Tracer check (`check_for_tracers`), `SymbolicZero`, the type checks against a staged
function (`staged_output_type`, `check_primal_type`), `zero_from_primal`, and a call seen from
below a vmap (`BatchedCall`). The rules themselves: `custom_vjp.py`, `custom_jvp.py`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import core, errors
from jax_conformance.adapters.reference.ad import is_float, zeros_like_aval
from jax_conformance.adapters.reference.core import ShapedArray, Tracer, get_aval
from jax_conformance.adapters.reference.dtypes import float0
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

# The names JAX gives the reference's classes in its messages.
_JAX_CLASS = {
    "Array": "jaxlib._jax.ArrayImpl",
    "CustomVJPPrimal": "jax._src.custom_derivatives.CustomVJPPrimal",
}


def jax_class(x: Any) -> str:
    """`<class '...'>` as JAX would print the type of x."""
    name = type(x).__name__
    return f"<class '{_JAX_CLASS[name]}'>" if name in _JAX_CLASS else str(type(x))


def check_for_tracers(x: Any) -> None:
    """The rule of JAX PR #4008: a custom_vjp nondiff argument may not be or contain a Tracer."""
    if mutant("vjp-nondiff-accepts-tracers"):
        return
    for leaf in tree_leaves(x):
        if isinstance(leaf, Tracer):
            msg = (
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated "
                "by nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable arguments "
                "to custom_vjp functions; instead, nondiff_argnums should only be used for arguments that can't be "
                "or contain JAX tracers, e.g. function-valued arguments. In particular, array-valued arguments "
                "should typically not be indicated as nondiff_argnums."
            )
            if mutant("vjp-nondiff-wrong-error"):
                raise ValueError(msg)
            raise errors.UnexpectedTracerError(msg)


def nondiff_positions(
    fun: Callable[..., Any], nums: Sequence[int], names: Sequence[str]
) -> tuple[int, ...]:
    out = set(nums)
    if names:
        params = list(inspect.signature(fun).parameters)
        out |= {params.index(n) for n in names}
    return tuple(sorted(out))


def resolve_args(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], kind: str = "custom_jvp"
) -> list[Any]:
    """Keyword and default arguments, mapped to positions by the function's signature (as the rules see them).

    As JAX's api_util.resolve_kwargs: a functools.partial has an opaque signature; an argument that does not bind,
    or a keyword that cannot be given a position (keyword-only), is a TypeError naming the decorated function."""
    sig_fun = (lambda *a, **k: None) if isinstance(fun, functools.partial) else fun
    prefix = (
        f"The input arguments to the {kind}-decorated function {getattr(fun, '__name__', str(fun))} could not be "
        "resolved to positional-only arguments. Binding failed with the error:\n"
    )
    try:
        bound = inspect.signature(sig_fun).bind(*args, **kwargs)
    except ValueError:  # no signature (a builtin): positions only
        return list(args)
    except TypeError as e:
        raise TypeError(f"{prefix}{e}") from e
    if not mutant("defaults-not-applied"):
        bound.apply_defaults()
    passed = [k for k in bound.kwargs if k in kwargs]
    if passed:
        raise TypeError(
            f"{prefix}The following keyword arguments could not be resolved to positions: {', '.join(passed)}"
        )
    return list(bound.args)


class CustomFunction:
    """What custom_jvp and custom_vjp have in common: the wrapped function and its nondiff positions."""

    def __init__(
        self,
        fun: Callable[..., Any],
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ) -> None:
        functools.update_wrapper(self, fun)  # type: ignore[arg-type]  # custom_jvp and custom_vjp define __call__
        self.fun = fun
        self.nondiff_argnums = nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.symbolic_zeros = False


class CustomCall:
    """One application of a custom function: its static (nondiff) and dynamic arguments."""

    def __init__(
        self, fun: Callable[..., Any], static_nums: tuple[int, ...], args: list[Any]
    ) -> None:
        self.fun, self.static_nums, self.nargs = fun, static_nums, len(args)
        self.static = [args[i] for i in static_nums]
        dyn = tuple(a for i, a in enumerate(args) if i not in static_nums)
        self.leaves, self.in_tree = tree_flatten(dyn)
        self.in_avals: list[ShapedArray] = [get_aval(x) for x in self.leaves]
        self.out_tree: PyTreeDef | None = None

    def full_args(self, leaves: Sequence[Any]) -> list[Any]:
        """The original argument list, static arguments back in their positions."""
        dyn = iter(tree_unflatten(self.in_tree, list(leaves)))
        static = iter(self.static)
        return [next(static) if i in self.static_nums else next(dyn) for i in range(self.nargs)]

    def fun_flat(self, leaves: Sequence[Any]) -> list[Any]:
        out_leaves, self.out_tree = tree_flatten(self.fun(*self.full_args(leaves)))
        return out_leaves

    def batched(self, trace: Any) -> BatchedCall:
        return BatchedCall(self, trace)

    def closed_over_vmaps(self) -> list[core.MainTrace]:
        """The running vmaps whose values the function or one of its rules reaches by closure.

        JAX binds a custom function at the innermost transformation in whose scope it is called, so a
        vmap whose Tracer the function or a rule closes over batches the call, even where no argument
        is that vmap's (`core._bind_custom` takes the innermost of these)."""
        from jax_conformance.adapters.reference.vmap import BatchTracer

        f = getattr(self, "f", None)
        rules = [self.fun, *(getattr(f, name, None) for name in ("jvp", "fwd", "bwd"))]
        return [
            v._trace.main
            for r in rules
            if r is not None
            for v in core.closed_over(r)
            if isinstance(v, BatchTracer) and v._trace.main.alive
        ]


class SymbolicZero:
    """With symbolic_zeros=True, bwd gets this for an output cotangent that is known to be zero."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval, self.shape, self.dtype = aval, aval.shape, aval.dtype

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval})"


def strong(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape, a.dtype, False)


def tangent_aval(a: ShapedArray) -> ShapedArray:
    """The type of a tangent of a value of type a: the same shape, float0 for integers and booleans."""
    return ShapedArray(a.shape, a.dtype if is_float(a) else float0)


def staged_output_type(
    fun: Callable[..., Any], leaves: Sequence[Any]
) -> tuple[PyTreeDef, list[ShapedArray]] | None:
    """Where JAX stages the function before running its rule (under jit or scan inside a
    transformation), its output type.

    Outside staging JAX runs the rule without the function, and checks nothing against it: None.
    """
    if not core.inline_jit_depths:
        return None
    from jax_conformance.adapters.reference.jit import trace_to_ir

    ir, out_tree = trace_to_ir(fun, [get_aval(x) for x in leaves])
    return out_tree, [strong(v.aval) for v in ir.outvars]


def check_primal_type(
    what: str,
    rule_name: str,
    f_name: str,
    kind: str,
    staged: tuple[PyTreeDef, list[ShapedArray]],
    out_tree: PyTreeDef,
    out_leaves: Sequence[Any],
) -> None:
    """The rule's primal output has the function's pytree structure, shapes and dtypes (checked where
    JAX staged the function)."""
    if mutant("rule-primal-type-unchecked"):
        return
    tree_, avals_ = staged
    avals = [strong(get_aval(x)) for x in out_leaves]
    ty = str(tree_unflatten(out_tree, [a.str_short() for a in avals])).replace("'", "")
    ty_ = str(tree_unflatten(tree_, [a.str_short() for a in avals_])).replace("'", "")
    if kind == "custom_jvp":
        head = (
            f"Custom JVP rule {rule_name} for function {f_name} must produce a pair (list or tuple "
            "of length two) where the "
            "first element represents the primal output (equal in value to the output of the "
            f"custom_jvp-decorated function {f_name}, "
        )
        same_tree, same_types = (
            "and in particular of the same container/pytree structure), but ",
            "and in particular with leaves of the same shape/dtype), but ",
        )
        whose = "the JVP rule output's first element"
    else:
        head = (
            f"Custom VJP fwd rule {rule_name} for function {f_name} must produce a pair (list or "
            "tuple of length two) where the "
            "first element represents the primal output (equal to the output of the "
            f"custom_vjp-decorated function {f_name}) and the "
            "second element represents residuals (i.e. values stored from the forward pass for use "
            "on the backward pass), "
        )
        same_tree = same_types = "but "
        whose = "the fwd rule output's first element"
    if tree_ != out_tree:
        raise TypeError(
            f"{head}{same_tree}instead {whose} had container/pytree structure:\n    {ty}\n"
            f"while the {kind}-decorated function {f_name} had output container/pytree structure:\n    {ty_}."
        )
    if avals != avals_:
        raise TypeError(
            f"{head}{same_types}instead {whose} had shapes/dtypes of:\n    {ty}\n"
            f"while the {kind}-decorated function {f_name} had output shapes/dtypes of:\n    {ty_}"
        )


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """`jax.custom_derivatives.zero_from_primal`: the zero tangent of each leaf (float0 for integer leaves)."""

    def zero(x: Any) -> Any:
        aval = strong(get_aval(x))
        if symbolic_zeros:
            return SymbolicZero(ShapedArray(aval.shape, aval.dtype if is_float(aval) else float0))
        if mutant("zero-from-primal-not-float0"):
            return core.Array(np.zeros(aval.shape, aval.dtype))
        return zeros_like_aval(aval)

    return tree_map(zero, val)


# ---------------------------------------------------------------- batching a custom call


class BatchedCall:
    """A custom call seen from below a vmap: its functions take and give values with a batch axis."""

    def __init__(self, call: Any, trace: Any) -> None:
        self.call, self.trace = call, trace

    @property
    def out_tree(self) -> PyTreeDef | None:
        return self.call.out_tree

    def _wrap(self, leaves: Sequence[Any], trace: Any = None) -> list[Any]:
        from jax_conformance.adapters.reference.vmap import BatchTracer

        return [BatchTracer(trace or self.trace, x, 0) if x is not None else None for x in leaves]

    def fun_flat(self, leaves: Sequence[Any]) -> list[Any]:
        return self.trace.unwrap(self.call.fun_flat(self._wrap(leaves)))

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.call.out_avals

    def fwd_flat(
        self, leaves: Sequence[Any], perturbed: Sequence[bool] | None = None
    ) -> tuple[list[Any], Any]:
        # jax_custom_vjp3 batches the function and fwd apart: fwd may not batch an output the function does not
        fun_batched = (
            self._batched(self.call.fun_flat(self._wrap(leaves)))
            if getattr(self.call, "checks_batching", False)
            else None
        )
        outs, res = self.call.fwd_flat(self._wrap(leaves), perturbed)
        for i, (batched, fun_batched_i) in enumerate(
            zip(self._batched(outs), fun_batched or [], strict=False)
        ):
            if batched and not fun_batched_i:
                raise ValueError(
                    f"at vmap out_axes[{i}], got axis spec None but output was batched on axis 0"
                )
        return self.trace.unwrap(outs), self.trace.unwrap(res)

    def _batched(self, outs: Sequence[Any]) -> list[bool]:
        """Which values carry this vmap's batch axis."""
        return [isinstance(o, Tracer) and o._trace.main is self.trace.main for o in outs]

    def bwd_flat(self, res: Any, ct_leaves: Sequence[Any]) -> list[Any]:
        # The backward pass runs after the vmap has returned: batch it under a fresh vmap of the same size.
        from jax_conformance.adapters.reference.core import new_main
        from jax_conformance.adapters.reference.vmap import BatchTrace, BatchTracer, is_array

        with new_main(BatchTrace, self.trace.axis_size) as main:
            trace = BatchTrace(main)
            res = tree_map(lambda x: BatchTracer(trace, x, 0) if is_array(x) else x, res)
            return trace.unwrap(self.call.bwd_flat(res, self._wrap(ct_leaves, trace)))

    def jvp_flat(
        self, primals: Sequence[Any], tangents: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        outs, touts = self.call.jvp_flat(self._wrap(primals), self._wrap(tangents))
        return self.trace.unwrap(outs), self.trace.unwrap(touts)

    def batched(self, trace: Any) -> BatchedCall:
        return BatchedCall(self, trace)

    def closed_over_vmaps(self) -> list[core.MainTrace]:
        """Below the vmap that batched the call its values are the functions' own batched arguments."""
        return [m for m in self.call.closed_over_vmaps() if m is not self.trace.main]
