"""Every x64 spec case is seen to fail: run the suite against JAX with one rule broken.

Each breakage adapter in tests/breakage/x64.py patches real JAX in the worker so that one
documented rule no longer holds. tests/breakage/areas.py lists, for each one, the mode where the
rule speaks, the cases that must catch it and, for some, a control case that must still pass;
tests/breakage/harness.py runs each in its own mode process, restricted to those cases, all at
once, and checks each failure names the case, the mode, what was expected and what happened.
"""

from __future__ import annotations

import pytest

from tests.breakage import harness
from tests.breakage.areas import X64


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[harness.Breakage, harness.BreakageRun]:
    """Every breakage run, all at once."""
    return harness.run_all(X64.breakages, X64.spec_dirs, tmp_path_factory.mktemp("x64-breakage"))


@pytest.mark.parametrize("breakage", X64.breakages, ids=lambda b: b.name)
def test_breakage_is_caught(
    runs: dict[harness.Breakage, harness.BreakageRun], breakage: harness.Breakage
) -> None:
    """The cases for the broken rule fail, readably; the control cases still pass."""
    harness.check_caught(runs[breakage])
