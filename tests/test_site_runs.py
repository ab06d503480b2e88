"""The published site across runs (issue #36): results from two machines (two environments, two JAX
releases, different modes) merged into one page with a verdict per release, each cell once, a
behaviour x release table with the first release that changed, columns per mode and per backend,
the tables' grids per mode, and each run's description linked from its columns.

Real runs of the CLI with the 0.10.1 release environment of the compat cache standing in for the
second machine (`run --jax <that environment>`, nothing built); skipped, saying so, where no such
environment is cached (`jax-conformance compat --versions 0.10.1` builds one; with
JAX_CONFORMANCE_COMPAT_REAL=1 the run builds it through `--jax jax[cpu]==0.10.1`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.compat.envs import default_cache_dir
from jax_conformance.records import load_runs
from jax_conformance.report import build_site
from jax_conformance.report.model import ReportModel
from jax_conformance.report.site import compat_json, headlines

from tests.conftest import REPO
from tests.helpers import demo_spec

SPEC = demo_spec(
    "demo.site",
    "Cases for the site across runs",
    """
  - id: demo.site.remat3
    claim: jax.config knows the jax_remat3 flag (added in jax 0.10.2)
    run: "'jax_remat3' in jax.config.values"
    expect:
      - value: true
  - id: demo.site.wrong
    claim: a deliberately wrong claim, so that every run has a failure to count
    run: jnp.zeros(2)
    expect:
      - dtype: int8
  - id: demo.site.add
    claim: jnp arrays of two integer dtypes add to the wider one
    table: add.cells.json
    run: jnp.zeros(1, a) + jnp.zeros(1, b)
""",
)
CELLS = {
    "generated_by": "tests/test_site_runs.py",
    "cells": [
        {
            "id": f"{a}|{b}",
            "bind": f"a = jnp.{a}; b = jnp.{b}",
            "expect": [{"dtype": "int16" if "int16" in (a, b) else "int8"}],
        }
        for a in ("int8", "int16")
        for b in ("int8", "int16")
    ],
}
OLD = "0.10.1"


def old_release() -> str | None:
    """The cached 0.10.1 release environment (its path), else its requirement with
    JAX_CONFORMANCE_COMPAT_REAL=1, else None."""
    cached = sorted((default_cache_dir() / "envs").glob(f"jax-{OLD}-*/bin/python"))
    if cached:
        return str(cached[0].parent.parent)
    return f"jax[cpu]=={OLD}" if os.environ.get("JAX_CONFORMANCE_COMPAT_REAL") == "1" else None


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def write_specs(root: Path, claim_suffix: str = "") -> Path:
    specs = root / "specs" / "demo"
    specs.mkdir(parents=True, exist_ok=True)
    (specs / "site.yaml").write_text(SPEC.lstrip().replace("(added", f"{claim_suffix}(added"))
    (specs / "add.cells.json").write_text(json.dumps(CELLS))
    return specs.parent


def run(out: Path, specs: Path, modes: str, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = cli(
        "run", "--adapter", "jax", "--specs", str(specs), "--modes", modes, "--out", str(out),
        "--no-report", "-j", "2", *extra,
    )  # fmt: skip
    assert (out / "results.jsonl").is_file(), proc.stdout + proc.stderr
    return proc


@dataclass
class Machines:
    root: Path
    specs: Path
    old: str  # the --jax value of the 0.10.1 run
    bundle: Path  # machine A's bundle: jax 0.10.1, off-warn
    here: Path  # machine B's run directory: this venv's jax, off-warn and on


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Machines:
    old = old_release()
    if old is None:
        pytest.skip(
            f"no jax {OLD} release environment cached in {default_cache_dir()}/envs "
            f"(jax-conformance compat --versions {OLD} builds one; or set JAX_CONFORMANCE_COMPAT_REAL=1)"
        )
    root = tmp_path_factory.mktemp("machines")
    specs = write_specs(root)
    bundle = root / "A.jsonl"
    proc = run(root / "A", specs, "off-warn", "--jax", old, "--bundle", str(bundle))
    assert f"bundle: {bundle} (1 runs" in proc.stdout, proc.stdout
    here = root / "B"
    run(here, specs, "off-warn,on")
    return Machines(root, specs, old, bundle, here)


@pytest.fixture(scope="module")
def site(machines: Machines) -> tuple[Path, ReportModel]:
    # machine B's directory and its results file both: the same runs given twice count once
    index, model = build_site(
        [machines.bundle, machines.here, machines.here / "results.jsonl"], machines.root / "site"
    )
    assert index is not None
    return index, model


def test_the_bundle_holds_the_run_self_described(machines: Machines) -> None:
    [run] = load_runs([machines.bundle])
    assert run.description is not None
    assert run.description["build"]["jax"] == OLD and run.header["implementation_version"] == OLD
    assert len(run.cases) == 7  # three cases and the table's four cells


def test_each_release_has_its_verdict_each_cell_once(site: tuple[Path, ReportModel]) -> None:
    _, model = site
    verdicts = {h.version: h for h in headlines(model)}
    old, [new] = verdicts.pop(OLD), verdicts.values()
    # 0.10.1, off-warn: arange and the 4 cells hold; remat3 and wrong fail
    assert (old.conform, old.applicable, old.unexpected, old.runs) == (5, 7, 2, 1)
    # the newer release, off-warn and on: all but wrong hold in each; B read twice, counted once
    assert (new.conform, new.applicable, new.unexpected, new.runs) == (12, 14, 2, 2)
    assert old.modes == ["off-warn"] and new.modes == ["off-warn", "on"]
    assert model.records == 7 + 14


def test_the_release_table_says_where_behaviour_changed(site: tuple[Path, ReportModel]) -> None:
    _, model = site
    [table] = model.compat
    data = compat_json(table, model)
    rows = {model.cases[r[0]].id: r[1:] for r in data["rows"]}
    new = data["releases"][1]
    assert data["releases"] == [OLD, new]
    # remat3 fails in 0.10.1 and holds from the next release: there it changed
    assert rows["demo.site.remat3"] == ["FH", new, new]
    assert rows["demo.site.arange"] == ["HH", OLD, ""]
    assert rows["demo.site.wrong"] == ["FF", "", ""]


def test_each_run_is_described_and_linked(site: tuple[Path, ReportModel]) -> None:
    index, model = site
    by_label = {r.label: r for r in model.runs}
    new = model.compat[0].versions[1]
    assert sorted(by_label) == [f"jax {OLD} off-warn", f"jax {new} off-warn", f"jax {new} on"]
    old = by_label[f"jax {OLD} off-warn"]
    assert old.build == f"jax {OLD}, jaxlib {OLD}" and old.devices == "cpu: cpu x 1"
    assert old.sources == [str(site[1].inputs[0])] and old.finished and old.status == "complete"
    assert len({r.spec_revision for r in model.runs}) == 1
    page = index.read_text()
    for r in model.runs:
        assert f'<tr id="run-{r.run_id}"' in page and f'href="#run-{r.run_id}"' in page


def test_runs_with_other_specs_are_refused_in_one_line(machines: Machines, tmp_path: Path) -> None:
    """Machine C ran the same release and mode as A with a spec edited since: its bundle and A's
    cannot be one site."""
    specs = write_specs(tmp_path, claim_suffix=", edited ")
    bundle = tmp_path / "C.jsonl"
    run(tmp_path / "C", specs, "off-warn", "-k", "remat3", "--jax", machines.old, "--bundle", str(bundle))  # fmt: skip
    proc = cli("report", str(machines.bundle), str(bundle), "--out", str(tmp_path / "site"))
    assert proc.returncode == 2 and not (tmp_path / "site").exists()
    [line] = proc.stderr.splitlines()
    assert "conflicting results: demo.site.remat3" in line and "spec revision" in line
    assert str(machines.bundle) in line and str(bundle) in line


def test_a_bundle_is_named_jsonl_and_kept_unless_forced(tmp_path: Path) -> None:
    taken = tmp_path / "taken.jsonl"
    taken.write_text("")
    specs = write_specs(tmp_path)
    for name, says in (("b.zip", "name it *.jsonl"), ("taken.jsonl", "exists; pass --force")):
        argv = ["--adapter", "reference", "--specs", str(specs), "--modes", "off-warn"]
        proc = cli("run", *argv, "--bundle", str(tmp_path / name))
        assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert taken.read_text() == ""


def test_a_run_joined_from_shards_lists_its_parts(tmp_path: Path) -> None:
    """The reference adapter (no second release needed): two shards of one mode, one run in Runs."""
    specs = write_specs(tmp_path)
    out = tmp_path / "S"
    argv = ["--adapter", "reference", "--specs", str(specs), "--modes", "off-warn", "--shards", "2"]
    proc = cli("run", *argv, "--out", str(out))
    assert (out / "index.html").is_file(), proc.stdout + proc.stderr
    [info] = build_site([out], tmp_path / "site").model.runs
    assert sorted(p.shard for p in info.parts) == ["1/2", "2/2"] and info.shard == ""
    assert info.status == "complete" and info.run_id.startswith("merged-")
    page = (tmp_path / "site" / "index.html").read_text()
    assert "2 parts:" in page and f'href="#run-{info.run_id}"' in page


# ---------------------------------------------------------------- in the browser

CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def page(site: tuple[Path, ReportModel]) -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no `chromium` on PATH (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(site[0].as_uri())
        page.wait_for_selector("table.compat tbody tr")
        yield page
        assert errors == [], f"console errors: {errors}"
        browser.close()


@pytest.mark.browser
def test_the_release_table_splits_by_mode_in_the_browser(page: Any) -> None:
    row = 'table.compat tr[data-case="demo.site.remat3"]'
    cells = page.locator(f"{row} td.st")
    assert cells.all_inner_texts() == ["✗", "✓"]
    assert page.locator(f"{row} td.changed").inner_text() != "—"
    page.select_option("#compat-split", "mode")
    page.wait_for_selector('table.compat[data-split="mode"]')
    assert page.locator("table.compat th.sub").all_inner_texts() == ["off-warn", "off-warn", "on"]
    assert cells.all_inner_texts() == ["✗", "✓", "✓"]
    assert page.locator('table.compat tr[data-case="demo.site.arange"] td.st').count() == 3


@pytest.mark.browser
def test_grids_show_one_release_at_a_time_in_the_browser(page: Any) -> None:
    page.locator("details.table-case summary").first.click()
    select = page.locator("select.grid-release-select")
    assert select.input_value().startswith("jax ") and not select.input_value().endswith(OLD)
    assert page.locator("figure.tgrid-box").count() == 2  # the newer release's two modes
    select.select_option(f"jax {OLD}")
    assert page.locator("figure.tgrid-box").count() == 1
    assert page.locator("figure.tgrid-box a.tg").count() == 4


@pytest.mark.browser
def test_a_column_links_to_its_runs_description_in_the_browser(
    page: Any, site: tuple[Path, ReportModel]
) -> None:
    old = next(r for r in site[1].runs if r.version == OLD)
    page.locator(f'table.summary a.run-link[href="#run-{old.run_id}"]').click()
    target = page.locator(f"tr#run-{old.run_id}")
    assert target.is_visible() and f"jax {OLD}, jaxlib {OLD}" in target.inner_text()
    assert page.evaluate("location.hash") == f"#run-{old.run_id}"
