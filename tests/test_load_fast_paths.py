"""The loader's and the linter's fast paths find exactly what the plain ways find.

Each fast path (the compiled schema check, the WHEN rules' probe points, the process-state
prefilter) is switched off here and the results compared, spec by spec and error by error,
over the real specs, the lint fixtures, generated `when` blocks and hundreds of mutants of
them. The YAML construction has no second way to compare with: its values are compared with
yaml.safe_load's, its lines with those of the nodes PyYAML composes, and its refusals with
fixed expected errors.
"""

from __future__ import annotations

import ast
import datetime
import itertools
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from jax_conformance.errors import SpecError, SpecFileErrors
from jax_conformance.mode import EXPLICIT_MODES, Mode
from jax_conformance.spec import code_rules, schema, when_rules
from jax_conformance.spec.cache import SpecCache
from jax_conformance.spec.loader import is_spec_file, load_spec
from jax_conformance.spec.model import Case, Code
from jax_conformance.spec.yaml import MarkedList, MarkedMap, parse_yaml
from packaging.version import InvalidVersion, Version

from tests.test_lint import FIXTURES, REPO, _mutants

SOURCES = [p for p in sorted((REPO / "specs").rglob("*.yaml")) if is_spec_file(p)] + sorted(
    FIXTURES.rglob("*.yaml")
)
# The sources without table cases: a table case expands to thousands of cells from its cells file
# (specs/promotion/table.yaml is 7 of the 9 s one pass over SOURCES takes), which the YAML fast
# paths do not touch; the tests that load every source many times (mutants, lint twice) use these,
# the ones that load each source once keep the table.
PLAIN_SOURCES = [
    p
    for p in SOURCES
    if "\ntable:" not in p.read_text(encoding="utf-8", errors="replace")
    and "    table:" not in p.read_text(encoding="utf-8", errors="replace")
]


def _all_probe_points(case: Case) -> list[tuple[Mode, str, str, str]]:
    """The WHEN rules' probe points before they dropped the dimensions no block names: the full product."""
    versions = set(when_rules.PROBE_VERSIONS)
    adapters = set(when_rules.PROBE_ADAPTERS)
    backends = set(when_rules.PROBE_BACKENDS)
    flag_values: dict[str, set[object]] = {}
    for block in case.expect:
        w = block.when
        for name, value in w.flags or ():
            flag_values.setdefault(name, {True, False, when_rules._ABSENT}).add(value)
        if w.version is not None:
            for s in w.version:
                try:
                    v = Version(s.version.replace(".*", ""))
                except InvalidVersion:
                    continue
                versions.update({str(v), when_rules._bump(v, -1), when_rules._bump(v, +1)})
        adapters |= set(w.adapter or ())
        backends |= set(w.backend or ())
    # Every x64 mode times every value (and the absence) of each flag a block names.
    return list(
        itertools.product(
            when_rules._modes_with(flag_values),
            sorted(backends),
            sorted(adapters),
            sorted(versions),
        )
    )


@pytest.fixture
def plain_ways(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A function that switches every fast path off (for the rest of the test)."""

    def off() -> None:
        monkeypatch.setattr(schema, "fast_validator", lambda: None)
        monkeypatch.setattr(when_rules, "_probe_points", _all_probe_points)
        monkeypatch.setattr(
            code_rules, "_STATE_WORDS", ("",)
        )  # "" is in every text: every code is parsed
        monkeypatch.setattr(
            code_rules,
            "_code_compiles",
            lambda code, mode: code_rules._compiles(code.shifted(), mode),
        )

    return off


def _outcome(path: Path) -> Any:
    """What loading gives: the model's essentials, or every error as written."""
    try:
        spec = load_spec(path)
    except SpecFileErrors as exc:
        return [e.format() for e in exc.errors]
    return [
        (
            c.id,
            c.line,
            c.field_lines,
            c.tags,
            c.setup,
            c.run,
            c.given,
            c.env,
            c.timeout,
            c.basis,
            c.documented,
            [(b.line, b.when, b.expected) for b in c.expect],
        )
        for c in spec.cases
    ] + [spec.raw]


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _marks_match_nodes(doc: Any, node: yaml.Node, where: str) -> None:
    """Each mapping, key, value and item of `doc` carries the line PyYAML's node for it starts on."""
    if isinstance(node, yaml.MappingNode):
        assert isinstance(doc, MarkedMap) and doc.line == node.start_mark.line + 1, where
        assert len(doc) == len(node.value), where
        for (key, value), (key_node, value_node) in zip(doc.items(), node.value, strict=True):
            block = isinstance(value_node, yaml.ScalarNode) and value_node.style in ("|", ">")
            assert doc.key_lines[key] == key_node.start_mark.line + 1, (where, key)
            assert doc.value_lines[key] == value_node.start_mark.line + 1 + block, (where, key)
            _marks_match_nodes(value, value_node, f"{where}.{key}")
    elif isinstance(node, yaml.SequenceNode):
        assert isinstance(doc, MarkedList) and doc.line == node.start_mark.line + 1, where
        assert doc.item_lines == [child.start_mark.line + 1 for child in node.value], where
        for i, (item, child) in enumerate(zip(doc, node.value, strict=True)):
            _marks_match_nodes(item, child, f"{where}[{i}]")


def _unmarked(value: Any) -> Any:
    """Plain dicts (keys as the loader spells them: str()) and lists, as yaml.safe_load would give."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _unmarked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _check_yaml(text: str) -> str:
    """The spec YAML of `text` against PyYAML's own reading of it; returns what parse_yaml gave ("ok" or a rule id)."""
    try:
        doc = parse_yaml(text, Path("t.yaml"))
    except SpecError as exc:
        if exc.rule in ("YAML-SYNTAX", "YAML-UNSAFE-TAG"):
            with pytest.raises(yaml.YAMLError):
                yaml.load(text, Loader=_Loader)
        elif exc.rule == "YAML-DUPLICATE-KEY":
            key = ast.literal_eval(
                exc.message.removeprefix("duplicate key ").split(" (first on line")[0]
            )
            assert text.count(key) >= 2, exc.message
        return exc.rule
    assert _unmarked(doc) == _unmarked(yaml.load(text, Loader=_Loader))
    if (
        "<<" not in text
    ):  # merging rewrites the nodes: their marks are checked by the fixed cases below
        _marks_match_nodes(doc, yaml.compose(text, Loader=_Loader), "top")
    return "ok"


def _compare(paths: list[Path], plain_ways: Any) -> int:
    kinds = [_check_yaml(p.read_bytes().decode("utf-8", "replace")) for p in paths]
    assert kinds.count("ok") > len(paths) // 3
    fast = [_outcome(p) for p in paths]
    plain_ways()
    plain = [_outcome(p) for p in paths]
    for path, a, b in zip(paths, fast, plain, strict=True):
        assert a == b, f"{path}: fast {a!r}\nplain {b!r}"
    return sum(isinstance(x, list) and bool(x) and isinstance(x[0], str) for x in fast)


def test_fast_paths_are_taken() -> None:
    """On valid specs the fast path answers itself (else it would only cost time)."""
    validator = schema.fast_validator()
    assert validator is not None
    for path in SOURCES[:5]:
        validator(
            parse_yaml(path.read_text(encoding="utf-8"), path)
        )  # raises if the compiled check rejects a valid spec


def test_same_results_on_real_specs_and_fixtures(plain_ways: Any) -> None:
    errors = _compare(SOURCES, plain_ways)
    assert errors >= 30  # the fixtures' errors were compared, not just clean files


def test_same_results_on_mutants(tmp_path: Path, plain_ways: Any) -> None:
    rng = random.Random(20261129)
    paths = []
    for source in PLAIN_SOURCES:
        for k, mutant in enumerate(_mutants(source.read_text(encoding="latin-1"), rng, 6)):
            path = tmp_path / f"{source.stem}-{k}.yaml"
            path.write_text(mutant, encoding="latin-1")
            paths.append(path)
    errors = _compare(paths, plain_ways)
    assert errors > len(paths) // 3


_BACKENDS = ("cpu", "gpu", "tpu", "cuda")
_ADAPTERS = ("jax", "reference", "other")
_VERSIONS = (
    ">=0.5",
    "<0.8.0",
    "==0.4.*",
    ">0.10.0,<0.10.2",
    "===0.9",
    "!=0.6.2",
    "~=0.7.1",
    ">=0.10.2",
    "<0.4.30",
    ">=0.6,<0.6",
)


def _when_case(rng: random.Random, topic: str, i: int) -> str:
    blocks = []
    for _ in range(rng.randint(1, 4)):
        when: dict[str, Any] = {}
        if rng.random() < 0.4:
            when["x64"] = rng.random() < 0.5
        if rng.random() < 0.3:
            when["explicit_x64_dtypes"] = rng.sample(EXPLICIT_MODES, rng.randint(1, 3))
        if rng.random() < 0.3:
            when["backend"] = rng.sample(_BACKENDS, rng.randint(1, 3))
        if rng.random() < 0.3:
            when["adapter"] = rng.choice(_ADAPTERS)
        if rng.random() < 0.3:
            when["version"] = rng.choice(_VERSIONS)
        outcome = {"not_applicable": "n/a"} if rng.random() < 0.2 else {"dtype": "int32"}
        blocks.append({"when": when, **outcome} if when or rng.random() < 0.5 else outcome)
    case = {"id": f"{topic}.c{i}", "claim": "generated", "run": "jnp.arange(3)", "expect": blocks}
    return yaml.safe_dump([case], sort_keys=False)


def test_same_when_findings_on_generated_blocks(tmp_path: Path, plain_ways: Any) -> None:
    """WHEN-UNREACHABLE and WHEN-OVERLAP, word for word, over random `when` blocks in every dimension."""
    rng = random.Random(7)
    paths = []
    for n in range(30):
        head = f"topic: gen.t{n}\nsource: {{doc: docs/x.md}}\ncases:\n"
        cases = "".join(_when_case(rng, f"gen.t{n}", i) for i in range(20))
        path = tmp_path / f"t{n}.yaml"
        path.write_text(head + cases, encoding="utf-8")
        paths.append(path)
    fast = [_outcome(p) for p in paths]
    when_errors = sum(
        1 for x in fast if isinstance(x, list) for e in x if isinstance(e, str) and " WHEN-" in e
    )
    assert when_errors > 50
    _compare(paths, plain_ways)


def test_construction_on_aliases_and_scalars() -> None:
    text = """\
a: &x {k: [1, 2.5, true, null, ~, 0x1F, 1e3, .inf, "q", 'r']}
b: *x
c: [*x, *x]
1: one
true: yes
null: nothing
2.5: float key
d: |
  block
e: >
  folded
f: !!str 12
"""
    doc = parse_yaml(text, Path("t.yaml"))
    a = {
        "k": [1, 2.5, True, None, None, 31, "1e3", float("inf"), "q", "r"]
    }  # YAML 1.1: a float has a dot
    # Keys as str() spells them (a plain dict would fold the keys 1 and true into one).
    assert _unmarked(doc) == {
        "a": a,
        "b": a,
        "c": [a, a],
        "1": "one",
        "True": True,
        "None": "nothing",
        "2.5": "float key",
        "d": "block\n",
        "e": "folded\n",
        "f": "12",
    }
    assert doc.key_lines == {
        "a": 1,
        "b": 2,
        "c": 3,
        "1": 4,
        "True": 5,
        "None": 6,
        "2.5": 7,
        "d": 8,
        "e": 10,
        "f": 12,
    }
    assert doc.value_lines == {
        "a": 1,
        "b": 1,
        "c": 3,
        "1": 4,
        "True": 5,
        "None": 6,
        "2.5": 7,
        "d": 9,
        "e": 11,
        "f": 12,
    }
    assert (doc["a"].line, doc["a"]["k"].line, doc["a"]["k"].item_lines) == (1, 1, [1] * 10)
    assert (doc["c"].line, doc["c"].item_lines) == (
        3,
        [1, 1],
    )  # an alias has the line of the node it names, as `b` has
    assert [type(v) for v in doc["a"]["k"]] == [
        int,
        float,
        bool,
        type(None),
        type(None),
        int,
        str,
        float,
        str,
        str,
    ]
    assert (
        doc["b"] is doc["a"] and doc["c"][0] is doc["a"]
    )  # aliases share one object, as PyYAML's construction does
    _marks_match_nodes(doc, yaml.compose(text, Loader=_Loader), "top")


_BOMB = "".join(f"l{i + 1}: &l{i + 1} [{', '.join([f'*l{i}'] * 9)}]\n" for i in range(5))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Plain YAML that is not a spec's everyday kind: built as PyYAML builds it, with marks.
        ("a: 2001-12-14\n", {"a": datetime.date(2001, 12, 14)}),
        ("a: !!binary aGk=\n", {"a": b"hi"}),
        ("a: !!set {x}\n", {"a": {"x"}}),
        ("a: !!omap [{x: 1}, {y: 2}]\n", {"a": [("x", 1), ("y", 2)]}),
        ("? [1]\n: x\n", {"[1]": "x"}),
        ("<<: {a: 1}\nb: 2\n", {"a": 1, "b": 2}),
        (
            "a: &b {x: 1}\nc:\n  <<: [*b, {z: 3}]\n  y: 2\n",
            {"a": {"x": 1}, "c": {"x": 1, "z": 3, "y": 2}},
        ),
        # Refused, at the line of the cause.
        (
            "a: !!python/name:os.system x\n",
            (
                "YAML-UNSAFE-TAG",
                1,
                "could not determine a constructor for the tag 'tag:yaml.org,2002:python/name:os.system'",
            ),
        ),
        (
            "a: !local 1\n",
            ("YAML-UNSAFE-TAG", 1, "could not determine a constructor for the tag '!local'"),
        ),
        (
            "a: !foo {x: 1}\n",
            ("YAML-UNSAFE-TAG", 1, "could not determine a constructor for the tag '!foo'"),
        ),
        (
            "<<: 1\n",
            (
                "YAML-UNSAFE-TAG",
                1,
                "expected a mapping or list of mappings for merging, but found scalar",
            ),
        ),
        ("a: 1\na: 2\n", ("YAML-DUPLICATE-KEY", 2, "duplicate key 'a' (first on line 1)")),
        ("a: {b: 1, b: 2}\n", ("YAML-DUPLICATE-KEY", 1, "duplicate key 'b' (first on line 1)")),
        (
            "a: &b {x: 1}\nc:\n  <<: *b\n  x: 2\n",
            ("YAML-DUPLICATE-KEY", 4, "duplicate key 'x' (first on line 1)"),
        ),
        ("a: &r [*r]\n", ("YAML-TOO-LARGE", 1, "the document refers to itself through an alias")),
        (
            "l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + _BOMB,
            (
                "YAML-TOO-LARGE",
                1,
                "with its aliases expanded the document has 672,610 nodes, over the 200,000 limit",
            ),
        ),
        # Too large says so first, whatever else is wrong.
        (
            "l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + _BOMB + "d: 1\nd: 2\n",
            ("YAML-TOO-LARGE", 1, "672,614 nodes"),
        ),
        (
            "l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + _BOMB + "d: !foo 1\n",
            ("YAML-TOO-LARGE", 1, "672,612 nodes"),
        ),
    ],
)
def test_yaml_beyond_the_everyday(text: str, expected: Any) -> None:
    if (
        isinstance(expected, tuple)
        and isinstance(expected[0], str)
        and expected[0].startswith("YAML-")
    ):
        with pytest.raises(SpecError) as info:
            parse_yaml(text, Path("t.yaml"))
        assert (info.value.rule, info.value.line) == expected[:2]
        assert expected[2] in info.value.message
    else:
        assert _unmarked(parse_yaml(text, Path("t.yaml"))) == expected


def test_merged_keys_keep_the_lines_they_were_written_on() -> None:
    doc = parse_yaml("a: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n", Path("t.yaml"))
    assert (doc["c"].line, doc["c"].key_lines, doc["c"].value_lines) == (
        3,
        {"x": 1, "y": 4},
        {"x": 1, "y": 4},
    )


def test_state_words_spell_every_state_change() -> None:
    for parts in code_rules._STATE_CALLS:
        assert any(word in part for part in parts for word in code_rules._STATE_WORDS), parts


@pytest.mark.parametrize(
    "text", ["jax.ｃonfig.update('jax_enable_x64', True)", "os.ｅnviron['A'] = '1'"]
)
def test_state_changes_spelled_with_non_ascii_names_are_still_found(text: str) -> None:
    assert list(code_rules.global_changes(Code(text, 1)))


# ---------------------------------------------------------------- the cache of loaded specs and the parallel lint


def _outcome_with(path: Path, cache: SpecCache | None) -> Any:
    try:
        spec = load_spec(path, cache=cache)
    except SpecFileErrors as exc:
        return [e.format() for e in exc.errors]
    return [
        (
            c.id,
            c.line,
            c.field_lines,
            c.tags,
            c.setup,
            c.run,
            [(b.line, b.when, b.expected) for b in c.expect],
        )
        for c in spec.cases
    ] + [
        spec.raw,
        getattr(spec.raw, "key_lines", None),
        getattr(spec.raw, "value_lines", None),
        [getattr(c.raw, "value_lines", None) for c in spec.cases],
    ]


def test_cache_serves_the_same_spec(tmp_path: Path) -> None:
    cache = SpecCache(tmp_path / "cache")
    for source in SOURCES:
        assert _outcome_with(source, cache) == _outcome_with(
            source, None
        )  # first load: fills the cache
        assert _outcome_with(source, cache) == _outcome_with(source, None)  # second: from it
    entries = list((tmp_path / "cache").iterdir())
    assert (
        10 <= len(entries) < len(SOURCES)
    )  # valid specs only: files with errors are loaded again each time


def test_cache_never_serves_a_stale_spec(tmp_path: Path) -> None:
    """A same-size rewrite with the old mtime restored still loads the new text."""
    import os

    cache = SpecCache(tmp_path / "cache")
    spec_path = tmp_path / "t.yaml"
    text = (
        "topic: t\nsource: {doc: d.md}\ncases:\n  - id: t.aaa\n    claim: c\n    run: "
        "jnp.arange(3)\n    expect:\n      - dtype: int32\n"
    )
    spec_path.write_text(text, encoding="utf-8")
    assert load_spec(spec_path, cache=cache).cases[0].id == "t.aaa"
    stat = spec_path.stat()
    spec_path.write_text(text.replace("t.aaa", "t.bbb").replace("int32", "int64"), encoding="utf-8")
    os.utime(spec_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert spec_path.stat().st_size == stat.st_size
    spec = load_spec(spec_path, cache=cache)
    assert (spec.cases[0].id, spec.cases[0].expect[0].expected) == ("t.bbb", {"dtype": "int64"})
    # A harness change (another fingerprint) does not see the entries of the old one.
    other = SpecCache(tmp_path / "cache")
    other._fingerprint = b"another harness"
    assert other.get(spec_path, spec_path.read_text(encoding="utf-8")) is None
    # A broken entry is a miss, not an error.
    for entry in (tmp_path / "cache").iterdir():
        entry.write_bytes(SpecCache.digest(spec_path.read_text(encoding="utf-8")) + b"garbage")
    assert load_spec(spec_path, cache=cache).cases[0].id == "t.bbb"


def test_cache_off_by_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(tmp_path))
    cache = SpecCache.default()
    assert cache is not None and cache.root == tmp_path / "specs"
    monkeypatch.setenv("JAX_CONFORMANCE_SPEC_CACHE", "0")
    assert SpecCache.default() is None


def test_parallel_lint_finds_what_the_sequential_one_finds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from jax_conformance.commands import lint as lintcli

    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(tmp_path))
    paths = [*(p for p in PLAIN_SOURCES if p.is_relative_to(REPO / "specs")), FIXTURES]
    monkeypatch.setattr(lintcli, "_free_cpus", lambda: 1)
    sequential, n = lintcli.lint_paths(paths)
    monkeypatch.setattr(lintcli, "_free_cpus", lambda: 3)
    monkeypatch.setattr(lintcli, "is_large_load", lambda files: True)
    called = []
    original = lintcli._lint_in_parallel
    monkeypatch.setattr(lintcli, "_lint_in_parallel", lambda *a: called.append(a) or original(*a))
    parallel, m = lintcli.lint_paths(paths)
    assert called and n == m
    assert [e.format() for e in parallel] == [e.format() for e in sequential]
    assert any(e.rule == "ID-DUPLICATE-GLOBAL" for e in parallel)


def test_cache_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = SpecCache(tmp_path / "cache")
    monkeypatch.setattr(cache, "MAX_ENTRIES", 8)
    monkeypatch.setattr(cache, "PRUNE_EVERY", 4)
    spec = load_spec(SOURCES[0])
    for i in range(40):
        cache.put(Path(f"spec-{i}.yaml"), "text", spec)
        assert len(list((tmp_path / "cache").iterdir())) <= 8 + 4


@pytest.mark.parametrize(
    "text",
    [
        "x = 1",
        "  x = 1",
        "\tx = 1",
        "\x0cx = 1",
        "\x0c  x = 1",
        "\ufeffx = 1",
        "# coding: latin-1\nx = 'é'",
        "# -*- coding: nosuch -*-\nx = 1",
        "\\\nx = 1",
        "x = (1,\n",
        "'''open",
        "return 1",
        "yield 1",
        "await x",
        "nonlocal x",
        "break",
        "def f():\n  return\n x",
        "x := 1",
        "(x := 1)",
        "a, *b",
        "*a",
        "lambda: (yield)",
        "f(**x, *y)",
        "del f()",
        "x = 1\n\n\n",
        "",
        "\n",
        "if x:\npass",
        "print 'x'",
        "0777",
        "1_000",
        "x = 'a\\\nb'",
    ],
)
def test_blank_lines_before_code_change_no_compile_verdict(text: str) -> None:
    for mode in ("exec", "eval"):
        verdict = code_rules._compiles(text, mode)
        for pad in (1, 2, 3, 500):
            assert code_rules._compiles("\n" * pad + text, mode) == verdict, (mode, pad)


def test_one_of_becomes_any_of_only_when_its_branches_are_disjoint() -> None:
    root = {"$defs": {"obj": {"type": "object"}, "loose": {"minLength": 1}}}
    assert schema._disjoint([{"type": "string"}, {"type": "array"}], root)
    assert schema._disjoint([{"const": "none"}, {"$ref": "#/$defs/obj"}, {"type": "array"}], root)
    assert schema._disjoint([{"enum": ["a", "b"]}, {"type": ["array", "null"]}], root)
    assert not schema._disjoint([{"type": "integer"}, {"type": "number"}], root)
    assert not schema._disjoint([{"const": 1}, {"type": "number"}], root)
    assert not schema._disjoint([{"type": "string"}, {"$ref": "#/$defs/loose"}], root)
    assert not schema._disjoint([{"type": "string"}, {"minLength": 2}], root)
    assert not schema._disjoint(
        [{"enum": ["a"]}, {"enum": ["b"]}], root
    )  # disjoint values, same type: left as oneOf


def test_no_compiled_check_for_a_pattern_it_would_read_more_loosely() -> None:
    with pytest.raises(ValueError):
        schema._draft7({"type": "string", "pattern": "^a(?!b$)"})
    assert schema._draft7({"type": "string", "pattern": "^a+$"}) == {
        "type": "string",
        "pattern": "^a+$",
    }
    with pytest.raises(ValueError):
        schema._draft7({"enum": [1, 2]})  # True == 1 in Python, not in JSON Schema


def test_lint_workers_only_on_a_machine_with_room(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from jax_conformance.commands import lint as lintcli

    monkeypatch.setattr(lintcli, "_cpus", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 1.0, 1.0))
    assert lintcli._free_cpus() == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (3.1, 1.0, 1.0))
    assert lintcli._free_cpus() == 1


# ---------------------------------------------------------------- the layers of jax_conformance.spec


def _spec_imports() -> dict[str, set[str]]:
    """For each module of jax_conformance.spec, the modules of it that it imports (anywhere, typing-only too)."""
    from jax_conformance import PACKAGE_DIR

    graph: dict[str, set[str]] = {}
    for file in sorted((PACKAGE_DIR / "spec").glob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "jax_conformance.spec":
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "jax_conformance.spec."
            ):
                names.add(str(node.module).split(".")[2])
            elif isinstance(node, ast.Import):
                names |= {
                    a.name.split(".")[2]
                    for a in node.names
                    if a.name.startswith("jax_conformance.spec.")
                }
        graph[file.stem] = names - {file.stem}
    return graph


def test_spec_modules_import_each_other_without_a_cycle() -> None:
    graph = _spec_imports()
    assert {"yaml", "schema", "cache", "loader", "rules", "model"} <= set(graph)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n}))
            for n in graph.get(start, ())
        )

    for module in graph:
        assert not reaches(module, module, set()), (
            f"{module} imports itself through {sorted(graph[module])}"
        )
    # The layers: the model and the YAML know nothing of loading, the rules nothing of the loader.
    assert not graph["model"] & {"yaml", "schema", "loader", "rules", "cache"}
    assert not graph["yaml"] & {"schema", "loader", "rules", "cache"}
    for module in ("rules", "rule_base", "when_rules", "code_rules", "cache"):
        assert "loader" not in graph[module], module


def test_cache_fingerprint_covers_every_pickled_class(tmp_path: Path) -> None:
    """A cached spec is a pickle naming classes by module: each such module's source is part of the
    fingerprint, so changing one of them (a record or protocol type, say) cannot serve a stale entry."""
    import pickletools
    import sys

    from jax_conformance.spec import cache as cache_module

    harness = {p.resolve() for p in cache_module._harness_files()}
    named: set[str] = set()
    for source in [REPO / "specs" / "x64" / "enable_x64.yaml", *PLAIN_SOURCES[:20]]:
        spec = load_spec(source)
        strings = [
            arg for op, arg, _ in pickletools.genops(pickle.dumps(spec)) if isinstance(arg, str)
        ]
        # STACK_GLOBAL takes a module and a name pushed as strings just before it.
        named |= {s for s in strings if s.startswith("jax_conformance.") and s in sys.modules}
    assert named, "no jax_conformance class found in the pickles"
    missing = {m for m in named if Path(sys.modules[m].__file__ or "").resolve() not in harness}
    assert not missing, f"modules pickled in cached specs but not in the fingerprint: {missing}"


def test_match_tables_kept_per_when_tuple_are_each_cases_own() -> None:
    """The WHEN rules keep one match table per tuple of `when`s (a table's cells share a few): for
    every cell of a real table spec, the kept table is the one computed for that cell alone."""
    spec = load_spec(REPO / "specs" / "promotion" / "families.yaml")
    assert len(spec.cases) > 400
    kept = {id(when_rules._match_table(case)) for case in spec.cases}
    assert len(kept) < len(spec.cases) // 10  # shared, or it would save nothing
    for case in spec.cases:
        assert when_rules._match_table(case) == when_rules._compute_match_table(case), case.id
