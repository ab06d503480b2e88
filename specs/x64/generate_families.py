"""Generate the cells of specs/x64/families.yaml: reductions, NumPy 64-bit inputs, the int32
boundary and the ways of switching x64 on, each per mode.

    .venv/bin/python specs/x64/generate_families.py          # write the fam-*.cells.json
    .venv/bin/python specs/x64/generate_families.py --check  # exit 1 if a file differs

Each expectation is a rule written once here (below, with its source), applied to every member
and mode; values come from NumPy on the same input, never typed by hand.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
W = SimpleNamespace(**runpy.run_path(str(HERE.parent / "generate_cells.py")))
NARROW = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}
SINCE = ">=0.10.2"  # measured on 0.10.2; older releases: no block (not applicable) until measured


def canonical(dt: str, x64: bool) -> str:
    """An inferred (not explicitly requested) dtype as the mode has it: 64-bit -> 32-bit with x64 off."""
    return dt if x64 else NARROW.get(dt, dt)


def _per_x64(make: Any) -> list[dict[str, Any]]:
    """One block per x64 setting (the explicit-dtype policy plays no part: nothing is requested)."""
    blocks = []
    for x64 in (False, True):
        block = make(x64)
        blocks.append({"when": {"x64": x64, "version": SINCE}, **block})
    if blocks[0] == {**blocks[1], "when": blocks[0]["when"]}:
        return [{**blocks[0], "when": {"version": SINCE}}]
    return blocks


def _value(x: Any) -> Any:
    """NumPy's value as the spec format writes it (a complex as "re+imj")."""
    return _jsonable(x.tolist())


def _jsonable(v: Any) -> Any:
    if isinstance(v, list):
        return [_jsonable(i) for i in v]
    if isinstance(v, complex):
        return f"{v.real:g}{v.imag:+g}j"
    return v


# --- reductions ------------------------------------------------------------------------------
REDUCTIONS = ["sum", "prod", "cumsum", "cumprod", "mean"]
INTEGER_INPUTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SUM_SOURCE = {
    "url": "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.sum.html",
    "note": "promote_integers=True (default): integer inputs are promoted to the widest available "
    "integer dtype, following NumPy",
}
CUM_SOURCE = {
    "url": "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.cumsum.html",
    "note": "dtype: if not specified, the output dtype will match the input dtype",
}
MEAN_SOURCE = {
    "url": "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.mean.html",
    "note": "dtype None: float32 or float64 for non-floating inputs (which one is not said); "
    "observed on JAX 0.10.2: float64 only for a 64-bit input with x64 on",
}


def reduction_dtype(fn: str, dt: str, x64: bool) -> str:
    """The result dtype of fn over a NumPy array of dt given without a dtype."""
    src = canonical(dt, x64)
    widest_int, widest_uint = ("int64", "uint64") if x64 else ("int32", "uint32")
    if fn in ("sum", "prod"):
        return widest_uint if src.startswith("uint") else widest_int
    if fn in ("cumsum", "cumprod"):
        return widest_int if src == "bool" else src
    return "float64" if src in ("int64", "uint64") else "float32"


def _reduction_cell(fn: str, dt: str) -> dict[str, Any]:
    value = _value(getattr(np, fn)(np.ones(3, dt)))

    def make(x64: bool) -> dict[str, Any]:
        return {"dtype": reduction_dtype(fn, dt, x64), "value": value, "warns": "none"}

    cell: dict[str, Any] = {
        "id": f"{fn}|{dt}",
        "bind": f"a = jnp.asarray(np.ones(3, '{dt}')); f = jnp.{fn}",
    }
    if fn == "mean":
        cell["basis"], cell["source"] = "observed", MEAN_SOURCE
    elif fn.startswith("cum"):
        cell["basis"], cell["source"] = ("observed" if dt == "bool" else "documented"), CUM_SOURCE
        if dt == "bool":  # the docstring says the input's dtype; JAX gives the default int
            cell["documented"] = _per_x64(lambda x64: {"dtype": "bool"})
    else:
        cell["basis"], cell["source"] = "documented", SUM_SOURCE
    cell["expect"] = _per_x64(make)
    return cell


# --- NumPy 64-bit inputs without a dtype ---------------------------------------------------
NUMPY_INPUTS = ["int64", "uint64", "float64", "complex128"]
INFERRING = {
    # member: the call, on `a` (a NumPy 64-bit array or scalar)
    "array": "jnp.array(a)",
    "asarray": "jnp.asarray(a)",
    "array-scalar": "jnp.array(a[0])",
    "zeros_like": "jnp.zeros_like(a)",
    "ones_like": "jnp.ones_like(a)",
    "full_like": "jnp.full_like(a, 2)",
    "empty_like": "jnp.empty_like(a)",
    "add": "jnp.add(a, a)",
    "jit-argument": "jax.jit(lambda x: x)(a)",
    "device_put": "jax.device_put(a)",
}


def _numpy_cell(member: str, dt: str) -> dict[str, Any]:
    """A NumPy 64-bit input without a dtype is not an explicit request: its dtype is canonicalized
    (32-bit with x64 off) silently, in every explicit-dtype policy."""
    a = np.ones(2, dt)
    base = {"array": a, "asarray": a, "array-scalar": a[0], "add": a + a}.get(member, a)
    if member == "zeros_like":
        base = np.zeros_like(a)
    elif member == "full_like":
        base = np.full_like(a, 2)
    value = None if member == "empty_like" else _value(np.asarray(base))

    def make(x64: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"dtype": canonical(dt, x64), "warns": "none"}
        return out if value is None else {**out, "value": value}

    return {
        "id": f"{member}|{dt}",
        "bind": f"a = np.ones(2, '{dt}'); f = lambda a: {INFERRING[member]}",
        "expect": _per_x64(make),
    }


# --- the int32 boundary with x64 off --------------------------------------------------------
BOUNDARY = [2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32]
BOUNDARY_CALLS = {
    "array": "jnp.array(v)",
    "asarray": "jnp.asarray(v)",
    "jit-argument": "jax.jit(lambda x: x)(v)",
    "int32-plus": "jnp.zeros((), 'int32') + v",
    "full": "jnp.full((), v)",
}
JIT_OVERFLOW = (
    "^An overflow was encountered while parsing an argument to a jitted computation, "
    "whose argument path is "
)
OVERFLOW_WORDS = {
    "array": r"^Python int {v} too large to convert to int32$",
    "asarray": r"^Python int {v} too large to convert to int32$",
    "jit-argument": JIT_OVERFLOW + "x\\b",
    "int32-plus": JIT_OVERFLOW + "y\\b",
}


BOUNDARY_OBSERVED = {
    "observed": "JAX 0.10.2 on CPU: outside the int32 range, jnp.array / jnp.asarray / a jit argument / "
    "int32 + v raise OverflowError with x64 off, jnp.full wraps silently, and with x64 on int32 + v wraps"
}


REFERENCE_SILENT = {
    "jit-argument": "the reference's jit does not parse its arguments into avals: it has no overflow of its own",
    "int32-plus": "the reference converts the weak int with NumPy: no jit-argument OverflowError",
    "full": "the reference's jnp.full refuses the int as jnp.array does; it does not model JAX's silent wrap",
}


def _boundary_cell(call: str, v: int) -> dict[str, Any]:
    """A Python int inside the int32 range is an int32 with x64 off (int64 with x64 on); one outside
    it is refused with OverflowError naming it (jnp.full wraps it instead); int32 + v keeps int32 (v
    is weak) in both settings, and wraps with x64 on."""
    fits = -(2**31) <= v < 2**31
    cell: dict[str, Any] = {
        "id": f"{call}|{v}",
        "bind": f"v = {v}; f = lambda v: {BOUNDARY_CALLS[call]}",
    }

    def make(x64: bool) -> dict[str, Any]:
        dt = "int32" if call == "int32-plus" or not x64 else "int64"
        if fits or (x64 and dt == "int64"):
            return {"dtype": dt, "value": v, "warns": "none"}
        if x64:  # int32 + v with x64 on: the weak int takes int32 and wraps (observed)
            return {"dtype": dt, "value": _wrap32(v), "warns": "none"}
        words = OVERFLOW_WORDS.get(call, r"^Python int {v} too large to convert to int32$")
        return {"raises": {"type": "OverflowError", "match": words.format(v=v)}}

    if call == "full" and not fits:  # jnp.full wraps where jnp.array refuses (observed)
        cell["expect"] = _per_x64(
            lambda x64: (
                make(x64) if x64 else {"dtype": "int32", "value": _wrap32(v), "warns": "none"}
            )
        )
    else:
        cell["expect"] = _per_x64(make)
    cell["basis"] = "documented" if fits else "observed"
    if not fits:
        cell["source"] = BOUNDARY_OBSERVED
    if not fits and call in REFERENCE_SILENT:
        carve = {
            "when": {"adapter": "reference", "x64": False},
            "not_applicable": REFERENCE_SILENT[call],
        }
        cell["expect"] = [carve, *cell["expect"]]
    return cell


def _wrap32(v: int) -> int:
    return int(np.array(v, np.int64).astype(np.int32))


# --- the ways of switching x64 on ------------------------------------------------------------
# Each way: (id, code that records the default int dtype at each checkpoint into `seen`, the x64
# setting at each checkpoint relative to the mode's own: None = the mode's, True / False = forced)
ENTER_TRUE, ENTER_FALSE, RECORD = (
    "with jax.enable_x64(True):",
    "with jax.enable_x64(False):",
    "seen.append(probe())",
)
DECORATED = ["@jax.enable_x64(True)", "def inner():", "    return probe()"]
SWITCHES = [
    ("context-true", [ENTER_TRUE, "    " + RECORD, RECORD], [True, None]),
    ("context-false", [ENTER_FALSE, "    " + RECORD, RECORD], [False, None]),
    (
        "nested-true-in-false",
        [ENTER_FALSE, "    " + ENTER_TRUE, "        " + RECORD, "    " + RECORD, RECORD],
        [True, False, None],
    ),
    (
        "nested-false-in-true",
        [ENTER_TRUE, "    " + ENTER_FALSE, "        " + RECORD, "    " + RECORD, RECORD],
        [False, True, None],
    ),
    (
        "re-entered",
        ["ctx = jax.enable_x64(True)", "with ctx:", "    " + RECORD, RECORD]
        + ["with ctx:", "    " + RECORD, RECORD],
        [True, None, True, None],
    ),
    ("decorator", [*DECORATED, "seen.append(inner())", RECORD], [True, None]),
    (
        "decorator-in-opposite-block",
        [*DECORATED, ENTER_FALSE, "    seen.append(inner())", "    " + RECORD, RECORD],
        [True, False, None],
    ),
    ("no-argument", ["with jax.enable_x64():", "    " + RECORD, RECORD], [True, None]),
]


def _switch_cell(way: str, lines: list[str], steps: list[bool | None]) -> dict[str, Any]:
    """The default int at each checkpoint: the innermost block's setting, else the mode's."""
    code = "\n".join(lines)

    def make(x64: bool) -> dict[str, Any]:
        want = ["int64" if (x64 if s is None else s) else "int32" for s in steps]
        return {"check": f"result == {want!r}", "warns": "none"}

    return {"id": way, "bind": f"seen = []\n{code}", "expect": _per_x64(make)}


def tables() -> dict[str, list[dict[str, Any]]]:
    """Each data file's cells, keyed by its name."""
    return {
        "fam-reductions.cells.json": [
            _reduction_cell(fn, dt) for fn in REDUCTIONS for dt in INTEGER_INPUTS
        ],
        "fam-numpy-inputs.cells.json": [
            _numpy_cell(m, dt) for m in INFERRING for dt in NUMPY_INPUTS
        ],
        "fam-int32-boundary.cells.json": [
            _boundary_cell(c, v) for c in BOUNDARY_CALLS for v in BOUNDARY
        ],
        "fam-switch.cells.json": [_switch_cell(*way) for way in SWITCHES],
    }


def render() -> dict[str, str]:
    """Each data file's text, keyed by its name in specs/x64/."""
    return W.render_tables(W.script_name(__file__), tables())


if __name__ == "__main__":
    sys.exit(W.main(__file__, render))
