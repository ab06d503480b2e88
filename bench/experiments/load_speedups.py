"""Experiment: where loading a spec goes, and what three changes to loader.py / lint.py would save.

    .venv/bin/python bench/experiments/load_speedups.py [CASES]

Writes CASES synthetic cases (default 2,000), then times `load_spec` over them stage by stage
and with each change applied as a monkeypatch, checking that every variant gives the same
`Spec`s (and, for the schema change, the same errors on the broken-spec fixtures). The
harness files are not edited; the patches here are the recommended changes, measured.

  A. lint `_probe_points`: probe only the dimensions some `when` block conditions on, and
     build the match table once per case for both WHEN rules (now: 6 modes x 3 backends x 2
     adapters x 10+ versions = 360+ points, twice per case, whatever the blocks say).
  B. loader `schema_errors`: a compiled validator (fastjsonschema) decides valid/invalid;
     jsonschema runs only for an invalid file, to word its errors as today.
  T. lint `known_tags`: read specs/tags.yaml once per process, not once per spec file (the
     TAG-UNKNOWN rule and plugin.SpecFile.collect each call it per file, with the pure-Python
     YAML loader).
  C. A, B and T together.
  D. a cache of loaded specs keyed by (path, size, mtime, harness version): what a second
     process (each mode of the matrix, each xdist worker, collection after lint) would pay
     instead of loading: pickle.loads of the Specs.
"""

from __future__ import annotations

import functools
import json
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402
from jax_conformance.mode import EXPLICIT_MODES, Mode  # noqa: E402
from jax_conformance.spec import loader  # noqa: E402
from jax_conformance.spec import rules as lint  # noqa: E402
from jax_conformance.spec.model import Case  # noqa: E402

from bench.synthetic import write_specs  # noqa: E402


def fast_probe_points(case: Case) -> list[tuple[Mode, str, str, str]]:
    """Change A: the same probes, minus the dimensions no block of this case mentions."""
    whens = [b.when for b in case.expect]
    points = _ORIGINAL_PROBE(case)
    keep_backend = any(w.backend is not None for w in whens)
    keep_adapter = any(w.adapter is not None for w in whens)
    keep_version = any(w.version is not None for w in whens)
    if keep_backend and keep_adapter and keep_version:
        return points
    seen: dict[tuple[Any, ...], tuple[Mode, str, str, str]] = {}
    for p in points:
        # A dimension no block conditions on cannot change any block's answer: one value stands for all.
        key = (p[0], p[1] if keep_backend else None, p[2] if keep_adapter else None, p[3] if keep_version else None)
        seen.setdefault(key, p)
    return list(seen.values())


def fast_probe_points_direct(case: Case) -> list[tuple[Mode, str, str, str]]:
    """Change A without building the full product first (what lint.py itself would do)."""
    whens = [b.when for b in case.expect]
    if all(w.backend is None and w.adapter is None and w.version is None for w in whens):
        modes = [Mode(x, e) for x in (False, True) for e in EXPLICIT_MODES]
        # The first point of each mode in the full product's order, so error messages stay word for word.
        first = (min(lint.PROBE_BACKENDS), min(lint.PROBE_ADAPTERS), min(lint.PROBE_VERSIONS))
        return [(m, *first) for m in modes]
    return fast_probe_points(case)


_ORIGINAL_PROBE = lint._probe_points
_ORIGINAL_TABLE = lint._match_table
_ORIGINAL_SCHEMA = loader.schema_errors
_ORIGINAL_TAGS = lint.known_tags
_cached_tags = functools.cache(_ORIGINAL_TAGS)


_TABLES: dict[int, tuple[Case, Any]] = {}


def cached_match_table(case: Case) -> Any:
    """One match table per case for both WHEN rules (a Case is unhashable: keyed by identity)."""
    hit = _TABLES.get(id(case))
    if hit is None or hit[0] is not case:
        hit = _TABLES[id(case)] = (case, _ORIGINAL_TABLE(case))
    return hit[1]


@functools.cache
def _compiled() -> Any:
    sys.path.insert(0, "/tmp/bench-scratch/pylib")  # fastjsonschema installed with pip --target, not into the venv
    import fastjsonschema

    def draft7(node: Any) -> Any:
        # fastjsonschema knows drafts 4-7: the one 2020-12 keyword the schema uses has a draft-7 spelling.
        if isinstance(node, dict):
            return {("dependencies" if k == "dependentRequired" else k): draft7(v) for k, v in node.items()
                    if k != "$schema"}
        if isinstance(node, list):
            return [draft7(v) for v in node]
        return node

    return fastjsonschema.compile({"$schema": "http://json-schema.org/draft-07/schema#", **draft7(loader.schema())})


def fast_schema_errors(doc: Any, path: Path) -> list[loader.SpecError]:
    """Change B: compiled validation; the jsonschema walk only words the errors of an invalid file."""
    try:
        _compiled()(doc)
        return []
    except Exception:
        return _ORIGINAL_SCHEMA(doc, path)


def apply(variant: str) -> None:
    lint._probe_points = _ORIGINAL_PROBE
    lint._match_table = _ORIGINAL_TABLE
    loader.schema_errors = _ORIGINAL_SCHEMA
    lint.known_tags = _ORIGINAL_TAGS
    _TABLES.clear()
    if variant in ("A", "C"):
        lint._probe_points = fast_probe_points_direct
        lint._match_table = cached_match_table
    if variant in ("B", "C"):
        loader.schema_errors = fast_schema_errors
    if variant in ("T", "C"):
        lint.known_tags = _cached_tags


def snapshot(specs: list[Any]) -> str:
    return json.dumps([[(c.id, c.line, [(b.line, b.outcome) for b in c.expect]) for c in s.cases] for s in specs], default=repr)


def errors_of(paths: list[Path]) -> list[str]:
    out = []
    for p in paths:
        try:
            loader.load_spec(p)
        except loader.SpecFileErrors as exc:
            out += [e.format() for e in exc.errors]
    return out


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    tmp = Path(tempfile.mkdtemp(prefix="jaxconf-load-"))
    files = write_specs(tmp, n)
    real = [p for p in loader.spec_files([loader.SPECS_DIR]) if loader.is_spec_file(p)]
    fixtures = sorted((REPO / "tests" / "fixtures" / "lint").rglob("*.yaml"))
    loader.load_spec(files[0])  # imports, schema and validator built once, as in a long-lived process

    texts = [p.read_text() for p in files]
    t = time.perf_counter()
    docs = [loader.parse_yaml(x, p) for x, p in zip(texts, files, strict=True)]
    yaml_s = time.perf_counter() - t
    t = time.perf_counter()
    for d, p in zip(docs, files, strict=True):
        loader.schema_errors(d, p)
    schema_s = time.perf_counter() - t
    t = time.perf_counter()
    specs = [loader.build_spec(d, p) for d, p in zip(docs, files, strict=True)]
    model_s = time.perf_counter() - t
    rules = {}
    for rule in lint.SPEC_RULES:
        t = time.perf_counter()
        for s in specs:
            list(rule.check(s))
        rules[rule.id] = time.perf_counter() - t
    t = time.perf_counter()
    for x in texts:
        yaml.load(x, Loader=yaml.CSafeLoader)  # noqa: S506 - the floor of parsing: libyaml, no line marks
    plain_yaml_s = time.perf_counter() - t
    print(f"{n} cases, stage by stage: yaml {yaml_s:.2f}s (libyaml without marks {plain_yaml_s:.2f}s), schema {schema_s:.2f}s, model {model_s:.2f}s, "
          f"lint {sum(rules.values()):.2f}s")
    print("  lint rules: " + ", ".join(f"{k} {v:.2f}s" for k, v in sorted(rules.items(), key=lambda kv: -kv[1])[:6]))

    reference = None
    for variant in ("base", "A", "B", "T", "C") * 2:
        apply(variant)
        t = time.perf_counter()
        loaded = [loader.load_spec(p) for p in files]
        wall = time.perf_counter() - t
        same = snapshot(loaded)
        reference = reference or same
        real_ok = snapshot([loader.load_spec(p) for p in real])
        errs = errors_of(fixtures)
        if variant == "base":
            base_real, base_errs = real_ok, errs
        print(f"  {variant:4} load_spec x {len(files)} files: {wall:.2f}s ({1000 * wall / n:.2f} ms/case; "
              f"10,000 cases ~{wall * 10_000 / n:.1f}s); same specs: {same == reference and real_ok == base_real}; "
              f"same fixture errors: {errs == base_errs} ({len(errs)})")
    apply("base")
    blob = [pickle.dumps(loader.load_spec(p), protocol=pickle.HIGHEST_PROTOCOL) for p in files]
    t = time.perf_counter()
    for b in blob:
        pickle.loads(b)
    wall = time.perf_counter() - t
    print(f"  D    pickle.loads of the same Specs: {wall:.2f}s ({1000 * wall / n:.2f} ms/case; 10,000 cases "
          f"~{wall * 10_000 / n:.1f}s; {sum(map(len, blob)) / n / 1000:.1f} kB/case)")
    points = [len(_ORIGINAL_PROBE(c)) for s in specs for c in s.cases]
    fast = [len(fast_probe_points_direct(c)) for s in specs for c in s.cases]
    real_cases = [c for p in real for c in loader.load_spec(p).cases]
    print(f"probe points per case: synthetic {statistics.mean(points):.0f} -> {statistics.mean(fast):.0f}; "
          f"real specs {statistics.mean(len(_ORIGINAL_PROBE(c)) for c in real_cases):.0f} -> "
          f"{statistics.mean(len(fast_probe_points_direct(c)) for c in real_cases):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
