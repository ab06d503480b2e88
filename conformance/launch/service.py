"""Run these modes and give me their outcome: the one service every command that runs the suite uses.

`run`, `compat`, `mutate` (and `diff`) each describe their mode processes (`ModeProcess`, or a
subclass that carries the command's own facts), hand them to `run_modes`, and read each one's
outcome from the process afterwards: its records as it wrote them (`process.tail`: header, case
records, end, counts, read once while it ran), its exit (`process.returncode`, `process.status()`),
and, for a process that did not finish its run, why (`failure`) and the records that make that
visible in merged results (`closing_records`, the one place such records are built).
`merge_modes` writes the merged file: each process's records, then its closing records.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from jax_conformance.errors import UsageError
from jax_conformance.launch.scheduler import ModeProcess, Scheduler, merge
from jax_conformance.records import (
    Record,
    ResultRecord,
    RunHeader,
    harness_end,
    harness_header,
    unavailable,
)

if TYPE_CHECKING:
    from jax_conformance.launch.ray_engine import RayEngine

P = TypeVar("P", bound=ModeProcess)
WRITTEN_BY = "jax-conformance"  # the `written_by` of records the parent writes for a mode


def stopped_status(cause: str) -> int:
    """The exit status of a command stopped by `cause` (what `run_modes` returned), as a shell
    reports a command killed by that signal: 143 (128 + 15) for SIGTERM, 130 (128 + 2) for Ctrl-C."""
    return 143 if cause == "SIGTERM" else 130


def run_modes(
    processes: Iterable[P],
    jobs: int,
    *,
    timeout: float | None = None,
    skip: Callable[[P], bool] | None = None,
    on_finish: Callable[[P], None] | None = None,
    on_tick: Callable[[], None] | None = None,
    more: Callable[[], bool] | None = None,
    interval: float = 0.2,
    scheduler: Scheduler[P] | None = None,
) -> str:
    """Run the processes, at most `jobs` at once (each killed past `timeout` seconds); returns what
    stopped the run ("Ctrl-C", "SIGTERM") or "" when every process ran its course. `scheduler`: one
    the caller made to `add` processes to while this runs (then `more()` says whether more may come)."""
    runner = scheduler or Scheduler[P](
        jobs, timeout=timeout, skip=skip, on_finish=on_finish, on_tick=on_tick, interval=interval
    )
    runner.run(processes, more)
    return runner.interrupted


def check_engine(name: str, address: str | None) -> None:
    """Refuse an engine that cannot start, before any work: a usage error, one line."""
    if address and name != "ray":
        raise UsageError("--address names a Ray cluster: give it with --engine ray")
    if name == "ray":
        from jax_conformance.launch.ray_engine import import_ray

        import_ray()


@contextlib.contextmanager
def engine(
    name: str, address: str | None = None, cpus: int | None = None
) -> Iterator[RayEngine | None]:
    """The engine `--engine` names for the length of a command: None for local processes (the
    default), else a Ray engine on the cluster at `address` or a local cluster of `cpus` CPUs."""
    if name != "ray":
        yield None
        return
    from jax_conformance.launch.ray_engine import RayEngine

    ray_engine = RayEngine(address, cpus)
    try:
        yield ray_engine
    finally:
        ray_engine.close()


def unavailable_reason(process: ModeProcess) -> str:
    """Why the implementation cannot run this mode at all (it lacks a flag the mode sets), or "": the
    mode process says so in an `unavailable` run header (`records.unavailable`, written by the plugin
    before its usage error)."""
    header = process.tail.header
    if header is not None and header.get("status") == "unavailable":
        return str(header.get("reason") or "")
    return ""


def failure(process: ModeProcess) -> str:
    """Why the process did not run its mode to the end, in one line ("" when it did)."""
    if process.completed:
        return ""
    lacking = unavailable_reason(process)
    if lacking:
        return lacking
    last = [line.strip() for line in process.log_tail(20) if line.strip()][-2:]
    return f"pytest {process.status()}" + (f": {' | '.join(last)}" if last else "")


def closing_records(
    process: ModeProcess, like: RunHeader | None = None, version: str | None = None
) -> list[Record]:
    """The records that make a mode's end visible when its process did not write them itself; they
    follow the process's own records in the merged file (its file stays as the process left it).

    A mode never started (the run was stopped first) gets a header and an end saying so, with the
    version and backends of `like` (a header of the same adapter that did start); one the
    implementation cannot run (`unavailable_reason`) an `unavailable` header and end, unless it
    wrote them; one that died before its header an `error` header; one whose pytest failed outside
    the cases an `error` case record with the end of its log; one cut off an interrupted end.
    `version`: the implementation's version where the caller knows it (compat: the release)."""
    if process.completed:
        return []
    mode = process.mode.to_json()
    if process.handle is None and process.returncode is None:
        never = f"not-started-{process.adapter}-{process.mode.slug}-{os.getpid()}"
        return [
            harness_header(
                process.adapter,
                mode,
                run_id=never,
                implementation_version=like["implementation_version"] if like else version or "?",
                behaviour_version=like.get("behaviour_version", "?") if like else version or "?",
                backends=like["backends"] if like else (),
                written_by=WRITTEN_BY,
            ),
            harness_end(
                never,
                "not started: the run was stopped before this mode's turn",
                interrupted=True,
                written_by=WRITTEN_BY,
            ),
        ]
    why = failure(process)
    if unavailable_reason(process):
        wrote = process.tail.header is not None
        return [] if wrote else unavailable(process.adapter, version or "?", mode, why)
    out: list[Record] = []
    header = process.tail.header
    if header is None:  # died before writing anything: say who it was
        header = harness_header(
            process.adapter,
            mode,
            run_id=f"failed-{process.adapter}-{process.mode.slug}-{os.getpid()}",
            implementation_version=version or "?",
            status="error",
            reason=why,
            written_by=WRITTEN_BY,
        )
        out.append(header)
    end = process.tail.end
    if (end is not None and not end.get("interrupted")) or process.tail.header is None:
        out.append(_harness_case(process, header, why))
    if end is None or process.stopped:
        # (after pytest's own end record when the user stopped it: the last end record is the one read)
        reason = (
            f"stopped by {process.stopped}" if process.stopped else f"{why} before the run ended"
        )
        out.append(
            harness_end(
                header["run_id"],
                reason,
                interrupted=True,
                exitstatus=process.returncode,
                counts=process.tail.counts,
                written_by=WRITTEN_BY,
            )
        )
    return out


def _harness_case(process: ModeProcess, header: RunHeader, why: str) -> ResultRecord:
    """An `error` case record for a mode's pytest that failed outside the cases, with its log's end."""
    return {
        "record": "case",
        "run_id": header["run_id"],
        "case": f"<pytest {process.adapter} {process.mode.slug}>",
        "topic": "<harness>",
        "claim": "the mode's pytest process runs the suite",
        "spec_file": str(process.log),
        "line": 1,
        "adapter": process.adapter,
        "implementation_version": header.get("implementation_version"),
        "backend": None,
        "mode": process.mode.to_json(),
        "outcome": "error",
        "message": f"pytest {process.status()}; the last lines of {process.log}:\n"
        + "\n".join(process.log_tail(40)),
        "expected": None,
        "actual": None,
        "duration_s": 0.0,
        "written_by": WRITTEN_BY,
    }


def merge_modes(
    processes: Sequence[ModeProcess], target: Path, versions: Sequence[str | None] = ()
) -> int:
    """Every process's records, each followed by its closing records, into `target` (a mode that
    never started borrows the version and backends of a started one of its adapter); the count."""
    headers = {p.adapter: p.tail.header for p in processes if p.tail.header is not None}
    given = list(versions) or [None] * len(processes)
    notes = {
        p.results: closing_records(p, headers.get(p.adapter), v)
        for p, v in zip(processes, given, strict=True)
    }
    return merge([p.results for p in processes], target, notes)
