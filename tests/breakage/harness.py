"""The one harness of the breakage tests: run breakage adapters over an area's cases and judge the records.

A breakage adapter is real JAX patched to break one documented rule (tests/breakage/<topic>.py).
A `Breakage` names one adapter, the mode it runs in, the cases that must fail under it and the
control cases it leaves alone; an `Area` is a directory (or two) of specs and its breakages.

`run_all` starts one mode process per breakage, side by side (threads, each waiting on its
process), the longest first. Each process is the suite's own command line (`pytest_command`) with
only the suite's plugins loaded and `-k` selecting exactly the listed cases: other installed
plugins cost one to two CPU-seconds per process, and the files run fifty of them. The records are
read with the project's one reader (`jax_conformance.records.load_runs`).

`check_caught` is the assertion every breakage test makes: each listed case fails in the
breakage's mode, its record has a message, the expected block and what happened, the terminal
report names the case and the mode and shows the message; each control passes. `uncovered` and
`unrun_adapters` say which cases of an area no breakage catches and which adapters of its modules
no breakage runs (tests/test_breakage_areas.py checks both for every area).

That unbroken JAX passes the same cases in the same modes is tests/test_suite_modes.py's check
(every case in every default mode), so the failures are the breakage's doing; an area whose modes
that test does not run (tests/test_breakage_flags.py: modes with upgrade flags) runs
real `jax` beside its breakages with `baseline`.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from jax_conformance.adapters import Adapter
from jax_conformance.launch.scheduler import pytest_command, pytest_options
from jax_conformance.mode import Mode
from jax_conformance.records import ResultRecord, load_runs
from jax_conformance.spec.loader import load_spec, spec_files

from tests.breakage.workerclient import SHARED_SERVER_ENV

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "specs"
# Only the suite's plugins (xdist too: the suite's plugin declares an xdist hook and cannot load without it).
PLUGINS = ("-p", "xdist.plugin", "-p", "jax_conformance.plugin")
RUN_TIMEOUT = 600
# Mode processes at once: each spends most of its time in its worker, so more than the cores pays.
PARALLEL = max(4, os.cpu_count() or 1)
# What a readable failure says: "..., but should ...", a false check, or an exception whose
# message does not match the expected words.
FAILURE_WORDS = ("but should", "is false", "does not match")
# The mode most breakages run in.
OFF_WARN = Mode(False, "warn")


@dataclass(frozen=True)
class Breakage:
    """One breakage adapter in one mode, the cases that must fail under it and those it leaves alone."""

    adapter: str  # "module:Class" in tests/breakage, or "jax" for a baseline
    mode: Mode
    catches: tuple[str, ...]
    controls: tuple[str, ...] = ()  # cases the break does not touch: they must pass
    claim: str = (
        ""  # the rule broken, for the failure message (default: the class's `claim` or `breaks`)
    )

    @property
    def name(self) -> str:
        """The run's name (test ids, result files): the class and the mode."""
        return f"{self.adapter.rsplit(':', 1)[-1]}-{self.mode.slug}"

    @property
    def cases(self) -> tuple[str, ...]:
        return self.catches + self.controls

    @property
    def rule(self) -> str:
        """The broken rule in words."""
        if self.claim or ":" not in self.adapter:
            return self.claim
        cls = adapter_class(self.adapter)
        return str(getattr(cls, "claim", "") or getattr(cls, "breaks", ""))


@dataclass(frozen=True)
class Area:
    """Spec directories and the breakages that prove each of their cases can fail."""

    name: str
    spec_dirs: tuple[Path, ...]
    breakages: tuple[Breakage, ...]
    # the tests.breakage modules whose adapters these are: every one must run
    modules: tuple[str, ...]
    # False where the cases are too many to list each as caught (a table's cells): the breakages
    # then prove that each kind of wrong cell fails, with the cell named
    lists_every_case: bool = True
    # The first JAX release whose internals the area's adapters patch (older ones skip the area)
    min_jax: str = ""

    def case_ids(self) -> set[str]:
        return {
            case.id for path in spec_files(list(self.spec_dirs)) for case in load_spec(path).cases
        }


@dataclass
class BreakageRun:
    """What one mode process left: its case records by id, its terminal output, its exit status."""

    breakage: Breakage
    records: dict[str, ResultRecord] = field(default_factory=dict)
    output: str = ""
    returncode: int | None = None


def adapter_class(spec: str) -> type[Adapter]:
    """The class a `module:Class` adapter spec names."""
    module, _, name = spec.partition(":")
    cls: type[Adapter] = getattr(importlib.import_module(module), name)
    return cls


def keyword(case_ids: Iterable[str]) -> str:
    """A -k expression that selects exactly these cases: an item is named "<id>[<mode>-<backend>]",
    so "<id>[" selects that case and no longer id that starts with it."""
    return " or ".join(sorted({_k_word(f"{case}[") for case in case_ids}))


def _k_word(word: str) -> str:
    """A table cell's id holds `|` and `*` (`promotion.table.add[int*|float*]`), which -k cannot parse:
    the word up to the first of them (it selects the cell with its row; the others run as well)."""
    cut = min((i for i, ch in enumerate(word) if ch in "|*"), default=len(word))
    return word[:cut]


def read_case_records(path: Path) -> dict[str, ResultRecord]:
    """The case records of a results file by case id ({} when the file was never written)."""
    return {record["case"]: record for run in load_runs([path]) for record in run.cases}


def mode_process_env(server: Path | None = None) -> dict[str, str]:
    """The environment of a breakage's mode process (given a shared worker server, its socket)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "PYTEST_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if server is not None:
        env[SHARED_SERVER_ENV] = str(server)
    return env


def worker_environment(mode: Mode, process_env: dict[str, str]) -> dict[str, str]:
    """The environment a mode process gives its worker (`CaseRunner.worker_environ` in that process, for an
    adapter under tests/): what the shared worker server must run in to serve it."""
    env = {**process_env, "PYTEST_VERSION": pytest.__version__, **mode.environ()}  # pytest sets it
    env.setdefault("PYTHONHASHSEED", "0")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


@contextlib.contextmanager
def worker_servers(modes: Iterable[Mode], where: Path) -> Iterator[dict[Mode, Path]]:
    """The shared worker servers (tests/breakage/workerserver.py, one per level) of each mode that
    more than one breakage adapter's run uses (`modes`: one entry per such run), by the directory
    of their sockets. A full server refuses the workers of an adapter that must not have JAX
    imported first (they are spawned, as always), but never an environment: that would mean the
    one computed here (`worker_environment`) is not the one the mode processes give their
    workers, and the runs paid the imports again."""
    shared = [m for m, n in Counter(modes).items() if n > 1]
    folders = {mode: where / f"w{i}" for i, mode in enumerate(shared)}
    servers: list[tuple[Path, subprocess.Popen[str]]] = []
    said: list[str] = []
    try:
        for mode, folder in folders.items():
            folder.mkdir()
            env = worker_environment(mode, mode_process_env(folder))
            for level in ("full", "light"):
                sock = folder / f"{level}.sock"
                cmd = [sys.executable, "-m", "tests.breakage.workerserver", "--socket", str(sock)]
                proc = subprocess.Popen(
                    [*cmd, "--level", level, "--adapter", "jax"],
                    cwd=REPO,
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                servers.append((sock, proc))
        for sock, proc in servers:
            deadline = time.monotonic() + 60
            while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
        yield folders
    finally:
        for _, proc in servers:
            out, _ = proc.communicate(timeout=60)
            said.append(out.strip())
    # A baseline's worker (real `jax`, no `module:Class`) has no PYTHONPATH entry for tests/: it is
    # refused and spawned, as before.
    wrong = [
        line
        for text in said
        for line in text.splitlines()
        if "from the server's" in line and not line.startswith("refused jax:")
    ]
    assert not wrong, "the shared worker servers refused:\n" + "\n".join(wrong)


def run_one(
    breakage: Breakage, spec_dirs: Iterable[Path], out: Path, server: Path | None = None
) -> BreakageRun:
    """Run the breakage's cases in its mode in one mode process (its worker forked from the
    mode's shared worker server, when one is given)."""
    options = pytest_options(specs=spec_dirs, keyword=keyword(breakage.cases))
    # the shared servers' client end: the mode process's runner asks them for its workers
    client = ("-p", "tests.breakage.workerclient") if server is not None else ()
    cmd = pytest_command(breakage.adapter, breakage.mode, out, extra=[*PLUGINS, *client, *options])
    env = mode_process_env(server)
    proc = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    return BreakageRun(breakage, read_case_records(out), proc.stdout + proc.stderr, proc.returncode)


def baseline(breakage: Breakage) -> Breakage:
    """Real JAX over the same cases in the same mode: every one of them must pass."""
    return replace(breakage, adapter="jax", catches=(), controls=breakage.cases)


def run_all(
    breakages: Iterable[Breakage], spec_dirs: Iterable[Path], tmp: Path
) -> dict[Breakage, BreakageRun]:
    """Every breakage's run, side by side, the ones with the most cases first."""
    dirs = list(spec_dirs)
    order = sorted(dict.fromkeys(breakages), key=lambda b: -len(b.cases))
    with (
        tempfile.TemporaryDirectory(prefix="brk") as where,  # short: a socket path has 108 bytes
        worker_servers((b.mode for b in order if ":" in b.adapter), Path(where)) as servers,
        ThreadPoolExecutor(PARALLEL) as pool,
    ):
        futures = {
            b: pool.submit(run_one, b, dirs, tmp / f"{i:02d}-{b.name}.jsonl", servers.get(b.mode))
            for i, b in enumerate(order)
        }
        return {b: f.result() for b, f in futures.items()}


def describe(run: BreakageRun, case: str) -> str:
    """One case's record under a breakage, for a failed assertion."""
    record = run.records.get(case)
    if record is None:
        return (
            f"{case} under {run.breakage.adapter} [{run.breakage.mode.slug}]: the case did not "
            f"run\n{run.output[-3000:]}"
        )
    mode = Mode.from_json(record["mode"])
    return (
        f"{case} [mode {mode.slug}] under {run.breakage.adapter}: {record['outcome']}"
        f"\n  expected: {json.dumps(record.get('expected'))[:600]}\n  actual: {json.dumps(record.get('actual'))[:600]}"
        f"\n  message: {(record.get('message') or '')[:600]}"
    )


def check_caught(run: BreakageRun) -> None:
    """Each case of the breakage fails, readably, in its mode; each control passes."""
    brk = run.breakage
    uncaught = [
        describe(run, c) for c in brk.catches if run.records.get(c, {}).get("outcome") != "failed"
    ]
    assert not uncaught, f"{brk.adapter} ({brk.rule}) not caught by:\n" + "\n".join(uncaught)
    for case in brk.catches:
        _check_readable(run, run.records[case])
    wrong = [
        describe(run, c) for c in brk.controls if run.records.get(c, {}).get("outcome") != "passed"
    ]
    assert not wrong, f"{brk.adapter} should leave these cases alone:\n" + "\n".join(wrong)
    if brk.catches:
        assert run.returncode == 1, (
            f"pytest exited {run.returncode} (1 = some case failed)\n{run.output[-3000:]}"
        )


def _check_readable(run: BreakageRun, record: ResultRecord) -> None:
    """The failure names the case and the mode, shows the expect block, and says what happened."""
    case, mode = record["case"], run.breakage.mode
    assert record["mode"] == mode.to_json(), describe(
        run, case
    )  # the run's mode, and no other JAX flag
    assert record["message"] and record["expected"] and record["actual"], describe(run, case)
    assert f"{case} FAILED [{mode.label}" in run.output, (
        f"no failure header for {case} [{mode.label}] in the output"
    )
    first_line = record["message"].splitlines()[0]
    assert first_line[:120] in run.output, (
        f"the failure text of {case} is missing from the output: {first_line!r}"
    )
    assert any(words in record["message"] for words in FAILURE_WORDS), describe(run, case)


def uncovered(area: Area) -> tuple[list[str], list[str]]:
    """(cases no breakage must fail, listed cases that are not in the specs)."""
    ids = area.case_ids()
    caught = {case for b in area.breakages for case in b.catches}
    listed = caught | {case for b in area.breakages for case in b.controls}
    # a table's cells (`<case>[<cell>]`) are proven by kind: a caught cell covers its table
    tables = {case.split("[", 1)[0] for case in caught if "[" in case}
    by_kind = {case for case in ids if "[" in case and case.split("[", 1)[0] in tables}
    return sorted(ids - caught - by_kind), sorted(listed - ids)


def unrun_adapters(area: Area) -> list[str]:
    """The breakage adapters of the area's modules that no breakage runs.

    An adapter is a class of the module, an `Adapter`, that no other class of the module extends
    (those are the shared bases).
    """
    run = {b.adapter for b in area.breakages}
    return sorted(
        f"{module}:{name}"
        for module in area.modules
        for name in _leaf_adapters(module)
        if f"{module}:{name}" not in run
    )


def _leaf_adapters(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    classes = [
        c
        for _, c in inspect.getmembers(module, inspect.isclass)
        if c.__module__ == module_name and issubclass(c, Adapter)
    ]
    return [
        c.__name__ for c in classes if not any(o is not c and issubclass(o, c) for o in classes)
    ]
