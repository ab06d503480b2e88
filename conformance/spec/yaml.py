"""Spec files' YAML: safe, single-document, with the line of every mapping, key, value and item.

PyYAML's SafeLoader (libyaml when available) composes and builds the document; two
constructors of its own make every mapping a MarkedMap and every sequence a MarkedList, which
remember their lines, and refuse a duplicate key. Every other tag is SafeConstructor's, which
refuses each tag that would build a Python object. Aliases are allowed, but a document that
expands past MAX_EXPANDED_NODES (an "alias bomb") or refers to itself is refused before it is
built.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from jax_conformance.errors import SpecError


class MarkedMap(dict[str, Any]):
    """A YAML mapping that remembers the line of itself, of each key and of each value."""

    line: int = 0
    key_lines: dict[str, int]
    value_lines: dict[str, int]


class MarkedList(list[Any]):
    """A YAML sequence that remembers the line of itself and of each item."""

    line: int = 0
    item_lines: list[int]


# libyaml's loader when PyYAML was built with it (mypy reads the first branch: the stubs have it).
if TYPE_CHECKING or hasattr(yaml, "CSafeLoader"):

    class _Loader(yaml.CSafeLoader):
        """SafeLoader whose mappings and sequences are MarkedMap and MarkedList (constructors below)."""

else:

    class _Loader(yaml.SafeLoader):  # the same, in pure Python
        """SafeLoader whose mappings and sequences are MarkedMap and MarkedList (constructors below)."""


def _marked_map(loader: _Loader, node: yaml.MappingNode) -> Iterator[MarkedMap]:
    """A mapping with its lines; a key that is not a string is spelled as str() spells it, a
    duplicate key (merged ones included) is a ConstructorError. Built in two steps, as
    SafeConstructor builds mappings, so that an alias to it can be made before it is filled."""
    result = MarkedMap()
    result.line = node.start_mark.line + 1
    result.key_lines, result.value_lines = {}, {}
    yield result
    loader.flatten_mapping(node)  # `<<` merges, as SafeConstructor.construct_mapping does
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        key = key if isinstance(key, str) else str(key)  # `? [1]` is the key "[1]"
        if key in result:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first on line {result.key_lines[key]})",
                key_node.start_mark,
            )
        result[key] = loader.construct_object(value_node)
        block = isinstance(value_node, yaml.ScalarNode) and value_node.style in ("|", ">")
        result.key_lines[key] = key_node.start_mark.line + 1
        # A literal or folded block (`run: |`) starts on the line after its indicator.
        result.value_lines[key] = value_node.start_mark.line + 1 + block


def _marked_list(loader: _Loader, node: yaml.SequenceNode) -> Iterator[MarkedList]:
    """A sequence with its lines (an alias item has the line of the node it names)."""
    result = MarkedList()
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield result
    result.extend(loader.construct_object(child) for child in node.value)


_Loader.add_constructor("tag:yaml.org,2002:map", _marked_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _marked_list)

# A spec with aliases expanded stays far below this; an "alias bomb" of a few hundred bytes does not.
MAX_EXPANDED_NODES = 200_000


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """Nodes in the document once every alias is expanded (memoized, so bombs are cheap to measure)."""
    key = id(node)
    if key in sizes:
        if sizes[key] < 0:
            raise ValueError("recursive alias")
        return sizes[key]
    sizes[key] = -1
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    sizes[key] = 1 + sum(_expanded_size(child, sizes) for child in children)
    return sizes[key]


def _check_size(node: yaml.Node, path: Path) -> None:
    """YAML-TOO-LARGE if the document, aliases expanded, is over the limit or contains itself."""
    try:
        size = _expanded_size(node, {})
    except (ValueError, RecursionError):
        raise SpecError(
            path,
            node.start_mark.line + 1,
            "YAML-TOO-LARGE",
            "the document refers to itself through an alias",
        ) from None
    if size > MAX_EXPANDED_NODES:
        raise SpecError(
            path,
            node.start_mark.line + 1,
            "YAML-TOO-LARGE",
            f"with its aliases expanded the document has {size:,} nodes, over the {MAX_EXPANDED_NODES:,} limit",
        )


def _hint(problem: str) -> str:
    """What to do about a YAML error a spec's Python often causes: `run: jax.grad(lambda x: x)`
    (a `: ` inside a plain value starts a mapping)."""
    if "mapping values are not allowed" in problem:
        return (
            "; a value holding ': ' (a lambda, a dict) must be a block: write `run: |` (or `setup: |`) and the "
            "code indented on the lines below"
        )
    return ""


def parse_yaml(text: str, path: Path) -> object:
    """Parse with the safe loader; a syntax error, a Python-object tag or an alias bomb becomes a SpecError."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if (
            "&" in text
        ):  # without an anchor there is no alias: the document is no larger than its text
            _check_size(
                node, path
            )  # before anything is built, so a bomb says so whatever else is wrong
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise SpecError(
            path,
            line,
            "YAML-SYNTAX",
            f"character {exc.character!r} is not allowed in YAML: {exc.reason}",
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or str(exc)
        if isinstance(exc, yaml.constructor.ConstructorError):
            if "duplicate key" in problem:
                raise SpecError(path, line, "YAML-DUPLICATE-KEY", problem) from None
            raise SpecError(
                path,
                line,
                "YAML-UNSAFE-TAG",
                f"{problem}; spec files are plain YAML (no tags that build Python objects)",
            ) from None
        context = f" ({exc.context})" if exc.context else ""
        raise SpecError(path, line, "YAML-SYNTAX", f"{problem}{context}{_hint(problem)}") from None
    except yaml.YAMLError as exc:
        raise SpecError(path, 1, "YAML-SYNTAX", str(exc)) from None
    finally:
        loader.dispose()


def line_of(doc: object, path: Iterable[str | int]) -> int:
    """The line of the deepest marked node along a JSON path into the parsed document."""
    node, line = doc, getattr(doc, "line", 1)
    for key in path:
        if isinstance(node, MarkedMap) and isinstance(key, str) and key in node:
            line = node.key_lines[key]
            node = node[key]
        elif isinstance(node, MarkedList) and isinstance(key, int) and key < len(node):
            line = node.item_lines[key]
            node = node[key]
        else:
            break
    return line
