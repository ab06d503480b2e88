"""What a `diff` program did, normalized so two implementations can be compared.

`observe(text, namespace)` runs inside a worker (jax_conformance.worker.loop, the protocol's
`observe` request; see jax_conformance.protocol) and returns a JSON-ready `ProgramObservation`:

  {"result": <tree>, "warnings": [{"category", "message"}, ...]}      the program returned
  {"raised": {"type", "module", "message", "where"}, "warnings": [...]}   the program raised
  {"crashed": "crashed"|"timeout"|"error", "message"}                 the worker did not answer (made by the parent)

A tree is a leaf or {"tuple"|"list": [...]} / {"dict": {key: tree}}. A leaf is
{"kind": "array", "dtype", "shape", "weak", "value"} for JAX arrays ("numpy" for NumPy
arrays and scalars), {"kind": "python", "type", "value"} for Python numbers,
{"kind": "dtype", "dtype"} for a dtype or scalar type, {"kind": "none"}, or
{"kind": "other", "type"}. Values are nested lists; NaN and infinities are strings, complex
numbers [re, im] pairs; float0 arrays carry no value.

`compare(a, b)` lists the fields in which two observations differ (structure, kind, dtype,
weak_type, shape, value, warnings, raised); [] means they agree. `missing(obs)` says when
a program could not be expressed on that side (a name the implementation does not have).
"""

from __future__ import annotations

import json
import math
import traceback
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

from jax_conformance.compare import Branches, Tolerance, close, walk
from jax_conformance.protocol import Kind, Node, ProgramObservation

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_VALUES = 256

# Relative tolerance per dtype of the compared values (XLA and NumPy may round transcendental
# functions differently by an ulp or two).
RTOL = {
    "float16": 2e-3,
    "bfloat16": 1.6e-2,
    "float32": 2e-6,
    "complex64": 2e-6,
    "float64": 1e-12,
    "complex128": 1e-12,
}
DEFAULT_RTOL = 1e-6


def _dtype_name(dtype: npt.DTypeLike) -> str:
    import numpy as np

    try:
        d = np.dtype(dtype)
    except TypeError:
        return str(dtype)
    if d.names == ("float0",) or str(d) == "[('float0', 'V')]":
        return "float0"
    return str(d.name)


def _plain(value: object) -> object:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, complex):
        return [_plain(value.real), _plain(value.imag)]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _values(arr: np.ndarray) -> object:
    import numpy as np

    if arr.size > MAX_VALUES:
        return None
    if arr.dtype.kind == "V":
        return None
    if arr.dtype.kind not in "biufc":  # bfloat16 and the other ml_dtypes
        arr = arr.astype(np.float64)
    return _plain(arr.tolist())


def leaf(x: object) -> Node:
    import numpy as np

    if x is None:
        return {"kind": "none"}
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return {"kind": "python", "type": type(x).__name__, "value": _plain(x)}
    if isinstance(x, np.dtype) or (
        isinstance(x, type)
        and hasattr(x, "dtype")
        or (isinstance(x, type) and issubclass(x, np.generic))
    ):
        return {
            "kind": "dtype",
            "dtype": _dtype_name(getattr(x, "dtype", x) if not isinstance(x, np.dtype) else x),
        }
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        kind: Kind = "numpy" if isinstance(x, (np.ndarray, np.generic)) else "array"
        out: Node = {"kind": kind, "dtype": _dtype_name(x.dtype), "shape": list(x.shape)}
        weak = getattr(x, "weak_type", None)
        if kind == "array" and isinstance(weak, (bool, np.bool_)):
            out["weak"] = bool(weak)
        try:
            out["value"] = _values(np.asarray(x))
        except Exception as exc:  # a value that cannot be read is part of what is seen
            out["value_error"] = type(exc).__name__
        return out
    return {"kind": "other", "type": type(x).__name__}


def tree(x: object, depth: int = 0) -> Node:
    if depth > 8:
        return {"kind": "other", "type": "deep"}
    if isinstance(x, tuple) and not hasattr(x, "dtype"):
        return {"tuple": [tree(v, depth + 1) for v in x]}
    if isinstance(x, list):
        return {"list": [tree(v, depth + 1) for v in x]}
    if isinstance(x, dict):
        return {"dict": {str(k): tree(v, depth + 1) for k, v in x.items()}}
    return leaf(x)


def observe(text: str, namespace: Mapping[str, object]) -> ProgramObservation:
    """Run the program in a copy of `namespace` with every warning recorded; normalize what it did."""
    obs: ProgramObservation = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ns = dict(namespace)
            exec(compile(text, "<diff program>", "exec"), ns)  # noqa: S102
            result = ns.get("result")
            for v in result if isinstance(result, (tuple, list)) else [result]:
                ready = getattr(v, "block_until_ready", None)
                if callable(ready):
                    ready()
            obs["result"] = tree(result)
        except Exception as exc:
            obs["raised"] = {
                "type": type(exc).__name__,
                "module": type(exc).__module__,
                "message": str(exc)[:600],
                "where": traceback.format_exception_only(type(exc), exc)[-1][:200].strip(),
            }
    obs["warnings"] = [
        {"category": w.category.__name__, "message": str(w.message)[:400]} for w in caught
    ]
    return obs


def not_observed(outcome: str, message: str) -> ProgramObservation:
    """The observation of a side whose worker gave none: it crashed, timed out or failed (`outcome`)."""
    return {"crashed": outcome, "message": message[:600]}


# ---------------------------------------------------------------- comparison (in the parent)


def missing(obs: ProgramObservation) -> str | None:
    """The name a side lacks, when the program could not be expressed there (else None)."""
    raised = obs.get("raised")
    if raised is None:
        return None
    message = raised["message"]
    if (
        raised["type"] == "AttributeError"
        and message.startswith("module ")
        and "has no attribute" in message
    ):
        return message
    if raised["type"] == "NotImplementedError":
        return f"NotImplementedError: {message[:200]}"
    return None


def _numbers(value: object) -> object:
    """A leaf's JSON value as numbers again: NaN and the infinities are spelled as strings."""
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return float(value) if isinstance(value, str) else value


def _items(node: Node) -> list[Node] | None:
    """The items of a tuple or list node; None for a dict or a leaf."""
    return node.get("tuple", node.get("list"))


def _branches(node: Node) -> Branches[Node] | None:
    """A tuple or list node's items by position, a dict node's by key; None for a leaf."""
    items = _items(node)
    if items is not None:
        return Branches("tuple" if "tuple" in node else "list", list(enumerate(items)))
    if "dict" in node:
        return Branches("dict", list(node["dict"].items()), keyed=True)
    return None


def _compare_tree(a: Node, b: Node, out: set[str]) -> None:
    for _, x, y in walk(a, b, _branches):
        _compare_leaf(x, y, out)


def _compare_leaf(a: Node, b: Node, out: set[str]) -> None:
    if _branches(a) is not None or _branches(b) is not None:
        out.add("structure")
        return
    if a.get("kind") != b.get("kind") or a.get("type") != b.get("type"):
        out.add("kind")
        return
    if a.get("dtype") != b.get("dtype"):
        out.add("dtype")
    if "weak" in a and "weak" in b and a["weak"] != b["weak"]:
        out.add("weak_type")
    if a.get("shape") != b.get("shape"):
        out.add("shape")
        return
    if "value" in a and "value" in b and a["value"] is not None and b["value"] is not None:
        rtol = max(
            RTOL.get(str(a.get("dtype")), DEFAULT_RTOL), RTOL.get(str(b.get("dtype")), DEFAULT_RTOL)
        )
        tol = Tolerance(rtol, rtol * 1e-3, scale="larger", exact_integers=False)
        if not close(_numbers(a["value"]), _numbers(b["value"]), tol):
            out.add("value")


def warning_categories(obs: ProgramObservation) -> list[str]:
    return sorted(w["category"] for w in obs.get("warnings", []))


def compare(a: ProgramObservation, b: ProgramObservation) -> list[str]:
    """The fields in which two observations differ; [] when they agree."""
    out: set[str] = set()
    if "crashed" in a or "crashed" in b:
        if a.get("crashed") != b.get("crashed"):
            out.add("crashed")
        return sorted(out)
    if ("raised" in a) != ("raised" in b):
        out.add("raised")
    elif "raised" in a:
        if a["raised"]["type"] != b["raised"]["type"]:
            out.add("raised")
    else:
        _compare_tree(a["result"], b["result"], out)
    if warning_categories(a) != warning_categories(b):
        out.add("warnings")
    return sorted(out)


def signature(area: str, a: ProgramObservation, b: ProgramObservation, fields: list[str]) -> str:
    """A disagreement's class: its area, the fields that differ, and the exception and warning classes
    on each side (what shrinking keeps fixed, and what the summary groups by)."""

    def side(o: ProgramObservation) -> str:
        if "crashed" in o:
            return f"crashed:{o['crashed']}"
        raised = o["raised"]["type"] if "raised" in o else None
        w = ",".join(sorted(set(warning_categories(o)))) if "warnings" in fields else ""
        return (f"raises {raised}" if raised else "returns") + (f" +{w}" if w else "")

    return f"{area}: {'/'.join(fields)} ({side(a)} | {side(b)})"


def brief(obs: ProgramObservation) -> str:
    """One line that says what a side did (the summary's and the record's words)."""
    if "crashed" in obs:
        return f"{obs['crashed']}: {str(obs.get('message', ''))[:200]}"
    parts = []
    if "raised" in obs:
        parts.append(f"raises {obs['raised']['type']}: {obs['raised']['message'][:200]}")
    else:
        parts.append(_brief_tree(obs["result"]))
    if obs.get("warnings"):
        parts.append(
            "warns "
            + "; ".join(f"{w['category']}: {w['message'][:120]}" for w in obs["warnings"][:3])
        )
    return " | ".join(parts)


def _brief_tree(t: Node) -> str:
    items = _items(t)
    if items is not None:
        o, c = ("(", ")") if "tuple" in t else ("[", "]")
        return o + ", ".join(_brief_tree(x) for x in items) + c
    if "dict" in t:
        return "{" + ", ".join(f"{k}: {_brief_tree(v)}" for k, v in t["dict"].items()) + "}"
    kind = t.get("kind")
    if kind in ("array", "numpy"):
        weak = ", weak" if t.get("weak") else ""
        value = json.dumps(t.get("value"))
        value = value if len(value) <= 60 else value[:57] + "..."
        return f"{kind} {t['dtype']}{t['shape']}{weak} = {value}"
    if kind == "python":
        return f"{t['type']} {t['value']!r}"
    if kind == "dtype":
        return f"dtype {t['dtype']}"
    if kind == "none":
        return "None"
    return f"<{t.get('type')}>"
