"""Finite differences for check's derivative items (derivatives.finite-differences, second order).

The direction is scaled per input, u_i = max(1, |x_i|) v_i, and the step is eps^(1/3) of the input's
dtype along u, so each input moves by a step fit for its own size and precision. The estimate is
Richardson's extrapolation of central differences at that step and half of it (error O(step^4)).
A function is declared not differentiable at the example only when it is shown so: the one-sided
differences disagree and their gap does not shrink with the step (a kink), or the function is not
finite within a step. A NaN or inf primal is reported as such. Runs in check's mode process.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np


class NotDifferentiable(Exception):
    """The function is shown not differentiable at the example (or not finite there): why."""


def direction(x0: jax.Array, v: jax.Array) -> np.ndarray:
    """v scaled per input by max(1, |x_i|), as float64."""
    return np.maximum(1.0, np.abs(np.asarray(x0, np.float64))) * np.asarray(v, np.float64)


def _nonfinite(values: np.ndarray) -> str:
    flat = np.ravel(values)
    bad = [i for i, value in enumerate(flat) if not np.isfinite(value)]
    what = "NaN" if any(np.isnan(flat[i]) for i in bad) else "inf"
    at = f" (output elements {bad[:5]})" if flat.size > 1 else ""
    return f"{what}{at}"


def derivative_along(
    S: Callable[[jax.Array], jax.Array], x0: jax.Array, v: jax.Array
) -> tuple[np.ndarray, np.ndarray]:
    """(estimate of the derivative of S at x0 along u, u), u = direction(x0, v); raises
    NotDifferentiable with the reason where S is shown not differentiable (or not finite) there."""
    with np.errstate(all="ignore"):  # NumPy's own warnings are no warning of the rule's
        return _derivative_along(S, x0, v)


def _derivative_along(
    S: Callable[[jax.Array], jax.Array], x0: jax.Array, v: jax.Array
) -> tuple[np.ndarray, np.ndarray]:
    u = direction(x0, v)
    x = np.asarray(x0, np.float64)
    h = float(jnp.finfo(x0.dtype).eps) ** (1 / 3)

    def at(t: float) -> np.ndarray:
        return np.asarray(S(jnp.asarray(x + t * h * u, dtype=x0.dtype)), np.float64)

    f0 = at(0.0)
    if not np.all(np.isfinite(f0)):
        raise NotDifferentiable(
            f"the primal is {_nonfinite(f0)} at the example: no derivative to compare; pick "
            "arguments inside the function's domain"
        )
    values = {t: at(t) for t in (1.0, -1.0, 0.5, -0.5, 0.25, -0.25)}
    for t, value in values.items():
        if not np.all(np.isfinite(value)):
            raise NotDifferentiable(
                f"not finite within a step of the example: {_nonfinite(value)} at x + {t:g}·{h:.3g}·u "
                "(the example is at the edge of the function's domain)"
            )
    gap = {t: ((values[t] - f0) - (f0 - values[-t])) / (t * h) for t in (1.0, 0.25)}
    c1 = (values[1.0] - values[-1.0]) / (2 * h)
    c2 = (values[0.5] - values[-0.5]) / h
    scale = max(1.0, float(np.max(np.abs(c1), initial=0.0)))
    wide, narrow = (float(np.max(np.abs(gap[t]), initial=0.0)) for t in (1.0, 0.25))
    if narrow > 0.1 * scale and narrow > 0.5 * wide:
        raise NotDifferentiable(
            "not differentiable at the example: the one-sided differences disagree by "
            f"{wide:.3g} at step {h:.3g} and still by {narrow:.3g} at a quarter of it (a kink: the "
            "gap of a smooth function shrinks with the step)"
        )
    return (4 * c2 - c1) / 3, u
