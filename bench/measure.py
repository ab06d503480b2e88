"""Timing primitives for the benchmarks: a timed subprocess, spreads, the machine, pytest summaries."""

from __future__ import annotations

import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
_SUMMARY = re.compile(
    r"(\d+) (passed|failed|skipped|not applicable|errors?|xfailed|xpassed|deselected)"
)


@dataclass
class Timing:
    """One command: wall seconds, CPU seconds of it and its waited-for children, exit status, output tail."""

    argv: list[str]
    wall: float
    cpu: float
    rc: int
    tail: str = ""
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "wall_s": round(self.wall, 3),
            "cpu_s": round(self.cpu, 3),
            "rc": self.rc,
            "counts": self.counts,
        }


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(
    argv: list[str],
    log: Path,
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    timeout: float = 900.0,
) -> Timing:
    """Run `argv` to completion with output in `log`; the wall clock starts at the fork and stops at exit."""
    log.parent.mkdir(parents=True, exist_ok=True)
    cpu0 = children_cpu()
    with log.open("wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
        wall = time.perf_counter() - t0
    text = log.read_text(errors="replace")
    return Timing(
        argv, wall, children_cpu() - cpu0, proc.returncode, text[-3000:], pytest_counts(text)
    )


def run_parallel(
    commands: list[tuple[list[str], Path, Path]], jobs: int, env: dict[str, str] | None = None
) -> tuple[Timing, list[Timing]]:
    """Run (argv, log, cwd) commands `jobs` at a time, as `jax-conformance run` schedules modes:
    (makespan, each in order)."""
    cpu0 = children_cpu()
    pending = list(enumerate(commands))
    running: list[tuple[subprocess.Popen[bytes], int, list[str], Path, float, Any]] = []
    done: dict[int, Timing] = {}
    t0 = time.perf_counter()
    while pending or running:
        while pending and len(running) < jobs:
            index, (argv, log, cwd) = pending.pop(0)
            log.parent.mkdir(parents=True, exist_ok=True)
            out = log.open("wb")
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            running.append((proc, index, argv, log, time.perf_counter(), out))
        for item in list(running):
            proc, index, argv, log, started, out = item
            if proc.poll() is not None:
                out.close()
                text = log.read_text(errors="replace")
                done[index] = Timing(
                    argv,
                    time.perf_counter() - started,
                    0.0,
                    proc.returncode,
                    text[-3000:],
                    pytest_counts(text),
                )
                running.remove(item)
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    total = Timing(
        ["parallel"], wall, children_cpu() - cpu0, max((t.rc for t in done.values()), default=0)
    )
    return total, [
        done[i] for i in range(len(commands))
    ]  # in the order given, not the order finished


def pytest_counts(text: str) -> dict[str, int]:
    """Outcome counts from pytest's last summary line (`184 passed, 1 not applicable in 20.1s`)."""
    for line in reversed(text.strip().splitlines()[-15:]):
        if " in " in line and any(
            w in line for w in ("passed", "failed", "skipped", "not applicable", "error")
        ):
            counts: dict[str, int] = {}
            for n, kind in _SUMMARY.findall(line):
                key = "error" if kind.startswith("error") else kind.replace(" ", "_")
                counts[key] = counts.get(key, 0) + int(n)
            return counts
    return {}


def spread(values: list[float]) -> dict[str, float]:
    """min, median, max (and n) of a list of seconds or ratios."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    """Where the figures were taken: cores, load, Python, JAX (read without importing JAX here)."""
    git = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    return {
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "pytest": _version("pytest"),
        "platform": platform.platform(),
        "git": git.stdout.strip() or None,
        # PYTHONDONTWRITEBYTECODE=1 makes every process compile (and pytest re-rewrite) from source.
        "env": {
            k: os.environ[k]
            for k in ("PYTHONDONTWRITEBYTECODE", "JAX_PLATFORMS", "XLA_FLAGS", "OMP_NUM_THREADS")
            if k in os.environ
        },
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def backends() -> list[str]:
    """The JAX platforms this machine has (the harness runs every one of them)."""
    out = subprocess.run(
        [PYTHON, "-c", "import jax; print(' '.join(sorted({d.platform for d in jax.devices()})))"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "JAX_ENABLE_X64": "0"},
    )
    return out.stdout.split()
