"""The report as a person sees it: a real run's report opened from disk in headless Chromium.

Uses Debian's `chromium` through Playwright (`playwright install` cannot download browsers
here); skips, saying why, only where no Chromium or no Playwright is installed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.report import build_site
from tests.test_report import SCRIPT, run_file, run_suite, write_specs

CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="no `chromium` on PATH (Debian: apt-get install chromium)"),
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
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, site: Path) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site.as_uri())
    page.wait_for_selector("#matrix-table tbody tr[data-case]")
    yield page
    assert errors == [], f"console errors: {errors}"
    assert page.evaluate("window.__pwned") is None, "markup from a result ran as script"
    page.close()


def summary_cell(page: Any, mode: str, outcome: str) -> str:
    row = page.locator("table.summary tbody tr", has=page.locator("td", has_text=mode))
    return str(row.locator(f'td[data-outcome="{outcome}"]').inner_text()).strip()


def test_summary_shows_the_counts_and_compliance(page: Any) -> None:
    assert summary_cell(page, "off-warn", "passed") == "1"
    assert summary_cell(page, "off-warn", "failed") == "2"
    assert summary_cell(page, "off-warn", "not_applicable") == "1"
    assert summary_cell(page, "on-warn", "passed") == "1"
    assert summary_cell(page, "on-warn", "not_applicable") == "3"
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
    assert '"dtype": "float16"' in pres[0] and '"dtype": "int32"' in pres[1]  # expected, then actual
    assert detail.locator(".badge").inner_text() == "failed"
    assert "report.yaml:" in text  # the spec's file and line
    link = detail.locator('dd a[href^="https://docs.jax.dev"]')
    assert link.count() == 1
    detail.locator("#detail-close").click()
    assert not detail.is_visible()


def test_markup_in_a_message_shows_as_text(page: Any) -> None:
    page.locator('#matrix-table tr[data-case="demo.report.markup-message"] a.cell[data-outcome="failed"]').click()
    page.wait_for_selector("#detail pre.message")
    message = page.locator("#detail pre.message").inner_text()
    assert SCRIPT in message and "<b>bold</b>" in message
    assert page.locator("#detail b").count() == 0
    assert SCRIPT in page.locator('#matrix-table tr[data-case="demo.report.markup-message"] .claim').inner_text()


def test_filters_narrow_the_matrix(page: Any) -> None:
    rows = page.locator("#matrix-table tbody tr[data-case]")
    assert rows.count() == 4
    page.select_option("#f-outcome", "failed")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.case)")) == ["demo.report.markup-message", "demo.report.wrong-dtype"]
    assert page.locator("#f-count").inner_text().startswith("2 of 4 cases")
    page.select_option("#f-outcome", "")
    page.select_option("#f-mode", "on-warn")
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
    for version, outcomes in (("0.4.30", {"t.changed": "failed", "t.same": "passed"}),
                              ("0.10.2", {"t.changed": "passed", "t.same": "passed"})):
        for mode in ((False, "warn"), (True, "warn")):
            # t.same differs between modes, never between releases
            picks = {**outcomes, "t.same": "passed" if mode[0] else "not_applicable"}
            files.append(run_file(tmp_path / f"{version}-{mode[0]}.jsonl", picks, version=version, mode=mode))
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
    assert compat.first.locator("td").all_inner_texts() == ["✗", "✓", "0.10.2"]
    assert "0 regressed · 2 fixed" in page.locator("#comparison").inner_text()  # t.changed in both modes
    assert errors == []
    page.close()


def test_xpassed_and_the_basis_of_each_case_are_shown(browser: Any, tmp_path: Path) -> None:
    # A listed divergence that now holds is xpassed: counted in the summary and unexpected in the matrix;
    # compliance counts documented and tested cases only, the basis filter narrows the matrix to each kind.
    extra = {"t.stale-entry": {"basis": "documented"}, "t.doc": {"basis": "documented"}, "t.test": {"basis": "tested"},
             "t.obs": {"basis": "observed"}, "t.gone": {"basis": "unsupported"}}
    path = run_file(tmp_path / "r.jsonl", {"t.stale-entry": "xpassed", "t.doc": "failed", "t.test": "passed",
                                           "t.obs": "failed", "t.gone": "passed"}, extra=extra)
    index, _ = build_site([path], tmp_path / "site")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(index.as_uri())
    page.wait_for_selector("#matrix-table tbody tr[data-case]")
    assert summary_cell(page, "off-warn", "xpassed") == "1"
    row = page.locator("table.summary tbody tr").first
    assert row.locator("td.compliance").inner_text().strip() == "66.7%"  # 2 of 3 documented/tested hold
    assert row.locator("td.basis-observed").inner_text().strip() == "0/1"
    assert row.locator("td.basis-unsupported").inner_text().strip() == "1/1"
    rows = page.locator("#matrix-table tbody tr[data-case]")
    page.select_option("#f-outcome", "unexpected")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.case)")) == ["t.doc", "t.obs", "t.stale-entry"]
    page.select_option("#f-outcome", "")
    page.select_option("#f-basis", "counted")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.case)")) == ["t.doc", "t.stale-entry", "t.test"]
    page.select_option("#f-basis", "unsupported")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.case)") == ["t.gone"]
    page.goto(index.as_uri() + "#case=t.stale-entry")
    page.wait_for_selector("#detail h2.detail-id")
    text = page.locator("#detail").inner_text()
    assert "xpassed" in text and "documented: the docs promise it" in text
    assert errors == []
    page.close()
