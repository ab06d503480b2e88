"""A library's own spec directory (#27): its tags.yaml, its modules imported by spec code, its own
requirement (`basis: library`), a missing import reported as a spec error, and the report's title.

One `jax-conformance run` of a small project (the reference adapter, one mode) started in the
project's directory: `mylib` imports from there, `mylib_extra` from `--pythonpath`. Lint runs in
this process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.commands.lint import lint_paths
from jax_conformance.records import read_check
from jax_conformance.spec import schema

HALVE = """\
topic: mylib.halve
title: mylib.halve halves
source: {doc: README.md, section: halve}
basis: library
tags: [mylib_ops]
setup: |
  import mylib
  import mylib_extra
cases:
  - id: mylib.halve.float
    claim: halve of 3.0 is 1.5
    run: mylib.halve(3.0)
    expect:
      - {value: 1.5}
  - id: mylib.halve.extra
    claim: mylib_extra.twice undoes halve
    run: mylib_extra.twice(mylib.halve(3.0))
    expect:
      - {value: 3.0}
"""
MISSING = """\
topic: mylib.missing
source: {url: "https://example.org/mylib#missing"}
basis: library
setup: |
  import mylib_not_installed
cases:
  - id: mylib.missing.one
    claim: a spec whose setup imports a module that is not there
    run: mylib_not_installed.f()
    expect:
      - {value: 1}
"""


def make_project(base: Path) -> Path:
    (base / "mylib").mkdir(parents=True)
    (base / "mylib" / "__init__.py").write_text("def halve(x):\n    return x / 2\n")
    (base / "extra").mkdir()
    (base / "extra" / "mylib_extra.py").write_text("def twice(x):\n    return 2 * x\n")
    (base / "README.md").write_text("# mylib\n\nhalve(x) is x / 2.\n")
    (base / "specs" / "ops").mkdir(parents=True)
    (base / "specs" / "tags.yaml").write_text("mylib_ops: mylib's operations\n")
    (base / "specs" / "ops" / "halve.yaml").write_text(HALVE)
    (base / "specs" / "ops" / "missing.yaml").write_text(MISSING)
    return base


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = make_project(tmp_path_factory.mktemp("mylib"))
    out = project / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "run",
            "--adapter",
            "reference",
            "--modes",
            "off-warn",
            "--specs",
            "specs",
            "--pythonpath",
            "extra",
            "--title",
            "mylib's own claims",
            "--out",
            str(out),
            "--progress",
            "plain",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return out, proc


def cases(out: Path) -> dict[str, dict[str, Any]]:
    records = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines() if ln]
    return {r["case"]: r for r in records if r["record"] == "case"}


@pytest.mark.slow
def test_library_specs_import_its_modules_and_use_its_tags(run):
    out, proc = run
    got = cases(out)
    assert {c: r["outcome"] for c, r in got.items() if c.startswith("mylib.halve")} == {
        "mylib.halve.float": "passed",  # mylib: from the directory the run started in
        "mylib.halve.extra": "passed",  # mylib_extra: from --pythonpath
    }, proc.stdout + proc.stderr
    assert got["mylib.halve.float"]["basis"] == "library"
    assert "mylib_ops" in got["mylib.halve.float"]["tags"]


@pytest.mark.slow
def test_a_missing_import_in_setup_is_a_spec_error(run):
    out, proc = run
    rec = cases(out)["mylib.missing.one"]
    assert rec["outcome"] == "error" and rec.get("spec_error") is True, rec
    assert "the spec imports 'mylib_not_installed', which is not installed" in rec["message"]
    assert "1 spec error, not counted" in proc.stdout, proc.stdout
    assert proc.returncode == 1  # the run still fails: the spec is broken


@pytest.mark.slow
def test_the_report_carries_the_title_given(run):
    out, _ = run
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "mylib&#39;s own claims" in page or "mylib's own claims" in page
    assert "JAX conformance report" not in page


def lint(path: Path) -> list[str]:
    errors, _ = lint_paths([path])
    return [f"{e.rule} {e.message}" for e in errors]


def test_lint_reads_the_spec_directory_own_tags(tmp_path):
    project = make_project(tmp_path)
    assert lint(project / "specs") == []
    (project / "specs" / "tags.yaml").write_text("other: another tag\n")
    (errors,) = lint(project / "specs")
    assert (
        errors.startswith("TAG-UNKNOWN unknown tag 'mylib_ops'; add it to ")
        and str(project / "specs" / "tags.yaml") in errors
    )


def test_lint_refuses_a_library_source_that_is_not_there(tmp_path):
    project = make_project(tmp_path)
    spec = project / "specs" / "ops" / "halve.yaml"
    spec.write_text(HALVE.replace("doc: README.md", "doc: docs/made-up.md"))
    errors = lint(project / "specs")
    assert [e.split("'")[1] for e in errors] == ["mylib.halve.float", "mylib.halve.extra"], errors
    for error in errors:
        assert error.startswith("LIBRARY-SOURCE case 'mylib.halve."), error
        assert "the library's own requirement, but its doc 'docs/made-up.md' is no file" in error
    spec.write_text(HALVE.replace("{doc: README.md, section: halve}", "{observed: here}"))
    errors = lint(project / "specs")
    assert len(errors) == 2 and all(
        e.startswith("BASIS-SOURCE case 'mylib.halve.")
        and "is library but its source names no doc" in e
        for e in errors
    ), errors


def test_the_schema_is_found_from_outside_the_checkout(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "jax_conformance.spec.schema"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert Path(out[0]) == schema.SCHEMA_PATH and Path(out[0]).is_file()
    assert out[1] == f"# yaml-language-server: $schema={schema.SCHEMA_PATH}"
    assert "library" in schema.schema()["$defs"]["basis"]["enum"]


RULES = """\
import jax, jax.numpy as jnp

@jax.custom_vjp
def doubled_slope(x):
    return jnp.sin(x)

doubled_slope.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (2.0 * g * c,))
"""


@pytest.mark.slow
def test_check_results_show_in_the_report_under_your_rules(run):
    """`check --report OUT` beside the library's run: OUT's report is rendered again, its title kept,
    with a Your rules section (the item x mode table and the failure line)."""
    out, _ = run
    (out.parent / "mylib" / "rules.py").write_text(RULES)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "check",
            "mylib.rules:doubled_slope",
            "--args",
            "jnp.array([0.5, 2.0])",
            "--modes",
            "off-warn",
            "--report",
            str(out),
        ],
        cwd=out.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    # a numerics failure only (finite differences): exit 0, the contract's verdict ok, shown apart
    assert proc.returncode == 0, proc.stdout + proc.stderr
    saved = read_check(out / "contract" / "mylib.rules_doubled_slope.jsonl")
    assert saved is not None
    assert saved["columns"] == ["off-warn"] and saved["ok"] and not saved.get("numerics_ok")
    rows = {r["item"]: r["cells"] for r in saved["targets"][0]["rows"]}
    assert rows["derivatives.finite-differences"] == ["fail"] and rows["transforms.vmap"] == [
        "pass"
    ]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert (
        "<title>mylib&#39;s own claims</title>" in page
        or "<title>mylib's own claims</title>" in page
    )
    section = page[page.index('<section id="your-rules">') :]
    assert "<h3>mylib.rules:doubled_slope</h3>" in section
    assert (
        '<td class="o-failed">FAIL</td>'
        in section.split("derivatives.finite-differences", 1)[1][:80]
    )
    numerics = section.split("<h4>Numerics failures", 1)[1]
    assert "FAIL derivatives.finite-differences [off-warn]" in numerics
    assert '<a href="#your-rules">Your rules</a>' in page


@pytest.mark.slow
def test_the_pytest_plugin_takes_pythonpath(tmp_path):
    """pytest --pyargs jax_conformance --specs DIR --pythonpath DIR: the same imports, in pytest."""
    project = make_project(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "jax_conformance",
            "--adapter=reference",
            "--specs",
            "specs",
            "--pythonpath",
            "extra",
            "-p",
            "no:cacheprovider",
            "-q",
            "-k",
            "mylib.halve",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and re.search(r"^2 passed", proc.stdout, re.M), proc.stdout
