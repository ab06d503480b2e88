"""The pytest plugin's records and summary: a case's report becomes a `ResultRecord`, written as it is known.

Runs in the pytest process (the parent side; under xdist, the controller writes and counts).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pytest
from jax_conformance.plugin.collect import CaseFailure, NotApplicable, SpecItem
from jax_conformance.plugin.session import SUITE, Suite, is_xdist_worker, rel_path
from jax_conformance.records import Outcome, ResultRecord, now, tally

RECORD_KEY = "conformance_record"
_ERROR_LINE = re.compile(r"^(.*?):(\d+): [A-Z0-9-]+ ")


def outcome_of(item: SpecItem, call: pytest.CallInfo[None], report: pytest.TestReport) -> tuple[Outcome, str]:
    """The record's outcome and message for this phase (a not-applicable case's report becomes a skip)."""
    exc = call.excinfo.value if call.excinfo is not None else None
    xfail = getattr(report, "wasxfail", None)
    divergence = getattr(item, "known_divergence", None)
    if divergence is not None and xfail is None and exc is None and call.when == "call" and report.failed:
        # A strict xfail that passed reaches here as a plain failure, without `wasxfail`.
        xfail = divergence.reason
    if isinstance(exc, NotApplicable):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.case.line - 1, f"not applicable: {exc}")
        return "not_applicable", str(exc)
    if call.when == "setup" and report.skipped:
        return "skipped", str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else "skipped"
    if xfail is not None:
        if report.skipped:
            return "xfailed", "xfailed: " + str(xfail) + (f"\n{exc}" if exc is not None else "")
        where = f" in {divergence.path}" if divergence is not None and divergence.path else ""
        message = (f"xpassed: listed as a known divergence{where} ({xfail}), but the case now conforms; "
                   "remove the entry (jax-conformance run --update-expectations does)")
        report.longrepr = f"{item.case.id} [{item.config.stash[SUITE].mode.label}, {item.backend}] {message}"
        return "xpassed", message
    if isinstance(exc, CaseFailure):
        return exc.verdict["outcome"], exc.verdict.get("message", "")
    if exc is not None:
        return "error", f"harness error: {type(exc).__name__}: {exc}"
    return "passed", item.verdict["message"] if item.verdict is not None else ""


def case_record(item: SpecItem, outcome: Outcome, message: str, duration_s: float) -> ResultRecord:
    """The `case` record of one item, from its verdict (when its case ran) and the spec."""
    suite = item.config.stash[SUITE]
    case, verdict, info = item.case, item.verdict, suite.info
    record: ResultRecord = {
        "record": "case", "run_id": suite.run_id, "case": case.id,
        "spec_file": rel_path(case.spec_path, item.config.rootpath), "line": case.line,
        "topic": case.topic, "claim": case.claim, "tags": list(case.tags),
        "adapter": suite.adapter, "implementation_version": info["implementation_version"],
        "behaviour_version": info["behaviour_version"], "backend": item.backend,
        "mode": suite.mode.to_json(), "outcome": outcome, "message": message,
        "expected": verdict["expected"] if verdict else None, "actual": verdict["actual"] if verdict else None,
        "duration_s": verdict["duration_s"] if verdict else round(duration_s, 6),
        "expect_line": item.block_line, "source": case.source, "nodeid": item.nodeid,
        "basis": case.basis,
    }
    if verdict is not None and verdict.get("spec_error"):
        record["spec_error"] = True
    if verdict is not None and case.documented is not None and "documented" in verdict:
        record["documented"] = {**verdict["documented"], "says": case.documented.says, "source": case.documented.source}
    if case.isolate:
        record["isolate"] = case.isolate
        if verdict is not None and verdict.get("isolation"):
            record["isolation"] = verdict["isolation"]
    return record


def record_of(report: Any) -> ResultRecord | None:
    """The case record a report carries (in `user_properties`, so it crosses from xdist workers)."""
    for key, value in getattr(report, "user_properties", ()):
        if key == RECORD_KEY:
            return cast(ResultRecord, value)
    return None


class SuiteReporter:
    """Per-session hooks that need the session's Suite (registered in pytest_configure)."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self._seen_collect_errors: set[str] = set()
        self._announced = False

    def _write(self, record: Any) -> None:
        if self.suite.writer is not None:
            self.suite.writer.write(record)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is None or is_xdist_worker(self.suite.config):
            return
        tally(self.suite.counts, record)
        self._write(record)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        suite = self.suite
        if not report.failed or is_xdist_worker(suite.config) or suite.adapter is None:
            return
        nodeid = str(report.nodeid)
        if nodeid in self._seen_collect_errors:
            return
        self._seen_collect_errors.add(nodeid)  # xdist: every worker reports the same error
        record = self._collection_error(nodeid, str(report.longrepr))
        tally(suite.counts, record)
        self._write(record)

    def _collection_error(self, nodeid: str, longrepr: str) -> ResultRecord:
        """A spec file's errors, or anything else that broke collection (an import error in the harness), as one record."""
        suite = self.suite
        match = _ERROR_LINE.match(longrepr)
        spec_file = rel_path(Path(match.group(1)), suite.config.rootpath) if match else nodeid
        return {
            "record": "case", "run_id": suite.run_id, "case": f"<{spec_file}>", "spec_file": spec_file,
            "line": int(match.group(2)) if match else 1, "topic": "<spec-errors>" if match else "<collection>",
            "claim": "the spec file loads" if match else "the suite collects",
            "adapter": suite.adapter, "implementation_version": self._version(),
            "backend": None, "mode": suite.mode.to_json(), "outcome": "error", "message": longrepr,
            "expected": None, "actual": None, "duration_s": 0.0,
        }

    def _version(self) -> str | None:
        try:
            return str(self.suite.info["implementation_version"])
        except Exception:  # the adapter itself may be what failed
            return None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not is_xdist_worker(session.config) and not session.config.pluginmanager.hasplugin("dsession"):
            self._collected(len(session.items))
        if self.suite.adapter is not None and not session.config.pluginmanager.hasplugin("dsession") \
                and not session.config.option.collectonly:
            # The fork servers import while the first (unisolated) cases run on the other core: the
            # full one for isolated cases in the mode's environment, the light one for those with
            # their own (a server nobody needs is never started; one needed later starts then).
            isolated = [i.case for i in session.items if isinstance(i, SpecItem) and i.case.isolate == "process"]
            levels = tuple(level for level, wanted in (("full", any(not c.env for c in isolated)),
                                                        ("light", any(c.env for c in isolated))) if wanted)
            self.suite.runner.start_fork_servers(levels)

    def _collected(self, count: int) -> None:
        if self.suite.adapter is not None and not self._announced:
            self._announced = True
            self._write({"record": "collected", "run_id": self.suite.run_id, "count": count})

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._collected(len(ids))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        suite = self.suite
        if suite.adapter is not None and not is_xdist_worker(session.config):
            self._write({"record": "end", "run_id": suite.run_id, "finished": now(), "exitstatus": int(exitstatus),
                         "interrupted": bool(session.shouldstop) or int(exitstatus) == 2, "counts": suite.counts})

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        suite = self.suite
        if suite.adapter is None or is_xdist_worker(config):
            return
        if suite.counts:
            parts = [f"{n} {k.replace('_', ' ')}" for k, n in sorted(suite.counts.items(), key=lambda kv: -kv[1])]
            terminalreporter.write_sep("-", f"conformance [{suite.mode.label}]: {', '.join(parts)}")
        if "s" in config.option.reportchars or "a" in config.option.reportchars.lower():
            for report in terminalreporter.stats.get("not applicable", []):
                reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else ""
                terminalreporter.write_line(f"NOT APPLICABLE {report.nodeid} - {reason}")
        if suite.writer is not None:
            terminalreporter.write_line(f"results: {suite.writer.path}")
        for path, entry in ([] if not suite.expectations.files else suite.expectations.unused(suite.mode, suite.adapter, suite.behaviour_version)):
            terminalreporter.write_line(f"warning: {path}: expectation for {entry} matched no collected case", yellow=True)
