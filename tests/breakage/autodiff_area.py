"""The autodiff area: the breakages of tests/breakage/autodiff.py and the specs/autodiff cases
each must fail."""

from __future__ import annotations

from tests.breakage.harness import OFF_WARN, SPECS, Area, Breakage

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
