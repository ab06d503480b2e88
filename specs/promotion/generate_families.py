"""Generate the cell files of specs/promotion/families.yaml: how a value gets its dtype and weak type.

    .venv/bin/python specs/promotion/generate_families.py          # write the *.cells.json
    .venv/bin/python specs/promotion/generate_families.py --check  # exit 1 if a file differs

Three families, each a table of cells (one item each), every cell run eagerly and under jit:
- numpy_operands: a strong JAX array of a dtype + a Python scalar or a NumPy value. Python
  scalars are weak, NumPy values strong (type_promotion.rst); the expected outcome per mode is the
  lattice's (adapters/reference/promotion.py, through generate.py's outcome words).
- array_inference: jnp.array / jnp.asarray of Python scalars, lists, NumPy values and JAX arrays,
  with and without dtype=; JAX's tests' rule: weak iff no dtype is given and the input is a Python
  scalar (not bool) or a weak array; a list's dtype is the promotion of its leaves, strong.
- weak_kept: what an operation does to its input's weak flag; *_like without dtype=, indexing,
  slicing and jnp.pad keep it; a dtype= and lax.convert_element_type / astype drop it.
Nobody edits a cell by hand: lint (TABLE-GENERATED) checks each file is `render()`'s text.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
W = SimpleNamespace(**runpy.run_path(str(HERE.parent / "generate_cells.py")))
G = W.load("promotion_table_generator", HERE / "generate.py")
P = G.P
MODES = [(pr, x) for pr in G.PROMOTIONS for x in G.X64]

# ---------------------------------------------------------------- numpy_operands

ARRAY_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "bfloat16", "float16", "float32"]
# (cell name, bind code, the value the model reads): Python scalars, then NumPy values
OTHERS = [
    ("1", "1", 1),
    ("1.0", "1.0", 1.0),
    ("np.array(1)", "np.array(1)", P.np.array(1)),
    ("np.array(1.0)", "np.array(1.0)", P.np.array(1.0)),
    ("np.int64(1)", "np.int64(1)", P.np.int64(1)),
    ("np.int16(1)", "np.int16(1)", P.np.int16(1)),
    ("np.uint8(1)", "np.uint8(1)", P.np.uint8(1)),
    ("np.float32(1)", "np.float32(1)", P.np.float32(1)),
    ("np.array(1,int8)", "np.array(1, 'int8')", P.np.array(1, "int8")),
]
NUMPY_DOC = {"doc": "docs/type_promotion.rst", "section": "Type promotion semantics"}


def numpy_cell(a: str, name: str, code: str, value: Any) -> dict[str, Any]:
    """jnp array of dtype a + the other operand, in both orders is not needed: `+` is symmetric in
    the lattice and the table case checks the order; here the JAX value is on the left."""
    per = {}
    for pr, x in MODES:
        m = G.mode(x, pr)
        out = G.outcome(lambda: P.lattice_result_type(P.Operand(a), value, mode=m), True)  # noqa: B023
        per[pr, x] = out if "raises" in out else {**out, "warns": "none"}
    return {
        "id": f"{a}|{name}",
        "bind": f"a = ones('{a}'); b = {code}",
        "expect": G._since(G._collapse(per)),
    }


# ---------------------------------------------------------------- array_inference

# (cell name, bind code of x, the model's reading of x: ("scalar", v) | ("list", leaves) |
#  ("numpy", v) | ("weak-array", Python scalar))
INPUTS = [
    ("1", "1", ("scalar", 1)),
    ("1.0", "1.0", ("scalar", 1.0)),
    ("1j", "1j", ("scalar", 1j)),
    ("True", "True", ("scalar", True)),
    ("[1]", "[1]", ("list", [1])),
    ("[1.0]", "[1.0]", ("list", [1.0])),
    ("(1,2.0)", "(1, 2.0)", ("list", [1, 2.0])),
    ("[0,np.int16(1)]", "[0, np.int16(1)]", ("list", [0, P.np.int16(1)])),
    ("[0,np.float16(1)]", "[0, np.float16(1)]", ("list", [0, P.np.float16(1)])),
    ("[1j]", "[1j]", ("list", [1j])),
    ("[asarray(1)]", "[jnp.asarray(1)]", ("list", ["weak:1"])),
    ("[asarray(1j)]", "[jnp.asarray(1j)]", ("list", ["weak:1j"])),
    ("[asarray(1.0),2]", "[jnp.asarray(1.0), 2]", ("list", ["weak:1.0", 2])),
    ("np.int16(1)", "np.int16(1)", ("numpy", P.np.int16(1))),
    ("np.float32(1)", "np.float32(1)", ("numpy", P.np.float32(1))),
    ("np.array(1)", "np.array(1)", ("numpy", P.np.array(1))),
    ("asarray(1)", "jnp.asarray(1)", ("weak-array", 1)),
    ("asarray(1.0)", "jnp.asarray(1.0)", ("weak-array", 1.0)),
]
REF_NO_TRACER_LIST = {
    "when": {"adapter": "reference"},
    "not_applicable": "the reference's jnp.array makes no array of a list of tracers (jit path)",
}
DTYPES = [("", None), ("dtype=int", int), ("dtype=float", float)]


def _leaf(v: Any, m: Any) -> Any:
    if isinstance(v, str) and v.startswith("weak:"):
        return P.Operand(
            *P.typed(complex(v[5:]) if "j" in v else float(v[5:]) if "." in v else int(v[5:]), m)
        )
    return v


def inferred(reading: tuple[str, Any], dtype: Any, m: Any) -> tuple[str, bool]:
    """(dtype, weak) of jnp.array(x, dtype): JAX's rule read from its tests (testArrayDtypeInference,
    testArrayWeakType), the promotion of the leaves through the lattice model."""
    how, v = reading
    if dtype is not None:
        return P.typed(dtype, m)[0], False
    if how == "list":
        return P.lattice_result_type(*[_leaf(leaf, m) for leaf in v], mode=m)[0], False
    if how == "numpy":
        return P.typed(v, m)[0], False
    return P.typed(v, m)  # a Python scalar or a weak array: weak (bool strong)


def array_cell(fn: str, name: str, code: str, reading: Any, kw: str, dt: Any) -> dict[str, Any]:
    per = {}
    for pr, x in MODES:
        m = G.mode(x, pr)
        out = G.outcome(lambda: inferred(reading, dt, m), True)  # noqa: B023
        per[pr, x] = out if "raises" in out else {**out, "warns": "none"}
    blocks = G._collapse(per)
    if reading[0] == "list":
        blocks = [REF_NO_TRACER_LIST, *blocks]
    return {
        "id": f"{fn}|{name}" + (f"|{kw}" if kw else ""),
        "bind": f"f = jnp.{fn}; x = {code}; kw = dict({kw})",
        "expect": G._since(blocks),
    }


# ---------------------------------------------------------------- weak_kept

VALUES = [  # (cell name, bind code of x: a (4,) array, weak or strong)
    ("weak-int", "jnp.full((4,), 1)"),
    ("weak-float", "jnp.full((4,), 1.0)"),
    ("weak-complex", "jnp.full((4,), 1j)"),
    ("int32", "jnp.ones((4,), 'int32')"),
    ("int8", "jnp.ones((4,), 'int8')"),
    ("float32", "jnp.ones((4,), 'float32')"),
    ("bool", "jnp.ones((4,), bool)"),
]
PAD_MODES = [
    "constant",
    "edge",
    "linear_ramp",
    "maximum",
    "mean",
    "median",
    "minimum",
    "reflect",
    "symmetric",
    "wrap",
    "empty",
]  # testPadWeakType's eleven, with its pad width 0
# (cell name, code of the operation on x, keeps the input's weak flag, source test)
OPS = [
    ("zeros_like", "jnp.zeros_like(x)", True, "testZerosOnesFullLikeWeakType"),
    ("ones_like", "jnp.ones_like(x)", True, "testZerosOnesFullLikeWeakType"),
    ("full_like", "jnp.full_like(x, 2)", True, "testZerosOnesFullLikeWeakType"),
    (
        "zeros_like-dtype",
        "jnp.zeros_like(x, dtype=x.dtype)",
        False,
        "testZerosOnesFullLikeWeakType",
    ),
    ("ones_like-dtype", "jnp.ones_like(x, dtype=x.dtype)", False, "testZerosOnesFullLikeWeakType"),
    (
        "full_like-dtype",
        "jnp.full_like(x, 2, dtype=x.dtype)",
        False,
        "testZerosOnesFullLikeWeakType",
    ),
    ("zeros_like-shape", "jnp.zeros_like(x, shape=(2,))", True, "testZerosOnesFullLikeWeakType"),
    ("full_like-shape", "jnp.full_like(x, 2, shape=(2,))", True, "testZerosOnesFullLikeWeakType"),
    (
        "full_like-dtype-float",
        "jnp.full_like(x, 2, dtype=float)",
        False,
        "testZerosOnesFullLikeWeakType",
    ),
    ("index", "x[1]", True, "testSliceWeakTypes"),
    ("ellipsis", "x[...]", True, "testSliceWeakTypes"),
    ("empty-slice", "x[:0]", True, "testSliceWeakTypes"),
    ("slice", "x[1:3]", True, "testSliceWeakTypes"),
    ("negative-slice", "x[::-2]", True, "testSliceWeakTypes"),
    ("pad", "jnp.pad(x, 1)", True, "testPadWeakType"),
    *[(f"pad-{m}", f"jnp.pad(x, 0, mode='{m}')", True, "testPadWeakType") for m in PAD_MODES],
    ("convert_element_type", "lax.convert_element_type(x, x.dtype)", False, "__api__"),
]
LAX_NUMPY = "tests/lax_numpy_test.py"
# jnp.pad(mode='median') of a complex array raises ValueError ("quantile does not support complex
# input"), as NumPy's median refuses complex; JAX's testPadWeakType pads a weak float only.
NO_CELL = {("pad-median", "weak-complex")}


def weak_cell(value: str, code: str, op: str, run: str, keeps: bool, test: str) -> dict[str, Any]:
    weak = value.startswith("weak-") and keeps
    dt = {"weak-int": "int32", "weak-float": "float32", "weak-complex": "complex64"}.get(value)
    if op.endswith("-dtype-float"):  # dtype=float: the default float, whatever the input
        dt = "float32"
    if test == "__api__":
        source = {
            "file": "tests/api_test.py",
            "function": "JaxprTest.test_weak_type_jit_invariance",
        }
    else:
        source = {"file": LAX_NUMPY, "function": f"LaxBackedNumpyTests.{test}"}
    blocks = []
    if dt is not None:  # a weak value has its kind's default dtype: 64-bit with x64 on
        wide = {"int32": "int64", "float32": "float64", "complex64": "complex128"}[dt]
        blocks += [
            {"when": {"x64": False}, "dtype": dt, "weak_type": weak, "warns": "none"},
            {"when": {"x64": True}, "dtype": wide, "weak_type": weak, "warns": "none"},
        ]
    else:
        blocks.append({"dtype": value, "weak_type": False, "warns": "none"})
    if op.startswith("pad"):
        blocks.insert(
            0, {"when": {"adapter": "reference"}, "not_applicable": "the reference has no jnp.pad"}
        )
    return {
        "id": f"{op}|{value}",
        "bind": f"x = {code}; op = lambda x: {run}",
        "source": source,
        "expect": G._since(blocks),
    }


def repr_cell(value: str, code: str) -> dict[str, Any]:
    """repr of an eager array says weak_type=True exactly when it is weak (type_promotion.rst)."""
    weak = value.startswith("weak-")
    tail = "f'dtype={x.dtype.name}" + (", weak_type=True)'" if weak else ")'")
    return {
        "id": f"repr|{value}",
        "bind": f"x = {code}; op = repr",
        "paths": ["eager"],
        "source": {"file": "tests/dtypes_test.py", "function": "TestPromotionTables.testArrayRepr"},
        "expect": G._since(
            [
                {
                    "warns": "none",
                    "check": ["result.startswith('Array(')", f"result.endswith({tail})"],
                }
            ]
        ),
    }


# ---------------------------------------------------------------- weak_strict

WEAK_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
WEAK_STRICT_SOURCE = {
    "file": "tests/dtypes_test.py",
    "function": "TestPromotionTables.testBinaryNonPromotion",
}


def weak_strict_cell(d: str, weak: bool, promotion: str) -> dict[str, Any]:
    """x + x inside `with jax.numpy_dtype_promotion(promotion)` for x a value of dtype d (made 32-bit
    with x64 off, as JAX's test canonicalizes it), weak or strong: the context's promotion, not the
    mode's, decides. The expected outcome is the lattice model's for the context's promotion."""
    per = {}
    for x in G.X64:
        m = P.Mode(x64=x == "on", explicit_x64_dtypes="warn", promotion=promotion)
        op = P.Operand(P.canonical(d, m.x64), weak)
        per[x] = {**G.outcome(lambda: P.lattice_result_type(op, op, mode=m), True), "warns": "none"}  # noqa: B023
    blocks = [
        {"when": {"x64": False}, **per["off-warn"]},
        {"when": {"x64": True}, **per["on"]},
    ]
    return {
        "id": f"{d}|{'weak' if weak else 'strong'}|{promotion}",
        "bind": f"x = made('{d}', {weak}); p = '{promotion}'",
        "expect": G._since([REF_NO_INTERNALS, *blocks]),
    }


REF_NO_INTERNALS = {
    "when": {"adapter": "reference"},
    "not_applicable": "a weakly typed value of a non-default dtype is made with JAX's lax internals (as JAX's test makes it), which the reference does not model",
}

# ---------------------------------------------------------------- strict_functions

STRICT_DTYPES = ["bool", "int8", "uint8", "int32", "bfloat16", "float16", "float32", "complex64"]
STRICT_FUNCTIONS = [  # (cell name, the function of x)
    ("mean", "jnp.mean"),
    ("var", "jnp.var"),
    ("std", "jnp.std"),
    ("nanmean", "jnp.nanmean"),
    ("median", "jnp.median"),
    ("sum", "jnp.sum"),
    ("prod", "jnp.prod"),
    ("cumsum", "jnp.cumsum"),
    ("average", "jnp.average"),
    ("average-weights-same", "lambda x: jnp.average(x, weights=jnp.ones_like(x))"),
    ("average-weights-float32", "lambda x: jnp.average(x, weights=jnp.ones(x.shape, 'float32'))"),
]


def strict_function_cell(fn: str, code: str, d: str) -> dict[str, Any]:
    """A function of one array gives under strict what it gives under standard (its inner casts are
    explicit); average with float32 weights of another dtype's array is an implicit promotion of two
    strong dtypes, refused under strict (type_promotion.rst, "Strict dtype promotion")."""
    if fn == "average-weights-float32" and d != "float32":
        try:
            P.join([d, "float32"], P.Mode(promotion="strict"))
        except P.TypePromotionError as exc:
            raises = G._raises(exc)["raises"]
        block: dict[str, Any] = {"raises": {**raises, "type": "jax.dtypes.TypePromotionError"}}
    else:
        block = {
            "warns": "none",
            "check": [
                "(result[0].dtype, result[0].weak_type) == (result[1].dtype, result[1].weak_type)"
            ],
        }
    blocks = [block]
    if fn not in ("mean", "sum", "prod", "cumsum"):
        blocks.insert(
            0,
            {
                "when": {"adapter": "reference"},
                "not_applicable": f"the reference has no jnp.{fn.split('-')[0]}",
            },
        )
    return {
        "id": f"{fn}|{d}",
        "bind": f"f = {code}; x = ones('{d}')",
        "expect": G._since(blocks),
    }


# ---------------------------------------------------------------- files

TABLES = {
    "numpy_operands.cells.json": lambda: [numpy_cell(a, *o) for a in ARRAY_DTYPES for o in OTHERS],
    "array_inference.cells.json": lambda: [
        array_cell(fn, name, code, reading, kw, dt)
        for fn in ("array", "asarray")
        for name, code, reading in INPUTS
        for kw, dt in DTYPES
        # dtype= only with a real Python scalar: jnp.array(1j, dtype=float) raises TypeError
        # eagerly but warns and gives float32 under jit on 0.10.2 (a finding, not a family member)
        if not (kw and (reading[0] != "scalar" or isinstance(reading[1], complex)))
    ],
    "weak_strict.cells.json": lambda: [
        weak_strict_cell(d, weak, pr)
        for d in WEAK_DTYPES
        for weak in (True, False)
        for pr in ("standard", "strict")
    ],
    "strict_functions.cells.json": lambda: [
        strict_function_cell(fn, code, d)
        for fn, code in STRICT_FUNCTIONS
        for d in STRICT_DTYPES
        if not (
            fn == "median" and d == "complex64"
        )  # median refuses complex (ValueError) in either mode
    ],
    "weak_kept.cells.json": lambda: (
        [weak_cell(v, code, *op) for op in OPS for v, code in VALUES if (op[0], v) not in NO_CELL]
        + [repr_cell(v, code) for v, code in VALUES]
    ),
}


def render() -> dict[str, str]:
    """Each data file's text, keyed by its name in specs/promotion/."""
    return W.render_tables(W.script_name(__file__), {n: make() for n, make in TABLES.items()})


if __name__ == "__main__":
    sys.exit(W.main(__file__, render))
