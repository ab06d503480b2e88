"""The promotion area: the breakages of tests/breakage/promotion.py. A table's thousands of cells
are not each listed as caught (`lists_every_case=False`); these breaks prove that a wrong cell, a
weak type lost under jit and strict mode both ways fail, with the cell named."""

from __future__ import annotations

from jax_conformance.mode import Mode

from tests.breakage.harness import OFF_WARN, SPECS, Area, Breakage

PT, RT, ADD = "promotion.table.promote-types", "promotion.table.result-type", "promotion.table.add"
OFF_WARN_STRICT = Mode.from_slug("off-warn+jax_numpy_dtype_promotion=strict")
PROMOTION = Area(
    "promotion",
    (SPECS / "promotion", SPECS / "x64"),  # x64: the strict blocks of x64.promotion.explicit-floats
    (
        Breakage(
            "tests.breakage.promotion:WrongCellOffWarn",
            OFF_WARN,
            (f"{PT}[uint32|int8]", f"{PT}[int8|uint32]"),
            (f"{PT}[uint32|int16]", f"{PT}[int8|uint16]"),
        ),
        Breakage(
            "tests.breakage.promotion:WrongCellOffWarn",
            Mode.from_slug("off-allow"),
            (),
            (f"{PT}[uint32|int8]", f"{PT}[int8|uint32]"),
        ),
        Breakage(  # an extra dtype's `+` cell (the add table's nodes beyond the documented 18)
            "tests.breakage.promotion:WrongSmallFloatCell",
            Mode.from_slug("on"),
            (f"{ADD}[float8_e4m3fn|int8]", f"{ADD}[int8|float8_e4m3fn]"),
            (f"{ADD}[float8_e4m3fn|int16]", f"{ADD}[int8|float8_e5m2]"),
        ),
        Breakage(  # the `+` cells say `warns: none`: a warning from the operator alone fails them
            "tests.breakage.promotion:SpuriousAddWarning",
            Mode.from_slug("on"),
            (f"{ADD}[uint8|int8]", f"{ADD}[int8|uint8]"),
            (f"{ADD}[uint8|int16]", f"{ADD}[int8|int8]"),
        ),
        Breakage(  # one step beside the `+` table: another binary function, one pair
            "tests.breakage.promotion:MultiplyPromotesApart",
            OFF_WARN,
            ("promotion.weak.binary-functions-promote-as-add",),
            ("promotion.weak.unary-result-type", f"{ADD}[int8|uint8]"),
        ),
        Breakage(
            "tests.breakage.promotion:WeakTypeLostUnderJit",
            OFF_WARN,
            (f"{ADD}[int*|float*]", f"{ADD}[bool|int*]"),
            (f"{ADD}[int8|int16]",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooLenient",
            OFF_WARN_STRICT,
            (f"{PT}[int8|int16]", f"{RT}[float32|int32]"),
            (f"{PT}[int8|int8]",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooStrict",
            OFF_WARN_STRICT,
            (f"{PT}[int8|int*]", f"{PT}[float32|float*]"),
            (f"{PT}[int8|int8]", f"{PT}[int8|int16]"),
        ),
        # specs/x64/promotion.yaml's strict blocks: float16 + float64 (float32 once warned) must raise,
        # with both dtypes named; the weakly typed pairs strict allows still pass
        Breakage(
            "tests.breakage.promotion:StrictTooLenient",
            OFF_WARN_STRICT,
            ("x64.promotion.explicit-floats",),
            ("x64.promotion.weak-scalar-keeps-narrow-array",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooLenient",
            Mode.from_slug("on+jax_numpy_dtype_promotion=strict"),
            ("x64.promotion.explicit-floats",),
            ("x64.promotion.weak-scalar-keeps-narrow-array",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooStrict",
            Mode.from_slug("off-allow+jax_numpy_dtype_promotion=strict"),
            ("x64.promotion.explicit-floats",),
            ("x64.defaults.arange-int",),
        ),
        # specs/promotion/weak_types.yaml: each case fails under one of these
        Breakage(
            "tests.breakage.promotion:AdOutputsStrong",
            OFF_WARN,
            ("promotion.weak.ad-of-python-float",),
            ("promotion.weak.eval-shape-keeps-weak-type",),
        ),
        Breakage(
            "tests.breakage.promotion:EvalShapeDropsWeakType",
            Mode.from_slug("on"),
            ("promotion.weak.eval-shape-keeps-weak-type",),
            ("promotion.weak.ad-of-python-float",),
        ),
        Breakage(
            "tests.breakage.promotion:JitArgsMadeStrong",
            OFF_WARN,
            (
                "promotion.weak.jit-cache-splits-on-weak-type",
                "promotion.weak.python-scalars-eager-and-jit",
                "promotion.weak.jit-invariance",
            ),
            ("promotion.weak.binary-non-promotion",),
        ),
        Breakage(
            "tests.breakage.promotion:JitArgsMadeStrong",
            Mode.from_slug("on"),
            ("promotion.weak.cache-miss-explained",),
            (),
        ),
        Breakage(
            "tests.breakage.promotion:EqualWeakOperandsStrong",
            OFF_WARN_STRICT,
            (
                "promotion.weak.binary-non-promotion",
                "promotion.weak.result-type-flag",
                "promotion.weak.unary-result-type",
                "promotion.weak.unary-result-type-every-dtype",
            ),
            ("promotion.weak.reduction-dtypes",),
        ),
        Breakage(
            "tests.breakage.promotion:ReductionPromotionFlipped",
            Mode.from_slug("on"),
            ("promotion.weak.reduction-dtypes", "promotion.weak.reduction-promote-integers-false"),
            ("promotion.weak.unary-result-type",),
        ),
    ),
    ("tests.breakage.promotion",),
    lists_every_case=False,
)
