"""`--shard I/N`: one of N parts of a run, the same cases on every machine (docs/RUNNER.md, "Shards").

A case belongs to shard `1 + h % N`, where `h` is the first 8 bytes of the SHA-256 of its id: not
Python's `hash()`, which is salted per process, so every machine, process and Python puts a case in
the same shard. The N shards of a run are disjoint and together select every case the run would;
`jax-conformance merge` (or `report`) over the N results equals the unsharded run, cell for cell.
`compat --shard I/N` splits by release instead (`Shard.releases`).
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from jax_conformance.releases import version_key


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1 to `count`) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, case_id: str) -> bool:
        """Whether this shard runs the case."""
        return shard_of(case_id, self.count) == self.index

    def to_json(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}

    def releases(self, versions: Sequence[str]) -> list[str]:
        """`compat --shard`: this shard's releases, every Nth of the releases in release order from
        the Ith (the same list splits the same way on every machine, evenly)."""
        ordered = sorted(dict.fromkeys(versions), key=version_key)
        return ordered[self.index - 1 :: self.count]


def shard_of(case_id: str, count: int) -> int:
    """The shard (1 to `count`) a case id belongs to, the same on every machine."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str) -> Shard:
    """`2/3` as a Shard; anything else (`0/3`, `4/3`, `a/b`) is a ValueError saying what is accepted."""
    index, slash, count = text.partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = None
    if not slash or shard is None or not 1 <= shard.index <= shard.count:
        raise ValueError(f"{text!r}: give I/N with 1 <= I <= N, e.g. 1/3")
    return shard


def shard_arg(text: str) -> Shard:
    """An argparse type (the command line's and the pytest plugin's `--shard`)."""
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
