"""What travels from the parent to a mode's process: arguments as expressions or pickled values.

JAX-free. A JAX array the caller passes is sent as NumPy inside `SentArray` and becomes a JAX
array again in the mode's process (`jnp.asarray`: its dtype then follows that mode, as an array
the user's code makes there would).
"""

from __future__ import annotations

import base64
import pickle
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Expr:
    """An argument written as a Python expression, evaluated in each mode's process with jax, jnp, np
    and lax in scope: `Expr("jnp.array([0.5, 2.0])")` is float32 with x64 off and float64 with it on."""

    source: str


class SentArray:
    def __init__(self, array: Any):
        self.array = array


def _is_jax_array(x: Any) -> bool:
    return (
        type(x).__module__.startswith(("jax", "jaxlib"))
        and hasattr(x, "__array__")
        and hasattr(x, "dtype")
    )


def _to_wire(x: Any) -> Any:
    import numpy as np

    if _is_jax_array(x):
        return SentArray(np.asarray(x))
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_to_wire(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_wire(v) for k, v in x.items()}
    return x


def encode(value: Any) -> dict[str, str]:
    if isinstance(value, Expr):
        return {"expr": value.source}
    return {"pickle": base64.b64encode(pickle.dumps(_to_wire(value))).decode("ascii")}


def decode_pickle(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))  # noqa: S301  (written by this user's own parent process)
