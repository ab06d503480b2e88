"""`jax.vmap`: batching, as autodidax does it, with the batch dimension always moved to the front.

A BatchTracer holds a value with a leading batch axis (`bdim=0`) or an unbatched one
(`bdim=None`). Custom derivative calls are batched by wrapping their functions and rules,
so a transformation below vmap (grad of vmap) still sees the custom rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import core, lax
from jax_conformance.adapters.reference.core import ShapedArray, Trace, Tracer, get_aval, new_main
from jax_conformance.adapters.reference.tree_util import tree_flatten, tree_unflatten


class BatchTracer(Tracer):
    def __init__(self, trace: Trace, val: Any, bdim: int | None) -> None:
        self._trace, self.val, self.bdim = trace, val, bdim

    @property
    def aval(self) -> ShapedArray:
        a = get_aval(self.val)
        return a if self.bdim is None else ShapedArray(a.shape[1:], a.dtype, a.weak_type)


class BatchTrace(Trace):
    @property
    def axis_size(self) -> int:
        return self.main.global_data

    def pure(self, val: Any) -> BatchTracer:
        if not isinstance(
            val, (core.Array, Tracer)
        ):  # a Python or NumPy scalar: canonical dtype, weak as in JAX
            from jax_conformance.adapters.reference.numpy_dtypes import lift

            val = lift(val)
        return BatchTracer(self, val, None)

    def process_primitive(
        self, prim: core.Primitive, tracers: list[Any], params: dict[str, Any]
    ) -> Any:
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if all(d is None for d in dims):
            return BatchTracer(self, core.bind(prim, *vals, **params), None)
        out, dim = lax.batch_rules[prim](vals, dims, **params)
        return BatchTracer(self, out, dim)

    def batched(self, t: BatchTracer) -> Any:
        """The value with a leading batch axis, broadcast if it had none."""
        return (
            t.val
            if t.bdim is not None
            else lax.broadcast_to(t.val, (self.axis_size, *get_aval(t.val).shape))
        )

    def wrap(self, f: Callable[..., Any]) -> Callable[..., Any]:
        """f over batched values, as a function of the values with their batch axes in front."""

        def g(*leaves: Any) -> Any:
            out = f(*[BatchTracer(self, x, 0) for x in leaves])
            return self.unwrap(out)

        return g

    def unwrap(self, tree: Any) -> Any:
        leaves, treedef = tree_flatten(tree)
        return tree_unflatten(
            treedef, [self.batched(core.full_raise(self, x)) if is_array(x) else x for x in leaves]
        )

    def process_custom_jvp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        batched_call = call.batched(self)
        outs = core.bind_custom_jvp(batched_call, [self.batched(t) for t in tracers])
        return [BatchTracer(self, o, 0) for o in outs]

    def process_custom_vjp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        batched_call = call.batched(self)
        outs = core.bind_custom_vjp(batched_call, [self.batched(t) for t in tracers])
        return [BatchTracer(self, o, 0) for o in outs]


def is_array(x: Any) -> bool:
    """Whether `x` is a value vmap can batch (an array, a tracer, a NumPy or Python number)."""
    return isinstance(x, (core.Array, Tracer, np.ndarray, np.generic, int, float, complex))


def vmap(
    fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None
) -> Callable[..., Any]:
    """`jax.vmap`: fun mapped over an axis of its arguments (in_axes: an int, None, or one per argument)."""

    def wrapped(*args: Any) -> Any:
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                "positional arguments passed to the function, but got "
                f"len(in_axes)={len(axes)}, len(args)={len(args)}"
            )
        flat: list[tuple[Any, int | None]] = []
        structure = []
        for arg, ax in zip(args, axes, strict=True):
            leaves, tree = tree_flatten(arg)
            structure.append(tree)
            flat += [(leaf, ax) for leaf in leaves]
        sizes = {get_aval(x).shape[ax] for x, ax in flat if ax is not None}
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(
                f"vmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}"
                if sizes
                else "vmap must have at least one non-None value in in_axes"
            )
        size = sizes.pop()
        with new_main(BatchTrace, size) as main:
            trace = BatchTrace(main)
            # an unmapped non-array (a function, a string) passes through untouched
            tracers = [
                x
                if ax is None and not is_array(x)
                else BatchTracer(trace, _front(x, ax), None if ax is None else 0)
                for x, ax in flat
            ]
            it = iter(tracers)
            rebuilt = [
                tree_unflatten(t, [next(it) for _ in range(t.num_leaves)]) for t in structure
            ]
            out = fun(*rebuilt)
            o_leaves, o_tree = tree_flatten(out)
            outs = [_out(trace, core.full_raise(trace, o), out_axes) for o in o_leaves]
        return tree_unflatten(o_tree, outs)

    return wrapped


def _front(x: Any, ax: int | None) -> Any:
    from jax_conformance.adapters.reference import numpy_api

    x = numpy_api.asarray(x) if not isinstance(x, (core.Array, Tracer)) else x
    return x if ax in (None, 0) else numpy_api.moveaxis(x, ax, 0)


def _out(trace: BatchTrace, t: BatchTracer, out_axes: Any) -> Any:
    from jax_conformance.adapters.reference import numpy_api

    if out_axes is None:
        if t.bdim is not None:
            raise ValueError("vmap has mapped output but out_axes is None")
        return t.val
    v = trace.batched(t)
    return v if out_axes == 0 else numpy_api.moveaxis(v, 0, out_axes)
