"""The upgrade radar: each behaviour that differs between two releases, bisected to the release that changed it.

The suite runs in full at the ends of the range (and at any anchor release given); for every case
whose signature differs between two neighbouring anchors (per mode: its outcome and what it did in
the spec's terms, `releases.observed_key`: dtype, value, error class and opening words), a
binary search over the releases between them runs only the differing cases, until each change
sits between two adjacent releases. Cases are searched together: one probe release per open
interval per step, so a single change among n releases costs the two ends plus ceil(log2(n - 1))
probes. A case that changes twice (A -> B -> C) gets both changes; one that changes and changes back
between two probed releases (A -> B -> A) is invisible to the search, as to any bisection.

The upgrade flags an adapter reports (the run header's flag table) are searched the same way, as
pseudo-cases `flag:NAME` whose signature is `absent` or its default: the first release that has a
flag, and the release its default flips in.

`bisect` is the search, over any `Observer` (the test drives it with a fake release sequence);
`Store` keeps each release's results as files, so a second search over the same releases (or an
interrupted one, resumed) runs only what no file holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

from jax_conformance.mode import mode_slug
from jax_conformance.records import (
    PROBE_CASES,
    RELEASE_UNAVAILABLE,
    FoundJSON,
    ResultRecord,
    Run,
    load_runs,
    read_one,
    write_one,
)
from jax_conformance.releases import NOT_RUN, observed_key, version_key

FLAG = "flag:"  # the pseudo-cases of upgrade flags
ABSENT = "absent"
HARNESS = "harness error"  # the record says the harness, not the implementation, failed
MISSING = "no record"  # a case asked for that the release did not record (not in its specs, or not collected)

Signature = dict[
    str, str
]  # mode slug -> what happened there, e.g. "passed: raised TypeError (Custom JVP rule...)"
Observations = dict[str, Signature]  # case -> signature


class Unavailable(Exception):
    """The release cannot be run here (no wheel for this Python, a broken install); the message says why."""


class Observer(Protocol):
    def observe(
        self, probes: Mapping[str, Sequence[str] | None]
    ) -> dict[str, Observations | Unavailable]:
        """Per release: the signatures of the cases asked (None: every case), or why it could not run.
        The releases of one call may run in parallel."""
        ...


@dataclass
class Found:
    """One change: `case` behaved as `before` up to `previous` and as `after` from `release` on."""

    case: str
    release: str
    previous: str
    before: Signature
    after: Signature
    skipped: list[str] = field(
        default_factory=list
    )  # unavailable releases between previous and release

    @property
    def modes(self) -> list[str]:
        return [
            m
            for m in sorted(set(self.before) | set(self.after))
            if self.before.get(m) != self.after.get(m)
        ]

    def to_json(self) -> FoundJSON:
        return {
            "case": self.case,
            "release": self.release,
            "previous": self.previous,
            "modes": self.modes,
            "before": {m: self.before.get(m, "") for m in self.modes},
            "after": {m: self.after.get(m, "") for m in self.modes},
            "skipped": self.skipped,
        }


@dataclass
class Search:
    """What a bisection found and what it cost."""

    releases: list[str]
    anchors: list[str]
    changes: list[Found] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    probes: list[tuple[str, int | None]] = field(
        default_factory=list
    )  # (release, cases asked; None = all), in order

    def runs(self) -> int:
        """Releases observed (each once per step it was probed in)."""
        return len(self.probes)


def differs(a: Signature | None, b: Signature | None) -> bool:
    """Two signatures differ where a mode both have says something else (a mode only one has is not a
    change, nor one where the harness, not the release, failed on either side)."""
    if a is None or b is None:
        return False
    return any(a[m] != b[m] and HARNESS not in (a[m], b[m]) for m in set(a) & set(b))


def bisect(
    releases: Sequence[str], observer: Observer, anchors: Sequence[str] = (), say: object = None
) -> Search:
    """Every change of every case between the ends of `releases`, each at the first release showing it."""
    order = sorted(dict.fromkeys(releases), key=version_key)
    ends = [r for r in order if r in set(anchors) | {order[0], order[-1]}] if order else []
    search = Search(order, ends)
    log = say if callable(say) else (lambda _text: None)
    seen: dict[str, Observations] = {}

    def observe(probes: dict[str, set[str] | None]) -> None:
        asked = {r: (None if c is None else sorted(c)) for r, c in probes.items()}
        for release, cases in asked.items():
            search.probes.append((release, None if cases is None else len(cases)))
        for release, got in observer.observe(asked).items():
            if isinstance(got, Unavailable):
                search.unavailable[release] = str(got)
                log(f"radar: jax {release} unavailable: {got}")
            else:
                seen.setdefault(release, {}).update(got)

    observe({r: None for r in ends})
    ends = [r for r in ends if r not in search.unavailable]
    pending: list[tuple[str, str, set[str]]] = []
    for lo, hi in zip(ends, ends[1:], strict=False):
        a, b = seen.get(lo, {}), seen.get(hi, {})
        cases = {c for c in set(a) & set(b) if differs(a[c], b[c])}
        if cases:
            log(f"radar: {lo} -> {hi}: {len(cases)} differ")
            pending.append((lo, hi, cases))
    while pending:
        probes: dict[str, set[str] | None] = {}
        waiting: list[tuple[str, str, set[str], str]] = []
        for lo, hi, cases in pending:
            between = [
                r
                for r in order[order.index(lo) + 1 : order.index(hi)]
                if r not in search.unavailable
            ]
            if not between:
                skipped = order[order.index(lo) + 1 : order.index(hi)]
                for case in sorted(cases):
                    search.changes.append(
                        Found(case, hi, lo, seen[lo][case], seen[hi][case], skipped)
                    )
                continue
            mid = between[(len(between) - 1) // 2] if len(between) > 1 else between[0]
            known = seen.get(mid, {})
            need = {c for c in cases if c not in known}
            if need:
                target = probes.setdefault(mid, set())
                if target is not None:
                    target |= need
            waiting.append((lo, hi, cases, mid))
        modes_for = getattr(observer, "modes_for", None)
        if isinstance(
            modes_for, dict
        ):  # tell the observer which modes each probed case differed in
            for lo, hi, cases, _mid in waiting:
                for case in cases:
                    before, after = seen[lo][case], seen[hi][case]
                    modes_for.setdefault(case, set()).update(
                        m
                        for m in set(before) & set(after)
                        if before[m] != after[m] and HARNESS not in (before[m], after[m])
                    )
        if probes:
            log(
                "radar: probing "
                + ", ".join(
                    f"{r} ({len(c or ())} cases)"
                    for r, c in sorted(probes.items(), key=lambda kv: version_key(kv[0]))
                )
            )
            observe(probes)
        pending = []
        for lo, hi, cases, mid in waiting:
            if mid in search.unavailable:
                pending.append((lo, hi, cases))  # the next step picks another release between them
                continue
            at = seen.get(mid, {})
            lost = {c for c in cases if c not in at}
            for c in lost:  # the probe did not record it: treat as unchanged up to mid? no: say so
                at[c] = {m: MISSING for m in seen[lo][c]}
            left = {c for c in cases if differs(seen[lo][c], at[c])}
            right = {c for c in cases if differs(at[c], seen[hi][c])}
            if left:
                pending.append((lo, mid, left))
            if right:
                pending.append((mid, hi, right))
    search.changes.sort(key=lambda f: (version_key(f.release), f.case))
    return search


# ---------------------------------------------------------------- signatures from records


def record_signature(record: ResultRecord) -> str:
    """One case record in a word or two: outcome, and what it did (dtype, value, error class and words)."""
    what = observed_key(record.get("actual"))
    outcome = str(record.get("outcome", "error"))
    if outcome == "error" and str(record.get("message") or "").startswith("harness error"):
        return HARNESS  # the harness failed (or was mid-edit in a checkout): nothing seen of the release
    # a known divergence listed for some releases only (specs/expectations) changes no behaviour
    outcome = {"xfailed": "failed", "xpassed": "passed"}.get(outcome, outcome)
    if what:
        return f"{outcome}: {what}"
    # Nothing seen but the outcome: each release is judged by its own blocks, so where the spec
    # moves to another block the behaviour it describes changed (as compat's table reads it).
    line = record.get("expect_line")
    return f"{outcome} (spec line {line})" if line else outcome


def run_observations(run: Run, upgrade_only: bool = True) -> Observations:
    """A complete run's case signatures, under its mode's slug, plus its flags as pseudo-cases."""
    slug = mode_slug(run.header.get("mode", {}))
    out: Observations = {}
    for rec in run.cases:
        case = str(rec.get("case") or "")
        if not case or case.startswith("<"):
            continue
        sig = out.setdefault(case, {})
        key = slug if rec.get("backend") in (None, "cpu") else f"{slug}@{rec.get('backend')}"
        sig[key] = record_signature(rec)
    return out


def flag_observations(runs: Sequence[Run], upgrade_only: bool = True) -> dict[str, str]:
    """flag name -> its default in this release (`default False`), from the run headers' flag tables."""
    out: dict[str, str] = {}
    for run in runs:
        for flag in run.header.get("flags") or []:
            if upgrade_only and not flag.get("upgrade"):
                continue
            default = flag.get("default")
            if default is not None or flag["name"] not in out:
                out[flag["name"]] = (
                    f"default {json.dumps(default)}" if default is not None else "present"
                )
    return out


# ---------------------------------------------------------------- the store of results


def cases_tag(cases: Sequence[str] | None) -> str:
    if cases is None:
        return "all"
    return "k-" + hashlib.sha256("\n".join(sorted(cases)).encode()).hexdigest()[:10]


class Store:
    """Results per release: `<root>/<release>/<mode>/<tag>.jsonl` (tag `all`, or a hash of the cases
    asked, listed in `<tag>.cases.json`), and `<root>/<release>/unavailable.json` for a release that
    would not install. Only runs that ended (an end record, not interrupted) count."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def files(self, release: str) -> list[Path]:
        return sorted((self.root / release).glob("*/*.jsonl"))

    def result_path(self, release: str, mode: str, cases: Sequence[str] | None) -> Path:
        return self.root / release / mode / f"{cases_tag(cases)}.jsonl"

    def note_cases(self, release: str, mode: str, cases: Sequence[str] | None) -> None:
        if cases is not None:
            path = self.root / release / mode / f"{cases_tag(cases)}.cases.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_one(path, PROBE_CASES, {"cases": sorted(cases)})

    def unavailable(self, release: str) -> str | None:
        note = read_one(self.root / release / "unavailable.json", RELEASE_UNAVAILABLE)
        return None if note is None else str(note["reason"])

    def mark_unavailable(self, release: str, reason: str) -> None:
        (self.root / release).mkdir(parents=True, exist_ok=True)
        write_one(
            self.root / release / "unavailable.json",
            RELEASE_UNAVAILABLE,
            {"release": release, "reason": reason},
        )

    def complete_runs(self, release: str) -> list[Run]:
        return [
            r
            for r in load_runs(self.files(release))
            if not r.interrupted and r.header.get("status") not in NOT_RUN
        ]

    def why_incomplete(self, release: str, mode: str) -> str:
        """Why the mode's full run of this release did not complete (its header's or end's reason)."""
        for run in load_runs([self.result_path(release, mode, None)]):
            reason = run.header.get("reason") or (run.end.get("reason") if run.end else None)
            if reason:
                return str(reason)
        return "it did not end"

    def observations(self, release: str, modes: Sequence[str]) -> tuple[Observations, set[str]]:
        """What the files hold for this release: case signatures (flags included, once a run has a
        header), and the modes that have a complete run of every case."""
        out: Observations = {}
        full: set[str] = set()
        runs = self.complete_runs(release)
        for run in runs:
            slug = mode_slug(run.header.get("mode", {}))
            if slug not in modes:
                continue
            path = Path(run.source)
            if path.name == "all.jsonl":
                full.add(slug)
            for case, sig in run_observations(run).items():
                out.setdefault(case, {}).update(sig)
            asked = path.with_name(path.name.replace(".jsonl", ".cases.json"))
            note = read_one(asked, PROBE_CASES) if asked.is_file() else None
            for case in cast(list[str], note["cases"]) if note else ():
                out.setdefault(case, {}).setdefault(slug, MISSING)
        if runs:
            flags = flag_observations(runs)
            for name in {
                f["name"] for r in runs for f in r.header.get("flags") or [] if f.get("upgrade")
            } | set(flags):
                out[FLAG + name] = {"*": flags.get(name, ABSENT)}
            for name in self.known_flags():
                out.setdefault(FLAG + name, {"*": ABSENT})
        return out, full

    def known_flags(self) -> set[str]:
        """Every upgrade flag some release in the store reports (a release without it: absent)."""
        names: set[str] = set()
        for path in self.root.glob("*/*/all.jsonl"):
            for run in load_runs([path]):
                names |= {str(f["name"]) for f in run.header.get("flags") or [] if f.get("upgrade")}
        return names

    def has(self, release: str, modes: Sequence[str], cases: Sequence[str] | None) -> bool:
        obs, full = self.observations(release, modes)
        if cases is None:
            return set(modes) <= full
        return all(
            all(m in obs.get(c, {}) for m in modes) or c.startswith(FLAG) and c in obs
            for c in cases
        )
