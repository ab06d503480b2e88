"""What travels between the parent and a mode's process: arguments as expressions or pickled
values one way, the mode's results (one JSON line) the other.

JAX-free. A JAX array the caller passes is sent as NumPy inside `SentArray` and becomes a JAX
array again in the mode's process (`jnp.asarray`: its dtype then follows that mode, as an array
the user's code makes there would). The TypedDicts below name the JSON records both sides read
and write (the runner prints them, `engine.collect` reads them); they add no field.
"""

from __future__ import annotations

import base64
import pickle
from dataclasses import dataclass
from typing import Required, TypedDict


@dataclass(frozen=True)
class Expr:
    """An argument written as a Python expression, evaluated in each mode's process with jax, jnp, np
    and lax in scope: `Expr("jnp.array([0.5, 2.0])")` is float32 with x64 off and float64 with it on."""

    source: str


class SentArray:
    """A JAX array the caller passed, as the NumPy array that travels in its place."""

    def __init__(self, array: object):
        self.array = array


# ---------------------------------------------------------------- the request (parent -> mode)


class ArgWire(TypedDict, total=False):
    """One argument: {"expr": Python source} or {"pickle": base64 of the pickled value}."""

    expr: str
    pickle: str


class CheckRequest(TypedDict, total=False):
    """One check as the parent writes it (`engine.Target.request`) or the runner's command line
    gives it (no label, no kwargs)."""

    target: Required[str]
    label: str
    args: list[ArgWire]
    kwargs: dict[str, ArgWire]
    kwargs_expr: str | None
    nondiff: list[int]


# ---------------------------------------------------------------- check --package (parent <-> finder)


class RuleConfig(TypedDict, total=False):
    """One rule's arguments in the library's [tool.jax-conformance.rules."MODULE:NAME"] table."""

    args: list[str]  # expressions, evaluated in each mode
    kwargs: str  # an expression giving a dict
    nondiff: list[int]
    skip: list[str]  # items not judged


class PackageRequest(TypedDict, total=False):
    """What the parent sends the finder: the package and the library's table."""

    package: Required[str]
    exclude: list[str]  # module name patterns not walked
    skip: list[str]  # MODULE:NAME patterns listed, not checked
    rules: dict[str, RuleConfig]


class FoundRule(RuleConfig, total=False):
    """One rule the finder found: its name and kind, and its arguments with how they were found
    (`how`), or what it needs to be checked (`needs`)."""

    target: Required[str]  # MODULE:NAME
    kind: Required[str]  # custom_jvp, custom_vjp, custom_gradient ("?": configured, not found)
    how: str
    needs: str


class FoundRules(TypedDict, total=False):
    """The finder's answer (one JSON line), or {"error": why} when the package does not import."""

    modules: list[str]
    import_errors: list[list[str]]  # [module, why]
    rules: list[FoundRule]
    error: str


# ---------------------------------------------------------------- arguments


def _is_jax_array(x: object) -> bool:
    return (
        type(x).__module__.startswith(("jax", "jaxlib"))
        and hasattr(x, "__array__")
        and hasattr(x, "dtype")
    )


def _to_wire(x: object) -> object:
    import numpy as np

    if _is_jax_array(x):
        return SentArray(np.asarray(x))
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_to_wire(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_wire(v) for k, v in x.items()}
    return x


def encode(value: object) -> ArgWire:
    if isinstance(value, Expr):
        return {"expr": value.source}
    return {"pickle": base64.b64encode(pickle.dumps(_to_wire(value))).decode("ascii")}


def decode_pickle(text: str) -> object:
    return pickle.loads(base64.b64decode(text))  # noqa: S301  (written by this user's own parent process)
