"""`jax-conformance compat`: run the suite against several JAX releases and show what changed.

One isolated environment per release (`python -m venv` + pip, cached under the cache dir),
the full mode matrix in each (one pytest process per mode, in parallel), one merged results
file, a behaviour × release table on the terminal, a JSON summary of the changes, and the
HTML report built from the merged file. A release that cannot be installed or imported is
recorded as `unavailable`, with the reason, and the rest of the table is still built.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from jax_conformance import CHECKOUT, SPECS_DIR, options
from jax_conformance.compat.across import ModeRun, across_releases, mode_run, prepare_env
from jax_conformance.compat.builds import describe, harness_reason, plan_line, prepare_build
from jax_conformance.compat.drive import (
    add_radar_arguments,
    changes_json,
    format_changes_text,
    gate_check,
    merged_results,
    refuse_unasked,
    save_search,
    search_range,
)
from jax_conformance.compat.envs import (
    DEFAULT_CACHE,
    DEFAULT_VERSIONS,
    NEEDS_CHECKOUT,
    RELEASE_PINS,
    Environment,
    add_environment_arguments,
    clean_environ,
    default_cache_dir,
    ensure_env,
    existing_env,
    find_python,
    python_needed,
    python_tag,
)
from jax_conformance.compat.table import format_changes, format_table, summary
from jax_conformance.errors import ConformanceError, UsageError
from jax_conformance.launch import rundir, service
from jax_conformance.launch.ray_engine import RayEngine
from jax_conformance.launch.scheduler import merge
from jax_conformance.launch.service import closing_records
from jax_conformance.mode import Mode, read_modes
from jax_conformance.records import (
    COMPAT_SUMMARY,
    ResultsWriter,
    load_runs,
    read_one,
    suite_info,
    unavailable,
    write_one,
    write_search,
)
from jax_conformance.releases import build_table, parse_versions
from jax_conformance.report import build_site
from jax_conformance.spec.loader import spec_revision

DEFAULT_OUT = rundir.REPORTS / rundir.RUNS  # a new directory there per compat run


# ---------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--versions",
        type=options.versions_arg,
        default=list(DEFAULT_VERSIONS),
        metavar="V1,V2,...",
        help=f"JAX releases to run (default: {','.join(DEFAULT_VERSIONS)})",
    )
    parser.add_argument(
        "--releases",
        default=None,
        metavar="all|A..B",
        help="every release the package index offers in a range (asked of pip: `all` is 0.4.30 on, "
        "`0.4.30..0.5.3`, `0.10.2..`), run in full at the ends and bisected in between: each "
        "case that differs is run only in the releases the search needs, and each change is "
        "attributed to the release that made it (results kept under the cache directory)",
    )
    options.add_shard(
        parser.add_argument,
        "run only shard I of N of the --versions: every Nth release in release order from the Ith, "
        "the same on every machine (`jax-conformance merge` joins the N results)",
    )
    options.add_modes(
        parser,
        upcoming=False,
        note="run in each release; a release without a mode's flag: that mode is unavailable there",
    )
    options.add_engine(parser)
    options.add_out(
        parser,
        f"where results, the summary and the report go (default: a new directory in {DEFAULT_OUT}/)",
    )
    parser.add_argument(
        "--force", action="store_true", help="let --out replace the run a directory already holds"
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help=f"where environments are cached (default: $JAX_CONFORMANCE_CACHE, else {DEFAULT_CACHE}; "
        "delete that directory to clear them)",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter the environments are created from (default: this one)",
    )
    parser.add_argument(
        "--interpreter",
        action="append",
        default=[],
        metavar="MINOR=PATH",
        help="the interpreter for releases that need another Python, e.g. 3.12=/usr/bin/python3.12 "
        "(default: found on PATH or under pyenv)",
    )
    add_environment_arguments(parser)
    parser.add_argument(
        "--prune",
        action="store_true",
        help="afterwards, delete cached environments this run did not use",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="VERSION=PATH",
        help="use an existing environment for a release instead of building one (repeatable)",
    )
    options.add_jax(
        parser,
        note="repeatable; each runs beside --versions, a column of the table at its version",
    )
    parser.add_argument(
        "--live-specs",
        action="store_true",
        help="run specs/ as it is when each run starts (default: a snapshot taken once, "
        "so every release runs the same cases)",
    )
    parser.add_argument(
        "--from-results",
        type=Path,
        metavar="MERGED",
        help="build no environment and run nothing: the table, summary and report from a merged file",
    )
    parser.add_argument(
        "--changes-only", action="store_true", help="print only the rows that differ"
    )
    parser.add_argument("--no-report", action="store_true", help="do not build the HTML report")
    add_radar_arguments(parser)
    parser.add_argument(
        "pytest_args",
        nargs="*",
        metavar="-- PYTEST_ARGS",
        help="passed to each pytest run (after --), e.g. -- -k defaults",
    )


def _given_envs(items: Sequence[str]) -> dict[str, Path]:
    out = {}
    for item in items:
        version, sep, path = item.partition("=")
        if not sep:
            raise UsageError(f"--env {item!r}: use VERSION=PATH")
        out[parse_versions(version)[0]] = Path(path).resolve()
    return out


def _interpreters(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        minor, sep, path = item.partition("=")
        if not sep or not path:
            raise UsageError(
                f"--interpreter {item!r}: use MINOR=PATH, e.g. 3.12=/usr/bin/python3.12"
            )
        out[minor] = path
    return out


def run_compat(
    args: argparse.Namespace, say: Callable[[str], None] = print, engine: RayEngine | None = None
) -> tuple[list[Environment], list[ModeRun], list[Path]]:
    """Build (or reuse) each release's environment and run every mode in it, in parallel; with
    a Ray `engine`, each release's environment is built by a task on a node and its modes run
    there as actors."""
    cache = (args.cache_dir or default_cache_dir()).resolve()
    out_dir = (args.out / "compat").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    extra = [a for a in args.pytest_args if a != "--"]
    if not args.live_specs:
        extra = ["--specs", str(snapshot_specs(out_dir / "specs")), *extra]
    build: Callable[[str], Environment] = Builder(args, cache)
    nodes: dict[str, str] = {}  # with Ray: the node each release's environment was built on
    if engine is not None:
        local = build

        def build(version: str) -> Environment:
            env, nodes[version] = engine.run_on_a_node(local, version)
            return env

    envs: list[Environment] = []
    mode_runs: list[ModeRun] = []
    files: list[Path] = []
    lock = threading.Lock()

    def each(version: str) -> list[ModeRun]:
        """The release's environment, then its mode runs (or, unavailable, its records saying why)."""
        env = prepare_env(version, cache, build)
        with lock:
            envs.append(env)
            if not env.ok:
                say(f"jax {version}: UNAVAILABLE: {env.reason}")
                files.append(_write_unavailable(env, args.modes, out_dir))
                return []
            how = "cached" if env.cached else f"built in {env.seconds:.0f} s"
            say(
                f"jax {version}: environment {how} (jaxlib {env.versions.get('jaxlib', '?')}, "
                f"numpy {env.versions.get('numpy', '?')}): {env.path}"
            )
            where = engine.on_node(nodes[version]) if engine is not None else None
            runs = [mode_run(env, mode, out_dir, extra, where) for mode in args.modes]
            files.extend(run.results for run in runs)
            return runs

    # The environments are built in threads; each mode's run is queued as its environment is ready.
    across_releases(
        args.versions,
        each,
        jobs=args.jobs,
        build_jobs=args.build_jobs,
        timeout=args.run_timeout,
        on_finish=mode_runs.append,
        say=say,
    )
    order = {v: i for i, v in enumerate(args.versions)}
    files.sort(key=lambda p: (order.get(p.name.split("-")[0], 99), p.name))
    if args.prune:
        for path in prune_cache(cache, [e.path for e in envs if e.ok]):
            say(f"pruned {path}")
    return envs, mode_runs, files


class Builder:
    """How a release's environment is had: the one given (--env), else built with the interpreter
    it needs (unavailable when none is found). Picklable, so a Ray task can build on its node."""

    def __init__(self, args: argparse.Namespace, cache: Path) -> None:
        self.cache = cache
        self.given = _given_envs(args.env)
        self.overrides = _interpreters(args.interpreter)
        self.python: str = args.python
        self.install_timeout: float = args.install_timeout
        self.rebuild: bool = args.rebuild
        self.pins = (*RELEASE_PINS, *args.pin)
        self.tags: dict[str, str] = {}
        self.lock = threading.Lock()
        self.builds: dict[str, Environment] = getattr(args, "jax_envs", {})  # --jax, by version

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k != "lock"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.lock = threading.Lock()

    def __call__(self, version: str) -> Environment:
        if version in self.builds:
            return self.builds[version]
        minor = python_needed(version)
        python = find_python(minor, self.overrides) if minor else self.python
        if version in self.given:
            return existing_env(version, self.given[version])
        if python is None:
            return Environment(
                version,
                self.cache,
                [],
                reason=f"jax {version} needs Python {minor}, and no python{minor} "
                f"was found (pass --interpreter {minor}=PATH)",
            )
        with self.lock:
            if python not in self.tags:
                self.tags[python] = python_tag(python)
        return ensure_env(
            version,
            self.cache,
            python,
            self.tags[python],
            self.install_timeout,
            self.rebuild,
            self.pins,
        )


def prepare_builds(args: argparse.Namespace) -> dict[str, Environment]:
    """Each --jax build's environment by its jax version, said up front and built if not cached.
    A build that fails, one that cannot run this harness, or a version --versions (or another
    --jax) runs too, is a ConformanceError (or UsageError) with the one telling line."""
    cache = (args.cache_dir or default_cache_dir()).resolve()
    tag = python_tag(args.python) if args.jax else ""
    for build in args.jax:
        print(f"jax-conformance compat {plan_line(build, cache, tag)}", flush=True)
    out: dict[str, Environment] = {}
    for build in args.jax:
        env = prepare_build(
            build, cache, args.python, timeout=args.install_timeout, rebuild=args.rebuild
        )
        if not env.ok:
            raise (UsageError if build.kind == "env" else ConformanceError)(
                f"--jax {build.text}: {env.reason}"
            )
        reason = harness_reason(env, clean_environ(env.path))
        if reason:
            raise UsageError(f"--jax {build.text}: {reason}")
        if env.version in args.versions or env.version in out:
            raise UsageError(
                f"--jax {build.text} has jax {env.version}, which "
                + (
                    "--versions runs too: leave it out of --versions"
                    if env.version in args.versions
                    else "another --jax has too: give one of them"
                )
            )
        print(f"--jax {build.text}: {describe(env)}", flush=True)
        out[env.version] = env
    return out


def _write_unavailable(env: Environment, modes: Sequence[Mode], out_dir: Path) -> Path:
    """The records of a release that could not run: each mode unavailable, with the reason."""
    path = out_dir / f"{env.version}-unavailable.jsonl"
    writer = ResultsWriter(path)
    for record in (
        r for m in modes for r in unavailable("jax", env.version, m.to_json(), env.reason)
    ):
        writer.write(record)
    writer.close()
    return path


def prune_cache(cache: Path, keep: Sequence[Path]) -> list[Path]:
    """Remove cached environments this run did not use (each is hundreds of MB)."""
    envs_dir = cache / "envs"
    kept = {p.resolve() for p in keep}
    removed = []
    for path in sorted(envs_dir.glob("jax-*")) if envs_dir.is_dir() else []:
        if path.is_dir() and path.resolve() not in kept:
            shutil.rmtree(path)
            removed.append(path)
    return removed


def snapshot_specs(dest: Path, source: Path = SPECS_DIR) -> Path:
    """Copy the specs once, so every release runs the same cases even while specs/ is being edited."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def render_report(merged: Path, out: Path) -> str:
    """Build the HTML report of the merged results into `out`; its line says how it went."""
    try:
        index, _ = build_site([merged], out)
    except Exception as exc:  # noqa: BLE001 - a report that fails must not lose the table printed before it
        return f"report not built: {type(exc).__name__}: {exc}"
    return f"report: {index}" if index is not None else f"report not built: no runs in {merged}"


def _check_usage(args: argparse.Namespace) -> None:
    """Usage errors first, before an environment is built or a directory made."""
    args.modes = read_modes(args.modes, upcoming=False).modes
    if args.shard is not None:
        if args.releases is not None or args.from_results is not None:
            raise UsageError(
                "--shard splits --versions by release; it does not apply to --releases (a search) "
                "or --from-results"
            )
        args.versions = args.shard.releases(args.versions)
        if not args.versions:
            raise UsageError(f"--shard {args.shard}: no release of --versions falls in this shard")
    if args.from_results is not None and not args.from_results.is_file():
        raise UsageError(f"--from-results {args.from_results}: no such file")
    prepared = _given_envs(args.env)
    _interpreters(args.interpreter)
    service.check_engine(args.engine, args.address)
    if args.jax and (args.releases is not None or args.from_results is not None):
        raise UsageError("--jax runs beside --versions, not with --releases or --from-results")
    if args.engine == "ray" and args.releases is not None:
        raise UsageError("--engine ray runs --versions; the --releases search runs locally")
    if (
        args.from_results is None
        and CHECKOUT is None
        and any(v not in prepared for v in args.versions)
    ):
        raise UsageError(NEEDS_CHECKOUT)


def _out_dir(args: argparse.Namespace) -> Path:
    """Where this run's files go: a new run directory, or --out (cleared with --force)."""
    if args.out is None:
        return rundir.new_run_dir("compat")
    out = rundir.explicit_out(args.out, args.force)
    # --force replaces the earlier run's files, but never the results this one is built from.
    rundir.clear(out, [args.from_results] if args.from_results is not None else [])
    return out


def _write_summary(
    args: argparse.Namespace,
    data: dict[str, object],
    envs: Sequence[Environment],
    mode_runs: Sequence[ModeRun],
    start: float,
) -> Path:
    """compat-summary.json: the table's summary, the spec set it ran, and the timings (with
    --from-results, those of the run that wrote the results, when its summary is the one replaced)."""
    snapshot = args.out / "compat" / "specs"
    data["specs"] = {
        "spec_revision": spec_revision(
            [snapshot if snapshot.is_dir() and not args.live_specs else SPECS_DIR]
        ),
        "snapshot": not args.live_specs,
        **suite_info(),
    }
    data["timing"] = {
        "wall_s": round(time.monotonic() - start, 1),
        "environments": {
            e.version: {"cached": e.cached, "build_s": round(e.seconds, 1), "ok": e.ok}
            for e in envs
        },
        "runs": {f"{m.version}-{m.mode.slug}": round(m.seconds, 1) for m in mode_runs},
    }
    summary_path = args.out / "compat-summary.json"
    if args.from_results is not None:
        # keep the timings of the run that wrote these results, if its summary is the one being replaced
        earlier = read_one(summary_path, COMPAT_SUMMARY)
        if earlier is not None and "timing" in earlier:
            data["timing"] = earlier["timing"]
        else:
            data.pop("timing", None)
    write_one(summary_path, COMPAT_SUMMARY, data)
    return summary_path


def main(args: argparse.Namespace) -> int:
    """Run the releases, merge their results, print the table, write the summary and the report."""
    start = time.monotonic()
    envs: list[Environment] = []
    mode_runs: list[ModeRun] = []
    _check_usage(args)
    if args.releases is not None and args.from_results is None:
        refuse_unasked(args, args.releases, (args.cache_dir or default_cache_dir()).resolve())
    # the --jax builds before a directory is made: a build that fails writes none
    args.jax_envs = prepare_builds(args)
    args.out = _out_dir(args)
    if args.releases is not None and args.from_results is None:
        return radar_main(args, start)
    if args.from_results is not None:
        # only the table, the summary and the report, from an earlier run's merged file
        merged = args.from_results
        lines = sum(
            1
            for line in merged.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip()
        )
        versions: list[str] = []
    else:
        args.versions = [*args.versions, *args.jax_envs]
        with service.engine(args.engine, args.address, args.jobs) as engine:
            envs, mode_runs, files = run_compat(args, engine=engine)
        merged = args.out / "compat-results.jsonl"
        lines = merge(
            files, merged, {r.results: closing_records(r, version=r.version) for r in mode_runs}
        )
        versions = args.versions
    table = build_table(load_runs([merged]), versions)
    print()
    print(format_table(table, changes_only=args.changes_only))
    changes = format_changes(table)
    if changes:
        print("\nchanges across releases:")
        print(changes)
    data = summary(table)
    summary_path = _write_summary(args, data, envs, mode_runs, start)
    print(f"\nresults: {merged} ({lines} records)\nsummary: {summary_path}")
    if not args.no_report:
        print(render_report(merged, args.out / "compat-report"))
    print(
        f"compat: {len(table.versions)} releases, {len(table.rows)} cases, {data['changed']} differ; "
        f"{time.monotonic() - start:.0f} s"
    )
    if args.from_results is not None:
        return 0 if table.rows else 1
    ran = [e for e in envs if e.ok]
    return 0 if ran and not any(m.reason for m in mode_runs) else 1


def radar_main(args: argparse.Namespace, start: float) -> int:
    """`--releases`: discover, bisect, then the table (each change at its release), radar.json and the report."""
    run = search_range(args, args.releases)
    merged = args.out / "compat-results.jsonl"
    lines = merged_results(run, merged)
    probed = {r for r, _ in run.search.probes} - set(run.search.unavailable)
    # a release the bisection did not need has no results: no column (it is not unavailable)
    table = build_table(load_runs([merged]), [r for r in run.search.releases if r in probed])
    print()
    print(format_table(table, changes_only=True))
    skipped = [
        r for r in run.search.releases if r not in probed and r not in run.search.unavailable
    ]
    if skipped:
        print(f"not run (the search needed no observation there): {', '.join(skipped)}")
    data = changes_json(run)
    gates = gate_check(run, data)
    data["gates"] = [g.to_json() for g in gates]
    write_search(args.out / "radar.json", data)
    save_search(run.store.root, data)
    write_one(args.out / "compat-summary.json", COMPAT_SUMMARY, {**summary(table), "radar": data})
    text = format_changes_text(run, data)
    (args.out / "radar.txt").write_text(text + "\n")
    print(f"\nchanges, each at the first release that shows it ({len(data['changes'])}):")
    print(text or "(none)")
    for flag, history in data["flags"].items():
        print(
            f"upgrade flag {flag}: "
            + "; ".join(f"{h['before']} -> {h['after']} in {h['release']}" for h in history)
        )
    if gates:
        print(f"version gates that move where the radar saw no change ({len(gates)}):")
        for gate in gates:
            print(f"  {gate.describe()}")
    built = {r: e for r, e in data["environments"].items() if not e["cached"] and not e["reason"]}
    if built:
        print(
            "environments built: "
            + ", ".join(f"{r} {e['build_s']} s ({e['installer']})" for r, e in built.items())
        )
    for release, reason in run.search.unavailable.items():
        print(f"unavailable: jax {release}: {reason}")
    print(f"\nresults: {merged} ({lines} records)\nradar: {args.out / 'radar.json'}")
    if not args.no_report:
        print(render_report(merged, args.out / "compat-report"))
    print(
        f"compat --releases {args.releases}: {len(run.search.releases)} releases, {run.search.runs()} release runs "
        f"({sum(1 for _, n in run.search.probes if n is None)} in full), {len(data['changes'])} changes; "
        f"{time.monotonic() - start:.0f} s"
    )
    return 0
