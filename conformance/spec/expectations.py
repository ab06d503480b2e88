"""Known divergences: per-adapter files of case ids (and modes) expected to fail, each with a reason.

A listed case becomes `xfailed` when it fails and `xpassed` (an unexpected outcome) when it
passes, so a backend team can ratchet. Format (YAML):

    adapter: jax                 # required
    version: ">=0.4.30,<0.8"     # optional PEP 440 range over the behaviour version
    backend: gpu                 # optional
    entries:
      - reason: jax_explicit_x64_dtypes does not exist before 0.8.0
        cases:
          - x64.explicit.error-mode-raises           # every mode
          - {case: x64.explicit.allow-mode, modes: [off-allow]}
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from jax_conformance.errors import ExpectationsError, ModeError
from jax_conformance.mode import Mode
from jax_conformance.spec.model import version_in
from packaging.specifiers import InvalidSpecifier, SpecifierSet

NEEDS_REASON = "TODO: say why this case diverges"


@dataclass
class Entry:
    case: str
    reason: str
    modes: frozenset[str] | None = None  # mode slugs (off-warn, on-warn, ...); None = all
    backends: frozenset[str] | None = None
    used: bool = False
    path: Path | None = None  # the expectations file that lists it
    version: SpecifierSet | None = None  # the releases the divergence is known in (its group's `version`)

    def matches(self, case: str, mode: Mode, backend: str) -> bool:
        return (self.case == case and (self.modes is None or mode.slug in self.modes)
                and (self.backends is None or backend in self.backends))

    def applies(self, version: str) -> bool:
        return self.version is None or version_in(version, self.version)


def _mode_name(path: Path, name: Any) -> str:
    """A mode as named today (`on-warn`, the old name of `on`, still matches), or a usage error naming it."""
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
            raise ExpectationsError(f"{path}: an expectations file is a mapping with `adapter` and `entries`")
        version = SpecifierSet(str(data["version"])) if data.get("version") else None
        backend = data.get("backend")
        out = cls(path, str(data["adapter"]), version, frozenset([backend] if isinstance(backend, str) else backend) if backend else None)
        for group in data.get("entries", []) or []:
            reason = str(group.get("reason") or NEEDS_REASON)
            try:
                releases = SpecifierSet(str(group["version"])) if group.get("version") else None
            except InvalidSpecifier:
                raise ExpectationsError(f"{path}: version {group['version']!r} is not a PEP 440 range (e.g. \"<0.11\")") from None
            for item in group.get("cases", []) or []:
                if isinstance(item, str):
                    out.entries.append(Entry(item, reason, path=path, version=releases))
                else:
                    modes = [_mode_name(path, m) for m in item.get("modes") or []]
                    backends = item.get("backends")
                    out.entries.append(Entry(str(item["case"]), reason,
                                             frozenset(modes) if modes else None,
                                             frozenset(backends) if backends else None, path=path, version=releases))
        return out

    @classmethod
    def load_many(cls, paths: list[str]) -> ExpectationSet:
        return ExpectationSet([cls.load(p) for p in paths])

    def applies(self, adapter: str, version: str, backend: str | None = None) -> bool:
        return (self.adapter == adapter and (self.version is None or version_in(version, self.version))
                and (backend is None or self.backend is None or backend in self.backend))


@dataclass
class ExpectationSet:
    files: list[ExpectationFile]

    def find(self, case: str, mode: Mode, backend: str, adapter: str, version: str) -> Entry | None:
        for f in self.files:
            if f.applies(adapter, version, backend):
                for entry in f.entries:
                    if entry.matches(case, mode, backend) and entry.applies(version):
                        entry.used = True
                        return entry
        return None

    def mark(self, item: pytest.Item, case: str, mode: Mode, backend: str, adapter: str, version: str) -> None:
        entry = self.find(case, mode, backend, adapter, version)
        if entry is not None:
            # Strict: a listed case that conforms fails the run (the plugin records it as xpassed).
            item.add_marker(pytest.mark.xfail(reason=entry.reason, strict=True, raises=Exception))
            item.known_divergence = entry  # type: ignore[attr-defined]

    def unused(self, mode: Mode, adapter: str | None, version: str) -> Iterator[tuple[Path, str]]:
        for f in self.files:
            if adapter is None or not f.applies(adapter, version):
                continue
            for entry in f.entries:
                if not entry.used and entry.applies(version) and (entry.modes is None or mode.slug in entry.modes):
                    yield f.path, entry.case


def write_expectations(path: Path, adapter: str, failing: dict[str, set[str]], all_modes: set[str],
                       previous: ExpectationFile | None, version: str | None = None, run_version: str | None = None) -> None:
    """Rewrite `path` from a run: `failing` maps case id -> mode slugs that failed.

    Existing reasons (and their groups' release ranges) are kept; new entries get a reason to fill
    in. Entries whose range leaves out the run's release (`run_version`) say nothing about this run
    and are written back as they were.
    """
    reasons: dict[str, str] = {}
    ranges: dict[str, str] = {}
    groups: dict[str, list[Any]] = {}
    if previous is not None:
        for e in previous.entries:
            reasons.setdefault(e.case, e.reason)
            if e.version is not None:
                ranges.setdefault(e.reason, str(e.version))
            if e.version is not None and run_version is not None and not e.applies(run_version):
                item: Any = e.case if e.modes is None else {"case": e.case, "modes": sorted(e.modes)}
                groups.setdefault(e.reason, []).append(item)
    for case in sorted(failing):
        modes = failing[case]
        item = case if modes >= all_modes else {"case": case, "modes": sorted(modes)}
        group = groups.setdefault(reasons.get(case, NEEDS_REASON), [])
        if item not in group:
            group.append(item)
    data: dict[str, Any] = {"adapter": adapter}
    if version:
        data["version"] = version
    data["entries"] = [{"reason": r, **({"version": ranges[r]} if r in ranges else {}), "cases": cs}
                       for r, cs in sorted(groups.items())]
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, width=100), encoding="utf-8")
    tmp.replace(path)
