"""Spec lint rules: one small class per rule, each with a stable id (after test262's linter).

YAML syntax, unsafe tags, duplicate keys and schema errors come from the loader
(`YAML-SYNTAX`, `YAML-UNSAFE-TAG`, `YAML-DUPLICATE-KEY`, `SCHEMA`, `VERSION-INVALID`);
the rules run on a schema-valid model. This module holds the simple rules and the registry
(SPEC_RULES run on every load, LINT_ONLY_RULES only in `jax-conformance lint`); the `when`
rules are in `spec.when_rules`, the rules over spec code in `spec.code_rules`, the Rule base
in `spec.rule_base`.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import yaml
from jax_conformance import SPECS_DIR
from jax_conformance.errors import SpecError
from jax_conformance.mode import Mode
from jax_conformance.spec.blocks import ExpectBlock, WarningBlock
from jax_conformance.spec.code_rules import (
    CodeNames,
    CodeSyntax,
    GivenNamesUsed,
    GlobalConfigInProcess,
)
from jax_conformance.spec.model import Case, Spec
from jax_conformance.spec.rule_base import Rule, list_items, raw_block, value_line
from jax_conformance.spec.when_rules import VersionRange, WhenOverlap, WhenUnreachable

TAGS_PATH = SPECS_DIR / "tags.yaml"

KNOWN_DTYPES = frozenset(
    (
        "bool",
        "int4",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint4",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float8_e4m3fn",
        "float8_e5m2",
        "bfloat16",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "float0",
        "object",
        # the small dtypes JAX promotes (specs/promotion)
        "int1",
        "uint1",
        "int2",
        "uint2",
        "float4_e2m1fn",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float8_e3m4",
        "float8_e4m3",
        "float8_e8m0fnu",
        "float8_e4m3b11fnuz",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
    )
)

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@functools.cache
def known_tags() -> dict[str, str]:
    """Tags a spec may use (specs/tags.yaml): each becomes a pytest marker."""
    return read_tags(TAGS_PATH)


def read_tags(path: Path) -> dict[str, str]:
    """A tags.yaml: tag -> description ({} when there is none, or it is no mapping); read again
    when the file changes (a long session, or a test, editing a library's tags)."""
    try:
        stat = path.stat()
    except OSError:
        return {}
    return _read_tags(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _read_tags(path: Path, _mtime_ns: int, _size: int) -> dict[str, str]:
    with path.open(encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


@functools.cache
def own_tags_path(folder: Path) -> Path | None:
    """The tags.yaml nearest a spec's folder (the folder itself, or the first folder above it that
    has one): a library's spec directory brings its own tags."""
    for candidate in (folder, *folder.parents):
        if (candidate / "tags.yaml").is_file():
            return candidate / "tags.yaml"
    return None


def tags_for(spec_path: Path) -> dict[str, str]:
    """The tags a spec file may use: this project's (specs/tags.yaml) and its own directory's."""
    own = own_tags_path(spec_path.resolve().parent)
    if own is None or own == TAGS_PATH:
        return known_tags()
    return {**known_tags(), **read_tags(own)}


class IdPrefix(Rule):
    id = "ID-TOPIC"
    doc = "A case id starts with its file's topic, so ids group by topic in reports."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if not case.id.startswith(spec.topic + "."):
            yield self.error(
                spec,
                case.field_lines["id"],
                f"case id {case.id!r} must start with the topic {spec.topic!r} + '.'",
            )


class DuplicateIdInFile(Rule):
    id = "ID-DUPLICATE"
    doc = "Case ids are unique: they are test ids and report keys."

    def check(self, spec: Spec) -> Iterator[SpecError]:
        seen: dict[str, int] = {}
        for case in spec.cases:
            if case.id in seen:
                yield self.error(
                    spec,
                    case.field_lines["id"],
                    f"duplicate case id {case.id!r} (first on line {seen[case.id]})",
                )
            else:
                seen[case.id] = case.field_lines["id"]


class UnknownTag(Rule):
    id = "TAG-UNKNOWN"
    doc = (
        "Tags become pytest markers; a typo would select nothing, so tags come from specs/tags.yaml "
        "or the tags.yaml of the spec's own directory (its folder or the nearest above it)."
    )

    def check(self, spec: Spec) -> Iterator[SpecError]:
        known = tags_for(spec.path)
        if not known:
            return
        own = own_tags_path(spec.path.resolve().parent)
        where = (
            str(own) if own is not None else "specs/tags.yaml (or a tags.yaml beside your specs)"
        )
        for line, tag in list_items(spec.raw, "tags"):
            if tag not in known:
                yield self.error(spec, line, self._msg(tag, known, where))
        for case in spec.cases:
            for line, tag in list_items(case.raw, "tags"):
                if tag not in known:
                    yield self.error(spec, line, self._msg(tag, known, where))

    @staticmethod
    def _msg(tag: object, known: dict[str, str], where: str) -> str:
        return f"unknown tag {tag!r}; add it to {where} or use one of: {', '.join(sorted(known))}"


def _class_names(case: Case) -> Iterator[tuple[int, str, str]]:
    """(line, dotted name, 'raises'|'warns') for every exception and warning class a case names."""
    for _, line, name, kind in _class_names_by_block(case):
        yield line, name, kind


def _class_names_by_block(case: Case) -> Iterator[tuple[int, int, str, str]]:
    for index, block in enumerate(case.expect):
        raw = raw_block(case, index)
        raises = block.expected.get("raises")
        if isinstance(raises, dict) and "type" in raises:
            yield (
                block.line,
                value_line(raw.get("raises"), "type", value_line(raw, "raises", block.line)),
                raises["type"],
                "raises",
            )
        for item, warning in zip(_raw_warnings(raw), _warnings(block.expected), strict=False):
            yield (
                block.line,
                value_line(item, "category", value_line(raw, "warns", block.line)),
                warning["category"],
                "warns",
            )


def _raw_warnings(raw: Mapping[str, object]) -> list[object]:
    warns = raw.get("warns")
    if isinstance(warns, dict):
        return [warns]
    return list(warns) if isinstance(warns, list) else []


class InvalidRegex(Rule):
    id = "REGEX-INVALID"
    doc = "`match` patterns of warns/raises compile as Python regular expressions."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for index, block in enumerate(case.expect):
            for line, pattern in _patterns(raw_block(case, index), block.expected, block.line):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    yield self.error(
                        spec,
                        line,
                        f"in case {case.id!r}: match pattern {pattern!r} does not compile: {exc}",
                    )


def _patterns(
    raw: Mapping[str, object], outcome: ExpectBlock, default: int
) -> Iterator[tuple[int, str]]:
    raises = outcome.get("raises")
    if isinstance(raises, dict) and "match" in raises:
        yield (
            value_line(raw.get("raises"), "match", value_line(raw, "raises", default)),
            raises["match"],
        )
    for item, w in zip(_raw_warnings(raw), _warnings(outcome), strict=False):
        if "match" in w:
            yield value_line(item, "match", value_line(raw, "warns", default)), w["match"]


def _warnings(outcome: ExpectBlock) -> list[WarningBlock]:
    warns = outcome.get("warns")
    if isinstance(warns, dict):
        return [warns]
    if isinstance(warns, list):
        return warns
    return []


class ExceptionName(Rule):
    id = "EXC-NAME"
    doc = (
        "Exception and warning classes are named by a dotted Python name (resolved by the adapter)."
    )

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for line, name, _ in _class_names(case):
            if not _DOTTED.match(name):
                yield self.error(
                    spec, line, f"in case {case.id!r}: {name!r} is not a dotted class name"
                )


class BuiltinClassName(Rule):
    id = "EXC-UNRESOLVED"
    doc = (
        "Exception and warning names resolve in the adapter's namespace: a bare name must be a Python "
        "builtin of the right kind (checked without an adapter); dotted names are checked with --adapter."
    )

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for line, name, kind in _class_names(case):
            if not _DOTTED.match(name) or "." in name:
                continue
            obj = getattr(builtins, name, None)
            if not isinstance(obj, type) or not issubclass(obj, BaseException):
                yield self.error(
                    spec,
                    line,
                    f"in case {case.id!r}: {name!r} is not a builtin exception; "
                    f"name other classes by their dotted path (e.g. jax.errors.{name})",
                )
            elif kind == "warns" and not issubclass(obj, Warning):
                yield self.error(
                    spec,
                    line,
                    f"in case {case.id!r}: {name!r} is an exception, not a warning category",
                )


class DtypeName(Rule):
    id = "DTYPE-UNKNOWN"
    doc = "`dtype:` names a dtype JAX or NumPy knows, spelled as numpy spells it."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for index, block in enumerate(case.expect):
            dtype = block.expected.get("dtype")
            if dtype is not None and dtype not in KNOWN_DTYPES:
                yield self.error(
                    spec,
                    value_line(raw_block(case, index), "dtype", block.line),
                    f"in case {case.id!r}: unknown dtype {dtype!r}",
                )


class BasisGiven(Rule):
    id = "BASIS-MISSING"
    doc = (
        "Every case says what kind of requirement it is (`basis`: documented, tested, observed, unsupported, "
        "library), "
        "on the case or as its file's default: only documented and tested count as conformance."
    )

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.basis is None:
            yield self.error(
                spec,
                case.field_lines["id"],
                f"case {case.id!r} has no `basis` (documented, tested, observed or "
                "unsupported); set it on the case or the file",
            )


class DocumentedNeedsDoc(Rule):
    id = "DOCUMENTED-SOURCE"
    doc = "A `documented:` expectation names the documentation it comes from (a doc page or URL)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.documented is not None and not any(
            "doc" in s or "url" in s for s in case.documented.source
        ):
            yield self.error(
                spec,
                case.documented.line,
                f"case {case.id!r}: `documented` names no doc or url in its source",
            )


class TestedNeedsTest(Rule):
    id = "BASIS-SOURCE"
    doc = (
        "A case's source supports its basis: `documented` names a doc page or URL, `tested` a "
        "JAX test file (tests/...)."
    )

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        supported = {
            "documented": ("doc or url", lambda s: "doc" in s or "url" in s),
            "library": ("doc or url of the library's own", lambda s: "doc" in s or "url" in s),
            "tested": (
                "JAX test (file: tests/...)",
                lambda s: str(s.get("file", "")).startswith("tests/"),
            ),
        }.get(case.basis or "")
        if supported and not any(supported[1](s) for s in case.source):
            line = case.field_lines.get(
                "source", case.field_lines.get("basis", case.field_lines["id"])
            )
            yield self.error(
                spec,
                line,
                f"case {case.id!r} is {case.basis} but its source names no {supported[0]}",
            )


SPEC_RULES: tuple[Rule, ...] = (
    IdPrefix(),
    DuplicateIdInFile(),
    UnknownTag(),
    InvalidRegex(),
    ExceptionName(),
    BuiltinClassName(),
    CodeSyntax(),
    DtypeName(),
    VersionRange(),
    WhenUnreachable(),
    WhenOverlap(),
    GlobalConfigInProcess(),
    GivenNamesUsed(),
    DocumentedNeedsDoc(),
    TestedNeedsTest(),
)


# Rules only `jax-conformance lint` applies: a spec that breaks them still loads and runs (its
# records say what they lack), but CI's lint refuses it.
class TableGenerated(Rule):
    id = "TABLE-GENERATED"
    doc = "a table case's data file is exactly what the script it names in `generated_by` renders (never hand-edited)"

    def check(self, spec: Spec) -> Iterator[SpecError]:
        import importlib.util
        import json

        seen: set[str] = set()
        for case in spec.cases:
            if case.table is None or case.table in seen:
                continue
            seen.add(case.table)
            node = next(n for n in spec.raw["cases"] if n["id"] == case.table)
            data_path = spec.path.parent / str(node["table"])
            text = data_path.read_text(encoding="utf-8")
            script = SPECS_DIR.parent / str(json.loads(text).get("generated_by", ""))
            if not script.is_file():
                yield self.error(
                    spec,
                    case.line,
                    f"{data_path.name} names no generator script that exists ({script})",
                )
                continue
            module_spec = importlib.util.spec_from_file_location(
                f"_table_generator_{abs(hash(script))}", script
            )
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            if module.render().get(data_path.name) != text:
                yield self.error(
                    spec,
                    case.line,
                    f"{data_path.name} is not what {script.name} renders: regenerate it "
                    f"(.venv/bin/python {script.relative_to(SPECS_DIR.parent)}), never edit a cell by hand",
                )


class LibrarySource(Rule):
    id = "LIBRARY-SOURCE"
    doc = (
        "A `basis: library` case (the library's own requirement, not JAX's) names where the library "
        "states it: a `url`, or a `doc` file that exists beside the spec (its folder or one above it)."
    )

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.basis != "library":
            return
        folder = spec.path.resolve().parent
        line = case.field_lines.get("source", case.field_lines.get("basis", case.field_lines["id"]))
        for source in case.source:
            if "url" in source and not re.match(r"^https?://\S+$", str(source["url"])):
                yield self.error(
                    spec, line, f"case {case.id!r}: url {source['url']!r} is not an http(s) URL"
                )
            doc = source.get("doc")
            if doc is None:
                continue
            if not any((base / str(doc)).is_file() for base in (folder, *folder.parents)):
                yield self.error(
                    spec,
                    line,
                    f"case {case.id!r} is the library's own requirement, but its doc {doc!r} is no "
                    f"file in {folder} or a folder above it",
                )


LINT_ONLY_RULES: tuple[Rule, ...] = (BasisGiven(), CodeNames(), TableGenerated(), LibrarySource())

# Rules over expect blocks that apply to `documented:` blocks as well.
BLOCK_RULES: tuple[Rule, ...] = (
    InvalidRegex(),
    ExceptionName(),
    BuiltinClassName(),
    DtypeName(),
    VersionRange(),
    WhenUnreachable(),
    WhenOverlap(),
)

RULE_IDS = {
    "TABLE-DATA": "A table case's data file reads as JSON with a list of cells.",
    "YAML-SYNTAX": "The file parses as YAML.",
    "YAML-UNSAFE-TAG": "No YAML tags that would construct Python objects.",
    "YAML-DUPLICATE-KEY": "No key appears twice in one mapping.",
    "YAML-TOO-LARGE": "With its aliases expanded, a spec stays under the node limit (no alias bombs).",
    "SCHEMA": "The file matches specs/schema.json.",
    "FILE-TOO-LARGE": "A spec file stays under the size limit.",
    "FILE-ENCODING": "A spec file is UTF-8.",
    "FILE-UNREADABLE": "A spec file can be read.",
    "ID-DUPLICATE-GLOBAL": "Case ids are unique across all spec files.",
    **{rule.id: rule.doc for rule in SPEC_RULES + LINT_ONLY_RULES},
}


def check_spec(spec: Spec) -> list[SpecError]:
    errors = [error for rule in SPEC_RULES for error in rule.check(spec)]
    documented = documented_view(spec)
    if documented.cases:
        errors += [error for rule in BLOCK_RULES for error in rule.check(documented)]
    return errors


def lint_only_errors(spec: Spec) -> list[SpecError]:
    """What `jax-conformance lint` checks beyond what loading a spec checks."""
    return [error for rule in LINT_ONLY_RULES for error in rule.check(spec)]


def documented_view(spec: Spec) -> Spec:
    """The spec with each case's `documented:` blocks in place of its `expect` (cases without them left out)."""
    cases = []
    for case in spec.cases:
        if case.documented is not None:
            raw = dict(case.raw)
            raw["expect"] = case.raw["documented"]["expect"]
            cases.append(dataclasses.replace(case, expect=case.documented.expect, raw=raw))
    return dataclasses.replace(spec, cases=cases)


def duplicate_ids(specs: Iterable[Spec]) -> list[SpecError]:
    """ID-DUPLICATE-GLOBAL: the same case id in two files."""
    return duplicate_ids_in((spec.path, case_ids(spec)) for spec in specs)


def case_ids(spec: Spec) -> list[tuple[str, int]]:
    """(case id, line of its `id:`) for each case: all that ID-DUPLICATE-GLOBAL needs of a spec."""
    return [(case.id, case.field_lines["id"]) for case in spec.cases]


def duplicate_ids_in(files: Iterable[tuple[Path, Iterable[tuple[str, int]]]]) -> list[SpecError]:
    """ID-DUPLICATE-GLOBAL over (path, case_ids(spec)) pairs, in file order."""
    seen: dict[str, tuple[Path, int]] = {}
    errors = []
    for path, ids in files:
        for case_id, line in ids:
            if case_id in seen and seen[case_id][0] != path:
                first = seen[case_id]
                errors.append(
                    SpecError(
                        path,
                        line,
                        "ID-DUPLICATE-GLOBAL",
                        f"case id {case_id!r} is also defined at {first[0]}:{first[1]}",
                    )
                )
            else:
                seen.setdefault(case_id, (path, line))
    return errors


def exception_names(case: Case, adapter: str, version: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every class named in the blocks this adapter/version can choose."""
    chosen = set()
    for block in case.expect:
        w = block.when
        if w.adapter is not None and adapter not in w.adapter:
            continue
        if w.version is not None and not block.when.matches(
            Mode(
                w.x64 if w.x64 is not None else False, next(iter(w.explicit_x64_dtypes or {"warn"}))
            ),
            next(iter(w.backend or {"cpu"})),
            adapter,
            version,
            dict(w.flags or ()),
        ):
            continue
        chosen.add(block.line)
    for block_line, line, name, _ in _class_names_by_block(case):
        if block_line in chosen:
            yield line, name
