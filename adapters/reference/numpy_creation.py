"""`jax.numpy` array creation with JAX's documented defaults: `array` / `asarray` (Python scalars weakly
typed), `zeros`, `ones`, `full`, the `*_like` functions, `arange`, `linspace`, `eye`, ...; every
explicit `dtype=` goes through `dtypes.check_user_dtype` under the function's own name.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import lax
from jax_conformance.adapters.reference.core import Array, Tracer, get_aval
from jax_conformance.adapters.reference.dtypes import (
    check_user_dtype,
    default_complex,
    default_float,
    default_int,
    dtype_of_input,
    python_scalar_dtype,
    to_dtype,
)
from jax_conformance.adapters.reference.numpy_dtypes import (
    check_int_range,
    convert,
    lift,
    result_type,
)


def _shape(shape: Any) -> tuple[int, ...]:
    return (
        (operator.index(shape),)
        if not isinstance(shape, (tuple, list))
        else tuple(operator.index(s) for s in shape)
    )


def array(object: Any, dtype: Any = None, copy: bool = True) -> Any:  # noqa: A002 - NumPy's name
    """`jnp.array`: Python scalars take the default dtype of their kind and stay weakly typed (as does
    a weakly typed array) unless a dtype is given; lists and NumPy values give strong arrays."""
    dt = check_user_dtype(dtype, "array")
    if isinstance(object, Tracer):
        return convert(
            object, dt if dt is not None else object.dtype, dt is None and object.aval.weak_type
        )
    if isinstance(object, Array):
        return Array(
            object._value.astype(dt) if dt is not None else object._value.copy(),
            dt is None and object.weak_type,
        )
    if dt is None and _python_number(object):
        return lift(object)
    if dt is None:
        dt = _infer_dtype(object)
    elif (
        isinstance(object, (int, float))
        and not isinstance(object, builtins.bool)
        and dt.kind in "iu"
        and (not np.iinfo(dt).min <= int(object) <= np.iinfo(dt).max)
    ):
        raise OverflowError(f"Python integer {int(object)} out of bounds for {dt.name}")
    elif isinstance(object, (float, complex)):
        # JAX 0.10.2 canonicalizes a Python scalar first: in allow mode float64 holds float32's rounding.
        object = np.asarray(object, _infer_dtype(object))  # noqa: A001
    check_int_range(object, dt)
    return Array(np.asarray(_unwrap(object), dtype=dt))


def _python_number(obj: Any) -> bool:
    """A Python int, float or complex (not bool): what JAX treats as weakly typed."""
    return isinstance(obj, (int, float, complex)) and not isinstance(obj, (bool, np.generic))


def _unwrap(obj: Any) -> Any:
    """Lists and tuples with the reference's Arrays replaced by their NumPy values (bfloat16 included)."""
    if isinstance(obj, (list, tuple)):
        return [_unwrap(v) for v in obj]
    return obj._value if isinstance(obj, Array) else obj


def _flat(obj: Any) -> list[Any]:
    return [leaf for v in obj for leaf in _flat(v)] if isinstance(obj, (list, tuple)) else [obj]


def _infer_dtype(obj: Any) -> np.dtype:
    if isinstance(obj, (bool, int, float, complex)) and not isinstance(obj, np.generic):
        return python_scalar_dtype(obj)
    if isinstance(obj, (list, tuple)) and any(
        isinstance(v, (Array, np.generic)) for v in _flat(obj)
    ):
        # a list with arrays or NumPy scalars: JAX's promotion of its leaves (Python numbers weak,
        # so [0, np.int16(1)] is int16; float64 ones in allow mode stay)
        return result_type(*_flat(obj))
    raw = np.asarray(obj)
    if isinstance(obj, (list, tuple)) and raw.dtype.kind in "iufc" and raw.dtype.itemsize == 8:
        # a list of Python numbers: the default of its kind
        return {"i": default_int, "u": default_int, "f": default_float, "c": default_complex}[
            raw.dtype.kind
        ]()
    return dtype_of_input(raw)[0]


def asarray(a: Any, dtype: Any = None, copy: Any = None) -> Any:
    """`jnp.asarray`: like `array`, reported as asarray in the dtype warning."""
    dt = check_user_dtype(dtype, "asarray")
    if isinstance(a, Tracer):
        return a if dt is None else convert(a, dt)
    if isinstance(a, Array):
        return a if dt is None or dt == a.dtype else Array(a._value.astype(dt))
    if dt is None:
        if _python_number(a):
            return lift(a)
        dt = _infer_dtype(a)
    check_int_range(a, dt)
    return Array(np.asarray(a, dtype=dt))


def astype(x: Any, dtype: Any) -> Any:
    """`x.astype(dtype)`: an explicit request, so 64-bit dtypes obey the policy."""
    dt = check_user_dtype(dtype, "astype")
    assert dt is not None
    return convert(lift(x), dt)


def zeros(shape: Any, dtype: Any = None) -> Array:
    return Array(np.zeros(_shape(shape), check_user_dtype(dtype, "zeros") or default_float()))


def ones(shape: Any, dtype: Any = None) -> Array:
    return Array(np.ones(_shape(shape), check_user_dtype(dtype, "ones") or default_float()))


def empty(shape: Any, dtype: Any = None) -> Array:
    return Array(np.zeros(_shape(shape), check_user_dtype(dtype, "empty") or default_float()))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    dt = check_user_dtype(dtype, "full")
    if dt is None:
        dt = (
            get_aval(fill_value).dtype
            if isinstance(fill_value, (Array, Tracer))
            else _infer_dtype(fill_value)
        )
    weak = (
        dtype is None and get_aval(lift(fill_value)).weak_type
    )  # a weak fill without dtype= stays weak
    if isinstance(fill_value, Tracer):
        return lax.broadcast_to(convert(fill_value, dt, weak), _shape(shape))
    return Array(np.full(_shape(shape), np.asarray(fill_value), dt), weak)


def _like(x: Any, dtype: Any, fun_name: str) -> np.dtype:
    if isinstance(x, (list, tuple)):  # JAX's check_arraylike: a list is not an array
        raise TypeError(
            f"{fun_name} requires ndarray or scalar arguments, got {type(x)} at position 0."
        )
    return check_user_dtype(dtype, fun_name) or get_aval(lift(x)).dtype


def _like_shape(a: Any, shape: Any) -> tuple[int, ...]:
    """The *_like result's shape: `shape=` where given, else the input's."""
    return _shape(shape) if shape is not None else get_aval(lift(a)).shape


def _like_weak(a: Any, dtype: Any) -> bool:
    """*_like without dtype= keeps the input's weak type (JAX's lax.full_like)."""
    return dtype is None and get_aval(lift(a)).weak_type


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    return Array(
        np.zeros(_like_shape(a, shape), _like(a, dtype, "zeros_like")), _like_weak(a, dtype)
    )


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    return Array(np.ones(_like_shape(a, shape), _like(a, dtype, "ones_like")), _like_weak(a, dtype))


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Array:
    return Array(
        np.full(_like_shape(a, shape), fill_value, _like(a, dtype, "full_like")),
        _like_weak(a, dtype),
    )


def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    """Zeros, as in JAX before 0.11.0; JAX 0.6.0-0.10.2 check the dtype under the name ones_like."""
    return Array(
        np.zeros(_like_shape(a, shape), _like(a, dtype, "ones_like")), _like_weak(a, dtype)
    )


def identity(n: int, dtype: Any = None) -> Array:
    return Array(np.identity(n, dtype=check_user_dtype(dtype, "identity") or default_float()))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:  # noqa: N803 - NumPy's names
    return Array(np.tri(N, M, k, dtype=check_user_dtype(dtype, "tri") or default_float()))


def _triangle(m: Any, k: int, lower: bool) -> Any:
    """Keep the lower (tril) or upper (triu) triangle; the input's dtype is kept."""
    x = lift(m)
    rows, cols = get_aval(x).shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    mask = lax.broadcast_to(Array(keep), get_aval(x).shape)
    return lax.select(mask, x, lax.full_like(x, 0))


def tril(m: Any, k: int = 0) -> Any:
    return _triangle(m, k, lower=True)


def triu(m: Any, k: int = 0) -> Any:
    return _triangle(m, k, lower=False)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    """`jnp.arange`: the default int for integer arguments, the default float otherwise."""
    dt = check_user_dtype(dtype, "arange")
    if dt is not None and dt.kind == "b":  # JAX builds arange from iota, which has no boolean form
        raise TypeError(
            "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating."
        )
    args = [a for a in (start, stop, step) if a is not None]
    if dt is None:
        kinds = [to_dtype(get_aval(a).dtype).kind for a in args]
        dt = default_float() if any(k in "fc" for k in kinds) else default_int()
    values = [np.asarray(a).item() if isinstance(a, Array) else a for a in args]
    # Computed wide, then cast: a truncated int64 request wraps like JAX's does.
    wide = np.arange(*values, dtype=np.result_type(dt, np.int64) if dt.kind in "iu" else dt)
    return Array(wide.astype(dt))


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
) -> Any:
    dt = check_user_dtype(dtype, "linspace") or default_float()
    out = Array(np.linspace(float(start), float(stop), num, endpoint=endpoint).astype(dt))
    return (
        (
            out,
            Array(
                np.asarray((float(stop) - float(start)) / builtins.max(num - int(endpoint), 1), dt)
            ),
        )
        if retstep
        else out
    )


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:  # noqa: N803 - NumPy's names
    return Array(np.eye(N, M, k, dtype=check_user_dtype(dtype, "eye") or default_float()))
