"""`jax.lax` indexing primitives: static indexing (`getitem`, `scatter_add`) and indexing with one
traced integer (`dynamic_index`, `index_update`: `x[i]` and `x.at[i].set` under jit or vmap),
each with its jvp / vjp / batch rules registered in `lax`'s rule tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax_conformance.adapters.reference.core import Primitive, bind, get_aval
from jax_conformance.adapters.reference.lax import (
    batch_rules,
    broadcast_to,
    full_like,
    jvp_rules,
    t_map,
    vjp_rules,
)

# ---------------------------------------------------------------- static indexing

getitem_p = Primitive("getitem", lambda x, *, idx: np.asarray(x[idx]))
scatter_add_p = Primitive("scatter_add", lambda x, u, *, idx: _scatter_add(x, u, idx))


def _scatter_add(x: np.ndarray, u: np.ndarray, idx: Any) -> np.ndarray:
    out = np.array(x, copy=True)
    np.add.at(out, idx, u)
    return out


def getitem(x: Any, idx: Any) -> Any:
    return bind(getitem_p, x, idx=idx)


def scatter_add(x: Any, u: Any, idx: Any) -> Any:
    return bind(scatter_add_p, x, u, idx=idx)


def _batched_idx(idx: Any) -> Any:
    return (slice(None), *(idx if isinstance(idx, tuple) else (idx,)))


jvp_rules[getitem_p] = lambda p, t, *, idx: (
    getitem(p[0], idx),
    t_map(t[0], lambda a: getitem(a, idx)),
)
vjp_rules[getitem_p] = lambda x, *, idx: (
    getitem(x, idx),
    lambda ct: (scatter_add(full_like(x, 0), ct, idx),),
)
jvp_rules[scatter_add_p] = lambda p, t, *, idx: (
    scatter_add(p[0], p[1], idx),
    None
    if t[0] is None and t[1] is None
    else scatter_add(
        t[0] if t[0] is not None else full_like(p[0], 0),
        t[1] if t[1] is not None else full_like(p[1], 0),
        idx,
    ),
)
vjp_rules[scatter_add_p] = lambda x, u, *, idx: (
    scatter_add(x, u, idx),
    lambda ct: (ct, getitem(ct, idx)),
)
batch_rules[getitem_p] = lambda vals, dims, *, idx: (getitem(vals[0], _batched_idx(idx)), 0)


def _scatter_batch(vals: list[Any], dims: list[Any], *, idx: Any) -> tuple[Any, Any]:
    (x, u), size = (
        vals,
        next(get_aval(v).shape[0] for v, d in zip(vals, dims, strict=True) if d is not None),
    )
    x = x if dims[0] is not None else broadcast_to(x, (size, *get_aval(x).shape))
    u = u if dims[1] is not None else broadcast_to(u, (size, *get_aval(u).shape))
    return scatter_add(x, u, _batched_idx(idx)), 0


batch_rules[scatter_add_p] = _scatter_batch


# ---------------------------------------------------------------- indexing with a traced integer (x[i], x.at[i].set)
# `nbatch` leading axes are shared by x and i (vmap adds one); i picks along the next axis of x.


def _take_rows(x: np.ndarray, i: np.ndarray, *, nbatch: int) -> np.ndarray:
    idx = np.asarray(i).reshape(np.shape(i) + (1,) * (x.ndim - nbatch))
    return np.take_along_axis(x, idx % x.shape[nbatch], axis=nbatch).squeeze(axis=nbatch)


def _put_rows(x: np.ndarray, i: np.ndarray, u: np.ndarray, *, nbatch: int, mode: str) -> np.ndarray:
    idx = np.asarray(i).reshape(np.shape(i) + (1,) * (x.ndim - nbatch)) % x.shape[nbatch]
    vals = np.expand_dims(np.asarray(u, x.dtype), nbatch)
    if mode == "add":
        vals = vals + np.take_along_axis(x, idx, axis=nbatch)
    out = np.array(x, copy=True)
    np.put_along_axis(out, idx, vals, axis=nbatch)
    return out


dynamic_index_p = Primitive("dynamic_index", _take_rows, lambda avals, params: avals[0].weak_type)
index_update_p = Primitive("index_update", _put_rows, lambda avals, params: avals[0].weak_type)


def dynamic_index(x: Any, i: Any, nbatch: int = 0) -> Any:
    return bind(dynamic_index_p, x, i, nbatch=nbatch)


def index_update(x: Any, i: Any, u: Any, mode: str = "set", nbatch: int = 0) -> Any:
    return bind(index_update_p, x, i, u, nbatch=nbatch, mode=mode)


jvp_rules[dynamic_index_p] = lambda p, t, *, nbatch: (
    dynamic_index(p[0], p[1], nbatch),
    t_map(t[0], lambda a: dynamic_index(a, p[1], nbatch)),
)
vjp_rules[dynamic_index_p] = lambda x, i, *, nbatch: (
    dynamic_index(x, i, nbatch),
    lambda ct: (index_update(full_like(x, 0), i, ct, "add", nbatch), None),
)
jvp_rules[index_update_p] = lambda p, t, *, nbatch, mode: (
    index_update(p[0], p[1], p[2], mode, nbatch),
    None
    if t[0] is None and t[2] is None
    else index_update(
        t[0] if t[0] is not None else full_like(p[0], 0),
        p[1],
        t[2] if t[2] is not None else full_like(p[2], 0),
        mode,
        nbatch,
    ),
)
vjp_rules[index_update_p] = lambda x, i, u, *, nbatch, mode: (
    index_update(x, i, u, mode, nbatch),
    lambda ct: (
        ct if mode == "add" else index_update(ct, i, full_like(u, 0), "set", nbatch),
        None,
        dynamic_index(ct, i, nbatch),
    ),
)


def _rows_batch(prim: Primitive) -> Callable[..., Any]:
    def rule(vals: list[Any], dims: list[Any], **params: Any) -> tuple[Any, Any]:
        size = next(get_aval(v).shape[0] for v, d in zip(vals, dims, strict=True) if d is not None)
        vals = [
            v if d is not None else broadcast_to(v, (size, *get_aval(v).shape))
            for v, d in zip(vals, dims, strict=True)
        ]
        return bind(prim, *vals, **{**params, "nbatch": params["nbatch"] + 1}), 0

    return rule


batch_rules[dynamic_index_p] = _rows_batch(dynamic_index_p)
batch_rules[index_update_p] = _rows_batch(index_update_p)
