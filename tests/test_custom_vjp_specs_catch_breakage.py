"""Every custom_vjp / custom_jvp spec case fails when the rule it checks is broken in real JAX.

For each breakage adapter in `tests/breakage/custom_vjp.py` the suite runs in a subprocess
(`pytest conformance/ --adapter=tests.breakage.custom_vjp:NAME`) over the cases that check
the broken rule plus one unrelated control case; the former must come out `failed` and the
control `passed`. That real, unbroken JAX passes the same cases is tests/test_suite_modes.py's
check (every case, every mode), so the failures are the break's doing; no baseline run is
repeated here. The runs go in parallel to stay near a minute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.spec.loader import load_spec, spec_files
from packaging.version import Version

from tests.breakage import custom_jvp as jvp_breaks
from tests.breakage import custom_vjp as breaks
from tests.conftest import case_records

REPO = Path(__file__).resolve().parent.parent
SPEC_DIRS = [REPO / "specs" / "custom_vjp", REPO / "specs" / "custom_jvp"]
MODE = ["--x64=off", "--explicit-x64-dtypes=warn"]
PARALLEL = max(2, min(4, os.cpu_count() or 2))

pytestmark = [
    pytest.mark.slow,
    # The breaks patch private names of jax._src.custom_derivatives as of JAX 0.10.
    pytest.mark.skipif(Version(version("jax")) < Version("0.10"), reason="the breakage adapters patch JAX 0.10 internals"),
]


@dataclass(frozen=True)
class Break:
    """A breakage adapter, the cases that must fail under it, and a case that must still pass."""

    adapter: str
    must_fail: tuple[str, ...]
    control: str
    module: str = "custom_vjp"  # the module of tests/breakage that holds the class

    @property
    def spec(self) -> str:
        return f"tests.breakage.{self.module}:{self.adapter}"


def _ids(prefix: str, names: str) -> tuple[str, ...]:
    return tuple(f"{prefix}.{n}" for n in names.split())


V_ND, V_RO, V_CL, V_INT, V_OPT = (f"custom_vjp.{t}" for t in ("nondiff_argnums", "rule_outputs", "closures", "integer_inputs", "defvjp_options"))
J_ND, J_CL = "custom_jvp.nondiff_argnums", "custom_jvp.closures"
J_RO, J_INT, V_PC = "custom_jvp.rule_outputs", "custom_jvp.integer_inputs", "custom_vjp.primal_consistency"
J_B, V_B = "custom_jvp.basics", "custom_vjp.basics"
V_NC, V_NV, V_CC = "custom_vjp.none_cotangents", "custom_vjp.nondiff_values", "custom_vjp.closure_convert"
J_SZ, V_SZ = "custom_jvp.symbolic_zeros", "custom_vjp.symbolic_zeros"

BREAKS = [
    # claim 1
    Break("AcceptTracersInNondiff",
          _ids(V_ND, "tracer-under-jit tracer-under-jit-grad tracer-jax-test-jit tracer-in-container-under-jit "
                     "tracer-in-container-under-grad tracer-under-vmap tracer-under-vmap-of-grad tracer-under-grad-wrt-it")
          + _ids(V_OPT, "nondiff-argnames-tracer-rejected"),
          f"{V_ND}.old-style-concrete-grad"),
    Break("NondiffOnlyCallables",
          _ids(V_ND, "old-style-concrete-grad old-style-concrete-primal old-style-closed-over-bounds-under-jit old-style-vmap-over-x-only"),
          f"{V_ND}.skip-app-grad"),
    # claims 2, 3, 4, 6, 7, 10: the custom rule must be what differentiation uses
    Break("GradIgnoresCustomRule",
          _ids(V_ND, "migrated-grad migrated-grad-table migrated-primal-is-identity migrated-jit-grad-traced-bounds "
                     "migrated-grad-of-jit migrated-vmap-over-cotangent-scale migrated-vmap-over-bound migrated-jit-of-vmap "
                     "migrated-vmap-of-jit migrated-grad-of-grad-clipped migrated-matches-numpy-clip "
                     "migrated-jvp-is-rejected skip-app-grad skip-app-grad-scaled skip-app-jit-static skip-app-jit-inside-grad "
                     "skip-app-vmap app-static-first-in-bwd app2-statics-first-wherever-they-are app2-under-jit-and-vmap "
                     "jax-test-value-and-grad")
          + _ids(V_RO, "fwd-pair-works rules-run-under-grad")
          + _ids(J_ND, "tracer-under-jit-grad tracer-under-vmap jvp-uses-rule app-grad-uses-rule jax-test-app-jvp")
          + _ids(V_CL, "jit-tracer-rule-used vmap-tracer-rule-used grad-wrt-argument-still-works closure-convert-grad "
                       "closure-convert-grad-under-jit closure-convert-grad-under-vmap unconverted-closure-grad-wrt-x")
          + _ids(J_CL, "jit-tracer-rule-used vmap-tracer-rule-used vmap-tracer-jvp grad-wrt-argument-still-works")
          + _ids(J_RO, "pair-works") + _ids(V_PC, "grad-still-works")
          + _ids(J_B, "grad-of-grad-differentiates-the-rule higher-order-uses-rule-when-rule-calls-f log1pexp-defjvps "
                      "log1pexp-stable-grad nonlinear-rule-fails-under-grad nonlinear-rule-runs-under-jvp python-control-flow "
                      "pytree-dict-tangent pytree-namedtuple-in-dict-out sqrt-ratio-convention-at-zero")
          + _ids(V_B, "fixed-point-grad-and-grad-of-grad pytree-namedtuple-in-dict-out")
          + _ids(V_NV, "float-nondiff-under-remat")
          + _ids(V_CL, "jit-tracer-grad-outside-jit jax-test-closure-over-constant-under-scan-and-vmap")
          + _ids(J_SZ, "jacfwd-of-jit"),
          f"{V_ND}.app-primal"),
    # claim 2
    Break("NoneCotangentAsOne",
          _ids(V_ND, "migrated-none-gives-zero migrated-none-gives-zero-under-jit") + _ids(V_RO, "bwd-none-entry-is-zero")
          + _ids(V_NC, "none-for-whole-tuple-argument none-for-whole-tuple-is-zero-per-leaf none-for-whole-dict-argument"),
          f"{V_ND}.migrated-grad"),
    Break("RejectNoneCotangents",
          _ids(V_ND, "migrated-grad migrated-jit-grad-traced-bounds migrated-vmap-over-bound migrated-none-gives-zero "
                     "migrated-grad-of-grad")
          + _ids(V_INT, "grad-wrt-float grad-wrt-float-under-jit grad-under-vmap-over-int int-cotangent-is-float0 "
                        "integer-bounds-traced-under-jit"),
          f"{V_RO}.fwd-pair-works"),
    # claim 3
    Break("StaticArgsLastInBwd",
          _ids(V_ND, "app-static-first-in-bwd app2-statics-first-wherever-they-are app2-under-jit-and-vmap "
                     "jax-test-value-and-grad skip-app-grad skip-app-jit-static skip-app-vmap")
          + _ids(V_CL, "closure-convert-grad"),
          f"{V_ND}.migrated-grad"),
    Break("StaticArgsNotPassedToBwd",
          _ids(V_ND, "bwd-arity-includes-statics app-static-first-in-bwd skip-app-grad"),
          f"{V_ND}.migrated-grad"),
    Break("RejectFunctionNondiff",
          _ids(V_ND, "app-primal jax-test-primal-int skip-app-grad")
          + _ids(V_CL, "closure-convert-primal closure-convert-grad closure-convert-hoists-only-tracers"),
          f"{V_ND}.old-style-concrete-grad"),
    Break("JitTreatsCallablesAsStatic", _ids(V_ND, "function-not-static-under-jit"), f"{V_ND}.skip-app-jit-static"),
    # claim 4
    Break("NoFwdPairCheck",
          _ids(V_RO, "fwd-bare-value fwd-triple fwd-one-tuple fwd-none fwd-bare-under-jit-grad"),
          f"{V_RO}.fwd-pair-works"),
    Break("FwdMustBeTuple", _ids(V_RO, "fwd-list-of-two-accepted"), f"{V_RO}.fwd-pair-works"),
    Break("FwdRunsOnPrimalCall",
          _ids(V_RO, "rules-not-run-without-differentiation broken-fwd-unused-without-differentiation")
          + _ids(V_PC, "fwd-mismatch-plain-call-unaffected"),
          f"{J_ND}.app-primal"),
    # claim 5
    Break("LenientBwdStructure",
          _ids(V_RO, "bwd-too-many bwd-too-few bwd-bare-array bwd-wrong-nesting"),
          f"{V_RO}.bwd-list-accepted"),
    Break("NoBwdShapeCheck", _ids(V_RO, "bwd-wrong-shape bwd-wrong-shape-second-argument"), f"{V_RO}.bwd-tuple-per-argument"),
    Break("BwdCotangentsReversed",
          _ids(V_RO, "bwd-tuple-per-argument bwd-list-accepted") + _ids(V_ND, "migrated-none-gives-zero migrated-grad"),
          f"{V_RO}.fwd-pair-works"),
    # claim 6
    Break("CustomJvpRejectsTracers",
          _ids(J_ND, "tracer-under-jit-primal tracer-under-jit-grad tracer-under-vmap tracer-under-vmap-primal "
                     "grad-wrt-nondiff-is-zero"),
          f"{J_ND}.app-grad-uses-rule"),
    Break("CustomJvpNondiffNotStopped",
          _ids(J_ND, "grad-wrt-nondiff-is-zero grad-wrt-nondiff-is-zero-under-jit grad-wrt-nondiff-other-paths-kept"),
          f"{J_ND}.tracer-under-jit-grad"),
    Break("CustomJvpStaticArgsLast",
          _ids(J_ND, "app-grad-uses-rule app2-statics-first jax-test-app-jvp"),
          f"{J_CL}.jit-tracer-rule-used"),
    Break("CustomJvpArrayOnlyNondiff",
          _ids(J_ND, "app-primal app-grad-uses-rule app2-statics-first jax-test-app-jvp"),
          f"{J_ND}.tracer-under-jit-grad"),
    # claim 7
    Break("RejectClosedOverTracers",
          _ids(V_CL, "jit-tracer-primal jit-tracer-rule-used vmap-tracer-rule-used jax-test-closed-over-vmap-tracer "
                     "jax-test-closed-over-tracer-in-residual jax-test-bwd-closes-over-tracer jax-test-bwd-closes-over-tracer-more "
                     "jax-test-fwd-closes-over-tracer jax-test-vjp3-closed-over-vmap-tracer "
                     "jax-test-vjp3-closed-over-tracer-in-residual jax-test-vjp3-closure-with-vmap2-primal "
                     "jax-test-vjp3-closure-with-vmap2-grad")
          + _ids(J_CL, "jit-tracer-primal jit-tracer-rule-used vmap-tracer-rule-used vmap-tracer-jvp "
                     "jax-test-jvp3-closed-over-vmap-tracer"),
          f"{V_CL}.grad-wrt-argument-still-works"),
    # claim 8
    Break("BypassRuleForClosedOverTracers",
          _ids(V_CL, "grad-wrt-closed-over-is-error jvp-wrt-closed-over-is-error grad-of-jit-wrt-closed-over-is-error "
                     "jit-of-grad-wrt-closed-over-is-error unconverted-closure-grad-wrt-c-is-error")
          + _ids(V_NV, "jvp-function-hiding-jvp-tracer jvp-function-hiding-grad-tracer")
          + _ids(J_CL, "grad-wrt-closed-over-is-error jax-test-jvp-error jax-test-grad-error grad-of-jit-wrt-closed-over-is-error"),
          f"{V_CL}.grad-wrt-argument-still-works"),
    # claim 9
    Break("NoFloat0ForIntCotangents",
          _ids(V_INT, "int-cotangent-is-float0 grad-allow-int-is-float0 bwd-nonzero-for-int-becomes-float0 "
                      "integer-bounds-as-ordinary-arguments")
          + _ids(J_INT, "rule-gets-float0-tangent-jvp grad-with-int-argument custom-vjp-integer-output-grad")
          + _ids(V_INT, "float0-bwd-under-scan int-cotangent-under-jit-vjp"),
          f"{V_INT}.grad-wrt-float"),
    # claim 11
    Break("SymbolicZerosIgnored",
          _ids(V_OPT, "symbolic-zeros-perturbed symbolic-zeros-both-perturbed symbolic-zeros-unused-output "
                      "symbolic-zeros-both-outputs-used")
          + _ids(V_SZ, "nondiff-arguments-passed-raw scan-under-grad under-remat wrong-shape-symbolic-zero grad-of-vmap "
                       "bwd-returns-symbolic-zero")
          + _ids(V_PC, "jax-test-vjp3-jvp-of-symbolic-zeros-rule"),
          f"{V_OPT}.optimize-remat"),
    Break("OptimizeRematMissing",
          _ids(V_OPT, "optimize-remat optimize-remat-under-jit optimize-remat-with-symbolic-zeros optimize-remat-keyword-only-fwd "
                      "optimize-remat-under-remat"),
          f"{V_OPT}.symbolic-zeros-perturbed"),
    Break("NondiffArgnamesIgnored",
          _ids(V_OPT, "nondiff-argnames nondiff-argnums-and-argnames nondiff-argnames-tracer-rejected") + _ids(J_ND, "nondiff-argnames"),
          f"{V_OPT}.missing-defvjp"),
    Break("PrimalWithoutRule", _ids(V_OPT, "missing-defvjp missing-defvjp-grad"), f"{V_OPT}.optimize-remat"),
    # issue 14, item 1: what a custom_jvp rule returns
    Break("JvpPairUnchecked", _ids(J_RO, "not-a-pair-jvp not-a-pair-grad not-a-pair-triple"), f"{J_RO}.pair-works", "custom_jvp"),
    Break("JvpTangentStructureUnchecked", _ids(J_RO, "tangent-structure-differs tangent-structure-differs-grad"),
          f"{J_RO}.pair-works", "custom_jvp"),
    Break("JvpTangentTypeUnchecked",
          _ids(J_RO, "tangent-shape-differs tangent-shape-differs-grad tangent-dtype-differs")
          + _ids(J_INT, "integer-output-int-tangent-rejected"),
          f"{J_RO}.pair-works", "custom_jvp"),
    # items 1 and 6: the rule's primal output is the function's
    Break("RulePrimalNotCheckedAgainstFunction",
          _ids(J_RO, "primal-structure-differs-under-scan primal-shape-differs-under-scan primal-structure-differs-under-jit")
          + _ids(V_PC, "fwd-structure-differs-under-scan fwd-shape-differs-under-scan fwd-shape-differs-under-jit "
                       "jax-test-vjp3-fwd-output-type-messages"),
          f"{J_RO}.pair-works", "custom_jvp"),
    Break("JvpRuleRunsOnPrimalCall",
          _ids(J_RO, "not-a-pair-plain-call-unaffected tangent-structure-plain-call-unaffected tangent-shape-plain-call-unaffected")
          + _ids(J_B, "rule-runs-only-under-differentiation"),
          f"{J_RO}.pair-works", "custom_jvp"),
    # item 3: no rule
    Break("MissingJvpRuleRunsFunction", _ids(J_RO, "missing-rule-call missing-rule-jvp missing-rule-grad missing-rule-jit"),
          f"{J_RO}.pair-works", "custom_jvp"),
    # item 2: integer inputs and outputs
    Break("ZeroFromPrimalKeepsDtype",
          _ids(J_INT, "zero-from-primal float0-tangent-jvp float0-tangent-under-scan integer-output-jvp integer-output-grad"),
          f"{J_RO}.pair-works", "custom_jvp"),
    # item 6: jvp of a custom_vjp
    Break("JvpOfCustomVjpGivesZeros", _ids(V_PC, "jvp-rejected jvp-of-vmap-rejected jvp-of-jit-rejected"),
          f"{V_PC}.grad-still-works", "custom_jvp"),
    # item 9: the notebook's basic API
    Break("DefaultsNotPassedToRules", _ids(J_B, "keyword-and-default-arguments") + _ids(V_B, "keyword-and-default-arguments"),
          f"{J_B}.log1pexp-stable-grad", "custom_jvp"),
    Break("DefjvpsRulesReversed", _ids(J_B, "defjvps-per-argument-summed defjvps-none-is-zero defjvps-first-rule-none"),
          f"{J_B}.log1pexp-defjvps", "custom_jvp"),
    Break("DefjvpsWithNondiffAccepted", _ids(J_B, "defjvps-with-nondiff-argnums-rejected"), f"{J_B}.log1pexp-defjvps", "custom_jvp"),
    # item 4: None cotangents beyond one leaf
    Break("NestedNoneCotangentAsOne", _ids(V_NC, "none-in-subtrees none-input-leaf"), f"{V_NC}.none-for-whole-tuple-argument"),
    # item 7: non-array nondiff values
    Break("NondiffMustBeHashable",
          _ids(V_NV, "unhashable-list-primal unhashable-list-grad unhashable-list-jit-of-grad unhashable-list-vmap-of-grad"),
          f"{V_NV}.float-nondiff-under-remat"),
    # item 8: closure_convert
    Break("ClosureConvertHoistsEverything",
          _ids(V_CC, "mixed-closure-grads mixed-closure-primal integer-closure-under-jit-hoists-nothing"),
          f"{V_CC}.aux-args-packed-wrongly"),
    Break("ClosureConvertStructureUnchecked", _ids(V_CC, "aux-args-packed-wrongly"), f"{V_CC}.mixed-closure-grads"),
    # item 5: symbolic zeros
    Break("JvpSymbolicZerosIgnored",
          _ids(J_SZ, "constant-arguments-get-symbolic-zeros constant-arguments-under-jit constant-arguments-under-vmap grad-of-vmap "
                     "not-instantiated-under-jvp-of-vmap scan-under-grad jax-test-output-types"),
          f"{J_SZ}.jacfwd-of-jit", "custom_jvp"),
    Break("SymbolicZeroFromPrimalIsOne", _ids(J_SZ, "zero-from-primal-under-vmap-of-jit"), f"{J_SZ}.jacfwd-of-jit", "custom_jvp"),
    # item 10: every gradient (and jvp tangent) value is checked with its dtype
    Break("GradDtypeHalved",
          _ids(J_CL, "grad-wrt-argument-still-works jit-tracer-rule-used vmap-tracer-jvp vmap-tracer-rule-used")
          + _ids(J_INT, "custom-vjp-integer-output-grad float0-tangent-under-scan grad-with-int-argument "
                     "integer-output-grad integer-output-jvp rule-gets-float0-tangent-jvp")
          + _ids(J_ND, "app-grad-uses-rule app2-statics-first grad-wrt-nondiff-is-zero "
                     "grad-wrt-nondiff-is-zero-under-jit grad-wrt-nondiff-other-paths-kept jvp-uses-rule "
                     "nondiff-argnames tracer-under-jit-grad tracer-under-vmap")
          + _ids(J_RO, "pair-works jax-test-overbatched-tangent-grads jax-test-overbatched-tangent-jvp-of-vmap")
          + _ids(V_PC, "jax-test-vjp3-overbatched-fwd")
          + _ids(V_CL, "closure-convert-grad closure-convert-grad-under-jit closure-convert-grad-under-vmap "
                     "grad-wrt-argument-still-works jax-test-bwd-closes-over-tracer "
                     "jax-test-closed-over-tracer-in-residual jit-tracer-rule-used "
                     "unconverted-closure-grad-wrt-x vmap-tracer-rule-used")
          + _ids(V_OPT, "nondiff-argnames nondiff-argnums-and-argnames optimize-remat optimize-remat-under-jit "
                     "symbolic-zeros-both-outputs-used symbolic-zeros-both-perturbed symbolic-zeros-perturbed "
                     "symbolic-zeros-unused-output")
          + _ids(V_INT, "grad-under-vmap-over-int grad-wrt-float grad-wrt-float-under-jit "
                     "integer-bounds-traced-under-jit")
          + _ids(V_ND, "app-static-first-in-bwd app2-statics-first-wherever-they-are app2-under-jit-and-vmap "
                     "jax-test-value-and-grad migrated-grad migrated-grad-of-grad migrated-grad-of-grad-clipped "
                     "migrated-grad-of-jit migrated-grad-table migrated-jit-grad-traced-bounds "
                     "migrated-jit-of-vmap migrated-matches-numpy-clip migrated-none-gives-zero "
                     "migrated-none-gives-zero-under-jit migrated-primal-is-identity migrated-vmap-of-jit "
                     "migrated-vmap-over-bound migrated-vmap-over-cotangent-scale "
                     "old-style-closed-over-bounds-under-jit old-style-concrete-grad old-style-vmap-over-x-only "
                     "skip-app-grad skip-app-grad-scaled skip-app-jit-inside-grad skip-app-jit-static "
                     "skip-app-vmap")
          + _ids(V_PC, "grad-still-works")
          + _ids(J_B, "defjvps-first-rule-none defjvps-none-is-zero defjvps-per-argument-summed grad-of-grad-differentiates-the-rule "
                      "higher-order-uses-rule-when-rule-calls-f keyword-and-default-arguments log1pexp-defjvps log1pexp-stable-grad "
                      "nonlinear-rule-runs-under-jvp python-control-flow pytree-dict-tangent pytree-namedtuple-in-dict-out "
                      "sqrt-ratio-convention-at-zero")
          + _ids(V_B, "fixed-point-grad-and-grad-of-grad keyword-and-default-arguments pytree-namedtuple-in-dict-out")
          + _ids(V_NC, "none-for-whole-dict-argument none-for-whole-tuple-argument none-for-whole-tuple-is-zero-per-leaf "
                       "none-in-subtrees none-input-leaf")
          + _ids(V_NV, "float-nondiff-under-remat unhashable-list-grad unhashable-list-jit-of-grad unhashable-list-vmap-of-grad")
          + _ids(V_CC, "mixed-closure-grads")
          + _ids(V_OPT, "optimize-remat-under-remat") + _ids(V_INT, "float0-bwd-under-scan")
          + _ids(V_RO, "bwd-list-accepted bwd-none-entry-is-zero bwd-tuple-per-argument fwd-list-of-two-accepted "
                     "fwd-pair-works"),
          f"{V_ND}.app-primal", "custom_jvp"),
]


def _spec_case_ids() -> set[str]:
    ids: set[str] = set()
    for directory in SPEC_DIRS:
        for path in spec_files([directory]):
            ids.update(case.id for case in load_spec(path).cases)
    return ids


def _keyword(case_ids: set[str]) -> str:
    # A case's item is named "<id>[<mode>-<backend>]": "<id>[" selects that case and no longer id,
    # so each run runs the listed cases and nothing else.
    return " or ".join(f"{case}[" for case in sorted(case_ids))


def _run_suite(adapter: str, case_ids: set[str], out: Path) -> dict[str, dict[str, Any]]:
    """Run the selected cases in a subprocess; the case records by id."""
    specs = [arg for d in SPEC_DIRS for arg in ("--specs", str(d))]
    # Only the plugins the suite needs (xdist: its plugin declares an xdist hook): the other
    # installed ones cost about two seconds of CPU per run, and there are fifty runs.
    cmd = [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-p", "jax_conformance.plugin", str(REPO / "conformance"),
           f"--adapter={adapter}", *MODE, *specs, "-k", _keyword(case_ids), "--results", str(out), "-q", "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "PYTEST_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    records = case_records(out)
    if not records:
        raise AssertionError(f"{adapter}: no case records (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return records


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """adapter -> case id -> record, for every break."""
    tmp = tmp_path_factory.mktemp("breakage")
    jobs = {b.spec: {*b.must_fail, b.control} for b in BREAKS}
    order = sorted(jobs, key=lambda a: -len(jobs[a]))
    with ThreadPoolExecutor(PARALLEL) as pool:
        futures = {a: pool.submit(_run_suite, a, jobs[a], tmp / f"{a.rsplit(':', 1)[-1]}.jsonl") for a in order}
        return {a: f.result() for a, f in futures.items()}


def _describe(adapter: str, record: dict[str, Any] | None) -> str:
    if record is None:
        return f"{adapter}: the case did not run"
    mode = record.get("mode", {})
    return (f"{record['case']} [x64={mode.get('x64')}, explicit_x64_dtypes={mode.get('explicit_x64_dtypes')}] under {adapter}: "
            f"{record['outcome']}\n  expected: {json.dumps(record.get('expected'))}\n  actual: {json.dumps(record.get('actual'))[:600]}"
            f"\n  message: {(record.get('message') or '')[:600]}")


def test_every_case_is_covered_by_a_break() -> None:
    """No case in specs/custom_vjp or specs/custom_jvp goes unchecked by the breakage runs."""
    listed = {c for b in BREAKS for c in b.must_fail}
    missing = _spec_case_ids() - listed
    assert not missing, f"cases no break is expected to catch: {sorted(missing)}"
    unknown = (listed | {b.control for b in BREAKS}) - _spec_case_ids()
    assert not unknown, f"listed cases that are not in the specs: {sorted(unknown)}"
    assert {b.spec for b in BREAKS} == {f"tests.breakage.{m.__name__.rsplit('.', 1)[-1]}:{cls.__name__}" for m in (breaks, jvp_breaks) for cls in m.ALL}, \
        "every breakage adapter is run"


def _params() -> Iterator[Any]:
    for b in BREAKS:
        yield pytest.param(b, id=b.adapter)


@pytest.mark.parametrize("brk", list(_params()))
def test_break_is_caught(brk: Break, runs: dict[str, dict[str, dict[str, Any]]]) -> None:
    """The cases of the broken rule fail (with a message saying what happened), and the control case passes."""
    adapter = brk.spec
    records = runs[adapter]
    claim = getattr(jvp_breaks if brk.module == "custom_jvp" else breaks, brk.adapter).claim
    uncaught = [_describe(adapter, records.get(c)) for c in brk.must_fail if records.get(c, {}).get("outcome") != "failed"]
    assert not uncaught, f"break of claim {claim} not caught by:\n" + "\n".join(uncaught)
    for case in brk.must_fail:
        record = records[case]
        assert record.get("message") and record.get("actual") is not None and record.get("expected") is not None, _describe(adapter, record)
    control = records.get(brk.control)
    assert control is not None and control["outcome"] == "passed", f"control case should pass: {_describe(adapter, control)}"
