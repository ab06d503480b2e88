"""Breakage adapters for specs/promotion: real JAX with one promotion rule broken on purpose.

Each class patches `jax._src.dtypes` (JAX 0.10.2 internals: `_least_upper_bound`, the join every
promotion goes through) or `jax.jit` inside the worker; tests/test_breakage.py runs them
(tests/breakage/promotion_area.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.breakage.x64 import Breakage, cast_on_pair


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


class WrongSmallFloatCell(Breakage):
    """One cell of the extra dtypes: float8_e4m3fn x int8 joins to float32 (as if the 8-bit float
    sat below float32 on the lattice) where JAX's lattice gives float8_e4m3fn; every other pair is
    JAX's."""

    breaks = (
        "a standard integer meets an 8-bit float at the 8-bit float (its bounds pass through f*)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        def join(original: Any, promotion: Any, x64: bool, *nodes: Any) -> Any:
            if sorted(str(n) for n in nodes) == ["float8_e4m3fn", "int8"]:
                return np.dtype("float32")
            return original(promotion, x64, *nodes)

        _wrap_join(join)


class SpuriousAddWarning(Breakage):
    """Joining uint8 with int8 warns (a precision-loss warning for a promotion that loses nothing);
    the dtype and weak type of every cell are JAX's."""

    breaks = "promotion warns of nothing: uint8 + int8 is int16 without a warning"

    def patch(self, ns: dict[str, Any]) -> None:
        import warnings

        def join(original: Any, promotion: Any, x64: bool, *nodes: Any) -> Any:
            if sorted(str(n) for n in nodes) == ["int8", "uint8"]:
                warnings.warn(
                    "promoting uint8 and int8 to int16 may lose precision",
                    UserWarning,
                    stacklevel=2,
                )
            return original(promotion, x64, *nodes)

        _wrap_join(join)


class MultiplyPromotesApart(Breakage):
    """jnp.multiply of int8 and uint8 gives int32 (as if it widened before joining) where jnp.add
    gives int16; every other function and pair is JAX's."""

    breaks = "the binary functions share the promotion rule: int8 * uint8 is int16, as int8 + uint8"

    def patch(self, ns: dict[str, Any]) -> None:
        cast_on_pair(ns["jnp"], "multiply", ["int8", "uint8"], "int32")


class WeakTypeLostUnderJit(Breakage):
    """Under jax.jit (traced or from the cache) a weakly typed result comes back strongly typed."""

    breaks = "weak types are the same eagerly and under jit"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        from jax._src.lax import lax as lax_internal

        original_jit = jax.jit

        def strong(out: Any) -> Any:
            if getattr(out, "weak_type", False):
                return lax_internal._convert_element_type(out, out.dtype, weak_type=False)
            return out

        def jit(fun: Any, *args: Any, **kwargs: Any) -> Any:
            jitted = original_jit(fun, *args, **kwargs)

            def call(*a: Any, **k: Any) -> Any:  # every output, however the outputs are nested
                return jax.tree_util.tree_map(strong, jitted(*a, **k))

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


# ---------------------------------------------------------------- weak types (specs/promotion/weak_types.yaml)


def _strong(x: Any) -> Any:
    """x as a strongly typed array of its dtype (pytrees leaf by leaf)."""
    import jax
    from jax._src.lax import lax as lax_internal

    return jax.tree_util.tree_map(
        lambda v: lax_internal._convert_element_type(v, v.dtype, weak_type=False), x
    )


class AdOutputsStrong(Breakage):
    """grad, jacfwd and jacrev return strongly typed values (a Python float's derivative is not weak)."""

    breaks = "the derivative of a weakly typed input is weakly typed"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        for name in ("grad", "jacfwd", "jacrev"):
            original = getattr(jax, name)

            def transform(fun: Any, *a: Any, _original: Any = original, **k: Any) -> Any:
                g = _original(fun, *a, **k)
                return lambda *args, **kwargs: _strong(g(*args, **kwargs))

            setattr(jax, name, transform)


class EvalShapeDropsWeakType(Breakage):
    """jax.eval_shape reports every output as strongly typed."""

    breaks = "eval_shape keeps the weak_type of what it traces"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        original = jax.eval_shape

        def eval_shape(fun: Any, *a: Any, **k: Any) -> Any:
            return jax.tree_util.tree_map(
                lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, weak_type=False),
                original(fun, *a, **k),
            )

        jax.eval_shape = eval_shape


class JitArgsMadeStrong(Breakage):
    """A jitted function turns its Python scalar arguments into strongly typed arrays of the default
    dtype before the cache lookup: a Python float hits the float32 trace, and its result is strong."""

    breaks = "jit's cache key and its results keep a Python scalar argument's weak type"

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp = ns["jax"], ns["jnp"]
        original_jit = jax.jit

        def jit(fun: Any, *args: Any, **kwargs: Any) -> Any:
            jitted = original_jit(fun, *args, **kwargs)

            def call(*a: Any, **k: Any) -> Any:  # every argument, however the arguments are nested
                a = jax.tree_util.tree_map(
                    lambda v: (
                        _strong(jnp.asarray(v))
                        if isinstance(v, (int, float, complex)) and not isinstance(v, bool)
                        else v
                    ),
                    a,
                )
                return jitted(*a, **k)

            return call

        jax.jit = jit


class EqualWeakOperandsStrong(Breakage):
    """The join of weakly typed operands that all have one dtype is called strong (dtypes.
    lattice_result_type, which operators and result_type both use): x + x of a weak x, and
    result_type of one weak value, lose the weak flag."""

    breaks = "a weak value with weak values of its dtype stays weak (and result_type says so)"

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes()
        original = dtypes.lattice_result_type

        def lattice_result_type(*args: Any) -> Any:
            dt, weak = original(*args)
            operands = [a for a in args if hasattr(a, "weak_type")]
            same = len({str(a.dtype) for a in operands}) == 1
            if (
                operands
                and len(operands) == len(args)
                and same
                and all(a.weak_type for a in operands)
            ):
                weak = False
            return dt, weak

        dtypes.lattice_result_type = lattice_result_type


class ReductionPromotionFlipped(Breakage):
    """jnp.sum and jnp.prod read promote_integers the wrong way round."""

    breaks = "sum and prod accumulate narrow integers and bool in the default int unless promote_integers=False"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        for name in ("sum", "prod"):
            original = getattr(jnp, name)

            def reduce(
                *a: Any, _original: Any = original, promote_integers: bool = True, **k: Any
            ) -> Any:
                return _original(*a, promote_integers=not promote_integers, **k)

            setattr(jnp, name, reduce)
