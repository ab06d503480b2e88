"""The contract across JAX releases: `jax-conformance check ... --releases 0.4.33,0.4.34,latest`.

Each release runs in compat's cached environment for it (`compat.envs.ensure_env`: one venv per
release under the cache directory, this harness installed in it; built once if missing), each of
its modes one process, `jobs` at a time over all releases. `latest` (or `installed`) is the JAX of
the interpreter running this command. The result says, per target, item and mode, in which
release the item starts or stops holding.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jax_conformance.contract.engine import (
    ContractResult,
    Target,
    cell,
    collect,
    contract_modes,
    run_mode,
)
from jax_conformance.contract.items import BLOCKED, FAIL, ITEMS, NA, PASS
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode
from jax_conformance.records import ModeOutput

if TYPE_CHECKING:
    from jax_conformance.compat.across import ModeRun

INSTALLED = ("latest", "installed")  # the JAX beside this harness, not a cached environment


@dataclass
class ReleaseRun:
    """One release: its result in every mode, or why it did not run."""

    release: str  # as given: 0.4.34, latest
    jax_version: str = "?"
    result: ContractResult | None = None
    error: str = ""
    environment: str = ""  # the venv's path, or "installed"

    @property
    def label(self) -> str:
        if self.release in INSTALLED:
            return f"{self.release} ({self.jax_version})"
        return self.release


@dataclass
class Change:
    """An item whose status differs between two releases in a row (for one target and mode)."""

    target: str
    item: str
    mode: str
    before: str  # release label
    before_status: str
    after: str
    after_status: str
    note: str = ""  # why it is not ok after (the n/a or blocked reason, or the failure line)

    def line(self) -> str:
        what = "starts holding" if self.after_status == PASS else "stops holding"
        if self.before_status != PASS and self.after_status != PASS:
            what = "changes"
        note = f": {self.note}" if self.note else ""
        return (
            f"{self.item} [{self.mode}] {what} in {self.after}: {cell(self.before_status)} in "
            f"{self.before}, {cell(self.after_status)} from {self.after}{note}"
        )


@dataclass
class ReleaseResult:
    releases: list[ReleaseRun]
    modes: list[str]
    targets: list[str]  # labels
    changes: list[Change] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.result is not None and r.result.ok for r in self.releases)

    def holds(self, strict_numerics: bool = False) -> bool:
        """Every release ran and holds the contract (strict: the numerics items too)."""
        return all(r.result is not None and r.result.holds(strict_numerics) for r in self.releases)

    def status(self, run: ReleaseRun, target: int, item: str, mode: str) -> str:
        if run.result is None:
            return "error"
        if mode not in run.result.modes:
            return "-"  # a mode this release has not (an upgrade flag it lacks)
        return run.result.targets[target].status(item, mode)

    def table(self) -> str:
        """Per target: item x (release, mode); a release's column per mode it ran."""
        out: list[str] = []
        cols = [(r, m) for r in self.releases for m in self.modes]
        width = max(len(i.id) for i in ITEMS)
        heads = [r.label if len(self.modes) == 1 else f"{r.label} {m}" for r, m in cols]
        sizes = [max(len(h), 7) for h in heads]
        for t, label in enumerate(self.targets):
            out.append(label)
            out.append(
                "  "
                + "item".ljust(width)
                + "  "
                + "  ".join(h.ljust(s) for h, s in zip(heads, sizes, strict=True))
            )
            for item in ITEMS:
                cells = [
                    cell(self.status(r, t, item.id, m)).ljust(s)
                    for (r, m), s in zip(cols, sizes, strict=True)
                ]
                out.append("  " + item.id.ljust(width) + "  " + "  ".join(cells).rstrip())
        return "\n".join(out)

    def errors(self) -> list[str]:
        lines = [f"ERROR {r.label}: {r.error}" for r in self.releases if r.error]
        for r in self.releases:
            if r.result is not None:
                lines += [
                    f"ERROR {r.label} {line[6:]}"
                    for line in r.result.failure_lines()
                    if line.startswith("ERROR ")
                ]
        return lines

    def failure_lines(self, numerics: bool | None = None) -> list[str]:
        """Each release's failure lines (all, the contract's or the numerics items', as
        `ContractResult.failure_lines`), prefixed by the release."""
        return [
            f"{r.label}: {line}"
            for r in self.releases
            if r.result is not None
            for line in r.result.failure_lines(numerics)
        ]


def release_changes(result: ReleaseResult) -> list[Change]:
    """Every (target, item, mode) whose status differs between consecutive releases that ran."""
    changes = []
    ran = [r for r in result.releases if r.result is not None]
    for t, label in enumerate(result.targets):
        for mode in result.modes:
            for item in ITEMS:
                for before, after in zip(ran, ran[1:], strict=False):
                    a = result.status(before, t, item.id, mode)
                    b = result.status(after, t, item.id, mode)
                    if a == b or "-" in (a, b):
                        continue
                    changes.append(
                        Change(
                            label,
                            item.id,
                            mode,
                            before.label,
                            a,
                            after.label,
                            b,
                            _why(after, t, item.id, mode),
                        )
                    )
    return changes


def _why(run: ReleaseRun, target: int, item: str, mode: str) -> str:
    assert run.result is not None
    tr = run.result.targets[target]
    if mode in tr.errors:
        return tr.errors[mode]
    o = tr.outcomes.get((item, mode))
    if o is None:
        return ""
    if o.status == FAIL and o.failures:
        f = o.failures[0]
        return f"{f.transform}: expected {f.expected}; got {f.actual}"
    return o.note if o.status in (NA, BLOCKED) else ""


def release_python(release: str, cache: Path, *, install_timeout: float) -> tuple[str, str, str]:
    """(interpreter, environment path, reason it is unavailable or "") for one release."""
    from jax_conformance.compat import envs

    if release in INSTALLED:
        return sys.executable, "installed", ""
    minor = envs.python_needed(release)
    python = envs.find_python(minor) if minor else sys.executable
    if python is None:
        return "", "", f"jax {release} needs Python {minor}, and no python{minor} was found"
    env = envs.ensure_env(release, cache, python, envs.python_tag(python), install_timeout)
    if not env.ok:
        return "", str(env.path), env.reason
    return str(env.python), str(env.path), ""


def parse_releases(text: Sequence[str]) -> list[str]:
    """`--releases 0.4.33,0.4.34,latest` (repeatable): the releases in the order given."""
    from packaging.version import InvalidVersion, Version

    out: list[str] = []
    for raw in ",".join(text).replace(" ", ",").split(","):
        if not raw:
            continue
        if raw not in INSTALLED:
            try:
                Version(raw)
            except InvalidVersion:
                raise UsageError(
                    f"--releases {raw!r}: not a release (e.g. 0.4.34) nor 'latest' (the JAX installed here)"
                ) from None
        if raw not in out:
            out.append(raw)
    if not out:
        raise UsageError("--releases names no release (e.g. 0.4.33,0.4.34,latest)")
    return out


def run_releases(
    targets: Sequence[Target],
    releases: Sequence[str],
    mode_values: list[str] | None,
    *,
    jobs: int = 2,
    timeout: float = 900,
    install_timeout: float = 900,
    pythonpath: Sequence[str] = (),
    say: Callable[[str], None] = lambda _: None,
) -> ReleaseResult:
    """Check every target in every mode of every release; environments come from compat's cache.

    The releases go one at a time through `compat.across` (what runs in each is this check, its
    modes `jobs` at a time)."""
    from jax_conformance.compat.across import across_releases
    from jax_conformance.compat.envs import default_cache_dir

    cache = default_cache_dir()
    runs = {r: ReleaseRun(r) for r in releases}
    ran: dict[str, list[Mode]] = {}

    def one(run: ReleaseRun, python: str, mode: Mode) -> ModeOutput:
        data = run_mode(targets, mode, python=python, timeout=timeout, pythonpath=pythonpath)
        say(
            f"{run.release} {mode.slug}: {data.get('error', 'done')} (JAX {data.get('jax_version', '?')})"
        )
        return data

    def each(release: str) -> list[ModeRun]:
        """Check the targets in every mode of this release (nothing is left to the scheduler)."""
        run = runs[release]
        python, run.environment, run.error = release_python(
            release, cache, install_timeout=install_timeout
        )
        if run.error:
            say(f"{release}: UNAVAILABLE: {run.error}")
            return []
        say(f"{release}: {run.environment}")
        modes = ran[release] = contract_modes(mode_values, python=python)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            data = list(pool.map(lambda mode: one(run, python, mode), modes))
        run.result = collect(targets, modes, data)
        run.jax_version = run.result.jax_version
        return []

    across_releases(list(runs), each, jobs=jobs, build_jobs=1, say=say, name="contract")
    slugs = list(dict.fromkeys(m.slug for modes in ran.values() for m in modes))
    result = ReleaseResult(list(runs.values()), slugs, [t.label or t.target for t in targets])
    result.changes = release_changes(result)
    return result


__all__ = ["INSTALLED", "Change", "ReleaseResult", "ReleaseRun", "parse_releases", "run_releases"]
