"""Render a `ReportModel` as a static site that opens from disk: no server, no network.

Layout of `<out>/`:
    index.html                      the page (summary, comparisons, docs vs code, mutation: server-rendered)
    assets/<build>/report.css|js    static assets, copied from reports/static/
    assets/<build>/data.js          the case x column grid and the behaviour x release rows
    assets/<build>/detail/NNNN.js   per-case details (claim, sources, expected/actual, message),
                                    loaded on demand when a cell is opened
Data files are scripts, not JSON fetched at run time, because browsers refuse fetch() on file://.
Writing is atomic for a reader: a build is rendered into a temporary directory, renamed into
place, and only then does index.html (replaced with os.replace) start pointing at it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import jinja2
import markupsafe
from jax_conformance import REPORT_ASSETS
from jax_conformance.mode import counted_modes, mode_key
from jax_conformance.releases import (
    HOLDS,
    NOT_RUN,
    STATUSES,
    ReleaseTable,
    version_key,
)
from jax_conformance.report import contract_section
from jax_conformance.report.model import CODES, COUNTED_BASES, Column, ReportModel, TableView
from jax_conformance.text import percent

TEMPLATES = REPORT_ASSETS / "templates"
STATIC = REPORT_ASSETS / "static"
DETAIL_FIELDS = (
    "outcome",
    "message",
    "expected",
    "actual",
    "duration_s",
    "expect_line",
    "documented",
    "spec_error",
    "implementation_version",
    "behaviour_version",
    "isolate",
    "nodeid",
)
CHUNK_RECORDS = 400  # records per detail file: small enough to load on a click
SHOWN_CHANGES = 200  # per comparison section in the page; comparison.json has all
MAIN_PAYLOAD_BUDGET = 4_000_000  # bytes of data.js; claims are dropped from it beyond this
KEEP_BUILDS = 2  # the new build and the one a reader may still have open
# A release's status of a case as one letter in the page's behaviour x release table (report.js):
# holds, fails, partly, n/a; no record and an unavailable release are both `-`.
STATUS_CODES = dict(zip(STATUSES, "HFPN--", strict=True))


def _environment() -> jinja2.Environment:
    if not TEMPLATES.is_dir():
        raise FileNotFoundError(
            f"report templates not found in {TEMPLATES} (the reports/ folder of a jax-conformance checkout)"
        )
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["safe_url"] = safe_url
    # a column's compliance as a percentage that never reads 100.0% while a cell fails
    env.filters["pct"] = lambda column: percent(*column.share(COUNTED_BASES))
    env.filters["outcome_label"] = lambda o: str(o).replace("_", " ")
    env.filters["breakable"] = breakable
    env.filters["since_text"] = since_text
    return env


def breakable(mode: object) -> markupsafe.Markup:
    """A mode's name that a narrow column may break after each `+` and `_` and nowhere else (not at
    its `-`): each piece between two break points is kept whole."""
    pieces = re.findall(r"[^+_]+[+_]?|[+_]", str(mode))
    return markupsafe.Markup("<wbr>").join(
        markupsafe.Markup('<span class="nobr">%s</span>') % piece for piece in pieces
    )


def since_text(since: Mapping[str, tuple[str, str]]) -> str:
    """A docs-vs-code difference's first release per adapter, in words."""
    return "; ".join(
        f"{adapter} {first}"
        + (
            f" (the docs held in {held})"
            if held
            else " or earlier (no earlier release merged shows the docs holding)"
        )
        for adapter, (first, held) in since.items()
    )


def since_once(model: ReportModel) -> str:
    """The docs-vs-code table's "since" when every row has the same one (one release merged): said once."""
    texts = {since_text(d.since) for d in model.docs_vs_code}
    return texts.pop() if len(texts) == 1 else ""


def file_records(model: ReportModel) -> int:
    """Records in the result files read: the case records and each run's header, collected count and end."""
    runs: dict[str, Column] = {}
    for c in model.columns:
        runs.setdefault(c.run_id, c)
    return model.records + sum(
        1 + (c.collected is not None) + (c.end is not None) for c in runs.values()
    )


# Where a report looks for a spec file a record names (relative to the directory it ran in): the
# directory the report is built in, then the checkout or installed package holding the specs.
ROOTS = (Path.cwd, lambda: REPORT_ASSETS.parent)


def local_uri(path: str | None) -> str:
    """A file:// link to a spec or expectations file when it is on this machine, else "".

    Absolute: the report is opened both as reports/runs/<time>/ and through the reports/latest
    link, where one relative path cannot reach the checkout from both."""
    if not path:
        return ""
    p = Path(path)
    for candidate in [p] if p.is_absolute() else [root() / p for root in ROOTS]:
        try:
            if candidate.is_file():
                return candidate.resolve().as_uri()
        except OSError:
            continue
    return ""


def safe_url(url: object) -> str:
    """Only http(s) links leave the page; anything else (javascript:, data:) is dropped."""
    text = str(url or "")
    return text if text.startswith(("https://", "http://")) else ""


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=repr)


@dataclass
class Headline:
    """The report's first line for one implementation and release: does it conform, and how far to trust that."""

    adapter: str
    version: str
    backends: list[str]
    modes: list[str]
    conform: int  # applicable documented/tested cells whose behaviour holds
    applicable: int
    # cells failed, error, crashed, timeout or xpassed (spec errors aside: `spec_errors`)
    unexpected: int
    divergences: int  # known divergences (xfailed cells)
    # cases whose documented expectation fails where the code's holds, in this release
    docs_vs_code: int
    incomplete: list[str]  # column labels of runs that did not finish (or could not run)
    runs: int
    observed: int = 0  # applicable cells of observed-only cases: shown, not counted
    unsupported: int = 0  # applicable cells of behaviour JAX disowned: never counted
    flagged: list[str] = field(
        default_factory=list
    )  # modes with flags beside modes without: in the upcoming section, not counted
    # conforming cells whose code expectation held where the documented one failed
    docs_cells: int = 0
    expectations: str = (
        ""  # a link to the adapter's expectations file (its known divergences), where it is here
    )
    # cells whose spec is at fault (it does not load, or its own code fails): counted apart, never
    # unexpected
    spec_errors: int = 0
    # the docs-vs-code rows (things the docs say) of this release, as the section groups them
    docs_rules: int = 0

    @property
    def expectations_name(self) -> str:
        return f"specs/expectations/{self.adapter}.yaml"

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.incomplete and self.applicable > 0

    @property
    def share(self) -> str:
        return percent(self.conform, self.applicable)


def headlines(model: ReportModel) -> list[Headline]:
    """One headline per (adapter, release), oldest release first within an adapter."""
    groups: dict[tuple[str, str], list[Column]] = {}
    for c in model.columns:
        groups.setdefault((c.adapter, c.version), []).append(c)
    out = []
    for (adapter, version), every in sorted(
        groups.items(), key=lambda kv: (kv[0][0], version_key(kv[0][1]))
    ):
        # The release as users get it: modes that set no other flag. Modes with flags beside them
        # preview JAX's upcoming defaults (their own section); alone, they are what was asked.
        counted = counted_modes(c.mode for c in every)
        cols = [c for c in every if c.mode in counted]
        flagged = (
            sorted({c.mode for c in every if "+" in c.mode}, key=mode_key)
            if len(cols) < len(every)
            else []
        )
        conform = applicable = observed = unsupported = 0
        for c in cols:
            h, a = c.share(COUNTED_BASES)
            conform, applicable = conform + h, applicable + a
            observed += c.observed[1]
            unsupported += c.unsupported[1]
        diffs = sum(
            1
            for d in model.docs_vs_code
            if any(a == adapter and v == version for a, v, _ in d.releases)
        )
        out.append(
            Headline(
                adapter,
                version,
                sorted({c.backend for c in cols}),
                sorted({c.mode for c in cols}, key=mode_key),
                conform,
                applicable,
                sum(c.unexpected for c in cols),
                sum(c.counts.get("xfailed", 0) for c in cols),
                diffs,
                [c.label for c in cols if c.interrupted or c.status in NOT_RUN],
                len(cols),
                observed,
                unsupported,
                flagged,
                sum(c.docs_vs_code for c in cols),
                local_uri(f"specs/expectations/{adapter}.yaml"),
            )
        )
        out[-1].spec_errors = sum(c.spec_errors for c in cols)
        out[-1].docs_rules = sum(
            any(a == adapter and v == version for a, v, _ in rule.releases)
            for rule in model.docs_rules
        )
    return out


class CompatJSON(TypedDict):
    """One behaviour x release table as the page's data holds it (`compat_json`)."""

    adapter: str
    releases: list[str]
    # [case index, a status letter per release, first release it holds, first release it changed in]
    rows: list[list[int | str]]


class TableJSON(TypedDict):
    """A table case as the page's data holds it: its cells' case indices and their grid (`table_json`)."""

    id: str
    members: list[int]  # the cells' case indices: one matrix row for them all
    rows: list[str]
    cols: list[str]
    grid: list[int]  # row-major case index per (row, col), -1 where none


def table_json(view: TableView) -> TableJSON:
    """One table for the page; a table whose cell ids are not `row|col` pairs is drawn one cell a row."""
    if view.rows:
        rows, cols, grid = view.rows, view.cols, view.grid
    else:
        rows, cols, grid = [c[len(view.table) :] for c in view.ids], [""], view.members
    return {"id": view.table, "members": view.members, "rows": rows, "cols": cols, "grid": grid}


class PagePayload(TypedDict):
    """The first page's data (`payload`), in the order the page's script reads it."""

    codes: dict[str, str]
    columns: list[dict[str, object]]
    topics: list[str]
    cases: list[list[int | str]]  # [id, topic index, claim, basis]
    grid: list[str]
    chunkStarts: list[int]
    claims: bool
    compat: list[CompatJSON]
    tables: list[TableJSON]  # in the order of the page's Tables section


def compat_json(table: ReleaseTable, model: ReportModel) -> CompatJSON:
    """One behaviour x release table for the page: per row the case's index, a letter per release, the
    first release it holds and the first whose verdict, expect block or observed behaviour differs
    from the release before it ("" where none does)."""
    index = {c.id: c.index for c in model.cases}
    order = table.versions
    return {
        "adapter": table.adapter,
        "releases": order,
        "rows": [
            [
                index[r.case],
                "".join(STATUS_CODES[r.cells[v]] for v in order),
                r.first(HOLDS, order) or "",
                next(iter(r.changed_in(order)), ""),
            ]
            for r in table.rows
        ],
    }


def payload(model: ReportModel, chunk_starts: list[int]) -> PagePayload:
    """The first page's data: everything the matrix and filters need, nothing a click can fetch later."""
    data: PagePayload = {
        "codes": {v: k for k, v in CODES.items()},
        "columns": [c.to_json() for c in model.columns],
        "topics": model.topics,
        "cases": [],
        "grid": model.grid(),
        "chunkStarts": chunk_starts,
        "claims": True,
        "compat": [compat_json(t, model) for t in model.compat],
        "tables": [table_json(t) for t in model.tables],
    }
    topic_index = {t: i for i, t in enumerate(data["topics"])}
    data["cases"] = [[c.id, topic_index[c.topic], c.claim, c.basis or ""] for c in model.cases]
    if len(_dump(data)) > MAIN_PAYLOAD_BUDGET:
        # A very wide merge: keep the first page light; claims stay in the detail files.
        data["claims"] = False
        data["cases"] = [[c.id, topic_index[c.topic], "", c.basis or ""] for c in model.cases]
    return data


def detail_chunks(model: ReportModel) -> tuple[list[int], list[dict[str, dict[str, object]]]]:
    """Split the case details into files of about CHUNK_RECORDS records, by case order."""
    per_case: dict[int, dict[int, dict[str, object]]] = {}
    for (ci, col), record in model.cells.items():
        rec: Mapping[str, object] = record  # the fields shown are named at run time (DETAIL_FIELDS)
        per_case.setdefault(ci, {})[col] = {k: rec[k] for k in DETAIL_FIELDS if k in rec}
    starts: list[int] = []
    chunks: list[dict[str, dict[str, object]]] = []
    hrefs: dict[str, str] = {}
    size = CHUNK_RECORDS
    for case in model.cases:
        records = per_case.get(case.index, {})
        if size + len(records) > CHUNK_RECORDS and (not chunks or chunks[-1]):
            starts.append(case.index)
            chunks.append({})
            size = 0
        size += len(records)
        chunks[-1][str(case.index)] = {
            "id": case.id,
            "topic": case.topic,
            "claim": case.claim,
            "spec_file": case.spec_file,
            "spec_href": hrefs.setdefault(case.spec_file, local_uri(case.spec_file)),
            "line": case.line,
            "source": case.source,
            "tags": case.tags,
            "basis": case.basis,
            "documented": case.documented,
            "records": {str(col): r for col, r in sorted(records.items())},
        }
    return starts, chunks


def render(model: ReportModel, out: Path, title: str = "JAX conformance report") -> Path:
    """Write the site into `out` (created if needed); returns the path of index.html."""
    out.mkdir(parents=True, exist_ok=True)
    assets = out / "assets"
    assets.mkdir(exist_ok=True)
    build = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    tmp = assets / f".tmp-{build}"
    tmp.mkdir()
    try:
        starts, chunks = detail_chunks(model)
        (tmp / "detail").mkdir()
        for n, chunk in enumerate(chunks):
            (tmp / "detail" / f"{n:04d}.js").write_text(
                f"window.__reportDetail({n},{_dump(chunk)});\n", encoding="ascii"
            )
        data = payload(model, starts)
        (tmp / "data.js").write_text(f"window.REPORT_DATA={_dump(data)};\n", encoding="ascii")
        for asset in STATIC.iterdir():
            if asset.is_file():
                shutil.copy2(asset, tmp / asset.name)
        (tmp / "comparison.json").write_text(
            _dump(
                [
                    {
                        "title": c.title,
                        **{name: [vars(ch) for ch in items] for name, _, items in c.sections()},
                    }
                    for c in model.comparisons
                ]
            ),
            encoding="ascii",
        )
        page = (
            _environment()
            .get_template("index.html.j2")
            .render(
                title=title,
                model=model,
                build=f"assets/{build}",
                claims=data["claims"],
                verdicts=headlines(model),
                generated=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                file_records=file_records(model),
                since_once=since_once(model),
                shown_changes=SHOWN_CHANGES,
                interrupted=[c for c in model.columns if c.interrupted],
                results_link="results.jsonl" if (out / "results.jsonl").is_file() else "",
                your_rules=contract_section.render_section(model.contracts),
            )
        )
        os.rename(tmp, assets / build)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    index = out / "index.html"
    staged = out / f".index-{build}.html"
    staged.write_text(page, encoding="utf-8")
    os.replace(staged, index)
    _prune(assets, keep=build)
    return index


def _prune(assets: Path, keep: str) -> None:
    """Drop old builds (keeping the newest few, which a reader may still have open) and stale temporaries."""
    builds = sorted(
        (p for p in assets.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: p.name,
    )
    for old in builds[:-KEEP_BUILDS]:
        if old.name != keep:
            shutil.rmtree(old, ignore_errors=True)
    for stale in assets.glob(".tmp-*"):
        # Another render may be writing right now; only leftovers of a crashed one go.
        if time.time() - stale.stat().st_mtime > 3600:
            shutil.rmtree(stale, ignore_errors=True)


def first_page_bytes(index: Path) -> int:
    """Bytes a browser loads before any click: the page, its CSS and JS, and data.js."""
    text = index.read_text(encoding="utf-8")
    start = text.index('data-build="') + len('data-build="')
    build = index.parent / text[start : text.index('"', start)]
    return index.stat().st_size + sum(
        (build / n).stat().st_size for n in ("data.js", "report.js", "report.css")
    )
