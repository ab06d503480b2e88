"""Breakage adapters for the custom_vjp / custom_jvp specs: real JAX with one documented rule broken.

Each class is the real `jax` adapter whose worker monkeypatches JAX (0.10.2) after importing
it, so that one rule from the custom-derivative docs no longer holds. Run the suite with
`--adapter=tests.breakage.custom_vjp:ClassName`; the cases that check that rule must fail.
`tests/test_breakage.py` does this for every class here (tests/breakage/custom_rules_area.py).

The patches only touch the worker process they run in. They rely on private names of
`jax._src.custom_derivatives`; when JAX renames them, `patch` raises and the adapter fails to
start, which the test reports (a break that silently did nothing would prove nothing).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from jax_conformance.adapters.jax import JaxAdapter


class BrokenJax(JaxAdapter):
    """Real JAX with one rule broken; subclasses say which rule (`claim`) and how (`patch`)."""

    claim: ClassVar[str] = ""

    def __init__(self) -> None:
        super().__init__()
        self._patched = False

    def namespace(self) -> dict[str, Any]:
        ns = super().namespace()
        if not self._patched:
            self._patched = True  # before patching: patch code may call namespace() again
            from jax._src import custom_derivatives as cd

            self.patch(ns["jax"], cd)
            self.notes.append(f"breakage {type(self).__name__}: {self.claim}")
        return ns

    def patch(self, jax: Any, cd: Any) -> None:
        """Monkeypatch JAX in this worker."""
        raise NotImplementedError


# ---------------------------------------------------------------- helpers


def _diff_count(cv: Any, nargs: int) -> int:
    return nargs - len(cv.nondiff_argnums)


def _wrap_defvjp(
    cd: Any,
    rewrite: Callable[
        [Any, Callable[..., Any], Callable[..., Any]], tuple[Callable[..., Any], Callable[..., Any]]
    ],
) -> None:
    """Replace custom_vjp.defvjp so that every (fwd, bwd) pair goes through `rewrite` first."""
    original = cd.custom_vjp.defvjp

    def defvjp(
        self: Any, fwd: Callable[..., Any], bwd: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> Any:
        if kwargs.get("symbolic_zeros") or (args and args[0]):
            return original(
                self, fwd, bwd, *args, **kwargs
            )  # leave the symbolic-zeros protocol alone
        fwd2, bwd2 = rewrite(self, fwd, bwd)
        return original(self, fwd2, bwd2, *args, **kwargs)

    cd.custom_vjp.defvjp = defvjp


def _wrap_bwd_output(cd: Any, change: Callable[[Any, list[Any]], Any]) -> None:
    """bwd's output is passed through `change(output, diff_args_seen_by_fwd)`."""

    def rewrite(
        cv: Any, fwd: Callable[..., Any], bwd: Callable[..., Any]
    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
        # the differentiable primal arguments of the latest fwd call (shapes are static)
        seen: list[Any] = []

        @functools.wraps(fwd)  # JAX's messages name the rule: keep its name
        def fwd2(*args: Any) -> Any:
            seen[:] = [a for i, a in enumerate(args) if i not in cv.nondiff_argnums]
            return fwd(*args)

        @functools.wraps(bwd)
        def bwd2(*args: Any) -> Any:
            return change(bwd(*args), list(seen))

        return fwd2, bwd2

    _wrap_defvjp(cd, rewrite)


def _closes_over_tracer(jax: Any, fn: Any, depth: int = 2) -> bool:
    """Whether fn (or a function it closes over, `depth` levels down) closes over a JAX Tracer."""
    from jax._src.core import Tracer

    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        for leaf in jax.tree.leaves(value):
            if isinstance(leaf, Tracer):
                return True
            if depth and callable(leaf) and _closes_over_tracer(jax, leaf, depth - 1):
                return True
    return False


def _closes_over_tracers(jax: Any, cf: Any, args: tuple[Any, ...]) -> bool:
    """Whether a custom_vjp/custom_jvp object, its rules or its function arguments close over a Tracer."""
    rules = (getattr(cf, name, None) for name in ("fun", "fwd", "bwd", "jvp"))
    return any(_closes_over_tracer(jax, f) for f in (*rules, *args) if callable(f))


def _call_patch(
    cls: Any, before: Callable[[Any, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]
) -> None:
    """Replace cls.__call__ by `before(self, original_call, args, kwargs)`."""
    original = cls.__call__

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        return before(self, original, args, kwargs)

    cls.__call__ = __call__


# ---------------------------------------------------------------- claim 1: Tracers in custom_vjp nondiff_argnums


class AcceptTracersInNondiff(BrokenJax):
    claim = "1: Tracers in custom_vjp nondiff_argnums raise UnexpectedTracerError (the check is removed)"

    def patch(self, jax: Any, cd: Any) -> None:
        cd._check_for_tracers = lambda x: None


class NondiffOnlyCallables(BrokenJax):
    claim = (
        "1: concrete arrays in nondiff_argnums still work (every non-callable is rejected instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def check(x: Any) -> None:
            if any(not callable(leaf) for leaf in jax.tree.leaves(x)):
                raise TypeError("nondiff_argnums accepts only callables")

        cd._check_for_tracers = check


# ---------------------------------------------------------------- claims 2, 3, 7, 10: the custom rule is used


class GradIgnoresCustomRule(BrokenJax):
    claim = (
        "2/3/6/7/10: differentiation uses the custom rule (plain autodiff of the function instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def plain(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            return self.fun(*args, **kwargs)

        _call_patch(cd.custom_vjp, plain)
        _call_patch(cd.custom_jvp, plain)


# ---------------------------------------------------------------- claim 2: None cotangents


class NoneCotangentAsOne(BrokenJax):
    claim = "2: a None cotangent from bwd means zero (it becomes ones instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def change(out: Any, seen: list[Any]) -> Any:
            if isinstance(out, (tuple, list)) and len(out) == len(seen):
                return tuple(
                    jax.tree.map(jnp.ones_like, a) if o is None else o
                    for o, a in zip(out, seen, strict=True)
                )
            return out

        _wrap_bwd_output(cd, change)


class RejectNoneCotangents(BrokenJax):
    claim = "2/9: bwd may return None for an argument (None is rejected instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def change(out: Any, seen: list[Any]) -> Any:
            if isinstance(out, (tuple, list)) and any(o is None for o in out):
                raise TypeError("custom_vjp bwd returned None for an argument")
            return out

        _wrap_bwd_output(cd, change)


# ---------------------------------------------------------------- claim 3: function-valued nondiff arguments


class StaticArgsLastInBwd(BrokenJax):
    claim = "3: bwd receives the nondiff arguments first (they come last instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def rewrite(
            cv: Any, fwd: Callable[..., Any], bwd: Callable[..., Any]
        ) -> tuple[Callable[..., Any], Callable[..., Any]]:
            n = len(cv.nondiff_argnums)
            return fwd, (lambda *a: bwd(*a[n:], *a[:n])) if n else bwd

        _wrap_defvjp(cd, rewrite)


class StaticArgsNotPassedToBwd(BrokenJax):
    claim = "3: bwd receives the nondiff arguments (they are dropped instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def rewrite(
            cv: Any, fwd: Callable[..., Any], bwd: Callable[..., Any]
        ) -> tuple[Callable[..., Any], Callable[..., Any]]:
            n = len(cv.nondiff_argnums)
            return fwd, (lambda *a: bwd(*a[n:])) if n else bwd

        _wrap_defvjp(cd, rewrite)


class RejectFunctionNondiff(BrokenJax):
    claim = "3/10: functions are allowed in custom_vjp nondiff_argnums (they are rejected instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd._check_for_tracers

        def check(x: Any) -> None:
            original(x)
            if any(callable(leaf) for leaf in jax.tree.leaves(x)):
                raise TypeError("function-valued nondiff_argnums are not supported")

        cd._check_for_tracers = check


class JitTreatsCallablesAsStatic(BrokenJax):
    claim = "3: under jit a function argument must be marked static (jit makes callables static by itself instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = jax.jit

        def jit(fun: Callable[..., Any], **kwargs: Any) -> Callable[..., Any]:
            if (
                kwargs.get("static_argnums") is not None
                or kwargs.get("static_argnames") is not None
            ):
                return original(fun, **kwargs)

            def call(*args: Any, **kw: Any) -> Any:
                static = tuple(i for i, a in enumerate(args) if callable(a))
                return original(fun, static_argnums=static, **kwargs)(*args, **kw)

            return call

        jax.jit = jit


# ---------------------------------------------------------------- claim 4: fwd returns a pair


class NoFwdPairCheck(BrokenJax):
    claim = "4: fwd must return a pair (anything else is coerced silently instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def rewrite(
            cv: Any, fwd: Callable[..., Any], bwd: Callable[..., Any]
        ) -> tuple[Callable[..., Any], Callable[..., Any]]:
            @functools.wraps(fwd)
            def fwd2(*args: Any) -> Any:
                out = fwd(*args)
                if isinstance(out, (tuple, list)) and len(out) == 2:
                    return out
                if isinstance(out, (tuple, list)) and out:
                    return out[0], (out[1] if len(out) > 1 else None)
                return out, None

            return fwd2, bwd

        _wrap_defvjp(cd, rewrite)


class FwdMustBeTuple(BrokenJax):
    claim = "4: a list of two is accepted from fwd (lists are rejected instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def rewrite(
            cv: Any, fwd: Callable[..., Any], bwd: Callable[..., Any]
        ) -> tuple[Callable[..., Any], Callable[..., Any]]:
            @functools.wraps(fwd)
            def fwd2(*args: Any) -> Any:
                out = fwd(*args)
                if isinstance(out, list):
                    raise TypeError("custom_vjp fwd must return a tuple")
                return out

            return fwd2, bwd

        _wrap_defvjp(cd, rewrite)


class FwdRunsOnPrimalCall(BrokenJax):
    claim = "4: the rules run only under differentiation (the primal call goes through fwd instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        state = threading.local()

        def through_fwd(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            if getattr(state, "busy", False) or self.fwd is None or self.symbolic_zeros:
                return original(self, *args, **kwargs)
            state.busy = True  # fwd usually calls the function itself
            try:
                return self.fwd(*args, **kwargs)[0]
            finally:
                state.busy = False

        _call_patch(cd.custom_vjp, through_fwd)


# ---------------------------------------------------------------- claim 5: bwd returns one cotangent per argument


class LenientBwdStructure(BrokenJax):
    claim = "5: bwd must return a tuple matching the arguments (a malformed one silently means zeros instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def matches(o: Any, a: Any) -> bool:
            return o is None or jax.tree.structure(o) == jax.tree.structure(a)

        def change(out: Any, seen: list[Any]) -> Any:
            if isinstance(out, list):
                out = tuple(out)
            if (
                isinstance(out, tuple)
                and len(out) == len(seen)
                and all(matches(o, a) for o, a in zip(out, seen, strict=True))
            ):
                return out
            return tuple(None for _ in seen)

        _wrap_bwd_output(cd, change)


class NoBwdShapeCheck(BrokenJax):
    claim = (
        "5: a cotangent of the wrong shape raises ValueError (the check is switched off instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        jax.config.update("jax_disable_bwd_checks", True)

    def flags(self) -> list[Any]:
        """A JAX whose check is gone without a word: the flag still reads as the mode left it (off)."""
        return [
            {**f, "value": False} if f["name"] == "jax_disable_bwd_checks" else f
            for f in super().flags()
        ]


class BwdCotangentCastToInput(BrokenJax):
    claim = (
        "5: a bwd cotangent of the input's shape and another dtype is passed on as bwd made it "
        "(it is cast to the input's dtype instead: the gradient has the right value and the wrong dtype)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def cast(ct: Any, arg: Any) -> Any:
            if ct is None or not hasattr(ct, "dtype") or not hasattr(arg, "dtype"):
                return ct
            if not jnp.issubdtype(arg.dtype, jnp.inexact) or jnp.shape(ct) != jnp.shape(arg):
                return ct
            return jnp.asarray(ct).astype(arg.dtype)

        def change(out: Any, seen: list[Any]) -> Any:
            if not isinstance(out, (tuple, list)) or len(out) != len(seen):
                return out
            return type(out)(
                jax.tree.map(cast, ct, arg)
                if jax.tree.structure(ct) == jax.tree.structure(arg)
                else ct
                for ct, arg in zip(out, seen, strict=True)
            )

        _wrap_bwd_output(cd, change)


class BwdCotangentsReversed(BrokenJax):
    claim = "5: bwd's cotangents go to the arguments in order (they are matched in reverse instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def change(out: Any, seen: list[Any]) -> Any:
            if isinstance(out, (tuple, list)) and len(out) > 1:
                return type(out)(reversed(out))
            return out

        _wrap_bwd_output(cd, change)


# ---------------------------------------------------------------- claim 6: custom_jvp nondiff_argnums


class CustomJvpRejectsTracers(BrokenJax):
    claim = "6: custom_jvp accepts Tracers in nondiff_argnums (rejected like custom_vjp instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        check = cd._check_for_tracers

        def strict(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            for i in self.nondiff_argnums:
                check(args[i])
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_jvp, strict)


class CustomJvpNondiffNotStopped(BrokenJax):
    claim = "6: grad with respect to a custom_jvp nondiff argument is zero (stop_gradient removed instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        cd._stop_gradient = lambda x: x


class CustomJvpStaticArgsLast(BrokenJax):
    claim = "6: custom_jvp's rule receives the nondiff arguments first (last instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd.custom_jvp.defjvp

        def defjvp(self: Any, jvp: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            n = len(self.nondiff_argnums)
            rule = (lambda *a: jvp(*a[n:], *a[:n])) if n else jvp
            return original(self, rule, *args, **kwargs)

        cd.custom_jvp.defjvp = defjvp


class CustomJvpArrayOnlyNondiff(BrokenJax):
    claim = (
        "6: custom_jvp nondiff arguments may be functions (they are converted to arrays instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def as_arrays(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            for i in self.nondiff_argnums:
                jax.tree.map(jnp.asarray, args[i])
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_jvp, as_arrays)


# ---------------------------------------------------------------- claims 7, 8: closures over Tracers


class RejectClosedOverTracers(BrokenJax):
    claim = (
        "7: custom functions may close over jit/vmap Tracers (rejected, as before PR 4008, instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        from jax.errors import UnexpectedTracerError

        def strict(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            if _closes_over_tracers(jax, self, args):
                raise UnexpectedTracerError(
                    "custom derivative functions may not close over tracers"
                )
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_vjp, strict)
        _call_patch(cd.custom_jvp, strict)


class BypassRuleForClosedOverTracers(BrokenJax):
    claim = (
        "8: differentiating a closed-over value is an error (plain autodiff silently used instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def lenient(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            if _closes_over_tracers(jax, self, args):
                return self.fun(*args, **kwargs)
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_vjp, lenient)
        _call_patch(cd.custom_jvp, lenient)


# ---------------------------------------------------------------- claim 9: integer inputs


class NoFloat0ForIntCotangents(BrokenJax):
    claim = "9: integer arguments get float0 cotangents (float32 zeros instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        import numpy as np
        from jax._src import core, dtypes

        original = core.primal_dtype_to_tangent_dtype

        def tangent_dtype(primal_dtype: Any) -> Any:
            out = original(primal_dtype)
            return np.dtype("float32") if out == dtypes.float0 else out

        core.primal_dtype_to_tangent_dtype = tangent_dtype


# ---------------------------------------------------------------- claim 11: defvjp options


class SymbolicZerosIgnored(BrokenJax):
    claim = "11: defvjp(symbolic_zeros=True) passes CustomVJPPrimal and SymbolicZero (the option is ignored instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd.custom_vjp.defvjp

        def defvjp(
            self: Any, fwd: Any, bwd: Any, symbolic_zeros: bool = False, **kwargs: Any
        ) -> Any:
            return original(self, fwd, bwd, **kwargs)

        cd.custom_vjp.defvjp = defvjp


class OptimizeRematMissing(BrokenJax):
    claim = "11: defvjp accepts optimize_remat from 0.4.33 (rejected as in 0.4.30 instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        original = cd.custom_vjp.defvjp

        def defvjp(self: Any, fwd: Any, bwd: Any, *args: Any, **kwargs: Any) -> Any:
            if "optimize_remat" in kwargs:
                raise TypeError(
                    "custom_vjp.defvjp() got an unexpected keyword argument 'optimize_remat'"
                )
            return original(self, fwd, bwd, *args, **kwargs)

        cd.custom_vjp.defvjp = defvjp


class NondiffArgnamesIgnored(BrokenJax):
    claim = "11: nondiff_argnames marks arguments non-differentiable from 0.6.2 (ignored instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        for cls in (cd.custom_vjp, cd.custom_jvp):
            original = cls.__init__

            def __init__(
                self: Any,
                fun: Any,
                nondiff_argnums: Any = (),
                nondiff_argnames: Any = (),
                _init: Any = original,
            ) -> None:
                _init(self, fun, nondiff_argnums)

            cls.__init__ = __init__


class PrimalWithoutRule(BrokenJax):
    claim = "11: a custom_vjp without defvjp raises AttributeError when called (it runs the function instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def lenient(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            if self.fwd is None:
                return self.fun(*args, **kwargs)
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_vjp, lenient)


# ---------------------------------------------------------------- issue 14: None in subtrees,
# non-array nondiff values, closure_convert


class NestedNoneCotangentAsOne(BrokenJax):
    claim = "14.4: None inside a subtree of bwd's output means zeros there (ones instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        jnp = jax.numpy

        def fill(o: Any, a: Any, top: bool) -> Any:
            if o is None:
                return o if top or a is None else jax.tree.map(jnp.ones_like, a)
            if isinstance(o, (tuple, list)) and isinstance(a, (tuple, list)) and len(o) == len(a):
                return type(o)(fill(oi, ai, False) for oi, ai in zip(o, a, strict=True))
            return o

        def change(out: Any, seen: list[Any]) -> Any:
            if isinstance(out, (tuple, list)) and len(out) == len(seen):
                return tuple(fill(o, a, True) for o, a in zip(out, seen, strict=True))
            return out

        _wrap_bwd_output(cd, change)


class NondiffMustBeHashable(BrokenJax):
    claim = "14.7: nondiff arguments need not be hashable (custom_vjp hashes them instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        def hashing(
            self: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            for i in self.nondiff_argnums:
                if i < len(args):
                    hash(args[i])
            return original(self, *args, **kwargs)

        _call_patch(cd.custom_vjp, hashing)


class ClosureConvertHoistsEverything(BrokenJax):
    claim = "14.8: closure_convert hoists only values autodiff may perturb (every closed-over array instead)"

    def patch(self, jax: Any, cd: Any) -> None:
        cd._maybe_perturbed = lambda x: True


class ClosureConvertStructureUnchecked(BrokenJax):
    claim = (
        "14.8: the converted function's inputs must match the example arguments' structure "
        "(aux lists are spread silently instead)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        original = jax.closure_convert

        def closure_convert(fun: Callable[..., Any], *example_args: Any) -> Any:
            converted, aux = original(fun, *example_args)

            def lenient(*args: Any) -> Any:
                # the arguments after the example ones are spread, whatever their packing
                head, tail = args[: len(example_args)], args[len(example_args) :]
                spread = [
                    leaf for t in tail for leaf in (t if isinstance(t, (list, tuple)) else [t])
                ]
                return converted(*head, *spread)

            return lenient, aux

        jax.closure_convert = closure_convert


# ---------------------------------------------------------------- issue 24: the remaining JAX-test rows


class BwdTreeRebuiltWithNones(BrokenJax):
    claim = (
        "24: bwd may return a custom pytree whose unflatten rejects None children (a copy of its "
        "structure is first built with None leaves instead, so such an unflatten fails)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def change(out: Any, seen: list[Any]) -> Any:
            treedef = jax.tree_util.tree_structure(out)
            jax.tree_util.tree_unflatten(treedef, [None] * treedef.num_leaves)
            return out

        _wrap_bwd_output(cd, change)


ALL: tuple[type[BrokenJax], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, BrokenJax) and cls is not BrokenJax
)


class DisableBwdChecksIgnored(BrokenJax):
    claim = (
        "24: jax.config.update('jax_disable_bwd_checks', True) switches bwd's shape checks off "
        "(the update is ignored instead, so the checks stay on)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        real = jax.config.update

        def update(name: str, value: Any) -> Any:
            if name == "jax_disable_bwd_checks":
                return None
            return real(name, value)

        jax.config.update = update


class BwdPytreeLeavesReversed(BrokenJax):
    claim = (
        "5 (i37): bwd's cotangent for a pytree argument goes to that argument's leaves by "
        "structure (the leaves of each argument's cotangent are matched in reverse instead: a "
        "dict's 'a' gets 'b''s)"
    )

    def patch(self, jax: Any, cd: Any) -> None:
        def reverse_leaves(ct: Any) -> Any:
            leaves, tree = jax.tree.flatten(ct)
            return jax.tree.unflatten(tree, leaves[::-1]) if len(leaves) > 1 else ct

        def change(out: Any, seen: list[Any]) -> Any:
            if isinstance(out, (tuple, list)):
                return type(out)(reverse_leaves(ct) for ct in out)
            return out

        _wrap_bwd_output(cd, change)
