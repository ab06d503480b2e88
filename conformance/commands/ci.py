"""`jax-conformance ci --shards N`: a GitHub Actions workflow that runs the conformance matrix as
jobs and merges them, printed (or written to --out) rather than kept by hand.

The matrix is JAX build x mode x shard, one job each: `jax-conformance run --modes M --shard I/N`
keeps its `results.jsonl` as an artifact (whatever the outcome); a last job downloads them all,
`jax-conformance merge`s them (each cell once; a shard that did not arrive makes its run
incomplete, said in the report) and builds one report. The modes are `mode.DEFAULT_MODES`, and
without --modes or --specs the strict modes over their areas (`mode.STRICT_MODES`, as `run` adds
them); nothing in the matrix is typed here. The first line of the file is the command that wrote
it: run it again after a change, never edit the file (docs/ci/ holds one, checked by a test).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from jax_conformance import SPECS_DIR, options
from jax_conformance.errors import ModeError, UsageError
from jax_conformance.mode import STRICT_AREAS, STRICT_MODES, Mode, read_modes
from jax_conformance.usage import (
    check_adapter,
    check_expression,
    check_spec_paths,
    selection_counts,
)

PYTHON = "3.11"  # the oldest Python the suite supports (pyproject's requires-python)
ARTIFACT = "results-"  # each job's artifact: this and the job's name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shards",
        type=options.positive_int,
        default=1,
        metavar="N",
        help="split each mode into N jobs, shard 1/N..N/N of its cases (default: 1)",
    )
    options.add_modes(parser, upcoming=False, note="one job per mode and shard")
    parser.add_argument(
        "--adapter",
        action="append",
        default=[],
        metavar="NAME",
        help="implementation under test, passed to each job's run (repeatable; default: jax)",
    )
    options.add_specs(
        parser.add_argument,
        help="spec directories each job runs, as the checkout names them (default: the suite's)",
    )
    options.add_keyword(parser)
    options.add_markexpr(parser)
    options.add_jax(parser, note="here a pip requirement only: each one is a column of the matrix")
    options.add_out(parser, "write the workflow to this file (default: print it)")


def check_args(args: argparse.Namespace) -> list[Mode]:
    """The modes of the matrix (UsageError for what a CI runner could not run: a wheel or a
    directory for --jax, an adapter or -k/-m that would be refused there too)."""
    try:
        choice = read_modes(args.modes, upcoming=False)
    except ModeError as exc:
        raise UsageError(str(exc)) from None
    for build in args.jax:
        if build.kind != "requirement":
            raise UsageError(
                f"--jax {build.text}: a CI runner has no {build.kind} of this machine; "
                "give a pip requirement, e.g. 'jax[cpu]==0.10.1'"
            )
    for name in args.adapter:
        check_adapter(name)
    check_spec_paths([Path(p) for p in args.specs or []])
    for option, expr in (("-k", args.keyword), ("-m", args.markexpr)):
        if expr:
            check_expression(option, expr)
    modes = list(choice.modes)
    if args.modes is None and not args.specs and _strict_selected(args):
        modes += [m for m in STRICT_MODES if m not in modes]
    return modes


def _strict_selected(args: argparse.Namespace) -> bool:
    """Whether -k/-m leave any case in the strict areas (else `run` adds no strict mode either)."""
    if not (args.keyword or args.markexpr):
        return True
    counts = selection_counts(args.keyword, args.markexpr, [SPECS_DIR / a for a in STRICT_AREAS])
    return counts is None or counts[0] > 0


def _label(text: str) -> str:
    """A part of an artifact or job name: letters, digits, `.`, `_`, `-` only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def matrix(args: argparse.Namespace, modes: Sequence[Mode]) -> list[dict[str, str]]:
    """One entry per JAX build, mode and shard: what the job runs and the name it keeps it under."""
    strict_specs = " ".join(f"--specs {SPECS_DIR.name}/{a}" for a in STRICT_AREAS)
    entries = []
    for build in list(dict.fromkeys(b.text for b in args.jax)) or [""]:
        for mode in modes:
            for i in range(1, args.shards + 1):
                name = "-".join(
                    p for p in (_label(build), _label(mode.slug), f"{i}of{args.shards}") if p
                )
                entry = {"name": name, "mode": mode.slug, "shard": f"{i}/{args.shards}"}
                if build:
                    entry["jax"] = build
                if mode in STRICT_MODES and args.modes is None:
                    entry["specs"] = strict_specs
                entries.append(entry)
    return entries


def run_command(args: argparse.Namespace, modes: Sequence[Mode]) -> str:
    """The `run` every job makes, its mode, shard and specs from the matrix entry."""
    words = ["jax-conformance", "run"]
    words += [w for a in args.adapter for w in ("--adapter", shlex.quote(a))]
    words += [w for s in args.specs or [] for w in ("--specs", shlex.quote(s))]
    for option, expr in (("-k", args.keyword), ("-m", args.markexpr)):
        if expr:
            words += [option, shlex.quote(expr)]
    words += ['--modes "${{ matrix.mode }}"', '--shard "${{ matrix.shard }}"']
    if any(m in STRICT_MODES for m in modes) and args.modes is None:
        words.append("${{ matrix.specs }}")
    words += ['--out "results/${{ matrix.name }}"', "--progress plain", "--no-report"]
    return " ".join(words)


def _setup(install: str) -> list[dict[str, Any]]:
    """The steps every job starts with: the checkout, Python, the suite (and what `install` adds)."""
    return [
        {"uses": "actions/checkout@v4"},
        {"uses": "actions/setup-python@v5", "with": {"python-version": PYTHON}},
        {"name": "Install the suite", "run": install},
    ]


def workflow(args: argparse.Namespace, modes: Sequence[Mode]) -> dict[str, Any]:
    """The workflow as data: the matrix job, and the job that merges its results into one report."""
    install = "pip install -e ."
    if args.jax:
        install += '\npip install "${{ matrix.jax }}"'
    jobs: dict[str, Any] = {
        "run": {
            "name": "${{ matrix.name }}",
            "runs-on": "ubuntu-latest",
            "strategy": {"fail-fast": False, "matrix": {"include": matrix(args, modes)}},
            "steps": _setup(install)
            + [
                {
                    "name": "jax-conformance run (one mode, one shard)",
                    "env": {"JAX_PLATFORMS": "cpu"},
                    "run": run_command(args, modes),
                },
                {
                    "name": "Keep the results, whatever the outcome",
                    "if": "always()",
                    "uses": "actions/upload-artifact@v4",
                    "with": {
                        "name": ARTIFACT + "${{ matrix.name }}",
                        "path": "results/${{ matrix.name }}/results.jsonl",
                        "if-no-files-found": "error",
                    },
                },
            ],
        },
        "merge": {
            "needs": "run",
            "if": "always()",
            "runs-on": "ubuntu-latest",
            "steps": _setup("pip install -e .") + _merge_steps(),
        },
    }
    return {
        "name": "conformance-matrix",
        "on": {"workflow_dispatch": None, "push": {"branches": ["main"]}, "pull_request": None},
        "permissions": {"contents": "read"},
        "jobs": jobs,
    }


def _merge_steps() -> list[dict[str, Any]]:
    """Download every job's results, merge them (each cell once), build the report, keep both."""
    return [
        {
            "uses": "actions/download-artifact@v4",
            "with": {"pattern": ARTIFACT + "*", "path": "results"},
        },
        {
            "name": "Merge the shards and modes into one results file and one report",
            "run": "jax-conformance merge merged.jsonl results\n"
            "jax-conformance report merged.jsonl --out site",
        },
        {
            "uses": "actions/upload-artifact@v4",
            "with": {"name": "conformance-report", "path": "merged.jsonl\nsite\n"},
        },
    ]


class _Dumper(yaml.SafeDumper):
    """Block style, a multi-line string as a `|` literal, keys in the order written."""


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)


def command_text(args: argparse.Namespace) -> str:
    """The `ci` command that gives this workflow, its options in one order (not --out)."""
    words = ["jax-conformance", "ci", "--shards", str(args.shards)]
    words += [w for m in args.modes or [] for w in ("--modes", m)]
    words += [w for a in args.adapter for w in ("--adapter", a)]
    words += [w for s in args.specs or [] for w in ("--specs", s)]
    words += [w for o, e in (("-k", args.keyword), ("-m", args.markexpr)) if e for w in (o, e)]
    words += [w for b in args.jax for w in ("--jax", b.text)]
    return shlex.join(words)


def render(args: argparse.Namespace) -> str:
    """The workflow file: the command that wrote it, what it does, then the workflow."""
    modes = check_args(args)
    head = (
        f"# Generated by `{command_text(args)}`;\n"
        "# run it again rather than editing this file.\n"
        "# Each job runs one mode's shard of the suite and keeps its results; `merge` joins them\n"
        "# (each cell once; a missing shard marks its run incomplete) into one report.\n"
    )
    body = yaml.dump(
        workflow(args, modes), Dumper=_Dumper, sort_keys=False, width=4096, allow_unicode=True
    )
    return head + body


def main(args: argparse.Namespace) -> int:
    text = render(args)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    jobs = yaml.safe_load(text)["jobs"]["run"]["strategy"]["matrix"]["include"]
    print(f"wrote {args.out}: {len(jobs)} run jobs (build x mode x shard) and the merge")
    return 0
