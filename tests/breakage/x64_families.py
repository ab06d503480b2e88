"""Breakage adapters for specs/x64/families.yaml (issue 37, "x64 families"): real JAX with one
public function's rule broken, one per family (reductions, NumPy 64-bit inputs, the int32
boundary, switching x64 on).

Each class wraps a public function in the worker's namespace (jax.numpy, jax.enable_x64);
tests/test_breakage.py runs them (tests/breakage/x64_families_area.py, part of the x64 area).
"""

from __future__ import annotations

import contextlib
from typing import Any

from tests.breakage.x64 import Breakage, dtype_names


class CumsumPromotesInts(Breakage):
    """jnp.cumsum widens an int8 input to the default int, as jnp.sum does, instead of keeping it."""

    breaks = (
        "cumsum keeps an integer input's dtype (its docstring: the output dtype matches the input)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        original = jnp.cumsum

        def cumsum(a: Any, *args: Any, **kwargs: Any) -> Any:
            out = original(a, *args, **kwargs)
            return out.astype(jnp.sum(a).dtype) if dtype_names(a) == ["int8"] else out

        jnp.cumsum = cumsum


class AsarrayWarnsOnNumpy64(Breakage):
    """jnp.asarray of a NumPy int64 array warns, as if its dtype had been requested explicitly."""

    breaks = (
        "a NumPy 64-bit input without a dtype is no explicit request: it is canonicalized silently"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        import warnings

        jnp, np = ns["jnp"], ns["np"]
        original = jnp.asarray

        def asarray(a: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(a, np.ndarray) and a.dtype == np.int64 and not args and not kwargs:
                warnings.warn(
                    "Explicitly requested dtype int64 requested in asarray",
                    UserWarning,
                    stacklevel=2,
                )
            return original(a, *args, **kwargs)

        jnp.asarray = asarray


class ArrayWrapsOverflow(Breakage):
    """jnp.array of a Python int outside the int32 range wraps it (with x64 off) instead of refusing."""

    breaks = "with x64 off a Python int outside the int32 range is an OverflowError in jnp.array"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp, np = ns["jnp"], ns["np"]
        original = jnp.array

        def array(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if type(obj) is int and not -(2**31) <= obj < 2**31 and not args and not kwargs:
                return original(np.array(obj, np.int64).astype(np.int32))
            return original(obj, *args, **kwargs)

        jnp.array = array


class EnableX64OuterWins(Breakage):
    """A jax.enable_x64 block nested in another keeps the outer block's setting."""

    breaks = "the innermost jax.enable_x64 block decides the setting"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        original = jax.enable_x64
        depth = [0]

        class enable_x64(contextlib.ContextDecorator):  # noqa: N801 - JAX's name
            def __init__(self, new_val: bool = True) -> None:
                self.new_val, self.inner = new_val, []

            def __enter__(self) -> None:
                depth[0] += 1
                cm = original(self.new_val) if depth[0] == 1 else contextlib.nullcontext()
                self.inner.append(cm)
                cm.__enter__()

            def __exit__(self, *exc: object) -> None:
                depth[0] -= 1
                self.inner.pop().__exit__(*exc)

        jax.enable_x64 = enable_x64
