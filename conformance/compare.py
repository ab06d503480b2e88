"""The one value comparer and the one raises/warns matcher.

Comparer: `walk` pairs up two trees (tuples, lists, dicts: whatever `branches` says a container is) and
yields each pair of subtrees it cannot descend into together, with its path (`result[0]['a']`);
`close` says whether two numeric values agree within a `Tolerance`. The spec's `value`
(worker/checks.py), `diff`'s two sides (differential/observe.py) and `check`'s leaves (contract/)
each keep their own rule by their `Tolerance`.

Matcher: a `raises` block or a `warns` item holds when the category is the wanted one or a subclass
(the caller says how it knows: `issubclass` in the worker, `category_named` by public names in the
parent, which imports no implementation), and `re.search` finds its `match` in the message.

Runs in any process; imports NumPy only.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np

# ---------------------------------------------------------------- comparing values


@dataclass(frozen=True)
class Tolerance:
    """How near two numeric values must be to agree.

    Two finite numbers agree when |actual - expected| <= atol + rtol * scale, where scale is
    |expected| ("expected": NumPy's isclose, for a spec's `value`), max(|actual|, |expected|)
    ("larger": two sides of which neither is the reference, `diff`), or max(1, the largest
    |expected| of the array) ("expected_max": `check`'s derivatives). Equal numbers always agree (an
    infinity agrees with itself), and so does NaN with NaN.

    `exact_integers`: True, integers and booleans compare by equality as NumPy's array_equal does
    (a boolean actual value, or two integer/boolean values; True equals 1); False, integers within
    the tolerance like floats, and a boolean agrees only with a boolean (`diff`: bool against int is
    a difference).
    """

    rtol: float
    atol: float = 0.0
    scale: Literal["expected", "larger", "expected_max"] = "expected"
    exact_integers: bool = True


def close(actual: object, expected: object, tol: Tolerance) -> bool:
    """Whether two values of one shape agree element by element within `tol` (another shape: no).

    Raises TypeError or ValueError when a value cannot be read as numbers (a string, an object)."""
    got, want = np.asarray(actual), np.asarray(expected)
    if got.shape != want.shape:
        return False
    exact = _exact_kinds(got.dtype, want.dtype)
    if tol.exact_integers and exact:
        return bool(np.array_equal(got, want))
    if not tol.exact_integers and (got.dtype.kind == "b") != (want.dtype.kind == "b"):
        return False
    wide = np.complex128 if np.iscomplexobj(got) or np.iscomplexobj(want) else np.float64
    x = got.astype(wide)
    y = np.asarray(want, dtype=np.result_type(want, 1.0))  # as np.isclose reads the expected side
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(x - y) <= tol.atol + tol.rtol * _scale(x, y, tol)
        agree = (near & np.isfinite(x) & np.isfinite(y)) | (x == y) | (np.isnan(x) & np.isnan(y))
    return bool(np.all(agree))


def _exact_kinds(got: np.dtype, want: np.dtype) -> bool:
    return got.kind in "biu" and want.kind in "biu" or got.kind == "b"


def _scale(x: np.ndarray, y: np.ndarray, tol: Tolerance) -> np.ndarray | float:
    if tol.scale == "expected":
        return np.abs(y)
    if tol.scale == "larger":
        return np.maximum(np.abs(x), np.abs(y))
    return max(1.0, float(np.max(np.abs(y), initial=0.0)))


T = TypeVar("T")


@dataclass(frozen=True)
class Branches(Generic[T]):
    """A container's children as `walk` sees them: (key, child) pairs, paired with the other tree's
    by key when `keyed` (a dict), else by position; containers of another `kind` never line up."""

    kind: str
    children: list[tuple[object, T]]
    keyed: bool = False


def walk(
    actual: T, expected: T, branches: Callable[[T], Branches[T] | None], path: str = ""
) -> Iterator[tuple[str, T, T]]:
    """Pair two trees up: (path, actual, expected) for every pair not descended into together (two
    leaves, a leaf and a container, or two containers that do not line up), in the actual tree's
    order. A child's path is its parent's with `[key!r]` appended."""
    mine, theirs = branches(actual), branches(expected)
    if mine is None or theirs is None or not _line_up(mine, theirs):
        yield path, actual, expected
        return
    others = dict(theirs.children) if mine.keyed else None
    for i, (key, child) in enumerate(mine.children):
        other = others[key] if others is not None else theirs.children[i][1]
        yield from walk(child, other, branches, f"{path}[{key!r}]")


def _line_up(a: Branches[T], b: Branches[T]) -> bool:
    if a.kind != b.kind or len(a.children) != len(b.children):
        return False
    return not a.keyed or {k for k, _ in a.children} == {k for k, _ in b.children}


# ---------------------------------------------------------------- matching raises / warns

C = TypeVar("C")


def message_matches(pattern: str | None, message: str) -> bool:
    """A block's `match` holds when re.search finds it in the message (no `match`: any message)."""
    return not pattern or re.search(pattern, message) is not None


def wanted(name: str, pattern: str | None) -> str:
    """What a block asks for, in words: `TypeError matching 'rank'`."""
    return name + (f" matching {pattern!r}" if pattern else "")


@dataclass(frozen=True)
class WarnsItem:
    """One item of a `warns` block: the category's public name, a message pattern, an exact count."""

    category: str
    match: str | None = None
    count: int | None = None

    @classmethod
    def of(cls, item: Mapping[str, object]) -> WarnsItem:
        """The item of a `warns` block as written (a spec's, or a record's `expected`)."""
        match, count = item.get("match"), item.get("count")
        return cls(
            str(item.get("category", "Warning")),
            match if isinstance(match, str) else None,
            count if isinstance(count, int) else None,
        )

    def hits(
        self, seen: Sequence[tuple[C, str]], is_category: Callable[[C], bool]
    ) -> list[tuple[C, str]]:
        """The seen (category, message) warnings this item counts: `is_category` says whether a
        category is this item's or a subclass of it."""
        return [w for w in seen if is_category(w[0]) and message_matches(self.match, w[1])]

    def holds(self, hits: int) -> bool:
        """With `count`, exactly that many hits; without, at least one."""
        return hits == self.count if self.count is not None else hits > 0


def category_named(got: str, want: str) -> bool:
    """Whether a warning class named `got` (qualified) is a `want`, by public names alone (the parent
    imports no implementation): a built-in class by issubclass; any other (JAX's own, NumPy's) is
    what its name says and, like the warnings JAX defines, a UserWarning."""
    g, w = got.rsplit(".", 1)[-1], want.rsplit(".", 1)[-1]
    if g == w or w == "Warning":
        return True
    got_class, want_class = getattr(builtins, g, None), getattr(builtins, w, None)
    if not isinstance(want_class, type):
        return False
    if isinstance(got_class, type):
        return issubclass(got_class, want_class)
    return want_class is UserWarning
