"""The plugin's records and summary: a report carries its record, the results file gets it.

Two plugin objects, each registered in `pytest_configure` only where it applies (and only with an
adapter). `CaseReports`, in every process that makes reports (a serial run, each xdist worker),
puts into a case's report its `ResultRecord` and into a failed collection's report the record of
its error, so the record crosses from an xdist worker inside the report. `Records`, in the process
that writes the results file and the terminal (a serial run, the xdist controller), writes the
`description`, `run`, `collected`, `case` and `end` records as they are known, counts outcomes and
prints the summary.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, cast

import pytest
from jax_conformance import __version__
from jax_conformance.flag_table import lacking_reason
from jax_conformance.plugin.collect import (
    CaseFailure,
    NotApplicable,
    SpecCollectError,
    SpecFile,
    SpecItem,
)
from jax_conformance.plugin.session import SUITE, Suite, rel_path
from jax_conformance.records import (
    CollectedRecord,
    EndRecord,
    Outcome,
    ResultRecord,
    ResultsWriter,
    RunDescription,
    RunHeader,
    ShardJSON,
    describe_run,
    now,
    tally,
    unavailable,
)
from jax_conformance.spec.loader import spec_revision
from jax_conformance.spec.model import Spec
from jax_conformance.text import cut

if TYPE_CHECKING:
    from xdist.workermanage import WorkerController

SHOWN_DIVERGENCES = 25  # known divergences listed by name in the terminal summary
SHOWN_REASON_CHARS = 160  # of each one's reason
RECORD_KEY = "conformance_record"  # a report's user_properties entry that holds its record


def outcome_of(
    item: SpecItem, call: pytest.CallInfo[None], report: pytest.TestReport
) -> tuple[Outcome, str]:
    """The record's outcome and message for this phase (a not-applicable case's report becomes a skip)."""
    exc = call.excinfo.value if call.excinfo is not None else None
    xfail = getattr(report, "wasxfail", None)
    divergence = item.known_divergence
    if (
        divergence is not None
        and xfail is None
        and exc is None
        and call.when == "call"
        and report.failed
    ):
        # A strict xfail that passed reaches here as a plain failure, without `wasxfail`.
        xfail = divergence.reason
    if isinstance(exc, NotApplicable):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.case.line - 1, f"not applicable: {exc}")
        return "not_applicable", str(exc)
    if call.when == "setup" and report.skipped:
        return "skipped", str(report.longrepr[-1]) if isinstance(
            report.longrepr, tuple
        ) else "skipped"
    if xfail is not None:
        if report.skipped:
            return "xfailed", "xfailed: " + str(xfail) + (f"\n{exc}" if exc is not None else "")
        where = f" in {divergence.path}" if divergence is not None and divergence.path else ""
        message = (
            f"xpassed: listed as a known divergence{where} ({xfail}), but the case now conforms; "
            "remove the entry (jax-conformance run --update-expectations does)"
        )
        report.longrepr = (
            f"{item.case.id} [{item.config.stash[SUITE].mode.label}, {item.backend}] {message}"
        )
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
        "record": "case",
        "run_id": suite.run_id,
        "case": case.id,
        "spec_file": rel_path(case.spec_path, item.config.rootpath),
        "line": case.line,
        "topic": case.topic,
        "claim": case.claim,
        "tags": list(case.tags),
        "adapter": suite.adapter,
        "implementation_version": info["implementation_version"],
        "behaviour_version": info["behaviour_version"],
        "backend": item.backend,
        "mode": suite.mode.to_json(),
        "outcome": outcome,
        "message": message,
        "expected": verdict["expected"] if verdict else None,
        "actual": verdict["actual"] if verdict else None,
        "duration_s": verdict["duration_s"] if verdict else round(duration_s, 6),
        "expect_line": item.block_line,
        "source": case.source,
        "nodeid": item.nodeid,
        "basis": case.basis,
    }
    if verdict is not None and verdict.get("spec_error"):
        record["spec_error"] = True
    if verdict is not None and case.documented is not None and "documented" in verdict:
        record["documented"] = {
            **verdict["documented"],
            "says": case.documented.says,
            "source": case.documented.source,
        }
    if verdict is not None and verdict.get("jit_trace"):
        record["jit_trace"] = verdict["jit_trace"]
    if case.isolate:
        record["isolate"] = case.isolate
        if verdict is not None and verdict.get("isolation"):
            record["isolation"] = verdict["isolation"]
    return record


def collection_error_record(
    suite: Suite, rootpath: Path, nodeid: str, message: str, error: SpecCollectError | None
) -> ResultRecord:
    """A spec file's errors (at the file and line of the first), or anything else that broke
    collection (an import error in the harness, at the collector's node id), as one record."""
    if error is not None:
        path, line = error.errors.first
        spec_file, topic, claim = rel_path(path, rootpath), "<spec-errors>", "the spec file loads"
    else:
        spec_file, line, topic, claim = nodeid, 1, "<collection>", "the suite collects"
    record: ResultRecord = {
        "record": "case",
        "run_id": suite.run_id,
        "case": f"<{spec_file}>",
        "spec_file": spec_file,
        "line": line,
        "topic": topic,
        "claim": claim,
        "adapter": suite.adapter,
        "implementation_version": _implementation_version(suite),
        "backend": None,
        "mode": suite.mode.to_json(),
        "outcome": "error",
        "message": message,
        "expected": None,
        "actual": None,
        "duration_s": 0.0,
    }
    if error is not None:
        # a file that does not load (YAML, schema, lint): the spec's fault, never the implementation's
        record["spec_error"] = True
    return record


def _implementation_version(suite: Suite) -> str | None:
    try:
        return str(suite.info["implementation_version"])
    except Exception:  # the adapter itself may be what failed
        return None


def run_description(suite: Suite, header: RunHeader) -> RunDescription:
    """The `description` record that starts the results file: the run's machine, build, specs,
    mode, selection and shard (records.describe_run), for its header."""
    options = suite.options
    return describe_run(
        suite.info,
        run_id=suite.run_id,
        mode=header["mode"],
        backends=header["backends"],
        spec_revision=spec_revision(options.spec_dirs),
        specs=[str(p) for p in options.specs],
        selection=dict(options.selection),
        shard=cast(ShardJSON, options.shard.to_json()) if options.shard else None,
        argv=header.get("argv") or [],
    )


def record_of(report: pytest.TestReport | pytest.CollectReport) -> ResultRecord | None:
    """The record a report carries (in `user_properties`, so it crosses from xdist workers)."""
    for key, value in getattr(report, "user_properties", ()):
        if key == RECORD_KEY:
            return cast(ResultRecord, value)
    return None


class CaseReports:
    """Every process that makes reports: each report of a case or of a failed collection carries its record."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if not isinstance(item, SpecItem) or call.when not in ("call", "setup"):
            return report
        if call.when == "setup" and report.passed:
            return report
        outcome, message = outcome_of(item, call, report)
        report.user_properties.append(
            (RECORD_KEY, case_record(item, outcome, message, call.duration))
        )
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        report = yield
        if report.failed:
            error = collector.collect_error if isinstance(collector, SpecFile) else None
            record = collection_error_record(
                self.suite,
                collector.config.rootpath,
                str(report.nodeid),
                str(report.longrepr),
                error,
            )
            # A report takes extra attributes, and xdist carries them to the controller with it.
            vars(report)["user_properties"] = [(RECORD_KEY, record)]
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        record = record_of(report)
        if record is None:
            return None
        outcome = record["outcome"]
        if outcome == "not_applicable":
            return "not applicable", "n", "NOT APPLICABLE"
        if outcome in ("crashed", "timeout") and report.failed:
            return "failed", outcome[0].upper(), outcome.upper()
        if outcome == "error" and report.failed:
            return "failed", "E", "ERROR"
        if outcome == "xpassed" and report.failed:
            # a failure of the run, with its message: the entry must go
            return ("failed", "X", "XPASS(strict)")
        return None


class Records:
    """The process that writes: the results file's records as they are known, the outcome counts,
    the terminal's header and summary (a serial run, or the xdist controller)."""

    def __init__(self, suite: Suite, config: pytest.Config, writer: ResultsWriter | None) -> None:
        self.suite = suite
        self.config = config
        self.writer = writer
        self.counts: dict[str, int] = {}  # outcome -> case records, as `records.tally` counts them
        self._seen_collect_errors: set[str] = set()
        # of counts["error"]: records whose spec is at fault, said apart in the summary
        self.spec_errors = 0
        self._announced = False
        self.xfailed: list[ResultRecord] = []  # the known divergences that still diverge

    def _write(self, record: ResultRecord | CollectedRecord | EndRecord) -> None:
        if self.writer is not None:
            self.writer.write(record)

    def _case(self, record: ResultRecord) -> None:
        tally(self.counts, record)
        if record.get("outcome") == "xfailed":
            self.xfailed.append(record)
        self.spec_errors += bool(record.get("spec_error"))
        self._write(record)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: WorkerController) -> None:
        """xdist: every worker shares the controller's run id."""
        node.workerinput["conformance_run_id"] = self.suite.run_id

    def pytest_report_header(self) -> list[str]:
        suite = self.suite
        info = suite.info
        env = info.get("environment", {})
        extra = f" (jaxlib {env['jaxlib']})" if "jaxlib" in env else ""
        lines = [
            f"jax-conformance {__version__}: adapter {suite.adapter} {info['implementation_version']}{extra}",
            f"mode: {suite.mode.label}; backends: {', '.join(suite.backends())}",
        ]
        lines += [f"note: {n}" for n in env.get("notes", [])]
        given = " (--expectations)" if suite.options.expectations else ""
        lines += [f"known divergences: {p}{given}" for p in suite.expectation_paths]
        return lines

    def pytest_sessionstart(self) -> None:
        missing = self.suite.missing_flags()
        # the implementation cannot run this mode: a record says why, then one usage error
        if missing:
            reason = lacking_reason(missing, self.suite.info, self.suite.adapter)
            if self.writer is not None:
                version = self.suite.info["implementation_version"]
                for record in unavailable(
                    self.suite.adapter, version, self.suite.mode.to_json(), reason
                ):
                    self.writer.write(record)
            self.suite.flags  # noqa: B018 -- raises the usage error naming the flags the adapter has
        if self.suite.mode.flags:
            self.suite.flags  # noqa: B018 -- a flag that did not take its value: one usage error, before collection
        if self.writer is not None:
            header = self.suite.header(list(self.config.invocation_params.args))
            self.writer.write(run_description(self.suite, header))
            self.writer.write(header)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is not None:
            self._case(record)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        record = record_of(report)
        if record is None or report.nodeid in self._seen_collect_errors:
            return
        self._seen_collect_errors.add(report.nodeid)  # xdist: every worker reports the same error
        self._case(record)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not session.config.pluginmanager.hasplugin("dsession"):
            self._collected(len(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, ids: list[str]) -> None:
        self._collected(len(ids))

    def _collected(self, count: int) -> None:
        if not self._announced:
            self._announced = True
            self._write(CollectedRecord(record="collected", run_id=self.suite.run_id, count=count))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._write(
            EndRecord(
                record="end",
                run_id=self.suite.run_id,
                finished=now(),
                exitstatus=int(exitstatus),
                interrupted=bool(session.shouldstop) or int(exitstatus) == 2,
                counts=self.counts,
            )
        )

    def pytest_terminal_summary(
        self, terminalreporter: pytest.TerminalReporter, config: pytest.Config
    ) -> None:
        suite = self.suite
        if self.counts:
            parts = [
                f"{n} {k.replace('_', ' ')}"
                for k, n in sorted(self.counts.items(), key=lambda kv: -kv[1])
            ]
            if self.spec_errors:
                parts.append(
                    f"of the errors {self.spec_errors} spec error{'s' if self.spec_errors != 1 else ''}, not counted"
                )
            terminalreporter.write_sep("-", f"conformance [{suite.mode.label}]: {', '.join(parts)}")
        if "s" in config.option.reportchars or "a" in config.option.reportchars.lower():
            for report in terminalreporter.stats.get("not applicable", []):
                reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else ""
                terminalreporter.write_line(f"NOT APPLICABLE {report.nodeid} - {reason}")
        if self.writer is not None:
            terminalreporter.write_line(f"results: {self.writer.path}")
        self._known_divergences(terminalreporter)
        if suite.expectations.files:
            topics = [s.topic for s in suite.loaded.values() if isinstance(s, Spec)]
            for path, entry in suite.expectations.unused(
                suite.mode, suite.adapter, suite.behaviour_version, topics
            ):
                terminalreporter.write_line(
                    f"warning: {path}: expectation for {entry} matched no collected case",
                    yellow=True,
                )

    def _known_divergences(self, terminalreporter: pytest.TerminalReporter) -> None:
        """A line per known divergence that still diverges: an expected failure, shown as one."""
        if not self.xfailed:
            return
        terminalreporter.write_sep("-", f"known divergences ({len(self.xfailed)} xfailed)")
        for record in self.xfailed[:SHOWN_DIVERGENCES]:
            reason = str(record.get("message", "")).removeprefix("xfailed: ").splitlines()[0]
            terminalreporter.write_line(
                f"XFAIL {record['case']}[{self.suite.mode.slug}-{record.get('backend')}] - "
                f"{cut(reason, SHOWN_REASON_CHARS, 'reason')}"
            )
        if len(self.xfailed) > SHOWN_DIVERGENCES:
            terminalreporter.write_line(f"... and {len(self.xfailed) - SHOWN_DIVERGENCES} more")
        where = ", ".join(str(p) for p in self.suite.expectation_paths)
        terminalreporter.write_line(f"(listed in {where}; `--expectations none` fails them)")

    def pytest_unconfigure(self) -> None:
        if self.writer is not None:
            self.writer.close()


def interrupt_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM ends the run like Ctrl-C, so the results file still gets its `end` record."""
    if threading.current_thread() is not threading.main_thread():
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"terminated by signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    config.add_cleanup(restore)
