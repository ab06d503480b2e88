"""The promotion tables in the report, as a person sees them (headless Chromium): each table case
collapsed to its verdict per mode on the first screen, a table with failing cells open on them.

The run is real: the reference adapter on a copy of specs/promotion/table.yaml whose data says one
`+` cell wrong (uint32 + int8 is claimed int16 in every mode), in two modes, the cells with uint32
in their id only (-k, about 200 cells a mode, a few seconds).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jax_conformance import PACKAGE_DIR
from jax_conformance.report import build_site

from tests.conftest import REPO
from tests.test_report_browser import CHROMIUM, open_report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no `chromium` on PATH (Debian: apt-get install chromium)"
    ),
]
WRONG = "uint32|int8"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("promotion-report")
    specs = root / "promotion"
    specs.mkdir()
    for name in (
        "table.yaml",
        "add.cells.json",
        "promote_types.cells.json",
        "result_type.cells.json",
    ):
        shutil.copy(REPO / "specs" / "promotion" / name, specs / name)
    data = json.loads((specs / "add.cells.json").read_text())
    cell = next(c for c in data["cells"] if c["id"] == WRONG)
    cell["expect"] = [{"dtype": "int16", "weak_type": False}]  # the claim made wrong
    (specs / "add.cells.json").write_text(json.dumps(data))
    results = []
    for mode in (["--x64=off", "--explicit-x64-dtypes=warn"], ["--x64=on"]):
        out = root / f"{mode[0][6:]}.jsonl"
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", str(PACKAGE_DIR), "--adapter=reference", "--specs",
             str(specs), "--results", str(out), "-p", "no:cacheprovider", "-q", "-k", "uint32",
             *mode],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert out.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
        results.append(out)
    index, _ = build_site(results, root / "site")
    return index


@pytest.fixture(scope="module")
def browser() -> Any:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield b
        b.close()


def test_tables_on_the_first_screen_collapsed_with_the_failing_cell_open(
    browser: Any, site: Path, tmp_path: Path
) -> None:
    page, errors = open_report(browser, site, height=900)
    tables = page.locator("#tables details.table-case")
    assert tables.count() == 3
    # the first screen: the section starts above the fold, right after the verdict line
    assert page.locator("#tables").bounding_box()["y"] < 900
    by_name = {tables.nth(i).locator("summary code").inner_text(): tables.nth(i) for i in range(3)}
    assert set(by_name) == {
        "promotion.table.add",
        "promotion.table.promote-types",
        "promotion.table.result-type",
    }
    add = by_name["promotion.table.add"]
    assert add.get_attribute("open") is not None
    # each mode's verdict in the summary; the wrong cell fails in both modes
    summary = add.locator("summary").inner_text()
    assert "off-warn: " in summary and "on: " in summary and "1 fail" in summary
    failing = add.locator("ul.table-failing li")
    assert failing.count() == 2
    lines = [failing.nth(i).inner_text() for i in range(2)]
    assert all(f"promotion.table.add[{WRONG}]" in line and "int16" in line for line in lines)
    # each names its column (adapter, version, backend, mode) and the expected dtype
    assert sorted(line.split("[")[2].split("]")[0].split()[-1] for line in lines) == [
        "off-warn",
        "on",
    ]
    # its grid per mode (row operand x column operand, from the run's cell ids) marks the wrong cell
    grids = add.locator("figure.tgrid-box")
    assert grids.count() == 2
    for i in range(2):
        marked = grids.nth(i).locator('td.bg-failed a.tg[data-outcome="failed"]')
        assert marked.count() == 1 and marked.get_attribute("title") == f"[{WRONG}]: failed"
        rows = grids.nth(i).locator("th.tg-row").all_inner_texts()
        assert rows[:3] == ["bool", "uint8", "uint16"], rows  # the data file's order
    # the matrix holds each table as one row, its wrong cell counted in both modes
    assert page.locator("#matrix-table tbody tr[data-case]").count() == 0
    row = page.locator('#matrix-table tr[data-table="promotion.table.add"]')
    assert [t.strip() for t in row.locator("a.cell").all_inner_texts()] == ["✗ 1", "✗ 1"]
    # the tables that hold are collapsed: their verdicts show, their cells do not
    for name in ("promotion.table.promote-types", "promotion.table.result-type"):
        t = by_name[name]
        assert t.get_attribute("open") is None
        assert "fail" not in t.locator("summary").inner_text()
        assert t.locator("ul.table-failing").count() == 0
        assert not t.locator(".table-grids").is_visible()
    # an expanded passing table shows its grids, every cell holding
    result_type = by_name["promotion.table.result-type"]
    result_type.locator("summary").click()
    grids = result_type.locator("figure.tgrid-box")
    assert grids.count() == 2 and grids.nth(0).is_visible()
    shown = grids.nth(0).locator("a.tg")
    assert shown.count() > 0
    assert shown.count() == grids.nth(0).locator('a.tg[data-outcome="passed"]').count()
    page.screenshot(path=str(tmp_path / "tables.png"))
    assert errors == [], f"console errors: {errors}"
    page.close()
