"""A user's first hour: the README's two commands do everything (set-up included), and compat's
environments live in the user's cache directory, not in the checkout.

The `./dev` script is run for real, against a stand-in Python whose `-m venv` and `-m pip`
only record what they were asked to do (no network, seconds).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from jax_conformance.plugin import PACKAGE_DIR

REPO = PACKAGE_DIR.parent
README = (REPO / "README.md").read_text(encoding="utf-8")

# A python3 stand-in: `-m venv DIR` makes DIR/bin with itself and the two entry points;
# `-m pip install ...` appends to install.log; the entry points print what they were run with.
FAKE_PYTHON = """#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd)
if [ "$1" = "-c" ]; then exit 0; fi
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cp "$0" "$3/bin/python"
  printf '#!/usr/bin/env bash\\necho "jax-conformance $*"\\n' > "$3/bin/jax-conformance"
  printf '#!/usr/bin/env bash\\necho "pytest $*"\\n' > "$3/bin/pytest"
  chmod +x "$3/bin/python" "$3/bin/jax-conformance" "$3/bin/pytest"
  exit 0
fi
if [ "$1 $2" = "-m pip" ]; then echo "pip $*" >> install.log; exit 0; fi
exit 1
"""


def _dev_checkout(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "clone"
    root.mkdir()
    shutil.copy2(REPO / "dev", root / "dev")
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_text(FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return root, {**os.environ, "PYTHON": str(fake)}


def dev(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["./dev", *args], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_readme_gives_two_commands_and_they_are_the_dev_script() -> None:
    section = README[
        README.index("## Two commands") : README.index("\n### ", README.index("## Two commands"))
    ]
    assert (
        "**`./dev run`**: the main job" in section
        and "**`./dev test`**: the project's own tests" in section
    )
    assert os.access(REPO / "dev", os.X_OK)
    ci = (REPO / ".ci" / "run").read_text()
    assert (
        "./dev setup" in ci and "./dev test ||" in ci
    )  # CI installs and runs the README's test command


def test_dev_creates_the_environment_once_then_runs(tmp_path: Path) -> None:
    root, env = _dev_checkout(tmp_path)
    first = dev(root, env, "run", "--modes", "on")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "jax-conformance run --modes on"
    assert "creating .venv" in first.stderr and "installing" in first.stderr
    assert (root / "install.log").read_text().count("pip install") == 1
    assert "-e .[dev]" in (root / "install.log").read_text()
    second = dev(root, env, "test", "-k", "report")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "pytest -n 2 --dist loadfile -k report"
    assert (root / "install.log").read_text().count("pip install") == 1  # reused, not reinstalled
    # a changed pyproject.toml (a new dependency) installs again
    with open(root / "pyproject.toml", "a") as f:
        f.write("\n# changed\n")
    assert dev(root, env, "setup").returncode == 0
    assert (root / "install.log").read_text().count("pip install") == 2


def test_dev_says_what_it_takes(tmp_path: Path) -> None:
    root, env = _dev_checkout(tmp_path)
    proc = dev(root, env, "nonsense")
    assert proc.returncode == 2 and proc.stderr.startswith("usage: ./dev run")
    proc = dev(root, {**env, "PYTHON": "/no/such/python3"}, "run")
    assert proc.returncode == 2 and "not found; install Python 3.11 or newer" in proc.stderr
    assert not (root / ".venv").exists()


def test_compat_environments_live_in_the_user_cache_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAX_CONFORMANCE_CACHE"}
    code = "from jax_conformance.compat.envs import default_cache_dir; print(default_cache_dir())"
    xdg = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(xdg) == tmp_path / "xdg" / "jax-conformance"
    home = subprocess.run(
        [sys.executable, "-c", code],
        env={
            **{k: v for k, v in env.items() if k != "XDG_CACHE_HOME"},
            "HOME": str(tmp_path / "home"),
        },
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(home) == tmp_path / "home" / ".cache" / "jax-conformance"
    assert REPO not in Path(home).parents
    given = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "JAX_CONFORMANCE_CACHE": str(tmp_path / "mine")},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(given) == tmp_path / "mine"
    helptext = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "compat", "--help"],
        env={**env, "HOME": str(tmp_path / "home")},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "delete that directory to clear them" in " ".join(helptext.split())


def test_the_readme_says_where_the_caches_are_what_na_means_and_why_conformance_collects_specs() -> (
    None
):
    text = " ".join(README.split())
    assert (
        "~/.cache/jax-conformance/envs/" in text and "rm -rf ~/.cache/jax-conformance/envs" in text
    )
    assert "`pytest conformance/` runs the suite, not Python tests" in text and "pytest11" in text
    assert "**not applicable** (n/a)" in text  # the glossary says what n/a means


INTERNAL = re.compile(
    r"\bissue \d+|\bprobe (of|for)\b|\bhelper\b|\bthe lead\b|observed-jax-behaviour|jax-tests-coverage",
    re.I,
)


def test_no_source_shown_in_the_report_is_project_internal() -> None:
    """What the report shows as a case's source says what was observed and how, never our own bookkeeping."""
    import yaml

    found = []

    def walk(value: object, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")
        elif isinstance(value, str) and INTERNAL.search(value):
            found.append(f"{where}: {value}")

    for path in sorted((REPO / "specs").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        walk(data.get("source"), f"{path.relative_to(REPO)}:source")
        for case in data.get("cases") or []:
            walk(case.get("source"), f"{path.relative_to(REPO)}:{case.get('id')}.source")
            walk(
                (case.get("documented") or {}).get("source"),
                f"{path.relative_to(REPO)}:{case.get('id')}.documented.source",
            )
    assert found == [], "\n".join(found)


def _pytest_suite(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(PACKAGE_DIR),
            "--adapter=reference",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_pytest_names_a_spec_path_that_does_not_exist_or_holds_no_spec(tmp_path: Path) -> None:
    # Before: "no tests ran" (exit 5) without naming the path.
    proc = _pytest_suite("--specs", str(tmp_path / "nonexistent"))
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
    assert f"--specs {tmp_path / 'nonexistent'}: no such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    (tmp_path / "empty").mkdir()
    proc = _pytest_suite("--specs", str(tmp_path / "empty"))
    assert proc.returncode == 4 and "holds no spec file" in proc.stderr, proc.stdout + proc.stderr


def test_pytest_refuses_a_case_timeout_of_zero_or_less(tmp_path: Path) -> None:
    # Before: accepted, and every case became a timeout.
    for bad in ("-1", "0", "nan"):
        proc = _pytest_suite("--case-timeout", bad, "--collect-only")
        assert proc.returncode == 4, (bad, proc.stdout + proc.stderr)
        assert "--case-timeout" in proc.stderr and "above 0" in proc.stderr, proc.stderr


def test_an_expectations_entry_names_modes_as_runs_name_them(tmp_path: Path) -> None:
    from jax_conformance.errors import ExpectationsError
    from jax_conformance.mode import Mode
    from jax_conformance.spec.expectations import ExpectationFile

    path = tmp_path / "jax.yaml"
    path.write_text(
        "adapter: jax\nentries:\n  - reason: r\n    cases: [{case: a.b, modes: ['on', off-error]}]\n",
        encoding="utf-8",
    )
    [entry] = ExpectationFile.load(path).entries
    assert entry.matches("a.b", Mode(True, "warn"), "cpu") and entry.matches(
        "a.b", Mode(False, "error"), "cpu"
    )
    assert not entry.matches("a.b", Mode(False, "warn"), "cpu")
    for old in (
        "sideways",
        "on-warn",
        "off/error",
    ):  # the names `on` and `off-error` had before 0.1.0 are gone
        path.write_text(
            f"adapter: jax\nentries:\n  - reason: r\n    cases: [{{case: a.b, modes: [{old}]}}]\n",
            encoding="utf-8",
        )
        with pytest.raises(ExpectationsError, match=f"{old}.*off-warn"):
            ExpectationFile.load(path)
