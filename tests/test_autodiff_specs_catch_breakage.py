"""Every case in specs/autodiff fails when the rule it checks is broken in real JAX
(tests/breakage/autodiff.py), and a control case of the same directory still passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jax_conformance.spec.loader import load_spec, spec_files

from tests.conftest import case_records

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs" / "autodiff"
JVP, RES = "autodiff.jvp_arguments", "autodiff.custom_vjp_residuals"
BREAKS = {
    "JvpTangentsUnchecked": ({f"{JVP}.tangent-dtype-must-be-primal-dtype", f"{JVP}.integer-primal-needs-float0-tangent",
                              f"{JVP}.tangent-shape-must-be-primal-shape"}, f"{RES}.string-residual-is-type-error"),
    "ResidualsUnchecked": ({f"{RES}.string-residual-is-type-error"}, f"{JVP}.tangent-dtype-must-be-primal-dtype"),
    "FwdRunsWithoutDifferentiation": ({f"{RES}.plain-call-does-not-run-fwd"}, f"{JVP}.tangent-dtype-must-be-primal-dtype"),
}

pytestmark = pytest.mark.slow


def _run(adapter: str, out: Path) -> dict[str, dict]:
    cmd = [sys.executable, "-m", "pytest", str(REPO / "conformance"), f"--adapter={adapter}", "--x64=off",
           "--explicit-x64-dtypes=warn", "--specs", str(SPECS), "--results", str(out), "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    records = case_records(out)
    assert records, f"{adapter}: no case records\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return records


def test_every_case_is_caught_by_a_break() -> None:
    ids = {c.id for f in spec_files([SPECS]) for c in load_spec(f).cases}
    caught = set().union(*(must for must, _ in BREAKS.values()))
    assert ids <= caught, ids - caught


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_break_is_caught(name: str, tmp_path: Path) -> None:
    must_fail, control = BREAKS[name]
    base = _run("jax", tmp_path / "jax.jsonl")
    assert all(r["outcome"] == "passed" for r in base.values()), {k: r["outcome"] for k, r in base.items()}
    records = _run(f"tests.breakage.autodiff:{name}", tmp_path / f"{name}.jsonl")
    for case in must_fail:
        assert records[case]["outcome"] == "failed", (case, records[case].get("message", "")[:800])
        record = records[case]  # the failure names the case, the mode, what was expected and what happened
        assert record["case"] == case and record["mode"]["explicit_x64_dtypes"] == "warn" and record["message"]
        assert record.get("expected") and record.get("actual"), record
    assert records[control]["outcome"] == "passed", (control, records[control].get("message", "")[:800])
