"""The report at thousands of cells, read at 1024 px in headless Chromium (issue 38, item 8).

A table case's cells are summarised per table (a row x column grid per mode, the failing cells
marked), one row of the case matrix, not a row each; docs-vs-code entries that say the same are one
row with their count; Tables is in the navigation; no page (the report, the combined matrix of
8 columns, the upgrade page) scrolls sideways; a mode's name breaks only at its `+` and `_`; a
share short of every cell never reads 100.0%.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.commands.upgrade import page as upgrade_page
from jax_conformance.records import ChangeJSON
from jax_conformance.report import build_site
from jax_conformance.report.model import build_model
from jax_conformance.report.site import headlines

from tests.test_report import run_file
from tests.test_report_browser import CHROMIUM, browser  # noqa: F401  (the module's browser fixture)
from tests.test_report_layout import flagged_file, open_at

WIDTH = 1024
DTYPES = [f"d{i:02d}" for i in range(30)]  # a 30 x 30 table: 900 cells a mode
TABLE = "t.grid.add"
WRONG = "d03|d07"
DOCS = {
    "basis": "documented",
    "documented": {"holds": False, "line": 3, "message": "no", "says": "the table says so"},
}
LONG_ID = "custom_jvp.closures.grad_of_jit_wrt_closed_over_is_an_error_under_every_transformation"


def table_run(root: Path) -> list[Path]:
    """Two modes of 30 plain cases, a 30 x 30 table (one cell failing in off-warn, every cell
    following the code where its one docs sentence says otherwise) and a 4 x 4 table that holds."""
    files = []
    for mode in ((False, "warn"), (True, "warn")):
        cases = {f"t.plain.case-{i:02d}": "passed" for i in range(30)}
        cases |= {f"{TABLE}[{a}|{b}]": "passed" for a in DTYPES for b in DTYPES}
        cases |= {f"t.grid.small[{a}|{b}]": "passed" for a in DTYPES[:4] for b in DTYPES[:4]}
        if not mode[0]:
            cases[f"{TABLE}[{WRONG}]"] = "failed"
        extra = {c: DOCS for c, o in cases.items() if c.startswith(TABLE) and o == "passed"}
        files.append(run_file(root / f"{mode[0]}.jsonl", cases, mode=mode, extra=extra))
    return files


def page_width(page: Any) -> tuple[int, list[str]]:
    """The page's scroll width, and the first elements past 1024 px outside a box that scrolls."""
    wide = page.evaluate(f"""[...document.querySelectorAll('body *')]
        .filter(e => !e.closest('.table-scroll, .grid-scroll') && e.getBoundingClientRect().right > {WIDTH})
        .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""")
    return page.evaluate("document.documentElement.scrollWidth"), wide


@pytest.fixture(scope="module")
def table_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scale")
    return build_site(table_run(root), root / "site").page or root


@pytest.fixture
def at_1024(browser: Any, table_site: Path) -> Any:  # noqa: F811
    page, errors = open_at(browser, table_site)
    yield page
    assert errors == [], errors
    page.close()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_table_cells_are_one_matrix_row_and_the_page_stays_short(at_1024: Any) -> None:
    rows = at_1024.locator("#matrix-table tbody tr[data-case]")
    assert rows.count() == 30  # the plain cases; no row per table cell
    table = at_1024.locator(f'#matrix-table tr[data-table="{TABLE}"]')
    assert table.count() == 1
    cells = [t.strip() for t in table.locator("a.cell").all_inner_texts()]
    assert cells == ["✗ 1", "✓"], cells  # off-warn: one cell fails; on: every cell holds
    # 1,832 cell records a mode: the page is a few screens, not a row per cell (~40 px each)
    height = at_1024.evaluate("document.documentElement.scrollHeight")
    assert height < 6000, height
    width, wide = page_width(at_1024)
    assert width <= WIDTH, (width, wide)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_a_failing_table_opens_on_a_grid_per_mode_with_its_cell_marked(at_1024: Any) -> None:
    nav = at_1024.locator('nav a[href="#tables"]')
    assert nav.count() == 1
    nav.click()
    top = at_1024.evaluate("document.querySelector('#tables').getBoundingClientRect().top")
    assert -2 <= top < 100, top
    details = at_1024.locator(f'details.table-case[id="table-{TABLE}"]')
    assert details.get_attribute("open") is not None
    grids = details.locator("figure.tgrid-box")
    assert grids.count() == 2  # one per mode
    first = grids.nth(0)
    assert first.locator("th.tg-row").all_inner_texts() == DTYPES  # rows in the run's order
    assert first.locator("a.tg").count() == 900
    bad = first.locator('td.bg-failed a.tg[data-outcome="failed"]')
    assert bad.count() == 1 and bad.get_attribute("title") == f"[{WRONG}]: failed"
    assert grids.nth(1).locator('a.tg[data-outcome="failed"]').count() == 0
    # the grid scrolls inside its own box where it is wider than the page, never the page
    width, wide = page_width(at_1024)
    assert width <= WIDTH, (width, wide)
    # a grid cell opens its record
    bad.click()
    at_1024.wait_for_selector("#detail h2.detail-id")
    assert at_1024.locator("#detail h2.detail-id").inner_text() == f"{TABLE}[{WRONG}]"


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_an_expanded_passing_table_shows_its_grid(at_1024: Any) -> None:
    details = at_1024.locator('details.table-case[id="table-t.grid.small"]')
    assert details.get_attribute("open") is None
    details.locator("summary").click()
    grids = details.locator("figure.tgrid-box")
    assert grids.count() == 2
    assert [grids.nth(i).locator('a.tg[data-outcome="passed"]').count() for i in range(2)] == [
        16,
        16,
    ]
    assert grids.nth(0).locator("th.tg-col").all_inner_texts() == DTYPES[:4]
    # the matrix row of a table links to it
    at_1024.locator('#matrix-table tr[data-table="t.grid.small"] th a').click()
    assert "#table-t.grid.small" in at_1024.url


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_docs_vs_code_is_one_row_per_thing_the_docs_say(at_1024: Any) -> None:
    rows = at_1024.locator("#drift table.drift tbody tr")
    assert rows.count() == 1
    assert rows.first.get_attribute("data-cases") == "900"
    text = rows.first.inner_text()
    assert "the table says so" in text and "900 cases" in text and f"{TABLE} (900)" in text
    assert "off-warn (899)" in text and "on (900)" in text, text
    assert f"{TABLE}[d00|d00]" not in text  # the cases stay folded under their count


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_the_summary_shows_every_column_at_1024_px(at_1024: Any) -> None:
    box = at_1024.evaluate("""(() => { const t = document.querySelector('table.summary');
        return [t.getBoundingClientRect().right, t.scrollWidth, t.parentElement.clientWidth]; })()""")
    assert box[0] <= WIDTH and box[1] <= box[2], box  # nothing hidden to the right


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_eight_columns_with_flag_modes_fit_and_names_break_only_at_plus_and_underscore(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    cases = {LONG_ID: "passed", "t.other.case": "failed"}
    files = [
        run_file(tmp_path / f"{v}-{m[0]}-{m[1]}.jsonl", cases, version=v, mode=m)
        for v in ("0.10.1", "0.10.2")
        for m in ((False, "warn"), (False, "error"), (False, "allow"), (True, "warn"))
    ]
    files.append(
        flagged_file(
            tmp_path / "flagged.jsonl",
            cases,
            {"jax_numpy_dtype_promotion_strict": True, "jax_custom_vjp3": True},
        )
    )
    index = build_site(files, tmp_path / "site").page
    assert index is not None
    page, errors = open_at(browser, index)
    assert page.locator("#matrix-table thead th.col").count() == 9
    width, wide = page_width(page)
    assert width <= WIDTH, (width, wide)
    # each unbreakable piece of a mode's name sits on one line wherever a mode is named
    split = page.evaluate("""[...document.querySelectorAll('.nobr')]
        .filter(e => e.getClientRects().length > 1).map(e => e.textContent)""")
    assert split == [], split
    assert page.locator("table.summary td.mode .nobr").count() > 9
    assert page.locator("#matrix-table thead th.col .nobr").count() > 9
    page.locator("#flags summary").click()  # the flag table names each mode in a narrow column
    assert page.locator("table.flag-table th.mode-name .nobr").count() > 9
    split = page.evaluate("""[...document.querySelectorAll('.nobr')]
        .filter(e => e.getClientRects().length > 1).map(e => e.textContent)""")
    assert split == [], split
    width, wide = page_width(page)
    assert width <= WIDTH, (width, wide)
    assert errors == []
    page.close()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_the_upgrade_page_fits_1024_px(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    message = "Argument " + "x" * 40 + " of type <class 'jax._src.core.ShapedArray'> " * 6
    change: ChangeJSON = {
        "case": LONG_ID,
        "release": "0.10.2",
        "previous": "0.10.1",
        "modes": ["off-warn", "off-warn+jax_numpy_dtype_promotion_strict"],
        "before": dict.fromkeys(["off-warn", "off-warn+jax_numpy_dtype_promotion_strict"], message),
        "after": dict.fromkeys(["off-warn", "off-warn+jax_numpy_dtype_promotion_strict"], "ok"),
        "skipped": [],
        "topic": "custom_jvp.closures",
        "claim": "a claim",
        "basis": "documented",
        "source": [{"doc": "docs/" + "very_long_document_name_" * 4 + ".md"}],
        "spec_file": "specs/x.yaml",
    }
    path = tmp_path / "upgrade.html"
    path.write_text(upgrade_page("0.10.1", "0.10.2", [change], "radar search"), encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": 800})
    page.goto(path.as_uri())
    width, wide = page_width(page)
    assert width <= WIDTH, (width, wide)
    page.close()


def test_a_share_short_of_every_cell_never_reads_100_percent(tmp_path: Path) -> None:
    # text.percent's own cases are in test_merge; here the headline that uses it
    cases = {f"t.c.{i:05d}": "passed" for i in range(2999)} | {"t.c.bad": "failed"}
    model = build_model([run_file(tmp_path / "r.jsonl", cases)])
    [line] = headlines(model)
    assert (line.conform, line.applicable, line.share) == (2999, 3000, "99.9%")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH")
def test_the_filters_see_a_tables_cells(at_1024: Any) -> None:
    tables = at_1024.locator("#matrix-table tbody tr[data-table]")
    at_1024.select_option("#f-outcome", "unexpected")
    assert tables.evaluate_all("rs => rs.map(r => r.dataset.table)") == [TABLE]
    at_1024.select_option("#f-mode", "on")  # the wrong cell fails in off-warn only
    assert tables.count() == 0
    at_1024.select_option("#f-mode", "")
    at_1024.select_option("#f-outcome", "")
    at_1024.fill("#f-search", WRONG)  # a cell's id finds its table
    assert tables.evaluate_all("rs => rs.map(r => r.dataset.table)") == [TABLE]
    assert at_1024.locator("#matrix-table tbody tr[data-case]").count() == 0
    count = at_1024.locator("#f-count").inner_text()
    assert count.startswith("1 of 32 cases") and "2 tables of 916 cells" in count, count


def test_the_verdict_counts_docs_vs_code_as_the_section_groups_it(table_site: Path) -> None:
    """The verdict line's figure is the section's rows (one per thing the docs say), its cases
    beside it: 900 table cells under one sentence are 1 difference (900 cases), not 900."""
    html = table_site.read_text()
    verdict = re.sub(r"<[^>]+>", "", html.split('id="verdict"', 1)[1].split("</section>", 1)[0])
    assert "· 1 docs-vs-code difference (900 cases) ·" in " ".join(verdict.split()), verdict
