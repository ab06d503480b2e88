"""Releases: their order (`version_key`) and the behaviour × release model: per case and release,
does the behaviour hold, and what changed between releases.

The one releases module: compat, the radar, `upgrade`, `run` and the report order releases here.
The one model behind `jax-conformance compat` (its terminal table, changes and summary,
`jax_conformance.compat.table`) and the report's behaviour × release section
(`jax_conformance.report.model`). Built from result runs; a release's status of a case is over
every mode and backend it ran in: holds, fails, partly (fails in some), or not applicable.
A case also changes where the expect block that applies (a `when: {version: ...}` range) or
what the implementation did (the exception type, the result dtype) differs between releases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypedDict

from jax_conformance.mode import mode_key, mode_slug
from jax_conformance.records import ResultRecord, Run
from packaging.version import InvalidVersion, Version

# Outcomes where the behaviour was seen to hold: xpassed means a listed divergence did not happen.
HOLDING = frozenset({"passed", "xpassed"})
# Outcomes that say nothing about the behaviour: left out of statuses and the compliance percentage.
INAPPLICABLE = frozenset({"not_applicable", "skipped"})

# A case's status in one release (the values of `CaseRow.cells`).
HOLDS, FAILS, PARTLY, NOT_APPLICABLE = "holds", "fails", "partly", "n/a"
MISSING, UNAVAILABLE = "missing", "unavailable"  # no record of it; the release could not run at all
KNOWN = (HOLDS, FAILS, PARTLY, NOT_APPLICABLE)
STATUSES = (*KNOWN, MISSING, UNAVAILABLE)

# A run header's `status` when its release could not run at all (compat: not installable, or pytest wrote nothing).
NOT_RUN = frozenset({"unavailable", "error"})


def version_key(text: str) -> tuple[int, Version | str]:
    """Sort releases by PEP 440 order; names that are not versions go last, alphabetically."""
    try:
        return (0, Version(text))
    except (InvalidVersion, TypeError):
        return (1, str(text))


def status_over_modes(outcomes: Iterable[str]) -> str:
    """Holds in every applicable mode, fails in every one, partly (some of each), n/a, or missing (no outcome)."""
    seen = applicable = holding = 0
    for o in (
        outcomes
    ):  # counted in one pass: the report calls this for every case and release of a merge
        seen += 1
        if o not in INAPPLICABLE:
            applicable += 1
            holding += o in HOLDING
    if not seen:
        return MISSING
    if not applicable:
        return NOT_APPLICABLE
    return HOLDS if holding == applicable else FAILS if holding == 0 else PARTLY


def outcome(record: ResultRecord) -> str:
    return str(record.get("outcome", "error"))


def first_line(text: str | None) -> str:
    """The message's first line; for a Hypothesis case, the failure with its example after it."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].startswith("falsifying example"):
        return f"{lines[1][:240]} ({lines[0][:80]})"
    return lines[0][:300] if lines else ""


def explain(per_mode: dict[str, tuple[str, str]]) -> str:
    """`off-warn, off-error failed: <first line>`: the modes where it did not hold, and why (failures first)."""
    bad = {m: v for m, v in per_mode.items() if v[0] not in INAPPLICABLE}
    chosen = bad or per_mode
    modes = sorted(chosen, key=mode_key)
    kind, line = chosen[modes[0]]
    return f"{', '.join(modes)} {kind.replace('_', ' ')}: {line}"


def observed_key(actual: object) -> str:
    """What a case did, in a word: `raised <type>`, `dtype <name>` or `Python float 1.0` (empty when
    the record does not say)."""
    if not isinstance(actual, dict):
        return ""
    raised = actual.get("raised")
    if isinstance(raised, dict) and raised.get("type"):
        # The message's opening words (up to the first quote, bracket, digit or colon): another
        # wording of the same exception type is a change; a different value inside it is not.
        words = re.split(
            r"""['"<(\[{0-9:]""", str(raised.get("message", "")).strip().split("\n")[0], maxsplit=1
        )[0]
        words = " ".join(words.split()[:8]).rstrip(" .,;")
        return f"raised {raised['type']}" + (f" ({words}...)" if words else "")
    if isinstance(actual.get("dtype"), str):
        value = actual.get("value")
        # A scalar's value too (x64: the same dtype holding another value is a change).
        if actual.get("shape") == [] and isinstance(value, (int, float, bool)):
            return f"dtype {actual['dtype']} = {value!r}"
        return f"dtype {actual['dtype']}"
    if actual.get("type") in ("int", "float", "complex", "bool") and "value" in actual:
        return f"Python {actual['type']} {actual['value']!r}"  # not an array: a change from or to one shows
    return ""


def observed_text(record: Mapping[str, object]) -> str:
    """What a case did, in full: its outcome, then an error's type and the whole first line of its
    message (where `observed_key` keeps the opening words, to compare), else `observed_key`."""
    outcome = str(record.get("outcome") or "")
    actual = record.get("actual")
    raised = actual.get("raised") if isinstance(actual, dict) else None
    if isinstance(raised, dict) and raised.get("type"):
        lines = str(raised.get("message") or "").strip().splitlines()
        what = f"raised {raised['type']}" + (f": {lines[0].strip()}" if lines else "")
    else:
        what = observed_key(actual)
    outcome = {"xfailed": "failed", "xpassed": "passed"}.get(outcome, outcome)
    return f"{outcome}: {what}" if what else outcome


# One change between consecutive releases: in `modes`, each value went from `from` to `to` (an
# expect block's line, or what the implementation did in a word). `from` is a keyword, hence the form.
Change = TypedDict(
    "Change",
    {
        "release": str,
        "previous": str,
        "modes": list[str],
        "from": list[int | str | None],
        "to": list[int | str | None],
    },
)


def _changes(
    per_release: Mapping[str, Mapping[str, int | str | None]],
    seen: list[str],
    skip: dict[str, set[str]] | None = None,
) -> list[Change]:
    """Between consecutive releases in `seen`: the modes whose value differs, from what to what."""
    out = []
    for prev, cur in zip(seen, seen[1:], strict=False):
        before, after = per_release[prev], per_release[cur]
        same = (skip or {}).get(cur, set())
        modes = sorted(
            (m for m in set(before) & set(after) if before[m] != after[m] and m not in same),
            key=mode_key,
        )
        if modes:
            out.append(
                Change(
                    {
                        "release": cur,
                        "previous": prev,
                        "modes": modes,
                        "from": [before[m] for m in modes],
                        "to": [after[m] for m in modes],
                    }
                )
            )
    return out


@dataclass
class CaseRow:
    """One case across releases: its status in each, and (worked out when asked) what changed."""

    case: str
    topic: str
    claim: str
    spec_file: str = ""
    cells: dict[str, str] = field(default_factory=dict)  # version -> status
    # version -> mode slug -> the case's records there (every backend), as read
    records: dict[str, dict[str, list[ResultRecord]]] = field(default_factory=dict, repr=False)

    @cached_property
    def modes(self) -> dict[str, dict[str, str]]:
        """version -> mode slug -> its status there."""
        return {
            v: {m: status_over_modes(map(outcome, recs)) for m, recs in sorted(per_mode.items())}
            for v, per_mode in self.records.items()
        }

    @cached_property
    def messages(self) -> dict[str, str]:
        """version -> the modes where it did not hold and the first line of why (where there are any)."""
        out = {}
        for version, per_mode in self.records.items():
            first_bad = {
                m: next(
                    (
                        (outcome(r), first_line(r.get("message")))
                        for r in recs
                        if outcome(r) not in HOLDING
                    ),
                    None,
                )
                for m, recs in per_mode.items()
            }
            bad = {m: why for m, why in first_bad.items() if why is not None}
            if bad:
                out[version] = explain(bad)
        return out

    @cached_property
    def blocks(self) -> dict[str, dict[str, int | None]]:
        """version -> mode slug -> the line of the expect block that applied (None: none did)."""
        return {
            v: {
                m: (line if isinstance(line := recs[-1].get("expect_line"), int) else None)
                for m, recs in per_mode.items()
            }
            for v, per_mode in self.records.items()
        }

    @cached_property
    def observed(self) -> dict[str, dict[str, str]]:
        """version -> mode slug -> what it did, in short (`observed_key`), where the records say."""
        out: dict[str, dict[str, str]] = {}
        for version, per_mode in self.records.items():
            out[version] = {}
            for mode, recs in per_mode.items():
                keys = [k for k in map(observed_key, (r.get("actual") for r in recs)) if k]
                if keys:
                    out[version][mode] = keys[-1]
        return out

    def known(self, order: Sequence[str]) -> list[tuple[str, str]]:
        return [(v, self.cells[v]) for v in order if self.cells.get(v) in KNOWN]

    def status_differs(self, order: Sequence[str]) -> bool:
        return len({s for _, s in self.known(order)}) > 1

    def differs(self, order: Sequence[str]) -> bool:
        """The verdict changes between releases, or the spec expects something else from some release on."""
        return (
            self.status_differs(order)
            or bool(self.spec_changes(order))
            or bool(self.observed_changes(order))
        )

    def spec_changes(self, order: Sequence[str]) -> list[Change]:
        """Releases from which another expect block applies (a `version:` range in the spec), per mode."""
        seen = [v for v, _ in self.known(order) if v in self.blocks]
        # a range boundary in the spec where the implementation was seen doing the same thing is no change
        same = {
            cur: {
                m
                for m, what in self.observed.get(prev, {}).items()
                if what and self.observed.get(cur, {}).get(m) == what
            }
            for prev, cur in zip(seen, seen[1:], strict=False)
        }
        return _changes(self.blocks, seen, same)

    def observed_changes(self, order: Sequence[str]) -> list[Change]:
        """Releases where the implementation did something else (another exception type or result dtype).

        A spec that accepts either behaviour over a range of releases still shows here where it changed.
        """
        return _changes(self.observed, [v for v, _ in self.known(order) if self.observed.get(v)])

    def changed_in(self, order: Sequence[str]) -> list[str]:
        """Every release whose verdict, expect block or observed behaviour differs from the release before it."""
        known = self.known(order)
        at = {c["release"] for c in self.spec_changes(order) + self.observed_changes(order)}
        at |= {cur for (_, a), (cur, b) in zip(known, known[1:], strict=False) if a != b}
        return [v for v in order if v in at]

    def first(self, status: str, order: Sequence[str]) -> str | None:
        return next((v for v, s in self.known(order) if s == status), None)

    def last(self, status: str, order: Sequence[str]) -> str | None:
        return next((v for v, s in reversed(self.known(order)) if s == status), None)

    def first_failing(self, order: Sequence[str]) -> str | None:
        """The first release where it fails in some applicable mode."""
        return next((v for v, s in self.known(order) if s in (FAILS, PARTLY)), None)

    def last_failing(self, order: Sequence[str]) -> str | None:
        return next((v for v, s in reversed(self.known(order)) if s in (FAILS, PARTLY)), None)

    def fails_since(self, order: Sequence[str]) -> str | None:
        """The release from which it fails (in some mode) in every later release tested (None if the newest holds)."""
        return self._since(order, (FAILS, PARTLY))

    def holds_since(self, order: Sequence[str]) -> str | None:
        """The release from which it holds in every later release tested (None if the newest fails)."""
        return self._since(order, (HOLDS,))

    def _since(self, order: Sequence[str], statuses: tuple[str, ...]) -> str | None:
        since = None
        for v, s in reversed(self.known(order)):
            if s not in statuses:
                break
            since = v
        return since


@dataclass
class ReleaseTable:
    """Behaviour × release for one adapter: a row per case, a status per release (like caniuse)."""

    adapter: str
    versions: list[str]  # oldest first
    rows: list[CaseRow]
    unavailable: dict[str, str]  # version -> reason (no mode of it ran)
    problems: dict[str, list[str]]  # version -> reasons some mode did not run or finish

    def timeline(self) -> list[tuple[str, list[tuple[CaseRow, str]]]]:
        """Per release, oldest first: the cases whose observed behaviour or verdict changed there, each
        with what changed (`modes: before -> after`). With the radar's bisected runs merged, each change
        sits at the first release that shows it; otherwise at the first run release after it."""
        order = self.versions
        at: dict[str, list[tuple[CaseRow, str]]] = {}
        for row in self.rows:
            seen: set[str] = set()
            for change in row.observed_changes(order):
                pairs = dict.fromkeys(zip(change["from"], change["to"], strict=True))
                at.setdefault(change["release"], []).append(
                    (
                        row,
                        f"{', '.join(change['modes'])}: "
                        + "; ".join(f"{old} \u2192 {new}" for old, new in pairs),
                    )
                )
                seen.add(change["release"])
            known = row.known(order)
            for (prev, a), (cur, b) in zip(known, known[1:], strict=False):
                if a != b and cur not in seen:
                    at.setdefault(cur, []).append((row, f"{a} \u2192 {b} (after {prev})"))
        return [
            (v, sorted(at[v], key=lambda item: (item[0].topic, item[0].case)))
            for v in order
            if v in at
        ]


def _end_reason(run: Run) -> str:
    return str(run.end.get("reason") or "") if run.end is not None else ""


def build_table(
    runs: Sequence[Run],
    versions: Sequence[str] | None = None,
    adapter: str = "jax",
    sort: bool = True,
) -> ReleaseTable:
    """One adapter's runs as behaviour × release; `versions` adds releases with no run.

    With `sort`, rows whose verdict, expect block or observed behaviour changes come first, then by
    topic and case; without it they stay in the order first seen, for the caller to order.
    """
    by_version: dict[str, list[Run]] = {}
    for run in runs:
        if str(run.header.get("adapter") or "?") == adapter:
            by_version.setdefault(str(run.header.get("implementation_version") or "?"), []).append(
                run
            )
    order = sorted(set(versions or []) | set(by_version), key=version_key)
    unavailable: dict[str, str] = {}
    problems: dict[str, list[str]] = {}
    rows: dict[str, CaseRow] = {}
    for version in order:
        vruns = by_version.get(version, [])
        ran = [r for r in vruns if r.header.get("status") not in NOT_RUN]
        reasons = [str(r.header.get("reason") or _end_reason(r)) for r in vruns if r not in ran]
        reasons += [_end_reason(r) or "interrupted" for r in ran if r.interrupted]
        if not ran:
            unavailable[version] = next((x for x in reasons if x), "no results for this release")
        elif reasons:
            problems[version] = sorted(set(reasons))
        for run in ran:
            slug = mode_slug(run.header.get("mode", {}))
            for rec in run.cases:
                case_id = rec.get("case")
                if case_id is None:
                    continue
                case = str(case_id)
                row = rows.get(case)
                if row is None:
                    row = rows[case] = CaseRow(
                        case,
                        str(rec.get("topic") or case.rsplit(".", 1)[0]),
                        str(rec.get("claim") or ""),
                        str(rec.get("spec_file") or ""),
                    )
                row.records.setdefault(version, {}).setdefault(slug, []).append(rec)
    for row in rows.values():
        for version in order:
            per_mode = row.records.get(version)
            row.cells[version] = (
                UNAVAILABLE
                if version in unavailable
                else MISSING
                if not per_mode
                else status_over_modes(
                    str(r.get("outcome", "error")) for recs in per_mode.values() for r in recs
                )
            )
    table = ReleaseTable(adapter, order, list(rows.values()), unavailable, problems)
    if sort:
        table.rows.sort(key=lambda r: (not r.differs(order), r.topic, r.case))
    return table


def parse_versions(text: str) -> list[str]:
    """`0.4.30,0.6.2 0.8.0` -> sorted, de-duplicated release strings; a bad one is an error."""
    out: dict[Version, str] = {}
    for raw in text.replace(",", " ").split():
        try:
            v = Version(raw)
        except InvalidVersion:
            raise ValueError(f"{raw!r} is not a release number (e.g. 0.4.30)") from None
        out.setdefault(v, raw)
    if not out:
        raise ValueError("no release given (e.g. --versions 0.4.30,0.10.2)")
    return [out[v] for v in sorted(out)]
