"""`jax.numpy`'s dtypes and values: the scalar types (`jnp.float32(x)`), how a value becomes an array
(`lift`, Python scalars weakly typed), how operands are promoted (`promote`, with the x64 leftover
rule), and the dtype queries `promote_types`, `can_cast`, `iinfo`, `finfo`, `result_type`.
"""

from __future__ import annotations

import builtins
import types
from typing import Any, Literal

import numpy as np
from jax_conformance.adapters.reference import lax
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
    return lax._convert(x, dt, weak)


def promote(*args: Any, name: str = "op") -> list[Any]:
    """Operands of one dtype (JAX's promotion, weak Python scalars) and one shape (broadcast)."""
    xs = [lift(a) for a in args]
    avals = [get_aval(x) for x in xs]
    out = (avals[0].dtype, avals[0].weak_type)
    for a in avals[1:]:
        out = _result_type(out, (a.dtype, a.weak_type))
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
    """`jnp.promote_types`: JAX's promotion of two dtypes, never canonicalized (int32 with float64 is
    float64 even with x64 off). Python's int/float/complex are weak: they give way to an array dtype of
    their kind or above, and otherwise become np.dtype(int/float/complex) (a weak complex meeting a
    float takes the float's width)."""

    def node(x: Any) -> tuple[np.dtype, bool]:
        if any(x is t for t in (int, float, complex)):  # by identity: jnp.int64 == int holds
            return np.dtype(x), True
        return (np.dtype(bool) if x is builtins.bool else to_dtype(x)), False

    (da, wa), (db, wb) = node(a), node(b)
    rank = {"b": 0, "i": 1, "u": 1, "f": 2, "V": 2, "c": 3}
    if wa and wb:
        return da if rank[da.kind] >= rank[db.kind] else db
    if wa or wb:
        (weak, strong) = (da, db) if wa else (db, da)
        if rank[weak.kind] <= rank[strong.kind]:
            return strong
        if weak.kind == "c" and rank[strong.kind] == 2:
            return np.dtype("complex128" if strong.itemsize == 8 else "complex64")
        return weak
    if (
        da.kind in "iu"
        and db.kind in "iu"
        and _result_type((da, False), (db, False))[0].kind == "f"
    ):
        return np.dtype("float64")  # uint64 with a signed int: JAX's weak float, as np.dtype(float)
    return _result_type((da, False), (db, False))[0]


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
    # None stands for the default float, as NumPy's result_type(None) is its float64.
    avals = [ShapedArray((), default_float()) if a is None else _operand(a) for a in args]
    out = (avals[0].dtype, avals[0].weak_type)
    for a in avals[1:]:
        out = _result_type(out, (a.dtype, a.weak_type))
    return out[0]
