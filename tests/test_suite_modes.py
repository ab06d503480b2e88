"""The conformance suite itself, against real JAX, in each of the four modes and the strict modes
(one process each; the error and allow policies run the table cells their policy changes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from jax_conformance import SPECS_DIR
from jax_conformance.adapters import COMPILE_CACHE_ENV
from jax_conformance.launch.scheduler import pytest_command, pytest_options
from jax_conformance.mode import DEFAULT_MODES, STRICT_AREAS, STRICT_MODES, Mode

from tests.conftest import REPO, read_results
from tests.test_message_strength import assert_no_new_weak

# JAX's known divergences, as `jax-conformance run` uses them: listed cases are xfailed (and fail
# the run once they conform).
EXPECTATIONS = REPO / "specs" / "expectations" / "jax.yaml"


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory for the whole test session, whichever xdist worker runs a mode."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "suite-compiled"


# As `jax-conformance run` without --modes: the four modes over every spec, and the strict modes
# over the strict areas (mode.STRICT_MODES, STRICT_AREAS).
@pytest.mark.parametrize("mode", DEFAULT_MODES + STRICT_MODES, ids=lambda m: m.slug)
def test_suite_passes_against_jax(
    mode: Mode, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    out = tmp_path / "results.jsonl"
    # As `jax-conformance run` runs its modes: one compilation cache for the four.
    env = {**os.environ, COMPILE_CACHE_ENV: str(_shared_dir(tmp_path_factory))}
    # One mode under xdist (the whole suite split over two workers), the others serial: -n 2 costs
    # about 20% more CPU than a serial run, and `./dev test` already keeps both cores busy.
    # --dist loadfile: a table case's cells run in one batch in the worker that holds them; split
    # over two workers (--dist load) each worker ran the whole batch of the promotion tables.
    xdist = ["-n", "2", "--dist", "loadfile"] if mode == DEFAULT_MODES[0] else []
    # The error and allow policies: the table cells they expect the same of as warn are the warn
    # run's cells again (tests/policy_delta_plugin.py); every other case runs.
    delta = (
        ["-p", "tests.policy_delta_plugin", "--table-delta-from", "warn"]
        if not mode.x64 and not mode.flags and mode.explicit_x64_dtypes != "warn"
        else []
    )
    argv = pytest_command(
        "jax",
        mode,
        out,
        extra=[
            *xdist,
            *delta,
            *pytest_options(
                expectations=[EXPECTATIONS],
                specs=[str(SPECS_DIR / a) for a in STRICT_AREAS] if mode in STRICT_MODES else [],
            ),
        ],
    )
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=1800, env=env)
    records = [r for r in read_results(out) if r["record"] == "case"]
    bad = [
        f"{r['case']}: {r['outcome']}: {r['message'][:500]}"
        for r in records
        if r["outcome"] not in ("passed", "not_applicable", "xfailed")
    ]
    assert proc.returncode == 0, proc.stdout[-4000:] + "\n".join(bad)
    assert not bad
    executed = [r for r in records if r["outcome"] == "passed"]
    assert len(executed) >= 9, f"only {len(executed)} cases ran"
    assert all(r["mode"] == mode.to_json() for r in records)
    if delta:  # the policy's own table cells ran (the 64-bit operands), the others were left out
        assert "table cells left out" in proc.stdout
        assert sum(1 for r in records if "[" in r["case"] and r["outcome"] == "passed") >= 100
    headers = [r for r in read_results(out) if r["record"] == "run"]
    assert headers and all(
        "persistent compilation cache" in " ".join(h["environment"]["notes"]) for h in headers
    ), headers

    # Every defaults case says something in every mode: none of them may be skipped as not applicable.
    defaults = [r for r in records if r["case"].startswith("x64.defaults.")]
    assert defaults and all(r["outcome"] == "passed" for r in defaults)
    # The message check (issue #24): every documented/tested `match` of this mode rejects the
    # meaning-changing rewordings of the message JAX produced.
    assert_no_new_weak(records)
