"""The pytest plugin, tested by running pytest on it (pytester) against real JAX."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest
from jax_conformance.records import CASE_FIELDS, OUTCOMES

from tests.conftest import REPO, SpecDir, read_results

HEAD = """
topic: demo
source: {doc: docs/default_dtypes.md}
cases:
"""


def case(body: str) -> str:
    """A spec file whose first case's `- id:` is on line 4."""
    return HEAD.lstrip("\n") + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n"


def test_passing_case_reads_as_its_claim_and_mode(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.arange
        claim: arange of ints is int32 with x64 off
        run: jnp.arange(3)
        expect:
          - when: {x64: false}
            dtype: int32
            shape: [3]
            value: [0, 1, 2]
            warns: none
    """),
    )
    result = specdir.run("-v", "--x64=off", "--explicit-x64-dtypes=warn")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "jax-conformance *: adapter jax *",
            "mode: x64=off, explicit_x64_dtypes=warn; backends: cpu",
            "*demo.arange[[]off-warn-cpu[]] PASSED*",
            "*conformance [[]x64=off, explicit_x64_dtypes=warn[]]: 1 passed*",
        ]
    )


@pytest.mark.parametrize(
    ("expect", "run", "message"),
    [
        ("dtype: int64", "jnp.arange(3)", "result.dtype=int32, but should be int64"),
        ("shape: [4]", "jnp.arange(3)", "result.shape=(3,), but should be (4,)"),
        ("value: [0, 1, 3]", "jnp.arange(3)", "result=[[]0, 1, 2[]], but should be [[]0, 1, 3[]]*"),
        (
            "value: 0.5\n            rtol: 0.01",
            "jnp.float32(0.51)",
            "result=0.5099*, but should be 0.5 (rtol=0.01, atol=0.0)",
        ),
        (
            "warns: none",
            "jnp.arange(3, dtype='float64')",
            "warned UserWarning: Explicitly requested dtype float64*, but should not warn",
        ),
        (
            "warns: {category: UserWarning, match: 'int16'}",
            "jnp.arange(3, dtype='float64')",
            "warned UserWarning*, but should warn UserWarning matching 'int16'",
        ),
        (
            "warns: {category: DeprecationWarning}",
            "jnp.arange(3)",
            "warned no warnings, but should warn DeprecationWarning",
        ),
        (
            "raises: {type: TypeError}",
            "jnp.arange(3)",
            "returned *without raising, but should raise TypeError",
        ),
        (
            "raises: {type: TypeError}",
            "int('x')",
            "raised ValueError: invalid literal for int()*, but should raise TypeError",
        ),
        (
            "raises: {type: ValueError, match: 'nonsense'}",
            "int('x')",
            "raised ValueError whose message does not match 'nonsense'*",
        ),
        ("check: result.sum() == 4", "jnp.arange(3)", "check 'result.sum() == 4' is false*"),
        (
            "dtype: int32",
            "int('x')",
            "raised ValueError: invalid literal*, but should return a result",
        ),
    ],
    ids=[
        "dtype",
        "shape",
        "value",
        "value-rtol",
        "warns-none",
        "warns-match",
        "warns-missing",
        "raises-missing",
        "raises-type",
        "raises-match",
        "check",
        "unexpected-exception",
    ],
)
def test_each_outcome_kind_fails_with_a_message(
    specdir: SpecDir, expect: str, run: str, message: str
) -> None:
    specdir.write(
        "demo.yaml",
        case(f"""
      - id: demo.kind
        claim: the claim under test
        run: {run}
        expect:
          - when: {{x64: false}}
            {expect}
    """),
    )
    result = specdir.run("--x64=off", "--explicit-x64-dtypes=warn")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*specs/demo.yaml:4: demo.kind FAILED [[]x64=off, explicit_x64_dtypes=warn, backend=cpu, adapter=jax *[]]",
            "claim: the claim under test",
            "expect block at *specs/demo.yaml:8: *",
            f"*{message}*",
            "spec:",
            ">    8 |       - when: {x64: false}",
        ]
    )


def test_each_outcome_kind_passes(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.pass-all
        claim: every outcome kind can pass
        run: jnp.arange(3, dtype='float64')
        expect:
          - when: {x64: false, explicit_x64_dtypes: warn}
            dtype: float32
            shape: [3]
            value: [0.0, 1.0, 2.0]
            warns: {category: UserWarning, match: 'float64.*arange.*float32', count: 1}
            check: [result.sum() == 3, "str(result.dtype) == 'float32'"]
      - id: demo.raise
        claim: a bad literal is a ValueError
        run: int('x')
        expect:
          - raises: {type: ValueError, match: "invalid literal"}
      - id: demo.tree
        claim: tuple results compare leaf by leaf
        run: (jnp.zeros(2), jnp.ones(3))
        expect:
          - value: [[0, 0], [1, 1, 1]]
            dtype: float32
    """),
    )
    result = specdir.run("--x64=off", "--explicit-x64-dtypes=warn")
    result.assert_outcomes(passed=3)


def test_mode_without_a_block_is_not_applicable_never_passed(specdir: SpecDir, tmp_path) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.only-on
        claim: something only said for x64 on
        run: jnp.arange(3)
        expect:
          - when: {x64: true}
            dtype: int64
      - id: demo.carved
        claim: a case the reference cannot show
        run: jnp.arange(3)
        expect:
          - when: {adapter: jax}
            not_applicable: only real XLA shows this
          - dtype: int32
    """),
    )
    out = tmp_path / "r.jsonl"
    result = specdir.run("-rs", "--x64=off", "--explicit-x64-dtypes=warn", f"--results={out}")
    result.assert_outcomes(passed=0, skipped=0, failed=0)
    result.stdout.fnmatch_lines(
        [
            "*not applicable: no expect block for x64=off, explicit_x64_dtypes=warn, backend=cpu, adapter=jax*",
            "*not applicable: only real XLA shows this*",
            "*2 not applicable*",
        ]
    )
    records = [r for r in read_results(out) if r["record"] == "case"]
    assert [r["outcome"] for r in records] == ["not_applicable", "not_applicable"]


def test_version_ranges_select_blocks(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.version
        claim: the block for the running version is chosen
        run: jnp.arange(3)
        expect:
          - when: {version: "<0.1"}
            dtype: int64
          - when: {version: ">=0.1"}
            dtype: int32
    """),
    )
    specdir.run("--x64=off").assert_outcomes(passed=1)


def test_changed_expectation_fails_exactly_that_case(specdir: SpecDir, tmp_path) -> None:
    """Done-when of the harness issue: one changed expectation in a copy of defaults.yaml."""
    text = (REPO / "specs/x64/defaults.yaml").read_text()
    marker = "  - id: x64.defaults.arange-int\n"
    head, tail = text.split(marker)
    tail = tail.replace("dtype: int32", "dtype: int64", 1)
    path = specdir.write("x64/defaults.yaml", head + marker + tail)
    line = (head + marker + tail).splitlines().index("        dtype: int64") + 1
    result = specdir.run("--x64=off", "--explicit-x64-dtypes=warn")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] >= 8
    result.stdout.fnmatch_lines(
        [
            f"*{path.relative_to(specdir.pytester.path)}:{text.splitlines().index(marker.rstrip()) + 1}: "
            "x64.defaults.arange-int FAILED [[]x64=off, explicit_x64_dtypes=warn*",
            "claim: jnp.arange of Python ints gives int32 with x64 off and int64 with x64 on, without warning",
            "result.dtype=int32, but should be int64",
            f">{line - 1:5d} |       - when: {{x64: false}}",
            "FAILED *x64.defaults.arange-int[[]off-warn-cpu[]]*",
        ]
    )


def test_broken_files_are_one_error_each_and_the_rest_runs(specdir: SpecDir, tmp_path) -> None:
    specdir.write(
        "good.yaml",
        case("""
      - id: demo.good
        claim: still runs
        run: jnp.arange(3)
        expect:
          - dtype: int32
    """),
    )
    specdir.write("syntax.yaml", "topic: demo2\nsource: {doc: x\ncases: []\n")
    specdir.write(
        "unknown.yaml",
        """
        topic: demo3
        source: {doc: docs/default_dtypes.md}
        cases:
          - id: demo3.typo
            claim: a typo in an outcome key
            run: jnp.arange(3)
            expect:
              - dtpye: int32
    """,
    )
    out = tmp_path / "r.jsonl"
    result = specdir.run("--x64=off", f"--results={out}")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*specs/syntax.yaml:3: YAML-SYNTAX *",
            "*specs/unknown.yaml:8: SCHEMA .cases[[]0[]].expect[[]0[]]: "
            "unknown key 'dtpye' (did you mean 'dtype'?; allowed: *)",
        ]
    )
    records = read_results(out)
    errors = [r for r in records if r["record"] == "case" and r["outcome"] == "error"]
    assert sorted(r["spec_file"].rsplit("/", 2)[-2:] for r in errors) == [
        ["specs", "syntax.yaml"],
        ["specs", "unknown.yaml"],
    ]
    assert sorted(r["line"] for r in errors) == [3, 8]
    assert result.ret == 1


def test_missing_or_unknown_adapter_is_a_usage_error(pytester: pytest.Pytester) -> None:
    from jax_conformance.plugin import PACKAGE_DIR

    result = pytester.runpytest(str(PACKAGE_DIR))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*the conformance suite needs --adapter=NAME (installed adapters: *jax*)*"]
    )
    result = pytester.runpytest(str(PACKAGE_DIR), "--adapter=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--adapter nope: unknown adapter; installed: *jax*"]
    )  # as the command line says it


def test_unknown_backend_is_a_usage_error(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.b
        claim: c
        run: jnp.arange(3)
        expect:
          - dtype: int32
    """),
    )
    result = specdir.run("--backend=tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "backend tpu not available in adapter 'jax'; it has: cpu"
        in result.stdout.str() + result.stderr.str()
    )


def test_isolated_case_gets_exactly_its_environment(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.env-on
        claim: JAX_ENABLE_X64=true in a fresh process turns x64 on
        isolate: process
        env: {JAX_ENABLE_X64: "true", DEMO_MARK: "42"}
        run: (jax.config.x64_enabled, jnp.arange(2).dtype.name, os.environ["DEMO_MARK"], os.getpid())
        expect:
          - check: ["result[:3] == (True, 'int64', '42')", "result[3] != os.getppid() or True"]
      - id: demo.env-bad
        claim: an invalid JAX_ENABLE_X64 makes start-up fail, as an observable exception
        isolate: process
        env: {JAX_ENABLE_X64: "2"}
        run: jnp.arange(2)
        expect:
          - raises: {type: ValueError, match: "invalid truth value '2'"}
      - id: demo.not-isolated
        claim: the session's own worker is in the session's mode
        run: (jax.config.x64_enabled, os.environ.get("DEMO_MARK"))
        expect:
          - check: "result == (False, None)"
    """),
    )
    specdir.run("--x64=off").assert_outcomes(passed=3)


def test_results_file_has_every_design_field(specdir: SpecDir, tmp_path) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.a
        claim: passes
        run: jnp.arange(3)
        expect:
          - dtype: int32
      - id: demo.b
        claim: fails
        run: jnp.arange(3)
        expect:
          - dtype: int8
    """),
    )
    out = tmp_path / "r.jsonl"
    specdir.run("--x64=off", f"--results={out}")
    lines = out.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line is valid JSON
    assert [r["record"] for r in records] == [
        "description",
        "run",
        "collected",
        "case",
        "case",
        "end",
    ]
    assert records[0]["run_id"] == records[1]["run_id"]
    header = records[1]
    for key in ("adapter", "implementation_version", "mode", "backends", "environment", "flags"):
        assert key in header
    assert {"jax_enable_x64", "jax_custom_vjp3"} <= {f["name"] for f in header["flags"]}
    for key in (
        "python",
        "numpy",
        "jax",
        "jaxlib",
        "platform",
        "devices",
        "suite_version",
        "git_revision",
    ):
        assert key in header["environment"], key
    for record in records[3:5]:
        assert set(CASE_FIELDS) <= set(record)
        assert record["outcome"] in OUTCOMES
        assert record["mode"] == {"x64": False, "explicit_x64_dtypes": "warn", "flags": {}}
        assert record["spec_file"] == "specs/demo.yaml"
    assert records[3]["outcome"] == "passed" and records[4]["outcome"] == "failed"
    assert records[4]["expected"] == {"dtype": "int8"}
    assert records[4]["actual"]["dtype"] == "int32"
    assert "result.dtype=int32, but should be int8" in records[4]["message"]
    assert records[5]["counts"] == {"passed": 1, "failed": 1}


def test_records_written_before_a_crash_of_the_run_survive(specdir: SpecDir, tmp_path) -> None:
    """The pytest process itself dies (os._exit in a hook): finished cases are already on disk."""
    specdir.write(
        "demo.yaml",
        case(
            "".join(
                f"""
      - id: demo.c{i}
        claim: case {i}
        run: jnp.arange({i + 1})
        expect:
          - dtype: int32
"""
                for i in range(3)
            )
        ),
    )
    specdir.pytester.makepyfile(
        crashplug="""
        import os
        def pytest_runtest_logfinish(nodeid, location):
            if "demo.c1" in nodeid:
                os._exit(9)
    """
    )
    out = tmp_path / "r.jsonl"
    result = specdir.run_subprocess("--x64=off", f"--results={out}", "-p", "crashplug")
    assert result.ret == 9
    records = read_results(out)
    assert [r.get("case") for r in records if r["record"] == "case"] == ["demo.c0", "demo.c1"]
    assert not any(r["record"] == "end" for r in records)


def test_tags_become_markers(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.tagged
        claim: tagged
        tags: [custom_vjp]
        run: jnp.arange(3)
        expect:
          - dtype: int32
      - id: demo.untagged
        claim: untagged
        run: jnp.arange(3)
        expect:
          - dtype: int32
    """),
    )
    result = specdir.run("-m", "custom_vjp", "-v")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*demo.tagged*PASSED*"])


def test_given_draws_examples_and_reports_the_falsifying_one(specdir: SpecDir) -> None:
    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.given
        claim: canonicalize_dtype maps 64-bit types to 32-bit ones with x64 off
        given:
          dt: st.sampled_from(['int8', 'int32', 'int64', 'float32', 'float64'])
        run: jax.dtypes.canonicalize_dtype(np.dtype(dt))
        expect:
          - when: {x64: false}
            check: "result == np.dtype({'int64': 'int32', 'float64': 'float32'}.get(dt, dt))"
      - id: demo.given-wrong
        claim: a deliberately wrong property
        given:
          dt: st.sampled_from(['int8', 'int64'])
        run: jax.dtypes.canonicalize_dtype(np.dtype(dt))
        expect:
          - when: {x64: false}
            check: "result == np.dtype(dt)"
    """),
    )
    result = specdir.run("--x64=off")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["falsifying example: dt=int64", "check 'result == np.dtype(dt)' is false*"]
    )


def test_junitxml_and_xdist_match_a_serial_run(specdir: SpecDir, tmp_path) -> None:
    # Two real x64 files (shared-worker cases, warnings, an isolated case), not all of specs/x64:
    # the check is that xdist and junitxml report what a serial run does, case for case.
    (specdir.path / "x64").mkdir()
    for name in ("defaults.yaml", "warnings.yaml"):
        shutil.copy(REPO / "specs/x64" / name, specdir.path / "x64" / name)
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    junit = tmp_path / "junit.xml"
    specdir.run_subprocess("--x64=off", f"--results={serial}", f"--junitxml={junit}")
    specdir.run_subprocess("--x64=off", f"--results={parallel}", "-n", "2")

    def outcomes(path):
        return {r["case"]: r["outcome"] for r in read_results(path) if r["record"] == "case"}

    assert outcomes(serial) == outcomes(parallel)
    assert len(outcomes(serial)) >= 9
    xml = junit.read_text()
    assert xml.count("<testcase ") == len(outcomes(serial))
    assert 'name="x64.defaults.arange-int[off-warn-cpu]"' in xml


def test_sigterm_ends_the_run_with_an_interrupted_end_record(specdir: SpecDir, tmp_path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from jax_conformance.plugin import PACKAGE_DIR

    specdir.write(
        "demo.yaml",
        case("""
      - id: demo.first
        claim: finishes before the signal
        run: jnp.arange(3)
        expect:
          - dtype: int32
      - id: demo.slow
        claim: still running when the signal comes
        run: __import__('time').sleep(60)
        timeout: 120
        expect:
          - check: result is None
    """),
    )
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            str(PACKAGE_DIR),
            "--adapter=jax",
            "--specs",
            str(specdir.path),
            f"--results={out}",
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out.exists() and '"demo.first"' in out.read_text()):
        time.sleep(0.2)
    time.sleep(1.0)
    os.kill(proc.pid, signal.SIGTERM)
    output, _ = proc.communicate(timeout=60)
    records = read_results(out)
    assert [r["case"] for r in records if r["record"] == "case"] == ["demo.first"], output
    assert records[-1]["record"] == "end" and records[-1]["interrupted"] is True, output
