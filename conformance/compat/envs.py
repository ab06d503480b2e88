"""Environments and runs for `jax-conformance compat`: one cached venv per JAX release, a pytest per mode.

An environment is built with the standard tools (`python -m venv`, pip), keyed by what decides
its contents (release, pins, harness deps, interpreter), and marked ready only after JAX
imported and computed in it. A run that cannot start or finish still leaves whole records.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jax_conformance import CHECKOUT
from jax_conformance.compat.budget import MARKER, touch
from jax_conformance.errors import UsageError
from jax_conformance.options import add_jobs, positive_float, positive_int
from jax_conformance.records import now
from jax_conformance.releases import version_key
from packaging.specifiers import SpecifierSet
from packaging.version import Version

# Each environment installs the harness from this checkout (`pip install -e`); a wheel has none.
NEEDS_CHECKOUT = (
    "compat installs this harness into each release's environment with `pip install -e` of a checkout, and "
    "this one is installed from a wheel: run it from a clone (pip install -e .), give every release "
    "an environment with --env VERSION=PATH, or use --from-results"
)
# Environments are hundreds of MB each (about 600 MB for five releases): they go to the user's
# cache directory (XDG: $XDG_CACHE_HOME/jax-conformance, else ~/.cache/jax-conformance on Linux;
# ~/Library/Caches/jax-conformance on macOS), never into the checkout. $JAX_CONFORMANCE_CACHE overrides.
# From the first release the suite targets to the newest one the index offered when this was
# written; each has cp311 jaxlib wheels (checked with `pip index versions jaxlib`).
DEFAULT_VERSIONS = (
    "0.4.30",
    "0.5.3",
    "0.6.2",
    "0.7.2",
    "0.8.0",
    "0.9.2",
    "0.10.2",
    "0.11.2",
    "0.12.0.1",
)

# Releases that need a newer Python than the default interpreter: (specifier over the JAX
# version, Python minor). jax 0.11.0 and later declare Requires-Python >=3.12.
PYTHON_NEEDED: tuple[tuple[str, str], ...] = ((">=0.11.0", "3.12"),)

# Pins each release needs besides jax[cpu]==VERSION, found by installing and running the suite:
# (specifier over the JAX version, requirements); every matching row applies. None were needed
# (2026-11-29): 0.4.30-0.10.2 import and run with numpy 2.4.6, ml_dtypes 0.6.0, scipy 1.17.1, and
# 0.11.2/0.12.0.1 (Python 3.12) with numpy 2.5.5; release-era pins (0.4.30: numpy<2.1, scipy<1.14,
# ml_dtypes<0.5; 0.7.2: numpy<2.4, scipy<1.17) changed no outcome. Add a row (or --pin) when a
# later NumPy breaks an old jaxlib.
RELEASE_PINS: tuple[tuple[str, tuple[str, ...]], ...] = ()

# What the harness itself needs in every environment (the project is installed with --no-deps).
# Not fastjsonschema: the loader uses it only as a fast path and checks ~15 files per mode
# here, and adding it would change every environment's key (a rebuild of each cached one).
HARNESS_DEPS = (
    "pyyaml",
    "jsonschema",
    "jinja2",
    "packaging",
    "pytest",
    "hypothesis",
    "pytest-xdist",
    "setuptools>=68",
)
# Bump when the way environments are built changes, so old cache entries are not reused.
ENV_LAYOUT = 1

# Run by each environment's interpreter: imports JAX, computes once, reports the versions.
IMPORT_CHECK = """
import json, sys
import numpy, jax, jaxlib
x = jax.jit(lambda a: a + 1)(jax.numpy.zeros(3)).block_until_ready()
print(json.dumps({"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", "?"),
                  "numpy": numpy.__version__, "python": sys.version.split()[0],
                  "devices": [str(d) for d in jax.devices()]}))
"""

# ---------------------------------------------------------------- versions, pins, cache keys


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
    blob = json.dumps(
        {
            "layout": ENV_LAYOUT,
            "version": version,
            "requirements": requirements(version, pins),
            "python": python,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def python_tag(python: str) -> str:
    """`cpython-3.11.7` for an interpreter, the part of the cache key it decides."""
    out = subprocess.run(
        [
            python,
            "-c",
            "import sys,platform;print(f'{sys.implementation.name}-{platform.python_version()}')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if out.returncode != 0:
        raise UsageError(f"{python} does not run: {out.stderr.strip()[-300:]}")
    return out.stdout.strip()


def python_needed(version: str, table: Iterable[tuple[str, str]] = PYTHON_NEEDED) -> str | None:
    """The Python minor version (e.g. "3.12") this release needs, if not any supported one."""
    v = Version(version)
    return next(
        (minor for spec, minor in table if SpecifierSet(spec).contains(v, prereleases=True)), None
    )


def find_python(minor: str, overrides: dict[str, str] | None = None) -> str | None:
    """An interpreter of this minor version: --interpreter, then PATH, then pyenv's versions."""
    if overrides and minor in overrides:
        return overrides[minor]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which(f"python{minor}")] + sorted(
        (str(p) for p in pyenv.glob(f"{minor}.*/bin/python{minor}")),
        key=lambda p: version_key(Path(p).parent.parent.name),
        reverse=True,
    )
    for candidate in candidates:
        # a pyenv shim is on PATH even when its version is not selected: it must actually run
        if candidate and _runs(candidate, minor):
            return candidate
    return None


def _runs(python: str, minor: str) -> bool:
    try:
        out = subprocess.run(
            [python, "-c", "import sys;print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == minor


def default_cache_dir() -> Path:
    """$JAX_CONFORMANCE_CACHE, else the user's cache directory (platformdirs: the XDG rule on Linux)."""
    given = os.environ.get("JAX_CONFORMANCE_CACHE")
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_cache_dir("jax-conformance", appauthor=False))


DEFAULT_CACHE = default_cache_dir()  # for help texts; the commands call default_cache_dir() again


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
    versions: dict[str, str | list[str]] = field(
        default_factory=dict
    )  # IMPORT_CHECK's report: jax, jaxlib, numpy, python, devices
    installer: str = ""  # uv or pip, for one this call built

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def _tail(text: str, lines: int = 1) -> str:
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(kept[-lines:]) if kept else ""


def _pip_reason(output: str) -> str:
    """The line of pip's output that says why: its first telling ERROR line, else its last line."""
    errors = [
        ln.strip()
        for ln in output.splitlines()
        if ln.strip().startswith("ERROR:") and "Ignored the following" not in ln
    ]
    reason = errors[0] if errors else _tail(output)
    # "(from versions: 0.1.19, ... 0.10.2)" lists every release: keep its ends
    head, sep, rest = reason.partition("(from versions: ")
    if sep and rest.count(",") > 6:
        listed = [x.strip() for x in rest.rstrip(")").split(",")]
        reason = f"{head}(from versions: {', '.join(listed[:2])}, ..., {', '.join(listed[-3:])})"
    return reason[:500]


def _run_logged(
    cmd: list[str],
    log: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, str]:
    """Run a command, append its output to a log, kill its process group on timeout."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, _ = proc.communicate()
            f.write(f"{out or ''}# killed after {time.monotonic() - start:.1f} s\n")
            return 124, (
                out or ""
            ) + f"\nERROR: timed out after {timeout:.0f} s: {' '.join(cmd[:4])} ..."
        f.write(
            f"{out or ''}# exit status {proc.returncode} after {time.monotonic() - start:.1f} s\n"
        )
        return proc.returncode, out or ""


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def clean_environ(env_dir: Path | None = None) -> dict[str, str]:
    """The parent's environment without anything that would leak another Python or a mode into it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "VIRTUAL_ENV",
            "PYTHONPATH",
            "PYTHONHOME",
            "JAX_ENABLE_X64",
            "JAX_EXPLICIT_X64_DTYPES",
            "PYTEST_ADDOPTS",
            "PYTEST_PLUGINS",
            "PYTEST_XDIST_AUTO_NUM_WORKERS",
        )
    }
    if env_dir is not None:
        env["VIRTUAL_ENV"] = str(env_dir)
        env["PATH"] = os.pathsep.join([str(env_dir / "bin"), env.get("PATH", "")])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


# pip install -e writes the project's egg-info into the repository: one at a time.
_EDITABLE_LOCK = threading.Lock()


def ensure_env(
    version: str,
    cache: Path,
    python: str,
    py_tag: str,
    timeout: float = 900.0,
    rebuild: bool = False,
    table: Iterable[tuple[str, Sequence[str]]] = RELEASE_PINS,
    installer: str = "auto",
) -> Environment:
    """The cached environment for this release, built (venv, pip, import check) if it is missing."""
    if CHECKOUT is None:
        raise UsageError(NEEDS_CHECKOUT)
    pins = pins_for(version, table)
    env = Environment(
        version, cache / "envs" / f"jax-{version}-{env_key(version, pins, py_tag)}", pins
    )
    if not rebuild and reuse_env(env, cache, python, timeout):
        return env
    return build_env(env, cache, python, py_tag, requirements(version, pins), timeout, installer)


def build_env(
    env: Environment,
    cache: Path,
    python: str,
    py_tag: str,
    reqs: Sequence[str],
    timeout: float = 900.0,
    installer: str = "auto",
    binary_only: bool = True,
) -> Environment:
    """Build `env` afresh (venv, install `reqs` and this harness, import check, marker): a
    release's environment, or any JAX build `--jax` asked for (`compat.builds`)."""
    if CHECKOUT is None:
        raise UsageError(NEEDS_CHECKOUT)
    uv = uv_binary() if installer in ("uv", "auto") else None
    start = time.monotonic()
    log = _fresh_build(env, cache)
    if installer == "uv" and uv is None:
        env.reason = "uv is not installed (pip install uv), and --installer uv was asked for"
        return env
    deadline = start + timeout

    def left() -> float:
        return max(5.0, deadline - time.monotonic())

    steps = (
        _uv_steps(uv, python, env, reqs, binary_only)
        if uv is not None
        else _pip_steps(python, env, reqs, binary_only)
    )
    if not (
        _install(steps, python, env, log, left) and _import_check(env, log, min(left(), 300.0))
    ):
        env.seconds = time.monotonic() - start
        return env
    freeze = _freeze(env, uv, log)
    env.ok, env.seconds = True, time.monotonic() - start
    env.installer = "uv" if uv is not None else "pip"
    _mark_ready(env, py_tag, freeze, reqs)
    return env


def reuse_env(env: Environment, cache: Path, python: str, timeout: float = 900.0) -> bool:
    """Whether the environment is built and ready (filled in from its marker); when another
    checkout installed its harness there, this checkout's is installed over it."""
    if not _reuse(env):
        return False
    if CHECKOUT is None or harness_root(env) == CHECKOUT / "conformance":
        return True
    import filelock

    try:
        # one re-pointing at a time (two checkouts sharing the cache, or one run twice); whoever
        # waited finds it done, rather than installing over an install under way
        with filelock.FileLock(harness_lock(env), timeout=timeout):
            if harness_root(env) != CHECKOUT / "conformance":
                _repoint(env, cache, python, uv_binary(), timeout)
    except filelock.Timeout:
        env.ok = False
        env.reason = f"another process held {harness_lock(env)} for over {timeout:.0f} s"
    return True


def harness_lock(env: Environment) -> Path:
    """The lock file re-pointing an environment's harness takes: beside it, so a rebuild (which
    removes the environment's folder) leaves the lock alone."""
    return env.path.with_name(env.path.name + ".harness.lock")


def _reuse(env: Environment) -> bool:
    """Whether the environment is built and marked ready (then it is filled in from its marker)."""
    marker = env.path / MARKER
    if not marker.is_file():
        return False
    try:
        data = json.loads(marker.read_text())
        env.ok, env.cached, env.versions = True, True, data.get("versions", {})
        touch(env.path)
        return True
    except (OSError, json.JSONDecodeError):
        return False  # a torn marker: build again


_FINDER_MAPPING = re.compile(r"['\"]jax_conformance['\"]\s*:\s*['\"]([^'\"]+)['\"]")


def harness_root(env: Environment) -> Path | None:
    """The folder the environment imports `jax_conformance` from: its editable install's finder
    (pip and uv write one, `__editable___jax_conformance_*_finder.py`), None when it has none."""
    for finder in env.path.glob(
        "lib/python*/site-packages/__editable___jax_conformance_*finder.py"
    ):
        found = _FINDER_MAPPING.search(finder.read_text(errors="replace"))
        if found:
            return Path(found.group(1))
    return None


def _repoint(env: Environment, cache: Path, python: str, uv: str | None, timeout: float) -> None:
    """Install this checkout's harness into an environment another checkout (or an older layout of
    this one) installed its own into: the mode processes must run this harness, not that one."""
    log = cache / "logs" / f"jax-{env.version}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        f.write(f"{now()}: harness from {harness_root(env)}, installing {CHECKOUT}\n")
    steps = _uv_steps(uv, python, env) if uv is not None else _pip_steps(python, env)
    if not _install(steps[-1:], python, env, log, lambda: timeout):
        env.ok = False
        env.reason = f"this checkout's harness would not install into {env.path}: {env.reason}"


def _fresh_build(env: Environment, cache: Path) -> Path:
    """Remove what a build left at the environment's path; start its log (returned)."""
    if env.path.exists():
        shutil.rmtree(env.path)
    env.path.parent.mkdir(parents=True, exist_ok=True)
    log = cache / "logs" / f"jax-{env.version}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"building {env.path} at {now()}\n")
    return log


# A build step: what it does (for the reason it failed), its command, the directory it runs in.
Step = tuple[str, list[str], Path | None]


def _uv_steps(
    uv: str,
    python: str,
    env: Environment,
    reqs: Sequence[str] | None = None,
    binary_only: bool = True,
) -> list[Step]:
    """uv: one shared download cache, files hardlinked into each venv (seconds, not minutes)."""
    target = ["--python", str(env.python)]
    reqs = requirements(env.version, env.pins) if reqs is None else reqs
    return [
        ("create the venv", [uv, "venv", "--quiet", "--python", python, str(env.path)], None),
        (
            f"uv pip install {reqs[0]}",
            [
                uv,
                "pip",
                "install",
                *target,
                *(["--only-binary", ":all:"] if binary_only else []),
                *uv_index_args(),
                *reqs,
            ],
            None,
        ),
        (
            "install this project",
            [
                uv,
                "pip",
                "install",
                *target,
                "--no-deps",
                "--no-build-isolation",
                "-e",
                str(CHECKOUT),
            ],
            CHECKOUT,
        ),
    ]


def _pip_steps(
    python: str,
    env: Environment,
    reqs: Sequence[str] | None = None,
    binary_only: bool = True,
) -> list[Step]:
    """The standard tools: `python -m venv`, then pip in the new environment."""
    pip = [str(env.python), "-m", "pip", "install"]
    reqs = requirements(env.version, env.pins) if reqs is None else reqs
    return [
        ("create the venv", [python, "-m", "venv", str(env.path)], None),
        (
            f"pip install {reqs[0]}",
            [
                *pip,
                *(["--only-binary=:all:"] if binary_only else []),
                "--progress-bar",
                "off",
                *reqs,
            ],
            None,
        ),
        (
            "install this project",
            [
                *pip,
                "--no-deps",
                "--no-build-isolation",
                "--progress-bar",
                "off",
                "-e",
                str(CHECKOUT),
            ],
            CHECKOUT,
        ),
    ]


def _install(
    steps: Sequence[Step], python: str, env: Environment, log: Path, left: Callable[[], float]
) -> bool:
    """Run the build steps in order; the first that fails sets the reason and stops the build."""
    for what, cmd, cwd in steps:
        if "-e" in cmd:
            with _EDITABLE_LOCK:
                rc, out = _run_logged(cmd, log, left(), clean_environ(env.path), cwd)
        else:
            rc, out = _run_logged(
                cmd, log, left(), clean_environ(env.path if cmd[0] != python else None), cwd
            )
        if rc != 0:
            env.reason = f"{what} failed: {_pip_reason(out)}"
            return False
    return True


def _import_check(env: Environment, log: Path, timeout: float) -> bool:
    """Import JAX in the environment and compute once; its versions go into `env.versions`."""
    rc, out = _run_logged(
        [str(env.python), "-c", IMPORT_CHECK], log, timeout, clean_environ(env.path)
    )
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if rc != 0 or not lines:
        env.reason = f"import jax failed: {_tail(out)}"
        return False
    env.versions = json.loads(lines[-1])
    return True


def _freeze(env: Environment, uv: str | None, log: Path) -> list[str]:
    """What the environment holds, pinned (kept in its marker; empty if the freeze failed)."""
    cmd = (
        [uv, "pip", "freeze", "--python", str(env.python), "--exclude-editable"]
        if uv is not None
        else [str(env.python), "-m", "pip", "freeze", "--exclude-editable"]
    )  # a uv venv has no pip
    rc, freeze = _run_logged(cmd, log, 120.0, clean_environ(env.path))
    return freeze.split() if rc == 0 else []


def _mark_ready(env: Environment, py_tag: str, freeze: list[str], reqs: Sequence[str]) -> None:
    """Write the marker that makes the environment reusable: what it was built from and holds."""
    (env.path / MARKER).write_text(
        json.dumps(
            {
                "version": env.version,
                "pins": env.pins,
                "requirements": list(reqs),
                "python": py_tag,
                "built": now(),
                "build_seconds": round(env.seconds, 1),
                "installer": env.installer,
                "versions": env.versions,
                "freeze": freeze,
            },
            indent=1,
        )
    )


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


def existing_env(version: str, path: Path) -> Environment:
    """An environment the user built: check that it runs and has this release."""
    env = probe_env(path)
    if env.ok and env.version != version:
        env.ok, env.reason = False, f"{path} has jax {env.version}, not {version}"
    env.version = version
    return env


def probe_env(path: Path, environ: dict[str, str] | None = None) -> Environment:
    """An existing environment, checked by importing JAX and computing once there (with
    `environ`, default `clean_environ(path)`); its version is the jax.__version__ it reports."""
    env = Environment(str(path), path, [], cached=True)
    if not env.python.exists():
        env.reason = f"{env.python} does not exist"
        return env
    out = subprocess.run(
        [str(env.python), "-c", IMPORT_CHECK],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_environ(path) if environ is None else environ,
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        env.reason = f"import jax failed in {path}: {_tail(out.stderr)}"
    else:
        env.ok, env.versions = True, json.loads(lines[-1])
        env.version = str(env.versions["jax"])
    return env


# ---------------------------------------------------------------- uv


def uv_binary() -> str | None:
    """The `uv` next to this interpreter (a dependency of the project), else on PATH."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def uv_index_args() -> list[str]:
    """pip's index settings (pip.conf, PIP_* variables) as uv options: uv reads neither, and an
    environment must come from the same index pip would use."""
    out: list[str] = []
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        listed = ""
    settings: dict[str, str] = {}
    for line in listed.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            settings[key.rsplit(".", 1)[-1]] = value.strip().strip("'\"")
    for var, name in (
        ("PIP_INDEX_URL", "index-url"),
        ("PIP_EXTRA_INDEX_URL", "extra-index-url"),
        ("PIP_FIND_LINKS", "find-links"),
    ):
        if os.environ.get(var):
            settings[name] = os.environ[var]
    if settings.get("index-url"):
        out += ["--index-url", settings["index-url"]]
    for url in settings.get("extra-index-url", "").split():
        if not url.startswith("file://") or Path(url[len("file://") :]).is_dir():
            out += ["--extra-index-url", url]
    for link in settings.get("find-links", "").split():
        if "://" in link or Path(link).is_dir():
            out += ["--find-links", link]
    if len([a for a in out if a in ("--index-url", "--extra-index-url", "--find-links")]) > 0:
        out += [
            "--index-strategy",
            "unsafe-best-match",
        ]  # pip's rule: the best version over every index
    return out


def add_environment_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of building and running the releases' environments, the same for compat and upgrade."""
    add_jobs(parser, default=os.cpu_count() or 1, what="pytest processes", shown="the core count")
    parser.add_argument(
        "--build-jobs", type=positive_int, default=2, help="environments built at once (default 2)"
    )
    parser.add_argument(
        "--install-timeout",
        type=positive_float,
        default=900.0,
        help="seconds to build one environment",
    )
    parser.add_argument(
        "--run-timeout",
        type=positive_float,
        default=1200.0,
        help="seconds for one mode's pytest run",
    )
    parser.add_argument(
        "--pin",
        type=_pin_arg,
        action="append",
        default=[],
        metavar="RELEASES:REQ",
        help="an extra requirement for some releases, e.g. '<0.5:numpy<2.1' or '0.7.2:numpy<2.4' "
        "(repeatable; added to the built-in table, and part of the cache key)",
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="rebuild the environments even when cached"
    )
