"""What a radar search is about to cost, said before it starts: the environments it builds, the
disk they take, and a rough time, from the figures measured in bench/RADAR.md (2 shared cores).

A search runs its two ends in full (the selected cases, every mode), then only the cases that
differ in the releases a bisection needs; how many of those it needs is known only as it goes,
so the plan gives the ends' cost and the most the releases between can add.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from jax_conformance.compat.budget import MARKER
from jax_conformance.text import plural

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
    stored: Mapping[str, int] | None = None,
) -> str:
    """One paragraph: what the search builds and runs, and about how much disk and time it takes.
    `stored`: per end, how many of its modes' full runs the store holds already (`drive.stored_ends`):
    those are answered from the store, neither run nor built for."""
    have = cached_envs(cache, releases)
    between = [r for r in releases if r not in ends]
    to_run = {r: max(0, modes - (stored or {}).get(r, 0)) for r in ends}
    build_ends = [r for r in ends if r not in have and to_run[r]]
    build_between = [r for r in between if r not in have]
    cases = selected[0] if selected else 3835
    of = f"{selected[0]} of {selected[1]} cases" if selected else "every case"
    jobs = max(1, jobs)
    runs = sum(to_run.values())
    ends_s = len(build_ends) * BUILD_S + runs * (START_S + CASE_S * cases) / jobs
    probe_s = BUILD_S + modes * PROBE_S / jobs
    most = (len(build_ends) + len(build_between)) * ENV_BYTES
    free = shutil.disk_usage(cache if cache.exists() else _existing(cache)).free
    builds = (
        f"it builds {plural(len(build_ends), 'environment')} now for the ends ({', '.join(ends)}; "
        f"{_ready(ends, have, to_run)}) and up to "
        f"{len(build_between)} more for releases between, only where a change needs bisecting: "
        f"about {ENV_BYTES / 1e9:.2f} GB each, {most / 1e9:.1f} GB at most, under {cache} "
        f"({free / 1e9:.0f} GB free)"
        if most
        else f"every environment it may need is cached under {cache}"
    )
    probes = f", plus about {_minutes(probe_s)} for each release bisected" if between else ""
    return (
        f"{len(releases)} releases ({releases[0]}..{releases[-1]}); {builds}. "
        f"{_ends_text(of, modes, len(ends) * modes - runs, runs)}: about "
        f"{_minutes(ends_s) if runs else '0 min'}{probes} (rough, from bench/RADAR.md on 2 cores). "
        "Ctrl-C stops it; run again, it resumes, and once done answers from the cache at once."
    )


def ends_cost(
    ends: Sequence[str],
    cache: Path,
    modes: int,
    selected: tuple[int, int] | None,
    jobs: int,
    stored: Mapping[str, int] | None = None,
) -> str:
    """What a search costs before pip has listed the releases between its ends (said where it is
    refused unasked, `drive.refuse_unasked`): the ends' environments and mode runs, then what each
    release between adds where a change needs bisecting."""
    have = cached_envs(cache, ends)
    to_run = {r: max(0, modes - (stored or {}).get(r, 0)) for r in ends}
    build = [r for r in ends if r not in have and to_run[r]]
    cases = selected[0] if selected else 3835
    runs = sum(to_run.values())
    seconds = len(build) * BUILD_S + runs * (START_S + CASE_S * cases) / max(1, jobs)
    probe_s = BUILD_S + modes * PROBE_S / max(1, jobs)
    return (
        f"{plural(len(build), 'environment')} to build for the ends (about {len(build) * ENV_BYTES / 1e9:.1f} GB) "
        f"and {runs} mode runs of {cases} cases: about {_minutes(seconds) if runs else '0 min'}, plus "
        f"{ENV_BYTES / 1e9:.2f} GB and {_minutes(probe_s)} for each release between that a change "
        "needs bisecting"
    )


def _ready(ends: Sequence[str], have: set[str], to_run: Mapping[str, int]) -> str:
    """How many ends need no build: cached, or with every mode answered from the store."""
    cached = sum(1 for r in ends if r in have and to_run[r])
    stored = sum(1 for r in ends if not to_run[r])
    return f"{cached} cached" + (f", {stored} answered from the store" if stored else "")


def _ends_text(of: str, modes: int, answered: int, runs: int) -> str:
    """What the ends cost: the mode runs still to make, and those the store answers."""
    if not answered:
        return f"It runs {of} in {plural(modes, 'mode')} at each end"
    if not runs:
        return f"At the ends, all {answered} mode runs ({of}) are answered from the store, none run"
    return (
        f"At the ends it runs {of} in {runs} of {runs + answered} mode runs "
        f"({answered} answered from the store)"
    )


def _existing(path: Path) -> Path:
    """The nearest existing folder at or above `path` (the cache may not exist yet)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path
