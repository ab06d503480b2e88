"""Expectation checks: compare what a case did (an `Observation`) with what its expect block demands.

Runs inside a worker process (called by `jax_conformance.worker.judge`).

Each failed check is a `Mismatch` that says what happened and what should have, in the
style of array-api-tests: `dtype=int64, but should be int32`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NotRequired, Protocol, TypedDict

import numpy as np
from jax_conformance.compare import (
    Branches,
    Tolerance,
    WarnsItem,
    close,
    message_matches,
    walk,
    wanted,
)
from jax_conformance.errors import SpecCodeError
from jax_conformance.spec.blocks import ExpectBlock, RaisesBlock, WarningBlock
from jax_conformance.text import VALUE_CHARS, cut, plural

# The names spec code runs with (the adapter's namespace, setup's names, a `given` case's drawn ones).
Namespace = dict[str, object]
# One warning a case raised: (category, message, filename:line).
CaughtWarning = tuple[type[Warning], str, str]


@dataclass
class Mismatch:
    """One key of the block that did not hold: its words, and what was expected and seen (JSON-ready)."""

    field: str
    message: str
    expected: object = None
    actual: object = None


@dataclass
class Observation:
    """What running a case produced."""

    result: object = None
    exception: BaseException | None = None
    warnings: list[CaughtWarning] = field(default_factory=list)
    namespace: Namespace = field(default_factory=dict)


class Resolver(Protocol):
    def resolve(self, dotted: str) -> object: ...

    def dtype_name(self, dtype: object) -> str: ...


class WarningJSON(TypedDict):
    category: str
    message: str
    where: str


class RaisedJSON(TypedDict):
    type: str
    message: str


class ObservedJSON(TypedDict):
    """What a case did, JSON-ready (a verdict's `actual`): what it raised, or its result's type, dtype
    (one per leaf for a container), shape and value (a repr where it is not a small numeric array);
    and the warnings."""

    raised: NotRequired[RaisedJSON]
    type: NotRequired[str]
    dtype: NotRequired[str | list[str | None]]
    weak_type: NotRequired[bool]
    shape: NotRequired[list[int]]
    value: NotRequired[object]  # numbers in nested lists (`_json_value`), or a repr
    warnings: NotRequired[list[WarningJSON]]
    warnings_omitted: NotRequired[int]


def short(value: object, limit: int = VALUE_CHARS) -> str:
    """A value's repr (a string itself) for a message, cut at `limit` characters."""
    return cut(value if isinstance(value, str) else repr(value), limit, "value")


def _qualname(cls: type) -> str:
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _resolve_class(resolver: Resolver, name: str, base: type) -> type:
    try:
        cls = resolver.resolve(name)
    except Exception as exc:
        raise SpecCodeError(
            f"{name!r} does not resolve in the adapter's namespace: {type(exc).__name__}: {exc}"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise SpecCodeError(f"{name!r} resolves to {cls!r}, which is not a {base.__name__} class")
    return cls


def leaves(value: object) -> list[tuple[str, object]]:
    """(path, leaf) pairs of a tuple/list/dict result; a single leaf has path ''."""
    if isinstance(value, (tuple, list)) and not hasattr(value, "dtype"):
        return [(f"[{i}]{p}", leaf) for i, item in enumerate(value) for p, leaf in leaves(item)]
    if isinstance(value, dict):
        return [(f"[{k!r}]{p}", leaf) for k, item in value.items() for p, leaf in leaves(item)]
    return [("", value)]


def check_raises(spec: RaisesBlock, obs: Observation, resolver: Resolver) -> list[Mismatch]:
    cls = _resolve_class(resolver, spec["type"], BaseException)
    pattern = spec.get("match")
    exc = obs.exception
    expected = wanted(spec["type"], pattern)
    if exc is None:
        return [
            Mismatch(
                "raises",
                f"returned {short(obs.result, 300)} without raising, but should raise {expected}",
                expected,
                "no exception",
            )
        ]
    actual = f"{_qualname(type(exc))}: {short(str(exc), 800)}"
    if not isinstance(exc, cls):
        return [
            Mismatch("raises", f"raised {actual}, but should raise {expected}", expected, actual)
        ]
    if not message_matches(pattern, str(exc)):
        return [
            Mismatch(
                "raises",
                f"raised {type(exc).__name__} whose message does not match {pattern!r}: {short(str(exc), 800)}",
                expected,
                actual,
            )
        ]
    return []


def _warning_text(warnings: list[CaughtWarning]) -> str:
    return "; ".join(f"{c.__name__}: {short(m, 400)}" for c, m, _ in warnings) or "no warnings"


def _subclass_of(cls: type) -> Callable[[type], bool]:
    return lambda category: issubclass(category, cls)


def check_warns(
    spec: Literal["none"] | WarningBlock | list[WarningBlock], obs: Observation, resolver: Resolver
) -> list[Mismatch]:
    if spec == "none":
        if obs.warnings:
            return [
                Mismatch(
                    "warns",
                    f"warned {_warning_text(obs.warnings)}, but should not warn",
                    "no warnings",
                    _warning_text(obs.warnings),
                )
            ]
        return []
    problems = []
    for block in [spec] if isinstance(spec, dict) else spec:
        want = WarnsItem.of(block)
        cls = _resolve_class(resolver, want.category, Warning)
        hits = want.hits([(c, m) for c, m, _ in obs.warnings], _subclass_of(cls))
        expected = wanted(want.category, want.match)
        count = want.count
        if want.holds(len(hits)):
            continue
        if count is not None:
            problems.append(
                Mismatch(
                    "warns",
                    f"{plural(len(hits), 'warning')} {expected}, but should be exactly {count} (saw: "
                    f"{_warning_text(obs.warnings)})",
                    f"{count} x {expected}",
                    _warning_text(obs.warnings),
                )
            )
        else:
            problems.append(
                Mismatch(
                    "warns",
                    f"warned {_warning_text(obs.warnings)}, but should warn {expected}",
                    expected,
                    _warning_text(obs.warnings),
                )
            )
    return problems


def check_dtype(expected: str, obs: Observation, resolver: Resolver) -> list[Mismatch]:
    problems = []
    for path, leaf in leaves(obs.result):
        dtype = getattr(leaf, "dtype", None)
        if dtype is None:
            problems.append(
                Mismatch(
                    "dtype",
                    f"result{path} is {type(leaf).__name__} {short(leaf, 200)} with no dtype, but "
                    f"should have dtype {expected}",
                    expected,
                    type(leaf).__name__,
                )
            )
            continue
        name = resolver.dtype_name(dtype)
        if name != expected:
            problems.append(
                Mismatch(
                    "dtype", f"result{path}.dtype={name}, but should be {expected}", expected, name
                )
            )
    return problems


def check_weak_type(expected: bool, obs: Observation) -> list[Mismatch]:
    problems = []
    for path, leaf in leaves(obs.result):
        weak = bool(getattr(leaf, "weak_type", False))
        if weak != expected:
            problems.append(
                Mismatch(
                    "weak_type",
                    f"result{path}.weak_type={weak}, but should be {expected}",
                    expected,
                    weak,
                )
            )
    return problems


def check_shape(expected: list[int], obs: Observation) -> list[Mismatch]:
    problems = []
    for path, leaf in leaves(obs.result):
        shape = getattr(leaf, "shape", None)
        if shape is None:
            shape = np.asarray(leaf).shape  # np.shape's own fallback
        if tuple(shape) != tuple(expected):
            problems.append(
                Mismatch(
                    "shape",
                    f"result{path}.shape={tuple(shape)}, but should be {tuple(expected)}",
                    list(expected),
                    list(shape),
                )
            )
    return problems


def check_value(expected: object, obs: Observation, rtol: float, atol: float) -> list[Mismatch]:
    return _compare("result", obs.result, parse_value(expected), rtol, atol)


def parse_value(value: object) -> object:
    """YAML has no complex numbers, NaN spelled `nan` reads as a string: "1+2j", "nan", "-inf"."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            try:
                return complex(value.replace(" ", ""))
            except ValueError:
                return value
    if isinstance(value, list):
        return [parse_value(v) for v in value]
    if isinstance(value, dict):
        return {k: parse_value(v) for k, v in value.items()}
    return value


def _compare(
    path: str, actual: object, expected: object, rtol: float, atol: float
) -> list[Mismatch]:
    # A container result (tuple of gradients, dict) is compared leaf by leaf, in order.
    tol = Tolerance(rtol, atol)
    problems = []
    for where, got, want in walk(actual, expected, _value_branches, path):
        problems += _compare_leaf(where, got, want, tol)
    return problems


def _value_branches(value: object) -> Branches[object] | None:
    """A result's tuple, list or dict (not an array), or the expected value's list or dict: items
    paired with the other side's by position."""
    if isinstance(value, (tuple, list, dict)) and not hasattr(value, "dtype"):
        return Branches(
            "", list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        )
    return None


def _compare_leaf(path: str, actual: object, expected: object, tol: Tolerance) -> list[Mismatch]:
    container = _value_branches(actual)
    if container is not None:  # where the expected value is no container of as many items
        return [
            Mismatch(
                "value",
                f"{path} is a {type(actual).__name__} of {len(container.children)}, but should be "
                f"{short(expected, 300)}",
                expected,
                short(actual, 300),
            )
        ]
    if isinstance(actual, (str, bytes)):
        return [
            Mismatch(
                "value",
                f"{path} is a {type(actual).__name__} ({short(actual, 200)}), but should be {short(expected, 300)}",
                expected,
                short(actual, 300),
            )
        ]
    try:
        got = np.asarray(actual)
        want = np.asarray(expected)
    except Exception as exc:
        return [
            Mismatch(
                "value",
                f"{path} cannot be read as an array ({exc}): {short(actual, 300)}",
                expected,
                short(actual, 300),
            )
        ]
    return _compare_arrays(path, got, want, expected, tol)


def _compare_arrays(
    path: str, got: np.ndarray, want: np.ndarray, expected: object, tol: Tolerance
) -> list[Mismatch]:
    if got.shape != want.shape:
        return [
            Mismatch(
                "value",
                f"{path} has shape {got.shape}, but the expected value has shape {want.shape}: "
                f"{short(got.tolist(), 300)} vs {short(expected, 300)}",
                expected,
                _tolist(got),
            )
        ]
    try:
        ok = close(got, want, tol)
    except (TypeError, ValueError) as exc:
        return [
            Mismatch(
                "value",
                f"{path} cannot be compared with {short(expected, 200)}: {exc}",
                expected,
                _tolist(got),
            )
        ]
    if not ok:
        return [
            Mismatch(
                "value",
                f"{path}={short(_tolist(got), 300)}, but should be {short(expected, 300)} "
                f"(rtol={tol.rtol}, atol={tol.atol})",
                expected,
                _tolist(got),
            )
        ]
    return []


def _tolist(a: np.ndarray) -> object:
    try:
        return a.tolist()
    except Exception:
        return repr(a)


def check_expressions(
    exprs: str | list[str], obs: Observation, file: str, line: int
) -> list[Mismatch]:
    problems = []
    for expr in [exprs] if isinstance(exprs, str) else exprs:
        code = compile("\n" * (line - 1) + expr, file, "eval")
        ns = dict(obs.namespace)
        ns["result"] = obs.result
        try:
            ok = eval(code, ns)  # noqa: S307 - spec code runs with the user's rights, like test262 tests
        except Exception as exc:
            raise SpecCodeError(f"check {expr!r} raised {type(exc).__name__}: {exc}") from exc
        if not ok:
            problems.append(
                Mismatch(
                    "check",
                    f"check {expr!r} is false (result={short(obs.result, 300)})",
                    expr,
                    short(obs.result, 300),
                )
            )
    return problems


def check_all(
    block: ExpectBlock, obs: Observation, resolver: Resolver, file: str, line: int
) -> list[Mismatch]:
    """Every mismatch between the block and the observation; [] means the case passed."""
    problems: list[Mismatch] = []
    if "raises" in block:
        problems += check_raises(block["raises"], obs, resolver)
    elif obs.exception is not None:
        exc = obs.exception
        problems.append(
            Mismatch(
                "raises",
                f"raised {_qualname(type(exc))}: {short(str(exc), 1500)}, but should return a result",
                "no exception",
                f"{_qualname(type(exc))}: {short(str(exc), 800)}",
            )
        )
    if "warns" in block:
        problems += check_warns(block["warns"], obs, resolver)
    if obs.exception is not None:  # no result to check
        return problems
    if "dtype" in block:
        problems += check_dtype(block["dtype"], obs, resolver)
    if "weak_type" in block:
        problems += check_weak_type(block["weak_type"], obs)
    if "shape" in block:
        problems += check_shape(block["shape"], obs)
    if "value" in block:
        problems += check_value(
            block["value"], obs, float(block.get("rtol", 1e-6)), float(block.get("atol", 0.0))
        )
    if "check" in block:
        problems += check_expressions(block["check"], obs, file, line)
    return problems


def describe_observation(obs: Observation, resolver: Resolver) -> ObservedJSON:
    """A JSON-ready summary of what happened (the record's `actual`)."""
    out: ObservedJSON = {}
    if obs.exception is not None:
        out["raised"] = {
            "type": _qualname(type(obs.exception)),
            "message": short(str(obs.exception), 4000),
        }
    else:
        r = obs.result
        out["type"] = _qualname(type(r))
        ls = leaves(r)
        if len(ls) == 1:
            dtype = getattr(r, "dtype", None)
            if dtype is not None:
                try:
                    out["dtype"] = resolver.dtype_name(dtype)
                except Exception:
                    out["dtype"] = str(dtype)
            if hasattr(r, "weak_type"):
                out["weak_type"] = bool(r.weak_type)
            shape = getattr(r, "shape", None)
            if shape is not None:
                out["shape"] = list(shape)
        else:
            out["dtype"] = [_leaf_dtype(leaf, resolver) for _, leaf in ls]
        try:
            arr = np.asarray(r) if len(ls) == 1 else None
            if arr is not None and arr.size <= 64 and arr.dtype.kind in "biufc":
                out["value"] = _json_value(arr)
            elif arr is None and len(ls) <= 16:
                out["value"] = [
                    _json_value(np.asarray(leaf))
                    if np.asarray(leaf).size <= 64
                    else short(leaf, 200)
                    for _, leaf in ls
                ]
            else:
                out["value"] = short(r, 500)
        except Exception:
            out["value"] = short(r, 500)
    if obs.warnings:
        out["warnings"] = [
            {"category": _qualname(c), "message": short(m, 2000), "where": where}
            for c, m, where in obs.warnings[:20]
        ]
        if len(obs.warnings) > 20:
            out["warnings_omitted"] = len(obs.warnings) - 20
    return out


def _leaf_dtype(leaf: object, resolver: Resolver) -> str | None:
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:
        return None
    try:
        return resolver.dtype_name(dtype)
    except Exception:
        return str(dtype)


def _json_value(arr: np.ndarray) -> object:
    if arr.dtype.kind == "c":
        return (
            [[float(z.real), float(z.imag)] for z in arr.ravel()]
            if arr.ndim
            else [float(arr.real), float(arr.imag)]
        )
    value = arr.tolist()
    return _finite(value)


def _finite(value: object) -> object:
    # JSON has no NaN/inf: spell them as strings.
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
