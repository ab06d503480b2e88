"""The plugin's options: their definitions, their parsing into `Options`, and their usage errors.

Every check of what the user passed raises the harness's `UsageError` (as the command line's
checks do, `jax_conformance.usage`); `as_pytest_usage_error` is the one place that turns it into
pytest's own, so pytest prints it as one line and exits 4 (a usage error) before any case runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from jax_conformance import PACKAGE_DIR, SPECS_DIR
from jax_conformance.adapters import installed_adapters
from jax_conformance.client.caserunner import ISOLATION_MODES
from jax_conformance.errors import ModeError, UsageError
from jax_conformance.mode import EXPLICIT_MODES, Mode, parse_flag, parse_truth
from jax_conformance.options import add_shard, add_specs, positive_float, positive_int
from jax_conformance.shard import Shard
from jax_conformance.spec.expectations import NO_FILES, files_for
from jax_conformance.usage import check_adapter, check_spec_paths, extend_pythonpath

DEFAULT_CASE_TIMEOUT = "60"  # seconds; the ini value `conformance_case_timeout`


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup(
        "jax-conformance", "jax-conformance: run the YAML specs against an implementation"
    )
    group.addoption(
        "--adapter",
        metavar="NAME",
        help=f"implementation under test ({', '.join(sorted(installed_adapters())) or 'none installed'})",
    )
    group.addoption(
        "--x64",
        choices=("on", "off"),
        help="the jax_enable_x64 mode (default: from JAX_ENABLE_X64, as JAX reads it)",
    )
    group.addoption(
        "--explicit-x64-dtypes",
        choices=EXPLICIT_MODES,
        help="policy for explicit 64-bit dtypes with x64 off (default: from JAX_EXPLICIT_X64_DTYPES, else warn)",
    )
    group.addoption(
        "--flag",
        action="append",
        metavar="NAME=VALUE",
        help="set a JAX flag for the run, as JAX reads it at import (repeatable; e.g. jax_custom_vjp3=true; "
        "the flags the adapter has are checked when it starts)",
    )
    group.addoption(
        "--backend",
        action="append",
        metavar="PLATFORM",
        help="run on this backend (repeatable; default: every backend the adapter reports)",
    )
    group.addoption(
        "--results", metavar="PATH", help="write one JSON line per case to PATH as it finishes"
    )
    add_specs(group.addoption, f"spec directories for `pytest conformance/` (default: {SPECS_DIR})")
    add_shard(group.addoption)
    group.addoption(
        "--pythonpath",
        action="append",
        metavar="DIR",
        help="a directory spec code imports from (a library's own modules), before PYTHONPATH for "
        "the workers too; the directory pytest starts in is on the path already",
    )
    group.addoption(
        "--case-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="time limit per case unless the spec sets one, above 0 (default: ini conformance_case_timeout, 60)",
    )
    group.addoption(
        "--case-memory-mb",
        type=positive_int,
        default=None,
        metavar="MB",
        help="address-space limit per worker; a case past it is recorded as crashed (default: "
        "$JAX_CONFORMANCE_MEMORY_LIMIT_MB, else none)",
    )
    group.addoption(
        "--isolation",
        choices=ISOLATION_MODES,
        default=None,
        help="how `isolate: process` cases get their fresh process: fork from a server that has paid the "
        "start-up when that gives the same process, else spawn; or always spawn "
        "(default: $JAX_CONFORMANCE_ISOLATION, else fork)",
    )
    parser.addini(
        "conformance_case_timeout",
        "default time limit per case in seconds",
        default=DEFAULT_CASE_TIMEOUT,
    )
    group.addoption(
        "--expectations",
        action="append",
        metavar="PATH",
        help="known-divergence file (repeatable): listed cases become xfailed/xpassed (default: the "
        f"adapter's files in specs/expectations/; `{NO_FILES}`: no file, every divergence fails)",
    )


@dataclass(frozen=True)
class Options:
    """The plugin's options for this pytest process, parsed and checked."""

    adapter: str | None  # None: the plugin is inert (unless the suite is collected: a usage error)
    mode: Mode
    specs: tuple[Path, ...]  # --specs as given (none: the bundled specs)
    spec_dirs: tuple[Path, ...]  # the spec directories, resolved
    backends: tuple[str, ...]  # --backend; () means every backend the adapter reports
    results: Path | None
    case_timeout: float  # seconds, for a case whose spec sets none
    memory_mb: int | None
    isolation: str | None
    expectations: tuple[str, ...]  # --expectations as given (none: the adapter's own files)
    shard: Shard | None = None  # --shard I/N: only the cases of that shard
    selection: tuple[tuple[str, str | None], ...] = ()  # -k and -m as given, for the description

    @classmethod
    def parse(cls, config: pytest.Config) -> Options:
        """The options of `config`; a value the plugin cannot use is a UsageError naming it."""
        results = config.getoption("results")
        specs = tuple(Path(p) for p in config.getoption("specs") or ())
        return cls(
            adapter=config.getoption("adapter"),
            mode=mode_from_options(
                config.getoption("x64"),
                config.getoption("explicit_x64_dtypes"),
                config.getoption("flag") or [],
            ),
            specs=specs,
            spec_dirs=tuple(p.resolve() for p in specs or (SPECS_DIR,)),
            backends=tuple(config.getoption("backend") or ()),
            results=Path(results) if results else None,
            case_timeout=config.getoption("case_timeout")
            or float(config.getini("conformance_case_timeout")),
            memory_mb=config.getoption("case_memory_mb"),
            isolation=config.getoption("isolation"),
            expectations=tuple(config.getoption("expectations") or ()),
            shard=config.getoption("shard"),
            selection=(
                ("keyword", config.option.keyword or None),
                ("markexpr", config.option.markexpr or None),
            ),
        )

    def check(self, config: pytest.Config) -> None:
        """The adapter is installed (or an importable module:Class) and given wherever the suite is
        collected; every --specs path holds a spec (else a UsageError naming what is wrong)."""
        if self.adapter is None:
            if self.targets_suite(config):
                raise UsageError(missing_adapter())
            return
        check_adapter(self.adapter)
        check_spec_paths(list(self.specs))
        extend_pythonpath(config.getoption("pythonpath") or ())

    def expectation_files(self, adapter: str) -> list[Path]:
        """The known-divergence files the run is judged by: those given, none for `--expectations
        none`, else the adapter's own in specs/expectations/ (as `jax-conformance run` reads them)."""
        if NO_FILES in self.expectations:
            if len(self.expectations) > 1:
                raise UsageError(f"--expectations {NO_FILES} cannot be given with files")
            return []
        return files_for(adapter, [Path(p).resolve() for p in self.expectations])

    def targets_suite(self, config: pytest.Config) -> bool:
        """Whether pytest was asked to collect the suite: the package folder, a spec directory, or
        a path inside one (`pytest conformance/`, `pytest specs/x64`)."""
        return any(self._in_suite(Path(arg.split("::")[0]).resolve()) for arg in config.args)

    def _in_suite(self, path: Path) -> bool:
        if path == PACKAGE_DIR:
            return True
        return path.exists() and any(
            path == d
            or d in path.parents
            or (path in d.parents and path != Path("/") and path.name == "specs")
            for d in self.spec_dirs
        )


def mode_from_options(x64: str | None, explicit_x64_dtypes: str | None, flags: list[str]) -> Mode:
    """The run's mode: --x64 / --explicit-x64-dtypes / --flag over the environment JAX reads."""
    try:
        base = Mode.from_environ()
        named = dict(parse_flag(text) for text in flags)
    except ModeError as exc:
        raise UsageError(f"{exc}; or pass --x64/--explicit-x64-dtypes") from None
    try:
        on = parse_truth(x64, "--x64") if x64 else base.x64
        return Mode.with_flags(on, explicit_x64_dtypes or base.explicit_x64_dtypes, named)
    except ModeError as exc:
        raise UsageError(f"--flag: {exc}") from None


def missing_adapter() -> str:
    names = ", ".join(sorted(installed_adapters())) or "none"
    return (
        f"the conformance suite needs --adapter=NAME (installed adapters: {names}), e.g. pytest "
        "conformance/ --adapter=jax"
    )


def is_xdist_worker(config: pytest.Config) -> bool:
    """An xdist worker: it runs items, the controller writes the records."""
    return hasattr(config, "workerinput")


@contextmanager
def as_pytest_usage_error() -> Iterator[None]:
    """The one place the harness's UsageError becomes pytest's (one line, exit status 4); the
    plugin's `pytest_configure` and `pytest_sessionstart` run under it."""
    try:
        yield
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
