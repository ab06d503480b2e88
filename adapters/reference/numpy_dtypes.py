"""`jax.numpy`'s dtypes and values: the scalar types (`jnp.float32(x)`), how a value becomes an array
(`lift`, Python scalars weakly typed), how operands are promoted (`promote`, with the x64 leftover
rule), and the dtype queries `promote_types`, `can_cast`, `iinfo`, `finfo`, `result_type`.

Promotion (the operators, `promote_types`, `result_type`) is the join on the lattice of
`promotion.py`, in the mode the flags say (`promotion_mode`: x64, jax_explicit_x64_dtypes,
jax_numpy_dtype_promotion); only a dtype the lattice has no node for (float0) takes the older
kind-rank rule of `dtypes.result_type`.
"""

from __future__ import annotations

import builtins
import types
from typing import Any, Literal

import numpy as np
from jax_conformance.adapters.reference import lax
from jax_conformance.adapters.reference import promotion as P
from jax_conformance.adapters.reference.config import config
from jax_conformance.adapters.reference.core import Array, ShapedArray, Tracer, get_aval
from jax_conformance.adapters.reference.dtypes import (
    bfloat16,
    check_user_dtype,
    default_float,
    dtype_of_input,
    to_dtype,
)
from jax_conformance.adapters.reference.dtypes import result_type as _result_type


class _ScalarMeta(type):
    """jnp.float32 and friends: a dtype you can call; calling it is `asarray(x, dtype)`."""

    dtype: np.dtype

    def __call__(cls, x: Any) -> Any:
        # numpy_creation builds on this module, so it is imported when first called
        from jax_conformance.adapters.reference.numpy_creation import asarray

        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other: Any) -> bool:
        return (
            cls is other or cls.dtype.type is other or cls.dtype == getattr(other, "dtype", other)
        )

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'jax.numpy.{cls.__name__}'>"


def _scalar_type(name: str, dt: np.dtype) -> type:
    return _ScalarMeta(name, (), {"dtype": dt})


bool_ = _scalar_type("bool_", np.dtype(bool))
globals()["bool"] = bool_  # jnp.bool (NumPy 2 name), without shadowing the builtin here
int8, int16, int32, int64 = (
    _scalar_type(n, np.dtype(n)) for n in ("int8", "int16", "int32", "int64")
)
uint8, uint16, uint32, uint64 = (
    _scalar_type(n, np.dtype(n)) for n in ("uint8", "uint16", "uint32", "uint64")
)
float16, float32, float64 = (
    _scalar_type(n, np.dtype(n)) for n in ("float16", "float32", "float64")
)
complex64, complex128 = (_scalar_type(n, np.dtype(n)) for n in ("complex64", "complex128"))
if bfloat16 is not None:
    globals()["bfloat16"] = _scalar_type("bfloat16", bfloat16)


# ---------------------------------------------------------------- values into arrays


def lift(x: Any) -> Any:
    """An array or tracer for x; Python scalars stay weakly typed."""
    if isinstance(x, (Array, Tracer)):
        return x
    dt, weak = dtype_of_input(x)
    check_int_range(x, dt)
    return Array(np.asarray(x, dt), weak)


def check_int_range(x: Any, dt: np.dtype) -> None:
    if isinstance(x, int) and not isinstance(x, bool) and dt.kind == "i":
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dt.name}")


def convert(x: Any, dt: np.dtype, weak: bool = False) -> Any:
    a = get_aval(x)
    if a.dtype == dt and a.weak_type == weak:
        return x
    return lax.convert_weak(x, dt, weak)


def promotion_mode() -> P.Mode:
    """The flags promotion reads, as they are now (enable_x64 included)."""
    return P.Mode(
        x64=config.x64_enabled,
        explicit_x64_dtypes=config.jax_explicit_x64_dtypes.name.lower(),
        promotion=config.jax_numpy_dtype_promotion,
    )


def join_operands(pairs: list[tuple[np.dtype, bool]]) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an operation on operands given as (dtype, weak): the lattice's join
    (`promotion.lattice_result_type`); TypePromotionError where the mode has no common bound."""
    if all(P.is_node(P.node_of_dtype(d)) for d, _ in pairs):
        ops = [P.Operand(P.node_of_dtype(d), bool(w)) for d, w in pairs]
        name, weak = P.lattice_result_type(*ops, mode=promotion_mode())
        return P.dtype(name), weak
    out = pairs[0]
    for p in pairs[1:]:
        out = _result_type(out, p)
    return out


def promote(*args: Any, name: str = "op") -> list[Any]:
    """Operands of one dtype (JAX's promotion, weak Python scalars) and one shape (broadcast)."""
    xs = [lift(a) for a in args]
    avals = [get_aval(x) for x in xs]
    out = join_operands([(a.dtype, a.weak_type) for a in avals])
    out = _x64_leftover(out, avals)
    try:
        shape = np.broadcast_shapes(*[a.shape for a in avals])
    except ValueError:  # JAX says so with a TypeError naming the operation
        raise TypeError(
            f"{name} got incompatible shapes for broadcasting: "
            f"{', '.join(str(tuple(a.shape)) for a in avals)}."
        ) from None
    return [lax.broadcast_to(convert(x, out[0], out[1]), shape) for x in xs]


def _x64_leftover(out: tuple[np.dtype, bool], avals: list[Any]) -> tuple[np.dtype, bool]:
    """The promoted (dtype, weak) when 64-bit arrays meet in an operation while x64 is off (made inside
    `enable_x64(True)`): JAX 0.10.2 treats a 64-bit result dtype as an explicit request, once, so the
    policy applies (warn and truncate, raise, or keep it in allow mode). Operands of one dtype, none
    weakly typed, take JAX's fast path: no promotion is computed, nothing is checked (f64 * f64 stays)."""
    from jax_conformance.adapters.reference.config import config
    from jax_conformance.adapters.reference.dtypes import TRUNCATE_64

    if (
        config.x64_enabled
        or out[0] not in TRUNCATE_64
        or not any(a.dtype in TRUNCATE_64 for a in avals)
    ):
        return out
    if (
        len({a.dtype for a in avals}) == 1 and not out[1]
    ):  # one dtype, a strong result: nothing computed
        return out
    checked = check_user_dtype(out[0], "dtype")
    assert checked is not None  # out[0] is a dtype, never None
    return checked, out[1]


def to_inexact(dtype: np.dtype) -> np.dtype:
    """The float an integer or bool becomes (jnp.sin, true division): by width, as JAX 0.10.2 does:
    float64 for a 64-bit integer, float32 otherwise, whatever the x64 flag."""
    return np.dtype("float64" if dtype.itemsize == 8 else "float32")


# ---------------------------------------------------------------- dtype queries


def _operand(x: Any) -> Any:
    """(dtype, weak_type) of one operand of `result_type`: a value's aval, or a dtype. A dtype given as
    a string, np.dtype or NumPy scalar type is an explicit request (checked as `jnp.dtype` checks it);
    a JAX scalar type (jnp.float64) is canonicalized silently; Python's int, float and complex stand
    for weakly typed values of the default dtype."""
    if isinstance(x, _ScalarMeta):
        from jax_conformance.adapters.reference.dtypes import canonicalize_dtype

        return types.SimpleNamespace(dtype=canonicalize_dtype(x.dtype), weak_type=False)
    if isinstance(x, (str, np.dtype)) or (
        isinstance(x, type)
        and (x in (int, float, complex, builtins.bool) or issubclass(x, np.generic))
    ):
        return types.SimpleNamespace(
            dtype=check_user_dtype(x, "dtype"), weak_type=any(x is t for t in (int, float, complex))
        )
    return get_aval(lift(x))


def promote_types(a: Any, b: Any) -> np.dtype:
    """`jnp.promote_types`: the join of two dtypes on the lattice, never canonicalized (int32 with
    float64 is float64 even with x64 off). Python's int/float/complex are the weak nodes; a weak
    join is np.dtype(int/float/complex) (`promotion.promote_types`)."""

    def spec(x: Any) -> Any:
        if any(x is t for t in (int, float, complex)):  # by identity: jnp.int64 == int holds
            return x
        return np.dtype(bool) if x is builtins.bool else to_dtype(x)

    return P.promote_types(spec(a), spec(b), promotion_mode())


def can_cast(
    from_: Any, to: Any, casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "safe"
) -> bool:
    """`jnp.can_cast`: NumPy's rule on the two dtypes (never canonicalized, no dtype warning)."""
    return builtins.bool(np.can_cast(to_dtype(from_), to_dtype(to), casting))


def iinfo(int_type: Any) -> Any:
    """`jnp.iinfo`: NumPy's, for the dtype (Python ints as its min/max)."""
    return np.iinfo(to_dtype(int_type))


def finfo(dtype: Any) -> Any:
    """`jnp.finfo`: the float type's machine limits (ml_dtypes' for bfloat16), as values of that type."""
    d = to_dtype(dtype)
    if bfloat16 is not None and d == bfloat16:
        import ml_dtypes

        return ml_dtypes.finfo(d)
    return np.finfo(d)


def result_type(*args: Any) -> np.dtype:
    """`jnp.result_type`: the dtype an operation on these operands would have."""
    return dtypes_result_type(*args)


def dtypes_result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """`jax.dtypes.result_type`: the join of the operands (`promotion.result_type`: a weak result
    has its kind's default dtype), with the weak flag if asked."""
    # None stands for the default float, as NumPy's result_type(None) is its float64.
    avals = [ShapedArray((), default_float()) if a is None else _operand(a) for a in args]
    pairs = [(np.dtype(a.dtype), bool(a.weak_type)) for a in avals]
    if all(P.is_node(P.node_of_dtype(d)) for d, _ in pairs):
        ops = [P.Operand(P.node_of_dtype(d), w) for d, w in pairs]
        dt, weak = P.result_type(*ops, mode=promotion_mode(), return_weak_type_flag=True)
    else:
        dt, weak = join_operands(pairs)
    return (dt, weak) if return_weak_type_flag else dt
