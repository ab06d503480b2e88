"""The report: merging result files, the views computed from them, and the site written from them.

Real records come from a real `pytest conformance/ --adapter=jax` run over a small spec
directory (one case holds, two fail, one is not applicable); synthetic records cover what one
machine cannot produce (other releases, killed runs, 100,000-record merges).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.cli import main as cli_main
from jax_conformance.mode import mode_key
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.records import encode
from jax_conformance.releases import status_over_modes
from jax_conformance.report import build_site
from jax_conformance.report.model import build_model, load_mutation
from jax_conformance.report.site import (
    KEEP_BUILDS,
    compat_json,
    first_page_bytes,
    headlines,
    safe_url,
)

REPO = PACKAGE_DIR.parent
SCRIPT = "<script>window.__pwned = 1</script>"

DEMO_SPEC = f"""
topic: demo.report
title: Cases for the report tests
source: {{doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere", url: "https://docs.jax.dev/en/latest/default_dtypes.html"}}
tags: [dtypes]
cases:
  - id: demo.report.holds
    claim: jnp.arange of Python ints gives int32 with x64 off
    basis: documented
    documented:
      says: the docs say one thing
      source: {{doc: docs/default_dtypes.md}}
      expect:
        - when: {{x64: false}}
          dtype: int64
    run: jnp.arange(3)
    expect:
      - when: {{x64: false}}
        dtype: int32
  - id: demo.report.wrong-dtype
    claim: a deliberately wrong claim, so that the report has a failure to show
    run: jnp.arange(3)
    expect:
      - when: {{x64: false}}
        dtype: float16
  - id: demo.report.markup-message
    claim: "an exception whose message is markup: {SCRIPT}"
    run: |
      raise ValueError("{SCRIPT}<b>bold</b>")
    expect:
      - when: {{x64: false}}
        dtype: int32
  - id: demo.report.x64-only
    claim: a claim about x64 on only, so it is not applicable here
    run: jnp.arange(3)
    expect:
      - when: {{x64: true}}
        dtype: int64
"""


def write_specs(root: Path, text: str = DEMO_SPEC) -> Path:
    specs = root / "specs"
    (specs / "demo").mkdir(parents=True, exist_ok=True)
    (specs / "demo" / "report.yaml").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return specs


def run_suite(
    specs: Path, results: Path, *args: str, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    """A real run of the suite on these specs, in a subprocess, writing a results file."""
    return subprocess.run(
        [
            python,
            "-m",
            "pytest",
            str(PACKAGE_DIR),
            "--adapter=jax",
            "--specs",
            str(specs),
            "--results",
            str(results),
            "-p",
            "no:cacheprovider",
            "-q",
            "--x64=off",
            "--explicit-x64-dtypes=warn",
            *args,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def real_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("real")
    results = root / "results.jsonl"
    proc = run_suite(write_specs(root), results)
    assert results.is_file(), proc.stdout + proc.stderr
    return results


# ---------------------------------------------------------------- synthetic records


def run_file(
    path: Path,
    cases: dict[str, str],
    *,
    version: str = "0.10.2",
    mode: tuple[bool, str] = (False, "warn"),
    backend: str = "cpu",
    adapter: str = "jax",
    end: bool = True,
    run_id: str | None = None,
    extra: dict[str, dict[str, Any]] | None = None,
    collected: int | None = None,
) -> Path:
    """A results file as the plugin writes it: header, collected, one record per case, end."""
    rid = run_id or f"{adapter}-{version}-{backend}-{mode[0]}-{mode[1]}"
    m = {"x64": mode[0], "explicit_x64_dtypes": mode[1]}
    lines: list[dict[str, Any]] = [
        {
            "record": "run",
            "run_id": rid,
            "adapter": adapter,
            "implementation_version": version,
            "behaviour_version": version,
            "mode": m,
            "backends": [backend],
            "environment": {"python": "3.11", "platform": "test"},
            "started": "2026-01-01T00:00:00",
        },
        {
            "record": "collected",
            "run_id": rid,
            "count": len(cases) if collected is None else collected,
        },
    ]
    for case, outcome in cases.items():
        lines.append(
            {
                "record": "case",
                "run_id": rid,
                "case": case,
                "topic": case.rpartition(".")[0],
                "claim": f"claim of {case}",
                "spec_file": "specs/t.yaml",
                "line": 1,
                "adapter": adapter,
                "implementation_version": version,
                "backend": backend,
                "mode": m,
                "outcome": outcome,
                "message": f"{case} {outcome}",
                "expected": {"dtype": "int32"},
                "actual": {"dtype": "int32"},
                "duration_s": 0.01,
                **(extra or {}).get(case, {}),
            }
        )
    if end:
        lines.append(
            {"record": "end", "run_id": rid, "exitstatus": 0, "interrupted": False, "counts": {}}
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in lines)
    return path


# ---------------------------------------------------------------- the model


def test_summary_counts_from_a_real_run(real_results: Path) -> None:
    model = build_model([real_results])
    [col] = model.columns
    assert (col.adapter, col.backend, col.mode) == ("jax", "cpu", "off-warn")
    assert col.counts["passed"] == 1
    assert col.counts["failed"] == 2, col.counts
    assert col.counts["not_applicable"] == 1
    # not applicable is left out of the denominator: 1 holds of 3 applicable
    assert col.applicable == 3
    assert col.compliance == pytest.approx(100 / 3)
    assert not col.interrupted
    wrong = model.cells[
        (next(c.index for c in model.cases if c.id == "demo.report.wrong-dtype"), 0)
    ]
    assert wrong["expected"]["dtype"] == "float16" and wrong["actual"]["dtype"] == "int32"
    [diff] = model.docs_vs_code
    assert (
        diff.case.id == "demo.report.holds"
        and diff.case.documented["says"] == "the docs say one thing"
    )
    assert [(a, v, [c.mode for c, _ in seen]) for a, v, seen in diff.releases] == [
        ("jax", col.version, ["off-warn"])
    ]
    assert "dtype=int32, but should be int64" in diff.releases[0][2][0][1]
    assert col.docs_vs_code == 1


def test_markup_in_results_is_text_in_the_page(real_results: Path, tmp_path: Path) -> None:
    # A baseline where the markup case held makes its message appear server-rendered, as a regression.
    baseline = tmp_path / "baseline.jsonl"
    records = [json.loads(line) for line in real_results.read_text().splitlines()]
    for r in records:
        r["run_id"] = "baseline"
        if r.get("case") == "demo.report.markup-message":
            r["outcome"] = "passed"
    baseline.write_text("".join(json.dumps(r) + "\n" for r in records))
    index, model = build_site([real_results], tmp_path / "site", baseline=[baseline])
    assert [c.case for c in model.comparisons[0].regressed] == ["demo.report.markup-message"]
    html = index.read_text()
    assert SCRIPT not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html


def test_two_releases_give_a_release_table_and_a_comparison(tmp_path: Path) -> None:
    old = run_file(
        tmp_path / "old.jsonl",
        {
            "t.same": "passed",
            "t.fixed": "failed",
            "t.broke": "passed",
            "t.gone": "passed",
            "t.na": "not_applicable",
        },
        version="0.4.30",
    )
    new = run_file(
        tmp_path / "new.jsonl",
        {
            "t.same": "passed",
            "t.fixed": "passed",
            "t.broke": "failed",
            "t.new": "passed",
            "t.na": "passed",
        },
        version="0.10.2",
    )
    model = build_model([new, old])
    assert [c.version for c in model.columns] == [
        "0.4.30",
        "0.10.2",
    ]  # release order, not text order
    [table] = model.compat
    assert table.versions == ["0.4.30", "0.10.2"]
    # per row: case index, a letter per release, the first release it holds, the first it changed in
    page = compat_json(table, model)
    rows = {model.cases[ci].id: tuple(rest) for ci, *rest in page["rows"]}
    assert rows["t.fixed"] == ("FH", "0.10.2", "0.10.2")
    assert rows["t.broke"] == ("HF", "0.4.30", "0.10.2")
    assert rows["t.same"] == ("HH", "0.4.30", "")
    assert rows["t.new"] == ("-H", "0.10.2", "")  # not run in 0.4.30: nothing to change from
    assert rows["t.na"] == ("NH", "0.10.2", "0.10.2")
    # rows that differ between releases come first
    order = [model.cases[ci].id for ci, *_ in page["rows"]]
    assert order.index("t.same") > max(order.index(c) for c in ("t.fixed", "t.broke", "t.na"))
    [cmp] = model.comparisons
    assert cmp.title == "jax 0.10.2 compared with jax 0.4.30"
    assert [c.case for c in cmp.regressed] == ["t.broke"]
    assert [c.case for c in cmp.fixed] == ["t.fixed"]
    assert [c.case for c in cmp.new] == ["t.new"]
    assert [c.case for c in cmp.gone] == ["t.gone"]
    assert [c.case for c in cmp.changed] == ["t.na"]
    assert cmp.same == 1


def test_case_status_over_modes() -> None:
    assert status_over_modes(["passed", "xpassed"]) == "holds"
    assert status_over_modes(["passed", "failed"]) == "partly"
    assert status_over_modes(["xfailed", "crashed"]) == "fails"
    assert status_over_modes(["not_applicable", "skipped"]) == "n/a"
    assert status_over_modes(["not_applicable", "passed"]) == "holds"
    assert status_over_modes([]) == "missing"


def test_modes_with_flags_sort_after_their_base_mode() -> None:
    slugs = [
        "on+jax_remat3",
        "off-warn+jax_scan3+jax_remat3",
        "on",
        "off-warn+jax_scan3",
        "off-error",
        "off-warn",
    ]
    assert sorted(slugs, key=mode_key) == [
        "off-warn",
        "off-warn+jax_scan3",
        "off-warn+jax_scan3+jax_remat3",
        "off-error",
        "on",
        "on+jax_remat3",
    ]


def test_a_run_without_end_record_is_interrupted_and_says_so(tmp_path: Path) -> None:
    done = run_file(tmp_path / "a.jsonl", {"t.a": "passed", "t.b": "passed"})
    cut = run_file(
        tmp_path / "b.jsonl", {"t.a": "passed"}, mode=(False, "error"), end=False, collected=2
    )
    with open(cut, "a") as f:
        f.write('{"record":"case","case":"t.b","outc')  # killed mid-write
    index, model = build_site([done, cut], tmp_path / "site")
    interrupted = [c for c in model.columns if c.interrupted]
    assert [c.mode for c in interrupted] == ["off-error"]
    assert interrupted[0].counts["passed"] == 1
    assert "1 of 2 case records kept" in interrupted[0].interruption
    assert any("cut off while writing" in p for p in model.problems)
    html = index.read_text()
    assert "Interrupted runs" in html and "jax 0.10.2 cpu off-error" in html


def test_an_end_record_marked_interrupted_counts_too(tmp_path: Path) -> None:
    path = run_file(tmp_path / "a.jsonl", {"t.a": "passed"}, end=False)
    with open(path, "a") as f:
        f.write(
            json.dumps(
                {
                    "record": "end",
                    "run_id": "jax-0.10.2-cpu-False-warn",
                    "interrupted": True,
                    "exitstatus": 2,
                    "reason": "the mode's pytest process killed by SIGKILL",
                }
            )
            + "\n"
        )
    [col] = build_model([path]).columns
    assert col.interrupted and "killed by SIGKILL" in col.interruption


def test_a_release_that_could_not_run_shows_why(tmp_path: Path) -> None:
    """compat writes a run/end pair with status "unavailable" for a release pip cannot install."""
    ok = run_file(tmp_path / "a.jsonl", {"t.a": "passed"})
    gone = tmp_path / "gone.jsonl"
    reason = "pip install jax[cpu]==0.0.1 failed: no matching distribution"
    gone.write_text(
        json.dumps(
            {
                "record": "run",
                "run_id": "gone",
                "adapter": "jax",
                "implementation_version": "0.0.1",
                "mode": {"x64": False, "explicit_x64_dtypes": "warn"},
                "backends": [],
                "status": "unavailable",
                "reason": reason,
            }
        )
        + "\n"
        + json.dumps(
            {
                "record": "end",
                "run_id": "gone",
                "exitstatus": None,
                "interrupted": False,
                "counts": {},
                "status": "unavailable",
                "reason": reason,
            }
        )
        + "\n"
    )
    index, model = build_site([ok, gone], tmp_path / "site")
    [col] = [c for c in model.columns if c.version == "0.0.1"]
    assert col.status_text == f"unavailable: {reason}"
    assert f"unavailable: {reason}" in index.read_text()


def test_the_same_run_read_twice_is_counted_once(tmp_path: Path) -> None:
    per_mode = run_file(
        tmp_path / "modes" / "jax-off-warn.jsonl", {"t.a": "passed", "t.b": "failed"}
    )
    merged = tmp_path / "results.jsonl"
    merged.write_bytes(per_mode.read_bytes())
    model = build_model([tmp_path])  # a directory: every *.jsonl under it
    [col] = model.columns
    assert col.total == 2


def test_several_backends_of_one_run_are_separate_columns(tmp_path: Path) -> None:
    path = run_file(tmp_path / "a.jsonl", {"t.a": "passed"}, backend="cpu")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["backends"] = ["cpu", "gpu"]
    gpu = dict(records[2], backend="gpu", outcome="failed")
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records[:3], gpu, records[3]]))
    model = build_model([path])
    assert [(c.backend, c.counts["passed"], c.counts["failed"]) for c in model.columns] == [
        ("cpu", 1, 0),
        ("gpu", 0, 1),
    ]


def test_mutation_results_are_read_tolerantly(tmp_path: Path) -> None:
    path = tmp_path / "mutation.json"
    path.write_bytes(
        encode(
            {
                "record": "mutation",
                "score": "1/3",
                "mutants": [
                    {"name": "m-killed", "rule": "truncate", "killed": True, "killed_by": ["t.a"]},
                    {
                        "name": "m-survivor",
                        "rule": "drop-warning",
                        "killed": False,
                        "killed_by": [],
                        "explanation": "<i>no case covers it</i>",
                    },
                    {"name": "m-bare"},
                    {"name": "m-unknown", "killed_by": "t.b"},
                    "not a mutant",
                ],
            }
        )
    )
    mu = load_mutation(path)
    assert mu is not None and mu["score"] == "1/3"
    # survivors first; a mutant without `killed` is shown as unknown, not as killed
    assert [m["name"] for m in mu["mutants"]] == ["m-survivor", "m-bare", "m-killed", "m-unknown"]
    assert mu["mutants"][1]["killed"] is None and mu["mutants"][3]["killed_by"] == ["t.b"]
    results = run_file(tmp_path / "r.jsonl", {"t.a": "passed"})
    index, _ = build_site([results], tmp_path)  # picks up <out>/mutation.json
    html = index.read_text()
    assert "Mutation score" in html and "1/3" in html
    assert "&lt;i&gt;no case covers it&lt;/i&gt;" in html
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert "cannot read" in (load_mutation(bad) or {}).get("error", "")
    bad.write_text(json.dumps({"score": "1/3"}) + "\n")  # JSON, but no mutation record
    assert "holds no mutation record" in (load_mutation(bad) or {}).get("error", "")


def test_links_only_to_http() -> None:
    assert safe_url("https://docs.jax.dev/x") == "https://docs.jax.dev/x"
    assert safe_url("javascript:alert(1)") == ""
    assert safe_url(None) == ""


def test_rendering_replaces_the_site_whole_and_leaves_other_files(tmp_path: Path) -> None:
    out = tmp_path / "site"
    results = run_file(out / "results.jsonl", {"t.a": "passed"})
    (out / "modes").mkdir()
    (out / "modes" / "keep.jsonl").write_text("{}\n")
    builds = []
    for _ in range(KEEP_BUILDS + 2):
        index, _ = build_site([results], out)
        builds.append(re.search(r'data-build="([^"]+)"', index.read_text()).group(1))  # type: ignore[union-attr]
        assert (out / builds[-1] / "data.js").is_file()
        time.sleep(1.1)  # builds are named by the second they were made
    left = sorted(p.name for p in (out / "assets").iterdir())
    assert len(left) == KEEP_BUILDS and builds[-1].split("/")[1] in left
    assert not list(out.glob(".index-*")) and not list((out / "assets").glob(".tmp-*"))
    assert results.is_file() and (out / "modes" / "keep.jsonl").read_text() == "{}\n"


def test_report_command(real_results: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "report",
            str(real_results),
            "--out",
            str(tmp_path / "site"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(
        r"report: .*index\.html \(1 columns, 4 cases, 4 records; first page [0-9.]+ MB", proc.stdout
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "report",
            str(empty),
            "--out",
            str(tmp_path / "none"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "no runs found" in proc.stderr
    assert not (tmp_path / "none" / "index.html").exists()


def synthetic_merge(
    root: Path, cases: int, versions: int, backends: tuple[str, ...] = ("cpu", "gpu")
) -> list[Path]:
    """cases x versions x backends x 4 modes records, outcomes varied, as separate result files."""
    outcomes = ["passed"] * 12 + [
        "failed",
        "not_applicable",
        "not_applicable",
        "xfailed",
        "crashed",
        "timeout",
    ]
    paths = []
    modes = [(False, "warn"), (False, "error"), (False, "allow"), (True, "warn")]
    for v in range(versions):
        for backend in backends:
            for m, mode in enumerate(modes):
                path = root / f"r-{v}-{backend}-{m}.jsonl"
                picks = {
                    f"topic{c % 40}.case-{c:05d}": outcomes[(c * 7 + v * 3 + m) % len(outcomes)]
                    for c in range(cases)
                }
                extra = {
                    k: {
                        "message": "x" * 200 if o != "passed" else "",
                        "claim": f"claim {k} " + "word " * 15,
                    }
                    for k, o in picks.items()
                }
                paths.append(
                    run_file(
                        path, picks, version=f"0.{v + 4}.0", mode=mode, backend=backend, extra=extra
                    )
                )
    return paths


@pytest.mark.slow
def test_a_100000_record_merge_keeps_the_first_page_light(tmp_path: Path) -> None:
    paths = synthetic_merge(tmp_path / "in", cases=1250, versions=10)  # 1250 x 10 x 2 x 4 = 100,000
    t0 = time.perf_counter()
    index, model = build_site(paths, tmp_path / "site")
    took = time.perf_counter() - t0
    assert model.records == 100_000 and len(model.columns) == 80
    size = first_page_bytes(index)
    print(f"\n100,000 records: first page {size / 1e6:.2f} MB, rendered in {took:.1f}s")
    assert size < 5_000_000
    assert len(model.compat[0].versions) == 10


# ---------------------------------------------------------------- verdicts: basis, docs vs code, xpassed


def test_compliance_counts_documented_and_tested_only(tmp_path: Path) -> None:
    # observed cases are shown beside compliance, unsupported ones never count; a legacy record
    # without `basis` counts as before.
    extra = {
        "t.doc": {"basis": "documented"},
        "t.test": {"basis": "tested"},
        "t.obs": {"basis": "observed"},
        "t.gone": {"basis": "unsupported"},
        "t.obs-fails": {"basis": "observed"},
    }
    path = run_file(
        tmp_path / "r.jsonl",
        {
            "t.doc": "passed",
            "t.test": "failed",
            "t.obs": "passed",
            "t.obs-fails": "failed",
            "t.gone": "passed",
            "t.legacy": "passed",
        },
        extra=extra,
    )
    [col] = build_model([path]).columns
    assert col.compliance == pytest.approx(100 * 2 / 3)  # t.doc and t.legacy hold, t.test fails
    assert col.observed == (1, 2)
    assert col.unsupported == (1, 1)


def test_docs_vs_code_is_computed_per_release_with_its_since(tmp_path: Path) -> None:
    # The docs' expectation holds at 0.4.30 and fails at 0.8.0 and 0.10.2 while the code's holds:
    # the case is listed for 0.8.0 and 0.10.2 only, since 0.8.0 (the docs held in 0.4.30).
    def documented(holds: bool) -> dict[str, Any]:
        return {
            "t.ctx": {
                "basis": "documented",
                "documented": {
                    "holds": holds,
                    "line": 9,
                    "message": "" if holds else "did not raise",
                    "says": "no block-level switch",
                    "source": [{"doc": "docs/d.md"}],
                },
            },
            "t.fails": {
                "documented": {"holds": False, "line": 3, "message": "x", "says": "s", "source": []}
            },
        }

    for version, holds in (("0.4.30", True), ("0.8.0", False), ("0.10.2", False)):
        run_file(
            tmp_path / f"{version}.jsonl",
            {"t.ctx": "passed", "t.fails": "failed"},
            version=version,
            extra=documented(holds),
        )
    model = build_model([tmp_path])
    [diff] = (
        model.docs_vs_code
    )  # t.fails: the code's expectation failed too, so it is no docs-vs-code difference
    assert diff.case.id == "t.ctx" and diff.case.documented == {
        "says": "no block-level switch",
        "source": [{"doc": "docs/d.md"}],
    }
    assert [(a, v) for a, v, _ in diff.releases] == [("jax", "0.8.0"), ("jax", "0.10.2")]
    assert diff.since == {"jax": ("0.8.0", "0.4.30")}
    # Only the newest release merged: the difference is "0.10.2 or earlier".
    assert build_model([tmp_path / "0.10.2.jsonl"]).docs_vs_code[0].since == {"jax": ("0.10.2", "")}
    assert build_model([tmp_path / "0.4.30.jsonl"]).docs_vs_code == []


def test_xpassed_is_counted_and_unexpected(tmp_path: Path) -> None:
    path = run_file(
        tmp_path / "r.jsonl",
        {"t.listed-but-holds": "xpassed", "t.known": "xfailed", "t.ok": "passed"},
    )
    [col] = build_model([path]).columns
    assert (col.counts["xpassed"], col.counts["xfailed"], col.unexpected) == (1, 1, 1)


# ---------------------------------------------------------------- spec errors and files that are not results


def test_a_spec_error_is_outside_the_verdict(tmp_path: Path) -> None:
    extra = {
        "t.e": {"spec_error": True, "basis": "documented"},
        **{f"t.{c}": {"basis": "documented"} for c in "abcd"},
    }
    path = run_file(
        tmp_path / "r.jsonl",
        {"t.a": "passed", "t.b": "passed", "t.c": "passed", "t.d": "passed", "t.e": "error"},
        extra=extra,
    )
    model = build_model([path])
    [col] = model.columns
    assert col.unexpected == 0 and col.spec_errors == 1
    assert col.compliance == 100.0
    [head] = headlines(model)
    assert (head.conform, head.applicable, head.unexpected, head.spec_errors) == (4, 4, 0, 1)
    assert head.share == "100.0%"
    index, _ = build_site([path], tmp_path / "site")
    assert index is not None
    verdict = re.sub(
        r"<[^>]+>|\s+", " ", index.read_text().split('id="verdict"')[1].split("</section>")[0]
    )
    assert "4 of 4 applicable cells conform (100.0%)" in verdict and "0 unexpected" in verdict
    assert "1 spec error, not counted" in verdict


def _report(
    *argv: str, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = cli_main(["report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_on_a_corrupt_record_names_file_and_line_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = run_file(tmp_path / "in" / "r.jsonl", {"t.a": "passed", "t.b": "passed"})
    lines = path.read_text().splitlines()
    lines[2] = lines[2][
        : len(lines[2]) // 2
    ]  # the first case record, torn in the middle of the file
    path.write_text("\n".join(lines) + "\n")
    code, out, err = _report(
        str(path),
        "--out",
        str(tmp_path / "site"),
        cwd=tmp_path,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 2, (out, err)
    assert f"{path}:3:" in err and "corrupt" in err and "--allow-partial" in err
    assert not (tmp_path / "site").exists()
    code, out, err = _report(
        str(path),
        "--out",
        str(tmp_path / "site"),
        "--allow-partial",
        cwd=tmp_path,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 0, (out, err)
    assert f"{path}:3:" in err and (tmp_path / "site" / "index.html").is_file()


def test_report_on_a_torn_last_line_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = run_file(tmp_path / "r.jsonl", {"t.a": "passed"}, end=False)
    with open(path, "a") as f:
        f.write('{"record":"case","case":"t.b","outc')  # killed mid-write
    code, out, err = _report(
        str(path),
        "--out",
        str(tmp_path / "site"),
        cwd=tmp_path,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 0, (out, err)
    assert "warning:" in err and "cut off" in err


def test_report_on_a_file_that_is_not_results_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("hello\nthis is not json\n")
    code, out, err = _report(str(garbage), cwd=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2, (out, err)
    assert f"not a jax-conformance results file: {garbage}" in err
    assert not (tmp_path / "reports").exists()
