"""`jax.numpy`: the namespace, assembled from the modules that implement it.

- `numpy_dtypes.py`: the scalar types, values into arrays (`lift`), promotion, the dtype queries;
- `numpy_creation.py`: creation functions with JAX's documented defaults;
- `numpy_ops.py`: arithmetic, reductions, shapes, indexing and `x.at[i]`, `jnp.linalg`.
Every explicit `dtype=` goes through `dtypes.check_user_dtype(dtype, "<function name>")`
(warn / error / allow); every value without a JAX dtype through `dtypes.dtype_of_input`.
`jnp` holds exactly the names in `__all__` (`__init__.build_jax_module`).
"""

from __future__ import annotations

import numpy as np
from jax_conformance.adapters.reference.core import Array, ArrayOps, Tracer, get_aval
from jax_conformance.adapters.reference.dtypes import (
    check_user_dtype,
    default_complex,
    default_float,
    default_int,
    dtype_of_input,
    issubdtype,
    python_scalar_dtype,
    to_dtype,
)
from jax_conformance.adapters.reference.numpy_creation import (
    arange,
    array,
    asarray,
    astype,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    ones,
    ones_like,
    tri,
    tril,
    triu,
    zeros,
    zeros_like,
)
from jax_conformance.adapters.reference.numpy_dtypes import (
    bfloat16,
    bool_,
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from jax_conformance.adapters.reference.numpy_ops import (
    abs,  # noqa: A004 - NumPy's name
    absolute,
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    clip,
    cos,
    divide,
    dot,
    equal,
    exp,
    floor_divide,
    getitem,
    greater,
    greater_equal,
    isfinite,
    less,
    less_equal,
    linalg,
    log,
    matmul,
    max,  # noqa: A004 - NumPy's name
    maximum,
    mean,
    min,  # noqa: A004 - NumPy's name
    minimum,
    mod,
    moveaxis,
    multiply,
    negative,
    not_equal,
    power,
    remainder,
    reshape,
    sign,
    sin,
    sqrt,
    subtract,
    sum,  # noqa: A004 - NumPy's name
    tanh,
    transpose,
    true_divide,
    where,
)

ndarray = ArrayOps  # isinstance(x, jnp.ndarray) holds for arrays and tracers, as for jax.Array
dtype = np.dtype
inexact, floating, integer, number, complexfloating = (
    np.inexact,
    np.floating,
    np.integer,
    np.number,
    np.complexfloating,
)
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan


def ndim(x: object) -> int:
    """The number of dimensions of an array, a Tracer (its aval) or a Python value."""
    return int(getattr(x, "ndim", np.ndim(x)))  # type: ignore[arg-type]


globals()["bool"] = bool_  # jnp.bool (NumPy 2 name), without shadowing the builtin here

__all__ = [
    # types and constants
    "ndarray",
    "dtype",
    "bool",
    "bool_",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "inexact",
    "floating",
    "integer",
    "number",
    "complexfloating",
    "signedinteger",
    "unsignedinteger",
    "pi",
    "e",
    "inf",
    "nan",
    # dtype queries
    "can_cast",
    "finfo",
    "iinfo",
    "issubdtype",
    "promote_types",
    "result_type",
    # creation
    "arange",
    "array",
    "asarray",
    "astype",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "tri",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
    # operations
    "abs",
    "absolute",
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "clip",
    "cos",
    "divide",
    "dot",
    "equal",
    "exp",
    "floor_divide",
    "getitem",
    "greater",
    "greater_equal",
    "isfinite",
    "less",
    "less_equal",
    "linalg",
    "log",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "moveaxis",
    "multiply",
    "ndim",
    "negative",
    "not_equal",
    "power",
    "remainder",
    "reshape",
    "sign",
    "sin",
    "sqrt",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "true_divide",
    "where",
    # helpers jnp has always shown (they leaked in when this was one module); kept so jnp's names don't change
    "Array",
    "ArrayOps",
    "Tracer",
    "get_aval",
    "check_user_dtype",
    "default_complex",
    "default_float",
    "default_int",
    "dtype_of_input",
    "python_scalar_dtype",
    "to_dtype",
]
