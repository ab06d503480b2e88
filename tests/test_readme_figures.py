"""The README's figures are the tree's (issue 28): each figure it states is computed by
docs/figures.py from the current specs, and this test fails when one is stale."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from tests.conftest import REPO

README = REPO / "README.md"


def figures_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_figures", REPO / "docs" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_figure_of_the_readme_is_the_trees() -> None:
    fig = figures_module()
    figs = fig.figures()
    text, figs, run_figs = fig.readme_and_figures(figs)
    assert fig.stale(text, figs, run_figs) == [], (
        "README.md is stale; docs/figures.py prints the tree's figures"
    )
    named = {name for name, _ in fig.FIGURE.findall(text)}
    assert {
        "cases",
        "spec_files",
        "na.off-warn",
        "na.off-error",
        "na.off-allow",
        "na.on",
    } <= named, named
    rows = fig.run_rows(text)
    assert list(rows) == ["off-warn", "off-error", "off-allow", "on"], (
        rows
    )  # the real run output, every mode


def test_a_stale_figure_is_caught() -> None:
    fig = figures_module()
    figs = {"cases": "356", "spec_files": "32", "na.off-warn": "6"}
    table = (
        "adapter  version  backend  mode      passed  failed  n/a  total  status\n"
        "-------  -------  -------  --------  ------  ------  ---  -----  ------\n"
        "jax      0.10.2   cpu      off-warn     349       0    7    356  done\n"
    )
    problems = fig.stale("<!-- fig:cases -->253<!-- /fig --> cases\n" + table, figs)
    assert problems == [
        "cases: README says '253', the tree gives '356'",
        "run output, mode off-warn: n/a 7, the specs give 6",
    ], problems


def test_the_failure_example_quotes_the_spec_as_it_is() -> None:
    """The README's failing-case excerpt: every quoted line is the spec file's line of that number
    (the one expectation the example changed, int32 to int64, aside)."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("### What a failure looks like") :]
    block = block[: block.index("\n## ")]
    quoted = re.findall(r"^>?\s+(\d+) \| (.*)$", block, re.M)
    assert len(quoted) >= 5, block
    lines = (REPO / "specs" / "x64" / "defaults.yaml").read_text(encoding="utf-8").splitlines()
    for number, line in quoted:
        real = lines[int(number) - 1]
        assert line in (real, real.replace("int32", "int64")), (number, line, real)
    first = int(quoted[0][0])
    assert f"defaults.yaml:{first}: x64.defaults.arange-int FAILED" in block


def test_bench_readme_states_no_stale_table() -> None:
    """bench/README.md's table is the bench's latest run or a placeholder, never the 2026-11-29 one."""
    text = (Path(REPO) / "bench" / "README.md").read_text(encoding="utf-8")
    assert "2026-11-29T16:17:07Z" not in text
