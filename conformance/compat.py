"""`jax-conformance compat`: run the suite against several JAX releases and show what changed.

One isolated environment per release (`python -m venv` + pip, cached under the cache dir),
the full mode matrix in each (one pytest process per mode, in parallel), one merged results
file, a behaviour × release table on the terminal, a JSON summary of the changes, and the
HTML report built from the merged file. A release that cannot be installed or imported is
recorded as `unavailable`, with the reason, and the rest of the table is still built.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.mode import DEFAULT_MODES, Mode, ModeError
from conformance.results import Run, load_runs, new_run_id, now, suite_info

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO_ROOT / ".conformance-cache"
DEFAULT_OUT = REPO_ROOT / "reports" / "latest"
# From the first release the suite targets to the newest one the index offered when this was
# written; each has cp311 jaxlib wheels (checked with `pip index versions jaxlib`).
DEFAULT_VERSIONS = ("0.4.30", "0.5.3", "0.6.2", "0.7.2", "0.8.0", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1")

# Releases that need a newer Python than the default interpreter: (specifier over the JAX
# version, Python minor). jax 0.11.0 and later declare Requires-Python >=3.12.
PYTHON_NEEDED: tuple[tuple[str, str], ...] = ((">=0.11.0", "3.12"),)

# Pins each release needs besides jax[cpu]==VERSION, found by installing and running the suite.
# (specifier over the JAX version, requirements); every matching row applies.
RELEASE_PINS: tuple[tuple[str, tuple[str, ...]], ...] = ()

# What the harness itself needs in every environment (the project is installed with --no-deps).
HARNESS_DEPS = ("pyyaml", "jsonschema", "jinja2", "packaging", "pytest", "hypothesis", "pytest-xdist",
                "setuptools>=68")
# Bump when the way environments are built changes, so old cache entries are not reused.
ENV_LAYOUT = 1
MARKER = "conformance-env.json"

# Run by each environment's interpreter: imports JAX, computes once, reports the versions.
IMPORT_CHECK = """
import json, sys
import numpy, jax, jaxlib
x = jax.jit(lambda a: a + 1)(jax.numpy.zeros(3)).block_until_ready()
print(json.dumps({"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", "?"),
                  "numpy": numpy.__version__, "python": sys.version.split()[0],
                  "devices": [str(d) for d in jax.devices()]}))
"""

# The same verdicts as the report's behaviour x release table (conformance.report.model):
# xpassed means a listed divergence did not happen, so the behaviour was seen to hold.
HOLDING = frozenset({"passed", "xpassed"})
SKIPPED = frozenset({"not_applicable", "skipped"})
HOLDS, FAILS, PARTLY, NOT_APPLICABLE = "holds", "fails", "partly", "n/a"
MISSING, UNAVAILABLE = "missing", "unavailable"
CELL = {HOLDS: "ok", FAILS: "FAIL", PARTLY: "part", NOT_APPLICABLE: "n/a", MISSING: "?", UNAVAILABLE: "--"}


# ---------------------------------------------------------------- versions, pins, cache keys


def parse_versions(text: str) -> list[str]:
    """`0.4.30,0.6.2 0.8.0` -> sorted, de-duplicated release strings; a bad one is an error."""
    out: dict[Version, str] = {}
    for raw in text.replace(",", " ").split():
        try:
            v = Version(raw)
        except InvalidVersion:
            raise ValueError(f"{raw!r} is not a release number (e.g. 0.4.30)") from None
        out.setdefault(v, raw)
    if not out:
        raise ValueError("no release given (e.g. --versions 0.4.30,0.10.2)")
    return [out[v] for v in sorted(out)]


def _versions_arg(text: str) -> list[str]:
    try:
        return parse_versions(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _modes_arg(text: str) -> list[Mode]:
    try:
        return list(dict.fromkeys(Mode.from_slug(s) for s in text.replace(",", " ").split()))
    except (ModeError, IndexError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def pins_for(version: str, table: Iterable[tuple[str, Sequence[str]]] = RELEASE_PINS) -> list[str]:
    """The extra requirements this JAX release needs (every matching row of the table)."""
    v = Version(version)
    pins: list[str] = []
    for spec, reqs in table:
        if SpecifierSet(spec).contains(v, prereleases=True):
            pins.extend(r for r in reqs if r not in pins)
    return pins


def requirements(version: str, pins: Sequence[str]) -> list[str]:
    """Everything the environment's pip install is asked for."""
    return [f"jax[cpu]=={version}", *pins, *HARNESS_DEPS]


def env_key(version: str, pins: Sequence[str], python: str) -> str:
    """A short hash of what decides an environment's contents: release, pins, deps, interpreter."""
    blob = json.dumps({"layout": ENV_LAYOUT, "version": version, "requirements": requirements(version, pins),
                       "python": python}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def python_tag(python: str) -> str:
    """`cpython-3.11.7` for an interpreter, the part of the cache key it decides."""
    out = subprocess.run([python, "-c", "import sys,platform;print(f'{sys.implementation.name}-{platform.python_version()}')"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{python} does not run: {out.stderr.strip()[-300:]}")
    return out.stdout.strip()


def python_needed(version: str, table: Iterable[tuple[str, str]] = PYTHON_NEEDED) -> str | None:
    """The Python minor version (e.g. "3.12") this release needs, if not any supported one."""
    v = Version(version)
    return next((minor for spec, minor in table if SpecifierSet(spec).contains(v, prereleases=True)), None)


def find_python(minor: str, overrides: dict[str, str] | None = None) -> str | None:
    """An interpreter of this minor version: --interpreter, then PATH, then pyenv's versions."""
    if overrides and minor in overrides:
        return overrides[minor]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which(f"python{minor}")] + sorted(
        (str(p) for p in pyenv.glob(f"{minor}.*/bin/python{minor}")), key=lambda p: _version_key(Path(p).parent.parent.name),
        reverse=True)
    for candidate in candidates:
        # a pyenv shim is on PATH even when its version is not selected: it must actually run
        if candidate and _runs(candidate, minor):
            return candidate
    return None


def _runs(python: str, minor: str) -> bool:
    try:
        out = subprocess.run([python, "-c", "import sys;print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == minor


def default_cache_dir() -> Path:
    return Path(os.environ.get("JAX_CONFORMANCE_CACHE") or DEFAULT_CACHE)


# ---------------------------------------------------------------- environments


@dataclass
class Environment:
    """One release's environment: ready to run, or unavailable with the reason."""

    version: str
    path: Path
    pins: list[str]
    ok: bool = False
    reason: str = ""
    cached: bool = False
    seconds: float = 0.0
    versions: dict[str, Any] = field(default_factory=dict)

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def _tail(text: str, lines: int = 1) -> str:
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(kept[-lines:]) if kept else ""


def _pip_reason(output: str) -> str:
    """The line of pip's output that says why: its first telling ERROR line, else its last line."""
    errors = [ln.strip() for ln in output.splitlines()
              if ln.strip().startswith("ERROR:") and "Ignored the following" not in ln]
    reason = errors[0] if errors else _tail(output)
    # "(from versions: 0.1.19, ... 0.10.2)" lists every release: keep its ends
    head, sep, rest = reason.partition("(from versions: ")
    if sep and rest.count(",") > 6:
        listed = [x.strip() for x in rest.rstrip(")").split(",")]
        reason = f"{head}(from versions: {', '.join(listed[:2])}, ..., {', '.join(listed[-3:])})"
    return reason[:500]


def _run_logged(cmd: list[str], log: Path, timeout: float, env: dict[str, str] | None = None,
                cwd: Path | None = None) -> tuple[int, str]:
    """Run a command, append its output to a log, kill its process group on timeout."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env, cwd=cwd, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, _ = proc.communicate()
            f.write(f"{out or ''}# killed after {time.monotonic() - start:.1f} s\n")
            return 124, (out or "") + f"\nERROR: timed out after {timeout:.0f} s: {' '.join(cmd[:4])} ..."
        f.write(f"{out or ''}# exit status {proc.returncode} after {time.monotonic() - start:.1f} s\n")
        return proc.returncode, out or ""


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _clean_environ(env_dir: Path | None = None) -> dict[str, str]:
    """The parent's environment without anything that would leak another Python or a mode into it."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JAX_ENABLE_X64", "JAX_EXPLICIT_X64_DTYPES",
                        "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_XDIST_AUTO_NUM_WORKERS")}
    if env_dir is not None:
        env["VIRTUAL_ENV"] = str(env_dir)
        env["PATH"] = os.pathsep.join([str(env_dir / "bin"), env.get("PATH", "")])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


# pip install -e writes the project's egg-info into the repository: one at a time.
_EDITABLE_LOCK = threading.Lock()


def ensure_env(version: str, cache: Path, python: str, py_tag: str, timeout: float = 900.0,
               rebuild: bool = False, table: Iterable[tuple[str, Sequence[str]]] = RELEASE_PINS) -> Environment:
    """The cached environment for this release, built (venv, pip, import check) if it is missing."""
    pins = pins_for(version, table)
    path = cache / "envs" / f"jax-{version}-{env_key(version, pins, py_tag)}"
    env = Environment(version, path, pins)
    marker = path / MARKER
    if marker.is_file() and not rebuild:
        try:
            data = json.loads(marker.read_text())
            env.ok, env.cached, env.versions = True, True, data.get("versions", {})
            return env
        except (OSError, json.JSONDecodeError):
            pass  # a torn marker: build again
    start = time.monotonic()
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    log = cache / "logs" / f"jax-{version}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"building {path} at {now()}\n")
    deadline = start + timeout

    def left() -> float:
        return max(5.0, deadline - time.monotonic())

    steps: list[tuple[str, list[str], Path | None]] = [
        ("create the venv", [python, "-m", "venv", str(path)], None),
        (f"pip install jax[cpu]=={version}", [str(env.python), "-m", "pip", "install", "--only-binary=:all:",
                                             "--progress-bar", "off", *requirements(version, pins)], None),
        ("install this project", [str(env.python), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                                  "--progress-bar", "off", "-e", str(REPO_ROOT)], REPO_ROOT),
    ]
    for what, cmd, cwd in steps:
        if "-e" in cmd:
            with _EDITABLE_LOCK:
                rc, out = _run_logged(cmd, log, left(), _clean_environ(path), cwd)
        else:
            rc, out = _run_logged(cmd, log, left(), _clean_environ(path if cmd[0] != python else None), cwd)
        if rc != 0:
            env.reason = f"{what} failed: {_pip_reason(out)}"
            env.seconds = time.monotonic() - start
            return env
    rc, out = _run_logged([str(env.python), "-c", IMPORT_CHECK], log, min(left(), 300.0), _clean_environ(path))
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if rc != 0 or not lines:
        env.reason = f"import jax failed: {_tail(out)}"
        env.seconds = time.monotonic() - start
        return env
    env.versions = json.loads(lines[-1])
    rc, freeze = _run_logged([str(env.python), "-m", "pip", "freeze", "--exclude-editable"], log, 120.0,
                             _clean_environ(path))
    env.ok, env.seconds = True, time.monotonic() - start
    marker.write_text(json.dumps({"version": version, "pins": pins, "requirements": requirements(version, pins),
                                  "python": py_tag, "built": now(), "build_seconds": round(env.seconds, 1),
                                  "versions": env.versions, "freeze": freeze.split() if rc == 0 else []}, indent=1))
    return env


# ---------------------------------------------------------------- runs


@dataclass
class ModeRun:
    """One pytest process: a release in one mode."""

    version: str
    mode: Mode
    results: Path
    returncode: int | None = None
    seconds: float = 0.0
    reason: str = ""
    counts: dict[str, int] = field(default_factory=dict)


def pytest_command(env: Environment, mode: Mode, results: Path, extra: Sequence[str] = ()) -> list[str]:
    """The pytest command line that runs the suite in one mode inside a release's environment."""
    return [str(env.python), "-m", "pytest", "conformance/", "--adapter=jax", f"--x64={'on' if mode.x64 else 'off'}",
            f"--explicit-x64-dtypes={mode.explicit_x64_dtypes}", "--results", str(results), "-q",
            "-p", "no:cacheprovider", *extra]


def run_mode(env: Environment, mode: Mode, out_dir: Path, timeout: float, extra: Sequence[str] = ()) -> ModeRun:
    """Run the suite in one mode; a run that dies or hangs is closed with an interrupted `end` record."""
    results = out_dir / f"{env.version}-{mode.slug}.jsonl"
    run = ModeRun(env.version, mode, results)
    results.unlink(missing_ok=True)
    log = out_dir / f"{env.version}-{mode.slug}.log"
    log.write_text("")
    start = time.monotonic()
    rc, out = _run_logged(pytest_command(env, mode, results, extra), log, timeout, _clean_environ(env.path), REPO_ROOT)
    run.returncode, run.seconds = rc, time.monotonic() - start
    runs = load_runs([results]) if results.is_file() else []
    if not runs:
        run.reason = f"pytest wrote no results (exit status {rc}): {_tail(out, 2)}"
        _append(results, unavailable_records(env.version, mode, run.reason, status="error"))
        return run
    last = runs[-1]
    run.counts = {k: v for k, v in _count(last.cases).items() if v}
    if last.end is None:
        run.reason = f"pytest did not finish (exit status {rc}): {_tail(out, 2)}"
        _append(results, [{"record": "end", "run_id": last.header.get("run_id"), "finished": now(), "exitstatus": rc,
                           "interrupted": True, "counts": run.counts, "reason": run.reason}])
    elif rc not in (0, 1):
        run.reason = f"pytest exit status {rc}: {_tail(out, 2)}"
    return run


def _count(cases: Iterable[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in cases:
        if c.get("record", "case") != "case":
            continue
        out[c.get("outcome", "error")] = out.get(c.get("outcome", "error"), 0) + 1
    return out


def _append(path: Path, records: Iterable[dict[str, Any]]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, default=repr) + "\n")


def unavailable_records(version: str, mode: Mode, reason: str, status: str = "unavailable",
                        env_info: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A `run` and an `end` record for a release that could not run in this mode, with the reason."""
    run_id = new_run_id()
    header = {"record": "run", "run_id": run_id, "started": now(), "adapter": "jax",
              "implementation_version": version, "behaviour_version": version, "mode": mode.to_json(),
              "backends": [], "status": status, "reason": reason,
              "environment": {**(env_info or {}), **suite_info()}}
    end: dict[str, Any] = {"record": "end", "run_id": run_id, "finished": now(), "exitstatus": None, "interrupted": False,
           "counts": {}, "status": status, "reason": reason}
    return [header, end]


def merge(files: Iterable[Path], dest: Path) -> int:
    """Concatenate result files into one (each record keeps its run_id); returns the line count."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(dest, "w", encoding="utf-8") as out:
        for path in files:
            if not path.is_file():
                continue
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.strip():
                    out.write(line + "\n")
                    n += 1
    return n


# ---------------------------------------------------------------- the behaviour × release table


@dataclass
class CaseRow:
    """One case across releases: its status in each, and what changed."""

    case: str
    topic: str
    claim: str
    cells: dict[str, str] = field(default_factory=dict)  # version -> status
    modes: dict[str, dict[str, str]] = field(default_factory=dict)  # version -> mode slug -> outcome
    messages: dict[str, str] = field(default_factory=dict)  # version -> first line of a failure (or n/a) message

    def known(self, order: Sequence[str]) -> list[tuple[str, str]]:
        return [(v, self.cells[v]) for v in order if self.cells.get(v) in (HOLDS, FAILS, PARTLY, NOT_APPLICABLE)]

    def differs(self, order: Sequence[str]) -> bool:
        return len({s for _, s in self.known(order)}) > 1

    def first(self, status: str, order: Sequence[str]) -> str | None:
        return next((v for v, s in self.known(order) if s == status), None)

    def last(self, status: str, order: Sequence[str]) -> str | None:
        return next((v for v, s in reversed(self.known(order)) if s == status), None)

    def first_failing(self, order: Sequence[str]) -> str | None:
        """The first release where it fails in some applicable mode."""
        return next((v for v, s in self.known(order) if s in (FAILS, PARTLY)), None)

    def last_failing(self, order: Sequence[str]) -> str | None:
        return next((v for v, s in reversed(self.known(order)) if s in (FAILS, PARTLY)), None)

    def holds_since(self, order: Sequence[str]) -> str | None:
        """The release from which it holds in every later release tested (None if the newest fails)."""
        since = None
        for v, s in reversed(self.known(order)):
            if s != HOLDS:
                break
            since = v
        return since


@dataclass
class CompatTable:
    versions: list[str]
    rows: list[CaseRow]
    unavailable: dict[str, str]  # version -> reason (no mode of it ran)
    problems: dict[str, list[str]]  # version -> reasons some mode did not run or finish


def _status(outcomes: Iterable[str]) -> str:
    """Holds in every applicable mode, fails in every one, partly (some of each), or n/a."""
    applicable = [o for o in outcomes if o not in SKIPPED]
    if not applicable:
        return NOT_APPLICABLE
    holding = sum(o in HOLDING for o in applicable)
    return HOLDS if holding == len(applicable) else FAILS if holding == 0 else PARTLY


def _first_line(text: str | None) -> str:
    """The message's first line; for a Hypothesis case, the failure with its example after it."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].startswith("falsifying example"):
        return f"{lines[1][:240]} ({lines[0][:80]})"
    return lines[0][:300] if lines else ""


def _slug(mode: dict[str, Any]) -> str:
    try:
        return Mode.from_json(mode).slug
    except (ModeError, KeyError, TypeError):
        return "?"


def build_table(runs: Sequence[Run], versions: Sequence[str] | None = None) -> CompatTable:
    """Per case and release: holds (passed in some mode, failed in none), fails, or not applicable."""
    by_version: dict[str, list[Run]] = {}
    for run in runs:
        if run.header.get("adapter", "jax") != "jax":
            continue
        by_version.setdefault(str(run.header.get("implementation_version")), []).append(run)
    order = sorted(set(versions or []) | set(by_version), key=_version_key)
    unavailable: dict[str, str] = {}
    problems: dict[str, list[str]] = {}
    outcomes: dict[tuple[str, str], dict[str, list[str]]] = {}
    # (case, version) -> mode slug -> (outcome, first line of its message)
    messages: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    meta: dict[str, tuple[str, str]] = {}
    for version in order:
        vruns = by_version.get(version, [])
        ran = [r for r in vruns if r.header.get("status") not in ("unavailable", "error")]
        reasons = [str(r.header.get("reason") or (r.end or {}).get("reason") or "") for r in vruns if r not in ran]
        reasons += [str((r.end or {}).get("reason") or "interrupted") for r in ran if r.interrupted]
        if not ran:
            unavailable[version] = next((x for x in reasons if x), "no results for this release")
        elif reasons:
            problems[version] = sorted(set(reasons))
        for run in ran:
            slug = _slug(run.header.get("mode", {}))
            for rec in run.cases:
                if rec.get("record", "case") != "case" or rec.get("case") is None:
                    continue  # e.g. the `collected` progress record
                case = str(rec.get("case"))
                meta.setdefault(case, (str(rec.get("topic") or case.rsplit(".", 1)[0]), str(rec.get("claim") or "")))
                outcome = str(rec.get("outcome", "error"))
                outcomes.setdefault((case, version), {}).setdefault(slug, []).append(outcome)
                if outcome not in HOLDING:
                    messages.setdefault((case, version), {}).setdefault(slug, (outcome, _first_line(rec.get("message"))))
    rows = []
    for case, (topic, claim) in meta.items():
        row = CaseRow(case, topic, claim)
        for version in order:
            per_mode = outcomes.get((case, version))
            if version in unavailable:
                row.cells[version] = UNAVAILABLE
            elif not per_mode:
                row.cells[version] = MISSING
            else:
                row.cells[version] = _status(o for os_ in per_mode.values() for o in os_)
                row.modes[version] = {m: _status(os_) for m, os_ in sorted(per_mode.items())}
                if (case, version) in messages:
                    row.messages[version] = _explain(messages[(case, version)])
        rows.append(row)
    rows.sort(key=lambda r: (not r.differs(order), r.topic, r.case))
    return CompatTable(order, rows, unavailable, problems)


_MODE_ORDER = {m.slug: i for i, m in enumerate(DEFAULT_MODES)}


def _explain(per_mode: dict[str, tuple[str, str]]) -> str:
    """`off-warn, off-error failed: <first line>`: the modes where it did not hold, and why (failures first)."""
    bad = {m: v for m, v in per_mode.items() if v[0] not in SKIPPED}
    chosen = bad or per_mode
    modes = sorted(chosen, key=lambda m: (_MODE_ORDER.get(m, 99), m))
    outcome, line = chosen[modes[0]]
    return f"{', '.join(modes)} {outcome.replace('_', ' ')}: {line}"


def _version_key(v: str) -> tuple[int, Any]:
    try:
        return (0, Version(v))
    except InvalidVersion:
        return (1, v)


def change_reason(row: CaseRow, order: Sequence[str]) -> str:
    """Why the case changes: the message of the release where it does not hold, nearest the change."""
    since = row.holds_since(order)
    if since is not None:
        # it holds from `since` on: the reason is what happened just before
        before = [v for v, _ in row.known(order) if _version_key(v) < _version_key(since)]
        if before:
            return row.messages.get(before[-1], "")
    newest_bad = [v for v, s in row.known(order) if s != HOLDS]
    return row.messages.get(newest_bad[-1], "") if newest_bad else ""


def summary(table: CompatTable) -> dict[str, Any]:
    """The machine-readable summary: every case whose status differs across releases."""
    order = table.versions
    changes = []
    for row in table.rows:
        if not row.differs(order):
            continue
        changes.append({
            "case": row.case, "topic": row.topic, "claim": row.claim,
            "first_holds": row.first(HOLDS, order), "last_fails": row.last_failing(order),
            "holds_since": row.holds_since(order), "first_fails": row.first_failing(order),
            "last_holds": row.last(HOLDS, order),
            "statuses": {v: row.cells[v] for v in order}, "modes": row.modes,
            "reason": change_reason(row, order),
        })
    return {"versions": list(order), "unavailable": table.unavailable, "problems": table.problems,
            "cases": len(table.rows), "changed": len(changes), "changes": changes, "generated": now()}


def format_table(table: CompatTable, changes_only: bool = False, width: int = 48) -> str:
    """The behaviour × release table as text: changed rows first, grouped by topic."""
    order = table.versions
    col = max(6, *(len(v) for v in order)) if order else 6
    head = f"{'case':<{width}} " + " ".join(f"{v:>{col}}" for v in order) + "  first holds"
    lines = [head, "-" * len(head)]
    section = None
    for row in table.rows:
        changed = row.differs(order)
        if changes_only and not changed:
            continue
        title = f"[changes across releases] {row.topic}" if changed else f"[same in every release] {row.topic}"
        if title != section:
            lines.append(title)
            section = title
        name = row.case if len(row.case) <= width else "…" + row.case[-(width - 1):]
        cells = " ".join(f"{CELL[row.cells[v]]:>{col}}" for v in order)
        lines.append(f"{name:<{width}} {cells}  {row.first(HOLDS, order) or '-'}")
    lines.append("ok = holds in every mode that applies, FAIL = fails in every one, part = fails in some,"
                 " n/a = no expect block applies, -- = release unavailable, ? = no result")
    for version, reason in table.unavailable.items():
        lines.append(f"unavailable: jax {version}: {reason}")
    for version, reasons in table.problems.items():
        for reason in reasons:
            lines.append(f"incomplete: jax {version}: {reason}")
    return "\n".join(lines)


def format_changes(table: CompatTable, width: int = 200) -> str:
    """One line per changed case: id, first release where it holds, and why it did not before."""
    order = table.versions
    lines = []
    for row in table.rows:
        if row.differs(order):
            first = row.first(HOLDS, order) or "never"
            reason = change_reason(row, order) or "(no message)"
            reason = reason if len(reason) <= width else reason[:width - 3] + "..."
            lines.append(f"{row.case}: holds from {row.holds_since(order) or '-'} (first {first}); {reason}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--versions", type=_versions_arg, default=list(DEFAULT_VERSIONS), metavar="V1,V2,...",
                        help=f"JAX releases to run (default: {','.join(DEFAULT_VERSIONS)})")
    parser.add_argument("--modes", type=_modes_arg, default=list(DEFAULT_MODES), metavar="M1,M2,...",
                        help="modes to run in each release (default: off-warn,off-error,off-allow,on-warn)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where results, the summary and the report go (default: reports/latest/)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where environments are cached (default: $JAX_CONFORMANCE_CACHE or .conformance-cache/)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter the environments are created from (default: this one)")
    parser.add_argument("--interpreter", action="append", default=[], metavar="MINOR=PATH",
                        help="the interpreter for releases that need another Python, e.g. 3.12=/usr/bin/python3.12 "
                             "(default: found on PATH or under pyenv)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="pytest processes at once (default: the core count)")
    parser.add_argument("--build-jobs", type=int, default=2, help="environments built at once (default 2)")
    parser.add_argument("--install-timeout", type=float, default=900.0, help="seconds to build one environment")
    parser.add_argument("--run-timeout", type=float, default=1200.0, help="seconds for one mode's pytest run")
    parser.add_argument("--pin", type=_pin_arg, action="append", default=[], metavar="RELEASES:REQ",
                        help="an extra requirement for some releases, e.g. '<0.5:numpy<2.1' or '0.7.2:numpy<2.4' "
                             "(repeatable; added to the built-in table, and part of the cache key)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the environments even when cached")
    parser.add_argument("--env", action="append", default=[], metavar="VERSION=PATH",
                        help="use an existing environment for a release instead of building one (repeatable)")
    parser.add_argument("--live-specs", action="store_true",
                        help="run specs/ as it is when each run starts (default: a snapshot taken once, "
                             "so every release runs the same cases)")
    parser.add_argument("--changes-only", action="store_true", help="print only the rows that differ")
    parser.add_argument("--no-report", action="store_true", help="do not build the HTML report")
    parser.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS",
                        help="passed to each pytest run (after --), e.g. -- -k defaults")


def _given_envs(items: Sequence[str]) -> dict[str, Path]:
    out = {}
    for item in items:
        version, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"--env {item!r}: use VERSION=PATH")
        out[parse_versions(version)[0]] = Path(path).resolve()
    return out


def parse_pin(text: str) -> tuple[str, tuple[str, ...]]:
    """`0.4.30:numpy<2.1` or `<0.5:numpy<2.1,scipy<1.14` -> a row of the pin table."""
    spec, sep, reqs = text.partition(":")
    spec = spec.strip()
    if not sep or not reqs.strip():
        raise ValueError(f"{text!r}: use RELEASES:REQUIREMENT[,REQUIREMENT], e.g. '<0.5:numpy<2.1'")
    if spec and spec[0].isdigit():
        spec = f"=={spec}"
    try:
        SpecifierSet(spec)
    except ValueError:
        raise ValueError(f"{text!r}: {spec!r} is not a version specifier") from None
    return spec, tuple(r.strip() for r in reqs.split(",") if r.strip())


def _pin_arg(text: str) -> tuple[str, tuple[str, ...]]:
    try:
        return parse_pin(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _interpreters(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        minor, sep, path = item.partition("=")
        if not sep or not path:
            raise SystemExit(f"--interpreter {item!r}: use MINOR=PATH, e.g. 3.12=/usr/bin/python3.12")
        out[minor] = path
    return out


def _existing_env(version: str, path: Path) -> Environment:
    """An environment the user built: check that it runs and has this release."""
    env = Environment(version, path, [], cached=True)
    if not env.python.exists():
        env.reason = f"{env.python} does not exist"
        return env
    out = subprocess.run([str(env.python), "-c", IMPORT_CHECK], capture_output=True, text=True, timeout=300,
                         env=_clean_environ(path))
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        env.reason = f"import jax failed: {_tail(out.stderr)}"
    elif json.loads(lines[-1])["jax"] != version:
        env.reason = f"{path} has jax {json.loads(lines[-1])['jax']}, not {version}"
    else:
        env.ok, env.versions = True, json.loads(lines[-1])
    return env


def run_compat(args: argparse.Namespace, say: Callable[[str], None] = print) -> tuple[list[Environment], list[ModeRun], list[Path]]:
    """Build (or reuse) each release's environment and run every mode in it, in parallel."""
    cache = (args.cache_dir or default_cache_dir()).resolve()
    out_dir = (args.out / "compat").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    given = _given_envs(args.env)
    overrides = _interpreters(args.interpreter)
    tags: dict[str, str] = {}
    envs: list[Environment] = []
    mode_runs: list[ModeRun] = []
    files: list[Path] = []
    lock = threading.Lock()
    run_futures: list[cf.Future[ModeRun]] = []
    extra = [a for a in args.pytest_args if a != "--"]
    if not args.live_specs:
        extra = ["--specs", str(snapshot_specs(out_dir / "specs")), *extra]
    with cf.ThreadPoolExecutor(max(1, args.jobs), thread_name_prefix="run") as runs, \
            cf.ThreadPoolExecutor(max(1, args.build_jobs), thread_name_prefix="build") as builds:

        def prepare(version: str) -> Environment:
            try:
                env = _prepare_env(version)
            except Exception as exc:  # noqa: BLE001 - one broken release must not stop the others
                env = Environment(version, cache, [], reason=f"{type(exc).__name__}: {exc}")
            return _queue(env)

        def _prepare_env(version: str) -> Environment:
            minor = python_needed(version)
            python = find_python(minor, overrides) if minor else args.python
            if version in given:
                env = _existing_env(version, given[version])
            elif python is None:
                env = Environment(version, cache, [], reason=f"jax {version} needs Python {minor}, and no python{minor} "
                                  f"was found (pass --interpreter {minor}=PATH)")
            else:
                with lock:
                    if python not in tags:
                        tags[python] = python_tag(python)
                env = ensure_env(version, cache, python, tags[python], args.install_timeout, args.rebuild,
                                 (*RELEASE_PINS, *args.pin))
            return env

        def _queue(env: Environment) -> Environment:
            version = env.version
            with lock:
                envs.append(env)
                if env.ok:
                    how = "cached" if env.cached else f"built in {env.seconds:.0f} s"
                    say(f"jax {version}: environment {how} (jaxlib {env.versions.get('jaxlib', '?')}, "
                        f"numpy {env.versions.get('numpy', '?')}): {env.path}")
                    for mode in args.modes:
                        run_futures.append(runs.submit(run_mode, env, mode, out_dir, args.run_timeout, extra))
                        files.append(out_dir / f"{version}-{mode.slug}.jsonl")
                else:
                    say(f"jax {version}: UNAVAILABLE: {env.reason}")
                    path = out_dir / f"{version}-unavailable.jsonl"
                    path.write_text("")
                    _append(path, [r for m in args.modes for r in unavailable_records(version, m, env.reason)])
                    files.append(path)
            return env

        for f in cf.as_completed([builds.submit(prepare, v) for v in args.versions]):
            f.result()
        for rf in cf.as_completed(list(run_futures)):
            mr = rf.result()
            mode_runs.append(mr)
            counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(mr.counts.items(), key=lambda kv: -kv[1]))
            note = f"; {mr.reason}" if mr.reason else ""
            say(f"jax {mr.version} [{mr.mode.slug}]: {counts or 'no cases'} in {mr.seconds:.1f} s{note}")
    order = {v: i for i, v in enumerate(args.versions)}
    files.sort(key=lambda p: (order.get(p.name.split("-")[0], 99), p.name))
    return envs, mode_runs, files


def snapshot_specs(dest: Path, source: Path = REPO_ROOT / "specs") -> Path:
    """Copy the specs once, so every release runs the same cases even while specs/ is being edited."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def specs_digest(root: Path) -> str:
    """A short hash of every spec file's path and bytes: which spec set a table was built from."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.y*ml")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def render_report(merged: Path, out: Path) -> str:
    """Build the HTML report through the `report` subcommand, if this checkout has one."""
    try:
        from conformance import cli

        cli.build_parser()
    except Exception as exc:  # noqa: BLE001 - a broken report module must not lose the table
        return f"report not built: {type(exc).__name__}: {exc}"
    try:
        import conformance.report  # noqa: F401
    except ModuleNotFoundError:
        return "report not built: conformance.report is not in this checkout"
    try:
        rc = cli.main(["report", str(merged), "--out", str(out)])
    except SystemExit as exc:
        rc = int(exc.code or 0) if isinstance(exc.code, int) else 1
    except Exception as exc:  # noqa: BLE001
        return f"report not built: {type(exc).__name__}: {exc}"
    return f"report: {out} (exit status {rc})"


def main(args: argparse.Namespace) -> int:
    """Run the releases, merge their results, print the table, write the summary and the report."""
    start = time.monotonic()
    envs, mode_runs, files = run_compat(args)
    merged = args.out / "compat-results.jsonl"
    lines = merge(files, merged)
    table = build_table(load_runs([merged]), args.versions)
    print()
    print(format_table(table, changes_only=args.changes_only))
    changes = format_changes(table)
    if changes:
        print("\nchanges across releases:")
        print(changes)
    data = summary(table)
    snapshot = args.out / "compat" / "specs"
    data["specs"] = {"digest": specs_digest(snapshot if snapshot.is_dir() and not args.live_specs else REPO_ROOT / "specs"),
                     "snapshot": not args.live_specs, **suite_info()}
    data["timing"] = {"wall_s": round(time.monotonic() - start, 1),
                      "environments": {e.version: {"cached": e.cached, "build_s": round(e.seconds, 1), "ok": e.ok}
                                       for e in envs},
                      "runs": {f"{m.version}-{m.mode.slug}": round(m.seconds, 1) for m in mode_runs}}
    summary_path = args.out / "compat-summary.json"
    summary_path.write_text(json.dumps(data, indent=1))
    print(f"\nresults: {merged} ({lines} records)\nsummary: {summary_path}")
    if not args.no_report:
        print(render_report(merged, args.out / "compat-report"))
    print(f"compat: {len(table.versions)} releases, {len(table.rows)} cases, {data['changed']} differ; "
          f"{time.monotonic() - start:.0f} s")
    ran = [e for e in envs if e.ok]
    return 0 if ran and not any(m.reason for m in mode_runs) else 1
