"""Which JAX releases exist on the package index, for `compat --releases all` or a range: asked of pip.

No hand-kept list: `python -m pip index versions jax`, run by each interpreter the releases may
need (3.11, and 3.12/3.13 for the releases that require them), lists the releases that interpreter
can install (pip applies Requires-Python and the wheel tags). A release goes to the oldest
interpreter that lists it. Whether its jaxlib wheel installs is the environment build's question:
a release that does not is recorded as unavailable with pip's (or uv's) reason.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

OLDEST = (
    "0.4.30"  # the first release the suite targets; `all` starts here unless a range says otherwise
)
PACKAGE = "jax"


@dataclass(frozen=True)
class Release:
    version: str
    python: str  # the interpreter that lists it (and builds its environment)
    minor: str  # its Python minor version, e.g. "3.11"


def parse_range(text: str) -> tuple[Version | None, Version | None]:
    """`all` -> (0.4.30, None); `0.4.30..0.5.3` -> both ends; `0.10.2..` -> from 0.10.2 on; `..0.5.3`."""
    text = text.strip()
    if text == "all":
        return Version(OLDEST), None
    lo, sep, hi = text.partition("..")
    if not sep:
        raise ValueError(
            f"{text!r}: use all, or a range like 0.4.30..0.5.3 (either end may be left out)"
        )
    try:
        return (Version(lo) if lo.strip() else Version(OLDEST)), (
            Version(hi) if hi.strip() else None
        )
    except InvalidVersion:
        raise ValueError(
            f"{text!r}: the ends of a range are release numbers, e.g. 0.4.30..0.5.3"
        ) from None


def index_versions(python: str, package: str = PACKAGE, timeout: float = 180.0) -> list[str]:
    """The releases pip, run by `python`, finds for `package` (newest first, as pip lists them)."""
    out = subprocess.run(
        [python, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    match = re.search(r"^Available versions:\s*(.+)$", out.stdout, re.MULTILINE)
    if not match:
        raise RuntimeError(
            f"pip index versions {package} ({python}) listed nothing: "
            f"{(out.stderr.strip().splitlines() or ['no output'])[-1][:300]}"
        )
    return [v.strip() for v in match.group(1).split(",") if v.strip()]


def discover(
    interpreters: Mapping[str, str],
    lo: Version | None,
    hi: Version | None,
    lister: Callable[[str], Sequence[str]] = index_versions,
) -> tuple[list[Release], dict[str, str]]:
    """Every release in [lo, hi] some interpreter's pip lists, oldest first, each with the oldest
    interpreter that lists it; and per interpreter that could not be asked, why."""
    found: dict[Version, Release] = {}
    problems: dict[str, str] = {}
    for minor in sorted(interpreters, key=Version):
        python = interpreters[minor]
        try:
            listed = lister(python)
        except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
            problems[minor] = str(exc)
            continue
        for text in listed:
            try:
                v = Version(text)
            except InvalidVersion:
                continue
            if v.is_prerelease or (lo is not None and v < lo) or (hi is not None and v > hi):
                continue
            found.setdefault(v, Release(text, python, minor))
    return [found[v] for v in sorted(found)], problems
