"""The contract's items: what a custom_vjp / custom_jvp rule must do, one line each, with the spec
cases of this suite that state it (specs/custom_vjp/, specs/custom_jvp/, specs/x64/, specs/autodiff/),
the JAX promise it checks (`sources`: a docs section or a JAX test, as the specs cite them, and its
`basis`), and whether it checks numerics JAX does not promise (`numerics`: docs/api_compatibility.md,
"exact numerics are not guaranteed across versions, platforms or jit"); `check` reports those apart
from contract failures (docs/check.md, "The items").

Plain data: this module imports neither JAX nor the rest of the harness, so the parent (the CLI,
`check`, the pytest fixture) and the runner inside each mode's process share it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """Where JAX makes a promise, as a spec's `source` names it: a docs page (`doc`, in the JAX
    repository) and its `section`, or a JAX test (`file` and `function`, Class.test_name)."""

    doc: str = ""
    section: str = ""
    url: str = ""
    file: str = ""
    function: str = ""

    def cite(self) -> str:
        """One line: `docs/x.md, "Section"` or `tests/x_test.py::Class::test_name`."""
        if self.doc:
            return f'{self.doc}, "{self.section}"' if self.section else self.doc
        return f"{self.file}::{self.function.replace('.', '::')}"


NOTEBOOK = "docs/notebooks/Custom_derivative_rules_for_Python_code.md"
NOTEBOOK_URL = (
    "https://docs.jax.dev/en/latest/notebooks/Custom_derivative_rules_for_Python_code.html"
)
CUSTOM_JVP_SECTION = Source(
    NOTEBOOK,
    "Use jax.custom_jvp to define forward-mode (and, indirectly, reverse-mode) rules",
    NOTEBOOK_URL,
)
CUSTOM_VJP_SECTION = Source(
    NOTEBOOK, "Use jax.custom_vjp to define custom reverse-mode-only rules", NOTEBOOK_URL
)
NONDIFF_SECTION = Source(NOTEBOOK, "Handling non-differentiable arguments", NOTEBOOK_URL)
X64_SECTION = Source(
    "docs/default_dtypes.md",
    "Default setting: 32-bits everywhere",
    "https://docs.jax.dev/en/latest/default_dtypes.html",
)
# Why an item is numerics: JAX promises no exact values, within or without jit.
NUMERICS_SECTION = Source(
    "docs/api_compatibility.md",
    "Numerics and randomness",
    "https://docs.jax.dev/en/latest/api_compatibility.html#numerics-and-randomness",
)
CUSTOM_API_TEST = "tests/custom_api_test.py"


def jax_test(function: str, file: str = CUSTOM_API_TEST) -> Source:
    """A JAX test, Class.test_name in file (default tests/custom_api_test.py)."""
    return Source(file=file, function=function)


BASES = ("documented", "tested", "observed")  # as the specs' `basis` (schema.json)


@dataclass(frozen=True)
class Item:
    id: str
    statement: str
    specs: tuple[str, ...]  # spec case ids that state it; the first is the one a failure line names
    kinds: tuple[str, ...] = (
        "custom_vjp",
        "custom_jvp",
    )  # the kinds of rule it applies to ("plain": no rule)
    sources: tuple[Source, ...] = ()  # the JAX promise it checks, the first the one a table links
    basis: str = ""  # documented, tested or observed (BASES)
    # it compares values JAX does not promise (finite differences): a failure is reported apart
    numerics: bool = False


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
    sources=(
        CUSTOM_VJP_SECTION,
        CUSTOM_JVP_SECTION,
        jax_test("CustomJVPTest.test_jvp_rule_doesnt_return_pair_error_message"),
    ),
    basis="documented",
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
    sources=(
        jax_test("CustomVJPTest.test_fwd_rule_primal_out_type_doesnt_match_primal_error_message"),
        jax_test("CustomJVPTest.test_jvp_rule_primal_out_type_doesnt_match_primal_error_message"),
    ),
    basis="tested",
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
    sources=(
        CUSTOM_VJP_SECTION,
        jax_test("CustomVJPTest.test_vjp_bwd_returns_non_tuple_error"),
        jax_test("CustomVJPTest.test_bwd_rule_shape_mismatch"),
    ),
    basis="documented",
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
    sources=(
        jax_test("X64ContextTests.test_custom_vjp", "tests/x64_context_test.py"),
        jax_test("X64ContextTests.test_custom_jvp", "tests/x64_context_test.py"),
        X64_SECTION,
    ),
    basis="tested",
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
    sources=(CUSTOM_JVP_SECTION, CUSTOM_VJP_SECTION),
    basis="documented",
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
    sources=(
        jax_test("CustomVJPTest.test_custom_vjp_scan_batching_edge_case"),
        NUMERICS_SECTION,
    ),
    basis="tested",
    numerics=True,
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
    sources=(
        CUSTOM_JVP_SECTION,
        jax_test("CustomJVPTest.test_jit"),
        jax_test("CustomVJPTest.test_jit"),
    ),
    basis="documented",
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
    sources=(
        CUSTOM_JVP_SECTION,
        jax_test("CustomJVPTest.test_vmap"),
        jax_test("CustomVJPTest.test_vmap"),
    ),
    basis="documented",
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
    sources=(
        jax_test("CustomVJPTest.test_custom_vjp_scan_batching_edge_case"),
        jax_test("CustomJVPTest.test_linear_in_scan"),
    ),
    basis="tested",
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
    sources=(jax_test("CustomJVPTest.test_remat"), jax_test("CustomVJPTest.test_remat")),
    basis="tested",
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
    sources=(
        CUSTOM_JVP_SECTION,
        jax_test("CustomVJPTest.test_remat_higher_order"),
        NUMERICS_SECTION,
    ),
    basis="documented",
    numerics=True,
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
    sources=(X64_SECTION, jax_test("APITest.test_dtype_warning", "tests/api_test.py")),
    basis="documented",
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
    sources=(NONDIFF_SECTION, jax_test("CustomVJPTest.test_nondiff_argnums_unhashable")),
    basis="tested",
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

JAX_REPO = "https://github.com/jax-ml/jax/blob/main/"
TABLE_START = "<!-- items-table: `jax-conformance check --items --markdown` writes it -->"
TABLE_END = "<!-- /items-table -->"


def link(source: Source) -> str:
    """A source as a Markdown link: the docs page (its section named), or the JAX test's file."""
    if source.doc:
        return f"[{source.doc}, {source.section}]({source.url or JAX_REPO + source.doc})"
    return f"[{source.cite()}]({JAX_REPO}{source.file})"


def markdown_table() -> str:
    """docs/check.md's table of the items (between TABLE_START and TABLE_END): id, what it checks,
    the JAX promise, basis, contract or numerics; made from ITEMS, never typed by hand."""
    rows = [
        "| item | what it checks | the JAX promise | basis | kind |",
        "|---|---|---|---|---|",
    ]
    for item in ITEMS:
        promise = "<br>".join(link(s) for s in item.sources)
        kind = "numerics" if item.numerics else "contract"
        rows.append(f"| `{item.id}` | {item.statement} | {promise} | {item.basis} | {kind} |")
    return "\n".join([TABLE_START, *rows, TABLE_END])
