"""The base of every spec lint rule, and the readers of a case's marked YAML that rules share.

A rule is one small class with a stable id (`Rule.id`), a one-line `doc`, and a `check` that
yields SpecErrors at the spec line they are about. The rules themselves live in
`spec.rules` (simple ones and the registry), `spec.when_rules` and `spec.code_rules`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from jax_conformance.errors import SpecError
from jax_conformance.spec.model import Case, Spec


class Rule:
    """A check over one spec; `check` yields the SpecErrors it finds."""

    id: ClassVar[str]
    doc: ClassVar[str]

    def check(self, spec: Spec) -> Iterator[SpecError]:
        for case in spec.cases:
            yield from self.check_case(spec, case)

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        return iter(())

    def error(self, spec: Spec, line: int, message: str) -> SpecError:
        return SpecError(spec.path, line, self.id, message)


def list_items(node: object, key: str) -> list[tuple[int, object]]:
    """(line, item) for a list value (a lone string counts as a list of one), with each item's own line."""
    if not isinstance(node, dict) or key not in node:
        return []
    value, line = node[key], value_line(node, key, getattr(node, "line", 1))
    if isinstance(value, list):
        lines = getattr(value, "item_lines", [line] * len(value))
        return list(zip(lines, value, strict=False))
    return [(line, value)]


def raw_block(case: Case, index: int) -> Mapping[str, object]:
    """The marked YAML mapping of the index-th expect block (for exact lines)."""
    blocks = case.raw.get("expect") if isinstance(case.raw, dict) else None
    block = blocks[index] if isinstance(blocks, list) and index < len(blocks) else {}
    return block if isinstance(block, Mapping) else {}


def value_line(node: object, key: str, default: int) -> int:
    """The line of `key`'s value in a marked mapping, else `default`."""
    lines = getattr(node, "value_lines", None)
    return lines.get(key, default) if isinstance(lines, dict) else default
