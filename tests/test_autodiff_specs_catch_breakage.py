"""Every case in specs/autodiff fails when the rule it checks is broken in real JAX
(tests/breakage/autodiff.py), and a control case of the same directory still passes.

The baseline (the real `jax` adapter, every case passes) runs once for all breaks, in a module
fixture beside the breakage runs."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
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
    # Only the plugins the suite needs (xdist: its plugin declares an xdist hook); the others cost CPU per run.
    cmd = [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-p", "jax_conformance.plugin", str(REPO / "conformance"),
           f"--adapter={adapter}", "--x64=off", "--explicit-x64-dtypes=warn", "--specs", str(SPECS), "--results", str(out),
           "-q", "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "PYTEST_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    records = case_records(out)
    assert records, f"{adapter}: no case records\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return records


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict]]:
    """adapter -> case id -> record: the real `jax` adapter once (the baseline) and every break, side by side."""
    tmp = tmp_path_factory.mktemp("autodiff-breakage")
    adapters = ["jax", *(f"tests.breakage.autodiff:{name}" for name in sorted(BREAKS))]
    with ThreadPoolExecutor(2) as pool:
        futures = {a: pool.submit(_run, a, tmp / f"{a.rsplit(':', 1)[-1]}.jsonl") for a in adapters}
        return {a.rsplit(":", 1)[-1]: f.result() for a, f in futures.items()}


def test_every_case_is_caught_by_a_break() -> None:
    ids = {c.id for f in spec_files([SPECS]) for c in load_spec(f).cases}
    caught = set().union(*(must for must, _ in BREAKS.values()))
    assert ids <= caught, ids - caught


def test_baseline_passes(runs: dict[str, dict[str, dict]]) -> None:
    """Unbroken JAX passes every case of the directory, so the failures below are the breaks' doing."""
    base = runs["jax"]
    ids = {c.id for f in spec_files([SPECS]) for c in load_spec(f).cases}
    assert set(base) == ids, set(base) ^ ids
    assert all(r["outcome"] == "passed" for r in base.values()), {k: r["outcome"] for k, r in base.items()}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_break_is_caught(name: str, runs: dict[str, dict[str, dict]]) -> None:
    must_fail, control = BREAKS[name]
    records = runs[name]
    for case in must_fail:
        assert records[case]["outcome"] == "failed", (case, records[case].get("message", "")[:800])
        record = records[case]  # the failure names the case, the mode, what was expected and what happened
        assert record["case"] == case and record["mode"]["explicit_x64_dtypes"] == "warn" and record["message"]
        assert record.get("expected") and record.get("actual"), record
    assert records[control]["outcome"] == "passed", (control, records[control].get("message", "")[:800])
