"""`jax-conformance check MODULE:FUNCTION --args EXPR ...`: a custom_vjp / custom_jvp rule under the contract.

Each mode (default: off-warn, off-error, off-allow, on; `--modes ...,+upcoming` adds JAX's upgrade
flags) is one process running `python -m jax_conformance.adapters.jax.contract`, two at a time. Prints
the item x mode table and one line per failure (item, mode, transform, expected, actual, and the
spec case that states the contract), the numerics items' failures (values JAX does not promise:
finite differences) apart. Exit status: 0 when every contract item holds in every mode (numerics
failures shown and counted, not failing), 1 on a contract failure or a mode that did not run (and,
with --strict-numerics, on a numerics failure too), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from jax_conformance import options
from jax_conformance.contract.engine import (
    NUMERICS_NOTE,
    Target,
    contract_modes,
    refuse_misuse,
    run_contract,
)
from jax_conformance.contract.items import ITEMS, markdown_table
from jax_conformance.contract.wire import Expr
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode
from jax_conformance.text import plural

if TYPE_CHECKING:
    from jax_conformance.contract.engine import ContractResult
    from jax_conformance.contract.releases import ReleaseResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", nargs="?", help="the function, MODULE:FUNCTION (e.g. mylib.ops:clipped_sqrt)"
    )
    parser.add_argument(
        "--args",
        action="append",
        default=[],
        metavar="EXPR",
        help="one positional example argument, a Python expression evaluated in each mode with jax, "
        "jnp, np and lax in scope (repeat for more)",
    )
    parser.add_argument(
        "--kwargs", metavar="EXPR", help="a Python expression giving a dict of keyword arguments"
    )
    parser.add_argument(
        "--nondiff",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help="hold positional argument N constant (the rule's own nondiff_argnums are read from it)",
    )
    options.add_modes(parser)
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="ITEM",
        help="an item not to judge, e.g. derivatives.finite-differences for a rule that is "
        "deliberately not the derivative (gradient scaling or clipping); repeat for more",
    )
    parser.add_argument(
        "--pythonpath",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory the function's module imports from (the directory the command starts in "
        "is on the path already)",
    )
    parser.add_argument(
        "--releases",
        action="append",
        metavar="RELEASES",
        help="comma-separated JAX releases to check in, e.g. 0.4.33,0.4.34,latest ('latest' or "
        "'installed': the JAX installed here); each release runs in compat's cached environment "
        "for it (built once if missing), and the table says in which release each item starts or "
        "stops holding",
    )
    parser.add_argument(
        "--install-timeout",
        type=float,
        default=900,
        help="seconds to build one release's environment when it is not cached (default 900)",
    )
    options.add_jobs(parser, default=2, what="mode processes", shown="2")
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds per mode process (default 900)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON instead of the table (the format --report saves: columns, "
        "per target each item's status per column, failure lines, release changes)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="save the result into DIR/contract/ and, where DIR holds a run's results.jsonl (`run "
        '--out DIR`), render DIR\'s report again with a "Your rules" section',
    )
    parser.add_argument(
        "--package",
        metavar="NAME",
        help="sweep a package: every custom_jvp / custom_vjp / custom_gradient rule it defines, "
        "checked together (one process per mode) on arguments from its pyproject.toml's "
        "[tool.jax-conformance] table or small float arrays found by trying; the rest listed with "
        "what they need (docs/check.md)",
    )
    parser.add_argument(
        "--pyproject",
        type=Path,
        metavar="FILE",
        help="with --package: the pyproject.toml whose [tool.jax-conformance] table to read "
        "(default: the package's source tree's, else the start directory's)",
    )
    parser.add_argument(
        "--strict-numerics",
        action="store_true",
        help="exit 1 on a numerics item's failure too (finite differences: values JAX does not "
        "promise, docs/api_compatibility.md); without it those are shown and counted apart",
    )
    parser.add_argument(
        "--items",
        action="store_true",
        help="list the contract's items (the JAX promise each checks, its basis, its spec cases) "
        "and exit",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="with --items: print them as docs/check.md's table (id, what it checks, the JAX "
        "promise, basis, contract or numerics)",
    )


def main(args: argparse.Namespace) -> int:
    if args.markdown and not args.items:
        raise UsageError("--markdown goes with --items")
    if args.items and args.markdown:
        print(markdown_table())
        return 0
    if args.items:
        for item in ITEMS:
            kind = "numerics" if item.numerics else "contract"
            print(
                f"{item.id} ({kind}, {item.basis}): {item.statement}\n"
                f"    promise: {'; '.join(s.cite() for s in item.sources)}\n"
                f"    from {', '.join(item.specs)}"
            )
        return 0
    if args.package:
        return _main_package(args)
    if args.pyproject:
        raise UsageError("--pyproject goes with --package")
    if not args.target:
        raise UsageError(
            "name the function to check, MODULE:FUNCTION (e.g. mylib.ops:clipped_sqrt)"
        )
    module, colon, name = args.target.partition(":")
    if not (colon and module and name):
        raise UsageError(
            f"target {args.target!r}: write MODULE:FUNCTION, e.g. mylib.ops:clipped_sqrt"
        )
    for i, source in enumerate(args.args, 1):
        _expression(f"--args {i}", source)
    if args.kwargs:
        _expression("--kwargs", args.kwargs)
    modes = contract_modes(args.modes)
    unknown = sorted(set(args.skip) - {item.id for item in ITEMS})
    if unknown:
        raise UsageError(
            f"--skip {', '.join(unknown)}: no such item; the items are {', '.join(i.id for i in ITEMS)}"
        )
    target = Target(
        args.target,
        tuple(Expr(a) for a in args.args),
        nondiff=tuple(args.nondiff),
        kwargs_expr=args.kwargs,
        skip=tuple(args.skip),
    )
    start = time.monotonic()
    if args.releases:
        return _main_releases(args, target, start)
    said: list[str] = []

    def done(mode: Mode, data: Mapping[str, object]) -> None:
        if data.get("usage"):  # said as the usage error, alone
            return
        if not said:
            at_a_time = f", {args.jobs} at a time" if args.jobs < len(modes) else ""
            said.append(
                f"{plural(len(modes), 'mode process', 'mode processes')} "
                f"({', '.join(m.slug for m in modes)}){at_a_time}"
            )
            print(f"jax-conformance check {args.target}: {said[0]}", file=sys.stderr)
        what = data.get("error", "done")
        print(f"[{time.monotonic() - start:6.1f}s] {mode.slug}: {what}", file=sys.stderr)

    result = run_contract(
        [target], modes, jobs=args.jobs, timeout=args.timeout, pythonpath=_path(args), on_mode=done
    )
    if _saved_or_printed_as_json(result, args):
        return exit_status(result, args.strict_numerics)
    for line in shown(result, args.strict_numerics, time.monotonic() - start):
        print(line)
    return exit_status(result, args.strict_numerics)


def exit_status(result: ContractResult | ReleaseResult, strict_numerics: bool) -> int:
    """0 when the contract holds (strict: the numerics items too), else 1."""
    return 0 if result.holds(strict_numerics) else 1


def shown(result: ContractResult, strict_numerics: bool, seconds: float) -> list[str]:
    """What `check` prints: the table, the notes, the contract's failure lines, the numerics
    items' apart, and the verdict."""
    out = [result.table()]
    notes = result.notes()
    if notes:
        out += ["", "notes:", *(f"  {line}" for line in notes)]
    out += result.failure_blocks()
    held = sum(1 for t in result.targets for o in t.outcomes.values() if o.status == "pass")
    out.append(
        f"\n{result.verdict(strict_numerics)} ({held} item x mode cells pass; {seconds:.1f}s)"
    )
    return out


def _main_package(args: argparse.Namespace) -> int:
    """--package NAME: the package's rules found, checked together, and what was not checked."""
    from jax_conformance.contract.package import lines, sweep_data, sweep_package

    given = [
        o
        for o, v in (
            ("a target", args.target),
            ("--args", args.args),
            ("--kwargs", args.kwargs),
            ("--nondiff", args.nondiff),
            ("--releases", args.releases),
        )
        if v
    ]
    if given:
        raise UsageError(
            f"--package takes no {given[0]}: a rule's arguments go in its [tool.jax-conformance.rules] table"
        )
    if args.pyproject is not None and not args.pyproject.is_file():
        raise UsageError(f"--pyproject {args.pyproject}: no such file")
    modes = contract_modes(args.modes)
    start = time.monotonic()
    print(f"jax-conformance check --package {args.package}: finding its rules", file=sys.stderr)

    def done(mode: Mode, data: Mapping[str, object]) -> None:
        what = data.get("error", "done")
        print(f"[{time.monotonic() - start:6.1f}s] {mode.slug}: {what}", file=sys.stderr)

    sweep = sweep_package(
        args.package,
        modes,
        pyproject=args.pyproject,
        jobs=args.jobs,
        timeout=args.timeout,
        pythonpath=_path(args),
        on_mode=done,
    )
    data = sweep_data(sweep, _command(), modes)
    if args.report is not None:
        from jax_conformance.contract.save import save_data

        path = save_data(data, args.report, f"package-{args.package}")
        print(f"saved for the report: {path}", file=sys.stderr)
    if args.json:
        import json

        print(json.dumps(data, indent=1))
        return 0 if sweep.holds(args.strict_numerics) else 1
    for line in lines(sweep):
        print(line)
    targets = sweep.result.targets if sweep.result else []
    held = sum(1 for t in targets if t.contract_ok)
    numerics = sum(1 for t in targets if t.contract_ok and not t.ok)
    print(
        f"\n{held} of {plural(len(sweep.checked), 'rule')} checked "
        f"{'holds' if len(sweep.checked) == 1 else 'hold'} the contract in every mode"
        + (f" ({numerics} with a numerics failure)" if numerics else "")
        + f", {len(sweep.unchecked)} not checked ({sweep.seconds:.1f}s, finding the rules "
        f"{sweep.find_seconds:.1f}s)"
    )
    return 0 if sweep.holds(args.strict_numerics) else 1


def _expression(what: str, source: str) -> None:
    """UsageError unless source is a Python expression (evaluated later, in each mode)."""
    try:
        compile(source, what, "eval")
    except SyntaxError as exc:
        raise UsageError(f"{what} {source!r}: not a Python expression ({exc.msg})") from None


def _saved_or_printed_as_json(
    result: ContractResult | ReleaseResult, args: argparse.Namespace
) -> bool:
    """--report saves the result beside a report; --json prints it (then nothing else is printed)."""
    if args.report is not None:
        _save_report(result, args)
    if args.json:
        _print_json(result)
    return bool(args.json)


def _main_releases(args: argparse.Namespace, target: Target, start: float) -> int:
    """--releases: every mode in every release, the table per release, and where items change."""
    from jax_conformance.contract.releases import parse_releases, run_releases

    releases = parse_releases(args.releases)
    refuse_misuse([target], contract_modes(args.modes)[0], pythonpath=_path(args))
    print(
        f"jax-conformance check {args.target}: releases {', '.join(releases)}, "
        f"{plural(args.jobs, 'mode process', 'mode processes')} at a time",
        file=sys.stderr,
    )
    result = run_releases(
        [target],
        releases,
        args.modes,
        jobs=args.jobs,
        timeout=args.timeout,
        install_timeout=args.install_timeout,
        pythonpath=_path(args),
        say=lambda line: print(f"[{time.monotonic() - start:6.1f}s] {line}", file=sys.stderr),
    )
    if _saved_or_printed_as_json(result, args):
        return exit_status(result, args.strict_numerics)
    print(result.table())
    print("\nchanges between releases:" if result.changes else "\nno item changes between releases")
    for change in result.changes:
        print(f"  {change.line()}")
    fails = [ln for ln in result.failure_lines(numerics=False) if " FAIL " in f" {ln}"]
    numerics = result.failure_lines(numerics=True)
    for head, lines in (
        ("", result.errors() + fails),
        (f"numerics failures ({NUMERICS_NOTE}):\n", numerics),
    ):
        if lines:
            print(f"\n{head}" + "\n".join(lines))
    verdict = (
        "every item holds in every mode of every release"
        if result.ok
        else "every contract item holds in every mode of every release (a numerics item fails)"
        if result.holds()
        else "not every contract item holds"
    )
    print(f"\n{verdict} ({len(result.releases)} releases; {time.monotonic() - start:.1f}s)")
    return exit_status(result, args.strict_numerics)


def _command() -> str:
    import shlex

    return "jax-conformance check " + shlex.join(sys.argv[2:])


def _print_json(result: ContractResult | ReleaseResult) -> None:
    """--json: the format `--report` saves (jax_conformance.contract.save; the results hold tuple
    keys, which JSON has not)."""
    import json

    from jax_conformance.contract.save import check_data

    print(json.dumps(check_data(result, _command()), indent=1))


def _save_report(result: ContractResult | ReleaseResult, args: argparse.Namespace) -> None:
    """--report DIR: the result saved for DIR's report, and the report rendered again (its title kept)."""
    import html
    import re

    from jax_conformance.contract.save import save

    path = save(result, _command(), args.report, args.target)
    print(f"saved for the report: {path}", file=sys.stderr)
    results = args.report / "results.jsonl"
    if not results.is_file():
        print(
            f"{args.report} has no results.jsonl: a report built there (`jax-conformance run --out "
            f"{args.report}` or `jax-conformance report ... --out {args.report}`) shows it under Your rules",
            file=sys.stderr,
        )
        return
    from jax_conformance.report import DEFAULT_TITLE, build_site

    index = args.report / "index.html"
    found = (
        re.search(r"<title>(.*?)</title>", index.read_text(encoding="utf-8"))
        if index.is_file()
        else None
    )
    title = html.unescape(found.group(1)) if found else DEFAULT_TITLE
    page, _ = build_site([results], args.report, title=title)
    print(f"report: {page} (Your rules: {path.name})", file=sys.stderr)


def _path(args: argparse.Namespace) -> list[str]:
    """The start directory, then --pythonpath (each must exist)."""
    import os

    missing = [d for d in args.pythonpath if not os.path.isdir(d)]
    if missing:
        raise UsageError(f"--pythonpath {missing[0]}: no such directory")
    return [_cwd(), *(os.path.abspath(d) for d in args.pythonpath)]


def _cwd() -> str:
    import os

    return os.getcwd()
