"""The families area: the breakages of tests/breakage/families.py over specs/promotion/families.yaml.

Each family's breakage flips its rule; the cells it must fail are every cell where the flip is
observable, chosen from the generated cell files by a rule stated here (never listed by hand), and
the rest are its controls:
- NumPy operands (strict mode, where a strong mixed pair is refused): every cell whose two operands
  have different dtypes with x64 off; where they have one dtype, a strong and a weak operand give
  the same strong result, so the swap cannot be seen;
- jnp.array inference: every cell but a bool input (JAX never makes a weak bool) and a weak array
  input (made by the broken jnp.asarray itself, then flipped back);
- weak under strict (the context manager ignored): every weak cell under strict whose dtype is not
  its kind's default; (promotion.py's EqualWeakOperandsStrong) every weak cell but bool; (equal
  strong operands called weak) every strong cell, bool included (the weak cells its controls);
  strict functions (ignored context): every cell whose expected outcome is a
  refusal (average with mixed weights); (strict functions flipped): every cell;
- weak kept: every cell but those whose result is bool (a bool input's repr is caught: the broken
  repr calls it weak).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from jax_conformance.mode import Mode

from tests.breakage.harness import OFF_WARN, SPECS, Area, Breakage

FAMILIES = SPECS / "promotion"
CASE = "promotion.families"
X64_OFF = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}


def _cells(file: str) -> list[dict[str, Any]]:
    return list(json.loads((FAMILIES / file).read_text())["cells"])


def _split(
    case: str, file: str, caught: Callable[[dict[str, Any]], bool]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the cells the breakage must fail, its controls) of one table, as item ids."""
    cells = _cells(file)
    ids = [f"{CASE}.{case}[{c['id']}]" for c in cells]
    return (
        tuple(i for i, c in zip(ids, cells, strict=True) if caught(c)),
        tuple(i for i, c in zip(ids, cells, strict=True) if not caught(c)),
    )


def _operand_dtype(code: str) -> str:
    """The dtype with x64 off of a cell's other operand (its NumPy dtype, 64 bits made 32)."""
    name = np.asarray(eval(code, {"np": np})).dtype.name  # noqa: S307 - the generated bind code
    return X64_OFF.get(name, name)


def _mixed(cell: dict[str, Any]) -> bool:
    a, b = cell["bind"].split("; b = ")
    return a.split("'")[1] != _operand_dtype(b)


NUMPY = _split("numpy-operand", "numpy_operands.cells.json", _mixed)
ARRAYS = _split(
    "array-inference",
    "array_inference.cells.json",
    lambda c: not c["id"].endswith("|True") and "|asarray(" not in c["id"],
)
KEPT = _split(
    "weak-kept",
    "weak_kept.cells.json",
    lambda c: not any(block.get("dtype") == "bool" for block in c["expect"]),
)

WEAK_STRICT = _split(
    "weak-strict",
    "weak_strict.cells.json",
    # strict changes x + x only for a weak x whose dtype is not its kind's default (bool: never weak)
    lambda c: (
        c["id"].endswith("|weak|strict")
        and X64_OFF.get(d := c["id"].split("|")[0], d)
        not in ("bool", "int32", "float32", "complex64")
    ),
)
WEAK_FLAG = _split(
    "weak-strict",
    "weak_strict.cells.json",
    lambda c: "|weak|" in c["id"] and not c["id"].startswith("bool|"),
)
MIXED_WEIGHTS = _split(
    "strict-functions",
    "strict_functions.cells.json",
    lambda c: any("raises" in block for block in c["expect"]),
)
STRONG_FLAG = _split("weak-strict", "weak_strict.cells.json", lambda c: "|strong|" in c["id"])
STRICT_FUNCTIONS = _split("strict-functions", "strict_functions.cells.json", lambda c: True)
CONTEXT = f"{CASE}.strict-context-manager"

FAMILIES_AREA = Area(
    "families",
    (FAMILIES,),
    (
        Breakage(
            "tests.breakage.families:NumpyAndPythonSwapped",
            Mode.from_slug("off-warn+jax_numpy_dtype_promotion=strict"),
            *NUMPY,
        ),
        Breakage("tests.breakage.families:ArrayInferenceWeakFlipped", OFF_WARN, *ARRAYS),
        Breakage("tests.breakage.families:WeakKeptFlipped", OFF_WARN, *KEPT),
        Breakage(
            "tests.breakage.families:StrictContextIgnored",
            OFF_WARN,
            (CONTEXT, *WEAK_STRICT[0], *MIXED_WEIGHTS[0]),
            WEAK_STRICT[1] + MIXED_WEIGHTS[1],
        ),
        Breakage("tests.breakage.families:EqualStrongOperandsWeak", OFF_WARN, *STRONG_FLAG),
        Breakage("tests.breakage.families:StrictFunctionsFlipped", OFF_WARN, STRICT_FUNCTIONS[0]),
        # promotion.py's: weak x + weak x of one dtype called strong (both promotions)
        Breakage("tests.breakage.promotion:EqualWeakOperandsStrong", OFF_WARN, *WEAK_FLAG),
    ),
    ("tests.breakage.families",),
    lists_every_case=False,
)
