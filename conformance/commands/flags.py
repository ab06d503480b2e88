"""`jax-conformance flags`: the flags an adapter has, with defaults, upgrade marks and help.

The adapter is started in a worker, in the mode given (default: off-warn, no flag set), and its
flag table is printed: the names `--flag NAME=VALUE` and `--modes MODE+NAME` accept. `--upcoming`
lists only the flags `--modes +upcoming` would set, with why each touches this suite.
"""

from __future__ import annotations

import argparse
import json

from jax_conformance.client.caserunner import read_adapter_info
from jax_conformance.errors import ModeError, UsageError
from jax_conformance.flag_table import spec_flag_places, upcoming_flags, upcoming_reason
from jax_conformance.mode import Mode
from jax_conformance.usage import check_adapter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter", default="jax", metavar="NAME", help="implementation to ask (default: jax)"
    )
    parser.add_argument(
        "--mode",
        default="off-warn",
        metavar="MODE",
        help="start it in this mode (default: off-warn)",
    )
    parser.add_argument(
        "--upgrade", action="store_true", help="only the flags JAX marks as upgrades"
    )
    parser.add_argument(
        "--upcoming", action="store_true", help="only the flags `run --modes +upcoming` sets"
    )
    parser.add_argument(
        "--json", action="store_true", help="the table as JSON, one object per flag"
    )


def main(args: argparse.Namespace) -> int:
    check_adapter(args.adapter)
    try:
        mode = Mode.from_slug(args.mode)
    except ModeError as exc:
        raise UsageError(f"--mode: {exc}") from None
    info = read_adapter_info(args.adapter, mode)
    table = list(info.get("flags") or [])
    places: dict[str, str] = {}
    if args.upcoming:
        from jax_conformance import SPECS_DIR

        places = spec_flag_places([SPECS_DIR])
        chosen = set(upcoming_flags(info, places))
        table = [f for f in table if f["name"] in chosen]
    elif args.upgrade:
        table = [f for f in table if f.get("upgrade")]
    if args.json:
        for flag in table:
            print(json.dumps(flag))
        return 0
    print(
        f"adapter {args.adapter} {info['implementation_version']} in mode {mode.slug}: "
        f"{len(info.get('flags') or [])} flags, "
        f"{sum(1 for f in info.get('flags') or [] if f.get('upgrade'))} marked as upgrades"
    )
    width = max((len(f["name"]) for f in table), default=4)
    for flag in table:
        mark = "upgrade" if flag.get("upgrade") else ""
        value = json.dumps(flag.get("value"))
        default = json.dumps(flag.get("default"))
        print(
            f"  {flag['name']:<{width}}  {value:<7} default {default:<7} {mark:<7}  {flag.get('help', '')[:100]}"
        )
        if args.upcoming:
            print(f"  {'':<{width}}  why: {upcoming_reason(flag['name'], places)}")
    return 0
