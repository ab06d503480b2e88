"""The contract for a user's own rules (jax_conformance.contract): seen to fail, and JAX's own rules.

The broken rules of tests/contract_rules.py are checked together, each mode one process, in two
modes (off-warn and on, side by side: one mode's time); each must fail exactly the item that names
it, in the modes it names, and no other item in any mode. JAX's own rules are checked in all four
modes in one run. Then the three ways in: the CLI's table and failure lines, the fixture inside a
pytest session, the items' spec sources.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from jax_conformance import CHECKOUT, SPECS_DIR
from jax_conformance.commands.check import exit_status, shown
from jax_conformance.contract import ITEMS, Expr, Target, check_many
from jax_conformance.contract.engine import ContractResult, Failure, Outcome, TargetResult
from jax_conformance.contract.items import FAIL, NA, PASS
from jax_conformance.contract.save import check_data, save
from jax_conformance.report.contract_section import render_section
from jax_conformance.report.model import load_checks
from jax_conformance.spec.loader import load_spec, spec_files

from tests import contract_rules

pytestmark = pytest.mark.slow
ROOT = CHECKOUT


def test_every_item_names_spec_cases_that_exist():
    areas = [SPECS_DIR / area for area in ("custom_vjp", "custom_jvp", "x64", "autodiff")]
    ids = {case.id for path in spec_files(areas) for case in load_spec(path).cases}
    for item in ITEMS:
        missing = [s for s in item.specs if s not in ids]
        assert not missing, f"{item.id} cites spec cases that do not exist: {missing}"


@pytest.fixture(scope="module")
def broken():
    targets = []
    for name, (before, nondiff, _item, _modes, *x) in contract_rules.BROKEN.items():
        args = (*[Expr(a) for a in before], Expr(x[0] if x else contract_rules.X))
        targets.append(
            Target(f"tests.contract_rules:{name}", args, nondiff=tuple(nondiff), label=name)
        )
    targets.append(
        Target("tests.contract_rules:good_sin", (Expr(contract_rules.X),), label="good_sin")
    )
    return check_many(targets, modes=["off-warn,on"])


@pytest.mark.parametrize("name", list(contract_rules.BROKEN))
def test_broken_rule_fails_exactly_its_item(broken, name):
    _before, _nondiff, item, modes, *_ = contract_rules.BROKEN[name]
    result = next(t for t in broken.targets if t.label == name)
    assert not result.errors, result.errors
    assert result.failing_items() == {item: list(modes)}, "\n".join(broken.failure_lines())
    for (
        failure
    ) in result.failures:  # the line names the item, the mode, the transform and the spec case
        line = failure.line()
        assert line.startswith(f"FAIL {item} [{failure.mode}] {failure.transform}: expected ")
        assert failure.spec in line and failure.spec.split(".")[0] in (
            "custom_vjp",
            "custom_jvp",
            "x64",
            "autodiff",
        )
    assert not broken.ok


def test_exit_status_counts_contract_failures_only(broken):
    """A numerics-only failure (wrong_factor: finite differences) exits 0 and is listed apart, 1
    with --strict-numerics; every other broken rule (a contract item) exits 1 either way."""
    for target in broken.targets:
        one = ContractResult(broken.modes, [target], broken.jax_version)
        numerics_only = target.label == "wrong_factor"
        assert exit_status(one, strict_numerics=False) == (
            0 if target.label in ("wrong_factor", "good_sin") else 1
        ), target.label
        assert exit_status(one, strict_numerics=True) == (0 if target.label == "good_sin" else 1)
        data = check_data(one, "check")
        assert data["ok"] == (target.label in ("wrong_factor", "good_sin"))
        assert bool(data["numerics_failures"]) == numerics_only
        if numerics_only:
            out = "\n".join(shown(one, strict_numerics=False, seconds=1.0)).splitlines()
            head = next(i for i, ln in enumerate(out) if ln.startswith("numerics failures ("))
            fails = [i for i, ln in enumerate(out) if ln.startswith("FAIL ")]
            assert fails and min(fails) > head, "\n".join(out)
            assert out[-1].startswith(
                "every contract item holds in every mode; 2 numerics failures (not counted)"
            ), out[-1]
            assert not data["failures"]
            section = render_section([data])
            assert "every contract item holds (2 numerics failures apart)" in section
            assert "Numerics failures" in section and "derivatives.finite-differences *" in section


def test_good_rule_holds_beside_the_broken_ones(broken):
    result = next(t for t in broken.targets if t.label == "good_sin")
    assert result.ok, "\n".join(broken.failure_lines())
    assert result.status("transforms.vmap", "on") == PASS


# JAX's own rules, and the public functions built on them.
JAX_RULES = [
    ("jax.nn:relu", ("jnp.array([-1.0, 0.5, 2.0])",), ()),
    ("jax._src.nn.functions:_softmax", ("jnp.array([0.1, 1.0, -2.0])", "-1"), ()),
    ("jax.nn:softmax", ("jnp.array([0.1, 1.0, -2.0])",), ()),
    ("jax.nn:log_softmax", ("jnp.array([0.1, 1.0, -2.0])",), ()),
    ("jax._src.numpy.linalg:_det", ("jnp.array([[2.0, 1.0], [0.5, 3.0]])",), ()),
    ("jax.numpy.linalg:det", ("jnp.array([[2.0, 1.0], [0.5, 3.0]])",), ()),
    ("jax.numpy.linalg:slogdet", ("jnp.array([[2.0, 1.0], [0.5, 3.0]])",), ()),
    ("jax.scipy.special:logsumexp", ("jnp.array([0.1, 1.0, -2.0])",), ()),
]


def test_jax_own_rules_hold_in_every_mode():
    """relu in all four modes; JAX_CONTRACT_ALL_RULES=1 checks every rule above (minutes on 2 cores:
    docs/research/contract-libraries.md has that run)."""
    rules = JAX_RULES if os.environ.get("JAX_CONTRACT_ALL_RULES") else JAX_RULES[:1]
    targets = [Target(t, tuple(Expr(a) for a in args), nondiff=nd) for t, args, nd in rules]
    result = check_many(targets)
    assert result.modes == ["off-warn", "off-error", "off-allow", "on"]
    assert result.ok, "\n".join(result.failure_lines()) + "\n" + result.table()
    relu = result.targets[0]
    assert set(relu.kinds.values()) == {"custom_jvp"}
    assert all(relu.status(i.id, m) in (PASS, "n/a") for i in ITEMS for m in result.modes)


def test_cli_table_failure_lines_and_exit_status(tmp_path):
    (tmp_path / "mylib_rules.py").write_text(
        textwrap.dedent("""
        import jax, jax.numpy as jnp

        @jax.custom_jvp
        def triple_slope(x):
            return jnp.sin(x)

        @triple_slope.defjvp
        def _jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return jnp.sin(x), 3.0 * jnp.cos(x) * t
    """)
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "check",
            "mylib_rules:triple_slope",
            "--args",
            "jnp.array([0.5, 2.0])",
            "--modes",
            "off-warn",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    # finite differences are numerics JAX does not promise: shown apart, not a contract failure
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "derivatives.finite-differences *  FAIL" in proc.stdout
    assert "transforms.vmap                   ok" in proc.stdout
    numerics = proc.stdout.split("\nnumerics failures (")[1]
    fails = [ln for ln in numerics.splitlines() if ln.startswith("FAIL ")]
    assert len(fails) == 1 and fails[0].startswith(
        "FAIL derivatives.finite-differences [off-warn] jacrev (the rule)"
    )
    assert "(contract: custom_jvp.rule_outputs.pair-works)" in fails[0]
    # counted words agree with their count; an n/a cell says why, even by the function's kind
    assert "check mylib_rules:triple_slope: 1 mode process (off-warn)\n" in proc.stderr
    assert (
        "\nevery contract item holds in every mode; 1 numerics failure (not counted) "
        "(10 item x mode cells pass;" in proc.stdout
    )
    assert "  rule.bwd-structure [off-warn]: not for a custom_jvp function" in proc.stdout
    # --strict-numerics counts it (exit 1); --json keeps the contract's verdict and the numerics apart
    strict = subprocess.run(
        [*proc.args, "--strict-numerics", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    import json

    assert strict.returncode == 1, strict.stdout + strict.stderr
    data = json.loads(strict.stdout)
    assert data["ok"] and not data["numerics_ok"] and not data["failures"]
    assert [ln.split(" (the rule)")[0] for ln in data["numerics_failures"]] == [
        "FAIL derivatives.finite-differences [off-warn] jacrev"
    ]
    row = next(r for r in data["targets"][0]["rows"] if r["numerics"])
    assert row["item"] == "derivatives.finite-differences" and row["basis"] == "tested"


def test_fixture_reports_ordinary_pytest_results(pytester):
    pytester.makepyfile(
        rules_for_fixture="""
        import jax, jax.numpy as jnp

        @jax.custom_vjp
        def scaled(x):
            return 2.0 * x

        scaled.defvjp(lambda x: (2.0 * x, None), lambda _, g: (2.0 * g,))

        @jax.custom_vjp
        def half_slope(x):
            return 2.0 * x

        half_slope.defvjp(lambda x: (2.0 * x, None), lambda _, g: (g,))
    """
    )
    pytester.makepyfile(
        test_rules="""
        import jax.numpy as jnp
        from rules_for_fixture import scaled, half_slope

        def test_scaled(jax_contract):
            jax_contract.check(scaled, jnp.array([0.5, 2.0]), modes=["off-warn"])

        def test_half_slope(jax_contract):
            jax_contract.check(half_slope, jnp.array([0.5, 2.0]), modes=["off-warn"])
    """
    )
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*FAIL derivatives.finite-differences [[]off-warn[]] jacrev (the rule): expected*"]
    )
    assert FAIL == "fail"


def cached_env(release: str) -> bool:
    from jax_conformance.compat.envs import MARKER, default_cache_dir

    return any((default_cache_dir() / "envs").glob(f"jax-{release}-*/{MARKER}"))


def test_releases_say_where_an_item_stops_holding():
    """--releases over compat's cached environments: a rule with an int32 tangent for an integer
    output (float0 expected) runs in 0.4.33 and is refused from 0.4.34."""
    from jax_conformance.contract.releases import run_releases

    missing = [r for r in ("0.4.33", "0.4.34") if not cached_env(r)]
    if missing:
        pytest.skip(
            f"no cached environment for jax {missing}: `jax-conformance compat --versions "
            "0.4.33,0.4.34` builds them"
        )
    target = Target("tests.contract_rules:int_tangent_rule", (Expr(contract_rules.X),))
    result = run_releases([target], ["0.4.33", "0.4.34"], ["off-warn"], pythonpath=[str(ROOT)])
    assert [r.jax_version for r in result.releases] == ["0.4.33", "0.4.34"], result.errors()
    assert not result.errors() and not result.ok
    for line in result.failure_lines():  # the rule's own fault, in both releases
        assert (
            "FAIL rule.fwd-pair [off-warn] jvp rule (output 1): expected tangent dtype float0; got int32"
            " (contract: custom_jvp.integer_inputs.float0-tangent-jvp)" in line
        )
    changed = {c.item: c for c in result.changes}
    assert set(changed) >= {"transforms.jit", "transforms.vmap", "derivatives.agree", "grad.dtype"}
    assert "rule.fwd-pair" not in changed and "primal.matches-fwd" not in changed
    jit = changed["transforms.jit"]
    assert (jit.before, jit.before_status, jit.after, jit.after_status) == (
        "0.4.33",
        "pass",
        "0.4.34",
        "blocked",
    )
    assert "Custom JVP rule must produce primal and tangent outputs" in jit.note
    second = changed["transforms.second-order"]  # the first derivative raised: blocked, not n/a
    assert (second.after_status, second.note.split(":")[0]) == (
        "blocked",
        "blocked by rule.fwd-pair",
    )
    assert jit.line().startswith(
        "transforms.jit [off-warn] stops holding in 0.4.34: ok in 0.4.33, blocked from 0.4.34"
    )


def test_usage_errors_before_any_mode_process(tmp_path):
    """A --pythonpath that is not there and a release that is no release are named, exit 2."""
    for argv, message in (
        (
            ["--pythonpath", str(tmp_path / "nope")],
            f"--pythonpath {tmp_path / 'nope'}: no such directory",
        ),
        (["--releases", "0.4.34,newest"], "--releases 'newest': not a release"),
    ):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "jax_conformance.cli",
                "check",
                "mylib:f",
                "--args",
                "1.0",
                *argv,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2 and message in proc.stderr, (proc.returncode, proc.stderr)


def test_json_output_of_a_target_that_fails_in_one_mode():
    """--json prints the saved format; arguments that evaluate in the first mode (the usage check's)
    but raise in another are an ERROR in that mode, exit 1 (a target that does not import is a
    usage error: tests/test_contract_entry_points.py)."""
    arg = "jnp.array([0.5, 2.0]) if not jax.config.jax_enable_x64 else 1 / 0"
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "check", "tests.contract_rules:good_sin"]
        + ["--args", arg, "--modes", "off-warn,on", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    import json

    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["format"] == "jax-conformance-check" and data["columns"] == ["off-warn", "on"]
    rows = data["targets"][0]["rows"]
    assert not data["ok"] and {r["cells"][1] for r in rows} == {"error"}
    assert {r["cells"][0] for r in rows} <= {"pass", "n/a"}
    (line,) = data["failures"]
    assert line.startswith("ERROR tests.contract_rules:good_sin [on]: ZeroDivisionError")


def test_every_item_has_one_check_class_in_order():
    """The mode side's registry: one ItemCheck per item, in the items' order, none judged by name."""
    from jax_conformance.adapters.jax.contract import CHECKS

    assert [c.item for c in CHECKS] == list(ITEMS)
    assert len({type(c) for c in CHECKS}) == len(ITEMS)


def test_saved_check_reads_back_through_the_record_layer(tmp_path):
    """`check --report OUT` writes records; the report's model reads back what `--json` prints,
    and the Your rules section shows its cells and failure line."""
    failure = Failure("m:f", "grad.dtype", "on", "bwd", "dtype float32", "float64[2]", "spec.case")
    outcomes = {(i.id, m): Outcome(i.id, m, PASS) for i in ITEMS for m in ("off-warn", "on")}
    outcomes[("grad.dtype", "on")] = Outcome("grad.dtype", "on", FAIL, failures=(failure,))
    outcomes[("nondiff.hashable", "on")] = Outcome("nondiff.hashable", "on", NA, "no nondiff")
    target = TargetResult(
        "m:f", "m:f", {"off-warn": "custom_vjp", "on": "custom_vjp"}, outcomes, {}
    )
    result = ContractResult(["off-warn", "on"], [target], "0.10.2")
    path = save(result, "jax-conformance check m:f", tmp_path, "m:f")
    assert path == tmp_path / "contract" / "m_f.jsonl"
    assert load_checks(tmp_path) == [check_data(result, "jax-conformance check m:f")]
    section = render_section(load_checks(tmp_path))
    assert "<h3>m:f</h3>" in section and '<td class="o-failed">FAIL</td>' in section
    assert "FAIL grad.dtype [on] bwd: expected dtype float32; got float64[2]" in section
