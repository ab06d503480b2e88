"""The disk budget of compat's environment cache: each environment's last use and size on disk, and
the removal of the least recently used ones beyond a budget (`--cache-budget`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MARKER = "conformance-env.json"  # written into an environment when it is ready (compat.envs)


LAST_USED = "last-used"  # a file in each environment whose mtime is when a run last used it


def touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        (path / LAST_USED).touch()


def last_used(path: Path) -> float:
    for name in (LAST_USED, MARKER):
        try:
            return (path / name).stat().st_mtime
        except OSError:
            continue
    return 0.0


def disk_bytes(path: Path, seen: set[tuple[int, int]] | None = None) -> int:
    """Bytes on disk under `path`, each inode once (uv hardlinks files from its cache: a file shared
    with an environment counted before, in `seen`, costs nothing more)."""
    seen = set() if seen is None else seen
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            total += st.st_blocks * 512
    return total


DEFAULT_BUDGET = (
    "30G"  # environments kept under the cache directory; the least recently used go first
)


@dataclass
class BudgetReport:
    total: int  # bytes the environments take (inodes counted once) before removal
    kept: int
    budget: int
    removed: list[tuple[Path, int]]

    def describe(self) -> str:
        gib = 1 << 30
        gone = (
            f"; removed {len(self.removed)} least recently used ({sum(n for _, n in self.removed) / gib:.1f} GiB)"
            if self.removed
            else ""
        )
        limit = f"{self.budget / gib:.1f} GiB" if self.budget else "no budget"
        return f"environment cache: {self.kept / gib:.2f} GiB of {limit}{gone}"


def enforce_budget(cache: Path, budget: int, keep: Iterable[Path] = ()) -> BudgetReport:
    """Remove the least recently used environments until the rest fit in `budget` bytes (0: no
    budget); the ones in `keep` (this run's) stay whatever they cost."""
    envs_dir = cache / "envs"
    paths = (
        sorted((p for p in envs_dir.glob("jax-*") if p.is_dir()), key=last_used, reverse=True)
        if envs_dir.is_dir()
        else []
    )
    kept_paths = {p.resolve() for p in keep}
    seen: set[tuple[int, int]] = set()
    sizes = [
        (p, disk_bytes(p, seen)) for p in paths
    ]  # newest first: shared files count for the newest
    total = sum(n for _, n in sizes)
    removed: list[tuple[Path, int]] = []
    kept = total
    if budget:
        for path, size in reversed(sizes):  # oldest first
            if kept <= budget:
                break
            if path.resolve() in kept_paths:
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append((path, size))
            kept -= size
    return BudgetReport(total, kept, budget, removed)
