"""Every flag block of the custom_vjp / custom_jvp specs fails when JAX silently ignores its flag.

A block `when: {flags: {jax_custom_vjp3: true}}` is only worth having if it can fail. For each
adapter of `tests/breakage/upgrade_flags.py` (real JAX that turns one flag the mode sets back off,
while reporting it set) tests/breakage/harness.py runs the suite in a mode process, in the mode
that sets the flag, over the cases
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

from importlib.metadata import version

import pytest
from jax_conformance.mode import Mode
from jax_conformance.spec.loader import load_spec, spec_files
from jax_conformance.spec.model import Case, Expectation, version_in
from packaging.version import Version

from tests.breakage import harness
from tests.breakage import upgrade_flags as flag_breaks

SPEC_DIRS = (harness.SPECS / "custom_vjp", harness.SPECS / "custom_jvp")
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
    pytest.mark.skipif(
        Version(JAX_VERSION) < Version("0.10"),
        reason="jax_custom_vjp3 / jax_disable_bwd_checks blocks describe JAX 0.10",
    ),
]


# One breakage adapter per flag, in each mode that sets the flag it ignores.
RUNS: list[tuple[type[flag_breaks.IgnoresFlag], Mode]] = (
    [
        (flag_breaks.IgnoresCustomVjp3, Mode.with_flags(x64, "warn", {"jax_custom_vjp3": True}))
        for x64 in (False, True)
    ]
    + [
        (
            flag_breaks.IgnoresRemat3,
            Mode.with_flags(x64, "warn", {"jax_custom_vjp3": True, "jax_remat3": True}),
        )
        for x64 in (False, True)
    ]
    + [
        (
            flag_breaks.IgnoresDisableBwdChecks,
            Mode.with_flags(x64, "warn", {"jax_disable_bwd_checks": True}),
        )
        for x64 in (False, True)
    ]
    + [
        (
            flag_breaks.IgnoresDisableBwdChecks,
            Mode.with_flags(x64, "warn", {"jax_custom_vjp3": True, "jax_disable_bwd_checks": True}),
        )
        for x64 in (False, True)
    ]
)
RUN_IDS = [f"{cls.__name__}-{mode.slug}" for cls, mode in RUNS]


def _cases() -> list[Case]:
    return [
        case
        for directory in SPEC_DIRS
        for path in spec_files([directory])
        for case in load_spec(path).cases
    ]


def _chosen(case: Case, mode: Mode) -> Expectation | None:
    """The block the harness chooses for `case` in `mode` with real JAX of this version on CPU."""
    return next((b for b in case.expect if b.when.matches(mode, "cpu", "jax", JAX_VERSION)), None)


def _names(block: Expectation) -> set[str]:
    return {name for name, _ in block.when.flags or ()}


def _must_fail(flag: str, mode: Mode, cases: list[Case]) -> set[str]:
    """Cases whose chosen block in `mode` is an outcome block naming the ignored `flag`.

    With x64 on, only blocks that name x64 (the x64-off run already tries those that do not).
    """
    out = set()
    for case in cases:
        block = _chosen(case, mode)
        if (
            block is not None
            and block.not_applicable is None
            and flag in _names(block)
            and (not mode.x64 or block.when.x64 is not None)
        ):
            out.add(case.id)
    return out


def _breakage(
    adapter: type[flag_breaks.IgnoresFlag], mode: Mode, cases: list[Case]
) -> harness.Breakage:
    """The run of `adapter` in `mode`: the cases of the ignored flag's blocks must fail, the control pass."""
    return harness.Breakage(
        f"tests.breakage.upgrade_flags:{adapter.__name__}",
        mode,
        tuple(sorted(_must_fail(adapter.flag, mode, cases))),
        (CONTROL,),
        adapter.claim,
    )


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return _cases()


@pytest.fixture(scope="module")
def breakages(cases: list[Case]) -> dict[str, harness.Breakage]:
    """Run id -> the breakage run there."""
    return {
        name: _breakage(adapter, mode, cases)
        for name, (adapter, mode) in zip(RUN_IDS, RUNS, strict=True)
    }


@pytest.fixture(scope="module")
def runs(
    breakages: dict[str, harness.Breakage], tmp_path_factory: pytest.TempPathFactory
) -> dict[harness.Breakage, harness.BreakageRun]:
    """Each breakage run and its real-JAX baseline (the same cases in the same mode), side by side."""
    jobs = [*breakages.values(), *(harness.baseline(b) for b in breakages.values())]
    return harness.run_all(jobs, SPEC_DIRS, tmp_path_factory.mktemp("flag-breakage"))


def test_every_flag_block_is_tried(cases: list[Case]) -> None:
    """Each outcome block naming a broken flag is the chosen block of some case in some run.

    Blocks for other releases (C4/C5's later words, gated `version: ">0.10.2"`) are left out: this
    release never chooses them.
    """
    tried = {
        (case.id, id(_chosen(case, mode)))
        for adapter, mode in RUNS
        for case in cases
        if case.id in _must_fail(adapter.flag, mode, cases)
    }
    untried = [
        f"{case.id} (line {block.line}: when {block.when.describe()})"
        for case in cases
        for block in case.expect
        if block.not_applicable is None
        and _names(block) & BROKEN_FLAGS
        and (case.id, id(block)) not in tried
        and (block.when.version is None or version_in(JAX_VERSION, block.when.version))
    ]
    assert not untried, "flag blocks no breakage run chooses:\n" + "\n".join(untried)
    caught = set().union(*(_must_fail(adapter.flag, mode, cases) for adapter, mode in RUNS))
    assert set(C_CASES_VJP3) <= caught, (
        f"C-cases with no flag block a break tries: {sorted(set(C_CASES_VJP3) - caught)}"
    )


def test_custom_jvp3_and_scan3_blocks_cannot_be_broken_here(cases: list[Case]) -> None:
    """jax_custom_jvp3 is absent (its blocks are skipped); the jax_scan3 blocks of 0.10.2 are not_applicable."""
    by_id = {c.id: c for c in cases}
    for cid in C_CASES_JVP3:
        case = by_id[cid]
        assert any(("jax_custom_jvp3", True) in (b.when.flags or ()) for b in case.expect), (
            f"{cid} has no jax_custom_jvp3 block"
        )
        # The flag is missing from this release's flags: a block naming it matches no value.
        chosen = next(
            b
            for b in case.expect
            if b.when.matches(
                Mode(False, "warn"), "cpu", "jax", JAX_VERSION, {"jax_custom_vjp3": False}
            )
        )
        assert "jax_custom_jvp3" not in _names(chosen), (
            f"{cid}: the jax_custom_jvp3 block would be chosen without the flag"
        )
    scan3 = [b for c in cases for b in c.expect if "jax_scan3" in _names(b)]
    assert scan3 and all(b.not_applicable for b in scan3), (
        "a jax_scan3 outcome block: add a breakage for it"
    )


@pytest.mark.parametrize("name", RUN_IDS)
def test_baseline_passes(
    name: str,
    breakages: dict[str, harness.Breakage],
    runs: dict[harness.Breakage, harness.BreakageRun],
) -> None:
    """Real JAX in the same mode passes every selected case, so the failures below are the ignored flag's."""
    harness.check_caught(runs[harness.baseline(breakages[name])])


@pytest.mark.parametrize("name", RUN_IDS)
def test_ignored_flag_is_caught(
    name: str,
    breakages: dict[str, harness.Breakage],
    runs: dict[harness.Breakage, harness.BreakageRun],
    cases: list[Case],
) -> None:
    """Each case whose chosen block names the ignored flag fails, saying what was expected and what happened."""
    brk = breakages[name]
    assert brk.catches, f"{name}: no case has a block for the ignored flag in mode {brk.mode.slug}"
    run = runs[brk]
    harness.check_caught(run)
    by_id = {c.id: c for c in cases}
    for cid in brk.catches:  # the block the harness judged by is the flag's block
        assert run.records[cid].get("expect_line") == _chosen(by_id[cid], brk.mode).line, (
            harness.describe(run, cid)
        )  # type: ignore[union-attr]
