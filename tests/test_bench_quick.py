"""bench/run.py --quick keeps working: every section measured, the floor doing the harness's work.

No timing is asserted here (a benchmark is no timed test); what is checked is that each section
ran, produced figures, and that the generated floor saw the same outcomes as the harness.

The run is the smallest that still measures every ratio: one real spec file (x64/context.yaml,
five cases of which one is isolated, so the isolated section has a case and the matrix and
-n 2 sections real work) instead of --quick's three files (187 s -> 53 s on 2 cores).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SECTIONS = ("overhead", "matrix", "isolated", "scale", "xdist")
SPEC = "x64/context.yaml"


@pytest.mark.slow
def test_bench_quick_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    specs = tmp_path / "specs"
    (specs / SPEC).parent.mkdir(parents=True)
    shutil.copy2(REPO / "specs" / SPEC, specs / SPEC)
    proc = subprocess.run(
        [sys.executable, "bench/run.py", "--quick", "--specs", str(specs), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads(out.read_text())
    sections = results["sections"]
    assert set(SECTIONS) <= set(sections), sorted(sections)
    errors = {name: s["error"] for name, s in sections.items() if "error" in s}
    assert not errors, errors
    assert results["machine"]["cores"] >= 1 and results["machine"]["jax"] != "not installed"

    overhead = sections["overhead"]
    assert overhead["ratio"] > 0 and overhead["harness_wall_s"]["n"] >= 1
    assert (
        overhead["floor_cases"]["run"] > 0 and overhead["parity"]["harness"].get("passed", 0) >= 4
    )
    assert overhead["parity"]["same_outcomes"], overhead["parity"]
    assert sections["xdist"]["speedup"] > 0 and sections["xdist"]["same_outcomes"], sections[
        "xdist"
    ]

    matrix = sections["matrix"]
    assert matrix["ratio"] > 0 and matrix["run_rc"] == [0], matrix.get("run_tail")
    assert matrix["parity"] and all(p["same_outcomes"] for p in matrix["parity"].values()), matrix[
        "parity"
    ]

    isolated = sections["isolated"]
    assert isolated["cases"] == 1 and set(isolated["outcomes"]) == {"passed"}, isolated
    assert isolated["ids"] == ["x64.context.global-update-all-threads"], isolated
    assert isolated["bare_import_jax_s"]["median"] > 0

    scale = sections["scale"]
    assert scale["load"]["rc"] == 0, scale["load"]
    assert scale["collect"]["collected"] == scale["collect"]["cases"], scale["collect"]
    assert scale["report"]["rc"] == 0 and scale["report"]["first_page_mb"] > 0, scale["report"]
    # The table printed at the end names every measure.
    for label in ("one mode", "matrix", "isolated case", "lint", "collect", "report of", "-n 2"):
        assert label in proc.stdout, label
