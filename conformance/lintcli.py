"""`jax-conformance lint [PATHS]`: every spec error as `path:line: RULE-ID message`, nothing run."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from conformance.lint import RULE_IDS, duplicate_ids, exception_names
from conformance.loader import (
    SPECS_DIR,
    SpecError,
    SpecFileErrors,
    is_spec_file,
    load_spec,
    spec_files,
)
from conformance.spec import Spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help=f"spec files or directories (default: {SPECS_DIR})")
    parser.add_argument("--adapter", action="append", metavar="NAME",
                        help="also check that exception names resolve in this adapter (starts it in a worker)")
    parser.add_argument("--rules", action="store_true", help="list the rules and exit")


def lint_paths(paths: list[Path], adapters: list[str] | None = None) -> tuple[list[SpecError], int]:
    """(errors, number of files checked)."""
    files = [p for p in spec_files(paths or [SPECS_DIR]) if is_spec_file(p)]
    errors: list[SpecError] = []
    specs: list[Spec] = []
    for path in files:
        try:
            specs.append(load_spec(path))
        except SpecFileErrors as exc:
            errors.extend(exc.errors)
    errors.extend(duplicate_ids(specs))
    for adapter in adapters or []:
        errors.extend(_unresolved(specs, adapter))
    return errors, len(files)


def _unresolved(specs: list[Spec], adapter: str) -> list[SpecError]:
    from conformance.executor import CaseRunner
    from conformance.mode import Mode

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
    return [SpecError(path, line, "EXC-UNRESOLVED", f"{name!r} does not resolve in adapter {adapter!r}: {why}")
            for name, why in sorted(bad.items()) for path, line in where[name]]


def one_line(error: SpecError, root: Path | None = None) -> str:
    """`path:line: RULE-ID message` on one line, whatever the message holds (a grep-able contract)."""
    return re.sub(r"\s*\n\s*", " | ", error.format(root).strip())


def main(args: argparse.Namespace) -> int:
    if args.rules:
        for rule_id, doc in sorted(RULE_IDS.items()):
            print(f"{rule_id:22} {doc}")
        return 0
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        print(f"jax-conformance lint: no such file or directory: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    errors, n = lint_paths(args.paths, args.adapter)
    for error in sorted(errors, key=lambda e: (str(e.path), e.line, e.rule)):
        print(one_line(error, Path.cwd()))
    print(f"{n} spec file(s) checked, {len(errors)} error(s)", file=sys.stderr)
    return 1 if errors else 0
