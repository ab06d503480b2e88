"""Running the suite across JAX releases: the one loop behind `compat`, the radar and `check --releases`.

Each release is prepared in a thread of its own (`build_jobs` at once: its environment built or
reused), and what it runs is added, as soon as it is ready, to one scheduler of `jobs` mode
processes shared by every release; each process says how it went on one line as it ends. A
release that cannot be prepared is an unavailable `Environment` with the reason, never an error
that stops the others. Ctrl-C stops every process and ends the command as interrupted.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jax_conformance.compat.envs import Environment, clean_environ
from jax_conformance.errors import Stopped
from jax_conformance.launch.scheduler import Engine, ModeProcess, Scheduler
from jax_conformance.launch.service import failure, run_modes, stopped_status
from jax_conformance.mode import Mode


@dataclass
class ModeRun(ModeProcess):
    """The suite in one mode inside a release's environment; after it ends, why it did not finish
    (`reason`, from `launch.service.failure`)."""

    version: str = ""
    reason: str = ""

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.tail.counts)

    @property
    def seconds(self) -> float:
        return self.elapsed


def mode_run(
    env: Environment,
    mode: Mode,
    out_dir: Path,
    extra: Sequence[str] = (),
    engine: Engine | None = None,
) -> ModeRun:
    """The process that runs the suite in one mode with the release environment's interpreter
    (where `engine` puts it: a local process by default)."""
    name = f"{env.version}-{mode.slug}"
    return ModeRun(
        "jax",
        mode,
        out_dir / f"{name}.jsonl",
        out_dir / f"{name}.log",
        list(extra),
        python=str(env.python),
        env=clean_environ(env.path),
        version=env.version,
        engine=engine,
    )


def progress_line(run: ModeRun) -> str:
    """`jax 0.8.0 [off-warn]: 812 passed, 3 failed in 41.2 s`: how one mode's run went."""
    counts = ", ".join(
        f"{n} {k.replace('_', ' ')}" for k, n in sorted(run.counts.items(), key=lambda kv: -kv[1])
    )
    note = f"; {run.reason}" if run.reason else ""
    return (
        f"jax {run.version} [{run.mode.slug}]: {counts or 'no cases'} in {run.seconds:.1f} s{note}"
    )


def prepare_env(release: str, cache: Path, build: Callable[[str], Environment]) -> Environment:
    """The release's environment from `build`, or an unavailable one saying why `build` raised."""
    try:
        return build(release)
    except Exception as exc:  # noqa: BLE001 - one broken release must not stop the others
        return Environment(release, cache, [], reason=f"{type(exc).__name__}: {exc}")


def across_releases(
    releases: Sequence[str],
    each: Callable[[str], Iterable[ModeRun]],
    *,
    jobs: int,
    build_jobs: int,
    timeout: float | None = None,
    on_finish: Callable[[ModeRun], None] = lambda _: None,
    say: Callable[[str], None] = print,
    name: str = "build",
) -> None:
    """Call `each(release)` for every release in `build_jobs` threads; the mode runs it returns are
    run on one scheduler of `jobs` processes (each killed past `timeout` seconds). As a run ends,
    its `reason` is set, `on_finish` sees it, and its progress line is said."""

    def finished(run: ModeRun) -> None:
        run.reason = failure(run)
        on_finish(run)
        say(progress_line(run))

    scheduler = Scheduler[ModeRun](jobs, timeout=timeout, on_finish=finished)

    def prepare(release: str) -> None:
        for run in each(release):
            scheduler.add(run)

    with cf.ThreadPoolExecutor(max(1, build_jobs), thread_name_prefix=name) as builds:
        futures = [builds.submit(prepare, r) for r in releases]
        cause = run_modes(
            [], jobs, more=lambda: not all(f.done() for f in futures), scheduler=scheduler
        )
        if cause:
            builds.shutdown(wait=False, cancel_futures=True)
            raise Stopped(cause, stopped_status(cause))  # the runs are stopped: exit 130 or 143
        for f in futures:
            f.result()
