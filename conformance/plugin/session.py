"""The plugin's per-session state: the mode, the case runner, the loaded specs, the known divergences.

Runs in the pytest process (the mode process): cases themselves run in a worker process
(`jax_conformance.worker.loop`) that the runner starts in the run's mode. A `Suite` exists only
when an adapter is given (`pytest_configure` stashes it under `SUITE`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jax_conformance import SPECS_DIR
from jax_conformance.client.caserunner import CaseRunner
from jax_conformance.errors import SpecFileErrors, UsageError
from jax_conformance.flag_table import missing_flags, unknown_flags
from jax_conformance.mode import FlagValue, Mode, same_flag_value
from jax_conformance.plugin.options import Options
from jax_conformance.records import AdapterInfo, RunHeader, new_run_id, now, suite_info
from jax_conformance.spec.cache import SpecCache, gc_paused
from jax_conformance.spec.expectations import ExpectationFile
from jax_conformance.spec.loader import load_spec
from jax_conformance.spec.model import Case, Documented, Expectation, Spec

# The class of the session's case runner. A plugin registered before the suite's may stash a
# `CaseRunner` subclass here that gives workers from elsewhere (the breakage tests fork them from
# servers shared by many mode processes: tests/breakage/workerclient.py).
RUNNER_CLASS = pytest.StashKey[type[CaseRunner]]()


class Suite:
    """Per-session state: the mode, the runner (and its worker), the loaded specs, the known divergences."""

    def __init__(
        self,
        options: Options,
        adapter: str,
        run_id: str | None = None,
        runner_class: type[CaseRunner] = CaseRunner,
    ) -> None:
        self.options = options
        self.adapter = adapter
        self.mode = options.mode
        self.run_id = run_id or new_run_id()  # an xdist worker gets its controller's
        self.runner = runner_class(
            adapter,
            self.mode,
            options.case_timeout,
            memory_mb=options.memory_mb,
            isolation=options.isolation,
        )
        self._resolved: dict[str, str] = {}
        self._flags: dict[str, FlagValue] | None = None
        # whether upgrade flags set by the caller's environment are in self.mode
        self._settled = False
        self.expectation_paths = options.expectation_files(adapter)
        self.expectations = ExpectationFile.load_many([str(p) for p in self.expectation_paths])
        self.loaded: dict[Path, Spec | SpecFileErrors] = {}
        # specs an earlier process (lint, another mode, a worker) loaded
        self._spec_cache = SpecCache.default()

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
            self._flags = check_flags(self.mode, self.info, self.adapter)
        return self._flags

    def missing_flags(self) -> list[str]:
        """The flags the mode sets that the implementation does not have (none: it can run the mode)."""
        return missing_flags(self.mode, self.info)

    @property
    def behaviour_version(self) -> str:
        """The release the implementation is or models: what `when.version` is matched against."""
        return self.info["behaviour_version"]

    @property
    def fallback_version(self) -> str | None:
        """The release whose blocks judge a case that has none for `behaviour_version` (the radar's
        as-of adapter, `environment.judged_as_of`: a case gated `<=0.4.30` and `>=0.5.3` still runs
        in 0.4.31), None for every other adapter."""
        fallback = self.info["environment"].get("judged_as_of")
        return str(fallback) if fallback else None

    def select(self, blocks: Case | Documented, backend: str) -> Expectation | None:
        """The block that judges this case here: the first whose `when` holds for this release, else
        (for the radar) the first that holds for `fallback_version`; None: not applicable."""
        version, fallback = self.behaviour_version, self.fallback_version
        block = blocks.select(self.mode, backend, self.adapter, version, self.flags)
        if block is None and fallback is not None:
            block = blocks.select(self.mode, backend, self.adapter, fallback, self.flags)
        return block

    def backends(self) -> list[str]:
        self.flags  # noqa: B018 -- a flag the adapter lacks is a usage error before any case is collected
        available = list(self.info["backends"])
        wanted = self.options.backends
        if not wanted:
            return available
        missing = [b for b in wanted if b not in available]
        if missing:
            raise UsageError(
                f"backend {', '.join(missing)} not available in adapter {self.adapter!r}; it has: "
                f"{', '.join(available)}"
            )
        return list(dict.fromkeys(wanted))

    def unresolved(self, names: set[str]) -> dict[str, str]:
        """name -> why it does not resolve in the adapter, for the names that do not (asked once each)."""
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

    def header(self, argv: list[str]) -> RunHeader:
        info = self.info
        return {
            "record": "run",
            "run_id": self.run_id,
            "started": now(),
            "adapter": self.adapter,
            "implementation_version": info["implementation_version"],
            "behaviour_version": info["behaviour_version"],
            "mode": self.mode.to_json(),
            "backends": self.backends(),
            "environment": {**info.get("environment", {}), **suite_info()},
            "flags": list(info.get("flags") or []),
            "hypothesis": {"derandomize": True},
            "argv": argv,
        }

    def close(self) -> None:
        self.runner.close()


SUITE = pytest.StashKey[Suite]()


def with_environment_upgrades(mode: Mode, info: AdapterInfo) -> Mode:
    """The mode with every upgrade flag that the caller's environment sets (`JAX_CUSTOM_VJP3=1`) and
    the mode does not: the worker inherits that environment, so JAX runs with it, and the records
    must say so. Other options read from the environment (JAX_PLATFORMS, ...) are not mode flags."""
    named = dict(mode.flags)
    extra = {
        f["name"]: f["value"]
        for f in info.get("flags") or []
        if f.get("upgrade")
        and f["name"].upper() in os.environ
        and f["name"] not in named
        and isinstance(f["value"], bool | str)
    }
    return mode.with_flag(**extra) if extra else mode


def check_flags(mode: Mode, info: AdapterInfo, adapter: str) -> dict[str, FlagValue]:
    """The flags the adapter reports, with their values in effect; every flag the mode sets must be
    among them and have taken its value (else a one-line usage error naming the flags it has)."""
    table = {f["name"]: f["value"] for f in info.get("flags") or []}
    missing = missing_flags(mode, info)
    if missing:
        raise UsageError(unknown_flags(missing, info, adapter))
    wrong = [
        f"{name}={value!r} (in effect: {table[name]!r})"
        for name, value in mode.flags
        if not same_flag_value(table[name], value)
    ]
    if wrong:
        raise UsageError(
            f"adapter {adapter!r} did not start with the flags of the mode: {', '.join(wrong)}"
        )
    return table


def rel_path(path: Path, root: Path) -> str:
    """`path` relative to pytest's rootdir when under it (as records and messages name spec files);
    a bundled spec as `specs/...` always, as in a checkout, wherever an installed harness runs."""
    resolved = path.resolve()
    base = SPECS_DIR.parent if SPECS_DIR.resolve() in resolved.parents else root
    try:
        return str(resolved.relative_to(base.resolve()))
    except ValueError:
        return str(path)
