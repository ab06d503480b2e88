"""Deliberately broken custom rules (and one good one) for tests/test_contract.py.

Each broken rule breaks one item of the contract (jax_conformance.contract.items) and nothing else;
`BROKEN` says which item, and in which of the modes the test runs (off-warn, on) it must fail.
Module level, so that each mode's process can import them again.
"""

from __future__ import annotations

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
