"""Result files: JSON lines, one record per case, each written whole as soon as it is known.

A file starts with a `run` record (adapter, versions, mode, environment), then `case`
records, and ends with an `end` record; a file without `end` is an interrupted run.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jax_conformance import CHECKOUT, __version__

OUTCOMES = ("passed", "failed", "error", "skipped", "not_applicable", "xfailed", "xpassed", "crashed", "timeout")
# Outcomes that make a run fail (exit status 1).
UNEXPECTED = frozenset({"failed", "error", "xpassed", "crashed", "timeout"})
CASE_FIELDS = ("case", "spec_file", "line", "adapter", "implementation_version", "backend", "mode",
               "outcome", "message", "expected", "actual", "duration_s")
MAX_MESSAGE = 20_000


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def git_revision(root: Path | None = None) -> str | None:
    root = root or CHECKOUT
    if root is None:
        return None
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def encode(record: dict[str, Any]) -> bytes:
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

    def write(self, record: dict[str, Any]) -> None:
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

    header: dict[str, Any]
    cases: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
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
        return (h.get("adapter", "?"), h.get("implementation_version", "?"), ",".join(h.get("backends", [])),
                f"{'on' if mode.get('x64') else 'off'}-{mode.get('explicit_x64_dtypes', 'warn')}")


def read_records(path: Path | str) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """(line number, record or None, problem) for every line; a torn last line is reported, not fatal."""
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
    """Every run in these files (a file may hold several, e.g. a merged results.jsonl)."""
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
                current = Run(header=record, source=str(path))
                by_id[record.get("run_id", str(len(by_id)))] = current
            else:
                run = by_id.get(record.get("run_id", "")) or current
                if run is None:
                    run = current = Run(header={"run_id": record.get("run_id", "unknown"), "adapter": record.get("adapter"),
                                                "implementation_version": record.get("implementation_version"),
                                                "mode": record.get("mode", {}), "backends": [record.get("backend")]}, source=str(path))
                    by_id[run.header["run_id"]] = run
                if kind == "end":
                    run.end = record
                elif kind == "collected":
                    run.collected = int(record.get("count", 0))
                else:
                    run.cases.append(record)
        for run in by_id.values():
            run.problems = problems
        runs.extend(by_id.values())
    return runs


def counts(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(OUTCOMES, 0)
    for r in records:
        out[r.get("outcome", "error")] = out.get(r.get("outcome", "error"), 0) + 1
    return out


def suite_info() -> dict[str, Any]:
    return {"suite_version": __version__, "git_revision": git_revision()}
