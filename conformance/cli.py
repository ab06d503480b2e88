"""`jax-conformance`: the command line (run, report, lint, and the tools built on them).

Each subcommand lives in its own module and exposes `add_arguments(parser)` and
`main(args) -> int`; this file only wires them together.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from conformance import __version__

# name -> (module, one-line help)
COMMANDS = {
    "run": ("conformance.matrix", "run every mode on every backend and write results and a report"),
    "report": ("conformance.report", "merge result files into a static HTML report"),
    "lint": ("conformance.lintcli", "check spec files against the schema and the lint rules"),
    "mutate": ("conformance.mutate", "run the suite against mutants of the reference and print the mutation score"),
    "compat": ("conformance.compat", "run the suite across JAX releases, one isolated environment each"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser. With `command`, only that subcommand's module is imported and given its
    arguments; the others are listed by name and help text (`lint` need not import pytest,
    the plugin and the matrix runner to start)."""
    parser = argparse.ArgumentParser(prog="jax-conformance", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"jax-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if command is not None and name != command:
            if importlib.util.find_spec(module) is not None:
                sub.add_parser(name, help=help_text, description=help_text)  # listed, never chosen in this parse
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
        p.set_defaults(_main=mod.main)
    return parser


def _command(argv: list[str]) -> str | None:
    """The subcommand argv names (the top-level parser's options take no values), else None."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command(argv))
    args = parser.parse_args(argv)
    if not hasattr(args, "_main"):
        parser.print_help()
        return 2
    return int(args._main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
