"""The breakage areas: each spec directory's breakage adapters, the mode each runs in, the cases
that must fail under it and the controls it leaves alone (tests/breakage/harness.py runs them).

Every case of an area is among the cases some breakage must fail, and every adapter of the area's
modules is run (tests/test_breakage_areas.py). A breakage test file runs one area:
tests/test_<area>_specs_catch_breakage.py.
"""

from __future__ import annotations

from jax_conformance.mode import Mode

from tests.breakage.harness import SPECS, Area, Breakage

# ---------------------------------------------------------------- x64 (tests/breakage/x64.py)


def _x64(
    adapter: str, claim: str, mode: str, catches: tuple[str, ...], controls: tuple[str, ...] = ()
) -> Breakage:
    return Breakage(f"tests.breakage.x64:{adapter}", Mode.from_slug(mode), catches, controls, claim)


# The per-function cases of specs/x64/warnings.yaml (issue 13, items 1 and 3): each asks for one 64-bit dtype.
W13_ALL = tuple(
    f"x64.warnings.{c}"
    for c in (
        "arange-float64",
        "zeros-int64",
        "ones-uint64",
        "full-complex128",
        "empty-int64",
        "linspace-float64",
        "eye-uint64",
        "identity-int64",
        "tri-float64",
        "array-uint64",
        "asarray-complex128",
        "astype-uint64",
        "ones-like-int64",
        "zeros-like-float64",
        "full-like-complex128",
        "empty-like-uint64",
    )
)

X64_EXPLICIT_PER_FUNCTION = tuple(
    f"x64.explicit.{f}"
    for f in (
        "arange",
        "zeros",
        "ones",
        "full",
        "empty",
        "linspace",
        "eye",
        "array",
        "asarray",
        "astype",
        "array-python-scalar",
    )
)

X64_BREAKAGES = (
    # claims 1-3: defaults and the canonicalization table
    _x64(
        "DefaultInt64",
        "1 defaults (x64 off), 3 table",
        "off-warn",
        (
            "x64.defaults.arange-int",
            "x64.defaults.full-int",
            "x64.defaults.python-int-list",
            "x64.defaults.like-numpy",
            "x64.defaults.ones-dtype-int",
            "x64.canonicalize.narrowed-64bit",
            "x64.canonicalize.python-types",
            "x64.explicit.message-int64",
        ),
        ("x64.defaults.zeros-float",),
    ),
    _x64(
        "X64OnNarrowDefaults",
        "2 defaults (x64 on)",
        "on",
        (
            "x64.defaults.zeros-float",
            "x64.defaults.dtype-float",
            "x64.defaults.dtype-complex",
            "x64.defaults.float-creation",
            "x64.defaults.like-numpy",
        ),
        ("x64.defaults.arange-int",),
    ),
    _x64(
        "PythonScalarsNarrowed",
        "1-2 Python scalars and lists",
        "on",
        (
            "x64.defaults.python-int-scalar",
            "x64.defaults.python-float-scalar",
            "x64.defaults.python-complex-scalar",
            "x64.defaults.python-bool-scalar",
            "x64.defaults.python-int-list",
            "x64.defaults.python-float-list",
        ),
    ),
    _x64(
        "NumpyInputsKeep64",
        "1 NumPy 64-bit inputs",
        "off-warn",
        ("x64.defaults.numpy-64bit-input",),
    ),
    _x64(
        "CanonicalizeIdentity",
        "3 table",
        "off-warn",
        (
            "x64.canonicalize.narrowed-64bit",
            "x64.canonicalize.python-types",
            "x64.canonicalize.jnp-scalar-types-and-longlong",
        ),
        ("x64.canonicalize.unchanged",),
    ),
    _x64(
        "CanonicalizeWidensNarrowTypes",
        "3 table (unchanged dtypes)",
        "on",
        (
            "x64.canonicalize.unchanged",
            "x64.canonicalize.int4-uint4-unchanged",
            "x64.canonicalize.jnp-scalar-types-and-longlong",
        ),
        ("x64.canonicalize.narrowed-64bit",),
    ),
    # claim 4: warn / error / allow
    _x64(
        "NoTruncationWarning",
        "4 warn; i13.7 explicit float64 operands truncated with a warning",
        "off-warn",
        (
            "x64.explicit.arange",
            "x64.explicit.asarray",
            "x64.explicit.message-float64",
            "x64.transforms.jit",
            "x64.promotion.explicit-floats",
            "x64.enable_x64.jit-cache-random-uniform",
            "x64.enable_x64.jit-cache-static-dtype",
        ),
    ),
    _x64(
        "WarningNamesWrongFunction",
        "4 warn (function named)",
        "off-warn",
        ("x64.explicit.zeros", "x64.explicit.astype"),
        ("x64.explicit.asarray",),
    ),
    _x64(
        "WarningWithoutEnvHint",
        "4 warn (both ways named)",
        "off-warn",
        ("x64.explicit.ones", "x64.transforms.jit"),
    ),
    _x64(
        "WarnsTwice", "4 warn (exactly one)", "off-warn", ("x64.explicit.full", "x64.explicit.eye")
    ),
    _x64(
        "ErrorModeOnlyWarns",
        "4 error",
        "off-error",
        ("x64.explicit.linspace", "x64.explicit.message-uint64", "x64.transforms.grad"),
    ),
    _x64(
        "ErrorModeRaisesTypeError",
        "4 error (ValueError)",
        "off-error",
        (
            "x64.explicit.array",
            "x64.explicit.array-python-scalar",
            "x64.explicit_mode.update-error",
        ),
    ),
    _x64(
        "AllowModeTruncates",
        "4 allow",
        "off-allow",
        (
            "x64.explicit.empty",
            "x64.explicit.precision",
            "x64.explicit.large-int64",
            "x64.transforms.jit-astype",
            "x64.explicit.allow-scalar-value-is-32bit",
            "x64.transforms.grad-float64-input",
            "x64.allow_mode.sum-and-arithmetic",
            "x64.promotion.explicit-floats",
        ),
    ),
    _x64(
        "EnvPolicyMisread",
        "4 policy by JAX_EXPLICIT_X64_DTYPES, warn by default",
        "off-warn",
        (
            "x64.explicit_mode.default-is-warn",
            "x64.explicit_mode.env-warn",
            "x64.explicit_mode.env-error",
            "x64.explicit_mode.env-allow",
        ),
    ),
    _x64(
        "PolicyUpdateIgnored",
        "4 policy by jax.config.update",
        "off-error",
        ("x64.explicit_mode.update-warn", "x64.explicit_mode.update-allow"),
    ),
    _x64(
        "InvalidPolicyAccepted",
        "4 invalid policy rejected",
        "off-warn",
        (
            "x64.explicit_mode.update-invalid",
            "x64.explicit_mode.update-invalid-case",
            "x64.explicit_mode.env-invalid",
        ),
    ),
    # claim 5: x64 on
    _x64(
        "X64OnStillWarns",
        "5 x64 on is silent",
        "on",
        ("x64.explicit.arange", "x64.explicit.message-complex128"),
    ),
    _x64(
        "X64OnErrorPolicyRaises",
        "5 x64 on beats error",
        "on",
        ("x64.explicit_mode.x64-on-beats-error",),
    ),
    _x64(
        "X64OnErrorPolicyRaises",
        "i13.9 the policy is dormant with x64 on and applies again in enable_x64(False)",
        "off-warn",
        ("x64.explicit_mode.policy-returns-with-enable-x64-false",),
    ),
    # claim 6: turning x64 on
    _x64("X64DefaultOn", "6 default off", "off-warn", ("x64.flag.default-off",)),
    _x64(
        "EnvTruthInverted",
        "6 JAX_ENABLE_X64 spellings",
        "off-warn",
        ("x64.defaults.startup-env-var",)
        + tuple(f"x64.flag.env-{s}-is-on" for s in ("1", "true", "true-capitalized", "yes", "on"))
        + tuple(
            f"x64.flag.env-{s}-is-off" for s in ("0", "false", "false-capitalized", "no", "off")
        ),
    ),
    _x64(
        "EnvLenientParsing",
        "6 invalid JAX_ENABLE_X64",
        "off-warn",
        ("x64.flag.env-empty", "x64.flag.env-invalid"),
    ),
    _x64(
        "X64UpdateIgnored",
        "6 jax.config.update",
        "off-warn",
        ("x64.flag.update-turns-on", "x64.defaults.startup-config-update"),
    ),
    _x64(
        "X64UpdateIgnored",
        "6 jax.config.update (turning off)",
        "on",
        ("x64.flag.update-turns-off",),
    ),
    _x64(
        "X64EnabledAlwaysFalse",
        "6 x64_enabled reports the flag",
        "on",
        ("x64.flag.x64-enabled-reflects-mode",),
    ),
    _x64(
        "X64EnabledAssignable",
        "6 x64_enabled read-only",
        "off-warn",
        ("x64.flag.x64-enabled-read-only",),
    ),
    # claim 7: jit cache key
    _x64(
        "X64NotInJitKey",
        "7 jit cache key",
        "off-warn",
        (
            "x64.jit_cache.retrace-on-switch",
            "x64.jit_cache.retrace-from-on",
            "x64.jit_cache.retrace-same-argument-type",
            "x64.enable_x64.jit-cache-static-dtype",
        ),
    ),
    _x64(
        "ExplicitModeNotInJitKey",
        "7 jit cache key (explicit-dtype policy)",
        "off-warn",
        ("x64.jit_cache.explicit-mode-in-key",),
    ),
    _x64(
        "ArraysFollowFlag",
        "7 arrays keep their dtype",
        "off-warn",
        ("x64.jit_cache.array-keeps-dtype",),
    ),
    # claim 8: global vs contextual
    _x64(
        "ContextManagerGlobal",
        "8 jax.enable_x64 thread-local; i13.4 opposite blocks in two threads",
        "off-warn",
        ("x64.context.enable-x64-thread-local", "x64.enable_x64.opposite-threads"),
    ),
    _x64(
        "ContextManagerNoOp",
        "8 jax.enable_x64 works",
        "on",
        ("x64.context.enable-x64-context-manager", "x64.context.enable-x64-retraces-jit"),
    ),
    _x64(
        "GlobalUpdateThreadLocal",
        "8 update is global",
        "off-warn",
        ("x64.context.global-update-all-threads",),
    ),
    _x64(
        "LegacyContextApisKept",
        "8 no contextual API besides jax.enable_x64",
        "off-warn",
        ("x64.context.experimental-enable-x64",),
    ),
    # issue 13, item 1: the warning and the error on their documented words, the pair tied to the input
    _x64(
        "WarningSaysHonoured",
        "i13.1 warning says 'not available' and 'truncated to'",
        "off-warn",
        W13_ALL
        + X64_EXPLICIT_PER_FUNCTION
        + tuple(f"x64.explicit.message-{d}" for d in ("float64", "int64", "uint64", "complex128"))
        + (
            "x64.transforms.jit",
            "x64.transforms.jit-astype",
            "x64.transforms.grad",
            "x64.transforms.jit-of-grad",
        ),
    ),
    _x64(
        "ErrorReduced",
        "i13.1 error says which dtype, where, 'not available'",
        "off-error",
        W13_ALL
        + X64_EXPLICIT_PER_FUNCTION
        + tuple(f"x64.explicit.message-{d}" for d in ("float64", "int64", "uint64", "complex128"))
        + (
            "x64.explicit.precision",
            "x64.explicit.large-int64",
            "x64.explicit_mode.update-error",
            "x64.explicit_mode.env-error",
            "x64.transforms.jit",
            "x64.transforms.jit-astype",
            "x64.transforms.grad",
            "x64.transforms.grad-float64-input",
            "x64.transforms.jit-of-grad",
        ),
    ),
    _x64(
        "WarningAlwaysInt64",
        "i13.1 the pair named is the one requested",
        "off-warn",
        tuple(c for c in W13_ALL if not c.endswith("-int64")),
        tuple(c for c in W13_ALL if c.endswith("-int64")),
    ),
    # issue 13, item 2: no warning where none is promised
    _x64(
        "Explicit32BitWarns",
        "i13.2 explicit 32-bit requests are silent",
        "off-allow",
        ("x64.warnings.explicit-32bit-silent",),
    ),
    _x64(
        "Explicit32BitWarns",
        "i13.2 explicit 32-bit requests are silent (x64 on)",
        "on",
        ("x64.warnings.explicit-32bit-silent",),
    ),
    _x64(
        "PythonTypesAre64BitRequests",
        "i13.2 int/float/complex are no 64-bit requests",
        "off-warn",
        (
            "x64.warnings.python-types-silent",
            "x64.defaults.ones-dtype-int",
            "x64.defaults.dtype-float",
        ),
    ),
    _x64(
        "Default64BitWarns",
        "i13.2 default-dtype creation is silent however x64 was turned on",
        "off-warn",
        (
            "x64.context.global-update-all-threads",
            "x64.context.enable-x64-context-manager",
            "x64.context.enable-x64-thread-local",
            "x64.context.enable-x64-retraces-jit",
            "x64.defaults.startup-env-var",
            "x64.defaults.startup-config-update",
            "x64.flag.update-turns-on",
            "x64.flag.env-1-is-on",
            "x64.flag.env-yes-is-on",
            "x64.jit_cache.retrace-on-switch",
            "x64.jit_cache.array-keeps-dtype",
        ),
        ("x64.flag.env-0-is-off",),
    ),
    # issue 13, item 4 (and 8): jax.enable_x64 as JAX's tests use it
    _x64(
        "ContextManagerNoOp",
        "i13.4 the block switches x64 (x64 off)",
        "off-warn",
        tuple(
            f"x64.enable_x64.{c}"
            for c in (
                "make-array",
                "capture-default",
                "arrays-keep-64bit-after-block",
                "python-scalar-in-jit",
                "scan-body-block",
                "while-loop",
                "custom-jvp",
                "custom-vjp",
                "opposite-threads",
                "no-argument-and-decorator",
                "near-singular-inverse",
                "jit-cache-random-uniform",
                "jit-cache-static-dtype",
            )
        ),
        ("x64.enable_x64.grad-of-block",),
    ),
    _x64(
        "DefaultArgumentOff",
        "i13.4 enable_x64() means on",
        "off-warn",
        ("x64.enable_x64.no-argument-and-decorator", "x64.enable_x64.make-array"),
    ),
    _x64(
        "GradArgsCanonicalizedWide",
        "i13.4 grad has the outer mode's dtype",
        "off-warn",
        ("x64.enable_x64.grad-of-block", "x64.enable_x64.custom-jvp", "x64.enable_x64.custom-vjp"),
    ),
    _x64(
        "LinalgInvNarrow",
        "i13.8 the 64-bit block computes in 64 bits",
        "on",
        ("x64.enable_x64.near-singular-inverse",),
    ),
    # issue 13, item 5: x64 in every trace cache
    _x64(
        "ControlFlowCacheIgnoresX64",
        "i13.5 control-flow bodies traced again after a switch",
        "off-warn",
        tuple(
            f"x64.trace_caches.{c}"
            for c in ("scan", "cond", "while-loop", "checkpoint", "update-retraces-all")
        ),
    ),
    _x64(
        "ControlFlowCacheIgnoresX64",
        "i13.5 control-flow bodies traced again after a switch (x64 on)",
        "on",
        tuple(f"x64.trace_caches.{c}" for c in ("scan", "cond", "while-loop", "checkpoint")),
    ),
    # issue 13, item 6: allow mode beyond creation (run with x64 on where JAX 0.10.2 diverges in allow mode)
    _x64(
        "Int64ScalarsCanonicalizedFirst",
        "i13.6 int64 scalar constructors keep the value",
        "on",
        ("x64.allow_mode.int64-scalar-exact",),
    ),
    _x64(
        "ReductionInitialNarrow",
        "i13.6 reductions of int64 stay int64",
        "on",
        ("x64.allow_mode.reduce-max", "x64.allow_mode.reduce-max-initial"),
        ("x64.allow_mode.sum-and-arithmetic",),
    ),
    _x64(
        "ShapeDtypeStructNarrowed",
        "i13.6 ShapeDtypeStruct keeps int64 through lower/compile",
        "on",
        ("x64.allow_mode.shape-dtype-struct-aot",),
    ),
    # issue 13, item 7: Python scalars and promotion per mode
    _x64(
        "JitPythonScalarsNarrow",
        "i13.7 a Python scalar into jit has the mode's default dtype",
        "on",
        ("x64.promotion.python-scalar-into-jit", "x64.promotion.lowered-in-avals"),
    ),
    _x64(
        "ResultTypeNoneFloat64",
        "i13.7 result_type(None) is the default float",
        "off-warn",
        ("x64.promotion.result-type-none",),
    ),
    _x64(
        "PythonScalarsStrong",
        "i13.7 weak Python scalars never widen an array",
        "off-warn",
        ("x64.promotion.weak-scalar-keeps-narrow-array",),
    ),
    _x64(
        "CanonicalizeUnknownToFloat",
        "A21 canonicalize_dtype('nonsense') is a TypeError",
        "off-warn",
        ("x64.canonicalize.unsupported-type",),
        ("x64.canonicalize.narrowed-64bit",),
    ),
    # issue 24, the remaining JAX-test rows (A26, A30)
    _x64(
        "JitKeyUncanonicalizedDtypes",
        "A26 a float64 argument with x64 off reuses the float32 trace",
        "off-warn",
        ("x64.jit_cache.kwargs-and-argument-dtypes",),
        ("x64.jit_cache.retrace-same-argument-type",),
    ),
    _x64(
        "TracedPythonFloatsNarrow",
        "A30 a traced Python float is a weak literal of the default float",
        "on",
        ("x64.promotion.make-jaxpr-python-float-literal",),
        ("x64.promotion.lowered-in-avals",),
    ),
    _x64(
        "NarrowFloatsWidened",
        "A23 narrow float dtypes are kept in every mode",
        "off-allow",
        ("x64.allow_mode.float-family-creation",),
        ("x64.explicit.empty",),
    ),
    # issue 24, part 4: the families (specs/x64/dtype_families.yaml)
    _x64(
        "NoTruncationWarning",
        "i24.4 every jnp function with dtype=, scalar type and Array method warns",
        "off-warn",
        ("x64.dtype_families.jnp-dtype-functions", "x64.dtype_families.scalar-types-and-methods"),
    ),
    _x64(
        "AllowModeTruncates",
        "i24.4 every jnp function with dtype= honours the request in allow mode",
        "off-allow",
        ("x64.dtype_families.jnp-dtype-functions",),
    ),
    _x64(
        "RandomSamplersSilentlyTruncate",
        "i24.4 jax#17366: every jax.random sampler warns",
        "off-warn",
        ("x64.dtype_families.random-samplers",),
    ),
    _x64(
        "X64OnStillWarns",
        "i24.4 with x64 on the known-divergence members honour the request silently",
        "on",
        ("x64.dtype_families.jnp-known-divergences", "x64.dtype_families.random-known-divergences"),
    ),
    _x64(
        "NumpyInt64OutOfRangeRaises",
        "i24.4 jax#18385: a NumPy int64 out of the int32 range wraps silently",
        "off-warn",
        ("x64.dtype_families.numpy-int64-out-of-range",),
    ),
    # claim 9: under transformations
    _x64(
        "PolicySkippedUnderTracing",
        "9 jit and grad",
        "off-error",
        (
            "x64.transforms.jit",
            "x64.transforms.jit-astype",
            "x64.transforms.grad",
            "x64.transforms.jit-of-grad",
        ),
        ("x64.explicit.zeros",),
    ),
)

X64 = Area("x64", (SPECS / "x64",), X64_BREAKAGES, ("tests.breakage.x64",))

# ---------------------------------------------------------------- custom_vjp / custom_jvp
# (tests/breakage/custom_vjp.py, custom_jvp.py), all in mode off-warn
OFF_WARN = Mode(False, "warn")


def _rule(
    adapter: str, catches: tuple[str, ...], control: str, module: str = "custom_vjp"
) -> Breakage:
    return Breakage(f"tests.breakage.{module}:{adapter}", OFF_WARN, catches, (control,))


def _ids(prefix: str, names: str) -> tuple[str, ...]:
    return tuple(f"{prefix}.{n}" for n in names.split())


V_ND, V_RO, V_CL, V_INT, V_OPT = (
    f"custom_vjp.{t}"
    for t in ("nondiff_argnums", "rule_outputs", "closures", "integer_inputs", "defvjp_options")
)
J_ND, J_CL = "custom_jvp.nondiff_argnums", "custom_jvp.closures"
J_RO, J_INT, V_PC = (
    "custom_jvp.rule_outputs",
    "custom_jvp.integer_inputs",
    "custom_vjp.primal_consistency",
)
J_B, V_B = "custom_jvp.basics", "custom_vjp.basics"
V_NC, V_NV, V_CC = (
    "custom_vjp.none_cotangents",
    "custom_vjp.nondiff_values",
    "custom_vjp.closure_convert",
)
J_SZ, V_SZ = "custom_jvp.symbolic_zeros", "custom_vjp.symbolic_zeros"
J_TM, V_TM = "custom_jvp.transforms_more", "custom_vjp.jax_tests_more"

RULE_BREAKAGES = (
    # claim 1
    _rule(
        "AcceptTracersInNondiff",
        _ids(
            V_ND,
            "tracer-under-jit tracer-under-jit-grad tracer-jax-test-jit tracer-in-container-under-jit "
            "tracer-in-container-under-grad tracer-under-vmap tracer-under-vmap-of-grad tracer-under-grad-wrt-it",
        )
        + _ids(V_OPT, "nondiff-argnames-tracer-rejected")
        + _ids(V_TM, "tracer-in-container-grad-of-jit"),
        f"{V_ND}.old-style-concrete-grad",
    ),
    _rule(
        "NondiffOnlyCallables",
        _ids(
            V_ND,
            "old-style-concrete-grad old-style-concrete-primal "
            "old-style-closed-over-bounds-under-jit old-style-vmap-over-x-only",
        ),
        f"{V_ND}.skip-app-grad",
    ),
    # claims 2, 3, 4, 6, 7, 10: the custom rule must be what differentiation uses
    _rule(
        "GradIgnoresCustomRule",
        _ids(
            V_ND,
            "migrated-grad migrated-grad-table migrated-primal-is-identity migrated-jit-grad-traced-bounds "
            "migrated-grad-of-jit migrated-vmap-over-cotangent-scale migrated-vmap-over-bound migrated-jit-of-vmap "
            "migrated-vmap-of-jit migrated-grad-of-grad-clipped migrated-matches-numpy-clip "
            "migrated-jvp-is-rejected skip-app-grad skip-app-grad-scaled skip-app-jit-static skip-app-jit-inside-grad "
            "skip-app-vmap app-static-first-in-bwd app2-statics-first-wherever-they-are app2-under-jit-and-vmap "
            "jax-test-value-and-grad",
        )
        + _ids(V_RO, "fwd-pair-works rules-run-under-grad")
        + _ids(
            J_ND,
            "tracer-under-jit-grad tracer-under-vmap jvp-uses-rule app-grad-uses-rule jax-test-app-jvp",
        )
        + _ids(
            V_CL,
            "jit-tracer-rule-used vmap-tracer-rule-used grad-wrt-argument-still-works closure-convert-grad "
            "closure-convert-grad-under-jit closure-convert-grad-under-vmap unconverted-closure-grad-wrt-x",
        )
        + _ids(
            J_CL,
            "jit-tracer-rule-used vmap-tracer-rule-used vmap-tracer-jvp grad-wrt-argument-still-works",
        )
        + _ids(J_RO, "pair-works")
        + _ids(V_PC, "grad-still-works")
        + _ids(
            J_B,
            "grad-of-grad-differentiates-the-rule higher-order-uses-rule-when-rule-calls-f log1pexp-defjvps "
            "log1pexp-stable-grad nonlinear-rule-fails-under-grad nonlinear-rule-runs-under-jvp python-control-flow "
            "pytree-dict-tangent pytree-namedtuple-in-dict-out sqrt-ratio-convention-at-zero",
        )
        + _ids(V_B, "fixed-point-grad-and-grad-of-grad pytree-namedtuple-in-dict-out")
        + _ids(V_NV, "float-nondiff-under-remat")
        + _ids(
            V_CL, "jit-tracer-grad-outside-jit jax-test-closure-over-constant-under-scan-and-vmap"
        )
        + _ids(J_SZ, "jacfwd-of-jit")
        # issue 24 part 2: the JAX-test programs of specs/custom_jvp/transforms_more.yaml,
        # custom_vjp/jax_tests_more.yaml
        + _ids(
            J_TM,
            "remat-value-and-grad checkpoint-higher-order-every-depth scan-grad-and-second-order "
            "scan-second-order-nonlinear-rule scan-under-vmap closes-over-constant-in-scan-under-vmap "
            "jvp-of-vmap-batched-nondiff vmap-rank1 nested-vmaps linear-rule-transposed-in-scan "
            "rule-calling-function-transposed dce-symbolic-zeros-forward-over-reverse "
            "jvp-of-jvp-primal-uses-rule prng-key-in-nondiff-under-vmap-and-jvp",
        )
        + _ids(
            V_TM,
            "scan-grad-and-second-order remat-higher-order-every-depth vjp-function-as-residual "
            "vjp-function-returned-from-jit nested-value-and-grad python-control-flow python-control-flow-bwd "
            "vmap-rank1 nested-vmaps grad-of-vmap-none-cotangent custom-gradient "
            "custom-gradient-two-arguments-and-arrays vjp-of-vmap-of-scan-unbatched-coefficient "
            "bwd-pytree-need-not-accept-nones symbolic-zeros-custom-pytree optimize-remat-custom-vmap-fwd",
        ),
        f"{V_ND}.app-primal",
    ),
    # claim 2
    _rule(
        "NoneCotangentAsOne",
        _ids(V_ND, "migrated-none-gives-zero migrated-none-gives-zero-under-jit")
        + _ids(V_RO, "bwd-none-entry-is-zero")
        + _ids(
            V_NC,
            "none-for-whole-tuple-argument none-for-whole-tuple-is-zero-per-leaf none-for-whole-dict-argument",
        ),
        f"{V_ND}.migrated-grad",
    ),
    _rule(
        "RejectNoneCotangents",
        _ids(
            V_ND,
            "migrated-grad migrated-jit-grad-traced-bounds migrated-vmap-over-bound migrated-none-gives-zero "
            "migrated-grad-of-grad",
        )
        + _ids(
            V_INT,
            "grad-wrt-float grad-wrt-float-under-jit grad-under-vmap-over-int int-cotangent-is-float0 "
            "integer-bounds-traced-under-jit",
        ),
        f"{V_RO}.fwd-pair-works",
    ),
    # claim 3
    _rule(
        "StaticArgsLastInBwd",
        _ids(
            V_ND,
            "app-static-first-in-bwd app2-statics-first-wherever-they-are app2-under-jit-and-vmap "
            "jax-test-value-and-grad skip-app-grad skip-app-jit-static skip-app-vmap",
        )
        + _ids(V_CL, "closure-convert-grad"),
        f"{V_ND}.migrated-grad",
    ),
    _rule(
        "StaticArgsNotPassedToBwd",
        _ids(V_ND, "bwd-arity-includes-statics app-static-first-in-bwd skip-app-grad"),
        f"{V_ND}.migrated-grad",
    ),
    _rule(
        "RejectFunctionNondiff",
        _ids(V_ND, "app-primal jax-test-primal-int skip-app-grad")
        + _ids(
            V_CL, "closure-convert-primal closure-convert-grad closure-convert-hoists-only-tracers"
        ),
        f"{V_ND}.old-style-concrete-grad",
    ),
    _rule(
        "JitTreatsCallablesAsStatic",
        _ids(V_ND, "function-not-static-under-jit"),
        f"{V_ND}.skip-app-jit-static",
    ),
    # claim 4
    _rule(
        "NoFwdPairCheck",
        _ids(V_RO, "fwd-bare-value fwd-triple fwd-one-tuple fwd-none fwd-bare-under-jit-grad"),
        f"{V_RO}.fwd-pair-works",
    ),
    _rule("FwdMustBeTuple", _ids(V_RO, "fwd-list-of-two-accepted"), f"{V_RO}.fwd-pair-works"),
    _rule(
        "FwdRunsOnPrimalCall",
        _ids(
            V_RO, "rules-not-run-without-differentiation broken-fwd-unused-without-differentiation"
        )
        + _ids(V_PC, "fwd-mismatch-plain-call-unaffected"),
        f"{J_ND}.app-primal",
    ),
    # claim 5
    _rule(
        "LenientBwdStructure",
        _ids(V_RO, "bwd-too-many bwd-too-few bwd-bare-array bwd-wrong-nesting"),
        f"{V_RO}.bwd-list-accepted",
    ),
    _rule(
        "NoBwdShapeCheck",
        _ids(V_RO, "bwd-wrong-shape bwd-wrong-shape-second-argument"),
        f"{V_RO}.bwd-tuple-per-argument",
    ),
    _rule(
        "BwdCotangentsReversed",
        _ids(V_RO, "bwd-tuple-per-argument bwd-list-accepted")
        + _ids(V_ND, "migrated-none-gives-zero migrated-grad"),
        f"{V_RO}.fwd-pair-works",
    ),
    # claim 6
    _rule(
        "CustomJvpRejectsTracers",
        _ids(
            J_ND,
            "tracer-under-jit-primal tracer-under-jit-grad tracer-under-vmap tracer-under-vmap-primal "
            "grad-wrt-nondiff-is-zero",
        )
        + _ids(J_TM, "prng-key-in-nondiff-under-vmap-and-jvp"),
        f"{J_ND}.app-grad-uses-rule",
    ),
    _rule(
        "CustomJvpNondiffNotStopped",
        _ids(
            J_ND,
            "grad-wrt-nondiff-is-zero grad-wrt-nondiff-is-zero-under-jit grad-wrt-nondiff-other-paths-kept",
        ),
        f"{J_ND}.tracer-under-jit-grad",
    ),
    _rule(
        "CustomJvpStaticArgsLast",
        _ids(J_ND, "app-grad-uses-rule app2-statics-first jax-test-app-jvp"),
        f"{J_CL}.jit-tracer-rule-used",
    ),
    _rule(
        "CustomJvpArrayOnlyNondiff",
        _ids(J_ND, "app-primal app-grad-uses-rule app2-statics-first jax-test-app-jvp"),
        f"{J_ND}.tracer-under-jit-grad",
    ),
    # claim 7
    _rule(
        "RejectClosedOverTracers",
        _ids(
            V_CL,
            "jit-tracer-primal jit-tracer-rule-used vmap-tracer-rule-used jax-test-closed-over-vmap-tracer "
            "jax-test-closed-over-tracer-in-residual jax-test-bwd-closes-over-tracer "
            "jax-test-bwd-closes-over-tracer-more "
            "jax-test-fwd-closes-over-tracer jax-test-vjp3-closed-over-vmap-tracer "
            "jax-test-vjp3-closed-over-tracer-in-residual jax-test-vjp3-closure-with-vmap2-primal "
            "jax-test-vjp3-closure-with-vmap2-grad",
        )
        + _ids(
            J_CL,
            "jit-tracer-primal jit-tracer-rule-used vmap-tracer-rule-used vmap-tracer-jvp "
            "jax-test-jvp3-closed-over-vmap-tracer",
        ),
        f"{V_CL}.grad-wrt-argument-still-works",
    ),
    # claim 8
    _rule(
        "BypassRuleForClosedOverTracers",
        _ids(
            V_CL,
            "grad-wrt-closed-over-is-error jvp-wrt-closed-over-is-error grad-of-jit-wrt-closed-over-is-error "
            "jit-of-grad-wrt-closed-over-is-error unconverted-closure-grad-wrt-c-is-error",
        )
        + _ids(V_NV, "jvp-function-hiding-jvp-tracer jvp-function-hiding-grad-tracer")
        + _ids(
            J_CL,
            "grad-wrt-closed-over-is-error jax-test-jvp-error jax-test-grad-error grad-of-jit-wrt-closed-over-is-error",
        ),
        f"{V_CL}.grad-wrt-argument-still-works",
    ),
    # claim 9
    _rule(
        "NoFloat0ForIntCotangents",
        _ids(
            V_INT,
            "int-cotangent-is-float0 grad-allow-int-is-float0 bwd-nonzero-for-int-becomes-float0 "
            "integer-bounds-as-ordinary-arguments",
        )
        + _ids(
            J_INT,
            "rule-gets-float0-tangent-jvp grad-with-int-argument custom-vjp-integer-output-grad",
        )
        + _ids(V_INT, "float0-bwd-under-scan int-cotangent-under-jit-vjp"),
        f"{V_INT}.grad-wrt-float",
    ),
    # claim 11
    _rule(
        "SymbolicZerosIgnored",
        _ids(
            V_OPT,
            "symbolic-zeros-perturbed symbolic-zeros-both-perturbed symbolic-zeros-unused-output "
            "symbolic-zeros-both-outputs-used",
        )
        + _ids(
            V_SZ,
            "nondiff-arguments-passed-raw scan-under-grad under-remat wrong-shape-symbolic-zero grad-of-vmap "
            "bwd-returns-symbolic-zero",
        )
        + _ids(V_PC, "jax-test-vjp3-jvp-of-symbolic-zeros-rule")
        + _ids(
            V_TM,
            "symbolic-zeros-static-and-dynamic-under-jit-and-vmap symbolic-zeros-jacrev-of-jit-and-allow-int "
            "symbolic-zeros-custom-pytree",
        ),
        f"{V_OPT}.optimize-remat",
    ),
    _rule(
        "OptimizeRematMissing",
        _ids(
            V_OPT,
            "optimize-remat optimize-remat-under-jit optimize-remat-with-symbolic-zeros "
            "optimize-remat-keyword-only-fwd "
            "optimize-remat-under-remat",
        )
        + _ids(V_TM, "optimize-remat-custom-vmap-fwd"),
        f"{V_OPT}.symbolic-zeros-perturbed",
    ),
    _rule(
        "NondiffArgnamesIgnored",
        _ids(
            V_OPT, "nondiff-argnames nondiff-argnums-and-argnames nondiff-argnames-tracer-rejected"
        )
        + _ids(J_ND, "nondiff-argnames"),
        f"{V_OPT}.missing-defvjp",
    ),
    _rule(
        "PrimalWithoutRule",
        _ids(V_OPT, "missing-defvjp missing-defvjp-grad"),
        f"{V_OPT}.optimize-remat",
    ),
    # issue 14, item 1: what a custom_jvp rule returns
    _rule(
        "JvpPairUnchecked",
        _ids(J_RO, "not-a-pair-jvp not-a-pair-grad not-a-pair-triple"),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    _rule(
        "JvpTangentStructureUnchecked",
        _ids(J_RO, "tangent-structure-differs tangent-structure-differs-grad"),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    _rule(
        "JvpTangentTypeUnchecked",
        _ids(J_RO, "tangent-shape-differs tangent-shape-differs-grad tangent-dtype-differs")
        + _ids(J_INT, "integer-output-int-tangent-rejected"),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    # items 1 and 6: the rule's primal output is the function's
    _rule(
        "RulePrimalNotCheckedAgainstFunction",
        _ids(
            J_RO,
            "primal-structure-differs-under-scan primal-shape-differs-under-scan primal-structure-differs-under-jit",
        )
        + _ids(
            V_PC,
            "fwd-structure-differs-under-scan fwd-shape-differs-under-scan fwd-shape-differs-under-jit "
            "jax-test-vjp3-fwd-output-type-messages",
        ),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    _rule(
        "JvpRuleRunsOnPrimalCall",
        _ids(
            J_RO,
            "not-a-pair-plain-call-unaffected tangent-structure-plain-call-unaffected "
            "tangent-shape-plain-call-unaffected",
        )
        + _ids(J_B, "rule-runs-only-under-differentiation"),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    # item 3: no rule
    _rule(
        "MissingJvpRuleRunsFunction",
        _ids(J_RO, "missing-rule-call missing-rule-jvp missing-rule-grad missing-rule-jit"),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    # item 2: integer inputs and outputs
    _rule(
        "ZeroFromPrimalKeepsDtype",
        _ids(
            J_INT,
            "zero-from-primal float0-tangent-jvp float0-tangent-under-scan integer-output-jvp integer-output-grad",
        ),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    # item 6: jvp of a custom_vjp
    _rule(
        "JvpOfCustomVjpGivesZeros",
        _ids(V_PC, "jvp-rejected jvp-of-vmap-rejected jvp-of-jit-rejected"),
        f"{V_PC}.grad-still-works",
        "custom_jvp",
    ),
    # item 9: the notebook's basic API
    _rule(
        "DefaultsNotPassedToRules",
        _ids(J_B, "keyword-and-default-arguments") + _ids(V_B, "keyword-and-default-arguments"),
        f"{J_B}.log1pexp-stable-grad",
        "custom_jvp",
    ),
    _rule(
        "DefjvpsRulesReversed",
        _ids(J_B, "defjvps-per-argument-summed defjvps-none-is-zero defjvps-first-rule-none"),
        f"{J_B}.log1pexp-defjvps",
        "custom_jvp",
    ),
    _rule(
        "DefjvpsWithNondiffAccepted",
        _ids(J_B, "defjvps-with-nondiff-argnums-rejected"),
        f"{J_B}.log1pexp-defjvps",
        "custom_jvp",
    ),
    # item 4: None cotangents beyond one leaf
    _rule(
        "NestedNoneCotangentAsOne",
        _ids(V_NC, "none-in-subtrees none-input-leaf"),
        f"{V_NC}.none-for-whole-tuple-argument",
    ),
    # item 7: non-array nondiff values
    _rule(
        "NondiffMustBeHashable",
        _ids(
            V_NV,
            "unhashable-list-primal unhashable-list-grad unhashable-list-jit-of-grad unhashable-list-vmap-of-grad",
        ),
        f"{V_NV}.float-nondiff-under-remat",
    ),
    # item 8: closure_convert
    _rule(
        "ClosureConvertHoistsEverything",
        _ids(
            V_CC,
            "mixed-closure-grads mixed-closure-primal integer-closure-under-jit-hoists-nothing",
        ),
        f"{V_CC}.aux-args-packed-wrongly",
    ),
    _rule(
        "ClosureConvertStructureUnchecked",
        _ids(V_CC, "aux-args-packed-wrongly"),
        f"{V_CC}.mixed-closure-grads",
    ),
    # item 5: symbolic zeros
    _rule(
        "JvpSymbolicZerosIgnored",
        _ids(
            J_SZ,
            "constant-arguments-get-symbolic-zeros constant-arguments-under-jit "
            "constant-arguments-under-vmap grad-of-vmap "
            "not-instantiated-under-jvp-of-vmap scan-under-grad jax-test-output-types",
        ),
        f"{J_SZ}.jacfwd-of-jit",
        "custom_jvp",
    ),
    # issue 24 part 2: argument errors before any rule runs (B88, B106); ensure_compile_time_eval (B91)
    _rule(
        "ResolveKwargsLenient",
        _ids(J_TM, "missing-positional-argument keyword-only-argument")
        + _ids(V_TM, "missing-positional-argument keyword-only-argument"),
        f"{J_B}.keyword-and-default-arguments",
        "custom_jvp",
    ),
    _rule(
        "CompileTimeEvalIgnored",
        _ids(J_TM, "ensure-compile-time-eval"),
        f"{J_TM}.eval-shape",
        "custom_jvp",
    ),
    _rule(
        "SymbolicZeroFromPrimalIsOne",
        _ids(J_SZ, "zero-from-primal-under-vmap-of-jit"),
        f"{J_SZ}.jacfwd-of-jit",
        "custom_jvp",
    ),
    # item 10: every gradient (and jvp tangent) value is checked with its dtype
    _rule(
        "GradDtypeHalved",
        _ids(
            J_CL,
            "grad-wrt-argument-still-works jit-tracer-rule-used vmap-tracer-jvp vmap-tracer-rule-used",
        )
        + _ids(
            J_INT,
            "custom-vjp-integer-output-grad float0-tangent-under-scan grad-with-int-argument "
            "integer-output-grad integer-output-jvp rule-gets-float0-tangent-jvp",
        )
        + _ids(
            J_ND,
            "app-grad-uses-rule app2-statics-first grad-wrt-nondiff-is-zero "
            "grad-wrt-nondiff-is-zero-under-jit grad-wrt-nondiff-other-paths-kept jvp-uses-rule "
            "nondiff-argnames tracer-under-jit-grad tracer-under-vmap",
        )
        + _ids(
            J_RO,
            "pair-works jax-test-overbatched-tangent-grads jax-test-overbatched-tangent-jvp-of-vmap",
        )
        + _ids(V_PC, "jax-test-vjp3-overbatched-fwd")
        + _ids(
            V_CL,
            "closure-convert-grad closure-convert-grad-under-jit closure-convert-grad-under-vmap "
            "grad-wrt-argument-still-works jax-test-bwd-closes-over-tracer "
            "jax-test-closed-over-tracer-in-residual jit-tracer-rule-used "
            "unconverted-closure-grad-wrt-x vmap-tracer-rule-used",
        )
        + _ids(
            V_OPT,
            "nondiff-argnames nondiff-argnums-and-argnames optimize-remat optimize-remat-under-jit "
            "symbolic-zeros-both-outputs-used symbolic-zeros-both-perturbed symbolic-zeros-perturbed "
            "symbolic-zeros-unused-output",
        )
        + _ids(
            V_INT,
            "grad-under-vmap-over-int grad-wrt-float grad-wrt-float-under-jit "
            "integer-bounds-traced-under-jit",
        )
        + _ids(
            V_ND,
            "app-static-first-in-bwd app2-statics-first-wherever-they-are app2-under-jit-and-vmap "
            "jax-test-value-and-grad migrated-grad migrated-grad-of-grad migrated-grad-of-grad-clipped "
            "migrated-grad-of-jit migrated-grad-table migrated-jit-grad-traced-bounds "
            "migrated-jit-of-vmap migrated-matches-numpy-clip migrated-none-gives-zero "
            "migrated-none-gives-zero-under-jit migrated-primal-is-identity migrated-vmap-of-jit "
            "migrated-vmap-over-bound migrated-vmap-over-cotangent-scale "
            "old-style-closed-over-bounds-under-jit old-style-concrete-grad old-style-vmap-over-x-only "
            "skip-app-grad skip-app-grad-scaled skip-app-jit-inside-grad skip-app-jit-static "
            "skip-app-vmap",
        )
        + _ids(V_PC, "grad-still-works")
        + _ids(
            J_B,
            "defjvps-first-rule-none defjvps-none-is-zero defjvps-per-argument-summed "
            "grad-of-grad-differentiates-the-rule "
            "higher-order-uses-rule-when-rule-calls-f keyword-and-default-arguments "
            "log1pexp-defjvps log1pexp-stable-grad "
            "nonlinear-rule-runs-under-jvp python-control-flow pytree-dict-tangent pytree-namedtuple-in-dict-out "
            "sqrt-ratio-convention-at-zero",
        )
        + _ids(J_TM, "eval-shape functools-partial")
        + _ids(
            V_B,
            "fixed-point-grad-and-grad-of-grad keyword-and-default-arguments pytree-namedtuple-in-dict-out",
        )
        + _ids(
            V_NC,
            "none-for-whole-dict-argument none-for-whole-tuple-argument none-for-whole-tuple-is-zero-per-leaf "
            "none-in-subtrees none-input-leaf",
        )
        + _ids(
            V_NV,
            "float-nondiff-under-remat unhashable-list-grad unhashable-list-jit-of-grad unhashable-list-vmap-of-grad",
        )
        + _ids(V_CC, "mixed-closure-grads")
        + _ids(V_OPT, "optimize-remat-under-remat")
        + _ids(V_INT, "float0-bwd-under-scan")
        + _ids(
            V_RO,
            "bwd-list-accepted bwd-none-entry-is-zero bwd-tuple-per-argument fwd-list-of-two-accepted "
            "fwd-pair-works",
        ),
        f"{V_ND}.app-primal",
        "custom_jvp",
    ),
    # issue 24, the remaining JAX-test rows: a bwd pytree whose unflatten rejects None
    _rule(
        "DisableBwdChecksIgnored",
        _ids(V_RO, "disable-bwd-checks-skips-shape-check"),
        f"{V_RO}.bwd-wrong-shape",
    ),
    _rule(
        "BwdTreeRebuiltWithNones",
        _ids(V_TM, "bwd-pytree-need-not-accept-nones"),
        f"{V_TM}.custom-gradient",
    ),
    # issue 24, part 4: the gradient family (dtype and weak type over dtypes and transforms)
    _rule(
        "GradDtypeHalved",
        ("custom_vjp.families.grad-dtype-and-weak-type",),
        f"{V_ND}.app-primal",
        "custom_jvp",
    ),
    _rule(
        "PullbackCotangentsWeak",
        ("custom_vjp.families.grad-dtype-and-weak-type",),
        f"{V_ND}.app-primal",
        "custom_jvp",
    ),
)

CUSTOM_RULES = Area(
    "custom_rules",
    (SPECS / "custom_vjp", SPECS / "custom_jvp"),
    RULE_BREAKAGES,
    ("tests.breakage.custom_vjp", "tests.breakage.custom_jvp"),
)

# ---------------------------------------------------------------- autodiff (tests/breakage/autodiff.py)
JVP, RES = "autodiff.jvp_arguments", "autodiff.custom_vjp_residuals"
AUTODIFF = Area(
    "autodiff",
    (SPECS / "autodiff",),
    (
        Breakage(
            "tests.breakage.autodiff:JvpTangentsUnchecked",
            OFF_WARN,
            (
                f"{JVP}.tangent-dtype-must-be-primal-dtype",
                f"{JVP}.integer-primal-needs-float0-tangent",
                f"{JVP}.tangent-shape-must-be-primal-shape",
            ),
            (f"{RES}.string-residual-is-type-error",),
        ),
        Breakage(
            "tests.breakage.autodiff:ResidualsUnchecked",
            OFF_WARN,
            (f"{RES}.string-residual-is-type-error",),
            (f"{JVP}.tangent-dtype-must-be-primal-dtype",),
        ),
        Breakage(
            "tests.breakage.autodiff:FwdRunsWithoutDifferentiation",
            OFF_WARN,
            (f"{RES}.plain-call-does-not-run-fwd",),
            (f"{JVP}.tangent-dtype-must-be-primal-dtype",),
        ),
    ),
    ("tests.breakage.autodiff",),
)

# The areas whose every case some breakage must fail (the upgrade-flag blocks are another kind of
# area: tests/test_flag_specs_catch_breakage.py derives its cases from the blocks that name a flag).
AREAS = (X64, CUSTOM_RULES, AUTODIFF)

# ---------------------------------------------------------------- promotion (tests/breakage/promotion.py)
# Not in AREAS: a table's thousands of cells are not each listed as caught; these breaks prove that a
# wrong cell, a weak type lost under jit and strict mode both ways fail, with the cell named.
PT, RT, ADD = "promotion.table.promote-types", "promotion.table.result-type", "promotion.table.add"
OFF_WARN_STRICT = Mode.from_slug("off-warn+jax_numpy_dtype_promotion=strict")
PROMOTION = Area(
    "promotion",
    (SPECS / "promotion", SPECS / "x64"),  # x64: the strict blocks of x64.promotion.explicit-floats
    (
        Breakage(
            "tests.breakage.promotion:WrongCellOffWarn",
            OFF_WARN,
            (f"{PT}[uint32|int8]", f"{PT}[int8|uint32]"),
            (f"{PT}[uint32|int16]", f"{PT}[int8|uint16]"),
        ),
        Breakage(
            "tests.breakage.promotion:WrongCellOffWarn",
            Mode.from_slug("off-allow"),
            (),
            (f"{PT}[uint32|int8]", f"{PT}[int8|uint32]"),
        ),
        Breakage(  # an extra dtype's `+` cell (the add table's nodes beyond the documented 18)
            "tests.breakage.promotion:WrongSmallFloatCell",
            Mode.from_slug("on"),
            (f"{ADD}[float8_e4m3fn|int8]", f"{ADD}[int8|float8_e4m3fn]"),
            (f"{ADD}[float8_e4m3fn|int16]", f"{ADD}[int8|float8_e5m2]"),
        ),
        Breakage(  # the `+` cells say `warns: none`: a warning from the operator alone fails them
            "tests.breakage.promotion:SpuriousAddWarning",
            Mode.from_slug("on"),
            (f"{ADD}[uint8|int8]", f"{ADD}[int8|uint8]"),
            (f"{ADD}[uint8|int16]", f"{ADD}[int8|int8]"),
        ),
        Breakage(  # one step beside the `+` table: another binary function, one pair
            "tests.breakage.promotion:MultiplyPromotesApart",
            OFF_WARN,
            ("promotion.weak.binary-functions-promote-as-add",),
            ("promotion.weak.unary-result-type", f"{ADD}[int8|uint8]"),
        ),
        Breakage(
            "tests.breakage.promotion:WeakTypeLostUnderJit",
            OFF_WARN,
            (f"{ADD}[int*|float*]", f"{ADD}[bool|int*]"),
            (f"{ADD}[int8|int16]",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooLenient",
            OFF_WARN_STRICT,
            (f"{PT}[int8|int16]", f"{RT}[float32|int32]"),
            (f"{PT}[int8|int8]",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooStrict",
            OFF_WARN_STRICT,
            (f"{PT}[int8|int*]", f"{PT}[float32|float*]"),
            (f"{PT}[int8|int8]", f"{PT}[int8|int16]"),
        ),
        # specs/x64/promotion.yaml's strict blocks: float16 + float64 (float32 once warned) must raise,
        # with both dtypes named; the weakly typed pairs strict allows still pass
        Breakage(
            "tests.breakage.promotion:StrictTooLenient",
            OFF_WARN_STRICT,
            ("x64.promotion.explicit-floats",),
            ("x64.promotion.weak-scalar-keeps-narrow-array",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooLenient",
            Mode.from_slug("on+jax_numpy_dtype_promotion=strict"),
            ("x64.promotion.explicit-floats",),
            ("x64.promotion.weak-scalar-keeps-narrow-array",),
        ),
        Breakage(
            "tests.breakage.promotion:StrictTooStrict",
            Mode.from_slug("off-allow+jax_numpy_dtype_promotion=strict"),
            ("x64.promotion.explicit-floats",),
            ("x64.defaults.arange-int",),
        ),
        # specs/promotion/weak_types.yaml: each case fails under one of these
        Breakage(
            "tests.breakage.promotion:AdOutputsStrong",
            OFF_WARN,
            ("promotion.weak.ad-of-python-float",),
            ("promotion.weak.eval-shape-keeps-weak-type",),
        ),
        Breakage(
            "tests.breakage.promotion:EvalShapeDropsWeakType",
            Mode.from_slug("on"),
            ("promotion.weak.eval-shape-keeps-weak-type",),
            ("promotion.weak.ad-of-python-float",),
        ),
        Breakage(
            "tests.breakage.promotion:JitArgsMadeStrong",
            OFF_WARN,
            (
                "promotion.weak.jit-cache-splits-on-weak-type",
                "promotion.weak.python-scalars-eager-and-jit",
                "promotion.weak.jit-invariance",
            ),
            ("promotion.weak.binary-non-promotion",),
        ),
        Breakage(
            "tests.breakage.promotion:JitArgsMadeStrong",
            Mode.from_slug("on"),
            ("promotion.weak.cache-miss-explained",),
            (),
        ),
        Breakage(
            "tests.breakage.promotion:EqualWeakOperandsStrong",
            OFF_WARN_STRICT,
            (
                "promotion.weak.binary-non-promotion",
                "promotion.weak.result-type-flag",
                "promotion.weak.unary-result-type",
                "promotion.weak.unary-result-type-every-dtype",
            ),
            ("promotion.weak.reduction-dtypes",),
        ),
        Breakage(
            "tests.breakage.promotion:ReductionPromotionFlipped",
            Mode.from_slug("on"),
            ("promotion.weak.reduction-dtypes", "promotion.weak.reduction-promote-integers-false"),
            ("promotion.weak.unary-result-type",),
        ),
    ),
    ("tests.breakage.promotion",),
)
