"""Breakage adapters for specs/promotion/families.yaml: real JAX with one weak-type rule flipped.

One adapter per family, each flipping the family's rule wherever the spec's code reaches it:
NumPy values enter JAX weakly typed; jnp.array / jnp.asarray give the opposite weak flag; the
operations of the weak-kept family (and repr) give the opposite weak flag; x + x of a strong x
comes out weak. The patches target
JAX 0.10.2 internals (`jax._src.core.pytype_aval_mappings`, `jax._src.numpy.indexing`,
`jax._src.lax.lax._convert_element_type`); they are test fixtures, not a model of JAX.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import numpy as np

from tests.breakage.x64 import Breakage


def _flipped(x: Any) -> Any:
    """x with the opposite weak flag (a bool stays strong: JAX never makes a weak bool)."""
    from jax._src.lax import lax as lax_internal

    if x.dtype == np.dtype(bool):
        return x
    return lax_internal._convert_element_type(x, x.dtype, weak_type=not x.weak_type)


def _flipping(fun: Any) -> Any:
    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _flipped(fun(*args, **kwargs))

    return wrapper


class NumpyAndPythonSwapped(Breakage):
    """NumPy arrays and scalars enter JAX weakly typed and Python int / float strongly typed (their
    avals), eagerly and under jit: jnp.int16(1) + np.array(1) stays int16, jnp.int8(1) + 1 widens."""

    breaks = "NumPy values are strongly typed in promotion, Python scalars weakly"

    def patch(self, ns: dict[str, Any]) -> None:
        from jax._src import core

        for typ, make in list(core.pytype_aval_mappings.items()):
            numpy = typ is np.ndarray or (isinstance(typ, type) and issubclass(typ, np.generic))
            if numpy or typ in (int, float):
                core.pytype_aval_mappings[typ] = functools.partial(
                    lambda weak, make, x: make(x).update(weak_type=weak), numpy, make
                )


class ArrayInferenceWeakFlipped(Breakage):
    """jnp.array and jnp.asarray give the opposite weak flag: a Python scalar strong, a list, a
    NumPy value or an explicit dtype= weak; the dtype is JAX's."""

    breaks = "jnp.array / jnp.asarray are weak only for a bare Python scalar or a weak array"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        jnp.array = _flipping(jnp.array)
        jnp.asarray = _flipping(jnp.asarray)


class WeakKeptFlipped(Breakage):
    """The *_like functions, indexing, jnp.pad and lax.convert_element_type give the opposite weak
    flag, and repr says weak_type=True of strong arrays and nothing of weak ones."""

    breaks = "*_like without dtype=, indexing and pad keep a weak input weak; dtype= and convert_element_type drop it"

    def patch(self, ns: dict[str, Any]) -> None:
        from jax._src import array
        from jax._src.numpy import indexing

        jnp, lax = ns["jnp"], ns["lax"]
        for name in ("zeros_like", "ones_like", "full_like", "pad"):
            setattr(jnp, name, _flipping(getattr(jnp, name)))
        lax.convert_element_type = _flipping(lax.convert_element_type)
        indexing.rewriting_take = _flipping(indexing.rewriting_take)
        original_repr = array.ArrayImpl.__repr__

        def flipped_repr(self: Any) -> str:
            text = str(original_repr(self))
            if text.endswith(", weak_type=True)"):
                return text[: -len(", weak_type=True)")] + ")"
            return text[:-1] + ", weak_type=True)"

        array.ArrayImpl.__repr__ = flipped_repr  # type: ignore[method-assign]


class StrictContextIgnored(Breakage):
    """`jax.numpy_dtype_promotion(...)` is a context manager that changes nothing: inside
    `with jax.numpy_dtype_promotion('strict')` promotion stays the mode's (standard)."""

    breaks = "jax.numpy_dtype_promotion('strict') makes promotion strict inside its block"

    def patch(self, ns: dict[str, Any]) -> None:
        ns["jax"].numpy_dtype_promotion = lambda value: contextlib.nullcontext()


class EqualStrongOperandsWeak(Breakage):
    """The join of strongly typed operands that all have one dtype is called weak (dtypes.
    lattice_result_type): x + x of a strong x, bool included, comes out weakly typed, under
    standard and strict promotion alike; weak operands are JAX's."""

    breaks = "a strong value with strong values of its dtype stays strong (bool is never weak)"

    def patch(self, ns: dict[str, Any]) -> None:
        from jax._src import dtypes

        original = dtypes.lattice_result_type

        def lattice_result_type(*args: Any) -> Any:
            dt, weak = original(*args)
            operands = [a for a in args if hasattr(a, "weak_type")]
            if (
                operands
                and len(operands) == len(args)
                and len({str(a.dtype) for a in operands}) == 1
                and not any(a.weak_type for a in operands)
            ):
                weak = True
            return dt, weak

        dtypes.lattice_result_type = lattice_result_type


STRICT_FUNCTIONS = ("mean", "var", "std", "nanmean", "median", "sum", "prod", "cumsum", "average")


class StrictFunctionsFlipped(Breakage):
    """Under strict promotion, the reductions and average compute as under standard (average's
    mixed weights promote) and give the opposite weak flag; under standard they are JAX's."""

    breaks = "under strict, a function of one array gives what it gives under standard; average refuses mixed weights"

    def patch(self, ns: dict[str, Any]) -> None:
        from jax._src import config

        jax, jnp = ns["jax"], ns["jnp"]

        def strict_broken(fun: Any) -> Any:
            @functools.wraps(fun)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if config.numpy_dtype_promotion.value != config.NumpyDtypePromotion.STRICT:
                    return fun(*args, **kwargs)
                with jax.numpy_dtype_promotion("standard"):
                    return _flipped(fun(*args, **kwargs))

            return wrapper

        for name in STRICT_FUNCTIONS:
            setattr(jnp, name, strict_broken(getattr(jnp, name)))
