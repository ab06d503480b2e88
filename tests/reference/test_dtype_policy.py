"""The dtype policy of the reference: defaults, the 64->32 table, warn / error / allow, start-up."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from jax_conformance.adapters.reference.config import config

from .conftest import with_mutant


def test_defaults_follow_x64(ref: Any) -> None:
    jnp = ref.numpy
    assert (
        jnp.arange(5).dtype,
        jnp.zeros(2).dtype,
        jnp.ones(2, dtype=int).dtype,
        jnp.array(1j).dtype,
    ) == (np.int32, np.float32, np.int32, np.complex64)
    ref.config.update("jax_enable_x64", True)
    assert (
        jnp.arange(5).dtype,
        jnp.zeros(2).dtype,
        jnp.ones(2, dtype=int).dtype,
        jnp.array(1j).dtype,
    ) == (np.int64, np.float64, np.int64, np.complex128)


def test_warn_truncates_and_names_the_function(ref: Any) -> None:
    with pytest.warns(
        UserWarning,
        match="dtype float64 requested in zeros is not available, and will be truncated to dtype float32",
    ):
        out = ref.numpy.zeros(3, dtype="float64")
    assert out.dtype == np.float32


def test_error_and_allow(ref: Any) -> None:
    jnp = ref.numpy
    ref.config.update("jax_explicit_x64_dtypes", "error")
    with pytest.raises(ValueError, match="Explicitly requested dtype int64 requested in arange"):
        jnp.arange(3, dtype=np.int64)
    assert jnp.arange(3).dtype == np.int32  # defaults are not requests
    ref.config.update("jax_explicit_x64_dtypes", "allow")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.ones(2, dtype="float64").dtype == np.float64
        assert (
            jnp.asarray(np.float64(1.0)).dtype == np.float32
        )  # a NumPy input is still canonicalized
        assert (jnp.ones(2, dtype="float64") + jnp.ones(2, dtype="float32")).dtype == np.float64


def test_canonicalize_dtype(ref: Any) -> None:
    cd = ref.dtypes.canonicalize_dtype
    assert [cd(t) for t in (np.int64, np.uint64, np.float64, np.complex128, np.int8)] == [
        np.int32,
        np.uint32,
        np.float32,
        np.complex64,
        np.int8,
    ]


def test_start_up_from_environment(monkeypatch: pytest.MonkeyPatch, ref: Any) -> None:
    from jax_conformance.adapters.reference import build_jax_module

    monkeypatch.setenv("JAX_ENABLE_X64", "True")
    assert build_jax_module().config.x64_enabled is True
    monkeypatch.setenv("JAX_ENABLE_X64", "2")
    with pytest.raises(ValueError, match="invalid truth value '2'"):
        build_jax_module()
    monkeypatch.setenv("JAX_ENABLE_X64", "off")
    monkeypatch.setenv("JAX_EXPLICIT_X64_DTYPES", "ERROR")
    with pytest.raises(
        ValueError, match='Invalid value "ERROR" for JAX flag jax_explicit_x64_dtypes'
    ):
        build_jax_module()


def test_x64_enabled_is_read_only(ref: Any) -> None:
    with pytest.raises(AttributeError):
        ref.config.x64_enabled = True  # type: ignore[misc]
    assert config.x64_enabled is False


def test_mutant_breaks_exactly_its_rule(monkeypatch: pytest.MonkeyPatch, ref: Any) -> None:
    jax = with_mutant(monkeypatch, "error-mode-warns")
    jax.config.update("jax_explicit_x64_dtypes", "error")
    with pytest.warns(UserWarning):
        assert jax.numpy.arange(3, dtype="int64").dtype == np.int32
    assert jax.numpy.arange(3).dtype == np.int32
