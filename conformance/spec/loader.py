"""Spec files to `Spec` objects: the YAML with its lines, the JSON Schema, the model, then the rules.

Errors are `SpecError`s that read `path:line: RULE-ID message`. The parts live beside this
module: `spec.yaml` (parsing with line marks), `spec.schema` (specs/schema.json), `spec.rules`
(the lint rules that need the whole model), `spec.cache` (specs loaded by an earlier process).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jax_conformance.errors import SpecError, SpecFileErrors
from jax_conformance.spec.blocks import ExpectBlock
from jax_conformance.spec.model import Case, Code, Documented, Expectation, Spec, When
from jax_conformance.spec.rules import check_spec
from jax_conformance.spec.schema import schema_errors
from jax_conformance.spec.yaml import MarkedMap, parse_yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet

if TYPE_CHECKING:
    from jax_conformance.spec.cache import SpecCache

# Refuse what cannot be a spec before parsing it: a spec file is a few hundred lines.
MAX_SPEC_BYTES = 2_000_000


def _as_set(value: object) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset([value])
    if not isinstance(value, Iterable):
        raise TypeError(f"a `when` condition is a string or a list of them, not {value!r}")
    return frozenset(value)


def _sources(value: object) -> list[dict[str, str]]:
    if value is None:
        return []
    if isinstance(value, list):
        return [dict(v) for v in value]
    if not isinstance(value, Mapping):
        raise TypeError(f"a source is a mapping or a list of them, not {value!r}")
    return [dict(value)]


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
                path,
                node.value_lines["version"],
                "VERSION-INVALID",
                f'version range {node["version"]!r} is not a PEP 440 specifier (e.g. ">=0.8.0,<0.10")',
            ) from None
    return When(
        x64=node.get("x64"),
        explicit_x64_dtypes=_as_set(node.get("explicit_x64_dtypes")),
        backend=_as_set(node.get("backend")),
        adapter=_as_set(node.get("adapter")),
        version=version,
        flags=tuple(sorted(dict(node["flags"]).items())) if node.get("flags") else None,
    )


def _blocks(nodes: Iterable[MarkedMap], path: Path) -> list[Expectation]:
    # The schema has checked each block's keys and values: an ExpectBlock.
    return [
        Expectation(
            _when(b.get("when"), path),
            cast(ExpectBlock, _plain({k: v for k, v in b.items() if k != "when"})),
            b.line,
        )
        for b in nodes
    ]


def build_spec(doc: MarkedMap, path: Path) -> Spec:
    """The model of a schema-valid document."""
    file_setup = _code(doc, "setup")
    file_tags = tuple(doc.get("tags", ()))
    file_source = _sources(doc.get("source"))
    cases = []
    for node in doc["cases"]:
        if "table" in node:
            cases += table_cells(doc, node, path, file_setup, file_tags, file_source)
            continue
        expect = _blocks(node["expect"], path)
        documented = None
        if "documented" in node:
            d = node["documented"]
            documented = Documented(
                str(d["says"]),
                _sources(d.get("source")),
                _blocks(d["expect"], path),
                node.key_lines["documented"],
            )
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
                paths=tuple(node.get("paths", ())),
                jit_args=tuple(node.get("jit_args", ())),
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


def table_data(node: MarkedMap, path: Path) -> dict[str, Any]:
    """A table case's data file (JSON, generated: see its `generated_by`), relative to the spec file."""
    data_path = path.parent / str(node["table"])
    try:
        data = json.loads(data_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecError(
            path, node.value_lines["table"], "TABLE-DATA", f"table {node['table']!r}: {exc}"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise SpecError(
            path,
            node.value_lines["table"],
            "TABLE-DATA",
            f"table {node['table']!r} has no list of cells",
        )
    return data


def _cell_blocks(
    blocks: list[dict[str, Any]], line: int, path: Path, seen: dict[str, When]
) -> list[Expectation]:
    """A cell's blocks; `seen`: the `When` of each `when` already read in this table (cells share a few)."""
    out = []
    for b in blocks:
        key = json.dumps(b.get("when"), sort_keys=True)
        if key not in seen:
            seen[key] = _when(b.get("when"), path)
        out.append(
            Expectation(
                seen[key], cast(ExpectBlock, {k: v for k, v in b.items() if k != "when"}), line
            )
        )
    return out


def table_cells(
    doc: MarkedMap,
    node: MarkedMap,
    path: Path,
    file_setup: Code | None,
    file_tags: tuple[str, ...],
    file_source: list[dict[str, str]],
) -> list[Case]:
    """A `table:` case as one case per cell of its data file: id `<case id>[<cell id>]`, the cell's
    `bind` run after setup, its own expect (and documented) blocks and basis."""
    line = node.line
    run = _code(node, "run")
    assert run is not None
    setup = [c for c in (file_setup, _code(node, "setup")) if c is not None]
    says = node["documented"]["says"] if "documented" in node else "the documented table"
    doc_source = _sources(node["documented"].get("source")) if "documented" in node else file_source
    source = _sources(node.get("source")) or file_source
    cases = []
    base = {k: node[k] for k in node if k != "table"}
    seen: dict[str, When] = {}
    for cell in table_data(node, path)["cells"]:
        raw = {**base, "expect": cell["expect"]}
        if cell.get("documented") and "documented" in node:
            raw["documented"] = {**dict(node["documented"]), "expect": cell["documented"]}
        documented = (
            Documented(
                str(says), doc_source, _cell_blocks(cell["documented"], line, path, seen), line
            )
            if cell.get("documented")
            else None
        )
        cases.append(
            Case(
                id=f"{node['id']}[{cell['id']}]",
                claim=node["claim"],
                spec_path=path,
                line=line,
                topic=doc["topic"],
                run=run,
                expect=_cell_blocks(cell["expect"], line, path, seen),
                source=_sources(cell.get("source")) or source,
                tags=tuple(dict.fromkeys(file_tags + tuple(node.get("tags", ())))),
                setup=[*setup, Code(str(cell["bind"]), line)],
                timeout=node.get("timeout", doc.get("timeout")),
                basis=cell.get("basis", node.get("basis", doc.get("basis"))),
                documented=documented,
                field_lines={k: node.key_lines[k] for k in node},
                raw=raw,
                table=node["id"],
                paths=tuple(cell.get("paths", node.get("paths", ()))),
                jit_args=tuple(node.get("jit_args", ())),
            )
        )
    return cases


def _plain(value: object) -> object:
    """Marked containers to plain dicts and lists (JSON-ready, picklable)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _cache_text(path: Path, text: str) -> str:
    """What a cached spec is keyed by: its text and the text of every table data file it names."""
    import re

    tables = re.findall(r"^\s+table:\s*[\"']?([^\s\"'#]+)", text, re.MULTILINE)
    parts = [text]
    for name in tables:
        try:
            parts.append((path.parent / name).read_text(encoding="utf-8"))
        except OSError:
            parts.append("")
    return "\0".join(parts)


def load_spec(path: Path | str, *, rules: bool = True, cache: SpecCache | None = None) -> Spec:
    """Load and check one spec file; raises SpecFileErrors listing every problem found.

    With a cache (and rules), a spec this harness already loaded from the same text comes from it.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecFileErrors(
                path,
                [
                    SpecError(
                        path,
                        1,
                        "FILE-TOO-LARGE",
                        f"spec file is {size:,} bytes, over the {MAX_SPEC_BYTES:,}-byte limit; split the topic",
                    )
                ],
            )
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecFileErrors(
            path, [SpecError(path, 1, "FILE-ENCODING", f"not UTF-8: {exc}")]
        ) from None
    except OSError as exc:
        raise SpecFileErrors(path, [SpecError(path, 1, "FILE-UNREADABLE", str(exc))]) from None
    # The key is read once, before the spec is built: read again at `put`, a table data file
    # rewritten in between (a generator run beside a pytest run) stored the old cells under the
    # new text's key, and every later run read the stale cells.
    key_text = _cache_text(path, text) if cache is not None and rules else ""
    if cache is not None and rules:
        cached = cache.get(path, key_text)
        if cached is not None:
            return cached
    try:
        doc = parse_yaml(text, path)
    except SpecError as exc:
        raise SpecFileErrors(path, [exc]) from None
    if not isinstance(doc, MarkedMap):
        raise SpecFileErrors(
            path,
            [SpecError(path, 1, "SCHEMA", "a spec file is a mapping with topic, source and cases")],
        )
    errors = schema_errors(doc, path)
    if errors:
        raise SpecFileErrors(path, errors)
    try:
        spec = build_spec(doc, path)
    except SpecError as exc:
        raise SpecFileErrors(path, [exc]) from None
    if rules:
        errors = check_spec(spec)
        if errors:
            raise SpecFileErrors(path, errors)
        if cache is not None:
            cache.put(path, key_text, spec)
    return spec


def spec_files(paths: Iterable[Path | str]) -> Iterator[Path]:
    """Every spec file under these paths, in a stable order."""
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.yaml") if q.is_file())
            yield from sorted(q for q in p.rglob("*.yml") if q.is_file())
        else:
            yield p


# The folder of a spec root that holds radar searches computed from the specs (`compat.shipped`):
# data about the specs, not specs, so it is no part of their revision (shipping a search would
# otherwise change the revision it states).
SHIPPED_SEARCHES = "radar"


def spec_revision(paths: Iterable[Path | str]) -> str:
    """The spec revision: a hash of every file under these spec paths (each by its path within its
    directory, and its bytes: spec files, a table's `*.cells.json`, known divergences; not
    `__pycache__`, nor the shipped searches of a root's `radar/`). The same specs give the same
    revision on every machine, wherever they lie. The one hash of "which specs": a run's
    description, the radar's store, a shipped search and compat's summary all state it."""
    digest = hashlib.sha256()
    for root in map(Path, paths):
        files = sorted(q for q in root.rglob("*") if q.is_file()) if root.is_dir() else [root]
        for path in files:
            name = path.relative_to(root) if root.is_dir() else Path(path.name)
            if "__pycache__" in name.parts or (root.is_dir() and name.parts[0] == SHIPPED_SEARCHES):
                continue
            digest.update(f"{name.as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def is_spec_file(path: Path) -> bool:
    return (
        path.suffix in (".yaml", ".yml")
        and path.name not in ("tags.yaml",)
        and "expectations" not in path.parts
    )
