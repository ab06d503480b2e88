"""`jax-conformance mutate` end to end on a small slice: one mutant killed, one surviving."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jax_conformance.records import read_mutation

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mutate_kills_and_reports_survivors(tmp_path: Path) -> None:
    out = tmp_path / "mutation.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "mutate",
            "--mutants",
            "default-int64-x64-off,bwd-static-args-last",
            "--modes",
            "off-warn",
            "-k",
            "x64 and defaults and not startup",
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, (
        proc.stdout + proc.stderr
    )  # the bwd mutant survives this slice of the suite
    summary = read_mutation(out)
    assert summary is not None
    rows = {m["name"]: m for m in summary["mutants"]}
    assert summary["score"] == "1/2"
    assert rows["default-int64-x64-off"]["killed"] is True
    # -k selects over each case's id, claim and tags (never the file name): the cases killing it are x64 cases
    killers = rows["default-int64-x64-off"]["killed_by"]
    assert killers and all(k.startswith("x64.") and k.endswith("[off-warn]") for k in killers), (
        killers
    )
    assert (
        rows["bwd-static-args-last"]["killed"] is False
        and rows["bwd-static-args-last"]["killed_by"] == []
    )
    assert "mutation score: 1/2 killed (50.0%)" in proc.stdout


def test_unknown_mutant_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "mutate",
            "--mutants",
            "no-such-mutant",
            "--out",
            str(tmp_path / "m.json"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "unknown mutant no-such-mutant" in proc.stderr
