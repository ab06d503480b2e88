"""Cells of specs/promotion fail, naming the cell, when a promotion rule is broken in real JAX
(tests/breakage/promotion.py): one wrong cell in one mode, weak_type lost under jit only, strict
mode too lenient and too strict; control cells of the same tables still pass.

tests/breakage/areas.py (PROMOTION) lists the breaks, tests/breakage/harness.py runs them side by
side in a module fixture. That unbroken JAX passes every case is tests/test_suite_modes.py's check.
"""

from __future__ import annotations

import pytest

from tests.breakage import harness
from tests.breakage.areas import PROMOTION

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[harness.Breakage, harness.BreakageRun]:
    """Every break's run, side by side."""
    return harness.run_all(
        PROMOTION.breakages, PROMOTION.spec_dirs, tmp_path_factory.mktemp("promotion-breakage")
    )


@pytest.mark.parametrize("brk", PROMOTION.breakages, ids=lambda b: b.adapter.rsplit(":", 1)[-1])
def test_break_is_caught(
    brk: harness.Breakage, runs: dict[harness.Breakage, harness.BreakageRun]
) -> None:
    """The cases of the broken rule fail, naming case, mode, expected and actual; the control passes."""
    harness.check_caught(runs[brk])
