"""`--shard I/N` in the mode process: the items of other shards are deselected (`shard.Shard`).

A plugin object of its own, registered only when `--shard` is given; it runs in every process that
collects (a serial run, each xdist worker), and each one keeps the same items, as the partition is
by case id alone.
"""

from __future__ import annotations

import pytest
from jax_conformance.plugin.collect import SpecItem
from jax_conformance.shard import Shard


class ShardSelection:
    """Keeps the items whose case is in this shard (an item that is no case stays: pytest's own)."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def pytest_collection_modifyitems(
        self, items: list[pytest.Item], config: pytest.Config
    ) -> None:
        keep = [i for i in items if not isinstance(i, SpecItem) or self.shard.holds(i.case.id)]
        if len(keep) < len(items):
            kept = set(map(id, keep))
            config.hook.pytest_deselected(items=[i for i in items if id(i) not in kept])
            items[:] = keep
