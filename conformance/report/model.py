"""What a report shows, computed from result files: columns (run x backend), cases, cells, and the views over them.

Nothing here renders HTML; `jax_conformance.report.site` turns a `ReportModel` into a static site.
A column is one (adapter, implementation version, backend, mode) as one run measured it; a
cell is one case record in one column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from jax_conformance.merging import merge_runs
from jax_conformance.mode import mode_key, mode_slug
from jax_conformance.records import (
    OUTCOMES,
    UNEXPECTED,
    CheckData,
    EndRecord,
    JSONScalar,
    ReadProblem,
    ResultRecord,
    Run,
    load_runs,
    read_check,
    read_mutation,
    tally,
)
from jax_conformance.releases import (
    HOLDING,
    INAPPLICABLE,
    NOT_RUN,
    ReleaseTable,
    build_table,
    version_key,
)
from jax_conformance.report.runs import RunInfo, run_infos
from jax_conformance.report.upcoming import (
    FlagOverview,
    UpcomingSection,
    flag_overview,
    upcoming_sections,
)
from jax_conformance.spec.model import NORMATIVE_BASES
from jax_conformance.text import plural

# One character per outcome keeps the case x column grid small enough for a 100,000-record merge.
CODES = {
    "passed": "p",
    "failed": "f",
    "error": "e",
    "skipped": "s",
    "not_applicable": "n",
    "xfailed": "x",
    "xpassed": "X",
    "crashed": "c",
    "timeout": "t",
}
NO_RECORD = "-"
Cells = dict[
    tuple[int, int], ResultRecord
]  # (case index, column index) -> the case's record in that run
# Kinds of requirement (a record's `basis`) that compliance counts; records from before `basis`
# existed (None) count as they always did. `observed` is shown beside, `unsupported` never counts.
COUNTED_BASES: frozenset[str | None] = NORMATIVE_BASES | {None}


@dataclass
class Column:
    """One (adapter, version, backend, mode) as one run measured it."""

    index: int
    run_id: str
    adapter: str
    version: str
    backend: str
    mode: str
    source: str
    interrupted: bool
    end: EndRecord | None
    collected: int | None
    environment: dict[str, object]
    started: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    # per basis (documented, tested, observed, unsupported, None), how many records had each outcome
    by_basis: dict[str | None, dict[str, int]] = field(default_factory=dict)
    docs_vs_code: int = 0  # records whose documented expectation failed while the code's held
    # records with `spec_error` (in counts["error"]): the spec's fault, counted apart
    spec_errors: int = 0
    label: str = ""
    status: str = ""  # "unavailable" or "error" when the release could not run at all (compat)
    reason: str = ""
    flags: dict[str, JSONScalar] = field(
        default_factory=dict
    )  # the JAX flags the mode sets besides the x64 two
    flag_table: list[dict[str, object]] = field(
        default_factory=list
    )  # the run header's `flags` (absent when the adapter reported none)

    @property
    def status_text(self) -> str:
        """The status cell: complete, interrupted, or why the implementation could not run."""
        if self.status in NOT_RUN:
            return f"{self.status}: {self.reason}" if self.reason else self.status
        return "interrupted" if self.interrupted else "complete"

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def applicable(self) -> int:
        return self.total - sum(self.counts[o] for o in INAPPLICABLE)

    @property
    def holds(self) -> int:
        return sum(self.counts[o] for o in HOLDING)

    @property
    def unexpected(self) -> int:
        """Records the implementation did not meet (a spec error is the spec's, not counted here)."""
        return sum(self.counts[o] for o in UNEXPECTED) - self.spec_errors

    def share(self, bases: Iterable[str | None]) -> tuple[int, int]:
        """(holding, applicable) over the records of these bases."""
        holding = applicable = 0
        for basis in bases:
            counts = self.by_basis.get(basis, {})
            holding += sum(counts.get(o, 0) for o in HOLDING)
            applicable += sum(n for o, n in counts.items() if o not in INAPPLICABLE)
        return holding, applicable

    @property
    def compliance(self) -> float | None:
        """Share of applicable documented and tested cases whose behaviour holds (passed or xpassed), in percent."""
        holding, applicable = self.share(COUNTED_BASES)
        return 100.0 * holding / applicable if applicable else None

    @property
    def observed(self) -> tuple[int, int]:
        """(holding, applicable) among cases that pin observed behaviour only: shown, not counted."""
        return self.share(["observed"])

    @property
    def unsupported(self) -> tuple[int, int]:
        """(holding, applicable) among cases of behaviour JAX has disowned: reported, never counted."""
        return self.share(["unsupported"])

    @property
    def interruption(self) -> str:
        """Why this column is incomplete, in words; empty when the run ended normally."""
        if not self.interrupted:
            return ""
        if self.end is None:
            why = "the run stopped before writing its end record (killed or crashed)"
        else:
            why = str(
                self.end.get("reason") or f"pytest ended with status {self.end.get('exitstatus')}"
            )
        of = f" of {self.collected}" if self.collected is not None else ""
        return f"interrupted: {why}; {self.total}{of} case records kept"

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label,
            "adapter": self.adapter,
            "version": self.version,
            "backend": self.backend,
            "mode": self.mode,
            "flags": self.flags,
            "interrupted": self.interrupted,
            "run_id": self.run_id,
            "status": self.status or ("interrupted" if self.interrupted else "complete"),
            "reason": self.reason,
        }


@dataclass
class CaseInfo:
    """What the newest record says about a case (claim, where the spec is, its sources)."""

    index: int
    id: str
    topic: str
    claim: str = ""
    spec_file: str = ""
    line: int | None = None
    source: list[dict[str, object]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    basis: str | None = None
    documented: dict[str, object] | None = None  # what the docs say: {"says": ..., "source": [...]}


@dataclass
class DocsDifference:
    """A case whose documented expectation fails where the code's holds, release by release."""

    case: CaseInfo
    # (adapter, version, [(column, why the documented expectation failed)]), oldest release first
    releases: list[tuple[str, str, list[tuple[Column, str]]]]
    # adapter -> the first release seen to differ, and the latest earlier release where the docs
    # held ("" if none was run)
    since: dict[str, tuple[str, str]]


@dataclass
class DocsRule:
    """The docs-vs-code differences that share what the docs say (a table's cells share one
    sentence): the rule once, its cases counted, where the code differs summed per mode."""

    says: str
    source: list[dict[str, object]]
    diffs: list[DocsDifference]

    @property
    def releases(self) -> list[tuple[str, str, list[tuple[str, int]]]]:
        """(adapter, version, [(mode, cells that differ)]) over the rule's cases, oldest release first."""
        per: dict[tuple[str, str], dict[str, int]] = {}
        for diff in self.diffs:
            for adapter, version, seen in diff.releases:
                modes = per.setdefault((adapter, version), {})
                for col, _ in seen:
                    modes[col.mode] = modes.get(col.mode, 0) + 1
        return [
            (a, v, sorted(modes.items(), key=lambda m: mode_key(m[0])))
            for (a, v), modes in sorted(
                per.items(), key=lambda kv: (kv[0][0], version_key(kv[0][1]))
            )
        ]

    @property
    def groups(self) -> list[tuple[str, int]]:
        """(table or topic, cases) over the rule's cases: a table cell counts for its table."""
        counts: dict[str, int] = {}
        for diff in self.diffs:
            head, bracket, _ = diff.case.id.partition("[")
            key = head if bracket else diff.case.topic
            counts[key] = counts.get(key, 0) + 1
        return sorted(counts.items())

    @property
    def since(self) -> list[dict[str, tuple[str, str]]]:
        """The distinct first releases of its cases (one, mostly)."""
        return list({repr(sorted(d.since.items())): d.since for d in self.diffs}.values())


def docs_rules(diffs: list[DocsDifference]) -> list[DocsRule]:
    """Docs-vs-code differences grouped by what the docs say, the rule with the most cases first."""
    rules: dict[str, DocsRule] = {}
    for diff in diffs:
        documented = diff.case.documented or {}
        says, source = str(documented.get("says", "")), _sources(documented.get("source"))
        # a case whose docs say nothing in words stands alone
        key = repr((says, source)) if says else diff.case.id
        rule = rules.setdefault(key, DocsRule(says, source, []))
        rule.diffs.append(diff)
    return sorted(rules.values(), key=lambda r: (-len(r.diffs), r.diffs[0].case.id))


@dataclass
class Change:
    case: str
    adapter: str
    backend: str
    mode: str
    before: str
    after: str
    message: str = ""


@dataclass
class Comparison:
    """A run set against a baseline: keyed by (adapter, backend, mode, case), versions aside."""

    title: str
    regressed: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    new: list[Change] = field(default_factory=list)
    gone: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    same: int = 0

    def sections(self) -> list[tuple[str, str, list[Change]]]:
        return [
            ("regressed", "Regressed: held in the baseline, fails now", self.regressed),
            ("fixed", "Fixed: failed in the baseline, holds now", self.fixed),
            ("new", "New: not in the baseline", self.new),
            ("gone", "Gone: in the baseline, not run now", self.gone),
            ("changed", "Other changes (applicability, kind of failure)", self.changed),
        ]


@dataclass
class ReportModel:
    columns: list[Column]
    cases: list[CaseInfo]
    cells: Cells
    problems: list[str]
    comparisons: list[Comparison]
    compat: list[ReleaseTable]  # adapters run at two or more releases
    docs_vs_code: list[DocsDifference]
    mutation: dict[str, object] | None = None
    sources: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)  # the files and directories given, as given
    upcoming: list[UpcomingSection] = field(
        default_factory=list
    )  # when JAX flips its upcoming defaults
    # the flags of each run's mode, and the upgrade flags in effect
    flags: FlagOverview | None = None
    contracts: list[CheckData] = field(
        default_factory=list
    )  # `check --report OUT`'s saved checks (Your rules)
    runs: list[RunInfo] = field(default_factory=list)  # each run merged, described (Runs section)

    @property
    def records(self) -> int:
        return len(self.cells)

    @property
    def docs_rules(self) -> list[DocsRule]:
        """The docs-vs-code differences grouped by what the docs say."""
        return docs_rules(self.docs_vs_code)

    @property
    def topics(self) -> list[str]:
        return sorted({c.topic for c in self.cases})

    @cached_property
    def tables(self) -> list[TableView]:
        """The table cases (ids `<table>[<cell>]`), each collapsed to its counts per column."""
        return table_views(self.columns, self.cases, self.cells)

    def grid(self) -> list[str]:
        """One string per case, one outcome code per column."""
        rows = [[NO_RECORD] * len(self.columns) for _ in self.cases]
        for (ci, col), rec in self.cells.items():
            rows[ci][col] = CODES.get(rec.get("outcome", "error"), "e")
        return ["".join(r) for r in rows]


@dataclass
class TableView:
    """A table case's cells collapsed: per column the cells by outcome, the failing cells open, and
    where every cell id is a pair `row|col` (the promotion tables), the row x column grid they form."""

    table: str
    topic: str
    cells: int
    counts: list[tuple[Column, dict[str, int]]]
    failing: list[tuple[str, Column, str]]  # (cell id, column, the first line of its message)
    members: list[int] = field(default_factory=list)  # the cells' case indices
    ids: list[str] = field(default_factory=list)  # the cells' case ids, as `members`
    rows: list[str] = field(default_factory=list)  # the grid's row labels, in the run's order
    cols: list[str] = field(default_factory=list)  # its column labels, in the run's order
    # the case index at each (row, col) of the grid, row-major; -1 where no cell was run
    grid: list[int] = field(default_factory=list)

    def verdict(self, counts: dict[str, int]) -> str:
        bad = sum(n for k, n in counts.items() if k not in ("passed", "not_applicable", "skipped"))
        ran = sum(counts.values())
        if not ran:
            return "not run"
        return (
            f"{counts.get('passed', 0)} of {ran - counts.get('not_applicable', 0)} cells hold"
            + (f", {bad} fail" if bad else "")
        )


def table_views(columns: list[Column], cases: list[CaseInfo], cells: Cells) -> list[TableView]:
    """Every table case of the model (a case id with a `[cell]` suffix), cells counted per column."""
    groups: dict[str, list[CaseInfo]] = {}
    for case in cases:
        head, bracket, _ = case.id.partition("[")
        if bracket and case.id.endswith("]"):
            groups.setdefault(head, []).append(case)
    run_order: dict[int, int] = {}  # case index -> when its first record was read (the run's order)
    for ci, _ in cells:
        run_order.setdefault(ci, len(run_order))
    views = []
    for table, members in sorted(groups.items()):
        counts = [(col, dict.fromkeys(OUTCOMES, 0)) for col in columns]
        failing = []
        for case in members:
            for col, per_outcome in counts:
                rec = cells.get((case.index, col.index))
                if rec is None:
                    continue
                outcome = str(rec.get("outcome", "error"))
                per_outcome[outcome] = per_outcome.get(outcome, 0) + 1
                if outcome not in ("passed", "not_applicable", "skipped", "xfailed"):
                    failing.append(
                        (
                            case.id[len(table) :],
                            col,
                            (str(rec.get("message") or outcome).splitlines() or [""])[0][:300],
                        )
                    )
        view = TableView(table, members[0].topic, len(members), counts, failing)
        view.members, view.ids = [c.index for c in members], [c.id for c in members]
        _lay_out_grid(view, table, sorted(members, key=lambda c: run_order.get(c.index, 0)))
        views.append(view)
    return views


def _lay_out_grid(view: TableView, table: str, members: list[CaseInfo]) -> None:
    """The row x column grid of a table whose cell ids are all `row|col`, axes in the order the cells
    ran (the order their data file lists them); a table of other ids gets none."""
    pairs = [case.id[len(table) + 1 : -1].split("|") for case in members]
    if not pairs or any(len(p) != 2 for p in pairs):
        return
    rows = list(dict.fromkeys(r for r, _ in pairs))
    cols = list(dict.fromkeys(c for _, c in pairs))
    where = {(r, c): case.index for (r, c), case in zip(pairs, members, strict=True)}
    view.rows, view.cols = rows, cols
    view.grid = [where.get((r, c), -1) for r in rows for c in cols]


# ---------------------------------------------------------------- loading


def result_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; a directory stands for every *.jsonl under it."""
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])
    return out


def load(paths: Iterable[str | Path]) -> tuple[list[Run], list[str]]:
    """The runs of these files, merged (`merging.merge_runs`: each cell once; conflicting runs are a
    `MergeConflict`), and what was wrong in them (`records.ReadProblem`s, `fatal` for a corrupt
    record or a file given by name that is not a results file; one found in a directory given is
    only skipped, with a warning: a directory may hold other *.jsonl)."""
    paths = list(paths)
    files = result_paths(paths)
    named = {Path(p) for p in paths if not Path(p).is_dir()}
    problems: list[str] = [f"{p}: no such file" for p in files if not p.is_file()]
    found: list[str] = []
    merged = merge_runs(load_runs([p for p in files if p.is_file()], found))
    runs = merged.runs
    if merged.differing:
        found.append(
            f"{plural(len(merged.differing), 'cell')} measured by two runs with different outcomes, the newest "
            f"record counted: {', '.join(merged.differing[:5])}"
            + (f" and {len(merged.differing) - 5} more" if len(merged.differing) > 5 else "")
        )
    for problem in found:
        if (
            problem.startswith("not a jax-conformance results file: ")
            and getattr(problem, "fatal", False)
            and not any(
                problem.startswith(f"not a jax-conformance results file: {p} ") for p in named
            )
        ):
            problem = ReadProblem.make(f"{problem}; skipped")
        if problem not in problems:
            problems.append(problem)
    return runs, problems


def fatal_problems(model: ReportModel) -> list[str]:
    """The problems that stop `jax-conformance report` unless --allow-partial: corrupt records, files
    that are not results."""
    return [p for p in model.problems if getattr(p, "fatal", False)]


def build_model(
    paths: Sequence[str | Path],
    baseline: Sequence[str | Path] = (),
    mutation: Path | None = None,
    checks: Path | None = None,
) -> ReportModel:
    """Merge result files into one model; `baseline` files are only compared against; `mutation` is a
    mutate score file; `checks` a report directory whose saved checks (`load_checks`) are shown."""
    runs, problems = load(paths)
    columns, cases, cells = _grid(runs)
    comparisons: list[Comparison] = []
    if baseline:
        base_runs, base_problems = load(baseline)
        problems += [f"baseline: {p}" for p in base_problems]
        base_cols, base_cases, base_cells = _grid(base_runs)
        comparisons.append(
            compare(
                _latest(columns, cases, cells),
                _latest(base_cols, base_cases, base_cells),
                f"{_describe(columns)} compared with the baseline {_describe(base_cols)}",
            )
        )
    else:
        comparisons.extend(_release_comparisons(columns, cases, cells))
    return ReportModel(
        columns=columns,
        cases=cases,
        cells=cells,
        problems=problems,
        comparisons=comparisons,
        compat=compat_tables(runs, columns, cases),
        docs_vs_code=docs_vs_code(columns, cases, cells),
        mutation=load_mutation(mutation) if mutation is not None else None,
        sources=sorted({r.source for r in runs}),
        inputs=[str(p) for p in paths],
        upcoming=upcoming_sections(columns, cases, cells),
        flags=flag_overview(columns),
        contracts=load_checks(checks) if checks is not None else [],
        runs=run_infos(runs),
    )


def load_checks(out: Path) -> list[CheckData]:
    """The checks `check --report OUT` saved in OUT/contract/, by file name; a file that holds none
    is left out."""
    found = [read_check(path) for path in sorted((out / "contract").glob("*.jsonl"))]
    return [data for data in found if data is not None]


def _grid(runs: list[Run]) -> tuple[list[Column], list[CaseInfo], Cells]:
    pending: list[tuple[Column, list[ResultRecord]]] = []
    for run in runs:
        h = run.header
        records = run.cases
        backends = (
            [str(b) for b in (h.get("backends") or [])]
            or sorted({str(r.get("backend")) for r in records if r.get("backend")})
            or ["?"]
        )
        by_backend: dict[str, list[ResultRecord]] = {b: [] for b in backends}
        for r in records:
            # Spec-file errors have no backend: they belong to the run, shown once in its first column.
            by_backend.setdefault(str(r.get("backend") or backends[0]), []).append(r)
        for backend, recs in by_backend.items():
            col = Column(
                index=-1,
                run_id=str(h.get("run_id", "?")),
                adapter=str(h.get("adapter") or "?"),
                version=str(h.get("implementation_version") or "?"),
                backend=backend,
                mode=mode_slug(h.get("mode")),
                source=run.source,
                interrupted=run.interrupted,
                end=run.end,
                collected=run.collected,
                environment=h.get("environment") or {},
                started=str(h.get("started", "")),
                status=str(h.get("status") or ""),
                reason=str(h.get("reason") or ""),
                flags=dict(h["mode"]["flags"]),
                flag_table=[dict(f) for f in h.get("flags") or [] if isinstance(f, dict)],
            )
            pending.append((col, recs))
    pending.sort(
        key=lambda cr: (
            cr[0].adapter,
            version_key(cr[0].version),
            cr[0].backend,
            *mode_key(cr[0].mode),
            cr[0].started,
        )
    )
    columns: list[Column] = []
    cases: dict[str, CaseInfo] = {}
    cells: Cells = {}
    labels: dict[str, int] = {}
    for col, recs in pending:
        col.index = len(columns)
        col.label = f"{col.adapter} {col.version} {col.backend} {col.mode}"
        labels[col.label] = labels.get(col.label, 0) + 1
        columns.append(col)
        for r in recs:
            cid = str(r.get("case", "?"))
            info = cases.get(cid)
            if info is None:
                info = cases[cid] = CaseInfo(
                    index=len(cases),
                    id=cid,
                    topic=str(r.get("topic") or cid.rpartition(".")[0] or "?"),
                )
            # Columns go oldest release first, so the newest record's wording wins.
            info.claim = str(r.get("claim") or info.claim)
            info.spec_file = str(r.get("spec_file") or info.spec_file)
            info.line = r.get("line") if r.get("line") is not None else info.line
            info.source = _sources(r.get("source")) or info.source
            info.tags = list(r.get("tags") or info.tags)
            info.basis = r.get("basis") if isinstance(r.get("basis"), str) else info.basis
            documented = r.get("documented")
            if isinstance(documented, dict):
                info.documented = {
                    "says": str(documented.get("says", "")),
                    "source": _sources(documented.get("source")),
                }
            tally(col.counts, r)
            if r.get("spec_error"):
                # the spec at fault: outside the compliance figure, never unexpected
                col.spec_errors += 1
            else:
                tally(
                    col.by_basis.setdefault(
                        r.get("basis") if isinstance(r.get("basis"), str) else None, {}
                    ),
                    r,
                )
            if differs_from_docs(r):
                col.docs_vs_code += 1
            cells[(info.index, col.index)] = r
    for col in columns:  # the same configuration run twice: tell the columns apart
        if labels[col.label] > 1:
            col.label += f" [{col.run_id[:6]}]"
    ordered = sorted(cases.values(), key=lambda c: (c.topic, c.id))
    remap = {c.index: i for i, c in enumerate(ordered)}
    for i, c in enumerate(ordered):
        c.index = i
    return columns, ordered, {(remap[ci], col): r for (ci, col), r in cells.items()}


def _sources(value: object) -> list[dict[str, object]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return []


def _describe(columns: list[Column]) -> str:
    by_adapter: dict[str, set[str]] = {}
    for c in columns:
        by_adapter.setdefault(c.adapter, set()).add(c.version)
    return (
        "; ".join(
            f"{a} {', '.join(sorted(v, key=version_key))}" for a, v in sorted(by_adapter.items())
        )
        or "nothing"
    )


# ---------------------------------------------------------------- views


Keyed = dict[tuple[str, str, str, str], ResultRecord]


def _latest(
    columns: list[Column], cases: list[CaseInfo], cells: Cells, version: str | None = None
) -> Keyed:
    """(adapter, backend, mode, case) -> record, from the newest release (or the one named)."""
    out: Keyed = {}
    for (ci, col), rec in cells.items():
        c = columns[col]
        if version is not None and c.version != version:
            continue
        # Columns are sorted by version, so a later column replaces an older release's record.
        out[(c.adapter, c.backend, c.mode, cases[ci].id)] = rec
    return out


def compare(current: Keyed, baseline: Keyed, title: str) -> Comparison:
    """What regressed, was fixed, is new or gone between two keyed record sets."""
    cmp = Comparison(title=title)
    for key in sorted(set(current) | set(baseline)):
        adapter, backend, mode, case = key
        now, before = current.get(key), baseline.get(key)
        after_o = now.get("outcome", "error") if now else ""
        before_o = before.get("outcome", "error") if before else ""
        either = now or before
        change = Change(
            case,
            adapter,
            backend,
            mode,
            before_o or "absent",
            after_o or "absent",
            str(either.get("message") or "") if either else "",
        )
        if before is None:
            cmp.new.append(change)
        elif now is None:
            cmp.gone.append(change)
        elif before_o == after_o:
            cmp.same += 1
        elif before_o in HOLDING and after_o not in HOLDING | INAPPLICABLE:
            cmp.regressed.append(change)
        elif after_o in HOLDING and before_o not in HOLDING | INAPPLICABLE:
            cmp.fixed.append(change)
        else:
            cmp.changed.append(change)
    return cmp


def _release_comparisons(
    columns: list[Column], cases: list[CaseInfo], cells: Cells
) -> list[Comparison]:
    """Without --baseline: each adapter's newest release against the one before it."""
    out = []
    for adapter in sorted({c.adapter for c in columns}):
        releases = sorted({c.version for c in columns if c.adapter == adapter}, key=version_key)
        if len(releases) < 2:
            continue
        new, old = releases[-1], releases[-2]
        cur = {k: v for k, v in _latest(columns, cases, cells, new).items() if k[0] == adapter}
        base = {k: v for k, v in _latest(columns, cases, cells, old).items() if k[0] == adapter}
        out.append(compare(cur, base, f"{adapter} {new} compared with {adapter} {old}"))
    return out


def compat_tables(
    runs: list[Run], columns: list[Column], cases: list[CaseInfo]
) -> list[ReleaseTable]:
    """Behaviour x release for each adapter run at two or more releases."""
    index = {c.id: c.index for c in cases}
    tables = []
    for adapter in sorted({c.adapter for c in columns}):
        if len({c.version for c in columns if c.adapter == adapter}) < 2:
            continue
        tables.append(_by_verdict(build_table(runs, adapter=adapter, sort=False), index))
    return tables


def _by_verdict(table: ReleaseTable, index: dict[str, int]) -> ReleaseTable:
    """The report shows verdicts only: rows whose verdict differs between releases first, then in case order."""
    table.rows.sort(key=lambda r: (not r.status_differs(table.versions), index[r.case]))
    return table


def differs_from_docs(record: Mapping[str, object]) -> bool:
    """The record's documented expectation failed while the code's expectation held."""
    documented = record.get("documented")
    return (
        isinstance(documented, dict)
        and documented.get("holds") is False
        and record.get("outcome") in HOLDING
    )


def docs_vs_code(
    columns: list[Column], cases: list[CaseInfo], cells: Cells
) -> list[DocsDifference]:
    """Every case whose documented expectation failed where the code's held, computed from the records.

    An entry appears for a release only where a record of it shows the difference, so entries come
    and go with the releases merged. `since` is the oldest merged release showing it, beside the
    newest older release where the documented expectation held.
    """
    differing: dict[int, dict[tuple[str, str], list[tuple[Column, str]]]] = {}
    # (case, adapter) -> releases where the docs held in every record
    held: dict[tuple[int, str], set[str]] = {}
    failed_docs: dict[tuple[int, str], set[str]] = {}
    for (ci, col), rec in sorted(cells.items()):
        documented = rec.get("documented")
        if not isinstance(documented, dict):
            continue
        c = columns[col]
        if documented.get("holds") is True:
            held.setdefault((ci, c.adapter), set()).add(c.version)
        else:
            failed_docs.setdefault((ci, c.adapter), set()).add(c.version)
        if differs_from_docs(rec):
            differing.setdefault(ci, {}).setdefault((c.adapter, c.version), []).append(
                (c, str(documented.get("message", "")))
            )
    out = []
    for ci in sorted(differing):
        releases = sorted(differing[ci].items(), key=lambda kv: (kv[0][0], version_key(kv[0][1])))
        since: dict[str, tuple[str, str]] = {}
        for (adapter, version), _ in releases:
            if adapter in since:
                continue
            earlier = [
                v
                for v in held.get((ci, adapter), set()) - failed_docs.get((ci, adapter), set())
                if version_key(v) < version_key(version)
            ]
            since[adapter] = (version, max(earlier, key=version_key) if earlier else "")
        out.append(DocsDifference(cases[ci], [(a, v, seen) for (a, v), seen in releases], since))
    return out


def load_mutation(path: Path) -> dict[str, object] | None:
    """The `mutation` record of a `mutate` file (records.read_mutation), read tolerantly: whatever
    keys it has are shown, missing ones are not."""
    problems: list[str] = []
    record = read_mutation(path, problems)
    if record is None:
        why = problems[0].split(": ", 1)[-1] if problems else "it holds no mutation record"
        return {"error": f"{path}: cannot read mutation results: {why}"}
    data: dict[str, Any] = dict(record)  # any keys: read tolerantly
    mutants = []
    for m in data.get("mutants") or []:
        if not isinstance(m, dict):
            continue
        killed_by = m.get("killed_by") or []
        mutants.append(
            {
                "name": str(m.get("name", "?")),
                "rule": str(m.get("rule", "")),
                "killed": m.get("killed") if isinstance(m.get("killed"), bool) else None,
                "killed_by": [
                    str(k) for k in (killed_by if isinstance(killed_by, list) else [killed_by])
                ],
                "explanation": str(m.get("explanation", "")),
            }
        )
    # Survivors first: they are the gaps in the suite.
    mutants.sort(key=lambda m: (m["killed"] is not False, m["name"]))
    extra = {
        k: v
        for k, v in data.items()
        if k not in ("record", "score", "mutants", "message_score")
        and isinstance(v, str | int | float)
    }
    extra.update(_message_lines(data.get("messages")))
    return {"score": str(data.get("score", "")), "mutants": mutants, "extra": extra}


def _message_lines(messages: object) -> dict[str, str]:
    """The message check of a mutation file (`mutate`'s `messages`) as lines of the mutation section:
    the score, then each weak pattern (case, pattern, the rewording it let through) and each loose
    one with its declared reason."""
    if not isinstance(messages, dict):
        return {}
    out = {
        "message score": f"{messages.get('score', '?')} raises/warns patterns strong "
        f"({messages.get('weak_count', '?')} weak, "
        f"{messages.get('loose_count', '?')} declared loose, {messages.get('unchecked', '?')} unchecked)"
    }
    for kind in ("weak", "loose"):
        for b in messages.get(kind) or []:
            if not isinstance(b, dict):
                continue
            shown = (b.get("let_through") or b.get("excused") or [{}])[0]
            why = f"declared loose: {b.get('loose')}; " if kind == "loose" else ""
            out[f"{kind} message pattern {b.get('case')} [{b.get('block')}]"] = (
                f"{why}/{shown.get('pattern', '')}/ let through {shown.get('kind', '')} "
                f"{shown.get('what', '')}: {shown.get('rewording', '')!r}"
            )
    return out
