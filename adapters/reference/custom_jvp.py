"""`jax.custom_jvp`: the class (`defjvp`, `defjvps`), one call (`JVPCall.jvp_flat`: the nondiff
arguments FIRST, SymbolicZero tangents for a symbolic_zeros rule, the rule's output a pair of one
pytree structure) and `check_tangent_types` (each tangent of its primal's shape and tangent dtype).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jax_conformance.adapters.reference import core
from jax_conformance.adapters.reference.ad import strip_autodiff, zeros_like_aval
from jax_conformance.adapters.reference.core import get_aval
from jax_conformance.adapters.reference.custom_call import (
    CustomCall,
    CustomFunction,
    SymbolicZero,
    check_for_tracers,
    check_primal_type,
    resolve_args,
    staged_output_type,
    strong,
    tangent_aval,
)
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import tree_flatten, tree_map, tree_unflatten


class custom_jvp(CustomFunction):  # noqa: N801 - JAX's name
    """A function with a forward-mode rule: `@f.defjvp def f_jvp(primals, tangents)`."""

    def __init__(
        self,
        fun: Callable[..., Any],
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ) -> None:
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """With symbolic_zeros=True the rule gets a SymbolicZero for each input tangent known to be zero."""
        self.jvp, self.symbolic_zeros = jvp, symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One tangent function per argument: t_out = sum of jvp_i(t_i, primal_out, *primals); None is a zero."""
        if self.nondiff_argnums and not mutant("defjvps-with-nondiff-accepted"):
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            out = self(*primals)
            terms = [
                f(t, out, *primals) for f, t in zip(jvps, tangents, strict=False) if f is not None
            ]
            total = terms[0] if terms else tree_map(lambda o: zeros_like_aval(get_aval(o)), out)
            for t in terms[1:]:
                total = tree_map(lambda a, b: a + b, total, t)
            return out, total

        self.jvp = jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            if mutant("jvp-missing-rule-runs-function"):
                return self.fun(*args, **kwargs)
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.fun.__name__} using defjvp."
            )
        full = resolve_args(self.fun, args, kwargs)
        for i in self.nondiff_argnums:
            if mutant("jvp-nondiff-rejects-tracers"):
                check_for_tracers(full[i])
            # Tracers are fine here (PR #4008): their perturbations are stopped, so d/d(nondiff) is 0.
            full[i] = tree_map(strip_autodiff, full[i])
        call = JVPCall(self, full)
        out = core.bind_custom_jvp(call, call.leaves)
        return tree_unflatten(call.out_tree, out)  # type: ignore[arg-type]


class JVPCall(CustomCall):
    def __init__(self, f: custom_jvp, args: list[Any]) -> None:
        super().__init__(f.fun, f.nondiff_argnums, args)
        self.f = f

    def jvp_flat(
        self, primal_leaves: Sequence[Any], tangent_leaves: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        """Run the rule: the nondiff arguments FIRST, then the tuple of primals, then the tuple of tangents."""
        assert self.f.jvp is not None
        staged = staged_output_type(lambda *xs: self.fun(*self.full_args(xs)), primal_leaves)
        # A None tangent is a known zero: a SymbolicZero for a symbolic_zeros rule, a zero array otherwise.
        symbolic = self.f.symbolic_zeros and not mutant("jvp-symbolic-zeros-instantiated")
        tangent_leaves = [
            t
            if t is not None
            else SymbolicZero(tangent_aval(get_aval(p)))
            if symbolic
            else zeros_like_aval(get_aval(p))
            for p, t in zip(primal_leaves, tangent_leaves, strict=True)
        ]
        primals = tuple(tree_unflatten(self.in_tree, list(primal_leaves)))
        tangents = tuple(tree_unflatten(self.in_tree, list(tangent_leaves)))
        if mutant("jvp-rule-static-args-last"):
            pair = self.f.jvp(primals, tangents, *self.static)
        else:
            pair = self.f.jvp(*self.static, primals, tangents)
        rule_name, f_name = (
            getattr(self.f.jvp, "__name__", "jvp"),
            getattr(self.fun, "__name__", str(self.fun)),
        )
        if mutant("jvp-pair-unchecked") and not (
            isinstance(pair, (tuple, list)) and len(pair) == 2
        ):
            pair = (self.fun(*self.full_args(primal_leaves)), pair)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(
                f"Custom JVP rule {rule_name} for function {f_name} must produce a pair (list or tuple of length two) "
                f"representing primal and tangent outputs, but got {pair}."
            )
        out_leaves, self.out_tree = tree_flatten(pair[0])
        t_leaves, t_tree = tree_flatten(pair[1])
        if t_tree != self.out_tree and not mutant("jvp-tangent-structure-unchecked"):
            raise TypeError(
                f"Custom JVP rule {rule_name} for function {f_name} must produce primal and tangent outputs with "
                f"equal container (pytree) structures, but got {self.out_tree} and {t_tree} respectively."
            )
        if staged is not None:
            check_primal_type(
                "JVP rule", rule_name, f_name, "custom_jvp", staged, self.out_tree, out_leaves
            )
        check_tangent_types(out_leaves, t_leaves)
        return out_leaves, [
            None if isinstance(t, SymbolicZero) else t for t in t_leaves
        ]  # None: a known zero


def check_tangent_types(primals: Sequence[Any], tangents: Sequence[Any]) -> None:
    """Each tangent output has its primal output's tangent type: the same shape, and the dtype (float0 for integers)."""
    if mutant("jvp-tangent-aval-unchecked"):
        return
    p_avals = [strong(get_aval(p)) for p in primals]
    expected = [tangent_aval(a) for a in p_avals]
    got = [strong(t.aval if isinstance(t, SymbolicZero) else get_aval(t)) for t in tangents]
    if all(e == g for e, g in zip(expected, got, strict=True)):
        return
    if len(expected) == 1:
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. "
            f"Expected {expected[0].str_short()} (tangent type of {p_avals[0].str_short()}) but got "
            f"{got[0].str_short()}."
        )
    lines = [
        f"  primal {p.str_short()} with tangent {g.str_short()}, expecting tangent {e.str_short()}"
        for p, e, g in zip(p_avals, expected, got, strict=True)
        if e != g
    ]
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes, but got:\n"
        + "\n".join(lines)
    )
