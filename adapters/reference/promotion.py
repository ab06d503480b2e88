"""JAX's type promotion, from its lattice: joins, weak types, x64 off, strict mode, the small dtypes.

Nothing here is a table copied from JAX: every result is the join (least upper bound) of the
operands' nodes on a lattice built below from the edges the documentation draws, and the
documented 18x18 table is what `documented_table()` computes from it.

Sources (JAX 0.10.2 is the release modelled):
- docs/type_promotion.rst ("Type promotion semantics"): the lattice (its edges are `DOC_EDGES`
  below, as the code that draws the figure lists them), "promotion between any two types is
  given by their join on this lattice", weak types (i*, f*, c*: Python scalars and weakly typed
  arrays), `jnp.asarray(2)` is a weak int32 with x64 off, and "Strict dtype promotion": under
  jax_numpy_dtype_promotion='strict' only "safe weakly-typed promotions" remain, and the error
  reads "Input dtypes (...) have no available implicit dtype promotion path when
  jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output type, or
  set jax_numpy_dtype_promotion=standard."
- docs/jep/9407-type-promotion.md ("Design of Type Promotion Semantics for JAX"): goal 5, binary
  promotion should avoid types wider than the inputs (the reason for the x64-off rule below), and
  f* as a weak float64.
- docs/default_dtypes.md: with x64 off every 64-bit type stands for its 32-bit sibling.
- JAX's tests/dtypes_test.py (read, not copied): TestPromotionTables.testObservedPromotionTable
  pins the `+` table in three situations (x64 on; x64 off with explicit 64-bit dtypes allowed,
  where "i4xu4 -> i4 instead of s8"; x64 off otherwise), testPromoteDtypesStrict (strong types
  promote only to themselves; bool refuses every weak type; int refuses float and complex ...),
  testPromoteDtypesStandard, testFloatPromotionError and testIntNPromotionError (the 8/6/4-bit
  floats and the 1/2/4-bit integers promote with nothing but themselves, bool and weak types;
  "8-bit floats do not support implicit promotion").
- measured on JAX 0.10.2 (bench/promotion_observed.py; docs/research/promotion-0.10.2.md): the
  small dtypes meeting strong integers, the exact error words, what promote_types returns for a
  weak result, and which door canonicalizes a 64-bit dtype with x64 off.

How the extra dtypes enter the lattice (tested, and observed cell by cell): the weak int node i*
points at each of int1/int2/int4/uint1/uint2/uint4 and the weak float node f* at each 4/6/8-bit
float, and none of them points anywhere. So they promote with themselves, bool and weak types;
a small float also absorbs every standard integer (their upper bounds pass through f*), and
everything else is a TypePromotionError.

Pure Python and NumPy (ml_dtypes for bfloat16 and the small dtypes); no JAX import.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

try:  # JAX ships ml_dtypes; without it only the NumPy dtypes exist here.
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None  # type: ignore[assignment]

# ---------------------------------------------------------------- the nodes

WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "int*", "float*", "complex*"
WEAK_NODES = (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX)
PY_TYPE_OF_WEAK = {WEAK_INT: int, WEAK_FLOAT: float, WEAK_COMPLEX: complex}
WEAK_OF_PY_TYPE = {int: WEAK_INT, float: WEAK_FLOAT, complex: WEAK_COMPLEX}

# The documentation's short codes (type_promotion.rst), in the order of its table.
DOC_CODES = {
    "b1": "bool", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
    "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "bf": "bfloat16", "f2": "float16", "f4": "float32", "f8": "float64",
    "c8": "complex64", "c16": "complex128",
    "i*": WEAK_INT, "f*": WEAK_FLOAT, "c*": WEAK_COMPLEX,
}  # fmt: skip
CODE_OF = {v: k for k, v in DOC_CODES.items()}
DOC_ORDER = list(DOC_CODES.values())

# The lattice of type_promotion.rst, edge for edge ("the graphic above was generated with the
# following code": lattice = {'b1': ['i*'], 'u1': ['u2', 'i2'], ...}).
DOC_EDGES: dict[str, list[str]] = {
    "b1": ["i*"], "u1": ["u2", "i2"], "u2": ["i4", "u4"], "u4": ["u8", "i8"], "u8": ["f*"],
    "i*": ["u1", "i1"], "i1": ["i2"], "i2": ["i4"], "i4": ["i8"], "i8": ["f*"],
    "f*": ["c*", "f2", "bf"], "bf": ["f4"], "f2": ["f4"], "f4": ["c8", "f8"], "f8": ["c16"],
    "c*": ["c8"], "c8": ["c16"], "c16": [],
}  # fmt: skip

# Beyond the documentation's table: leaves under the weak nodes (see the module docstring).
SMALL_INTS = ["int1", "uint1", "int2", "uint2", "int4", "uint4"]
SMALL_FLOATS = [
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
]  # fmt: skip
EXTRA_LEAVES = {WEAK_INT: SMALL_INTS, WEAK_FLOAT: SMALL_FLOATS}

# With x64 off each 64-bit type stands for its 32-bit sibling (docs/default_dtypes.md).
TO_32 = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}
# The default dtype of a weak kind in each x64 setting (type_promotion.rst: jnp.asarray(2) is int32).
DEFAULT_OF_WEAK = {
    False: {WEAK_INT: "int32", WEAK_FLOAT: "float32", WEAK_COMPLEX: "complex64"},
    True: {WEAK_INT: "int64", WEAK_FLOAT: "float64", WEAK_COMPLEX: "complex128"},
}
# What np.dtype(int) and friends are (Linux): promote_types returns these for a weak join.
NUMPY_OF_WEAK = {WEAK_INT: "int64", WEAK_FLOAT: "float64", WEAK_COMPLEX: "complex128"}


def kind(node: str) -> str:
    """'b', 'i' (signed or unsigned integer), 'f' or 'c'."""
    if node == "bool":
        return "b"
    if node in WEAK_NODES:
        return node[0]
    if "int" in node:
        return "i"
    return "c" if node.startswith("complex") else "f"


def family(node: str) -> str:
    """Like `kind`, with unsigned integers apart: 'b', 'u', 'i', 'f' or 'c'."""
    return "u" if node.startswith("uint") else kind(node)


def dtype(name: str) -> np.dtype:
    """The NumPy dtype of a strong node (ml_dtypes for bfloat16 and the small dtypes)."""
    if ml_dtypes is not None and hasattr(ml_dtypes, name):
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def available(name: str) -> bool:
    try:
        dtype(name)
    except TypeError:
        return False
    return True


def node_of_dtype(dt: Any) -> str:
    """The strong node of a dtype: its name ('float8_e4m3fn', 'int32', ...)."""
    return np.dtype(dt).name


# ---------------------------------------------------------------- the lattices


def standard_lattice(x64: bool, extras: bool = True) -> dict[str, list[str]]:
    """The documented lattice (node -> nodes directly above it), for one x64 setting.

    With x64 off JAX promises no 64-bit result from inputs that have none (JEP 9407, goal 5; the
    64-bit types do not exist there by default). The documented lattice breaks that in one place
    only: an edge from a type that exists with x64 off into a 64-bit type of another kind
    (u4 -> i8, which makes uint32 x int32 an int64). With x64 off such an edge is redirected to
    the 64-bit type's 32-bit sibling (u4 -> i4). Edges within a kind (i4 -> i8) stay: they
    only add 64-bit upper bounds that no pair of 32-bit types reaches first.
    """
    out = {DOC_CODES[a]: [DOC_CODES[b] for b in bs] for a, bs in DOC_EDGES.items()}
    if not x64:
        for a, bs in out.items():
            if a in WEAK_NODES or a in TO_32:
                continue
            out[a] = [TO_32[b] if b in TO_32 and family(b) != family(a) else b for b in bs]
    if extras:
        for parent, leaves in EXTRA_LEAVES.items():
            for leaf in leaves:
                if available(leaf):
                    out[parent] = [*out[parent], leaf]
                    out[leaf] = []
    return out


def strict_lattice(extras: bool = True) -> dict[str, list[str]]:
    """Strict mode: "safe weakly-typed promotions" only (type_promotion.rst).

    A weak kind sits below every strong type of its kind and of the wider kinds (i* below f*
    below c*); no strong type sits below another, and bool below nothing. x64 does not matter.
    """
    strong = [n for n in DOC_ORDER if n not in WEAK_NODES]
    if extras:
        strong += [n for n in SMALL_INTS + SMALL_FLOATS if available(n)]
    by_kind = {k: [n for n in strong if kind(n) == k] for k in "bifc"}
    out: dict[str, list[str]] = {n: [] for n in strong}
    out[WEAK_INT] = [WEAK_FLOAT, *by_kind["i"]]
    out[WEAK_FLOAT] = [WEAK_COMPLEX, *by_kind["f"]]
    out[WEAK_COMPLEX] = list(by_kind["c"])
    return out


def upper_bounds(lattice: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    """Each node's upper bounds: itself and everything reachable along the edges."""
    ub: dict[str, frozenset[str]] = {}

    def visit(n: str, path: tuple[str, ...] = ()) -> frozenset[str]:
        if n in path:
            raise ValueError(f"cycle in the promotion lattice at {n}")
        if n not in ub:
            ub[n] = frozenset({n}).union(*(visit(m, (*path, n)) for m in lattice[n]))
        return ub[n]

    for n in lattice:
        visit(n)
    return ub


_UB_CACHE: dict[tuple[bool, bool], dict[str, frozenset[str]]] = {}


def is_node(name: str) -> bool:
    """Whether a dtype name is a node of the lattice (float0 and structured dtypes are not)."""
    return name in _bounds(False, True)


def _bounds(strict: bool, x64: bool) -> dict[str, frozenset[str]]:
    key = (strict, x64 and not strict)
    if key not in _UB_CACHE:
        _UB_CACHE[key] = upper_bounds(strict_lattice() if strict else standard_lattice(x64))
    return _UB_CACHE[key]


# ---------------------------------------------------------------- modes and errors


@dataclasses.dataclass(frozen=True)
class Mode:
    """The three flags promotion depends on."""

    x64: bool = False
    explicit_x64_dtypes: str = "warn"  # warn | error | allow (matters only with x64 off)
    promotion: str = "standard"  # jax_numpy_dtype_promotion: standard | strict

    @property
    def strict(self) -> bool:
        return self.promotion == "strict"


class TypePromotionError(ValueError):
    """JAX's jax.dtypes.TypePromotionError (a ValueError)."""


def _node_text(n: str) -> str:
    return f"<class '{PY_TYPE_OF_WEAK[n].__name__}'>" if n in WEAK_NODES else n


def _refusal(nodes: tuple[str, ...], strict: bool) -> TypePromotionError:
    """JAX's words for a pair with no common upper bound (the strict ones are documented)."""
    names = tuple(_node_text(n) for n in nodes)
    head = f"Input dtypes {names} have no available implicit dtype promotion path"
    tail = ("To avoid unintended promotion, {} do not support implicit promotion. If you'd like "
            "your inputs to be promoted to another type, you can do so explicitly using e.g. "
            "x.astype('{}')")  # fmt: skip
    if strict:
        msg = (
            f"{head} when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to "
            "the desired output type, or set jax_numpy_dtype_promotion=standard."
        )
    elif any(n.startswith("float8_") for n in nodes):
        msg = f"{head}. " + tail.format("8-bit floats", "float32")
    elif any(n.startswith("float6_") for n in nodes):
        msg = f"{head}. " + tail.format("6-bit floats", "float32")
    elif any(n.startswith("float4_") for n in nodes):
        msg = f"{head}. " + tail.format("4-bit floats", "float32")
    elif any(n in SMALL_INTS for n in nodes):
        msg = f"{head}. " + tail.format("1-bit, 2-bit and 4-bit integers", "int32")
    else:
        msg = f"{head}. Try explicitly casting inputs to the desired output type."
    return TypePromotionError(msg)


def join(nodes: Iterable[str], mode: Mode) -> str:
    """The least upper bound of the nodes on the mode's lattice, or TypePromotionError."""
    nodes = tuple(dict.fromkeys(nodes))
    ub = _bounds(mode.strict, mode.x64)
    for n in nodes:
        if n not in ub:
            raise ValueError(f"dtype={n!r} is not a valid dtype for JAX type promotion.")
    common = frozenset.intersection(*(ub[n] for n in nodes))
    least = [c for c in common if common <= ub[c]]
    if len(least) == 1:
        return least[0]
    if not least:
        raise _refusal(nodes, mode.strict)
    raise AssertionError(f"the lattice is not a lattice: {nodes} have upper bounds {least}")


# ---------------------------------------------------------------- canonicalization


def canonical(name: str, x64: bool) -> str:
    """The dtype a 64-bit type stands for in an x64 setting."""
    return name if x64 else TO_32.get(name, name)


def explicit(name: str, mode: Mode, where: str = "") -> str:
    """A dtype the user names (a string, np.dtype, NumPy scalar type): warn / error / allow.

    With x64 on, or with jax_explicit_x64_dtypes=allow, it is kept; otherwise a 64-bit one is
    truncated with a UserWarning (warn) or refused with a ValueError (error), in JAX's words.
    """
    if mode.x64 or mode.explicit_x64_dtypes == "allow" or name not in TO_32:
        return name
    short = TO_32[name]
    at = f" requested in {where}" if where else ""
    gotchas = "See https://github.com/jax-ml/jax#current-gotchas for more."
    if mode.explicit_x64_dtypes == "error":
        raise ValueError(
            f"Explicitly requested dtype {name}{at} is not available. To enable more dtypes, set "
            f"the jax_enable_x64 or allow_explicit_x64_dtypes configuration options.{gotchas}"
        )
    warnings.warn(
        f"Explicitly requested dtype {name}{at} is not available, and will be truncated to dtype "
        f"{short}. To enable more dtypes, set the jax_enable_x64 configuration option or the "
        f"JAX_ENABLE_X64 shell environment variable. {gotchas}",
        UserWarning,
        stacklevel=3,
    )
    return short


# ---------------------------------------------------------------- operands


@dataclasses.dataclass(frozen=True)
class Operand:
    """What promotion sees of an operand: a dtype name and the weak_type flag.

    `Operand("int32", True)` is a weakly typed array (jnp.asarray(1) with x64 off).
    """

    dtype: str
    weak: bool = False


def typed(x: Any, mode: Mode) -> tuple[str, bool]:
    """(dtype name, weak) of one argument of result_type / an operator, as JAX reads it.

    - a Python scalar type int/float/complex: the x64 default of its kind, weak;
      the type bool: bool, strong (bool is never weak);
    - a Python value: the same by its type (True is a strong bool);
    - a string, np.dtype or NumPy scalar type: a dtype the user names (`explicit`);
    - an `Operand` or anything with .dtype and .weak_type (an array): as it is, never
      canonicalized ("once we've formed an x64 value, that is something we respect");
    - None: the default float.
    """
    if x is None:
        return DEFAULT_OF_WEAK[mode.x64][WEAK_FLOAT], False
    if isinstance(x, type) and x in WEAK_OF_PY_TYPE:
        return DEFAULT_OF_WEAK[mode.x64][WEAK_OF_PY_TYPE[x]], True
    if x is bool or isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray):
        return "bool", False
    if type(x) in WEAK_OF_PY_TYPE:
        return DEFAULT_OF_WEAK[mode.x64][WEAK_OF_PY_TYPE[type(x)]], True
    if isinstance(x, Operand):
        return x.dtype, x.weak
    if isinstance(x, (str, np.dtype)) or isinstance(x, type) and issubclass(x, np.generic):
        return explicit(node_of_dtype(x), mode, "dtype"), False
    if hasattr(x, "weak_type"):
        return node_of_dtype(x.dtype), bool(x.weak_type)
    return canonical(node_of_dtype(np.asarray(x).dtype), mode.x64), False  # NumPy values


def _jax_node(name: str, weak: bool) -> str:
    """The lattice node of a (dtype, weak) pair: a weak dtype is its kind's weak node."""
    if not weak or name == "bool":
        return name
    return {"i": WEAK_INT, "f": WEAK_FLOAT, "c": WEAK_COMPLEX}[kind(name)]


def _dtype_of_node(node: str, x64: bool) -> str:
    return DEFAULT_OF_WEAK[x64][node] if node in WEAK_NODES else node


def lattice_result_type(*args: Any, mode: Mode = Mode()) -> tuple[str, bool]:
    """(dtype name, weak) of an operation on the arguments: what `x + y` gives.

    One argument is itself. Equal dtypes, not all weak, are that dtype, strong. All weak
    (standard mode): the join of their dtypes as strong types, weak. Otherwise the join of
    their nodes; the result is weak if the join is a weak node, and then has its kind's default
    dtype. Bool is never weak.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = [typed(a, mode) for a in args]
    names = [n for n, _ in pairs]
    weaks = [w for _, w in pairs]
    if len(pairs) == 1:
        name, weak = pairs[0]
    elif len(set(names)) == 1 and not all(weaks):
        name, weak = names[0], False
    elif all(weaks) and not mode.strict:
        name, weak = join(names, mode), True
    else:
        top = join([_jax_node(n, w) for n, w in pairs], mode)
        name, weak = _dtype_of_node(top, mode.x64), top in WEAK_NODES
    return name, weak and name != "bool"


def result_type(*args: Any, mode: Mode = Mode(), return_weak_type_flag: bool = False) -> Any:
    """jnp.result_type / jax.dtypes.result_type: a weak result has its kind's default dtype."""
    name, weak = lattice_result_type(*args, mode=mode)
    if weak:
        k = "f" if name in SMALL_FLOATS or name == "bfloat16" else kind(name)
        name = DEFAULT_OF_WEAK[mode.x64][{"i": WEAK_INT, "f": WEAK_FLOAT, "c": WEAK_COMPLEX}[k]]
    out = dtype(name)
    return (out, weak) if return_weak_type_flag else out


def promote_types(a: Any, b: Any, mode: Mode = Mode()) -> np.dtype:
    """jnp.promote_types: the join of two dtype specifiers, never canonicalized.

    The Python types int, float and complex are the weak nodes; anything else is np.dtype(x)
    as it is, 64-bit included with x64 off. A weak join is returned as NumPy's dtype of the
    Python type (np.dtype(int) is int64), in every x64 setting.
    """

    def node(x: Any) -> str:
        for py, w in WEAK_OF_PY_TYPE.items():
            if x is py:
                return w
        return node_of_dtype(x)

    top = join([node(a), node(b)], mode)
    return dtype(NUMPY_OF_WEAK.get(top, top))


# ---------------------------------------------------------------- making operands, tables


def array_operand(name: str, mode: Mode) -> Operand:
    """A strongly typed array made with `jnp.ones(shape, dtype=name)`: the dtype goes through
    `explicit` (so a 64-bit one warns / raises / stays with x64 off)."""
    return Operand(explicit(name, mode, "ones") if name in TO_32 else name, False)


def weak_operand(node: str, mode: Mode) -> Operand:
    """`jnp.asarray(1)`, `jnp.asarray(1.0)`, `jnp.asarray(1j)`: the kind's default, weak."""
    return Operand(DEFAULT_OF_WEAK[mode.x64][node], True)


def documented_table(extras: bool = False) -> dict[tuple[str, str], str]:
    """The documented x64-on table: the join of every pair of nodes (weak results stay i*/f*/c*),
    computed on the documented lattice: what type_promotion.rst shows, derived, not copied."""
    mode = Mode(x64=True)
    nodes = DOC_ORDER + ([n for n in SMALL_INTS + SMALL_FLOATS if available(n)] if extras else [])
    out: dict[tuple[str, str], str] = {}
    for a in nodes:
        for b in nodes:
            try:
                out[a, b] = join([a, b], mode)
            except TypePromotionError:
                out[a, b] = "error"
    return out


def documented_in_mode(node: str, x64: bool) -> tuple[str, bool]:
    """A documented (x64-on) cell canonicalized to an x64 setting: (dtype, weak)."""
    if node in WEAK_NODES:
        return DEFAULT_OF_WEAK[x64][node], True
    return canonical(node, x64), False


__all__ = [
    "DOC_CODES", "DOC_EDGES", "DOC_ORDER", "EXTRA_LEAVES", "Mode", "Operand", "SMALL_FLOATS",
    "SMALL_INTS", "TypePromotionError", "WEAK_NODES", "array_operand", "canonical",
    "documented_in_mode", "documented_table", "explicit", "is_node", "join", "lattice_result_type",
    "promote_types", "result_type", "standard_lattice", "strict_lattice", "typed",
    "upper_bounds", "weak_operand",
]  # fmt: skip
