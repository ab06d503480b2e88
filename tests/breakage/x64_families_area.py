"""The breakages of tests/breakage/x64_families.py over specs/x64/families.yaml, part of the x64
area (tests/breakage/x64_area.py): one per family, each proving that a wrong cell of its table
fails with the cell named while its neighbours pass."""

from __future__ import annotations

from tests.breakage.harness import OFF_WARN, Breakage

X = "x64.families"
X64_FAMILY_BREAKAGES = (
    Breakage(  # reductions
        "tests.breakage.x64_families:CumsumPromotesInts",
        OFF_WARN,
        (f"{X}.reductions[cumsum|int8]",),
        (f"{X}.reductions[cumsum|int16]", f"{X}.reductions[sum|int8]"),
    ),
    Breakage(  # NumPy 64-bit inputs without a dtype
        "tests.breakage.x64_families:AsarrayWarnsOnNumpy64",
        OFF_WARN,
        (f"{X}.numpy-inputs[asarray|int64]",),
        (f"{X}.numpy-inputs[asarray|float64]", f"{X}.numpy-inputs[array|int64]"),
    ),
    Breakage(  # the int32 boundary
        "tests.breakage.x64_families:ArrayWrapsOverflow",
        OFF_WARN,
        (f"{X}.int32-boundary[array|2147483648]", f"{X}.int32-boundary[array|-2147483649]"),
        (f"{X}.int32-boundary[array|2147483647]", f"{X}.int32-boundary[asarray|2147483648]"),
    ),
    Breakage(  # switching x64 on
        "tests.breakage.x64_families:EnableX64OuterWins",
        OFF_WARN,
        (f"{X}.switch[nested-true-in-false]", f"{X}.switch[nested-false-in-true]"),
        (f"{X}.switch[context-true]", f"{X}.switch[re-entered]"),
    ),
)
