"""Nothing a run finished is lost or mixed: a directory per run with `reports/latest` pointing at
the newest, `--out` over a finished run refused unless `--force` (which clears it first), `report`
never over an earlier site; Ctrl-C stops cleanly; a mode has one name everywhere.

Real CLI runs (`python -m jax_conformance.cli`) of the reference adapter on a one-file spec directory.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import cli, demo_spec, records, run_reference, write_specs

SPEC = demo_spec(
    "demo.dirs",
    "Two cases for the run-directory tests",
    """
  - id: demo.dirs.off-only
    claim: a claim about x64 off only
    run: jnp.zeros(2)
    expect:
      - when: {x64: false}
        dtype: float32
""",
)

SLOW = """
topic: demo.stop
title: A quick case, then one that sleeps, for Ctrl-C
source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}
basis: documented
cases:
  - id: demo.stop.first
    claim: a quick case that finishes before the slow one
    run: jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: int32
  - id: demo.stop.sleeps
    claim: a case that sleeps long enough to be interrupted
    run: |
      import time
      time.sleep(120)
      result = jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: int32
"""


@pytest.mark.slow
def test_each_run_gets_its_own_directory_and_latest_points_at_the_newest(tmp_path: Path) -> None:
    write_specs(tmp_path, SPEC)
    first = run_reference("--modes", "off-warn,on", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    second = run_reference("--modes", "on", cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    runs = sorted((tmp_path / "reports" / "runs").iterdir())
    assert len(runs) == 2, runs
    one, two = runs
    latest = tmp_path / "reports" / "latest"
    assert latest.is_symlink() and latest.resolve() == two
    assert f"latest: reports/latest -> {two.name}" in second.stdout
    # never mixed: each directory holds its own run's files only
    assert sorted(p.name for p in (one / "modes").iterdir()) == [
        "reference-off-warn.jsonl",
        "reference-off-warn.log",
        "reference-on.jsonl",
        "reference-on.log",
    ]
    assert sorted(p.name for p in (two / "modes").iterdir()) == [
        "reference-on.jsonl",
        "reference-on.log",
    ]
    assert (one / "index.html").is_file() and (two / "index.html").is_file()
    assert {r["run_id"] for r in records(one / "results.jsonl")}.isdisjoint(
        r["run_id"] for r in records(two / "results.jsonl")
    )


@pytest.mark.slow
def test_out_over_a_finished_run_needs_force_which_clears_it_first(tmp_path: Path) -> None:
    write_specs(tmp_path, SPEC)
    out = tmp_path / "mine"
    assert run_reference("--modes", "off-warn,on", "--out", str(out), cwd=tmp_path).returncode == 0
    again = run_reference("--modes", "on", "--out", str(out), cwd=tmp_path)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.strip() == (
        f"jax-conformance run: --out {out} already holds a run (results.jsonl, modes, index.html, assets); "
        "pass --force to replace it, or leave out --out to keep each run in reports/runs/"
    )
    assert (out / "modes" / "reference-off-warn.jsonl").is_file()  # untouched
    forced = run_reference("--modes", "on", "--out", str(out), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert sorted(p.name for p in (out / "modes").iterdir()) == [
        "reference-on.jsonl",
        "reference-on.log",
    ]
    modes = {r["mode"]["x64"] for r in records(out / "results.jsonl") if r["record"] == "run"}
    assert modes == {True}
    assert not (tmp_path / "reports").exists()  # --out leaves reports/latest alone


@pytest.mark.slow
def test_report_never_writes_over_an_earlier_site(tmp_path: Path) -> None:
    write_specs(tmp_path, SPEC)
    out = tmp_path / "run"
    assert run_reference("--modes", "off-warn", "--out", str(out), cwd=tmp_path).returncode == 0
    page = (out / "index.html").read_text()
    made = cli("report", str(out), cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    sites = list((tmp_path / "reports" / "runs").iterdir())
    assert (
        len(sites) == 1
        and sites[0].name.endswith("-report")
        and (sites[0] / "index.html").is_file()
    )
    assert (out / "index.html").read_text() == page
    refused = cli("report", str(out), "--out", str(out), cwd=tmp_path)
    assert refused.returncode == 2 and "pass --force" in refused.stderr
    forced = cli("report", str(out), "--out", str(out), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert (out / "results.jsonl").is_file() and (
        out / "modes" / "reference-off-warn.jsonl"
    ).is_file()  # its inputs stay


@pytest.mark.slow
def test_a_mode_has_one_name_in_the_cli_summary_results_report_and_test_ids(tmp_path: Path) -> None:
    write_specs(tmp_path, SPEC)
    out = tmp_path / "out"
    proc = run_reference("--modes", "on", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(reference on)" in proc.stdout
    assert re.search(r"^reference\s+\S+\s+cpu\s+on\s+1\s", proc.stdout, re.M), proc.stdout
    assert "on-warn" not in proc.stdout
    ids = [r["nodeid"] for r in records(out / "results.jsonl") if r["record"] == "case"]
    assert ids and all(i.endswith("[on-cpu]") for i in ids), ids
    assert (out / "modes" / "reference-on.jsonl").is_file()
    data = (next((out / "assets").glob("*/data.js"))).read_text()
    assert '"mode":"on"' in data and "on-warn" not in data


@pytest.mark.slow
def _stopped_run(tmp_path: Path, signum: int) -> tuple[subprocess.Popen[str], str]:
    """`run` over three modes one at a time, sent `signum` once its first mode is under way."""
    write_specs(tmp_path, SLOW)
    out = tmp_path / "out"
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "run",
            "--adapter",
            "reference",
            "--progress",
            "plain",
            "--specs",
            str(tmp_path / "specs"),
            "--modes",
            "off-warn,off-error,off-allow",
            "--jobs",
            "1",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        mode_file = out / "modes" / "reference-off-warn.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the quick case recorded: the slow one is running
            if mode_file.is_file() and any(
                r.get("case") == "demo.stop.first" for r in records(mode_file)
            ):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the first mode never recorded its first case")
        os.kill(runner.pid, signum)
        output, _ = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
    return runner, output


def test_sigterm_ends_the_run_with_143(tmp_path: Path) -> None:
    """Terminated, the runner stops its modes as on Ctrl-C, and exits as a shell reports a command
    ended by SIGTERM (128 + 15), not with Ctrl-C's 130."""
    runner, output = _stopped_run(tmp_path, signal.SIGTERM)
    assert runner.returncode == 143, output
    assert "Traceback" not in output, output
    assert re.search(r"^reference\s.*off-warn\s.*stopped by SIGTERM\s*$", output, re.M), output


def test_ctrl_c_stops_cleanly_and_says_which_modes_never_started(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner, output = _stopped_run(tmp_path, signal.SIGINT)  # what Ctrl-C sends to the runner
    assert runner.returncode == 130, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert "SIGTERM" not in output, output
    assert "Ctrl-C: stopping 1 running mode process" in output
    assert re.search(r"^reference\s.*off-warn\s.*stopped by Ctrl-C\s*$", output, re.M), output
    for mode in ("off-error", "off-allow"):
        assert re.search(rf"^reference\s.*{mode}\s.*not started\s*$", output, re.M), output
        assert f"mode reference {mode}: not started" in output
        assert f"reference-{mode}" not in output  # no log or results path for a mode that never ran
    for path in re.findall(r"(/\S+\.(?:log|jsonl|html))", output):
        assert Path(path).exists(), f"{path} is printed but does not exist"
    assert "(incomplete: the run was interrupted)" in output
    # the report shows every mode asked for, each marked incomplete and why
    from jax_conformance.report.model import build_model

    model = build_model([out / "results.jsonl"])
    assert [(c.mode, c.backend, c.interrupted) for c in model.columns] == [
        ("off-warn", "cpu", True),
        ("off-error", "cpu", True),
        ("off-allow", "cpu", True),
    ]
    assert "stopped by Ctrl-C" in model.columns[0].interruption
    assert all("not started" in c.interruption for c in model.columns[1:])
    page = (out / "index.html").read_text()
    # twice in the summary, twice in the Runs section's status column
    assert (
        "3 of 3 runs incomplete" in page
        and page.count("not started: the run was stopped before this mode") == 4
    )
    # a mode that never started has nothing to describe; it is not an old, undescribed results file
    assert page.count("never started: nothing ran, so there is no machine or build") == 2
    assert "written before runs described themselves</td>" not in page
