"""The project's coverage maps (docs/coverage/<area>.yaml) name real cases and say why where none.

Each map lists JAX test methods, the row of ../shared/reference/jax-tests-coverage.md they come
from, and the spec cases that cover them (`cases`) or why none does (`reason`). The map is only
worth reading if it stays true: an id that no spec defines (renamed, removed, mistyped) fails
here, as does an entry with neither cases nor a reason, and a row listed twice.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COVERAGE = ROOT / "docs" / "coverage"
MAPS = sorted(COVERAGE.glob("*.yaml"))
TEST_NAME = re.compile(r"^tests/[\w/]+\.py::\w+::\w+$")
ROW = re.compile(r"^[A-Z]{1,2}\d+$")  # A1, B12; NA12: the second survey's new rows


def _entries(path: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), f"{path.name}: a mapping with jax_revision and tests"
    assert isinstance(doc.get("jax_revision"), str) and doc["jax_revision"].strip(), (
        f"{path.name}: jax_revision says which JAX tests were read"
    )
    tests = doc.get("tests")
    assert isinstance(tests, list) and tests, f"{path.name}: `tests` is a non-empty list"
    return tests


@pytest.fixture(scope="module")
def case_ids() -> set[str]:
    from jax_conformance.spec.loader import load_spec, spec_files

    areas = [
        d for d in sorted((ROOT / "specs").iterdir()) if d.is_dir() and d.name != "expectations"
    ]
    ids = {case.id for path in spec_files(areas) for case in load_spec(path).cases}
    # a table case (`promotion.functions.maximum`) is named by its id, as its cells' `<id>[<cell>]`
    return ids | {case.split("[", 1)[0] for case in ids if "[" in case}


def test_the_x64_map_exists() -> None:
    assert COVERAGE / "x64.yaml" in MAPS


@pytest.mark.parametrize("path", MAPS, ids=[p.name for p in MAPS])
def test_entries_are_well_formed(path: Path) -> None:
    """Every entry names a JAX test method and a row, and has cases or a reason (or both, for partial cover)."""
    problems = []
    for i, entry in enumerate(_entries(path)):
        where = f"{path.name} entry {i} ({entry.get('test', '?')})"
        if not isinstance(entry.get("test"), str) or not TEST_NAME.match(entry["test"]):
            problems.append(f"{where}: `test` must read tests/<file>.py::<Class>::<method>")
        if not isinstance(entry.get("row"), str) or not ROW.match(entry["row"]):
            problems.append(f"{where}: `row` must be a row id such as A1")
        unknown = set(entry) - {"test", "row", "cases", "reason", "note"}
        if unknown:
            problems.append(f"{where}: unknown keys {sorted(unknown)}")
        cases, reason = entry.get("cases"), entry.get("reason")
        if cases is not None and not (
            isinstance(cases, list) and cases and all(isinstance(c, str) for c in cases)
        ):
            problems.append(f"{where}: `cases` must be a non-empty list of case ids")
        if reason is not None and not (isinstance(reason, str) and reason.strip()):
            problems.append(f"{where}: `reason` must say why")
        if not cases and not reason:
            problems.append(f"{where}: has neither cases nor a reason")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", MAPS, ids=[p.name for p in MAPS])
def test_named_cases_exist(path: Path, case_ids: set[str]) -> None:
    missing = [
        (entry["row"], case)
        for entry in _entries(path)
        for case in entry.get("cases") or []
        if case not in case_ids
    ]
    assert not missing, f"{path.name} names cases that no spec defines: {missing}"


def test_no_row_is_listed_twice() -> None:
    """Across every map: one entry per row (the areas use their own letters, A for x64, B for custom rules)."""
    seen: dict[str, str] = {}
    twice = []
    for path in MAPS:
        for entry in _entries(path):
            row = entry.get("row")
            if row in seen:
                twice.append(f"{row} in {seen[row]} and {path.name}")
            seen[row] = path.name
    assert not twice, f"rows listed twice: {twice}"


@pytest.mark.parametrize(
    ("name", "letter", "count"), [("x64.yaml", "A", 39), ("custom.yaml", "B", 108)]
)
def test_each_map_has_every_row_of_its_survey(name: str, letter: str, count: int) -> None:
    """Rows A1-A39 (x64; A31-A39: the survey's promotion rows) and B1-B108 (custom rules: the 73
    baseline rows and the survey's new rows B74-B108) of the survey, each once."""
    rows = [entry["row"] for entry in _entries(COVERAGE / name)]
    assert sorted(rows, key=lambda r: int(r[1:])) == [f"{letter}{i}" for i in range(1, count + 1)]
