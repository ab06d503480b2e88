"""Shared fixtures: write spec files into a temporary spec directory and run the suite on them."""

from __future__ import annotations

import signal
import textwrap
from pathlib import Path
from typing import Any

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


# Tests press Ctrl-C on runs (SIGINT to a run, as a terminal does). A test session started in the
# background by a shell without job control (`cmd &` in a script, `nohup`, some CI runners) has
# SIGINT ignored, every process it starts inherits that, and those runs would never see the
# Ctrl-C: seen as two SIGINT tests failing when `.ci/run` was started with `nohup ... &`. A handled
# signal is reset to its default in a started program, so handling it here (in the controller and
# in each xdist worker) gives every run the tests start the SIGINT a foreground command has.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The files whose tests take minutes, longest first. `./dev test` runs under `--dist loadfile`,
# which hands whole files to the two workers in collection order; collected alphabetically, the
# longest (the x64 breakages, then a file of their own) came last and ran alone for minutes while
# the other worker sat idle. Started first, the short files fill in around them. (The breakage runs
# led until their mode processes shared one JAX import per mode: in CI x64 took 269 s and
# custom_vjp 204 s; their CPU-seconds have since fallen to 40% and 49%.)
LONG_FIRST = (
    "test_reliability.py",
    "test_wheel.py",
    "test_suite_modes.py",
    "test_breakage.py",
    "test_bench_quick.py",
    "test_breakage_flags.py",
    "test_forkserver.py",
    "test_report_upcoming.py",
    "test_plugin.py",
    "test_specs.py",
)


# Files whose tests are independent and each minutes long: under `--dist loadfile` each of their
# tests is a scheduling unit of its own, so the two workers share them (as one unit the four modes
# of test_suite_modes.py ran one after another on one worker, the other idle for the last ~20
# minutes of the run). Every other file stays whole on one worker, so its module fixtures (the
# report sites) run once.
TEST_PER_UNIT = ("test_suite_modes.py",)
# Files whose tests are grouped by the first word of their parameter id, each group a scheduling
# unit: test_breakage.py's `test_caught[<area>-...]`, so the areas' runs (x64 and custom_rules a few
# minutes each) go to both workers as the areas' files did, and each area's runs still start once.
UNIT_PER_FIRST_WORD = ("test_breakage.py",)


def scheduling_unit(nodeid: str) -> str:
    """The unit `--dist loadfile` hands to one worker: a test's file, its area, or the test itself."""
    file = nodeid.split("::", 1)[0]
    name = file.rsplit("/", 1)[-1]
    if name in TEST_PER_UNIT:
        return nodeid
    if name in UNIT_PER_FIRST_WORD:
        return nodeid.split("-", 1)[0]
    return file


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's file scheduler, with the units of `scheduling_unit` in place of whole files."""
    if config.getvalue("dist") != "loadfile":
        return None  # xdist's own choice
    from xdist.scheduler import LoadFileScheduling

    class FilesAndLongTests(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scheduling_unit(nodeid)

    return FilesAndLongTests(config, log)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(
        key=lambda item: rank.get(item.path.name, len(LONG_FIRST))
    )  # stable: the rest keep their order
