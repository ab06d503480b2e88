"""Spec files to `Spec` objects: safe YAML with a line on every node, the JSON Schema, then the model.

Errors are `SpecError`s that read `path:line: RULE-ID message`; the lint rules that need the
whole model (regexes, versions, code, `when` blocks) live in `jax_conformance.spec.rules`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import importlib
import json
import os
import pickle
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml
from jax_conformance import CHECKOUT, SPECS_DIR
from jax_conformance.errors import SpecError, SpecFileErrors
from jax_conformance.spec.model import Case, Code, Documented, Expectation, Spec, When
from packaging.specifiers import InvalidSpecifier, SpecifierSet

if TYPE_CHECKING:
    import jsonschema

SCHEMA_PATH = SPECS_DIR / "schema.json"
# Refuse what cannot be a spec before parsing it: a spec file is a few hundred lines.
MAX_SPEC_BYTES = 2_000_000


# ---------------------------------------------------------------- YAML with line marks


class MarkedMap(dict[str, Any]):
    """A YAML mapping that remembers the line of itself, of each key and of each value."""

    line: int = 0
    key_lines: dict[str, int]
    value_lines: dict[str, int]


class MarkedList(list[Any]):
    line: int = 0
    item_lines: list[int]


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _MarkedLoader(_BaseLoader):
    """SafeLoader (libyaml when available) that builds MarkedMap/MarkedList and rejects duplicate keys."""

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


def _value_line(node: yaml.Node) -> int:
    line = int(node.start_mark.line) + 1
    # A literal or folded block (`run: |`) starts on the line after its indicator.
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        line += 1
    return line


def _construct_map(loader: Any, node: yaml.MappingNode) -> MarkedMap:
    loader.flatten_mapping(node)
    result = MarkedMap()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    result.value_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            key = str(key)
        if key in result:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {result.key_lines[key]})",
                key_node.start_mark,
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
        result.value_lines[key] = _value_line(value_node)
    return result


def _construct_seq(loader: Any, node: yaml.SequenceNode) -> MarkedList:
    result = MarkedList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


_MarkedLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_MarkedLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


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


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
# Scalar tags the fast construction builds, by the SafeConstructor method that builds them.
_SCALARS = {_TAG + "int": "construct_yaml_int", _TAG + "float": "construct_yaml_float",
            _TAG + "bool": "construct_yaml_bool", _TAG + "null": "construct_yaml_null"}


class _NotPlain(Exception):
    """A document the fast construction leaves to PyYAML's (other tags, merge keys, a duplicate key, recursion)."""


def _construct_plain(loader: Any, root: yaml.Node, aliases: bool = True) -> tuple[Any, int]:
    """(document, its node count with aliases expanded), as `construct_document` and `_expanded_size` give.

    For the plain YAML that spec files are: strings, numbers, booleans, nulls, mappings with
    scalar keys and sequences, aliases allowed. Anything else raises _NotPlain, and the caller
    takes PyYAML's way, which builds the same objects or words the error. One walk, no generic
    per-node machinery: the bulk of a spec's load time is building ~30 nodes a case. With
    `aliases=False` (a text without `&` has no anchor, so no alias) no node is looked up twice.
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
            raise _NotPlain(tag)
        return ctor(node)

    def build(node: yaml.Node) -> tuple[Any, int]:
        cls = type(node)
        if cls is scalar_node:
            return scalar(node), 1
        key = id(node)
        if aliases:
            if key in memo:
                hit = memo[key]
                if hit is None:
                    raise _NotPlain("recursive")
                return hit
            memo[key] = None
        size = 1
        if cls is mapping_node and node.tag == _MAP:
            result = MarkedMap()
            result.line = node.start_mark.line + 1
            key_lines: dict[str, int] = {}
            value_lines: dict[str, int] = {}
            result.key_lines = key_lines
            result.value_lines = value_lines
            for key_node, value_node in node.value:
                if type(key_node) is not scalar_node:
                    raise _NotPlain("key")
                k = key_node.value if key_node.tag == _STR else scalar(key_node)
                if not isinstance(k, str):
                    k = str(k)
                if k in result:
                    raise _NotPlain("duplicate key")
                line = value_node.start_mark.line + 1
                if type(value_node) is scalar_node:
                    result[k] = value_node.value if value_node.tag == _STR else scalar(value_node)
                    size += 2
                    if value_node.style in ("|", ">"):
                        line += 1
                else:
                    value, n = build(value_node)
                    result[k] = value
                    size += 1 + n
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
            raise _NotPlain(node.tag)
        if aliases:
            memo[key] = hit
        return hit

    return build(root)


def parse_yaml(text: str, path: Path) -> Any:
    """Parse with the safe loader; a syntax error or a Python-object tag becomes a SpecError."""
    loader = _MarkedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            doc, size = _construct_plain(loader, node, aliases="&" in text)
        except (_NotPlain, RecursionError):
            pass
        else:
            if size <= MAX_EXPANDED_NODES:
                return doc
        try:
            size = _expanded_size(node, {})
        except (ValueError, RecursionError):
            raise SpecError(path, node.start_mark.line + 1, "YAML-TOO-LARGE", "the document refers to itself through an alias") from None
        if size > MAX_EXPANDED_NODES:
            raise SpecError(
                path, node.start_mark.line + 1, "YAML-TOO-LARGE",
                f"with its aliases expanded the document has {size:,} nodes, over the {MAX_EXPANDED_NODES:,} limit",
            )
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


# ---------------------------------------------------------------- schema


@functools.cache
def schema() -> dict[str, Any]:
    with SCHEMA_PATH.open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    import jsonschema  # ~0.1 s to import; a process that loads only valid specs never needs it

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema())


def _schema_message(error: jsonschema.ValidationError) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "top level"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}) if isinstance(error.schema, dict) else {})
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        return f"{where}: unknown key {', '.join(map(repr, extra))} (allowed: {', '.join(allowed)})"
    if error.validator in ("oneOf", "anyOf") and error.context:
        import jsonschema

        best = jsonschema.exceptions.best_match(error.context)
        return f"{where}: {best.message}"
    return f"{where}: {error.message}"


# Keywords of the schema's draft (2020-12) that draft 7, the newest fastjsonschema compiles, spells
# and means the same way, or (dependentRequired) spells differently. A schema that uses any other
# keyword gets no compiled fast path: an unknown keyword would be ignored, passing what it forbids.
_SAME_IN_DRAFT7 = frozenset((
    "$schema", "$id", "$ref", "$defs", "$comment", "title", "description", "default", "examples",
    "type", "enum", "const", "required", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "minProperties", "maxProperties", "items", "minItems", "maxItems", "uniqueItems",
    "contains", "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "dependentRequired",
))
_SUBSCHEMA = frozenset(("items", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else"))
_SUBSCHEMA_MAPS = frozenset(("$defs", "properties", "patternProperties"))
_SUBSCHEMA_LISTS = frozenset(("allOf", "anyOf", "oneOf"))


def _draft7(node: Any, root: Any = None) -> Any:
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
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$schema", "$id"):
            continue  # the draft is set at the top; refs are all local ("#/$defs/...")
        if key in _SUBSCHEMA:
            value = [_draft7(v, root) for v in value] if key == "items" and isinstance(value, list) else _draft7(value, root)
        elif key in _SUBSCHEMA_MAPS:
            value = {k: _draft7(v, root) for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS:
            if key == "oneOf" and "anyOf" not in node and _disjoint(value, root):
                key = "anyOf"
            value = [_draft7(v, root) for v in value]
        elif key == "$ref" and not str(value).startswith("#"):
            raise ValueError(f"not a local reference: {value!r}")
        elif key in ("enum", "const") and any(not isinstance(v, str) for v in (value if key == "enum" else [value])):
            # Python's == takes True for 1 (and 1.0); jsonschema's enum and const do not.
            raise ValueError(f"a non-string {key}: {value!r}")
        elif key == "pattern" and "$" in str(value)[:-1]:
            # fastjsonschema reads every `$` of a pattern as \Z: stricter at the end (a miss only
            # costs the jsonschema check), but looser in a lookahead or a set.
            raise ValueError(f"a `$` inside pattern {value!r}")
        out["dependencies" if key == "dependentRequired" else key] = value
    if "$ref" in out and len(out) > 1:
        # Draft 7 ignores the siblings of $ref; 2020-12 applies them: allOf keeps them applied.
        out["allOf"] = [*out.get("allOf", []), {"$ref": out.pop("$ref")}]
    return out


def _json_types(node: Any, root: Any, depth: int = 0) -> set[str] | None:
    """The JSON types a value valid against `node` can have ("integer" also counts as "number"), or None: any."""
    if not isinstance(node, dict) or depth > 20:
        return None
    found: set[str] | None = None
    if "type" in node:
        found = set(node["type"] if isinstance(node["type"], list) else [node["type"]])
    elif "const" in node:
        found = {_json_type(node["const"])}
    elif "enum" in node and isinstance(node["enum"], list):
        found = {_json_type(v) for v in node["enum"]}
    if "$ref" in node:
        target: Any = root
        for part in str(node["$ref"]).lstrip("#").strip("/").split("/"):
            target = target.get(part) if isinstance(target, dict) and part else target
        ref = _json_types(target, root, depth + 1) if target is not root else None
        found = ref if found is None else (found if ref is None else found & ref)
    if found is not None and found & {"integer", "number"}:
        found |= {"integer", "number"}
    return found


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for cls, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, cls):
            return name
    return "?"


def _disjoint(branches: Any, root: Any) -> bool:
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
def _fast_validator() -> Callable[[Any], Any] | None:
    """fastjsonschema's compiled check of the schema, or None (not installed, or a schema it can't take)."""
    try:
        import fastjsonschema
    except ImportError:
        return None
    try:
        definition = {**_draft7(schema()), "$schema": "http://json-schema.org/draft-07/schema#"}
    except ValueError:
        return None
    # use_default=False: never write a schema's defaults into the document; use_formats=False:
    # jsonschema does not assert `format` either. (detailed_exceptions=False would be faster, but
    # 2.22 fails to compile a `const` with it.)
    try:
        return fastjsonschema.compile(definition, use_default=False, use_formats=False)
    except Exception:
        return None


def schema_errors(doc: Any, path: Path) -> list[SpecError]:
    fast = _fast_validator()
    if fast is not None:
        try:
            fast(doc)
        except Exception:
            pass  # invalid, or something it cannot judge: jsonschema decides, and words the errors
        else:
            return []
    errors = []
    for error in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        errors.append(SpecError(path, line_of(doc, error.absolute_path), "SCHEMA", _schema_message(error)))
    return errors


# ---------------------------------------------------------------- model


def _as_set(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset([value] if isinstance(value, str) else value)


def _sources(value: Any) -> list[dict[str, str]]:
    if value is None:
        return []
    return [dict(v) for v in value] if isinstance(value, list) else [dict(value)]


def _code(node: MarkedMap, key: str) -> Code | None:
    if key not in node:
        return None
    return Code(str(node[key]), node.value_lines[key])


def _when(node: Any, path: Path) -> When:
    if not node:
        return When()
    version = None
    if "version" in node:
        try:
            version = SpecifierSet(str(node["version"]))
        except InvalidSpecifier:
            raise SpecError(
                path, node.value_lines["version"], "VERSION-INVALID",
                f"version range {node['version']!r} is not a PEP 440 specifier (e.g. \">=0.8.0,<0.10\")",
            ) from None
    return When(
        x64=node.get("x64"),
        explicit_x64_dtypes=_as_set(node.get("explicit_x64_dtypes")),
        backend=_as_set(node.get("backend")),
        adapter=_as_set(node.get("adapter")),
        version=version,
    )


def _blocks(nodes: Any, path: Path) -> list[Expectation]:
    return [Expectation(_when(b.get("when"), path), _plain({k: v for k, v in b.items() if k != "when"}), b.line)
            for b in nodes]


def build_spec(doc: MarkedMap, path: Path) -> Spec:
    """The model of a schema-valid document."""
    file_setup = _code(doc, "setup")
    file_tags = tuple(doc.get("tags", ()))
    file_source = _sources(doc.get("source"))
    cases = []
    for node in doc["cases"]:
        expect = _blocks(node["expect"], path)
        documented = None
        if "documented" in node:
            d = node["documented"]
            documented = Documented(str(d["says"]), _sources(d.get("source")), _blocks(d["expect"], path), node.key_lines["documented"])
        setup = [c for c in (file_setup, _code(node, "setup")) if c is not None]
        run = _code(node, "run")
        assert run is not None  # required by the schema
        cases.append(
            Case(
                id=node["id"],
                claim=node["claim"],
                spec_path=path,
                line=node.line,
                topic=doc["topic"],
                run=run,
                expect=expect,
                source=_sources(node.get("source")) or file_source,
                tags=tuple(dict.fromkeys(file_tags + tuple(node.get("tags", ())))),
                setup=setup,
                isolate=node.get("isolate"),
                env=dict(node.get("env", {})),
                given=dict(node.get("given", {})),
                max_examples=node.get("max_examples"),
                timeout=node.get("timeout", doc.get("timeout")),
                basis=node.get("basis", doc.get("basis")),
                documented=documented,
                field_lines={k: node.key_lines[k] for k in node},
                raw=node,
            )
        )
    return Spec(
        path=path,
        topic=doc["topic"],
        title=doc.get("title", doc["topic"]),
        source=file_source,
        tags=file_tags,
        cases=cases,
        raw=doc,
    )


def _plain(value: Any) -> Any:
    """Marked containers to plain dicts and lists (JSON-ready, picklable)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@contextlib.contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The cyclic garbage collector off for a while: loading builds millions of small acyclic
    objects, and every full collection would walk all of them again (~20% of a large load).

    With `freeze`, what is alive at the end moves to the collector's permanent generation
    (gc.freeze): the loaded specs, which live as long as the session, are then never walked
    again, not by the first collection after this, nor by pytest's at the end of a session, nor
    at exit. They are still freed by reference counting: specs hold no cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


# Loads at least this large (bytes of spec files) freeze what they loaded; small ones (every test's) don't.
LARGE_LOAD_BYTES = 1_000_000


def is_large_load(paths: Iterable[Path]) -> bool:
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total >= LARGE_LOAD_BYTES


class SpecCache:
    """Loaded, valid, linted specs pickled on disk, so a second process need not parse them again.

    An entry is found by the spec's path as given and the harness's fingerprint (the sources of
    the modules that load and lint a spec, the schema, the tags, the versions of Python, PyYAML,
    packaging and fastjsonschema), and used only if it was made from the same text as the file
    holds now (a content digest, so neither a same-size rewrite within one mtime tick nor a
    clock change can serve a stale spec). Files with errors are never cached: they are loaded
    again, and report what they report. Every failure to read or write the cache is a miss.
    """

    FORMAT = 1
    # Past this many entries the oldest are removed, down to half; a process looks at its first
    # write and every PRUNE_EVERY writes after it.
    MAX_ENTRIES = 1024
    PRUNE_EVERY = 256

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fingerprint: bytes | None = None
        self._writes = 0

    @classmethod
    def default(cls) -> SpecCache | None:
        """`$JAX_CONFORMANCE_CACHE/specs`; else `.conformance-cache/specs` in a checkout (beside the
        compat environments), `~/.cache/jax-conformance/specs` for an installed harness; None with
        JAX_CONFORMANCE_SPEC_CACHE=0."""
        if os.environ.get("JAX_CONFORMANCE_SPEC_CACHE", "").strip().lower() in ("0", "off", "no", "false"):
            return None
        base = os.environ.get("JAX_CONFORMANCE_CACHE")
        if base:
            return cls(Path(base) / "specs")
        if CHECKOUT is not None:
            return cls(CHECKOUT / ".conformance-cache" / "specs")
        user = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return cls(Path(user) / "jax-conformance" / "specs")

    def fingerprint(self) -> bytes:
        if self._fingerprint is None:
            import jax_conformance
            from jax_conformance import mode
            from jax_conformance.spec import model as spec
            from jax_conformance.spec import rules as lint

            h = hashlib.sha256(f"{self.FORMAT} {sys.version} {yaml.__version__} {yaml.__with_libyaml__} "
                               f"{_version_of('packaging')} {_version_of('fastjsonschema')}".encode())
            for module in (sys.modules[__name__], lint, spec, mode, jax_conformance):
                h.update(Path(str(module.__file__)).read_bytes())
            h.update(json.dumps(schema(), sort_keys=True).encode())
            h.update(json.dumps(lint.known_tags(), sort_keys=True).encode())
            self._fingerprint = h.digest()
        return self._fingerprint

    def _entry(self, path: Path) -> Path:
        return self.root / (hashlib.sha256(self.fingerprint() + os.fsencode(str(path))).hexdigest()[:40] + ".pickle")

    @staticmethod
    def digest(text: str) -> bytes:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()

    def get(self, path: Path, text: str) -> Spec | None:
        try:
            data = self._entry(path).read_bytes()
        except OSError:
            return None
        digest = self.digest(text)
        if data[:len(digest)] != digest:
            return None
        try:
            with gc_paused():
                spec = pickle.loads(data[len(digest):])
        except Exception:
            return None
        return spec if isinstance(spec, Spec) and spec.path == path else None

    def put(self, path: Path, text: str, spec: Spec) -> None:
        entry = self._entry(path)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            self._prune()
            tmp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
            tmp.write_bytes(self.digest(text) + pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, entry)  # readers see the old entry or the new one, never half of one
        except Exception:
            return

    def _prune(self) -> None:
        self._writes += 1
        if (self._writes - 1) % self.PRUNE_EVERY:
            return
        entries = list(os.scandir(self.root))
        if len(entries) <= self.MAX_ENTRIES:
            return
        by_age = sorted(entries, key=_mtime)
        for e in by_age[: len(entries) - self.MAX_ENTRIES // 2]:
            with contextlib.suppress(OSError):
                os.unlink(e.path)


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:  # another process removed it meanwhile
        return 0.0


def _version_of(dist: str) -> str:
    try:
        module = importlib.import_module(dist)
    except ImportError:
        return "-"
    return str(getattr(module, "__version__", getattr(module, "VERSION", "?")))


def load_spec(path: Path | str, *, rules: bool = True, cache: SpecCache | None = None) -> Spec:
    """Load and check one spec file; raises SpecFileErrors listing every problem found.

    With a cache (and rules), a spec this harness already loaded from the same text comes from it.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecFileErrors(path, [SpecError(
                path, 1, "FILE-TOO-LARGE",
                f"spec file is {size:,} bytes, over the {MAX_SPEC_BYTES:,}-byte limit; split the topic",
            )])
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecFileErrors(path, [SpecError(path, 1, "FILE-ENCODING", f"not UTF-8: {exc}")]) from None
    except OSError as exc:
        raise SpecFileErrors(path, [SpecError(path, 1, "FILE-UNREADABLE", str(exc))]) from None
    if cache is not None and rules:
        cached = cache.get(path, text)
        if cached is not None:
            return cached
    try:
        doc = parse_yaml(text, path)
    except SpecError as exc:
        raise SpecFileErrors(path, [exc]) from None
    if not isinstance(doc, MarkedMap):
        raise SpecFileErrors(path, [SpecError(path, 1, "SCHEMA", "a spec file is a mapping with topic, source and cases")])
    errors = schema_errors(doc, path)
    if errors:
        raise SpecFileErrors(path, errors)
    try:
        spec = build_spec(doc, path)
    except SpecError as exc:
        raise SpecFileErrors(path, [exc]) from None
    if rules:
        from jax_conformance.spec.rules import check_spec

        errors = check_spec(spec)
        if errors:
            raise SpecFileErrors(path, errors)
        if cache is not None:
            cache.put(path, text, spec)
    return spec


def spec_files(paths: Iterable[Path | str]) -> Iterator[Path]:
    """Every spec file under these paths, in a stable order."""
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.yaml") if q.is_file())
            yield from sorted(q for q in p.rglob("*.yml") if q.is_file())
        else:
            yield p


def is_spec_file(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml") and path.name not in ("tags.yaml",) and "expectations" not in path.parts
