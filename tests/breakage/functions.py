"""Breakage adapters for specs/promotion/functions.yaml (issue 37, "functions, not operators"):
real JAX with one public function's promotion rule broken, one per family (jnp functions, jnp
comparisons, lax functions, control flow).

Each class wraps a public function in the worker's namespace (jax.numpy, jax.lax);
tests/test_breakage.py runs them (tests/breakage/functions_area.py).
"""

from __future__ import annotations

from typing import Any

from tests.breakage.x64 import Breakage, cast_on_pair, dtype_names


class MaximumPromotesApart(Breakage):
    """jnp.maximum of int8 and uint8 gives int32 where the join (and jnp.add) gives int16."""

    breaks = "jnp functions promote as the table says: maximum(int8, uint8) is int16"

    def patch(self, ns: dict[str, Any]) -> None:
        cast_on_pair(ns["jnp"], "maximum", ["int8", "uint8"], "int32")


class LessGivesJoin(Breakage):
    """jnp.less of int8 and float32 gives the join (float32) instead of bool."""

    breaks = "a comparison gives bool whatever its operands join to"

    def patch(self, ns: dict[str, Any]) -> None:
        cast_on_pair(ns["jnp"], "less", ["float32", "int8"], "float32")


class LaxAddPromotes(Breakage):
    """lax.add promotes two different dtypes (as jnp.add does) instead of refusing them."""

    breaks = "lax.add does not promote: two different dtypes are a TypeError"

    def patch(self, ns: dict[str, Any]) -> None:
        lax, jnp = ns["lax"], ns["jnp"]
        original = lax.add

        def add(x: Any, y: Any) -> Any:
            return jnp.add(x, y) if dtype_names(x) != dtype_names(y) else original(x, y)

        lax.add = add


class CondJoinsBranches(Breakage):
    """lax.cond casts both branches to their join instead of refusing two strong dtypes."""

    breaks = "cond's branches must have equal types: int32 and float32 branches are a TypeError"

    def patch(self, ns: dict[str, Any]) -> None:
        lax, jnp = ns["lax"], ns["jnp"]
        original = lax.cond

        def cond(pred: Any, true_fun: Any, false_fun: Any, *operands: Any) -> Any:
            joined = jnp.result_type(true_fun(*operands), false_fun(*operands))
            return original(
                pred,
                lambda *o: jnp.asarray(true_fun(*o), joined),
                lambda *o: jnp.asarray(false_fun(*o), joined),
                *operands,
            )

        lax.cond = cond
