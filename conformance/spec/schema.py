"""The spec schema (specs/schema.json) and the two validators that apply it.

fastjsonschema's compiled check, when installed and able to take the schema (translated to
draft 7), decides quickly that a document is valid; jsonschema judges the rest and words each
error, at the line of the node it is about.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from jax_conformance import SPECS_DIR
from jax_conformance.errors import SpecError
from jax_conformance.records import JSON
from jax_conformance.spec.yaml import MarkedMap, line_of

if TYPE_CHECKING:
    import jsonschema

SCHEMA_PATH = SPECS_DIR / "schema.json"


@functools.cache
def schema() -> dict[str, JSON]:
    """specs/schema.json, read once per process."""
    with SCHEMA_PATH.open(encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError(f"{SCHEMA_PATH}: a schema is a JSON object")
    return data


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema  # ~0.1 s to import; a process that loads only valid specs never needs it

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema())


def _schema_message(error: jsonschema.ValidationError) -> str:
    where = (
        "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        or "top level"
    )
    if error.validator == "additionalProperties":
        allowed = sorted(
            error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        )
        extra = _unknown_keys(error)
        given = set(error.instance) if isinstance(error.instance, dict) else set()
        meant = [_meant(k, [a for a in allowed if a not in given]) for k in extra]
        hint = ", ".join(f"{m!r}" for m in meant if m)
        hint = f"did you mean {hint}?; " if hint else ""
        return f"{where}: unknown key {', '.join(map(repr, extra))} ({hint}allowed: {', '.join(allowed)})"
    return f"{where}: {_shown(error).message}"


def _shown(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """The error whose words are shown: of a oneOf/anyOf, its best-matching branch's."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        import jsonschema

        return jsonschema.exceptions.best_match(error.context)
    return error


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys an `additionalProperties` error is about, sorted."""
    allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    return sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []


def _meant(key: str, candidates: list[str]) -> str | None:
    """The candidate a misspelt key most likely means (difflib's closest, if close), else None."""
    import difflib

    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.75)
    return close[0] if close else None


def _explained_by_a_typo(
    error: jsonschema.ValidationError, errors: list[jsonschema.ValidationError]
) -> bool:
    """Whether a missing required key is one an unknown key of the same mapping misspells: one
    problem (`expct:`), told once, by the unknown key at its own line."""
    shown = _shown(error)
    if shown.validator != "required" or not isinstance(shown.instance, dict):
        return False
    required = shown.validator_value if isinstance(shown.validator_value, list) else []
    missing = [k for k in required if k not in shown.instance]
    return any(
        _meant(key, missing)
        for other in errors
        if other.validator == "additionalProperties" and other.instance is shown.instance
        for key in _unknown_keys(other)
    )


# Keywords of the schema's draft (2020-12) that draft 7, the newest fastjsonschema compiles, spells
# and means the same way, or (dependentRequired) spells differently. A schema that uses any other
# keyword gets no compiled fast path: an unknown keyword would be ignored, passing what it forbids.
_SAME_IN_DRAFT7 = frozenset(
    (
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "type",
        "enum",
        "const",
        "required",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
    )
)
_SUBSCHEMA = frozenset(
    ("items", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else")
)
_SUBSCHEMA_MAPS = frozenset(("$defs", "properties", "patternProperties"))
_SUBSCHEMA_LISTS = frozenset(("allOf", "anyOf", "oneOf"))


def _draft7(node: JSON, root: JSON = None) -> JSON:
    """The schema in draft 7's words, meaning the same; ValueError for a keyword draft 7 lacks.

    One rewording for speed: a oneOf whose branches admit disjoint JSON types (a string or an
    array of them, say) becomes the anyOf it is equivalent to, which stops at the first branch
    that holds instead of trying (and raising in) all the others.
    """
    root = node if root is None else root
    if isinstance(node, bool):
        return node
    if not isinstance(node, dict):
        raise ValueError(f"not a schema: {node!r}")
    unknown = set(node) - _SAME_IN_DRAFT7
    if unknown:
        raise ValueError(f"no draft-7 spelling for {sorted(unknown)}")
    out: dict[str, JSON] = {}
    for key, value in node.items():
        if key in ("$schema", "$id"):
            continue  # the draft is set at the top; refs are all local ("#/$defs/...")
        if key in _SUBSCHEMA:
            value = (
                [_draft7(v, root) for v in value]
                if key == "items" and isinstance(value, list)
                else _draft7(value, root)
            )
        elif key in _SUBSCHEMA_MAPS:
            if not isinstance(value, dict):
                raise ValueError(f"not a map of schemas: {key} {value!r}")
            value = {k: _draft7(v, root) for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS:
            if not isinstance(value, list):
                raise ValueError(f"not a list of schemas: {key} {value!r}")
            if key == "oneOf" and "anyOf" not in node and _disjoint(value, root):
                key = "anyOf"
            value = [_draft7(v, root) for v in value]
        elif key == "$ref" and not str(value).startswith("#"):
            raise ValueError(f"not a local reference: {value!r}")
        elif key in ("enum", "const") and any(
            not isinstance(v, str)
            for v in (value if key == "enum" and isinstance(value, list) else [value])
        ):
            # Python's == takes True for 1 (and 1.0); jsonschema's enum and const do not.
            raise ValueError(f"a non-string {key}: {value!r}")
        elif key == "pattern" and "$" in str(value)[:-1]:
            # fastjsonschema reads every `$` of a pattern as \Z: stricter at the end (a miss only
            # costs the jsonschema check), but looser in a lookahead or a set.
            raise ValueError(f"a `$` inside pattern {value!r}")
        out["dependencies" if key == "dependentRequired" else key] = value
    if "$ref" in out and len(out) > 1:
        # Draft 7 ignores the siblings of $ref; 2020-12 applies them: allOf keeps them applied.
        all_of = out.get("allOf", [])
        out["allOf"] = [
            *(all_of if isinstance(all_of, list) else [all_of]),
            {"$ref": out.pop("$ref")},
        ]
    return out


def _json_types(node: JSON, root: JSON, depth: int = 0) -> set[str] | None:
    """The JSON types a value valid against `node` can have ("integer" also counts as "number"), or None: any."""
    if not isinstance(node, dict) or depth > 20:
        return None
    found: set[str] | None = None
    if "type" in node:
        named = node["type"]
        found = {str(t) for t in (named if isinstance(named, list) else [named])}
    elif "const" in node:
        found = {_json_type(node["const"])}
    elif "enum" in node and isinstance(node["enum"], list):
        found = {_json_type(v) for v in node["enum"]}
    if "$ref" in node:
        target: JSON = root
        for part in str(node["$ref"]).lstrip("#").strip("/").split("/"):
            target = target.get(part) if isinstance(target, dict) and part else target
        ref = _json_types(target, root, depth + 1) if target is not root else None
        found = ref if found is None else (found if ref is None else found & ref)
    if found is not None and found & {"integer", "number"}:
        found |= {"integer", "number"}
    return found


def _json_type(value: JSON) -> str:
    if value is None:
        return "null"
    for cls, name in (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (list, "array"),
        (dict, "object"),
    ):
        if isinstance(value, cls):
            return name
    return "?"


def _disjoint(branches: JSON, root: JSON) -> bool:
    """Whether no value can be valid against two of these schemas (told by their types alone)."""
    if not isinstance(branches, list):
        return False
    seen: set[str] = set()
    for branch in branches:
        types = _json_types(branch, root)
        if types is None or types & seen:
            return False
        seen |= types
    return True


@functools.cache
def fast_validator() -> Callable[[object], object] | None:
    """fastjsonschema's compiled check of the schema, or None (not installed, or a schema it can't take)."""
    try:
        import fastjsonschema
    except ImportError:
        return None
    try:
        translated = _draft7(schema())
    except ValueError:
        return None
    if not isinstance(translated, dict):
        return None
    definition = {**translated, "$schema": "http://json-schema.org/draft-07/schema#"}
    # use_default=False: never write a schema's defaults into the document; use_formats=False:
    # jsonschema does not assert `format` either. (detailed_exceptions=False would be faster, but
    # 2.22 fails to compile a `const` with it.)
    try:
        return fastjsonschema.compile(definition, use_default=False, use_formats=False)
    except Exception:
        return None


def schema_errors(doc: MarkedMap, path: Path) -> list[SpecError]:
    """Every way the parsed document breaks the schema, as SCHEMA errors at their lines (none: valid)."""
    fast = fast_validator()
    if fast is not None:
        try:
            fast(doc)
        except Exception:
            pass  # invalid, or something it cannot judge: jsonschema decides, and words the errors
        else:
            return []
    found = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    errors = [
        SpecError(path, _error_line(doc, error), "SCHEMA", _schema_message(error))
        for error in found
        if not _explained_by_a_typo(error, found)
    ]
    return sorted(errors, key=lambda e: e.line)


def _error_line(doc: MarkedMap, error: jsonschema.ValidationError) -> int:
    """The line an error is about: an unknown key's own line (a typo is found where it is typed),
    else the line of the node that breaks the schema."""
    node = error.instance
    if error.validator == "additionalProperties" and isinstance(node, MarkedMap):
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        lines = [node.key_lines[k] for k in node if k not in allowed and k in node.key_lines]
        if lines:
            return min(lines)
    return line_of(doc, error.absolute_path)


def modeline(spec_file: Path | None = None) -> str:
    """The line that points an editor (yaml-language-server: VS Code's YAML extension, Neovim,
    Helix) at this schema from a spec file anywhere, e.g. a library's own spec directory."""
    target = str(SCHEMA_PATH)
    if spec_file is not None:
        import os

        target = os.path.relpath(SCHEMA_PATH, Path(spec_file).resolve().parent)
    return f"# yaml-language-server: $schema={target}"


if __name__ == "__main__":  # python -m jax_conformance.spec.schema: where the installed schema is
    print(SCHEMA_PATH)
    print(modeline())
