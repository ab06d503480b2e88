"""The pytest plugin: spec files become collectors, cases become items, results become records.

Registered through the `pytest11` entry point. It is inert unless `--adapter` is given or a
spec file is collected, and it never imports JAX: cases run in a worker process
(`jax_conformance.run.worker`) started in the run's mode.
"""

from __future__ import annotations

import linecache
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jax_conformance import PACKAGE_DIR, SPECS_DIR, __version__
from jax_conformance.adapter import installed_adapters
from jax_conformance.cli import check_spec_paths, positive_float, positive_int
from jax_conformance.errors import ModeError, SpecError, SpecFileErrors, UsageError
from jax_conformance.mode import EXPLICIT_MODES, Mode, parse_truth
from jax_conformance.results import ResultsWriter, new_run_id, now, suite_info
from jax_conformance.run.workers import ISOLATION_MODES, CaseRunner
from jax_conformance.spec.cache import SpecCache, gc_paused, is_large_load
from jax_conformance.spec.expectations import ExpectationFile
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files
from jax_conformance.spec.model import Case, Spec
from jax_conformance.spec.rules import duplicate_ids, exception_names, known_tags

RECORD_KEY = "conformance_record"
_ERROR_LINE = re.compile(r"^(.*?):(\d+): [A-Z0-9-]+ ")


class NotApplicable(Exception):
    """No expect block speaks to this mode/backend/adapter/version."""


class CaseFailure(Exception):
    """The implementation did not do what the block demands (or crashed, hung, errored)."""

    def __init__(self, verdict: dict[str, Any]) -> None:
        self.verdict = verdict
        super().__init__(verdict.get("message", ""))


# ---------------------------------------------------------------- options and state


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jax-conformance", "jax-conformance: run the YAML specs against an implementation")
    group.addoption("--adapter", metavar="NAME", help=f"implementation under test ({', '.join(sorted(installed_adapters())) or 'none installed'})")
    group.addoption("--x64", choices=("on", "off"), help="the jax_enable_x64 mode (default: from JAX_ENABLE_X64, as JAX reads it)")
    group.addoption("--explicit-x64-dtypes", choices=EXPLICIT_MODES, help="policy for explicit 64-bit dtypes with x64 off (default: from JAX_EXPLICIT_X64_DTYPES, else warn)")
    group.addoption("--backend", action="append", metavar="PLATFORM", help="run on this backend (repeatable; default: every backend the adapter reports)")
    group.addoption("--results", metavar="PATH", help="write one JSON line per case to PATH as it finishes")
    group.addoption("--specs", action="append", metavar="DIR", help=f"spec directories for `pytest conformance/` (default: {SPECS_DIR})")
    group.addoption("--case-timeout", type=positive_float, default=None, metavar="SECONDS", help="time limit per case unless the spec sets one, above 0 (default: ini conformance_case_timeout, 60)")
    group.addoption("--case-memory-mb", type=positive_int, default=None, metavar="MB",
                    help="address-space limit per worker; a case past it is recorded as crashed (default: $JAX_CONFORMANCE_MEMORY_LIMIT_MB, else none)")
    group.addoption("--isolation", choices=ISOLATION_MODES, default=None,
                    help="how `isolate: process` cases get their fresh process: fork from a server that has paid the "
                         "start-up when that gives the same process, else spawn; or always spawn "
                         "(default: $JAX_CONFORMANCE_ISOLATION, else fork)")
    parser.addini("conformance_case_timeout", "default time limit per case in seconds", default="60")
    group.addoption("--expectations", action="append", metavar="PATH", help="known-divergence file(s): listed cases become xfailed/xpassed")


class Suite:
    """Per-session state: the mode, the runner (and its worker), the results file."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.adapter: str | None = config.getoption("adapter")
        self.mode = _mode_from_options(config)
        self._runner: CaseRunner | None = None
        self.writer: ResultsWriter | None = None
        self.run_id = getattr(config, "workerinput", {}).get("conformance_run_id") or new_run_id()
        self.timeout = config.getoption("case_timeout") or float(config.getini("conformance_case_timeout"))
        self.counts: dict[str, int] = {}
        self._resolved: dict[str, str] | None = None
        self.expectations = ExpectationFile.load_many(config.getoption("expectations") or [])
        self.loaded: dict[Path, Spec | SpecFileErrors] = {}
        self._spec_cache = SpecCache.default()  # specs an earlier process (lint, another mode, a worker) loaded

    @property
    def runner(self) -> CaseRunner:
        if self.adapter is None:
            raise pytest.UsageError(_missing_adapter())
        if self._runner is None:
            self._runner = CaseRunner(self.adapter, self.mode, self.timeout, memory_mb=self.config.getoption("case_memory_mb"),
                                      isolation=self.config.getoption("isolation"))
        return self._runner

    @property
    def info(self) -> dict[str, Any]:
        return self.runner.info

    def backends(self) -> list[str]:
        available = list(self.info["backends"])
        wanted = self.config.getoption("backend")
        if not wanted:
            return available
        missing = [b for b in wanted if b not in available]
        if missing:
            raise pytest.UsageError(f"backend {', '.join(missing)} not available in adapter {self.adapter!r}; it has: {', '.join(available)}")
        return list(dict.fromkeys(wanted))

    def unresolved(self, names: set[str]) -> dict[str, str]:
        if self._resolved is None:
            self._resolved = {}
        todo = sorted(n for n in names if n not in self._resolved)
        if todo:
            bad = self.runner.resolve(todo)
            for n in todo:
                self._resolved[n] = bad.get(n, "")
        return {n: self._resolved[n] for n in names if self._resolved[n]}

    def load(self, path: Path) -> Spec | SpecFileErrors:
        if path not in self.loaded:
            with gc_paused():
                try:
                    self.loaded[path] = load_spec(path, cache=self._spec_cache)
                except SpecFileErrors as errors:
                    self.loaded[path] = errors
        return self.loaded[path]

    def header(self) -> dict[str, Any]:
        info = self.info
        return {
            "record": "run", "run_id": self.run_id, "started": now(), "adapter": self.adapter,
            "implementation_version": info["implementation_version"],
            "behaviour_version": info.get("behaviour_version", info["implementation_version"]),
            "mode": self.mode.to_json(), "backends": self.backends(),
            "environment": {**info.get("environment", {}), **suite_info()},
            "hypothesis": {"derandomize": True}, "argv": list(self.config.invocation_params.args),
        }

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
        if self.writer is not None:
            self.writer.close()


SUITE = pytest.StashKey[Suite]()


def _mode_from_options(config: pytest.Config) -> Mode:
    try:
        base = Mode.from_environ()
    except ModeError as exc:
        raise pytest.UsageError(f"{exc}; or pass --x64/--explicit-x64-dtypes") from None
    x64 = config.getoption("x64")
    edm = config.getoption("explicit_x64_dtypes")
    return Mode(parse_truth(x64, "--x64") if x64 else base.x64, edm or base.explicit_x64_dtypes)


def _missing_adapter() -> str:
    names = ", ".join(sorted(installed_adapters())) or "none"
    return f"the conformance suite needs --adapter=NAME (installed adapters: {names}), e.g. pytest conformance/ --adapter=jax"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _spec_dirs(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in (config.getoption("specs") or [SPECS_DIR])]


def _targets_suite(config: pytest.Config) -> bool:
    for arg in config.args:
        p = Path(arg.split("::")[0]).resolve()
        if p == PACKAGE_DIR or (p.exists() and any(p == d or d in p.parents or p in d.parents and p != Path("/") and p.name == "specs" for d in _spec_dirs(config))):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    for tag, description in known_tags().items():
        config.addinivalue_line("markers", f"{tag}: {description}")
    adapter = config.getoption("adapter")
    if adapter is not None and adapter not in installed_adapters() and ":" not in adapter:
        raise pytest.UsageError(f"unknown adapter {adapter!r}; {_missing_adapter()}")
    if adapter is None and _targets_suite(config):
        raise pytest.UsageError(_missing_adapter())
    if adapter is not None and config.getoption("specs"):
        try:
            check_spec_paths([Path(p) for p in config.getoption("specs")])
        except UsageError as exc:  # a path that does not exist or holds no spec: named, nothing run
            raise pytest.UsageError(str(exc)) from None
    try:
        suite = Suite(config)
    except UsageError as exc:  # an expectations file that cannot be used: named, nothing run
        raise pytest.UsageError(str(exc)) from None
    config.stash[SUITE] = suite
    config.pluginmanager.register(SuiteReporter(suite), "jax-conformance-reporter")
    if adapter is not None:
        # A broken spec file is one collection error; every other file still runs.
        config.option.continue_on_collection_errors = True
    results = config.getoption("results")
    if results and not _is_worker(config):
        suite.writer = ResultsWriter(results)
        _interrupt_on_sigterm(config)
    if adapter is not None and _targets_suite(config):
        # The implementation imports in its worker while pytest starts and loads the specs.
        suite.runner.prestart()


def _interrupt_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM ends the run like Ctrl-C, so the results file still gets its `end` record."""
    if threading.current_thread() is not threading.main_thread():
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"terminated by signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    config.add_cleanup(restore)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker shares the controller's run id."""
    node.workerinput["conformance_run_id"] = node.config.stash[SUITE].run_id


def pytest_unconfigure(config: pytest.Config) -> None:
    suite = config.stash.get(SUITE, None)
    if suite is not None:
        suite.close()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    suite = config.stash[SUITE]
    if suite.adapter is None:
        return None
    info = suite.info
    env = info.get("environment", {})
    extra = f" (jaxlib {env['jaxlib']})" if "jaxlib" in env else ""
    lines = [
        f"jax-conformance {__version__}: adapter {suite.adapter} {info['implementation_version']}{extra}",
        f"mode: {suite.mode.label}; backends: {', '.join(suite.backends())}",
    ]
    lines += [f"note: {n}" for n in env.get("notes", [])]
    return lines


def pytest_sessionstart(session: pytest.Session) -> None:
    suite = session.config.stash[SUITE]
    if suite.writer is not None and suite.adapter is not None:
        suite.writer.write(suite.header())


# ---------------------------------------------------------------- collection


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path.resolve() == PACKAGE_DIR and parent.config.stash[SUITE].adapter is not None:
        return SuiteDirectory.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if config.stash[SUITE].adapter is None or isinstance(parent, SuiteDirectory):
        return None
    resolved = file_path.resolve()
    if is_spec_file(resolved) and any(d == resolved.parent or d in resolved.parents for d in _spec_dirs(config)):
        return SpecFile.from_parent(parent, path=file_path)
    return None


class SuiteDirectory(pytest.Directory):
    """`pytest conformance/`: every spec file of the spec directories, checked together."""

    def collect(self) -> Iterator[pytest.Collector]:
        suite = self.config.stash[SUITE]
        paths = [p for d in _spec_dirs(self.config) for p in spec_files([d]) if is_spec_file(p)]
        with gc_paused(freeze=is_large_load(paths)):
            specs = [s for s in (suite.load(p) for p in paths) if isinstance(s, Spec)]
        for error in duplicate_ids(specs):
            loaded = suite.loaded[error.path]
            existing = loaded.errors if isinstance(loaded, SpecFileErrors) else []
            suite.loaded[error.path] = SpecFileErrors(error.path, existing + [error])
        for p in paths:
            yield SpecFile.from_parent(self, path=p)


class SpecFile(pytest.File):
    """One YAML spec file: an item per case and backend, or one collection error."""

    def collect(self) -> Iterator[pytest.Item]:
        suite = self.config.stash[SUITE]
        loaded = suite.load(self.path)
        if isinstance(loaded, SpecFileErrors):
            raise SpecCollectError(loaded)
        info = suite.info
        self._check_names(loaded, suite, info)
        tags = known_tags()
        markers = {tag: getattr(pytest.mark, tag) for case in loaded.cases for tag in case.tags if tag in tags}
        backends, slug, version = suite.backends(), suite.mode.slug, info["behaviour_version"]
        items = []
        with gc_paused():  # thousands of items, each a handful of objects: no collection walks them all meanwhile
            for case in loaded.cases:
                for backend in backends:
                    item = SpecItem.from_parent(self, name=f"{case.id}[{slug}-{backend}]", case=case, backend=backend)
                    for tag in case.tags:
                        if tag in markers:
                            item.add_marker(markers[tag])
                    suite.expectations.mark(item, case.id, suite.mode, backend, suite.adapter or "", version)
                    items.append(item)
        yield from items

    def _check_names(self, spec: Spec, suite: Suite, info: dict[str, Any]) -> None:
        lines: dict[str, int] = {}
        for case in spec.cases:
            for line, name in exception_names(case, suite.adapter or "", info["behaviour_version"]):
                lines.setdefault(name, line)
        bad = suite.unresolved(set(lines))
        if bad:
            raise SpecCollectError(SpecFileErrors(spec.path, [
                SpecError(spec.path, lines[n], "EXC-UNRESOLVED", f"{n!r} does not resolve in adapter {suite.adapter!r}: {why}")
                for n, why in sorted(bad.items())
            ]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SpecCollectError):
            return excinfo.value.text(self.config.rootpath)
        return str(super().repr_failure(excinfo))


class SpecCollectError(Exception):
    def __init__(self, errors: SpecFileErrors) -> None:
        self.errors = errors
        super().__init__(str(errors))

    def text(self, root: Path) -> str:
        return "\n".join(e.format(root) for e in self.errors.errors)


class SpecItem(pytest.Item):
    """One case on one backend in this session's mode."""

    def __init__(self, *, case: Case, backend: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.backend = backend
        self.verdict: dict[str, Any] | None = None
        self.block_line: int | None = None

    def runtest(self) -> None:
        suite = self.config.stash[SUITE]
        info = suite.info
        block = self.case.select(suite.mode, self.backend, suite.adapter or "", info["behaviour_version"])
        if block is None:
            raise NotApplicable(f"no expect block for {suite.mode.label}, backend={self.backend}, adapter={suite.adapter} {info['behaviour_version']}")
        self.block_line = block.line
        if block.not_applicable is not None:
            raise NotApplicable(block.not_applicable)
        documented = self.case.documented.select(suite.mode, self.backend, suite.adapter or "", info["behaviour_version"]) \
            if self.case.documented is not None else None
        verdict = suite.runner.run(
            self.case.payload(block, suite.mode, self.backend, documented),
            timeout=self.case.timeout, isolate=self.case.isolate == "process", env=self.case.env,
        )
        self.verdict = verdict
        if verdict["outcome"] != "passed":
            raise CaseFailure(verdict)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, CaseFailure):
            return str(super().repr_failure(excinfo))
        return failure_text(self, excinfo.value.verdict)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"{self.case.id} [{self.config.stash[SUITE].mode.label}, {self.backend}]"


def failure_text(item: SpecItem, verdict: dict[str, Any]) -> str:
    """What happened, what should have, and where the spec says so (with its lines)."""
    suite = item.config.stash[SUITE]
    case = item.case
    rel = _rel(case.spec_path, item.config.rootpath)
    head = verdict["outcome"].upper()
    lines = [
        f"{rel}:{case.line}: {case.id} {head} [{suite.mode.label}, backend={item.backend}, adapter={suite.adapter} {suite.info['implementation_version']}]",
        f"claim: {case.claim}",
    ]
    if item.block_line:
        lines.append(f"expect block at {rel}:{item.block_line}: {_one_line(verdict.get('expected'))}")
    lines.append("")
    lines += verdict.get("message", "").splitlines()
    lines += ["", "spec:"] + _spec_lines(case, item.block_line)
    return "\n".join(lines)


def _one_line(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 400 else text[:400] + "..."


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _spec_lines(case: Case, mark: int | None, limit: int = 40) -> list[str]:
    """The case's lines from the spec file, numbered, with the chosen block marked."""
    first = case.line
    last = max([first, *case.field_lines.values(), *(b.line for b in case.expect)]) + 6
    out = []
    path = str(case.spec_path)
    total = len(linecache.getlines(path))
    for n in range(first, min(last, first + limit, total) + 1):
        text = linecache.getline(path, n).rstrip("\n")
        if n > first and text.lstrip().startswith("- id:"):
            break
        out.append(f"{'>' if n == mark else ' '}{n:5d} | {text}")
    while out and out[-1].endswith("| "):
        out.pop()
    return out


# ---------------------------------------------------------------- reports and records


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if not isinstance(item, SpecItem) or call.when not in ("call", "setup"):
        return report
    if call.when == "setup" and report.passed:
        return report
    suite = item.config.stash[SUITE]
    exc = call.excinfo.value if call.excinfo is not None else None
    xfail = getattr(report, "wasxfail", None)
    divergence = getattr(item, "known_divergence", None)
    if divergence is not None and xfail is None and exc is None and call.when == "call" and report.failed:
        # A strict xfail that passed reaches here as a plain failure, without `wasxfail`.
        xfail = divergence.reason
    if isinstance(exc, NotApplicable):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.case.line - 1, f"not applicable: {exc}")
        outcome, message = "not_applicable", str(exc)
    elif call.when == "setup" and report.skipped:
        outcome, message = "skipped", str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else "skipped"
    elif xfail is not None:
        outcome = "xfailed" if report.skipped else "xpassed"
        message = f"{outcome}: {xfail}" + (f"\n{exc}" if exc is not None else "")
        if outcome == "xpassed":
            where = f" in {divergence.path}" if divergence is not None and divergence.path else ""
            message = (f"xpassed: listed as a known divergence{where} ({xfail}), but the case now conforms; "
                       "remove the entry (jax-conformance run --update-expectations does)")
            report.longrepr = f"{item.case.id} [{suite.mode.label}, {item.backend}] {message}"
    elif isinstance(exc, CaseFailure):
        outcome, message = exc.verdict["outcome"], exc.verdict.get("message", "")
    elif exc is not None:
        outcome, message = "error", f"harness error: {type(exc).__name__}: {exc}"
    else:
        outcome, message = "passed", (item.verdict or {}).get("message", "")
    verdict = item.verdict or {}
    info = suite.info
    record = {
        "record": "case", "run_id": suite.run_id, "case": item.case.id,
        "spec_file": _rel(item.case.spec_path, item.config.rootpath), "line": item.case.line,
        "topic": item.case.topic, "claim": item.case.claim, "tags": list(item.case.tags),
        "adapter": suite.adapter, "implementation_version": info["implementation_version"],
        "behaviour_version": info.get("behaviour_version"), "backend": item.backend,
        "mode": suite.mode.to_json(), "outcome": outcome, "message": message,
        "expected": verdict.get("expected"), "actual": verdict.get("actual"),
        "duration_s": verdict.get("duration_s", round(call.duration, 6)),
        "expect_line": item.block_line, "source": item.case.source, "nodeid": item.nodeid,
        "basis": item.case.basis,
    }
    if verdict.get("spec_error"):
        record["spec_error"] = True
    if item.case.documented is not None and "documented" in verdict:
        record["documented"] = {**verdict["documented"], "says": item.case.documented.says, "source": item.case.documented.source}
    if item.case.isolate:
        record["isolate"] = item.case.isolate
        if verdict.get("isolation"):
            record["isolation"] = verdict["isolation"]
    report.user_properties.append((RECORD_KEY, record))
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    record = _record(report)
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
        return "failed", "X", "XPASS(strict)"  # a failure of the run, with its message: the entry must go
    return None


def _record(report: Any) -> dict[str, Any] | None:
    for key, value in getattr(report, "user_properties", ()):
        if key == RECORD_KEY:
            return value
    return None


class SuiteReporter:
    """Per-session hooks that need the session's Suite (registered in pytest_configure)."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self._seen_collect_errors: set[str] = set()
        self._announced = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = _record(report)
        if record is None or _is_worker(self.suite.config):
            return
        outcome = record["outcome"]
        self.suite.counts[outcome] = self.suite.counts.get(outcome, 0) + 1
        if self.suite.writer is not None:
            self.suite.writer.write(record)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        suite = self.suite
        if not report.failed or _is_worker(suite.config) or suite.adapter is None:
            return
        nodeid = str(report.nodeid)
        if nodeid in self._seen_collect_errors:
            return
        self._seen_collect_errors.add(nodeid)  # xdist: every worker reports the same error
        suite.counts["error"] = suite.counts.get("error", 0) + 1
        if suite.writer is None:
            return
        longrepr = str(report.longrepr)
        match = _ERROR_LINE.match(longrepr)
        spec_file = _rel(Path(match.group(1)), suite.config.rootpath) if match else nodeid
        # A spec file's errors, or anything else that broke collection (an import error in the harness).
        suite.writer.write({
            "record": "case", "run_id": suite.run_id, "case": f"<{spec_file}>", "spec_file": spec_file,
            "line": int(match.group(2)) if match else 1, "topic": "<spec-errors>" if match else "<collection>",
            "claim": "the spec file loads" if match else "the suite collects",
            "adapter": suite.adapter, "implementation_version": self._version(),
            "backend": None, "mode": suite.mode.to_json(), "outcome": "error", "message": longrepr,
            "expected": None, "actual": None, "duration_s": 0.0,
        })

    def _version(self) -> str | None:
        try:
            return str(self.suite.info["implementation_version"])
        except Exception:  # the adapter itself may be what failed
            return None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not _is_worker(session.config) and not session.config.pluginmanager.hasplugin("dsession"):
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
        if self.suite.writer is not None and self.suite.adapter is not None and not self._announced:
            self._announced = True
            self.suite.writer.write({"record": "collected", "run_id": self.suite.run_id, "count": count})

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._collected(len(ids))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        suite = self.suite
        if suite.writer is not None and suite.adapter is not None and not _is_worker(session.config):
            suite.writer.write({"record": "end", "run_id": suite.run_id, "finished": now(), "exitstatus": int(exitstatus),
                                "interrupted": bool(session.shouldstop) or int(exitstatus) == 2, "counts": suite.counts})

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        suite = self.suite
        if suite.adapter is None or _is_worker(config):
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
        for path, entry in ([] if not suite.expectations.files else suite.expectations.unused(suite.mode, suite.adapter, suite.info["behaviour_version"])):
            terminalreporter.write_line(f"warning: {path}: expectation for {entry} matched no collected case", yellow=True)
