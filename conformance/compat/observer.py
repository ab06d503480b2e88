"""The radar's observer on real releases: build (or reuse) each release's environment with uv, run the
asked cases in every mode there, keep the results in the radar's store, answer with signatures.

The releases of one bisection step are prepared in parallel (environment builds in threads), and
their mode processes share one scheduler of `jobs` processes; each release says how it went on one
line as it finishes. What the store already holds is never run again.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jax_conformance.compat.across import ModeRun, across_releases, prepare_env
from jax_conformance.compat.envs import Environment, clean_environ, ensure_env, python_tag
from jax_conformance.compat.radar import FLAG, HARNESS, Observations, Store, Unavailable
from jax_conformance.errors import HarnessError
from jax_conformance.launch.service import closing_records
from jax_conformance.mode import Mode
from jax_conformance.protocol import AS_OF_ADAPTER, AS_OF_ENV
from jax_conformance.records import ResultsWriter


def keyword(cases: Sequence[str]) -> str:
    """A pytest -k expression selecting these case ids (a case id is one -k word: dots and dashes
    are allowed; it may also select a case whose id contains it, which costs a little and is harmless)."""
    # -k parses only words of letters, digits and _ . - [ ] : + / \\; a table cell's id (`a|b`, `*`) is cut at
    # the first other character (a prefix selects it, and a few more, which is harmless)
    words = dict.fromkeys(re.split(r"[^\w.\-\[\]:+/]", case, maxsplit=1)[0] for case in cases)
    return " or ".join(w for w in words if w)


@dataclass
class ReleaseStat:
    """How one release went: its environment and its runs."""

    release: str
    build_s: float = 0.0
    cached: bool = True
    installer: str = ""
    runs: int = 0
    cases: int = 0
    run_s: float = 0.0
    reason: str = ""


@dataclass
class RealObserver:
    """Observes releases by running the suite in their environments (see the module docstring)."""

    store: Store
    modes: Sequence[Mode]
    cache: Path
    pythons: Mapping[str, str]  # release -> the interpreter that builds its environment
    specs: Path
    jobs: int = 2
    build_jobs: int = 2
    install_timeout: float = 900.0
    run_timeout: float = 1200.0
    installer: str = "auto"
    rebuild: bool = False
    pins: Sequence[tuple[str, Sequence[str]]] = ()
    as_of: str = (
        ""  # the release whose expect blocks every release is judged against (compat.as_of)
    )
    extra: Sequence[str] = ()
    say: Callable[[str], None] = print
    stats: dict[str, ReleaseStat] = field(default_factory=dict)
    envs: dict[str, Environment] = field(default_factory=dict)
    _tags: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # a real case to run when only flags are asked (they come with any run's header)
    filler: str | None = None
    # case -> the modes where it differed between the ends of its interval (set by `radar.bisect`):
    # a probe runs only those modes; a case not listed runs in every mode
    modes_for: dict[str, set[str]] = field(default_factory=dict)
    _retried: set[str] = field(default_factory=set)  # releases whose harness errors were run again

    def needed(self, cases: Sequence[str] | None) -> list[str]:
        """The modes a probe of these cases runs (every mode for a full run)."""
        if cases is None:
            return self.slugs
        want: set[str] = set()
        for case in cases:
            if not case.startswith(FLAG):
                want |= self.modes_for.get(case, set(self.slugs))
        return [m for m in self.slugs if m in want] or self.slugs[:1]

    @property
    def slugs(self) -> list[str]:
        return [m.slug for m in self.modes]

    def observe(
        self, probes: Mapping[str, Sequence[str] | None]
    ) -> dict[str, Observations | Unavailable]:
        out: dict[str, Observations | Unavailable] = {}
        todo: dict[str, Sequence[str] | None] = {}
        for release, cases in probes.items():
            reason = self.store.unavailable(release)
            if reason is not None:
                out[release] = Unavailable(reason)
            elif self.store.has(release, self.needed(cases), cases):
                self.say(
                    f"jax {release}: {'every case' if cases is None else f'{len(cases)} cases'} from the store"
                )
            else:
                todo[release] = cases
        if todo:
            self._run(todo)
        self._retry_harness_errors(probes)
        for release, cases in probes.items():
            if release in out:
                continue
            reason = self.store.unavailable(release)
            if reason is not None:
                out[release] = Unavailable(reason)
                continue
            if cases is None:
                self._require_full(release)
            obs, _ = self.store.observations(release, self.slugs)
            out[release] = obs if cases is None else {c: obs[c] for c in cases if c in obs}
            if self.filler is None and cases is None:
                self.filler = next((c for c in sorted(obs) if not c.startswith(FLAG)), None)
        return out

    def _env(self, release: str) -> Environment:
        python = self.pythons[release]
        with self._lock:
            if python not in self._tags:
                self._tags[python] = python_tag(python)
        return ensure_env(
            release,
            self.cache,
            python,
            self._tags[python],
            self.install_timeout,
            self.rebuild,
            self.pins,
            self.installer,
        )

    def _require_full(self, release: str) -> None:
        """A release's full run must have completed in every mode: a run that never started (the
        harness could not load in the environment) sees no case and no flag, and a search over it
        would report "no change" where it looked at nothing."""
        _, full = self.store.observations(release, self.slugs)
        missing = [m for m in self.slugs if m not in full]
        if missing:
            why = sorted({self.store.why_incomplete(release, m) for m in missing})
            raise HarnessError(
                f"jax {release}: no complete run in {', '.join(missing)} ({'; '.join(why)}); "
                "the radar concludes nothing from a release it could not run"
            )

    def _retry_harness_errors(self, probes: Mapping[str, Sequence[str] | None]) -> None:
        """A full run's cases that met a harness error (the harness, not the release, failed: a
        checkout mid-edit, a worker lost) are run once more, in the modes where they did: until
        then the search cannot compare them, and a change in them would go unseen."""
        again: dict[str, list[str]] = {}
        for release, cases in probes.items():
            if cases is not None or release in self._retried or self.store.unavailable(release):
                continue
            obs, _ = self.store.observations(release, self.slugs)
            harmed = sorted(
                c for c, sig in obs.items() if not c.startswith(FLAG) and HARNESS in sig.values()
            )
            self._retried.add(release)
            if harmed:
                self.say(
                    f"jax {release}: {len(harmed)} cases met a harness error; running them again"
                )
                again[release] = harmed
        if again:
            self._run(again)

    def modes_to_run(self, release: str, cases: Sequence[str] | None) -> list[Mode]:
        """The modes a probe needs, less (for a full run) those whose full run already ended: an
        interrupted search resumes at the mode it was stopped in, never overwriting a finished one."""
        modes = [m for m in self.modes if m.slug in self.needed(cases)]
        if cases is None:
            _, full = self.store.observations(release, [m.slug for m in modes])
            modes = [m for m in modes if m.slug not in full]
        return modes

    def _run(self, todo: Mapping[str, Sequence[str] | None]) -> None:
        processes: list[tuple[ModeRun, str]] = []
        lock = threading.Lock()

        def each(release: str) -> list[ModeRun]:
            runs = self._prepare(release, todo[release])
            with lock:
                processes.extend((run, release) for run in runs)
            return runs

        across_releases(
            list(todo),
            each,
            jobs=self.jobs,
            build_jobs=self.build_jobs,
            timeout=self.run_timeout,
            on_finish=self._finished,
            say=self.say,
            name="radar-build",
        )
        for run, release in processes:
            notes = closing_records(run, version=release)
            if (
                notes
            ):  # a run that did not end: its file keeps what it wrote, and says why (not reused)
                writer = ResultsWriter(run.results, truncate=False)
                for record in notes:
                    writer.write(record)
                writer.close()

    def _prepare(self, release: str, cases: Sequence[str] | None) -> list[ModeRun]:
        """The release's environment, then the mode runs its probe of `cases` needs (none when the
        release is unavailable, which the store then says)."""
        stat = self.stats.setdefault(release, ReleaseStat(release))
        env = self.envs[release] = prepare_env(release, self.cache, self._env)
        if not env.ok:
            self.store.mark_unavailable(release, env.reason)
            stat.reason = env.reason
            self.say(f"jax {release}: UNAVAILABLE: {env.reason}")
            return []
        if not env.cached:
            stat.build_s, stat.cached, stat.installer = env.seconds, False, env.installer
        how = "cached" if env.cached else f"built in {env.seconds:.1f} s ({env.installer})"
        real = None if cases is None else [c for c in cases if not c.startswith(FLAG)]
        if real is not None and not real:
            real = [self.filler] if self.filler else []
        modes = self.modes_to_run(release, cases)
        self.say(
            f"jax {release}: environment {how}; running {'every case' if real is None else f'{len(real)} cases'}"
            f" in {', '.join(m.slug for m in modes)}"
        )
        runs = [
            self._mode_run(env, mode, real)
            for mode in modes
            if not self._observed(release, mode, real)
        ]
        stat.runs += len(runs)
        if runs:
            stat.cases = max(stat.cases, len(real) if real is not None else 0)
        return runs

    def _observed(self, release: str, mode: Mode, real: Sequence[str] | None) -> bool:
        """Whether the store already holds every asked case in this mode (a full run never is)."""
        done, _ = self.store.observations(release, [mode.slug])
        return real is not None and all(
            done.get(c, {}).get(mode.slug) not in (None, HARNESS) for c in real
        )

    def _mode_run(self, env: Environment, mode: Mode, real: Sequence[str] | None) -> ModeRun:
        """The run of `real` (None: every case) in one mode, its results where the store keeps them."""
        path = self.store.result_path(env.version, mode.slug, real)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.store.note_cases(env.version, mode.slug, real)
        extra = ["--specs", str(self.specs), *self.extra]
        if real is not None:
            extra += ["-k", keyword(real)]
        environ = clean_environ(env.path)
        adapter = "jax"
        if self.as_of:
            environ[AS_OF_ENV], adapter = self.as_of, AS_OF_ADAPTER
        return ModeRun(
            adapter,
            mode,
            path,
            path.with_suffix(".log"),
            extra,
            python=str(env.python),
            env=environ,
            version=env.version,
        )

    def _finished(self, run: ModeRun) -> None:
        stat = self.stats.setdefault(run.version, ReleaseStat(run.version))
        stat.run_s += run.seconds
        if run.results.parent.is_dir():  # the run's wall time beside its results (bench/radar.py)
            run.results.with_suffix(".wall.json").write_text(
                json.dumps({"seconds": round(run.seconds, 1), "reason": run.reason or ""})
            )
