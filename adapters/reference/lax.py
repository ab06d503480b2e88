"""`jax.lax`: the primitives, each with its NumPy impl and its rules, registered side by side.

Primitives take operands of one dtype and one shape (jax.numpy promotes and broadcasts
first), so the rules stay short. Rule tables, read by the transformations:
- `jvp_rules[p](primals, tangents, **params) -> (out, tangent_out)`; a tangent of None is a zero;
- `vjp_rules[p](*primals, **params) -> (out, pullback)`, `pullback(ct) -> cotangent per operand`;
- `batch_rules[p](vals, dims, **params) -> (out, dim)`; a dim is 0 (batched in front) or None.
Rules are written with the functions of this module, so they compose (grad of grad, vmap of grad).

This module holds the rule tables and the elementwise, comparison, conversion, shape and reduction
primitives; indexing is in `lax_indexing.py`, control flow and the public helpers in
`lax_control.py` (both build on this one). `jax.lax` is the three together (`__init__.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax_conformance.adapters.reference.core import Array, Primitive, bind, get_aval

jvp_rules: dict[Primitive, Callable[..., Any]] = {}
vjp_rules: dict[Primitive, Callable[..., Any]] = {}
batch_rules: dict[Primitive, Callable[..., Any]] = {}
# Helpers the rule modules share (lax_indexing, lax_control, numpy_*, ad): public here, but not
# names of `jax.lax` (`__init__.build_jax_module` leaves them out of the namespace).
RULE_HELPERS = ("never_weak", "t_sum", "t_map", "elementwise_batch", "full_like", "convert_weak")


def never_weak(avals: Any, params: Any) -> bool:
    """A weak-type rule: the result is never weakly typed."""
    return False


def t_sum(*ts: Any) -> Any:
    """Sum of tangents where None is a zero."""
    live = [t for t in ts if t is not None]
    if not live:
        return None
    out = live[0]
    for t in live[1:]:
        out = add(out, t)
    return out


def t_map(t: Any, f: Callable[[Any], Any]) -> Any:
    """`f` of a tangent, where None (a zero) stays None."""
    return None if t is None else f(t)


def elementwise_batch(prim: Primitive) -> Callable[..., Any]:
    """The batching rule of an elementwise primitive (batch axis 0): broadcast the unbatched operands, then bind."""

    def rule(vals: list[Any], dims: list[Any], **params: Any) -> tuple[Any, Any]:
        size = next(v.shape[0] for v, d in zip(vals, dims, strict=True) if d is not None)
        vals = [
            v if d is not None else broadcast_to(v, (size, *get_aval(v).shape))
            for v, d in zip(vals, dims, strict=True)
        ]
        return bind(prim, *vals, **params), 0

    return rule


# ---------------------------------------------------------------- elementwise arithmetic


def _shapes_checked(name: str, fn: Any) -> Any:
    """A binary impl that, like lax, refuses operands whose shapes do not broadcast, with JAX's TypeError."""

    def impl(x: Any, y: Any) -> Any:
        try:
            return fn(x, y)
        except ValueError as exc:
            if "broadcast" not in str(exc):
                raise
            raise TypeError(
                f"{name} got incompatible shapes for broadcasting: {tuple(np.shape(x))}, {tuple(np.shape(y))}."
            ) from None

    return impl


add_p = Primitive("add", _shapes_checked("add", lambda x, y: np.add(x, y, dtype=x.dtype)))
sub_p = Primitive("sub", _shapes_checked("sub", lambda x, y: np.subtract(x, y, dtype=x.dtype)))
mul_p = Primitive("mul", _shapes_checked("mul", lambda x, y: np.multiply(x, y, dtype=x.dtype)))
div_p = Primitive(
    "div",
    lambda x, y: (np.floor_divide if x.dtype.kind in "iu" else np.true_divide)(x, y).astype(
        x.dtype
    ),
)
neg_p = Primitive("neg", lambda x: np.negative(x))
max_p = Primitive("max", lambda x, y: np.maximum(x, y))
min_p = Primitive("min", lambda x, y: np.minimum(x, y))


def _pow_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y. Integers by JAX's binary exponentiation (six bits of the exponent, shifted logically, so
    a negative exponent gives what JAX gives instead of NumPy's error); a complex zero to a power with
    an imaginary part is NaN, as XLA computes exp(y log 0)."""
    if x.dtype.kind in "iu":
        x, y = np.array(x), np.array(y, dtype=x.dtype)
        unsigned = np.dtype(f"uint{8 * x.dtype.itemsize}")
        acc = np.ones_like(x)
        for _ in range(6):
            acc = np.where((y & 1).astype(bool), acc * x, acc)
            x = x * x
            y = (y.view(unsigned) >> 1).view(y.dtype) if y.dtype.kind == "i" else y >> 1
        return acc
    out = np.power(x, y)
    if x.dtype.kind == "c":
        out = np.where((x == 0) & (np.imag(y) != 0), np.complex128(complex(np.nan, np.nan)), out)
    return np.asarray(out).astype(x.dtype)


# An integer power is strongly typed (JAX builds it from constants); a float one keeps weak operands weak.
pow_p = Primitive(
    "pow",
    _pow_impl,
    lambda avals, params: all(a.weak_type for a in avals) and avals[0].dtype.kind not in "biu",
)
integer_pow_p = Primitive(
    "integer_pow",
    lambda x, *, y: (
        np.power(x, y).astype(x.dtype) if y >= 0 else (1 / np.power(x, -y)).astype(x.dtype)
    ),
)
sin_p = Primitive("sin", np.sin)
cos_p = Primitive("cos", np.cos)
exp_p = Primitive("exp", np.exp)
log_p = Primitive("log", np.log)
tanh_p = Primitive("tanh", np.tanh)
sqrt_p = Primitive("sqrt", np.sqrt)
sign_p = Primitive("sign", np.sign)


def add(x: Any, y: Any) -> Any:
    return bind(add_p, x, y)


def sub(x: Any, y: Any) -> Any:
    return bind(sub_p, x, y)


def mul(x: Any, y: Any) -> Any:
    return bind(mul_p, x, y)


def div(x: Any, y: Any) -> Any:
    return bind(div_p, x, y)


def neg(x: Any) -> Any:
    return bind(neg_p, x)


def max(x: Any, y: Any) -> Any:
    return bind(max_p, x, y)  # noqa: A001 - lax's name


def min(x: Any, y: Any) -> Any:
    return bind(min_p, x, y)  # noqa: A001 - lax's name


def pow(x: Any, y: Any) -> Any:
    return bind(pow_p, x, y)  # noqa: A001 - lax's name


def integer_pow(x: Any, y: int) -> Any:
    return bind(integer_pow_p, x, y=int(y))


def sin(x: Any) -> Any:
    return bind(sin_p, x)


def cos(x: Any) -> Any:
    return bind(cos_p, x)


def exp(x: Any) -> Any:
    return bind(exp_p, x)


def log(x: Any) -> Any:
    return bind(log_p, x)


def tanh(x: Any) -> Any:
    return bind(tanh_p, x)


def sqrt(x: Any) -> Any:
    return bind(sqrt_p, x)


def sign(x: Any) -> Any:
    return bind(sign_p, x)


jvp_rules[add_p] = lambda p, t: (add(*p), t_sum(*t))
jvp_rules[sub_p] = lambda p, t: (sub(*p), t_sum(t[0], t_map(t[1], neg)))
jvp_rules[mul_p] = lambda p, t: (
    mul(*p),
    t_sum(t_map(t[0], lambda a: mul(a, p[1])), t_map(t[1], lambda b: mul(p[0], b))),
)
jvp_rules[div_p] = lambda p, t: (
    div(*p),
    t_sum(
        t_map(t[0], lambda a: div(a, p[1])),
        t_map(t[1], lambda b: neg(mul(b, div(p[0], mul(p[1], p[1]))))),
    ),
)
jvp_rules[neg_p] = lambda p, t: (neg(p[0]), t_map(t[0], neg))
jvp_rules[sin_p] = lambda p, t: (sin(p[0]), t_map(t[0], lambda a: mul(a, cos(p[0]))))
jvp_rules[cos_p] = lambda p, t: (cos(p[0]), t_map(t[0], lambda a: neg(mul(a, sin(p[0])))))
jvp_rules[exp_p] = lambda p, t: (exp(p[0]), t_map(t[0], lambda a: mul(a, exp(p[0]))))
jvp_rules[log_p] = lambda p, t: (log(p[0]), t_map(t[0], lambda a: div(a, p[0])))
jvp_rules[tanh_p] = lambda p, t: (
    tanh(p[0]),
    t_map(t[0], lambda a: mul(a, sub(_one(p[0]), mul(tanh(p[0]), tanh(p[0]))))),
)
jvp_rules[sqrt_p] = lambda p, t: (
    sqrt(p[0]),
    t_map(t[0], lambda a: div(a, mul(full_like(p[0], 2), sqrt(p[0])))),
)
jvp_rules[sign_p] = lambda p, t: (sign(p[0]), None)
jvp_rules[integer_pow_p] = lambda p, t, *, y: (
    integer_pow(p[0], y),
    t_map(
        t[0],
        lambda a: mul(a, mul(full_like(p[0], y), integer_pow(p[0], y - 1))) if y != 0 else None,
    ),
)
jvp_rules[pow_p] = lambda p, t: (
    pow(*p),
    t_sum(
        t_map(t[0], lambda a: mul(a, mul(p[1], pow(p[0], sub(p[1], _one(p[1])))))),
        t_map(t[1], lambda b: mul(b, mul(log(p[0]), pow(*p)))),
    ),
)
jvp_rules[max_p] = lambda p, t: (
    max(*p),
    t_sum(
        t_map(t[0], lambda a: mul(a, _pick(p[0], p[1], gt))),
        t_map(t[1], lambda b: mul(b, _pick(p[1], p[0], gt))),
    ),
)
jvp_rules[min_p] = lambda p, t: (
    min(*p),
    t_sum(
        t_map(t[0], lambda a: mul(a, _pick(p[0], p[1], lt))),
        t_map(t[1], lambda b: mul(b, _pick(p[1], p[0], lt))),
    ),
)

vjp_rules[add_p] = lambda x, y: (add(x, y), lambda ct: (ct, ct))
vjp_rules[sub_p] = lambda x, y: (sub(x, y), lambda ct: (ct, neg(ct)))


def _mul_transposed(a: Any, ct: Any) -> Any:
    """mul(a, ct) in mul's pullback, where JAX's transpose refuses a cotangent of another dtype than the
    operand (a custom_vjp bwd may hand one on: its dtype is not checked) with lax.mul's TypeError."""
    a_dtype, ct_dtype = getattr(a, "dtype", None), getattr(ct, "dtype", None)
    if a_dtype is not None and ct_dtype is not None and a_dtype != ct_dtype:
        raise TypeError(
            f"lax.mul requires arguments to have the same dtypes, got {a_dtype}, {ct_dtype}. (Tip: "
            "jnp.multiply is a similar function that does automatic type promotion on inputs)."
        )
    return mul(a, ct)


vjp_rules[mul_p] = lambda x, y: (
    mul(x, y),
    lambda ct: (_mul_transposed(y, ct), _mul_transposed(x, ct)),
)  # JAX's operand order (its errors name it)
vjp_rules[div_p] = lambda x, y: (
    div(x, y),
    lambda ct: (div(ct, y), neg(mul(ct, div(x, mul(y, y))))),
)
vjp_rules[neg_p] = lambda x: (neg(x), lambda ct: (neg(ct),))
vjp_rules[sin_p] = lambda x: (sin(x), lambda ct: (mul(ct, cos(x)),))
vjp_rules[cos_p] = lambda x: (cos(x), lambda ct: (neg(mul(ct, sin(x))),))
vjp_rules[exp_p] = lambda x: (exp(x), lambda ct: (mul(ct, exp(x)),))
vjp_rules[log_p] = lambda x: (log(x), lambda ct: (div(ct, x),))
vjp_rules[tanh_p] = lambda x: (tanh(x), lambda ct: (mul(ct, sub(_one(x), mul(tanh(x), tanh(x)))),))
vjp_rules[sqrt_p] = lambda x: (sqrt(x), lambda ct: (div(ct, mul(full_like(x, 2), sqrt(x))),))
vjp_rules[sign_p] = lambda x: (sign(x), lambda ct: (mul(ct, full_like(x, 0)),))
vjp_rules[integer_pow_p] = lambda x, *, y: (
    integer_pow(x, y),
    lambda ct: (
        mul(ct, mul(full_like(x, y), integer_pow(x, y - 1)))
        if y != 0
        else mul(ct, full_like(x, 0)),
    ),
)
vjp_rules[pow_p] = lambda x, y: (
    pow(x, y),
    lambda ct: (mul(ct, mul(y, pow(x, sub(y, _one(y))))), mul(ct, mul(log(x), pow(x, y)))),
)
vjp_rules[max_p] = lambda x, y: (
    max(x, y),
    lambda ct: (mul(ct, _pick(x, y, gt)), mul(ct, _pick(y, x, gt))),
)
vjp_rules[min_p] = lambda x, y: (
    min(x, y),
    lambda ct: (mul(ct, _pick(x, y, lt)), mul(ct, _pick(y, x, lt))),
)


def full_like(x: Any, value: Any) -> Array:
    """A constant array of `x`'s shape and dtype."""
    a = get_aval(x)
    return Array(np.full(a.shape, value, a.dtype))


def _one(x: Any) -> Array:
    return full_like(x, 1)


def _pick(x: Any, y: Any, better: Callable[[Any, Any], Any]) -> Any:
    """1 where x wins, 0.5 on a tie, 0 where it loses: JAX's convention for max/min."""
    wins = convert_element_type(better(x, y), get_aval(x).dtype)
    ties = convert_element_type(eq(x, y), get_aval(x).dtype)
    return add(wins, mul(ties, full_like(x, 0.5)))


# ---------------------------------------------------------------- comparisons and select

# A comparison of weakly typed operands is weakly typed (a bool), as JAX's is.
gt_p = Primitive("gt", np.greater)
lt_p = Primitive("lt", np.less)
ge_p = Primitive("ge", np.greater_equal)
le_p = Primitive("le", np.less_equal)
eq_p = Primitive("eq", np.equal)
ne_p = Primitive("ne", np.not_equal)
select_p = Primitive(
    "select",
    lambda c, x, y: np.asarray(np.where(c, x, y)),
    lambda avals, params: avals[1].weak_type and avals[2].weak_type,
)


def gt(x: Any, y: Any) -> Any:
    return bind(gt_p, x, y)


def lt(x: Any, y: Any) -> Any:
    return bind(lt_p, x, y)


def ge(x: Any, y: Any) -> Any:
    return bind(ge_p, x, y)


def le(x: Any, y: Any) -> Any:
    return bind(le_p, x, y)


def eq(x: Any, y: Any) -> Any:
    return bind(eq_p, x, y)


def ne(x: Any, y: Any) -> Any:
    return bind(ne_p, x, y)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return bind(select_p, pred, on_true, on_false)


for _p in (gt_p, lt_p, ge_p, le_p, eq_p, ne_p):
    jvp_rules[_p] = (lambda prim: lambda p, t: (bind(prim, *p), None))(_p)
    vjp_rules[_p] = (lambda prim: lambda x, y: (bind(prim, x, y), lambda ct: (None, None)))(_p)


def _zero_tangent(x: Any) -> Array:
    """The zero tangent of x: x's dtype, shape and weak type (JAX instantiates it from x's aval)."""
    a = get_aval(x)
    return Array(np.zeros(a.shape, a.dtype), a.weak_type)


jvp_rules[select_p] = lambda p, t: (
    select(*p),
    None
    if t[1] is None and t[2] is None
    else select(
        p[0],
        t[1] if t[1] is not None else _zero_tangent(p[1]),
        t[2] if t[2] is not None else _zero_tangent(p[2]),
    ),
)
vjp_rules[select_p] = lambda c, x, y: (
    select(c, x, y),
    lambda ct: (None, select(c, ct, full_like(ct, 0)), select(c, full_like(ct, 0), ct)),
)

for _p in (
    add_p,
    sub_p,
    mul_p,
    div_p,
    neg_p,
    max_p,
    min_p,
    pow_p,
    integer_pow_p,
    sin_p,
    cos_p,
    exp_p,
    log_p,
    tanh_p,
    sqrt_p,
    sign_p,
    gt_p,
    lt_p,
    ge_p,
    le_p,
    eq_p,
    ne_p,
    select_p,
):
    batch_rules[_p] = elementwise_batch(_p)


# ---------------------------------------------------------------- dtype conversion

convert_element_type_p = Primitive(
    "convert_element_type",
    lambda x, *, new_dtype, weak_type: x.astype(new_dtype),
    lambda avals, params: bool(params["weak_type"]),
)


def convert_weak(x: Any, new_dtype: np.dtype, weak_type: bool = False) -> Any:
    """`x` as `new_dtype` with the given weak flag (no dtype policy: the harness's own conversions)."""
    return bind(convert_element_type_p, x, new_dtype=np.dtype(new_dtype), weak_type=weak_type)


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """`lax.convert_element_type`: an explicit dtype request, so it goes through the dtype policy."""
    from jax_conformance.adapters.reference.dtypes import check_user_dtype

    dtype = check_user_dtype(new_dtype, "convert_element_type")
    assert dtype is not None
    x = operand if hasattr(operand, "aval") else _as_array(operand)
    if get_aval(x).dtype == dtype and not get_aval(x).weak_type:
        return x
    return convert_weak(x, dtype)


def _as_array(x: Any) -> Array:
    a = get_aval(x)
    return Array(np.asarray(x, a.dtype), a.weak_type)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"


jvp_rules[convert_element_type_p] = lambda p, t, *, new_dtype, weak_type: (
    convert_weak(p[0], new_dtype, weak_type),
    t_map(t[0], lambda a: convert_weak(a, new_dtype, weak_type)) if _is_float(new_dtype) else None,
)
vjp_rules[convert_element_type_p] = lambda x, *, new_dtype, weak_type: (
    convert_weak(x, new_dtype, weak_type),
    lambda ct: (
        convert_weak(ct, get_aval(x).dtype, get_aval(x).weak_type)
        if _is_float(get_aval(x).dtype)
        else None,
    ),
)
batch_rules[convert_element_type_p] = elementwise_batch(convert_element_type_p)


# ---------------------------------------------------------------- shapes: broadcast, reshape, transpose

broadcast_to_p = Primitive("broadcast_to", lambda x, *, shape: np.broadcast_to(x, shape).copy())
reshape_p = Primitive("reshape", lambda x, *, new_shape: np.reshape(x, new_shape))
transpose_p = Primitive("transpose", lambda x, *, permutation: np.transpose(x, permutation))


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    shape = tuple(shape)
    return x if get_aval(x).shape == shape else bind(broadcast_to_p, x, shape=shape)


def broadcast(operand: Any, sizes: tuple[int, ...]) -> Any:
    """`lax.broadcast`: new leading axes of these sizes (a Python scalar becomes a weak array first)."""
    from jax_conformance.adapters.reference.numpy_dtypes import lift

    x = lift(operand)
    return broadcast_to(x, (*sizes, *get_aval(x).shape))


def reshape(x: Any, new_shape: tuple[int, ...]) -> Any:
    return bind(reshape_p, x, new_shape=tuple(new_shape))


def transpose(x: Any, permutation: tuple[int, ...]) -> Any:
    return bind(transpose_p, x, permutation=tuple(permutation))


def _unbroadcast(ct: Any, shape: tuple[int, ...]) -> Any:
    """Sum a cotangent back down to the shape the operand had before broadcasting."""
    ct_shape = get_aval(ct).shape
    lead = len(ct_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and ct_shape[lead + i] != 1
    )
    return reshape(reduce_sum(ct, axes), shape) if axes else ct


jvp_rules[broadcast_to_p] = lambda p, t, *, shape: (
    broadcast_to(p[0], shape),
    t_map(t[0], lambda a: broadcast_to(a, shape)),
)
vjp_rules[broadcast_to_p] = lambda x, *, shape: (
    broadcast_to(x, shape),
    lambda ct: (_unbroadcast(ct, get_aval(x).shape),),
)
jvp_rules[reshape_p] = lambda p, t, *, new_shape: (
    reshape(p[0], new_shape),
    t_map(t[0], lambda a: reshape(a, new_shape)),
)
vjp_rules[reshape_p] = lambda x, *, new_shape: (
    reshape(x, new_shape),
    lambda ct: (reshape(ct, get_aval(x).shape),),
)
jvp_rules[transpose_p] = lambda p, t, *, permutation: (
    transpose(p[0], permutation),
    t_map(t[0], lambda a: transpose(a, permutation)),
)
vjp_rules[transpose_p] = lambda x, *, permutation: (
    transpose(x, permutation),
    lambda ct: (transpose(ct, tuple(np.argsort(permutation))),),
)


def _broadcast_batch(
    vals: list[Any], dims: list[Any], *, shape: tuple[int, ...]
) -> tuple[Any, Any]:
    x = vals[0]
    size, inner = get_aval(x).shape[0], get_aval(x).shape[1:]
    x = reshape(x, (size,) + (1,) * (len(shape) - len(inner)) + inner)
    return broadcast_to(x, (size, *shape)), 0


batch_rules[broadcast_to_p] = _broadcast_batch
batch_rules[reshape_p] = lambda vals, dims, *, new_shape: (
    reshape(vals[0], (get_aval(vals[0]).shape[0], *new_shape)),
    0,
)
batch_rules[transpose_p] = lambda vals, dims, *, permutation: (
    transpose(vals[0], (0, *(p + 1 for p in permutation))),
    0,
)


# ---------------------------------------------------------------- reductions

# A reduction's result is strongly typed (jnp.sum(2.0) is a plain float32), as JAX's is.
reduce_sum_p = Primitive(
    "reduce_sum", lambda x, *, axes: np.sum(x, axis=axes, dtype=x.dtype), never_weak
)
reduce_max_p = Primitive("reduce_max", lambda x, *, axes: np.max(x, axis=axes), never_weak)
reduce_min_p = Primitive("reduce_min", lambda x, *, axes: np.min(x, axis=axes), never_weak)


def reduce_sum(x: Any, axes: tuple[int, ...]) -> Any:
    return bind(reduce_sum_p, x, axes=tuple(axes))


def reduce_max(x: Any, axes: tuple[int, ...]) -> Any:
    return bind(reduce_max_p, x, axes=tuple(axes))


def reduce_min(x: Any, axes: tuple[int, ...]) -> Any:
    return bind(reduce_min_p, x, axes=tuple(axes))


def _expand_back(ct: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return broadcast_to(reshape(ct, kept), shape)


def _argmax_mask(x: Any, out: Any, axes: tuple[int, ...]) -> Any:
    """The positions holding the extreme value, each weighted 1/count (JAX's tie rule)."""
    shape = get_aval(x).shape
    hit = convert_element_type(eq(x, _expand_back(out, shape, axes)), get_aval(x).dtype)
    return div(hit, _expand_back(reduce_sum(hit, axes), shape, axes))


jvp_rules[reduce_sum_p] = lambda p, t, *, axes: (
    reduce_sum(p[0], axes),
    t_map(t[0], lambda a: reduce_sum(a, axes)),
)
vjp_rules[reduce_sum_p] = lambda x, *, axes: (
    reduce_sum(x, axes),
    lambda ct: (_expand_back(ct, get_aval(x).shape, axes),),
)
for _p, _f in ((reduce_max_p, reduce_max), (reduce_min_p, reduce_min)):
    jvp_rules[_p] = (
        lambda f: (
            lambda p, t, *, axes: (
                f(p[0], axes),
                t_map(
                    t[0],
                    lambda a: reduce_sum(mul(a, _argmax_mask(p[0], f(p[0], axes), axes)), axes),
                ),
            )
        )
    )(_f)
    vjp_rules[_p] = (
        lambda f: (
            lambda x, *, axes: (
                f(x, axes),
                lambda ct: (
                    mul(
                        _expand_back(ct, get_aval(x).shape, axes), _argmax_mask(x, f(x, axes), axes)
                    ),
                ),
            )
        )
    )(_f)
for _p in (reduce_sum_p, reduce_max_p, reduce_min_p):
    batch_rules[_p] = (
        lambda prim: (
            lambda vals, dims, *, axes: (bind(prim, vals[0], axes=tuple(a + 1 for a in axes)), 0)
        )
    )(_p)
