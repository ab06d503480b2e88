"""Deliberately broken custom rules (and one good one) for tests/test_contract.py.

Each broken rule breaks one item of the contract (jax_conformance.contract.items) and nothing else;
`BROKEN` says which item, and in which of the modes the test runs (off-warn, on) it must fail.
Module level, so that each mode's process can import them again.
"""

from __future__ import annotations

import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


# A correct rule: sin with cos as its derivative.
@jax.custom_vjp
def good_sin(x):
    return jnp.sin(x)


def _good_sin_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _good_sin_bwd(cos_x, g):
    return (g * cos_x,)


good_sin.defvjp(_good_sin_fwd, _good_sin_bwd)


# grad.dtype, in mode `on` only: a NumPy float64 scalar in bwd makes the cotangent of a float32
# input float64 when x64 is on (with x64 off it is canonicalized to float32).
@jax.custom_vjp
def wrong_dtype_cotangent(x):
    return 2.0 * x


def _wdc_fwd(x):
    return 2.0 * x, None


def _wdc_bwd(_, g):
    return (g * np.float64(2.0),)


wrong_dtype_cotangent.defvjp(_wdc_fwd, _wdc_bwd)


# primal.matches-fwd: fwd's primal output is cos(x), the function's sin(x); the derivative is right.
@jax.custom_vjp
def fwd_disagrees(x):
    return jnp.sin(x)


def _fd_fwd(x):
    return jnp.cos(x), jnp.cos(x)


def _fd_bwd(cos_x, g):
    return (g * cos_x,)


fwd_disagrees.defvjp(_fd_fwd, _fd_bwd)


# derivatives.finite-differences: the tangent is 3 cos(x), not cos(x); every transform agrees with it.
@jax.custom_jvp
def wrong_factor(x):
    return jnp.sin(x)


@wrong_factor.defjvp
def _wrong_factor_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), 3.0 * jnp.cos(x) * t


# transforms.vmap: bwd computes cos(x) in a callback written for one scalar example (it takes the
# first element), declared as if it handled a batch (vmap_method="expand_dims"); only vmap over x
# gives it a batch, and then every row gets the first row's cos. Checked at a scalar x.
def _cos_of_first(x):
    return np.full(np.shape(x), np.cos(np.ravel(x)[0]), dtype=x.dtype)


@jax.custom_vjp
def breaks_under_vmap(x):
    return jnp.sin(x)


def _buv_fwd(x):
    return jnp.sin(x), x


def _buv_bwd(x, g):
    cos_x = jax.pure_callback(
        _cos_of_first, jax.ShapeDtypeStruct(jnp.shape(x), x.dtype), x, vmap_method="expand_dims"
    )
    return (g * cos_x,)


breaks_under_vmap.defvjp(_buv_fwd, _buv_bwd)


# nondiff.hashable: the nondiff argument is a list (works today; jax_custom_vjp3 wants it hashable).
@partial(jax.custom_vjp, nondiff_argnums=(0,))
def list_nondiff(coeffs, x):
    return coeffs[0] * jnp.sin(x)


def _ln_fwd(coeffs, x):
    return coeffs[0] * jnp.sin(x), jnp.cos(x)


def _ln_bwd(coeffs, cos_x, g):
    return (coeffs[0] * g * cos_x,)


list_nondiff.defvjp(_ln_fwd, _ln_bwd)


# rule.bwd-structure: two inputs, bwd returns one cotangent.
@jax.custom_vjp
def bwd_too_few(x, y):
    return x * y


def _btf_fwd(x, y):
    return x * y, (x, y)


def _btf_bwd(res, g):
    x, y = res
    return (g * y,)


bwd_too_few.defvjp(_btf_fwd, _btf_bwd)


# x64.no-extra-warning: bwd asks for a float64 array (and casts back): with x64 off and the default
# policy it warns, which sin without its rule does not.
@jax.custom_vjp
def warns_in_bwd(x):
    return jnp.sin(x)


def _wib_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _wib_bwd(cos_x, g):
    return (g * cos_x + jnp.zeros(jnp.shape(g), dtype="float64").astype(g.dtype),)


warns_in_bwd.defvjp(_wib_fwd, _wib_bwd)

X = "jnp.array([0.5, 2.0], dtype=jnp.float32)"
# name -> (arguments before x, nondiff, the item it breaks, the modes (of off-warn, on) where it fails[, x])
BROKEN = {
    "wrong_dtype_cotangent": ((), (), "grad.dtype", ("on",)),
    "fwd_disagrees": ((), (), "primal.matches-fwd", ("off-warn", "on")),
    "wrong_factor": ((), (), "derivatives.finite-differences", ("off-warn", "on")),
    "breaks_under_vmap": (
        (),
        (),
        "transforms.vmap",
        ("off-warn", "on"),
        "jnp.array(0.5, dtype=jnp.float32)",
    ),
    "list_nondiff": (("[2.0]",), (0,), "nondiff.hashable", ("off-warn", "on")),
    "bwd_too_few": ((X,), (), "rule.bwd-structure", ("off-warn", "on")),
    "warns_in_bwd": ((), (), "x64.no-extra-warning", ("off-warn",)),
}


# Not in BROKEN: a rule written before JAX 0.4.34 (test_contract's releases test). The tangent of its
# integer output is an int32 zero where float0 is expected: rule.fwd-pair fails in every release,
# and from 0.4.34 JAX refuses the rule, so every derivative item stops holding there.
@jax.custom_jvp
def int_tangent_rule(x):
    return 2.0 * x, jax.lax.convert_element_type(jnp.sum(x), jnp.int32)


@int_tangent_rule.defjvp
def _int_tangent_rule_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return int_tangent_rule(x), (2.0 * t, jnp.zeros((), jnp.int32))


# ---------------------------------------------------------------- public entry points (issue 39)
# Rules reached through wrappers, and the false verdicts `check` gave them: each is checked as the
# rule it reaches (tests/test_contract_entry_points.py).


def public_sin(x):
    """A public function wrapping a custom_vjp (as optax's scale_gradient wraps its rule)."""
    return good_sin(x)


@functools.wraps(good_sin)
def wraps_sin(x):
    """A functools.wraps wrapper of a custom_vjp."""
    return good_sin(x)


class Holder:
    """A method reaching a custom_vjp."""

    def sin(self, x):
        return good_sin(x)


HOLDER = Holder()


def public_bwd_too_few(x):
    """A wrapper reaching a broken rule: its rule item must still fail."""
    return bwd_too_few(x, 2.0 * x)


def two_rules(x):
    """A wrapper reaching a custom_jvp and a custom_vjp."""
    return wrong_factor(x) + good_sin(x)


# A module-level partial of a rule (was "plain": every rule item n/a).
partial_bwd_too_few = functools.partial(bwd_too_few, y=jnp.array([1.5, 0.5], dtype=jnp.float32))


@jax.custom_jvp
def scaled_softplus(x, beta):
    return jnp.log1p(jnp.exp(beta * x)) / beta


@scaled_softplus.defjvp
def _scaled_softplus_jvp(primals, tangents):
    (x, beta), (tx, tb) = primals, tangents
    y = scaled_softplus(x, beta)
    dbeta = (x * jax.nn.sigmoid(beta * x) - y) / beta
    return y, jax.nn.sigmoid(beta * x) * tx + dbeta * tb


partial_softplus = functools.partial(scaled_softplus, beta=2.0)


# log(1 - exp(-x)), a custom_jvp with the right derivative 1/expm1(x): smooth on x > 0, but with a
# large second derivative at 0.1, where one-sided differences at the old step disagreed by > 10%.
@jax.custom_jvp
def own_log1mexp(x):
    return jnp.log(-jnp.expm1(-x))


@own_log1mexp.defjvp
def _own_log1mexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return own_log1mexp(x), t / jnp.expm1(x)


# The same with a derivative 5% off: finite differences must still see it.
@jax.custom_jvp
def off_log1mexp(x):
    return jnp.log(-jnp.expm1(-x))


@off_log1mexp.defjvp
def _off_log1mexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return off_log1mexp(x), 1.05 * t / jnp.expm1(x)


# A temperature the bwd forgets (its cotangent None: zero), as ott's softmin did: seen only when the
# Python float argument is differentiated.
@jax.custom_vjp
def forgets_gamma(x, gamma):
    return -gamma * jax.nn.logsumexp(-x / gamma)


def _fg_fwd(x, gamma):
    return forgets_gamma(x, gamma), (x, gamma)


def _fg_bwd(res, g):
    x, gamma = res
    return (g * jax.nn.softmax(-x / gamma), None)


forgets_gamma.defvjp(_fg_fwd, _fg_bwd)


def with_flag(x, square):
    """A plain function with a Python bool deciding its control flow (traced, it raised)."""
    return good_sin(x) ** 2 if square else good_sin(x)


# A jvp rule whose tangent has the wrong dtype and that also warns: the derivative items' errors are
# rule.fwd-pair's consequence, not x64.no-extra-warning's.
@jax.custom_jvp
def half_tangent(x):
    return jnp.sin(x)


@half_tangent.defjvp
def _half_tangent_jvp(primals, tangents):
    import warnings

    (x,), (t,) = primals, tangents
    warnings.warn("half_tangent's rule warns", DeprecationWarning, stacklevel=2)
    return jnp.sin(x), (jnp.cos(x) * t).astype(jnp.float16)


# A bwd that raises an error of two lines: the items' failures keep the second.
@jax.custom_vjp
def bwd_raises(x):
    return jnp.sin(x)


def _br_bwd(cos_x, g):
    raise ValueError("bwd_raises' bwd failed\nthe detail is on the second line")


bwd_raises.defvjp(_good_sin_fwd, _br_bwd)
