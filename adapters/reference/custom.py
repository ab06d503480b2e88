"""`jax.custom_jvp`, `jax.custom_vjp` and `jax.closure_convert`: the rules, each in one place.

- The Tracer check: `check_for_tracers` (custom_vjp's nondiff_argnums may not hold Tracers;
  custom_jvp's may: they are passed through `stop_gradient`).
- The argument order of the rules: `VJPCall.bwd_flat` (nondiff arguments first, then the
  residuals, then the output cotangent) and `JVPCall.jvp_flat` (nondiff arguments first).
- What bwd may return: `cotangents_from_bwd` (a tuple with one entry per differentiable
  argument; None for a zero; float0 for integer inputs; shapes checked, dtypes not).
- fwd's output: `VJPCall.fwd_flat` (a pair of primal output and residuals).
- What a custom_jvp rule must return: `JVPCall.jvp_flat` (a pair; primal and tangent outputs of
  one pytree structure) and `check_tangent_types` (each tangent of its primal's shape and tangent
  dtype, float0 for integers); where JAX stages the function first (jit or scan inside a
  transformation), the rule's or fwd's primal output must have the function's type
  (`staged_output_type`, `_check_primal_type`).
- Arguments: keyword and default arguments are mapped to positions (`_resolve_args`); `defjvps`
  (one rule per argument, None a zero; not with nondiff_argnums).
- Symbolic zeros: `SymbolicZero` tangents for a `defjvp(symbolic_zeros=True)` rule
  (`JVPCall.jvp_flat`), `CustomVJPPrimal` for fwd, a SymbolicZero from bwd checked for its shape
  (`_leaf_cotangent`); `zero_from_primal`.
- `closure_convert` hoists the closed-over values autodiff may perturb and checks the structure
  of the converted function's inputs.
How a call is processed under each transformation lives with the transformation
(`ad.py`, `vmap.py`, `jit.py`; the closure check in `core.py`).
Docs: https://docs.jax.dev/en/latest/notebooks/Custom_derivative_rules_for_Python_code.html
and https://docs.jax.dev/en/latest/jep/4008-custom-vjp-update.html
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import core, errors
from jax_conformance.adapters.reference.ad import is_float, strip_autodiff, zeros_like_aval
from jax_conformance.adapters.reference.core import ShapedArray, Tracer, get_aval
from jax_conformance.adapters.reference.dtypes import float0
from jax_conformance.adapters.reference.mutants import mutant
from jax_conformance.adapters.reference.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)


def check_for_tracers(x: Any) -> None:
    """The rule of JAX PR #4008: a custom_vjp nondiff argument may not be or contain a Tracer."""
    if mutant("vjp-nondiff-accepts-tracers"):
        return
    for leaf in tree_leaves(x):
        if isinstance(leaf, Tracer):
            msg = ("Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated "
                   "by nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable arguments "
                   "to custom_vjp functions; instead, nondiff_argnums should only be used for arguments that can't be "
                   "or contain JAX tracers, e.g. function-valued arguments. In particular, array-valued arguments "
                   "should typically not be indicated as nondiff_argnums.")
            if mutant("vjp-nondiff-wrong-error"):
                raise ValueError(msg)
            raise errors.UnexpectedTracerError(msg)


def _argnums(fun: Callable[..., Any], nums: Sequence[int], names: Sequence[str]) -> tuple[int, ...]:
    out = set(nums)
    if names:
        params = list(inspect.signature(fun).parameters)
        out |= {params.index(n) for n in names}
    return tuple(sorted(out))


def _resolve_args(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """Keyword and default arguments, mapped to positions by the function's signature (as the rules see them)."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except ValueError:  # no signature (a builtin): positions only
        return list(args)
    if not mutant("defaults-not-applied"):
        bound.apply_defaults()
    return list(bound.args)


class _Call:
    """One application of a custom function: its static (nondiff) and dynamic arguments."""

    def __init__(self, fun: Callable[..., Any], static_nums: tuple[int, ...], args: list[Any]) -> None:
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


# ---------------------------------------------------------------- custom_vjp


class CustomVJPPrimal:
    """With symbolic_zeros=True, fwd gets these: the value and whether autodiff perturbs it."""

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value, self.perturbed = value, perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


class SymbolicZero:
    """With symbolic_zeros=True, bwd gets this for an output cotangent that is known to be zero."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval, self.shape, self.dtype = aval, aval.shape, aval.dtype

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval})"


class custom_vjp:  # noqa: N801 - JAX's name
    """A function with a reverse-mode rule: `f.defvjp(fwd, bwd)`."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (), nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _argnums(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        self.optimize_remat = False

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError("remat optimization for custom_vjp does not support symbolic zeros")
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros
        self.optimize_remat = optimize_remat  # where staged, the primal output then comes from the function (fwd_flat)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.fun.__name__} using defvjp.")
        full = _resolve_args(self.fun, args, kwargs)
        for i in self.nondiff_argnums:
            check_for_tracers(full[i])
        call = VJPCall(self, full)
        out = core.bind_custom_vjp(call, call.leaves)
        return tree_unflatten(call.out_tree, out)  # type: ignore[arg-type]


def _check_residuals(res: Any) -> None:
    """fwd's residuals are a pytree of JAX types (arrays, NumPy values, Python numbers), as JAX requires
    when it stages them: a string or a function there is a TypeError."""
    for leaf in tree_flatten(res)[0]:
        if not isinstance(leaf, (core.Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"Argument '{leaf}' of type {type(leaf)} is not a valid JAX type")


class VJPCall(_Call):
    def __init__(self, f: custom_vjp, args: list[Any]) -> None:
        super().__init__(f.fun, f.nondiff_argnums, args)
        self.f = f

    def fwd_flat(self, leaves: Sequence[Any], perturbed: Sequence[bool] | None = None) -> tuple[list[Any], Any]:
        """Run fwd (same signature as the primal); it must return (primal output, residuals)."""
        assert self.f.fwd is not None
        staged = staged_output_type(lambda *xs: self.fun(*self.full_args(xs)), leaves)
        raw = list(leaves)
        if self.f.symbolic_zeros:
            leaves = [CustomVJPPrimal(x, bool(p)) for x, p in zip(leaves, perturbed or [True] * len(leaves), strict=True)]
        pair = self.f.fwd(*self.full_args(leaves))
        if mutant("fwd-pair-unchecked") and not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            pair = (pair, None)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            fwd_name, f_name = getattr(self.f.fwd, "__name__", "fwd"), self.fun.__name__
            raise TypeError(
                f"Custom VJP fwd rule {fwd_name} for function {f_name} must produce a pair (list or tuple of length two) "
                f"where the first element represents the primal output (equal to those of the custom_vjp-decorated "
                f"function {f_name}) and the second element represents residuals (i.e. values stored from the forward "
                f"pass for use on the backward pass), but instead of a pair the fwd rule {fwd_name} produced {pair}.")
        out, res = pair
        if self.f.optimize_remat and (core._inline_jit or _remat_depth) and not mutant("optimize-remat-primal-from-fwd"):
            # optimize_remat splits fwd where JAX stages the call (jit, remat): the primal output is the function's
            out = self.fun(*self.full_args(raw))
        if not mutant("fwd-residuals-unchecked"):
            _check_residuals(res)
        out_leaves, out_tree = tree_flatten(out)
        if staged is not None:
            _check_primal_type("fwd rule", getattr(self.f.fwd, "__name__", "fwd"), self.fun.__name__, "custom_vjp", staged, out_tree, out_leaves)
        self.out_tree = out_tree
        self.out_avals = [get_aval(o) for o in out_leaves]
        return out_leaves, res

    def bwd_flat(self, res: Any, ct_leaves: Sequence[Any]) -> list[Any]:
        """Run bwd: the nondiff arguments FIRST, then the residuals, then the output cotangent."""
        assert self.f.bwd is not None and self.out_tree is not None
        zero = SymbolicZero if self.f.symbolic_zeros else zeros_like_aval  # for outputs no cotangent reached
        ct = tree_unflatten(self.out_tree, [c if c is not None else zero(a) for c, a in zip(ct_leaves, self.out_avals, strict=True)])
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
            f"to the primal function, but got bwd output structure {tree_structure(out)} for primal input structure {in_tree}.")
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
    if not same_kind or len(got.children) != len(tree.children) or (tree.kind == "dict" and got.meta != tree.meta):
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args tuple "
            "of the primal function, and in particular must produce a tuple of length equal to the number of arguments "
            f"to the primal function, but got bwd output structure {tree_structure(out)} for primal input structure {in_tree}.")
    kids = [ct[k] for k in tree.meta] if tree.kind == "dict" else list(ct)
    return [leaf for kid, sub in zip(kids, tree.children, strict=True) for leaf in _match(kid, sub, out, in_tree)]


def _leaf_cotangent(ct: Any, aval: ShapedArray, i: int) -> Any:
    if isinstance(ct, SymbolicZero):
        if ct.shape != aval.shape and not mutant("bwd-symbolic-zero-shape-unchecked"):
            raise ValueError(
                "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not match the corresponding input "
                f"tangent shape/dtype: at output[{i}] the SymbolicZero had shape/dtype {ct.aval.str_short()} while the "
                f"corresponding input had shape/dtype {aval.str_short()}. Consider just returning a None here instead of a "
                "SymbolicZero object.")
        return zeros_like_aval(aval)
    if not is_float(aval):
        return zeros_like_aval(aval)  # whatever bwd says, an integer input's cotangent is a float0 zero
    if ct is None:
        return zeros_like_aval(aval)
    ct_aval = get_aval(ct)
    if ct_aval.shape != aval.shape:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args tuple of the primal function, "
            f"but at output[{i}] the bwd rule produced an output of type {ct_aval} corresponding to an input of type "
            f"{aval}, so the shapes do not match")
    if isinstance(ct, (int, float, complex)):
        from jax_conformance.adapters.reference.numpy_dtypes import lift

        return lift(ct)
    return ct  # the dtype is not checked (JAX 0.10.2 accepts an int32 cotangent for a float input)


# ---------------------------------------------------------------- custom_jvp


class custom_jvp:  # noqa: N801 - JAX's name
    """A function with a forward-mode rule: `@f.defjvp def f_jvp(primals, tangents)`."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (), nondiff_argnames: Sequence[str] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _argnums(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

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
            terms = [f(t, out, *primals) for f, t in zip(jvps, tangents, strict=False) if f is not None]
            total = terms[0] if terms else tree_map(lambda o: zeros_like_aval(get_aval(o)), out)
            for t in terms[1:]:
                total = tree_map(lambda a, b: a + b, total, t)
            return out, total
        self.jvp = jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            if mutant("jvp-missing-rule-runs-function"):
                return self.fun(*args, **kwargs)
            raise AttributeError(f"No JVP defined for custom_jvp function {self.fun.__name__} using defjvp.")
        full = _resolve_args(self.fun, args, kwargs)
        for i in self.nondiff_argnums:
            if mutant("jvp-nondiff-rejects-tracers"):
                check_for_tracers(full[i])
            # Tracers are fine here (PR #4008): their perturbations are stopped, so d/d(nondiff) is 0.
            full[i] = tree_map(strip_autodiff, full[i])
        call = JVPCall(self, full)
        out = core.bind_custom_jvp(call, call.leaves)
        return tree_unflatten(call.out_tree, out)  # type: ignore[arg-type]


class JVPCall(_Call):
    def __init__(self, f: custom_jvp, args: list[Any]) -> None:
        super().__init__(f.fun, f.nondiff_argnums, args)
        self.f = f

    def jvp_flat(self, primal_leaves: Sequence[Any], tangent_leaves: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """Run the rule: the nondiff arguments FIRST, then the tuple of primals, then the tuple of tangents."""
        assert self.f.jvp is not None
        staged = staged_output_type(lambda *xs: self.fun(*self.full_args(xs)), primal_leaves)
        # A None tangent is a known zero: a SymbolicZero for a symbolic_zeros rule, a zero array otherwise.
        symbolic = self.f.symbolic_zeros and not mutant("jvp-symbolic-zeros-instantiated")
        tangent_leaves = [t if t is not None else SymbolicZero(tangent_aval(get_aval(p))) if symbolic else zeros_like_aval(get_aval(p))
                          for p, t in zip(primal_leaves, tangent_leaves, strict=True)]
        primals = tuple(tree_unflatten(self.in_tree, list(primal_leaves)))
        tangents = tuple(tree_unflatten(self.in_tree, list(tangent_leaves)))
        if mutant("jvp-rule-static-args-last"):
            pair = self.f.jvp(primals, tangents, *self.static)
        else:
            pair = self.f.jvp(*self.static, primals, tangents)
        rule_name, f_name = getattr(self.f.jvp, "__name__", "jvp"), self.fun.__name__
        if mutant("jvp-pair-unchecked") and not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            pair = (self.fun(*self.full_args(primal_leaves)), pair)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"Custom JVP rule {rule_name} for function {f_name} must produce a pair (list or tuple of length two) "
                            f"representing primal and tangent outputs, but got {pair}.")
        out_leaves, self.out_tree = tree_flatten(pair[0])
        t_leaves, t_tree = tree_flatten(pair[1])
        if t_tree != self.out_tree and not mutant("jvp-tangent-structure-unchecked"):
            raise TypeError(f"Custom JVP rule {rule_name} for function {f_name} must produce primal and tangent outputs with "
                            f"equal container (pytree) structures, but got {self.out_tree} and {t_tree} respectively.")
        if staged is not None:
            _check_primal_type("JVP rule", rule_name, f_name, "custom_jvp", staged, self.out_tree, out_leaves)
        check_tangent_types(out_leaves, t_leaves)
        return out_leaves, [None if isinstance(t, SymbolicZero) else t for t in t_leaves]  # None: a known zero


def check_tangent_types(primals: Sequence[Any], tangents: Sequence[Any]) -> None:
    """Each tangent output has its primal output's tangent type: the same shape, and the dtype (float0 for integers)."""
    if mutant("jvp-tangent-aval-unchecked"):
        return
    p_avals = [_strong(get_aval(p)) for p in primals]
    expected = [tangent_aval(a) for a in p_avals]
    got = [_strong(t.aval if isinstance(t, SymbolicZero) else get_aval(t)) for t in tangents]
    if all(e == g for e, g in zip(expected, got, strict=True)):
        return
    if len(expected) == 1:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes. "
                        f"Expected {expected[0].str_short()} (tangent type of {p_avals[0].str_short()}) but got {got[0].str_short()}.")
    lines = [f"  primal {p.str_short()} with tangent {g.str_short()}, expecting tangent {e.str_short()}"
             for p, e, g in zip(p_avals, expected, got, strict=True) if e != g]
    raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding shapes and dtypes, but got:\n" + "\n".join(lines))


def _strong(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape, a.dtype, False)


def tangent_aval(a: ShapedArray) -> ShapedArray:
    """The type of a tangent of a value of type a: the same shape, float0 for integers and booleans."""
    return ShapedArray(a.shape, a.dtype if is_float(a) else float0)


def staged_output_type(fun: Callable[..., Any], leaves: Sequence[Any]) -> tuple[PyTreeDef, list[ShapedArray]] | None:
    """Where JAX stages the function before running its rule (under jit or scan inside a transformation), its output type.

    Outside staging JAX runs the rule without the function, and checks nothing against it: None.
    """
    if not core._inline_jit:
        return None
    from jax_conformance.adapters.reference.jit import trace_to_ir

    ir, out_tree = trace_to_ir(fun, [get_aval(x) for x in leaves])
    return out_tree, [_strong(v.aval) for v in ir.outvars]


def _check_primal_type(what: str, rule_name: str, f_name: str, kind: str, staged: tuple[PyTreeDef, list[ShapedArray]],
                       out_tree: PyTreeDef, out_leaves: Sequence[Any]) -> None:
    """The rule's primal output has the function's pytree structure, shapes and dtypes (checked where JAX staged the function)."""
    if mutant("rule-primal-type-unchecked"):
        return
    tree_, avals_ = staged
    avals = [_strong(get_aval(x)) for x in out_leaves]
    ty = str(tree_unflatten(out_tree, [a.str_short() for a in avals])).replace("'", "")
    ty_ = str(tree_unflatten(tree_, [a.str_short() for a in avals_])).replace("'", "")
    if kind == "custom_jvp":
        head = (f"Custom JVP rule {rule_name} for function {f_name} must produce a pair (list or tuple of length two) where the "
                f"first element represents the primal output (equal in value to the output of the custom_jvp-decorated function {f_name}, ")
        same_tree, same_types = "and in particular of the same container/pytree structure), but ", "and in particular with leaves of the same shape/dtype), but "
        whose = "the JVP rule output's first element"
    else:
        head = (f"Custom VJP fwd rule {rule_name} for function {f_name} must produce a pair (list or tuple of length two) where the "
                f"first element represents the primal output (equal to the output of the custom_vjp-decorated function {f_name}) and the "
                "second element represents residuals (i.e. values stored from the forward pass for use on the backward pass), ")
        same_tree = same_types = "but "
        whose = "the fwd rule output's first element"
    if tree_ != out_tree:
        raise TypeError(f"{head}{same_tree}instead {whose} had container/pytree structure:\n    {ty}\n"
                        f"while the {kind}-decorated function {f_name} had output container/pytree structure:\n    {ty_}.")
    if avals != avals_:
        raise TypeError(f"{head}{same_types}instead {whose} had shapes/dtypes of:\n    {ty}\n"
                        f"while the {kind}-decorated function {f_name} had output shapes/dtypes of:\n    {ty_}")


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """`jax.custom_derivatives.zero_from_primal`: the zero tangent of each leaf (float0 for integer leaves)."""
    def zero(x: Any) -> Any:
        aval = _strong(get_aval(x))
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

    def fwd_flat(self, leaves: Sequence[Any], perturbed: Sequence[bool] | None = None) -> tuple[list[Any], Any]:
        outs, res = self.call.fwd_flat(self._wrap(leaves), perturbed)
        return self.trace.unwrap(outs), self.trace.unwrap(res)

    def bwd_flat(self, res: Any, ct_leaves: Sequence[Any]) -> list[Any]:
        # The backward pass runs after the vmap has returned: batch it under a fresh vmap of the same size.
        from jax_conformance.adapters.reference.core import new_main
        from jax_conformance.adapters.reference.vmap import BatchTrace, BatchTracer, _is_array

        with new_main(BatchTrace, self.trace.axis_size) as main:
            trace = BatchTrace(main)
            res = tree_map(lambda x: BatchTracer(trace, x, 0) if _is_array(x) else x, res)
            return trace.unwrap(self.call.bwd_flat(res, self._wrap(ct_leaves, trace)))

    def jvp_flat(self, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        outs, touts = self.call.jvp_flat(self._wrap(primals), self._wrap(tangents))
        return self.trace.unwrap(outs), self.trace.unwrap(touts)

    def batched(self, trace: Any) -> BatchedCall:
        return BatchedCall(self, trace)


# ---------------------------------------------------------------- closure_convert


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """`jax.closure_convert`: fun with its closed-over Tracers hoisted into extra trailing arguments."""
    from jax_conformance.adapters.reference.jit import eval_ir, trace_to_ir

    leaves, in_tree = tree_flatten(example_args)
    ir, out_tree = trace_to_ir(lambda *flat: fun(*tree_unflatten(in_tree, list(flat))), [get_aval(x) for x in leaves])
    hoist = [i for i, c in enumerate(ir.consts) if isinstance(c, Tracer) and is_float(get_aval(c))]

    def converted(*args: Any) -> Any:
        n = len(args) - len(hoist)  # the hoisted values come last; the rest must look like the example arguments
        consts = list(ir.consts)
        for i, value in zip(hoist, args[n:], strict=True):
            consts[i] = value
        flat, tree = tree_flatten(tuple(args[:n]))
        if tree != in_tree:
            if not mutant("closure-convert-structure-unchecked"):
                raise TypeError("The inputs to the closure produced by closure_convert must have the same Pytree structure as the "
                                f"example arguments passed when closure_convert was called. Expected {in_tree}, but got {tree}")
            flat = flat[:in_tree.num_leaves]
        return tree_unflatten(out_tree, eval_ir(ir, consts, flat))

    return converted, [ir.consts[i] for i in hoist]


# ---------------------------------------------------------------- jax.checkpoint


_remat_depth: list[int] = []  # one entry per jax.checkpoint running inside a transformation


def checkpoint(fun: Callable[..., Any] | None = None, **_options: Any) -> Any:
    """`jax.checkpoint` / `jax.remat`: recomputation changes no value, so the reference calls fun as is
    (recording that it runs staged, which changes what an optimize_remat custom_vjp returns)."""
    if fun is None:
        return lambda f: checkpoint(f, **_options)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if len(core.trace_stack) <= 1:
            return fun(*args, **kwargs)
        _remat_depth.append(len(core.trace_stack))
        try:
            return fun(*args, **kwargs)
        finally:
            _remat_depth.pop()

    return wrapped
