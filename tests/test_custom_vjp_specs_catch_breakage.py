"""Every custom_vjp / custom_jvp spec case fails when the rule it checks is broken in real JAX.

For each breakage adapter in `tests/breakage/custom_vjp.py` and `custom_jvp.py`,
tests/breakage/areas.py (CUSTOM_RULES) lists the cases that check the broken rule and one
unrelated control case; tests/breakage/harness.py runs the suite over them in a mode process
per adapter (`--adapter=tests.breakage.custom_vjp:NAME`), in parallel to stay near a minute. The
former must come out `failed`, saying what was expected and what happened, and the control
`passed`.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest
from packaging.version import Version

from tests.breakage import harness
from tests.breakage.areas import CUSTOM_RULES

pytestmark = [
    pytest.mark.slow,
    # The breaks patch private names of jax._src.custom_derivatives as of JAX 0.10.
    pytest.mark.skipif(
        Version(version("jax")) < Version("0.10"),
        reason="the breakage adapters patch JAX 0.10 internals",
    ),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[harness.Breakage, harness.BreakageRun]:
    """Every break's run, side by side."""
    return harness.run_all(
        CUSTOM_RULES.breakages, CUSTOM_RULES.spec_dirs, tmp_path_factory.mktemp("breakage")
    )


@pytest.mark.parametrize("brk", CUSTOM_RULES.breakages, ids=lambda b: b.adapter.rsplit(":", 1)[-1])
def test_break_is_caught(
    brk: harness.Breakage, runs: dict[harness.Breakage, harness.BreakageRun]
) -> None:
    """The cases of the broken rule fail (with a message saying what happened), and the control case passes."""
    harness.check_caught(runs[brk])
