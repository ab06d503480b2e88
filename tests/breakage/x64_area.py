"""The x64 area: the breakages of tests/breakage/x64.py, each with the mode where its rule speaks,
the x64 cases that must fail under it and the controls it leaves alone."""

from __future__ import annotations

from jax_conformance.mode import Mode

from tests.breakage.harness import SPECS, Area, Breakage
from tests.breakage.x64_families_area import X64_FAMILY_BREAKAGES


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

X64 = Area(
    "x64",
    (SPECS / "x64",),
    X64_BREAKAGES
    + X64_FAMILY_BREAKAGES,  # specs/x64/families.yaml's: tests/breakage/x64_families_area.py
    ("tests.breakage.x64", "tests.breakage.x64_families"),
)
