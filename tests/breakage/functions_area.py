"""The functions area: the breakages of tests/breakage/functions.py over specs/promotion/functions.yaml.
Its tables' cells are not each listed as caught (`lists_every_case=False`): each breakage proves
that one family's wrong cell fails, with the cell named, and leaves its neighbours passing."""

from __future__ import annotations

from tests.breakage.harness import OFF_WARN, SPECS, Area, Breakage

F = "promotion.functions"
FUNCTIONS = Area(
    "functions",
    (SPECS / "promotion",),
    (
        Breakage(  # jnp functions: one function, one pair
            "tests.breakage.functions:MaximumPromotesApart",
            OFF_WARN,
            (f"{F}.maximum[int8|uint8]", f"{F}.maximum[uint8|int8]"),
            (f"{F}.maximum[int8|int8]", f"{F}.minimum[int8|uint8]"),
        ),
        Breakage(  # comparisons give bool
            "tests.breakage.functions:LessGivesJoin",
            OFF_WARN,
            (f"{F}.less[int8|float32]", f"{F}.less[float32|int8]"),
            (f"{F}.less[int8|int8]", f"{F}.equal[int8|float32]"),
        ),
        Breakage(  # lax does not promote
            "tests.breakage.functions:LaxAddPromotes",
            OFF_WARN,
            (f"{F}.lax-add[int8|float32]", f"{F}.lax-add[float32|int8]"),
            (f"{F}.lax-sub[int8|float32]",),
        ),
        Breakage(  # control flow: branches of two dtypes
            "tests.breakage.functions:CondJoinsBranches",
            OFF_WARN,
            (f"{F}.control-cond[int32|float32]", f"{F}.control-cond[float32|int32]"),
            (f"{F}.control-switch[int32|float32]", f"{F}.control-cond[float*|float32]"),
        ),
    ),
    ("tests.breakage.functions",),
    lists_every_case=False,
)
