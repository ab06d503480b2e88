"""Every spec case of a breakage area is seen to fail: run the suite against JAX with one rule broken.

Each breakage adapter (tests/breakage/<topic>.py) patches real JAX in the worker so that one
documented rule no longer holds. Each area (tests/breakage/<topic>_area.py, collected in
tests/breakage/areas.py) lists, for each adapter, the mode where the rule speaks, the cases that
must catch it and the controls that must still pass; tests/breakage/harness.py runs an area's
breakages in their own mode processes, restricted to those cases, all at once, and checks each
failure names the case, the mode, what was expected and what happened. A test's id is
`<area>-<adapter class>-<mode>`; tests/conftest.py schedules each area as a unit of its own. That
unbroken JAX passes every case is tests/test_suite_modes.py's check.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version

import pytest
from packaging.version import Version

from tests.breakage import harness
from tests.breakage.areas import AREAS

pytestmark = pytest.mark.slow

Runs = dict[harness.Breakage, harness.BreakageRun]


def _marks(area: harness.Area) -> list[pytest.MarkDecorator]:
    """An area whose adapters patch internals of a later JAX than this one is skipped."""
    if area.min_jax and Version(version("jax")) < Version(area.min_jax):
        return [
            pytest.mark.skip(reason=f"the {area.name} adapters patch JAX {area.min_jax} internals")
        ]
    return []


CASES = [
    pytest.param(area, brk, id=f"{area.name}-{brk.name}", marks=_marks(area))
    for area in AREAS
    for brk in area.breakages
]


def _selected(session: pytest.Session, area: harness.Area) -> list[harness.Breakage]:
    """The area's breakages whose tests this session runs (all of them, unless -k chose fewer)."""
    return [
        item.callspec.params["breakage"]
        for item in session.items
        if isinstance(item, pytest.Function)
        and hasattr(item, "callspec")
        and item.callspec.params.get("area") is area
    ]


@pytest.fixture(scope="module")
def area_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[harness.Area], Runs]:
    """An area's selected breakage runs, all at once, made the first time one of its tests asks
    (once per area and worker: the tests come in area order, and each area is one scheduling unit)."""
    done: dict[str, Runs] = {}

    def runs(area: harness.Area) -> Runs:
        if area.name not in done:
            where = tmp_path_factory.mktemp(f"{area.name}-breakage")
            chosen = _selected(request.session, area)
            done[area.name] = harness.run_all(chosen, area.spec_dirs, where)
        return done[area.name]

    return runs


@pytest.mark.parametrize(("area", "breakage"), CASES)
def test_caught(
    area_runs: Callable[[harness.Area], Runs], area: harness.Area, breakage: harness.Breakage
) -> None:
    """The cases for the broken rule fail, readably; the control cases still pass."""
    harness.check_caught(area_runs(area)[breakage])
