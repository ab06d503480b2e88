"""The report as a person sees it: a real run's report opened from disk in headless Chromium.

Uses Debian's `chromium` through Playwright (`playwright install` cannot download browsers
here); skips, saying why, only where no Chromium or no Playwright is installed.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.report import build_site

from tests.test_report import SCRIPT, run_file, run_suite, write_specs

CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no `chromium` on PATH (Debian: apt-get install chromium)"
    ),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of two real runs (x64 off/warn and on) of the demo specs."""
    root = tmp_path_factory.mktemp("browser")
    specs = write_specs(root)
    off, on = root / "off.jsonl", root / "on.jsonl"
    for path, args in ((off, ()), (on, ("--x64=on",))):
        proc = run_suite(specs, path, *args)
        assert path.is_file(), proc.stdout + proc.stderr
    index, _ = build_site([off, on], root / "site")
    return index


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield b
        b.close()


# A row of the drawn matrix: a case's, or a table's (its cells as one row)
MATRIX_ROW = "#matrix-table tbody tr[data-case], #matrix-table tbody tr[data-table]"


def open_report(browser: Any, index: Path, height: int = 900) -> tuple[Any, list[str]]:
    """A 1400 px wide page on the report, its matrix drawn; the list collects every script and console error."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(index.as_uri())
    page.wait_for_selector(MATRIX_ROW)
    return page, errors


@pytest.fixture
def page(browser: Any, site: Path) -> Iterator[Any]:
    page, errors = open_report(browser, site, height=1000)
    yield page
    assert errors == [], f"console errors: {errors}"
    assert page.evaluate("window.__pwned") is None, "markup from a result ran as script"
    page.close()


def summary_cell(page: Any, mode: str, outcome: str) -> str:
    row = page.locator(
        "table.summary tbody tr",
        has=page.locator("td:nth-child(4)", has_text=re.compile(f"^{mode}$")),
    )
    return str(row.locator(f'td[data-outcome="{outcome}"]').inner_text()).strip()


def test_summary_shows_the_counts_and_compliance(page: Any) -> None:
    assert summary_cell(page, "off-warn", "passed") == "1"
    assert summary_cell(page, "off-warn", "failed") == "2"
    assert summary_cell(page, "off-warn", "not_applicable") == "1"
    assert summary_cell(page, "on", "passed") == "1"
    assert summary_cell(page, "on", "not_applicable") == "3"
    compliance = page.locator("table.summary td.compliance").all_inner_texts()
    assert compliance == ["33.3%", "100.0%"]


def test_a_failing_cell_opens_its_detail(page: Any) -> None:
    row = page.locator('#matrix-table tr[data-case="demo.report.wrong-dtype"]')
    row.locator('a.cell[data-outcome="failed"]').click()
    detail = page.locator("#detail")
    detail.wait_for(state="visible")
    page.wait_for_selector("#detail h2.detail-id")
    assert detail.locator("h2.detail-id").inner_text() == "demo.report.wrong-dtype"
    text = detail.inner_text()
    assert "a deliberately wrong claim" in text
    assert "jax 0.10.2 cpu off-warn" in text or "off-warn" in text
    pres = detail.locator("pre").all_inner_texts()
    assert 'dtype: "float16"' in pres[0] and 'dtype: "int32"' in pres[1]  # expected, then actual
    assert detail.locator(".badge").inner_text() == "failed"
    assert "report.yaml:" in text  # the spec's file and line
    link = detail.locator('dd a[href^="https://docs.jax.dev"]')
    assert link.count() == 1
    detail.locator("#detail-close").click()
    assert not detail.is_visible()


def test_markup_in_a_message_shows_as_text(page: Any) -> None:
    page.locator(
        '#matrix-table tr[data-case="demo.report.markup-message"] a.cell[data-outcome="failed"]'
    ).click()
    page.wait_for_selector("#detail pre.message")
    message = page.locator("#detail pre.message").inner_text()
    assert SCRIPT in message and "<b>bold</b>" in message
    assert page.locator("#detail b").count() == 0
    assert (
        SCRIPT
        in page.locator(
            '#matrix-table tr[data-case="demo.report.markup-message"] .claim'
        ).inner_text()
    )


def test_filters_narrow_the_matrix(page: Any) -> None:
    rows = page.locator("#matrix-table tbody tr[data-case]")
    assert rows.count() == 4
    page.select_option("#f-outcome", "failed")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.case)")) == [
        "demo.report.markup-message",
        "demo.report.wrong-dtype",
    ]
    assert page.locator("#f-count").inner_text().startswith("2 of 4 cases")
    page.select_option("#f-outcome", "")
    page.select_option("#f-mode", "on")
    assert page.locator("#matrix-table thead th.col").count() == 1
    page.select_option("#f-mode", "")
    page.fill("#f-search", "x64-only")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.case)") == ["demo.report.x64-only"]
    page.fill("#f-search", "no such case anywhere")
    assert rows.count() == 0


def test_a_link_to_a_case_opens_it(page: Any, site: Path) -> None:
    page.goto(site.as_uri() + "#case=demo.report.holds")
    page.wait_for_selector("#detail h2.detail-id")
    text = page.locator("#detail").inner_text()
    assert "the docs say one thing" in text  # what the docs say, shown with the case
    assert "fails here" in text and "but should be int64" in text  # and the run's verdict on it
    assert page.locator("#drift").inner_text().count("demo.report.holds") == 1


def test_release_filter_and_table_on_a_two_release_merge(browser: Any, tmp_path: Path) -> None:
    files = []
    for version, outcomes in (
        ("0.4.30", {"t.changed": "failed", "t.same": "passed"}),
        ("0.10.2", {"t.changed": "passed", "t.same": "passed"}),
    ):
        for mode in ((False, "warn"), (True, "warn")):
            # t.same differs between modes, never between releases
            picks = {**outcomes, "t.same": "passed" if mode[0] else "not_applicable"}
            files.append(
                run_file(tmp_path / f"{version}-{mode[0]}.jsonl", picks, version=version, mode=mode)
            )
    index, _ = build_site(files, tmp_path / "site")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(index.as_uri())
    rows = page.locator("#matrix-table tbody tr[data-case]")
    page.select_option("#f-outcome", "differs")
    assert rows.count() == 2
    page.select_option("#f-outcome", "releases")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.case)") == ["t.changed"]
    compat = page.locator("table.compat tbody tr")
    assert compat.count() == 1
    # a cell per release, the first release it holds in, the first it changed in
    assert compat.first.locator("td").all_inner_texts() == ["✗", "✓", "0.10.2", "0.10.2"]
    assert (
        "0 regressed · 2 fixed" in page.locator("#comparison").inner_text()
    )  # t.changed in both modes
    assert errors == []
    page.close()


def test_xpassed_and_the_basis_of_each_case_are_shown(browser: Any, tmp_path: Path) -> None:
    # A listed divergence that now holds is xpassed: counted in the summary and unexpected in the matrix;
    # compliance counts documented and tested cases only, the basis filter narrows the matrix to each kind.
    extra = {
        "t.stale-entry": {"basis": "documented"},
        "t.doc": {"basis": "documented"},
        "t.test": {"basis": "tested"},
        "t.obs": {"basis": "observed"},
        "t.gone": {"basis": "unsupported"},
    }
    path = run_file(
        tmp_path / "r.jsonl",
        {
            "t.stale-entry": "xpassed",
            "t.doc": "failed",
            "t.test": "passed",
            "t.obs": "failed",
            "t.gone": "passed",
        },
        extra=extra,
    )
    index, _ = build_site([path], tmp_path / "site")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(index.as_uri())
    page.wait_for_selector("#matrix-table tbody tr[data-case]")
    assert summary_cell(page, "off-warn", "xpassed") == "1"
    row = page.locator("table.summary tbody tr").first
    assert (
        row.locator("td.compliance").inner_text().strip() == "66.7%"
    )  # 2 of 3 documented/tested hold
    assert row.locator("td.basis-observed").inner_text().strip() == "0/1"
    assert row.locator("td.basis-unsupported").inner_text().strip() == "1/1"
    verdict = page.locator("#verdict p.verdict").inner_text()
    assert verdict.startswith(
        "jax 0.10.2: 2 of 3 applicable cells conform (66.7%) · 3 unexpected"
    ), verdict  # t.obs counts here
    assert verdict.endswith("not counted: 1 observed-only, 1 unsupported cells)"), verdict
    rows = page.locator("#matrix-table tbody tr[data-case]")
    page.select_option("#f-outcome", "unexpected")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.case)")) == [
        "t.doc",
        "t.obs",
        "t.stale-entry",
    ]
    page.select_option("#f-outcome", "")
    page.select_option("#f-basis", "counted")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.case)")) == [
        "t.doc",
        "t.stale-entry",
        "t.test",
    ]
    page.select_option("#f-basis", "unsupported")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.case)") == ["t.gone"]
    page.goto(index.as_uri() + "#case=t.stale-entry")
    page.wait_for_selector("#detail h2.detail-id")
    text = page.locator("#detail").inner_text()
    assert "xpassed" in text and "documented: the docs promise it" in text
    assert errors == []
    page.close()


# ---------------------------------------------------------------- the report answers first (issue 16)

RICH_SPEC = """
topic: demo.rich
title: Failures whose detail must read well
source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}
basis: documented
cases:
  - id: demo.rich.wrong-dtype
    claim: a wrong dtype, so one field of the expectation differs and the others do not
    run: jnp.arange(3)
    expect:
      - dtype: int64
        value: [0, 1, 2]
        warns: none
  - id: demo.rich.multiline-error
    claim: an error whose message has several lines
    run: |
      raise ValueError("first line of the message\\nsecond line\\n    indented third line")
    expect:
      - raises: {type: ValueError, match: "second line.third"}
  - id: demo.rich.crash
    claim: a case that prints to stderr and dies
    isolate: process
    run: |
      import os, sys
      sys.stderr.write("stderr line one\\nstderr line two\\n")
      sys.stderr.flush()
      os._exit(3)
    expect:
      - dtype: int32
"""


@pytest.fixture(scope="module")
def rich_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run (jax, x64 off) of cases that fail in three ways, merged with an interrupted run."""
    root = tmp_path_factory.mktemp("rich")
    specs = write_specs(root, RICH_SPEC)
    results = root / "rich.jsonl"
    proc = run_suite(specs, results)
    assert results.is_file(), proc.stdout + proc.stderr
    stopped = run_file(
        root / "stopped.jsonl", {"t.first": "passed"}, version="0.4.30", end=False, collected=2
    )
    index, _ = build_site([results, stopped], root / "site")
    return index


@pytest.fixture
def rich(browser: Any, rich_site: Path) -> Iterator[Any]:
    page, errors = open_report(browser, rich_site)
    yield page
    assert errors == [], f"console errors: {errors}"
    page.close()


def test_the_verdict_line_comes_first_per_implementation_and_release(page: Any, rich: Any) -> None:
    # the demo site: jax 0.10.2 in off-warn and on
    first = page.locator("main > *").first
    assert first.get_attribute("id") == "verdict"
    [line] = page.locator("#verdict p.verdict").all_inner_texts()
    assert line.startswith("jax 0.10.2: 2 of 4 applicable cells conform (50.0%)"), line
    assert (
        "· 2 unexpected · 0 known divergences · 1 docs-vs-code difference · all 2 runs complete (cpu; off-warn, on)"
        in line
    )
    assert page.locator("#verdict p.verdict.bad").count() == 1
    assert page.locator("#verdict a.v-docs").get_attribute("href") == "#drift"
    # two releases, one of them interrupted: a line each, oldest first, the incomplete run named
    lines = rich.locator("#verdict p.verdict").all_inner_texts()
    assert [v.split(":")[0] for v in lines] == ["jax 0.4.30", "jax 0.10.2"]
    assert "1 of 1 run incomplete" in lines[0] and "1 of 1 applicable cells conform" in lines[0]
    assert lines[1].startswith(
        "jax 0.10.2: 0 of 3 applicable cells conform (0.0%) · 3 unexpected"
    ), lines[1]
    assert rich.locator("#verdict a.v-incomplete").get_attribute("href") == "#interrupted"


def open_cell(page: Any, case: str) -> Any:
    page.locator(f'#matrix-table tr[data-case="{case}"] a.cell').first.click()
    page.wait_for_selector("#detail h2.detail-id")
    return page.locator("#detail")


def test_a_failing_cell_starts_with_the_verdict_and_the_differing_field(rich: Any) -> None:
    detail = open_cell(rich, "demo.rich.wrong-dtype")
    # right under the case id: the verdict sentence, then the expectation that failed, field by field
    order = detail.locator("#detail-body > *").evaluate_all(
        "es => es.map(e => e.className || e.tagName)"
    )
    assert order[:4] == ["detail-id", "verdict-sentence", "H4", "failed-expectation"], order
    assert (
        detail.locator(".verdict-sentence").inner_text()
        == "jax 0.10.2 cpu off-warn: failed: result.dtype=int32, but should be int64"
    )
    assert (
        "report.yaml:10)" in detail.locator("h4").first.inner_text()
    )  # where the failed expect block is
    table = detail.locator("table.failed-expectation")
    assert table.locator("tr.differs").evaluate_all("rs => rs.map(r => r.dataset.field)") == [
        "dtype"
    ]
    assert table.locator("tr.same").evaluate_all("rs => rs.map(r => r.dataset.field)") == [
        "value",
        "warns",
    ]
    assert table.locator('tr[data-field="dtype"] td').all_inner_texts() == ['"int64"', '"int32"']
    # ...before the full expected and actual
    text = detail.inner_text()
    assert (
        text.index("but should be int64")
        < text.index("the expectation that failed")
        < text.index("\nexpected\n")
    )


def test_long_values_and_stderr_keep_their_line_breaks(rich: Any) -> None:
    detail = open_cell(rich, "demo.rich.multiline-error")
    assert detail.locator("tr.differs").evaluate_all("rs => rs.map(r => r.dataset.field)") == [
        "raises"
    ]
    actual = detail.locator("pre").nth(1).inner_text()
    assert "first line of the message\n    second line\n        indented third line" in actual, (
        actual
    )
    assert "\\n" not in actual  # no escaped line breaks
    rich.keyboard.press("Escape")
    detail = open_cell(rich, "demo.rich.crash")
    assert (
        detail.locator(".verdict-sentence")
        .inner_text()
        .endswith("crashed: the worker process exited with status 3")
    )
    assert "stderr line one\n    stderr line two" in detail.locator("pre").nth(1).inner_text()
    assert "stderr line one\nstderr line two" in detail.locator("pre.message").inner_text()


def test_escape_closes_the_detail_panel(rich: Any) -> None:
    detail = open_cell(rich, "demo.rich.wrong-dtype")
    assert detail.is_visible() and "#case=" in rich.url
    rich.keyboard.press("Escape")
    assert not detail.is_visible()
    assert "#case=" not in rich.url  # closed for good: reloading does not bring it back


def test_the_matrix_uses_the_page_width_and_the_page_scrolls_it(
    browser: Any, tmp_path: Path
) -> None:
    # 300 cases x 4 modes: one table as wide as the page, every row on it, no scroll box, no pager
    cases = {f"t.case-{i:03d}": "passed" for i in range(300)}
    files = [
        run_file(tmp_path / f"{m[0]}-{m[1]}.jsonl", cases, mode=m)
        for m in ((False, "warn"), (False, "error"), (False, "allow"), (True, "warn"))
    ]
    index, _ = build_site(files, tmp_path / "site")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(index.as_uri())
    page.wait_for_selector("#matrix-table tbody tr[data-case]")
    assert page.locator("#matrix-table tbody tr[data-case]").count() == 300
    assert page.locator("#pager button").count() == 0
    main_width = page.evaluate("document.querySelector('main').clientWidth")
    table = page.locator("#matrix-table").bounding_box()
    assert table["width"] >= main_width - 48 - 4, (table, main_width)  # main's padding aside
    boxes = page.evaluate("""[...document.querySelectorAll('#matrix, #matrix *')]
        .filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight)
        .map(e => e.id || e.className)""")
    assert boxes == [], f"scroll boxes inside the matrix: {boxes}"
    assert [
        t.strip()
        for t in page.locator("#matrix-table thead th.col div:nth-child(3)").all_inner_texts()
    ] == ["off-warn", "off-error", "off-allow", "on"]  # the mode names of the CLI
    page.close()


def test_the_upcoming_defaults_section_is_shown_and_readable(browser: Any, tmp_path: Path) -> None:
    from tests.test_report_upcoming import flag_demo_runs

    index, _ = build_site(flag_demo_runs(tmp_path), tmp_path / "site")
    page, errors = open_report(browser, index)
    page.locator('nav a[href="#upcoming"]').click()
    section = page.locator("#upcoming")
    assert section.locator("h2").inner_text() == "When JAX flips its upcoming defaults"
    top = page.evaluate("document.querySelector('#upcoming').getBoundingClientRect().top")
    assert -2 <= top < 100, top  # the link brings it into view
    row = section.locator('tr[data-case="demo.upcoming.only-under-the-flag"]')
    assert not row.is_visible()  # each flag's table is collapsed under its sentence (issue 28)
    section.locator('details.flip-group[data-group="jax_custom_vjp3"] summary').click()
    assert row.is_visible()
    cells = [t.strip() for t in row.locator("td").all_inner_texts()]
    assert cells[3] == "not applicable" and cells[4].startswith("passes"), cells
    assert (
        section.locator('li[data-group="jax_custom_vjp3"]')
        .inner_text()
        .startswith("jax_custom_vjp3: 2 cases")
    )
    # readable: the tables fit the page width, and the claim text is not squeezed to nothing
    right = page.evaluate(
        "Math.max(...[...document.querySelectorAll('#upcoming table')].map(t => t.getBoundingClientRect().right))"
    )
    assert right <= 1400, right
    assert row.locator("td.claim").bounding_box()["width"] > 150
    # the flagged column's matrix header names its flag on a line of its own, and its detail lists it
    assert page.locator("#matrix-table thead th.col .flag").all_inner_texts() == [
        "+jax_custom_vjp3"
    ]
    page.locator(
        '#matrix-table tr[data-case="demo.upcoming.only-under-the-flag"] a.cell[data-outcome="passed"]'
    ).click()
    page.wait_for_selector("#detail h2.detail-id")
    assert "jax_custom_vjp3=true" in page.locator("#detail").inner_text()
    assert errors == [], f"console errors: {errors}"
    page.close()
