"""The tracing core: jit's cache split by the dtype config, autodiff and vmap basics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from .conftest import with_mutant


def _traced_twice(jax: Any) -> tuple[list[bool], list[str], int]:
    log: list[bool] = []
    x = jax.numpy.ones(3, dtype=jax.numpy.float32)  # the same argument type in both modes

    @jax.jit
    def f(x: Any) -> Any:
        log.append(jax.config.x64_enabled)
        return x.sum() + jax.numpy.arange(3).sum()

    dtypes = [f(x).dtype.name]
    jax.config.update("jax_enable_x64", True)
    dtypes.append(f(x).dtype.name)
    jax.config.update("jax_enable_x64", False)
    dtypes.append(f(x).dtype.name)
    return log, dtypes, f._cache_size()


def test_jit_cache_is_split_by_x64(ref: Any) -> None:
    log, dtypes, size = _traced_twice(ref)
    assert log == [False, True]  # switching back reuses the first trace
    assert size == 2
    assert dtypes == ["float32", "float32", "float32"]


def test_mutant_without_x64_in_the_key_reuses_a_stale_trace(
    monkeypatch: pytest.MonkeyPatch, ref: Any
) -> None:
    log, _, size = _traced_twice(with_mutant(monkeypatch, "jit-cache-ignores-x64"))
    assert log == [False] and size == 1


def test_grad_jvp_vmap_agree(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    f = lambda x: jnp.sin(x) * x**2  # noqa: E731
    xs = jnp.array([0.5, 1.0, 2.0])
    by_grad = jax.vmap(jax.grad(f))(xs)
    by_jvp = jax.vmap(lambda x: jax.jvp(f, (x,), (jnp.ones_like(x),))[1])(xs)
    expected = np.cos(xs) * xs**2 + 2 * xs * np.sin(xs)
    np.testing.assert_allclose(np.asarray(by_grad), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(by_jvp), expected, rtol=1e-6)
    assert float(jax.grad(jax.grad(jnp.sin))(1.0)) == pytest.approx(-np.sin(1.0), rel=1e-6)


def test_tracer_leak_is_an_unexpected_tracer_error(ref: Any) -> None:
    leaked = []
    ref.grad(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(ref.errors.UnexpectedTracerError, match="Encountered an unexpected tracer"):
        leaked[0] + 1
