"""The radar searches that ship with the suite (`specs/radar/`): `upgrade` answers from them on a
fresh cache without installing or running anything, and names the cases added or changed since
the data was computed instead of answering for them from stale findings."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jax_conformance.commands import upgrade
from jax_conformance.compat import shipped
from jax_conformance.compat.drive import store_root
from jax_conformance.records import SearchJSON, read_search
from jax_conformance.spec.loader import spec_revision
from jax_conformance.text import plural

SHIPPED = sorted(shipped.SHIPPED_DIR.glob("*.json"))


def _search(changes: list[str], releases: list[str]) -> SearchJSON:
    return {  # type: ignore[typeddict-item]
        "releases": releases,
        "anchors": [],
        "unavailable": {},
        "probes": [],
        "runs": 2,
        "changes": [
            {"case": c, "release": releases[-1], "previous": releases[0], "modes": ["on"]}
            for c in changes
        ],
        "flags": {},
        "environments": {},
        "cache": {},
        "seconds": 1.0,
        "discovery_s": 0.1,
    }


def test_a_case_changed_since_is_not_answered_from_the_shipped_search(tmp_path: Path) -> None:
    digests = shipped.case_digests()
    table_case = next(c for c in digests if c.startswith("promotion.table."))
    plain = (
        "x64.defaults.arange-int" if "x64.defaults.arange-int" in digests else next(iter(digests))
    )
    path = shipped.ship(
        _search([plain, f"{table_case}[int8|int16]"], ["0.1.0", "0.2.0"]),
        shipped.SPECS_DIR,
        "cmd",
        into=tmp_path,
    )
    data = shipped.find_shipped("0.1.0", "0.2.0", into=tmp_path)
    assert data is not None and read_search(path) == data
    assert shipped.stale_cases(data) == []  # computed from these very specs
    assert data["shipped"]["spec_revision"] == spec_revision([shipped.SPECS_DIR])
    assert len(shipped.answerable(data, [])["changes"]) == 2
    # The table case is edited since: its cells' findings are dropped; a new case is named too.
    now = {**digests, table_case: "changed", "x64.new-case": "new"}
    stale = shipped.stale_cases(data, now)
    assert stale == sorted([table_case, "x64.new-case"], key=lambda c: (c.split(".")[0], c))
    assert [c["case"] for c in shipped.answerable(data, stale)["changes"]] == [plain]
    assert shipped.find_shipped("0.1.0", "0.3.0", into=tmp_path) is None


def test_a_case_digest_follows_the_cells_file_of_a_table(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text("topic: t\ncases:\n  - id: t.table\n    table: t.cells.json\n    run: a\n")
    (tmp_path / "t.cells.json").write_text("[1]")
    before = shipped.case_digests(tmp_path)
    (tmp_path / "t.cells.json").write_text("[2]")
    assert shipped.case_digests(tmp_path)["t.table"] != before["t.table"]


@pytest.mark.skipif(not SHIPPED, reason="no search is shipped in specs/radar/")
@pytest.mark.parametrize("search", SHIPPED, ids=lambda p: p.stem)
def test_upgrade_answers_from_the_shipped_search_on_a_fresh_cache(
    tmp_path: Path, search: Path
) -> None:
    """As a new user would: a fresh cache, each shipped range, a real CLI process."""
    assert len(SHIPPED) >= 2  # 0.10.1..0.10.2 and the 0.4.35..0.5.0
    data = read_search(search)
    assert data is not None and "shipped" in data
    a, b = data["releases"][0], data["releases"][-1]
    t0 = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "upgrade", "--from", a, "--to", b]
        + ["--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    seconds = time.monotonic() - t0
    assert result.returncode == 0, result.stdout + result.stderr
    assert "from the search shipped with the suite" in result.stdout
    assert "nothing installed or run" in result.stdout
    assert not (tmp_path / "cache" / "envs").exists()
    assert seconds < 60, seconds  # the figure the issue asks for is under 10 s; loaded CI gets room
    stale = shipped.stale_cases(data)
    if stale:
        assert (
            f"{plural(len(stale), 'case')} added or changed since the shipped search"
            in result.stdout
        )
    if data["shipped"]["spec_revision"] == spec_revision([shipped.SPECS_DIR]):
        assert not stale


def test_one_spec_revision_keys_the_store_the_shipped_data_and_a_run(tmp_path: Path) -> None:
    """The radar's store and a shipped search state the hash a run's description does; a table's
    cells file is part of it (the store was once keyed by the YAML alone, so an edited cells file
    reused a search of the old cells), and shipping a search into `radar/` does not change it."""
    specs = tmp_path / "specs"
    (specs / "t").mkdir(parents=True)
    (specs / "t" / "t.yaml").write_text(
        "topic: t\ncases:\n  - id: t.table\n    table: t.cells.json\n"
    )
    (specs / "t" / "t.cells.json").write_text("[1]")
    revision = spec_revision([specs])
    assert store_root(tmp_path, "0.10.2", specs).name.startswith(f"{revision}-")
    search = _search(["t.table"], ["0.1.0", "0.2.0"])
    search["changes"][0]["spec_file"] = str(specs / "t" / "t.yaml")  # the store's copy: absolute
    path = shipped.ship(search, specs, "cmd", into=specs / "radar")
    data = read_search(path)
    assert data is not None and data["shipped"]["spec_revision"] == revision
    assert data["changes"][0]["spec_file"] == "specs/t/t.yaml"
    assert spec_revision([specs]) == revision
    (specs / "t" / "t.cells.json").write_text("[2]")
    assert not store_root(tmp_path, "0.10.2", specs).name.startswith(f"{revision}-")


# An absolute path in any string: /a/b (not inside a URL or a relative path), or C:\\ on Windows.
ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:[\w.+-]+/)+[\w.+-]*|\b[A-Za-z]:[\\/]")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@pytest.mark.skipif(not SHIPPED, reason="no search is shipped in specs/radar/")
def test_no_shipped_search_holds_a_path_of_the_machine_that_computed_it() -> None:
    """Shipped data names spec files relative (`specs/...`): it held /work/compat-cache/radar/...
    store paths of the machine that searched, in every change."""
    assert ABSOLUTE.search("/work/compat-cache/radar/x/specs/a.yaml")  # the pattern can fail
    assert not ABSOLUTE.search("https://docs.jax.dev/en/latest/a.html specs/a/b.yaml")
    for path in SHIPPED:
        found = [s for s in _strings(json.loads(path.read_text())) if ABSOLUTE.search(s)]
        assert not found, (path.name, found[:3])


def test_ship_refuses_a_selection(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    upgrade.add_arguments(parser)
    args = parser.parse_args(["--from", "0.10.1", "--to", "0.10.2", "--ship", "-k", "defaults"])
    from jax_conformance.errors import UsageError

    with pytest.raises(UsageError, match="every case in the four default modes"):
        upgrade.main(args)
