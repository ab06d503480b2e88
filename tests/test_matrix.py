"""`jax-conformance run`: real runs of the matrix on a small spec directory, and a mode killed mid-run."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from jax_conformance.commands.run import Progress, summary_table
from jax_conformance.errors import UsageError
from jax_conformance.launch.scheduler import (
    ModeProcess,
    Scheduler,
    merge,
    pytest_command,
    pytest_options,
)
from jax_conformance.launch.service import closing_records
from jax_conformance.mode import DEFAULT_MODES, Mode, parse_modes
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.records import RecordTail
from jax_conformance.report.model import build_model

from tests.conftest import read_results
from tests.helpers import demo_spec, records, run_matrix, run_reference, write_specs

REPO = PACKAGE_DIR.parent

SPEC = demo_spec(
    "demo.matrix",
    "Cases for the matrix tests",
    """
  - id: demo.matrix.wrong
    claim: a deliberately wrong claim with x64 off, so that a run has a failure
    run: jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: float16
      - when: {x64: true}
        dtype: int64
""",
    tags="[dtypes]",
)

SLOW_SPEC = """
topic: demo.slow
title: A case that takes long in one mode only
source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}
tags: [dtypes]
basis: documented
cases:
  - id: demo.slow.first
    claim: a quick case that finishes before the slow one
    run: jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: int32
  - id: demo.slow.sleeps
    claim: a case that sleeps in off-error mode and does not apply in the others
    run: |
      import time
      time.sleep(120)
      result = jnp.arange(3)
    expect:
      - when: {x64: false, explicit_x64_dtypes: error}
        dtype: int32
"""


# ---------------------------------------------------------------- pieces


def test_parse_modes() -> None:
    assert parse_modes(None) == list(DEFAULT_MODES)
    assert parse_modes(["off-warn,on", "off-error", "on"]) == [
        Mode(False, "warn"),
        Mode(True, "warn"),
        Mode(False, "error"),
    ]
    assert [m.slug for m in DEFAULT_MODES] == [
        "off-warn",
        "off-error",
        "off-allow",
        "on",
    ]  # one name per mode, everywhere
    for bad in (
        "bogus",
        "",
        " , ",
        "on-sideways",
        "1-warn",
        "off/error",
        "on-warn",
    ):  # one name per mode
        with pytest.raises(UsageError, match="the modes are off-warn, off-error, off-allow, on"):
            parse_modes([bad])


def test_results_tail_reads_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    tail = RecordTail(path)
    tail.poll()  # not there yet
    assert tail.total is None and tail.done == 0
    with open(path, "w") as f:
        f.write(
            '{"record":"run","run_id":"r"}\n{"record":"collected","count":3}\n{"record":"case","outcome":"passed"}\n{"record":"ca'
        )
    tail.poll()
    assert (tail.total, tail.done) == (3, 1)
    with open(path, "a") as f:
        f.write('se","outcome":"failed"}\n')
    tail.poll()
    assert tail.counts == {"passed": 1, "failed": 1} and tail.end is None


def test_live_progress_redraws_in_place(tmp_path: Path) -> None:
    jobs = [
        ModeProcess("jax", m, tmp_path / f"{m.slug}.jsonl", tmp_path / f"{m.slug}.log")
        for m in DEFAULT_MODES[:2]
    ]
    stream = io.StringIO()
    progress = Progress(jobs, stream, live=True)
    progress.update()
    progress.update()
    text = stream.getvalue()
    assert text.count("\x1b[2F") == 1  # the second frame moves up over the first
    assert text.count("jax off-warn") == 2 and "waiting" in text
    plain = io.StringIO()
    Progress(jobs, plain, live=False).update()
    assert plain.getvalue() == ""  # nothing has started: nothing to say


def test_summary_table_lines_up() -> None:
    table = summary_table(
        [
            ("jax", "0.10.2", "cpu", "off-warn", {"passed": 12, "failed": 1}, "done"),
            (
                "jax",
                "0.10.2",
                "cpu",
                "on",
                {"passed": 3, "not_applicable": 10},
                "killed by SIGKILL",
            ),
        ]
    )
    lines = table.splitlines()
    assert lines[0].split()[:7] == [
        "adapter",
        "version",
        "backend",
        "mode",
        "passed",
        "failed",
        "n/a",
    ]
    end = lines[0].index("total") + len("total")  # numbers are right-aligned under their heading
    assert [line[end - 2 : end] for line in lines[2:]] == ["13", "13"]
    assert lines[3].split()[4:7] == ["3", "0", "10"] and lines[3].endswith("killed by SIGKILL")


def test_pytest_command_is_the_one_mode_command(tmp_path: Path) -> None:
    argv = pytest_command(
        "reference",
        Mode(True, "warn"),
        tmp_path / "r.jsonl",
        extra=pytest_options(specs=["specs"], expectations=["x.yaml"], keyword="x64"),
    )
    assert argv[:4] == [
        sys.executable,
        "-m",
        "pytest",
        str(PACKAGE_DIR),
    ]  # a path: the same from a wheel, from anywhere
    assert {
        "--adapter=reference",
        "--x64=on",
        "--explicit-x64-dtypes=warn",
        "no:cacheprovider",
    } <= set(argv)
    assert argv[argv.index("--results") + 1] == str(tmp_path / "r.jsonl")
    assert argv[argv.index("--specs") + 1] == str(
        Path("specs").resolve()
    )  # the caller's directory, made absolute
    assert argv[argv.index("--expectations") + 1] == str(Path("x.yaml").resolve())
    assert argv[-2:] == ["-k", "x64"]
    assert "--results" not in pytest_command("jax", Mode(), None)


def test_merge_keeps_whole_records_and_puts_notes_after_their_file(tmp_path: Path) -> None:
    first, missing = tmp_path / "a.jsonl", tmp_path / "missing.jsonl"
    first.write_text(
        '{"record":"run","run_id":"a"}\n\n{"record":"case","run_id":"a"}\n{"record":"ca'
    )  # torn last line
    target = tmp_path / "out" / "merged.jsonl"
    n = merge(
        [first, missing],
        target,
        {first: [{"record": "end", "run_id": "a"}], missing: [{"record": "run", "run_id": "b"}]},
    )
    assert n == 4 and [r["record"] for r in records(target)] == ["run", "case", "end", "run"]
    assert first.read_text().endswith('{"record":"ca')  # the process's own file is left as it was
    assert [p.name for p in target.parent.iterdir()] == ["merged.jsonl"]


def test_scheduler_runs_n_at_a_time_skips_and_kills_at_the_time_limit(tmp_path: Path) -> None:
    fake = tmp_path / "python"  # stands for the interpreter: sleeps as long as $NAP says
    fake.write_text('#!/bin/sh\nsleep "$NAP"\n')
    fake.chmod(0o755)
    naps = {"slow": "30", "skipped": "0", "quick": "0.2", "last": "0.2"}
    procs = [
        ModeProcess(
            name,
            Mode(),
            tmp_path / f"{name}.jsonl",
            tmp_path / f"{name}.log",
            python=str(fake),
            env={**os.environ, "NAP": nap},
        )
        for name, nap in naps.items()
    ]
    most, finished = [0], []

    def tick() -> None:
        most[0] = max(most[0], sum(p.running for p in procs))

    scheduler = Scheduler[ModeProcess](
        2,
        timeout=2.0,
        skip=lambda p: p.adapter == "skipped",
        on_finish=lambda p: finished.append(p.adapter),
        on_tick=tick,
        interval=0.05,
    )
    assert scheduler.run(procs) is False
    assert most[0] == 2 and finished == ["quick", "last", "slow"]
    slow, skipped, quick, _ = procs
    assert slow.status() == "timed out after 2 s" and slow.returncode == -signal.SIGKILL
    assert (
        skipped.skipped
        and skipped.handle is None
        and quick.returncode == 0
        and quick.status() == "failed to start (exit 0)"
    )


# ---------------------------------------------------------------- real runs


@pytest.mark.slow
def test_run_two_modes_then_ratchet_with_expectations(tmp_path: Path) -> None:
    specs = write_specs(tmp_path, SPEC)
    out = tmp_path / "out"
    expectations = tmp_path / "jax.yaml"
    expectations.write_text(
        yaml.safe_dump(
            {
                "adapter": "jax",
                "entries": [
                    {
                        "reason": "kept: a case this run does not select",
                        "cases": ["demo.matrix.not-selected"],
                    }
                ],
            }
        )
    )
    proc = run_matrix(
        "--specs",
        str(specs),
        "--modes",
        "off-warn,on",
        "--out",
        str(out),
        "--expectations",
        str(expectations),
        "--update-expectations",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # demo.matrix.wrong fails with x64 off
    assert re.search(r"jax\s+0\.10\.2\s+cpu\s+off-warn\s+1\s+1\s+0\s.*done", proc.stdout), (
        proc.stdout
    )
    assert re.search(r"jax\s+0\.10\.2\s+cpu\s+on\s+2\s+0\s+0\s.*done", proc.stdout), proc.stdout
    assert "FAILED   demo.matrix.wrong [jax off-warn cpu]" in proc.stdout
    assert f"report: {out / 'index.html'}" in proc.stdout
    merged = records(out / "results.jsonl")
    assert {r["run_id"] for r in merged if r["record"] == "run"} == {
        r["run_id"] for r in merged if r["record"] == "end"
    }
    assert len([r for r in merged if r["record"] == "case"]) == 4
    assert (out / "modes" / "jax-off-warn.jsonl").is_file() and (
        out / "modes" / "jax-on.jsonl"
    ).is_file()
    # the ratchet: what failed is listed for a reason; the old entry for an unselected case stays
    data = yaml.safe_load(expectations.read_text())
    by_reason = {e["reason"]: e["cases"] for e in data["entries"]}
    assert by_reason["kept: a case this run does not select"] == ["demo.matrix.not-selected"]
    assert by_reason["TODO: say why this case diverges"] == [
        {"case": "demo.matrix.wrong", "modes": ["off-warn"]}
    ]
    # the same run with the file: the divergence is known, so the run passes
    # (run from elsewhere with relative paths: they mean the caller's directory, not the repository's)
    proc = run_matrix(
        "--specs",
        "specs",
        "--modes",
        "off-warn",
        "--out",
        "out2",
        "--expectations",
        "jax.yaml",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"off-warn\s+1\s+0\s+0\s+1\s", proc.stdout), proc.stdout  # 1 passed, 1 xfailed


@pytest.mark.slow
def test_killing_one_mode_keeps_the_others_and_what_it_wrote(tmp_path: Path) -> None:
    specs = write_specs(tmp_path, SLOW_SPEC)
    out = tmp_path / "out"
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "run",
            "--progress",
            "plain",
            "--specs",
            str(specs),
            "--modes",
            "off-warn,off-error",
            "--out",
            str(out),
            "--case-timeout",
            "300",
            "--jobs",
            "2",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    victim = None
    lines: list[str] = []
    try:
        assert runner.stdout is not None
        for line in runner.stdout:
            lines.append(line)
            m = re.search(r"jax off-error .*\(pid (\d+)\)", line)
            if m:
                victim = int(m.group(1))
                break
        assert victim is not None, "".join(lines)
        mode_file = out / "modes" / "jax-off-error.jsonl"
        deadline = time.monotonic() + 240
        while (
            time.monotonic() < deadline
        ):  # wait for the quick case's record, then kill during the slow one
            if mode_file.is_file() and any(
                r.get("case") == "demo.slow.first" for r in records(mode_file)
            ):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the off-error mode never recorded its first case")
        os.kill(victim, signal.SIGKILL)
        rest, _ = runner.communicate(timeout=300)
        lines.append(rest)
    finally:
        if runner.poll() is None:
            runner.kill()
        if victim is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(victim, signal.SIGKILL)  # the killed mode's case worker, left sleeping
    output = "".join(lines)
    assert runner.returncode == 1, output
    assert re.search(r"off-error .*killed by SIGKILL", output), output
    # the other mode finished whole
    warn = records(out / "modes" / "jax-off-warn.jsonl")
    assert warn[-1]["record"] == "end" and not warn[-1]["interrupted"]
    assert {r["case"]: r["outcome"] for r in warn if r["record"] == "case"} == {
        "demo.slow.first": "passed",
        "demo.slow.sleeps": "not_applicable",
    }
    # the killed mode kept what it wrote, and its own file is exactly what the process left
    error = records(out / "modes" / "jax-off-error.jsonl")
    assert [r["record"] for r in error] == ["run", "collected", "case"]
    assert error[2]["case"] == "demo.slow.first" and error[2]["outcome"] == "passed"
    model = build_model([out / "results.jsonl"])
    by_mode = {c.mode: c for c in model.columns}
    assert not by_mode["off-warn"].interrupted and by_mode["off-warn"].total == 2
    assert by_mode["off-error"].interrupted and by_mode["off-error"].counts["passed"] == 1
    assert (
        "killed by SIGKILL" in by_mode["off-error"].interruption
        and "1 of 2" in by_mode["off-error"].interruption
    )
    html = (out / "index.html").read_text()
    assert "Interrupted runs" in html and "jax 0.10.2 cpu off-error" in html


def test_merge_adds_an_end_record_for_a_mode_that_never_started(tmp_path: Path) -> None:
    job = ModeProcess("jax", Mode(False, "warn"), tmp_path / "missing.jsonl", tmp_path / "x.log")
    job.returncode = 4
    (tmp_path / "x.log").write_text("ERROR: usage: a bad option\n")
    merge([job.results], tmp_path / "results.jsonl", {job.results: closing_records(job)})
    out = records(tmp_path / "results.jsonl")
    assert [r["record"] for r in out] == ["run", "case", "end"]
    assert out[1]["outcome"] == "error" and "a bad option" in out[1]["message"]
    assert out[2]["interrupted"] is True


def test_expectation_files_are_per_adapter_and_must_exist(tmp_path: Path) -> None:
    import argparse

    from jax_conformance.cli import main
    from jax_conformance.commands.run import expectation_files, update_target

    jax_file, ref_file = tmp_path / "jax.yaml", tmp_path / "ref.yaml"
    jax_file.write_text("adapter: jax\nentries: []\n")
    ref_file.write_text("adapter: reference\nentries: []\n")
    args = argparse.Namespace(
        no_expectations=False,
        expectations=[str(jax_file), str(ref_file)],
        update_expectations=False,
        adapter=["jax", "reference"],
    )
    assert expectation_files("jax", args) == [jax_file.resolve()]
    assert expectation_files("reference", args) == [ref_file.resolve()]
    new = tmp_path / "new.yaml"
    args = argparse.Namespace(
        no_expectations=False, expectations=[str(new)], update_expectations=True, adapter=["jax"]
    )
    assert expectation_files("jax", args) == [] and update_target("jax", args, []) == new.resolve()
    # a missing file without --update-expectations is a usage error, before any process starts
    assert main(["run", "--expectations", str(new), "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out" / "modes" / "jax-off-warn.log").exists()


def test_modes_share_one_compilation_cache(tmp_path: Path) -> None:
    """A run's modes share compiled programs through JAX's persistent compilation cache (the
    directory $JAX_CONFORMANCE_COMPILE_CACHE names, or a temporary one); the records say so, and
    the flag table keeps JAX's own defaults. --no-compile-cache turns it off."""
    specs = write_specs(tmp_path, SPEC)
    cache = tmp_path / "compiled"
    proc = run_matrix(
        "--specs", str(specs), "--modes", "off-warn,on", "--out", str(tmp_path / "out"),
        "--no-report", "--jobs", "1",
        env={"JAX_CONFORMANCE_COMPILE_CACHE": str(cache)},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # demo.matrix.wrong fails with x64 off
    assert any(cache.iterdir()), "JAX wrote no compiled program into the run's cache"
    headers = [r for r in records(tmp_path / "out" / "results.jsonl") if r["record"] == "run"]
    assert len(headers) == 2
    for header in headers:
        notes = " ".join(header["environment"]["notes"])
        assert f"compilation cache (jax_compilation_cache_dir={cache})" in notes, notes
        flags = {f["name"]: f for f in header["flags"]}
        assert flags["jax_compilation_cache_dir"]["value"] == str(cache)
        assert flags["jax_persistent_cache_min_compile_time_secs"]["value"] == 0.0

    proc = run_matrix(
        "--specs", str(specs), "--modes", "off-warn", "--out", str(tmp_path / "out2"),
        "--no-report", "--no-compile-cache",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (plain,) = [r for r in records(tmp_path / "out2" / "results.jsonl") if r["record"] == "run"]
    assert "compilation cache" not in " ".join(plain["environment"]["notes"])
    own = {f["name"]: f for f in plain["flags"]}
    assert own["jax_compilation_cache_dir"]["value"] is None
    # the shared run reported JAX's defaults, not the values it set
    for name in ("jax_persistent_cache_min_compile_time_secs", "jax_compilation_cache_dir"):
        assert flags[name]["default"] == own[name]["value"] == own[name]["default"], name


# ---------------------------------------------------------------- the console: selections and spec errors


def test_a_run_over_modes_whose_selections_differ_says_so() -> None:
    from jax_conformance.commands.run import selection_note

    assert selection_note({("reference", "off-warn"): 4, ("reference", "on"): 4}) == ""
    note = selection_note({("reference", "off-warn"): 4, ("reference", "off-error"): 7})
    assert (
        "selected different cases in different modes" in note
        and "off-warn 4" in note
        and "off-error 7" in note
    )


def test_run_console_counts_spec_errors_apart_and_never_overcounts(tmp_path: Path) -> None:
    specs = tmp_path / "specs" / "demo"
    specs.mkdir(parents=True)
    (specs / "good.yaml").write_text(
        textwrap.dedent("""
        topic: demo.good
        source: {doc: docs/default_dtypes.md}
        basis: documented
        cases:
          - id: demo.good.a
            claim: arange of ints is int32
            run: jnp.arange(3)
            expect:
              - dtype: int32
          - id: demo.good.typo
            claim: a typo in the spec's own code
            run: jnpp.arange(3)
            expect:
              - dtype: int32
          - id: demo.good.typo-too
            claim: another typo in the spec's own code
            run: numpyy.arange(3)
            expect:
              - dtype: int8
    """).lstrip()
    )
    # (a file that does not load is refused before any mode starts: test_cli_errors)
    proc = run_reference("--modes", "off-warn", "--out", str(tmp_path / "out"), cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text  # CI notices
    for done, total in re.findall(r"\]\s+(\d+)/(\d+)", text):
        assert int(done) <= int(total), text  # never 3/2
    assert "None]" not in text, text
    assert re.search(r"2 spec errors, not counted", text), text
    results = [r for r in read_results(tmp_path / "out" / "results.jsonl") if r["record"] == "case"]
    assert sum(1 for r in results if r.get("spec_error")) == 2
    assert json.dumps(results)  # plain JSON


PREVIEW_SPEC = """
topic: demo.preview
title: A case that fails only under an upcoming flag
source: {doc: docs/default_dtypes.md}
basis: documented
cases:
  - id: demo.preview.changes
    claim: the spec pretends jax_disable_bwd_checks changes arange's dtype, so the flag's mode fails
    run: jnp.arange(3)
    expect:
      - when: {flags: {jax_disable_bwd_checks: true}}
        dtype: int16
      - dtype: int32
"""


def test_the_exit_status_counts_unexpected_outcomes_as_the_report_does(tmp_path: Path) -> None:
    # issue 38: `run --modes off-warn,+upcoming` exited 1 on failures in the flag modes while the
    # page said "0 unexpected" (flag modes beside their base mode are previews there)
    from jax_conformance.report.site import headlines

    specs = write_specs(tmp_path, PREVIEW_SPEC)
    common = ["--adapter", "reference", "--specs", str(specs), "--no-report", "-j", "2"]
    out = tmp_path / "both"
    flagged = "off-warn+jax_disable_bwd_checks"
    proc = run_matrix(*common, "--modes", f"off-warn,{flagged}", "--out", str(out))
    [verdict] = headlines(build_model([out / "results.jsonl"]))
    assert (verdict.unexpected, verdict.flagged) == (0, [flagged])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unexpected outcomes:" not in proc.stdout
    assert "under upcoming flags (previews" in proc.stdout
    assert f"FAILED   demo.preview.changes [reference {flagged} cpu]" in proc.stdout
    # the flagged mode alone is what was asked: counted by both
    out = tmp_path / "alone"
    proc = run_matrix(*common, "--modes", flagged, "--out", str(out))
    [verdict] = headlines(build_model([out / "results.jsonl"]))
    assert verdict.unexpected == 1 and proc.returncode == 1, proc.stdout + proc.stderr
    assert "unexpected outcomes:" in proc.stdout
