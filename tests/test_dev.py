"""The `./dev` script and the README's words about it: the README's two commands do everything
(set-up included), and the README says where the caches are, what n/a means and why
`pytest conformance/` collects specs.

The `./dev` script is run for real, against a stand-in Python whose `-m venv` and `-m pip`
only record what they were asked to do (no network, seconds).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

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


def test_the_readme_says_where_the_caches_are_what_na_means_and_why_conformance_collects_specs() -> (
    None
):
    text = " ".join(README.split())
    assert (
        "~/.cache/jax-conformance/envs/" in text and "rm -rf ~/.cache/jax-conformance/envs" in text
    )
    assert "`pytest conformance/` runs the suite, not Python tests" in text and "pytest11" in text
    assert "**not applicable** (n/a)" in text  # the glossary says what n/a means
