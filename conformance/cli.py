"""`jax-conformance`: the command line (run, report, lint, and the tools built on them).

Each subcommand lives in its own module and exposes `add_arguments(parser)` and
`main(args) -> int`; this file only wires them together.
"""

from __future__ import annotations

import argparse
import importlib
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jax-conformance", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"jax-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "_main"):
        parser.print_help()
        return 2
    return int(args._main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
