"""Known divergences: per-adapter files of case ids (and modes) expected to fail, each with a reason.

A listed case becomes `xfailed` when it fails and `xpassed` (an unexpected outcome) when it
passes, so a backend team can ratchet (`run --update-expectations`: `ratchet` rewrites the file so
it lists what still fails). This module is the one home of the files: load, match, find the unused
entries, choose and rewrite the file. Format (YAML):

    adapter: jax                 # required
    version: ">=0.4.30,<0.8"     # optional PEP 440 range over the behaviour version
    backend: gpu                 # optional
    entries:
      - reason: jax_explicit_x64_dtypes does not exist before 0.8.0
        cases:
          - x64.explicit.error-mode-raises           # every mode
          - {case: x64.explicit.allow-mode, modes: [off-allow]}

A listed mode covers a run's mode by its x64 part: `off-warn` covers `off-warn` and every mode with
flags on top of it (`off-warn+jax_remat3`), so the modes of `run --modes off-warn,+upcoming` are
judged as their base mode is; a listed mode that names flags covers the modes that set them too
(`off-allow+jax_numpy_dtype_promotion=strict` covers `off-allow+jax_numpy_dtype_promotion=strict+jax_remat3`).
With no `--expectations`, the plugin and `run` read the adapter's files in `DEFAULT_DIR`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

import yaml
from jax_conformance import SPECS_DIR
from jax_conformance.errors import ExpectationsError, ModeError
from jax_conformance.mode import DEFAULT_MODES, Mode
from jax_conformance.spec.model import version_in
from packaging.specifiers import InvalidSpecifier, SpecifierSet

if TYPE_CHECKING:
    from jax_conformance.records import ResultRecord

DEFAULT_DIR = SPECS_DIR / "expectations"  # the adapters' own known-divergence files
NO_FILES = "none"  # `--expectations none`: judge by no file, not the adapter's own
NEEDS_REASON = "TODO: say why this case diverges"
# Outcomes the ratchet keeps listed: the case still diverges (an xfailed case is a listed one that failed).
STILL_FAILING = frozenset({"failed", "error", "crashed", "timeout", "xfailed"})


@dataclass
class Entry:
    case: str
    reason: str
    modes: frozenset[str] | None = None  # mode slugs (off-warn, on, ...); None = all
    backends: frozenset[str] | None = None
    used: bool = False
    path: Path | None = None  # the expectations file that lists it
    # the releases the divergence is known in (its group's `version`)
    version: SpecifierSet | None = None

    def matches(self, case: str, mode: Mode, backend: str) -> bool:
        return (
            self.case == case
            and self.covers(mode)
            and (self.backends is None or backend in self.backends)
        )

    def covers(self, mode: Mode) -> bool:
        """Whether the entry speaks for cases run in `mode` (every mode when it names none)."""
        return self.modes is None or any(covers(Mode.from_slug(m), mode) for m in self.modes)

    def applies(self, version: str) -> bool:
        return self.version is None or version_in(version, self.version)


def covers(listed: Mode, mode: Mode) -> bool:
    """A listed mode covers a run's mode with the same x64 part that sets every flag it names."""
    return listed.base == mode.base and set(listed.flags) <= set(mode.flags)


def _mode_name(path: Path, name: object) -> str:
    """A mode's name (`off-warn`, `on`, `off-warn+jax_custom_vjp3`), or a usage error naming it."""
    try:
        return Mode.from_slug(str(name)).slug
    except ModeError as exc:
        raise ExpectationsError(f"{path}: {exc}") from None


@dataclass
class ExpectationFile:
    path: Path
    adapter: str
    version: SpecifierSet | None = None
    backend: frozenset[str] | None = None
    entries: list[Entry] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path | str) -> ExpectationFile:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ExpectationsError(f"{path}: cannot read expectations: {exc}") from None
        if not isinstance(data, dict) or "adapter" not in data:
            raise ExpectationsError(
                f"{path}: an expectations file is a mapping with `adapter` and `entries`"
            )
        version = SpecifierSet(str(data["version"])) if data.get("version") else None
        backend = data.get("backend")
        out = cls(
            path,
            str(data["adapter"]),
            version,
            frozenset([backend] if isinstance(backend, str) else backend) if backend else None,
        )
        for group in data.get("entries", []) or []:
            reason = str(group.get("reason") or NEEDS_REASON)
            try:
                releases = SpecifierSet(str(group["version"])) if group.get("version") else None
            except InvalidSpecifier:
                raise ExpectationsError(
                    f'{path}: version {group["version"]!r} is not a PEP 440 range (e.g. "<0.11")'
                ) from None
            for item in group.get("cases", []) or []:
                if isinstance(item, str):
                    out.entries.append(Entry(item, reason, path=path, version=releases))
                else:
                    modes = [_mode_name(path, m) for m in item.get("modes") or []]
                    backends = item.get("backends")
                    out.entries.append(
                        Entry(
                            str(item["case"]),
                            reason,
                            frozenset(modes) if modes else None,
                            frozenset(backends) if backends else None,
                            path=path,
                            version=releases,
                        )
                    )
        return out

    @classmethod
    def load_many(cls, paths: list[str]) -> ExpectationSet:
        return ExpectationSet([cls.load(p) for p in paths])

    def applies(self, adapter: str, version: str, backend: str | None = None) -> bool:
        return (
            self.adapter == adapter
            and (self.version is None or version_in(version, self.version))
            and (backend is None or self.backend is None or backend in self.backend)
        )


@dataclass
class ExpectationSet:
    files: list[ExpectationFile]

    def find(self, case: str, mode: Mode, backend: str, adapter: str, version: str) -> Entry | None:
        """The entry that lists this case here (marked used), or None; the plugin turns it into a strict xfail."""
        for f in self.files:
            if f.applies(adapter, version, backend):
                for entry in f.entries:
                    if entry.matches(case, mode, backend) and entry.applies(version):
                        entry.used = True
                        return entry
        return None

    def unused(
        self, mode: Mode, adapter: str | None, version: str, topics: Iterable[str]
    ) -> Iterator[tuple[Path, str]]:
        """(file, case) per entry for this mode and release that matched no collected case, among
        the entries for cases of `topics` (the spec files collected): an entry for a topic the run
        did not collect says nothing about it (`pytest --specs mine` reads the default files too)."""
        prefixes = tuple(f"{t}." for t in topics)
        for f in self.files:
            if adapter is None or not f.applies(adapter, version):
                continue
            for entry in f.entries:
                if (
                    not entry.used
                    and entry.applies(version)
                    and entry.covers(mode)
                    and entry.case.startswith(prefixes)
                ):
                    yield f.path, entry.case


def files_for(
    adapter: str, given: list[Path], default_dir: Path = DEFAULT_DIR, *, updating: bool = False
) -> list[Path]:
    """The expectations files that speak for `adapter`: those given (`--expectations`, each must
    exist unless the run is `updating` them), else those in `default_dir`."""
    missing = [p for p in given if not p.is_file() and not updating]
    if missing:
        raise ExpectationsError(f"--expectations {missing[0]}: no such file")
    # A file speaks for one adapter; with several adapters each gets its own files.
    candidates = [p for p in given or sorted(default_dir.glob("*.y*ml")) if p.is_file()]
    return [p for p in candidates if ExpectationFile.load(p).adapter == adapter]


def ratchet_target(
    adapter: str, files: list[Path], given: list[Path], default_dir: Path, *, one_adapter: bool
) -> Path:
    """The file the ratchet rewrites: the adapter's own, a new one named with --expectations (when
    the run has one adapter), or `<default_dir>/<adapter>.yaml`."""
    if files:
        return files[0]
    new = [p for p in given if not p.is_file()]
    return new[0] if new and one_adapter else default_dir / f"{adapter}.yaml"


def ratchet(path: Path, adapter: str, runs: Iterable[tuple[Mode, Iterable[ResultRecord]]]) -> Path:
    """Rewrite `path` from a run's case records per mode, so that it lists exactly what still
    fails; cases or modes not run keep their entries, and reasons are kept (`write_expectations`)."""
    previous = ExpectationFile.load(path) if path.is_file() else None
    all_modes = {m.slug for m in DEFAULT_MODES}
    failing: dict[str, set[str]] = {}
    ran: set[tuple[str, str]] = set()
    run_version: str | None = None
    for mode, records in runs:
        all_modes.add(mode.slug)
        for r in records:
            if not r["case"].startswith("<"):
                run_version = (
                    run_version or r.get("behaviour_version") or r.get("implementation_version")
                )
                ran.add((r["case"], mode.slug))
                if r.get("outcome") in STILL_FAILING:
                    failing.setdefault(r["case"], set()).add(mode.slug)
    for entry in previous.entries if previous else []:
        for slug in entry.modes or all_modes:
            if (entry.case, slug) not in ran:
                failing.setdefault(entry.case, set()).add(slug)
    version = str(previous.version) if previous and previous.version else None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_expectations(path, adapter, failing, all_modes, previous, version, run_version)
    return path


def write_expectations(
    path: Path,
    adapter: str,
    failing: dict[str, set[str]],
    all_modes: set[str],
    previous: ExpectationFile | None,
    version: str | None = None,
    run_version: str | None = None,
) -> None:
    """Rewrite `path` from a run: `failing` maps case id -> mode slugs that failed.

    Existing reasons (and their groups' release ranges) are kept; new entries get a reason to fill
    in. Entries whose range leaves out the run's release (`run_version`) say nothing about this run
    and are written back as they were.
    """
    reasons: dict[str, str] = {}
    ranges: dict[str, str] = {}
    groups: dict[str, list[Listed]] = {}
    if previous is not None:
        for e in previous.entries:
            reasons.setdefault(e.case, e.reason)
            if e.version is not None:
                ranges.setdefault(e.reason, str(e.version))
            if e.version is not None and run_version is not None and not e.applies(run_version):
                groups.setdefault(e.reason, []).append(_listed(e.case, e.modes, None))
    for case in sorted(failing):
        item = _listed(case, failing[case], all_modes)
        group = groups.setdefault(reasons.get(case, NEEDS_REASON), [])
        if item not in group:
            group.append(item)
    entries = [_group(r, ranges.get(r), cs) for r, cs in sorted(groups.items())]
    data: ExpectationsYAML = (
        {"adapter": adapter, "version": version, "entries": entries}
        if version
        else {"adapter": adapter, "entries": entries}
    )
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, width=100), encoding="utf-8")
    tmp.replace(path)


class ListedCase(TypedDict):
    """A case listed for some modes only."""

    case: str
    modes: list[str]


Listed = str | ListedCase  # a case id alone: every mode


class Group(TypedDict):
    """One entry group of an expectations file: its reason, its release range, its cases."""

    reason: str
    version: NotRequired[str]
    cases: list[Listed]


class ExpectationsYAML(TypedDict):
    """An expectations file as `write_expectations` writes it (keys in this order)."""

    adapter: str
    version: NotRequired[str]
    entries: list[Group]


def _listed(case: str, modes: Set[str] | None, all_modes: Set[str] | None) -> Listed:
    """A case alone when it is listed for every mode, else with the modes no other listed mode covers."""
    if modes is None or (all_modes is not None and modes >= all_modes):
        return case
    parsed = {m: Mode.from_slug(m) for m in modes}
    # a mode another listed mode covers (off-warn+jax_remat3 under off-warn) goes without saying
    kept = [m for m in modes if not any(o != m and covers(parsed[o], parsed[m]) for o in modes)]
    return {"case": case, "modes": sorted(kept)}


def _group(reason: str, version: str | None, cases: list[Listed]) -> Group:
    if version is None:
        return {"reason": reason, "cases": cases}
    return {"reason": reason, "version": version, "cases": cases}
