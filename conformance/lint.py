"""Spec lint rules: one small class per rule, each with a stable id (after test262's linter).

YAML syntax, unsafe tags, duplicate keys and schema errors come from the loader
(`YAML-SYNTAX`, `YAML-UNSAFE-TAG`, `YAML-DUPLICATE-KEY`, `SCHEMA`, `VERSION-INVALID`);
the rules here run on a schema-valid model.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import yaml
from packaging.version import Version

from conformance.loader import SPECS_DIR, SpecError
from conformance.mode import EXPLICIT_MODES, Mode
from conformance.spec import Case, Code, Spec

TAGS_PATH = SPECS_DIR / "tags.yaml"

KNOWN_DTYPES = frozenset(
    "bool int4 int8 int16 int32 int64 uint4 uint8 uint16 uint32 uint64 "
    "float8_e4m3fn float8_e5m2 bfloat16 float16 float32 float64 complex64 complex128 float0 object".split()
)
# Versions probed when deciding whether `when` blocks can match or overlap: the releases
# of interest plus the boundaries named in the blocks themselves.
PROBE_VERSIONS = ("0.4.30", "0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.0", "0.9.2", "0.10.0", "0.10.2", "99.0")
PROBE_BACKENDS = ("cpu", "gpu", "tpu")
PROBE_ADAPTERS = ("jax", "reference")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# Calls that change process-wide JAX state; outside `isolate: process` they leak into later cases.
_GLOBAL_CONFIG = re.compile(r"\bconfig\.update\s*\(|\bjax\.config\.\w+\s*=(?!=)|os\.environ\[[^]]+\]\s*=(?!=)")


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
        for tag in spec.tags:
            if tag not in known:
                yield self.error(spec, spec.raw.key_lines.get("tags", 1), self._msg(tag, known))
        for case in spec.cases:
            for tag in case.raw.get("tags", ()):
                if tag not in known:
                    yield self.error(spec, case.field_lines["tags"], self._msg(tag, known))

    @staticmethod
    def _msg(tag: str, known: dict[str, str]) -> str:
        return f"unknown tag {tag!r}; add it to specs/tags.yaml or use one of: {', '.join(sorted(known))}"


def _outcomes(case: Case) -> Iterator[tuple[int, dict[str, Any]]]:
    for block in case.expect:
        yield block.line, block.outcome


class InvalidRegex(Rule):
    id = "REGEX-INVALID"
    doc = "`match` patterns of warns/raises compile as Python regular expressions."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for line, outcome in _outcomes(case):
            for pattern in _patterns(outcome):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    yield self.error(spec, line, f"in case {case.id!r}: match pattern {pattern!r} does not compile: {exc}")


def _patterns(outcome: dict[str, Any]) -> Iterator[str]:
    if isinstance(outcome.get("raises"), dict) and "match" in outcome["raises"]:
        yield outcome["raises"]["match"]
    for w in _warnings(outcome):
        if "match" in w:
            yield w["match"]


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
        for line, outcome in _outcomes(case):
            names = [outcome["raises"]["type"]] if "raises" in outcome else []
            names += [w["category"] for w in _warnings(outcome)]
            for name in names:
                if not _DOTTED.match(name):
                    yield self.error(spec, line, f"in case {case.id!r}: {name!r} is not a dotted class name")


class CodeSyntax(Rule):
    id = "CODE-SYNTAX"
    doc = "setup, run, check and given are Python that compiles; errors point at the spec line."

    def check(self, spec: Spec) -> Iterator[SpecError]:
        if "setup" in spec.raw:
            yield from self._compile(spec, "file setup", Code(spec.raw["setup"], spec.raw.value_lines["setup"]), "exec")
        for case in spec.cases:
            own_setup = case.setup[-1:] if "setup" in case.raw else []
            for code in own_setup:
                yield from self._compile(spec, f"setup of {case.id!r}", code, "exec")
            if not _compiles(case.run.shifted(), "eval"):
                yield from self._compile(spec, f"run of {case.id!r}", case.run, "exec")
            for name, strategy in case.given.items():
                yield from self._compile(spec, f"given.{name} of {case.id!r}", Code(strategy, case.raw["given"].value_lines[name]), "eval")
            for line, outcome in _outcomes(case):
                checks = outcome.get("check", [])
                for expr in [checks] if isinstance(checks, str) else checks:
                    yield from self._compile(spec, f"check of {case.id!r}", Code(expr, line), "eval")

    def _compile(self, spec: Spec, what: str, code: Code, mode: str) -> Iterator[SpecError]:
        try:
            compile(code.shifted(), str(spec.path), mode)
        except SyntaxError as exc:
            yield self.error(spec, exc.lineno or code.line, f"{what} is not valid Python: {exc.msg}")


def _compiles(source: str, mode: str) -> bool:
    try:
        compile(source, "<spec>", mode)
    except SyntaxError:
        return False
    return True


class DtypeName(Rule):
    id = "DTYPE-UNKNOWN"
    doc = "`dtype:` names a dtype JAX or NumPy knows, spelled as numpy spells it."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        for line, outcome in _outcomes(case):
            if "dtype" in outcome and outcome["dtype"] not in KNOWN_DTYPES:
                yield self.error(spec, line, f"in case {case.id!r}: unknown dtype {outcome['dtype']!r}")


def _probe_points(case: Case) -> list[tuple[Mode, str, str, str]]:
    versions = set(PROBE_VERSIONS)
    adapters = set(PROBE_ADAPTERS)
    backends = set(PROBE_BACKENDS)
    for block in case.expect:
        w = block.when
        if w.version is not None:
            for s in w.version:
                v = Version(s.version.replace(".*", ""))
                versions.update({str(v), _bump(v, -1), _bump(v, +1)})
        adapters |= set(w.adapter or ())
        backends |= set(w.backend or ())
    modes = [Mode(x, e) for x in (False, True) for e in EXPLICIT_MODES]
    return [(m, b, a, v) for m, b, a, v in itertools.product(modes, sorted(backends), sorted(adapters), sorted(versions))]


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


class WhenUnreachable(Rule):
    id = "WHEN-UNREACHABLE"
    doc = "Every expect block can be chosen for some mode, backend, adapter and version (first match wins)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        chosen = {case.select(*p[:1], p[1], p[2], p[3]).line for p in _probe_points(case) if case.select(*p[:1], p[1], p[2], p[3])}  # type: ignore[union-attr]
        for block in case.expect:
            if block.line not in chosen:
                yield self.error(spec, block.line, f"in case {case.id!r}: expect block (when {block.when.describe()}) can never be chosen; an earlier block covers it or its conditions contradict")


class WhenOverlap(Rule):
    id = "WHEN-OVERLAP"
    doc = "Two outcome blocks do not both match one mode: which one applies must not depend on their order (not_applicable blocks may carve out)."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        blocks = [b for b in case.expect if b.not_applicable is None]
        points = _probe_points(case)
        for a, b in itertools.combinations(blocks, 2):
            for mode, backend, adapter, version in points:
                if a.when.matches(mode, backend, adapter, version) and b.when.matches(mode, backend, adapter, version):
                    yield self.error(
                        spec, b.line,
                        f"in case {case.id!r}: this block and the one on line {a.line} both match "
                        f"{mode.label}, backend={backend}, adapter={adapter}, version {version}; make their `when` disjoint",
                    )
                    break


class GlobalConfigInProcess(Rule):
    id = "ISOLATE-MISSING"
    doc = "A case that changes process-wide config (config.update, os.environ) runs with `isolate: process`, or it leaks into later cases."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.isolate == "process":
            return
        own = ([case.setup[-1]] if "setup" in case.raw else []) + [case.run]
        for code in own:
            for offset, text in enumerate(code.text.splitlines()):
                if _GLOBAL_CONFIG.search(text) and not _inside_context(text):
                    yield self.error(spec, code.line + offset, f"case {case.id!r} changes global config in-process ({text.strip()!r}); add `isolate: process`")


def _inside_context(text: str) -> bool:
    return text.lstrip().startswith("with ")


class DriftNeedsSource(Rule):
    id = "DRIFT-SOURCE"
    doc = "A case marked with docs/code drift names the doc it disagrees with."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if case.drift is not None and not any("doc" in s or "url" in s for s in case.source):
            yield self.error(spec, case.field_lines["drift"], f"case {case.id!r} records drift from the docs but its source names no doc")


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
            except SyntaxError:
                continue
        for name in case.given:
            if name not in used:
                yield self.error(spec, case.raw["given"].key_lines[name], f"case {case.id!r} draws {name!r} but never uses it")


SPEC_RULES: tuple[Rule, ...] = (
    IdPrefix(), DuplicateIdInFile(), UnknownTag(), InvalidRegex(), ExceptionName(), CodeSyntax(),
    DtypeName(), WhenUnreachable(), WhenOverlap(), GlobalConfigInProcess(), DriftNeedsSource(), GivenNamesUsed(),
)

RULE_IDS = {
    "YAML-SYNTAX": "The file parses as YAML.",
    "YAML-UNSAFE-TAG": "No YAML tags that would construct Python objects.",
    "YAML-DUPLICATE-KEY": "No key appears twice in one mapping.",
    "SCHEMA": "The file matches specs/schema.json.",
    "VERSION-INVALID": "`when.version` is a PEP 440 specifier set.",
    "FILE-TOO-LARGE": "A spec file stays under the size limit.",
    "FILE-ENCODING": "A spec file is UTF-8.",
    "FILE-UNREADABLE": "A spec file can be read.",
    "ID-DUPLICATE-GLOBAL": "Case ids are unique across all spec files.",
    "EXC-UNRESOLVED": "Exception and warning names resolve in the adapter's namespace.",
    **{rule.id: rule.doc for rule in SPEC_RULES},
}


def check_spec(spec: Spec) -> list[SpecError]:
    return [error for rule in SPEC_RULES for error in rule.check(spec)]


def duplicate_ids(specs: Iterable[Spec]) -> list[SpecError]:
    """ID-DUPLICATE-GLOBAL: the same case id in two files."""
    seen: dict[str, tuple[Path, int]] = {}
    errors = []
    for spec in specs:
        for case in spec.cases:
            if case.id in seen and seen[case.id][0] != spec.path:
                first = seen[case.id]
                errors.append(SpecError(spec.path, case.field_lines["id"], "ID-DUPLICATE-GLOBAL", f"case id {case.id!r} is also defined at {first[0]}:{first[1]}"))
            else:
                seen.setdefault(case.id, (spec.path, case.field_lines["id"]))
    return errors


def exception_names(case: Case, adapter: str, version: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every class named in the blocks this adapter/version can choose."""
    for block in case.expect:
        w = block.when
        if w.adapter is not None and adapter not in w.adapter:
            continue
        if w.version is not None and not block.when.matches(
            Mode(w.x64 if w.x64 is not None else False, next(iter(w.explicit_x64_dtypes or {"warn"}))),
            next(iter(w.backend or {"cpu"})), adapter, version,
        ):
            continue
        if "raises" in block.outcome:
            yield block.line, block.outcome["raises"]["type"]
        for warning in _warnings(block.outcome):
            yield block.line, warning["category"]
