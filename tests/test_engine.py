"""`--engine ray`: mode processes as actors on a real Ray cluster (a local one, started here).

The same run on Ray and on local processes gives the same records, cell for cell; a worker that
dies mid-run is run again (the run still complete and equal), or, past its retries, reported lost
in the results, never silently dropped; an engine that cannot start is a usage error up front.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from jax_conformance.launch import ray_engine
from jax_conformance.launch.scheduler import ModeProcess, pytest_options
from jax_conformance.launch.service import closing_records, run_modes
from jax_conformance.merging import merge_runs
from jax_conformance.mode import Mode
from jax_conformance.records import ResultRecord, load_runs, read_records

pytest.importorskip("ray", reason="the [ray] extra is not installed")

MODES = "off-warn,off-error,off-allow,on"
SELECTION = "x64.defaults"  # a few dozen quick cases of the real specs


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


def cells(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(case, mode) -> (outcome, message) of a results file's case records (each cell once)."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for record in read_records(path, kinds=("case",)):
        case: ResultRecord = record  # type: ignore[assignment]
        key = (case["case"], str(case["mode"]))
        assert key not in found, f"{key} twice in {path}"
        found[key] = (case["outcome"], case.get("message") or "")
    return found


def test_a_sharded_ray_run_equals_the_local_run(tmp_path: Path) -> None:
    """The 4-mode matrix, each mode in 2 shards (8 actors on a 2-CPU local cluster), merged."""
    common = ["--adapter", "reference", "--modes", MODES, "-k", SELECTION, "-j", "2"]
    local = cli("run", *common, "--no-report", "--out", str(tmp_path / "local"), cwd=tmp_path)
    on_ray = cli(
        "run",
        *common,
        "--engine",
        "ray",
        "--shards",
        "2",
        "--out",
        str(tmp_path / "ray"),
        cwd=tmp_path,
    )
    assert local.returncode == 0, local.stdout + local.stderr
    assert on_ray.returncode == 0, on_ray.stdout + on_ray.stderr
    assert "at a time on Ray" in on_ray.stdout and "each mode in 2 shards" in on_ray.stdout
    assert len(list((tmp_path / "ray" / "modes").glob("*-2of2.jsonl"))) == 4
    # The report's merge joins each mode's two shards into one run, complete.
    merged = merge_runs(load_runs([tmp_path / "ray" / "results.jsonl"]))
    assert len(merged.runs) == 4 and merged.duplicates == 0
    assert all(run.end is not None and not run.interrupted for run in merged.runs)
    expected = cells(tmp_path / "local" / "results.jsonl")
    assert len(expected) >= 4 * 5
    assert cells(tmp_path / "ray" / "results.jsonl") == expected


def _process(tmp_path: Path, engine: ray_engine.RayEngine, sleep: bool = False) -> ModeProcess:
    env = dict(os.environ)
    return ModeProcess(
        "reference",
        Mode(),
        tmp_path / "mode.jsonl",
        tmp_path / "mode.log",
        pytest_options(keyword=SELECTION),
        env=env,
        engine=engine,
    )


def _kill_worker_once_started(process: ModeProcess, times: int) -> threading.Thread:
    """Kill the actor's worker process (SIGKILL, as a node's OOM killer would) `times` times, each
    time once the attempt has started."""

    def killer() -> None:
        killed: set[int] = set()
        deadline = time.monotonic() + 300
        while len(killed) < times and time.monotonic() < deadline:
            handle = process.handle
            pid = getattr(handle, "pid", None)
            if pid and pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def engine() -> ray_engine.RayEngine:
    started = ray_engine.RayEngine(cpus=2)
    yield started  # type: ignore[misc]
    started.close()


def test_a_dead_worker_is_run_again(tmp_path: Path, engine: ray_engine.RayEngine) -> None:
    undisturbed = _process(tmp_path / "a", engine)
    run_modes([undisturbed], 1)
    assert undisturbed.completed, undisturbed.log_tail(20)

    process = _process(tmp_path / "b", engine)
    killer = _kill_worker_once_started(process, times=1)
    run_modes([process], 1)
    killer.join(timeout=10)
    log = process.log.read_text()
    assert "[ray] attempt 1: the worker running this mode died" in log
    assert process.completed and process.status() == "done", log
    assert cells(process.results) == cells(undisturbed.results)


def test_a_mode_lost_past_its_retries_is_reported(
    tmp_path: Path, engine: ray_engine.RayEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_engine, "RETRIES", 1)
    process = _process(tmp_path, engine)
    killer = _kill_worker_once_started(process, times=2)
    run_modes([process], 1)
    killer.join(timeout=10)
    assert not process.completed
    assert process.status().startswith("lost: its Ray worker died in each of 2 attempts"), (
        process.status()
    )
    # The merged results say so: an error record for the mode, not silence.
    closing = closing_records(process)
    assert closing and any("lost: its Ray worker died" in str(r) for r in closing), closing


def test_engine_errors_come_before_any_work(tmp_path: Path) -> None:
    result = cli("run", "--adapter", "reference", "--address", "localhost:1", cwd=tmp_path)
    assert result.returncode == 2
    assert "--address names a Ray cluster: give it with --engine ray" in result.stderr
    assert not (tmp_path / "reports").exists()


def test_compat_on_ray_equals_compat_here(tmp_path: Path) -> None:
    """Each release's environment is prepared by a task on a node and its modes run there: the
    merged results equal a local compat run's, the unavailable release included."""
    from importlib.metadata import version

    here = version("jax")
    common = [
        "--versions",
        f"0.0.1,{here}",
        "--env",
        f"{here}={sys.prefix}",
        "--modes",
        "off-warn,on",
    ]
    common += ["--cache-dir", str(tmp_path / "cache"), "--install-timeout", "120", "--no-report"]
    local = cli(
        "compat", *common, "--out", str(tmp_path / "local"), "--", "-k", SELECTION, cwd=tmp_path
    )
    on_ray = cli(
        "compat",
        *common,
        "--engine",
        "ray",
        "--out",
        str(tmp_path / "ray"),
        "--",
        "-k",
        SELECTION,
        cwd=tmp_path,
    )
    assert local.returncode == 0, local.stdout + local.stderr
    assert on_ray.returncode == 0, on_ray.stdout + on_ray.stderr
    expected = cells(tmp_path / "local" / "compat-results.jsonl")
    assert len(expected) >= 2 * 5
    assert cells(tmp_path / "ray" / "compat-results.jsonl") == expected
    assert "jax 0.0.1: UNAVAILABLE" in on_ray.stdout
