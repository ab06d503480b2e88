"""What a radar search is about to cost, said before it starts: the environments it builds, the
disk they take, and a rough time, from the figures measured in bench/RADAR.md (2 shared cores).

A search runs its two ends in full (the selected cases, every mode), then only the cases that
differ in the releases a bisection needs; how many of those it needs is known only as it goes,
so the plan gives the ends' cost and the most the releases between can add.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from jax_conformance.compat.budget import MARKER

# Measured (bench/RADAR.md, docs/measurements.md): an environment takes 380-650 MB with uv and
# 30-85 s to build; a mode process costs about 40 s to start (JAX import, collection) and about
# 0.09 s a case (a full run of 3,835 cases: 1,400-2,200 s summed over four modes).
ENV_BYTES = 650 * 10**6
BUILD_S = 60.0
START_S = 40.0
CASE_S = 0.09
PROBE_S = 50.0  # a bisection probe of a few cases, one mode


def cached_envs(cache: Path, releases: Sequence[str]) -> set[str]:
    """The releases that have a ready environment in the cache (any pins, any interpreter)."""
    return {r for r in releases if any((cache / "envs").glob(f"jax-{r}-*/{MARKER}"))}


def _minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min"


def search_plan(
    releases: Sequence[str],
    ends: Sequence[str],
    cache: Path,
    modes: int,
    selected: tuple[int, int] | None,
    jobs: int,
) -> str:
    """One paragraph: what the search builds and runs, and about how much disk and time it takes."""
    have = cached_envs(cache, releases)
    between = [r for r in releases if r not in ends]
    build_ends = [r for r in ends if r not in have]
    build_between = [r for r in between if r not in have]
    cases = selected[0] if selected else 3835
    of = f"{selected[0]} of {selected[1]} cases" if selected else "every case"
    jobs = max(1, jobs)
    ends_s = len(build_ends) * BUILD_S + len(ends) * modes * (START_S + CASE_S * cases) / jobs
    probe_s = BUILD_S + modes * PROBE_S / jobs
    most = (len(build_ends) + len(build_between)) * ENV_BYTES
    free = shutil.disk_usage(cache if cache.exists() else _existing(cache)).free
    builds = (
        f"it builds {len(build_ends)} environment(s) now for the ends ({', '.join(ends)}; "
        f"{len(ends) - len(build_ends)} cached) and up to {len(build_between)} more for releases "
        f"between, only where a change needs bisecting: about {ENV_BYTES / 1e9:.2f} GB each, "
        f"{most / 1e9:.1f} GB at most, under {cache} ({free / 1e9:.0f} GB free)"
        if most
        else f"every environment it may need is cached under {cache}"
    )
    probes = f", plus about {_minutes(probe_s)} for each release bisected" if between else ""
    return (
        f"{len(releases)} releases ({releases[0]}..{releases[-1]}); {builds}. It runs {of} in "
        f"{modes} mode(s) at each end: about {_minutes(ends_s)}{probes} (rough, from "
        f"bench/RADAR.md on 2 cores). Ctrl-C stops it; run again, it resumes, and once done "
        f"answers from the cache at once."
    )


def _existing(path: Path) -> Path:
    """The nearest existing folder at or above `path` (the cache may not exist yet)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path
