"""Result files and the typed contracts between the processes of a run (docs/RUNNER.md, section 7).

A results file is JSON lines: a `description` record (`RunDescription`: machine, build, specs,
shard), a `run` record (`RunHeader`, with the format's `version`), a
`collected` record, one `case` record (`ResultRecord`) per case and backend, each written whole as
soon as it is known, and an `end` record (`EndRecord`); a file without `end` is an interrupted run.
A worker judges a case into a `Verdict`; an adapter describes itself with an `AdapterInfo`. These
are TypedDicts: the JSON stays plain objects, the types say which fields every writer and reader
can rely on.

This module is the one record layer: every record reaches a file through `encode` (via
`ResultsWriter`, or `launch.scheduler.merge`), and every reader reads through `read_records`
(typed records), `load_runs` (records sorted into runs) or `RecordTail` (a file still growing).
The records the harness writes for a mode that could not write its own are built here too
(`harness_header`, `harness_end`, `unavailable`; `launch.service.closing_records` chooses them).

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    NotRequired,
    Required,
    TypeAlias,
    TypedDict,
    Union,
    cast,
    get_args,
)

from jax_conformance import CHECKOUT, __version__
from jax_conformance.text import RECORD_MESSAGE_CHARS, cut

if TYPE_CHECKING:
    from jax_conformance.protocol import ProgramObservation

Outcome = Literal[
    "passed",
    "failed",
    "error",
    "skipped",
    "not_applicable",
    "xfailed",
    "xpassed",
    "crashed",
    "timeout",
]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
# Outcomes that make a run fail (exit status 1).
UNEXPECTED = frozenset({"failed", "error", "xpassed", "crashed", "timeout"})
# The fields every case record has (docs/RUNNER.md, section 7).
CASE_FIELDS = (
    "case",
    "spec_file",
    "line",
    "adapter",
    "implementation_version",
    "backend",
    "mode",
    "outcome",
    "message",
    "expected",
    "actual",
    "duration_s",
)
# The result file format's version, in every run header (`version`): a reader can tell which
# fields it may rely on. Bump it when a record's fields change meaning (docs/RUNNER.md, section 7),
# and bring the older shape up to date in `upgrade`, the one place that knows older files.
# 2: every `mode` carries `flags` (1, and files from before `version`, may lack it).
FORMAT_VERSION = 2
# A record whose JSON is longer than this has its `actual` and `expected` replaced by a note.
MAX_RECORD_CHARS = 4 * RECORD_MESSAGE_CHARS
# A flag's value, or a setting, as JSON holds it.
JSONScalar = bool | int | float | str | None
# A JSON value of open shape (what json.loads returns, what a YAML spec parses to).
JSON: TypeAlias = bool | int | float | str | None | list["JSON"] | dict[str, "JSON"]
# How a case got its fresh process (docs/RUNNER.md, "The process of an isolated case").
Isolation = Literal["fork-full", "fork-light", "spawn"]


class ModeJSON(TypedDict):
    """A mode as records hold it (`Mode.to_json`)."""

    x64: bool
    explicit_x64_dtypes: str
    # the other JAX flags the mode sets (`upgrade` fills it in older files)
    flags: dict[str, JSONScalar]


class AdapterInfo(TypedDict):
    """What an adapter says about itself (`Adapter.info()`, the worker's reply to `hello`)."""

    adapter: str
    implementation_version: str
    behaviour_version: str  # the JAX release it is or models; see the module docstring
    backends: list[str]
    # free-form: versions, platform, devices; `notes` (list[str]) are shown. Left untyped: each
    # adapter writes its own keys, and the plugin's header lines read `notes` as the list it is.
    environment: dict[str, Any]
    flags: NotRequired[list[FlagInfo]]  # the flags the implementation has (docs/RUNNER.md, "Flags")


class FlagInfo(TypedDict):
    """One flag an adapter reports: JAX's config option, or one the reference models."""

    name: str
    default: JSONScalar  # None when the mode set it, so the default could not be seen in the worker
    value: Any  # in effect in the worker (plugin.session.check_flags reads it as a FlagValue)
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
    source: list[dict[str, str]]  # `spec.loader` sources: url, and what it shows


class Verdict(TypedDict):
    """What the worker (or, for a crash or hang, the parent) concludes about one case on one backend."""

    outcome: Outcome
    message: str
    expected: object  # the chosen expect block (its JSON), or None
    actual: object  # what was observed (`describe_observation`), or None
    duration_s: float
    spec_error: NotRequired[bool]  # the spec, not the implementation, is at fault
    documented: NotRequired[DocumentedCheck]
    mismatches: NotRequired[list[str]]  # the block's keys that did not hold
    example: NotRequired[dict[str, str]]  # the falsifying example of a `given` case
    leaked: NotRequired[dict[str, object]]  # process-wide state the case changed
    isolation: NotRequired[Isolation]  # set by the parent for an `isolate: process` case
    jit_trace: NotRequired[int]  # its jit paths ran in one trace with this many cells of its table


class RunHeader(TypedDict):
    """`{"record": "run"}`: the first record of a mode's results."""

    record: Literal["run"]
    version: NotRequired[int]  # FORMAT_VERSION, set by the writer (`encode`)
    run_id: str
    started: str
    adapter: str | None
    implementation_version: str
    # absent only in a note for a mode that died before its header
    behaviour_version: NotRequired[str]
    mode: ModeJSON
    backends: list[str]
    environment: dict[str, Any]  # as AdapterInfo's
    flags: NotRequired[list[FlagInfo]]  # the adapter's flag table, values in effect in this mode
    hypothesis: NotRequired[dict[str, JSONScalar]]  # the settings the run's `given` cases used
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
    mode: ModeJSON
    outcome: Outcome
    message: str
    expected: object
    actual: object
    duration_s: float
    topic: NotRequired[str]
    claim: NotRequired[str]
    tags: NotRequired[list[str]]
    behaviour_version: NotRequired[str]  # every record of a case that ran; see the module docstring
    expect_line: NotRequired[int | None]
    source: NotRequired[list[dict[str, str]]]
    nodeid: NotRequired[str]
    basis: NotRequired[str | None]  # documented, tested, observed, unsupported, or None
    spec_error: NotRequired[bool]
    documented: NotRequired[DocumentedRecord]
    isolate: NotRequired[str]
    isolation: NotRequired[Isolation]
    jit_trace: NotRequired[int]
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


def adapter_info(raw: Mapping[str, object]) -> AdapterInfo:
    """An adapter's `info()` as an AdapterInfo: the one place `behaviour_version` gets its default."""
    version = str(raw["implementation_version"])
    info = {
        **raw,
        "adapter": str(raw.get("adapter", "")),
        "implementation_version": version,
        "behaviour_version": str(raw.get("behaviour_version") or version),
        "backends": [str(b) for b in _iterable(raw["backends"], "backends")],
        "environment": dict(_mapping(raw.get("environment") or {}, "environment")),
    }
    return cast(AdapterInfo, info)  # extra keys an adapter adds are kept


def _iterable(value: object, name: str) -> Iterable[object]:
    if not isinstance(value, Iterable):
        raise TypeError(f"an adapter's info: {name} is {type(value).__name__}, not a list")
    return value


def _mapping(value: object, name: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise TypeError(f"an adapter's info: {name} is {type(value).__name__}, not a mapping")
    return value


def now() -> str:
    """The time now, UTC, to the second (ISO 8601), as records write it."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def git_revision(root: Path | None = None) -> str | None:
    """The checkout's commit (None outside a checkout or without git), for a run header."""
    root = root or CHECKOUT
    if root is None:
        return None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def new_run_id() -> str:
    """A fresh run id: every record of one mode's run carries it."""
    return uuid.uuid4().hex[:12]


def encode(record: Record | Mapping[str, object]) -> bytes:
    """One record as one line, the only way a record reaches a file: a run header gets the format
    `version`, an oversized message is cut with a note and oversized `actual`/`expected` replaced
    by one, so a line stays bounded, and a lone surrogate cannot make the line unwritable."""
    fields: dict[str, object] = dict(record)
    if fields.get("record") == "run":
        fields.setdefault("version", FORMAT_VERSION)
    msg = fields.get("message")
    if isinstance(msg, str):
        fields["message"] = cut(msg, RECORD_MESSAGE_CHARS, "message")
    text = json.dumps(fields, default=repr, ensure_ascii=False, separators=(",", ":"))
    if len(text) > MAX_RECORD_CHARS:
        for key in ("actual", "expected"):
            if key in fields:
                fields[key] = {
                    "cut": f"{len(json.dumps(fields[key], default=repr)):,} characters of {key} were not kept"
                }
        text = json.dumps(fields, default=repr, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate (a YAML "\ud800" in a claim) is written as its escape.
    return (text + "\n").encode("utf-8", "backslashreplace")


class ResultsWriter:
    """Appends records with one write() each, so a killed run leaves only whole lines behind."""

    def __init__(self, path: Path | str, truncate: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if truncate else 0)
        self._fd: int | None = os.open(self.path, flags, 0o644)

    def write(self, record: Record | Mapping[str, object]) -> None:
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
    description: RunDescription | None = None  # its `description` record (None in older files)

    @property
    def interrupted(self) -> bool:
        return self.end is None or bool(self.end.get("interrupted"))


# ---------------------------------------------------------------- reading

KINDS = frozenset(get_args(Literal["run", "collected", "case", "end"]))


def parse_record(line: bytes | str, kinds: frozenset[str] = KINDS) -> Record | str:
    """One line as a record, or why it is not one (a torn line); "" for a record of a kind this
    reader does not read (`kinds`: a run's by default), which it skips."""
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return f"not a JSON record ({getattr(exc, 'msg', exc)}); the run was probably cut off while writing it"
    if not isinstance(value, dict):
        return "a record is a JSON object"
    if value.get("record") not in kinds:
        return ""  # another feature's kind, or one a later version writes: skipped without a word
    return cast(Record, value)


class ReadProblem(str):
    """A line of a results file that is no record, as `path:line: why`. `fatal` when it is not a
    torn last line (a run cut off while writing it, which a reader takes in its stride): a record
    corrupted in the middle of a file, or a file that is not a results file at all."""

    fatal: bool = False

    @classmethod
    def make(cls, text: str, fatal: bool = False) -> ReadProblem:
        problem = cls(text)
        problem.fatal = fatal
        return problem


def upgrade(record: Record, version: int) -> Record:
    """A record of a file written in format `version`, in this version's shape: the one place
    that knows older files. Before 2, a mode could lack `flags` (it set none); the header of an
    upgraded run says the version its records now have."""
    if version < 2:
        fields = cast(dict[str, Any], record)
        mode = fields.get("mode")
        if isinstance(mode, dict) and "flags" not in mode:
            fields["mode"] = {**mode, "flags": {}}
        if fields["record"] == "run":
            fields["version"] = FORMAT_VERSION
    return record


def read_records(
    path: Path | str, problems: list[str] | None = None, kinds: frozenset[str] = KINDS
) -> Iterator[Record]:
    """Every record of a results file (of `kinds`: a run's by default), in order, in this version's
    shape (`upgrade`, by the `version` of the run header before it: a file without one is version
    1); a line that is none is skipped and, with `problems`, said there as a `ReadProblem`
    (`path:line: why`): a torn last line as the run cut off, a bad line with a record after it as a
    corrupt record (`fatal`). A missing file has no records."""
    try:
        f = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed below; a missing file reads empty
    except FileNotFoundError:
        return
    pending: list[tuple[int, str]] = []  # bad lines not yet known to be the last
    version = 1
    with f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            record = parse_record(line, kinds)
            if isinstance(record, str):
                if record:
                    pending.append((number, record))
                continue
            if problems is not None:
                problems.extend(
                    ReadProblem.make(
                        f"{path}:{n}: corrupt record: {why.split(';')[0]}, with records after it "
                        "(not a run cut off while writing its last line)",
                        fatal=True,
                    )
                    for n, why in pending
                )
            pending.clear()
            if record["record"] == "run":
                version = int(cast(Any, record).get("version") or 1)
            yield upgrade(record, version)
    if problems is not None and pending:
        *corrupt, (last, why) = pending
        problems.extend(
            ReadProblem.make(
                f"{path}:{n}: corrupt record: {w.split(';')[0]}, with another line after it",
                fatal=True,
            )
            for n, w in corrupt
        )
        problems.append(ReadProblem.make(f"{path}:{last}: {why}"))


def load_runs(paths: Iterable[Path | str], every_problem: list[str] | None = None) -> list[Run]:
    """Every run in these files (a file may hold several, e.g. a merged results.jsonl), each with
    its case records; a record before its run's header (none in a file the harness wrote) is skipped.
    `every_problem` gets each file's problems, a file that holds no record at all among them
    (`not a jax-conformance results file`, fatal)."""
    runs: list[Run] = []
    for path in paths:
        by_id: dict[str, Run] = {}
        current: Run | None = None
        problems: list[str] = []
        seen = False
        described: dict[str, RunDescription] = {}  # run id -> its description, before its header
        for record in read_records(path, problems, RUN_KINDS):
            seen = True
            if record["record"] == DESCRIPTION:
                description = cast(RunDescription, record)
                described[str(description.get("run_id"))] = description
                continue
            if record["record"] == "run":
                current = by_id[record.get("run_id") or str(len(by_id))] = Run(
                    header=record, source=str(path), description=described.get(record["run_id"])
                )
                continue
            run = by_id.get(record.get("run_id") or "") or current
            if run is None:
                problems.append(
                    f"{path}: a {record['record']} record before any run header was skipped"
                )
            elif record["record"] == "end":
                run.end = record
            elif record["record"] == "collected":
                run.collected = int(record["count"])
            else:
                run.cases.append(record)
        if not seen and (problems or _has_text(path)):  # lines, none of them a record
            why = f": {problems[0].split(': ', 1)[-1]}" if problems else ""
            problems = [
                ReadProblem.make(
                    f"not a jax-conformance results file: {path} (no line of it is a record{why})",
                    fatal=True,
                )
            ]
        for run in by_id.values():
            run.problems = problems
        runs.extend(by_id.values())
        if every_problem is not None:
            every_problem.extend(problems)
    return runs


def _has_text(path: Path | str) -> bool:
    try:
        with open(path, "rb") as f:
            return bool(f.read(4096).strip())
    except OSError:
        return False


@dataclass
class RecordTail:
    """A results file read as it grows (a mode process writes it): whole records only, from where
    the last `poll` left off, sorted as they come into the header, the case records, the outcome
    counts and the end, so whoever started the process reads its file once."""

    path: Path
    offset: int = 0
    header: RunHeader | None = None
    total: int | None = None  # items collected, once the `collected` record is there
    cases: list[ResultRecord] = field(default_factory=list)
    end: EndRecord | None = None
    counts: dict[str, int] = field(default_factory=dict)  # outcome -> case records so far (`tally`)

    not_items: int = 0  # case records that are no collected item (a spec file that did not load, a harness error)
    # case records with `spec_error`: the spec at fault, not the implementation
    spec_errors: int = 0

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def items_done(self) -> int:
        """Collected items with a record: what `total` counts (a file that did not load is none)."""
        return self.done - self.not_items

    @property
    def unexpected(self) -> int:
        """Records whose outcome fails the run (spec errors among them: the exit status still fails)."""
        return sum(n for o, n in self.counts.items() if o in UNEXPECTED)

    def poll(self) -> None:
        """Read the whole lines written since the last poll (a line still being written waits)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        whole = data[: data.rfind(b"\n") + 1]
        self.offset += len(whole)
        for line in whole.splitlines():
            record = parse_record(line) if line.strip() else ""
            if isinstance(record, str):
                continue
            if record["record"] == "run":
                self.header = record
            elif record["record"] == "collected":
                self.total = int(record["count"])
            elif record["record"] == "end":
                self.end = record
            else:
                self.cases.append(record)
                tally(self.counts, record)
                self.not_items += not is_item_record(record)
                self.spec_errors += bool(record.get("spec_error"))


def is_item_record(record: ResultRecord) -> bool:
    """Whether a case record is a collected case's, not a file's that did not load (`<specs/x.yaml>`)
    or a mode process's that failed outside its cases (`<pytest ...>`)."""
    return not str(record.get("case") or "").startswith("<")


def tally(into: dict[str, int], record: ResultRecord) -> None:
    """Count one case record's outcome into `into` (the `end` record's `counts` are this)."""
    outcome = record.get("outcome") or "error"
    into[outcome] = into.get(outcome, 0) + 1


# ---------------------------------------------------------------- records the parent writes


def harness_header(
    adapter: str | None,
    mode: ModeJSON,
    *,
    run_id: str,
    implementation_version: str,
    behaviour_version: str | None = None,
    backends: Sequence[str] = (),
    environment: Mapping[str, object] | None = None,
    status: str | None = None,
    reason: str | None = None,
    written_by: str | None = None,
) -> RunHeader:
    """The `run` record of a mode that wrote none itself (it never started, died first, or could not
    run: `status` unavailable or error, with the `reason`)."""
    header: RunHeader = {
        "record": "run",
        "run_id": run_id,
        "started": now(),
        "adapter": adapter,
        "implementation_version": implementation_version,
        "mode": mode,
        "backends": list(backends),
        "environment": dict(environment or {}),
    }
    if behaviour_version is not None:
        header["behaviour_version"] = behaviour_version
    if status is not None:
        header["status"] = status
    if reason is not None:
        header["reason"] = reason
    if written_by is not None:
        header["written_by"] = written_by
    return header


def harness_end(
    run_id: str | None,
    reason: str,
    *,
    interrupted: bool,
    exitstatus: int | None = None,
    counts: Mapping[str, int] | None = None,
    status: str | None = None,
    written_by: str | None = None,
) -> EndRecord:
    """The `end` record of a mode whose process did not write its own, saying why."""
    end: EndRecord = {
        "record": "end",
        "run_id": run_id,
        "finished": now(),
        "exitstatus": exitstatus,
        "interrupted": interrupted,
        "counts": dict(counts or {}),
        "reason": reason,
    }
    if status is not None:
        end["status"] = status
    if written_by is not None:
        end["written_by"] = written_by
    return end


def unavailable(
    adapter: str,
    version: str,
    mode: ModeJSON,
    reason: str,
    *,
    status: str = "unavailable",
    environment: Mapping[str, object] | None = None,
) -> list[Record]:
    """A `run` and an `end` record for a mode that cannot run in this implementation (a release that
    does not install, or lacks a flag the mode sets), with the reason: a fact about the release,
    which the report and compat show as such, not a failed run."""
    run_id = new_run_id()
    header = harness_header(
        adapter,
        mode,
        run_id=run_id,
        implementation_version=version,
        behaviour_version=version,
        environment={**(environment or {}), **suite_info()},
        status=status,
        reason=reason,
    )
    return [header, harness_end(run_id, reason, interrupted=False, status=status)]


def suite_info() -> dict[str, str | None]:
    """The suite's version and git revision, for a run header's environment."""
    return {"suite_version": __version__, "git_revision": git_revision()}


# ---------------------------------------------------------------- diff and mutate records (`diff`, `mutate`)
# Their own kinds, written through `encode` and read through `read_records(..., kinds=...)`; a run's
# readers (`load_runs`, the report's results) skip them.

DiffVerdict = Literal["agree", "differ", "n/a"]

# `diff_program`: one program run on both sides in one mode (`class` is a keyword, hence this form).
DiffProgramRecord = TypedDict(
    "DiffProgramRecord",
    {
        "record": Literal["diff_program"],
        "mode": str,
        "area": str,
        "seed": int,
        "program": str,
        "verdict": DiffVerdict,
        "fields": list[str],  # the fields in which the two observations differ
        "class": str | None,  # the disagreement class (None: they agree, or n/a)
        "a": "ProgramObservation",
        "b": "ProgramObservation",
    },
)

# `diff_class`: one disagreement class over every mode, shown with its smallest program.
DiffClassRecord = TypedDict(
    "DiffClassRecord",
    {
        "record": Literal["diff_class"],
        "rank": int,
        "class": str,
        "count": int,
        "modes": dict[str, int],  # mode slug -> programs of the class
        "program": str,  # shrunk where Hypothesis could, else the first seen
        "shrunk": bool,
        "from": str,  # the program first seen
        "mode": str,  # the mode of the program shown
        "a": "ProgramObservation",
        "b": "ProgramObservation",
        "sides": list[str],
        "reproduce": str,  # one shell line that reruns the program shown
    },
)


class DiffStatsJSON(TypedDict):
    runs: int
    agree: int
    differ: int
    not_expressible: int
    agreement: float | None


class DiffModeSummary(TypedDict):
    all: DiffStatsJSON
    first_raises: DiffStatsJSON  # among the programs whose first side raised
    areas: dict[str, DiffStatsJSON]
    not_expressible: dict[str, int]  # what a side lacked -> programs


class DiffSummaryRecord(TypedDict):
    """`diff_summary`: the last record of a diff file, agreement per mode."""

    record: Literal["diff_summary"]
    seed: int
    budget: int
    programs: int
    sides: list[str]
    modes: dict[str, DiffModeSummary]


DiffRecord = DiffProgramRecord | DiffClassRecord | DiffSummaryRecord
DIFF_KINDS = frozenset(get_args(Literal["diff_program", "diff_class", "diff_summary"]))


def read_diff(path: Path | str) -> Iterator[DiffRecord]:
    """The records of a `diff --out` file, in order."""
    for record in read_records(path, kinds=DIFF_KINDS):
        yield cast(DiffRecord, record)


class MutantRow(TypedDict):
    """One mutant of a `mutation` record (what `report --mutation` shows)."""

    name: str
    rule: str
    killed: bool
    killed_by: list[str]  # `case[mode]`, every case that killed it
    first_message: str
    modes_run: list[str]
    seconds: float
    # why a survivor is expected to survive (adapters/reference/mutants.py EXPLAINED)
    explanation: str


class MutationRecord(TypedDict):
    """`mutation`: the one record of the file `mutate` writes (reports/mutation.json: one JSON line,
    so also one JSON document)."""

    record: Literal["mutation"]
    score: str
    killed: int
    total: int
    percent: float
    modes: str
    mutants: list[MutantRow]
    seconds: NotRequired[float]
    # The message check beside the mutation score: strong / checked raises-warns blocks with a
    # `match`, and the weak and loose ones (report.message_strength.MessageSummary); absent with
    # --no-baseline.
    message_score: NotRequired[str]
    messages: NotRequired[Mapping[str, object]]


MUTATION_KINDS = frozenset({"mutation"})


def read_mutation(path: Path | str, problems: list[str] | None = None) -> MutationRecord | None:
    """The `mutation` record of a `mutate --out` file (the last, should there be several); None
    when the file holds none."""
    found = None
    for record in read_records(path, problems, kinds=MUTATION_KINDS):
        found = cast(MutationRecord, record)
    return found


# ---------------------------------------------------------------- check (contract) records
# `jax-conformance check` (jax_conformance.contract). Each mode's process (the adapter's contract
# runner) writes one `contract` record, its ModeOutput, to its results file. `check --report OUT`
# saves OUT/contract/<target>.jsonl: one `check` record (the command, the columns, the verdict,
# the failure and change lines), then one `check_row` per target x item (its statuses, a column each).

CHECK_FORMAT = "jax-conformance-check"  # the `format` of `check --json` and of a `check` record


class ContractFailure(TypedDict):
    """Where an item failed (the transform), what was expected, what came instead."""

    transform: str
    expected: str
    actual: str


class ItemRecord(TypedDict, total=False):
    """One item's outcome in one mode: pass (with an optional note), fail (failures; raised when a
    transform raised), n/a or blocked (with why)."""

    status: Required[str]
    note: str
    raised: bool
    failures: list[ContractFailure]


class ItemResult(ItemRecord, total=False):
    """An item's outcome as the runner prints it: its id first."""

    id: Required[str]


class CheckHead(TypedDict):
    target: str
    label: str


class CheckBody(TypedDict):
    """What the items found for one target: the kind of function, its nondiff positions, every item."""

    kind: str  # custom_vjp, custom_jvp or plain
    nondiff: list[int]
    items: list[ItemResult]
    notes: NotRequired[
        list[str]
    ]  # how it was checked: the rules a wrapper reaches, static arguments


class CheckRecord(CheckHead, total=False):
    """One target's result in one mode: head and body, or head and the error that stopped it
    (the target or its arguments failed to load) with the traceback's end."""

    kind: str
    nondiff: list[int]
    items: list[ItemResult]
    notes: list[str]
    error: str
    traceback: str


class ModeInfo(TypedDict):
    """The JAX a mode's process ran and the mode it ran in."""

    jax_version: str
    x64: bool
    explicit_x64_dtypes: str
    backend: str


class ModeOutput(TypedDict, total=False):
    """A mode's process's JSON line (contract, the ModeInfo fields, results) with its stderr added by
    the parent; or only {"error": why} when the process gave no such line."""

    contract: int
    jax_version: str
    x64: bool
    explicit_x64_dtypes: str
    backend: str
    results: list[CheckRecord]
    usage: list[
        list[str]
    ]  # [label, problem]: the targets or arguments that cannot work (none judged)
    stderr: str
    error: str


class ContractRecord(TypedDict):
    """`{"record": "contract"}`: what one mode's contract process found (its only record)."""

    record: Literal["contract"]
    output: ModeOutput


class ItemRow(TypedDict):
    """One item of one target: its statuses in the columns, in order."""

    item: str
    statement: str
    cells: list[str]
    numerics: NotRequired[bool]  # values JAX does not promise: a failure is not a contract failure
    basis: NotRequired[str]  # documented, tested or observed
    source: NotRequired[str]  # the JAX promise it checks (items.Source.cite), the first


class TargetRows(TypedDict):
    label: str
    kinds: NotRequired[list[str]]  # one run's modes only (custom_vjp, custom_jvp, plain)
    rows: list[ItemRow]


class CheckSummary(TypedDict):
    """What a check's result and a saved check's first record share: the command, the columns (a
    mode, or a release and mode), the verdict, the failure and change lines."""

    format: str
    version: int
    command: str
    ok: bool
    jax_versions: list[str]
    columns: list[str]
    failures: list[str]
    changes: list[str]
    # `ok` is the contract's verdict; numerics items (values JAX does not promise) are apart
    numerics_ok: NotRequired[bool]
    numerics_failures: NotRequired[list[str]]


class CheckData(CheckSummary):
    """A check's result as `check --json` prints it and a saved check reads back: the summary and,
    per target, its items' statuses in each column."""

    targets: list[TargetRows]
    package: NotRequired[PackageSweep]  # `check --package`: the sweep beside the tables


class CheckHeader(CheckSummary):
    """`{"record": "check"}`: a saved check's first record (CheckData less its targets)."""

    record: Literal["check"]


class CheckRow(ItemRow):
    """`{"record": "check_row"}`: one target x item of a saved check."""

    record: Literal["check_row"]
    target: str
    kinds: NotRequired[list[str]]


CheckFileRecord = Union[CheckHeader, CheckRow, "CheckPackageRecord"]  # noqa: UP007  (defined below)
# The kinds the readers below read; the suite's readers (KINDS) skip them.
CHECK_KINDS = frozenset(get_args(Literal["contract", "check", "check_row", "check_package"]))


def check_records(data: CheckData) -> list[CheckFileRecord]:
    """A check's result as the records of its saved file: the header, then a row per target x item."""
    head: CheckHeader = {
        "record": "check",
        "format": data["format"],
        "version": data["version"],
        "command": data["command"],
        "ok": data["ok"],
        "jax_versions": data["jax_versions"],
        "columns": data["columns"],
        "failures": data["failures"],
        "changes": data["changes"],
    }
    for key in ("numerics_ok", "numerics_failures"):
        if key in data:
            head[key] = data[key]
    rows: list[CheckFileRecord] = [head]
    if "package" in data:
        rows.append({"record": "check_package", "package": data["package"]})
    for target in data["targets"]:
        for row in target["rows"]:
            record: CheckRow = {"record": "check_row", "target": target["label"], **row}
            if "kinds" in target:
                record["kinds"] = target["kinds"]
            rows.append(record)
    return rows


def read_check(path: Path | str) -> CheckData | None:
    """A saved check read back (its targets in the order written), or None when the file holds no
    `check` record."""
    data: CheckData | None = None
    by_label: dict[str, TargetRows] = {}
    for raw in read_records(path, kinds=CHECK_KINDS):
        record = cast(Mapping[str, Any], raw)
        if record["record"] == "check":
            head = cast(CheckHeader, record)
            by_label = {}
            data = {
                "format": head["format"],
                "version": head["version"],
                "command": head["command"],
                "ok": head["ok"],
                "jax_versions": head["jax_versions"],
                "columns": head["columns"],
                "targets": [],
                "failures": head["failures"],
                "changes": head["changes"],
            }
            for key in ("numerics_ok", "numerics_failures"):
                if key in head:
                    data[key] = head[key]
        elif record["record"] == "check_package" and data is not None:
            data["package"] = cast(CheckPackageRecord, record)["package"]
        elif record["record"] == "check_row" and data is not None:
            row = cast(CheckRow, record)
            target = by_label.get(row["target"])
            if target is None:
                target = by_label[row["target"]] = {"label": row["target"], "rows": []}
                if "kinds" in row:
                    target["kinds"] = row["kinds"]
                data["targets"].append(target)
            item: ItemRow = {
                "item": row["item"],
                "statement": row["statement"],
                "cells": row["cells"],
            }
            for key in ("numerics", "basis", "source"):
                if key in row:
                    item[key] = row[key]  # type: ignore[literal-required]
            target["rows"].append(item)
    return data


def contract_output(path: Path | str) -> ModeOutput | None:
    """The ModeOutput a mode's contract process wrote to its results file, None if it wrote none."""
    found: ModeOutput | None = None
    for raw in read_records(path, kinds=CHECK_KINDS):
        record = cast(Mapping[str, Any], raw)
        if record["record"] == "contract":
            found = cast(ContractRecord, record)["output"]
    return found


# ---------------------------------------------------------------- compat records
# compat's and upgrade's files besides results: each holds one record (one JSON line), so it reads as
# a JSON object too. `search`: a radar search's findings (`radar.json`, and a radar store's
# `searches/A..B.json`, which `upgrade` answers from); `compat_summary`: `compat-summary.json`;
# `upgrade`: `upgrade-A-B.json`. A file written before these were records (indented JSON) has no
# record, and reads as absent.

SEARCH, COMPAT_SUMMARY, UPGRADE = "search", "compat_summary", "upgrade"
# a radar store's notes: a release that would not install (`<release>/unavailable.json`), and the
# cases a probe asked for (`<release>/<mode>/<tag>.cases.json`)
RELEASE_UNAVAILABLE, PROBE_CASES = "release_unavailable", "probe_cases"
COMPAT_KINDS = frozenset({SEARCH, COMPAT_SUMMARY, UPGRADE, RELEASE_UNAVAILABLE, PROBE_CASES})


class FoundJSON(TypedDict):
    """A change the radar found (`compat.radar.Found.to_json`): the modes that changed, the case's
    signature before and after (mode slug -> what it did)."""

    case: str
    release: str
    previous: str
    modes: list[str]
    before: dict[str, str]
    after: dict[str, str]
    skipped: list[str]


class ChangeJSON(FoundJSON):
    """A change in a saved search (`compat.drive.changes_json`): the radar's finding with its case's facts."""

    topic: str
    claim: str
    basis: str | None
    source: list[dict[str, str]] | None
    spec_file: str
    # what the case did at `previous` and at `release`, per mode, in full (the error's whole first
    # line): `before`/`after` cut a message to its opening words to compare (releases.observed_key)
    said: NotRequired[dict[str, dict[str, str]]]


class ProbeJSON(TypedDict):
    release: str
    cases: int | None  # cases asked; None: all


class ShippedJSON(TypedDict):
    """What a search shipped with the suite was computed from (`compat.shipped`)."""

    spec_revision: str  # spec.loader.spec_revision of specs/ then
    case_digests: dict[str, str]  # case id -> compat.shipped.case_digests then
    computed: str  # the day (UTC)
    command: str  # the command that computed it


class SearchJSON(TypedDict):
    """A radar search's findings as saved beside its results (`compat.drive.changes_json`)."""

    releases: list[str]
    anchors: list[str]
    unavailable: dict[str, str]
    probes: list[ProbeJSON]
    runs: int
    changes: list[ChangeJSON]
    flags: dict[str, list[dict[str, str]]]
    environments: dict[str, dict[str, object]]
    cache: dict[str, object]
    seconds: float
    discovery_s: float
    gates: NotRequired[list[dict[str, object]]]  # compat's check of the version gates
    shipped: NotRequired[ShippedJSON]  # a search shipped in specs/radar/ (`compat.shipped`)


def write_one(path: Path, kind: str, data: Mapping[str, object]) -> Path:
    """Write `data` as the one record of kind `kind` in `path` (replacing the file)."""
    writer = ResultsWriter(path)
    try:
        writer.write({"record": kind, **data})
    finally:
        writer.close()
    return path


def read_one(path: Path, kind: str) -> dict[str, object] | None:
    """The record of kind `kind` in a file `write_one` wrote, without its `record` key (None: none)."""
    for record in read_records(path, kinds=COMPAT_KINDS):
        if record.get("record") == kind:
            return {k: v for k, v in record.items() if k != "record"}
    return None


def write_search(path: Path, data: SearchJSON) -> Path:
    return write_one(path, SEARCH, data)


def read_search(path: Path) -> SearchJSON | None:
    """A search `write_search` wrote (None: the file holds none)."""
    return cast(SearchJSON | None, read_one(path, SEARCH))


# ---------------------------------------------------------------- run descriptions (`description`)
# The first record of a mode's results file (the plugin writes it before the `run` header): what a
# reader needs to merge the file with others safely, wptreport's `run_info`. Its end time is the
# trailing `end` record's `finished`. A merged run (`jax_conformance.merging`) keeps the first
# part's description, with `merged_from` naming every part. `load_runs` reads it into
# `Run.description`; files from before it have none (`Run.description` is None: nothing to check).

DESCRIPTION = "description"
RUN_KINDS = KINDS | {DESCRIPTION}  # what `load_runs` reads: a run's records and its description


class ShardJSON(TypedDict):
    """`--shard I/N` as a description holds it (`shard.Shard.to_json`)."""

    index: int
    count: int


class DeviceJSON(TypedDict):
    """A backend's devices: their kind (`cpu`, `NVIDIA H200`) and how many the run saw."""

    kind: str | None
    count: int | None


class PartJSON(TypedDict):
    """One run a merged run was made of."""

    run_id: str
    source: str
    host: str | None
    started: str | None
    shard: ShardJSON | None


class RunDescription(TypedDict):
    """`{"record": "description"}`: the run's machine, build, specs, mode and shard (docs/RUNNER.md,
    section 7). `spec_revision` and `build` decide whether two runs' cells may be merged."""

    record: Literal["description"]
    run_id: str
    started: str
    host: str
    suite_version: str
    git_revision: str | None
    spec_revision: str  # the hash of the spec files the run read (`spec.loader.spec_revision`)
    specs: list[str]  # the spec directories, as given (none: the bundled specs)
    adapter: str
    implementation_version: str
    behaviour_version: str
    build: dict[str, str]  # jax, jaxlib and each JAX plugin -> its version (what the adapter says)
    python: str | None
    numpy: str | None
    backends: list[str]
    devices: dict[str, DeviceJSON]  # backend -> its devices
    mode: ModeJSON
    selection: dict[str, str | None]  # `keyword` (-k) and `markexpr` (-m)
    shard: ShardJSON | None
    argv: list[str]
    merged_from: NotRequired[list[PartJSON]]


def describe_run(
    info: AdapterInfo,
    *,
    run_id: str,
    mode: ModeJSON,
    backends: Sequence[str],
    spec_revision: str,
    specs: Sequence[str],
    selection: Mapping[str, str | None],
    shard: ShardJSON | None,
    argv: Sequence[str],
) -> RunDescription:
    """The `description` record of a run of this adapter (its `info()`) in this mode."""
    import platform
    import socket

    env = info.get("environment") or {}
    plugins = env.get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    kinds = env.get("device_kinds")
    kinds = kinds if isinstance(kinds, dict) else {}
    return {
        "record": "description",
        "run_id": run_id,
        "started": now(),
        "host": socket.gethostname(),
        "suite_version": __version__,
        "git_revision": git_revision(),
        "spec_revision": spec_revision,
        "specs": list(specs),
        "adapter": info["adapter"],
        "implementation_version": info["implementation_version"],
        "behaviour_version": info["behaviour_version"],
        "build": {
            **{k: str(env[k]) for k in ("jax", "jaxlib") if k in env},
            **{str(k): str(v) for k, v in plugins.items()},
        },
        "python": str(env.get("python") or platform.python_version()),
        "numpy": str(env["numpy"]) if "numpy" in env else None,
        "backends": list(backends),
        "devices": {b: _devices(kinds.get(b)) for b in backends},
        "mode": mode,
        "selection": dict(selection),
        "shard": shard,
        "argv": list(argv),
    }


def _devices(value: object) -> DeviceJSON:
    """An adapter's `device_kinds` entry for one backend (unknown where it gives none)."""
    if not isinstance(value, Mapping):
        return {"kind": None, "count": None}
    count = value.get("count")
    return {
        "kind": str(value["kind"]) if value.get("kind") is not None else None,
        "count": count if isinstance(count, int) else None,
    }


# ---------------------------------------------------------------- check --package (issue #39)
# `check --package NAME --report OUT` saves, after the `check` record, one `check_package` record:
# what the sweep walked, checked and left unchecked, which the report's section for the package shows.


class PackageSweep(TypedDict):
    """A package's sweep: its modules walked, those that did not import, the rules checked (with how
    their arguments were found), those not checked (with what they need), the table read, the time."""

    package: str
    modules: int
    import_errors: list[list[str]]  # [module, why]
    checked: list[list[str]]  # [MODULE:FUNCTION, how its arguments were found]
    unchecked: list[list[str]]  # [MODULE:FUNCTION, what it needs]
    pyproject: str  # the [tool.jax-conformance] table read ("" for none)
    seconds: float


class CheckPackageRecord(TypedDict):
    """`{"record": "check_package"}`: a saved package sweep's summary."""

    record: Literal["check_package"]
    package: PackageSweep
