"""The pytest plugin: its options and hooks. Spec files become collectors, cases become items, results become records.

Registered through the `pytest11` entry point. It is inert unless `--adapter` is given or a
spec file is collected, and it never imports JAX: cases run in a worker process
(`jax_conformance.worker.loop`) started in the run's mode. This module and the ones it uses run
in the pytest process (the parent side): `plugin_suite` (per-session state), `plugin_items`
(collectors, items, failure text), `plugin_records` (case records, the results file, the summary).
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from jax_conformance import PACKAGE_DIR, SPECS_DIR, __version__
from jax_conformance.adapters import installed_adapters
from jax_conformance.errors import UsageError
from jax_conformance.mode import EXPLICIT_MODES
from jax_conformance.plugin.caserunner import ISOLATION_MODES
from jax_conformance.plugin.collect import SpecFile, SpecItem, SuiteDirectory
from jax_conformance.plugin.reporting import (
    RECORD_KEY,
    SuiteReporter,
    case_record,
    outcome_of,
    record_of,
)
from jax_conformance.plugin.session import SUITE, Suite, is_xdist_worker, missing_adapter, spec_dirs
from jax_conformance.records import ResultsWriter
from jax_conformance.spec.loader import is_spec_file
from jax_conformance.spec.rules import known_tags
from jax_conformance.usage import check_spec_paths, positive_float, positive_int

__all__ = ["PACKAGE_DIR", "SUITE", "Suite"]  # what tests and tools import from here


# ---------------------------------------------------------------- options and configuration


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jax-conformance", "jax-conformance: run the YAML specs against an implementation")
    group.addoption("--adapter", metavar="NAME", help=f"implementation under test ({', '.join(sorted(installed_adapters())) or 'none installed'})")
    group.addoption("--x64", choices=("on", "off"), help="the jax_enable_x64 mode (default: from JAX_ENABLE_X64, as JAX reads it)")
    group.addoption("--explicit-x64-dtypes", choices=EXPLICIT_MODES, help="policy for explicit 64-bit dtypes with x64 off (default: from JAX_EXPLICIT_X64_DTYPES, else warn)")
    group.addoption("--flag", action="append", metavar="NAME=VALUE",
                    help="set a JAX flag for the run, as JAX reads it at import (repeatable; e.g. jax_custom_vjp3=true; "
                         "the flags the adapter has are checked when it starts)")
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


def _targets_suite(config: pytest.Config) -> bool:
    for arg in config.args:
        p = Path(arg.split("::")[0]).resolve()
        if p == PACKAGE_DIR or (p.exists() and any(p == d or d in p.parents or p in d.parents and p != Path("/") and p.name == "specs" for d in spec_dirs(config))):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    for tag, description in known_tags().items():
        config.addinivalue_line("markers", f"{tag}: {description}")
    adapter = config.getoption("adapter")
    if adapter is not None and adapter not in installed_adapters() and ":" not in adapter:
        raise pytest.UsageError(f"unknown adapter {adapter!r}; {missing_adapter()}")
    if adapter is None and _targets_suite(config):
        raise pytest.UsageError(missing_adapter())
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
    if results and not is_xdist_worker(config):
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
    if suite.mode.flags and suite.adapter is not None and not is_xdist_worker(session.config):
        suite.flags  # noqa: B018 -- a flag the adapter lacks: one usage error, before collection
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
    if is_spec_file(resolved) and any(d == resolved.parent or d in resolved.parents for d in spec_dirs(config)):
        return SpecFile.from_parent(parent, path=file_path)
    return None


# ---------------------------------------------------------------- reports and records


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if not isinstance(item, SpecItem) or call.when not in ("call", "setup"):
        return report
    if call.when == "setup" and report.passed:
        return report
    outcome, message = outcome_of(item, call, report)
    report.user_properties.append((RECORD_KEY, case_record(item, outcome, message, call.duration)))
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
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
        return "failed", "X", "XPASS(strict)"  # a failure of the run, with its message: the entry must go
    return None
