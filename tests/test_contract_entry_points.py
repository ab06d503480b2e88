"""`check` on rules reached as libraries expose them (issue 39): no false verdicts.

Each class of false verdict has rules of tests/contract_rules.py: a public wrapper of a custom_vjp
(plain, functools.wraps, a method, a partial), a smooth function near the old step's failure, a
Python float argument, a wrong argument count; and each rule with a real fault still fails its item.
The items are judged by the mode process's own `run_one`, here in this test's process (x64 off,
the default policy), as a mode's process judges them; the usage errors through the CLI.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from jax_conformance import CHECKOUT
from jax_conformance.contract.engine import _spec_for
from jax_conformance.contract.items import DERIVATIVES_FINITE_DIFFERENCES

pytest.importorskip("jax")
from jax_conformance.adapters.jax.contract import run_one  # noqa: E402

pytestmark = pytest.mark.slow
X = "jnp.array([0.5, 2.0], dtype=jnp.float32)"


def judged(target: str, *exprs: str, nondiff: tuple[int, ...] = ()) -> dict:
    """One target's record in this process: kind, notes, and item id -> its outcome."""
    record = run_one(
        {"target": target, "args": [{"expr": e} for e in exprs], "nondiff": list(nondiff)}
    )
    assert "error" not in record, record
    return {
        "kind": record["kind"],
        "notes": " | ".join(record.get("notes", [])),
        **{item["id"]: item for item in record["items"]},
    }


def statuses(result: dict) -> dict[str, str]:
    return {k: v["status"] for k, v in result.items() if isinstance(v, dict)}


@pytest.mark.parametrize(
    "target",
    ["public_sin", "wraps_sin", "HOLDER.sin"],
)
def test_public_wrapper_of_a_custom_vjp_is_checked_as_the_rule(target):
    """Was: plain, derivatives.agree FAIL (jvp of a custom_vjp) in every mode."""
    result = judged(f"tests.contract_rules:{target}", X)
    assert result["kind"] == "custom_vjp"
    assert "custom_vjp tests.contract_rules:good_sin" in result["notes"]
    assert set(statuses(result).values()) <= {"pass", "n/a"}, result
    for item in (
        "derivatives.agree",
        "rule.fwd-pair",
        "rule.bwd-structure",
        "x64.no-extra-warning",
    ):
        assert result[item]["status"] == "pass", (item, result[item])


def test_wrapper_reaching_a_broken_rule_fails_its_item():
    result = judged("tests.contract_rules:public_bwd_too_few", X)
    assert result["kind"] == "custom_vjp"
    assert [k for k, v in statuses(result).items() if v == "fail"] == ["rule.bwd-structure"]


def test_every_rule_reached_is_named():
    result = judged("tests.contract_rules:two_rules", X)
    assert result["kind"] == "custom_vjp"  # a custom_vjp on the path: forward mode is not checked
    assert "custom_jvp tests.contract_rules:wrong_factor" in result["notes"]
    assert "custom_vjp tests.contract_rules:good_sin" in result["notes"]
    assert result["derivatives.finite-differences"]["status"] == "fail"  # wrong_factor's 3 cos(x)


def test_partial_of_a_rule_is_checked_as_the_rule():
    """Was: plain, every rule item n/a, exit 0."""
    broken = judged("tests.contract_rules:partial_bwd_too_few", X)
    assert broken["kind"] == "custom_vjp"
    assert broken["rule.bwd-structure"]["status"] == "fail"
    good = judged("tests.contract_rules:partial_softplus", X)
    assert good["kind"] == "custom_jvp" and good["rule.fwd-pair"]["status"] == "pass"
    assert set(statuses(good).values()) <= {"pass", "n/a"}, good


@pytest.mark.parametrize(
    ("target", "x"),
    [
        ("tests.contract_rules:own_log1mexp", "jnp.array([0.1, 3.0])"),
        ("jax.nn:log1mexp", "jnp.array([0.1, 3.0])"),
        ("jax.nn:log1mexp", "jnp.array([0.3, 1.0, 2.5])"),
    ],
)
def test_smooth_function_near_the_old_steps_failure_is_compared(target, x):
    """Was: n/a, "not differentiable at the example" (one-sided differences at eps^(1/3)·max|x|)."""
    result = judged(target, x)
    assert result["derivatives.finite-differences"]["status"] == "pass", result
    assert result["transforms.second-order"]["status"] == "pass", result


def test_xlogy_is_compared():
    """Was: n/a for both (one-sided differences at the old step disagreed at y = 0.05)."""
    result = judged("jax.scipy.special:xlogy", "jnp.array([1.0, 3.0])", "jnp.array([0.05, 2.0])")
    assert result["derivatives.finite-differences"]["status"] == "pass", result
    assert result["transforms.second-order"]["status"] == "pass", result


def test_a_five_percent_error_near_the_old_failure_is_found():
    result = judged("tests.contract_rules:off_log1mexp", "jnp.array([0.1, 3.0])")
    (failure,) = result["derivatives.finite-differences"]["failures"]
    assert "central differences" in failure["expected"]


def test_not_differentiable_only_where_shown_and_a_nan_primal_said():
    kink = judged("jax.nn:relu", "jnp.array([0.0, 2.0])")["derivatives.finite-differences"]
    assert kink["status"] == "n/a" and "a kink" in kink["note"]
    nan = judged("jax.nn:log1mexp", "jnp.array([-0.5, 2.0])")["derivatives.finite-differences"]
    assert nan["status"] == "n/a" and nan["note"].startswith("the primal is NaN")


def test_python_float_argument_is_static_and_differentiated():
    """Was: gamma=0.7 passed (floats left out of finite differences) while jnp.array(0.7) failed."""
    result = judged("tests.contract_rules:forgets_gamma", X, "0.7")
    assert "argument(s) 1 (float 0.7) held static" in result["notes"]
    assert result["transforms.jit"]["status"] == "pass"
    assert result["derivatives.finite-differences"]["status"] == "fail", result


def test_python_bool_argument_is_static():
    """Was: TracerBoolConversionError FAILs under jit, vmap, scan and checkpoint."""
    result = judged("tests.contract_rules:with_flag", X, "True")
    assert "argument(s) 1 (bool True) held static" in result["notes"]
    assert set(statuses(result).values()) <= {"pass", "n/a"}, result


def test_blocked_by_names_the_failing_cause():
    """A tangent of the wrong dtype from a rule that also warns: the derivative items are blocked
    by rule.fwd-pair (was: by x64.no-extra-warning, the first gate)."""
    result = judged("tests.contract_rules:half_tangent", X)
    assert result["rule.fwd-pair"]["status"] == "fail"
    assert result["x64.no-extra-warning"]["status"] == "fail"
    blocked = [
        v["note"] for v in result.values() if isinstance(v, dict) and v["status"] == "blocked"
    ]
    assert blocked and all(n.startswith("blocked by rule.fwd-pair: TypeError: ") for n in blocked)


def test_error_text_is_not_cut_to_its_first_line():
    result = judged("tests.contract_rules:bwd_raises", X)
    texts = [
        f["actual"] for v in result.values() if isinstance(v, dict) for f in v.get("failures", [])
    ]
    assert texts and all("the detail is on the second line" in t for t in texts), texts


def test_finite_differences_of_a_custom_vjp_cite_a_custom_vjp_case():
    assert _spec_for(DERIVATIVES_FINITE_DIFFERENCES.specs, "custom_vjp").startswith("custom_vjp.")
    assert _spec_for(DERIVATIVES_FINITE_DIFFERENCES.specs, "custom_jvp").startswith("custom_jvp.")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nosuchmodule:fn", "--args", "1"], "no module named 'nosuchmodule'"),
        (["tests.contract_rules:", "--args", "1"], "write MODULE:FUNCTION"),
        (["tests.contract_rules:nothere", "--args", "1.0"], "has no attribute 'nothere'"),
        (["tests.contract_rules:good_sin", "--args", "jnp.array([1.0"], "not a Python expression"),
        (
            ["tests.contract_rules:public_sin", "--args", X, "--args", "2.0"],
            "cannot take the 2 positional argument(s) given",
        ),
        (["tests.contract_rules:bwd_too_few", "--args", X], "missing a required argument: 'y'"),
    ],
)
def test_usage_errors_are_one_line_exit_2_before_any_mode(argv, message, tmp_path):
    """Was: four mode processes, a 52-cell ERROR table (or a rule.fwd-pair FAIL), exit 1."""
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "check", *argv, "--report", str(tmp_path)],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert message in proc.stderr and "mode process" not in proc.stderr
    assert not any(tmp_path.iterdir())  # nothing written


def test_items_blocked_by_one_cause_share_one_note():
    from jax_conformance.contract.engine import ContractResult, Outcome, TargetResult

    why = "blocked by rule.fwd-pair: TypeError: Custom JVP rule must produce ..."
    outcomes = {
        (item, "on"): Outcome(item, "on", "blocked", why)
        for item in ("grad.dtype", "transforms.jit")
    }
    target = TargetResult("m:f", "m:f", {"on": "custom_jvp"}, outcomes, {}, {"a wrapper": ["on"]})
    assert ContractResult(["on"], [target]).notes() == [
        "checked as [on]: a wrapper",
        f"grad.dtype, transforms.jit [on]: {why}",
    ]
