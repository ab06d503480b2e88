"""Where `run`, `report` and `compat` write: a new directory per run, never over a finished one.

Without `--out`, each command writes into a directory of its own under `reports/runs/`, named
by the UTC time it started (`2026-12-01T054312Z`, with `-report` / `-compat` for those
commands), and `run` then points the symbolic link `reports/latest` at it. Earlier runs stay
where they are until you delete them (`rm -rf reports/runs/<name>`).

With `--out DIR`, a DIR that already holds a run's results or report is refused unless
`--force` is given; with `--force` the earlier run's files are removed first, so the directory
never holds files of two runs. Both checks happen before anything is started.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

from jax_conformance.errors import UsageError

REPORTS = Path("reports")  # relative to where the command is run, as `--out` is
RUNS = "runs"
LATEST = "latest"
# What a run, a report or a compat run writes into its directory: enough to tell it holds one,
# and what --force removes (nothing else in the directory is touched).
RUN_FILES = (
    "results.jsonl",
    "modes",
    "index.html",
    "assets",
    "mutation.json",
    "compat",
    "compat-results.jsonl",
    "compat-summary.json",
    "compat-report",
)


def holds_run(directory: Path) -> list[str]:
    """The run files in `directory` (empty when it is new, empty, or holds none)."""
    if not directory.is_dir():
        return []
    return [
        name for name in RUN_FILES if (directory / name).exists() or (directory / name).is_symlink()
    ]


def explicit_out(out: Path, force: bool, option: str = "--out") -> Path:
    """`--out DIR` checked: refused when it holds a finished run, unless --force (then cleared)."""
    out = out.expanduser()
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out}: not a directory")
    found = holds_run(out)
    if found and not force:
        raise UsageError(
            f"{option} {out} already holds a run ({', '.join(found)}); "
            f"pass --force to replace it, or leave out {option} to keep each run in {REPORTS / RUNS}/"
        )
    return out.resolve()


def clear(out: Path, inputs: Iterable[Path] = ()) -> None:
    """Remove an earlier run's files (after --force), so two runs' files never mix; a run file that
    is or holds one of `inputs` (the results a report is built from) stays: --force replaces a
    report, never what it is built from."""
    base = out.resolve()
    given = [Path(p).resolve() for p in inputs]
    for name in holds_run(out):
        path = base / name
        if any(i == path or path in i.parents for i in given):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def new_run_dir(suffix: str = "", reports: Path = REPORTS) -> Path:
    """A new, empty directory under reports/runs/, named by the time (unique within this second too)."""
    runs = reports / RUNS
    runs.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H%M%SZ") + (
        f"-{suffix}" if suffix else ""
    )
    for n in range(1, 1000):
        path = runs / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path.resolve()
    raise OSError(f"no free run directory name under {runs}")


def point_latest(run_dir: Path, reports: Path = REPORTS) -> Path | None:
    """Point reports/latest at `run_dir` (atomically) and return the link; None when something
    other than a link is there (it is left alone)."""
    link = reports / LATEST
    if link.exists() and not link.is_symlink():
        return None
    target = os.path.relpath(run_dir, link.parent.resolve())
    staged = reports / f".latest-{os.getpid()}-{time.monotonic_ns()}"
    staged.symlink_to(target, target_is_directory=True)
    os.replace(staged, link)
    return link
