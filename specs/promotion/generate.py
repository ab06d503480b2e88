"""Generate the promotion tables' cell files from the lattice (adapters/reference/promotion.py).

    .venv/bin/python specs/promotion/generate.py          # write the *.cells.json beside this file
    .venv/bin/python specs/promotion/generate.py --check  # exit 1 if a file differs from its output

Nobody edits a cell by hand: lint (rule TABLE-GENERATED) checks that each data file is exactly
`render()`'s text. Each cell: `id` (the item id's suffix, `a|b`), `bind` (Python binding the
operands), `basis`, `expect` (blocks chosen by `when` over the 4 x64 modes x
jax_numpy_dtype_promotion standard/strict) and, for the documented 18x18, `documented`: the
documented (x64-on) cell canonicalized to the mode (64-bit -> 32-bit with x64 off, i*/f*/c* -> the
kind's default dtype, weak).
"""

from __future__ import annotations

import json
import re
import runpy
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
W = SimpleNamespace(**runpy.run_path(str(HERE.parent / "generate_cells.py")))
X64 = ["off-warn", "off-error", "off-allow", "on"]
PROMOTIONS = ["strict", "standard"]  # the block naming the flag goes first
STRICT = {"flags": {"jax_numpy_dtype_promotion": "strict"}}
TESTED = {"file": "tests/dtypes_test.py", "function": "DtypesTest.testPromoteDtypesStandard"}
# `+` of an extra dtype: JAX's tests pin it only for the small floats against float32 (the error
# "8-bit floats do not support implicit promotion", and its 4-bit twin; 0.10.2's dtypes_test.py);
# testBinaryNonPromotion skips the small dtypes and testIntNPromotionError runs on TPU only. So
# the other extra-dtype `+` cells are observed (measured on 0.10.2), shown and never counted.
ADD_TESTED = {
    **{
        f: {
            "file": "tests/dtypes_test.py",
            "function": "TestPromotionTables.testFloat8PromotionError",
        }
        for f in (
            "float8_e3m4",
            "float8_e4m3",
            "float8_e8m0fnu",
            "float8_e4m3b11fnuz",
            "float8_e4m3fn",
            "float8_e4m3fnuz",
            "float8_e5m2",
            "float8_e5m2fnuz",
        )
    },
    "float4_e2m1fn": {
        "file": "tests/dtypes_test.py",
        "function": "TestPromotionTables.testFloat4PromotionError",
    },
}
ADD_OBSERVED = {
    "observed": "JAX 0.10.2, each pair run eagerly and under jit (docs/research/promotion-0.10.2.md)"
}


def _basis(fn: str, a: str, b: str) -> tuple[str, dict[str, str] | None]:
    """A cell's basis and, where it is not the file's, its source."""
    if (a, b) in DOC:
        return "documented", None
    if fn != "add":
        return "tested", TESTED
    small = a if b == "float32" else b if a == "float32" else None
    if small in ADD_TESTED:
        return "tested", ADD_TESTED[small]
    return "observed", ADD_OBSERVED


P = W.load("reference_promotion_model", REPO / "adapters" / "reference" / "promotion.py")
DOC = P.documented_table()


def mode(x64: str, promotion: str) -> Any:
    return P.Mode(
        x64=x64 == "on",
        explicit_x64_dtypes="warn" if x64 == "on" else x64.split("-")[1],
        promotion=promotion,
    )


def _tuple_words(text: str) -> str:
    """The `Input dtypes (a, b)` opening as a pattern that takes both orders (JAX builds the tuple
    from a set) and nothing else: a reworded dtype name does not match."""
    m = re.match(r"Input dtypes \((.*?)\) have", text)
    assert m, text
    items = [i.strip() for i in re.split(r", (?=['\"<])", m.group(1).rstrip(","))]
    orders = ["(" + ", ".join(items) + ")", "(" + ", ".join(reversed(items)) + ")"]
    return (
        "^Input dtypes (?:"
        + "|".join(re.escape(o) for o in dict.fromkeys(orders))
        + ") have no available implicit dtype promotion path"
    )


def _raises(exc: Exception) -> dict[str, Any]:
    text = str(exc)
    if text.startswith("Explicitly requested dtype"):
        head = text.split(" is not available")[0]
        return {
            "raises": {
                "type": "ValueError",
                "match": "^" + re.escape(head) + r" is not available\b(?!, and will be truncated)",
            }
        }
    words = _tuple_words(text)
    if "when jax_numpy_dtype_promotion=strict" in text:
        return {
            "raises": {
                "type": "ValueError",
                "match": words + r" when jax_numpy_dtype_promotion=strict\b",
            }
        }
    m = re.search(r"To avoid unintended promotion, (.*?) do not support implicit promotion", text)
    tail = (
        (
            r"\. To avoid unintended promotion, "
            + re.escape(m.group(1))
            + " do not support implicit promotion"
        )
        if m
        else r"\. Try explicitly casting"
    )
    return {"raises": {"type": "ValueError", "match": words + tail}}


def outcome(fn: Any, weak: bool) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as exc:
            return _raises(exc)
    if isinstance(r, tuple):
        return {"dtype": str(r[0]), "weak_type": bool(r[1])} if weak else {"dtype": str(r[0])}
    return {"dtype": str(r)}


def _x64_when(names: list[str]) -> dict[str, Any]:
    if names == X64:
        return {}
    if names == ["on"]:
        return {"x64": True}
    offs = [n.split("-")[1] for n in names if n != "on"]
    if "on" in names:
        raise AssertionError(names)
    return {"x64": False, "explicit_x64_dtypes": offs[0] if len(offs) == 1 else offs}


NODES = P.DOC_ORDER + [n for n in P.SMALL_INTS + P.SMALL_FLOATS if P.available(n)]
SCALAR = {"int*": "1", "float*": "1.0", "complex*": "1j"}


def spec_code(n: str) -> str:
    return P.PY_TYPE_OF_WEAK[n].__name__ if n in P.WEAK_NODES else f"np.dtype('{n}')"


def value_code(n: str) -> str:
    # i*/f*/c*: the Python scalar; a dtype: table.yaml's ones(), jnp.ones((2,), n) with its own
    # warnings set aside (specs/x64 judges what an explicit 64-bit request warns), so that a `+`
    # cell's `warns: none` is about the operator alone
    return SCALAR[n] if n in P.WEAK_NODES else f"ones('{n}')"


def operand(n: str, m: Any) -> Any:
    return P.weak_operand(n, m) if n in P.WEAK_NODES else P.array_operand(n, m)


DOC_STRICT = P.Mode(x64=True, promotion="strict")


def _refused_operand(block: dict[str, Any]) -> bool:
    return str(block.get("raises", {}).get("match", "")).startswith("^Explicitly")


def _documented(
    a: str, b: str, fn: str, actual: dict[tuple[str, str], dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """The documented cell per mode. Standard: the table's (x64-on) join canonicalized to the mode.
    Strict: the "Strict dtype promotion" section's rule (only safe weak promotions; the strict
    lattice of the model) joined with x64 on and canonicalized the same way; a refusal there is
    the documented error words naming both dtypes."""
    if (a, b) not in DOC:
        return None
    out: list[dict[str, Any]] = []
    for pr in PROMOTIONS:
        per: dict[str, dict[str, Any]] = {}
        for x in X64:
            if _refused_operand(actual[pr, x]) or (pr == "standard" and "raises" in actual[pr, x]):
                per[x] = {
                    "not_applicable": "the operand itself is refused in this mode (no such cell)"
                }
                continue
            if pr == "strict":
                try:
                    node = P.join([a, b], DOC_STRICT)
                except P.TypePromotionError as exc:
                    # the words name the operands as the mode has them (a truncated int64 is int32)
                    refused = "raises" in actual[pr, x]
                    per[x] = actual[pr, x] if refused else _raises(exc)
                    continue
            else:
                node = DOC[a, b]
            dt, weak = P.documented_in_mode(node, x == "on")
            per[x] = {"dtype": dt} if fn == "promote_types" else {"dtype": dt, "weak_type": weak}
        out += _promotion_blocks(pr, per, merge=False)
    return out


def cell(fn: str, a: str, b: str) -> dict[str, Any]:
    per: dict[tuple[str, str], dict[str, Any]] = {}
    for pr in PROMOTIONS:
        for x in X64:
            m = mode(x, pr)
            sa, sb = P.PY_TYPE_OF_WEAK.get(a, a), P.PY_TYPE_OF_WEAK.get(b, b)
            if fn == "promote_types":
                per[pr, x] = outcome(lambda: P.promote_types(sa, sb, m), False)  # noqa: B023
            elif fn == "result_type":
                per[pr, x] = outcome(
                    lambda: P.result_type(sa, sb, mode=m, return_weak_type_flag=True),  # noqa: B023
                    True,
                )
            else:
                per[pr, x] = outcome(
                    lambda: P.lattice_result_type(operand(a, m), operand(b, m), mode=m),  # noqa: B023
                    True,
                )
    code = value_code if fn == "add" else spec_code
    bind = f"a = {code(a)}; b = {code(b)}"
    if fn == "add" and a in P.WEAK_NODES and b in P.WEAK_NODES:
        # two Python scalars add in Python: b is the weakly typed array of its scalar instead
        bind = f"a = {code(a)}; b = jnp.asarray({code(b)})"
    basis, source = _basis(fn, a, b)
    rec: dict[str, Any] = {"id": f"{a}|{b}", "bind": bind, "basis": basis}
    if source is not None:
        rec["source"] = source
    if fn == "add":  # the operator warns of nothing, wherever it returns
        per = {k: v if "raises" in v else {**v, "warns": "none"} for k, v in per.items()}
    rec["expect"] = _since(_collapse(per))
    d = _documented(a, b, fn, per)
    if d is not None:
        rec["documented"] = _since(d)
    return rec


def _collapse(per: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    keys = {json.dumps(v, sort_keys=True) for v in per.values()}
    if len(keys) == 1:
        return [json.loads(keys.pop())]
    out = []
    for pr in PROMOTIONS:
        out += _promotion_blocks(pr, {x: per[pr, x] for x in X64}, merge=True)
    return out


def _promotion_blocks(pr: str, per: dict[str, dict[str, Any]], merge: bool) -> list[dict[str, Any]]:
    """One promotion's blocks over the four x64 modes: modes with one outcome share a block, x64 on
    apart from off (one block for all four where merge is set and they agree)."""
    groups: dict[str, list[str]] = {}
    for x in X64:
        groups.setdefault(
            ("on:" if x == "on" else "off:") + json.dumps(per[x], sort_keys=True), []
        ).append(x)
    if merge and len({json.dumps(per[x], sort_keys=True) for x in X64}) == 1:
        groups = {"all:" + json.dumps(per["on"], sort_keys=True): X64}
    out = []
    for key, names in groups.items():
        when = {**_x64_when(names), **(STRICT if pr == "strict" else {})}
        block = json.loads(key.split(":", 1)[1])
        out.append({"when": when, **block} if when else block)
    return out


# The extra dtypes that cannot be `+` operands on JAX 0.10.2's CPU backend, so the `+` table has
# no cell of them (promote_types and result_type take them as dtype specifiers and keep them).
# Measured on 0.10.2 (docs/research/promotion-0.10.2.md, "The `+` table's extra dtypes").
NO_OPERANDS = {
    # the array cannot be made: `jnp.ones((2,), dt)` raises before any `+` runs
    "uint1": "jnp.ones((2,), uint1) raises ValueError: Cannot lower jaxpr with verifier errors "
    "(stablehlo.broadcast_in_dim takes no 1-bit unsigned integer)",
    "float6_e2m3fn": "jnp.ones((2,), float6_e2m3fn) raises JaxRuntimeError: INVALID_ARGUMENT: "
    "Invalid XLA PrimitiveType: 36 (F6E2M3FN)",
    "float6_e3m2fn": "jnp.ones((2,), float6_e3m2fn) raises JaxRuntimeError: INVALID_ARGUMENT: "
    "Invalid XLA PrimitiveType: 35 (F6E3M2FN)",
    # the array's dtype depends on what ran before it in the process
    "int1": "jnp.ones((2,), int1) is an int1 array in a fresh process but a bool array once a "
    "bool array was made (and jnp.ones((2,), bool) is int1 once an int1 one was); "
    "jax.clear_caches() undoes it: a JAX cache takes the two dtypes for one",
}
# The `+` table: the documented 18 and every extra dtype JAX can make arrays of. Every cell runs
# eagerly, under jit cold and warm (the case's `paths`); the jit paths of a table's cells share one
# trace and one compiled program (conformance/worker/jit_batch.py), not a compile per pair.
ADD_NODES = P.DOC_ORDER + [n for n in NODES if n not in P.DOC_ORDER and n not in NO_OPERANDS]

TABLES = {
    # file: (operation, operand nodes)
    "promote_types.cells.json": ("promote_types", NODES),
    "result_type.cells.json": ("result_type", NODES),
    "add.cells.json": ("add", ADD_NODES),
}


# The cells are JAX 0.10.2's (measured: docs/research/promotion-0.10.2.md); an older release has
# other dtypes and other joins, so for it no block applies (not applicable) until it is measured.
SINCE = ">=0.10.2"


def _since(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**b, "when": {**b.get("when", {}), "version": SINCE}} for b in blocks]


def render() -> dict[str, str]:
    """Each data file's text, keyed by its name in specs/promotion/."""
    return {
        name: W.cells_text(
            W.script_name(__file__),
            (cell(fn, a, b) for a in nodes for b in nodes),
            operation=fn,
        )
        for name, (fn, nodes) in TABLES.items()
    }


if __name__ == "__main__":
    sys.exit(W.main(__file__, render))
