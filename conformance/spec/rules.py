"""Spec lint rules: one small class per rule, each with a stable id (after test262's linter).

YAML syntax, unsafe tags, duplicate keys and schema errors come from the loader
(`YAML-SYNTAX`, `YAML-UNSAFE-TAG`, `YAML-DUPLICATE-KEY`, `SCHEMA`, `VERSION-INVALID`);
the rules here run on a schema-valid model.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import itertools
import re
import symtable
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import yaml
from jax_conformance import SPECS_DIR
from jax_conformance.adapter import SPEC_NAMES
from jax_conformance.errors import SpecError
from jax_conformance.mode import EXPLICIT_MODES, Mode
from jax_conformance.spec.model import Case, Code, Spec
from packaging.version import InvalidVersion, Version

TAGS_PATH = SPECS_DIR / "tags.yaml"

KNOWN_DTYPES = frozenset((
    "bool", "int4", "int8", "int16", "int32", "int64", "uint4", "uint8", "uint16", "uint32", "uint64",
    "float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
    "float0", "object",
))
# Versions probed when deciding whether `when` blocks can match or overlap: the releases
# of interest plus the boundaries named in the blocks themselves.
PROBE_VERSIONS = ("0.4.30", "0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.0", "0.9.2", "0.10.0", "0.10.2", "99.0")
PROBE_BACKENDS = ("cpu", "gpu", "tpu")
PROBE_ADAPTERS = ("jax", "reference")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@functools.cache
def known_tags() -> dict[str, str]:
    """Tags a spec may use (specs/tags.yaml): each becomes a pytest marker."""
    if not TAGS_PATH.exists():
        return {}
    with TAGS_PATH.open(encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    return {str(k): str(v) for k, v in data.items()}


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


class IdPrefix(Rule):
    id = "ID-TOPIC"
    doc = "A case id starts with its file's topic, so ids group by topic in reports."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if not case.id.startswith(spec.topic + "."):
            yield self.error(spec, case.field_lines["id"], f"case id {case.id!r} must start with the topic {spec.topic!r} + '.'")


class DuplicateIdInFile(Rule):
    id = "ID-DUPLICATE"
    doc = "Case ids are unique: they are test ids and report keys."

    def check(self, spec: Spec) -> Iterator[SpecError]:
        seen: dict[str, int] = {}
        for case in spec.cases:
            if case.id in seen:
                yield self.error(spec, case.field_lines["id"], f"duplicate case id {case.id!r} (first on line {seen[case.id]})")
            else:
                seen[case.id] = case.field_lines["id"]


class UnknownTag(Rule):
    id = "TAG-UNKNOWN"
    doc = "Tags become pytest markers; a typo would select nothing, so tags come from specs/tags.yaml."

    def check(self, spec: Spec) -> Iterator[SpecError]:
        known = known_tags()
        if not known:
            return
        for line, tag in _items(spec.raw, "tags"):
            if tag not in known:
                yield self.error(spec, line, self._msg(tag, known))
        for case in spec.cases:
            for line, tag in _items(case.raw, "tags"):
                if tag not in known:
                    yield self.error(spec, line, self._msg(tag, known))

    @staticmethod
    def _msg(tag: str, known: dict[str, str]) -> str:
        return f"unknown tag {tag!r}; add it to specs/tags.yaml or use one of: {', '.join(sorted(known))}"


def _items(node: Any, key: str) -> list[tuple[int, Any]]:
    """(line, item) for a list value (a lone string counts as a list of one), with each item's own line."""
    if not isinstance(node, dict) or key not in node:
        return []
    value, line = node[key], _line(node, key, getattr(node, "line", 1))
    if isinstance(value, list):
        lines = getattr(value, "item_lines", [line] * len(value))
        return list(zip(lines, value, strict=False))
    return [(line, value)]


def _outcomes(case: Case) -> Iterator[tuple[int, dict[str, Any]]]:
    for block in case.expect:
        yield block.line, block.outcome


def _raw_block(case: Case, index: int) -> Any:
    """The marked YAML mapping of the index-th expect block (for exact lines)."""
    blocks = case.raw.get("expect") if isinstance(case.raw, dict) else None
    return blocks[index] if isinstance(blocks, list) and index < len(blocks) else {}


def _line(node: Any, key: str, default: int) -> int:
    """The line of `key`'s value in a marked mapping, else `default`."""
    lines = getattr(node, "value_lines", None)
    return lines.get(key, default) if isinstance(lines, dict) else default


def _class_names(case: Case) -> Iterator[tuple[int, str, str]]:
    """(line, dotted name, 'raises'|'warns') for every exception and warning class a case names."""
    for _, line, name, kind in _class_names_by_block(case):
        yield line, name, kind


def _class_names_by_block(case: Case) -> Iterator[tuple[int, int, str, str]]:
    for index, block in enumerate(case.expect):
        raw = _raw_block(case, index)
        raises = block.outcome.get("raises")
        if isinstance(raises, dict) and "type" in raises:
            yield block.line, _line(raw.get("raises"), "type", _line(raw, "raises", block.line)), raises["type"], "raises"
        for item, warning in zip(_raw_warnings(raw), _warnings(block.outcome), strict=False):
            yield block.line, _line(item, "category", _line(raw, "warns", block.line)), warning["category"], "warns"


def _raw_warnings(raw: Any) -> list[Any]:
    warns = raw.get("warns") if isinstance(raw, dict) else None
    if isinstance(warns, dict):
        return [warns]
    return list(warns) if isinstance(warns, list) else []


class InvalidRegex(Rule):
    id = "REGEX-INVALID"
    doc = "`match` patterns of warns/raises compile as Python regular expressions."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for index, block in enumerate(case.expect):
            for line, pattern in _patterns(_raw_block(case, index), block.outcome, block.line):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    yield self.error(spec, line, f"in case {case.id!r}: match pattern {pattern!r} does not compile: {exc}")


def _patterns(raw: Any, outcome: dict[str, Any], default: int) -> Iterator[tuple[int, str]]:
    raises = outcome.get("raises")
    if isinstance(raises, dict) and "match" in raises:
        yield _line(raw.get("raises"), "match", _line(raw, "raises", default)), raises["match"]
    for item, w in zip(_raw_warnings(raw), _warnings(outcome), strict=False):
        if "match" in w:
            yield _line(item, "match", _line(raw, "warns", default)), w["match"]


def _warnings(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    warns = outcome.get("warns")
    if isinstance(warns, dict):
        return [warns]
    if isinstance(warns, list):
        return warns
    return []


class ExceptionName(Rule):
    id = "EXC-NAME"
    doc = "Exception and warning classes are named by a dotted Python name (resolved by the adapter)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for line, name, _ in _class_names(case):
            if not _DOTTED.match(name):
                yield self.error(spec, line, f"in case {case.id!r}: {name!r} is not a dotted class name")


class BuiltinClassName(Rule):
    id = "EXC-UNRESOLVED"
    doc = ("Exception and warning names resolve in the adapter's namespace: a bare name must be a Python "
           "builtin of the right kind (checked without an adapter); dotted names are checked with --adapter.")

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for line, name, kind in _class_names(case):
            if not _DOTTED.match(name) or "." in name:
                continue
            obj = getattr(builtins, name, None)
            if not isinstance(obj, type) or not issubclass(obj, BaseException):
                yield self.error(spec, line, f"in case {case.id!r}: {name!r} is not a builtin exception; "
                                             f"name other classes by their dotted path (e.g. jax.errors.{name})")
            elif kind == "warns" and not issubclass(obj, Warning):
                yield self.error(spec, line, f"in case {case.id!r}: {name!r} is an exception, not a warning category")


class CodeSyntax(Rule):
    id = "CODE-SYNTAX"
    doc = "setup, run, check and given are Python that compiles; errors point at the spec line."

    def check(self, spec: Spec) -> Iterator[SpecError]:
        if "setup" in spec.raw:
            yield from self._compile(spec, "file setup", Code(spec.raw["setup"], _line(spec.raw, "setup", 1)), "exec")
        for case in spec.cases:
            own_setup = case.setup[-1:] if "setup" in case.raw else []
            for code in own_setup:
                yield from self._compile(spec, f"setup of {case.id!r}", code, "exec")
            # A run is statements or one expression: compiling as statements first settles most
            # runs in one compile (an expression is a statement too, barring a few forms eval takes).
            # Blank lines before code change no verdict, so the unshifted text is compiled (up to
            # twice as fast); only code that does not compile is compiled again at its spec line.
            if not _code_compiles(case.run, "exec") and not _code_compiles(case.run, "eval"):
                yield from self._compile(spec, f"run of {case.id!r}", case.run, "exec")
            for name, strategy in case.given.items():
                yield from self._compile(spec, f"given.{name} of {case.id!r}", Code(strategy, case.raw["given"].value_lines[name]), "eval")
            for index, _block in enumerate(case.expect):
                for line, expr in _items(_raw_block(case, index), "check"):
                    yield from self._compile(spec, f"check of {case.id!r}", Code(str(expr), line), "eval")

    def _compile(self, spec: Spec, what: str, code: Code, mode: str) -> Iterator[SpecError]:
        if _code_compiles(code, mode):
            return
        try:
            compile(code.shifted(), str(spec.path), mode)
        except SyntaxError as exc:
            yield self.error(spec, exc.lineno or code.line, f"{what} is not valid Python: {exc.msg}")
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            yield self.error(spec, code.line, f"{what} cannot be compiled: {type(exc).__name__}: {str(exc)[:200]}")


def _code_compiles(code: Code, mode: str) -> bool:
    """Whether the code compiles: its text alone, without the padding that places it at its spec line."""
    return _compiles(code.text, mode)


def _compiles(source: str, mode: str) -> bool:
    try:
        compile(source, "<spec>", mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class DtypeName(Rule):
    id = "DTYPE-UNKNOWN"
    doc = "`dtype:` names a dtype JAX or NumPy knows, spelled as numpy spells it."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for index, block in enumerate(case.expect):
            dtype = block.outcome.get("dtype")
            if dtype is not None and dtype not in KNOWN_DTYPES:
                yield self.error(spec, _line(_raw_block(case, index), "dtype", block.line),
                                 f"in case {case.id!r}: unknown dtype {dtype!r}")


def _probe_points(case: Case) -> list[tuple[Mode, str, str, str]]:
    """The (mode, backend, adapter, version) points at which the WHEN rules try the case's blocks.

    A dimension that no block's `when` names cannot change any block's answer, so it is probed
    at one value only: its first, the one the full product would reach first. The rules then
    find exactly what they find over the full product, word for word (WHEN-OVERLAP names the
    first point where two blocks both match, and that point has the first value of every
    dimension no block names); a case whose blocks name only x64 modes is probed at 6 points,
    not at 6 modes x 3 backends x 2 adapters x 10+ versions.
    """
    versions: set[str] | None = None
    adapters: set[str] | None = None
    backends: set[str] | None = None
    for block in case.expect:
        w = block.when
        if w.version is not None:
            if versions is None:
                versions = set(PROBE_VERSIONS)
            for s in w.version:
                try:
                    v = Version(s.version.replace(".*", ""))
                except InvalidVersion:
                    continue  # `===text` names no release; VERSION-INVALID reports it
                versions.update({str(v), _bump(v, -1), _bump(v, +1)})
        if w.adapter is not None:
            adapters = (adapters or set(PROBE_ADAPTERS)) | w.adapter
        if w.backend is not None:
            backends = (backends or set(PROBE_BACKENDS)) | w.backend
    return [(m, b, a, v) for m, b, a, v in itertools.product(
        _MODES,
        sorted(backends) if backends is not None else [_FIRST_BACKEND],
        sorted(adapters) if adapters is not None else [_FIRST_ADAPTER],
        sorted(versions) if versions is not None else [_FIRST_VERSION],
    )]


_MODES = tuple(Mode(x, e) for x in (False, True) for e in EXPLICIT_MODES)
# The first value of each dimension in the order the points are probed (sorted as strings).
_FIRST_BACKEND, _FIRST_ADAPTER, _FIRST_VERSION = min(PROBE_BACKENDS), min(PROBE_ADAPTERS), min(PROBE_VERSIONS)


@functools.lru_cache(maxsize=4096)
def _version(text: str) -> Version:
    return Version(text)


def _bump(v: Version, step: int) -> str:
    """The release just above (step=+1) or just below (step=-1) `v`, as a probe version."""
    parts = list(v.release) + [0] * (3 - len(v.release))
    if step > 0:
        parts[-1] += 1
        return ".".join(map(str, parts))
    i = len(parts) - 1
    while i >= 0 and parts[i] == 0:
        parts[i] = 99
        i -= 1
    if i < 0:
        return "0"
    parts[i] -= 1
    return ".".join(map(str, parts))


def _match_table(case: Case) -> tuple[list[tuple[Mode, str, str, str]], list[list[bool]]]:
    """The probe points, and for each expect block whether its `when` holds at each point.

    Same answer as `When.matches`, computed per dimension with each version parsed once:
    the rules probe thousands of points per case and the loader runs them on every load.
    """
    points = _probe_points(case)
    parsed = {v: _version(v) for v in {p[3] for p in points}}
    table = []
    for block in case.expect:
        w = block.when
        versions = {v: w.version is None or w.version.contains(pv, prereleases=True) for v, pv in parsed.items()}
        table.append([
            (w.x64 is None or w.x64 == mode.x64)
            and (w.explicit_x64_dtypes is None or mode.explicit_x64_dtypes in w.explicit_x64_dtypes)
            and (w.backend is None or backend in w.backend)
            and (w.adapter is None or adapter in w.adapter)
            and versions[version]
            for mode, backend, adapter, version in points
        ])
    return points, table


class WhenUnreachable(Rule):
    id = "WHEN-UNREACHABLE"
    doc = "Every expect block can be chosen for some mode, backend, adapter and version (first match wins)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        points, table = _match_table(case)
        taken = [False] * len(points)
        for block, matches in zip(case.expect, table, strict=True):
            chosen = False
            for i, hit in enumerate(matches):
                if hit and not taken[i]:
                    chosen = taken[i] = True
            if not chosen:
                yield self.error(spec, block.line, f"in case {case.id!r}: expect block (when {block.when.describe()}) can never be chosen; an earlier block covers it or its conditions contradict")


class WhenOverlap(Rule):
    id = "WHEN-OVERLAP"
    doc = "Two outcome blocks do not both match one mode: which one applies must not depend on their order (not_applicable blocks may carve out)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        points, table = _match_table(case)
        blocks = [(b, m) for b, m in zip(case.expect, table, strict=True) if b.not_applicable is None]
        for (a, a_hits), (b, b_hits) in itertools.combinations(blocks, 2):
            for (mode, backend, adapter, version), x, y in zip(points, a_hits, b_hits, strict=True):
                if x and y:
                    yield self.error(
                        spec, b.line,
                        f"in case {case.id!r}: this block and the one on line {a.line} both match "
                        f"{mode.label}, backend={backend}, adapter={adapter}, version {version}; make their `when` disjoint",
                    )
                    break


class GlobalConfigInProcess(Rule):
    id = "ISOLATE-MISSING"
    doc = ("A case that changes process-wide state (jax.config.update, os.environ, os.chdir, np.seterr) runs "
           "with `isolate: process`, or it leaks into later cases.")

    def check(self, spec: Spec) -> Iterator[SpecError]:
        shared = [c for c in spec.cases if c.isolate != "process"]
        if "setup" in spec.raw and shared:
            # File setup runs before every case, so a change there leaks from every shared case.
            code = Code(spec.raw["setup"], _line(spec.raw, "setup", 1))
            for line, what in global_changes(code):
                yield self.error(spec, line, f"the file's setup changes process-wide state ({what}) and runs before "
                                             f"{len(shared)} case(s) without `isolate: process`; move it into isolated cases")
        for case in shared:
            own = ([case.setup[-1]] if "setup" in case.raw else []) + [case.run]
            for code in own:
                for line, what in global_changes(code):
                    yield self.error(spec, line, f"case {case.id!r} changes process-wide state in-process ({what}); add `isolate: process`")


# Calls that change process-wide state, by the last two parts of their dotted name.
_STATE_CALLS = {
    ("config", "update"), ("environ", "update"), ("environ", "pop"), ("environ", "popitem"),
    ("environ", "setdefault"), ("environ", "clear"), ("environ", "__setitem__"), ("environ", "__delitem__"),
    ("os", "putenv"), ("os", "unsetenv"), ("os", "chdir"), ("os", "fchdir"), ("os", "umask"),
    ("np", "seterr"), ("numpy", "seterr"), ("np", "set_printoptions"), ("numpy", "set_printoptions"),
}


# Every change global_changes finds is spelled with one of these: a part of each _STATE_CALLS
# name ("chdir" also in "fchdir"), setattr, or an assignment into `...environ[...]` / `...config.x`.
_STATE_WORDS = ("config", "environ", "putenv", "unsetenv", "chdir", "umask", "seterr", "set_printoptions", "setattr")


def _dotted(node: ast.AST) -> str:
    """`jax.config.update` for an attribute chain, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def global_changes(code: Code) -> Iterator[tuple[int, str]]:
    """(spec line, what) for each statement in `code` that changes process-wide state.

    Read from the syntax tree, so a comment or a string that mentions config.update is not
    a change; code that does not compile is CODE-SYNTAX's business.
    """
    text = code.text
    if text.isascii() and not any(word in text for word in _STATE_WORDS):
        return  # no name that any change below is spelled with (non-ASCII names are NFKC-folded: parse those)
    try:
        tree = ast.parse(code.shifted())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    lines = code.shifted().splitlines()
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            tail = tuple(name.split(".")[-2:])
            if tail in _STATE_CALLS:
                what = name
            elif name == "setattr" and node.args and _dotted(node.args[0]).endswith("config"):
                what = f"setattr({_dotted(node.args[0])}, ...)"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and _dotted(target.value).split(".")[-1] == "environ":
                    what = f"{_dotted(target.value)}[...] {'deleted' if isinstance(node, ast.Delete) else 'assigned'}"
                elif isinstance(target, ast.Attribute) and _dotted(target.value).split(".")[-1] == "config":
                    what = f"{_dotted(target)} assigned"
        if what is not None:
            line = getattr(node, "lineno", code.line)
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            yield line, f"{what}: {text[:120]!r}"


class VersionRange(Rule):
    id = "VERSION-INVALID"
    doc = "`when.version` is a PEP 440 specifier set over release numbers (the loader rejects what does not parse)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for index, block in enumerate(case.expect):
            for s in block.when.version or ():
                line = _line(_raw_block(case, index).get("when"), "version", block.line)
                if s.operator == "===":
                    yield self.error(spec, line, f"in case {case.id!r}: {str(s)!r} compares version strings verbatim "
                                                 "and never matches a release like 0.10.2; use == or a range")
                elif Version(s.version.replace(".*", "")).local:
                    yield self.error(spec, line, f"in case {case.id!r}: {str(s)!r} names a local version; "
                                                 "ranges compare releases only")


class BasisGiven(Rule):
    id = "BASIS-MISSING"
    doc = ("Every case says what kind of requirement it is (`basis`: documented, tested, observed, unsupported), "
           "on the case or as its file's default: only documented and tested count as conformance.")

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.basis is None:
            yield self.error(spec, case.field_lines["id"], f"case {case.id!r} has no `basis` (documented, tested, observed or "
                                                           "unsupported); set it on the case or the file")


class DocumentedNeedsDoc(Rule):
    id = "DOCUMENTED-SOURCE"
    doc = "A `documented:` expectation names the documentation it comes from (a doc page or URL)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.documented is not None and not any("doc" in s or "url" in s for s in case.documented.source):
            yield self.error(spec, case.documented.line, f"case {case.id!r}: `documented` names no doc or url in its source")


class TestedNeedsTest(Rule):
    id = "BASIS-SOURCE"
    doc = "A case's source supports its basis: `documented` names a doc page or URL, `tested` a JAX test file (tests/...)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        supported = {
            "documented": ("doc or url", lambda s: "doc" in s or "url" in s),
            "tested": ("JAX test (file: tests/...)", lambda s: str(s.get("file", "")).startswith("tests/")),
        }.get(case.basis or "")
        if supported and not any(supported[1](s) for s in case.source):
            line = case.field_lines.get("source", case.field_lines.get("basis", case.field_lines["id"]))
            yield self.error(spec, line, f"case {case.id!r} is {case.basis} but its source names no {supported[0]}")


class CodeNames(Rule):
    id = "CODE-NAMES"
    doc = ("Spec code uses only names it defines or that the adapter provides (jax, jnp, np, lax, os, sys; `st`, "
           "`assume`, `note` and the drawn names with `given`; `result` in checks): a typo is the spec's bug, "
           "never a verdict on the implementation. Checked by pyflakes.")

    def check(self, spec: Spec) -> Iterator[SpecError]:
        names = SPEC_NAMES
        shared: frozenset[str] = frozenset()
        if "setup" in spec.raw:
            # The file's setup runs before every case: checked once, its names given to each case.
            setup = Code(spec.raw["setup"], _line(spec.raw, "setup", 1))
            for line, message in undefined_in([(setup.text, setup.line, None)], names):
                yield self.error(spec, line, f"in the file's setup: {message}")
            shared = bound_names(setup.text)
        for case in spec.cases:
            for line, message in undefined_names(case, names | shared, skip_file_setup="setup" in spec.raw):
                yield self.error(spec, line, f"in case {case.id!r}: {message}")


def _module_bound(table: symtable.SymbolTable) -> set[str]:
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}


def bound_names(text: str) -> frozenset[str]:
    """The names a piece of module code binds at its top level."""
    try:
        return frozenset(_module_bound(symtable.symtable(text, "<spec>", "exec")))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()


def _free_globals(table: symtable.SymbolTable, bound: set[str] | frozenset[str]) -> set[str]:
    """Names read in this scope, or in those inside it, that resolve to globals nothing binds."""
    module = table.get_type() == "module"
    out = {s.get_name() for s in table.get_symbols()
           if s.is_referenced() and (module or s.is_global()) and s.get_name() not in bound}
    for child in table.get_children():
        out |= _free_globals(child, bound)
    return out


def undefined_in(pieces: list[tuple[str, int, str | None]], names: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(spec line, message) for each undefined name in these pieces of code, run in order as one module.

    A piece is (text, its first spec line, a name to bind it to as an expression or None for
    statements). A symbol-table pass (C, ~50 us) settles most code: no name read that nothing
    binds. pyflakes (~1 ms) words the rest, and also finds a name read before its binding.
    """
    lines: list[str] = []
    where: list[int] = []
    for text, line, wrap in pieces:
        body = text.splitlines() or [""]
        if wrap is not None:
            lines.append(f"{wrap} = (")
            where.append(line)
        lines.extend(body)
        where.extend(range(line, line + len(body)))
        if wrap is not None:
            lines.append(")")
            where.append(line + len(body) - 1)
    text = "\n".join(lines) + "\n"
    try:
        table = symtable.symtable(text, "<spec>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # CODE-SYNTAX reports it
    if not _free_globals(table, _module_bound(table) | names | _BUILTINS):
        return
    from pyflakes import checker, messages

    for message in checker.Checker(ast.parse(text), filename="<spec>", builtins=set(names)).messages:
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal)):
            n = message.lineno
            yield where[n - 1] if 0 < n <= len(where) else pieces[0][1], message.message % message.message_args


_BUILTINS = frozenset(dir(builtins))


def undefined_names(case: Case, names: frozenset[str], skip_file_setup: bool = False) -> Iterator[tuple[int, str]]:
    """(spec line, message) for each name undefined in the case's code.

    The case's code is checked as one module in the order it runs: setup(s), run (an expression
    binds `result`), then every check of every block; lines map back to spec lines.
    """
    pieces: list[tuple[str, int, str | None]] = [(c.text, c.line, None) for c in case.setup[1 if skip_file_setup else 0:]]
    pieces.append((case.run.text, case.run.line, "result" if _code_compiles(case.run, "eval") else None))
    for block in case.expect + (case.documented.expect if case.documented else []):
        checks = block.outcome.get("check", [])
        for expr in [checks] if isinstance(checks, str) else checks:
            pieces.append((str(expr), block.line, "_check"))
    available = names | set(case.given) | ({"st", "assume", "note"} if case.given else set()) | {"result"}
    yield from undefined_in(pieces, frozenset(available))
    for name, strategy in case.given.items():
        for _, message in undefined_in([(strategy, 1, "_strategy")], names | {"st"}):
            yield case.raw["given"].value_lines[name], f"{message} in the strategy for {name!r}"


class GivenNamesUsed(Rule):
    id = "GIVEN-UNUSED"
    doc = "Every name drawn by `given` is used by setup, run or a check; an unused draw tests nothing."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if not case.given:
            return
        used: set[str] = set()
        texts = [c.text for c in case.setup] + [case.run.text]
        for _, outcome in _outcomes(case):
            checks = outcome.get("check", [])
            texts += [checks] if isinstance(checks, str) else list(checks)
        for text in texts:
            try:
                used |= {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        for name in case.given:
            if name not in used:
                yield self.error(spec, case.raw["given"].key_lines[name], f"case {case.id!r} draws {name!r} but never uses it")


SPEC_RULES: tuple[Rule, ...] = (
    IdPrefix(), DuplicateIdInFile(), UnknownTag(), InvalidRegex(), ExceptionName(), BuiltinClassName(),
    CodeSyntax(), DtypeName(), VersionRange(), WhenUnreachable(), WhenOverlap(), GlobalConfigInProcess(),
    GivenNamesUsed(), DocumentedNeedsDoc(), TestedNeedsTest(),
)
# Rules only `jax-conformance lint` applies: a spec that breaks them still loads and runs (its
# records say what they lack), but CI's lint refuses it.
LINT_ONLY_RULES: tuple[Rule, ...] = (BasisGiven(), CodeNames())
# Rules over expect blocks that apply to `documented:` blocks as well.
BLOCK_RULES: tuple[Rule, ...] = (InvalidRegex(), ExceptionName(), BuiltinClassName(), DtypeName(), VersionRange(),
                                 WhenUnreachable(), WhenOverlap())

RULE_IDS = {
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
                errors.append(SpecError(path, line, "ID-DUPLICATE-GLOBAL", f"case id {case_id!r} is also defined at {first[0]}:{first[1]}"))
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
            Mode(w.x64 if w.x64 is not None else False, next(iter(w.explicit_x64_dtypes or {"warn"}))),
            next(iter(w.backend or {"cpu"})), adapter, version,
        ):
            continue
        chosen.add(block.line)
    for block_line, line, name, _ in _class_names_by_block(case):
        if block_line in chosen:
            yield line, name
