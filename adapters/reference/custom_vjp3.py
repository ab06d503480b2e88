"""`jax.custom_vjp` under `jax_custom_vjp3=True` (JAX 0.10.2's `custom_vjp3`): what changes.

`custom_vjp(...)` reads the flag when it is created (`custom_vjp.__new__`), as JAX does: a function
decorated before the flag was set keeps the classic rules. Under the flag (measured on JAX 0.10.2,
docs/research/upcoming-flags.md section 3.2):
- nondiff arguments are static: a Tracer there is an UnexpectedTracerError ("must be static, not
  Tracers"), and each must be hashable, else a ValueError ("Non-hashable static arguments are not
  supported"; `check_static`);
- the function is traced when called under any transformation, and a Tracer it closes over (of jit,
  vmap, jvp or grad alike) is an UnexpectedTracerError ("can't close over Tracers"; `check_closure`);
- fwd's output is unpacked as a pair without a check of its own (Python's unpacking errors), and its
  primal part is checked against the function's output type always, not only where it was staged
  (`VJP3Call.fwd_flat`); with symbolic_zeros every argument reaches fwd as a CustomVJPPrimal, the
  nondiff ones too; `defvjp` accepts symbolic_zeros with optimize_remat;
- bwd's output: a tuple (TypeError otherwise), of one entry per argument (ValueError), each
  entry of its argument's structure (ValueError "pytree structure error") and shape (ValueError
  "doesn't match expected type"; off under jax_disable_bwd_checks) (`cotangents_from_bwd3`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jax_conformance.adapters.reference import core, errors
from jax_conformance.adapters.reference.ad import is_float, zeros_like_aval
from jax_conformance.adapters.reference.config import config
from jax_conformance.adapters.reference.core import ShapedArray, Tracer, closed_over, get_aval
from jax_conformance.adapters.reference.custom_call import (
    SymbolicZero,
    jax_class,
    resolve_args,
    strong,
)
from jax_conformance.adapters.reference.custom_vjp import (
    CustomVJPPrimal,
    VJPCall,
    check_residuals,
    custom_vjp,
    remat_depths,
)
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_unflatten,
)


def tracer_name(t: Tracer) -> str:
    """The class JAX's Tracer for this value has: a jit JAX staged (the reference inlines it) makes it
    a DynamicJaxprTracer."""
    if type(t).__name__ == "JitTracer" or any(
        depth > t._trace.main.level for depth in core.inline_jit_depths
    ):
        return "DynamicJaxprTracer"
    return type(t).__name__


class custom_vjp3(custom_vjp):  # noqa: N801 - JAX's name
    """A custom_vjp created while jax_custom_vjp3 is on."""

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        self.fwd, self.bwd, self.symbolic_zeros, self.optimize_remat = (
            fwd,
            bwd,
            symbolic_zeros,
            optimize_remat,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.fun.__name__} using defvjp."
            )
        full = resolve_args(self.fun, args, kwargs, "custom_vjp")
        for i in self.nondiff_argnums:
            check_static(full[i])
        call = VJP3Call(self, full)
        check_closure(self.fun, call)
        out = core.bind_custom_vjp(call, call.leaves)
        return tree_unflatten(call.out_tree, out)  # type: ignore[arg-type]


def check_static(x: Any) -> None:
    """A nondiff argument is static: not a Tracer, and hashable."""
    if isinstance(x, Tracer):
        raise errors.UnexpectedTracerError(
            "custom_vjp inputs marked with nondiff_argnums must be static, not Tracers"
        )
    culprit = _first_unhashable(x)
    if culprit is not None and not mutant("vjp3-nondiff-unhashable-accepted"):
        what = tracer_name(culprit) if isinstance(culprit, Tracer) else jax_class(culprit)[8:-2]
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying to hash an "
            f"object of type {jax_class(x)}, {x!r}. The error was:\nTypeError: unhashable type: '{what}'\n"
        )


def _first_unhashable(x: Any) -> Any:
    """The value whose hash fails in hash(x) (x itself, or an element of a tuple), or None."""
    if isinstance(x, tuple):
        return next((c for c in (_first_unhashable(e) for e in x) if c is not None), None)
    try:
        hash(x)
    except TypeError:
        return x
    return None


def check_closure(fun: Callable[..., Any], call: VJPCall) -> None:
    """Under a transformation the function is traced; a Tracer it closes over is an error."""
    if (len(core.trace_stack) == 1 and not core.inline_jit_depths) or mutant(
        "vjp3-closure-allowed"
    ):
        return  # nothing is being traced: nothing to close over
    from jax_conformance.adapters.reference.jit import trace_to_ir

    ir, _ = trace_to_ir(lambda *xs: fun(*call.full_args(xs)), call.in_avals)
    leaked = [(tracer_name(c), c.aval) for c in ir.consts if isinstance(c, Tracer)]
    staged = set().union(*core.staged_args) if core.staged_args else set()
    leaked += [
        ("DynamicJaxprTracer", strong(get_aval(v))) for v in closed_over(fun) if id(v) in staged
    ]
    if leaked:
        name, aval = leaked[0]
        raise errors.UnexpectedTracerError(
            f"custom_vjp-decorated function {fun!r} closed over a {name} of type {aval.str_short()}, but custom_vjp "
            f"functions can't close over Tracers. Rewrite {fun!r} to take it as an explicit input."
        )


def _paths(tree: PyTreeDef, prefix: str = "") -> list[str]:
    """The key path of each leaf, as JAX prints it (`[0]`, `['a']`; empty for a lone leaf)."""
    if tree.kind == "leaf":
        return [prefix]
    keys = (
        [repr(k) for k in tree.meta]
        if tree.kind == "dict"
        else [str(i) for i in range(len(tree.children))]
    )
    return [
        p for k, sub in zip(keys, tree.children, strict=True) for p in _paths(sub, f"{prefix}[{k}]")
    ]


class VJP3Call(VJPCall):
    # under vmap, fwd may not batch an output the function leaves unbatched (BatchedCall.fwd_flat)
    checks_batching = True

    def fwd_flat(
        self, leaves: Sequence[Any], perturbed: Sequence[bool] | None = None
    ) -> tuple[list[Any], Any]:
        """Run fwd; its primal output must have the function's type (traced here, staged or not)."""
        from jax_conformance.adapters.reference.jit import trace_to_ir

        assert self.f.fwd is not None
        ir, primal_tree = trace_to_ir(
            lambda *xs: self.fun(*self.full_args(xs)), [get_aval(x) for x in leaves]
        )
        primal_avals = [strong(v.aval) for v in ir.outvars]
        args = self.full_args(leaves)
        if self.f.symbolic_zeros:
            wrapped = iter(
                CustomVJPPrimal(x, bool(p))
                for x, p in zip(leaves, perturbed or [True] * len(leaves), strict=True)
            )
            dyn = iter(tree_unflatten(self.in_tree, list(wrapped)))
            # JAX 0.10.2 wraps the nondiff arguments too, with the value in both fields (observed)
            args = [
                CustomVJPPrimal(a, a) if i in self.static_nums else next(dyn)
                for i, a in enumerate(args)
            ]
        out, res = self.f.fwd(*args)  # no check of its own: Python's unpacking errors, as in JAX
        if self.f.optimize_remat and (core.inline_jit_depths or remat_depths):
            out = self.fun(*self.full_args(leaves))
        if not mutant("fwd-residuals-unchecked"):
            check_residuals(res)
        out_leaves, out_tree = tree_flatten(out)
        check_fwd_type(
            getattr(self.f.fwd, "__name__", "fwd"),
            self.fun.__name__,
            primal_tree,
            primal_avals,
            out_tree,
            out_leaves,
        )
        self.out_tree = out_tree
        self.out_avals = [get_aval(o) for o in out_leaves]
        return out_leaves, res

    def bwd_flat(self, res: Any, ct_leaves: Sequence[Any]) -> list[Any]:
        assert self.f.bwd is not None and self.out_tree is not None
        zero = SymbolicZero if self.f.symbolic_zeros else zeros_like_aval
        ct = tree_unflatten(
            self.out_tree,
            [
                c if c is not None else zero(a)
                for c, a in zip(ct_leaves, self.out_avals, strict=True)
            ],
        )
        out = (
            self.f.bwd(res, *self.static, ct)
            if mutant("bwd-static-args-last")
            else self.f.bwd(*self.static, res, ct)
        )
        return cotangents_from_bwd3(out, self.in_tree, self.in_avals, self.f.bwd)


def check_fwd_type(
    fwd_name: str,
    f_name: str,
    tree: PyTreeDef,
    avals: list[ShapedArray],
    out_tree: PyTreeDef,
    out_leaves: list[Any],
) -> None:
    """fwd's primal output has the function's pytree structure, then each leaf its shape and dtype."""
    if out_tree != tree:
        raise TypeError(
            f"Custom VJP fwd rule {fwd_name} for function {f_name} must produce a pair (list or "
            "tuple of length two) where the "
            "first element represents the primal output (equal to the output of the "
            f"custom_vjp-decorated function {f_name}) and the "
            "second element represents residuals (i.e. values stored from the forward pass for use "
            "on the backward pass), but "
            f"instead the fwd rule output's first element had container/pytree structure:\n    {out_tree!r}\n"
            f"while the custom_vjp-decorated function {f_name} had output container/pytree structure:\n    {tree!r}."
        )
    for path, leaf, aval in zip(_paths(tree), out_leaves, avals, strict=True):
        got = strong(get_aval(leaf))
        if (got.shape, got.dtype) != (aval.shape, aval.dtype):
            raise TypeError(
                f"at {path}, got fwd output type {got.str_short()} which doesn't match primal "
                f"output type {aval.str_short()}"
            )


def cotangents_from_bwd3(
    out: Any, in_tree: PyTreeDef, in_avals: list[ShapedArray], bwd: Any
) -> list[Any]:
    """The flat input cotangents from bwd's output under jax_custom_vjp3."""
    n_args = len(in_tree.children)
    if not isinstance(out, (tuple, list)):
        raise TypeError(
            f"Custom VJP bwd rule {bwd!r} must produce a tuple but got {jax_class(out)}."
        )
    out = tuple(out)
    if len(out) != n_args:
        raise ValueError(
            f"Custom VJP bwd rule {bwd!r} must produce a tuple of length equal to the primal args "
            f"tuple, but got length {len(out)}"
        )
    avals = iter(in_avals)
    flat: list[Any] = []
    for i, (ct, arg_tree) in enumerate(zip(out, in_tree.children, strict=True)):
        for leaf in _match3(ct, arg_tree, f"[{i}]"):
            flat.append(_leaf_cotangent3(leaf, next(avals), i))
    return flat


def _match3(ct: Any, tree: PyTreeDef, path: str) -> list[Any]:
    """ct's leaves in tree's order (None, or a SymbolicZero, stands for a zero subtree)."""
    if ct is None or (isinstance(ct, SymbolicZero) and tree.kind != "leaf"):
        return [None] * tree.num_leaves
    if tree.kind == "leaf":
        return [ct]
    got = tree_structure_of(ct)
    where = f"pytree structure error: {{}} at key path\n    broadcast_prefix prefix_tree{path}\n"
    if got.kind != tree.kind and not {got.kind, tree.kind} <= {"tuple", "list"}:
        raise ValueError(
            where.format("different types")
            + f"At that key path, the prefix pytree broadcast_prefix prefix_tree "
            f"has a subtree of type\n    {type(ct)}\nbut at the same key path the full pytree has a subtree of "
            f"different type\n    {_kind_class(tree)}."
        )
    if tree.kind == "dict" and list(got.meta) != list(tree.meta):
        mine, theirs = " ".join(map(str, got.meta)), " ".join(map(str, tree.meta))
        diff = " ".join(map(str, sorted(set(got.meta) ^ set(tree.meta), key=str)))
        raise ValueError(
            where.format("different numbers of pytree children")
            + "At that key path, the prefix pytree "
            f"broadcast_prefix prefix_tree has a subtree of type\n    <class 'dict'>\nwith {len(got.meta)} child keys\n"
            f"    {mine}\nbut at the same key path the full pytree has a subtree of the same type but with "
            f"{len(tree.meta)} child keys\n    {theirs}\nso the symmetric difference on key sets is\n    {diff}"
        )
    if len(got.children) != len(tree.children):
        raise ValueError(
            where.format("different numbers of pytree children")
            + "At that key path, the prefix pytree "
            f"broadcast_prefix prefix_tree has a subtree of type\n    {type(ct)}\nwith {len(got.children)} "
            f"children, but at the same key path the full pytree has a subtree of the same type but with "
            f"{len(tree.children)} children."
        )
    keys = list(tree.meta) if tree.kind == "dict" else list(range(len(tree.children)))
    return [
        leaf
        for k, sub in zip(keys, tree.children, strict=True)
        for leaf in _match3(ct[k], sub, f"{path}[{k!r}]")
    ]


def tree_structure_of(ct: Any) -> PyTreeDef:
    from jax_conformance.adapters.reference.tree_util import tree_structure

    return tree_structure(ct, is_leaf=lambda x: x is None)


def _kind_class(tree: PyTreeDef) -> Any:
    return {"tuple": tuple, "list": list, "dict": dict, "none": type(None)}.get(
        tree.kind, tree.meta
    )


def _leaf_cotangent3(ct: Any, aval: ShapedArray, i: int) -> Any:
    """One input cotangent: its shape must be the input's (unless jax_disable_bwd_checks); None or a
    SymbolicZero is a zero."""
    if ct is None or not is_float(aval):
        return zeros_like_aval(
            aval
        )  # whatever bwd says, an integer input's cotangent is a float0 zero
    ct_aval = ct.aval if isinstance(ct, SymbolicZero) else get_aval(ct)
    if ct_aval.shape != aval.shape and not config.jax_disable_bwd_checks:
        raise ValueError(
            f"at output[{i}] the bwd rule produced an output of type {strong(ct_aval).str_short()} which "
            f"doesn't match expected type {strong(aval).str_short()}"
        )
    if isinstance(ct, SymbolicZero):
        # With the checks off a zero of the wrong shape passes through as it is, as JAX 0.10.2 does.
        return zeros_like_aval(ct_aval if ct_aval.shape != aval.shape else aval)
    if isinstance(ct, (int, float, complex)):
        from jax_conformance.adapters.reference.numpy_dtypes import lift

        return lift(ct)
    return ct
