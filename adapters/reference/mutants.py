"""Mutants: named, deliberate breaks of one documented rule each, to measure the suite.

A mutant is switched on by `JAX_CONFORMANCE_MUTANT=<name>`, read when the reference
namespace is built (`ReferenceAdapter.namespace()`). The code of each mutant sits next to
the rule it breaks, behind `if mutant("<name>")`, so reading the rule shows its mutant.
`jax-conformance mutate` runs the suite once per mutant and mode.
"""

from __future__ import annotations

import os

ENV_VAR = "JAX_CONFORMANCE_MUTANT"

# name -> the documented rule it breaks (where the code lives)
MUTANTS: dict[str, str] = {
    # found by `jax-conformance diff` (ad.py, custom_vjp.py)
    "fwd-residuals-unchecked": "a custom_vjp fwd's residuals must be JAX types, a string is a "
    "TypeError (custom_vjp.check_residuals)",
    "jvp-tangents-unchecked": "jax.jvp checks each tangent's dtype (float0 for an integer primal) "
    "and shape against its primal (ad._check_tangents)",
    # dtype policy (dtypes.py)
    "default-int64-x64-off": "with x64 off the default integer type is int32 (dtypes.default_int)",
    "default-float64-x64-off": "with x64 off the default float type is float32 (dtypes.default_float)",
    "default-complex128-x64-off": "with x64 off the default complex type is complex64 (dtypes.default_complex)",
    "no-truncation-warning": "warn mode warns when a 64-bit request is truncated (dtypes.check_user_dtype)",
    "warn-without-truncating": "warn mode truncates the request to 32 bits (dtypes.check_user_dtype)",
    "error-mode-warns": "error mode raises ValueError instead of warning (dtypes.check_user_dtype)",
    "allow-mode-truncates": "allow mode keeps the requested 64-bit dtype (dtypes.check_user_dtype)",
    "python-int-not-int": "dtype=int means the default integer and never warns (dtypes.check_user_dtype)",
    "warning-not-userwarning": "the truncation warning is a UserWarning (dtypes.check_user_dtype)",
    "numpy-input-keeps-64": "NumPy 64-bit inputs are canonicalized to 32 bits with x64 off (dtypes.canonicalize_dtype)",
    "uint64-not-truncated": "uint64 is in the 64->32 table (dtypes.TRUNCATE_64)",
    "x64-env-ignored": "JAX_ENABLE_X64 is read at start-up (config.load_from_environ)",
    "x64-env-lenient": "an invalid JAX_ENABLE_X64 value fails at start-up (config.parse_env_bool)",
    "x64-update-ignored": "config.update('jax_enable_x64', True) turns x64 on (config.Config.update)",
    # jit (jit.py)
    "jit-cache-ignores-x64": "the jit cache key includes the x64 flag (jit.cache_key)",
    "jit-cache-ignores-explicit-mode": "the jit cache key includes jax_explicit_x64_dtypes (jit.cache_key)",
    # custom_vjp / custom_jvp (custom_call.py, custom_vjp.py, custom_jvp.py, custom.py)
    "vjp-nondiff-accepts-tracers": "custom_vjp rejects Tracers in nondiff_argnums (custom_call.check_for_tracers)",
    "vjp-nondiff-wrong-error": "the rejection is jax.errors.UnexpectedTracerError (custom_call.check_for_tracers)",
    "bwd-static-args-last": "bwd receives the nondiff arguments first (custom_vjp.VJPCall.bwd_flat)",
    "bwd-none-rejected": "None in bwd's output means a zero cotangent (custom_vjp.cotangents_from_bwd)",
    "bwd-structure-unchecked": "bwd's output must be a tuple with one entry per argument "
    "(custom_vjp.cotangents_from_bwd)",
    "fwd-pair-unchecked": "fwd must return a (primal output, residuals) pair (custom_vjp.VJPCall.fwd_flat)",
    "jvp-nondiff-rejects-tracers": "custom_jvp accepts Tracers in nondiff_argnums (custom_jvp.custom_jvp.__call__)",
    "jvp-rule-static-args-last": "the custom_jvp rule receives the nondiff arguments first "
    "(custom_jvp.JVPCall.jvp_flat)",
    "int-cotangent-not-float0": "the cotangent of an integer input is a float0 zero (ad.zeros_like_aval)",
    "closure-over-ad-tracer-allowed": "a custom rule closing over a differentiated value raises (core.check_sealed)",
    "jvp-of-custom-vjp-allowed": "forward-mode autodiff of a custom_vjp function is a TypeError (core.JVPTrace)",
    "jvp-pair-unchecked": "a custom_jvp rule must return a (primal, tangent) pair (custom_jvp.JVPCall.jvp_flat)",
    "jvp-tangent-structure-unchecked": "a custom_jvp rule's primal and tangent outputs have one "
    "pytree structure (custom_jvp.JVPCall.jvp_flat)",
    "jvp-tangent-aval-unchecked": "each tangent output has its primal output's shape and tangent "
    "dtype (custom_jvp.check_tangent_types)",
    "rule-primal-type-unchecked": "where the function is staged, the rule's primal output has its "
    "type (custom_call.check_primal_type)",
    "zero-from-primal-not-float0": "zero_from_primal of an integer value is a float0 zero "
    "(custom_call.zero_from_primal)",
    "nonlinear-jvp-rule-transposed": "reverse mode through a custom_jvp rule that is not linear in "
    "its tangents raises (ad.LinearizeTrace.check_linear)",
    "defaults-not-applied": "default arguments of a custom function reach its rules, by signature "
    "(custom_call.resolve_args)",
    "defjvps-with-nondiff-accepted": "defjvps cannot be used with nondiff_argnums (custom_jvp.custom_jvp.defjvps)",
    "closure-convert-structure-unchecked": "the converted function's arguments must have the "
    "example arguments' structure (custom.closure_convert)",
    "closure-over-jit-arg-under-grad-allowed": "under grad of jit, a custom_vjp closing over a jit "
    "argument raises TypeError (ad.LinearizeTrace.process_custom_vjp_call)",
    "jvp-symbolic-zeros-instantiated": "a symbolic_zeros custom_jvp rule gets SymbolicZero for "
    "unperturbed inputs (custom_jvp.JVPCall.jvp_flat)",
    "bwd-symbolic-zero-shape-unchecked": "a SymbolicZero from bwd must have its input's shape "
    "(custom_vjp._leaf_cotangent)",
    "optimize-remat-primal-from-fwd": "an optimize_remat custom_vjp staged by jit or remat returns "
    "the function's primal output (custom_vjp.VJPCall.fwd_flat)",
    "closure-over-vmap-tracer-unbatched": "a custom function or rule closing over a vmap Tracer is "
    "batched by that vmap even where no argument is its (core._bind_custom)",
    "jvp-missing-rule-runs-function": "a custom_jvp without defjvp raises AttributeError when "
    "called (custom_jvp.custom_jvp.__call__)",
    # under jax_custom_vjp3 (custom_vjp.py, custom_vjp3.py)
    "vjp3-closure-allowed": "under jax_custom_vjp3 a custom_vjp function closing over a Tracer "
    "raises (custom_vjp3.check_closure)",
    "vjp3-nondiff-unhashable-accepted": "under jax_custom_vjp3 nondiff arguments must be hashable "
    "(custom_vjp3.check_static)",
}

_active: str | None = None


class UnknownMutant(ValueError):
    """JAX_CONFORMANCE_MUTANT names no mutant (a typo must not pass as a surviving mutant)."""


def load_from_environ() -> None:
    """Read the mutant switch; called when the namespace is built."""
    global _active
    name = os.environ.get(ENV_VAR) or None
    if name is not None and name not in MUTANTS:
        raise UnknownMutant(
            f"{ENV_VAR}={name!r} names no mutant; known: {', '.join(sorted(MUTANTS))}"
        )
    _active = name


def mutant(name: str) -> bool:
    """True when the named mutant is switched on (the rule next to this call is broken)."""
    assert name in MUTANTS, name  # a misspelt name at a call site would be a dead mutant
    return _active == name


def active() -> str | None:
    """The mutant in effect, or None."""
    return _active


# A mutant the suite cannot kill, with the reason (shown by `jax-conformance mutate` and the report).
_FLAG_ONLY = (
    "lives only under jax_custom_vjp3: killed in a mode that sets it "
    "(`jax-conformance mutate --modes off-warn+jax_custom_vjp3`), never in the four default modes"
)
EXPLAINED: dict[str, str] = {
    "vjp3-closure-allowed": _FLAG_ONLY,
    "vjp3-nondiff-unhashable-accepted": _FLAG_ONLY,
}
