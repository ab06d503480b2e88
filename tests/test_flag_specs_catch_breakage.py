"""Every flag block of the custom_vjp / custom_jvp specs fails when JAX silently ignores its flag.

A block `when: {flags: {jax_custom_vjp3: true}}` is only worth having if it can fail. For each
adapter of `tests/breakage/flags.py` (real JAX that turns one flag the mode sets back off, while
reporting it set) the suite runs in a subprocess, in the mode that sets the flag, over the cases
whose chosen block names that flag (read from the specs), plus one control case without flag
blocks. Each such case must come out `failed`, with a message, the expected block and what
happened; the control must pass. A baseline run with the real `jax` adapter in the same mode
shows the same cases pass, so each failure is the ignored flag's doing. Every outcome block naming
one of the flags must be chosen in one of the runs, and rows C1-C6 of the JAX test survey (the
custom_vjp3 cases) must be among the cases caught.

The jax_custom_jvp3 blocks (rows C7-C9) cannot be tried: no release through 0.11.0 has the flag,
so they are never chosen here; the test checks that, and that the jax_scan3 blocks of 0.10.2 are
`not_applicable` ones (which cannot fail by design).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.mode import Mode, value_text
from jax_conformance.spec.loader import load_spec, spec_files
from jax_conformance.spec.model import Case, Expectation, version_in
from packaging.version import Version

from tests.breakage import upgrade_flags as flag_breaks
from tests.conftest import case_records

REPO = Path(__file__).resolve().parent.parent
SPEC_DIRS = [REPO / "specs" / "custom_vjp", REPO / "specs" / "custom_jvp"]
JAX_VERSION = version("jax")
CONTROL = "custom_vjp.rule_outputs.fwd-pair-works"
# Rows C1-C6 of ../shared/reference/jax-tests-coverage.md section 3 (jax_custom_vjp3).
C_CASES_VJP3 = (
    "custom_vjp.closures.jax-test-vjp3-closed-over-vmap-tracer",  # C1
    "custom_vjp.closures.jax-test-vjp3-closed-over-tracer-in-residual",  # C2
    "custom_vjp.closures.jax-test-vjp3-closure-with-vmap2-primal",  # C3
    "custom_vjp.closures.jax-test-vjp3-closure-with-vmap2-grad",  # C3
    "custom_vjp.primal_consistency.jax-test-vjp3-overbatched-fwd",  # C4
    "custom_vjp.primal_consistency.jax-test-vjp3-jvp-of-symbolic-zeros-rule",  # C5
    "custom_vjp.primal_consistency.jax-test-vjp3-fwd-output-type-messages",  # C6
)
# Rows C7-C9 (jax_custom_jvp3, in no release through 0.11.0).
C_CASES_JVP3 = (
    "custom_jvp.closures.jax-test-jvp3-closed-over-vmap-tracer",  # C7
    "custom_jvp.rule_outputs.jax-test-overbatched-tangent-jvp-of-vmap",  # C8
    "custom_jvp.symbolic_zeros.jax-test-output-types",  # C9
)
BROKEN_FLAGS = {cls.flag for cls in flag_breaks.ALL}

pytestmark = [
    pytest.mark.slow,
    # The measured flag behaviour (and the flags themselves) are JAX 0.10.2's.
    pytest.mark.skipif(Version(JAX_VERSION) < Version("0.10"), reason="jax_custom_vjp3 / jax_disable_bwd_checks blocks describe JAX 0.10"),
]


@dataclass(frozen=True)
class Run:
    """One breakage adapter in one mode: the flag it ignores is among the mode's flags."""

    adapter: type[flag_breaks.IgnoresFlag]
    mode: Mode

    @property
    def spec(self) -> str:
        return f"tests.breakage.upgrade_flags:{self.adapter.__name__}"

    @property
    def name(self) -> str:
        return f"{self.adapter.__name__}-{self.mode.slug}"

    def args(self) -> list[str]:
        return [f"--x64={'on' if self.mode.x64 else 'off'}", f"--explicit-x64-dtypes={self.mode.explicit_x64_dtypes}",
                *(f"--flag={n}={value_text(v)}" for n, v in self.mode.flags)]


RUNS = [
    Run(flag_breaks.IgnoresCustomVjp3, Mode.with_flags(x64, "warn", {"jax_custom_vjp3": True})) for x64 in (False, True)
] + [
    Run(flag_breaks.IgnoresRemat3, Mode.with_flags(x64, "warn", {"jax_custom_vjp3": True, "jax_remat3": True})) for x64 in (False, True)
] + [
    Run(flag_breaks.IgnoresDisableBwdChecks, Mode.with_flags(x64, "warn", {"jax_disable_bwd_checks": True})) for x64 in (False, True)
] + [
    Run(flag_breaks.IgnoresDisableBwdChecks, Mode.with_flags(x64, "warn", {"jax_custom_vjp3": True, "jax_disable_bwd_checks": True}))
    for x64 in (False, True)
]


def _cases() -> list[Case]:
    return [case for directory in SPEC_DIRS for path in spec_files([directory]) for case in load_spec(path).cases]


def _chosen(case: Case, mode: Mode) -> Expectation | None:
    """The block the harness chooses for `case` in `mode` with real JAX of this version on CPU."""
    return next((b for b in case.expect if b.when.matches(mode, "cpu", "jax", JAX_VERSION)), None)


def _names(block: Expectation) -> set[str]:
    return {name for name, _ in block.when.flags or ()}


def _must_fail(run: Run, cases: list[Case]) -> set[str]:
    """Cases whose chosen block in the run's mode is an outcome block naming the ignored flag.

    With x64 on, only blocks that name x64 (the x64-off run already tries those that do not).
    """
    out = set()
    for case in cases:
        block = _chosen(case, run.mode)
        if (block is not None and block.not_applicable is None and run.adapter.flag in _names(block)
                and (not run.mode.x64 or block.when.x64 is not None)):
            out.add(case.id)
    return out


def _run_suite(adapter: str, run: Run, case_ids: set[str], out: Path) -> dict[str, dict[str, Any]]:
    specs = [arg for d in SPEC_DIRS for arg in ("--specs", str(d))]
    cmd = [sys.executable, "-m", "pytest", str(REPO / "conformance"), f"--adapter={adapter}", *run.args(), *specs,
           "-k", " or ".join(sorted(case_ids)), "--results", str(out), "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    records = case_records(out)
    if not records:
        raise AssertionError(f"{adapter} {run.mode.slug}: no case records (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return records


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return _cases()


@pytest.fixture(scope="module")
def runs(cases: list[Case], tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(adapter, run name) -> case id -> record, for each breakage run and its real-JAX baseline."""
    tmp = tmp_path_factory.mktemp("flag-breakage")
    jobs = []
    for run in RUNS:
        selected = _must_fail(run, cases) | {CONTROL}
        jobs += [(run.spec, run, selected), ("jax", run, selected)]
    with ThreadPoolExecutor(4) as pool:
        futures = {(a, r.name): pool.submit(_run_suite, a, r, ids, tmp / f"{a.rsplit(':', 1)[-1]}-{r.name}.jsonl") for a, r, ids in jobs}
        return {key: f.result() for key, f in futures.items()}


def _describe(adapter: str, record: dict[str, Any] | None, case: str) -> str:
    if record is None:
        return f"{case} under {adapter}: the case did not run"
    mode = Mode.from_json(record.get("mode", {}))
    return (f"{record['case']} [mode {mode.slug}] under {adapter}: {record['outcome']}"
            f"\n  expected: {json.dumps(record.get('expected'))[:400]}\n  actual: {json.dumps(record.get('actual'))[:400]}"
            f"\n  message: {(record.get('message') or '')[:400]}")


def test_every_flag_block_is_tried(cases: list[Case]) -> None:
    """Each outcome block naming a broken flag is the chosen block of some case in some run.

    Blocks for other releases (C4/C5's later words, gated `version: ">0.10.2"`) are left out: this
    release never chooses them.
    """
    tried = {(case.id, id(_chosen(case, run.mode))) for run in RUNS for case in cases if case.id in _must_fail(run, cases)}
    untried = [f"{case.id} (line {block.line}: when {block.when.describe()})"
               for case in cases for block in case.expect
               if block.not_applicable is None and _names(block) & BROKEN_FLAGS and (case.id, id(block)) not in tried
               and (block.when.version is None or version_in(JAX_VERSION, block.when.version))]
    assert not untried, "flag blocks no breakage run chooses:\n" + "\n".join(untried)
    caught = set().union(*(_must_fail(run, cases) for run in RUNS))
    assert set(C_CASES_VJP3) <= caught, f"C-cases with no flag block a break tries: {sorted(set(C_CASES_VJP3) - caught)}"


def test_custom_jvp3_and_scan3_blocks_cannot_be_broken_here(cases: list[Case]) -> None:
    """jax_custom_jvp3 is absent (its blocks are skipped); the jax_scan3 blocks of 0.10.2 are not_applicable."""
    by_id = {c.id: c for c in cases}
    for cid in C_CASES_JVP3:
        case = by_id[cid]
        assert any(("jax_custom_jvp3", True) in (b.when.flags or ()) for b in case.expect), f"{cid} has no jax_custom_jvp3 block"
        # The flag is missing from this release's flags: a block naming it matches no value.
        chosen = next(b for b in case.expect if b.when.matches(Mode(False, "warn"), "cpu", "jax", JAX_VERSION, {"jax_custom_vjp3": False}))
        assert "jax_custom_jvp3" not in _names(chosen), f"{cid}: the jax_custom_jvp3 block would be chosen without the flag"
    scan3 = [b for c in cases for b in c.expect if "jax_scan3" in _names(b)]
    assert scan3 and all(b.not_applicable for b in scan3), "a jax_scan3 outcome block: add a breakage for it"


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_baseline_passes(run: Run, runs: dict[tuple[str, str], dict[str, dict[str, Any]]], cases: list[Case]) -> None:
    """Real JAX in the same mode passes every selected case, so the failures below are the ignored flag's."""
    records = runs[("jax", run.name)]
    wanted = _must_fail(run, cases) | {CONTROL}
    bad = [_describe("jax", records.get(c), c) for c in sorted(wanted) if records.get(c, {}).get("outcome") != "passed"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_ignored_flag_is_caught(run: Run, runs: dict[tuple[str, str], dict[str, dict[str, Any]]], cases: list[Case]) -> None:
    """Each case whose chosen block names the ignored flag fails, saying what was expected and what happened."""
    records = runs[(run.spec, run.name)]
    by_id = {c.id: c for c in cases}
    must_fail = _must_fail(run, cases)
    assert must_fail, f"{run.name}: no case has a block for {run.adapter.flag} in mode {run.mode.slug}"
    uncaught = [_describe(run.spec, records.get(c), c) for c in sorted(must_fail) if records.get(c, {}).get("outcome") != "failed"]
    assert not uncaught, f"{run.adapter.flag} ignored ({run.adapter.claim}), not caught by:\n" + "\n".join(uncaught)
    for cid in must_fail:
        record = records[cid]
        assert Mode.from_json(record["mode"]) == run.mode, _describe(run.spec, record, cid)
        assert record.get("message") and record.get("expected") is not None and record.get("actual") is not None, _describe(run.spec, record, cid)
        # The block the harness judged by is the flag's block.
        assert record.get("expect_line") == _chosen(by_id[cid], run.mode).line, _describe(run.spec, record, cid)  # type: ignore[union-attr]
    control = records.get(CONTROL)
    assert control is not None and control["outcome"] == "passed", f"control case should pass: {_describe(run.spec, control, CONTROL)}"

