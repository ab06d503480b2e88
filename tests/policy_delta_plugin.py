"""Run a table's cells only where this mode expects something else than another policy does:
`pytest -p tests.policy_delta_plugin --table-delta-from warn`.

Used by tests/test_suite_modes.py for the second and third x64-off policies (error, allow). Their
runs are there to show that the specs say what stock JAX does in those modes; the `warn` run of the
same test already holds every table cell to JAX. A table cell whose chosen `expect` block (and
documented block) is the same under both policies is the `warn` run's cell again, so it is left
out; the cells the policy changes (the 64-bit operands: 757 of 7,164 cases under error, 585 under
allow, by the reference adapter's own expectations) and every case that is not a table cell run in
full. `jax-conformance run` never uses this: the main job runs every cell in every mode.
"""

from __future__ import annotations

import dataclasses

import pytest
from jax_conformance.mode import Mode
from jax_conformance.plugin.session import SUITE, Suite
from jax_conformance.spec.model import Case, Documented


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--table-delta-from",
        default=None,
        metavar="POLICY",
        help="leave out the table cells whose expectation is the one they have under this "
        "explicit-x64-dtypes policy",
    )


@pytest.hookimpl(trylast=True)  # after -k/-m deselection and the conformance plugin's own hooks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    base_policy = config.getoption("table_delta_from")
    if base_policy is None:
        return
    suite = config.stash[SUITE]
    if suite.mode.x64 or suite.mode.explicit_x64_dtypes == base_policy:
        raise pytest.UsageError("--table-delta-from compares two x64-off policies")
    base = dataclasses.replace(suite.mode, explicit_x64_dtypes=base_policy)
    same = [i for i in items if _same_as_base(suite, base, i)]
    if same:
        config.hook.pytest_deselected(items=same)
        kept = set(map(id, items)) - set(map(id, same))
        items[:] = [i for i in items if id(i) in kept]
    config.stash[_LEFT_OUT] = len(same)


_LEFT_OUT = pytest.StashKey[int]()


def _same_as_base(suite: Suite, base: Mode, item: pytest.Item) -> bool:
    """A table cell whose expect block (and documented block) says the same under the base policy."""
    case = getattr(item, "case", None)
    backend = getattr(item, "backend", None)
    if not isinstance(case, Case) or case.table is None or not isinstance(backend, str):
        return False
    sets: list[Case | Documented] = [case] + ([case.documented] if case.documented else [])
    for blocks in sets:
        here = suite.select(blocks, backend)
        there = blocks.select(base, backend, suite.adapter, suite.behaviour_version, suite.flags)
        if (here is None) != (there is None):
            return False
        if here is not None and there is not None and here.expected != there.expected:
            return False
    return True


def pytest_report_header(config: pytest.Config) -> str | None:
    base = config.getoption("table_delta_from")
    return (
        None if base is None else f"table cells: only those whose expectation differs from {base}'s"
    )


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if config.getoption("table_delta_from") is not None:
        left = config.stash.get(_LEFT_OUT, 0)
        terminalreporter.write_line(
            f"table-delta: {left} table cells left out (as in the base policy)"
        )
