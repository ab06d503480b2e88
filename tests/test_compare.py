"""The one value comparer and raises/warns matcher (conformance/compare.py): each caller's rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from jax_conformance.compare import (
    Branches,
    Tolerance,
    WarnsItem,
    category_named,
    close,
    message_matches,
    walk,
    wanted,
)

SPEC = Tolerance(1e-6)  # a spec's `value`: NumPy's isclose
DIFF = Tolerance(1e-6, 1e-9, scale="larger", exact_integers=False)
CHECK = Tolerance(1e-4, scale="expected_max")


@pytest.mark.parametrize(
    ("actual", "expected", "tol", "agree"),
    [
        ([1.0, 2.0], [1.0, 2.0 + 1e-6], SPEC, True),
        ([1.0], [1.1], SPEC, False),
        ([math.nan, math.inf], [math.nan, math.inf], SPEC, True),
        ([1.0], [math.inf], SPEC, False),
        ([math.inf], [1.0], DIFF, False),
        ([1 + 2j], [1 + 2j], SPEC, True),
        ([1000000], [1000001], SPEC, False),  # integers exactly
        ([1000000], [1000001], DIFF, True),  # integers within the tolerance
        ([True], [1], SPEC, True),
        ([True], [1], DIFF, False),  # a boolean agrees only with a boolean
        ([1.0, 2.0], [1.0], SPEC, False),  # another shape
        ([0.0], [1e-5], CHECK, True),  # scale max(1, largest expected): an absolute floor
        ([0.0], [1e-5], SPEC, False),
        ([2.0001e4], [2.0e4], CHECK, True),
    ],
)
def test_close_keeps_each_callers_rule(
    actual: list[object], expected: list[object], tol: Tolerance, agree: bool
) -> None:
    assert close(np.asarray(actual), expected, tol) is agree


def test_close_larger_scale_is_symmetric_where_expected_is_not() -> None:
    tol = Tolerance(0.1, scale="larger")
    assert close([1.0], [0.9], tol) and close([0.9], [1.0], tol)
    assert close([1.0], [0.9], Tolerance(0.1)) is False
    assert close([0.9], [1.0], Tolerance(0.1))


def test_close_raises_on_strings() -> None:
    with pytest.raises(TypeError):
        close([1.0], ["abc"], SPEC)


def _plain(value: object) -> Branches[object] | None:
    if isinstance(value, dict):
        return Branches("dict", list(value.items()), keyed=True)
    if isinstance(value, (tuple, list)):
        return Branches(type(value).__name__, list(enumerate(value)))
    return None


def test_walk_pairs_leaves_and_stops_where_structures_part() -> None:
    pairs = list(walk((1, {"a": 2, "b": [3]}), (1, {"b": [3, 4], "a": 5}), _plain, "result"))
    assert pairs == [
        ("result[0]", 1, 1),
        ("result[1]['a']", 2, 5),  # a keyed pair by key, not by position
        ("result[1]['b']", [3], [3, 4]),  # lists of another length do not line up
    ]
    assert list(walk((1,), [1], _plain)) == [("", (1,), [1])]  # a tuple is no list


def test_matcher_by_category_pattern_and_count() -> None:
    seen = [(DeprecationWarning, "x is deprecated"), (UserWarning, "y")]
    item = WarnsItem.of({"category": "DeprecationWarning", "match": "deprec", "count": 1})
    hits = item.hits(seen, lambda c: issubclass(c, DeprecationWarning))
    assert hits == [seen[0]] and item.holds(len(hits))
    assert not WarnsItem("Warning", count=1).holds(2)
    assert WarnsItem("Warning").holds(2) and not WarnsItem("Warning").holds(0)
    assert message_matches(None, "anything") and not message_matches("^x$", "xy")
    assert wanted("TypeError", "rank") == "TypeError matching 'rank'"


@pytest.mark.parametrize(
    ("got", "want", "is_a"),
    [
        ("UserWarning", "Warning", True),
        ("DeprecationWarning", "UserWarning", False),
        ("Warning", "UserWarning", False),  # a base is not its subclass
        ("jax._src.dtypes.SomeWarning", "UserWarning", True),  # not importable here: a UserWarning
        ("jax._src.dtypes.SomeWarning", "SomeWarning", True),
        ("jax._src.dtypes.SomeWarning", "DeprecationWarning", False),
        ("FutureWarning", "jax.FutureWarning", True),
    ],
)
def test_category_named_by_public_names(got: str, want: str, is_a: bool) -> None:
    assert category_named(got, want) is is_a
