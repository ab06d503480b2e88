"""`jax-conformance lint [PATHS]`: every spec error as `path:line: RULE-ID message`, nothing run."""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from jax_conformance import SPECS_DIR
from jax_conformance.errors import SpecError, SpecFileErrors
from jax_conformance.spec.cache import SpecCache, gc_paused, is_large_load
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files
from jax_conformance.spec.model import Spec
from jax_conformance.spec.rules import (
    RULE_IDS,
    case_ids,
    duplicate_ids,
    duplicate_ids_in,
    exception_names,
    lint_only_errors,
)
from jax_conformance.spec.schema import fast_validator
from jax_conformance.text import plural
from jax_conformance.usage import check_adapter, check_spec_paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `jax-conformance lint`."""
    parser.add_argument(
        "paths", nargs="*", type=Path, help=f"spec files or directories (default: {SPECS_DIR})"
    )
    parser.add_argument(
        "--adapter",
        action="append",
        metavar="NAME",
        help="also check that exception names resolve in this adapter (starts it in a worker)",
    )
    parser.add_argument("--rules", action="store_true", help="list the rules and exit")


def lint_paths(paths: list[Path], adapters: list[str] | None = None) -> tuple[list[SpecError], int]:
    """(errors, number of files checked)."""
    files = [p for p in spec_files(paths or [SPECS_DIR]) if is_spec_file(p)]
    cache = SpecCache.default()
    large = is_large_load(files)
    jobs = 1 if adapters or not large else min(_free_cpus(), len(files), MAX_JOBS)
    if jobs > 1:
        try:
            return _lint_in_parallel(files, cache, jobs), len(files)
        except (BrokenProcessPool, OSError, NotImplementedError, ImportError):
            pass  # a worker died, or none could start (no fork, no semaphores): check them here, as below
    errors: list[SpecError] = []
    specs: list[Spec] = []
    with gc_paused(freeze=large):
        for path in files:
            try:
                specs.append(load_spec(path, cache=cache))
            except SpecFileErrors as exc:
                errors.extend(exc.errors)
            else:
                errors.extend(lint_only_errors(specs[-1]))
        errors.extend(duplicate_ids(specs))
    for adapter in adapters or []:
        errors.extend(_unresolved_in_adapter(specs, adapter))
    return errors, len(files)


# A large lint (>= LARGE_LOAD_BYTES of spec files) spreads the files over this many processes at most.
MAX_JOBS = 8


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _free_cpus() -> int:
    """The CPUs to use: all of them, or one when the machine is already oversubscribed.

    Measured on 2 cores: 10,000 cases in 1.6-2.1 s with 2 workers against ~2.9 s in-process when
    the load average is under ~2; at a load of ~3 the workers only add their overhead
    (4.4-5.9 s against 3.8-4.3 s in-process). As `make -l` does, the 1-minute load average decides.
    """
    cpus = _cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return cpus
    return cpus if load < cpus + 0.5 else 1


_Found = tuple[list[tuple[Path, int, str, str]], list[tuple[str, int]] | None]


def _check_file(path: Path, cache: SpecCache | None) -> _Found:
    """In a worker: one file's errors, as plain tuples, and its case ids if it loaded."""
    try:
        spec = load_spec(path, cache=cache)
    except SpecFileErrors as exc:
        return [(e.path, e.line, e.rule, e.message) for e in exc.errors], None
    return [(e.path, e.line, e.rule, e.message) for e in lint_only_errors(spec)], case_ids(spec)


def _lint_in_parallel(files: list[Path], cache: SpecCache | None, jobs: int) -> list[SpecError]:
    """What the loop in lint_paths finds, in the same order, from `jobs` forked workers.

    Workers send back errors and case ids only (not the specs, whose pickling would cost what
    it saves), and write the cache themselves. Forked, so they start with this process's
    modules, compiled schema and harness fingerprint; where fork is unavailable, OSError.
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        raise OSError("no fork")
    if cache is not None:
        cache.fingerprint()
    fast_validator()
    found: list[_Found] = []
    with (
        gc_paused(),
        ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool,
    ):
        found = list(
            pool.map(
                functools.partial(_check_file, cache=cache),
                files,
                chunksize=max(1, len(files) // (jobs * 32)),
            )
        )
    errors = [SpecError(*e) for errs, _ in found for e in errs]
    errors += duplicate_ids_in(
        (path, ids) for path, (_, ids) in zip(files, found, strict=True) if ids is not None
    )
    return errors


def _unresolved_in_adapter(specs: list[Spec], adapter: str) -> list[SpecError]:
    """EXC-UNRESOLVED: the exception names the adapter's worker cannot resolve (started here, closed after)."""
    from jax_conformance.client.caserunner import CaseRunner
    from jax_conformance.mode import Mode

    runner = CaseRunner(adapter, Mode())
    try:
        version = runner.info["behaviour_version"]
        where: dict[str, list[tuple[Path, int]]] = {}
        for spec in specs:
            for case in spec.cases:
                for line, name in exception_names(case, adapter, version):
                    where.setdefault(name, []).append((spec.path, line))
        bad = runner.resolve(sorted(where))
    finally:
        runner.close()
    return [
        SpecError(
            path, line, "EXC-UNRESOLVED", f"{name!r} does not resolve in adapter {adapter!r}: {why}"
        )
        for name, why in sorted(bad.items())
        for path, line in where[name]
    ]


def one_line(error: SpecError, root: Path | None = None) -> str:
    """`path:line: RULE-ID message` on one line, whatever the message holds (a grep-able contract)."""
    return re.sub(r"\s*\n\s*", " | ", error.format(root).strip())


def main(args: argparse.Namespace) -> int:
    """Print every error, one a line, sorted by file and line; exit 1 if any (0: clean)."""
    if args.rules:
        for rule_id, doc in sorted(RULE_IDS.items()):
            print(f"{rule_id:22} {doc}")
        return 0
    check_spec_paths(args.paths, option="")
    for adapter in args.adapter or []:
        check_adapter(adapter)
    errors, n = lint_paths(args.paths, args.adapter)
    for error in sorted(errors, key=lambda e: (str(e.path), e.line, e.rule)):
        print(one_line(error, Path.cwd()))
    print(f"{plural(n, 'spec file')} checked, {plural(len(errors), 'error')}", file=sys.stderr)
    return 1 if errors else 0
