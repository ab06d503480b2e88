"""When JAX flips its upcoming defaults: which cases behave otherwise under JAX's upgrade flags, and which flag does it.

A run of `jax-conformance run --modes off-warn,+upcoming` holds a *base* mode (`off-warn`), the
mode with every upcoming flag set on top of it (`off-warn+jax_custom_vjp3+jax_remat3+...`, "all
upcoming") and one mode per flag alone. From the report's columns this module computes, per
(adapter, release, backend, base mode), every case whose behaviour differs between the base mode
and a flagged mode (one whose `Mode.base` is the base), grouped by the flag that explains it.

*Behaviour* is the record's outcome (xfailed read as failed, xpassed as passed: a known-divergence
entry says nothing about what the implementation did), the expect block chosen for it (`expect_line`: once a spec
says `when: {flags: ...}` the case passes under the flag through another block, so a change of
block is a change of behaviour even where both pass) and what the implementation did
(`releases.observed_key`: the exception type and its message's opening words, or the result's
dtype). Records written before a field existed lack it; a missing field compares equal.

Attribution: a flag explains a change when the run of that flag alone behaves as the all-upcoming
run does. A case that changes under all upcoming but under no flag alone changes only in the
combination; one that changes under a flag alone but not under all upcoming is listed apart.
Nothing here renders HTML (`reports/templates/index.html.j2` does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jax_conformance.errors import ModeError
from jax_conformance.mode import Mode, flag_text
from jax_conformance.records import JSONScalar, ResultRecord
from jax_conformance.releases import HOLDING, INAPPLICABLE, first_line, observed_key

if TYPE_CHECKING:
    from jax_conformance.report.model import CaseInfo, Cells, Column

COMBINATION = (
    "only in the combination"  # the group of cases no flag alone changes the way all upcoming does
)
UNATTRIBUTED = (
    "not attributed"  # all upcoming changes it and some of its flags were never run alone
)
ALONE_ONLY = "under a flag alone only"
# a listed case's outcome -> the outcome it has unlisted: what the implementation did
AS_JUDGED = {
    "xfailed": "failed",
    "xpassed": "passed",
}  # a flag alone changes it, all upcoming does not


@dataclass(frozen=True)
class Behaviour:
    """What one case did in one mode, as far as the record says."""

    mode: str
    outcome: str
    block: int | None  # the line of the expect block chosen (None: none applied, or an old record)
    did: str  # observed_key: `raised TypeError (...)`, `dtype float32`; "" where the record does not say
    message: str = ""  # the first line of the record's message

    @classmethod
    def of(cls, mode: str, record: ResultRecord) -> Behaviour:
        line = record.get("expect_line")
        return cls(
            mode,
            str(record.get("outcome", "error")),
            line if isinstance(line, int) else None,
            observed_key(record.get("actual")),
            first_line(record.get("message")),
        )

    def same_as(self, other: Behaviour) -> bool:
        """The same outcome, expect block and observed behaviour. Whether a case is listed as a
        known divergence is no behaviour: xfailed is failed, xpassed is passed (two runs judged by
        different expectations files do the same thing)."""
        return (
            AS_JUDGED.get(self.outcome, self.outcome) == AS_JUDGED.get(other.outcome, other.outcome)
            and self.block == other.block
            and self.did == other.did
        )

    @property
    def verdict(self) -> str:
        """The outcome in words as the section shows it: passes, fails, not applicable ..."""
        if self.outcome in HOLDING:
            return "passes" if self.outcome == "passed" else "xpassed"
        return {"failed": "fails", "not_applicable": "not applicable", "skipped": "skipped"}.get(
            self.outcome, self.outcome
        )

    def to_json(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "outcome": self.outcome,
            "block": self.block,
            "did": self.did,
            "message": self.message,
        }


def how(today: Behaviour, then: Behaviour) -> str:
    """Which way a case changes, in words: `not applicable today, passes under the flags`."""
    if today.outcome != then.outcome:
        if today.outcome in INAPPLICABLE or then.outcome in INAPPLICABLE:
            return f"{today.verdict} today, {then.verdict} under the flags (applicability changes)"
        return f"{today.verdict} today, {then.verdict} under the flags"
    if today.block != then.block:
        return (
            f"{then.verdict} in both, through another expect block (line {today.block} today, "
            f"{then.block} under the flags)"
        )
    return f"{then.verdict} in both; the implementation does something else"


@dataclass
class FlipCase:
    """One case whose behaviour differs between the base mode and some flagged mode."""

    id: str
    spec_file: str
    line: int | None
    claim: str
    today: Behaviour
    upcoming: Behaviour | None  # under all upcoming (None: no such run, or no record there)
    # flag (as a mode names it) -> its alone-run, where that differs from today
    alone: dict[str, Behaviour]
    # the flags whose alone-run behaves as all upcoming (or, without an all-upcoming run, every flag in `alone`)
    due_to: list[str]
    group: str  # a flag of due_to, or COMBINATION, UNATTRIBUTED, ALONE_ONLY
    how: str  # which way it changes, in words

    @property
    def also(self) -> dict[str, Behaviour]:
        """Flags that change it alone, but not the way all upcoming does."""
        return {f: b for f, b in self.alone.items() if f not in self.due_to}

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "spec_file": self.spec_file,
            "line": self.line,
            "claim": self.claim,
            "today": self.today.to_json(),
            "upcoming": self.upcoming.to_json() if self.upcoming else None,
            "alone": {f: b.to_json() for f, b in self.alone.items()},
            "due_to": self.due_to,
            "group": self.group,
            "how": self.how,
        }


@dataclass
class FlagGroup:
    """The cases a flag explains (or the combination, or cases not attributed), with counts."""

    # a flag as a mode names it (`jax_custom_vjp3`, `jax_foo=false`), or COMBINATION / UNATTRIBUTED
    # / ALONE_ONLY
    name: str
    help: str  # the flag's help text from the run's flag table ("" where it has none)
    cases: list[FlipCase]
    changed_alone: (
        int | None
    )  # cases this flag changes when set alone (None: it was never run alone)

    @property
    def is_flag(self) -> bool:
        return self.name not in (COMBINATION, UNATTRIBUTED, ALONE_ONLY)

    @property
    def sentence(self) -> str:
        """What changes, in one sentence computed from the cases: `jax_custom_vjp3: 47 cases behave
        otherwise: a result becomes an error, TypeError (16: custom_vjp.closures 10, ...), ...`."""
        n = len(self.cases)
        if not n and self.is_flag and self.changed_alone is None:
            return f"{self.name}: not run alone; no case is credited to it."
        if not n:
            alone = (
                ""
                if self.changed_alone in (None, 0)
                else f" the way all upcoming does ({self.changed_alone} when set alone)"
            )
            return f"{self.name}: no case behaves otherwise{alone}."
        kinds: dict[str, dict[str, int]] = {}  # phrase -> topic -> cases, in the order first seen
        for c in self.cases:
            then = (
                c.upcoming
                if c.upcoming is not None and not c.upcoming.same_as(c.today)
                else (c.alone.get(self.name) or next(iter(c.alone.values()), None))
            )
            phrase = change_phrase(c.today, then) if then is not None else "another behaviour"
            topic = c.id.rpartition(".")[0] or c.id
            per_topic = kinds.setdefault(phrase, {})
            per_topic[topic] = per_topic.get(topic, 0) + 1
        ranked = sorted(kinds.items(), key=lambda kv: -sum(kv[1].values()))
        parts = []
        for phrase, topics in ranked[:SENTENCE_KINDS]:
            top = sorted(topics.items(), key=lambda kv: -kv[1])
            where = ", ".join(f"{t} {k}" for t, k in top[:3]) + (", ..." if len(top) > 3 else "")
            parts.append(f"{phrase} ({sum(topics.values())}: {where})")
        rest = sum(sum(t.values()) for _, t in ranked[SENTENCE_KINDS:])
        if rest:
            parts.append(
                f"{rest} other{'s' if rest != 1 else ''} in {len(ranked) - SENTENCE_KINDS} more "
                f"way{'s' if len(ranked) - SENTENCE_KINDS != 1 else ''}"
            )
        verb = "case behaves" if n == 1 else "cases behave"
        return f"{self.name}: {n} {verb} otherwise: {', '.join(parts)}."


SENTENCE_KINDS = 5  # kinds of change a flag's sentence names; the rest are counted


def _raised(b: Behaviour) -> str | None:
    """The exception type a behaviour raised (from `observed_key`), None when it did not raise."""
    return b.did.split()[1] if b.did.startswith("raised ") and len(b.did.split()) > 1 else None


def _thing(b: Behaviour) -> str:
    """What a behaviour gave, in a few words: `an array (float32)`, `a Python float`."""
    if b.did.startswith("dtype "):
        return f"an array ({b.did.split()[1]})"
    if b.did.startswith("Python "):
        return f"a Python {b.did.split()[1]}"
    return b.did


def change_phrase(today: Behaviour, then: Behaviour) -> str:
    """One kind of change in words, the same for every case that changes this way (so they can be counted)."""
    if today.outcome != then.outcome:
        if then.outcome in INAPPLICABLE:
            return "not applicable under the flags"
        if today.outcome in INAPPLICABLE:
            return f"applies under the flags only ({then.verdict})"
        if today.outcome in HOLDING or then.outcome not in HOLDING:
            return f"{today.verdict} today, {then.verdict} under the flags"
    if today.did and then.did and today.did != then.did:
        was, now = _raised(today), _raised(then)
        if now and not was:
            return f"a result becomes an error, {now}"
        if was and not now:
            return f"{was} is no longer raised, {_thing(then) or 'a result'} instead"
        if was and now:
            return f"{now} instead of {was}" if was != now else f"{now} with another message"
        if _thing(today) != _thing(then):
            return f"{_thing(then)} instead of {_thing(today)}"
        return f"another value ({then.did})"
    if today.outcome != then.outcome:
        return f"{today.verdict} today, {then.verdict} under the flags"
    if today.block != then.block:
        return "another expect block chosen (the spec says what the flag changes)"
    return "something else done"


@dataclass
class UpcomingSection:
    """One (adapter, release, backend, base mode) and the flagged modes run on top of it."""

    adapter: str
    version: str
    backend: str
    base: str  # the base mode's slug
    upcoming: (
        str | None
    )  # the mode with every flag of the others (all upcoming); None when no mode has them all
    flags: list[str]  # every flag set in some flagged mode, as the modes name them
    alone: dict[str, str]  # flag -> the mode setting only it
    modes: list[str]  # every flagged mode compared, fewest flags first
    cases: list[FlipCase]  # in case order
    groups: list[FlagGroup]
    # cases with a record in the base mode that behave the same in every flagged mode
    unchanged: int

    @property
    def title(self) -> str:
        return f"{self.adapter} {self.version} · {self.backend} · today: {self.base}"

    def to_json(self) -> dict[str, object]:
        return {
            "adapter": self.adapter,
            "version": self.version,
            "backend": self.backend,
            "base": self.base,
            "upcoming": self.upcoming,
            "flags": self.flags,
            "alone": self.alone,
            "modes": self.modes,
            "cases": [c.to_json() for c in self.cases],
            "unchanged": self.unchanged,
            "groups": {
                g.name: {"cases": [c.id for c in g.cases], "changed_alone": g.changed_alone}
                for g in self.groups
            },
        }


def _mode(slug: str) -> Mode | None:
    try:
        return Mode.from_slug(slug)
    except ModeError:
        return None


def upcoming_sections(
    columns: Sequence[Column], cases: Sequence[CaseInfo], cells: Cells
) -> list[UpcomingSection]:
    """Every (adapter, release, backend, base mode) with a base column and at least one flagged column on top of it."""
    by_col: dict[int, dict[int, ResultRecord]] = {}
    for (ci, index), rec in cells.items():
        by_col.setdefault(index, {})[ci] = rec
    families: dict[tuple[str, str, str, Mode], dict[Mode, Column]] = {}
    for col in columns:  # oldest first: the same configuration run twice keeps its newest column
        mode = _mode(col.mode)
        if mode is not None:
            families.setdefault((col.adapter, col.version, col.backend, mode.base), {})[mode] = col
    out = []
    for (adapter, version, backend, base), modes in families.items():
        # a flagged mode with no case (not started, or stopped first) says nothing: left out
        flagged = sorted(
            (m for m in modes if m.flags and by_col.get(modes[m].index)),
            key=lambda m: (len(m.flags), m.slug),
        )
        if base not in modes or not flagged:
            continue
        out.append(_section(adapter, version, backend, base, modes, flagged, by_col, cases))
    return out


def _section(
    adapter: str,
    version: str,
    backend: str,
    base: Mode,
    modes: dict[Mode, Column],
    flagged: list[Mode],
    by_col: dict[int, dict[int, ResultRecord]],
    cases: Sequence[CaseInfo],
) -> UpcomingSection:
    names = {flag_text(n, v): n for m in flagged for n, v in m.flags}
    every = set(names)
    most = flagged[-1]
    upcoming = most if {flag_text(n, v) for n, v in most.flags} == every else None
    alone = {flag_text(*m.flags[0]): m for m in flagged if len(m.flags) == 1}
    help_text = _help(modes.values())
    base_recs = by_col.get(modes[base].index, {})
    flips: list[FlipCase] = []
    unchanged = 0
    for case in cases:
        rec = base_recs.get(case.index)
        if rec is None or case.id.startswith("<"):  # a spec file that did not load is no case
            continue
        today = Behaviour.of(base.slug, rec)
        under = {
            m: Behaviour.of(m.slug, r)
            for m in flagged
            if (r := by_col.get(modes[m].index, {}).get(case.index)) is not None
        }
        if all(b.same_as(today) for b in under.values()):
            unchanged += 1
            continue
        then = under.get(upcoming) if upcoming is not None else None
        differing = {
            f: under[m] for f, m in alone.items() if m in under and not under[m].same_as(today)
        }
        if then is None:
            due_to, group = list(differing), next(iter(differing), UNATTRIBUTED)
        elif then.same_as(today):
            due_to, group = [], ALONE_ONLY
        else:
            due_to = [f for f, b in differing.items() if b.same_as(then)]
            # "only in the combination" needs every flag's own run to have run this case
            judged = {f for f, m in alone.items() if m in under}
            group = due_to[0] if due_to else COMBINATION if judged == every else UNATTRIBUTED
        shown = (
            then
            if then is not None and not then.same_as(today)
            else next(b for b in [*differing.values(), *under.values()] if not b.same_as(today))
        )
        flips.append(
            FlipCase(
                case.id,
                case.spec_file,
                case.line,
                case.claim,
                today,
                then,
                differing,
                due_to,
                group,
                how(today, shown),
            )
        )
    groups = []
    for flag in sorted(every):
        in_group = [c for c in flips if flag in c.due_to]
        changed = sum(flag in c.alone for c in flips) if flag in alone else None
        groups.append(FlagGroup(flag, help_text.get(names[flag], ""), in_group, changed))
    for name in (COMBINATION, UNATTRIBUTED, ALONE_ONLY):
        in_group = [c for c in flips if c.group == name]
        if in_group:
            groups.append(FlagGroup(name, "", in_group, None))
    return UpcomingSection(
        adapter,
        version,
        backend,
        base.slug,
        upcoming.slug if upcoming else None,
        sorted(every),
        {f: m.slug for f, m in alone.items()},
        [m.slug for m in flagged],
        flips,
        groups,
        unchanged,
    )


def _help(columns: Iterable[Column]) -> dict[str, str]:
    """Flag name -> its help text, from the flag tables of these columns' runs."""
    out: dict[str, str] = {}
    for col in columns:
        for row in col.flag_table:
            if isinstance(row, dict) and row.get("name") and row.get("help"):
                out.setdefault(str(row["name"]), str(row["help"]))
    return out


# ---------------------------------------------------------------- the flags of each mode


@dataclass
class ModeFlags:
    """One run's mode: the flags it sets, and the upgrade flags in effect (from its header's flag table)."""

    label: str  # adapter version mode
    mode: str
    sets: dict[str, JSONScalar]  # the flags the mode sets besides the x64 two
    # as the run's flag table has them (a file written by another version may hold any JSON)
    values: dict[str, object]  # upgrade flag -> value in effect
    defaults: dict[str, object]  # upgrade flag -> JAX's default
    listed: bool  # the run recorded a flag table (its adapter reported its flags)


@dataclass
class FlagOverview:
    """The upgrade flags (rows) of every mode run (columns)."""

    names: list[str]
    help: dict[str, str]
    modes: list[ModeFlags] = field(default_factory=list)

    def cell(self, mode: ModeFlags, name: str) -> tuple[str, str]:
        """(text, kind): the value in effect; kind `set` (the mode sets it), `changed` (not the default), or ``."""
        if name in mode.sets:
            return _text(mode.sets[name]), "set"
        if name not in mode.values:
            return ("" if mode.listed else "?"), ""
        value = mode.values[name]
        return _text(value), "changed" if value != mode.defaults.get(name) else ""


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else "" if value is None else str(value)


def flag_overview(columns: Sequence[Column]) -> FlagOverview | None:
    """Per run (one column per run, whatever its backends): its mode's flags and the upgrade flags in effect.

    None when no run sets a flag and none recorded a flag table.
    """
    modes: list[ModeFlags] = []
    names: set[str] = set()
    help_text: dict[str, str] = {}
    seen: set[str] = set()
    for col in columns:
        if col.run_id in seen:
            continue
        seen.add(col.run_id)
        upgrade = [
            r for r in col.flag_table if isinstance(r, dict) and r.get("upgrade") and r.get("name")
        ]
        for r in upgrade:
            help_text.setdefault(str(r["name"]), str(r.get("help") or ""))
        mode = ModeFlags(
            f"{col.adapter} {col.version} {col.mode}",
            col.mode,
            dict(col.flags),
            {str(r["name"]): r.get("value") for r in upgrade},
            {str(r["name"]): r.get("default") for r in upgrade},
            bool(col.flag_table),
        )
        names |= set(mode.values) | set(mode.sets)
        modes.append(mode)
    if not names:
        return None
    # the flags some mode sets first, then the rest of the upgrade flags
    order = sorted(names, key=lambda n: (not any(n in m.sets for m in modes), n))
    return FlagOverview(order, help_text, modes)
