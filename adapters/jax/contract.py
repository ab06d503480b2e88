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


def _is_vjp3(fn: object) -> bool:
    """jax.custom_vjp under jax_custom_vjp3 (jax._src.hijax.custom_vjp3: f, fwd, bwd, static_argnums)."""
    return type(fn).__name__ == "custom_vjp3" and hasattr(fn, "fwd") and hasattr(fn, "bwd")


def find_rule(fn: object) -> object | None:
    """The custom_vjp / custom_jvp object the target is or wraps (through __wrapped__), or None."""
    seen = 0
    while fn is not None and seen < 10:
        if isinstance(fn, (jax.custom_vjp, jax.custom_jvp)) or _is_vjp3(fn):
            return fn
        fn = getattr(fn, "__wrapped__", None)
        seen += 1
    return None


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
    """One target with its example arguments, checked item by item in this process's mode."""

    def __init__(
        self,
        fn: object,
        args: tuple[PyTree, ...],
        kwargs: dict[str, PyTree],
        nondiff: tuple[int, ...],
    ):
        self.fn, self.kwargs = _callable(fn), kwargs
        self.rule = find_rule(fn)
        vjp = isinstance(self.rule, jax.custom_vjp) or _is_vjp3(self.rule)
        self.kind = ("custom_vjp" if vjp else "custom_jvp") if self.rule is not None else "plain"
        # the undecorated function (custom_vjp3 calls it `f`)
        self.rule_fun = _callable(
            getattr(self.rule, "fun", None) or getattr(self.rule, "f", None) or fn
        )
        # the rule's own nondiff_argnums (how fwd, bwd and the jvp rule are called) and, held constant
        # too, the positions the user names with --nondiff and those filled from defaults
        self.rule_nondiff = tuple(
            getattr(self.rule, "nondiff_argnums", None)
            or getattr(self.rule, "static_argnums", None)
            or ()
        )
        self.nondiff = tuple(sorted(set(nondiff) | set(self.rule_nondiff)))
        given = len(args)
        if (
            self.rule is not None
        ):  # the rule's own view: keyword arguments bound to positions, defaults filled
            try:
                bound = inspect.signature(self.rule_fun).bind(*args, **kwargs)
                given = len(bound.args)
                bound.apply_defaults()
                args, self.kwargs = tuple(bound.args), dict(bound.kwargs)
            except (TypeError, ValueError):
                pass
        self.args = args
        const = set(self.nondiff) | set(range(given, len(args)))
        self.diff_pos = [i for i in range(len(args)) if i not in const]
        self.rule_diff_pos = [i for i in range(len(args)) if i not in self.rule_nondiff]
        self.warnings: list[str] = []  # warnings seen on the rule's path (x64.no-extra-warning)
        self.rule_errors: list[str] = []  # explicit-64-bit errors seen on the rule's path
        self.rng = np.random.default_rng(0)

    # -- the function of the differentiable arguments

    def call(self, *diff: PyTree) -> PyTree:
        full = list(self.args)
        for pos, value in zip(self.diff_pos, diff, strict=True):
            full[pos] = value
        return self.fn(*full, **self.kwargs)

    def plain_call(self, *diff: PyTree) -> PyTree:
        full = list(self.args)
        for pos, value in zip(self.diff_pos, diff, strict=True):
            full[pos] = value
        return self.rule_fun(*full, **self.kwargs)

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

    def flat(self) -> tuple[Callable[[jax.Array], jax.Array], jax.Array]:
        leaves, tree = jax.tree_util.tree_flatten(self.diff_args)
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
            out = self.call(*unflat(x))
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
        if self.kind == "custom_vjp" and (
            getattr(self.rule, "symbolic_zeros", False) or getattr(self.rule, "symz", False)
        ):
            from jax.custom_derivatives import CustomVJPPrimal

            return tuple(
                a if i in self.rule_nondiff else CustomVJPPrimal(a, True)
                for i, a in enumerate(self.args)
            )
        return self.args

    def fwd_out(self) -> PyTree:
        if self.kind == "custom_vjp":
            return _callable(getattr(self.rule, "fwd", None))(*self.rule_primal_inputs())
        nondiff = [self.args[i] for i in self.rule_nondiff]
        primals = tuple(self.args[i] for i in self.rule_diff_pos)
        jvp = _callable(getattr(self.rule, "jvp", None))
        return jvp(*nondiff, primals, tuple(self.tangent(a) for a in primals))

    def bwd_out(self) -> PyTree:
        fwd = self.fwd_out()
        if not isinstance(fwd, (tuple, list)) or len(fwd) != 2:
            raise NotApplicable("fwd does not return a pair (rule.fwd-pair)")
        primal, res = fwd
        nondiff = [self.args[i] for i in self.rule_nondiff]
        return _callable(getattr(self.rule, "bwd", None))(*nondiff, res, self.cotangent(primal))

    def jacobian(self) -> tuple[Callable[[jax.Array], jax.Array], jax.Array, jax.Array]:
        F, x0 = self.flat()
        return F, x0, jax.jacrev(F)(x0)

    def one_sided(
        self, S: Callable[[jax.Array], jax.Array], x0: jax.Array, v: jax.Array
    ) -> tuple[np.ndarray, float]:
        """Central differences of S along v, after checking S is differentiable there (one-sided
        differences agree); returns (central difference, step)."""
        eps = float(jnp.finfo(x0.dtype).eps)
        h = eps ** (1 / 3) * max(1.0, float(jnp.max(jnp.abs(x0))))
        xp, xm = (x0 + h * v).astype(x0.dtype), (x0 - h * v).astype(x0.dtype)
        hp = np.asarray(xp, np.float64) - np.asarray(x0, np.float64)
        hm = np.asarray(x0, np.float64) - np.asarray(xm, np.float64)
        fp, f0, fm = (np.asarray(S(x), np.float64) for x in (xp, x0, xm))
        # the step actually taken along v, in this dtype
        step_p = float(
            np.vdot(hp, np.asarray(v, np.float64))
            / np.vdot(np.asarray(v, np.float64), np.asarray(v, np.float64))
        )
        step_m = float(
            np.vdot(hm, np.asarray(v, np.float64))
            / np.vdot(np.asarray(v, np.float64), np.asarray(v, np.float64))
        )
        fwd, bwd = (fp - f0) / step_p, (f0 - fm) / step_m
        scale = max(
            1.0, float(np.max(np.abs(fwd), initial=0.0)), float(np.max(np.abs(bwd), initial=0.0))
        )
        if (
            not np.all(np.isfinite(fp))
            or not np.all(np.isfinite(fm))
            or np.max(np.abs(fwd - bwd), initial=0.0) > 0.1 * scale
        ):
            raise NotApplicable(
                f"not differentiable at the example: one-sided differences {describe(jnp.asarray(fwd))} "
                f"and {describe(jnp.asarray(bwd))}"
            )
        return (fp - fm) / (step_p + step_m), h

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
        want, got = s.fn(*s.args, **s.kwargs), out[0]
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
        inputs = [s.args[i] for i in s.rule_diff_pos]
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
        if s.kind == "custom_vjp":
            cts = s.bwd_out()
            if isinstance(cts, (tuple, list)) and len(cts) == len(s.rule_diff_pos):
                inputs = [s.args[i] for i in s.rule_diff_pos]
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
        F, x0, J = s.jacobian()
        v = jnp.asarray(s.rng.normal(size=x0.shape), dtype=x0.dtype)
        central, _ = s.one_sided(F, x0, v)
        Jv = np.asarray(J, np.float64) @ np.asarray(v, np.float64)
        transform = "jacrev (the rule)" if s.kind != "plain" else "jacrev"
        if not close(Jv, central, fd_tolerance(x0.dtype)):
            raise ItemFailure(
                transform,
                f"J·v = {describe(jnp.asarray(central))} (central differences)",
                describe(jnp.asarray(Jv)),
            )
        return None


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
                f"{type(exc).__name__}: {_first_line(exc)})"
            ) from None
        central, _ = s.one_sided(S, x0, v)
        got = float(np.vdot(np.asarray(hv, np.float64), np.asarray(v, np.float64)))
        if not close(got, central, 2 * fd_tolerance(x0.dtype)):
            raise ItemFailure(
                "grad(grad)",
                f"{float(central):.6g} (central differences of the gradient)",
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
                plain_error = f"{type(exc).__name__}: {_first_line(exc)}"
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
        if not s.nondiff:
            raise NotApplicable("no nondiff arguments")
        for i in s.nondiff:
            arg = s.args[i] if i < len(s.args) else None
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
                results[c.item.id] = {"status": NA, "note": f"not for a {s.kind} function"}
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
    return {
        "kind": s.kind,
        "nondiff": list(s.nondiff),
        "items": [{"id": item.id, **results[item.id]} for item in ITEMS],
    }


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
        text = f"{type(exc).__name__}: {_first_line(exc)}"
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


def block(results: dict[str, ItemRecord]) -> None:
    """A derivative computation that raised because an earlier gate failed (a bwd of the wrong
    structure, an explicit-64-bit error) is that gate's finding: the item is blocked, not failed."""
    failed = [g for g in GATES if results[g]["status"] == FAIL]
    direct = [g for g in failed if not results[g].get("raised")]
    if not (direct or failed):
        return
    blocker = (direct or failed)[0]
    for item in ITEMS:
        res = results[item.id]
        if item.id == blocker or res["status"] != FAIL or not res.get("raised"):
            continue
        results[item.id] = {
            "status": BLOCKED,
            "note": f"blocked by {blocker}: {res['failures'][0]['actual']}",
        }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else "")[:300]


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
            "error": f"{type(exc).__name__}: {_first_line(exc)}",
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
    results: list[CheckRecord] = []
    with contextlib.redirect_stdout(sys.stderr):
        for spec in checks:
            results.append(run_one(spec))
    output: ModeOutput = {"contract": 1, **mode_info(), "results": results}
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
