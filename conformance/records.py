"""Result files and the typed contracts between the processes of a run (docs/RUNNER.md, section 7).

A results file is JSON lines: a `run` record (`RunHeader`), a `collected` record, one `case`
record (`ResultRecord`) per case and backend, each written whole as soon as it is known, and an
`end` record (`EndRecord`); a file without `end` is an interrupted run. A worker judges a case
into a `Verdict`; an adapter describes itself with an `AdapterInfo`. These are TypedDicts: the
JSON stays plain objects, the types say which fields every writer and reader can rely on.

`behaviour_version`, the one rule: an adapter's `info()` may leave it out (it then models its own
release); `adapter_info` fills it in from `implementation_version` where the parent first reads the
info, so every `AdapterInfo`, `RunHeader` and case record written by the plugin has it. Records
written for a mode that never ran a case (a harness note, a collection error) may lack it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, cast, get_args

from jax_conformance import CHECKOUT, __version__

Outcome = Literal["passed", "failed", "error", "skipped", "not_applicable", "xfailed", "xpassed", "crashed", "timeout"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
# Outcomes that make a run fail (exit status 1).
UNEXPECTED = frozenset({"failed", "error", "xpassed", "crashed", "timeout"})
# The fields every case record has (docs/RUNNER.md, section 7).
CASE_FIELDS = ("case", "spec_file", "line", "adapter", "implementation_version", "backend", "mode",
               "outcome", "message", "expected", "actual", "duration_s")
MAX_MESSAGE = 20_000
# How a case got its fresh process (docs/RUNNER.md, "The process of an isolated case").
Isolation = Literal["fork-full", "fork-light", "spawn"]


class ModeJSON(TypedDict):
    """A mode as records hold it (`Mode.to_json`)."""

    x64: bool
    explicit_x64_dtypes: str
    flags: NotRequired[dict[str, Any]]  # the other JAX flags the mode sets; absent in files written before flags


class AdapterInfo(TypedDict):
    """What an adapter says about itself (`Adapter.info()`, the worker's reply to `hello`)."""

    adapter: str
    implementation_version: str
    behaviour_version: str  # the JAX release it is or models; see the module docstring
    backends: list[str]
    environment: dict[str, Any]  # free-form: versions, platform, devices; `notes` (list[str]) are shown
    flags: NotRequired[list[FlagInfo]]  # the flags the implementation has (docs/RUNNER.md, "Flags")


class FlagInfo(TypedDict):
    """One flag an adapter reports: JAX's config option, or one the reference models."""

    name: str
    default: Any  # None when the mode set it, so the default could not be seen in the worker
    value: Any  # in effect in the worker
    upgrade: bool  # JAX marks it an upgrade: True is the incoming behaviour, False the outgoing one
    help: str


class DocumentedCheck(TypedDict):
    """The same observation judged against the case's `documented` block (never the outcome)."""

    holds: bool
    line: int
    message: str


class DocumentedRecord(DocumentedCheck):
    """`documented` in a case record: the check, with what the docs say and where."""

    says: str
    source: list[Any]


class Verdict(TypedDict):
    """What the worker (or, for a crash or hang, the parent) concludes about one case on one backend."""

    outcome: Outcome
    message: str
    expected: Any  # the chosen expect block (its JSON), or None
    actual: Any  # what was observed (`describe_observation`), or None
    duration_s: float
    spec_error: NotRequired[bool]  # the spec, not the implementation, is at fault
    documented: NotRequired[DocumentedCheck]
    mismatches: NotRequired[list[str]]  # the block's keys that did not hold
    example: NotRequired[dict[str, str]]  # the falsifying example of a `given` case
    leaked: NotRequired[dict[str, Any]]  # process-wide state the case changed
    isolation: NotRequired[Isolation]  # set by the parent for an `isolate: process` case


class RunHeader(TypedDict):
    """`{"record": "run"}`: the first record of a mode's results."""

    record: Literal["run"]
    run_id: str
    started: str
    adapter: str | None
    implementation_version: str
    behaviour_version: NotRequired[str]  # absent only in a note for a mode that died before its header
    mode: ModeJSON | dict[str, Any]
    backends: list[str]
    environment: dict[str, Any]
    flags: NotRequired[list[FlagInfo]]  # the adapter's flag table, values in effect in this mode
    hypothesis: NotRequired[dict[str, Any]]
    argv: NotRequired[list[str]]
    status: NotRequired[str]  # compat: `unavailable` or `error` for a release that could not run
    reason: NotRequired[str]
    written_by: NotRequired[str]  # set when not the plugin (`jax-conformance run`'s notes)


class CollectedRecord(TypedDict):
    """`{"record": "collected"}`: how many items the run collected."""

    record: Literal["collected"]
    run_id: str
    count: int


class ResultRecord(TypedDict):
    """`{"record": "case"}`: one case on one backend in one mode (a spec file that does not load,
    or a mode's process that failed, is one such record too, with `case` in angle brackets)."""

    record: Literal["case"]
    run_id: str | None
    case: str
    spec_file: str
    line: int
    adapter: str | None
    implementation_version: str | None
    backend: str | None
    mode: ModeJSON | dict[str, Any]
    outcome: Outcome
    message: str
    expected: Any
    actual: Any
    duration_s: float
    topic: NotRequired[str]
    claim: NotRequired[str]
    tags: NotRequired[list[str]]
    behaviour_version: NotRequired[str]  # every record of a case that ran; see the module docstring
    expect_line: NotRequired[int | None]
    source: NotRequired[Any]
    nodeid: NotRequired[str]
    basis: NotRequired[str | None]  # documented, tested, observed, unsupported, or None
    spec_error: NotRequired[bool]
    documented: NotRequired[DocumentedRecord]
    isolate: NotRequired[str]
    isolation: NotRequired[Isolation]
    written_by: NotRequired[str]


class EndRecord(TypedDict):
    """`{"record": "end"}`: how the run ended; its absence means the run was cut off."""

    record: Literal["end"]
    run_id: str | None
    finished: str
    exitstatus: int | None
    interrupted: bool
    counts: dict[str, int]
    status: NotRequired[str]
    reason: NotRequired[str]
    written_by: NotRequired[str]


Record = RunHeader | CollectedRecord | ResultRecord | EndRecord


def adapter_info(raw: Mapping[str, Any]) -> AdapterInfo:
    """An adapter's `info()` as an AdapterInfo: the one place `behaviour_version` gets its default."""
    version = str(raw["implementation_version"])
    info = {**raw, "adapter": str(raw.get("adapter", "")), "implementation_version": version,
            "behaviour_version": str(raw.get("behaviour_version") or version),
            "backends": [str(b) for b in raw["backends"]], "environment": dict(raw.get("environment") or {})}
    return cast(AdapterInfo, info)  # extra keys an adapter adds are kept


def now() -> str:
    """The time now, UTC, to the second (ISO 8601), as records write it."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def git_revision(root: Path | None = None) -> str | None:
    """The checkout's commit (None outside a checkout or without git), for a run header."""
    root = root or CHECKOUT
    if root is None:
        return None
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def new_run_id() -> str:
    """A fresh run id: every record of one mode's run carries it."""
    return uuid.uuid4().hex[:12]


def encode(record: Mapping[str, Any]) -> bytes:
    """One record as one line; oversized messages are cut with a note so a line stays bounded."""
    msg = record.get("message")
    if isinstance(msg, str) and len(msg) > MAX_MESSAGE:
        record = {**record, "message": msg[:MAX_MESSAGE] + f"\n[... message cut: {len(msg) - MAX_MESSAGE:,} more characters]"}
    text = json.dumps(record, default=repr, ensure_ascii=False, separators=(",", ":"))
    if len(text) > 4 * MAX_MESSAGE:
        for key in ("actual", "expected"):
            if key in record:
                record = {**record, key: {"cut": f"{len(json.dumps(record[key], default=repr)):,} characters of {key} were not kept"}}
        text = json.dumps(record, default=repr, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate (a YAML "\ud800" in a claim) must not make the line unwritable.
    return (text + "\n").encode("utf-8", "backslashreplace")


class ResultsWriter:
    """Appends records with one write() each, so a killed run leaves only whole lines behind."""

    def __init__(self, path: Path | str, truncate: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0)
        self._fd: int | None = os.open(self.path, flags, 0o644)

    def write(self, record: Mapping[str, Any]) -> None:
        if self._fd is None:
            return
        data = encode(record)
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class Run:
    """One run's header, its case records, and how it ended."""

    header: RunHeader
    cases: list[ResultRecord] = field(default_factory=list)
    end: EndRecord | None = None
    source: str = ""
    problems: list[str] = field(default_factory=list)
    collected: int | None = None  # items the run collected, when it got that far

    @property
    def interrupted(self) -> bool:
        return self.end is None or bool(self.end.get("interrupted"))

    @property
    def key(self) -> tuple[str, str, str, str]:
        h = self.header
        mode = h.get("mode", {})
        return (h.get("adapter") or "?", h.get("implementation_version", "?"), ",".join(h.get("backends", [])),
                f"{'on' if mode.get('x64') else 'off'}-{mode.get('explicit_x64_dtypes', 'warn')}")


def read_records(path: Path | str) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """(line number, record or None, problem) for every line; a torn last line is reported, not fatal.

    The records are the JSON as written (`Record` says what each kind holds); `load_runs` sorts them into runs.
    """
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, None, f"{path}:{number}: not a JSON record ({exc.msg}); the run was probably cut off while writing it"
                continue
            if not isinstance(record, dict):
                yield number, None, f"{path}:{number}: a record is a JSON object"
                continue
            yield number, record, ""


def load_runs(paths: Iterable[Path | str]) -> list[Run]:
    """Every run in these files (a file may hold several, e.g. a merged results.jsonl).

    A record of a kind this version does not know is skipped; `Run.cases` holds only case records.
    """
    runs: list[Run] = []
    for path in paths:
        by_id: dict[str, Run] = {}
        current: Run | None = None
        problems: list[str] = []
        for _, record, problem in read_records(path):
            if record is None:
                problems.append(problem)
                continue
            kind = record.get("record", "case")
            if kind == "run":
                current = Run(header=cast(RunHeader, record), source=str(path))
                by_id[record.get("run_id", str(len(by_id)))] = current
                continue
            run = by_id.get(record.get("run_id", "")) or current
            if run is None:  # case records before any header: a header made from the first of them
                header = {"record": "run", "run_id": record.get("run_id", "unknown"), "adapter": record.get("adapter"),
                          "implementation_version": record.get("implementation_version"),
                          "mode": record.get("mode", {}), "backends": [record.get("backend")]}
                run = current = Run(header=cast(RunHeader, header), source=str(path))
                by_id[run.header["run_id"]] = run
            if kind == "end":
                run.end = cast(EndRecord, record)
            elif kind == "collected":
                run.collected = int(record.get("count", 0))
            elif kind == "case":
                run.cases.append(cast(ResultRecord, record))
        for run in by_id.values():
            run.problems = problems
        runs.extend(by_id.values())
    return runs


def is_case(record: Mapping[str, Any]) -> bool:
    """A case record (a record without a kind is one: the oldest files wrote none)."""
    return record.get("record", "case") == "case"


def tally(into: dict[str, int], record: Mapping[str, Any]) -> None:
    """Count one record's outcome into `into` (a case record without an outcome counts as `error`)."""
    if is_case(record):
        outcome = record.get("outcome") or "error"
        into[outcome] = into.get(outcome, 0) + 1


def counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Outcome -> how many case records have it, in the order first seen; outcomes never seen are absent.

    Other records (`run`, `collected`, `end`) are not counted. The `end` record's `counts` is this.
    """
    out: dict[str, int] = {}
    for record in records:
        tally(out, record)
    return out


def suite_info() -> dict[str, Any]:
    """The suite's version and git revision, for a run header's environment."""
    return {"suite_version": __version__, "git_revision": git_revision()}


# ---- readers used by the mode runner


def read_appended(path: Path | str, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The whole records written to `path` after byte `offset`, and the offset to read on from. A
    line still being written is left for the next call; a line that is not a record is skipped."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    whole = data[: data.rfind(b"\n") + 1]
    records = []
    for line in whole.splitlines():
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(record, dict):
            records.append(record)
    return records, offset + len(whole)
