"""Isolated cases forked from a fork server are the processes a fresh interpreter would give.

`jax_conformance.worker.forkserver` saves the interpreter start-up of `isolate: process` cases. These
tests hold it to that: which server may serve which environment, what happens when a server
is gone, and that the real x64 specs (where every isolated case lives) give the same verdicts
and the same observed values forked as spawned.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.client.caserunner import CaseRunner
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files

from tests.conftest import REPO, read_results

OFF_WARN = Mode(False, "warn")

PROBE = textwrap.dedent("""
    topic: probe
    source: {observed: tests/test_forkserver.py}
    cases:
      - id: probe.mode-env
        claim: no environment of its own
        isolate: process
        run: |
          result = (jax.config.x64_enabled, jnp.arange(2).dtype.name,
                    os.environ.get("JAX_ENABLE_X64"), os.environ.get("DEMO_MARK"))
        expect:
          - check: "result == (False, 'int32', '0', None)"
      - id: probe.jax-env
        claim: JAX_ENABLE_X64=1 is read when jax is imported, in the case
        isolate: process
        env: {JAX_ENABLE_X64: "1"}
        run: |
          result = (jax.config.x64_enabled, jnp.arange(2).dtype.name,
                    os.environ.get("JAX_ENABLE_X64"), os.environ.get("DEMO_MARK"))
        expect:
          - check: "result == (True, 'int64', '1', None)"
      - id: probe.other-env
        claim: a variable no server may assume unread
        isolate: process
        env: {DEMO_MARK: "42"}
        run: |
          result = (jax.config.x64_enabled, jnp.arange(2).dtype.name,
                    os.environ.get("JAX_ENABLE_X64"), os.environ.get("DEMO_MARK"))
        expect:
          - check: "result == (False, 'int32', '0', '42')"
""")


@pytest.fixture
def probes(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "probe.yaml"
    path.write_text(PROBE)
    return {case.id: case for case in load_spec(path).cases}


def run_case(runner: CaseRunner, case: Any) -> dict[str, Any]:
    block = case.select(OFF_WARN, "cpu", "jax", "0.10.2")
    return runner.run(case.payload(block, OFF_WARN, "cpu"), isolate=True, env=case.env)


def test_each_environment_goes_to_the_server_whose_child_it_would_be(
    probes: dict[str, Any],
) -> None:
    runner = CaseRunner("jax", OFF_WARN, isolation="fork")
    try:
        got = {cid: run_case(runner, case) for cid, case in probes.items()}
    finally:
        runner.close()
    assert {cid: v["outcome"] for cid, v in got.items()} == dict.fromkeys(probes, "passed"), got
    assert (
        {cid: v["isolation"] for cid, v in got.items()}
        == {
            "probe.mode-env": "fork-full",  # the mode's own environment: jax is already imported
            "probe.jax-env": "fork-light",  # only JAX_* differ: jax is imported in the child, after the change
            "probe.other-env": "spawn",  # anything else: a fresh interpreter
        }
    )
    assert runner.fork_notes == {}


def test_spawn_isolation_never_forks(probes: dict[str, Any]) -> None:
    runner = CaseRunner("jax", OFF_WARN, isolation="spawn")
    try:
        got = [run_case(runner, case) for case in probes.values()]
    finally:
        runner.close()
    assert [(v["outcome"], v["isolation"]) for v in got] == [("passed", "spawn")] * 3


def test_a_dead_server_costs_speed_not_cases(probes: dict[str, Any]) -> None:
    """Kill the full server mid-run: the next mode-environment case still runs, in a process of its own."""
    runner = CaseRunner("jax", OFF_WARN, isolation="fork")
    try:
        first = run_case(runner, probes["probe.mode-env"])
        assert (first["outcome"], first["isolation"]) == ("passed", "fork-full")
        os.killpg(runner._servers["full"].proc.pid, signal.SIGKILL)
        runner._servers["full"].proc.wait(timeout=10)
        again = run_case(runner, probes["probe.mode-env"])
        assert again["outcome"] == "passed", again
        assert again["isolation"] in ("fork-light", "spawn")
        assert "fork server" in runner.fork_notes["full"], runner.fork_notes
        # Later cases do not try the dead server again.
        assert run_case(runner, probes["probe.mode-env"])["isolation"] == again["isolation"]
    finally:
        runner.close()


def test_unknown_isolation_is_refused() -> None:
    with pytest.raises(UsageError, match="'thread': the isolation modes are fork, spawn"):
        CaseRunner("jax", OFF_WARN, isolation="thread")


def isolated_x64_cases() -> list[str]:
    """One `isolate: process` case of specs/x64 per spec file and shape of its environment (which
    variables it sets, which it unsets): 14 of the 37.

    Which process a case gets (forked from the full server, from the light one, or spawned) is
    decided by that shape, never by the values; cases of one shape in one file are served the
    same way, so a second one adds a spawn (about 2 s of CPU) and no new path.
    """
    chosen: dict[tuple[str, tuple[tuple[str, bool], ...]], str] = {}
    for path in spec_files([REPO / "specs" / "x64"]):
        if is_spec_file(path):
            for c in load_spec(path).cases:
                if c.isolate == "process":
                    chosen.setdefault(
                        (path.name, tuple(sorted((k, v is None) for k, v in c.env.items()))), c.id
                    )
    return list(chosen.values())


def x64_run(tmp_path: Path, isolation: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    out = tmp_path / f"{isolation}.jsonl"
    # "<id>[" selects that case's item and no longer id.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "conformance/",
            "--adapter=jax",
            "--x64=off",
            "--explicit-x64-dtypes=warn",
            "--specs",
            str(REPO / "specs" / "x64"),
            f"--isolation={isolation}",
            f"--results={out}",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            " or ".join(f"{i}[" for i in ids),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return {r["case"]: r for r in read_results(out) if r["record"] == "case"}


def test_x64_specs_see_the_same_values_forked_as_spawned(tmp_path: Path) -> None:
    """Isolated x64 cases of every environment shape (`isolated_x64_cases`), run forked and run
    spawned. The shared-worker cases are left out: they run there either way, so they could not
    tell the two apart."""
    ids = isolated_x64_cases()
    forked, spawned = x64_run(tmp_path, "fork", ids), x64_run(tmp_path, "spawn", ids)
    assert forked.keys() == spawned.keys() == set(ids)
    isolated = [
        cid
        for cid, r in spawned.items()
        if r.get("isolate") == "process" and r["outcome"] == "passed"
    ]
    assert len(isolated) >= 12, isolated
    for cid in forked:
        assert (forked[cid]["outcome"], forked[cid]["actual"]) == (
            spawned[cid]["outcome"],
            spawned[cid]["actual"],
        ), cid
    how = {forked[cid]["isolation"] for cid in isolated}
    assert how == {"fork-full", "fork-light"}, how
    assert {spawned[cid]["isolation"] for cid in isolated} == {"spawn"}
