"""The dtype policy, all in one place: defaults, the 64->32 table, and warn / error / allow.

Three doors lead a dtype into the reference, and each has one rule here:
- a dtype the user asks for (`dtype=` of a creation function, `astype`): `check_user_dtype`,
  which warns, raises or allows per `jax_explicit_x64_dtypes` when x64 is off;
- a value without a JAX dtype (a Python scalar, a NumPy array): `dtype_of_input`, which
  canonicalizes silently (NumPy float64 becomes float32 with x64 off, in every mode);
- two operands of an operation: `result_type`, JAX's promotion with weak Python scalars.
Docs: https://docs.jax.dev/en/latest/default_dtypes.html
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np
from jax_conformance.adapters.reference.config import ExplicitX64Mode, config
from jax_conformance.adapters.reference.mutants import mutant

# The dtype of a cotangent for an integer input: no bits, nothing to add.
float0 = np.dtype([("float0", np.void, 0)])

try:  # JAX ships ml_dtypes; without JAX it may be missing, and then bfloat16 is absent.
    import ml_dtypes

    bfloat16: np.dtype | None = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    bfloat16 = None

# With x64 off, every 64-bit type stands for its 32-bit sibling.
TRUNCATE_64: dict[np.dtype, np.dtype] = {
    np.dtype("int64"): np.dtype("int32"),
    np.dtype("uint64"): np.dtype("uint32"),
    np.dtype("float64"): np.dtype("float32"),
    np.dtype("complex128"): np.dtype("complex64"),
}
_GOTCHAS = "https://github.com/jax-ml/jax#current-gotchas"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _table() -> dict[np.dtype, np.dtype]:
    if mutant("uint64-not-truncated"):
        return {k: v for k, v in TRUNCATE_64.items() if k != np.dtype("uint64")}
    return TRUNCATE_64


def default_int() -> np.dtype:
    """int32 with x64 off, int64 with x64 on."""
    if mutant("default-int64-x64-off"):
        return np.dtype("int64")
    return np.dtype("int64" if config.x64_enabled else "int32")


def default_float() -> np.dtype:
    """float32 with x64 off, float64 with x64 on."""
    if mutant("default-float64-x64-off"):
        return np.dtype("float64")
    return np.dtype("float64" if config.x64_enabled else "float32")


def default_complex() -> np.dtype:
    """complex64 with x64 off, complex128 with x64 on."""
    if mutant("default-complex128-x64-off"):
        return np.dtype("complex128")
    return np.dtype("complex128" if config.x64_enabled else "complex64")


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """`jax.dtypes.canonicalize_dtype`: the dtype JAX stores for this one (64->32 with x64 off)."""
    d = to_dtype(dtype)
    if config.x64_enabled or mutant("numpy-input-keeps-64"):
        return d
    return _table().get(d, d)


def to_dtype(dtype: Any) -> np.dtype:
    """np.dtype of a dtype-like (including the reference's scalar types like jnp.float32)."""
    inner = getattr(dtype, "dtype", None)
    if isinstance(inner, np.dtype) and not isinstance(dtype, np.ndarray):
        return inner
    if isinstance(dtype, str) and dtype == "bfloat16" and bfloat16 is not None:
        return bfloat16
    return np.dtype(dtype)


def check_user_dtype(dtype: Any, fun_name: str) -> np.dtype | None:
    """The dtype to use for an explicit request `dtype=...` made in `fun_name` (None stays None)."""
    if dtype is None:
        return None
    # Python's int/float/complex mean "the default of that kind", never an explicit 64-bit request.
    python_kinds = {int: default_int, float: default_float, complex: default_complex}
    if dtype in python_kinds and not mutant("python-int-not-int"):
        return python_kinds[dtype]()
    if dtype is bool:
        return np.dtype(bool)
    requested = to_dtype(dtype)
    table = _table()
    if config.x64_enabled or requested not in table:
        return requested
    truncated = table[requested]
    policy = config.jax_explicit_x64_dtypes
    if policy is ExplicitX64Mode.ALLOW:
        return truncated if mutant("allow-mode-truncates") else requested
    if policy is ExplicitX64Mode.ERROR and not mutant("error-mode-warns"):
        raise ValueError(
            f"Explicitly requested dtype {requested} requested in {fun_name} is not available. "
            "To enable more dtypes, set the jax_enable_x64 or allow_explicit_x64_dtypes "
            f"configuration options.See {_GOTCHAS} for more."
        )
    if not mutant("no-truncation-warning"):
        category = RuntimeWarning if mutant("warning-not-userwarning") else UserWarning
        warnings.warn(
            f"Explicitly requested dtype {requested} requested in {fun_name} is not available, "
            f"and will be truncated to dtype {truncated}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
            f"variable. See {_GOTCHAS} for more.",
            category,
            stacklevel=_user_stacklevel(),
        )
    return requested if mutant("warn-without-truncating") else truncated


def _user_stacklevel() -> int:
    """Point the warning at the first frame outside the reference package (the user's call)."""
    frame, level = sys._getframe(1), 1
    while (
        frame is not None
        and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR
    ):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def python_scalar_dtype(x: bool | int | float | complex) -> np.dtype:
    """The (weak) dtype a Python scalar takes: bool, or the default of its kind."""
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return default_int()
    if isinstance(x, float):
        return default_float()
    return default_complex()


def dtype_of_input(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak_type) of a value entering JAX without a JAX dtype; NumPy 64 bits canonicalized silently."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return python_scalar_dtype(x), not isinstance(x, bool)
    return canonicalize_dtype(np.asarray(x).dtype), False


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "V": 2, "c": 3}


def _kind_default(rank: int) -> np.dtype:
    return [np.dtype(bool), default_int(), default_float(), default_complex()][rank]


def _complex_for(f: np.dtype) -> np.dtype:
    """The complex type that holds a float type: complex128 for float64, complex64 below."""
    return np.dtype("complex128" if f.itemsize == 8 else "complex64")


def result_type(a: tuple[np.dtype, bool], b: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a binary operation on two (dtype, weak) operands: JAX's lattice, simplified."""
    (da, wa), (db, wb) = a, b
    ra, rb = _KIND_RANK[da.kind], _KIND_RANK[db.kind]
    if wa and wb:
        if (
            ra == rb
        ):  # the wider: weak values of one kind differ only when one was made inside enable_x64
            return (da if da.itemsize >= db.itemsize else db), True
        if {ra, rb} == {
            2,
            3,
        }:  # a weak float64 (made inside enable_x64) with a Python complex: complex128
            (c, f) = (da, db) if ra == 3 else (db, da)
            return (c if c.itemsize >= 2 * f.itemsize else _complex_for(f)), True
        return (da if ra > rb else db), True
    if wa or wb:
        (strong, rs), (rw, dw) = ((db, rb), (ra, da)) if wa else ((da, ra), (rb, db))
        if rw <= rs:
            return strong, False  # a Python scalar never widens an array: f32 * 2.0 is f32
        if (
            rw == 3 and rs == 2
        ):  # a Python complex meeting a float array: the complex of its width, strong
            return _complex_for(strong), False
        return _kind_default(rw) if dw.kind != "V" else dw, True
    if {ra, rb} == {2, 3}:  # complex64 with float64 is complex128, as in JAX's lattice
        (c, f) = (da, db) if ra == 3 else (db, da)
        return (c if c.itemsize >= 2 * f.itemsize else _complex_for(f)), False
    if ra != rb:  # int * float16 is float16 in JAX, not float64 as in NumPy
        return (da if ra > rb else db), False
    if bfloat16 is not None and {da, db} == {bfloat16, np.dtype("float16")}:
        return np.dtype(
            "float32"
        ), False  # the two 16-bit floats meet in float32 (NumPy cannot promote them)
    out = np.promote_types(da, db)
    if out.kind == "f" and da.kind in "iu" and db.kind in "iu":
        return (
            default_float(),
            True,
        )  # a signed int with uint64: no int holds both; JAX's weak float
    if out.itemsize == 8 and da.itemsize < 8 and db.itemsize < 8 and out.kind in "iu":
        out = canonicalize_dtype(out)  # uint32 + int32: int64 only with x64 on
    return out, False


def issubdtype(a: Any, b: Any) -> bool:
    """`jax.dtypes.issubdtype` for the dtypes the reference knows."""
    if to_dtype(a) == float0:
        return b is float0 or (isinstance(b, np.dtype) and b == float0)
    if (
        bfloat16 is not None
        and to_dtype(a) == bfloat16
        and isinstance(b, type)
        and b in (np.floating, np.inexact, np.number, np.generic)
    ):
        return True  # ml_dtypes' bfloat16 is not a NumPy floating type, but JAX counts it as one
    return bool(np.issubdtype(to_dtype(a), b if isinstance(b, type) else to_dtype(b)))
