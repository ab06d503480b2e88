"""The contract's items: what a custom_vjp / custom_jvp rule must do, one line each, with the spec
cases of this suite that state it (specs/custom_vjp/, specs/custom_jvp/, specs/x64/, specs/autodiff/).

Plain data: this module imports neither JAX nor the rest of the harness, so the parent (the CLI,
`check`, the pytest fixture) and the runner inside each mode's process share it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    id: str
    statement: str
    specs: tuple[str, ...]  # spec case ids that state it; the first is the one a failure line names
    kinds: tuple[str, ...] = (
        "custom_vjp",
        "custom_jvp",
    )  # the kinds of rule it applies to ("plain": no rule)


RULE_FWD_PAIR = Item(
    "rule.fwd-pair",
    "fwd returns a pair (primal output, residuals); a custom_jvp rule returns (primal output, tangent output) "
    "with the tangent of the primal output's structure, shape and tangent dtype",
    (
        "custom_vjp.rule_outputs.fwd-pair-works",
        "custom_vjp.rule_outputs.fwd-bare-value",
        "custom_vjp.rule_outputs.fwd-triple",
        "custom_vjp.rule_outputs.fwd-none",
        "custom_jvp.rule_outputs.pair-works",
        "custom_jvp.rule_outputs.not-a-pair-jvp",
        "custom_jvp.rule_outputs.tangent-structure-differs",
        "custom_jvp.rule_outputs.tangent-shape-differs",
        "custom_jvp.rule_outputs.tangent-dtype-differs",
        "custom_jvp.integer_inputs.float0-tangent-jvp",
    ),
)

PRIMAL_MATCHES_FWD = Item(
    "primal.matches-fwd",
    "calling the function gives what fwd (or the jvp rule) gives as its primal output: structure, value, "
    "dtype, shape and weak_type",
    (
        "custom_vjp.primal_consistency.fwd-shape-differs-under-scan",
        "custom_vjp.primal_consistency.fwd-structure-differs-under-scan",
        "custom_vjp.primal_consistency.fwd-mismatch-plain-call-unaffected",
        "custom_vjp.defvjp_options.optimize-remat-under-remat",
        "custom_jvp.rule_outputs.primal-shape-differs-under-scan",
        "custom_jvp.rule_outputs.primal-structure-differs-under-scan",
    ),
)

RULE_BWD_STRUCTURE = Item(
    "rule.bwd-structure",
    "bwd returns a tuple (or list) with one cotangent per primal input, each of that input's pytree "
    "structure and shape (None for a whole input or a leaf means zero; anything for an integer input)",
    (
        "custom_vjp.rule_outputs.bwd-tuple-per-argument",
        "custom_vjp.rule_outputs.bwd-list-accepted",
        "custom_vjp.rule_outputs.bwd-too-many",
        "custom_vjp.rule_outputs.bwd-too-few",
        "custom_vjp.rule_outputs.bwd-bare-array",
        "custom_vjp.rule_outputs.bwd-wrong-nesting",
        "custom_vjp.rule_outputs.bwd-wrong-shape",
        "custom_vjp.none_cotangents.none-in-subtrees",
        "custom_vjp.integer_inputs.bwd-nonzero-for-int-becomes-float0",
    ),
    ("custom_vjp",),
)

GRAD_DTYPE = Item(
    "grad.dtype",
    "every cotangent the rule gives and every gradient has its input's dtype (float0 for an integer input): "
    "no float64 from a float32 input with x64 on, no float32 from a float64 input",
    (
        "x64.transforms.grad-float64-input",
        "x64.transforms.grad",
        "custom_vjp.families.grad-dtype-and-weak-type",
        "custom_vjp.integer_inputs.int-cotangent-is-float0",
        "custom_jvp.integer_inputs.rule-gets-float0-tangent-jvp",
        "autodiff.jvp_arguments.tangent-dtype-must-be-primal-dtype",
    ),
)

DERIVATIVES_AGREE = Item(
    "derivatives.agree",
    "vjp, grad and jacrev (and for custom_jvp jvp and jacfwd) give the same derivative; jvp of a custom_vjp "
    "function is the documented TypeError, not checked",
    (
        "custom_jvp.rule_outputs.pair-works",
        "custom_jvp.symbolic_zeros.jacfwd-of-jit",
        "custom_jvp.nondiff_argnums.jvp-uses-rule",
        "custom_vjp.primal_consistency.jvp-rejected",
        "custom_vjp.primal_consistency.grad-still-works",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

DERIVATIVES_FINITE_DIFFERENCES = Item(
    "derivatives.finite-differences",
    "where the function is differentiable at the example, the derivative along a random direction equals "
    "central finite differences (tolerance per dtype); JAX itself uses whatever the rule says, right or not",
    (
        "custom_jvp.rule_outputs.pair-works",
        "custom_vjp.basics.keyword-and-default-arguments",
        "custom_jvp.basics.sqrt-ratio-convention-at-zero",
        "custom_jvp.basics.log1pexp-stable-grad",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

TRANSFORMS_JIT = Item(
    "transforms.jit",
    "under jit the value and the gradient are the eager ones",
    (
        "custom_vjp.primal_consistency.grad-still-works",
        "custom_vjp.rule_outputs.fwd-bare-under-jit-grad",
        "custom_vjp.defvjp_options.optimize-remat-under-jit",
        "custom_jvp.basics.log1pexp-stable-grad",
        "custom_vjp.nondiff_argnums.migrated-grad-of-jit",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

TRANSFORMS_VMAP = Item(
    "transforms.vmap",
    "under vmap (the nondiff arguments broadcast) each row's value and gradient are that row's eager ones",
    (
        "custom_vjp.nondiff_argnums.old-style-vmap-over-x-only",
        "custom_vjp.primal_consistency.grad-still-works",
        "custom_vjp.nondiff_values.unhashable-list-vmap-of-grad",
        "custom_jvp.closures.vmap-tracer-rule-used",
        "custom_jvp.basics.log1pexp-stable-grad",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

TRANSFORMS_SCAN = Item(
    "transforms.scan",
    "inside lax.scan each step's value and gradient are the eager ones",
    (
        "custom_vjp.closures.jax-test-closure-over-constant-under-scan-and-vmap",
        "custom_vjp.integer_inputs.float0-bwd-under-scan",
        "custom_jvp.integer_inputs.float0-tangent-under-scan",
        "custom_vjp.symbolic_zeros.scan-under-grad",
        "custom_jvp.symbolic_zeros.scan-under-grad",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

TRANSFORMS_CHECKPOINT = Item(
    "transforms.checkpoint",
    "under jax.checkpoint the value and the gradient are the eager ones",
    (
        "custom_vjp.nondiff_values.float-nondiff-under-remat",
        "custom_vjp.symbolic_zeros.under-remat",
        "custom_vjp.defvjp_options.optimize-remat-under-remat",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

TRANSFORMS_SECOND_ORDER = Item(
    "transforms.second-order",
    "where the rule can be differentiated again (else n/a), grad of the gradient equals finite differences "
    "of the gradient",
    (
        "custom_jvp.basics.grad-of-grad-differentiates-the-rule",
        "custom_vjp.basics.fixed-point-grad-and-grad-of-grad",
        "custom_vjp.nondiff_argnums.migrated-grad-of-grad",
    ),
    ("custom_vjp", "custom_jvp", "plain"),
)

X64_NO_EXTRA_WARNING = Item(
    "x64.no-extra-warning",
    "the rule gives no warning (the explicit-64-bit one in particular), and in error mode raises no error, "
    "that the same function without its rule (plain autodiff) does not",
    (
        "x64.transforms.grad",
        "x64.warnings.arange-float64",
        "x64.transforms.jit",
        "x64.explicit_mode.env-error",
    ),
)

NONDIFF_HASHABLE = Item(
    "nondiff.hashable",
    "every nondiff argument is hashable (JAX 0.10.2 with jax_custom_vjp3 raises ValueError for one that is "
    "not) and, for custom_vjp, not an array (under jit or vmap it would be a Tracer, which custom_vjp rejects "
    "there; custom_jvp accepts one)",
    (
        "custom_vjp.nondiff_values.unhashable-list-primal",
        "custom_vjp.nondiff_argnums.tracer-under-jit",
        "custom_vjp.nondiff_argnums.tracer-under-vmap",
        "custom_jvp.nondiff_argnums.tracer-under-jit-primal",
    ),
)

# The items in the order they are judged and shown.
ITEMS: tuple[Item, ...] = (
    RULE_FWD_PAIR,
    PRIMAL_MATCHES_FWD,
    RULE_BWD_STRUCTURE,
    GRAD_DTYPE,
    DERIVATIVES_AGREE,
    DERIVATIVES_FINITE_DIFFERENCES,
    TRANSFORMS_JIT,
    TRANSFORMS_VMAP,
    TRANSFORMS_SCAN,
    TRANSFORMS_CHECKPOINT,
    TRANSFORMS_SECOND_ORDER,
    X64_NO_EXTRA_WARNING,
    NONDIFF_HASHABLE,
)
BY_ID = {item.id: item for item in ITEMS}

# Outcomes of an item in one mode.
PASS, FAIL, NA, BLOCKED = "pass", "fail", "n/a", "blocked"
