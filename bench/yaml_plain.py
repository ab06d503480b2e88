"""Candidate: spec YAML through PyYAML's own construction (a SafeLoader subclass), for bench/pieces.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from jax_conformance.errors import SpecError
from jax_conformance.spec.yaml import MarkedList, MarkedMap, _check_size

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):
    """SafeLoader whose mappings and sequences remember their lines, and whose mappings refuse duplicate keys."""


def _marked_map(loader: Any, node: yaml.MappingNode) -> Any:
    result = MarkedMap()
    result.line = node.start_mark.line + 1
    result.key_lines, result.value_lines = {}, {}
    yield result
    loader.flatten_mapping(node)  # `<<` merges, as SafeConstructor.construct_mapping does
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        key = key if isinstance(key, str) else str(key)
        if key in result:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {result.key_lines[key]})", key_node.start_mark)
        result[key] = loader.construct_object(value_node)
        block = isinstance(value_node, yaml.ScalarNode) and value_node.style in ("|", ">")
        result.key_lines[key] = key_node.start_mark.line + 1
        result.value_lines[key] = value_node.start_mark.line + 1 + block  # a `|` block starts on the next line


def _marked_list(loader: Any, node: yaml.SequenceNode) -> Any:
    result = MarkedList()
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield result
    result.extend(loader.construct_object(child) for child in node.value)


_Loader.add_constructor("tag:yaml.org,2002:map", _marked_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _marked_list)


def parse_yaml(text: str, path: Path) -> Any:
    """As jax_conformance.spec.yaml.parse_yaml."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:  # without an anchor there is no alias: the document is no larger than its text
            _check_size(node, path)
        return loader.construct_document(node)
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
