"""The program grammar of `jax-conformance diff`: Hypothesis strategies over the suite's topics.

A generated program is a few lines of Python that binds `result`, written against the names
every adapter provides (`jax`, `jnp`, `np`, `lax`; see jax_conformance.adapters.SPEC_NAMES). It is
run unchanged on both implementations (jax_conformance.differential.engine) and what it did is compared
(jax_conformance.differential.observe).

Each topic ("area") is one function decorated with `@area("name")` that takes Hypothesis's
`draw` and returns the program's lines. To extend the grammar:

- a new area: write `@area("mine") def _mine(draw): ...` returning a list of source lines, the
  last of which binds `result`; it is picked up by `programs()`, `--areas` and the tables;
- a new spelling, value or function in an existing area: add it to the tables below
  (DTYPE_SPELLINGS, SCALARS, CREATION, BINARY_OPS, BODIES, ...). Every entry is plain source
  text, so what a program does is exactly what the record shows.

Keep programs small and deterministic (no randomness, no global configuration changes: the
worker restarts after a program that leaks process-wide state) and their values small (no
overflow, no integer division by zero), so that a disagreement is a difference in semantics,
not in undefined behaviour. Hypothesis shrinks towards the first entry of every table, so
put the simplest spelling first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

AreaFn = Callable[[st.DrawFn], list[str]]
AREAS: dict[str, AreaFn] = {}


def area(name: str) -> Callable[[AreaFn], AreaFn]:
    """Register a topic: `fn(draw) -> lines` (the last line binds `result`)."""

    def register(fn: AreaFn) -> AreaFn:
        AREAS[name] = fn
        return fn

    return register


@dataclass(frozen=True)
class Program:
    area: str
    text: str

    def __str__(self) -> str:
        return self.text


def programs(areas: list[str] | None = None) -> st.SearchStrategy[Program]:
    """Programs from the named areas (default: all), each area equally likely."""
    names = list(areas or AREAS)
    unknown = [n for n in names if n not in AREAS]
    if unknown:
        word = "area" if len(unknown) == 1 else "areas"
        raise ValueError(f"unknown {word} {', '.join(unknown)}; the areas are {', '.join(AREAS)}")

    @st.composite
    def program(draw: st.DrawFn) -> Program:
        name = draw(st.sampled_from(names))
        return Program(name, "\n".join(AREAS[name](draw)))

    return program()


# ---------------------------------------------------------------- tables (simplest first)

# How a dtype is spelled in a `dtype=` argument: strings, jnp/np scalar types, Python types.
DTYPE_SPELLINGS = [
    "'float32'",
    "'int32'",
    "'float64'",
    "'int64'",
    "'bool'",
    "'int16'",
    "'uint8'",
    "'uint32'",
    "'uint64'",
    "'float16'",
    "'bfloat16'",
    "'complex64'",
    "'complex128'",
    "jnp.float32",
    "jnp.float64",
    "jnp.int32",
    "jnp.int64",
    "jnp.uint64",
    "jnp.bfloat16",
    "jnp.complex128",
    "np.float64",
    "np.int64",
    "np.int32",
    "np.float32",
    "float",
    "int",
    "bool",
    "complex",
    "'f8'",
    "'i8'",
]
FLOAT_DTYPES = [
    "'float32'",
    "'float64'",
    "'float16'",
    "'bfloat16'",
    "jnp.float32",
    "jnp.float64",
    "np.float64",
]
INT_DTYPES = [
    "'int32'",
    "'int64'",
    "'int16'",
    "'uint8'",
    "'uint32'",
    "jnp.int32",
    "jnp.int64",
    "'bool'",
]
SCALARS = ["1", "2.0", "True", "0", "-3", "0.5", "-1.25", "7", "1e3", "False", "(1+2j)"]
NONZERO = ["2", "3.0", "-2", "0.5", "True", "-1.5", "5", "(2-1j)"]
SHAPES = ["()", "3", "(2,)", "(2, 3)", "(0,)", "(1, 2)"]


def _dtype(draw: st.DrawFn, optional: bool = True, table: list[str] | None = None) -> str | None:
    choices: list[str | None] = ([None] if optional else []) + list(table or DTYPE_SPELLINGS)
    return draw(st.sampled_from(choices))


def _kw(dtype: str | None) -> str:
    return "" if dtype is None else f", dtype={dtype}"


def _value(draw: st.DrawFn) -> str:
    """A value a creation function or an operation takes: a Python scalar, a list, a NumPy value."""
    kind = draw(st.sampled_from(["scalar", "list", "nested", "numpy_scalar", "numpy_array"]))
    if kind == "scalar":
        return draw(st.sampled_from(SCALARS))
    if kind == "list":
        return (
            "["
            + ", ".join(draw(st.lists(st.sampled_from(SCALARS[:9]), min_size=1, max_size=3)))
            + "]"
        )
    if kind == "nested":
        row = draw(st.lists(st.sampled_from(SCALARS[:9]), min_size=1, max_size=2))
        return f"[[{', '.join(row)}], [{', '.join(row)}]]"
    if kind == "numpy_scalar":
        kind_name = draw(st.sampled_from(["float64", "int64", "float32", "int32", "bool_"]))
        return f"np.{kind_name}({draw(st.sampled_from(['1', '2', '0']))})"
    return f"np.array([1, 2], dtype=np.{draw(st.sampled_from(['int64', 'float64', 'float32', 'int8', 'uint16']))})"


def _array(draw: st.DrawFn, floating: bool = False) -> str:
    """An array operand made with JAX: a dtype chosen explicitly, or JAX's default."""
    dtype = _dtype(draw, table=FLOAT_DTYPES if floating else None)
    value = draw(
        st.sampled_from(
            ["1.5", "[1.0, -2.0]", "[0.5, 2.0, 3.0]", "2", "[1, 2]"]
            if floating
            else ["1", "[1, 2]", "2.5", "[0.5, -1.0]", "True", "[3, 4, 5]"]
        )
    )
    return f"jnp.array({value}{_kw(dtype)})"


def _operand(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["python", "jax", "numpy", "jax_default"]))
    if kind == "python":
        return draw(st.sampled_from(SCALARS))
    if kind == "jax":
        return _array(draw)
    if kind == "numpy":
        return draw(
            st.sampled_from(
                [
                    "np.float64(1.5)",
                    "np.int32(3)",
                    "np.float32(2.0)",
                    "np.array([1, 2])",
                    "np.array(2.5)",
                    "np.uint8(4)",
                    "np.int64(-2)",
                ]
            )
        )
    return draw(
        st.sampled_from(
            ["jnp.array(2)", "jnp.array(1.5)", "jnp.arange(3)", "jnp.ones(2)", "jnp.array(True)"]
        )
    )


# ---------------------------------------------------------------- areas


# name -> (argument template, has a `dtype=`); {shape} {value} {like} {fill} {n} are filled in.
CREATION = {
    "zeros": "jnp.zeros({shape}{dtype})",
    "ones": "jnp.ones({shape}{dtype})",
    "full": "jnp.full({shape}, {fill}{dtype})",
    "empty": "jnp.empty({shape}{dtype})",
    "array": "jnp.array({value}{dtype})",
    "asarray": "jnp.asarray({value}{dtype})",
    "arange": "jnp.arange({n}{dtype})",
    "arange3": "jnp.arange(1, {n}, 2{dtype})",
    "linspace": "jnp.linspace(0, 1, {n}{dtype})",
    "eye": "jnp.eye({n}{dtype})",
    "identity": "jnp.identity({n}{dtype})",
    "tri": "jnp.tri({n}{dtype})",
    "zeros_like": "jnp.zeros_like({like}{dtype})",
    "ones_like": "jnp.ones_like({like}{dtype})",
    "full_like": "jnp.full_like({like}, {fill}{dtype})",
    "empty_like": "jnp.empty_like({like}{dtype})",
}


@area("creation")
def _creation(draw: st.DrawFn) -> list[str]:
    """A creation function x a dtype spelling x an input (creation functions, defaults, 64-bit requests)."""
    name = draw(st.sampled_from(list(CREATION)))
    dtype = _dtype(draw)
    like, lines = "x", []
    if "{like}" in CREATION[name]:
        like = draw(st.sampled_from(["x", "[1, 2]", "2.5", "np.ones(2, np.float64)", "3"]))
        if like == "x":
            lines.append(f"x = {_array(draw)}")
    text = CREATION[name].format(
        shape=draw(st.sampled_from(SHAPES)),
        value=_value(draw),
        like=like,
        fill=draw(st.sampled_from(SCALARS[:9])),
        n=draw(st.sampled_from(["3", "1", "4", "0"])),
        dtype=_kw(dtype),
    )
    return lines + [f"result = {text}"]


BINARY_OPS = [
    "+",
    "*",
    "-",
    "/",
    "<",
    "==",
    "**",
    "//",
    "%",
    "&",
    "|",
    "jnp.maximum",
    "jnp.add",
    "jnp.multiply",
]


@area("promotion")
def _promotion(draw: st.DrawFn) -> list[str]:
    """Python scalars against arrays, JAX against NumPy, every operator; optionally inside jit or enable_x64."""
    op = draw(st.sampled_from(BINARY_OPS))
    lhs = _operand(draw)
    rhs = (
        draw(st.sampled_from(NONZERO))
        if op in ("/", "//", "%") and draw(st.booleans())
        else _operand(draw)
    )
    if op in ("/", "//", "%") and rhs in ("0", "False", "True"):
        rhs = "2"
    expr = f"{op}(a, b)" if op.startswith("jnp.") else f"a {op} b"
    where = draw(st.sampled_from(["plain", "jit", "x64_inside"]))
    lines = [f"a = {lhs}", f"b = {rhs}"]
    if where == "jit":
        return lines + [f"result = jax.jit(lambda a, b: {expr})(a, b)"]
    if where == "x64_inside":
        flag = draw(st.sampled_from(["True", "False"]))
        return [
            f"with jax.enable_x64({flag}):",
            f"    a = {lhs}",
            f"    b = {rhs}",
            f"result = {expr}",
        ]
    return lines + [f"result = {expr}"]


# The documented promotion table's 18 nodes as promote_types / result_type take them (the weak
# i*, f*, c* as Python's int, float, complex).
TABLE_NODES = [
    "'bool'", "'uint8'", "'uint16'", "'uint32'", "'uint64'", "'int8'", "'int16'", "'int32'",
    "'int64'", "'bfloat16'", "'float16'", "'float32'", "'float64'", "'complex64'", "'complex128'",
    "int", "float", "complex",
]  # fmt: skip
WEAK_VALUES = {"int": "1", "float": "1.0", "complex": "1j"}


def _table_operand(draw: st.DrawFn, node: str) -> str:
    """An operand of a node: an array of the dtype, or for a weak node a Python scalar or a weakly
    typed array (jnp.asarray of the scalar)."""
    if node in WEAK_VALUES:
        value = WEAK_VALUES[node]
        return value if draw(st.booleans()) else f"jnp.asarray({value})"
    return f"jnp.ones((2,), {node})"


@area("promotion_table")
def _promotion_table(draw: st.DrawFn) -> list[str]:
    """A cell of the promotion table (specs/promotion): promote_types, result_type with the weak
    flag, or `+` on the nodes' operands (weak_type observed), eagerly or under jit, in standard or
    strict promotion (jax.numpy_dtype_promotion)."""
    a, b = draw(st.sampled_from(TABLE_NODES)), draw(st.sampled_from(TABLE_NODES))
    form = draw(st.sampled_from(["promote_types", "result_type", "add", "add_jit"]))
    if form == "promote_types":
        body = [f"result = jnp.promote_types({a}, {b})"]
    elif form == "result_type":
        body = [f"result = jax.dtypes.result_type({a}, {b}, return_weak_type_flag=True)"]
    else:
        x, y = _table_operand(draw, a), _table_operand(draw, b)
        if x in WEAK_VALUES.values() and y in WEAK_VALUES.values():
            y = f"jnp.asarray({y})"  # two Python scalars add in Python
        body = [f"x = {x}", f"y = {y}"]
        body.append(
            "result = jax.jit(lambda x, y: x + y)(x, y)" if form == "add_jit" else "result = x + y"
        )
    if draw(st.booleans()):
        return ["with jax.numpy_dtype_promotion('strict'):", *("    " + line for line in body)]
    return body


@area("canonicalize")
def _canonicalize(draw: st.DrawFn) -> list[str]:
    """canonicalize_dtype, result_type over dtypes and values, promote_types, can_cast, iinfo/finfo."""
    d1, d2 = _dtype(draw, optional=False), _dtype(draw, optional=False)
    form = draw(
        st.sampled_from(
            [
                "canonicalize",
                "result_type_dtypes",
                "result_type_values",
                "promote_types",
                "can_cast",
                "dtype",
                "iinfo",
                "finfo",
                "issubdtype",
            ]
        )
    )
    if form == "canonicalize":
        return [f"result = jax.dtypes.canonicalize_dtype({d1})"]
    if form == "result_type_dtypes":
        return [f"result = jnp.result_type({d1}, {d2})"]
    if form == "result_type_values":
        return [f"result = jnp.result_type({_operand(draw)}, {_operand(draw)})"]
    if form == "promote_types":
        return [f"result = jnp.promote_types({d1}, {d2})"]
    if form == "can_cast":
        return [f"result = jnp.can_cast({d1}, {d2})"]
    if form == "dtype":
        return [f"result = jnp.dtype({d1})"]
    if form == "iinfo":
        return [f"result = jnp.iinfo({draw(st.sampled_from(INT_DTYPES[:-1]))}).max"]
    if form == "finfo":
        return [f"result = jnp.finfo({draw(st.sampled_from(FLOAT_DTYPES))}).eps"]
    return [
        f"result = jnp.issubdtype({d1}, jnp.{draw(st.sampled_from(['floating', 'integer', 'inexact']))})"
    ]


# A function body over `x` (elementwise; `jnp.sum` where a scalar is needed is added by the wrapper).
BODIES = [
    "x * 2.0",
    "jnp.sin(x)",
    "x * x + 1",
    "jnp.exp(x) / (1 + x * x)",
    "jnp.where(x > 0, x, 0.0)",
    "x * 3",
    "jnp.maximum(x, 0.5)",
    "jnp.tanh(x) - x",
    "x.astype(jnp.float32)",
    "x ** 2",
    "jnp.cos(x) * x",
]
INPUTS = [
    "jnp.array([0.5, 1.5])",
    "1.5",
    "jnp.array(2.0)",
    "jnp.array([1.0, 2.0], dtype=jnp.float16)",
    "2",
    "jnp.array([1, 2])",
    "jnp.array(0.5, dtype='bfloat16')",
    "jnp.arange(3.0)",
    "np.float64(0.25)",
    "jnp.array([0.5, 1.5], dtype=jnp.float64)",
]


@area("transforms")
def _transforms(draw: st.DrawFn) -> list[str]:
    """jit / grad / vmap / jvp / value_and_grad (and their compositions) around a small function."""
    body = draw(st.sampled_from(BODIES))
    x = draw(st.sampled_from(INPUTS))
    how = draw(
        st.sampled_from(
            ["jit", "grad", "vmap", "jvp", "value_and_grad", "jit_grad", "vmap_grad", "jvp_tangent"]
        )
    )
    lines = [f"f = lambda x: {body}", f"x = {x}"]
    if how == "jit":
        lines.append("result = jax.jit(f)(x)")
    elif how == "grad":
        lines.append("result = jax.grad(lambda x: jnp.sum(f(x)))(x)")
    elif how == "vmap":
        lines.append("result = jax.vmap(f)(jnp.array([x, x]))")
    elif how == "jvp":
        lines.append("result = jax.jvp(f, (x,), (jnp.ones_like(x),))")
    elif how == "value_and_grad":
        lines.append("result = jax.value_and_grad(lambda x: jnp.sum(f(x)))(x)")
    elif how == "jit_grad":
        lines.append("result = jax.jit(jax.grad(lambda x: jnp.sum(f(x))))(x)")
    elif how == "vmap_grad":
        lines.append("result = jax.vmap(jax.grad(lambda x: jnp.sum(f(x))))(jnp.array([0.5, 1.0]))")
    else:
        t = draw(
            st.sampled_from(
                [
                    "jnp.ones_like(x, dtype=jnp.float16)",
                    "1.0",
                    "jnp.ones(5)",
                    "jnp.ones_like(x) * 2",
                    "jnp.zeros_like(x, dtype=jnp.int32)",
                ]
            )
        )
        lines.append(f"result = jax.jvp(f, (x,), ({t},))")
    return lines


# custom_jvp: the function, the rule's tangent output, how it is used.
JVP_TANGENTS = [
    "jnp.cos(x) * t",
    "2.0 * t",
    "t",
    "(jnp.cos(x) * t).astype(jnp.float16)",
    "jnp.ones(3)",
    "jnp.int32(1)",
    "jnp.zeros_like(x, dtype=jnp.float64)",
    "None",
]
JVP_RETURNS = [
    "return f(x), {t}",
    "return jnp.sin(x), {t}",
    "return (jnp.sin(x), {t}, {t})",
    "return jnp.sin(x)",
    "return jnp.sin(x) * 2, {t}",
    "return [jnp.sin(x), {t}]",
]
CUSTOM_INPUTS = [
    "1.5",
    "jnp.array(0.5)",
    "jnp.array(2.0, dtype=jnp.float16)",
    "2",
    "jnp.array(3)",
    "jnp.array(0.5, dtype=jnp.float64)",
    "jnp.array(1.0, dtype='bfloat16')",
]


@area("custom_jvp")
def _custom_jvp(draw: st.DrawFn) -> list[str]:
    """custom_jvp with and without nondiff_argnums, rules right and broken, under call/jvp/grad/jit/vmap."""
    nondiff = draw(st.booleans())
    tangent = draw(st.sampled_from(JVP_TANGENTS))
    ret = draw(st.sampled_from(JVP_RETURNS)).format(t=tangent)
    x = draw(st.sampled_from(CUSTOM_INPUTS))
    use = draw(
        st.sampled_from(["grad", "call", "jvp", "jit_grad", "vmap", "jit_call", "value_and_grad"])
    )
    if nondiff:
        lines = [
            "import functools",
            "@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))",
            "def f(n, x):",
            "    return jnp.sin(x) * n",
            "@f.defjvp",
            "def f_jvp(n, primals, tangents):",
            "    x, = primals",
            "    t, = tangents",
            "    " + ret.replace("f(x)", "f(n, x)"),
        ]
        call = "lambda x: f(2, x)"
    else:
        lines = [
            "@jax.custom_jvp",
            "def f(x):",
            "    return jnp.sin(x)",
            "@f.defjvp",
            "def f_jvp(primals, tangents):",
            "    x, = primals",
            "    t, = tangents",
            "    " + ret,
        ]
        call = "f"
    lines.append(f"x = {x}")
    lines.append(
        {
            "grad": f"result = jax.grad({call})(x)",
            "call": f"result = ({call})(x)",
            "jvp": f"result = jax.jvp({call}, (x,), (jnp.ones_like(x),))",
            "jit_grad": f"result = jax.jit(jax.grad({call}))(x)",
            "vmap": f"result = jax.vmap({call})(jnp.array([0.5, 1.0]))",
            "jit_call": f"result = jax.jit({call})(x)",
            "value_and_grad": f"result = jax.value_and_grad({call})(x)",
        }[use]
    )
    return lines


VJP_RESIDUALS = ["(x, y)", "None", "(x, 2)", "(x, 'text')", "(x, y, jnp.sin)", "x"]
VJP_COTANGENTS = [
    "(g * y, g * x)",
    "(None, g * x)",
    "(g * y, None)",
    "(g * y,)",
    "(g * y, g * x, g)",
    "((g * y).astype(jnp.float16), g * x)",
    "(jnp.ones(3), g * x)",
    "(g, g)",
    "[g * y, g * x]",
]
VJP_INPUTS = [
    "1.5",
    "jnp.array(0.5)",
    "2",
    "jnp.array(3)",
    "jnp.array(2.0, dtype=jnp.float16)",
    "jnp.array(0.5, dtype=jnp.float64)",
    "jnp.array([1.0, 2.0])",
]


@area("custom_vjp")
def _custom_vjp(draw: st.DrawFn) -> list[str]:
    """custom_vjp: residuals of every kind, None and wrong cotangents, nondiff arguments, integer inputs."""
    res = draw(st.sampled_from(VJP_RESIDUALS))
    cot = draw(st.sampled_from(VJP_COTANGENTS))
    x, y = draw(st.sampled_from(VJP_INPUTS)), draw(st.sampled_from(VJP_INPUTS[:4]))
    nondiff = draw(st.booleans())
    use = draw(
        st.sampled_from(
            ["grad", "grad_both", "call", "vjp", "jit_grad", "jvp", "vmap_grad", "value_and_grad"]
        )
    )
    unpack = "x, y = (res[0], res[1]) if isinstance(res, tuple) else (1.0, 1.0)"
    if nondiff:
        lines = [
            "import functools",
            "@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))",
            "def f(x, y, n):",
            "    return jnp.sum(x * y) * n",
            "def f_fwd(x, y, n):",
            f"    return f(x, y, n), {res}",
            "def f_bwd(n, res, g):",
        ]
        call = "lambda x, y: f(x, y, 3)"
    else:
        lines = [
            "@jax.custom_vjp",
            "def f(x, y):",
            "    return jnp.sum(x * y)",
            "def f_fwd(x, y):",
            f"    return f(x, y), {res}",
            "def f_bwd(res, g):",
        ]
        call = "f"
    lines += [f"    {unpack}", f"    return {cot}", "f.defvjp(f_fwd, f_bwd)", f"x, y = {x}, {y}"]
    lines.append(
        {
            "grad": f"result = jax.grad({call})(x, y)",
            "grad_both": f"result = jax.grad({call}, argnums=(0, 1))(x, y)",
            "call": f"result = ({call})(x, y)",
            "vjp": f"out, pullback = jax.vjp({call}, x, y)\nresult = (out, pullback(jnp.ones_like(out)))",
            "jit_grad": f"result = jax.jit(jax.grad({call}))(x, y)",
            "jvp": f"result = jax.jvp({call}, (x, y), (jnp.ones_like(x), jnp.ones_like(y)))",
            "vmap_grad": f"result = jax.vmap(jax.grad({call}), in_axes=(0, None))(jnp.array([0.5, 1.0]), y)",
            "value_and_grad": f"result = jax.value_and_grad({call})(x, y)",
        }[use]
    )
    return lines
