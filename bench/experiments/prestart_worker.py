"""Experiment (a pytest plugin): start the case worker while the specs load, not after.

    .venv/bin/python -m pytest conformance/ --adapter=jax ... -p bench.experiments.prestart_worker

Today `SpecFile.collect` needs `suite.info` (backends, version), so the first spec file waits
for a fresh worker to import JAX (1-1.5 s on 2 cores) after the parent has loaded and linted
every spec file; the two are serial. This plugin hands the suite a runner whose handshake runs
in a thread from `pytest_configure` on, so the worker's import overlaps spec loading on the
other core. The change it stands for, in conformance/plugin.py and executor.py: split
`CaseRunner._live_worker` into spawn (Popen, returns at once) and handshake, and spawn in
`pytest_configure` when `--adapter` is given.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from jax_conformance.plugin import SUITE
from jax_conformance.run.workers import CaseRunner


class PrestartedRunner(CaseRunner):
    """A CaseRunner whose first worker is started (and greeted) by a background thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="prestart-worker", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            CaseRunner._live_worker(self)
        except BaseException as exc:  # reported on first use, in the main thread
            self._error = exc

    def _live_worker(self) -> Any:
        if self._thread.is_alive():
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return super()._live_worker()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    suite = config.stash.get(SUITE, None)
    # An xdist controller runs no case: only the processes that collect get a prestarted worker.
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")
    if suite is not None and suite.adapter is not None and not controller:
        suite._runner = PrestartedRunner(suite.adapter, suite.mode, suite.timeout)
