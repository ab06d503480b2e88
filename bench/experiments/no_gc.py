"""Experiment (a pytest plugin): collection with the cyclic garbage collector off.

    .venv/bin/python -m pytest conformance/ --adapter=jax --specs DIR --collect-only -q -p bench.experiments.no_gc

Loading thousands of cases builds millions of small acyclic objects (marked YAML nodes, Cases,
items); each full collection walks all of them again. The change it stands for: gc.freeze()
(or gc.disable()/enable()) around loading in conformance/plugin.py's SuiteDirectory.collect and
in lintcli.lint_paths.
"""

from __future__ import annotations

import gc

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    gc.disable()
