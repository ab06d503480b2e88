"""Tests of `--jax REQUIREMENT|WHEEL|PATH` (run and compat): what a value is, where its environment
is cached, the refusals, and real runs in an existing environment (this test venv's).

A requirement build that succeeds costs a minute and ~650 MB: that test runs only with
JAX_CONFORMANCE_COMPAT_REAL=1 (point JAX_CONFORMANCE_CACHE at a cache that has jax 0.10.1 to reuse it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.metadata import version as dist_version
from pathlib import Path

import pytest
from jax_conformance.compat import builds
from jax_conformance.options import JaxBuild, parse_jax
from jax_conformance.records import load_runs

from tests import helpers

REAL = os.environ.get("JAX_CONFORMANCE_COMPAT_REAL") == "1"
HERE = dist_version("jax")


def cli(*argv: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`jax-conformance ARGV` from the checkout; cache: the environment cache it uses."""
    env = {"JAX_CONFORMANCE_CACHE": str(cache)} if cache is not None else None
    return helpers.cli(*argv, timeout=900, env=env)


# ---------------------------------------------------------------- what a value is


def test_a_value_is_a_requirement_a_wheel_a_checkout_or_an_environment(tmp_path: Path) -> None:
    wheel = tmp_path / "jax-0.10.3.dev1-py3-none-any.whl"
    wheel.write_bytes(b"not really a wheel")
    checkout = tmp_path / "jax-src"
    (checkout / "jax").mkdir(parents=True)
    (checkout / "jax" / "version.py").write_text("_version = '0.10.3'\n")
    assert parse_jax("jax[cpu]==0.10.1") == JaxBuild("requirement", "jax[cpu]==0.10.1")
    assert parse_jax(str(wheel)) == JaxBuild("wheel", str(wheel.resolve()))
    assert parse_jax(str(checkout)) == JaxBuild("checkout", str(checkout.resolve()))
    assert parse_jax(sys.prefix) == JaxBuild("env", str(Path(sys.prefix).resolve()))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("/nonexistent.whl", "no such file or directory"),
        ("numpy==2.0", "a requirement on jax"),
        ("jax>=", "not a requirement, a wheel or a directory"),
        ("{tmp}", "neither an environment (no bin/python) nor a JAX source checkout"),
        ("{tmp}/x.whl", "not a jax wheel"),
    ],
)
def test_what_cannot_be_a_jax_build_is_refused(value: str, says: str, tmp_path: Path) -> None:
    (tmp_path / "x.whl").write_bytes(b"")
    with pytest.raises(
        ValueError, match="^--jax .*" + says.replace("(", r"\(").replace(")", r"\)")
    ):
        parse_jax(value.format(tmp=tmp_path))


def test_an_exact_release_requirement_is_that_releases_environment() -> None:
    assert builds.release_of(parse_jax("jax==0.10.3rc1")) == "0.10.3rc1"
    assert builds.release_of(parse_jax("jax[cpu]==0.10.1")) == "0.10.1"
    for other in ("jax>=0.10", "jax[cuda12]==0.10.1", "jax==0.10.*"):
        assert builds.release_of(parse_jax(other)) is None, other


def test_a_checkout_or_wheel_is_keyed_by_its_content(tmp_path: Path) -> None:
    """An edit to a checkout, or a wheel's new bytes under the same name, is a new environment."""
    checkout = tmp_path / "jax-src"
    (checkout / "jax").mkdir(parents=True)
    version = checkout / "jax" / "version.py"
    version.write_text("_version = '0.10.3'\n")
    build = parse_jax(str(checkout))
    before = builds.build_path(build, tmp_path, "cpython-3.11.7")
    assert builds.build_path(build, tmp_path, "cpython-3.11.7") == before
    time.sleep(0.01)
    version.write_text("_version = '0.10.4'\n")
    assert builds.build_path(build, tmp_path, "cpython-3.11.7") != before
    wheel = tmp_path / "jax-0.10.3-py3-none-any.whl"
    wheel.write_bytes(b"one")
    first = builds.build_path(parse_jax(str(wheel)), tmp_path, "cpython-3.11.7")
    wheel.write_bytes(b"two")
    assert builds.build_path(parse_jax(str(wheel)), tmp_path, "cpython-3.11.7") != first
    assert builds.requirements_for(parse_jax(str(wheel)))[0] == f"jax[cpu] @ {wheel.as_uri()}"


# ---------------------------------------------------------------- refusals, nothing written


@pytest.mark.parametrize("command", ["run", "compat"])
@pytest.mark.parametrize("value", ["/nonexistent.whl", "{tmp}/emptydir"])
def test_a_bad_value_is_one_line_exit_2_and_nothing_is_written(
    command: str, value: str, tmp_path: Path
) -> None:
    (tmp_path / "emptydir").mkdir()
    out = tmp_path / "out"
    done = cli(
        command, "--jax", value.format(tmp=tmp_path), "--out", str(out), cache=tmp_path / "c"
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "argument --jax:" in done.stderr and value.format(tmp=tmp_path) in done.stderr
    assert not out.exists() and not (tmp_path / "c").exists()


@pytest.mark.slow
def test_a_build_pip_cannot_resolve_says_pips_line_and_writes_no_results(tmp_path: Path) -> None:
    """A requirement no release satisfies: the build is tried (the plan line says so), then one
    line with the installer's reason, exit 1, and no run directory."""
    out = tmp_path / "out"
    done = cli("run", "--jax", "jax[cpu]>=0.0.1,<0.0.2", "--out", str(out), cache=tmp_path / "c")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith(
        "jax-conformance run --jax jax[cpu]>=0.0.1,<0.0.2: builds an environment in "
    )
    (line,) = done.stderr.strip().splitlines()
    assert "pip install jax[cpu]>=0.0.1,<0.0.2 failed:" in line
    assert "unsatisfiable" in line or "No matching distribution" in line, line
    assert not out.exists()


# ---------------------------------------------------------------- real runs


@pytest.mark.slow
def test_run_in_an_existing_environment_records_its_jax_version(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli(
        "run",
        "--jax",
        sys.prefix,
        "--modes",
        "off-warn",
        "-k",
        "x64.defaults.arange",
        "--out",
        str(out),
        "--no-report",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = done.stdout.splitlines()[:2]
    assert (
        first
        == f"jax-conformance run --jax {Path(sys.prefix).resolve()}: the environment there (nothing is built)"
    )
    assert second.startswith(f"judging jax {HERE} (jaxlib ")
    (run,) = load_runs([out / "results.jsonl"])
    assert run.header["implementation_version"] == HERE
    assert [c["outcome"] for c in run.cases] == ["passed"]


@pytest.mark.slow
def test_compat_places_a_build_in_the_table_by_its_version(tmp_path: Path) -> None:
    """The build runs beside --versions (0.0.1 cannot be installed) and is the HERE column."""
    out = tmp_path / "out"
    argv = ["compat", "--versions", "0.0.1", "--jax", sys.prefix, "--modes", "off-warn"]
    done = cli(
        *argv,
        "--out",
        str(out),
        "--no-report",
        "--",
        "-k",
        "x64.defaults.arange",
        cache=tmp_path / "c",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"--jax {Path(sys.prefix).resolve()}: jax {HERE} (jaxlib" in done.stdout
    runs = load_runs([out / "compat-results.jsonl"])
    ran = [r for r in runs if r.header.get("status") is None]
    assert [r.header["implementation_version"] for r in ran] == [HERE]
    data = json.loads((out / "compat-summary.json").read_text())
    assert HERE in data["versions"] and "0.0.1" in data["unavailable"], data


def test_compat_refuses_a_build_whose_version_it_runs_already(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli(
        "compat", "--versions", HERE, "--jax", sys.prefix, "--out", str(out), cache=tmp_path / "c"
    )
    assert done.returncode == 2, done.stderr
    assert f"has jax {HERE}, which --versions runs too: leave it out of --versions" in done.stderr
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.skipif(
    not REAL, reason="builds (or reuses) a real JAX environment: set JAX_CONFORMANCE_COMPAT_REAL=1"
)
def test_run_a_requirement_build_records_the_built_version(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["run", "--jax", "jax[cpu]==0.10.1", "--modes", "off-warn", "-k", "x64.defaults.arange"]
    done = cli(*argv, "--out", str(out), "--no-report")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(
        "jax-conformance run --jax jax[cpu]==0.10.1: jax 0.10.1's release environment"
    )
    assert "judging jax 0.10.1 (jaxlib 0.10.1" in done.stdout
    (run,) = load_runs([out / "results.jsonl"])
    assert run.header["implementation_version"] == "0.10.1"


@pytest.mark.slow
@pytest.mark.skipif(
    not REAL, reason="builds a real JAX environment: set JAX_CONFORMANCE_COMPAT_REAL=1"
)
def test_a_wheel_is_built_once_then_reused(tmp_path: Path) -> None:
    """jax's own 0.10.2 wheel from the index: built into an environment (25 s with uv's cache
    warm here), named by its version, and cached: the second run builds nothing."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp_path), "jax==0.10.2"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("jax-0.10.2-*.whl")
    argv = [
        "run",
        "--jax",
        str(wheel),
        "--modes",
        "off-warn",
        "-k",
        "x64.defaults.arange",
        "--no-report",
    ]
    first = cli(*argv, "--out", str(tmp_path / "one"), cache=tmp_path / "c")
    assert first.returncode == 0, first.stdout + first.stderr
    assert ": builds an environment in " in first.stdout.splitlines()[0]
    second = cli(*argv, "--out", str(tmp_path / "two"), cache=tmp_path / "c")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "(nothing is built)" in second.stdout.splitlines()[0]
    for out in ("one", "two"):
        (run,) = load_runs([tmp_path / out / "results.jsonl"])
        assert run.header["implementation_version"] == "0.10.2"
