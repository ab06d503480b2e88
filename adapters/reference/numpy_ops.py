"""`jax.numpy` operations: arithmetic (promote, broadcast, then bind a `lax` primitive), the unary
functions, `where` / `clip`, reductions, shapes, indexing and `x.at[i]`, and the bit of `jnp.linalg`
the specs use. `floor_divide`, `remainder`, the bitwise functions and `inv` add primitives of their own.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import lax, lax_indexing
from jax_conformance.adapters.reference.core import (
    Array,
    ArrayOps,
    Primitive,
    Tracer,
    bind,
    get_aval,
)
from jax_conformance.adapters.reference.dtypes import (
    canonicalize_dtype,
    check_user_dtype,
    default_int,
)
from jax_conformance.adapters.reference.numpy_dtypes import convert, lift, promote, to_inexact


def _binary(prim_fun: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        return prim_fun(*promote(x, y, name=prim_fun.__name__))

    f.__name__ = f.__qualname__ = prim_fun.__name__
    return f


add, subtract, multiply = _binary(lax.add), _binary(lax.sub), _binary(lax.mul)
maximum, minimum = _binary(lax.max), _binary(lax.min)
greater, less, greater_equal, less_equal = (
    _binary(lax.gt),
    _binary(lax.lt),
    _binary(lax.ge),
    _binary(lax.le),
)
equal, not_equal = _binary(lax.eq), _binary(lax.ne)


def divide(x: Any, y: Any) -> Any:
    """True division: integer operands give a float (by width). Each operand goes to that float from its
    own value, as JAX converts them: uint8(1) / -2 is -0.5, not 1 / uint8(-2)."""
    px, py = promote(x, y)
    a = get_aval(px)
    if a.dtype.kind in "biu":
        t = to_inexact(a.dtype)
        px, py = (lax.broadcast_to(convert(lift(v), t, a.weak_type), a.shape) for v in (x, y))
    return lax.div(px, py)


true_divide = divide


def power(x: Any, y: Any) -> Any:
    if (
        get_aval(lift(x)).dtype.kind == "b"
    ):  # booleans are raised as int32, as in JAX (whatever the x64 flag)
        x = convert(lift(x), np.dtype("int32"))
    if isinstance(y, Array) and y.ndim == 0 and y.dtype.kind in "iu":
        y = int(
            y
        )  # a concrete integer scalar exponent: integer_pow, as JAX does (x keeps its dtype and weak type)
    if isinstance(y, int) and not isinstance(y, bool):
        if y < 0 and get_aval(lift(x)).dtype.kind in "biu":
            raise TypeError(
                f"Integers cannot be raised to negative powers, got integer_pow({get_aval(lift(x)).dtype.name}[], {y})"
            )
        return lax.integer_pow(lift(x), y)
    return lax.pow(*promote(x, y))


def _floor_div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return np.floor_divide(x, y).astype(x.dtype)


# floor_divide and remainder round towards minus infinity (remainder takes the divisor's sign), as
# NumPy's do; their derivative is zero almost everywhere (remainder: 1 in x, -floor(x/y) in y).
_floor_divide_p = Primitive("floor_divide", _floor_div_impl)
_remainder_p = Primitive("rem", lambda x, y: np.remainder(x, y).astype(x.dtype))
lax.jvp_rules[_floor_divide_p] = lambda p, t: (bind(_floor_divide_p, *p), None)
lax.vjp_rules[_floor_divide_p] = lambda x, y: (
    bind(_floor_divide_p, x, y),
    lambda ct: (lax.mul(ct, lax.full_like(ct, 0)), lax.mul(ct, lax.full_like(ct, 0))),
)
lax.vjp_rules[_remainder_p] = lambda x, y: (
    bind(_remainder_p, x, y),
    lambda ct: (ct, lax.neg(lax.mul(ct, bind(_floor_divide_p, x, y)))),
)
lax.jvp_rules[_remainder_p] = lambda p, t: (
    bind(_remainder_p, *p),
    lax.t_sum(t[0], lax.t_map(t[1], lambda b: lax.neg(lax.mul(b, bind(_floor_divide_p, *p))))),
)


def _bitwise(name: str, impl: Any) -> Any:
    prim = Primitive(name, impl)

    def f(x: Any, y: Any) -> Any:
        x, y = promote(x, y)
        for i, v in enumerate((x, y)):
            if get_aval(v).dtype.kind not in "biu":
                raise TypeError(
                    f"{name} does not accept dtype {get_aval(v).dtype.name} at position {i}. "
                    "Accepted dtypes at position {i} are subtypes of integer, bool."
                )
        return bind(prim, x, y)

    lax.batch_rules[prim] = lax.elementwise_batch(prim)
    f.__name__ = f"bitwise_{name}"
    return f


def floor_divide(x: Any, y: Any) -> Any:
    x, y = promote(x, y)
    if get_aval(x).dtype.kind == "b":  # booleans divide as the default int
        x, y = convert(x, default_int()), convert(y, default_int())
    return bind(_floor_divide_p, x, y)


def remainder(x: Any, y: Any) -> Any:
    return bind(_remainder_p, *promote(x, y))


mod = remainder
bitwise_and, bitwise_or, bitwise_xor = (
    _bitwise("and", np.bitwise_and),
    _bitwise("or", np.bitwise_or),
    _bitwise("xor", np.bitwise_xor),
)
for _p in (_floor_divide_p, _remainder_p):
    lax.batch_rules[_p] = lax.elementwise_batch(_p)


def _unary(prim_fun: Any, floating_only: bool = True) -> Any:
    def f(x: Any) -> Any:
        if (
            not isinstance(x, (Array, Tracer)) and np.asarray(x).dtype == object
        ):  # as JAX's jitted jnp functions
            raise TypeError(
                f"Error interpreting argument to {f!r} as an abstract array. The problematic value is of type "
                f"{type(x)} and was passed to the function at path x."
            )
        x = lift(x)
        a = get_aval(x)
        if floating_only and a.dtype.kind in "biu":
            x = convert(x, to_inexact(a.dtype), a.weak_type)
        return prim_fun(x)

    f.__name__ = f.__qualname__ = prim_fun.__name__
    return f


sin, cos, exp, log, tanh, sqrt = (
    _unary(f) for f in (lax.sin, lax.cos, lax.exp, lax.log, lax.tanh, lax.sqrt)
)
negative, sign = _unary(lax.neg, False), _unary(lax.sign, False)


def abs(x: Any) -> Any:  # noqa: A001 - NumPy's name
    x = lift(x)
    return lax.select(lax.lt(x, lax.full_like(x, 0)), lax.neg(x), x)


absolute = abs


def where(condition: Any, x: Any, y: Any) -> Any:
    c = lift(condition)
    if get_aval(c).dtype != np.dtype(bool):
        c = lax.ne(c, lax.full_like(c, 0))
    x, y = promote(x, y)
    shape = np.broadcast_shapes(get_aval(c).shape, get_aval(x).shape)
    return lax.select(
        lax.broadcast_to(c, shape), lax.broadcast_to(x, shape), lax.broadcast_to(y, shape)
    )


def clip(
    arr: Any, min: Any = None, max: Any = None, *, a_min: Any = None, a_max: Any = None
) -> Any:  # noqa: A002
    """`jnp.clip(x, min, max)`: max(x, min), then min(., max)."""
    lo, hi = (min if min is not None else a_min), (max if max is not None else a_max)
    out = lift(arr)
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


def _reduction_dtype(dt: np.dtype, promote_integers: bool) -> np.dtype | None:
    """The dtype sum and prod accumulate in when none is given (None: the operand's own).

    promote_integers (JAX's default): bool and signed integers narrower than the default int
    become the default int (int32 / int64 by x64), unsigned ones narrower than it the default
    uint. Without it integers keep their dtype and bool becomes int32 in every x64 mode
    (measured on JAX 0.10.2: specs/promotion/weak_types.yaml)."""
    if dt.kind == "b":
        return default_int() if promote_integers else np.dtype("int32")
    if promote_integers and dt.kind in "iu" and dt.itemsize < default_int().itemsize:
        return (
            default_int() if dt.kind == "i" else np.dtype(default_int().name.replace("int", "uint"))
        )
    return None


def sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    promote_integers: bool = True,
) -> Any:  # noqa: A001
    x = lift(a)
    dt = check_user_dtype(dtype, "sum")
    if dt is None:
        dt = _reduction_dtype(get_aval(x).dtype, promote_integers)
    if dt is not None:
        x = convert(x, dt)
    axes = _axes(x, axis)
    out = _keep(lax.reduce_sum(x, axes), x, axes, keepdims)
    return out if initial is None else add(out, convert(lift(initial), get_aval(out).dtype))


_reduce_prod_p = Primitive(
    "reduce_prod", lambda x, *, axes: np.prod(x, axis=axes, dtype=x.dtype), lax.never_weak
)
_cumsum_p = Primitive("cumsum", lambda x, *, axis: np.cumsum(x, axis=axis, dtype=x.dtype))
_cumprod_p = Primitive("cumprod", lambda x, *, axis: np.cumprod(x, axis=axis, dtype=x.dtype))


def prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    keepdims: bool = False,
    promote_integers: bool = True,
) -> Any:
    """`jnp.prod`: the accumulation dtype as `sum`'s (no derivative rule: no spec needs one)."""
    x = lift(a)
    dt = check_user_dtype(dtype, "prod")
    if dt is None:
        dt = _reduction_dtype(get_aval(x).dtype, promote_integers)
    if dt is not None:
        x = convert(x, dt)
    axes = _axes(x, axis)
    return _keep(bind(_reduce_prod_p, x, axes=axes), x, axes, keepdims)


def _cumulative(prim: Primitive, name: str) -> Any:
    def f(a: Any, axis: Any = None, dtype: Any = None) -> Any:
        """Bool accumulates in the default int; integers keep their dtype (no promote_integers)."""
        x = lift(a)
        dt = check_user_dtype(dtype, name)
        if dt is None and get_aval(x).dtype.kind == "b":
            dt = default_int()
        if dt is not None:
            x = convert(x, dt)
        if axis is None:
            x, axis = reshape(x, (-1,)), 0
        return bind(prim, x, axis=axis)

    f.__name__ = f.__qualname__ = name
    return f


cumsum, cumprod = _cumulative(_cumsum_p, "cumsum"), _cumulative(_cumprod_p, "cumprod")


def mean(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Integers and bool average in the float of their width (float32 up to 32 bits, in every
    x64 mode; JAX 0.10.2, specs/promotion/weak_types.yaml), canonicalized."""
    x = lift(a)
    av = get_aval(x)
    if av.dtype.kind in "biu":
        x = convert(x, canonicalize_dtype(to_inexact(av.dtype)))
    axes = _axes(x, axis)
    count = int(np.prod([av.shape[i] for i in axes], dtype=np.int64))
    total = lax.reduce_sum(x, axes)
    return _keep(lax.div(total, lax.full_like(total, count)), x, axes, keepdims)


def max(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:  # noqa: A001
    x = lift(a)
    axes = _axes(x, axis)
    out = _keep(lax.reduce_max(x, axes), x, axes, keepdims)
    # initial= takes the operand's dtype (an int64 array stays int64 with a Python int initial).
    return (
        out
        if initial is None
        else lax.max(
            out, lax.broadcast_to(convert(lift(initial), get_aval(out).dtype), get_aval(out).shape)
        )
    )


def min(a: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:  # noqa: A001
    x = lift(a)
    axes = _axes(x, axis)
    out = _keep(lax.reduce_min(x, axes), x, axes, keepdims)
    return (
        out
        if initial is None
        else lax.min(
            out, lax.broadcast_to(convert(lift(initial), get_aval(out).dtype), get_aval(out).shape)
        )
    )


def reshape(a: Any, shape: Any) -> Any:
    x = lift(a)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return lax.reshape(x, np.empty(get_aval(x).shape, np.int8).reshape(shape).shape)


def transpose(a: Any, axes: Any = None) -> Any:
    x = lift(a)
    nd = get_aval(x).ndim
    return lax.transpose(x, tuple(reversed(range(nd))) if axes is None else tuple(axes))


def moveaxis(a: Any, source: int, destination: int) -> Any:
    x = lift(a)
    nd = get_aval(x).ndim
    order = [i for i in range(nd) if i != source % nd]
    order.insert(destination % nd, source % nd)
    return lax.transpose(x, tuple(order))


def getitem(a: Any, idx: Any) -> Any:
    """Indexing with a static index (ints, slices, concrete arrays)."""
    x = lift(a)
    parts = idx if isinstance(idx, tuple) else (idx,)
    if isinstance(idx, Tracer) and get_aval(idx).shape == () and get_aval(idx).dtype.kind in "iu":
        return lax_indexing.dynamic_index(x, idx)
    if any(isinstance(p, Tracer) for p in parts):
        raise NotImplementedError(
            "the reference models indexing with one traced integer scalar only"
        )
    static = tuple(np.asarray(p) if isinstance(p, Array) else p for p in parts)
    return lax_indexing.getitem(x, static if isinstance(idx, tuple) else static[0])


class _IndexUpdateRef:
    """`x.at[idx]`: functional updates, `.set(v)`, `.add(v)`, `.get()`."""

    def __init__(self, x: Any, idx: Any) -> None:
        self.x, self.idx = x, idx

    def get(self) -> Any:
        return getitem(self.x, self.idx)

    def _update(self, v: Any, mode: str) -> Any:
        x = lift(self.x)
        v = convert(lift(v), get_aval(x).dtype)
        if isinstance(self.idx, Tracer):
            return lax_indexing.index_update(
                x, self.idx, lax.broadcast_to(v, get_aval(x).shape[1:]), mode
            )
        idx = np.asarray(self.idx) if isinstance(self.idx, Array) else self.idx
        part = lax_indexing.getitem(x, idx)
        delta = lax.broadcast_to(v, get_aval(part).shape)
        return lax_indexing.scatter_add(x, lax.sub(delta, part) if mode == "set" else delta, idx)

    def set(self, v: Any) -> Any:
        return self._update(v, "set")

    def add(self, v: Any) -> Any:
        return self._update(v, "add")

    def mul(self, v: Any) -> Any:
        if isinstance(self.idx, Tracer) or isinstance(v, (Array, Tracer)):
            return self._update(multiply(self.get(), v), "set")
        # A static index and a Python factor: multiply by a constant, exactly (set would subtract).
        x = lift(self.x)
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


# ---------------------------------------------------------------- jnp.linalg (what the specs use)


def _inv(x: np.ndarray) -> np.ndarray:
    """The inverse in the array's own precision; subnormals flushed to zero first, as XLA on CPU does,
    so a row scaled below float32's range makes the matrix singular (every entry non-finite)."""
    x = np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.zeros_like(x), x)
    try:
        return np.linalg.inv(x).astype(x.dtype)
    except np.linalg.LinAlgError:
        return np.full_like(x, np.nan)


_inv_p = Primitive("inv", _inv)


def isfinite(x: Any) -> Any:
    return Array(np.isfinite(np.asarray(lift(x))))


linalg = types.SimpleNamespace(inv=lambda a: bind(_inv_p, lift(a)))
