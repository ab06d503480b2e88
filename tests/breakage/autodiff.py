"""Breakage adapters for specs/autodiff (the rules `jax-conformance diff` found the reference missing).

Each class is the real `jax` adapter with one rule broken in its worker, after `import jax`:
- `JvpTangentsUnchecked`: jax.jvp no longer refuses a tangent of the wrong dtype or shape (a
  mismatched tangent is replaced by a zero of the primal's tangent type before JAX sees it);
- `ResidualsUnchecked`: a custom_vjp fwd may store any Python object as a residual (fwd's
  residuals are dropped from JAX's view and handed to bwd directly).
tests/test_breakage.py runs the autodiff specs under each (tests/breakage/autodiff_area.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

from jax_conformance.adapters.jax import JaxAdapter


class _Broken(JaxAdapter):
    breaks: ClassVar[str] = ""

    def namespace(self) -> dict[str, Any]:
        ns = super().namespace()
        if not getattr(self, "_patched", False):
            self._patched = True
            self.patch(ns)
            self.notes.append(f"breakage {type(self).__name__}: {self.breaks}")
        return ns

    def patch(self, ns: dict[str, Any]) -> None:
        raise NotImplementedError


class JvpTangentsUnchecked(_Broken):
    breaks = "jax.jvp accepts tangents whose dtype or shape is not the primal's"

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp, np = ns["jax"], ns["jnp"], ns["np"]
        real = jax.jvp

        def fit(p: Any, t: Any) -> Any:
            p_dtype, t_dtype = jnp.result_type(p), jnp.result_type(t)
            want = p_dtype if jnp.issubdtype(p_dtype, jnp.inexact) else jax.dtypes.float0
            if t_dtype == want and np.shape(t) == np.shape(p):
                return t
            return np.zeros(np.shape(p), want) if want == jax.dtypes.float0 else jnp.zeros_like(p)

        def jvp(fun: Any, primals: Any, tangents: Any, *args: Any, **kwargs: Any) -> Any:
            fitted = type(tangents)(fit(p, t) for p, t in zip(primals, tangents, strict=False))
            return real(fun, primals, fitted, *args, **kwargs)

        jax.jvp = jvp


class ResidualsUnchecked(_Broken):
    breaks = "a custom_vjp fwd may return residuals that are not JAX types"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real_defvjp = jax.custom_vjp.defvjp

        def defvjp(self_: Any, fwd: Any, bwd: Any, *args: Any, **kwargs: Any) -> Any:
            box: dict[str, Any] = {}

            def fwd2(*a: Any, **k: Any) -> Any:
                out, res = fwd(*a, **k)
                box["res"] = res  # kept outside JAX: only the primal output goes through
                return out, None

            def bwd2(*a: Any) -> Any:
                return bwd(*a[:-2], box["res"], a[-1])

            return real_defvjp(self_, fwd2, bwd2, *args, **kwargs)

        jax.custom_vjp.defvjp = defvjp


class FwdRunsWithoutDifferentiation(_Broken):
    breaks = (
        "a custom_vjp function called without differentiation runs fwd (and stages its residuals)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        import threading

        jax, jnp = ns["jax"], ns["jnp"]
        real_call = jax.custom_vjp.__call__
        inside = threading.local()

        def call(self_: Any, *args: Any, **kwargs: Any) -> Any:
            if getattr(inside, "on", False) or self_.fwd is None:
                return real_call(self_, *args, **kwargs)
            inside.on = True
            try:
                out, res = self_.fwd(*args, **kwargs)
            finally:
                inside.on = False
            jax.tree_util.tree_map(
                jnp.asarray, res
            )  # staged as JAX values: a string is refused here
            return out

        jax.custom_vjp.__call__ = call
