"""`jax-conformance run`: every mode on every backend, one pytest process per (adapter, mode), in parallel.

x64 and the explicit-dtype policy are process-wide, so each mode gets its own process
(`jax_conformance.launch.scheduler` starts them, N at a time); each process runs every backend its
adapter reports. Progress is read from the growing results files, never from pytest's output.
Afterwards the per-mode files are merged into
`<out>/results.jsonl`, the report is rendered into `<out>/`, and a summary table is printed.
Exit status: 0 only when every mode's process finished, no spec is at fault, and no case has an
unexpected outcome in a mode the report counts (`mode.counted_modes`: modes with upcoming flags
run beside the same mode without them are previews, as the report's verdict line says).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from jax_conformance import SPECS_DIR, options
from jax_conformance.adapters import COMPILE_CACHE_ENV
from jax_conformance.client.caserunner import read_adapter_info
from jax_conformance.compat import builds
from jax_conformance.compat.envs import Environment, default_cache_dir, python_tag
from jax_conformance.errors import ConformanceError, UsageError
from jax_conformance.flag_table import modes_for
from jax_conformance.launch import rundir, service
from jax_conformance.launch.scheduler import Engine, ModeProcess, pytest_options
from jax_conformance.launch.service import merge_modes, run_modes, stopped_status
from jax_conformance.merging import check_bundle, write_bundle
from jax_conformance.mode import STRICT_AREAS, STRICT_MODES, Mode, counted_modes, read_modes
from jax_conformance.records import OUTCOMES, UNEXPECTED, tally
from jax_conformance.spec.expectations import DEFAULT_DIR, files_for, ratchet, ratchet_target
from jax_conformance.text import cut, plural
from jax_conformance.usage import (
    check_adapter,
    check_expression,
    check_selection,
    check_spec_paths,
    check_specs_load,
    extend_pythonpath,
)

DEFAULT_OUT = (
    rundir.REPORTS / rundir.RUNS
)  # each run in a new directory there; reports/latest points at the newest
# Columns of the summary table, in the order a reader scans them.
SUMMARY_OUTCOMES = (
    "passed",
    "failed",
    "not_applicable",
    "xfailed",
    "xpassed",
    "error",
    "crashed",
    "timeout",
    "skipped",
)
SHORT = {"not_applicable": "n/a"}
HEARTBEAT = 30.0  # seconds between plain progress lines for a mode that is still running
SHOWN_LINE_CHARS = 160  # of an unexpected case's first message line in the list after the table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        action="append",
        metavar="NAME",
        help="implementation under test (repeatable; default: jax)",
    )
    options.add_modes(
        parser,
        note="without --modes, also off-warn and on with jax_numpy_dtype_promotion=strict, over "
        "specs/promotion and specs/x64 (the strict areas under --specs)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        metavar="PLATFORM",
        help="backend to run (repeatable; default: every backend the adapter reports)",
    )
    options.add_keyword(parser)
    options.add_markexpr(parser)
    options.add_shard(parser.add_argument)
    parser.add_argument(
        "--shards",
        type=options.positive_int,
        default=1,
        metavar="N",
        help="split each mode into N shard processes (the partition of --shard), run side by side "
        "(with --engine ray, spread over the cluster) and merged",
    )
    options.add_specs(parser.add_argument)
    parser.add_argument(
        "--pythonpath",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory spec code imports from (a library's own modules), before PYTHONPATH; the "
        "directory the run starts in is on the path already",
    )
    parser.add_argument(
        "--title",
        default=None,
        help="the report's title (default: 'JAX conformance report'; name what was checked, e.g. "
        "'mylib's rules under JAX')",
    )
    options.add_out(
        parser,
        f"results and report directory (default: a new directory in {DEFAULT_OUT}/, "
        f"with {rundir.REPORTS / rundir.LATEST} pointing at it)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="let --out replace the run a directory already holds (and --bundle a file)",
    )
    parser.add_argument(
        "--expectations",
        action="append",
        metavar="PATH",
        help="known-divergence file (repeatable; default: the adapter's files in specs/expectations/)",
    )
    parser.add_argument(
        "--no-expectations",
        action="store_true",
        help="ignore known-divergence files: every divergence fails",
    )
    parser.add_argument(
        "--update-expectations",
        action="store_true",
        help="rewrite each adapter's expectations file from this run (keeps reasons; new entries are marked for one)",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="RESULTS",
        help="results to compare against in the report",
    )
    options.add_jobs(parser, default=os.cpu_count() or 1, what="mode processes", shown="CPU count")
    options.add_engine(parser)
    options.add_jax(parser, note="its interpreter runs every mode process")
    parser.add_argument(
        "--case-timeout",
        type=options.positive_float,
        metavar="SECONDS",
        help="time limit per case unless the spec sets one (above 0)",
    )
    parser.add_argument("--no-report", action="store_true", help="write results only")
    parser.add_argument(
        "--bundle",
        type=Path,
        metavar="FILE",
        help="also write the run's results as one self-describing file (*.jsonl: every mode, each "
        "run's description first, shards joined) to hand on: `jax-conformance report` takes it "
        "with other runs' bundles and directories",
    )
    parser.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="each mode compiles its own programs (default: the modes share one compilation cache, "
        f"${COMPILE_CACHE_ENV} if set, else a temporary directory removed at the end of the run)",
    )
    parser.add_argument(
        "--progress",
        choices=("auto", "live", "plain"),
        default="auto",
        help="live redrawn lines on a terminal, plain lines otherwise (default: auto)",
    )


# ---------------------------------------------------------------- progress


class Progress:
    """Cases done / total per mode: redrawn in place on a terminal, plain lines otherwise."""

    def __init__(self, jobs: list[ModeProcess], stream: IO[str], live: bool) -> None:
        self.jobs = jobs
        self.counted = counted_jobs(jobs)  # the others preview upcoming flags
        self.stream = stream
        self.live = live
        self.drawn = 0
        self.t0 = time.monotonic()
        self.reported: dict[str, tuple[str, int]] = {}
        self.last_line: dict[str, float] = {}

    def line(self, job: ModeProcess) -> str:
        total = job.tail.total
        done = (
            job.tail.items_done
        )  # a spec file that did not load is a record, not one of the `total` items
        width = 24
        filled = min(width, int(width * done / total)) if total else 0
        bar = "#" * filled + "." * (width - filled)
        bad = sum(n for o, n in job.tail.counts.items() if o in UNEXPECTED) - job.tail.spec_errors
        word = "unexpected" if job in self.counted else "failing (preview, not counted)"
        extra = f"  {bad} {word}" if bad else ""
        if job.tail.spec_errors:
            extra += f"  {plural(job.tail.spec_errors, 'spec error')}"
        return (
            f"{job.name:<22} [{bar}] {done:>5}/{total if total is not None else '?':<5} "
            f"{job.elapsed:6.1f}s  {job.status()}{extra}"
        )

    def update(self) -> None:
        if self.live:
            # A line that wraps would throw off the cursor-up count: cut lines to the terminal's width.
            width = max(20, shutil.get_terminal_size().columns - 1)
            out = f"\x1b[{self.drawn}F" if self.drawn else ""
            out += "".join(f"\x1b[2K{self.line(job)[:width]}\n" for job in self.jobs)
            self.stream.write(out)
            self.drawn = len(self.jobs)
            self.stream.flush()
            return
        for job in self.jobs:
            # Plain lines: one when a mode starts, every quarter of its cases, when it ends,
            # and every HEARTBEAT seconds in between, so a CI log shows a slow mode is alive.
            total = job.tail.total or 0
            quarter = 4 * job.tail.items_done // total if total else 0
            key = (job.status(), quarter)
            stale = job.running and time.monotonic() - self.last_line.get(job.name, 0.0) > HEARTBEAT
            if job.handle is not None and (self.reported.get(job.name) != key or stale):
                self.reported[job.name] = key
                self.last_line[job.name] = time.monotonic()
                starting = job.status() == "running" and job.tail.done == 0 and job.handle.pid
                self.stream.write(
                    f"[{time.monotonic() - self.t0:7.1f}s] {self.line(job)}"
                    f"{f'  (pid {job.handle.pid})' if starting else ''}\n"
                )
                self.stream.flush()


# ---------------------------------------------------------------- after the run


SummaryRow = tuple[
    str, str, str, str, dict[str, int], str
]  # adapter, version, backend, mode, counts, status


def summary_rows(jobs: list[ModeProcess]) -> list[SummaryRow]:
    """A row per mode and backend: the outcome counts of its case records, as the process wrote them."""
    rows = []
    for job in jobs:
        header = job.tail.header
        per_backend = {
            str(b): dict.fromkeys(OUTCOMES, 0) for b in (header["backends"] if header else [])
        }
        for r in job.tail.cases:
            backend = str(r.get("backend") or next(iter(per_backend), "?"))
            tally(per_backend.setdefault(backend, dict.fromkeys(OUTCOMES, 0)), r)
        version = str(header.get("implementation_version")) if header else "?"
        for backend, c in per_backend.items() or [("-", dict.fromkeys(OUTCOMES, 0))]:
            rows.append((job.adapter, version, backend, job.mode.slug, c, job.status()))
    return in_report_order(rows)


def in_report_order(rows: list[SummaryRow]) -> list[SummaryRow]:
    """The rows in the order of the report's summary (adapter, release, backend, then the modes of the
    default matrix, each flagged mode after its base, fewest flags first), not the order the modes ran in."""
    from jax_conformance.mode import mode_key
    from jax_conformance.releases import version_key

    return sorted(rows, key=lambda r: (r[0], version_key(r[1]), r[2], *mode_key(r[3])))


def summary_table(rows: list[SummaryRow]) -> str:
    heads = [
        "adapter",
        "version",
        "backend",
        "mode",
        *(SHORT.get(o, o) for o in SUMMARY_OUTCOMES),
        "total",
        "status",
    ]
    body = [
        [a, v, b, m, *(str(c.get(o, 0)) for o in SUMMARY_OUTCOMES), str(sum(c.values())), s]
        for a, v, b, m, c, s in rows
    ]
    widths = [max(len(r[i]) for r in [heads, *body]) for i in range(len(heads))]
    numeric = range(4, 4 + len(SUMMARY_OUTCOMES) + 1)

    def fmt(r: list[str]) -> str:
        return "  ".join(
            x.rjust(w) if i in numeric else x.ljust(w)
            for i, (x, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    return "\n".join([fmt(heads), "  ".join("-" * w for w in widths), *map(fmt, body)])


def unexpected_cases(
    jobs: list[ModeProcess], limit: int = 25, spec_errors: bool = False
) -> list[str]:
    """A line per record whose outcome is unexpected (`spec_errors`: per record whose spec is at
    fault instead, which the verdict does not count), the first `limit` of them."""
    out = []
    for job in jobs:
        for r in job.tail.cases:
            if r["outcome"] in UNEXPECTED and bool(r.get("spec_error")) == spec_errors:
                first = (str(r.get("message") or "").strip().splitlines() or [""])[0]
                # a spec error's line (`file:line: RULE message`) is the harness's, whole: its end
                # (the keys allowed, the names known) is what to fix the spec with
                first = first if spec_errors else cut(first, SHOWN_LINE_CHARS, "line")
                where = " ".join(
                    str(w) for w in (job.adapter, job.mode.slug, r.get("backend")) if w
                )  # no backend: a file
                out.append(f"{str(r['outcome']).upper():8} {r.get('case')} [{where}] {first}")
    return out[:limit] + (
        [f"... and {len(out) - limit} more (see the report)"] if len(out) > limit else []
    )


def counted_jobs(jobs: list[ModeProcess]) -> list[ModeProcess]:
    """The modes whose unexpected outcomes fail the run, as the report counts them
    (`mode.counted_modes`): an adapter's modes with flags beside its plain modes are previews."""
    counted = {
        a: counted_modes(j.mode.slug for j in jobs if j.adapter == a)
        for a in {j.adapter for j in jobs}
    }
    return [j for j in jobs if j.mode.slug in counted[j.adapter]]


def print_outcomes(jobs: list[ModeProcess]) -> list[ModeProcess]:
    """Print the unexpected outcomes that count, those of the upcoming-flag previews apart, and the
    spec errors; return the modes that count (`counted_jobs`)."""
    counted = counted_jobs(jobs)
    bad = unexpected_cases(counted)
    if bad:
        print("unexpected outcomes:")
        print("\n".join(f"  {line}" for line in bad))
    preview = unexpected_cases([j for j in jobs if j not in counted])
    if preview:
        print(
            "under upcoming flags (previews beside the modes without them, not counted; the "
            "report's upcoming section says which flag changes what):"
        )
        print("\n".join(f"  {line}" for line in preview))
    spec_errors = sum(j.tail.spec_errors for j in jobs)
    if spec_errors:
        print(
            f"{plural(spec_errors, 'spec error')}, not counted (a bug in a spec, not a verdict on the implementation; "
            "the run still fails):"
        )
        print("\n".join(f"  {line}" for line in unexpected_cases(jobs, spec_errors=True)))
    return counted


def selection_note(collected: dict[tuple[str, str], int]) -> str:
    """A line per adapter whose modes collected different numbers of cases ((adapter, mode) -> the
    `collected` count): -k and -m see only the case, so a run gets there only through specs that
    differ between modes (a file that loads in one mode only); "" when every mode ran the same set."""
    per_adapter: dict[str, dict[str, int]] = {}
    for (adapter, mode), count in collected.items():
        per_adapter.setdefault(adapter, {})[mode] = count
    return "\n".join(
        f"note: {adapter} selected different cases in different modes "
        f"({', '.join(f'{m} {n}' for m, n in modes.items())}): "
        "their counts do not compare like for like"
        for adapter, modes in per_adapter.items()
        if len(set(modes.values())) > 1
    )


def expectation_files(adapter: str, args: argparse.Namespace) -> list[Path]:
    """Files given with --expectations, else the adapter's files in specs/expectations/."""
    if args.no_expectations:
        return []
    given = [Path(p).resolve() for p in args.expectations or []]
    return files_for(adapter, given, DEFAULT_DIR, updating=args.update_expectations)


def update_target(adapter: str, args: argparse.Namespace, files: list[Path]) -> Path:
    """The file --update-expectations rewrites (`expectations.ratchet_target`)."""
    given = [Path(p).resolve() for p in args.expectations or []]
    one = len(set(args.adapter or ["jax"])) == 1
    return ratchet_target(adapter, files, given, DEFAULT_DIR, one_adapter=one)


# ---------------------------------------------------------------- main


def check_args(args: argparse.Namespace) -> tuple[dict[str, list[Mode]], list[str]]:
    """Every usage error, before a directory is made or a process started (UsageError)."""
    adapters = list(dict.fromkeys(args.adapter or ["jax"]))
    for adapter in adapters:
        check_adapter(adapter)
    check_spec_paths([Path(p) for p in args.specs or []])
    check_specs_load([Path(p) for p in args.specs or []] or [SPECS_DIR])
    extend_pythonpath(args.pythonpath)
    for option, expr in (("-k", args.keyword), ("-m", args.markexpr)):
        if expr:
            check_expression(option, expr)
    if args.shards > 1 and (args.shard or args.update_expectations):
        given = "--shard" if args.shard else "--update-expectations"
        raise UsageError(f"--shards {args.shards} runs every shard itself: drop {given}")
    for path in args.baseline:
        if not Path(path).exists():
            raise UsageError(f"--baseline {path}: no such file or directory")
    if args.out is not None:
        rundir.explicit_out(args.out, args.force)
    if args.bundle is not None:
        check_bundle(args.bundle, args.force)
    service.check_engine(args.engine, args.address)
    if len(args.jax) > 1:
        raise UsageError("--jax: run judges one JAX build (compat runs several side by side)")
    check_selection(args.keyword, args.markexpr, [Path(p) for p in args.specs or []] or [SPECS_DIR])
    modes = modes_for(read_modes(args.modes), adapters, args.specs or [], read_adapter_info)
    args.strict_specs = default_strict_specs(args) if args.modes is None else []
    for adapter in adapters if args.strict_specs else []:
        modes[adapter] += [m for m in STRICT_MODES if m not in modes[adapter]]
    if args.backend:
        for adapter in adapters:
            have = list(read_adapter_info(adapter)["backends"])
            missing = [b for b in dict.fromkeys(args.backend) if b not in have]
            if missing:
                raise UsageError(
                    f"--backend {', '.join(missing)}: not available in adapter {adapter!r}; it has: {', '.join(have)}"
                )
    return modes, adapters


def default_strict_specs(args: argparse.Namespace) -> list[str]:
    """The spec folders the default strict modes run (mode.STRICT_MODES): the strict areas under
    what --specs names (all of specs/ when not given); [] when none of them is there or -k / -m
    selects no case of them (then no strict mode is added)."""
    given = [Path(p).resolve() for p in args.specs or []] or [SPECS_DIR.resolve()]
    areas = [(SPECS_DIR / a).resolve() for a in STRICT_AREAS]
    chosen = [
        str(p)
        for p in dict.fromkeys(
            area if area.is_relative_to(g) else g
            for g in given
            for area in areas
            if area.is_relative_to(g) or g.is_relative_to(area)
        )
    ]
    if chosen and (args.keyword or args.markexpr):
        try:
            check_selection(args.keyword, args.markexpr, [Path(p) for p in chosen])
        except UsageError:
            return []
    return chosen


def main(args: argparse.Namespace) -> int:
    modes, adapters = check_args(args)
    jax = jax_env(args.jax[0]) if args.jax else None
    expectations = {a: expectation_files(a, args) for a in adapters}
    if args.out is None:
        out = rundir.new_run_dir()
    else:
        out = rundir.explicit_out(args.out, args.force)
        rundir.clear(out)
    (out / "modes").mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        env = (
            {k: v for k, v in os.environ.items() if k != COMPILE_CACHE_ENV}
            if args.no_compile_cache
            else _compile_cache_env(stack)
        )
        engine = stack.enter_context(service.engine(args.engine, args.address, args.jobs))
        if jax is not None:
            env = builds.run_environ(jax, env)
            if COMPILE_CACHE_ENV in env and not builds.imports(jax, "filelock", env):
                # JAX warns on each compiled program it cannot cache without filelock
                del env[COMPILE_CACHE_ENV]
                print("each mode compiles its own programs: the --jax environment has no filelock")
        python = str(jax.python) if jax is not None else sys.executable
        return _run(args, out, modes, adapters, expectations, env, engine, python)


def jax_env(build: options.JaxBuild) -> Environment:
    """The environment `--jax` names, said up front and built if it is not cached; a failed
    build is a ConformanceError (exit status 1), an environment that cannot run a UsageError."""
    cache = default_cache_dir()
    print(f"jax-conformance run {builds.plan_line(build, cache, python_tag(sys.executable))}")
    env = builds.prepare_build(build, cache, sys.executable, environ=dict(os.environ))
    if not env.ok and build.kind == "env":
        raise UsageError(f"--jax {build.text}: {env.reason}")
    if not env.ok:
        raise ConformanceError(f"--jax {build.text}: {env.reason}")
    reason = builds.harness_reason(env, builds.run_environ(env, dict(os.environ)))
    if reason:
        raise UsageError(f"--jax {build.text}: {reason}")
    print(f"judging {builds.describe(env)}")
    return env


def _compile_cache_env(stack: contextlib.ExitStack) -> dict[str, str]:
    """The mode processes' environment with a compilation cache directory they share: the one
    $JAX_CONFORMANCE_COMPILE_CACHE names (kept), else a temporary one removed when the run ends
    (so a run compiles afresh, and its time is never a previous run's)."""
    given = os.environ.get(COMPILE_CACHE_ENV)
    if given:
        Path(given).mkdir(parents=True, exist_ok=True)
        return dict(os.environ)
    cache = stack.enter_context(tempfile.TemporaryDirectory(prefix="jax-conformance-compiled-"))
    return {**os.environ, COMPILE_CACHE_ENV: cache}


def _parts(args: argparse.Namespace) -> list[tuple[str | None, str]]:
    """Each mode's processes as (--shard value, name suffix): one, of the shard --shard names, or
    with --shards N one per shard, each with its own file (`-2of3`)."""
    if args.shards > 1:
        return [(f"{i}/{args.shards}", f"-{i}of{args.shards}") for i in range(1, args.shards + 1)]
    return [(str(args.shard) if args.shard else None, "")]


def mode_processes(
    args: argparse.Namespace,
    out: Path,
    modes: dict[str, list[Mode]],
    adapters: list[str],
    expectations: dict[str, list[Path]],
    env: dict[str, str],
    engine: Engine | None,
    python: str,
) -> list[ModeProcess]:
    """The run's processes: one per adapter, mode and shard part, each with its files in `out/modes`."""
    return [
        ModeProcess(
            a,
            m,
            out / "modes" / f"{a}-{m.slug}{part}.jsonl",
            out / "modes" / f"{a}-{m.slug}{part}.log",
            pytest_options(
                backends=args.backend or [],
                specs=args.strict_specs
                if m in STRICT_MODES and args.strict_specs
                else args.specs or [],
                expectations=expectations[a],
                keyword=args.keyword,
                markexpr=args.markexpr,
                case_timeout=args.case_timeout,
                shard=shard,
            ),
            env=env,
            engine=engine,
            python=python,
            part=part,
        )
        for a in adapters
        for m in modes[a]
        for shard, part in _parts(args)
    ]


def _run(
    args: argparse.Namespace,
    out: Path,
    modes: dict[str, list[Mode]],
    adapters: list[str],
    expectations: dict[str, list[Path]],
    env: dict[str, str],
    engine: Engine | None = None,
    python: str = sys.executable,
) -> int:
    jobs = mode_processes(args, out, modes, adapters, expectations, env, engine, python)
    live = args.progress == "live" or (args.progress == "auto" and sys.stdout.isatty())
    progress = Progress(jobs, sys.stdout, live)
    print(
        f"jax-conformance run: {len(jobs)} mode process{'es' if len(jobs) != 1 else ''} "
        f"({', '.join(j.name for j in jobs)}), {max(1, args.jobs)} at a time"
        f"{' on Ray' if engine is not None else ''}"
        f"{f', shard {args.shard} of the cases' if args.shard else ''}"
        f"{f', each mode in {args.shards} shards' if args.shards > 1 else ''}; results in {out}/",
        flush=True,
    )
    for a, files in expectations.items():
        for p in files:
            print(f"expectations for {a}: {p}")
    t0 = time.monotonic()
    stopped_by = run_modes(jobs, args.jobs, on_tick=progress.update)
    interrupted = bool(stopped_by)
    wall = time.monotonic() - t0
    merged = out / "results.jsonl"
    records = merge_modes(jobs, merged)
    print(f"\n{summary_table(summary_rows(jobs))}\n")
    counted = print_outcomes(jobs)
    note = selection_note(
        {(j.adapter, j.mode.slug): j.tail.total for j in jobs if j.tail.total is not None}
    )
    if note:
        print(note)
    for job in jobs:
        if job.handle is None:
            print(f"mode {job.name}: not started")
        elif job.stopped:
            print(
                f"mode {job.name}: stopped by {job.stopped} after {job.tail.done} "
                f"case{'s' if job.tail.done != 1 else ''}; log {job.log}"
            )
        elif not job.completed:
            print(
                f"mode {job.name}: {job.status()}; log {job.log}"
                + "".join(f"\n    {t}" for t in job.log_tail(5))
            )
    print(f"results: {merged} ({records} records; per mode in {out / 'modes'}/); {wall:.1f}s")
    if args.bundle is not None:
        bundled, written = write_bundle([merged], args.bundle)
        print(
            f"bundle: {args.bundle} ({bundled} runs, {written} records; `jax-conformance report` takes it with others)"
        )
    if args.update_expectations and not interrupted:
        for a in adapters:
            target = update_target(a, args, expectations[a])
            runs = [(j.mode, j.tail.cases) for j in jobs if j.adapter == a]
            print(f"expectations rewritten: {ratchet(target, a, runs)}")
    if not args.no_report:
        from jax_conformance.report import build_site

        title = {"title": args.title} if args.title else {}
        index, _ = build_site([merged], out, args.baseline, **title)
        print(f"report: {index}{' (incomplete: the run was interrupted)' if interrupted else ''}")
    if args.out is None:
        link = rundir.point_latest(out)
        if link is None:
            print(f"{rundir.REPORTS / rundir.LATEST} is not a link: left as it is", file=sys.stderr)
        else:
            print(f"latest: {link} -> {out.name} (earlier runs stay in {out.parent}/)")
    total = sum(j.tail.done for j in jobs)
    if interrupted:
        return stopped_status(stopped_by)  # 130 for Ctrl-C, 143 for SIGTERM
    if total == 0 and all(j.completed for j in jobs):
        print("no case was selected in any mode", file=sys.stderr)
        return 5
    ok = (
        all(j.completed for j in jobs)
        and not any(j.tail.unexpected for j in counted)
        and not any(j.tail.spec_errors for j in jobs)
    )
    return 0 if ok else 1
