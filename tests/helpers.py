"""What the CLI-run tests share: a small spec directory written from YAML text, the CLI run as a user
runs it (`python -m jax_conformance.cli`, a real subprocess), and the records a run wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from jax_conformance.records import Record, read_records

from tests.conftest import REPO

SOURCE = 'source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}'
ARANGE = """\
  - id: {topic}.arange
    claim: jnp.arange of Python ints gives int32 with x64 off and int64 with x64 on
    run: jnp.arange(3)
    expect:
      - when: {{x64: false}}
        dtype: int32
      - when: {{x64: true}}
        dtype: int64
"""


def demo_spec(topic: str, title: str, cases: str, tags: str = "") -> str:
    """A spec of documented cases (source: the default-dtypes doc): first `<topic>.arange`, int32 with
    x64 off and int64 with x64 on, then `cases` (YAML list items, two spaces in)."""
    head = [f"topic: {topic}", f"title: {title}", SOURCE, *([f"tags: {tags}"] if tags else [])]
    return (
        "\n".join([*head, "basis: documented", "cases:", ""])
        + ARANGE.format(topic=topic)
        + cases.lstrip("\n")
    )


def write_specs(root: Path, text: str, name: str = "demo", file: str = "cases.yaml") -> Path:
    """root/specs with the one spec file specs/<name>/<file> (text dedented); returns root/specs."""
    folder = root / "specs" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root / "specs"


def cli(
    *args: str, cwd: Path = REPO, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`jax-conformance ARGS` from cwd, its output captured; env: variables set on top of ours."""
    return subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env} if env else None,
    )


def run_matrix(
    *args: str, timeout: float = 600, cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`jax-conformance run --progress plain ARGS`: plain progress lines, as a log or CI shows them."""
    return cli("run", "--progress", "plain", *args, cwd=cwd, timeout=timeout, env=env)


def run_reference(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`run_matrix` of the reference adapter over cwd/specs, from cwd (it starts in a second)."""
    return run_matrix("--adapter", "reference", "--specs", str(cwd / "specs"), *args, cwd=cwd)


def records(path: Path) -> list[Record]:
    """Every record of a results file (the project's reader)."""
    return list(read_records(path))
