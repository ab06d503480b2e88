"""Which custom_jvp / custom_vjp rules a public entry point reaches, found by running it.

A library's rule is normally reached through a wrapper: a plain function (optax `scale_gradient`),
`functools.partial` or `functools.wraps`, a method, equinox's `filter_custom_vjp`. `reached_rules`
calls the entry point once with the rule classes' `__call__` patched to record each rule object and
the arguments it was called with; where the wrapper jits before the rule (so nothing is recorded on
a cached trace), `traced_kinds` reads the kinds from the jaxpr's custom_jvp_call / custom_vjp_call
equations. `without_rules` runs code with every rule replaced by its undecorated function (plain
autodiff of the same entry point, for x64.no-extra-warning). Used by check's mode process only.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import jax


@dataclass(frozen=True)
class Reached:
    """One rule the entry point called: the rule object, its kind, and the arguments of its first call
    (None where they were tracers: the rule was called under a transform inside the wrapper)."""

    rule: object
    kind: str  # custom_vjp or custom_jvp
    args: tuple[object, ...] | None
    kwargs: dict[str, object]

    @property
    def name(self) -> str:
        """MODULE:QUALNAME of the rule's undecorated function (what a user would check directly)."""
        fun = undecorated(self.rule)
        module = getattr(fun, "__module__", None) or "?"
        return f"{module}:{getattr(fun, '__qualname__', None) or repr(fun)}"


def rule_classes() -> tuple[type, ...]:
    """jax.custom_jvp, jax.custom_vjp and, where this JAX has it, custom_vjp3 (jax_custom_vjp3)."""
    classes: list[type] = [jax.custom_jvp, jax.custom_vjp]
    with contextlib.suppress(ImportError, AttributeError):
        classes.append(importlib.import_module("jax._src.hijax").custom_vjp3)
    return tuple(classes)


def kind_of(rule: object) -> str | None:
    """custom_vjp, custom_jvp, or None for an object that is no rule."""
    if isinstance(rule, jax.custom_jvp):
        return "custom_jvp"
    if isinstance(rule, jax.custom_vjp) or (
        type(rule).__name__ == "custom_vjp3" and hasattr(rule, "fwd") and hasattr(rule, "bwd")
    ):
        return "custom_vjp"
    return None


def undecorated(rule: object) -> Callable[..., object]:
    """The function a rule decorates (`fun`; custom_vjp3 calls it `f`)."""
    fun = getattr(rule, "fun", None) or getattr(rule, "f", None)
    if not callable(fun):
        raise TypeError(f"{type(rule).__name__} without its function")
    return fun


Hook = Callable[[object, Callable[..., object], tuple[object, ...], dict[str, object]], object]


@contextlib.contextmanager
def patched_calls(hook: Hook) -> Iterator[None]:
    """Every rule call goes through hook(rule, original __call__, args, kwargs) inside the block."""
    saved = {cls: cls.__dict__.get("__call__") for cls in rule_classes()}
    originals = {cls: cls.__call__ for cls in saved}  # read before any is patched (subclasses)
    for cls, original in originals.items():

        def call(self: object, *a: object, _orig: Callable[..., object] = original, **k: object):
            return hook(self, _orig, a, k)

        cls.__call__ = call  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, own in saved.items():
            if own is None:
                delattr(cls, "__call__")
            else:
                cls.__call__ = own  # type: ignore[method-assign]


def reached_rules(
    fn: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
) -> tuple[list[Reached], BaseException | None]:
    """The rules one eager call of fn reaches, in the order first called, and what the call raised."""
    found: list[Reached] = []

    def record(
        rule: object, original: Callable[..., object], a: tuple[object, ...], k: dict[str, object]
    ) -> object:
        if not any(r.rule is rule for r in found):
            concrete = not any(
                isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((a, k))
            )
            found.append(Reached(rule, kind_of(rule) or "?", a if concrete else None, dict(k)))
        return original(rule, *a, **k)

    raised: BaseException | None = None
    with patched_calls(record):
        try:
            fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001  (the items say what the call raises)
            raised = exc
    return found, raised


def traced_kinds(fn: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]):
    """The rule kinds in fn's jaxpr (custom_vjp_call / custom_jvp_call equations, nested ones too);
    empty where fn cannot be traced with these arguments."""
    try:
        closed = jax.make_jaxpr(lambda *a: fn(*a, **kwargs))(*args)
    except Exception:  # noqa: BLE001  (then no kind is known from the trace)
        return set()
    kinds: set[str] = set()
    _walk(closed.jaxpr, kinds)
    return kinds


def _walk(jaxpr: object, kinds: set[str]) -> None:
    for eqn in getattr(jaxpr, "eqns", ()):
        name = eqn.primitive.name
        if name.startswith("custom_vjp_call"):
            kinds.add("custom_vjp")
        elif name.startswith("custom_jvp_call"):
            kinds.add("custom_jvp")
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    _walk(inner, kinds)


def without_rules() -> contextlib.AbstractContextManager[None]:
    """Inside the block every rule call is a call of its undecorated function (plain autodiff)."""
    return patched_calls(lambda rule, _original, a, k: undecorated(rule)(*a, **k))
