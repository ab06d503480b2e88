"""The custom_rules area: the breakages of tests/breakage/custom_vjp.py and custom_jvp.py, all in
mode off-warn, with the custom_vjp / custom_jvp cases that must fail under each and one control."""

from __future__ import annotations

from jax_conformance.mode import Mode

from tests.breakage.harness import OFF_WARN, SPECS, Area, Breakage

# x64 on: the cases of a float64 value for a float32 one
ON_WARN = Mode(True, "warn")


def _rule(
    adapter: str,
    catches: tuple[str, ...],
    control: str,
    module: str = "custom_vjp",
    mode: Mode = OFF_WARN,
) -> Breakage:
    return Breakage(f"tests.breakage.{module}:{adapter}", mode, catches, (control,))


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
            "pytree-dict-tangent pytree-namedtuple-in-dict-out sqrt-ratio-convention-at-zero "
            "python-control-flow-values",
        )
        + _ids(V_OPT, "nondiff-argnums-under-checkpoint")
        + _ids(J_ND, "nondiff-under-remat")
        + _ids(V_TM, "custom-gradient-under-checkpoint")
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
        "BwdCotangentCastToInput",
        _ids(
            V_RO,
            "bwd-cotangent-float16-for-float32 bwd-cotangent-float32-for-float16 "
            "bwd-cotangent-int32-for-float32 bwd-cotangent-dtype-breaks-chain-rule",
        ),
        f"{V_RO}.bwd-tuple-per-argument",
    ),
    _rule(
        "BwdCotangentCastToInput",
        _ids(V_RO, "bwd-cotangent-float64-for-float32"),
        f"{V_RO}.bwd-tuple-per-argument",
        mode=ON_WARN,
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
            "jax-test-jvp3-closed-over-vmap-tracer jax-test-vmap-closed-over-prng-key",
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
        _ids(
            J_RO,
            "tangent-shape-differs tangent-shape-differs-grad tangent-dtype-differs "
            "tangent-float32-for-float16-jvp tangent-float32-for-float16-grad "
            "tangent-python-float-for-float16",
        )
        + _ids(J_INT, "integer-output-int-tangent-rejected"),
        f"{J_RO}.pair-works",
        "custom_jvp",
    ),
    _rule(
        "JvpTangentTypeUnchecked",
        _ids(
            J_RO,
            "tangent-float64-for-float32-jvp tangent-float64-for-float32-grad "
            "tangent-float64-for-float32-vjp tangent-float64-for-float32-jit "
            "tangent-python-float-for-float32",
        ),
        f"{J_RO}.pair-works",
        "custom_jvp",
        ON_WARN,
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
    # issue 37: the custom-rule corners (a dict argument's cotangents, unbroadcasting)
    _rule(
        "BwdPytreeLeavesReversed",
        _ids(V_TM, "remat-pytree-arg"),
        f"{V_RO}.fwd-pair-works",
    ),
    # survey row NB8 (jax#5849): the rule under vmap sees an unbatched argument's tangent unbatched
    _rule(
        "RuleTangentsBroadcastUnderVmap",
        _ids(J_TM, "jax-test-grad-through-nested-vmaps"),
        f"{J_RO}.jax-test-overbatched-tangent-grads",
        "custom_jvp",
    ),
    _rule(
        "GradNotUnbroadcast",
        _ids(J_CL, "unbroadcasting-grad-shape"),
        f"{J_CL}.vmap-tracer-rule-used",
        "custom_jvp",
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
    min_jax="0.10",  # the breaks patch private names of jax._src.custom_derivatives as of JAX 0.10
)
