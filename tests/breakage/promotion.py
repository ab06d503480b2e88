"""Breakage adapters for specs/promotion: real JAX with one promotion rule broken on purpose.

Each class patches `jax._src.dtypes` (JAX 0.10.2 internals: `_least_upper_bound`, the join every
promotion goes through) or `jax.jit` inside the worker; tests/test_promotion_specs_catch_breakage.py
runs them (tests/breakage/areas.py, PROMOTION).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.breakage.x64 import Breakage


def _dtypes() -> Any:
    from jax._src import dtypes

    return dtypes


def _wrap_join(wrapper: Any) -> None:
    """Replace dtypes._least_upper_bound(promotion, x64, *nodes) by a wrapper of it."""
    dtypes = _dtypes()
    original = dtypes._least_upper_bound

    def patched(promotion: Any, x64: bool, *nodes: Any) -> Any:
        return wrapper(original, promotion, x64, *nodes)

    dtypes._least_upper_bound = patched


class WrongCellOffWarn(Breakage):
    """One cell, one mode: uint32 x int8 joins to int64 (the x64-on table's cell) with x64 off in
    explicit-dtype mode warn only; every other pair and mode is JAX's."""

    breaks = "the x64-off lattice: promote_types(uint32, int8) is int32 with x64 off"

    def patch(self, ns: dict[str, Any]) -> None:
        from jax._src import config

        def join(original: Any, promotion: Any, x64: bool, *nodes: Any) -> Any:
            names = sorted(str(n) for n in nodes)
            policy = str(config.explicit_x64_dtypes.value.name).lower()
            if (
                names == ["int8", "uint32"]
                and not x64
                and policy == "warn"
                and str(promotion) == "standard"
            ):
                return np.dtype("int64")
            return original(promotion, x64, *nodes)

        _wrap_join(join)


class WeakTypeLostUnderJit(Breakage):
    """Under jax.jit (traced or from the cache) a weakly typed result comes back strongly typed."""

    breaks = "weak types are the same eagerly and under jit"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        from jax._src.lax import lax as lax_internal

        original_jit = jax.jit

        def jit(fun: Any, *args: Any, **kwargs: Any) -> Any:
            jitted = original_jit(fun, *args, **kwargs)

            def call(*a: Any, **k: Any) -> Any:
                out = jitted(*a, **k)
                if getattr(out, "weak_type", False):
                    return lax_internal._convert_element_type(out, out.dtype, weak_type=False)
                return out

            return call

        jax.jit = jit


class StrictTooLenient(Breakage):
    """jax_numpy_dtype_promotion=strict promotes as standard does."""

    breaks = "strict promotion refuses every implicit promotion but the weakly typed ones"

    def patch(self, ns: dict[str, Any]) -> None:
        _wrap_join(lambda original, promotion, x64, *nodes: original("standard", x64, *nodes))


class StrictTooStrict(Breakage):
    """Strict promotion refuses a weakly typed operand with a strong type (the documented safe case)."""

    breaks = "strict promotion still allows safe weakly-typed promotions"

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes()

        def join(original: Any, promotion: Any, x64: bool, *nodes: Any) -> Any:
            weak = [n for n in nodes if any(n is t for t in dtypes._weak_types)]
            if str(promotion) == "strict" and weak and len(weak) < len(set(map(str, nodes))):
                raise dtypes.TypePromotionError(
                    f"Input dtypes {tuple(str(n) for n in nodes)} have no available implicit dtype promotion path "
                    "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output type, "
                    "or set jax_numpy_dtype_promotion=standard."
                )
            return original(promotion, x64, *nodes)

        _wrap_join(join)
