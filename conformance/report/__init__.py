"""The report library: result files (any machines, backends, versions, adapters) merged into a static site.

The site opens from disk: a summary per (adapter, version, backend, mode), a case x column
matrix with filters, each case's detail, behaviour x release, a comparison against a baseline,
docs-vs-code differences (computed from each record's documented expectation) and mutation results.
`jax_conformance.report.model` computes what is shown, `jax_conformance.releases` is the
behaviour x release model (shared with `jax-conformance compat`), `jax_conformance.report.upcoming`
the flags of each mode and what changes when JAX flips its upcoming defaults (modes with JAX
flags on top of a base mode), `jax_conformance.report.site` writes it. The command is `jax_conformance.commands.report`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from jax_conformance.errors import UsageError
from jax_conformance.report.model import ReportModel, build_model, fatal_problems
from jax_conformance.report.site import render

__all__ = [
    "DEFAULT_TITLE",
    "ReportModel",
    "Site",
    "build_model",
    "build_site",
    "mutation_file",
    "no_gc",
    "render",
]


DEFAULT_TITLE = "JAX conformance report"


def mutation_file(given: Path | None, out: Path | None) -> Path | None:
    """The mutation results a report shows: the file given, else OUT/mutation.json where there is one."""
    if given is None and out is not None and (out / "mutation.json").is_file():
        return out / "mutation.json"
    return given


class Site(NamedTuple):
    """A built report: its index.html, `page` (None when no run was found: then nothing was written, so a
    mistyped path never blanks an existing site), and the model it shows."""

    page: Path | None  # index.html
    model: ReportModel


def build_site(
    results: Sequence[str | Path],
    out: Path | Callable[[], Path],
    baseline: Sequence[str | Path] = (),
    mutation: Path | None = None,
    title: str = DEFAULT_TITLE,
    allow_partial: bool = True,
) -> Site:
    """The one report builder (`run`, `report` and `compat` call it): load and merge the results,
    then render them into `out` (a callable makes the directory only once there is something to
    show). A mutation file in `out` is shown when none is given. Without `allow_partial`, a corrupt
    record or a file that is not a results file is a UsageError, before anything is written."""
    with no_gc():
        given_out = out if isinstance(out, Path) else None
        model = build_model(results, baseline, mutation_file(mutation, given_out), given_out)
        fatal = [] if allow_partial else fatal_problems(model)
        if fatal:
            more = f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else ""
            hint = (
                "; pass --allow-partial to report the rest" if "corrupt record" in fatal[0] else ""
            )
            raise UsageError(f"{fatal[0]}{more}{hint}")
        if not model.columns:
            return Site(None, model)
        return Site(render(model, out if isinstance(out, Path) else out(), title), model)


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Loading 100,000 records makes no cycles; the collector re-walking them was most of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
