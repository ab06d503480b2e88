"""The behaviour × release table of `jax-conformance compat`, built from merged result records.

Per case and release: holds, fails, partly (fails in some modes) or not applicable, the same
verdicts as the report's table. A case also changes where the spec itself says the behaviour
changed: the expect block that applies (a `when: {version: ...}` range) differs between two
releases. Rows that change come first; each change carries a one-line reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jax_conformance import SPECS_DIR
from jax_conformance.errors import ModeError
from jax_conformance.mode import DEFAULT_MODES, Mode
from jax_conformance.results import Run, now
from jax_conformance.spec.loader import load_spec
from packaging.version import InvalidVersion, Version

REPO_ROOT = SPECS_DIR.parent  # spec_file in records is relative to it

# xpassed means a listed divergence did not happen, so the behaviour was seen to hold.
HOLDING = frozenset({"passed", "xpassed"})
SKIPPED = frozenset({"not_applicable", "skipped"})
HOLDS, FAILS, PARTLY, NOT_APPLICABLE = "holds", "fails", "partly", "n/a"
MISSING, UNAVAILABLE = "missing", "unavailable"
CELL = {HOLDS: "ok", FAILS: "FAIL", PARTLY: "part", NOT_APPLICABLE: "n/a", MISSING: "?", UNAVAILABLE: "--"}


# ---------------------------------------------------------------- the behaviour × release table


@dataclass
class CaseRow:
    """One case across releases: its status in each, and what changed."""

    case: str
    topic: str
    claim: str
    cells: dict[str, str] = field(default_factory=dict)  # version -> status
    modes: dict[str, dict[str, str]] = field(default_factory=dict)  # version -> mode slug -> outcome
    messages: dict[str, str] = field(default_factory=dict)  # version -> first line of a failure (or n/a) message
    blocks: dict[str, dict[str, int | None]] = field(default_factory=dict)  # version -> mode -> expect block line
    observed: dict[str, dict[str, str]] = field(default_factory=dict)  # version -> mode -> what it did, in short
    spec_file: str = ""

    def known(self, order: Sequence[str]) -> list[tuple[str, str]]:
        return [(v, self.cells[v]) for v in order if self.cells.get(v) in (HOLDS, FAILS, PARTLY, NOT_APPLICABLE)]

    def status_differs(self, order: Sequence[str]) -> bool:
        return len({s for _, s in self.known(order)}) > 1

    def differs(self, order: Sequence[str]) -> bool:
        """The verdict changes between releases, or the spec expects something else from some release on."""
        return self.status_differs(order) or bool(self.spec_changes(order)) or bool(self.observed_changes(order))

    def spec_changes(self, order: Sequence[str]) -> list[dict[str, Any]]:
        """Releases from which another expect block applies (a `version:` range in the spec), per mode."""
        out = []
        seen = [v for v, _ in self.known(order) if v in self.blocks]
        for prev, cur in zip(seen, seen[1:], strict=False):
            before, after = self.blocks[prev], self.blocks[cur]
            # a range boundary in the spec where the implementation was seen doing the same thing is no change
            same = {m for m, what in self.observed.get(prev, {}).items() if what and self.observed.get(cur, {}).get(m) == what}
            modes = sorted((m for m in set(before) & set(after) if before[m] != after[m] and m not in same),
                           key=lambda m: (_MODE_ORDER.get(m, 99), m))
            if modes:
                out.append({"release": cur, "previous": prev, "modes": modes,
                            "from": [before[m] for m in modes], "to": [after[m] for m in modes]})
        return out

    def observed_changes(self, order: Sequence[str]) -> list[dict[str, Any]]:
        """Releases where the implementation did something else (another exception type or result dtype).

        A spec that accepts either behaviour over a range of releases still shows here where it changed.
        """
        out = []
        seen = [v for v, _ in self.known(order) if self.observed.get(v)]
        for prev, cur in zip(seen, seen[1:], strict=False):
            before, after = self.observed[prev], self.observed[cur]
            modes = sorted((m for m in set(before) & set(after) if before[m] != after[m]),
                           key=lambda m: (_MODE_ORDER.get(m, 99), m))
            if modes:
                out.append({"release": cur, "previous": prev, "modes": modes,
                            "from": [before[m] for m in modes], "to": [after[m] for m in modes]})
        return out

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
        since = None
        for v, s in reversed(self.known(order)):
            if s not in (FAILS, PARTLY):
                break
            since = v
        return since

    def holds_since(self, order: Sequence[str]) -> str | None:
        """The release from which it holds in every later release tested (None if the newest fails)."""
        since = None
        for v, s in reversed(self.known(order)):
            if s != HOLDS:
                break
            since = v
        return since


@dataclass
class CompatTable:
    versions: list[str]
    rows: list[CaseRow]
    unavailable: dict[str, str]  # version -> reason (no mode of it ran)
    problems: dict[str, list[str]]  # version -> reasons some mode did not run or finish


def _status(outcomes: Iterable[str]) -> str:
    """Holds in every applicable mode, fails in every one, partly (some of each), or n/a."""
    applicable = [o for o in outcomes if o not in SKIPPED]
    if not applicable:
        return NOT_APPLICABLE
    holding = sum(o in HOLDING for o in applicable)
    return HOLDS if holding == len(applicable) else FAILS if holding == 0 else PARTLY


def _first_line(text: str | None) -> str:
    """The message's first line; for a Hypothesis case, the failure with its example after it."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].startswith("falsifying example"):
        return f"{lines[1][:240]} ({lines[0][:80]})"
    return lines[0][:300] if lines else ""


def _slug(mode: dict[str, Any]) -> str:
    try:
        return Mode.from_json(mode).slug
    except (ModeError, KeyError, TypeError):
        return "?"


def build_table(runs: Sequence[Run], versions: Sequence[str] | None = None) -> CompatTable:
    """Per case and release: holds (passed in some mode, failed in none), fails, or not applicable."""
    by_version: dict[str, list[Run]] = {}
    for run in runs:
        if run.header.get("adapter", "jax") != "jax":
            continue
        by_version.setdefault(str(run.header.get("implementation_version")), []).append(run)
    order = sorted(set(versions or []) | set(by_version), key=_version_key)
    unavailable: dict[str, str] = {}
    problems: dict[str, list[str]] = {}
    outcomes: dict[tuple[str, str], dict[str, list[str]]] = {}
    # (case, version) -> mode slug -> (outcome, first line of its message)
    messages: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    meta: dict[str, tuple[str, str]] = {}
    blocks: dict[tuple[str, str], dict[str, int | None]] = {}
    observed: dict[tuple[str, str], dict[str, str]] = {}
    files: dict[str, str] = {}
    for version in order:
        vruns = by_version.get(version, [])
        ran = [r for r in vruns if r.header.get("status") not in ("unavailable", "error")]
        reasons = [str(r.header.get("reason") or (r.end or {}).get("reason") or "") for r in vruns if r not in ran]
        reasons += [str((r.end or {}).get("reason") or "interrupted") for r in ran if r.interrupted]
        if not ran:
            unavailable[version] = next((x for x in reasons if x), "no results for this release")
        elif reasons:
            problems[version] = sorted(set(reasons))
        for run in ran:
            slug = _slug(run.header.get("mode", {}))
            for rec in run.cases:
                if rec.get("record", "case") != "case" or rec.get("case") is None:
                    continue  # e.g. the `collected` progress record
                case = str(rec.get("case"))
                meta.setdefault(case, (str(rec.get("topic") or case.rsplit(".", 1)[0]), str(rec.get("claim") or "")))
                outcome = str(rec.get("outcome", "error"))
                outcomes.setdefault((case, version), {}).setdefault(slug, []).append(outcome)
                line = rec.get("expect_line")
                blocks.setdefault((case, version), {})[slug] = int(line) if isinstance(line, int) else None
                files.setdefault(case, str(rec.get("spec_file") or ""))
                what = observed_key(rec.get("actual"))
                if what:
                    observed.setdefault((case, version), {})[slug] = what
                if outcome not in HOLDING:
                    messages.setdefault((case, version), {}).setdefault(slug, (outcome, _first_line(rec.get("message"))))
    rows = []
    for case, (topic, claim) in meta.items():
        row = CaseRow(case, topic, claim, spec_file=files.get(case, ""))
        for version in order:
            per_mode = outcomes.get((case, version))
            if version in unavailable:
                row.cells[version] = UNAVAILABLE
            elif not per_mode:
                row.cells[version] = MISSING
            else:
                row.cells[version] = _status(o for os_ in per_mode.values() for o in os_)
                row.modes[version] = {m: _status(os_) for m, os_ in sorted(per_mode.items())}
                row.blocks[version] = blocks.get((case, version), {})
                row.observed[version] = observed.get((case, version), {})
                if (case, version) in messages:
                    row.messages[version] = _explain(messages[(case, version)])
        rows.append(row)
    rows.sort(key=lambda r: (not r.differs(order), r.topic, r.case))
    return CompatTable(order, rows, unavailable, problems)


_MODE_ORDER = {m.slug: i for i, m in enumerate(DEFAULT_MODES)}


def observed_key(actual: Any) -> str:
    """What a case did, in a word: `raised <type>` or `dtype <name>` (empty when the record does not say)."""
    if not isinstance(actual, dict):
        return ""
    raised = actual.get("raised")
    if isinstance(raised, dict) and raised.get("type"):
        # The message's opening words (up to the first quote, bracket, digit or colon): another
        # wording of the same exception type is a change; a different value inside it is not.
        words = re.split(r"""['"<(\[{0-9:]""", str(raised.get("message", "")).strip().split("\n")[0], maxsplit=1)[0]
        words = " ".join(words.split()[:8]).rstrip(" .,;")
        return f"raised {raised['type']}" + (f" ({words}...)" if words else "")
    if isinstance(actual.get("dtype"), str):
        value = actual.get("value")
        # A scalar's value too (x64: the same dtype holding another value is a change).
        if actual.get("shape") == [] and isinstance(value, (int, float, bool)):
            return f"dtype {actual['dtype']} = {value!r}"
        return f"dtype {actual['dtype']}"
    return ""


def observed_change_text(change: dict[str, Any]) -> str:
    pairs = dict.fromkeys(zip(change["from"], change["to"], strict=True))
    return f"from {change['release']}, {', '.join(change['modes'])}: " + "; ".join(f"{new} (was {old})" for old, new in pairs)


def _explain(per_mode: dict[str, tuple[str, str]]) -> str:
    """`off-warn, off-error failed: <first line>`: the modes where it did not hold, and why (failures first)."""
    bad = {m: v for m, v in per_mode.items() if v[0] not in SKIPPED}
    chosen = bad or per_mode
    modes = sorted(chosen, key=lambda m: (_MODE_ORDER.get(m, 99), m))
    outcome, line = chosen[modes[0]]
    return f"{', '.join(modes)} {outcome.replace('_', ' ')}: {line}"


def _version_key(v: str) -> tuple[int, Any]:
    try:
        return (0, Version(v))
    except InvalidVersion:
        return (1, v)


@functools.lru_cache(maxsize=64)
def _block_conditions(spec_file: str) -> dict[int, str]:
    """Expect block line -> its `when`, described (and its note), read from the spec file the run used."""
    path = Path(spec_file)
    path = path if path.is_absolute() else REPO_ROOT / path
    try:
        spec = load_spec(path, rules=False)
    except Exception:  # noqa: BLE001 - a spec edited or gone since the run: fall back to line numbers
        return {}
    out = {}
    for case in spec.cases:
        for block in case.expect:
            note = block.outcome.get("note")
            out[block.line] = block.when.describe() + (f" ({note})" if note else "")
    return out


def describe_block(spec_file: str, line: int | None) -> str:
    if line is None:
        return "no expect block (not applicable)"
    when = _block_conditions(spec_file).get(line) if spec_file else None
    return f"line {line}: when {when}" if when else f"line {line}"


def spec_change_text(row: CaseRow, change: dict[str, Any]) -> str:
    """`from 0.8.0, off-error: the spec expects <block> instead of <block>`."""
    pairs = dict.fromkeys(zip(change["from"], change["to"], strict=True))
    parts = [f"{describe_block(row.spec_file, new)} instead of {describe_block(row.spec_file, old)}" for old, new in pairs]
    return f"from {change['release']}, {', '.join(change['modes'])}: the spec expects " + "; ".join(parts)


def change_reason(row: CaseRow, order: Sequence[str]) -> str:
    """Why the case changes: the message where it does not hold, nearest the change; else the spec's own change."""
    if not row.status_differs(order):
        observed = row.observed_changes(order)
        if observed:
            return observed_change_text(observed[0])
        changes = row.spec_changes(order)
        return spec_change_text(row, changes[0]) if changes else ""
    since = row.holds_since(order)
    if since is not None:
        # it holds from `since` on: the reason is what happened just before
        before = [v for v, _ in row.known(order) if _version_key(v) < _version_key(since)]
        if before:
            return row.messages.get(before[-1], "")
    newest_bad = [v for v, s in row.known(order) if s != HOLDS]
    return row.messages.get(newest_bad[-1], "") if newest_bad else ""


def summary(table: CompatTable) -> dict[str, Any]:
    """The machine-readable summary: every case whose verdict or expected behaviour differs across releases."""
    order = table.versions
    changes = []
    for row in table.rows:
        if not row.differs(order):
            continue
        changes.append({
            "case": row.case, "topic": row.topic, "claim": row.claim,
            "first_holds": row.first(HOLDS, order), "last_fails": row.last_failing(order),
            "holds_since": row.holds_since(order), "fails_since": row.fails_since(order),
            "first_fails": row.first_failing(order),
            "last_holds": row.last(HOLDS, order),
            "changed_in": row.changed_in(order), "statuses": {v: row.cells[v] for v in order}, "modes": row.modes,
            "reason": change_reason(row, order),
            "spec_changes": [{**c, "text": spec_change_text(row, c)} for c in row.spec_changes(order)],
            "observed_changes": [{**c, "text": observed_change_text(c)} for c in row.observed_changes(order)],
            "spec_file": row.spec_file,
        })
    return {"versions": list(order), "unavailable": table.unavailable, "problems": table.problems,
            "cases": len(table.rows), "changed": len(changes), "changes": changes, "generated": now()}


def format_table(table: CompatTable, changes_only: bool = False, width: int = 48) -> str:
    """The behaviour × release table as text: changed rows first, grouped by topic."""
    order = table.versions
    col = max(6, *(len(v) for v in order)) if order else 6
    head = f"{'case':<{width}} " + " ".join(f"{v:>{col}}" for v in order) + "  first holds  changed in"
    lines = [head, "-" * len(head)]
    section = None
    for row in table.rows:
        changed = row.differs(order)
        if changes_only and not changed:
            continue
        title = f"[changes across releases] {row.topic}" if changed else f"[same in every release] {row.topic}"
        if title != section:
            lines.append(title)
            section = title
        name = row.case if len(row.case) <= width else "…" + row.case[-(width - 1):]
        cells = " ".join(f"{CELL[row.cells[v]]:>{col}}" for v in order)
        lines.append(f"{name:<{width}} {cells}  {row.first(HOLDS, order) or '-':<11}  {','.join(row.changed_in(order))}")
    lines.append("ok = holds in every mode that applies, FAIL = fails in every one, part = fails in some,"
                 " n/a = no expect block applies, -- = release unavailable, ? = no result")
    for version, reason in table.unavailable.items():
        lines.append(f"unavailable: jax {version}: {reason}")
    for version, reasons in table.problems.items():
        for reason in reasons:
            lines.append(f"incomplete: jax {version}: {reason}")
    return "\n".join(lines)


def format_changes(table: CompatTable, width: int = 200) -> str:
    """One line per changed case: id, the releases where it changed, where it holds, and why."""
    order = table.versions
    lines = []
    for row in table.rows:
        if row.differs(order):
            first = row.first(HOLDS, order) or "never"
            reason = change_reason(row, order) or "(no message)"
            reason = reason if len(reason) <= width else reason[:width - 3] + "..."
            since = row.holds_since(order)
            state = f"holds from {since} (first {first})" if since else \
                f"FAILS from {row.fails_since(order) or '-'} (first holds {first})" if row.fails_since(order) else \
                f"does not hold in the newest release (first holds {first})"
            lines.append(f"{row.case}: changed in {', '.join(row.changed_in(order))}; {state}; {reason}")
    return "\n".join(lines)


