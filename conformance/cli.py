"""`jax-conformance`: the command line (run, report, lint, and the tools built on them).

Each subcommand lives in its own module and exposes `add_arguments(parser)` and
`main(args) -> int`; this file only wires them together.

A usage error (a bad option value, a path that holds no spec, an unknown adapter) is one line
on stderr, `jax-conformance COMMAND: what was wrong; what is accepted`, exit status 2, before
anything is started or written: argparse's errors through `OneLineParser`, the commands' own
checks by raising `UsageError` (the checks both the commands and the pytest plugin make are in
`jax_conformance.usage`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from typing import NoReturn

from jax_conformance import __version__
from jax_conformance.errors import ConformanceError, Stopped, UsageError

USAGE = 2  # the exit status of every usage error


class OneLineParser(argparse.ArgumentParser):
    """argparse, but an error is one line naming the command, not the usage block and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


# name -> (module, one-line help)
COMMANDS = {
    "run": (
        "jax_conformance.commands.run",
        "run every mode on every backend and write results and a report",
    ),
    "report": ("jax_conformance.commands.report", "merge result files into a static HTML report"),
    "merge": (
        "jax_conformance.commands.merge",
        "merge result files (shards, machines, modes) into one, each cell once; conflicts refused",
    ),
    "ci": (
        "jax_conformance.commands.ci",
        "print a GitHub Actions workflow: a job per mode and shard, merged into one report",
    ),
    "lint": (
        "jax_conformance.commands.lint",
        "check spec files against the schema and the lint rules",
    ),
    "mutate": (
        "jax_conformance.commands.mutate",
        "run the suite against mutants of the reference and print the mutation score",
    ),
    "compat": (
        "jax_conformance.commands.compat",
        "run the suite across JAX releases, one isolated environment each",
    ),
    "upgrade": (
        "jax_conformance.commands.upgrade",
        "what changes going from one JAX release to another: each behaviour with the release that changed it",
    ),
    "flags": (
        "jax_conformance.commands.flags",
        "list the flags an adapter has (names for --flag and --modes MODE+FLAG)",
    ),
    "check": (
        "jax_conformance.commands.check",
        "check your own custom_vjp / custom_jvp rule against the contract in every mode",
    ),
    "diff": (
        "jax_conformance.commands.diff",
        "run generated programs on two implementations or backends and compare them",
    ),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser. With `command`, only that subcommand's module is imported and given its
    arguments; the others are listed by name and help text (`lint` need not import pytest,
    the plugin and the matrix runner to start)."""
    parser = OneLineParser(
        prog="jax-conformance", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--version", action="version", version=f"jax-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if command is not None and name != command:
            if importlib.util.find_spec(module) is not None:
                sub.add_parser(
                    name, help=help_text, description=help_text
                )  # listed, never chosen in this parse
            continue
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        if not hasattr(mod, "add_arguments") or not hasattr(mod, "main"):
            continue  # a command module without its entry points yet must not break the others
        p = sub.add_parser(name, help=help_text, description=help_text)
        mod.add_arguments(p)
        p.set_defaults(_main=mod.main, _parser=p)
    return parser


def _command(argv: list[str]) -> str | None:
    """The subcommand argv names (the top-level parser's options take no values), else None."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def flag_hint(extra: list[str]) -> str:
    """`run --flag X=Y` (pytest's option, not the command's): a flag is part of a mode, `--modes off-warn+X=Y`."""
    flags = [a.split("=", 1)[1] for a in extra if a.startswith("--flag=")]
    flags += [extra[i + 1] for i, a in enumerate(extra[:-1]) if a == "--flag"]
    if not flags:
        return ""
    return f"; a flag is part of a mode: --modes off-warn+{'+'.join(flags)}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command(argv))
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the subcommand's parser, so the line says which command did not take them
        getattr(args, "_parser", parser).error(
            f"unrecognized arguments: {' '.join(extra)}{flag_hint(extra)}"
        )
    if not hasattr(args, "_main"):
        parser.print_help()
        return USAGE
    try:
        return int(args._main(args) or 0)
    except UsageError as exc:
        print(f"jax-conformance {args.command}: {exc}", file=sys.stderr)
        return USAGE
    except (
        ConformanceError
    ) as exc:  # started, then stopped by what it was given (an adapter that cannot start)
        print(
            f"jax-conformance {args.command}: {str(exc).strip().splitlines()[0]}", file=sys.stderr
        )
        return 1
    except Stopped as exc:  # its mode processes were stopped: 130 for Ctrl-C, 143 for SIGTERM
        print(f"\njax-conformance {args.command}: stopped by {exc.cause}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        # Ctrl-C outside a command's own handling (start-up, rendering): stop without a traceback.
        print(f"\njax-conformance {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # `python -m jax_conformance.cli`: run the imported module's main, so that the UsageError the
    # commands raise (jax_conformance.cli.UsageError) is the class caught there, not __main__'s copy.
    from jax_conformance import cli as _cli

    sys.exit(_cli.main())
