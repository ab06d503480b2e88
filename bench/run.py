"""Benchmarks of the harness against the floor: the cost of the JAX work itself.

    .venv/bin/python bench/run.py            # the full measurement (under 10 minutes on 2 cores)
    .venv/bin/python bench/run.py --quick    # a reduced run that keeps the machinery working (CI)

Every figure is a ratio or a difference of runs taken side by side in this process tree, so a
slower or busier machine moves both sides. It prints a table and writes bench/results.json;
bench/README.md says how to read them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jax_conformance import SPECS_DIR  # noqa: E402
from jax_conformance.adapters.jax import compile_cache_options  # noqa: E402
from jax_conformance.client.caserunner import CaseRunner, worker_env  # noqa: E402
from jax_conformance.launch.scheduler import pytest_command  # noqa: E402
from jax_conformance.mode import DEFAULT_MODES, Mode  # noqa: E402
from jax_conformance.records import load_runs, tally  # noqa: E402
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files  # noqa: E402

from bench.floor import isolated_script, write_floor  # noqa: E402
from bench.measure import PYTHON, REPO, Timing, backends, machine, run_parallel, run_timed, spread  # noqa: E402
from bench.synthetic import write_records, write_specs  # noqa: E402

ONE_MODE = Mode(False, "warn")
TARGETS = {
    "overhead": 1.25,
    "matrix": 1.4,
    "isolated_s": 0.15,
    "load_s": 2.0,
    "collect_s": 5.0,
    "report_s": 10.0,
    "first_page_mb": 5.0,
    "xdist": 1.5,
    "tables": 1.5,
}
# The quick run's spec subset: small real files, one of them with isolated cases.
QUICK_FILES = ("custom_jvp/closures.yaml", "x64/canonicalize.yaml", "x64/context.yaml")


class Bench:
    """Shared state of one benchmark run: options, scratch space, spec dirs, the floors."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick: bool = args.quick
        self.tmp = Path(tempfile.mkdtemp(prefix="jaxconf-bench-"))
        self.version = machine()["jax"]
        self.backends = backends()
        self.spec_dirs = self._spec_dirs()
        self.floors: dict[Mode, Path] = {}
        self.floor_counts: dict[Mode, dict[str, int]] = {}

    def _spec_dirs(self) -> list[Path]:
        if self.args.specs:
            return [Path(p).resolve() for p in self.args.specs]
        if not self.quick:
            return [SPECS_DIR]
        quick = self.tmp / "quick-specs"
        for name in QUICK_FILES:
            if (SPECS_DIR / name).is_file():
                (quick / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(SPECS_DIR / name, quick / name)
        return [quick] if quick.is_dir() else [SPECS_DIR]

    @property
    def specs_args(self) -> list[str]:
        """--specs for the harness, unless it runs the suite's own specs."""
        if self.spec_dirs == [SPECS_DIR]:
            return []
        return [a for d in self.spec_dirs for a in ("--specs", str(d))]

    def floor(self, mode: Mode) -> Path:
        """The plain module for `mode`, generated from the spec files as they are now."""
        if mode not in self.floors:
            path = self.tmp / "floor" / f"test_floor_{mode.slug.replace('-', '_')}.py"
            self.floor_counts[mode] = write_floor(
                self.spec_dirs, mode, self.backends, self.version, path
            )
            self.floors[mode] = path
        return self.floors[mode]

    def floor_argv(self, mode: Mode, module: Path | None = None) -> list[str]:
        # The floor does not load this project's plugin: a plain pytest run of a plain module.
        return [
            PYTHON,
            "-m",
            "pytest",
            str(module or self.floor(mode)),
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:jax_conformance",
        ]

    def harness_argv(self, mode: Mode, *extra: str) -> list[str]:
        return pytest_command("jax", mode, python=PYTHON, extra=[*self.specs_args, *extra])

    def log(self, name: str) -> Path:
        return self.tmp / "logs" / f"{name}.log"

    def say(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {text}", flush=True)


def parity(harness: dict[str, int], floor: dict[str, int]) -> dict[str, Any]:
    """Did both sides see the same cases pass? A floor that passes less did less work (or has a bug)."""
    h_pass = harness.get("passed", 0) + harness.get("xpassed", 0)
    same = h_pass == floor.get("passed", 0) and harness.get("not_applicable", 0) == floor.get(
        "skipped", 0
    )
    return {"same_outcomes": same, "harness": harness, "floor": floor}


# ---------------------------------------------------------------- 1 and 5: one mode, serial and -n 2


def bench_one_mode(b: Bench) -> tuple[dict[str, Any], dict[str, Any]]:
    """Alternating rounds of harness (serial), floor and harness -n 2 in one mode."""
    rounds = b.args.rounds or (1 if b.quick else 5)
    # -n 2 runs in the first rounds only: its figure is a ratio to the serial median, and a
    # round of the full suite costs most of a minute on 2 cores.
    xdist_rounds = min(rounds, b.args.xdist_rounds or (1 if b.quick else 2))
    harness: list[Timing] = []
    floor: list[Timing] = []
    xdist: list[Timing] = []
    floor_xdist: list[Timing] = []
    for r in range(rounds):
        b.say(f"one mode, round {r + 1}/{rounds}: harness")
        harness.append(run_timed(b.harness_argv(ONE_MODE), b.log(f"one-harness-{r}")))
        b.say(f"one mode, round {r + 1}/{rounds}: floor ({harness[-1].wall:.1f}s harness)")
        floor.append(
            run_timed(b.floor_argv(ONE_MODE), b.log(f"one-floor-{r}"), cwd=b.floor(ONE_MODE).parent)
        )
        if r < xdist_rounds:
            b.say(f"one mode, round {r + 1}/{rounds}: harness -n 2 ({floor[-1].wall:.1f}s floor)")
            xdist.append(run_timed(b.harness_argv(ONE_MODE, "-n", "2"), b.log(f"one-xdist-{r}")))
        if r == 0:
            # The floor under -n 2 once: how much of 2x the JAX work itself allows on this machine.
            b.say(
                f"one mode, round {r + 1}/{rounds}: floor -n 2 ({xdist[-1].wall:.1f}s harness -n 2)"
            )
            floor_xdist.append(
                run_timed(
                    [*b.floor_argv(ONE_MODE), "-n", "2"],
                    b.log(f"one-floor-xdist-{r}"),
                    cwd=b.floor(ONE_MODE).parent,
                )
            )
    h = statistics.median(t.wall for t in harness)
    f = statistics.median(t.wall for t in floor)
    x = statistics.median(t.wall for t in xdist)
    overhead = {
        "mode": ONE_MODE.slug,
        "ratio": round(h / f, 3),
        "target_max": TARGETS["overhead"],
        "met": h / f <= TARGETS["overhead"],
        "per_round_ratio": spread([a.wall / c.wall for a, c in zip(harness, floor, strict=True)]),
        "harness_wall_s": spread([t.wall for t in harness]),
        "floor_wall_s": spread([t.wall for t in floor]),
        "harness_cpu_s": spread([t.cpu for t in harness]),
        "floor_cpu_s": spread([t.cpu for t in floor]),
        "cpu_ratio": round(
            statistics.median(t.cpu for t in harness) / statistics.median(t.cpu for t in floor), 3
        ),
        "floor_cases": b.floor_counts[ONE_MODE],
        "parity": parity(harness[-1].counts, floor[-1].counts),
        "runs": {"harness": [t.to_json() for t in harness], "floor": [t.to_json() for t in floor]},
    }
    speedup = h / x
    xd = {
        "mode": ONE_MODE.slug,
        "speedup": round(speedup, 3),
        "target_min": TARGETS["xdist"],
        "met": speedup >= TARGETS["xdist"],
        "serial_wall_s": spread([t.wall for t in harness]),
        "n2_wall_s": spread([t.wall for t in xdist]),
        "per_round_speedup": spread(
            [a.wall / c.wall for a, c in zip(harness, xdist, strict=False)]
        ),
        "same_outcomes": harness[-1].counts == xdist[-1].counts,
        "n2_counts": xdist[-1].counts,
        "runs": [t.to_json() for t in xdist],
        # Same round as the floor's serial run it is divided into: rounds differ in load.
        "floor_speedup": round(floor[0].wall / floor_xdist[0].wall, 3),
        "floor_n2_wall_s": spread([t.wall for t in floor_xdist]),
        "serial_cpu_per_wall": round(statistics.median(t.cpu / t.wall for t in harness), 3),
    }
    return overhead, xd


# ---------------------------------------------------------------- 2: the full matrix


def _run_counts(results: Path) -> dict[str, dict[str, int]]:
    """Outcome counts per mode of a merged results file."""
    out: dict[str, dict[str, int]] = {}
    for run in load_runs([results]) if results.is_file() else []:
        per_mode = out.setdefault(Mode.from_json(run.header.get("mode") or {}).slug, {})
        for case in run.cases:
            tally(per_mode, case)
    return out


def floor_cache_env(directory: Path) -> dict[str, str]:
    """The floor's modes share compiled programs as the run's modes do (`jax-conformance run`'s
    compilation cache, through the JAX variables a plain program would set), so both sides do the
    same JAX work."""
    options = compile_cache_options(str(directory))
    return {**os.environ, **{name.upper(): str(value) for name, value in options.items()}}


def run_argv(out: Path, modes: list[Mode], jobs: int, *extra: str) -> list[str]:
    """`jax-conformance run` of these modes, `jobs` at a time, into `out` (plain progress)."""
    return [
        PYTHON,
        "-m",
        "jax_conformance.cli",
        "run",
        "--out",
        str(out),
        "--force",
        "--progress",
        "plain",
        "--jobs",
        str(jobs),
        "--modes",
        ",".join(m.slug for m in modes),
        *extra,
    ]


def bench_matrix(b: Bench) -> dict[str, Any]:
    """`jax-conformance run` against the plain modules of the same modes, run as many at a time as it runs modes."""
    modes = [ONE_MODE, Mode(True, "warn")] if b.quick else list(DEFAULT_MODES)
    jobs = os.cpu_count() or 1
    rounds = b.args.matrix_rounds or 1
    runs: list[Timing] = []
    floors: list[Timing] = []
    slowest: list[float] = []
    out = b.tmp / "run"
    argv = run_argv(out, modes, jobs, *b.specs_args)
    for r in range(rounds):
        b.say(
            f"matrix, round {r + 1}/{rounds}: jax-conformance run ({len(modes)} modes, {jobs} at a time)"
        )
        runs.append(run_timed(argv, b.log(f"matrix-run-{r}")))
        b.say(f"matrix, round {r + 1}/{rounds}: floor ({runs[-1].wall:.1f}s run)")
        total, each = run_parallel(
            [
                (b.floor_argv(m), b.log(f"matrix-floor-{r}-{m.slug}"), b.floor(m).parent)
                for m in modes
            ],
            jobs,
            env=floor_cache_env(b.tmp / f"floor-compiled-{r}"),
        )
        floors.append(total)
        slowest.append(max(t.wall for t in each))
    run_counts = _run_counts(out / "results.jsonl")
    floor_counts = {m.slug: t.counts for m, t in zip(modes, each, strict=True)}
    h = statistics.median(t.wall for t in runs)
    f = statistics.median(t.wall for t in floors)
    return {
        "modes": [m.slug for m in modes],
        "jobs": jobs,
        "ratio": round(h / f, 3),
        "target_max": TARGETS["matrix"],
        "met": h / f <= TARGETS["matrix"],
        "run_wall_s": spread([t.wall for t in runs]),
        "floor_wall_s": spread([t.wall for t in floors]),
        "floor_slowest_mode_wall_s": spread(slowest),
        "ratio_vs_slowest_mode": round(h / statistics.median(slowest), 3),
        "run_cpu_s": spread([t.cpu for t in runs]),
        "floor_cpu_s": spread([t.cpu for t in floors]),
        "cpu_ratio": round(
            statistics.median(t.cpu for t in runs) / statistics.median(t.cpu for t in floors), 3
        ),
        "run_rc": [t.rc for t in runs],
        "run_tail": runs[-1].tail.strip().splitlines()[-12:],
        "parity": {m: parity(run_counts.get(m, {}), floor_counts.get(m, {})) for m in floor_counts},
    }


# ---------------------------------------------------------------- 6: the promotion tables' cost


def bench_tables(b: Bench) -> dict[str, Any]:
    """The matrix with specs/promotion/ (thousands of table cells a mode) against the same matrix
    over a copy of specs/ without it, back to back (issue #25: the tables may cost at most 1.5x); then
    both again with --no-compile-cache, which shows what the run's shared compilation cache saves."""
    without = b.tmp / "specs-without-promotion"
    shutil.copytree(SPECS_DIR, without, ignore=shutil.ignore_patterns("promotion", "__pycache__"))
    modes = list(DEFAULT_MODES)
    jobs = os.cpu_count() or 1
    runs: dict[str, Timing] = {}
    cases: dict[str, dict[str, int]] = {}
    for name, specs, extra in (
        ("with", [], []),
        ("without", ["--specs", str(without)], []),
        ("with_no_cache", [], ["--no-compile-cache"]),
        ("without_no_cache", ["--specs", str(without)], ["--no-compile-cache"]),
    ):
        out = b.tmp / f"tables-{name}"
        b.say(f"tables: jax-conformance run {' '.join([*specs, *extra]) or '(specs/)'}")
        runs[name] = run_timed(
            run_argv(out, modes, jobs, "--no-report", *specs, *extra), b.log(f"tables-{name}")
        )
        cases[name] = {m: sum(c.values()) for m, c in _run_counts(out / "results.jsonl").items()}
    floors: dict[str, Timing] = {}
    for name, dirs in (("floor_with", b.spec_dirs), ("floor_without", [without])):
        b.say(f"tables: the floor's plain modules, {name.removeprefix('floor_')} the tables")
        commands = []
        for m in modes:
            module = b.tmp / name / f"test_floor_{m.slug.replace('-', '_')}.py"
            write_floor(dirs, m, b.backends, b.version, module)
            commands.append((b.floor_argv(m, module), b.log(f"{name}-{m.slug}"), module.parent))
        floors[name], _ = run_parallel(
            commands, jobs, env=floor_cache_env(b.tmp / f"{name}-compiled")
        )
    ratio = runs["with"].wall / runs["without"].wall
    return {
        "floor_ratio": round(floors["floor_with"].wall / floors["floor_without"].wall, 3),
        "floors": {n: t.to_json() for n, t in floors.items()},
        "modes": [m.slug for m in modes],
        "jobs": jobs,
        "ratio": round(ratio, 3),
        "target_max": TARGETS["tables"],
        # the target is on the matrix as it ran before the shared cache (6a); 6b has none
        "met": runs["with"].wall / runs["without_no_cache"].wall <= TARGETS["tables"],
        "ratio_no_cache": round(runs["with_no_cache"].wall / runs["without_no_cache"].wall, 3),
        "ratio_vs_without_no_cache": round(runs["with"].wall / runs["without_no_cache"].wall, 3),
        "cache_saves_with": round(1 - runs["with"].wall / runs["with_no_cache"].wall, 3),
        "cache_saves_without": round(1 - runs["without"].wall / runs["without_no_cache"].wall, 3),
        "runs": {n: t.to_json() for n, t in runs.items()},
        "cases_per_mode": cases,
        "all_passed": all(t.rc == 0 for t in runs.values()),
    }


# ---------------------------------------------------------------- 3: isolated cases


def bench_isolated(b: Bench) -> dict[str, Any]:
    """Per isolated case: the harness's fresh worker, the plain `python -c` of the same case, and a
    bare `import jax`."""
    picked = []
    for path in (p for d in b.spec_dirs for p in spec_files([d]) if is_spec_file(p)):
        for case in load_spec(path).cases:
            block = case.select(ONE_MODE, b.backends[0], "jax", b.version)
            if case.isolate == "process" and block is not None and block.not_applicable is None:
                picked.append((case, block))
    want = 1 if b.quick else b.args.isolated or 6
    step = max(1, len(picked) // want)
    picked = picked[::step][:want]
    # The default (isolation=fork: a child of a fork server when that is the same process) and,
    # beside it, every case in a freshly spawned interpreter as before the fork server existed.
    runner = CaseRunner("jax", ONE_MODE, isolation="fork")
    spawner = CaseRunner("jax", ONE_MODE, isolation="spawn")
    # The servers' own start (an `import jax`, once per mode and pytest process) is in measure 1's
    # whole-run figures; here it is paid before the first case so that the figure is per case.
    runner.start_fork_servers()
    bare: list[float] = []
    harness: list[float] = []
    spawned: list[float] = []
    floor: list[float] = []
    verdicts: list[str] = []
    how: list[str] = []
    bare_env = worker_env(ONE_MODE)
    for i, (case, block) in enumerate(picked):
        b.say(f"isolated case {i + 1}/{len(picked)}: {case.id}")
        bare.append(
            run_timed([PYTHON, "-c", "import jax"], b.log(f"iso-bare-{i}"), env=bare_env).wall
        )
        payload = case.payload(block, ONE_MODE, b.backends[0])
        t0 = time.perf_counter()
        verdict = runner.run(payload, timeout=case.timeout, isolate=True, env=case.env)
        harness.append(time.perf_counter() - t0)
        verdicts.append(verdict["outcome"])
        how.append(str(verdict.get("isolation")))
        t0 = time.perf_counter()
        verdict = spawner.run(payload, timeout=case.timeout, isolate=True, env=case.env)
        spawned.append(time.perf_counter() - t0)
        verdicts.append(verdict["outcome"])
        floor.append(
            run_timed(
                [PYTHON, "-c", isolated_script(case, block, b.backends[0])],
                b.log(f"iso-floor-{i}"),
                env=worker_env(ONE_MODE, case.env),
            ).wall
        )
    runner.close()
    spawner.close()
    if not picked:
        return {"cases": 0, "met": None, "note": "no isolated case applies in this mode"}
    base = statistics.median(bare)
    over = statistics.mean(harness) - base
    return {
        "cases": len(picked),
        "ids": [c.id for c, _ in picked],
        "outcomes": verdicts,
        "isolation": how,
        "overhead_per_case_s": round(over, 3),
        "target_max_s": TARGETS["isolated_s"],
        "met": over <= TARGETS["isolated_s"],
        "spawned_overhead_per_case_s": round(statistics.mean(spawned) - base, 3),
        "harness_above_floor_per_case_s": round(
            statistics.mean(harness) - statistics.mean(floor), 3
        ),
        "spawned_above_floor_per_case_s": round(
            statistics.mean(spawned) - statistics.mean(floor), 3
        ),
        "floor_above_bare_per_case_s": round(statistics.mean(floor) - base, 3),
        "bare_import_jax_s": spread(bare),
        "harness_case_s": spread(harness),
        "spawned_case_s": spread(spawned),
        "floor_case_s": spread(floor),
    }


# ---------------------------------------------------------------- 4: scale


def bench_scale(b: Bench) -> dict[str, Any]:
    """The harness alone on synthetic input: lint (load and validate), collection, and the report."""
    n_cases = b.args.cases or (500 if b.quick else 10_000)
    n_records = b.args.records or (5_000 if b.quick else 100_000)
    specs = b.tmp / "synthetic-specs"
    write_specs(specs, n_cases)
    b.say(f"scale: lint {n_cases:,} cases")
    lint = run_timed([PYTHON, "-m", "jax_conformance.cli", "lint", str(specs)], b.log("scale-lint"))
    b.say(f"scale: collect {n_cases:,} cases ({lint.wall:.1f}s lint)")
    collect = run_timed(
        [
            PYTHON,
            "-m",
            "pytest",
            "conformance/",
            "--adapter=jax",
            "--specs",
            str(specs),
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        b.log("scale-collect"),
    )
    found = re.search(r"(\d+) tests? collected", collect.tail)
    records = b.tmp / "synthetic-results.jsonl"
    written = write_records(records, n_records)
    b.say(f"scale: report of {written:,} records ({collect.wall:.1f}s collect)")
    site = b.tmp / "site"
    report = run_timed(
        [PYTHON, "-m", "jax_conformance.cli", "report", str(records), "--out", str(site)],
        b.log("scale-report"),
    )
    first_page = None
    if report.rc == 0:
        from jax_conformance.report.site import first_page_bytes

        first_page = first_page_bytes(site / "index.html")
    page_mb = first_page / 1e6 if first_page is not None else None
    return {
        "load": {
            "cases": n_cases,
            "wall_s": round(lint.wall, 3),
            "target_max_s": TARGETS["load_s"],
            "met": lint.rc == 0 and lint.wall <= TARGETS["load_s"],
            "rc": lint.rc,
            "command": "jax-conformance lint DIR",
            "tail": lint.tail.strip().splitlines()[-3:],
        },
        "collect": {
            "cases": n_cases,
            "collected": int(found.group(1)) if found else None,
            "wall_s": round(collect.wall, 3),
            "target_max_s": TARGETS["collect_s"],
            "met": collect.rc == 0 and collect.wall <= TARGETS["collect_s"],
            "rc": collect.rc,
        },
        "report": {
            "records": written,
            "wall_s": round(report.wall, 3),
            "target_max_s": TARGETS["report_s"],
            "first_page_mb": round(page_mb, 3) if page_mb is not None else None,
            "target_first_page_max_mb": TARGETS["first_page_mb"],
            "rc": report.rc,
            "met": report.rc == 0
            and report.wall <= TARGETS["report_s"]
            and page_mb is not None
            and page_mb <= TARGETS["first_page_mb"],
            "tail": report.tail.strip().splitlines()[-3:],
        },
    }


# ---------------------------------------------------------------- the table


def _s(d: dict[str, Any]) -> str:
    return f"{d['min']:.2f} / {d['median']:.2f} / {d['max']:.2f}" if d.get("n") else "-"


def _met(value: Any) -> str:
    return {True: "yes", False: "**no**", None: "-"}[value]


def table(results: dict[str, Any]) -> str:
    """The results as a Markdown table (what bench/README.md shows)."""
    m = results["machine"]
    s = results["sections"]
    rows = [("#", "measure", "figure", "target", "met", "spread (min / median / max)")]

    def add(n: str, what: str, figure: str, target: str, met: Any, spread_text: str) -> None:
        rows.append((n, what, figure, target, _met(met), spread_text))

    if "overhead" in s and "ratio" in s["overhead"]:
        o = s["overhead"]
        add(
            "1",
            f"one mode ({o['mode']}): harness / floor wall",
            f"{o['ratio']:.2f}x",
            f"<= {o['target_max']}",
            o["met"],
            f"harness {_s(o['harness_wall_s'])} s; floor {_s(o['floor_wall_s'])} s; ratio per round "
            f"{_s(o['per_round_ratio'])}; "
            f"CPU ratio {o['cpu_ratio']:.2f}",
        )
    if "matrix" in s and "ratio" in s["matrix"]:
        x = s["matrix"]
        add(
            "2",
            f"matrix ({len(x['modes'])} modes, {x['jobs']} at a time): run / floor wall",
            f"{x['ratio']:.2f}x",
            f"<= {x['target_max']}",
            x["met"],
            f"run {_s(x['run_wall_s'])} s; floor {_s(x['floor_wall_s'])} s; CPU ratio {x['cpu_ratio']:.2f}; "
            f"vs the slowest plain mode {x['ratio_vs_slowest_mode']:.2f}x",
        )
    if "isolated" in s and s["isolated"].get("cases"):
        i = s["isolated"]
        add(
            "3",
            f"isolated case: harness above bare `import jax` ({i['cases']} cases)",
            f"{i['overhead_per_case_s']:+.3f} s",
            f"<= {i['target_max_s']} s",
            i["met"],
            f"case {_s(i['harness_case_s'])} s ({', '.join(sorted(set(i['isolation'])))}); bare import "
            f"{_s(i['bare_import_jax_s'])} s; above plain `python -c` {i['harness_above_floor_per_case_s']:+.3f} s; "
            f"spawned instead: {i['spawned_overhead_per_case_s']:+.3f} s above bare import, "
            f"{i['spawned_above_floor_per_case_s']:+.3f} s above plain `python -c`",
        )
    if "scale" in s and "load" in s["scale"]:
        c = s["scale"]
        add(
            "4a",
            f"lint (load + validate) {c['load']['cases']:,} cases",
            f"{c['load']['wall_s']:.2f} s",
            f"< {c['load']['target_max_s']} s",
            c["load"]["met"],
            "1 run",
        )
        add(
            "4b",
            f"collect {c['collect']['cases']:,} cases",
            f"{c['collect']['wall_s']:.2f} s",
            f"< {c['collect']['target_max_s']} s",
            c["collect"]["met"],
            f"{c['collect']['collected']} items",
        )
        add(
            "4c",
            f"report of {c['report']['records']:,} records",
            f"{c['report']['wall_s']:.2f} s; first page {c['report']['first_page_mb']} MB",
            f"< {c['report']['target_max_s']} s; < {c['report']['target_first_page_max_mb']} MB",
            c["report"]["met"],
            "1 run",
        )
    if "xdist" in s and "speedup" in s["xdist"]:
        d = s["xdist"]
        add(
            "5",
            "one mode: serial / -n 2 wall",
            f"{d['speedup']:.2f}x",
            f">= {d['target_min']}",
            d["met"],
            f"serial {_s(d['serial_wall_s'])} s; -n 2 {_s(d['n2_wall_s'])} s; the floor's own -n 2 "
            f"speedup {d['floor_speedup']:.2f}x",
        )
    if "tables" in s and "ratio" in s["tables"]:
        t = s["tables"]
        r = t["runs"]
        f = t["floors"]
        before = t["ratio_vs_without_no_cache"]
        add(
            "6a",
            f"matrix ({len(t['modes'])} modes, {t['jobs']} at a time) with the promotion tables / "
            "without them, as the run was before the shared compilation cache",
            f"{before:.2f}x",
            f"<= {t['target_max']}",
            before <= t["target_max"],
            f"with {r['with']['wall_s']:.1f} s; without, --no-compile-cache "
            f"{r['without_no_cache']['wall_s']:.1f} s"
            + ("" if t["all_passed"] else "; **a run failed**"),
        )
        add(
            "6b",
            "the same, back to back: both with the shared cache; both without it",
            f"{t['ratio']:.2f}x; {t['ratio_no_cache']:.2f}x",
            "-",
            None,
            f"with {r['with']['wall_s']:.1f} s, without {r['without']['wall_s']:.1f} s; "
            f"--no-compile-cache: {r['with_no_cache']['wall_s']:.1f} s, "
            f"{r['without_no_cache']['wall_s']:.1f} s; the floor's plain modules (shared cache): "
            f"{f['floor_with']['wall_s']:.1f} s with, {f['floor_without']['wall_s']:.1f} s without "
            f"({t['floor_ratio']:.2f}x)",
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    head = (
        f"machine: {m['cores']} cores, Python {m['python']}, JAX {m['jax']} (jaxlib {m['jaxlib']}), {m['platform']}; "
        f"load average {m['load_average'][0]} at start, {results['load_average_end'][0]} at end; "
        f"git {m['git']}; {m['started']}; {'quick' if results['quick'] else 'full'} run in "
        f"{results['duration_s']:.0f} s"
    )
    return head + "\n\n" + "\n".join(lines)


README = REPO / "bench" / "README.md"
# Sections 1-5 share a table; 6, a long measurement run on its own, has its own (its own machine line).
MARKERS = {
    "main": ("<!-- bench-table -->", "<!-- /bench-table -->"),
    "tables": ("<!-- bench-tables-table -->", "<!-- /bench-tables-table -->"),
}


def update_readme(path: Path, results: dict[str, Any]) -> list[str]:
    """Replace what sits between each block's markers in bench/README.md with this run's table of
    that block's sections; a block none of whose sections ran keeps its table. Returns the blocks."""
    doc = path.read_text(encoding="utf-8")
    written = []
    for block, (start, end) in MARKERS.items():
        sections = {
            k: v for k, v in results["sections"].items() if (k == "tables") == (block == "tables")
        }
        if not sections:
            continue
        head, _, rest = doc.partition(start)
        _, _, tail = rest.partition(end)
        doc = f"{head}{start}\n{table({**results, 'sections': sections})}\n{end}{tail}"
        written.append(block)
    path.write_text(doc, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/run.py", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a reduced run (one round, small synthetic sizes): checks the machinery, not the targets",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=("overhead", "matrix", "isolated", "scale", "tables"),
        help="run only these sections (repeatable; `tables`, about 30 minutes, runs only when named)",
    )
    parser.add_argument(
        "--rounds", type=int, help="alternating rounds for one mode (default 5; quick 1)"
    )
    parser.add_argument(
        "--xdist-rounds",
        type=int,
        help="rounds (of the first ones) that also run -n 2 (default 2; quick 1)",
    )
    parser.add_argument(
        "--matrix-rounds", type=int, help="alternating rounds for the matrix (default 1)"
    )
    parser.add_argument("--isolated", type=int, help="isolated cases to time (default 6; quick 1)")
    parser.add_argument(
        "--cases",
        type=int,
        help="synthetic cases for lint and collection (default 10,000; quick 500)",
    )
    parser.add_argument(
        "--records",
        type=int,
        help="synthetic result records for the report (default 100,000; quick 5,000)",
    )
    parser.add_argument(
        "--specs",
        action="append",
        metavar="DIR",
        help="spec directories (default: specs/; quick: two small files)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the results (default: bench/results.json; with --only tables alone, "
        "bench/results-tables.json, so a section 6 run keeps the other sections' results)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch directory (floors, logs, sites)"
    )
    parser.add_argument(
        "--update-readme",
        action="store_true",
        help="put the table into bench/README.md between its table markers",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    b = Bench(args)
    results: dict[str, Any] = {
        "machine": machine(),
        "quick": b.quick,
        "spec_dirs": [str(d) for d in b.spec_dirs],
        "backends": b.backends,
        "sections": {},
    }
    wanted = set(args.only or ("overhead", "matrix", "isolated", "scale"))
    sections = results["sections"]
    try:
        for name, fn in (
            ("overhead", bench_one_mode),
            ("matrix", bench_matrix),
            ("isolated", bench_isolated),
            ("scale", bench_scale),
            ("tables", bench_tables),
        ):
            if name not in wanted:
                continue
            try:
                if name == "overhead":
                    sections["overhead"], sections["xdist"] = fn(b)
                else:
                    sections[name] = fn(b)
            except Exception as exc:  # one broken section must not hide the others' figures
                sections[name] = {"error": f"{type(exc).__name__}: {exc}", "met": None}
                b.say(f"{name}: FAILED {type(exc).__name__}: {exc}")
    finally:
        if args.keep:
            b.say(f"scratch kept in {b.tmp}")
        else:
            shutil.rmtree(b.tmp, ignore_errors=True)
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.out is None:
        tables_only = args.only == ["tables"]
        args.out = REPO / "bench" / ("results-tables.json" if tables_only else "results.json")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print()
    print(table(results))
    print(f"\nresults: {args.out}")
    if args.update_readme:
        blocks = update_readme(README, results)
        print(f"table ({', '.join(blocks)}) written into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
