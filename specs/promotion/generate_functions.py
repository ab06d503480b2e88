"""Generate the cells of specs/promotion/functions.yaml: jnp functions, lax functions, control flow.

    .venv/bin/python specs/promotion/generate_functions.py          # write the fn-*.cells.json
    .venv/bin/python specs/promotion/generate_functions.py --check  # exit 1 if a file differs

Every expectation comes from the lattice model (adapters/reference/promotion.py) through the `+`
table's generator (generate.py's `cell("add", a, b)`, the join per mode with its error words):
- a jnp function that combines arrays (subtract, multiply, maximum, minimum, where, concatenate,
  stack, dot, matmul) gives what `+` gives: the join's dtype and weak flag, or the same refusal;
  a refusal of an incompatible pair is jax.dtypes.TypePromotionError (what JAX's tests assert);
- a comparison (less, equal) gives bool, never weak, where `+` would join, and refuses where it does;
- a lax function that does not promote (lax.add, lax.max, lax.eq, ...) refuses any two dtypes
  that differ, with a TypeError naming the function and both dtypes in order;
- a control-flow construct (cond, switch, scan, while_loop, fori_loop) refuses branches or a carry
  whose dtypes differ, naming both, and a weakly typed carry or branch of the same dtype joins to
  the strong one.
"""

from __future__ import annotations

import copy
import re
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
W = SimpleNamespace(**runpy.run_path(str(HERE.parent / "generate_cells.py")))
G = W.load("promotion_table_generator", HERE / "generate.py")  # the `+` table's generator
P = G.P
# The operands: every kind of the documented lattice (bool, unsigned, signed, the 16-bit floats,
# 32- and 64-bit, complex, the three weak kinds) and one 4-bit int and one 8-bit float; the full
# 18 x 18 (and 31 x 31) is the `+` table's, these tables check the same join through other functions.
STRONG = ["bool", "uint8", "uint32", "int8", "int32", "bfloat16", "float16", "float32"]
STRONG += ["float64", "complex64"]
EXTRA = ["int4", "float8_e4m3fn"]
WEAK = list(P.WEAK_NODES)
# Python scalars combine with arrays elementwise; the array-only functions take arrays alone
ELEMENTWISE = ["subtract", "multiply", "maximum", "minimum", "where", "less", "equal"]
ARRAY_ONLY = ["concatenate", "stack", "dot", "matmul"]
COMPARISONS = {"less", "equal"}
PROMOTION_ERROR = "jax.dtypes.TypePromotionError"
TESTED_REFUSAL = {
    "file": "tests/dtypes_test.py",
    "function": "TestPromotionTables.testFloat8PromotionError",
    "note": "JAX's tests assert jax.dtypes.TypePromotionError for an 8-bit float with float32",
}
WEAK_BOOL_OBSERVED = {
    "observed": "JAX 0.10.2: a comparison whose operands join to a weak type gives a weakly typed bool "
    "(jnp.less(jnp.ones(2, 'int8'), 1.0).weak_type is True); type_promotion.rst's lattice has no weak bool"
}
OBSERVED = {"observed": "JAX 0.10.2 on CPU, each pair eagerly and under jit (not documented)"}


def _fix_block(block: dict[str, Any], fn: str, documented: bool = False) -> dict[str, Any]:
    """An add cell's block as fn's: a join's refusal is TypePromotionError; a comparison is bool,
    weakly typed where the join is (JAX 0.10.2) though the docs' lattice has no weak bool."""
    out = copy.deepcopy(block)
    raises = out.get("raises")
    if raises and str(raises.get("match", "")).startswith("^Input dtypes"):
        raises["type"] = PROMOTION_ERROR
    if fn in COMPARISONS and "dtype" in out:
        out["dtype"] = "bool"
        if documented:
            out["weak_type"] = False
    return out


def _weak_join(add: dict[str, Any]) -> bool:
    return any(blk.get("weak_type") for blk in add["expect"])


def _cell(fn: str, a: str, b: str) -> dict[str, Any]:
    """fn's cell for the pair, from the `+` cell of the same pair."""
    add = G.cell("add", a, b)
    rec: dict[str, Any] = {"id": add["id"], "bind": add["bind"]}
    if add["basis"] == "documented":
        rec["basis"] = "documented"
    elif a in EXTRA or b in EXTRA:
        rec["basis"], rec["source"] = "observed", OBSERVED
        if any("raises" in blk for blk in add["expect"]) and "float8_e4m3fn" in (a, b):
            rec["basis"], rec["source"] = "tested", TESTED_REFUSAL
    if fn in COMPARISONS and _weak_join(add):
        rec["basis"], rec["source"] = "observed", WEAK_BOOL_OBSERVED
    rec["expect"] = [_fix_block(blk, fn) for blk in add["expect"]]
    if "documented" in add:
        rec["documented"] = [_fix_block(blk, fn, documented=True) for blk in add["documented"]]
    return rec


def _pairs(fn: str) -> list[tuple[str, str]]:
    nodes = STRONG + EXTRA if fn in ARRAY_ONLY else STRONG + WEAK + EXTRA
    pairs = [(a, b) for a in nodes for b in nodes]
    if fn == "subtract":  # NumPy has no bool subtract, and says so: not a promotion question
        pairs.remove(("bool", "bool"))
    return pairs


# --- lax: the functions that do not promote -------------------------------------------------
LAX_FUNCTIONS = ["add", "sub", "mul", "div", "max", "min", "rem", "eq", "lt", "select"]
LAX_DTYPES = ["bool", "uint8", "int8", "int32", "bfloat16", "float16", "float32", "complex64"]
LAX_SOURCE = {
    "doc": "docs/jax.lax.rst",
    "section": "jax.lax: lax is a library of primitives",
    "note": "jax.lax does not promote: lax.add(jnp.float32(1), jnp.int32(1)) is an error, jnp.add promotes",
}
ORDERED = {"rem", "lt"}
ARITH = {"add", "sub", "mul", "div", "max", "min", "rem"}


def _lax_pairs(fn: str) -> list[tuple[str, str]]:
    """The ordered pairs of distinct dtypes the function would take if they were equal."""
    dts = [d for d in LAX_DTYPES if not (fn in ARITH and d == "bool")]
    if fn in ORDERED:  # no complex remainder or ordering: a different refusal, not a promotion one
        dts.remove("complex64")
    return [(a, b) for a in dts for b in dts if a != b]


def _lax_cell(fn: str, a: str, b: str) -> dict[str, Any]:
    """lax.fn of two arrays of different dtypes refuses them, naming fn and both dtypes in order
    (select names its two branches' dtypes, the second operand first as JAX orders them)."""
    first, second = (b, a) if fn == "select" else (a, b)
    match = (
        rf"^lax\.{fn} requires arguments to have the same dtypes, got "
        rf"{re.escape(first)}, {re.escape(second)}\."
        # the whole message: with its tip, that tip must name promotion of the inputs
        r"(?: \(Tip: jnp\.\w+ is a similar function that does automatic type promotion on inputs\)\.)?$"
    )
    bind = f"a = ones('{a}'); b = ones('{b}')"
    expect = [{"raises": {"type": "TypeError", "match": match}}]
    return {"id": f"{a}|{b}", "bind": bind, "expect": expect}


# --- control flow ---------------------------------------------------------------------------
CONTROL = ["cond", "switch", "scan", "while_loop", "fori_loop"]
CONTROL_DTYPES = ["int32", "float16", "float32", "bfloat16", "int8"]
TYPES_NAMED = r"[\s\S]*\btype {a}\[\][\s\S]*\btype {b}\[\]"  # both dtypes, in order
CONTROL_WORDS = {
    "cond": r"^cond branches must have equal output types\b" + TYPES_NAMED,
    "switch": r"^switch branches must have equal output types\b" + TYPES_NAMED,
    "scan": r"^scan body function carry input and carry output must have equal types\b"
    + TYPES_NAMED,
    "while_loop": r"^while_loop body function carry input and carry output must have equal types\b"
    + TYPES_NAMED,
    # a fori_loop with static bounds is a scan, and says so
    "fori_loop": r"^scan body function carry input and carry output must have equal types\b"
    + TYPES_NAMED,
}


WEAK_BESIDE_STRONG = [
    ("float*", "float16"),
    ("float*", "bfloat16"),
    ("float*", "float32"),
    ("int*", "int8"),
    ("int*", "int32"),
]
DEFAULTS = {"float*": ("float32", "float64"), "int*": ("int32", "int64")}
BRANCHES = {"cond", "switch"}
WEAK_BRANCH_OBSERVED = {
    "observed": "JAX 0.10.2: a Python scalar branch of cond / switch takes its default dtype and must "
    "equal the other branch's (cond joins the weak flags, switch's result has branch 0's weak flag: "
    "lax.switch(1, [lambda: 1.0, lambda: jnp.float32(1)]) is weak), while a scan / while_loop / fori_loop "
    "carry that enters weak takes the body's dtype (the join)"
}


def _weak_control_cell(fn: str, weak: str, strong: str) -> dict[str, Any]:
    """A Python scalar beside a strong value: a loop carry joins (weak defers, the `+` cell); a
    branch of cond / switch is its default dtype and must equal the other's, weak flag aside."""
    cell: dict[str, Any] = {
        "id": f"{weak}|{strong}",
        "bind": f"a = {G.SCALAR[weak]}; b = one('{strong}')",
    }
    if fn not in BRANCHES:
        joined = G.cell("add", weak, strong)["expect"]
        cell["expect"] = [{k: v for k, v in blk.items() if k != "warns"} for blk in joined]
        return cell
    blocks = []
    for x64, default in zip((False, True), DEFAULTS[weak], strict=True):
        if default == strong:  # cond joins the weak flags; switch keeps branch 0's (observed)
            outcome: dict[str, Any] = {"dtype": strong, "weak_type": fn == "switch"}
        else:
            words = CONTROL_WORDS[fn].format(a=re.escape(default), b=re.escape(strong))
            outcome = {"raises": {"type": "TypeError", "match": words}}
        blocks.append({"when": {"x64": x64, "version": G.SINCE}, **outcome})
    cell["basis"], cell["source"], cell["expect"] = "observed", WEAK_BRANCH_OBSERVED, blocks
    return cell


def _control_cells(fn: str) -> list[dict[str, Any]]:
    """Strong pairs that differ refuse (both dtypes named); a weak scalar beside a strong value of
    its kind's default dtype joins to the strong dtype (the `+` rule: weak defers)."""
    cells = []
    for a in CONTROL_DTYPES:
        for b in CONTROL_DTYPES:
            if a == b:
                continue
            match = CONTROL_WORDS[fn].format(a=re.escape(a), b=re.escape(b))
            cells.append(
                {
                    "id": f"{a}|{b}",
                    "bind": f"a = one('{a}'); b = one('{b}')",
                    "expect": [{"raises": {"type": "TypeError", "match": match}}],
                }
            )
    for weak, strong in WEAK_BESIDE_STRONG:
        cells.append(_weak_control_cell(fn, weak, strong))
    return cells


# --- jnp.dot with a Python scalar: documented as jnp.multiply ------------------------------
DOT_SCALAR_OBSERVED = {
    "observed": "JAX 0.10.2 on CPU: jnp.dot(a, s) of an integer (or complex) array and a Python int "
    "(or complex) raises TypeError when the join is narrower than the scalar's default dtype "
    "(jnp.dot(jnp.ones(2, 'int8'), 2)); a Python float never raises"
}
NARROWER = (
    "`preferred_element_type` must not be narrower than the original type, "
    "got preferred_element_type of {j} for result type of {d}."
)
SCALAR_KIND = {"int*": ("i", "u"), "complex*": ("c",)}


def _mode_block(blocks: list[dict[str, Any]], x64: bool, policy: str) -> dict[str, Any]:
    """The standard-promotion block of an add cell for the mode (x64 setting, explicit policy)."""
    for blk in blocks:
        when = blk.get("when", {})
        policies = when.get("explicit_x64_dtypes", policy)
        if "flags" not in when and when.get("x64", x64) == x64 and policy in policies:
            return {k: v for k, v in blk.items() if k not in ("when", "warns")}
    raise AssertionError(blocks)


def _dot_scalar_cell(a: str, w: str) -> dict[str, Any]:
    """jnp.dot(a, w): documented as jnp.multiply (the join); observed to refuse a join narrower than
    the Python int's or complex's default dtype."""
    add = G.cell("add", a, w)
    blocks: list[dict[str, Any]] = [
        {
            "when": {"flags": {"jax_numpy_dtype_promotion": "strict"}},
            "not_applicable": "measured in standard promotion only",
        }
    ]
    narrow = False
    for name in G.X64:
        x64, policy = name == "on", name.split("-")[-1]
        blk = _mode_block(add["expect"], x64, policy)
        d = G.P.documented_in_mode(w, x64)[0]
        j = np.dtype(blk["dtype"]) if "dtype" in blk else None
        if (
            j is not None
            and not blk.get("weak_type")
            and j.kind in SCALAR_KIND.get(w, ())
            and j.itemsize < np.dtype(d).itemsize
        ):
            match = "^" + re.escape(NARROWER.format(j=j, d=d)) + "$"
            blk, narrow = {"raises": {"type": "TypeError", "match": match}}, True
        when = {"x64": True} if x64 else {"x64": False, "explicit_x64_dtypes": policy}
        blocks.append({"when": {**when, "version": G.SINCE}, **blk})
    cell: dict[str, Any] = {
        "id": f"{a}|{w}",
        "bind": f"a = ones('{a}'); b = {G.SCALAR[w]}",
        "expect": blocks,
    }
    if narrow:
        cell["basis"], cell["source"] = "observed", DOT_SCALAR_OBSERVED
    cell["documented"] = (
        [_fix_block(blk, "multiply") for blk in add["documented"]] if "documented" in add else []
    )
    return cell


# What the reference adapter (adapters/reference) does not model, measured: its cells are not
# applicable there (the first block; JAX's blocks follow)
REFERENCE_NA = {
    "concatenate": "the reference has no jnp.concatenate",
    "stack": "the reference has no jnp.stack",
    "dot": "the reference does not model jnp.dot of vectors (NotImplementedError)",
    "matmul": "the reference does not model jnp.matmul of vectors (NotImplementedError)",
    "dot-scalar": "the reference does not model jnp.dot (NotImplementedError)",
    **{
        f"lax-{fn}": "the reference's lax functions promote as jnp's do: it does not model lax's refusal"
        for fn in LAX_FUNCTIONS
    },
    **{
        f"control-{fn}": "the reference's control flow does not check the branches' or the carry's types"
        for fn in CONTROL
    },
}
REFERENCE_INT4 = {"maximum", "minimum"}  # its maximum / minimum of int4 compute in int8


def _reference_na(name: str, cell: dict[str, Any]) -> dict[str, Any]:
    """The cell with a not-applicable block for the reference first, where it does not model it."""
    reason = REFERENCE_NA.get(name)
    if reason is None and name in REFERENCE_INT4 and "int4" in cell["id"].split("|"):
        reason = "the reference's maximum / minimum of int4 compute in int8"
    if reason is None:
        return cell
    return {
        **cell,
        "expect": [{"when": {"adapter": "reference"}, "not_applicable": reason}, *cell["expect"]],
    }


def tables() -> dict[str, list[dict[str, Any]]]:
    """Each data file's cells, keyed by its name, with the reference's carve-outs."""
    out = _tables()
    prefix = "fn-"
    return {
        name: [_reference_na(name[len(prefix) : -len(".cells.json")], c) for c in cells]
        for name, cells in out.items()
    }


def _tables() -> dict[str, list[dict[str, Any]]]:
    """Each data file's cells, keyed by its name."""
    out = {f"fn-{fn}.cells.json": [_cell(fn, a, b) for a, b in _pairs(fn)] for fn in ELEMENTWISE}
    out.update(
        {f"fn-{fn}.cells.json": [_cell(fn, a, b) for a, b in _pairs(fn)] for fn in ARRAY_ONLY}
    )
    out.update(
        {
            f"fn-lax-{fn}.cells.json": [_lax_cell(fn, a, b) for a, b in _lax_pairs(fn)]
            for fn in LAX_FUNCTIONS
        }
    )
    out.update({f"fn-control-{fn}.cells.json": _control_cells(fn) for fn in CONTROL})
    out["fn-dot-scalar.cells.json"] = [_dot_scalar_cell(a, w) for a in STRONG for w in WEAK]
    return out


def render() -> dict[str, str]:
    """Each data file's text, keyed by its name in specs/promotion/."""
    return W.render_tables(W.script_name(__file__), tables())


if __name__ == "__main__":
    sys.exit(W.main(__file__, render))
