"""Spec files' YAML: safe, single-document, with the line of every mapping, key, value and item.

One construction: `_construct` walks the composed node tree once and builds MarkedMap and
MarkedList itself (plain YAML is all a spec is); only scalars of other tags (timestamps, say)
and tagged collections are built by PyYAML's SafeConstructor, which refuses every tag that
would build a Python object. Aliases are allowed, but a document that expands past
MAX_EXPANDED_NODES (an "alias bomb") or refers to itself is refused before it is used.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

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


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):
    """SafeLoader (libyaml when available): composes the node tree and lends its scalar constructors.

    It builds no mappings or sequences for a spec itself: `_construct` does.
    """

    # Plain scalars' resolved tags by text: the same few thousand keys and words recur in every
    # spec, and resolving one runs the implicit resolvers' regexes in Python.
    _resolved: ClassVar[dict[str, str]] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0] and not self.yaml_path_resolvers:
            tag = self._resolved.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= 80:
                    if len(self._resolved) >= 50_000:
                        self._resolved.clear()
                    self._resolved[value] = tag
            return tag
        return super().resolve(kind, value, implicit)


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
        raise SpecError(path, node.start_mark.line + 1, "YAML-TOO-LARGE", "the document refers to itself through an alias") from None
    if size > MAX_EXPANDED_NODES:
        raise SpecError(
            path, node.start_mark.line + 1, "YAML-TOO-LARGE",
            f"with its aliases expanded the document has {size:,} nodes, over the {MAX_EXPANDED_NODES:,} limit",
        )


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
# Keys that only SafeConstructor.flatten_mapping gives a meaning to: `<<` merges, `=` a value key.
_MERGE_KEYS = (_TAG + "merge", _TAG + "value")
# Scalar tags built without PyYAML's per-node dispatch, by the SafeConstructor method that builds them.
_SCALARS = {_TAG + "int": "construct_yaml_int", _TAG + "float": "construct_yaml_float",
            _TAG + "bool": "construct_yaml_bool", _TAG + "null": "construct_yaml_null"}


class _Merge(Exception):
    """The document has a merge key: walk it again with mappings flattened (after the size check)."""


class _SelfReference(Exception):
    """An alias inside the node it refers to."""


def _construct(loader: Any, root: yaml.Node, aliases: bool = True, merge: bool = False) -> tuple[Any, int]:
    """(document, its node count with aliases expanded, as `_expanded_size` counts them).

    Mappings and sequences tagged as such become MarkedMap and MarkedList; a duplicate key
    raises ConstructorError; every other tag goes to the loader's SafeConstructor, which builds
    it (dates, binary, sets) or raises ConstructorError (tags that would build Python objects).
    One walk, no generic per-node machinery: the bulk of a spec's load time is building ~30
    nodes a case. With `aliases=False` (a text without `&` has no anchor, so no alias) no node
    is looked up twice. Without `merge`, a merge key raises _Merge; with it, every mapping is
    flattened first, as SafeConstructor does (the node counts are then those after merging).
    """
    memo: dict[int, tuple[Any, int] | None] = {}
    scalar_ctor = {tag: getattr(loader, name) for tag, name in _SCALARS.items()}
    scalar_node, mapping_node, sequence_node = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode

    def scalar(node: yaml.Node) -> Any:
        tag = node.tag
        if tag == _STR:
            return node.value
        ctor = scalar_ctor.get(tag)
        if ctor is None:
            return loader.construct_object(node, deep=True)
        return ctor(node)

    def key_of(node: yaml.Node) -> tuple[str, int]:
        if type(node) is scalar_node:
            if node.tag in _MERGE_KEYS:
                raise _Merge
            value, n = scalar(node), 1
        else:
            value, n = build(node)  # `? [1]` is the key "[1]", as PyYAML builds it and str() spells it
        return (value if isinstance(value, str) else str(value)), n

    def build(node: yaml.Node) -> tuple[Any, int]:
        cls = type(node)
        if cls is scalar_node:
            return scalar(node), 1
        key = id(node)
        if aliases:
            if key in memo:
                hit = memo[key]
                if hit is None:
                    raise _SelfReference
                return hit
            memo[key] = None
        size = 1
        if cls is mapping_node and node.tag == _MAP:
            if merge:
                loader.flatten_mapping(node)
            result = MarkedMap()
            result.line = node.start_mark.line + 1
            key_lines: dict[str, int] = {}
            value_lines: dict[str, int] = {}
            result.key_lines = key_lines
            result.value_lines = value_lines
            for key_node, value_node in node.value:
                if key_node.tag == _STR and type(key_node) is scalar_node:
                    k, n = key_node.value, 1
                else:
                    k, n = key_of(key_node)
                if k in result:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {k!r} (first on line {key_lines[k]})", key_node.start_mark,
                    )
                line = value_node.start_mark.line + 1
                if type(value_node) is scalar_node:
                    result[k] = value_node.value if value_node.tag == _STR else scalar(value_node)
                    size += n + 1
                    if value_node.style in ("|", ">"):
                        line += 1  # a literal or folded block (`run: |`) starts on the line after its indicator
                else:
                    value, m = build(value_node)
                    result[k] = value
                    size += n + m
                key_lines[k] = key_node.start_mark.line + 1
                value_lines[k] = line
            hit = result, size
        elif cls is sequence_node and node.tag == _SEQ:
            items = []
            for child in node.value:
                if type(child) is scalar_node:
                    items.append(child.value if child.tag == _STR else scalar(child))
                    size += 1
                else:
                    value, n = build(child)
                    items.append(value)
                    size += n
            seq = MarkedList(items)
            seq.line = node.start_mark.line + 1
            seq.item_lines = [child.start_mark.line + 1 for child in node.value]
            hit = seq, size
        else:
            # A tagged collection (!!set, !!omap, or one SafeConstructor refuses).
            hit = loader.construct_object(node, deep=True), _expanded_size(node, {})
        if aliases:
            memo[key] = hit
        return hit

    return build(root)


def parse_yaml(text: str, path: Path) -> Any:
    """Parse with the safe loader; a syntax error, a Python-object tag or an alias bomb becomes a SpecError."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        aliases = "&" in text
        try:
            doc, size = _construct(loader, node, aliases)
        except _Merge:
            _check_size(node, path)  # measured as written, before merging rewrites the tree
            return _construct(loader, node, aliases, merge=True)[0]
        except (yaml.YAMLError, _SelfReference, RecursionError):
            _check_size(node, path)  # a document too large to use says so first, whatever else is wrong
            raise
        if size > MAX_EXPANDED_NODES:
            _check_size(node, path)
        return doc
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise SpecError(path, line, "YAML-SYNTAX", f"character {exc.character!r} is not allowed in YAML: {exc.reason}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or str(exc)
        if isinstance(exc, yaml.constructor.ConstructorError):
            if "duplicate key" in problem:
                raise SpecError(path, line, "YAML-DUPLICATE-KEY", problem) from None
            raise SpecError(
                path, line, "YAML-UNSAFE-TAG",
                f"{problem}; spec files are plain YAML (no tags that build Python objects)",
            ) from None
        context = f" ({exc.context})" if exc.context else ""
        raise SpecError(path, line, "YAML-SYNTAX", f"{problem}{context}") from None
    except yaml.YAMLError as exc:
        raise SpecError(path, 1, "YAML-SYNTAX", str(exc)) from None
    finally:
        loader.dispose()


def line_of(doc: Any, path: Iterable[Any]) -> int:
    """The line of the deepest marked node along a JSON path into the parsed document."""
    node, line = doc, getattr(doc, "line", 1)
    for key in path:
        if isinstance(node, MarkedMap) and key in node:
            line = node.key_lines[key]
        elif isinstance(node, MarkedList) and isinstance(key, int) and key < len(node):
            line = node.item_lines[key]
        else:
            break
        node = node[key]
    return line
