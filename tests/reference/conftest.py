"""Fixtures for the reference's unit tests: a fresh namespace per test, global flags restored after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jax_conformance.adapters.reference import config as config_mod
from jax_conformance.adapters.reference import mutants


@pytest.fixture
def ref(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The reference `jax` module, started with x64 off and no mutant; flags are restored afterwards."""
    saved = dict(config_mod.config._values)
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    monkeypatch.delenv("JAX_EXPLICIT_X64_DTYPES", raising=False)
    for name in config_mod.FLAGS:  # every modelled flag at its default (JAX_CUSTOM_VJP3, ...)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv(mutants.ENV_VAR, raising=False)
    from jax_conformance.adapters.reference import build_jax_module

    yield build_jax_module()
    config_mod.config._values = saved
    mutants._active = None


def with_mutant(monkeypatch: pytest.MonkeyPatch, name: str) -> Any:
    """Rebuild the namespace with one mutant switched on (as JAX_CONFORMANCE_MUTANT does)."""
    from jax_conformance.adapters.reference import build_jax_module

    monkeypatch.setenv(mutants.ENV_VAR, name)
    return build_jax_module()
