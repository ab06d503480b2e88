"""The rules over `when` blocks: which block a mode, backend, adapter and version choose.

WHEN-UNREACHABLE and WHEN-OVERLAP try every expect block at a set of probe points (modes,
backends, adapters, and versions around every boundary the blocks name); VERSION-INVALID
refuses ranges that can never match a release.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator

from jax_conformance.errors import SpecError
from jax_conformance.mode import EXPLICIT_MODES, Mode
from jax_conformance.spec.model import Case, Spec, When
from jax_conformance.spec.rule_base import Rule, raw_block, value_line
from packaging.version import InvalidVersion, Version

# Versions probed when deciding whether `when` blocks can match or overlap: the releases
# of interest plus the boundaries named in the blocks themselves.
PROBE_VERSIONS = (
    "0.4.30",
    "0.4.38",
    "0.5.3",
    "0.6.2",
    "0.7.2",
    "0.8.0",
    "0.9.2",
    "0.10.0",
    "0.10.2",
    "99.0",
)
PROBE_BACKENDS = ("cpu", "gpu", "tpu")
PROBE_ADAPTERS = ("jax", "reference")


def _probe_points(case: Case) -> list[tuple[Mode, str, str, str]]:
    """The (mode, backend, adapter, version) points at which the WHEN rules try the case's blocks.

    A dimension that no block's `when` names cannot change any block's answer, so it is probed
    at one value only: its first, the one the full product would reach first. The rules then
    find exactly what they find over the full product, word for word (WHEN-OVERLAP names the
    first point where two blocks both match, and that point has the first value of every
    dimension no block names); a case whose blocks name only x64 modes is probed at 6 points,
    not at 6 modes x 3 backends x 2 adapters x 10+ versions.
    """
    versions: set[str] | None = None
    adapters: set[str] | None = None
    backends: set[str] | None = None
    flag_values: dict[str, set[object]] = {}
    for block in case.expect:
        w = block.when
        for name, value in w.flags or ():
            flag_values.setdefault(name, {True, False, _ABSENT}).add(value)
        if w.version is not None:
            if versions is None:
                versions = set(PROBE_VERSIONS)
            for s in w.version:
                try:
                    v = Version(s.version.replace(".*", ""))
                except InvalidVersion:
                    continue  # `===text` names no release; VERSION-INVALID reports it
                versions.update({str(v), _bump(v, -1), _bump(v, +1)})
        if w.adapter is not None:
            adapters = (adapters or set(PROBE_ADAPTERS)) | w.adapter
        if w.backend is not None:
            backends = (backends or set(PROBE_BACKENDS)) | w.backend
    return [
        (m, b, a, v)
        for m, b, a, v in itertools.product(
            _modes_with(flag_values),
            sorted(backends) if backends is not None else [_FIRST_BACKEND],
            sorted(adapters) if adapters is not None else [_FIRST_ADAPTER],
            sorted(versions) if versions is not None else [_FIRST_VERSION],
        )
    ]


_MODES = tuple(Mode(x, e) for x in (False, True) for e in EXPLICIT_MODES)
# A flag the implementation does not have (an older or newer release): it matches no value.
_ABSENT = object()


def _modes_with(flag_values: dict[str, set[object]]) -> list[Mode]:
    """The x64 modes, times every value (and the absence) of each flag the blocks name.

    At a probe point a mode's `flags` hold every flag the implementation has, so a flag missing
    from them is one the implementation lacks.
    """
    if not flag_values:
        return list(_MODES)
    names = sorted(flag_values)
    combos = itertools.product(*(sorted(flag_values[n], key=repr) for n in names))
    return [
        Mode(
            m.x64,
            m.explicit_x64_dtypes,
            tuple((n, v) for n, v in zip(names, combo, strict=True) if v is not _ABSENT),  # type: ignore[misc]
        )
        for combo in combos
        for m in _MODES
    ]


# The first value of each dimension in the order the points are probed (sorted as strings).
_FIRST_BACKEND, _FIRST_ADAPTER, _FIRST_VERSION = (
    min(PROBE_BACKENDS),
    min(PROBE_ADAPTERS),
    min(PROBE_VERSIONS),
)


@functools.lru_cache(maxsize=4096)
def _version(text: str) -> Version:
    return Version(text)


def _bump(v: Version, step: int) -> str:
    """The release just above (step=+1) or just below (step=-1) `v`, as a probe version."""
    parts = list(v.release) + [0] * (3 - len(v.release))
    if step > 0:
        parts[-1] += 1
        return ".".join(map(str, parts))
    i = len(parts) - 1
    while i >= 0 and parts[i] == 0:
        parts[i] = 99
        i -= 1
    if i < 0:
        return "0"
    parts[i] -= 1
    return ".".join(map(str, parts))


MatchTable = tuple[list[tuple[Mode, str, str, str]], list[list[bool]]]
# (the probe-point function, the case's `when`s) -> its match table. A table's cells share a few
# `when` tuples: the promotion tables' 6,000 cells have tens, so each is probed once per process,
# not twice per cell (that was 30 of the 45 s a load of specs/promotion/functions.yaml took).
# The function is in the key so that a test switching the fast probe points off is never served
# a table the fast ones made.
_TABLES: dict[tuple[object, tuple[When, ...]], MatchTable] = {}


def _match_table(case: Case) -> MatchTable:
    """The probe points, and for each expect block whether its `when` holds at each point.

    Same answer as `When.matches`, computed per dimension with each version parsed once:
    the rules probe thousands of points per case and the loader runs them on every load.
    The answer depends on the blocks' `when`s alone, and is kept per `when` tuple.
    """
    key = (_probe_points, tuple(block.when for block in case.expect))
    found = _TABLES.get(key)
    if found is None:
        if len(_TABLES) >= 4096:
            _TABLES.clear()
        found = _TABLES[key] = _compute_match_table(case)
    return found


def _compute_match_table(case: Case) -> MatchTable:
    points = _probe_points(case)
    parsed = {v: _version(v) for v in {p[3] for p in points}}
    table = []
    for block in case.expect:
        w = block.when
        versions = {
            v: w.version is None or w.version.contains(pv, prereleases=True)
            for v, pv in parsed.items()
        }
        table.append(
            [
                (w.x64 is None or w.x64 == mode.x64)
                and (
                    w.explicit_x64_dtypes is None
                    or mode.explicit_x64_dtypes in w.explicit_x64_dtypes
                )
                and (w.backend is None or backend in w.backend)
                and (w.adapter is None or adapter in w.adapter)
                and versions[version]
                and (
                    w.flags is None or w.matches(mode, backend, adapter, version, dict(mode.flags))
                )
                for mode, backend, adapter, version in points
            ]
        )
    return points, table


class WhenUnreachable(Rule):
    id = "WHEN-UNREACHABLE"
    doc = "Every expect block can be chosen for some mode, backend, adapter and version (first match wins)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        points, table = _match_table(case)
        taken = [False] * len(points)
        for block, matches in zip(case.expect, table, strict=True):
            chosen = False
            for i, hit in enumerate(matches):
                if hit and not taken[i]:
                    chosen = taken[i] = True
            if not chosen:
                yield self.error(
                    spec,
                    block.line,
                    f"in case {case.id!r}: expect block (when {block.when.describe()}) can never be "
                    "chosen; an earlier block covers it or its conditions contradict",
                )


class WhenOverlap(Rule):
    id = "WHEN-OVERLAP"
    doc = (
        "Two outcome blocks do not both match one mode: which one applies must not depend on their order "
        "(not_applicable blocks may carve out, and so may a block naming flags out of a later "
        "block naming fewer of them)."
    )

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        points, table = _match_table(case)
        blocks = [
            (b, m) for b, m in zip(case.expect, table, strict=True) if b.not_applicable is None
        ]
        for (a, a_hits), (b, b_hits) in itertools.combinations(blocks, 2):
            if set(b.when.flags or ()) < set(a.when.flags or ()):
                continue  # the flags' behaviour, then the behaviour without (some of) them: first match wins

            for (mode, backend, adapter, version), x, y in zip(points, a_hits, b_hits, strict=True):
                if x and y:
                    yield self.error(
                        spec,
                        b.line,
                        f"in case {case.id!r}: this block and the one on line {a.line} both match "
                        f"{mode.label}, backend={backend}, adapter={adapter}, version {version}; "
                        "make their `when` disjoint",
                    )
                    break


class VersionRange(Rule):
    id = "VERSION-INVALID"
    doc = "`when.version` is a PEP 440 specifier set over release numbers (the loader rejects what does not parse)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for index, block in enumerate(case.expect):
            for s in block.when.version or ():
                line = value_line(raw_block(case, index).get("when"), "version", block.line)
                if s.operator == "===":
                    yield self.error(
                        spec,
                        line,
                        f"in case {case.id!r}: {str(s)!r} compares version strings verbatim "
                        "and never matches a release like 0.10.2; use == or a range",
                    )
                elif Version(s.version.replace(".*", "")).local:
                    yield self.error(
                        spec,
                        line,
                        f"in case {case.id!r}: {str(s)!r} names a local version; "
                        "ranges compare releases only",
                    )
