"""Version gates against the radar: a `when: {version: ...}` placed at a release where nothing changed.

A spec's version gate says a behaviour changes at a release: `">=0.5.3"` moves at 0.5.3,
`"<=0.4.30"` at the release after 0.4.30. Over the releases a radar search covered, each gate of a
case moves at one or more of them; the search says at which releases the case's observation
(dtype, value, error class and opening words) changed, and in which modes. A gate that moves at a
release where the search saw no change of that case, in the modes its block applies in, is
flagged with the releases it did change in: the gate sits where compat happened to run (narrow it
to the release found), or it keys on something the signature does not see (a message's later
words), which the flag's reader judges. Cases the search did not observe (added since), blocks for
modes, flag settings or adapters the search did not run, and gates that move outside the searched
releases are not judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jax_conformance.errors import SpecFileErrors
from jax_conformance.mode import Mode
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files
from jax_conformance.spec.model import version_in
from packaging.specifiers import SpecifierSet


@dataclass(frozen=True)
class GateFlag:
    case: str
    spec_file: str
    line: int  # the expect block's line
    gate: str  # the block's version specifier, as written
    moves_at: str  # the searched release at which the gate starts or stops holding
    changed_in: tuple[str, ...]  # the releases the search found the case changing in

    def describe(self) -> str:
        found = ", ".join(self.changed_in) if self.changed_in else "no release of the search"
        return (
            f"{self.spec_file}:{self.line} {self.case}: gate {self.gate!r} moves at {self.moves_at}, "
            f"where nothing the radar sees changed (changed in: {found})"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "case": self.case,
            "spec_file": self.spec_file,
            "line": self.line,
            "gate": self.gate,
            "moves_at": self.moves_at,
            "changed_in": list(self.changed_in),
        }


def moves(spec: SpecifierSet, releases: Sequence[str]) -> list[str]:
    """The releases at which `spec` starts or stops holding, over `releases` (oldest first)."""
    inside = [version_in(r, spec) for r in releases]
    return [releases[i] for i in range(1, len(releases)) if inside[i] != inside[i - 1]]


def gate_flags(
    paths: Iterable[Path],
    releases: Sequence[str],
    changes: Mapping[str, Mapping[str, Iterable[str]]],
    observed: Iterable[str],
    modes: Sequence[Mode],
    adapter: str = "jax",
    root: Path | None = None,
) -> list[GateFlag]:
    """Every version gate of an observed case, in a block that applies in one of the searched
    `modes`, that moves at a searched release where the case did not change in those modes.
    `changes`: case -> release -> the mode slugs it changed in there; `observed`: the cases the
    search ran."""
    seen = set(observed)
    flags: list[GateFlag] = []
    for path in spec_files(paths):
        if not is_spec_file(path):
            continue
        try:
            spec = load_spec(path)
        except SpecFileErrors:
            continue  # lint's to report
        shown = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        for case in spec.cases:
            if case.id not in seen:
                continue
            history = changes.get(case.id, {})
            for block in case.expect:
                when = block.when
                if when.version is None:
                    continue
                anyver = replace(when, version=None)
                applies = {m.slug for m in modes if anyver.matches(m, "cpu", adapter, "0")}
                if not applies:
                    continue  # a block for another mode, flag setting or adapter: not searched
                changed = {r for r, ms in history.items() if applies & set(ms)}
                for release in moves(when.version, releases):
                    if release not in changed:
                        flags.append(
                            GateFlag(
                                case.id,
                                shown,
                                block.line,
                                str(when.version),
                                release,
                                tuple(sorted(changed, key=releases.index)),
                            )
                        )
    return sorted(set(flags), key=lambda f: (f.spec_file, f.line, f.moves_at))
