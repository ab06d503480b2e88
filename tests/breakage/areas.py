"""Every breakage area, one module per topic beside its breakage adapters
(tests/breakage/<topic>_area.py beside tests/breakage/<topic>.py).

An area lists each breakage adapter of its modules, the mode it runs in, the cases that must fail
under it and the controls it leaves alone (tests/breakage/harness.py runs them). tests/test_breakage.py
runs every breakage of every area here; tests/test_breakage_areas.py checks that every adapter of
an area's modules is run and, for an area that lists every case, that each of its cases is caught.
The upgrade-flag blocks are another kind of area: tests/test_breakage_flags.py derives
its cases from the blocks that name a flag. To add an area: write its `<topic>_area.py` and add it
here; no new test file. A table's cells are proven by kind: one caught cell covers its table.
"""

from __future__ import annotations

from tests.breakage.autodiff_area import AUTODIFF
from tests.breakage.custom_rules_area import CUSTOM_RULES
from tests.breakage.families_area import FAMILIES_AREA
from tests.breakage.functions_area import FUNCTIONS
from tests.breakage.harness import Area
from tests.breakage.promotion_area import PROMOTION
from tests.breakage.x64_area import X64

AREAS: tuple[Area, ...] = (X64, CUSTOM_RULES, AUTODIFF, PROMOTION, FAMILIES_AREA, FUNCTIONS)
