"""custom_vjp / custom_jvp rules of the reference: the Tracer check, the bwd argument order, cotangents."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from .conftest import with_mutant


def _clip_gradient(jax: Any) -> Any:
    @partial(jax.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo: Any, hi: Any, x: Any) -> Any:
        return x

    clip_gradient.defvjp(
        lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (jax.numpy.clip(g, lo, hi),)
    )
    return clip_gradient


def test_nondiff_tracer_is_rejected(ref: Any) -> None:
    cg = _clip_gradient(ref)
    assert (
        float(ref.grad(lambda x: cg(-0.5, 0.5, 3.0 * x))(1.0)) == 1.5
    )  # the cotangent 1 clipped to 0.5, times 3
    with pytest.raises(ref.errors.UnexpectedTracerError, match="nondiff_argnums"):
        ref.jit(cg)(ref.numpy.array(-0.5), ref.numpy.array(0.5), 1.0)


def test_custom_jvp_accepts_tracers_and_stops_their_gradient(ref: Any) -> None:
    jnp = ref.numpy

    @partial(ref.custom_jvp, nondiff_argnums=(0,))
    def f(n: Any, x: Any) -> Any:
        return n * jnp.sin(x)

    f.defjvp(lambda n, p, t: (f(n, p[0]), n * 10.0 * jnp.cos(p[0]) * t[0]))
    assert float(ref.jit(ref.grad(f, 1))(2.0, 1.0)) == pytest.approx(20 * 0.5403023, rel=1e-6)
    assert float(ref.grad(f)(2.0, 1.0)) == 0.0


def test_static_arguments_come_first_in_bwd(ref: Any) -> None:
    seen = []

    @partial(ref.custom_vjp, nondiff_argnums=(1,))
    def f(x: Any, tag: str) -> Any:
        return x

    def bwd(*args: Any) -> Any:
        seen.append(args[0])
        return (args[-1],)

    f.defvjp(
        lambda x, tag: (x, 0.0), bwd
    )  # residuals must be JAX types (a string is a TypeError, as in JAX)
    ref.grad(f)(1.0, "static")
    assert seen == ["static"]


def test_none_cotangents_are_zeros_and_ints_get_float0(ref: Any) -> None:
    jnp = ref.numpy

    @ref.custom_vjp
    def f(x: Any, i: Any) -> Any:
        return x * 2.0

    f.defvjp(lambda x, i: (x * 2.0, None), lambda _, g: (None, 5))
    gx, gi = ref.vjp(f, 1.0, jnp.array(3))[1](jnp.ones(()))
    assert float(gx) == 0.0
    assert gi.dtype == ref.dtypes.float0


def test_bwd_structure_error(ref: Any) -> None:
    @ref.custom_vjp
    def f(x: Any) -> Any:
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g, g))
    with pytest.raises(
        TypeError,
        match=r"bwd output structure PyTreeDef\(\(\*, \*\)\) for primal input structure PyTreeDef\(\(\*,\)\)",
    ):
        ref.grad(f)(1.0)


def test_mutant_passing_statics_last(monkeypatch: pytest.MonkeyPatch, ref: Any) -> None:
    jax = with_mutant(monkeypatch, "bwd-static-args-last")
    cg = _clip_gradient(jax)
    # bwd(res, lo, hi, g) binds lo=None, hi=-0.5: the cotangent is clipped from above at -0.5
    assert float(jax.grad(lambda x: cg(-0.5, 0.5, 3.0 * x))(1.0)) == -1.5
