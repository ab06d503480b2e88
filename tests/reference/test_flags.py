"""The flags the reference models: its table, start-up from JAX_<NAME>, and jax_custom_vjp3 read when
custom_vjp(...) is created."""

from __future__ import annotations

from typing import Any

import pytest
from jax_conformance.adapters.reference import ReferenceAdapter, build_jax_module


def test_flag_table_reports_the_modelled_flags(ref: Any) -> None:
    table = {f["name"]: f for f in ReferenceAdapter().info()["flags"]}
    assert {
        "jax_enable_x64",
        "jax_explicit_x64_dtypes",
        "jax_custom_vjp3",
        "jax_disable_bwd_checks",
    } <= set(table)
    vjp3 = table["jax_custom_vjp3"]
    assert (vjp3["default"], vjp3["value"], vjp3["upgrade"]) == (False, False, True)
    assert (
        table["jax_enable_x64"]["upgrade"] is False
        and table["jax_explicit_x64_dtypes"]["value"] == "warn"
    )


def test_custom_vjp3_starts_from_the_environment(ref: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAX_CUSTOM_VJP3", "1")
    jax = build_jax_module()
    assert jax.config.jax_custom_vjp3 is True
    vjp3 = {f["name"]: f for f in ReferenceAdapter().info()["flags"]}["jax_custom_vjp3"]
    assert (vjp3["value"], vjp3["default"]) == (
        True,
        None,
    )  # set by the mode: the default is not seen
    monkeypatch.setenv("JAX_CUSTOM_VJP3", "maybe")
    with pytest.raises(
        ValueError, match="invalid truth value 'maybe' for environment 'JAX_CUSTOM_VJP3'"
    ):
        build_jax_module()


def _closing_over(jax: Any, x: Any) -> Any:
    @jax.custom_vjp
    def f(y: Any) -> Any:
        return x * y

    f.defvjp(lambda y: (x * y, None), lambda _, g: (x * g,))
    return f


def test_the_flag_is_read_when_custom_vjp_is_created(ref: Any) -> None:
    xs = ref.numpy.arange(3.0)
    assert list(ref.vmap(lambda x: _closing_over(ref, x)(3.0))(xs)) == [
        0.0,
        3.0,
        6.0,
    ]  # classic: closures allowed
    ref.config.update("jax_custom_vjp3", True)
    with pytest.raises(
        ref.errors.UnexpectedTracerError,
        match=r"f\b.*closed over a BatchTracer of type float32\[\], but custom_vjp functions can't close over Tracers",
    ):
        ref.vmap(lambda x: _closing_over(ref, x)(3.0))(xs)


def test_a_function_decorated_before_the_flag_keeps_the_classic_rules(ref: Any) -> None:
    @ref.custom_vjp
    def before(x: Any) -> Any:
        return x

    ref.config.update("jax_custom_vjp3", True)

    @ref.custom_vjp
    def after(x: Any) -> Any:
        return x

    assert (type(before).__name__, type(after).__name__) == ("custom_vjp", "custom_vjp3")
    for f in (before, after):
        f.defvjp(lambda k, x: (x, None), lambda k, _, g: (g,))
    from functools import partial

    @partial(ref.custom_vjp, nondiff_argnums=(0,))
    def scaled(k: Any, x: Any) -> Any:
        return k * x

    scaled.defvjp(lambda k, x: (k * x, None), lambda k, _, g: (k * g,))
    with pytest.raises(
        ValueError, match="Non-hashable static arguments are not supported.*<class 'list'>"
    ):
        scaled([2.0], 3.0)


def test_disable_bwd_checks_lets_a_wrong_shape_through(ref: Any) -> None:
    @ref.custom_vjp
    def f(x: Any) -> Any:
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (ref.numpy.zeros(3),))
    with pytest.raises(ValueError, match="shapes do not match"):
        ref.grad(f)(1.0)
    ref.config.update("jax_disable_bwd_checks", True)
    assert ref.grad(f)(1.0).shape == (3,)
