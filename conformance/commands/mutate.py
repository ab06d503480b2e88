"""`jax-conformance mutate`: run the suite against mutants of the reference and print the mutation score.

A mutant is the reference adapter with one documented rule broken on purpose, switched on
by the environment variable `JAX_CONFORMANCE_MUTANT=<name>` (the list and the code live in
`adapters/reference/mutants.py`). For each mutant and mode this runs

    python -m pytest conformance/ --adapter=reference --x64=.. --explicit-x64-dtypes=.. \
        [--flag=NAME=VALUE ..] --results F

with that variable set, and reads the `case` records of F. A case that passes on the
unmutated reference (the baseline, run first in every mode) but fails, errors, crashes or
times out with the mutant kills it. By default a mutant stops at its first kill (`--maxfail=1`,
and its remaining modes are skipped), which keeps the whole run short; `--exhaustive` runs
every case in every mode and lists every killer. The summary goes to the terminal and to a
file (`reports/mutation.json` by default, beside the runs: never inside one) holding one `mutation`
record of the record layer (records.MutationRecord: one JSON line, so also a JSON document), which
`jax-conformance report --mutation FILE` shows.
Exit status: 0 when every mutant is killed or explained, 1 when one survives unexplained,
2 when the baseline itself does not pass.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jax_conformance import options
from jax_conformance.client.caserunner import read_adapter_info
from jax_conformance.errors import Stopped, UsageError
from jax_conformance.flag_table import modes_for
from jax_conformance.launch.scheduler import ModeProcess, pytest_options
from jax_conformance.launch.service import run_modes, stopped_status
from jax_conformance.mode import Mode, read_modes
from jax_conformance.records import MutantRow, MutationRecord, ResultRecord, ResultsWriter
from jax_conformance.report import message_strength
from jax_conformance.text import cut, plural
from jax_conformance.usage import check_spec_paths

DEFAULT_OUT = Path("reports/mutation.json")
FIRST_LINE_CHARS = 160  # of a killer's first message line in the summary
KILLING = frozenset({"failed", "error", "crashed", "timeout", "xpassed"})


@dataclass
class MutantRun(ModeProcess):
    """The reference's mode process with one mutant switched on (None: the baseline, unmutated)."""

    mutant: str | None = None
    failing: dict[str, str] = field(
        default_factory=dict
    )  # case id -> outcome and first message line
    cases: int = 0
    records: list[ResultRecord] = field(
        default_factory=list
    )  # the baseline's case records (for the message check)

    def read(self) -> None:
        """The failing cases of the finished process, from the records it wrote."""
        for rec in self.tail.cases:
            self.cases += 1
            if self.mutant is None:
                self.records.append(rec)
            if rec["outcome"] in KILLING:
                first = str(rec.get("message") or "").strip().splitlines()[:1]
                self.failing[rec["case"]] = (
                    f"{rec['outcome']}: {cut(first[0], FIRST_LINE_CHARS, 'line') if first else ''}"
                )
        if self.returncode not in (0, 1, 5) and not self.failing:
            # pytest itself failed (usage error, internal error, the worker never started): a kill, said plainly
            self.failing[f"<pytest exited {self.returncode}>"] = "no case records"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutants",
        action="append",
        metavar="NAMES",
        help="mutants to run, comma-separated (default: all)",
    )
    options.add_modes(parser, note="flags the reference models")
    options.add_jobs(
        parser, default=os.cpu_count() or 1, what="pytest processes", shown="CPU count"
    )
    options.add_out(parser, f"JSON summary (default: {DEFAULT_OUT})", DEFAULT_OUT)
    options.add_specs(parser.add_argument)
    options.add_keyword(parser)
    parser.add_argument(
        "--exhaustive",
        action="store_true",
        help="run every case in every mode and list every killer (slower)",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the unmutated run (then every failure counts as a kill)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the mutants and the rule each breaks, then exit"
    )


def _mutant_table() -> tuple[dict[str, str], dict[str, str]]:
    # Imported when the command runs, never when this module is imported (`mutate --help`, the CLI's
    # command table). mutants.py is data only (it imports os); importing it runs the reference
    # package's __init__, which defines the adapter class but builds no namespace (the reference's
    # implementation modules load in `ReferenceAdapter.namespace()`, in the mode processes only).
    from jax_conformance.adapters.reference.mutants import EXPLAINED, MUTANTS

    return dict(MUTANTS), dict(EXPLAINED)


def _modes(args: argparse.Namespace) -> list[Mode]:
    """The modes to run, as `jax-conformance run` reads `--modes`: a mode may set flags (each must be one
    the reference models: a usage error otherwise), and `+upcoming` adds the upcoming-defaults modes.
    Each mode's flags reach its pytest processes as `--flag` (`launch.scheduler.pytest_command`)."""
    return modes_for(read_modes(args.modes), ["reference"], args.specs or [], read_adapter_info)[
        "reference"
    ]


def _job(mutant: str | None, mode: Mode, tmp: Path, args: argparse.Namespace) -> MutantRun:
    from jax_conformance.adapters.reference.mutants import ENV_VAR  # as in _mutant_table

    env = dict(os.environ)
    env.pop(ENV_VAR, None)
    if mutant is not None:
        env[ENV_VAR] = mutant
    name = f"{mutant or 'baseline'}-{mode.slug}"
    extra = [
        "--no-header",
        *(["--maxfail=1"] if mutant is not None and not args.exhaustive else []),
        *pytest_options(specs=args.specs or [], keyword=args.keyword),
    ]
    return MutantRun(
        "reference", mode, tmp / f"{name}.jsonl", tmp / f"{name}.log", extra, env=env, mutant=mutant
    )


def _run_all(
    jobs: list[MutantRun],
    args: argparse.Namespace,
    skip: Callable[[MutantRun], bool] | None = None,
    done: Callable[[MutantRun], None] | None = None,
) -> None:
    """Run jobs, at most --jobs at once; `skip(job)` may drop a queued job, `done(job)` sees each finished one."""

    width = max([10, *(len(j.mode.slug) for j in jobs)])

    def finished(job: MutantRun) -> None:
        job.read()
        if done is not None:
            done(job)
        print(
            f"  {job.mutant or '(baseline)':36} {job.mode.slug:{width}} {len(job.failing):3} "
            f"failing of {job.cases:3} cases  "
            f"{job.elapsed:5.1f} s",
            flush=True,
        )

    cause = run_modes(jobs, args.jobs, skip=skip, on_finish=finished, interval=0.05)
    if cause:
        raise Stopped(cause, stopped_status(cause))  # the processes are stopped: exit 130 or 143


def _baseline(
    modes: list[Mode], tmp: Path, args: argparse.Namespace
) -> tuple[dict[str, set[str]], list[message_strength.BlockStrength]] | None:
    """The unmutated reference in every mode: the failing cases per mode (none, else None after
    saying so: kills would mean nothing) and its raises/warns blocks judged for message strength."""
    print(f"baseline: the unmutated reference in {plural(len(modes), 'mode')}")
    base_jobs = [_job(None, m, tmp, args) for m in modes]
    _run_all(base_jobs, args)
    baseline: dict[str, set[str]] = {}
    for job in base_jobs:
        baseline[job.mode.slug] = set(job.failing)
        if job.failing or job.returncode not in (0, 5):
            print(
                f"baseline does not pass in {job.mode.slug} (pytest exit {job.returncode}): "
                f"{', '.join(sorted(job.failing)) or 'no case records'}",
                file=sys.stderr,
            )
    if any(baseline.values()) or any(j.returncode not in (0, 5) for j in base_jobs):
        print(
            "jax-conformance mutate: fix the reference (or the specs) first; a failing "
            "baseline makes kills meaningless",
            file=sys.stderr,
        )
        return None
    # The message score: would each `match` of the baseline's raises/warns blocks still pass
    # if the reference's message meant something else (report/message_strength.py)?
    return baseline, message_strength.check_records(r for job in base_jobs for r in job.records)


def main(args: argparse.Namespace) -> int:
    mutants, explained = _mutant_table()
    if args.list:
        for name, rule in mutants.items():
            print(f"{name:36} {rule}")
        return 0
    check_spec_paths([Path(p) for p in args.specs or []])
    modes = _modes(args)
    names = [
        n.strip() for group in args.mutants or [] for n in group.split(",") if n.strip()
    ] or list(mutants)
    unknown = [n for n in names if n not in mutants]
    if unknown:
        raise UsageError(
            f"unknown {'mutant' if len(unknown) == 1 else 'mutants'} {', '.join(unknown)}; see --list"
        )
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="jax-conformance-mutate-"))
    baseline: dict[str, set[str]] = {m.slug: set() for m in modes}
    messages: message_strength.MessageSummary | None = None
    blocks: list[message_strength.BlockStrength] = []
    if not args.no_baseline:
        ran = _baseline(modes, tmp, args)
        if ran is None:
            return 2
        baseline, blocks = ran
        messages = message_strength.summary(blocks)
    print(
        f"{plural(len(names), 'mutant')} x {plural(len(modes), 'mode')}, {args.jobs} at "
        f"once{'' if args.exhaustive else ', stopping each mutant at its first kill'}"
    )
    # Mode-major order: jobs running side by side belong to different mutants, so a mutant killed
    # in its first mode never has a second mode already running (its later modes are skipped).
    jobs = [_job(n, m, tmp, args) for m in modes for n in names]
    killed: set[str] = set()

    def skip(job: MutantRun) -> bool:
        return not args.exhaustive and job.mutant in killed

    def done(job: MutantRun) -> None:
        if set(job.failing) - baseline[job.mode.slug]:
            killed.add(str(job.mutant))

    _run_all(jobs, args, skip, done)
    summary = _summarize(names, mutants, explained, jobs, baseline, modes)
    summary["seconds"] = round(time.monotonic() - t0, 1)
    if messages is not None:
        summary["messages"] = messages
        summary["message_score"] = messages["score"]
    _print(summary)
    if messages is not None:
        print("\n".join(message_strength.describe(blocks)))
    writer = ResultsWriter(args.out)
    writer.write(summary)
    writer.close()
    print(f"mutation summary: {args.out}")
    survivors = [m for m in summary["mutants"] if not m["killed"] and not m["explanation"]]
    return 1 if survivors else 0


def _summarize(
    names: list[str],
    mutants: dict[str, str],
    explained: dict[str, str],
    jobs: list[MutantRun],
    baseline: dict[str, set[str]],
    modes: list[Mode],
) -> MutationRecord:
    """The `mutation` record: per mutant whether it was killed, by which cases, in which modes."""
    rows: list[MutantRow] = []
    for name in names:
        mine = [j for j in jobs if j.mutant == name and j.returncode is not None]
        killers = sorted(
            {
                f"{case}[{j.mode.slug}]"
                for j in mine
                for case in set(j.failing) - baseline[j.mode.slug]
            }
        )
        messages = {
            f"{case}[{j.mode.slug}]": j.failing[case]
            for j in mine
            for case in set(j.failing) - baseline[j.mode.slug]
        }
        rows.append(
            {
                "name": name,
                "rule": mutants[name],
                "killed": bool(killers),
                "killed_by": killers,
                "first_message": messages[killers[0]] if killers else "",
                "modes_run": [j.mode.slug for j in mine],
                "seconds": round(sum(j.elapsed for j in mine), 1),
                "explanation": "" if killers else explained.get(name, ""),
            }
        )
    killed = sum(1 for r in rows if r["killed"])
    return {
        "record": "mutation",
        "score": f"{killed}/{len(rows)}",
        "killed": killed,
        "total": len(rows),
        "percent": round(100.0 * killed / len(rows), 1) if rows else 0.0,
        "modes": ", ".join(m.slug for m in modes),
        "mutants": rows,
    }


def _print(summary: MutationRecord) -> None:
    print()
    print(f"{'mutant':36} {'result':9} killed by (first)")
    for row in summary["mutants"]:
        result = "killed" if row["killed"] else ("explained" if row["explanation"] else "SURVIVED")
        first = row["killed_by"][0] if row["killed_by"] else row["explanation"][:70]
        more = f" (+{len(row['killed_by']) - 1})" if len(row["killed_by"]) > 1 else ""
        print(f"{row['name']:36} {result:9} {first}{more}")
    print(
        f"\nmutation score: {summary['score']} killed ({summary['percent']}%) in {summary.get('seconds', '?')} s"
    )
