"""Run the collected items in a seeded random order: `pytest -p tests.shuffle_plugin --shuffle-seed N`.

Used by tests/test_reliability.py to show that no case's outcome depends on which cases ran
before it in the same worker. With xdist every worker collects the same shuffled list (the
seed is the same), which xdist requires.
"""

from __future__ import annotations

import random

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shuffle-seed",
        type=int,
        default=None,
        metavar="N",
        help="run the collected items in a random order drawn from seed N",
    )
    parser.addoption(
        "--shuffle-shared-only",
        action="store_true",
        help="leave out `isolate: process` cases: each runs in a fresh interpreter, so order cannot reach it",
    )


@pytest.hookimpl(trylast=True)  # after -k/-m deselection and the conformance plugin's own hooks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("shuffle_shared_only"):
        isolated = [
            i for i in items if getattr(getattr(i, "case", None), "isolate", None) == "process"
        ]
        if isolated:
            config.hook.pytest_deselected(items=isolated)
            items[:] = [i for i in items if i not in isolated]
    seed = config.getoption("shuffle_seed")
    if seed is not None:
        random.Random(seed).shuffle(items)


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = config.getoption("shuffle_seed")
    return None if seed is None else f"shuffle: items in random order, seed {seed}"
