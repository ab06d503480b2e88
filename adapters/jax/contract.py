"""The contract's checks inside one mode's process: `python -m jax_conformance.adapters.jax.contract`.

Started by the parent (`jax_conformance.contract.engine`) with the mode's environment
(`Mode.environ()`), so JAX starts in that mode. Either one check from the command line

    python -m jax_conformance.adapters.jax.contract mylib.ops:clipped_sqrt --args "jnp.array([0.5, 2.0])" [--nondiff 1]

or many from a request file (`--request FILE`, JSON: {"checks": [...]}, what the parent writes). The
result is one `contract` record in `--results FILE` (else one JSON line on stdout; the user's code
prints to stderr while it runs), with each
item's outcome: pass, fail (with failure lines), n/a (with why) or blocked (by the item that failed
first). Each item is one `ItemCheck` class judging a `Subject` (the target with its arguments);
`CHECKS` holds them in the order of `items.ITEMS`, and `judge` runs them. The JAX-facing side of
`jax_conformance.contract`, so it lives among the adapters (only adapters/ import JAX).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import math
import os
import sys
import traceback
import warnings
from collections.abc import Callable

import jax  # noqa: E402  (this module runs in the mode's process: JAX starts in the mode's environment)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax_conformance import compare
from jax_conformance.adapters import COMPILE_CACHE_ENV
from jax_conformance.adapters.jax import compile_cache_options, rule_finder
from jax_conformance.adapters.jax.differences import NotDifferentiable, derivative_along
from jax_conformance.compare import Tolerance
from jax_conformance.contract import items
from jax_conformance.contract.items import BLOCKED, FAIL, ITEMS, NA, PASS
from jax_conformance.contract.wire import ArgWire, CheckRequest, SentArray, decode_pickle
from jax_conformance.records import (
    CheckBody,
    CheckHead,
    CheckRecord,
    ContractRecord,
    ItemRecord,
    ModeInfo,
    ModeOutput,
    ResultsWriter,
)
from numpy.typing import DTypeLike

# A user's value: an argument, an output, a tangent or a cotangent. A pytree whose leaves are
# whatever the user's function takes and gives (JAX or NumPy arrays, Python scalars, tracers, other
# objects); only handed to JAX, or looked at leaf by leaf after asking what the leaf is (hasattr).
PyTree = object

# The items whose failure makes a later failure of a derivative computation that item's consequence.
GATES = tuple(
    item.id
    for item in (
        items.X64_NO_EXTRA_WARNING,
        items.RULE_FWD_PAIR,
        items.RULE_BWD_STRUCTURE,
        items.GRAD_DTYPE,
        items.PRIMAL_MATCHES_FWD,
        items.NONDIFF_HASHABLE,
    )
)
ROWS = (1.0, 0.75, 1.25)  # the scale of each row's float leaves under vmap and scan


class ItemFailure(Exception):
    """An item does not hold: where (the transform), what was expected, what came instead."""

    def __init__(self, transform: str, expected: str, actual: str):
        super().__init__(f"{transform}: expected {expected}, got {actual}")
        self.transform, self.expected, self.actual = transform, expected, actual


class NotApplicable(Exception):
    pass


# ---------------------------------------------------------------- arguments and the target


def resolve(target: str) -> object:
    """The object MODULE:QUALNAME names (the target; a function, or what fails each item)."""
    module, colon, qualname = target.partition(":")
    if not colon or not module or not qualname:
        raise ValueError(f"target {target!r}: write MODULE:FUNCTION, e.g. mylib.ops:clipped_sqrt")
    obj: object = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def namespace() -> dict[str, object]:
    return {"jax": jax, "jnp": jnp, "np": np, "lax": lax}


def decode(value: ArgWire, ns: dict[str, object]) -> PyTree:
    """An argument as the parent sent it: an expression evaluated here, in the mode, or a pickled value
    (NumPy arrays the parent made from JAX arrays become JAX arrays again)."""
    if "expr" in value:
        return eval(value["expr"], ns)  # noqa: S307  (the user's own example arguments)
    obj = decode_pickle(value["pickle"])
    return jax.tree_util.tree_map(
        lambda leaf: jnp.asarray(leaf.array) if isinstance(leaf, SentArray) else leaf,
        obj,
        is_leaf=lambda leaf: isinstance(leaf, SentArray),
    )


def _bind(
    rule: object, args: tuple[PyTree, ...], kwargs: dict[str, PyTree]
) -> tuple[tuple[PyTree, ...], dict[str, PyTree], int]:
    """The arguments as the rule's function sees them: keywords bound to positions, defaults filled;
    and how many positions were given (those filled from defaults are held constant)."""
    try:
        bound = inspect.signature(rule_finder.undecorated(rule)).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs, len(args)
    given = len(bound.args)
    bound.apply_defaults()
    return tuple(bound.args), dict(bound.kwargs), given


def _nondiff_argnums(rule: object | None) -> tuple[int, ...]:
    return tuple(
        getattr(rule, "nondiff_argnums", None) or getattr(rule, "static_argnums", None) or ()
    )


def _python_value(x: object) -> bool:
    """A non-array Python value (bool, int, float, complex, str, None): static by default."""
    return x is None or isinstance(x, (bool, int, float, complex, str))


def _finite_float(x: object) -> bool:
    return isinstance(x, float) and math.isfinite(x)


def _static_note(args: tuple[PyTree, ...], static: list[int], floats: list[int]) -> str:
    what = ", ".join(f"{i} ({type(args[i]).__name__} {args[i]!r})"[:60] for i in static)
    tail = (
        f"; the Python float(s) at {floats} are still differentiated by finite differences"
        if floats
        else ""
    )
    return (
        f"argument(s) {what} held static (non-array Python values: closed over by jit, vmap, scan "
        f"and checkpoint; pass jnp.asarray(...) to trace one){tail}"
    )


# ---------------------------------------------------------------- comparing values


def _dtype_name(dtype: DTypeLike) -> str:
    """float0 by its name (NumPy calls it void)."""
    import jax

    return "float0" if np.dtype(dtype) == np.dtype(jax.dtypes.float0) else np.dtype(dtype).name


def _flatten(tree: PyTree) -> tuple[list[PyTree], jax.tree_util.PyTreeDef]:
    return jax.tree_util.tree_flatten(tree)


def _treedef(tree: PyTree) -> jax.tree_util.PyTreeDef:
    return jax.tree_util.tree_structure(tree)


def tolerance(dtype: DTypeLike) -> float:
    """The relative tolerance for two computations of the same thing in this dtype."""
    name = np.dtype(dtype).name
    return {
        "float64": 1e-9,
        "complex128": 1e-9,
        "float32": 1e-4,
        "complex64": 1e-4,
        "float16": 1e-2,
        "bfloat16": 5e-2,
    }.get(name, 1e-4)


def fd_tolerance(dtype: DTypeLike) -> float:
    """The relative tolerance for a derivative against central finite differences in this dtype."""
    name = np.dtype(dtype).name
    return {"float64": 1e-5, "float32": 2e-2, "float16": 1e-1, "bfloat16": 2e-1}.get(name, 2e-2)


def describe(x: object) -> str:
    if x is None:
        return "None"
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        weak = " weak" if getattr(x, "weak_type", False) else ""
        text = (
            np.array2string(
                np.asarray(x, dtype=np.float64 if _inexact_real(x.dtype) else None),
                precision=6,
                threshold=6,
                separator=", ",
            )
            if np.dtype(x.dtype).name != "float0"
            else "float0"
        )
        return f"{np.dtype(x.dtype).name}{list(x.shape)}{weak} {text}"
    return f"{type(x).__name__} {x!r}"[:120]


def _inexact_real(dtype: DTypeLike) -> bool:
    try:
        return np.issubdtype(np.dtype(dtype), np.floating) or np.dtype(dtype).name == "bfloat16"
    except TypeError:
        return False


def is_float_leaf(x: object) -> bool:
    """A leaf with a real floating-point dtype (np.dtype of its .dtype is one)."""
    return hasattr(x, "dtype") and _inexact_real(x.dtype)


def dtype_of(x: object) -> np.dtype:
    """np.dtype of a leaf's .dtype (a leaf is_float_leaf accepted; else the AttributeError that
    reading its .dtype raises)."""
    if not hasattr(x, "dtype"):
        raise AttributeError(f"'{type(x).__name__}' object has no attribute 'dtype'")
    return np.dtype(x.dtype)


def shape_of(x: object) -> tuple[int, ...]:
    """np.shape of a leaf, as NumPy finds it: the leaf's own .shape (arrays, tracers), else the
    shape of the leaf as a NumPy array (Python scalars: ())."""
    if hasattr(x, "shape"):
        return x.shape
    return np.asarray(x).shape


def _callable(obj: object) -> Callable[..., object]:
    """obj when it is callable; else a function raising the TypeError calling obj raises (so a
    target, or a rule's fwd / bwd / jvp, that is no function fails each item that calls it)."""
    if callable(obj):
        return obj

    def not_callable(*args: object, **kwargs: object) -> object:
        raise TypeError(f"'{type(obj).__name__}' object is not callable")

    return not_callable


def close(a: object, b: object, rtol: float) -> bool:
    """Two computations of the same thing agree: compare.close, relative to the larger of 1 and the
    expected side's largest magnitude, on the values as float64."""
    return compare.close(
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
        Tolerance(rtol, scale="expected_max"),
    )


def compare_values(transform: str, got: PyTree, want: PyTree, rtol: float | None = None) -> None:
    """Leaf by leaf: the same structure, shape and (float leaves) values within the tolerance."""
    gl, gt = _flatten(got)
    wl, wt = _flatten(want)
    if gt != wt:
        raise ItemFailure(transform, f"structure {wt}", f"structure {gt}")
    for i, (g, w) in enumerate(zip(gl, wl, strict=True)):
        where = f"{transform} (leaf {i})" if len(wl) > 1 else transform
        if shape_of(g) != shape_of(w):
            raise ItemFailure(where, describe(w), describe(g))
        if is_float_leaf(w) and is_float_leaf(g):
            if not close(g, w, rtol if rtol is not None else tolerance(dtype_of(w))):
                raise ItemFailure(where, describe(w), describe(g))
        elif (
            hasattr(w, "dtype")
            and np.dtype(w.dtype).name != "float0"
            and not np.array_equal(np.asarray(g), np.asarray(w))
        ):
            raise ItemFailure(where, describe(w), describe(g))


# ---------------------------------------------------------------- one check


class Subject:
    """One target with its example arguments, checked item by item in this process's mode.

    `fn` is the entry point the user named (called by the transform items); `rule` is the
    custom_jvp / custom_vjp it is or reaches (rule_finder), with `rule_args` the arguments it was
    called with (the rule items call its fwd, bwd or jvp rule on them)."""

    def __init__(
        self,
        fn: object,
        args: tuple[PyTree, ...],
        kwargs: dict[str, PyTree],
        nondiff: tuple[int, ...],
    ):
        self.fn, self.kwargs = _callable(fn), kwargs
        self.notes: list[str] = []  # what the output says about how the target was checked
        direct = rule_finder.kind_of(fn)
        given = len(args)
        self.rule: object | None = fn if direct else None
        self.kind = direct or "plain"
        self.rule_args: tuple[PyTree, ...] | None = None
        self.rule_kwargs: dict[str, PyTree] = {}
        self.no_rule_args = (
            ""  # why the rule items cannot call the rule (a wrapper's rule under jit)
        )
        if direct:  # the rule's own view: keyword arguments bound to positions, defaults filled
            args, self.kwargs, given = _bind(fn, args, kwargs)
            self.rule_args, self.rule_kwargs = args, self.kwargs
        else:
            self._find_rule(args, kwargs)
        self.args = args
        # the rule's own nondiff_argnums (how fwd, bwd and the jvp rule are called)
        self.rule_nondiff = _nondiff_argnums(self.rule)
        # held constant: the positions the user names with --nondiff (and, for the rule itself, its own)
        self.nondiff = tuple(sorted(set(nondiff) | (set(self.rule_nondiff) if direct else set())))
        # non-array Python values (bool, int, float, None, str) are static too: closed over by
        # every transform; Python floats are still differentiated by the finite-differences item
        self.static = [
            i for i, a in enumerate(args[:given]) if i not in self.nondiff and _python_value(a)
        ]
        # (only those given, finite: a default such as initial=-inf is the function's own constant)
        self.float_pos = [i for i in self.static if _finite_float(args[i])]
        if self.static:
            self.notes.append(_static_note(args, self.static, self.float_pos))
        const = set(self.nondiff) | set(self.static) | set(range(given, len(args)))
        self.diff_pos = [i for i in range(len(args)) if i not in const]
        self.rule_diff_pos = [
            i for i in range(len(self.rule_args or ())) if i not in self.rule_nondiff
        ]
        self.warnings: list[str] = []  # warnings seen on the rule's path (x64.no-extra-warning)
        self.rule_errors: list[str] = []  # explicit-64-bit errors seen on the rule's path
        self.rng = np.random.default_rng(0)

    def _find_rule(self, args: tuple[PyTree, ...], kwargs: dict[str, PyTree]) -> None:
        """A wrapper: the rules one call of it reaches (a custom_vjp among them makes it a custom_vjp:
        forward mode is then not checked); the rule items are judged on the first of that kind."""
        reached, _raised = rule_finder.reached_rules(self.fn, args, kwargs)
        if not reached:
            kinds = rule_finder.traced_kinds(self.fn, args, kwargs)
            if kinds:
                self.kind = "custom_vjp" if "custom_vjp" in kinds else "custom_jvp"
                self.no_rule_args = (
                    f"its trace reaches a {self.kind} that no Python call reached (a transform "
                    "inside the wrapper, cached): check the rule itself for its fwd/bwd items"
                )
                self.notes.append(f"reaches a {self.kind} (found in its jaxpr)")
            return
        self.kind = "custom_vjp" if any(r.kind == "custom_vjp" for r in reached) else "custom_jvp"
        chosen = next(r for r in reached if r.kind == self.kind)
        self.rule = chosen.rule
        if chosen.args is None:
            self.no_rule_args = (
                f"the wrapper calls {chosen.name} under a transform (its arguments are tracers): "
                f"check {chosen.name} itself for its fwd/bwd items"
            )
        else:
            self.rule_args, self.rule_kwargs, _ = _bind(chosen.rule, chosen.args, chosen.kwargs)
        names = ", ".join(f"{r.kind} {r.name}" for r in reached)
        judged = f"; the rule items judged on {chosen.name}" if len(reached) > 1 else ""
        self.notes.append(f"a wrapper: its call reaches {names}{judged}")

    # -- the function of the differentiable arguments

    def call_at(self, values: dict[int, PyTree]) -> PyTree:
        """The entry point with the arguments at these positions replaced."""
        full = list(self.args)
        for pos, value in values.items():
            full[pos] = value
        return self.fn(*full, **self.kwargs)

    def call(self, *diff: PyTree) -> PyTree:
        return self.call_at(dict(zip(self.diff_pos, diff, strict=True)))

    def plain_call(self, *diff: PyTree) -> PyTree:
        """The entry point with every rule it reaches replaced by the function it decorates."""
        if self.rule is not self.fn:
            jax.clear_caches()  # a wrapper's inner jit traced with the rule would be reused
        with rule_finder.without_rules():
            return self.call(*diff)

    def rule_call(self) -> PyTree:
        """The rule called as the entry point called it."""
        args, kwargs = self.rule_inputs()
        return _callable(self.rule)(*args, **kwargs)

    def rule_inputs(self) -> tuple[tuple[PyTree, ...], dict[str, PyTree]]:
        """The arguments the rule was called with (NotApplicable where they are not known)."""
        if self.rule_args is None:
            raise NotApplicable(self.no_rule_args or "no rule to call")
        return self.rule_args, self.rule_kwargs

    @property
    def diff_args(self) -> tuple[PyTree, ...]:
        return tuple(self.args[i] for i in self.diff_pos)

    def cotangent(self, out: PyTree, seed: int = 1) -> PyTree:
        rng = np.random.default_rng(seed)

        def one(leaf: PyTree) -> PyTree:
            if is_float_leaf(leaf):
                return jnp.asarray(rng.uniform(0.5, 1.5, shape_of(leaf)), dtype=dtype_of(leaf))
            return np.zeros(shape_of(leaf), dtype=jax.dtypes.float0)

        return jax.tree_util.tree_map(one, out)

    def tangent(self, primal: PyTree) -> PyTree:
        """A tangent for a primal input of the jvp rule: random for float leaves, float0 zeros otherwise."""

        def one(leaf: PyTree) -> PyTree:
            if is_float_leaf(leaf):
                return jnp.asarray(self.rng.normal(size=shape_of(leaf)), dtype=dtype_of(leaf))
            if isinstance(leaf, float):
                return 0.0
            return np.zeros(shape_of(leaf), dtype=jax.dtypes.float0)

        return jax.tree_util.tree_map(one, primal)

    def vjp(
        self, f: Callable[..., PyTree], diff: tuple[PyTree, ...], seed: int = 1
    ) -> tuple[PyTree, tuple[PyTree, ...]]:
        out, pullback = jax.vjp(f, *diff)
        return out, pullback(self.cotangent(out, seed))

    # -- flat views over the float leaves, for Jacobians and finite differences

    def flat(self, with_floats: bool = False) -> tuple[Callable[[jax.Array], jax.Array], jax.Array]:
        """F(x) over the float leaves of the differentiable arguments (and, with_floats, the static
        Python floats, as 0-d arrays) flattened into one vector x0; F's outputs' float leaves, flat."""
        positions = self.diff_pos + (self.float_pos if with_floats else [])
        values = [
            self.args[i] if i in self.diff_pos else jnp.asarray(self.args[i]) for i in positions
        ]
        leaves, tree = jax.tree_util.tree_flatten(tuple(values))
        float_idx = [i for i, leaf in enumerate(leaves) if is_float_leaf(leaf)]
        if not float_idx:
            raise NotApplicable("no floating-point differentiable input")
        dtype = jnp.result_type(*[leaves[i] for i in float_idx])
        sizes = [int(np.size(leaves[i])) for i in float_idx]

        def unflat(x: jax.Array) -> tuple[PyTree, ...]:
            new, start = list(leaves), 0
            for i, size in zip(float_idx, sizes, strict=True):
                new[i] = (
                    x[start : start + size].reshape(np.shape(leaves[i])).astype(leaves[i].dtype)
                )
                start += size
            return jax.tree_util.tree_unflatten(tree, new)

        def F(x: jax.Array) -> jax.Array:
            out = self.call_at(dict(zip(positions, unflat(x), strict=True)))
            outs = [
                jnp.ravel(leaf) for leaf in jax.tree_util.tree_leaves(out) if is_float_leaf(leaf)
            ]
            if not outs:
                raise NotApplicable("no floating-point output")
            return jnp.concatenate(outs).astype(dtype)

        x0 = jnp.concatenate([jnp.ravel(jnp.asarray(leaves[i])).astype(dtype) for i in float_idx])
        return F, x0

    def rows(self) -> tuple[PyTree, ...]:
        """The differentiable arguments stacked for vmap and scan: each row's float leaves scaled."""
        return tuple(
            jax.tree_util.tree_map(
                lambda leaf: jnp.stack(
                    [
                        (leaf * s).astype(leaf.dtype) if is_float_leaf(leaf) else jnp.asarray(leaf)
                        for s in ROWS
                    ]
                ),
                arg,
            )
            for arg in self.diff_args
        )

    # -- what the rule gives

    def rule_primal_inputs(self) -> tuple[PyTree, ...]:
        args, _ = self.rule_inputs()
        if self.kind == "custom_vjp" and (
            getattr(self.rule, "symbolic_zeros", False) or getattr(self.rule, "symz", False)
        ):
            from jax.custom_derivatives import CustomVJPPrimal

            # as JAX calls fwd: each leaf wrapped, perturbed where it is a float (differentiated)
            return tuple(
                a
                if i in self.rule_nondiff
                else jax.tree_util.tree_map(lambda x: CustomVJPPrimal(x, is_float_leaf(x)), a)
                for i, a in enumerate(args)
            )
        return args

    def fwd_out(self) -> PyTree:
        if self.kind == "custom_vjp":
            return _callable(getattr(self.rule, "fwd", None))(*self.rule_primal_inputs())
        args, _ = self.rule_inputs()
        nondiff = [args[i] for i in self.rule_nondiff]
        primals = tuple(args[i] for i in self.rule_diff_pos)
        jvp = _callable(getattr(self.rule, "jvp", None))
        return jvp(*nondiff, primals, tuple(self.tangent(a) for a in primals))

    def bwd_out(self) -> PyTree:
        fwd = self.fwd_out()
        if not isinstance(fwd, (tuple, list)) or len(fwd) != 2:
            raise NotApplicable("fwd does not return a pair (rule.fwd-pair)")
        primal, res = fwd
        args, _ = self.rule_inputs()
        nondiff = [args[i] for i in self.rule_nondiff]
        return _callable(getattr(self.rule, "bwd", None))(*nondiff, res, self.cotangent(primal))

    def jacobian(
        self, with_floats: bool = False
    ) -> tuple[Callable[[jax.Array], jax.Array], jax.Array, jax.Array]:
        F, x0 = self.flat(with_floats)
        return F, x0, jax.jacrev(F)(x0)

    def per_row(self, rows: tuple[PyTree, ...]) -> tuple[list[PyTree], list[tuple[PyTree, ...]]]:
        values: list[PyTree] = []
        grads: list[tuple[PyTree, ...]] = []
        for r in range(len(ROWS)):
            row = jax.tree_util.tree_map(lambda leaf, r=r: leaf[r], rows)
            values.append(self.call(*row))
            grads.append(self.vjp(self.call, tuple(row), seed=10 + r)[1])
        return values, grads

    def row_cotangents(self, rows: tuple[PyTree, ...]) -> PyTree:
        outs = [
            self.call(*jax.tree_util.tree_map(lambda leaf, r=r: leaf[r], rows))
            for r in range(len(ROWS))
        ]
        cts = [self.cotangent(o, seed=10 + r) for r, o in enumerate(outs)]
        return jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *cts)

    def compare_rows(
        self, transform: str, got_values: PyTree, got_grads: PyTree, rows: tuple[PyTree, ...]
    ) -> None:
        values, grads = self.per_row(rows)
        for r in range(len(ROWS)):
            compare_values(
                f"{transform} (row {r})",
                jax.tree_util.tree_map(lambda leaf, r=r: leaf[r], got_values),
                values[r],
            )
            compare_values(
                f"{transform}(vjp) (row {r})",
                jax.tree_util.tree_map(lambda leaf, r=r: leaf[r], got_grads),
                grads[r],
            )


# ---------------------------------------------------------------- the items, one class each


class ItemCheck:
    """One item of the contract (`item`: its id, statement and spec cases) and how it is judged on a
    `Subject`: `check` returns a note or None when the item holds, raises `ItemFailure` when it
    does not and `NotApplicable` when it cannot be judged here."""

    item: items.Item
    judged_last = False  # judged after the others, from what they saw

    def check(self, s: Subject) -> str | None:
        raise NotImplementedError


class RuleFwdPair(ItemCheck):
    item = items.RULE_FWD_PAIR

    def check(self, s: Subject) -> str | None:
        where = "fwd" if s.kind == "custom_vjp" else "jvp rule"
        out = s.fwd_out()
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            what = (
                f"{type(out).__name__} of {len(out)}"
                if isinstance(out, (tuple, list))
                else describe(out)
            )
            raise ItemFailure(
                where,
                "a pair (primal output, "
                + ("residuals)" if s.kind == "custom_vjp" else "tangent output)"),
                what,
            )
        if s.kind == "custom_jvp":
            primal, tangent = out
            pl, pt = _flatten(primal)
            tl, tt = _flatten(tangent)
            if pt != tt:
                raise ItemFailure(where, f"tangent of structure {pt}", f"structure {tt}")
            for i, (p, t) in enumerate(zip(pl, tl, strict=True)):
                want = (
                    jax.dtypes.float0
                    if not is_float_leaf(p)
                    and hasattr(p, "dtype")
                    and not jnp.issubdtype(p.dtype, jnp.complexfloating)
                    else getattr(p, "dtype", None)
                )
                if type(t).__name__ == "SymbolicZero":
                    continue
                if shape_of(t) != shape_of(p):
                    raise ItemFailure(
                        f"{where} (output {i})",
                        f"tangent shape {shape_of(p)}",
                        f"shape {shape_of(t)}",
                    )
                if want is not None and hasattr(t, "dtype") and np.dtype(t.dtype) != np.dtype(want):
                    raise ItemFailure(
                        f"{where} (output {i})",
                        f"tangent dtype {_dtype_name(want)}",
                        _dtype_name(t.dtype),
                    )
        return None


class PrimalMatchesFwd(ItemCheck):
    item = items.PRIMAL_MATCHES_FWD

    def check(self, s: Subject) -> str | None:
        out = s.fwd_out()
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise NotApplicable("fwd does not return a pair (rule.fwd-pair)")
        want, got = s.rule_call(), out[0]
        where = "fwd" if s.kind == "custom_vjp" else "jvp rule"
        compare_values(where, got, want)
        for i, (g, w) in enumerate(
            zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True)
        ):
            if hasattr(w, "dtype") and np.dtype(getattr(g, "dtype", type(g))) != np.dtype(w.dtype):
                raise ItemFailure(
                    f"{where} (output {i})", f"dtype {np.dtype(w.dtype).name}", describe(g)
                )
            if hasattr(w, "dtype") and bool(getattr(g, "weak_type", False)) != bool(
                getattr(w, "weak_type", False)
            ):
                raise ItemFailure(
                    f"{where} (output {i})",
                    f"weak_type {bool(getattr(w, 'weak_type', False))}",
                    f"weak_type {bool(getattr(g, 'weak_type', False))}",
                )
        return None


class RuleBwdStructure(ItemCheck):
    item = items.RULE_BWD_STRUCTURE

    def check(self, s: Subject) -> str | None:
        cts = s.bwd_out()
        n = len(s.rule_diff_pos)
        inputs = [s.rule_inputs()[0][i] for i in s.rule_diff_pos]
        if not isinstance(cts, (tuple, list)) or len(cts) != n:
            what = (
                f"{type(cts).__name__} of {len(cts)}"
                if isinstance(cts, (tuple, list))
                else describe(cts)
            )
            raise ItemFailure(
                "bwd", f"a tuple of {n} cotangent{'s' * (n != 1)}, one per primal input", what
            )
        for pos, arg, ct in zip(s.rule_diff_pos, inputs, cts, strict=True):
            if ct is None:
                continue
            try:
                pairs = _treedef(arg).flatten_up_to(ct)
            except (ValueError, TypeError):
                raise ItemFailure(
                    f"bwd (cotangent {pos})",
                    f"structure {jax.tree_util.tree_structure(arg)}",
                    f"structure {jax.tree_util.tree_structure(ct)}",
                ) from None
            for leaf_in, leaf_ct in zip(jax.tree_util.tree_leaves(arg), pairs, strict=True):
                if (
                    leaf_ct is None
                    or type(leaf_ct).__name__ == "SymbolicZero"
                    or not is_float_leaf(leaf_in)
                ):
                    continue
                if shape_of(leaf_ct) != shape_of(leaf_in):
                    raise ItemFailure(
                        f"bwd (cotangent {pos})",
                        f"shape {shape_of(leaf_in)}",
                        f"shape {shape_of(leaf_ct)}",
                    )
        return None


class GradDtype(ItemCheck):
    item = items.GRAD_DTYPE

    def check(self, s: Subject) -> str | None:
        if s.kind == "custom_vjp" and s.rule_args is not None:
            cts = s.bwd_out()
            if isinstance(cts, (tuple, list)) and len(cts) == len(s.rule_diff_pos):
                inputs = [s.rule_args[i] for i in s.rule_diff_pos]
                for pos, arg, ct in zip(s.rule_diff_pos, inputs, cts, strict=True):
                    if ct is None:
                        continue
                    try:
                        pairs = _treedef(arg).flatten_up_to(ct)
                    except (ValueError, TypeError):
                        continue  # rule.bwd-structure says so
                    for leaf_in, leaf_ct in zip(jax.tree_util.tree_leaves(arg), pairs, strict=True):
                        if (
                            is_float_leaf(leaf_in)
                            and hasattr(leaf_ct, "dtype")
                            and np.dtype(leaf_ct.dtype) != np.dtype(leaf_in.dtype)
                        ):
                            raise ItemFailure(
                                f"bwd (cotangent {pos})",
                                f"dtype {np.dtype(leaf_in.dtype).name} (the input's)",
                                describe(leaf_ct),
                            )
        _, grads = s.vjp(s.call, s.diff_args)
        for pos, arg, g in zip(s.diff_pos, s.diff_args, grads, strict=True):
            for leaf_in, leaf_g in zip(
                jax.tree_util.tree_leaves(arg), jax.tree_util.tree_leaves(g), strict=False
            ):
                want = (
                    np.dtype(leaf_in.dtype)
                    if is_float_leaf(leaf_in)
                    else np.dtype(jax.dtypes.float0)
                )
                if (
                    hasattr(leaf_in, "dtype")
                    and hasattr(leaf_g, "dtype")
                    and np.dtype(leaf_g.dtype) != want
                ):
                    raise ItemFailure(
                        f"vjp (gradient {pos})",
                        f"dtype {want.name} (the input's)",
                        describe(leaf_g),
                    )
        return None


class DerivativesAgree(ItemCheck):
    item = items.DERIVATIVES_AGREE

    def check(self, s: Subject) -> str | None:
        F, x0, J = s.jacobian()
        rtol = tolerance(x0.dtype) * max(1, int(np.sqrt(x0.size)))
        y0, pullback = jax.vjp(F, x0)
        u = jnp.asarray(s.rng.uniform(0.5, 1.5, y0.shape), dtype=y0.dtype)
        v = jnp.asarray(s.rng.normal(size=x0.shape), dtype=x0.dtype)
        uJ = jnp.asarray(np.asarray(u, np.float64) @ np.asarray(J, np.float64))
        compare_values("vjp", pullback(u)[0], uJ, rtol)
        compare_values("grad", jax.grad(lambda x: jnp.vdot(F(x), u))(x0), uJ, rtol)
        if s.kind == "custom_vjp":
            return "jvp and jacfwd: n/a for custom_vjp"
        Jv = jnp.asarray(np.asarray(J, np.float64) @ np.asarray(v, np.float64))
        compare_values("jvp", jax.jvp(F, (x0,), (v,))[1], Jv, rtol)
        compare_values("jacfwd", jax.jacfwd(F)(x0), J, rtol)
        return None


class DerivativesFiniteDifferences(ItemCheck):
    item = items.DERIVATIVES_FINITE_DIFFERENCES

    def check(self, s: Subject) -> str | None:
        note = None
        try:
            F, x0, J = s.jacobian(with_floats=bool(s.float_pos))
        except NotApplicable:
            raise
        except Exception as exc:
            if not s.float_pos:
                raise
            F, x0, J = s.jacobian()
            note = (
                f"the Python float(s) at {s.float_pos} held constant here too: traced, they raised "
                f"{type(exc).__name__}"
            )
        v = jnp.asarray(s.rng.normal(size=x0.shape), dtype=x0.dtype)
        try:
            estimate, u = derivative_along(F, x0, v)
        except NotDifferentiable as exc:
            raise NotApplicable(str(exc)) from None
        Ju = np.asarray(J, np.float64) @ u
        transform = "jacrev (the rule)" if s.kind != "plain" else "jacrev"
        if not close(Ju, estimate, fd_tolerance(x0.dtype)):
            raise ItemFailure(
                transform,
                f"J·u = {describe(jnp.asarray(estimate, dtype=x0.dtype))} (central differences, "
                "Richardson-extrapolated, along u)",
                describe(jnp.asarray(Ju, dtype=x0.dtype)),
            )
        return note


class TransformsJit(ItemCheck):
    item = items.TRANSFORMS_JIT

    def check(self, s: Subject) -> str | None:
        compare_values("jit", jax.jit(s.call)(*s.diff_args), s.call(*s.diff_args))
        _, want = s.vjp(s.call, s.diff_args)
        compare_values("jit(vjp)", jax.jit(lambda *d: s.vjp(s.call, d)[1])(*s.diff_args), want)
        compare_values("vjp(jit)", s.vjp(jax.jit(s.call), s.diff_args)[1], want)
        return None


class TransformsVmap(ItemCheck):
    item = items.TRANSFORMS_VMAP

    def check(self, s: Subject) -> str | None:
        rows = s.rows()
        cts = s.row_cotangents(rows)

        def pull(d: tuple[PyTree, ...], ct: PyTree) -> PyTree:
            out, pullback = jax.vjp(s.call, *d)
            return pullback(jax.tree_util.tree_map(jnp.asarray, ct) if ct is not None else ct)

        values = jax.vmap(s.call)(*rows)
        grads = jax.vmap(pull)(tuple(rows), cts)
        s.compare_rows("vmap", values, grads, rows)
        return None


class TransformsScan(ItemCheck):
    item = items.TRANSFORMS_SCAN

    def check(self, s: Subject) -> str | None:
        rows = s.rows()
        cts = s.row_cotangents(rows)

        def scanned(*stacked: PyTree) -> PyTree:
            return lax.scan(lambda c, d: (c, s.call(*d)), None, tuple(stacked))[1]

        values = scanned(*rows)
        _, pullback = jax.vjp(scanned, *rows)
        grads = pullback(cts)
        s.compare_rows("scan", values, grads, rows)
        return None


class TransformsCheckpoint(ItemCheck):
    item = items.TRANSFORMS_CHECKPOINT

    def check(self, s: Subject) -> str | None:
        f = jax.checkpoint(s.call)
        compare_values("checkpoint", f(*s.diff_args), s.call(*s.diff_args))
        compare_values(
            "vjp(checkpoint)",
            s.vjp(f, s.diff_args)[1],
            s.vjp(s.call, s.diff_args)[1],
        )
        return None


class TransformsSecondOrder(ItemCheck):
    item = items.TRANSFORMS_SECOND_ORDER

    def check(self, s: Subject) -> str | None:
        F, x0 = s.flat()
        y0 = F(x0)
        u = jnp.asarray(s.rng.uniform(0.5, 1.5, y0.shape), dtype=y0.dtype)
        w = jnp.asarray(s.rng.normal(size=x0.shape), dtype=x0.dtype)
        v = jnp.asarray(s.rng.normal(size=x0.shape), dtype=x0.dtype)

        # <w, (vjp of F at x)(u)>: a scalar that is a first derivative
        def S(x: jax.Array) -> jax.Array:
            return jnp.vdot(jax.vjp(F, x)[1](u)[0], w)

        # The first derivative alone: its error is a first-order finding (failed, or blocked by a gate).
        S(x0)
        try:
            hv = jax.grad(S)(x0)
        except Exception as exc:  # noqa: BLE001
            raise NotApplicable(
                f"the rule is not differentiable again (grad of grad raised "
                f"{type(exc).__name__}: {_message(exc)})"
            ) from None
        try:
            along, direction = derivative_along(S, x0, v)
        except NotDifferentiable as exc:
            raise NotApplicable(str(exc)) from None
        got = float(np.vdot(np.asarray(hv, np.float64), direction))
        if not close(got, along, 2 * fd_tolerance(x0.dtype)):
            raise ItemFailure(
                "grad(grad)",
                f"{float(along):.6g} (central differences of the gradient along u)",
                f"{got:.6g}",
            )
        return None


class X64NoExtraWarning(ItemCheck):
    item = items.X64_NO_EXTRA_WARNING
    judged_last = True

    def check(self, s: Subject) -> str | None:
        rule_warnings = list(dict.fromkeys(s.warnings))
        plain: list[str] = []
        plain_error = ""
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                s.plain_call(*s.diff_args)
                s.vjp(s.plain_call, s.diff_args)
                jax.jit(lambda *d: s.vjp(s.plain_call, d)[1])(*s.diff_args)
            except Exception as exc:  # noqa: BLE001
                plain_error = f"{type(exc).__name__}: {_message(exc)}"
            plain = [f"{w.category.__name__}: {w.message}" for w in seen]
        extra = [w for w in rule_warnings if w not in plain]
        if extra:
            raise ItemFailure(
                "rule", "no warning plain autodiff of the function does not give", extra[0][:300]
            )
        if s.rule_errors and not plain_error:
            raise ItemFailure(
                "rule",
                "no error plain autodiff of the function does not raise",
                s.rule_errors[0][:300],
            )
        return None


class NondiffHashable(ItemCheck):
    item = items.NONDIFF_HASHABLE

    def check(self, s: Subject) -> str | None:
        args, _ = s.rule_inputs()
        held = sorted(set(s.rule_nondiff) | (set(s.nondiff) if s.rule is s.fn else set()))
        if not held:
            raise NotApplicable("no nondiff arguments")
        for i in held:
            arg = args[i] if i < len(args) else None
            if isinstance(arg, jax.Array):
                if s.kind == "custom_vjp":
                    raise ItemFailure(
                        f"nondiff argument {i}", "a hashable non-array value", describe(arg)
                    )
                continue
            try:
                hash(arg)
            except TypeError:
                raise ItemFailure(
                    f"nondiff argument {i}",
                    "a hashable value",
                    f"unhashable {type(arg).__name__} {arg!r}"[:120],
                ) from None
        return None


CHECKS: tuple[ItemCheck, ...] = (
    RuleFwdPair(),
    PrimalMatchesFwd(),
    RuleBwdStructure(),
    GradDtype(),
    DerivativesAgree(),
    DerivativesFiniteDifferences(),
    TransformsJit(),
    TransformsVmap(),
    TransformsScan(),
    TransformsCheckpoint(),
    TransformsSecondOrder(),
    X64NoExtraWarning(),
    NondiffHashable(),
)


# ---------------------------------------------------------------- judging


def judge(s: Subject) -> CheckBody:
    """Every item of `CHECKS` on the subject, in order, those `judged_last` after the others (from
    the warnings they saw), then the gates' blocking."""
    results: dict[str, ItemRecord] = {}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for c in CHECKS:
            if s.kind not in c.item.kinds:
                results[c.item.id] = {
                    "status": NA,
                    "note": f"not for a {s.kind} function (only a {' or '.join(c.item.kinds)})",
                }
            elif not c.judged_last:
                results[c.item.id] = attempt(s, c)
        s.warnings = [f"{w.category.__name__}: {w.message}" for w in seen]
    for c in CHECKS:
        if c.judged_last:
            results[c.item.id] = (
                attempt(s, c)
                if s.kind != "plain"
                else {"status": NA, "note": "no rule to compare with"}
            )
    block(results)
    body: CheckBody = {
        "kind": s.kind,
        "nondiff": list(s.nondiff),
        "items": [{"id": item.id, **results[item.id]} for item in ITEMS],
    }
    if s.notes:
        body["notes"] = s.notes
    return body


def attempt(s: Subject, check: ItemCheck) -> ItemRecord:
    """One item's outcome: pass (with the check's note), n/a, fail, or fail raised (a transform
    that raised is the item's finding; an explicit-64-bit error is kept for x64.no-extra-warning)."""
    try:
        note = check.check(s)
    except NotApplicable as exc:
        return {"status": NA, "note": str(exc)}
    except ItemFailure as exc:
        return {
            "status": FAIL,
            "failures": [
                {"transform": exc.transform, "expected": exc.expected, "actual": exc.actual}
            ],
        }
    except Exception as exc:  # noqa: BLE001  (a transform that raises is the item's finding)
        text = f"{type(exc).__name__}: {_message(exc)}"
        if _is_x64_error(exc):
            s.rule_errors.append(text)
        return {
            "status": FAIL,
            "raised": True,
            "failures": [{"transform": check.item.id, "expected": "no error", "actual": text}],
        }
    passed: ItemRecord = {"status": PASS}
    if note:
        passed["note"] = note
    return passed


# Error text that names the gate whose fault it is (JAX's own messages), checked in this order.
CAUSES = (
    ("must produce primal and tangent outputs", items.RULE_FWD_PAIR.id),
    ("Custom JVP rule must produce", items.RULE_FWD_PAIR.id),
    ("fwd rule must", items.RULE_FWD_PAIR.id),
    ("bwd rule must produce an output with", items.RULE_BWD_STRUCTURE.id),
    ("bwd rule must", items.RULE_BWD_STRUCTURE.id),
    ("hashable", items.NONDIFF_HASHABLE.id),
)


def block(results: dict[str, ItemRecord]) -> None:
    """A derivative computation that raised because a gate failed (a jvp rule's tangent dtype, a bwd
    of the wrong structure, an explicit-64-bit error) is that gate's finding: the item is blocked
    by the gate that is its cause, not failed."""
    failed = [g for g in GATES if results[g]["status"] == FAIL]
    if not failed:
        return
    judged = dict(results)  # as judged, before any is blocked
    for item in ITEMS:
        res = judged[item.id]
        if res["status"] != FAIL or not res.get("raised"):
            continue
        actual = res["failures"][0]["actual"]
        cause = _cause(actual, failed, judged)
        if cause is None or cause == item.id:
            continue
        results[item.id] = {"status": BLOCKED, "note": f"blocked by {cause}: {actual}"}


def _cause(actual: str, failed: list[str], results: dict[str, ItemRecord]) -> str | None:
    """The failed gate an error is the consequence of: the gate its text names, else the gate that
    raised the same error, else the first gate that failed by judgement (not the x64 one, whose
    failure is a warning or an error of its own kind), else the first that failed."""
    x64 = items.X64_NO_EXTRA_WARNING.id
    named = [g for text, g in CAUSES if text in actual and g in failed]
    if "not available" in actual and "64" in actual and x64 in failed:
        named.insert(0, x64)
    if named:
        return named[0]
    same = [g for g in failed if results[g]["failures"][0]["actual"] == actual]
    direct = [g for g in failed if not results[g].get("raised") and g != x64]
    found = same or direct or failed
    return found[0] if found else None


def _message(exc: BaseException) -> str:
    """The exception's whole text (JAX's later lines often say what differs), lines after the first
    indented, at most 2000 characters."""
    text = "\n      ".join(ln.rstrip() for ln in str(exc).strip().splitlines() if ln.strip())
    return text if len(text) <= 2000 else text[:1997] + "..."


def _is_x64_error(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, ValueError) and "not available" in text and ("64" in text)


# ---------------------------------------------------------------- the process


def _jax_flag(name: str) -> object:
    """A flag's value as `jax.config.<name>` reads it (a property JAX adds to its Config class at
    import, which type checkers do not see)."""
    return getattr(jax.config, name)


def mode_info() -> ModeInfo:
    return {
        "jax_version": jax.__version__,
        "x64": bool(_jax_flag("jax_enable_x64")),
        "explicit_x64_dtypes": os.environ.get("JAX_EXPLICIT_X64_DTYPES", "warn"),
        "backend": jax.default_backend(),
    }


def upgrade_flags() -> list[str]:
    """JAX's upgrade flags still False by default (what `--modes +upcoming` sets): JAX marks one by
    appending UPGRADE_BOOL_HELP to its help text (as adapters/jax reads its flag table)."""
    from jax._src import config as jax_config

    holders: dict[str, object] = getattr(jax_config.config, "_value_holders", {})
    meta: dict[str, object] = getattr(jax_config.config, "meta", {})  # name -> (type, args, kwargs)
    marker = str(getattr(jax_config, "UPGRADE_BOOL_HELP", "") or "")
    out = []
    for name, holder in holders.items():
        entry = meta.get(name, (None, [], {}))
        options = (entry[2] if isinstance(entry, tuple) else None) or {}
        help_text = (
            str(options.get("help", "")) if name in meta and isinstance(options, dict) else ""
        )
        if (
            marker
            and marker in help_text
            and name.upper() not in os.environ
            and getattr(holder, "value", None) is False
        ):
            out.append(name)
    return sorted(out)


def share_compiled_programs() -> None:
    """Point JAX's persistent compilation cache at the directory the parent gave every mode
    ($JAX_CONFORMANCE_COMPILE_CACHE), as `run`'s modes do: modes that lower a program alike compile
    it once. Not where the user's environment configures the cache, or this release lacks an option."""
    cache_dir = os.environ.get(COMPILE_CACHE_ENV)
    if not cache_dir:
        return
    options = compile_cache_options(cache_dir)
    from jax._src import config as jax_config

    holders = getattr(jax_config.config, "_value_holders", {})
    if any(name not in holders or name.upper() in os.environ for name in options):
        return
    for name, value in options.items():
        jax.config.update(name, value)


def misuse(checks: list[CheckRequest]) -> list[list[str]]:
    """[label, problem] for each check whose target does not resolve or whose arguments do not fit
    it (contract_usage): asked first in the first mode's process, so that a usage error costs no
    process of its own and no item is judged; the parent makes it a usage error (exit 2)."""
    from jax_conformance.adapters.jax import contract_usage  # it imports this module

    found = [(c.get("label") or c["target"], contract_usage.problem(c)) for c in checks]
    return [[label, why] for label, why in found if why]


def run_one(spec: CheckRequest) -> CheckRecord:
    ns = namespace()
    head: CheckHead = {"target": spec["target"], "label": spec.get("label") or spec["target"]}
    try:
        fn = resolve(spec["target"])
        args = tuple(decode(a, ns) for a in spec.get("args", []))
        kwargs = {k: decode(v, ns) for k, v in (spec.get("kwargs") or {}).items()}
        kwargs_expr = spec.get("kwargs_expr")
        if kwargs_expr:
            kwargs.update(eval(kwargs_expr, ns))  # noqa: S307
        subject = Subject(fn, args, kwargs, tuple(spec.get("nondiff", [])))
    except Exception as exc:  # noqa: BLE001  (the target or its arguments: no item is judged)
        return {
            **head,
            "error": f"{type(exc).__name__}: {_message(exc)}",
            "traceback": traceback.format_exc(limit=-3),
        }
    return {**head, **judge(subject)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_conformance.adapters.jax.contract")
    parser.add_argument("target", nargs="?", help="MODULE:FUNCTION")
    parser.add_argument(
        "--args", action="append", default=[], help="one positional argument, a Python expression"
    )
    parser.add_argument(
        "--kwargs", default=None, help="a Python expression giving a dict of keyword arguments"
    )
    parser.add_argument("--nondiff", action="append", type=int, default=[])
    parser.add_argument("--request", help="a JSON file {'checks': [...]} (what the parent writes)")
    parser.add_argument(
        "--results",
        help="write the output as a `contract` record there (else one JSON line on stdout)",
    )
    parser.add_argument("--list-upgrade-flags", action="store_true")
    parser.add_argument(
        "--check-usage",
        action="store_true",
        help="first the usage errors (the first mode's process: in the others, arguments that do "
        "not work there are that mode's ERROR)",
    )
    opts = parser.parse_args(argv)
    if opts.list_upgrade_flags:
        print(json.dumps({"upgrade_flags": upgrade_flags(), **mode_info()}))
        return 0
    if opts.request:
        with open(opts.request, encoding="utf-8") as f:
            checks: list[CheckRequest] = json.load(f)["checks"]
    elif opts.target:
        checks = [
            {
                "target": opts.target,
                "args": [{"expr": a} for a in opts.args],
                "kwargs_expr": opts.kwargs,
                "nondiff": opts.nondiff,
            }
        ]
    else:
        parser.error("a target MODULE:FUNCTION or --request FILE")
    sys.path.insert(0, os.getcwd())
    share_compiled_programs()
    results: list[CheckRecord] = []
    with contextlib.redirect_stdout(sys.stderr):
        usage = misuse(checks) if opts.check_usage else []
        for spec in checks if not usage else ():
            results.append(run_one(spec))
    output: ModeOutput = {"contract": 1, **mode_info(), "results": results}
    if usage:
        output["usage"] = usage
    if opts.results:
        record: ContractRecord = {"record": "contract", "output": output}
        writer = ResultsWriter(opts.results)
        writer.write(record)
        writer.close()
    else:
        print(json.dumps(output, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
