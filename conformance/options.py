"""The command-line options several commands share, each defined once, and the argparse types.

`--modes`, `--specs`, `--shard`, `--jobs/-j`, `-k`, `-m` and `--out` mean the same in every command that takes
them, so each is added here (`add_modes(parser)`, ...) with its one help text; a command adds only
what is its own (the default of `--jobs`, what `--out` holds). The pytest plugin adds `--specs`
through the same function (`add_specs(group.addoption)`, `add_shard`). Reading `--modes` is `mode.read_modes`.
The argparse types refuse a bad value as one line naming the option (exit 2, nothing started).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jax_conformance.mode import MODE_NAMES, MODES_OPTION, UPCOMING
from jax_conformance.releases import parse_versions
from jax_conformance.shard import shard_arg
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

# `parser.add_argument`, or a pytest option group's `addoption`: both take argparse's arguments.
AddOption = Callable[..., object]

SPECS_HELP = "spec directories (default: specs/)"


# ---------------------------------------------------------------- argparse types


def positive_float(text: str) -> float:
    """An argparse type: a number above 0 (a time limit: 0 or less would make every case time out)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0") from None
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 or more") from None
    return value


def parse_size(text: str) -> int:
    """`20G`, `500M`, `0` (no budget) -> bytes."""
    text = text.strip().upper().removesuffix("B")
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (e.g. 20G, 500M, 0 for no budget)") from None


def versions_arg(text: str) -> list[str]:
    """An argparse type: JAX releases, `0.4.30,0.6.2` (`releases.parse_versions`)."""
    try:
        return parse_versions(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def size_arg(text: str) -> int:
    """An argparse type: a size in bytes, `20G`, `500M`, 0 for none (`parse_size`)."""
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# ---------------------------------------------------------------- shared options


def add_modes(parser: argparse.ArgumentParser, *, upcoming: bool = True, note: str = "") -> None:
    """`--modes A,B --modes C`, read with `mode.read_modes` (which refuses `+upcoming` where the
    command cannot expand it: pass the same `upcoming`); `note` adds what the command does with them."""
    parser.add_argument(
        MODES_OPTION,
        action="append",
        metavar="MODES",
        help=f"modes, comma-separated: {MODE_NAMES.replace(' ', '')} (default: all four); each may "
        "set JAX flags, e.g. off-warn+jax_custom_vjp3"
        + (
            f"; {UPCOMING} adds the upcoming defaults on the first mode: their upgrade flags "
            "together, and each alone"
            if upcoming
            else ""
        )
        + (f" ({note})" if note else ""),
    )


def add_specs(add: AddOption, help: str = SPECS_HELP) -> None:
    """`--specs DIR` (repeatable); `add` is `parser.add_argument` or a pytest group's `addoption`."""
    add("--specs", action="append", metavar="DIR", help=help)


def add_shard(add: AddOption, what: str = "") -> None:
    """`--shard I/N` (`args.shard`, a `shard.Shard` or None); `add` as for `add_specs`; `what` says
    what is split, where not the cases."""
    add(
        "--shard",
        type=shard_arg,
        default=None,
        metavar="I/N",
        help=what
        or "run only shard I of N: the cases whose id hashes to it, the same on every machine "
        "(`jax-conformance merge` joins the N results)",
    )


def add_jobs(parser: argparse.ArgumentParser, *, default: int, what: str, shown: str) -> None:
    """`--jobs N` / `-j N`: how many `what` run at once (1 or more); `shown` is the default as said."""
    parser.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        default=default,
        metavar="N",
        help=f"{what} at once (default: {shown})",
    )


def add_keyword(parser: argparse.ArgumentParser) -> None:
    """`-k EXPR`: the cases a pytest -k expression selects (`args.keyword`)."""
    parser.add_argument(
        "-k", dest="keyword", metavar="EXPR", help="only cases matching this pytest -k expression"
    )


def add_markexpr(parser: argparse.ArgumentParser) -> None:
    """`-m TAGS`: the cases whose tags a pytest -m expression selects (`args.markexpr`)."""
    parser.add_argument(
        "-m",
        dest="markexpr",
        metavar="TAGS",
        help="only cases whose tags match this pytest -m expression",
    )


def add_out(parser: argparse.ArgumentParser, help: str, default: Path | None = None) -> None:
    """`--out PATH`: where the command writes (`help` says what, and the default)."""
    parser.add_argument("--out", type=Path, default=default, help=help)


def add_engine(parser: argparse.ArgumentParser) -> None:
    """`--engine local|ray` and `--address`: where the mode processes run (`launch.service.engine`)."""
    parser.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="where mode processes run: local (a process each on this machine, the default) or ray "
        "(each an actor on a Ray cluster; needs the [ray] extra)",
    )
    parser.add_argument(
        "--address",
        metavar="HOST:PORT",
        help="with --engine ray: the cluster to use (default: start a local one on this machine)",
    )


# ---------------------------------------------------------------- --jax: the JAX build to judge


@dataclass(frozen=True)
class JaxBuild:
    """What `--jax` asked for: `kind` is requirement (a pip requirement on jax), wheel (a .whl
    file), checkout (a JAX source directory: it has jax/version.py) or env (an existing
    environment: a directory with bin/python); `text` is the requirement or the resolved path."""

    kind: str
    text: str

    @property
    def path(self) -> Path:
        return Path(self.text)


def parse_jax(text: str) -> JaxBuild:
    """Classify a `--jax` value, refusing (ValueError, one line) what cannot be any JAX build:
    a missing path, a directory that is neither an environment nor a checkout, a requirement
    that does not parse or is not on jax."""
    path = Path(text).expanduser()
    if text.endswith(".whl") or os.sep in text or text.startswith(".") or path.exists():
        return _jax_path(text, path)
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        first = str(exc).splitlines()[0]
        raise ValueError(
            f"--jax {text}: not a requirement, a wheel or a directory ({first})"
        ) from None
    if canonicalize_name(req.name) != "jax":
        raise ValueError(
            f"--jax {text}: a requirement on jax, e.g. 'jax[cpu]==0.10.1', not on {req.name}"
        )
    return JaxBuild("requirement", text.strip())


def _jax_path(text: str, path: Path) -> JaxBuild:
    """A wheel, an environment or a checkout, by what the path holds."""
    if not path.exists():
        raise ValueError(f"--jax {text}: no such file or directory")
    resolved = str(path.resolve())
    if path.is_file():
        if not path.name.startswith("jax-") or path.suffix != ".whl":
            raise ValueError(f"--jax {text}: not a jax wheel (jax-VERSION-...whl)")
        return JaxBuild("wheel", resolved)
    if (path / "bin" / "python").exists() or (path / "pyvenv.cfg").is_file():
        return JaxBuild("env", resolved)
    if (path / "jax" / "version.py").is_file():
        return JaxBuild("checkout", resolved)
    raise ValueError(
        f"--jax {text}: neither an environment (no bin/python) nor a JAX source checkout "
        "(no jax/version.py)"
    )


def jax_arg(text: str) -> JaxBuild:
    """An argparse type: the `--jax` value (`parse_jax`)."""
    try:
        return parse_jax(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--jax ")) from None


def add_jax(parser: argparse.ArgumentParser, *, note: str) -> None:
    """`--jax REQUIREMENT|WHEEL|PATH`: the JAX build to judge, built once into a cached
    environment (compat.builds); `note` says what the command does with it."""
    parser.add_argument(
        "--jax",
        type=jax_arg,
        action="append",
        default=[],
        metavar="REQUIREMENT|WHEEL|PATH",
        help="the JAX to judge: a pip requirement (jax[cpu]==0.10.1, jax==0.10.3rc1), a wheel "
        "file, a source checkout or an existing environment; built once and cached under the "
        f"compat cache directory, and named by the jax.__version__ it has ({note})",
    )
