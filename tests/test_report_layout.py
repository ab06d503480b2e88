"""The report at 1024 px, and what its first screens say in words (issue 28, items 5 and 7).

The summary table fits the page or scrolls inside itself with its verdict columns (compliance,
status) first; the upcoming-defaults section opens with one sentence per flag, computed from its
data, its tables collapsed; the verdict line says what it counts and how many conforming cells
follow the code where the docs say otherwise; the header says what its record count counts; the
known divergences and the spec files are links; a one-release "since" is said once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from jax_conformance.report import build_site
from jax_conformance.report.model import build_model

from tests.test_report import run_file
from tests.test_report_browser import CHROMIUM, MATRIX_ROW, browser  # noqa: F401  (the module's browser fixture)

WIDTH = 1024
FLAGS = ("jax_custom_vjp3", "jax_disable_bwd_checks", "jax_refs_to_pins", "jax_remat3", "jax_scan3")


def flagged_file(
    path: Path,
    cases: dict[str, str],
    flags: dict[str, bool],
    *,
    actual: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """A results file of mode off-warn with these flags on top (as `+upcoming` writes them)."""
    rid = "off-warn+" + "+".join(flags) if flags else "off-warn"
    tmp = run_file(
        path.with_suffix(".raw"),
        cases,
        run_id=rid,
        extra={c: {"actual": a} for c, a in (actual or {}).items()},
    )
    lines = []
    for record in map(json.loads, tmp.read_text().splitlines()):
        if isinstance(record.get("mode"), dict) and flags:
            record["mode"]["flags"] = dict(flags)
        lines.append(json.dumps(record))
    tmp.unlink()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def upcoming_files(root: Path, n: int = 12) -> list[Path]:
    """off-warn, all five upcoming flags, and each flag alone: the run `--modes off-warn,+upcoming` makes."""
    cases = {f"custom_vjp.closures.c{i:02d}": "passed" for i in range(n)}
    today = {c: {"dtype": "float32"} for c in cases}
    error = {
        c: {"raised": {"type": "UnexpectedTracerError", "message": "closed over a Tracer"}}
        for c in cases
    }
    files = [
        flagged_file(root / "base.jsonl", cases, {}, actual=today),
        flagged_file(root / "all.jsonl", cases, dict.fromkeys(FLAGS, True), actual=error),
    ]
    for flag in FLAGS:
        files.append(
            flagged_file(
                root / f"{flag}.jsonl",
                cases,
                {flag: True},
                actual=error if flag == "jax_custom_vjp3" else today,
            )
        )
    return files


def four_mode_files(root: Path) -> list[Path]:
    cases = {f"x64.defaults.case-{i:02d}": "passed" for i in range(20)}
    cases["x64.defaults.diverges"] = "xfailed"
    return [
        run_file(root / f"{m[0]}-{m[1]}.jsonl", cases, mode=m)
        for m in ((False, "warn"), (False, "error"), (False, "allow"), (True, "warn"))
    ]


def open_at(browser: Any, index: Path, width: int = WIDTH) -> tuple[Any, list[str]]:  # noqa: F811
    page = browser.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(index.as_uri())
    page.wait_for_selector(MATRIX_ROW)
    return page, errors


def summary_fits(page: Any) -> None:
    """Every row's compliance and status on screen without scrolling anything; the page itself never sideways."""
    heads = [t.strip() for t in page.locator("table.summary thead th").all_inner_texts()]
    assert heads.index("compliance") < heads.index("passed") and heads.index(
        "status"
    ) < heads.index("passed"), heads
    for cell in ("td.compliance", "td.status"):
        rights = page.evaluate(
            f"[...document.querySelectorAll('table.summary {cell}')].map(e => e.getBoundingClientRect().right)"
        )
        assert rights and max(rights) <= WIDTH, (cell, rights)
    wrap = page.evaluate("""(() => { const t = document.querySelector('table.summary');
        const w = t.parentElement; return [w.getBoundingClientRect().right, getComputedStyle(w).overflowX]; })()""")
    assert wrap[0] <= WIDTH and (wrap[1] in ("auto", "scroll")), (
        wrap
    )  # the table scrolls inside its own box
    page_width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate(f"""[...document.querySelectorAll('body *')]
        .filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > {WIDTH})
        .slice(0, 5)
        .map(e => e.tagName + '.' + e.className + '#' + e.id + ' '
                  + Math.round(e.getBoundingClientRect().right))""")
    assert page_width <= WIDTH, f"the page scrolls sideways: {page_width} px: {wide}"


@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="no `chromium` on PATH (Debian: apt-get install chromium)"
)
def test_the_four_mode_summary_fits_1024_px(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    index, _ = build_site(four_mode_files(tmp_path), tmp_path / "site")
    page, errors = open_at(browser, index)
    summary_fits(page)
    page.screenshot(path=str(tmp_path / "four-modes-1024.png"), full_page=False)
    assert errors == []
    page.close()


@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="no `chromium` on PATH (Debian: apt-get install chromium)"
)
def test_the_upcoming_summary_fits_1024_px_and_the_section_opens_with_sentences(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    index, _ = build_site(upcoming_files(tmp_path), tmp_path / "site")
    page, errors = open_at(browser, index)
    summary_fits(page)
    section = page.locator("#upcoming")
    first = section.locator("li[data-group]").first.inner_text()
    assert first == (
        "jax_custom_vjp3: 12 cases behave otherwise: a result becomes an error, "
        "UnexpectedTracerError (12: custom_vjp.closures 12)."
    ), first
    # the tables are collapsed, one per flag; opening one shows its rows
    details = section.locator("details.flip-group")
    assert details.count() == 1 and details.first.get_attribute("open") is None
    row = section.locator('tr[data-case="custom_vjp.closures.c00"]')
    assert not row.is_visible()
    details.first.locator("summary").click()
    assert row.is_visible()
    right = page.evaluate(
        "Math.max(...[...document.querySelectorAll('#upcoming table')].map(t => t.getBoundingClientRect().right))"
    )
    assert right <= WIDTH, right
    page.screenshot(path=str(tmp_path / "upcoming-1024.png"), full_page=True)
    assert errors == []
    page.close()


def test_each_flag_gets_a_sentence_computed_from_its_cases(tmp_path: Path) -> None:
    cases = {
        "custom_vjp.closures.a": "passed",
        "custom_vjp.closures.b": "passed",
        "custom_vjp.rule_outputs.c": "passed",
        "custom_vjp.basics.d": "passed",
        "custom_vjp.basics.same": "passed",
    }
    today = {
        "custom_vjp.closures.a": {"dtype": "float32"},
        "custom_vjp.closures.b": {"dtype": "float32"},
        "custom_vjp.rule_outputs.c": {"raised": {"type": "TypeError", "message": "bad output"}},
        "custom_vjp.basics.d": {"type": "float", "value": 1.0},
        "custom_vjp.basics.same": {"dtype": "int32"},
    }
    then = {
        **today,
        "custom_vjp.closures.a": {"raised": {"type": "UnexpectedTracerError", "message": "x"}},
        "custom_vjp.closures.b": {"raised": {"type": "UnexpectedTracerError", "message": "x"}},
        "custom_vjp.rule_outputs.c": {"raised": {"type": "ValueError", "message": "bad output"}},
        "custom_vjp.basics.d": {"dtype": "float32", "shape": [], "value": 1.0},
    }
    files = [
        flagged_file(tmp_path / "base.jsonl", cases, {}, actual=today),
        flagged_file(tmp_path / "vjp3.jsonl", cases, {"jax_custom_vjp3": True}, actual=then),
    ]
    [sec] = build_model(files).upcoming
    [group] = sec.groups
    assert group.sentence == (
        "jax_custom_vjp3: 4 cases behave otherwise: a result becomes an error, UnexpectedTracerError "
        "(2: custom_vjp.closures 2), an array (float32) instead of a Python float (1: custom_vjp.basics 1), "
        "ValueError instead of TypeError (1: custom_vjp.rule_outputs 1)."
    ), group.sentence


@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="no `chromium` on PATH (Debian: apt-get install chromium)"
)
def test_the_header_verdict_and_docs_table_say_what_they_count(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    docs = {
        "documented": {
            "holds": False,
            "line": 3,
            "message": "docs fail",
            "says": "the docs say int64",
            "source": [],
        },
        "basis": "documented",
    }
    cases = {
        "x64.defaults.a": "passed",
        "x64.defaults.b": "passed",
        "x64.defaults.diverges": "xfailed",
    }
    files = [
        run_file(
            tmp_path / f"{m[0]}-{m[1]}.jsonl",
            cases,
            mode=m,
            extra={
                "x64.defaults.a": docs,
                "x64.defaults.b": {"basis": "documented"},
                "x64.defaults.diverges": {
                    "basis": "tested",
                    "spec_file": "specs/x64/defaults.yaml",
                    "line": 16,
                },
            },
        )
        for m in ((False, "warn"), (True, "warn"))
    ]
    index, _ = build_site(files, tmp_path / "site")
    page, errors = open_at(browser, index)
    meta = page.locator("header p.meta").inner_text()
    # results files hold 2 x (3 case records + header, collected count, end) = 12 records
    assert (
        "6 case records (one per case, mode and backend; the files' 12 records also hold each "
        "run's header, collected count and end)" in meta
    ), meta
    line = page.locator("#verdict p.verdict").inner_text()
    assert (
        "4 of 6 applicable cells conform (66.7%), of which 2 (1 case) follow the code where the docs say otherwise"
        in line
    ), line
    assert "cells: case × mode × backend" in page.locator("#verdict").inner_text()
    href = page.locator("#verdict a.v-divergences").get_attribute("href")
    assert href and Path(unquote(urlparse(href).path)).name == "jax.yaml", href
    assert Path(unquote(urlparse(href).path)).is_file(), href
    # a one-release docs-vs-code table says "since" once, above the table, not on every row
    assert page.locator("#drift td.since").count() == 0
    assert "jax 0.10.2 or earlier" in page.locator("#drift p.since").inner_text()
    # the detail panel's spec path is a link to the spec file
    page.goto(index.as_uri() + "#case=x64.defaults.diverges")
    page.wait_for_selector("#detail h2.detail-id")
    link = page.locator("#detail dd a.spec-link")
    assert link.count() >= 1 and link.first.inner_text() == "specs/x64/defaults.yaml:16"
    assert Path(unquote(urlparse(link.first.get_attribute("href")).path)).is_file()
    assert errors == []
    page.close()


def test_the_console_summary_lists_the_modes_in_the_reports_order(tmp_path: Path) -> None:
    """`jax-conformance run` prints its rows in the order of the report's summary (issue 28): for
    `--modes off-warn,+upcoming` the jobs run base, all upcoming, then each flag alone."""
    from jax_conformance.commands.run import in_report_order

    files = upcoming_files(tmp_path, n=1)
    html_order = [c.mode for c in build_model(files).columns]
    jobs = ["off-warn", "off-warn+" + "+".join(FLAGS), *(f"off-warn+{f}" for f in FLAGS)]
    rows = [("jax", "0.10.2", "cpu", m, {"passed": 1}, "done") for m in jobs]
    assert [r[3] for r in in_report_order(rows)] == html_order
    assert html_order != jobs  # the order they ran in is another
