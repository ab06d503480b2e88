"""Each breakage area proves every one of its cases can fail: no case goes unlisted, no listed
case is missing from the specs, and every breakage adapter of the area's modules is run
(tests/breakage/areas.py; the runs themselves are tests/test_breakage.py)."""

from __future__ import annotations

import pytest

from tests.breakage import harness
from tests.breakage.areas import AREAS


@pytest.mark.parametrize("area", [a for a in AREAS if a.lists_every_case], ids=lambda a: a.name)
def test_every_case_is_caught_by_some_breakage(area: harness.Area) -> None:
    missing, unknown = harness.uncovered(area)
    assert area.case_ids(), f"no specs found in {area.spec_dirs}"
    assert not missing, f"{area.name} cases no breakage is shown to fail: {missing}"
    assert not unknown, f"{area.name} breakages name cases that are not in the specs: {unknown}"


@pytest.mark.parametrize("area", AREAS, ids=lambda a: a.name)
def test_every_breakage_adapter_is_run(area: harness.Area) -> None:
    unrun = harness.unrun_adapters(area)
    assert not unrun, f"{area.name} breakage adapters no run uses: {unrun}"
