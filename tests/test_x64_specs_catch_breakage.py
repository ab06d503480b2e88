"""Every x64 spec case is seen to fail: run the suite against JAX with one rule broken.

Each breakage adapter in tests/breakage/x64.py patches real JAX in the worker so that one
documented rule no longer holds. For each one the suite runs in a subprocess, in the mode
where the rule speaks, restricted with -k to the cases that should catch it (plus, for some,
a control case that must still pass). The test reads the results file and the terminal
output: the expected cases must be `failed`, and each failure must name the case, the mode,
what was expected and what happened. That unbroken JAX passes the same cases in the same
modes is tests/test_suite_modes.py's check (every case, every mode, passed or not applicable;
a case not applicable there could not fail here), so the failures are the breakage's doing;
no baseline run is repeated here.

All runs start at once (module fixture, a thread per subprocess) to keep the file short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODES = {"off-warn": ("off", "warn"), "off-error": ("off", "error"), "off-allow": ("off", "allow"), "on": ("on", "warn")}
LABELS = {
    "off-warn": "x64=off, explicit_x64_dtypes=warn",
    "off-error": "x64=off, explicit_x64_dtypes=error",
    "off-allow": "x64=off, explicit_x64_dtypes=allow",
    "on": "x64=on, explicit_x64_dtypes=warn",
}
RUN_TIMEOUT = 600


@dataclass(frozen=True)
class Breakage:
    """One break: the adapter class, the mode it is run in, and the cases that must catch it."""

    adapter: str
    claim: str
    mode: str
    catches: tuple[str, ...]
    controls: tuple[str, ...] = field(default=())  # cases the break does not touch: must pass

    @property
    def ids(self) -> tuple[str, ...]:
        return self.catches + self.controls

    @property
    def name(self) -> str:
        return f"{self.adapter}-{self.mode}"


# The per-function cases of specs/x64/warnings.yaml (issue 13, items 1 and 3): each asks for one 64-bit dtype.
W13_ALL = tuple(f"x64.warnings.{c}" for c in (
    "arange-float64", "zeros-int64", "ones-uint64", "full-complex128", "empty-int64", "linspace-float64", "eye-uint64",
    "identity-int64", "tri-float64", "array-uint64", "asarray-complex128", "astype-uint64", "ones-like-int64",
    "zeros-like-float64", "full-like-complex128", "empty-like-uint64"))

X64_EXPLICIT_PER_FUNCTION = tuple(f"x64.explicit.{f}" for f in (
    "arange", "zeros", "ones", "full", "empty", "linspace", "eye", "array", "asarray", "astype", "array-python-scalar"))

BREAKAGES = [
    # claims 1-3: defaults and the canonicalization table
    Breakage("DefaultInt64", "1 defaults (x64 off), 3 table", "off-warn",
             ("x64.defaults.arange-int", "x64.defaults.full-int", "x64.defaults.python-int-list", "x64.defaults.like-numpy",
              "x64.defaults.ones-dtype-int",
              "x64.canonicalize.narrowed-64bit", "x64.canonicalize.python-types", "x64.explicit.message-int64"),
             ("x64.defaults.zeros-float",)),
    Breakage("X64OnNarrowDefaults", "2 defaults (x64 on)", "on",
             ("x64.defaults.zeros-float", "x64.defaults.dtype-float", "x64.defaults.dtype-complex",
              "x64.defaults.float-creation", "x64.defaults.like-numpy"),
             ("x64.defaults.arange-int",)),
    Breakage("PythonScalarsNarrowed", "1-2 Python scalars and lists", "on",
             ("x64.defaults.python-int-scalar", "x64.defaults.python-float-scalar", "x64.defaults.python-complex-scalar",
              "x64.defaults.python-bool-scalar", "x64.defaults.python-int-list", "x64.defaults.python-float-list")),
    Breakage("NumpyInputsKeep64", "1 NumPy 64-bit inputs", "off-warn", ("x64.defaults.numpy-64bit-input",)),
    Breakage("CanonicalizeIdentity", "3 table", "off-warn",
             ("x64.canonicalize.narrowed-64bit", "x64.canonicalize.python-types"), ("x64.canonicalize.unchanged",)),
    Breakage("CanonicalizeWidensNarrowTypes", "3 table (unchanged dtypes)", "on",
             ("x64.canonicalize.unchanged",), ("x64.canonicalize.narrowed-64bit",)),
    # claim 4: warn / error / allow
    Breakage("NoTruncationWarning", "4 warn; i13.7 explicit float64 operands truncated with a warning", "off-warn",
             ("x64.explicit.arange", "x64.explicit.asarray", "x64.explicit.message-float64", "x64.transforms.jit",
              "x64.promotion.explicit-floats")),
    Breakage("WarningNamesWrongFunction", "4 warn (function named)", "off-warn",
             ("x64.explicit.zeros", "x64.explicit.astype"), ("x64.explicit.asarray",)),
    Breakage("WarningWithoutEnvHint", "4 warn (both ways named)", "off-warn",
             ("x64.explicit.ones", "x64.transforms.jit")),
    Breakage("WarnsTwice", "4 warn (exactly one)", "off-warn", ("x64.explicit.full", "x64.explicit.eye")),
    Breakage("ErrorModeOnlyWarns", "4 error", "off-error",
             ("x64.explicit.linspace", "x64.explicit.message-uint64", "x64.transforms.grad")),
    Breakage("ErrorModeRaisesTypeError", "4 error (ValueError)", "off-error",
             ("x64.explicit.array", "x64.explicit.array-python-scalar", "x64.explicit_mode.update-error")),
    Breakage("AllowModeTruncates", "4 allow", "off-allow",
             ("x64.explicit.empty", "x64.explicit.precision", "x64.explicit.large-int64", "x64.transforms.jit-astype",
              "x64.explicit.allow-scalar-value-is-32bit", "x64.transforms.grad-float64-input",
              "x64.allow_mode.sum-and-arithmetic", "x64.promotion.explicit-floats")),
    Breakage("EnvPolicyMisread", "4 policy by JAX_EXPLICIT_X64_DTYPES, warn by default", "off-warn",
             ("x64.explicit_mode.default-is-warn", "x64.explicit_mode.env-warn", "x64.explicit_mode.env-error",
              "x64.explicit_mode.env-allow")),
    Breakage("PolicyUpdateIgnored", "4 policy by jax.config.update", "off-error",
             ("x64.explicit_mode.update-warn", "x64.explicit_mode.update-allow")),
    Breakage("InvalidPolicyAccepted", "4 invalid policy rejected", "off-warn",
             ("x64.explicit_mode.update-invalid", "x64.explicit_mode.update-invalid-case", "x64.explicit_mode.env-invalid")),
    # claim 5: x64 on
    Breakage("X64OnStillWarns", "5 x64 on is silent", "on", ("x64.explicit.arange", "x64.explicit.message-complex128")),
    Breakage("X64OnErrorPolicyRaises", "5 x64 on beats error", "on", ("x64.explicit_mode.x64-on-beats-error",)),
    Breakage("X64OnErrorPolicyRaises", "i13.9 the policy is dormant with x64 on and applies again in enable_x64(False)", "off-warn",
             ("x64.explicit_mode.policy-returns-with-enable-x64-false",)),
    # claim 6: turning x64 on
    Breakage("X64DefaultOn", "6 default off", "off-warn", ("x64.flag.default-off",)),
    Breakage("EnvTruthInverted", "6 JAX_ENABLE_X64 spellings", "off-warn",
             ("x64.defaults.startup-env-var",) + tuple(f"x64.flag.env-{s}-is-on" for s in ("1", "true", "true-capitalized", "yes", "on"))
             + tuple(f"x64.flag.env-{s}-is-off" for s in ("0", "false", "false-capitalized", "no", "off"))),
    Breakage("EnvLenientParsing", "6 invalid JAX_ENABLE_X64", "off-warn", ("x64.flag.env-empty", "x64.flag.env-invalid")),
    Breakage("X64UpdateIgnored", "6 jax.config.update", "off-warn",
             ("x64.flag.update-turns-on", "x64.defaults.startup-config-update")),
    Breakage("X64UpdateIgnored", "6 jax.config.update (turning off)", "on", ("x64.flag.update-turns-off",)),
    Breakage("X64EnabledAlwaysFalse", "6 x64_enabled reports the flag", "on", ("x64.flag.x64-enabled-reflects-mode",)),
    Breakage("X64EnabledAssignable", "6 x64_enabled read-only", "off-warn", ("x64.flag.x64-enabled-read-only",)),
    # claim 7: jit cache key
    Breakage("X64NotInJitKey", "7 jit cache key", "off-warn",
             ("x64.jit_cache.retrace-on-switch", "x64.jit_cache.retrace-from-on", "x64.jit_cache.retrace-same-argument-type")),
    Breakage("ExplicitModeNotInJitKey", "7 jit cache key (explicit-dtype policy)", "off-warn",
             ("x64.jit_cache.explicit-mode-in-key",)),
    Breakage("ArraysFollowFlag", "7 arrays keep their dtype", "off-warn", ("x64.jit_cache.array-keeps-dtype",)),
    # claim 8: global vs contextual
    Breakage("ContextManagerGlobal", "8 jax.enable_x64 thread-local; i13.4 opposite blocks in two threads", "off-warn",
             ("x64.context.enable-x64-thread-local", "x64.enable_x64.opposite-threads")),
    Breakage("ContextManagerNoOp", "8 jax.enable_x64 works", "on",
             ("x64.context.enable-x64-context-manager", "x64.context.enable-x64-retraces-jit")),
    Breakage("GlobalUpdateThreadLocal", "8 update is global", "off-warn", ("x64.context.global-update-all-threads",)),
    Breakage("LegacyContextApisKept", "8 no contextual API besides jax.enable_x64", "off-warn",
             ("x64.context.experimental-enable-x64",)),
    # issue 13, item 1: the warning and the error on their documented words, the pair tied to the input
    Breakage("WarningSaysHonoured", "i13.1 warning says 'not available' and 'truncated to'", "off-warn",
             W13_ALL + X64_EXPLICIT_PER_FUNCTION + tuple(f"x64.explicit.message-{d}" for d in ("float64", "int64", "uint64", "complex128"))
             + ("x64.transforms.jit", "x64.transforms.jit-astype", "x64.transforms.grad", "x64.transforms.jit-of-grad")),
    Breakage("ErrorReduced", "i13.1 error says which dtype, where, 'not available'", "off-error",
             W13_ALL + X64_EXPLICIT_PER_FUNCTION + tuple(f"x64.explicit.message-{d}" for d in ("float64", "int64", "uint64", "complex128"))
             + ("x64.explicit.precision", "x64.explicit.large-int64", "x64.explicit_mode.update-error", "x64.explicit_mode.env-error",
                "x64.transforms.jit", "x64.transforms.jit-astype", "x64.transforms.grad", "x64.transforms.grad-float64-input",
                "x64.transforms.jit-of-grad")),
    Breakage("WarningAlwaysInt64", "i13.1 the pair named is the one requested", "off-warn",
             tuple(c for c in W13_ALL if not c.endswith("-int64")), tuple(c for c in W13_ALL if c.endswith("-int64"))),
    # issue 13, item 2: no warning where none is promised
    Breakage("Explicit32BitWarns", "i13.2 explicit 32-bit requests are silent", "off-allow",
             ("x64.warnings.explicit-32bit-silent",)),
    Breakage("Explicit32BitWarns", "i13.2 explicit 32-bit requests are silent (x64 on)", "on", ("x64.warnings.explicit-32bit-silent",)),
    Breakage("PythonTypesAre64BitRequests", "i13.2 int/float/complex are no 64-bit requests", "off-warn",
             ("x64.warnings.python-types-silent", "x64.defaults.ones-dtype-int", "x64.defaults.dtype-float")),
    Breakage("Default64BitWarns", "i13.2 default-dtype creation is silent however x64 was turned on", "off-warn",
             ("x64.context.global-update-all-threads", "x64.context.enable-x64-context-manager", "x64.context.enable-x64-thread-local",
              "x64.context.enable-x64-retraces-jit", "x64.defaults.startup-env-var", "x64.defaults.startup-config-update",
              "x64.flag.update-turns-on", "x64.flag.env-1-is-on", "x64.flag.env-yes-is-on", "x64.jit_cache.retrace-on-switch",
              "x64.jit_cache.array-keeps-dtype"), ("x64.flag.env-0-is-off",)),
    # issue 13, item 4 (and 8): jax.enable_x64 as JAX's tests use it
    Breakage("ContextManagerNoOp", "i13.4 the block switches x64 (x64 off)", "off-warn",
             tuple(f"x64.enable_x64.{c}" for c in ("make-array", "capture-default", "arrays-keep-64bit-after-block",
                   "python-scalar-in-jit", "scan-body-block", "while-loop", "custom-jvp", "custom-vjp", "opposite-threads",
                   "no-argument-and-decorator", "near-singular-inverse")), ("x64.enable_x64.grad-of-block",)),
    Breakage("DefaultArgumentOff", "i13.4 enable_x64() means on", "off-warn",
             ("x64.enable_x64.no-argument-and-decorator", "x64.enable_x64.make-array")),
    Breakage("GradArgsCanonicalizedWide", "i13.4 grad has the outer mode's dtype", "off-warn",
             ("x64.enable_x64.grad-of-block", "x64.enable_x64.custom-jvp", "x64.enable_x64.custom-vjp")),
    Breakage("LinalgInvNarrow", "i13.8 the 64-bit block computes in 64 bits", "on", ("x64.enable_x64.near-singular-inverse",)),
    # issue 13, item 5: x64 in every trace cache
    Breakage("ControlFlowCacheIgnoresX64", "i13.5 control-flow bodies traced again after a switch", "off-warn",
             tuple(f"x64.trace_caches.{c}" for c in ("scan", "cond", "while-loop", "checkpoint", "update-retraces-all"))),
    Breakage("ControlFlowCacheIgnoresX64", "i13.5 control-flow bodies traced again after a switch (x64 on)", "on",
             tuple(f"x64.trace_caches.{c}" for c in ("scan", "cond", "while-loop", "checkpoint"))),
    # issue 13, item 6: allow mode beyond creation (run with x64 on where JAX 0.10.2 diverges in allow mode)
    Breakage("Int64ScalarsCanonicalizedFirst", "i13.6 int64 scalar constructors keep the value", "on",
             ("x64.allow_mode.int64-scalar-exact",)),
    Breakage("ReductionInitialNarrow", "i13.6 reductions of int64 stay int64", "on",
             ("x64.allow_mode.reduce-max", "x64.allow_mode.reduce-max-initial"), ("x64.allow_mode.sum-and-arithmetic",)),
    Breakage("ShapeDtypeStructNarrowed", "i13.6 ShapeDtypeStruct keeps int64 through lower/compile", "on",
             ("x64.allow_mode.shape-dtype-struct-aot",)),
    # issue 13, item 7: Python scalars and promotion per mode
    Breakage("JitPythonScalarsNarrow", "i13.7 a Python scalar into jit has the mode's default dtype", "on",
             ("x64.promotion.python-scalar-into-jit", "x64.promotion.lowered-in-avals")),
    Breakage("ResultTypeNoneFloat64", "i13.7 result_type(None) is the default float", "off-warn", ("x64.promotion.result-type-none",)),
    Breakage("PythonScalarsStrong", "i13.7 weak Python scalars never widen an array", "off-warn",
             ("x64.promotion.weak-scalar-keeps-narrow-array",)),
    Breakage("CanonicalizeUnknownToFloat", "A21 canonicalize_dtype('nonsense') is a TypeError", "off-warn",
             ("x64.canonicalize.unsupported-type",), ("x64.canonicalize.narrowed-64bit",)),
    # claim 9: under transformations
    Breakage("PolicySkippedUnderTracing", "9 jit and grad", "off-error",
             ("x64.transforms.jit", "x64.transforms.jit-astype", "x64.transforms.grad", "x64.transforms.jit-of-grad"),
             ("x64.explicit.zeros",)),
]


def _select(ids: tuple[str, ...]) -> str:
    # A case's item is named "<id>[<mode>-<backend>]": "<id>[" selects it and no longer id.
    return " or ".join(f"{case}[" for case in ids)


def _run(adapter: str, mode: str, ids: tuple[str, ...], results: Path) -> dict[str, Any]:
    x64, edm = MODES[mode]
    # xdist too: the suite's plugin declares an xdist hook and cannot be loaded without it.
    cmd = [sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-p", "jax_conformance.plugin", "conformance/", "--specs", "specs/x64",
           f"--adapter={adapter}", f"--x64={x64}", f"--explicit-x64-dtypes={edm}", "-p", "no:cacheprovider", "-q",
           "-k", _select(ids), "--results", str(results)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "PYTEST_"))}
    # Only the plugins the suite needs: the other installed ones cost about a second of CPU per run.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    records = {}
    if results.exists():
        for line in results.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("record") == "case":
                records[record["case"]] = record
    return {"returncode": proc.returncode, "stdout": proc.stdout + proc.stderr, "records": records}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every breakage run, all at once."""
    tmp = tmp_path_factory.mktemp("x64-breakage")
    jobs: dict[str, tuple[str, str, tuple[str, ...]]] = {
        b.name: (f"tests.breakage.x64:{b.adapter}", b.mode, b.ids) for b in BREAKAGES
    }
    with ThreadPoolExecutor(max_workers=max(4, os.cpu_count() or 1)) as pool:
        futures = {name: pool.submit(_run, adapter, mode, ids, tmp / f"{name}.jsonl")
                   for name, (adapter, mode, ids) in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("breakage", BREAKAGES, ids=[b.name for b in BREAKAGES])
def test_breakage_is_caught(runs: dict[str, dict[str, Any]], breakage: Breakage) -> None:
    """The cases for the broken rule fail, readably; the control cases still pass."""
    run = runs[breakage.name]
    records = run["records"]
    out = run["stdout"]
    label = LABELS[breakage.mode]
    assert run["returncode"] == 1, f"pytest exited {run['returncode']} (1 = some case failed)\n{out[-3000:]}"
    for case in breakage.catches:
        record = records.get(case)
        assert record is not None, f"{case} did not run under {breakage.adapter}\n{out[-3000:]}"
        assert record["outcome"] == "failed", f"{breakage.adapter} ({breakage.claim}) was not caught by {case}: {record['outcome']} {record['message'][:500]}"
        # The mode of the run, and no JAX flag besides the two x64 ones.
        assert record["mode"] == {"x64": MODES[breakage.mode][0] == "on", "explicit_x64_dtypes": MODES[breakage.mode][1], "flags": {}}
        assert record["expected"] and record["actual"], f"{case}: the record lacks expected/actual: {record}"
        # The terminal failure names the case and the mode, shows the expect block, and says what happened.
        assert f"{case} FAILED [{label}" in out, f"no failure header for {case} [{label}] in the output"
        first_line = record["message"].splitlines()[0]
        assert first_line[:120] in out, f"the failure text of {case} is missing from the output: {first_line!r}"
        # "..., but should ...", a false check, or an exception whose message does not match the expected words
        assert any(p in record["message"] for p in ("but should", "is false", "does not match")), record["message"]
    for case in breakage.controls:
        outcome = records.get(case, {}).get("outcome", "missing")
        assert outcome == "passed", f"{breakage.adapter} should leave {case} alone, but it is {outcome}"


def test_every_x64_case_is_caught_by_some_breakage() -> None:
    """No x64 case goes unproven: each one is among the cases some breakage must fail."""
    from jax_conformance.spec.loader import load_spec, spec_files

    ids = [case.id for path in spec_files([ROOT / "specs" / "x64"]) for case in load_spec(path).cases]
    caught = {case for b in BREAKAGES for case in b.catches}
    assert ids, "no x64 specs found"
    assert [i for i in ids if i not in caught] == [], "x64 cases that no breakage is shown to fail"
    assert sorted(caught - set(ids)) == [], "breakages name cases that do not exist"
