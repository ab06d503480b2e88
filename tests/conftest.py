"""Shared fixtures: write spec files into a temporary spec directory and run the suite on them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.records import Record, read_records

REPO = PACKAGE_DIR.parent


class SpecDir:
    """A temporary spec directory and a way to run `pytest conformance/` over it in-process."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path / "specs"
        self.path.mkdir()

    def write(self, name: str, text: str) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def run(self, *args: str, adapter: str = "jax") -> pytest.RunResult:
        return self.pytester.runpytest(
            str(PACKAGE_DIR),
            f"--adapter={adapter}",
            "--specs",
            str(self.path),
            "-p",
            "no:cacheprovider",
            f"--rootdir={self.pytester.path}",
            *args,
        )

    def run_subprocess(
        self, *args: str, adapter: str = "jax", timeout: float = 300
    ) -> pytest.RunResult:
        return self.pytester.runpytest_subprocess(
            str(PACKAGE_DIR),
            f"--adapter={adapter}",
            "--specs",
            str(self.path),
            "-p",
            "no:cacheprovider",
            f"--rootdir={self.pytester.path}",
            *args,
            timeout=timeout,
        )


@pytest.fixture
def specdir(pytester: pytest.Pytester) -> SpecDir:
    return SpecDir(pytester)


def read_results(path: Path) -> list[Record]:
    """Every record of a results file, read by the project's one reader; a line that is no record fails the test."""
    problems: list[str] = []
    records = list(read_records(path, problems))
    assert not problems, problems
    return records


# The files whose tests take minutes, longest first. `./dev test` runs under `--dist loadfile`,
# which hands whole files to the two workers in collection order; collected alphabetically, the
# longest (test_x64_specs_catch_breakage.py) came last and ran alone for minutes while the other
# worker sat idle. Started first, the short files fill in around them.
LONG_FIRST = (
    "test_x64_specs_catch_breakage.py",
    "test_custom_vjp_specs_catch_breakage.py",
    "test_suite_modes.py",
    "test_reliability.py",
    "test_wheel.py",
    "test_bench_quick.py",
    "test_flag_specs_catch_breakage.py",
    "test_forkserver.py",
    "test_report_upcoming.py",
    "test_plugin.py",
    "test_verdicts.py",
)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(
        key=lambda item: rank.get(item.path.name, len(LONG_FIRST))
    )  # stable: the rest keep their order
