"""`jax.numpy`: creation functions with JAX's defaults, promotion, and the operations the specs use.

Every explicit `dtype=` goes through `dtypes.check_user_dtype(dtype, "<function name>")`
(warn / error / allow); every value without a JAX dtype through `dtypes.dtype_of_input`.
Operations promote with `dtypes.result_type`, broadcast, then bind a `lax` primitive.
"""

from __future__ import annotations

import builtins
import operator
import types as _types
from typing import Any, Literal

import numpy as np
from jax_conformance.adapters.reference import lax
from jax_conformance.adapters.reference.core import Array, ArrayOps, Tracer, get_aval
from jax_conformance.adapters.reference.core import Primitive as _Primitive
from jax_conformance.adapters.reference.core import ShapedArray as _ShapedArray
from jax_conformance.adapters.reference.core import bind as _bind
from jax_conformance.adapters.reference.dtypes import (
    bfloat16,
    check_user_dtype,
    default_complex,
    default_float,
    default_int,
    dtype_of_input,
    python_scalar_dtype,
    to_dtype,
)
from jax_conformance.adapters.reference.dtypes import (
    issubdtype as issubdtype,  # re-exported as jnp.issubdtype
)
from jax_conformance.adapters.reference.dtypes import result_type as _result_type

ndarray = ArrayOps  # isinstance(x, jnp.ndarray) holds for arrays and tracers, as for jax.Array
dtype = np.dtype
inexact, floating, integer, number, complexfloating = np.inexact, np.floating, np.integer, np.number, np.complexfloating
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan


class _ScalarMeta(type):
    """jnp.float32 and friends: a dtype you can call; calling it is `asarray(x, dtype)`."""

    dtype: np.dtype

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type is other or cls.dtype == getattr(other, "dtype", other)

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'jax.numpy.{cls.__name__}'>"


def _scalar_type(name: str, dt: np.dtype) -> type:
    return _ScalarMeta(name, (), {"dtype": dt})


bool_ = _scalar_type("bool_", np.dtype(bool))
globals()["bool"] = bool_  # jnp.bool (NumPy 2 name), without shadowing the builtin here
int8, int16, int32, int64 = (_scalar_type(n, np.dtype(n)) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_scalar_type(n, np.dtype(n)) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_scalar_type(n, np.dtype(n)) for n in ("float16", "float32", "float64"))
complex64, complex128 = (_scalar_type(n, np.dtype(n)) for n in ("complex64", "complex128"))
if bfloat16 is not None:
    globals()["bfloat16"] = _scalar_type("bfloat16", bfloat16)


# ---------------------------------------------------------------- values into arrays


def _lift(x: Any) -> Any:
    """An array or tracer for x; Python scalars stay weakly typed."""
    if isinstance(x, (Array, Tracer)):
        return x
    dt, weak = dtype_of_input(x)
    _check_int_range(x, dt)
    return Array(np.asarray(x, dt), weak)


def _check_int_range(x: Any, dt: np.dtype) -> None:
    if isinstance(x, int) and not isinstance(x, bool) and dt.kind == "i":
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dt.name}")


def _convert(x: Any, dt: np.dtype, weak: bool = False) -> Any:
    a = get_aval(x)
    if a.dtype == dt and a.weak_type == weak:
        return x
    return lax._convert(x, dt, weak)


def _promote(*args: Any, name: str = "op") -> list[Any]:
    """Operands of one dtype (JAX's promotion, weak Python scalars) and one shape (broadcast)."""
    xs = [_lift(a) for a in args]
    avals = [get_aval(x) for x in xs]
    out = (avals[0].dtype, avals[0].weak_type)
    for a in avals[1:]:
        out = _result_type(out, (a.dtype, a.weak_type))
    out = _x64_leftover(out, avals)
    try:
        shape = np.broadcast_shapes(*[a.shape for a in avals])
    except ValueError:  # JAX says so with a TypeError naming the operation
        raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                        f"{', '.join(str(tuple(a.shape)) for a in avals)}.") from None
    return [lax.broadcast_to(_convert(x, out[0], out[1]), shape) for x in xs]


def _x64_leftover(out: tuple[np.dtype, bool], avals: list[Any]) -> tuple[np.dtype, bool]:
    """The promoted (dtype, weak) when 64-bit arrays meet in an operation while x64 is off (made inside
    `enable_x64(True)`): JAX 0.10.2 treats a 64-bit result dtype as an explicit request, once, so the
    policy applies (warn and truncate, raise, or keep it in allow mode). Operands of one dtype, none
    weakly typed, take JAX's fast path: no promotion is computed, nothing is checked (f64 * f64 stays)."""
    from jax_conformance.adapters.reference.config import config
    from jax_conformance.adapters.reference.dtypes import TRUNCATE_64

    if config.x64_enabled or out[0] not in TRUNCATE_64 or not any(a.dtype in TRUNCATE_64 for a in avals):
        return out
    if len({a.dtype for a in avals}) == 1 and not out[1]:  # one dtype, a strong result: nothing computed
        return out
    checked = check_user_dtype(out[0], "dtype")
    assert checked is not None  # out[0] is a dtype, never None
    return checked, out[1]


def _to_inexact(dtype: np.dtype) -> np.dtype:
    """The float an integer or bool becomes (jnp.sin, true division): by width, as JAX 0.10.2 does:
    float64 for a 64-bit integer, float32 otherwise, whatever the x64 flag."""
    return np.dtype("float64" if dtype.itemsize == 8 else "float32")


def _binary(prim_fun: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        return prim_fun(*_promote(x, y, name=prim_fun.__name__))
    f.__name__ = prim_fun.__name__
    return f


add, subtract, multiply = _binary(lax.add), _binary(lax.sub), _binary(lax.mul)
maximum, minimum = _binary(lax.max), _binary(lax.min)
greater, less, greater_equal, less_equal = _binary(lax.gt), _binary(lax.lt), _binary(lax.ge), _binary(lax.le)
equal, not_equal = _binary(lax.eq), _binary(lax.ne)


def divide(x: Any, y: Any) -> Any:
    """True division: integer operands give a float (by width). Each operand goes to that float from its
    own value, as JAX converts them: uint8(1) / -2 is -0.5, not 1 / uint8(-2)."""
    px, py = _promote(x, y)
    a = get_aval(px)
    if a.dtype.kind in "biu":
        t = _to_inexact(a.dtype)
        px, py = (lax.broadcast_to(_convert(_lift(v), t, a.weak_type), a.shape) for v in (x, y))
    return lax.div(px, py)


true_divide = divide


def power(x: Any, y: Any) -> Any:
    if get_aval(_lift(x)).dtype.kind == "b":  # booleans are raised as int32, as in JAX (whatever the x64 flag)
        x = _convert(_lift(x), np.dtype("int32"))
    if isinstance(y, Array) and y.ndim == 0 and y.dtype.kind in "iu":
        y = int(y)  # a concrete integer scalar exponent: integer_pow, as JAX does (x keeps its dtype and weak type)
    if isinstance(y, int) and not isinstance(y, bool):
        if y < 0 and get_aval(_lift(x)).dtype.kind in "biu":
            raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({get_aval(_lift(x)).dtype.name}[], {y})")
        return lax.integer_pow(_lift(x), y)
    return lax.pow(*_promote(x, y))


def _floor_div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return np.floor_divide(x, y).astype(x.dtype)


# floor_divide and remainder round towards minus infinity (remainder takes the divisor's sign), as
# NumPy's do; their derivative is zero almost everywhere (remainder: 1 in x, -floor(x/y) in y).
_floor_divide_p = _Primitive("floor_divide", _floor_div_impl)
_remainder_p = _Primitive("rem", lambda x, y: np.remainder(x, y).astype(x.dtype))
lax.jvp_rules[_floor_divide_p] = lambda p, t: (_bind(_floor_divide_p, *p), None)
lax.vjp_rules[_floor_divide_p] = lambda x, y: (_bind(_floor_divide_p, x, y), lambda ct: (
    lax.mul(ct, lax._full_like(ct, 0)), lax.mul(ct, lax._full_like(ct, 0))))
lax.vjp_rules[_remainder_p] = lambda x, y: (_bind(_remainder_p, x, y), lambda ct: (
    ct, lax.neg(lax.mul(ct, _bind(_floor_divide_p, x, y)))))
lax.jvp_rules[_remainder_p] = lambda p, t: (_bind(_remainder_p, *p), lax._t_sum(
    t[0], lax._t_map(t[1], lambda b: lax.neg(lax.mul(b, _bind(_floor_divide_p, *p))))))


def _bitwise(name: str, impl: Any) -> Any:
    prim = _Primitive(name, impl)

    def f(x: Any, y: Any) -> Any:
        x, y = _promote(x, y)
        for i, v in enumerate((x, y)):
            if get_aval(v).dtype.kind not in "biu":
                raise TypeError(f"{name} does not accept dtype {get_aval(v).dtype.name} at position {i}. "
                                "Accepted dtypes at position {i} are subtypes of integer, bool.")
        return _bind(prim, x, y)
    lax.batch_rules[prim] = lax._elementwise_batch(prim)
    f.__name__ = f"bitwise_{name}"
    return f


def floor_divide(x: Any, y: Any) -> Any:
    x, y = _promote(x, y)
    if get_aval(x).dtype.kind == "b":  # booleans divide as the default int
        x, y = _convert(x, default_int()), _convert(y, default_int())
    return _bind(_floor_divide_p, x, y)


def remainder(x: Any, y: Any) -> Any:
    return _bind(_remainder_p, *_promote(x, y))


mod = remainder
bitwise_and, bitwise_or, bitwise_xor = _bitwise("and", np.bitwise_and), _bitwise("or", np.bitwise_or), _bitwise("xor", np.bitwise_xor)
for _p in (_floor_divide_p, _remainder_p):
    lax.batch_rules[_p] = lax._elementwise_batch(_p)


def _unary(prim_fun: Any, floating_only: bool = True) -> Any:
    def f(x: Any) -> Any:
        x = _lift(x)
        a = get_aval(x)
        if floating_only and a.dtype.kind in "biu":
            x = _convert(x, _to_inexact(a.dtype), a.weak_type)
        return prim_fun(x)
    f.__name__ = prim_fun.__name__
    return f


sin, cos, exp, log, tanh, sqrt = (_unary(f) for f in (lax.sin, lax.cos, lax.exp, lax.log, lax.tanh, lax.sqrt))
negative, sign = _unary(lax.neg, False), _unary(lax.sign, False)


def abs(x: Any) -> Any:  # noqa: A001 - NumPy's name
    x = _lift(x)
    return lax.select(lax.lt(x, lax._full_like(x, 0)), lax.neg(x), x)


absolute = abs


def where(condition: Any, x: Any, y: Any) -> Any:
    c = _lift(condition)
    if get_aval(c).dtype != np.dtype(bool):
        c = lax.ne(c, lax._full_like(c, 0))
    x, y = _promote(x, y)
    shape = np.broadcast_shapes(get_aval(c).shape, get_aval(x).shape)
    return lax.select(lax.broadcast_to(c, shape), lax.broadcast_to(x, shape), lax.broadcast_to(y, shape))


def clip(arr: Any, min: Any = None, max: Any = None, *, a_min: Any = None, a_max: Any = None) -> Any:  # noqa: A002
    """`jnp.clip(x, min, max)`: max(x, min), then min(., max)."""
    lo, hi = (min if min is not None else a_min), (max if max is not None else a_max)
    out = _lift(arr)
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return out


# ---------------------------------------------------------------- reductions and shapes


def _axes(x: Any, axis: Any) -> tuple[int, ...]:
    nd = get_aval(x).ndim
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % nd if nd else a for a in axes)


def _keep(out: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if i in axes else n for i, n in enumerate(get_aval(x).shape)))


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, initial: Any = None) -> Any:  # noqa: A001
    x = _lift(a)
    dt = check_user_dtype(dtype, "sum")
    av = get_aval(x)
    if dt is None and (av.dtype.kind == "b" or (av.dtype.kind == "i" and av.dtype.itemsize < default_int().itemsize)):
        dt = default_int()
    if dt is not None:
        x = _convert(x, dt)
    axes = _axes(x, axis)
    out = _keep(lax.reduce_sum(x, axes), x, axes, keepdims)
    return out if initial is None else add(out, _convert(_lift(initial), get_aval(out).dtype))


def mean(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = _lift(a)
    av = get_aval(x)
    if av.dtype.kind in "biu":
        x = _convert(x, default_float())
    axes = _axes(x, axis)
    count = int(np.prod([av.shape[i] for i in axes], dtype=np.int64))
    total = lax.reduce_sum(x, axes)
    return _keep(lax.div(total, lax._full_like(total, count)), x, axes, keepdims)


def max(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:  # noqa: A001
    x = _lift(a)
    axes = _axes(x, axis)
    out = _keep(lax.reduce_max(x, axes), x, axes, keepdims)
    # initial= takes the operand's dtype (an int64 array stays int64 with a Python int initial).
    return out if initial is None else lax.max(out, lax.broadcast_to(_convert(_lift(initial), get_aval(out).dtype), get_aval(out).shape))


def min(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:  # noqa: A001
    x = _lift(a)
    axes = _axes(x, axis)
    out = _keep(lax.reduce_min(x, axes), x, axes, keepdims)
    return out if initial is None else lax.min(out, lax.broadcast_to(_convert(_lift(initial), get_aval(out).dtype), get_aval(out).shape))


def reshape(a: Any, shape: Any) -> Any:
    x = _lift(a)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return lax.reshape(x, np.empty(get_aval(x).shape, np.int8).reshape(shape).shape)


def transpose(a: Any, axes: Any = None) -> Any:
    x = _lift(a)
    nd = get_aval(x).ndim
    return lax.transpose(x, tuple(reversed(range(nd))) if axes is None else tuple(axes))


def moveaxis(a: Any, source: int, destination: int) -> Any:
    x = _lift(a)
    nd = get_aval(x).ndim
    order = [i for i in range(nd) if i != source % nd]
    order.insert(destination % nd, source % nd)
    return lax.transpose(x, tuple(order))


def getitem(a: Any, idx: Any) -> Any:
    """Indexing with a static index (ints, slices, concrete arrays)."""
    x = _lift(a)
    parts = idx if isinstance(idx, tuple) else (idx,)
    if isinstance(idx, Tracer) and get_aval(idx).shape == () and get_aval(idx).dtype.kind in "iu":
        return lax.dynamic_index(x, idx)
    if any(isinstance(p, Tracer) for p in parts):
        raise NotImplementedError("the reference models indexing with one traced integer scalar only")
    static = tuple(np.asarray(p) if isinstance(p, Array) else p for p in parts)
    return lax.getitem(x, static if isinstance(idx, tuple) else static[0])


class _IndexUpdateRef:
    """`x.at[idx]`: functional updates, `.set(v)`, `.add(v)`, `.get()`."""

    def __init__(self, x: Any, idx: Any) -> None:
        self.x, self.idx = x, idx

    def get(self) -> Any:
        return getitem(self.x, self.idx)

    def _update(self, v: Any, mode: str) -> Any:
        x = _lift(self.x)
        v = _convert(_lift(v), get_aval(x).dtype)
        if isinstance(self.idx, Tracer):
            return lax.index_update(x, self.idx, lax.broadcast_to(v, get_aval(x).shape[1:]), mode)
        idx = np.asarray(self.idx) if isinstance(self.idx, Array) else self.idx
        part = lax.getitem(x, idx)
        delta = lax.broadcast_to(v, get_aval(part).shape)
        return lax.scatter_add(x, lax.sub(delta, part) if mode == "set" else delta, idx)

    def set(self, v: Any) -> Any:
        return self._update(v, "set")

    def add(self, v: Any) -> Any:
        return self._update(v, "add")

    def mul(self, v: Any) -> Any:
        if isinstance(self.idx, Tracer) or isinstance(v, (Array, Tracer)):
            return self._update(multiply(self.get(), v), "set")
        # A static index and a Python factor: multiply by a constant, exactly (set would subtract).
        x = _lift(self.x)
        a = get_aval(x)
        factor = np.ones(a.shape, a.dtype)
        factor[np.asarray(self.idx) if isinstance(self.idx, Array) else self.idx] = v
        return lax.mul(x, Array(factor))


class _IndexHelper:
    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, idx)


ArrayOps.at = property(lambda self: _IndexHelper(self))  # type: ignore[attr-defined]


def matmul(a: Any, b: Any) -> Any:
    raise NotImplementedError("the reference does not model matmul (no spec uses it)")


dot = matmul


# ---------------------------------------------------------------- creation: the documented defaults


def _shape(shape: Any) -> tuple[int, ...]:
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(operator.index(s) for s in shape)


def array(object: Any, dtype: Any = None, copy: bool = True) -> Any:  # noqa: A002 - NumPy's name
    """`jnp.array`: Python scalars take the default dtype of their kind and stay weakly typed (as does
    a weakly typed array) unless a dtype is given; lists and NumPy values give strong arrays."""
    dt = check_user_dtype(dtype, "array")
    if isinstance(object, Tracer):
        return _convert(object, dt if dt is not None else object.dtype, dt is None and object.aval.weak_type)
    if isinstance(object, Array):
        return Array(object._value.astype(dt) if dt is not None else object._value.copy(), dt is None and object.weak_type)
    if dt is None and _python_number(object):
        return _lift(object)
    if dt is None:
        dt = _infer_dtype(object)
    elif isinstance(object, (int, float)) and not isinstance(object, builtins.bool) and dt.kind in "iu" and (
            not np.iinfo(dt).min <= int(object) <= np.iinfo(dt).max):
        raise OverflowError(f"Python integer {int(object)} out of bounds for {dt.name}")
    elif isinstance(object, (float, complex)):
        # JAX 0.10.2 canonicalizes a Python scalar first: in allow mode float64 holds float32's rounding.
        object = np.asarray(object, _infer_dtype(object))  # noqa: A001
    _check_int_range(object, dt)
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
    if isinstance(obj, (list, tuple)) and any(isinstance(v, Array) for v in obj):
        # a list with arrays: JAX's promotion of its elements (Python numbers weak; float64 ones in allow mode stay)
        return result_type(*_flat(obj))
    raw = np.asarray(obj)
    if isinstance(obj, (list, tuple)) and raw.dtype.kind in "iufc" and raw.dtype.itemsize == 8:
        # a list of Python numbers: the default of its kind
        return {"i": default_int, "u": default_int, "f": default_float, "c": default_complex}[raw.dtype.kind]()
    return dtype_of_input(raw)[0]


def asarray(a: Any, dtype: Any = None, copy: Any = None) -> Any:
    """`jnp.asarray`: like `array`, reported as asarray in the dtype warning."""
    dt = check_user_dtype(dtype, "asarray")
    if isinstance(a, Tracer):
        return a if dt is None else _convert(a, dt)
    if isinstance(a, Array):
        return a if dt is None or dt == a.dtype else Array(a._value.astype(dt))
    if dt is None:
        if _python_number(a):
            return _lift(a)
        dt = _infer_dtype(a)
    _check_int_range(a, dt)
    return Array(np.asarray(a, dtype=dt))


def astype(x: Any, dtype: Any) -> Any:
    """`x.astype(dtype)`: an explicit request, so 64-bit dtypes obey the policy."""
    dt = check_user_dtype(dtype, "astype")
    assert dt is not None
    return _convert(_lift(x), dt)


def zeros(shape: Any, dtype: Any = None) -> Array:
    return Array(np.zeros(_shape(shape), check_user_dtype(dtype, "zeros") or default_float()))


def ones(shape: Any, dtype: Any = None) -> Array:
    return Array(np.ones(_shape(shape), check_user_dtype(dtype, "ones") or default_float()))


def empty(shape: Any, dtype: Any = None) -> Array:
    return Array(np.zeros(_shape(shape), check_user_dtype(dtype, "empty") or default_float()))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    dt = check_user_dtype(dtype, "full")
    if dt is None:
        dt = get_aval(fill_value).dtype if isinstance(fill_value, (Array, Tracer)) else _infer_dtype(fill_value)
    weak = dtype is None and get_aval(_lift(fill_value)).weak_type  # a weak fill without dtype= stays weak
    if isinstance(fill_value, Tracer):
        return lax.broadcast_to(_convert(fill_value, dt, weak), _shape(shape))
    return Array(np.full(_shape(shape), np.asarray(fill_value), dt), weak)


def _like(x: Any, dtype: Any, fun_name: str) -> np.dtype:
    if isinstance(x, (list, tuple)):  # JAX's check_arraylike: a list is not an array
        raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(x)} at position 0.")
    return check_user_dtype(dtype, fun_name) or get_aval(_lift(x)).dtype


def _like_weak(a: Any, dtype: Any) -> bool:
    """*_like without dtype= keeps the input's weak type (JAX's lax.full_like)."""
    return dtype is None and get_aval(_lift(a)).weak_type


def zeros_like(a: Any, dtype: Any = None) -> Array:
    return Array(np.zeros(get_aval(_lift(a)).shape, _like(a, dtype, "zeros_like")), _like_weak(a, dtype))


def ones_like(a: Any, dtype: Any = None) -> Array:
    return Array(np.ones(get_aval(_lift(a)).shape, _like(a, dtype, "ones_like")), _like_weak(a, dtype))


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Array:
    return Array(np.full(get_aval(_lift(a)).shape, fill_value, _like(a, dtype, "full_like")), _like_weak(a, dtype))


def empty_like(a: Any, dtype: Any = None) -> Array:
    """Zeros, as in JAX before 0.11.0; JAX 0.6.0-0.10.2 check the dtype under the name ones_like."""
    return Array(np.zeros(get_aval(_lift(a)).shape, _like(a, dtype, "ones_like")), _like_weak(a, dtype))


def identity(n: int, dtype: Any = None) -> Array:
    return Array(np.identity(n, dtype=check_user_dtype(dtype, "identity") or default_float()))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:  # noqa: N803 - NumPy's names
    return Array(np.tri(N, M, k, dtype=check_user_dtype(dtype, "tri") or default_float()))


def _triangle(m: Any, k: int, lower: bool) -> Any:
    """Keep the lower (tril) or upper (triu) triangle; the input's dtype is kept."""
    x = _lift(m)
    rows, cols = get_aval(x).shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    mask = lax.broadcast_to(Array(keep), get_aval(x).shape)
    return lax.select(mask, x, lax._full_like(x, 0))


def tril(m: Any, k: int = 0) -> Any:
    return _triangle(m, k, lower=True)


def triu(m: Any, k: int = 0) -> Any:
    return _triangle(m, k, lower=False)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    """`jnp.arange`: the default int for integer arguments, the default float otherwise."""
    dt = check_user_dtype(dtype, "arange")
    if dt is not None and dt.kind == "b":  # JAX builds arange from iota, which has no boolean form
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating.")
    args = [a for a in (start, stop, step) if a is not None]
    if dt is None:
        kinds = [to_dtype(get_aval(a).dtype).kind for a in args]
        dt = default_float() if any(k in "fc" for k in kinds) else default_int()
    values = [np.asarray(a).item() if isinstance(a, Array) else a for a in args]
    # Computed wide, then cast: a truncated int64 request wraps like JAX's does.
    wide = np.arange(*values, dtype=np.result_type(dt, np.int64) if dt.kind in "iu" else dt)
    return Array(wide.astype(dt))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None) -> Any:
    dt = check_user_dtype(dtype, "linspace") or default_float()
    out = Array(np.linspace(float(start), float(stop), num, endpoint=endpoint).astype(dt))
    return (out, Array(np.asarray((float(stop) - float(start)) / builtins.max(num - int(endpoint), 1), dt))) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:  # noqa: N803 - NumPy's names
    return Array(np.eye(N, M, k, dtype=check_user_dtype(dtype, "eye") or default_float()))


def _operand(x: Any) -> Any:
    """(dtype, weak_type) of one operand of `result_type`: a value's aval, or a dtype. A dtype given as
    a string, np.dtype or NumPy scalar type is an explicit request (checked as `jnp.dtype` checks it);
    a JAX scalar type (jnp.float64) is canonicalized silently; Python's int, float and complex stand
    for weakly typed values of the default dtype."""
    if isinstance(x, _ScalarMeta):
        from jax_conformance.adapters.reference.dtypes import canonicalize_dtype

        return _types.SimpleNamespace(dtype=canonicalize_dtype(x.dtype), weak_type=False)
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and (
            x in (int, float, complex, builtins.bool) or issubclass(x, np.generic))):
        return _types.SimpleNamespace(dtype=check_user_dtype(x, "dtype"), weak_type=any(x is t for t in (int, float, complex)))
    return get_aval(_lift(x))


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
    if da.kind in "iu" and db.kind in "iu" and _result_type((da, False), (db, False))[0].kind == "f":
        return np.dtype("float64")  # uint64 with a signed int: JAX's weak float, as np.dtype(float)
    return _result_type((da, False), (db, False))[0]


def can_cast(from_: Any, to: Any, casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "safe") -> bool:
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
    avals = [_ShapedArray((), default_float()) if a is None else _operand(a) for a in args]
    out = (avals[0].dtype, avals[0].weak_type)
    for a in avals[1:]:
        out = _result_type(out, (a.dtype, a.weak_type))
    return out[0]


# ---------------------------------------------------------------- jnp.linalg (what the specs use)


def _inv(x: np.ndarray) -> np.ndarray:
    """The inverse in the array's own precision; subnormals flushed to zero first, as XLA on CPU does,
    so a row scaled below float32's range makes the matrix singular (every entry non-finite)."""
    x = np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.zeros_like(x), x)
    try:
        return np.linalg.inv(x).astype(x.dtype)
    except np.linalg.LinAlgError:
        return np.full_like(x, np.nan)


_inv_p = _Primitive("inv", _inv)


def isfinite(x: Any) -> Any:
    return Array(np.isfinite(np.asarray(_lift(x))))


linalg = _types.SimpleNamespace(inv=lambda a: _bind(_inv_p, _lift(a)))
