"""Every case in specs/autodiff fails when the rule it checks is broken in real JAX
(tests/breakage/autodiff.py), and a control case of the same directory still passes.

tests/breakage/areas.py (AUTODIFF) lists the breaks, tests/breakage/harness.py runs them side by
side in a module fixture. That unbroken JAX passes every case is tests/test_suite_modes.py's check.
"""

from __future__ import annotations

import pytest

from tests.breakage import harness
from tests.breakage.areas import AUTODIFF

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[harness.Breakage, harness.BreakageRun]:
    """Every break's run, side by side."""
    return harness.run_all(
        AUTODIFF.breakages, AUTODIFF.spec_dirs, tmp_path_factory.mktemp("autodiff-breakage")
    )


@pytest.mark.parametrize("brk", AUTODIFF.breakages, ids=lambda b: b.adapter.rsplit(":", 1)[-1])
def test_break_is_caught(
    brk: harness.Breakage, runs: dict[harness.Breakage, harness.BreakageRun]
) -> None:
    """The cases of the broken rule fail, naming case, mode, expected and actual; the control passes."""
    harness.check_caught(runs[brk])
