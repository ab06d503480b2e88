"""The pytest plugin's per-session state: the mode, the case runner, the loaded specs, the results file.

Runs in the pytest process (the parent side): cases themselves run in a worker process
(`jax_conformance.worker.loop`) that the runner starts in the run's mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jax_conformance import SPECS_DIR
from jax_conformance.adapters import installed_adapters
from jax_conformance.errors import ModeError, SpecFileErrors
from jax_conformance.flag_table import unknown_flags
from jax_conformance.mode import FlagValue, Mode, parse_flag, parse_truth, same_flag_value
from jax_conformance.plugin.caserunner import CaseRunner
from jax_conformance.records import (
    AdapterInfo,
    ResultsWriter,
    RunHeader,
    new_run_id,
    now,
    suite_info,
)
from jax_conformance.spec.cache import SpecCache, gc_paused
from jax_conformance.spec.expectations import ExpectationFile
from jax_conformance.spec.loader import load_spec
from jax_conformance.spec.model import Spec


class Suite:
    """Per-session state: the mode, the runner (and its worker), the results file, the outcome counts."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.adapter: str | None = config.getoption("adapter")
        self.mode = mode_from_options(config)
        self._runner: CaseRunner | None = None
        self.writer: ResultsWriter | None = None
        self.run_id = getattr(config, "workerinput", {}).get("conformance_run_id") or new_run_id()
        self.timeout = config.getoption("case_timeout") or float(config.getini("conformance_case_timeout"))
        self.counts: dict[str, int] = {}  # outcome -> case records, as `results.tally` counts them
        self._resolved: dict[str, str] | None = None
        self._flags: dict[str, FlagValue] | None = None
        self._settled = False  # whether upgrade flags set by the caller's environment are in self.mode
        self.expectations = ExpectationFile.load_many(config.getoption("expectations") or [])
        self.loaded: dict[Path, Spec | SpecFileErrors] = {}
        self._spec_cache = SpecCache.default()  # specs an earlier process (lint, another mode, a worker) loaded

    @property
    def runner(self) -> CaseRunner:
        if self.adapter is None:
            raise pytest.UsageError(missing_adapter())
        if self._runner is None:
            self._runner = CaseRunner(self.adapter, self.mode, self.timeout, memory_mb=self.config.getoption("case_memory_mb"),
                                      isolation=self.config.getoption("isolation"))
        return self._runner

    @property
    def info(self) -> AdapterInfo:
        info = self.runner.info
        if not self._settled:
            self._settled = True
            self.mode = with_environment_upgrades(self.mode, info)
        return info

    @property
    def flags(self) -> dict[str, FlagValue]:
        """Every flag the implementation has, with its value in this run (what `when: flags` is matched against)."""
        if self._flags is None:
            self._flags = check_flags(self.mode, self.info, self.adapter or "")
        return self._flags

    @property
    def behaviour_version(self) -> str:
        """The release the implementation is or models: what `when.version` is matched against."""
        return self.info["behaviour_version"]

    def backends(self) -> list[str]:
        self.flags  # noqa: B018 -- a flag the adapter lacks is a usage error before any case is collected
        available = list(self.info["backends"])
        wanted = self.config.getoption("backend")
        if not wanted:
            return available
        missing = [b for b in wanted if b not in available]
        if missing:
            raise pytest.UsageError(f"backend {', '.join(missing)} not available in adapter {self.adapter!r}; it has: {', '.join(available)}")
        return list(dict.fromkeys(wanted))

    def unresolved(self, names: set[str]) -> dict[str, str]:
        """name -> why it does not resolve in the adapter, for the names that do not (asked once each)."""
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

    def header(self) -> RunHeader:
        info = self.info
        return {
            "record": "run", "run_id": self.run_id, "started": now(), "adapter": self.adapter,
            "implementation_version": info["implementation_version"], "behaviour_version": info["behaviour_version"],
            "mode": self.mode.to_json(), "backends": self.backends(),
            "environment": {**info.get("environment", {}), **suite_info()}, "flags": list(info.get("flags") or []),
            "hypothesis": {"derandomize": True}, "argv": list(self.config.invocation_params.args),
        }

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
        if self.writer is not None:
            self.writer.close()


SUITE = pytest.StashKey[Suite]()


def mode_from_options(config: pytest.Config) -> Mode:
    """The run's mode: --x64 / --explicit-x64-dtypes / --flag over the environment JAX reads."""
    try:
        base = Mode.from_environ()
        flags = dict(parse_flag(text) for text in config.getoption("flag") or [])
    except ModeError as exc:
        raise pytest.UsageError(f"{exc}; or pass --x64/--explicit-x64-dtypes") from None
    x64 = config.getoption("x64")
    edm = config.getoption("explicit_x64_dtypes")
    mode = Mode(parse_truth(x64, "--x64") if x64 else base.x64, edm or base.explicit_x64_dtypes)
    try:
        return Mode.with_flags(mode.x64, mode.explicit_x64_dtypes, flags)
    except ModeError as exc:
        raise pytest.UsageError(f"--flag: {exc}") from None


def with_environment_upgrades(mode: Mode, info: AdapterInfo) -> Mode:
    """The mode with every upgrade flag that the caller's environment sets (`JAX_CUSTOM_VJP3=1`) and
    the mode does not: the worker inherits that environment, so JAX runs with it, and the records
    must say so. Other options read from the environment (JAX_PLATFORMS, ...) are not mode flags."""
    import os

    named = dict(mode.flags)
    extra = {f["name"]: f["value"] for f in info.get("flags") or []
             if f.get("upgrade") and f["name"].upper() in os.environ and f["name"] not in named
             and isinstance(f["value"], bool | str)}
    return mode.with_flag(**extra) if extra else mode


def check_flags(mode: Mode, info: AdapterInfo, adapter: str) -> dict[str, FlagValue]:
    """The flags the adapter reports, with their values in effect; every flag the mode sets must be
    among them and have taken its value (else a one-line usage error naming the flags it has)."""
    table = {f["name"]: f["value"] for f in info.get("flags") or []}
    missing = [name for name, _ in mode.flags if name not in table]
    if missing:
        raise pytest.UsageError(unknown_flags(missing, info, adapter))
    wrong = [f"{name}={value!r} (in effect: {table[name]!r})" for name, value in mode.flags if not same_flag_value(table[name], value)]
    if wrong:
        raise pytest.UsageError(f"adapter {adapter!r} did not start with the flags of the mode: {', '.join(wrong)}")
    return table


def missing_adapter() -> str:
    names = ", ".join(sorted(installed_adapters())) or "none"
    return f"the conformance suite needs --adapter=NAME (installed adapters: {names}), e.g. pytest conformance/ --adapter=jax"


def is_xdist_worker(config: pytest.Config) -> bool:
    """An xdist worker: it runs items, the controller writes the records."""
    return hasattr(config, "workerinput")


def spec_dirs(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in (config.getoption("specs") or [SPECS_DIR])]


def rel_path(path: Path, root: Path) -> str:
    """`path` relative to pytest's rootdir when under it (as records and messages name spec files);
    a bundled spec as `specs/...` always, as in a checkout, wherever an installed harness runs."""
    resolved = path.resolve()
    base = SPECS_DIR.parent if SPECS_DIR.resolve() in resolved.parents else root
    try:
        return str(resolved.relative_to(base.resolve()))
    except ValueError:
        return str(path)
