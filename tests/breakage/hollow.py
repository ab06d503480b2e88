"""An adapter with nothing behind its names: a case that passes against it cannot fail.

`jax`, `jnp`, `lax` and `np` are objects whose every attribute, call, operator and iteration
raises AttributeError (the exception a missing API gives). Exception and warning classes still
resolve through the reference model, so every spec file collects and every case runs. A case
that passes here asserts nothing about the implementation (as `hasattr(jax.config, "use") is
False` did: a hollow `jax` has no `use` either); `tests/test_specs.py` runs the whole suite
against it and allows no pass.
"""

from __future__ import annotations

from typing import Any, NoReturn

from jax_conformance.adapters.reference import ReferenceAdapter


class Hollow:
    """Everything raises AttributeError: no API, no value, no dtype."""

    def _nothing(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AttributeError("hollow namespace: nothing is implemented")

    def __getattr__(self, name: str) -> NoReturn:
        self._nothing()

    __call__ = __getitem__ = __iter__ = __len__ = __bool__ = __add__ = __radd__ = __mul__ = (
        __rmul__
    ) = _nothing
    __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __eq__ = __lt__ = __gt__ = __float__ = (
        __int__
    ) = _nothing
    __hash__ = None  # type: ignore[assignment]


class HollowAdapter(ReferenceAdapter):
    name = "hollow"

    def namespace(self) -> dict[str, Any]:
        if self._ns is None:
            import os
            import sys

            self._ns = {
                "jax": Hollow(),
                "jnp": Hollow(),
                "np": Hollow(),
                "lax": Hollow(),
                "os": os,
                "sys": sys,
            }
        return self._ns

    def resolve(self, dotted: str) -> Any:
        # Exception and warning classes come from the model, so that every file collects.
        return ReferenceAdapter().resolve(dotted)

    def info(self) -> dict[str, Any]:
        return {**ReferenceAdapter().info(), "adapter": self.name}

    def start(self, mode: Any) -> None:
        ReferenceAdapter().start(mode)

    def global_state(self) -> dict[str, Any]:
        return {}  # nothing to compare: a hollow namespace holds no settings
