"""A breakage for `jax-conformance diff`: the reference adapter with one planted difference.

`PlantedReference` is the reference whose `jnp.arange` counts from one too many (every value
shifted up by one). Any non-empty `jnp.arange(...)` then differs from the plain reference in its
values, and nothing else does: `diff --adapters reference,tests.breakage.diff_plant:PlantedReference`
must find it and shrink it to the one-line program `result = jnp.arange(3)` (tests/test_diff.py).
"""

from __future__ import annotations

from typing import Any

from jax_conformance.adapters.reference import ReferenceAdapter


class PlantedReference(ReferenceAdapter):
    breaks = "jnp.arange starts one too high"

    def namespace(self) -> dict[str, Any]:
        if self._ns is None:
            ns = super().namespace()
            jnp = ns["jnp"]
            arange = jnp.arange

            def shifted(*args: Any, **kwargs: Any) -> Any:
                out = arange(*args, **kwargs)
                return out + jnp.ones_like(out)

            jnp.arange = shifted
        return super().namespace()
