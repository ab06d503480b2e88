"""Breakage adapters for the custom_jvp rule-output specs (and the custom_vjp fwd/primal ones).

Like `tests/breakage/custom_vjp.py` (whose `BrokenJax` base they share): real JAX 0.10.2 with
one documented or tested rule broken by a monkeypatch in the worker, so that the cases that check
the rule must fail. `tests/test_breakage.py` runs every class here too.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from tests.breakage.custom_vjp import BrokenJax, _call_patch


def _wrap_defjvp(cd: Any, rewrite: Callable[[Any, Callable[..., Any]], Callable[..., Any]]) -> None:
    """Replace custom_jvp.defjvp so that every rule goes through `rewrite(custom_jvp, rule)` first."""
    original = cd.custom_jvp.defjvp

    def defjvp(self: Any, jvp: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("symbolic_zeros") or (args and args[0]):
            return original(self, jvp, *args, **kwargs)  # leave the symbolic-zeros protocol alone
        original(self, rewrite(self, jvp), *args, **kwargs)
        return jvp

    cd.custom_jvp.defjvp = defjvp


def _rule_output_patch(cd: Any, change: Callable[[Any, tuple[Any, ...], Any], Any]) -> None:
    """The rule's output goes through `change(custom_jvp, primals, output)` (nondiff arguments are passed on)."""

    def rewrite(cj: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(rule)  # JAX's messages name the rule: keep its name
        def rule2(*args: Any) -> Any:
            return change(cj, args[-2], rule(*args))

        return rule2

    _wrap_defjvp(cd, rewrite)


# ---------------------------------------------------------------- item 1: what the rule returns


class JvpPairUnchecked(BrokenJax):
    claim = "1: a custom_jvp rule must return a (primal, tangent) pair (anything else is coerced silently instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def change(cj: Any, primals: Any, out: Any) -> Any:
            if isinstance(out, (tuple, list)) and len(out) == 2:
                return out
            tangent = out[1] if isinstance(out, (tuple, list)) and len(out) > 1 else out
            return cj.fun(*primals), tangent

        _rule_output_patch(cd, change)


class JvpTangentStructureUnchecked(BrokenJax):
    claim = "1: primal and tangent outputs have one pytree structure (the tangent is refitted silently instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def change(cj: Any, primals: Any, out: Any) -> Any:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                return out
            p, t = out
            p_tree, t_leaves = jax.tree.structure(p), jax.tree.leaves(t)
            if jax.tree.structure(t) == p_tree or len(t_leaves) < p_tree.num_leaves:
                return out
            return p, jax.tree.unflatten(p_tree, t_leaves[: p_tree.num_leaves])

        _rule_output_patch(cd, change)


class JvpTangentTypeUnchecked(BrokenJax):
    claim = (
        "1/2: each tangent output has its primal's shape and tangent dtype (float0 for "
        "integers; coerced silently instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def fit(p: Any, t: Any) -> Any:
            p_dtype, p_shape = jnp.result_type(p), jnp.shape(p)
            if not jnp.issubdtype(p_dtype, jnp.inexact):
                return jax.custom_derivatives.zero_from_primal(p)
            t = jnp.asarray(t)
            if t.shape != p_shape and t.size == int(jnp.size(jnp.zeros(p_shape))):
                t = jnp.reshape(t, p_shape)
            return t.astype(p_dtype)

        def change(cj: Any, primals: Any, out: Any) -> Any:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                return out
            p, t = out
            if jax.tree.structure(p) != jax.tree.structure(t):
                return out
            return p, jax.tree.map(fit, p, t)

        _rule_output_patch(cd, change)


class RulePrimalNotCheckedAgainstFunction(BrokenJax):
    claim = (
        "1/6: the primal output of a custom_jvp rule or custom_vjp fwd is the function's (the "
        "function's output is substituted silently instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def change(cj: Any, primals: Any, out: Any) -> Any:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                return out
            want = cj.fun(*primals)
            p, t = out
            if jax.tree.structure(want) != jax.tree.structure(p):
                leaves = jax.tree.leaves(t)
                t = jax.tree.unflatten(
                    jax.tree.structure(want), leaves[: jax.tree.structure(want).num_leaves]
                )
            return want, t

        _rule_output_patch(cd, change)

        original = cd.custom_vjp.defvjp

        def defvjp(
            self: Any, fwd: Callable[..., Any], bwd: Callable[..., Any], *args: Any, **kwargs: Any
        ) -> Any:
            if kwargs.get("symbolic_zeros") or (args and args[0]):
                return original(self, fwd, bwd, *args, **kwargs)
            cv = self

            @functools.wraps(fwd)
            def fwd2(*a: Any) -> Any:
                out = fwd(*a)
                if isinstance(out, (tuple, list)) and len(out) == 2:
                    return cv.fun(*a), out[1]
                return out

            return original(self, fwd2, bwd, *args, **kwargs)

        cd.custom_vjp.defvjp = defvjp


class JvpRuleRunsOnPrimalCall(BrokenJax):
    claim = (
        "1: a custom_jvp's rule runs only under differentiation (the plain call goes through "
        "jvp of the rule instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        state = threading.local()

        def through_rule(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            if (
                getattr(state, "busy", False)
                or self.jvp is None
                or self.nondiff_argnums
                or kwargs
                or self.symbolic_zeros
            ):
                return original(self, *args, **kwargs)
            state.busy = True  # the rule usually calls the function itself
            try:
                zeros = tuple(jax.tree.map(jax.numpy.zeros_like, a) for a in args)
                return jax.jvp(lambda *a: original(self, *a), args, zeros)[0]
            finally:
                state.busy = False

        _call_patch(cd.custom_jvp, through_rule)


# ---------------------------------------------------------------- item 3: no rule


class MissingJvpRuleRunsFunction(BrokenJax):
    claim = (
        "3: a custom_jvp without defjvp raises AttributeError (it runs as a plain function instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def lenient(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            if self.jvp is None:
                return self.fun(*args, **kwargs)
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_jvp, lenient)


# ---------------------------------------------------------------- item 2: integer inputs and outputs


class ZeroFromPrimalKeepsDtype(BrokenJax):
    claim = "2: zero_from_primal of an integer value is a float0 zero (a zero of the integer dtype instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
            return jax.tree.map(jnp.zeros_like, val)

        jax.custom_derivatives.zero_from_primal = zero_from_primal
        cd.zero_from_primal = zero_from_primal


# ---------------------------------------------------------------- item 6: jvp of a custom_vjp


class JvpOfCustomVjpGivesZeros(BrokenJax):
    claim = "6: jvp of a custom_vjp function raises TypeError (a zero tangent comes back instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy
        original = jax.jvp

        def jvp(
            fun: Callable[..., Any], primals: Any, tangents: Any, *args: Any, **kwargs: Any
        ) -> Any:
            try:
                return original(fun, primals, tangents, *args, **kwargs)
            except TypeError as e:
                if "forward-mode autodiff" not in str(e):
                    raise
                out = fun(*primals)
                return out, jax.tree.map(jnp.zeros_like, out)

        jax.jvp = jvp


# ---------------------------------------------------------------- item 10: gradient dtypes


class GradDtypeHalved(BrokenJax):
    claim = "10: a gradient or jvp tangent has its input's dtype (float16 comes back instead, the value rounded to it)"

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def half(x: Any) -> Any:
            if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating):
                return jnp.asarray(x).astype(jnp.float16)
            return x

        original_grad, original_vg = jax.grad, jax.value_and_grad

        def grad(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
            g = original_grad(fun, *args, **kwargs)

            @functools.wraps(g)
            def wrapped(*a: Any, **kw: Any) -> Any:
                out = g(*a, **kw)
                if kwargs.get("has_aux"):
                    return jax.tree.map(half, out[0]), out[1]
                return jax.tree.map(half, out)

            return wrapped

        def value_and_grad(
            fun: Callable[..., Any], *args: Any, **kwargs: Any
        ) -> Callable[..., Any]:
            vg = original_vg(fun, *args, **kwargs)

            @functools.wraps(vg)
            def wrapped(*a: Any, **kw: Any) -> Any:
                value, g = vg(*a, **kw)
                return value, jax.tree.map(half, g)

            return wrapped

        original_jvp = jax.jvp

        def jvp(
            fun: Callable[..., Any], primals: Any, tangents: Any, *args: Any, **kwargs: Any
        ) -> Any:
            out = original_jvp(fun, primals, tangents, *args, **kwargs)
            return (out[0], jax.tree.map(half, out[1]), *out[2:])

        jax.grad, jax.value_and_grad, jax.jvp = grad, value_and_grad, jvp


# ---------------------------------------------------------------- item 9: the notebook's basic API


class DefaultsNotPassedToRules(BrokenJax):
    claim = "9: default arguments are mapped by signature and reach the rules (left out instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        import inspect

        def resolve_kwargs(fun: Callable[..., Any], args: Any, kwargs: Any) -> tuple[Any, ...]:
            if isinstance(fun, functools.partial):
                return tuple(args)
            ba = inspect.signature(fun).bind(*args, **kwargs)  # no apply_defaults()
            return tuple(ba.args)

        cd.resolve_kwargs = resolve_kwargs


class DefjvpsRulesReversed(BrokenJax):
    claim = "9: defjvps pairs each rule with its own argument, None a zero (the rules are matched in reverse instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd.custom_jvp.defjvps

        def defjvps(self: Any, *jvps: Any) -> Any:
            return original(self, *reversed(jvps))

        cd.custom_jvp.defjvps = defjvps


class DefjvpsWithNondiffAccepted(BrokenJax):
    claim = "9: defjvps cannot be used with nondiff_argnums (accepted silently instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd.custom_jvp.defjvps

        def defjvps(self: Any, *jvps: Any) -> Any:
            if self.nondiff_argnums:
                return None
            return original(self, *jvps)

        cd.custom_jvp.defjvps = defjvps


# ---------------------------------------------------------------- item 5: symbolic zeros


class JvpSymbolicZerosIgnored(BrokenJax):
    claim = "5: defjvp(symbolic_zeros=True) passes SymbolicZero tangents (the option is ignored: zero arrays instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd.custom_jvp.defjvp

        def defjvp(self: Any, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Any:
            return original(self, jvp)

        cd.custom_jvp.defjvp = defjvp


class SymbolicZeroFromPrimalIsOne(BrokenJax):
    claim = (
        "5: zero_from_primal(x, symbolic_zeros=True) is a zero tangent (a tangent of ones instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy
        original = jax.custom_derivatives.zero_from_primal

        def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
            if symbolic_zeros:
                return jax.tree.map(jnp.ones_like, val)
            return original(val)

        jax.custom_derivatives.zero_from_primal = zero_from_primal
        cd.zero_from_primal = zero_from_primal


# ---------------------------------------------------------------- issue 24: argument resolution,
# compile-time evaluation


class ResolveKwargsLenient(BrokenJax):
    claim = (
        "B88/B106: arguments that do not bind to the signature are a TypeError naming the "
        "decorated function (a missing one becomes None and a keyword-only one is dropped instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        import inspect

        def resolve_kwargs(
            fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> tuple[Any, ...]:
            params = [
                p
                for p in inspect.signature(fun).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            out = list(args)
            for p in params[len(args) :]:
                out.append(kwargs.get(p.name, None if p.default is p.empty else p.default))
            return tuple(out)

        cd.resolve_kwargs = resolve_kwargs


class CompileTimeEvalIgnored(BrokenJax):
    claim = (
        "B91: under jax.ensure_compile_time_eval inside jit a custom_jvp sees concrete values "
        "(the block changes nothing instead: Tracers)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        import contextlib

        jax.ensure_compile_time_eval = contextlib.nullcontext


ALL: tuple[type[BrokenJax], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, BrokenJax) and cls is not BrokenJax
)


# ---------------------------------------------------------------- issue 24, part 4: the gradient family


class PullbackCotangentsWeak(BrokenJax):
    claim = (
        "10 (i24.4): a pullback's cotangent has its primal's dtype and weak type (a strong "
        "input gives a strong cotangent)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        from jax._src.lax import lax as lax_internal

        original_vjp = jax.vjp

        def weak(x: Any) -> Any:
            return (
                lax_internal._convert_element_type(x, x.dtype, weak_type=True)
                if hasattr(x, "dtype")
                else x
            )

        @functools.wraps(original_vjp)
        def vjp(fun: Callable[..., Any], *primals: Any, **kwargs: Any) -> Any:
            out = original_vjp(fun, *primals, **kwargs)
            pullback = out[1]

            def weak_pullback(*cts: Any) -> Any:
                return jax.tree.map(weak, pullback(*cts))

            return (out[0], weak_pullback, *out[2:])

        jax.vjp = vjp


class GradNotUnbroadcast(BrokenJax):
    claim = (
        "i37 (jax#3056): grad with respect to a scalar input that a custom_jvp broadcasts to a "
        "larger output has the input's shape (the cotangent comes back spread over the output's "
        "shape instead, one share per element, not summed)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy
        widened: list[tuple[int, ...]] = []  # output shapes of custom_jvp calls on a scalar input

        def record(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            out = original(self, *args, **kwargs)
            ins = [jnp.shape(a) for a in jax.tree.leaves(args)]
            outs = [jnp.shape(o) for o in jax.tree.leaves(out)]
            if ins == [()] and len(outs) == 1 and outs[0] != ():
                widened.append(outs[0])
            return out

        _call_patch(cd.custom_jvp, record)
        original_grad = jax.grad

        def grad(fun: Callable[..., Any], *gargs: Any, **gkwargs: Any) -> Callable[..., Any]:
            g = original_grad(fun, *gargs, **gkwargs)

            @functools.wraps(g)
            def spread(*args: Any, **kwargs: Any) -> Any:
                widened.clear()
                out = g(*args, **kwargs)
                if not widened or jnp.shape(out) != ():
                    return out
                shape = widened[-1]
                return jnp.broadcast_to(out / jnp.size(jnp.zeros(shape)), shape)

            return spread

        jax.grad = grad


class RuleTangentsBroadcastUnderVmap(BrokenJax):
    claim = (
        "jax#5849: under vmap a custom_jvp rule sees the tangent of an unbatched argument as it is "
        "(it is broadcast over the batch and handed to the rule as a plain array instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        from jax._src import linear_util as lu
        from jax._src.interpreters import batching

        jnp, float0 = jax.numpy, jax.dtypes.float0

        @lu.transformation2
        def broadcast_tangents(f: Any, size: int, dims: tuple[Any, ...], *args: Any) -> Any:
            primals, tangents = args[: len(dims)], args[len(dims) :]
            return f(*primals, *(_spread(t, d, size) for t, d in zip(tangents, dims, strict=True)))

        def _spread(t: Any, dim: Any, size: int) -> Any:
            if dim is not None or getattr(t, "dtype", float0) == float0:
                return t
            return jnp.broadcast_to(t, (size, *jnp.shape(t)))

        original = batching.batch_custom_jvp_subtrace

        def subtrace(jvp: Any, tag: Any, axis_data: Any, in_dims: Any) -> Any:
            dims = tuple(in_dims)
            return original(broadcast_tangents(jvp, axis_data.size, dims), tag, axis_data, in_dims)

        batching.batch_custom_jvp_subtrace = subtrace
