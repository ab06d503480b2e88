"""The behaviour × release table of `jax-conformance compat` as text, and its JSON summary of changes.

The table itself (statuses, what changed where) is `jax_conformance.releases`, the model the
report's behaviour × release section shows too; this module says it in words: the terminal table,
one line per changed case with its reason, and `compat-summary.json`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from jax_conformance import SPECS_DIR
from jax_conformance.records import now
from jax_conformance.releases import (
    HOLDS,
    STATUSES,
    CaseRow,
    Change,
    ReleaseTable,
    version_key,
)
from jax_conformance.spec.loader import load_spec

SPEC_FILE_ROOT = SPECS_DIR.parent  # a relative spec_file in a record (specs/...) is relative to it

# A release's status of a case in the terminal table (holds, fails, partly, n/a, missing, unavailable).
CELL = dict(zip(STATUSES, ("ok", "FAIL", "part", "n/a", "?", "--"), strict=True))


def observed_change_text(change: Change) -> str:
    pairs = dict.fromkeys(zip(change["from"], change["to"], strict=True))
    return f"from {change['release']}, {', '.join(change['modes'])}: " + "; ".join(
        f"{new} (was {old})" for old, new in pairs
    )


@functools.lru_cache(maxsize=64)
def _block_conditions(spec_file: str) -> dict[int, str]:
    """Expect block line -> its `when`, described (and its note), read from the spec file the run used."""
    path = Path(spec_file)
    path = path if path.is_absolute() else SPEC_FILE_ROOT / path
    try:
        spec = load_spec(path, rules=False)
    except Exception:  # noqa: BLE001 - a spec edited or gone since the run: fall back to line numbers
        return {}
    out = {}
    for case in spec.cases:
        for block in case.expect:
            note = block.expected.get("note")
            out[block.line] = block.when.describe() + (f" ({note})" if note else "")
    return out


def describe_block(spec_file: str, line: int | None) -> str:
    if line is None:
        return "no expect block (not applicable)"
    when = _block_conditions(spec_file).get(line) if spec_file else None
    return f"line {line}: when {when}" if when else f"line {line}"


def spec_change_text(row: CaseRow, change: Change) -> str:
    """`from 0.8.0, off-error: the spec expects <block> instead of <block>`."""
    pairs = dict.fromkeys(zip(change["from"], change["to"], strict=True))
    parts = [
        f"{describe_block(row.spec_file, _line(new))} instead of {describe_block(row.spec_file, _line(old))}"
        for old, new in pairs
    ]
    return f"from {change['release']}, {', '.join(change['modes'])}: the spec expects " + "; ".join(
        parts
    )


def _line(value: int | str | None) -> int | None:
    """An expect block's line as a spec change holds it (None: no block applied)."""
    return value if isinstance(value, int) else None


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
        before = [v for v, _ in row.known(order) if version_key(v) < version_key(since)]
        if before:
            return row.messages.get(before[-1], "")
    newest_bad = [v for v, s in row.known(order) if s != HOLDS]
    return row.messages.get(newest_bad[-1], "") if newest_bad else ""


def summary(table: ReleaseTable) -> dict[str, object]:
    """The machine-readable summary: every case whose verdict or expected behaviour differs across releases."""
    order = table.versions
    changes = []
    for row in table.rows:
        if not row.differs(order):
            continue
        changes.append(
            {
                "case": row.case,
                "topic": row.topic,
                "claim": row.claim,
                "first_holds": row.first(HOLDS, order),
                "last_fails": row.last_failing(order),
                "holds_since": row.holds_since(order),
                "fails_since": row.fails_since(order),
                "first_fails": row.first_failing(order),
                "last_holds": row.last(HOLDS, order),
                "changed_in": row.changed_in(order),
                "statuses": {v: row.cells[v] for v in order},
                "modes": row.modes,
                "reason": change_reason(row, order),
                "spec_changes": [
                    {**c, "text": spec_change_text(row, c)} for c in row.spec_changes(order)
                ],
                "observed_changes": [
                    {**c, "text": observed_change_text(c)} for c in row.observed_changes(order)
                ],
                "spec_file": row.spec_file,
            }
        )
    return {
        "versions": list(order),
        "unavailable": table.unavailable,
        "problems": table.problems,
        "cases": len(table.rows),
        "changed": len(changes),
        "changes": changes,
        "generated": now(),
    }


def format_table(table: ReleaseTable, changes_only: bool = False, width: int = 48) -> str:
    """The behaviour × release table as text: changed rows first, grouped by topic."""
    order = table.versions
    col = max(6, *(len(v) for v in order)) if order else 6
    head = (
        f"{'case':<{width}} " + " ".join(f"{v:>{col}}" for v in order) + "  first holds  changed in"
    )
    lines = [head, "-" * len(head)]
    section = None
    for row in table.rows:
        changed = row.differs(order)
        if changes_only and not changed:
            continue
        title = (
            f"[changes across releases] {row.topic}"
            if changed
            else f"[same in every release] {row.topic}"
        )
        if title != section:
            lines.append(title)
            section = title
        name = row.case if len(row.case) <= width else "…" + row.case[-(width - 1) :]
        cells = " ".join(f"{CELL[row.cells[v]]:>{col}}" for v in order)
        lines.append(
            f"{name:<{width}} {cells}  {row.first(HOLDS, order) or '-':<11}  {','.join(row.changed_in(order))}"
        )
    lines.append(
        "ok = holds in every mode that applies, FAIL = fails in every one, part = fails in some,"
        " n/a = no expect block applies, -- = release unavailable, ? = no result"
    )
    for version, reason in table.unavailable.items():
        lines.append(f"unavailable: jax {version}: {reason}")
    for version, reasons in table.problems.items():
        for reason in reasons:
            lines.append(f"incomplete: jax {version}: {reason}")
    return "\n".join(lines)


def format_changes(table: ReleaseTable, width: int = 200) -> str:
    """One line per changed case: id, the releases where it changed, where it holds, and why."""
    order = table.versions
    lines = []
    for row in table.rows:
        if row.differs(order):
            first = row.first(HOLDS, order) or "never"
            reason = change_reason(row, order) or "(no message)"
            reason = reason if len(reason) <= width else reason[: width - 3] + "..."
            since = row.holds_since(order)
            state = (
                f"holds from {since} (first {first})"
                if since
                else f"FAILS from {row.fails_since(order) or '-'} (first holds {first})"
                if row.fails_since(order)
                else f"does not hold in the newest release (first holds {first})"
            )
            lines.append(
                f"{row.case}: changed in {', '.join(row.changed_in(order))}; {state}; {reason}"
            )
    return "\n".join(lines)
