"""`jax-conformance report`: merge result files (any machines, backends, versions, adapters) into a static site.

The site opens from disk: a summary per (adapter, version, backend, mode), a case x column
matrix with filters, each case's detail, behaviour x release, a comparison against a baseline,
docs-vs-code drift and mutation results. See `conformance.report.model` for what is computed
and `conformance.report.site` for how it is written.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from conformance.report.model import ReportModel, build_model, load_mutation
from conformance.report.site import first_page_bytes, render

__all__ = ["ReportModel", "add_arguments", "build_model", "build_site", "main", "render"]

DEFAULT_OUT = Path("reports/latest")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="result files (JSON lines from --results or `jax-conformance run`); a directory means every *.jsonl under it")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"site directory (default: {DEFAULT_OUT}/)")
    parser.add_argument("--baseline", action="append", default=[], metavar="RESULTS",
                        help="result files to compare against: what regressed, was fixed, is new (repeatable)")
    parser.add_argument("--mutation", type=Path, metavar="FILE",
                        help="mutation results (JSON from `jax-conformance mutate`; default: OUT/mutation.json if present)")
    parser.add_argument("--title", default="JAX conformance report", help="page title")


def build_site(results: Sequence[str | Path], out: Path, baseline: Sequence[str | Path] = (),
               mutation: Path | None = None, title: str = "JAX conformance report") -> tuple[Path, ReportModel]:
    """Load, merge and render; returns index.html and the model it shows."""
    if mutation is None and (out / "mutation.json").is_file():
        mutation = out / "mutation.json"
    with _no_gc():
        model = build_model(results, baseline, load_mutation(mutation) if mutation is not None else None)
        return render(model, out, title), model


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Loading 100,000 records makes no cycles; the collector re-walking them was most of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def main(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    if args.mutation is not None and not args.mutation.is_file():
        print(f"jax-conformance report: --mutation {args.mutation}: no such file", file=sys.stderr)
        return 4
    mutation = args.mutation if args.mutation is not None or not (args.out / "mutation.json").is_file() else args.out / "mutation.json"
    with _no_gc():
        model = build_model(args.results, args.baseline, load_mutation(mutation) if mutation is not None else None)
        index = render(model, args.out, args.title) if model.columns else None
    for problem in model.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if not model.columns:
        # Leave an existing site alone: a mistyped path should not blank it.
        print(f"jax-conformance report: no runs found in {' '.join(map(str, args.results))}", file=sys.stderr)
        return 1
    assert index is not None
    interrupted = sum(c.interrupted for c in model.columns)
    print(f"report: {index} ({len(model.columns)} columns, {len(model.cases)} cases, {model.records} records"
          f"{f', {interrupted} interrupted' if interrupted else ''}; first page {first_page_bytes(index) / 1e6:.2f} MB;"
          f" {time.perf_counter() - started:.1f}s)")
    return 0
