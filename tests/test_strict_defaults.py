"""`run` without --modes adds the strict modes over the strict areas only (mode.STRICT_MODES,
STRICT_AREAS; commands/run.py default_strict_specs): which spec folders they get, and none when
the selection leaves no case of those areas."""

from __future__ import annotations

import argparse
from pathlib import Path

from jax_conformance import SPECS_DIR
from jax_conformance.commands.run import default_strict_specs
from jax_conformance.mode import STRICT_AREAS, STRICT_MODES


def _args(specs: list[str] | None = None, keyword: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(specs=specs, keyword=keyword, markexpr=None)


AREAS = [str((SPECS_DIR / a).resolve()) for a in STRICT_AREAS]


def test_the_strict_modes_set_strict_promotion() -> None:
    assert [m.slug for m in STRICT_MODES] == [
        "off-warn+jax_numpy_dtype_promotion=strict",
        "on+jax_numpy_dtype_promotion=strict",
    ]


def test_no_specs_given_runs_the_strict_areas() -> None:
    assert default_strict_specs(_args()) == AREAS
    assert default_strict_specs(_args([str(SPECS_DIR)])) == AREAS


def test_specs_inside_or_outside_the_areas(tmp_path: Path) -> None:
    promotion = SPECS_DIR / "promotion"
    assert default_strict_specs(_args([str(promotion)])) == [str(promotion.resolve())]
    table = promotion / "table.yaml"
    assert default_strict_specs(_args([str(table)])) == [str(table.resolve())]
    assert default_strict_specs(_args([str(SPECS_DIR / "custom_vjp")])) == []
    assert default_strict_specs(_args([str(tmp_path)])) == []


def test_a_keyword_that_selects_nothing_there_adds_no_strict_mode() -> None:
    assert default_strict_specs(_args(keyword="custom_vjp.basics")) == []
    assert default_strict_specs(_args(keyword="promotion.families")) == AREAS
