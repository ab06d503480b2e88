"""The pytest plugin: spec files become collectors, cases become items, results become records.

Registered through the `pytest11` entry point; this module is that entry point and registers the
rest. It never imports JAX: cases run in a worker process (`jax_conformance.worker.loop`)
started in the run's mode. The package runs in the pytest process (the mode process), one module
per concern, in pytest's own style (a plugin object registered only where it applies, the
session's state under a `StashKey`):

- `options`: the command-line options, parsed into `Options`, and the one place that turns the
  harness's usage errors into pytest's (`as_pytest_usage_error`, around the hooks below);
- `session`: `Suite`, the session's state (mode, case runner, loaded specs, known divergences);
- `collect`: the `Collection` plugin, its collectors and items;
- `sharding`: the `ShardSelection` plugin (`--shard I/N`: the other shards' items deselected);
- `reporting`: the `CaseReports` plugin (a report carries its record) and the `Records` plugin
  (the results file, the outcome counts, the terminal's header and summary);
- the mode process's end of the worker pipe and of the fork server is `jax_conformance.client`.

The `jax_contract` fixture is a plugin of its own (`jax_conformance.contract.fixture`, its own
`pytest11` entry point).

Without `--adapter` nothing but the options is registered: the plugin is inert, unless pytest is
asked to collect the suite, which is a usage error naming the adapters.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest
from jax_conformance import PACKAGE_DIR
from jax_conformance.client.caserunner import CaseRunner
from jax_conformance.errors import AdapterStartError, UsageError
from jax_conformance.mode import value_text
from jax_conformance.plugin.collect import Collection
from jax_conformance.plugin.options import (
    Options,
    add_options,
    as_pytest_usage_error,
    is_xdist_worker,
)
from jax_conformance.plugin.reporting import CaseReports, Records, interrupt_on_sigterm
from jax_conformance.plugin.session import RUNNER_CLASS, SUITE, Suite
from jax_conformance.plugin.sharding import ShardSelection
from jax_conformance.records import ResultsWriter
from jax_conformance.spec.rules import known_tags
from jax_conformance.usage import keyword_selection

__all__ = ["PACKAGE_DIR", "SUITE", "Suite"]  # what tests and tools import from here


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Parse the options; with an adapter, make the session's `Suite` and register the plugins
    that apply in this process. A usage error is named before anything runs."""
    for tag, description in known_tags().items():
        config.addinivalue_line("markers", f"{tag}: {description}")
    with as_pytest_usage_error():
        _configure(config)


def _configure(config: pytest.Config) -> None:
    options = Options.parse(config)
    options.check(config)
    if options.adapter is None:
        return
    suite = Suite(
        options,
        options.adapter,
        getattr(config, "workerinput", {}).get("conformance_run_id"),
        config.stash.get(RUNNER_CLASS, CaseRunner),
    )
    config.stash[SUITE] = suite
    # -k selects over each case's id, claim and tags (`Collection.pytest_collection_modifyitems`),
    # never over an item's name, which carries the mode and backend: pytest's own -k is taken over.
    keyword = keyword_selection(config.option.keyword) if config.option.keyword else None
    if keyword is not None:
        config.option.keyword = ""
    # A broken spec file is one collection error; every other file still runs.
    config.option.continue_on_collection_errors = True
    config.pluginmanager.register(Collection(suite, keyword), "jax-conformance-collection")
    if options.shard is not None:
        config.pluginmanager.register(ShardSelection(options.shard), "jax-conformance-shard")
    config.pluginmanager.register(CaseReports(suite), "jax-conformance-reports")
    if not is_xdist_worker(config):  # the controller writes the records of a distributed run
        writer = ResultsWriter(options.results) if options.results else None
        if writer is not None:
            interrupt_on_sigterm(config)
        config.pluginmanager.register(Records(suite, config, writer), "jax-conformance-records")
    if options.targets_suite(config):
        # The implementation imports in its worker while pytest starts and loads the specs.
        suite.runner.prestart()


@pytest.hookimpl(wrapper=True)
def pytest_sessionstart(session: pytest.Session) -> Generator[None, None, None]:
    """A flag or backend the adapter lacks is found when the adapter first answers: in the
    session's start (the records' header, the terminal's header, which names the backends)."""
    with as_pytest_usage_error():
        try:
            return (yield)
        except AdapterStartError:
            suite = session.config.stash.get(SUITE, None)
            if suite is not None and suite.mode.flags:
                check_flag_values(suite)
            raise


def check_flag_values(suite: Suite) -> None:
    """The adapter did not start in a mode with flags: when a flag was given a value it cannot take
    (`--flag jax_custom_vjp3=maybe`), that is a usage error, named as such (the adapter's flag table
    read in the mode without its flags)."""
    from jax_conformance.client.caserunner import read_adapter_info
    from jax_conformance.flag_table import wrong_values

    wrong = wrong_values(suite.mode, read_adapter_info(suite.adapter, suite.mode.base))
    if wrong:
        given = " ".join(f"{name}={value_text(value)}" for name, value in suite.mode.flags)
        raise UsageError(f"--flag {given}: {'; '.join(wrong)}")


def pytest_unconfigure(config: pytest.Config) -> None:
    suite = config.stash.get(SUITE, None)
    if suite is not None:
        suite.close()
