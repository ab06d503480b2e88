"""Autodiff: forward mode (`jvp`) and reverse mode (`vjp`, `grad`, `value_and_grad`).

Forward mode is autodidax's JVPTrace: each tracer carries a primal and a tangent (None is
a zero). Reverse mode records a tape: each LinearizeTracer carries its primal and the tape
node that made it; a node keeps its primitive's pullback (from `lax.vjp_rules`). The pullbacks
are built from primitives too, so the backward pass is itself differentiable.

Integer inputs are never traced; their cotangent is a float0 zero. Custom rules are
processed here (`process_custom_*_call`), with the rules themselves in `custom_vjp.py` / `custom_jvp.py`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import core, lax
from jax_conformance.adapters.reference.core import (
    Array,
    ShapedArray,
    Trace,
    Tracer,
    get_aval,
    new_main,
)
from jax_conformance.adapters.reference.dtypes import bfloat16, float0
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import tree_flatten, tree_map, tree_unflatten


def is_float(aval: ShapedArray) -> bool:
    """Differentiable: a floating or complex dtype (bfloat16 included, whose NumPy kind is 'V')."""
    return aval.dtype.kind in "fc" or (bfloat16 is not None and aval.dtype == bfloat16)


def _public_zero(aval: ShapedArray) -> Any:
    """A zero tangent or cotangent handed back to the user: for an integer or boolean value a NumPy
    float0 array, as JAX returns (a float one is an Array of the value's dtype)."""
    zero = zeros_like_aval(aval)
    # a float zero has the value's weak type (JAX instantiates it from the primal's aval)
    return (
        np.zeros(aval.shape, float0) if zero.dtype == float0 else Array(zero._value, aval.weak_type)
    )


def _with_weak(x: Any, aval: ShapedArray) -> Any:
    """x (a tangent or cotangent of a value with `aval`) with that value's weak type, as JAX gives it."""
    if (
        isinstance(x, (Array, Tracer))
        and get_aval(x).dtype == aval.dtype
        and get_aval(x).weak_type != aval.weak_type
    ):
        return lax.convert_weak(x, aval.dtype, aval.weak_type)
    return x


def _check_tangents(p_leaves: list[Any], t_leaves: list[Any]) -> None:
    """jax.jvp's check: each tangent has its primal's tangent dtype (float0 for integers) and shape."""
    for p, t in zip(p_leaves, t_leaves, strict=True):
        pa, ta = get_aval(p), get_aval(t)
        expected = pa.dtype if is_float(pa) else float0
        if ta.dtype != expected:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case "
                f"of int/bool primal dtype the tangent dtype must be float0.Got primal dtype {pa.dtype} and "
                f"so expected tangent dtype {expected}, but got tangent dtype {ta.dtype} instead."
            )
        if tuple(pa.shape) != tuple(ta.shape):
            raise ValueError(
                f"jvp called with different primal and tangent shapes;Got primal shape {tuple(pa.shape)} "
                f"and tangent shape as {tuple(ta.shape)}"
            )


def zeros_like_aval(aval: ShapedArray) -> Array:
    """The zero cotangent or tangent of a value: float0 for integers and booleans (never traced, so always zero)."""
    if mutant("int-cotangent-not-float0"):
        return Array(np.zeros(aval.shape, aval.dtype))
    # a float zero keeps the value's weak type, as JAX's zeros_like_aval does
    return (
        Array(np.zeros(aval.shape, aval.dtype), aval.weak_type)
        if is_float(aval)
        else Array(np.zeros(aval.shape, float0))
    )


def lower(x: Any, main: core.MainTrace) -> Any:
    """The primal of x at `main`'s level (x itself if it is not that transformation's tracer)."""
    if isinstance(x, (JVPTracer, LinearizeTracer)) and x._trace.main is main:
        return x.primal
    return x


def strip_autodiff(x: Any) -> Any:
    """x with every jvp/grad perturbation removed (stop_gradient); vmap and jit tracers stay."""
    if isinstance(x, (JVPTracer, LinearizeTracer)):
        return strip_autodiff(x.primal)
    from jax_conformance.adapters.reference.vmap import BatchTracer

    if isinstance(x, BatchTracer):
        return BatchTracer(x._trace, strip_autodiff(x.val), x.bdim)
    return x


# ---------------------------------------------------------------- forward mode


class PrimalTracer(Tracer):
    """A tracer that carries a primal value: its type and concrete value are the primal's."""

    primal: Any

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def concrete(self) -> Any:
        p = self.primal
        return p.concrete() if isinstance(p, Tracer) else p


class JVPTracer(PrimalTracer):
    def __init__(self, trace: Trace, primal: Any, tangent: Any) -> None:
        self._trace, self.primal, self.tangent = trace, primal, tangent


class JVPTrace(Trace):
    is_autodiff = True

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, None)

    def process_primitive(
        self, prim: core.Primitive, tracers: list[Any], params: dict[str, Any]
    ) -> Any:
        primals = [
            _as_value(t.primal) for t in tracers
        ]  # a Python scalar primal becomes a weak array here
        tangents = [
            _as_value(t.tangent) if t.tangent is not None and is_float(get_aval(t.primal)) else None
            for t in tracers
        ]
        out, tangent = lax.jvp_rules[prim](primals, tangents, **params)
        return JVPTracer(self, out, tangent if is_float(get_aval(out)) else None)

    def process_custom_jvp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        primals = [t.primal for t in tracers]
        tangents = [
            t.tangent for t in tracers
        ]  # None: a known zero (the rule gets a SymbolicZero or a zero array)
        outs, out_tangents = call.jvp_flat(primals, tangents)
        if (
            core.inline_jit_depths
        ):  # staged (jit, scan): the rule's Python scalars come back as arrays
            outs, out_tangents = (
                [_as_value(o) for o in outs],
                [t if t is None else _as_value(t) for t in out_tangents],
            )
        return [JVPTracer(self, o, t) for o, t in zip(outs, out_tangents, strict=True)]

    def process_custom_vjp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        primals = [t.primal for t in tracers]
        if mutant("jvp-of-custom-vjp-allowed"):
            return [JVPTracer(self, o, None) for o in call.fun_flat(primals)]
        perturbed = [t.tangent is not None and is_float(get_aval(t.primal)) for t in tracers]
        if not any(perturbed):  # every tangent a known zero: JAX calls the function below this jvp
            return core.bind_custom_vjp(call, primals)
        f = getattr(call, "f", None)
        if type(f).__name__ == "custom_vjp3" and f.symbolic_zeros:  # type: ignore[union-attr]
            raise NotImplementedError  # JAX 0.10.2 under jax_custom_vjp3, before fwd runs (no message; observed)
        # JAX runs fwd (its errors come first: with symbolic_zeros its arguments are CustomVJPPrimal objects),
        # and only then finds it cannot push tangents through bwd
        call.fwd_flat(primals, perturbed)
        raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    """`jax.jvp`: (fun(*primals), its directional derivative along tangents)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; "
            f"found {type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; primals "
            f"have tree structure {p_tree} whereas tangents have tree structure {t_tree}."
        )
    if not mutant("jvp-tangents-unchecked"):
        _check_tangents(p_leaves, t_leaves)
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        ins = [JVPTracer(trace, *_jvp_input(p, t)) for p, t in zip(p_leaves, t_leaves, strict=True)]
        out = fun(*tree_unflatten(p_tree, ins))
        out, aux = out if has_aux else (out, None)
        o_leaves, o_tree = tree_flatten(out)
        pairs = [
            (core.full_raise(trace, o).primal, core.full_raise(trace, o).tangent) for o in o_leaves
        ]
    primal_out = tree_unflatten(o_tree, [p for p, _ in pairs])
    tangent_out = tree_unflatten(
        o_tree, [t if t is not None else _public_zero(get_aval(p)) for p, t in pairs]
    )
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _jvp_input(p: Any, t: Any) -> tuple[Any, Any]:
    """A jvp input's (primal, tangent). As in JAX a Python scalar primal (with a Python scalar tangent)
    stays one: an output that merely passes it on, or that a custom_jvp rule computes from it with
    Python arithmetic, is a Python scalar too. Primitives see it as a weak array (process_primitive)."""
    if _is_python_scalar(p):
        return p, t if _is_python_scalar(t) else _with_weak(_as_value(t), get_aval(p))
    return _as_value(p), _with_weak(_as_value(t), get_aval(p))


def _as_value(x: Any) -> Any:
    if isinstance(x, (Array, Tracer)):
        return x
    aval = get_aval(x)
    return Array(np.asarray(x, aval.dtype), aval.weak_type)


# ---------------------------------------------------------------- reverse mode (a tape)

_ids = itertools.count()


@dataclass(eq=False)
class Node:
    """One recorded operation: its inputs' tracers and the pullback from output to input cotangents."""

    parents: list[LinearizeTracer | None]
    pullback: Callable[[list[Any]], Sequence[Any]]
    outputs: list[int] = field(default_factory=list)


class LinearizeTracer(PrimalTracer):
    def __init__(
        self, trace: Trace, primal: Any, node: Node | None, perturbed: bool = True
    ) -> None:
        self._trace, self.primal, self.node, self.id = trace, primal, node, next(_ids)
        self.perturbed = perturbed  # False for constants lifted into the transformation


class LinearTape(list[Any]):
    """The tape of a custom_jvp rule's tangent map being transposed: only linear operations may touch tangents."""


# The operands in which each primitive is linear ("one": any one of them, the others constant).
LINEAR_IN: dict[str, Any] = {
    "add": (0, 1),
    "sub": (0, 1),
    "neg": (0,),
    "mul": "one",
    "div": (0,),
    "select": (1, 2),
    "convert_element_type": (0,),
    "broadcast_to": (0,),
    "reshape": (0,),
    "transpose": (0,),
    "reduce_sum": (0,),
    "getitem": (0,),
    "scatter_add": (0, 1),
    "dynamic_index": (0,),
    "index_update": (0, 2),
}


class LinearizeTrace(Trace):
    is_autodiff = True

    @property
    def tape(self) -> list[Node]:
        return self.main.global_data

    def pure(self, val: Any) -> Any:
        return LinearizeTracer(self, val, None, perturbed=False)

    def record(
        self, parents: list[Any], outs: list[Any], pullback: Callable[[list[Any]], Sequence[Any]]
    ) -> list[Any]:
        """Tracers for the outputs, and a tape node when a float input and a float output connect them."""
        live = [
            p
            if isinstance(p, LinearizeTracer)
            and p._trace.main is self.main
            and p.perturbed
            and is_float(p.aval)
            else None
            for p in parents
        ]
        if all(p is None for p in live) or not any(is_float(get_aval(o)) for o in outs):
            return list(outs)  # nothing to differentiate: leave this transformation
        node = Node(live, pullback)
        tracers = [LinearizeTracer(self, o, node) for o in outs]
        node.outputs = [t.id for t in tracers]
        self.tape.append(node)
        return tracers

    def process_primitive(
        self, prim: core.Primitive, tracers: list[Any], params: dict[str, Any]
    ) -> Any:
        if isinstance(self.tape, LinearTape):
            self.check_linear(prim, tracers)
        out, pullback = lax.vjp_rules[prim](*[t.primal for t in tracers], **params)
        avals = [get_aval(t.primal) for t in tracers]

        def transpose(cts: list[Any]) -> list[Any]:
            # a primitive's cotangents have its operands' avals, weak type included (jnp.sum(x) of a weak x
            # gives x a weak cotangent); custom_vjp's bwd outputs are left as bwd made them
            return [
                None if c is None else _with_weak(c, a)
                for c, a in zip(pullback(cts[0]), avals, strict=True)
            ]

        return self.record(tracers, [out], transpose)[0]

    def check_linear(self, prim: core.Primitive, tracers: list[Any]) -> None:
        """Transposing a custom_jvp rule: every operation on tangents must be linear in them."""
        live = [
            isinstance(t, LinearizeTracer)
            and t._trace.main is self.main
            and t.perturbed
            and is_float(t.aval)
            for t in tracers
        ]
        if not any(live) or mutant("nonlinear-jvp-rule-transposed"):
            return
        positions = LINEAR_IN.get(prim.name)
        linear = (
            sum(live) == 1
            if positions == "one"
            else positions is not None and all(i in positions for i, v in enumerate(live) if v)
        )
        if not linear:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{prim.name}' not implemented"
            )

    def process_custom_vjp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        perturbed = [
            isinstance(t, LinearizeTracer) and t.perturbed and is_float(t.aval) for t in tracers
        ]
        staged = core.staged_values(
            self.main.level
        )  # the arguments of a jit inside this grad that staged the call
        f = getattr(call, "f", None)
        rules = [getattr(f, name, None) for name in ("fun", "fwd", "bwd")]
        if (
            staged
            and any(core.closes_over(r, staged) for r in rules if r is not None)
            and not mutant("closure-over-jit-arg-under-grad-allowed")
        ):
            # JAX 0.10.2: a custom_vjp staged by jit under grad, closing over one of that jit's (non-autodiff) Tracers
            raise TypeError(
                "No constant handler for type: <class 'DynamicJaxprTracer'> (a jit Tracer a custom_vjp function "
                "or rule closes over, used after the jit was traced)"
            )
        outs, res = call.fwd_flat([t.primal for t in tracers], perturbed)
        return self.record(tracers, outs, lambda cts: call.bwd_flat(res, cts))

    def process_custom_jvp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        # Reverse mode from a forward rule: the rule's tangent map is linear, so its VJP is its transpose.
        primals = [t.primal for t in tracers]
        # Inputs this grad does not perturb have a known-zero tangent (None; a SymbolicZero for a symbolic_zeros rule).
        diff = [
            i
            for i, t in enumerate(tracers)
            if isinstance(t, LinearizeTracer) and t.perturbed and is_float(t.aval)
        ]
        zero_tangents: list[Any] = [None] * len(primals)
        holder: dict[str, Any] = {}

        def tangent_map(*tangents: Any) -> Any:
            outs, out_tangents = call.jvp_flat(primals, list(tangents))
            holder["outs"] = [strip_autodiff(o) for o in outs]
            return [
                t if t is not None else zeros_like_aval(get_aval(o))
                for t, o in zip(out_tangents, outs, strict=True)
                if is_float(get_aval(o))
            ]

        _, pullback = vjp(
            lambda *ts: tangent_map(*_fill(zero_tangents, diff, ts)),
            *[zeros_like_aval(tracers[i].aval) for i in diff],
            _tape=LinearTape,
        )
        outs = holder["outs"]
        float_outs = [i for i, o in enumerate(outs) if is_float(get_aval(o))]

        def cotangents(cts: list[Any]) -> list[Any]:
            got = pullback(
                [
                    cts[i] if cts[i] is not None else zeros_like_aval(get_aval(outs[i]))
                    for i in float_outs
                ]
            )
            full: list[Any] = [None] * len(primals)
            for i, ct in zip(diff, got, strict=True):
                full[i] = ct
            return full

        return self.record(tracers, outs, cotangents)


def _fill(base: list[Any], positions: list[int], values: Sequence[Any]) -> list[Any]:
    out = list(base)
    for i, v in zip(positions, values, strict=True):
        out[i] = v
    return out


def backward_pass(tape: list[Node], cts: dict[int, Any]) -> dict[int, Any]:
    """Run the tape backwards from output cotangents (by tracer id) to every tracer's cotangent."""
    for node in reversed(tape):
        outs = [cts.pop(i, None) for i in node.outputs]
        if all(c is None for c in outs):
            continue
        in_cts = node.pullback(outs)
        for parent, ct in zip(node.parents, in_cts, strict=True):
            if parent is not None and ct is not None:
                cts[parent.id] = ct if parent.id not in cts else lax.add(cts[parent.id], ct)
    return cts


def vjp(
    fun: Callable[..., Any], *primals: Any, has_aux: bool = False, _tape: type[list[Any]] = list
) -> Any:
    """`jax.vjp`: (fun(*primals), a function from output cotangents to input cotangents)."""
    p_leaves, p_tree = tree_flatten(primals)
    avals = [get_aval(p) for p in p_leaves]
    with new_main(LinearizeTrace, _tape()) as main:
        trace = LinearizeTrace(main)
        ins = [
            LinearizeTracer(trace, _as_value(p), None) if is_float(a) else p
            for p, a in zip(p_leaves, avals, strict=True)
        ]
        out = fun(*tree_unflatten(p_tree, ins))
        out, aux = out if has_aux else (out, None)
        o_leaves, o_tree = tree_flatten(out)
        o_ids = [
            o.id if isinstance(o, LinearizeTracer) and o._trace.main is main else None
            for o in o_leaves
        ]
        primal_out = [lower(o, main) for o in o_leaves]
    tape = main.global_data

    def vjp_fun(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != o_tree:
            raise ValueError(
                f"unexpected tree structure of argument to vjp function: got {ct_tree}, but expected to match {o_tree}"
            )
        cts = backward_pass(
            tape, {i: _as_value(c) for i, c in zip(o_ids, ct_leaves, strict=True) if i is not None}
        )
        got = [cts.get(t.id) if isinstance(t, LinearizeTracer) else None for t in ins]
        return tree_unflatten(
            p_tree,
            [c if c is not None else _public_zero(a) for c, a in zip(got, avals, strict=True)],
        )

    result = tree_unflatten(o_tree, primal_out)
    return (result, vjp_fun, aux) if has_aux else (result, vjp_fun)


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """`jax.value_and_grad`: (fun(*args), d fun / d args[argnums]) for a real scalar output."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        for i in nums:
            for leaf in tree_flatten(args[i])[0]:
                dtype = get_aval(leaf).dtype
                if not is_float(get_aval(leaf)) and not allow_int:
                    raise TypeError(
                        "grad requires real- or complex-valued inputs (input dtype that is a "
                        f"sub-dtype of np.inexact), but got {dtype.name}. "
                        "If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int to True."
                    )

        def f_of_diff(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(nums, diff, strict=True):
                full[i] = d
            return fun(*full, **kwargs)

        out = vjp(f_of_diff, *[args[i] for i in nums], has_aux=has_aux)
        value, pullback = out[0], out[1]
        aval = None if isinstance(value, (tuple, list, dict)) else get_aval(value)
        if aval is None or aval.shape != ():
            shape = aval.shape if aval is not None else type(value).__name__
            raise TypeError(
                f"Gradient only defined for scalar-output functions. Output had shape: {shape}."
            )
        if not is_float(aval) or aval.dtype.kind == "c":
            raise TypeError(
                "grad requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {aval.dtype.name}. "
                "For holomorphic differentiation, pass holomorphic=True. For differentiation of "
                "non-holomorphic functions "
                "involving complex outputs, use jax.vjp directly."
            )
        grads = pullback(
            Array(np.ones((), aval.dtype), aval.weak_type)
        )  # seeded with the output's weak type
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((value, out[2]), g) if has_aux else (value, g)

    return wrapped


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """`jax.grad`: the gradient of a real scalar function with respect to args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux, allow_int)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapped


def jacfwd(fun: Callable[..., Any], argnums: int = 0) -> Callable[..., Any]:
    """`jax.jacfwd` (one argnum): jvp along each basis direction of the argument, batched with vmap."""
    from jax_conformance.adapters.reference import numpy_api
    from jax_conformance.adapters.reference.vmap import vmap

    def wrapped(*args: Any) -> Any:
        x = numpy_api.asarray(args[argnums])
        shape = get_aval(x).shape
        n = int(np.prod(shape, dtype=np.int64))

        def push(t: Any) -> Any:
            full = list(args)
            full[argnums] = x
            return jvp(
                lambda v: fun(*full[:argnums], v, *full[argnums + 1 :]),
                (x,),
                (numpy_api.reshape(t, shape),),
            )[1]

        basis = Array(np.eye(n, dtype=get_aval(x).dtype))
        cols = vmap(push)(basis)  # (n, *out_shape)
        return tree_map(
            lambda c: numpy_api.reshape(
                numpy_api.moveaxis(c, 0, -1) if get_aval(c).ndim > 1 else c,
                (*get_aval(c).shape[1:], *shape),
            ),
            cols,
        )

    return wrapped
