"""`jax-conformance merge OUT INPUTS...`: results from any number of files and directories (machines,
shards, modes, releases) into one results file, each cell once (`jax_conformance.merging`).

Runs of one configuration with the same specs and build (shards, repeats) become one run; the same
run read twice is read once; runs that measured a cell with other specs or another build are
refused (one line, exit 2, nothing written). `jax-conformance report OUT` shows the merged file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jax_conformance.errors import UsageError
from jax_conformance.merging import merge_runs, same_runs_once, write_runs
from jax_conformance.records import ReadProblem, load_runs
from jax_conformance.report.model import result_paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the merged results file (.jsonl)")
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUTS",
        help="result files, or directories (every *.jsonl under them: a run directory, its modes/)",
    )
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")


def check_args(args: argparse.Namespace) -> list[Path]:
    """The input files (UsageError for a missing input, an input without results, OUT over a file
    without --force, or OUT among the inputs)."""
    for given in map(Path, args.inputs):
        if not given.exists():
            raise UsageError(f"{given}: no such file or directory")
        if given.is_dir() and not result_paths([given]):
            raise UsageError(f"{given}: holds no results (*.jsonl)")
    files = result_paths(args.inputs)
    if args.out.exists() and not args.force:
        raise UsageError(f"{args.out} exists; pass --force to replace it")
    if args.out.resolve() in {f.resolve() for f in files}:
        raise UsageError(f"{args.out} is one of the inputs; write the merge elsewhere")
    return files


def main(args: argparse.Namespace) -> int:
    files = check_args(args)
    problems: list[str] = []
    runs = load_runs(files, problems)
    fatal = [p for p in problems if isinstance(p, ReadProblem) and p.fatal]
    if fatal:
        raise UsageError(fatal[0] + (f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else ""))
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    merged = merge_runs(runs)
    if not merged.runs:
        print(f"jax-conformance merge: no runs found in {' '.join(args.inputs)}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    written = write_runs(merged.runs, args.out)
    cells = sum(len(r.cases) for r in merged.runs)
    print(
        f"merged {len(same_runs_once(runs))} runs from {len(args.inputs)} inputs into {len(merged.runs)} runs, "
        f"{cells} cells ({merged.duplicates} measured twice, counted once): {args.out} ({written} records)"
    )
    for cell in merged.differing:
        print(f"warning: {cell}: two runs disagree; the newest record is kept", file=sys.stderr)
    return 0
