"""Mode processes, parent side: one pytest process of the suite per (adapter, mode), N at a time.

x64 and the explicit-dtype policy are process-wide, so every command that runs the suite in
several modes (`run`, `mutate`, `compat`, the benchmarks, the tests) starts one

    python -m pytest <package> --adapter=A --x64=.. --explicit-x64-dtypes=.. --results F

per mode. This module builds that command line (`pytest_command`, the one place), runs such
processes N at a time with a time limit each and passes Ctrl-C or SIGTERM on to them
(`Scheduler`), follows what each writes (`records.RecordTail`), and merges their results (`merge`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Generic, Protocol, TypeVar

from jax_conformance import PACKAGE_DIR
from jax_conformance.mode import Mode, value_text
from jax_conformance.records import Record, RecordTail, encode
from jax_conformance.spec.expectations import NO_FILES
from jax_conformance.text import signal_text

# ---------------------------------------------------------------- the command line


def pytest_command(
    adapter: str,
    mode: Mode,
    results: Path | None = None,
    *,
    python: str = sys.executable,
    extra: Sequence[str] = (),
) -> list[str]:
    """The command that runs the suite in one mode. The package is named by its path, so the same
    command works from a checkout and from a wheel, in any working directory."""
    argv = [
        python,
        "-m",
        "pytest",
        str(PACKAGE_DIR),
        f"--adapter={adapter}",
        f"--x64={'on' if mode.x64 else 'off'}",
        f"--explicit-x64-dtypes={mode.explicit_x64_dtypes}",
    ]
    argv += [f"--flag={name}={value_text(value)}" for name, value in mode.flags]
    if results is not None:
        argv += ["--results", str(results)]
    if "--expectations" not in extra:
        # the harness's mode processes are judged by the files they are given, none unless given
        # (the plugin alone reads the adapter's own: `pytest conformance/ --adapter=jax`)
        argv += ["--expectations", NO_FILES]
    if not any(a.startswith("--tb") for a in extra):
        # Each failure as the plugin words it (case, mode, expected, actual), without pytest's
        # per-failure teardown lookup, which scans every report: quadratic, 48 of 67 s in a mode
        # where 3,411 table cells fail (a broken build, an old release).
        argv.append("--tb=line")
    return [*argv, "-p", "no:cacheprovider", "-q", *extra]


def pytest_options(
    *,
    backends: Iterable[str] = (),
    specs: Iterable[Path | str] = (),
    expectations: Iterable[Path | str] = (),
    keyword: str | None = None,
    markexpr: str | None = None,
    case_timeout: float | None = None,
    shard: str | None = None,
) -> list[str]:
    """The plugin's selection options; paths are made absolute (they mean the caller's directory)."""
    argv = [f"--backend={b}" for b in backends]
    for spec_dir in specs:
        argv += ["--specs", str(Path(spec_dir).resolve())]
    for path in expectations:
        argv += ["--expectations", str(Path(path).resolve())]
    if keyword:
        argv += ["-k", keyword]
    if markexpr:
        argv += ["-m", markexpr]
    if case_timeout:
        argv += ["--case-timeout", str(case_timeout)]
    if shard:
        argv += ["--shard", shard]
    return argv


# ---------------------------------------------------------------- one mode process


@dataclass
class ModeProcess:
    """One pytest process of the suite in one mode (started and watched from the parent), and
    what it has written so far. `pytest_args` come after the mode's options (`pytest_options`)."""

    adapter: str
    mode: Mode
    results: Path
    log: Path
    pytest_args: list[str] = field(default_factory=list)
    python: str = sys.executable
    env: dict[str, str] | None = None  # None: this process's environment
    # None: this process's working directory (never inside an installed package)
    cwd: Path | None = None
    part: str = ""  # which part of the mode's cases it runs, in its name (`-2of3`), if not all
    engine: Engine | None = None  # None: a subprocess here (`LOCAL`)
    handle: Handle | None = None  # set when it starts
    started: float | None = None
    finished: float | None = None
    returncode: int | None = None
    timed_out: float | None = None  # the time limit it was killed at
    stopped: str = (
        ""  # why the user stopped it: "Ctrl-C", or "SIGTERM" when the runner was terminated
    )
    not_started: bool = False  # the run was stopped before this mode's turn came
    skipped: bool = False  # the scheduler's `skip` dropped it from the queue
    tail: RecordTail = field(init=False)  # its records, read as they are written (once)

    def __post_init__(self) -> None:
        self.tail = RecordTail(self.results)

    @property
    def argv(self) -> list[str]:
        return pytest_command(
            self.adapter, self.mode, self.results, python=self.python, extra=self.pytest_args
        )

    @property
    def name(self) -> str:
        return f"{self.adapter} {self.mode.slug}{self.part}"

    @property
    def waiting(self) -> bool:
        return (
            self.handle is None
            and self.returncode is None
            and not (self.skipped or self.not_started)
        )

    @property
    def running(self) -> bool:
        return self.handle is not None and self.returncode is None

    @property
    def completed(self) -> bool:
        """The process ran to its end record, and any failure pytest reports is a recorded case."""
        end = self.tail.end
        if end is None or end.get("interrupted"):
            return False
        return self.returncode in (0, 5) or (self.returncode == 1 and self.tail.unexpected > 0)

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.monotonic()) - self.started

    def status(self) -> str:
        if self.handle is None and self.returncode is None:
            return "not started" if self.not_started else "waiting"
        if self.returncode is None:
            return "running"
        if self.completed:
            return "done"
        if self.stopped:
            return f"stopped by {self.stopped}"
        if self.timed_out is not None:
            return f"timed out after {self.timed_out:.0f} s"
        if self.handle is not None and self.handle.lost():
            return self.handle.lost()
        if self.returncode < 0:
            return f"killed by {signal_text(-self.returncode)}"
        if self.tail.header is None:
            return f"failed to start (exit {self.returncode})"
        if self.tail.end is not None and not self.tail.end.get("interrupted"):
            return f"pytest failed outside the cases (exit {self.returncode})"
        return f"interrupted (exit {self.returncode})"

    def log_tail(self, lines: int) -> list[str]:
        """The last lines of the process's output."""
        return (
            self.log.read_text(errors="replace").strip().splitlines()[-lines:]
            if self.log.is_file()
            else []
        )

    def start(self) -> None:
        self.results.parent.mkdir(parents=True, exist_ok=True)
        # A stale file from an earlier run would be counted before pytest truncates it.
        self.results.unlink(missing_ok=True)
        self.handle = (self.engine or LOCAL).launch(self)
        self.started = time.monotonic()

    def poll(self) -> bool:
        """Read what it wrote since the last poll; True when the process has just ended."""
        if self.handle is None:  # the file there now, if any, is an earlier run's
            return False
        self.tail.poll()
        if self.returncode is None:
            rc = self.handle.poll()
            if rc is not None:
                self.returncode = rc
                self.finished = time.monotonic()
                self.tail.poll()
                return True
        return False

    def kill_for_time(self, limit: float) -> None:
        """Past its time limit: the process and its case workers are killed."""
        self.timed_out = limit
        if self.handle is not None:
            self.handle.signal(signal.SIGKILL)

    def interrupt(self, cause: str = "Ctrl-C") -> None:
        """Pass the user's Ctrl-C on (the mode runs in its own process group, which the terminal's misses)."""
        if self.handle is None:
            self.not_started = not self.skipped
            return
        if self.returncode is not None:
            return
        self.stopped = cause
        self.handle.signal(signal.SIGINT)

    def stop(self, grace: float = 10.0) -> None:
        """Wait for an interrupted mode to write its end record; kill it after `grace` seconds."""
        if self.handle is None or self.returncode is not None:
            return
        if self.handle.wait(grace) is None:
            self.handle.signal(signal.SIGKILL)
            self.handle.wait(None)
        self.poll()


# ---------------------------------------------------------------- where a mode process runs


class Handle(Protocol):
    """A started mode process, wherever it runs."""

    pid: int | None  # its process id on the machine it runs on, once known

    def poll(self) -> int | None:
        """Its exit status once it has ended (after its output is in the process's files), else None."""

    def signal(self, number: int) -> None:
        """Send a signal to the process and its case workers (ignored once it has ended)."""

    def wait(self, timeout: float | None) -> int | None:
        """Wait up to `timeout` seconds (None: no limit) for its end; its exit status, or None."""

    def lost(self) -> str:
        """Why the engine lost the process (its machine or worker died past its retries), or ""."""


class Engine(Protocol):
    """Where mode processes run: `launch` starts one and returns its handle."""

    def launch(self, process: ModeProcess) -> Handle: ...


class LocalHandle:
    """A mode process on this machine: a subprocess in its own process group (Ctrl-C on the runner
    stops a mode and its case workers together), its output going to the process's log."""

    def __init__(self, process: ModeProcess) -> None:
        with open(process.log, "wb") as log:
            self.proc = subprocess.Popen(
                process.argv,
                cwd=process.cwd,
                env=process.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.pid: int | None = self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def signal(self, number: int) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, number)

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def lost(self) -> str:
        return ""


class LocalEngine:
    """The default engine: every mode process is a subprocess of this one."""

    def launch(self, process: ModeProcess) -> Handle:
        return LocalHandle(process)


LOCAL = LocalEngine()


# ---------------------------------------------------------------- N at a time

P = TypeVar("P", bound=ModeProcess)


class Scheduler(Generic[P]):
    """Runs mode processes, at most `jobs` at once, in the order given (more may be added from other
    threads while it runs). `skip(p)` may drop a queued process; `on_finish(p)` sees each one that
    ended; `on_tick()` runs after every poll (progress). Ctrl-C or SIGTERM stops them all."""

    def __init__(
        self,
        jobs: int,
        *,
        timeout: float | None = None,
        skip: Callable[[P], bool] | None = None,
        on_finish: Callable[[P], None] | None = None,
        on_tick: Callable[[], None] | None = None,
        interval: float = 0.2,
    ) -> None:
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.skip = skip
        self.on_finish = on_finish
        self.on_tick = on_tick
        self.interval = interval
        self.processes: list[P] = []
        self.interrupted = ""  # what stopped the run: "Ctrl-C" or "SIGTERM"
        self._lock = threading.Lock()

    def add(self, process: P) -> None:
        with self._lock:
            self.processes.append(process)

    def run(self, processes: Iterable[P] = (), more: Callable[[], bool] | None = None) -> bool:
        """Run every process (and those added meanwhile while `more()` says more may come); True
        when the user stopped the run, after every process has stopped."""
        for process in processes:
            self.add(process)
        cause = ["Ctrl-C"]

        def terminated(signum: int, frame: FrameType | None) -> None:
            cause[0] = signal_text(signum)
            raise KeyboardInterrupt

        # A terminated runner stops its modes too (they run in their own process groups).
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, terminated) if in_main else None
        try:
            while True:
                # Asked first: a process added before `more()` says no is then seen by this step.
                pending = more is not None and more()
                if not self._step() and not pending:
                    break
                time.sleep(self.interval)
        except KeyboardInterrupt:
            self.interrupted = cause[0]
            self._stop_all(cause[0])
        finally:
            if in_main:
                signal.signal(signal.SIGTERM, previous)
        for process in self._snapshot():
            if process.poll() and self.on_finish is not None:
                self.on_finish(process)
        if self.on_tick is not None:
            self.on_tick()
        return bool(self.interrupted)

    def _snapshot(self) -> list[P]:
        with self._lock:
            return list(self.processes)

    def _step(self) -> bool:
        """Poll, enforce time limits, start what fits; False when nothing runs or waits."""
        processes = self._snapshot()
        for process in processes:
            if process.running and self.timeout is not None and process.elapsed > self.timeout:
                process.kill_for_time(self.timeout)
            if process.poll() and self.on_finish is not None:
                self.on_finish(process)
        free = self.jobs - sum(p.running for p in processes)
        for process in (p for p in processes if p.waiting):
            if free <= 0:
                break
            if self.skip is not None and self.skip(process):
                process.skipped = True
                continue
            process.start()
            free -= 1
        if self.on_tick is not None:
            self.on_tick()
        return any(p.running or p.waiting for p in processes)

    def _stop_all(self, cause: str) -> None:
        processes = self._snapshot()
        running = [p for p in processes if p.running]
        print(
            f"\n{cause}: stopping {len(running)} running mode process{'es' if len(running) != 1 else ''}"
            f"{' (Ctrl-C again to kill them at once)' if cause == 'Ctrl-C' else ''}",
            file=sys.stderr,
            flush=True,
        )
        for process in processes:
            process.interrupt(cause)
        try:
            for process in processes:
                process.stop()
        except KeyboardInterrupt:
            for process in processes:
                process.stop(grace=0)


# ---------------------------------------------------------------- afterwards


def merge(
    files: Iterable[Path], target: Path, notes: Mapping[Path, Sequence[Record]] | None = None
) -> int:
    """Every whole record of each file into `target`, each file's `notes` (records the caller
    writes about a process that failed) right after it; returns the record count. A torn last
    line (a killed process) and blank lines are dropped; a missing file adds only its notes. The
    files stay as the processes left them, and `target` appears whole (written aside, renamed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    written = 0
    with open(staged, "wb") as out:
        for path in files:
            data = path.read_bytes() if path.is_file() else b""
            for line in data[: data.rfind(b"\n") + 1].splitlines():
                if line.strip():
                    out.write(line + b"\n")
                    written += 1
            for record in (notes or {}).get(path, ()):
                out.write(encode(record))
                written += 1
    os.replace(staged, target)
    return written
