"""`jax.custom_vjp`: the class, one call (`VJPCall`: `fwd_flat`, and `bwd_flat` with the nondiff
arguments FIRST), what bwd may return (`cotangents_from_bwd`: one entry per differentiable argument,
None a zero, float0 for integer inputs, shapes checked, dtypes not), `CustomVJPPrimal` for a
symbolic_zeros fwd, and `jax.checkpoint` (which makes an optimize_remat custom_vjp run staged).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import core
from jax_conformance.adapters.reference.ad import is_float, zeros_like_aval
from jax_conformance.adapters.reference.core import ShapedArray, Tracer, get_aval
from jax_conformance.adapters.reference.custom_call import (
    CustomCall,
    CustomFunction,
    SymbolicZero,
    check_for_tracers,
    check_primal_type,
    jax_class,
    resolve_args,
    staged_output_type,
)
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_structure,
    tree_unflatten,
)


class CustomVJPPrimal:
    """With symbolic_zeros=True, fwd gets these: the value and whether autodiff perturbs it."""

    __hash__ = None  # type: ignore[assignment]  # as JAX's (a dataclass): unhashable, so never a static argument

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value, self.perturbed = value, perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


class custom_vjp(CustomFunction):  # noqa: N801 - JAX's name
    """A function with a reverse-mode rule: `f.defvjp(fwd, bwd)`.

    Which implementation it gets is decided here, when it is created, by the flag jax_custom_vjp3
    (JAX reads it in `custom_vjp.__new__` too): on, the function is a `custom_vjp3.custom_vjp3`.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> custom_vjp:
        from jax_conformance.adapters.reference.config import config

        if cls is custom_vjp and config.jax_custom_vjp3:
            from jax_conformance.adapters.reference.custom_vjp3 import custom_vjp3

            return super().__new__(custom_vjp3)
        return super().__new__(cls)

    def __init__(
        self,
        fun: Callable[..., Any],
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ) -> None:
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.optimize_remat = False

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros"
            )
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros
        self.optimize_remat = optimize_remat  # where staged, the primal output then comes from the function (fwd_flat)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.fun.__name__} using defvjp."
            )
        full = resolve_args(self.fun, args, kwargs, "custom_vjp")
        for i in self.nondiff_argnums:
            check_for_tracers(full[i])
        check_jax_types([a for i, a in enumerate(full) if i not in self.nondiff_argnums])
        call = VJPCall(self, full)
        out = core.bind_custom_vjp(call, call.leaves)
        return tree_unflatten(call.out_tree, out)  # type: ignore[arg-type]


def check_jax_types(args: Any) -> None:
    """Each leaf of the differentiable arguments has a JAX type (JAX takes the type of each when the function
    is called): anything else, a CustomVJPPrimal handed on from a symbolic_zeros fwd included, is a TypeError."""
    for leaf in tree_flatten(args)[0]:
        if not isinstance(
            leaf, (core.Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)
        ):
            kind = (
                str(type(leaf)) if isinstance(leaf, str) else f"'{jax_class(leaf)}'"
            )  # JAX quotes all but str's
            raise TypeError(f"Argument '{leaf}' of type {kind} is not a valid JAX type")


def check_residuals(res: Any) -> None:
    """fwd's residuals are a pytree of JAX types (arrays, NumPy values, Python numbers), as JAX requires
    when it stages them: a string or a function there is a TypeError."""
    for leaf in tree_flatten(res)[0]:
        if not isinstance(
            leaf, (core.Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)
        ):
            raise TypeError(f"Argument '{leaf}' of type {type(leaf)} is not a valid JAX type")


class VJPCall(CustomCall):
    def __init__(self, f: custom_vjp, args: list[Any]) -> None:
        super().__init__(f.fun, f.nondiff_argnums, args)
        self.f = f

    def fwd_flat(
        self, leaves: Sequence[Any], perturbed: Sequence[bool] | None = None
    ) -> tuple[list[Any], Any]:
        """Run fwd (same signature as the primal); it must return (primal output, residuals)."""
        assert self.f.fwd is not None
        staged = staged_output_type(lambda *xs: self.fun(*self.full_args(xs)), leaves)
        raw = list(leaves)
        if self.f.symbolic_zeros:
            leaves = [
                CustomVJPPrimal(x, bool(p))
                for x, p in zip(leaves, perturbed or [True] * len(leaves), strict=True)
            ]
        pair = self.f.fwd(*self.full_args(leaves))
        if mutant("fwd-pair-unchecked") and not (
            isinstance(pair, (tuple, list)) and len(pair) == 2
        ):
            pair = (pair, None)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            fwd_name, f_name = getattr(self.f.fwd, "__name__", "fwd"), self.fun.__name__
            raise TypeError(
                f"Custom VJP fwd rule {fwd_name} for function {f_name} must produce a pair (list or "
                "tuple of length two) "
                f"where the first element represents the primal output (equal to those of the custom_vjp-decorated "
                f"function {f_name}) and the second element represents residuals (i.e. values stored from the forward "
                f"pass for use on the backward pass), but instead of a pair the fwd rule {fwd_name} produced {pair}."
            )
        out, res = pair
        if (
            self.f.optimize_remat
            and (core.inline_jit_depths or remat_depths)
            and not mutant("optimize-remat-primal-from-fwd")
        ):
            # optimize_remat splits fwd where JAX stages the call (jit, remat): the primal output is the function's
            out = self.fun(*self.full_args(raw))
        if not mutant("fwd-residuals-unchecked"):
            check_residuals(res)
        out_leaves, out_tree = tree_flatten(out)
        if staged is not None:
            check_primal_type(
                "fwd rule",
                getattr(self.f.fwd, "__name__", "fwd"),
                self.fun.__name__,
                "custom_vjp",
                staged,
                out_tree,
                out_leaves,
            )
        self.out_tree = out_tree
        self.out_avals = [get_aval(o) for o in out_leaves]
        return out_leaves, res

    def bwd_flat(self, res: Any, ct_leaves: Sequence[Any]) -> list[Any]:
        """Run bwd: the nondiff arguments FIRST, then the residuals, then the output cotangent."""
        assert self.f.bwd is not None and self.out_tree is not None
        zero = (
            SymbolicZero if self.f.symbolic_zeros else zeros_like_aval
        )  # for outputs no cotangent reached
        ct = tree_unflatten(
            self.out_tree,
            [
                c if c is not None else zero(a)
                for c, a in zip(ct_leaves, self.out_avals, strict=True)
            ],
        )
        if mutant("bwd-static-args-last"):
            out = self.f.bwd(res, *self.static, ct)
        else:
            out = self.f.bwd(*self.static, res, ct)
        return cotangents_from_bwd(out, self.in_tree, self.in_avals)


def cotangents_from_bwd(out: Any, in_tree: PyTreeDef, in_avals: list[ShapedArray]) -> list[Any]:
    """The flat input cotangents from bwd's output: one entry per argument, None meaning zero."""
    if isinstance(out, list):
        out = tuple(out)
    n_args = len(in_tree.children)
    if mutant("bwd-structure-unchecked") and isinstance(out, tuple):
        out = (out + (None,) * n_args)[:n_args]
    if not isinstance(out, tuple) or len(out) != n_args:
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args tuple "
            "of the primal function, and in particular must produce a tuple of length equal to the number of arguments "
            f"to the primal function, but got bwd output structure {tree_structure(out)} for primal "
            f"input structure {in_tree}."
        )
    avals = iter(in_avals)
    flat: list[Any] = []
    for i, (ct, arg_tree) in enumerate(zip(out, in_tree.children, strict=True)):
        if ct is None and mutant("bwd-none-rejected"):
            raise TypeError(f"Custom VJP bwd rule produced None at output[{i}]")
        leaves = _match(ct, arg_tree, out, in_tree)
        for leaf in leaves:
            flat.append(_leaf_cotangent(leaf, next(avals), i))
    return flat


def _match(ct: Any, tree: PyTreeDef, out: Any, in_tree: PyTreeDef) -> list[Any]:
    """ct's leaves in tree's order; None stands for a zero subtree of any shape."""
    if ct is None:
        return [None] * tree.num_leaves
    if isinstance(ct, SymbolicZero) and tree.kind != "leaf":
        return [None] * tree.num_leaves
    if tree.kind == "leaf":
        return [ct]
    got = tree_structure(ct, is_leaf=lambda x: x is None)
    same_kind = got.kind == tree.kind or {got.kind, tree.kind} <= {"tuple", "list"}
    if (
        not same_kind
        or len(got.children) != len(tree.children)
        or (tree.kind == "dict" and got.meta != tree.meta)
    ):
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args tuple "
            "of the primal function, and in particular must produce a tuple of length equal to the number of arguments "
            f"to the primal function, but got bwd output structure {tree_structure(out)} for primal "
            f"input structure {in_tree}."
        )
    kids = [ct[k] for k in tree.meta] if tree.kind == "dict" else list(ct)
    return [
        leaf
        for kid, sub in zip(kids, tree.children, strict=True)
        for leaf in _match(kid, sub, out, in_tree)
    ]


def _leaf_cotangent(ct: Any, aval: ShapedArray, i: int) -> Any:
    from jax_conformance.adapters.reference.config import config

    checks = not config.jax_disable_bwd_checks  # the flag turns off the shape checks below
    if isinstance(ct, SymbolicZero):
        if ct.shape != aval.shape and not mutant(
            "bwd-symbolic-zero-shape-unchecked"
        ):  # not one of the bwd checks the flag turns off
            raise ValueError(
                "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not "
                "match the corresponding input "
                f"tangent shape/dtype: at output[{i}] the SymbolicZero had shape/dtype {ct.aval.str_short()} while the "
                f"corresponding input had shape/dtype {aval.str_short()}. Consider just returning a "
                "None here instead of a "
                "SymbolicZero object."
            )
        return zeros_like_aval(aval)
    if not is_float(aval):
        return zeros_like_aval(
            aval
        )  # whatever bwd says, an integer input's cotangent is a float0 zero
    if ct is None:
        return zeros_like_aval(aval)
    ct_aval = get_aval(ct)
    if ct_aval.shape != aval.shape and checks:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args tuple of the primal function, "
            f"but at output[{i}] the bwd rule produced an output of type {ct_aval} corresponding to an input of type "
            f"{aval}, so the shapes do not match"
        )
    if isinstance(ct, (int, float, complex)):
        from jax_conformance.adapters.reference.numpy_dtypes import lift

        return lift(ct)
    return ct  # the dtype is not checked (JAX 0.10.2 accepts an int32 cotangent for a float input)


# ---------------------------------------------------------------- jax.checkpoint


remat_depths: list[int] = []  # one entry per jax.checkpoint running inside a transformation


def checkpoint(fun: Callable[..., Any] | None = None, **_options: Any) -> Any:
    """`jax.checkpoint` / `jax.remat`: recomputation changes no value, so the reference calls fun as is
    (recording that it runs staged, which changes what an optimize_remat custom_vjp returns)."""
    if fun is None:
        return lambda f: checkpoint(f, **_options)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if len(core.trace_stack) <= 1:
            return fun(*args, **kwargs)
        remat_depths.append(len(core.trace_stack))
        try:
            return fun(*args, **kwargs)
        finally:
            remat_depths.pop()

    return wrapped
