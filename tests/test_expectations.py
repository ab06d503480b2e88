"""Known divergences (spec/expectations.py): an entry names its modes as runs name them; a listed
case that conforms is xpassed end to end and the ratchet (`run --update-expectations`) removes its
entry; an entry for other releases is left alone.

The xpassed tests reproduce a wrong verdict issue 15 found: a listed divergence that now holds
read as `passed` (and failed the run "outside the cases").
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, SpecDir, read_results
from tests.helpers import cli


def test_an_expectations_entry_names_modes_as_runs_name_them(tmp_path: Path) -> None:
    from jax_conformance.errors import ExpectationsError
    from jax_conformance.mode import Mode
    from jax_conformance.spec.expectations import ExpectationFile

    path = tmp_path / "jax.yaml"
    path.write_text(
        "adapter: jax\nentries:\n  - reason: r\n    cases: [{case: a.b, modes: ['on', off-error]}]\n",
        encoding="utf-8",
    )
    [entry] = ExpectationFile.load(path).entries
    assert entry.matches("a.b", Mode(True, "warn"), "cpu") and entry.matches(
        "a.b", Mode(False, "error"), "cpu"
    )
    assert not entry.matches("a.b", Mode(False, "warn"), "cpu")
    for old in (
        "sideways",
        "on-warn",
        "off/error",
    ):  # the names `on` and `off-error` had before 0.1.0 are gone
        path.write_text(
            f"adapter: jax\nentries:\n  - reason: r\n    cases: [{{case: a.b, modes: [{old}]}}]\n",
            encoding="utf-8",
        )
        with pytest.raises(ExpectationsError, match=f"{old}.*off-warn"):
            ExpectationFile.load(path)


SPEC = """
topic: demo
source: {doc: docs/default_dtypes.md}
basis: documented
cases:
  - id: demo.holds
    claim: arange of ints is int32 with x64 off
    run: jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: int32
  - id: demo.diverges
    claim: a known divergence that still diverges
    run: jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: int16
"""


EXPECTATIONS = """
adapter: reference
entries:
  - reason: pretend the model diverges here
    cases: [demo.holds]
  - reason: it really does diverge
    cases: [demo.diverges]
"""


def test_a_listed_case_that_conforms_is_xpassed(specdir: SpecDir, tmp_path: Path) -> None:
    specdir.write("demo.yaml", SPEC)
    expectations = tmp_path / "reference.yaml"
    expectations.write_text(EXPECTATIONS, encoding="utf-8")
    results = tmp_path / "r.jsonl"
    result = specdir.run(
        "--x64=off",
        "--expectations",
        str(expectations),
        "--results",
        str(results),
        adapter="reference",
    )
    assert result.ret == 1  # a stale entry must be removed: the run is not clean
    result.stdout.fnmatch_lines(
        [
            "*demo.holds*xpassed: listed as a known divergence in *reference.yaml (pretend the "
            "model diverges here)*remove the entry*",
            "*conformance [[]x64=off*]: *1 xpassed*1 xfailed*",
        ]
    )
    records = {r["case"]: r for r in read_results(results) if r.get("record") == "case"}
    assert (records["demo.holds"]["outcome"], records["demo.diverges"]["outcome"]) == (
        "xpassed",
        "xfailed",
    )
    [end] = [r for r in read_results(results) if r.get("record") == "end"]
    assert end["counts"] == {"xpassed": 1, "xfailed": 1}


def test_run_counts_xpassed_and_the_ratchet_removes_the_entry(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "demo.yaml").write_text(textwrap.dedent(SPEC).lstrip(), encoding="utf-8")
    expectations = tmp_path / "reference.yaml"
    expectations.write_text(EXPECTATIONS, encoding="utf-8")
    common = [
        "run",
        "--adapter",
        "reference",
        "--specs",
        str(specs),
        "--expectations",
        str(expectations),
        "--progress",
        "plain",
        "--no-report",
    ]
    proc = cli(*common, "--out", str(tmp_path / "out1"), cwd=REPO, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "outside the cases" not in proc.stdout
    [row] = [
        line.split()
        for line in proc.stdout.splitlines()
        if line.startswith("reference ") and " off-warn " in line
    ]
    header = next(line.split() for line in proc.stdout.splitlines() if line.startswith("adapter "))
    cells = dict(zip(header, row, strict=False))
    assert (cells["passed"], cells["xfailed"], cells["xpassed"], cells["status"]) == (
        "0",
        "1",
        "1",
        "done",
    ), proc.stdout

    proc = cli(
        *common, "--out", str(tmp_path / "out2"), "--update-expectations", cwd=REPO, timeout=600
    )
    assert "expectations rewritten" in proc.stdout, proc.stdout + proc.stderr
    listed = [
        c if isinstance(c, str) else c["case"]
        for e in yaml.safe_load(expectations.read_text())["entries"]
        for c in e["cases"]
    ]
    assert set(listed) == {
        "demo.diverges"
    }  # the case that conforms is gone, the real divergence stays
    proc = cli(*common, "--out", str(tmp_path / "out3"), cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_divergence_known_only_in_some_releases_is_left_alone_elsewhere(tmp_path: Path) -> None:
    # The reference models JAX 0.10.2: an entry for releases before 0.10 neither xfails nor
    # xpasses its case there, is not reported unused, and the ratchet writes it back untouched.
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "demo.yaml").write_text(textwrap.dedent(SPEC).lstrip(), encoding="utf-8")
    expectations = tmp_path / "reference.yaml"
    expectations.write_text(
        textwrap.dedent("""
        adapter: reference
        entries:
          - reason: diverged in old releases only
            version: "<0.10"
            cases: [demo.holds]
          - reason: it really does diverge
            cases: [demo.diverges]
    """).lstrip(),
        encoding="utf-8",
    )
    common = [
        "run",
        "--adapter",
        "reference",
        "--specs",
        str(specs),
        "--expectations",
        str(expectations),
        "--progress",
        "plain",
        "--no-report",
    ]
    proc = cli(*common, "--out", str(tmp_path / "out1"), cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "matched no collected case" not in proc.stdout + proc.stderr
    cli(*common, "--out", str(tmp_path / "out2"), "--update-expectations", cwd=REPO, timeout=600)
    groups = {g["reason"]: g for g in yaml.safe_load(expectations.read_text())["entries"]}
    assert groups["diverged in old releases only"]["version"] == "<0.10"
    assert groups["diverged in old releases only"]["cases"] == ["demo.holds"]
    assert [
        c if isinstance(c, str) else c["case"] for c in groups["it really does diverge"]["cases"]
    ] == ["demo.diverges"]


def test_a_listed_mode_covers_its_flag_modes_unless_it_names_flags(tmp_path: Path) -> None:
    # `run --modes off-warn,+upcoming` judged off-warn+jax_... modes by no entry (issue 38)
    from jax_conformance.mode import Mode
    from jax_conformance.spec.expectations import ExpectationFile

    path = tmp_path / "jax.yaml"
    path.write_text(
        "adapter: jax\nentries:\n  - reason: r\n    cases:\n"
        "      - {case: a.plain, modes: [off-warn]}\n"
        "      - {case: a.strict, modes: ['off-allow+jax_numpy_dtype_promotion=strict']}\n",
        encoding="utf-8",
    )
    plain, strict = ExpectationFile.load(path).entries
    warn = Mode(False, "warn")
    assert plain.matches("a.plain", warn, "cpu")
    assert plain.matches("a.plain", warn.with_flag(jax_remat3=True, jax_scan3=True), "cpu")
    assert not plain.matches("a.plain", Mode(False, "error").with_flag(jax_remat3=True), "cpu")
    allow = Mode(False, "allow")
    promotion = allow.with_flag(jax_numpy_dtype_promotion="strict")
    assert not strict.matches("a.strict", allow, "cpu")
    assert not strict.matches("a.strict", allow.with_flag(jax_remat3=True), "cpu")
    assert strict.matches("a.strict", promotion, "cpu")
    assert strict.matches("a.strict", promotion.with_flag(jax_remat3=True), "cpu")
    assert not strict.matches(
        "a.strict", allow.with_flag(jax_numpy_dtype_promotion="standard"), "cpu"
    )


LISTED = (
    "custom_jvp.closures.grad-of-jit-wrt-closed-over-is-error"  # in reference.yaml and jax.yaml
)


def suite(*args: str) -> subprocess.CompletedProcess[str]:
    """`pytest conformance/ --adapter=reference -k LISTED`, as the design card runs the suite."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "conformance/",
            "--adapter=reference",
            "-p",
            "no:cacheprovider",
        ]
        + ["-k", f"{LISTED}[", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_plugin_reads_the_adapters_known_divergences_unless_told_none() -> None:
    # `pytest conformance/ --adapter=jax` failed the two cases jax.yaml lists: only `run` read it
    proc = suite()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"known divergences: {REPO / 'specs' / 'expectations' / 'reference.yaml'}" in out
    assert (
        f"XFAIL {LISTED}[off-warn-cpu] - The model follows JAX 0.10.2" in out
    )  # shown, not a pass
    assert "conformance [x64=off" in out and "]: 1 xfailed -" in out
    assert "matched no collected case" not in out  # the other topics' entries were not collected
    proc = suite("--expectations", "none")
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout + proc.stderr
    proc = suite("--expectations", "none", "--expectations", "x.yaml")
    assert proc.returncode == 4 and "--expectations none cannot be given with files" in proc.stderr


def test_the_ratchet_lists_a_flag_mode_only_where_its_base_mode_does_not_cover_it(
    tmp_path: Path,
) -> None:
    from jax_conformance.spec.expectations import write_expectations

    path = tmp_path / "jax.yaml"
    failing = {"a.b": {"off-warn", "off-warn+jax_remat3", "off-error+jax_remat3"}}
    write_expectations(path, "jax", failing, {"off-warn", "off-error", "on"}, None)
    [group] = yaml.safe_load(path.read_text())["entries"]
    assert group["cases"] == [{"case": "a.b", "modes": ["off-error+jax_remat3", "off-warn"]}]
