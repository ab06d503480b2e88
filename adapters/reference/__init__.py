"""The `reference` adapter: a strict, JAX-free executable model of the documented semantics.

Where to look:
- the dtype policy (defaults, the 64->32 table, warn / error / allow): `dtypes.py`;
- the flags and start-up from the environment: `config.py`;
- the tracing core (Primitive, bind, Trace, Tracer; the closure check): `core.py`;
- primitives and their rules: `lax.py` (elementwise, conversion, shapes, reductions; the rule tables),
  `lax_indexing.py`, `lax_control.py` (scan, cond, while_loop);
- jax.numpy: `numpy_api.py` (the namespace) over `numpy_dtypes.py` (scalar types, promotion, dtype
  queries), `numpy_creation.py`, `numpy_ops.py`;
- transformations: `ad.py` (jvp, vjp, grad), `vmap.py`, `jit.py` (IR, cache key);
- custom_jvp / custom_vjp (the Tracer check, the bwd argument order): `custom.py` (closure_convert;
  the map of the rules) over `custom_call.py` (shared), `custom_vjp.py`, `custom_jvp.py`;
- mutants for `jax-conformance mutate`: `mutants.py`.
Nothing here imports JAX (tests/reference/test_no_jax.py checks it).
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import types
from typing import Any

import numpy as np
from jax_conformance import __version__ as suite_version
from jax_conformance.adapters import Adapter
from jax_conformance.errors import AdapterStartError
from jax_conformance.mode import Mode
from jax_conformance.records import AdapterInfo

BEHAVIOUR_VERSION = "0.10.2"  # the JAX release whose documented behaviour this models


def build_jax_module() -> types.ModuleType:
    """Read the environment (as `import jax` would) and assemble the `jax` namespace."""
    from jax_conformance.adapters.reference import mutants

    mutants.load_from_environ()
    from jax_conformance.adapters.reference import (
        ad,
        custom,
        dtypes,
        errors,
        jit,
        lax,
        lax_control,
        lax_indexing,
        numpy_api,
        numpy_dtypes,
        promotion,
        tree_util,
        vmap,
    )
    from jax_conformance.adapters.reference.config import config, enable_x64

    config.load_from_environ()  # an invalid JAX_ENABLE_X64 fails here, like `import jax`
    jax = types.ModuleType("jax", "The reference model of JAX (no JAX inside).")
    dtypes_mod = types.ModuleType("jax.dtypes")
    dtypes_mod.__dict__.update(
        canonicalize_dtype=dtypes.canonicalize_dtype,
        float0=dtypes.float0,
        issubdtype=dtypes.issubdtype,
        result_type=numpy_dtypes.dtypes_result_type,
        TypePromotionError=promotion.TypePromotionError,
        dtype=lambda x: dtypes.dtype_of_input(x)[0] if not hasattr(x, "dtype") else x.dtype,
    )
    if dtypes.bfloat16 is not None:
        dtypes_mod.bfloat16 = dtypes.bfloat16  # type: ignore[attr-defined]
    jnp = types.ModuleType("jax.numpy")
    jnp.__dict__.update({k: getattr(numpy_api, k) for k in numpy_api.__all__})
    lax_mod = types.ModuleType("jax.lax")
    for part in (
        lax,
        lax_indexing,
        lax_control,
    ):  # public functions and rule tables; not primitives, not imports
        lax_mod.__dict__.update(
            {
                k: v
                for k, v in vars(part).items()
                if not k.startswith("_")
                and not k.endswith("_p")
                and k not in lax.RULE_HELPERS
                and k
                not in (
                    "annotations",
                    "np",
                    "Any",
                    "Callable",
                    "Array",
                    "Primitive",
                    "bind",
                    "get_aval",
                    "contextlib",
                )
            }
        )
    tu = types.ModuleType("jax.tree_util")
    tu.__dict__.update(
        tree_map=tree_util.tree_map,
        tree_flatten=tree_util.tree_flatten,
        tree_unflatten=tree_util.tree_unflatten,
        tree_leaves=tree_util.tree_leaves,
        tree_structure=tree_util.tree_structure,
        PyTreeDef=tree_util.PyTreeDef,
    )
    cd = types.ModuleType("jax.custom_derivatives")
    cd.__dict__.update(
        custom_jvp=custom.custom_jvp,
        custom_vjp=custom.custom_vjp,
        closure_convert=custom.closure_convert,
        SymbolicZero=custom.SymbolicZero,
        CustomVJPPrimal=custom.CustomVJPPrimal,
        zero_from_primal=custom.zero_from_primal,
    )
    experimental = types.ModuleType(
        "jax.experimental", "Empty: enable_x64/disable_x64 were removed in JAX 0.9.0."
    )
    err = types.ModuleType("jax.errors")
    err.__dict__.update({k: getattr(errors, k) for k in errors.__all__})
    jax.__dict__.update(
        __version__=BEHAVIOUR_VERSION,
        config=config,
        enable_x64=enable_x64,
        numpy=jnp,
        lax=lax_mod,
        dtypes=dtypes_mod,
        errors=err,
        tree_util=tu,
        tree=tree_util.build_tree_module(),
        custom_derivatives=cd,
        experimental=experimental,
        tree_map=tree_util.tree_map,
        tree_leaves=tree_util.tree_leaves,
        tree_structure=tree_util.tree_structure,
        jit=jit.jit,
        disable_jit=jit.disable_jit,
        ShapeDtypeStruct=jit.ShapeDtypeStruct,
        make_jaxpr=jit.make_jaxpr,
        vmap=vmap.vmap,
        jvp=ad.jvp,
        vjp=ad.vjp,
        grad=ad.grad,
        value_and_grad=ad.value_and_grad,
        custom_jvp=custom.custom_jvp,
        custom_vjp=custom.custom_vjp,
        closure_convert=custom.closure_convert,
        Array=numpy_api.ndarray,
        devices=lambda backend=None: ["CpuDevice(id=0)"],
        default_backend=lambda: "cpu",
        device_put=lambda x, device=None: tree_util.tree_map(numpy_api.asarray, x),
        block_until_ready=lambda x: x,
        checkpoint=custom.checkpoint,
        remat=custom.checkpoint,
        jacfwd=ad.jacfwd,
        eval_shape=_eval_shape,
        jacrev=_jacrev,
        numpy_dtype_promotion=_numpy_dtype_promotion,
        # Python values stay concrete while the reference's jit traces, so the block needs no switch of its own
        ensure_compile_time_eval=contextlib.nullcontext,
    )
    return jax


# eval_shape's trace cache: (function, argument types, flags) -> the output's shapes and dtypes.
_EVAL_SHAPE_CACHE: dict[Any, Any] = {}


def _eval_shape(fun: Any, *args: Any, **kwargs: Any) -> Any:
    """`jax.eval_shape`: the model runs the function once per argument types (dtype, shape,
    weak_type) and flags, and keeps the shapes, dtypes and weak types of what it returns."""
    from jax_conformance.adapters.reference import jit, numpy_api, tree_util
    from jax_conformance.adapters.reference.config import config
    from jax_conformance.adapters.reference.core import get_aval

    def struct(x: Any) -> Any:
        a = get_aval(numpy_api.asarray(x) if not hasattr(x, "weak_type") else x)
        return jit.ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)

    leaves = tree_util.tree_leaves((args, kwargs))
    key = (
        fun,
        tree_util.tree_structure((args, kwargs)),
        tuple((s.shape, s.dtype, s.weak_type) for s in map(struct, leaves)),
        config.x64_enabled,
        config.jax_explicit_x64_dtypes,
        config.jax_numpy_dtype_promotion,
    )
    if key not in _EVAL_SHAPE_CACHE:
        _EVAL_SHAPE_CACHE[key] = tree_util.tree_map(struct, fun(*args, **kwargs))
    return _EVAL_SHAPE_CACHE[key]


@contextlib.contextmanager
def _numpy_dtype_promotion(value: str) -> Any:
    """`jax.numpy_dtype_promotion('strict' | 'standard')`: the flag for the block (process-wide
    in the model; JAX's is thread-local)."""
    from jax_conformance.adapters.reference.config import config

    previous = config.jax_numpy_dtype_promotion
    config.update("jax_numpy_dtype_promotion", value)
    try:
        yield
    finally:
        config.update("jax_numpy_dtype_promotion", previous)


def _jacrev(fun: Any, argnums: int = 0) -> Any:
    """`jax.jacrev` of a function with one scalar output: its gradient (the one row of its
    Jacobian, by reverse mode); other outputs are not modelled."""
    from jax_conformance.adapters.reference import ad

    return ad.grad(fun, argnums)


class ReferenceAdapter(Adapter):
    name = "reference"

    def __init__(self) -> None:
        self._ns: dict[str, Any] | None = None

    def start(self, mode: Mode) -> None:
        """Build the namespace (reading the environment) and check it started in this mode."""
        jax = self.namespace()["jax"]
        edm = jax.config.jax_explicit_x64_dtypes.name.lower()
        if (jax.config.x64_enabled, edm) != (mode.x64, mode.explicit_x64_dtypes):
            raise AdapterStartError(
                f"the reference started with x64={jax.config.x64_enabled}, "
                f"explicit_x64_dtypes={edm}; expected {mode.label}"
            )

    def namespace(self) -> dict[str, Any]:
        if self._ns is None:
            jax = build_jax_module()
            self._ns = {
                "jax": jax,
                "jnp": jax.numpy,
                "np": np,
                "lax": jax.lax,
                "os": os,
                "sys": sys,
            }
        return self._ns

    def info(self) -> AdapterInfo:
        from jax_conformance.adapters.reference import mutants

        jax = self.namespace()["jax"]
        return {
            "adapter": self.name,
            "implementation_version": suite_version,
            "behaviour_version": BEHAVIOUR_VERSION,
            "backends": ["cpu"],
            "environment": {
                "python": platform.python_version(),
                "numpy": np.__version__,
                "platform": platform.platform(),
                "machine": platform.machine(),
                "models_jax": BEHAVIOUR_VERSION,
                "device_kinds": {"cpu": {"kind": "NumPy on the host CPU", "count": 1}},
                "x64_enabled": bool(jax.config.x64_enabled),
                "explicit_x64_dtypes": jax.config.jax_explicit_x64_dtypes.name.lower(),
                "mutant": mutants.active(),
                "notes": [f"mutant {mutants.active()} is switched on"] if mutants.active() else [],
            },
            "flags": jax.config.flag_table(),
        }

    def dtype_name(self, dtype: Any) -> str:
        from jax_conformance.adapters.reference.dtypes import float0

        d = np.dtype(dtype)
        return "float0" if d == float0 else str(d.name)

    def global_state(self) -> dict[str, Any]:
        jax = self.namespace()["jax"]
        return {f["name"]: f["value"] for f in jax.config.flag_table()}
