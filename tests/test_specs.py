"""The suite's own specs (specs/): what the report shows of them is not project bookkeeping, every
case says what kind of requirement it is, and every case can fail: none passes against a hollow
implementation (tests/breakage/hollow.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from jax_conformance.plugin import PACKAGE_DIR

from tests.conftest import REPO, SpecDir, read_results

INTERNAL = re.compile(
    r"\bissue \d+|\bprobe (of|for)\b|\bhelper\b|\bthe lead\b|observed-jax-behaviour|jax-tests-coverage",
    re.I,
)


def test_no_source_shown_in_the_report_is_project_internal() -> None:
    """What the report shows as a case's source says what was observed and how, never our own bookkeeping."""
    import yaml

    found = []

    def walk(value: object, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")
        elif isinstance(value, str) and INTERNAL.search(value):
            found.append(f"{where}: {value}")

    for path in sorted((REPO / "specs").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        walk(data.get("source"), f"{path.relative_to(REPO)}:source")
        for case in data.get("cases") or []:
            walk(case.get("source"), f"{path.relative_to(REPO)}:{case.get('id')}.source")
            walk(
                (case.get("documented") or {}).get("source"),
                f"{path.relative_to(REPO)}:{case.get('id')}.documented.source",
            )
    assert found == [], "\n".join(found)


def test_every_case_of_the_suite_says_what_kind_of_requirement_it_is() -> None:
    from jax_conformance import SPECS_DIR
    from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files
    from jax_conformance.spec.model import BASES

    cases = {
        c.id: c for p in spec_files([SPECS_DIR]) if is_spec_file(p) for c in load_spec(p).cases
    }
    assert {c.basis for c in cases.values()} <= set(BASES)
    assert [i for i, c in cases.items() if c.basis is None] == []
    # JAX's own tests of these are skipped as "no longer supported": reported, never counted.
    for disowned in (
        "custom_jvp.nondiff_argnums.tracer-under-jit-primal",
        "custom_jvp.nondiff_argnums.tracer-under-jit-grad",
        "custom_vjp.closures.jit-tracer-primal",
        "custom_vjp.closures.jit-tracer-rule-used",
    ):
        assert cases[disowned].basis == "unsupported", disowned
    assert (
        "x64.context.no-config-use" not in cases
    )  # true of every JAX ever released: it could not fail


CANNOT_FAIL = """
topic: demo
source: {doc: docs/default_dtypes.md}
basis: documented
cases:
  - id: demo.any-exception
    claim: a nonsense dtype is refused (but any exception at all is accepted, so this says little)
    run: jnp.arange(3, dtype="nonsense")
    expect:
      - raises: {type: Exception}
"""


def test_no_case_passes_against_a_hollow_implementation(specdir: SpecDir, tmp_path: Path) -> None:
    """Every spec case must be able to fail: none may pass against a namespace with nothing in it."""
    hollow = "tests.breakage.hollow:HollowAdapter"
    # The check catches what it should: a case too loose to fail passes here.
    specdir.write("demo.yaml", CANNOT_FAIL)
    probe = tmp_path / "probe.jsonl"
    specdir.run("--x64=off", "--results", str(probe), adapter=hollow)
    assert [r["outcome"] for r in read_results(probe) if r.get("record") == "case"] == ["passed"]

    passed: dict[str, list[str]] = {}
    for mode in (["--x64=off", "--explicit-x64-dtypes=warn"], ["--x64=on"]):
        results = tmp_path / f"{mode[0][2:]}.jsonl"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                str(PACKAGE_DIR),
                f"--adapter={hollow}",
                *mode,
                "-p",
                "no:cacheprovider",
                "-q",
                # Every case fails here: pytest's failure summary over 7,000 failures is quadratic
                # (48 of the 67 s of a table.yaml run); the results file says all this test reads.
                "--tb=no",
                "--results",
                str(results),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=900,
        )
        records = [r for r in read_results(results) if r.get("record") == "case"]
        assert len(records) > 200
        for r in records:
            if r["outcome"] in ("passed", "xpassed"):
                passed.setdefault(r["case"], []).append(mode[0])
    assert passed == {}, (
        "cases that pass against an implementation with nothing in it cannot fail:\n"
        + json.dumps(passed, indent=1)
    )
