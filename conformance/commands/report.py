"""`jax-conformance report`: merge result files (any machines, backends, versions, adapters) into a static site.

The command: its options, the checks of its paths, where the site goes. What the site shows
and how it is written is the library, `jax_conformance.report`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from jax_conformance import options
from jax_conformance.errors import UsageError
from jax_conformance.launch import rundir
from jax_conformance.report import DEFAULT_TITLE, build_site, mutation_file
from jax_conformance.report.model import ReportModel, result_paths
from jax_conformance.report.site import first_page_bytes

DEFAULT_OUT = (
    rundir.REPORTS / rundir.RUNS
)  # a new directory there per report, never over an earlier one


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="result files (JSON lines from --results, `jax-conformance run`, a `run --bundle` file "
        "from another machine, or `merge`); a directory means every *.jsonl under it",
    )
    options.add_out(
        parser,
        f"site directory (default: a new directory in {DEFAULT_OUT}/; an existing site needs --force)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="let --out replace the report or run a directory already holds",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="RESULTS",
        help="result files to compare against: what regressed, was fixed, is new (repeatable)",
    )
    parser.add_argument(
        "--mutation",
        type=Path,
        metavar="FILE",
        help="mutation results (JSON from `jax-conformance mutate`; default: OUT/mutation.json if present)",
    )
    parser.add_argument("--title", default=DEFAULT_TITLE, help="page title")
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="report what can be read when a results file has a corrupt record in its middle, or a file "
        "named is not a results file (each said as a warning); without it that is an error, exit 2",
    )


def check_results(paths: Sequence[str | Path], option: str = "") -> None:
    """A results path that does not exist, or a directory without results, is a usage error naming it."""
    for p in map(Path, paths):
        what = f"{option} {p}" if option else str(p)
        if not p.exists():
            raise UsageError(f"{what}: no such file or directory")
        if p.is_dir() and not result_paths([p]):
            raise UsageError(
                f"{what}: holds no results (*.jsonl from `jax-conformance run` or pytest --results)"
            )


def main(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    check_results(args.results)
    check_results(args.baseline, "--baseline")
    if args.mutation is not None and not args.mutation.is_file():
        raise UsageError(f"--mutation {args.mutation}: no such file")
    if args.out is not None:
        rundir.explicit_out(args.out, args.force)
    mutation = mutation_file(args.mutation, args.out)

    def target() -> Path:
        if args.out is None:
            return rundir.new_run_dir("report")
        if args.force:  # the results read (and a mutation file used) stay
            rundir.clear(
                args.out,
                [*result_paths([*args.results, *args.baseline]), *([mutation] if mutation else [])],
            )
        return Path(args.out)

    index, model = build_site(
        args.results, target, args.baseline, mutation, args.title, allow_partial=args.allow_partial
    )
    for problem in model.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if index is None:
        print(
            f"jax-conformance report: no runs found in {' '.join(map(str, args.results))}",
            file=sys.stderr,
        )
        return 1
    interrupted = sum(c.interrupted for c in model.columns)
    print(
        f"report: {index} ({len(model.columns)} columns, {len(model.cases)} cases, {model.records} records"
        f"{f', {interrupted} interrupted' if interrupted else ''}; first page {first_page_bytes(index) / 1e6:.2f} MB;"
        f" {time.perf_counter() - started:.1f}s)"
    )
    for line in upcoming_lines(model):
        print(line)
    return 0


def upcoming_lines(model: ReportModel) -> list[str]:
    """The report's section "When JAX flips its upcoming defaults" in a line per base mode: cases changed per flag."""
    out = []
    for sec in model.upcoming:
        parts = [
            f"{g.name} not run alone"
            if g.is_flag and g.changed_alone is None and not g.cases
            else f"{g.name} {len(g.cases)}"
            for g in sec.groups
        ]
        out.append(
            f"upcoming defaults ({sec.adapter} {sec.version} {sec.backend}, today {sec.base}): "
            f"{'1 case behaves' if len(sec.cases) == 1 else f'{len(sec.cases)} cases behave'} "
            f"otherwise ({', '.join(parts)});"
            f" {sec.unchanged} unchanged"
        )
    return out
