"""The tracing core, in the shape of JAX's autodidax: Primitive, bind, a stack of Traces, Tracers.

Every operation is a `Primitive`; `bind` finds the innermost transformation among its
arguments (the highest-level `MainTrace`) and lets that trace process it. With no tracer
in sight the `EvalTrace` runs the primitive's NumPy `impl`. The transformations
(`ad.py`: jvp and grad; `vmap.py`; `jit.py`) are Trace subclasses with rule tables.

Two checks live here, because every operation passes through `bind`:
- a Tracer whose transformation has finished is a leak (`UnexpectedTracerError`);
- while a custom_jvp/custom_vjp rule runs, the autodiff transformations that process the
  call are *sealed*: a value of theirs reached only by closure, not as an argument, is an
  unexpected tracer too (`check_sealed`). This is how JAX 0.10.2 behaves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from jax_conformance.adapters.reference import errors
from jax_conformance.adapters.reference.mutants import mutant

# ---------------------------------------------------------------- abstract values


@dataclass(frozen=True)
class ShapedArray:
    """What a tracer knows about its value: shape, dtype and whether it is weakly typed."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def str_short(self) -> str:
        return f"{self.dtype.name if self.dtype.names is None else 'float0'}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        return self.str_short()


# ---------------------------------------------------------------- arrays and tracers


class ArrayOps:
    """Python operators of arrays and tracers: each is a jax.numpy function, hence a primitive."""

    __array_priority__ = 100
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def _np(self) -> Any:
        from jax_conformance.adapters.reference import numpy_api

        return numpy_api

    def __add__(self, o: Any) -> Any:
        return self._np().add(self, o)

    def __radd__(self, o: Any) -> Any:
        return self._np().add(o, self)

    def __sub__(self, o: Any) -> Any:
        return self._np().subtract(self, o)

    def __rsub__(self, o: Any) -> Any:
        return self._np().subtract(o, self)

    def __mul__(self, o: Any) -> Any:
        return self._np().multiply(self, o)

    def __rmul__(self, o: Any) -> Any:
        return self._np().multiply(o, self)

    def __truediv__(self, o: Any) -> Any:
        return self._np().divide(self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return self._np().divide(o, self)

    def __pow__(self, o: Any) -> Any:
        return self._np().power(self, o)

    def __rpow__(self, o: Any) -> Any:
        return self._np().power(o, self)

    def __floordiv__(self, o: Any) -> Any:
        return self._np().floor_divide(self, o)

    def __rfloordiv__(self, o: Any) -> Any:
        return self._np().floor_divide(o, self)

    def __mod__(self, o: Any) -> Any:
        return self._np().remainder(self, o)

    def __rmod__(self, o: Any) -> Any:
        return self._np().remainder(o, self)

    def __and__(self, o: Any) -> Any:
        return self._np().bitwise_and(self, o)

    def __rand__(self, o: Any) -> Any:
        return self._np().bitwise_and(o, self)

    def __or__(self, o: Any) -> Any:
        return self._np().bitwise_or(self, o)

    def __ror__(self, o: Any) -> Any:
        return self._np().bitwise_or(o, self)

    def __xor__(self, o: Any) -> Any:
        return self._np().bitwise_xor(self, o)

    def __rxor__(self, o: Any) -> Any:
        return self._np().bitwise_xor(o, self)

    def __matmul__(self, o: Any) -> Any:
        return self._np().matmul(self, o)

    def __rmatmul__(self, o: Any) -> Any:
        return self._np().matmul(o, self)

    def __neg__(self) -> Any:
        return self._np().negative(self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return self._np().abs(self)

    def __gt__(self, o: Any) -> Any:
        return self._np().greater(self, o)

    def __lt__(self, o: Any) -> Any:
        return self._np().less(self, o)

    def __ge__(self, o: Any) -> Any:
        return self._np().greater_equal(self, o)

    def __le__(self, o: Any) -> Any:
        return self._np().less_equal(self, o)

    def __eq__(self, o: Any) -> Any:
        return self._np().equal(self, o)

    def __ne__(self, o: Any) -> Any:
        return self._np().not_equal(self, o)

    def __getitem__(self, idx: Any) -> Any:
        return self._np().getitem(self, idx)

    __hash__ = None  # type: ignore[assignment]

    def astype(self, dtype: Any) -> Any:
        return self._np().astype(self, dtype)

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return self._np().sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        return self._np().mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        return self._np().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        return self._np().min(self, axis=axis, keepdims=keepdims)

    def reshape(self, *shape: Any) -> Any:
        return self._np().reshape(
            self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        )

    @property
    def T(self) -> Any:  # noqa: N802 - NumPy's name
        return self._np().transpose(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))


class Array(ArrayOps):
    """A concrete array (`jax.Array`): an immutable NumPy value with JAX's dtype and weak type."""

    def __init__(self, value: Any, weak_type: bool = False) -> None:
        self._value = np.asarray(value)
        self._value.flags.writeable = False
        self.weak_type = bool(weak_type)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self._value.shape, self._value.dtype, self.weak_type)

    @property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return self._value.dtype

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return self._value.shape

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._value, dtype=dtype) if dtype is not None else self._value

    def item(self) -> Any:
        return self._value.item()

    def tolist(self) -> Any:
        return self._value.tolist()

    def block_until_ready(self) -> Array:
        return self

    def __bool__(self) -> bool:
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __index__(self) -> int:
        return int(self._value.__index__())

    def __format__(self, spec: str) -> str:
        return format(self._value.item(), spec) if not self.shape else format(str(self), spec)

    def __repr__(self) -> str:
        name = "float0" if self.dtype.names else self.dtype.name
        body = (
            np.array2string(self._value, separator=", ")
            if self.dtype.names is None
            else f"zeros{self.shape}"
        )
        return f"Array({body}, dtype={name}{', weak_type=True' if self.weak_type else ''})"

    def __str__(self) -> str:
        return str(self._value)


class Tracer(ArrayOps):
    """A value inside a transformation; `_trace` says which one."""

    __array_priority__ = 1000
    _trace: Trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return self.aval.dtype

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return self.aval.shape

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def concrete(self) -> Any:
        """The concrete value behind the tracer, where the transformation has one (eager autodiff)."""
        raise errors.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {self!r}. "
            "The problem arose with a value that is traced, e.g. under jax.jit or jax.vmap."
        )

    def __bool__(self) -> bool:
        try:
            return bool(self.concrete())
        except errors.ConcretizationTypeError:
            raise errors.TracerBoolConversionError(
                f"Attempted boolean conversion of traced array with shape {self.aval}."
            ) from None

    def __int__(self) -> int:
        try:
            return int(self.concrete())
        except errors.ConcretizationTypeError:
            raise errors.TracerIntegerConversionError(
                f"The __index__() method was called on traced array with shape {self.aval}."
            ) from None

    __index__ = __int__

    def __float__(self) -> float:
        return float(self.concrete())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise errors.TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on traced array with shape {self.aval}."
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.aval})"


# ---------------------------------------------------------------- primitives and bind


@dataclass(eq=False)
class Primitive:
    """One operation; its NumPy `impl` and the rules of each transformation are registered by name."""

    name: str
    impl: Callable[..., np.ndarray]
    # default: all inputs weak
    weak: Callable[[list[ShapedArray], dict[str, Any]], bool] | None = None

    def __repr__(self) -> str:
        return self.name

    def out_weak(self, avals: list[ShapedArray], params: dict[str, Any]) -> bool:
        if self.weak is not None:
            return self.weak(avals, params)
        return bool(avals) and all(a.weak_type for a in avals)

    def abstract_eval(self, avals: list[ShapedArray], params: dict[str, Any]) -> ShapedArray:
        """Shape and dtype of the result, by running the impl on zeros (the impls are cheap and exact)."""
        with np.errstate(all="ignore"):
            out = np.asarray(self.impl(*[np.zeros(a.shape, a.dtype) for a in avals], **params))
        return ShapedArray(out.shape, out.dtype, self.out_weak(avals, params))


@dataclass(eq=False)
class MainTrace:
    """One running transformation: its level on the stack, its Trace class and private data."""

    level: int
    trace_type: type[Trace]
    global_data: Any = None
    alive: bool = True


class Trace:
    """How a transformation processes primitives and custom derivative calls."""

    is_autodiff = False  # jvp and grad: the traces a custom rule seals

    def __init__(self, main: MainTrace) -> None:
        self.main = main

    def pure(self, val: Any) -> Any:
        raise NotImplementedError

    def lift(self, val: Any) -> Any:
        return self.pure(val)

    def process_primitive(self, prim: Primitive, tracers: list[Any], params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def process_custom_jvp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        raise NotImplementedError

    def process_custom_vjp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        raise NotImplementedError


class EvalTrace(Trace):
    """Level 0: no transformation; primitives run on NumPy."""

    def pure(self, val: Any) -> Any:
        return val

    def process_primitive(self, prim: Primitive, tracers: list[Any], params: dict[str, Any]) -> Any:
        values = [t._value if isinstance(t, Array) else np.asarray(t) for t in tracers]
        avals = [
            t.aval if isinstance(t, Array) else ShapedArray(np.shape(t), np.asarray(t).dtype)
            for t in tracers
        ]
        with np.errstate(all="ignore"):
            out = np.asarray(prim.impl(*values, **params))
        return Array(out, prim.out_weak(avals, params))

    def process_custom_jvp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        return call.fun_flat(tracers)

    def process_custom_vjp_call(self, call: Any, tracers: list[Any]) -> list[Any]:
        return call.fun_flat(tracers)


trace_stack: list[MainTrace] = [MainTrace(0, EvalTrace)]


@contextlib.contextmanager
def new_main(trace_type: type[Trace], global_data: Any = None) -> Iterator[MainTrace]:
    """Push a transformation for the duration of the block; its tracers die with it."""
    main = MainTrace(len(trace_stack), trace_type, global_data)
    trace_stack.append(main)
    try:
        yield main
    finally:
        trace_stack.pop()
        main.alive = False


def find_top_trace(xs: Any) -> Trace:
    """The innermost live transformation among the arguments (EvalTrace if none)."""
    main = trace_stack[0]
    for x in xs:
        if isinstance(x, Tracer):
            m = x._trace.main
            if not m.alive:
                raise errors.UnexpectedTracerError(_leak_message(x))
            if m.level > main.level:
                main = m
    return main.trace_type(main)


def full_raise(trace: Trace, val: Any) -> Any:
    """The argument as a tracer of `trace` (a lower-level value is lifted into it)."""
    if not isinstance(val, Tracer):
        return trace.pure(val)
    if val._trace.main is trace.main:
        return val
    if val._trace.main.level < trace.main.level:
        return trace.lift(val)
    raise AssertionError(
        f"cannot lift a level-{val._trace.main.level} tracer into level {trace.main.level}"
    )


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply a primitive: the innermost transformation among the arguments processes it."""
    trace = find_top_trace(args)
    check_sealed(trace, args)
    return trace.process_primitive(prim, [full_raise(trace, a) for a in args], params)


def bind_custom_jvp(call: Any, leaves: list[Any]) -> list[Any]:
    """Apply a custom_jvp function (flat arguments) under the innermost transformation among them."""
    return _bind_custom("jvp", call, leaves)


def bind_custom_vjp(call: Any, leaves: list[Any]) -> list[Any]:
    """Apply a custom_vjp function (flat arguments) under the innermost transformation among them."""
    return _bind_custom("vjp", call, leaves)


def _bind_custom(kind: str, call: Any, leaves: list[Any]) -> list[Any]:
    trace = find_top_trace(leaves)
    check_sealed(trace, leaves)
    # A vmap inside the arguments' transformations whose Tracer the function or a rule closes over batches
    # the call first (JAX binds at the innermost transformation in scope); below it the call is batched.
    vmaps = [m for m in call.closed_over_vmaps() if m.level > trace.main.level]
    if vmaps and not mutant("closure-over-vmap-tracer-unbatched"):
        main = max(vmaps, key=lambda m: m.level)
        trace = main.trace_type(main)
    tracers = [full_raise(trace, x) for x in leaves]
    with sealed(
        trace.main.level, kind
    ):  # the rule may not reach this or any inner autodiff by closure
        out: list[Any] = getattr(trace, f"process_custom_{kind}_call")(call, tracers)
    return out


# ---------------------------------------------------------------- the closure check

# (transformation, "jvp" | "vjp": the kind of custom function)
_sealed: list[tuple[MainTrace, str]] = []
inline_jit_depths: list[int] = []  # stack depth at each jit call made inside another transformation


@contextlib.contextmanager
def sealed(level: int, kind: str) -> Iterator[None]:
    """While a custom rule runs: every autodiff transformation at `level` or above is closed to it."""
    mains = [(m, kind) for m in trace_stack if m.level >= level and m.trace_type.is_autodiff]
    _sealed.extend(mains)
    try:
        yield
    finally:
        del _sealed[len(_sealed) - len(mains) :]


# per inline jit: the ids of its arguments (JAX sees each as a jit Tracer)
staged_args: list[set[int]] = []


@contextlib.contextmanager
def inline_jit(*args: Any) -> Iterator[None]:
    """A jit called under another transformation (the reference inlines it; JAX stages it)."""
    from jax_conformance.adapters.reference.tree_util import tree_leaves

    inline_jit_depths.append(len(trace_stack))
    staged_args.append(
        {id(x) for x in tree_leaves(args) if not isinstance(x, Tracer)}
    )  # plain values: jit Tracers only
    try:
        yield
    finally:
        inline_jit_depths.pop()
        staged_args.pop()


def staged_values(level: int) -> set[int]:
    """The ids of the arguments of every jit staged inside the transformation at `level` (now running)."""
    return set().union(
        *[ids for depth, ids in zip(inline_jit_depths, staged_args, strict=True) if depth > level]
    )


def closed_over(fn: Any, depth: int = 2) -> list[Any]:
    """The values fn closes over (and those of the functions it closes over, `depth` levels down)."""
    from jax_conformance.adapters.reference.tree_util import tree_leaves

    out: list[Any] = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        for leaf in tree_leaves(value):
            out.append(leaf)
            if depth and callable(leaf):
                out += closed_over(leaf, depth - 1)
    return out


def closes_over(fn: Any, ids: set[int], depth: int = 2) -> bool:
    """Whether fn (or a function it closes over, `depth` levels down) closes over one of these values."""
    return any(id(v) in ids for v in closed_over(fn, depth))


def check_sealed(trace: Trace, args: Any) -> None:
    """A sealed transformation's value used inside a custom rule came in by closure: raise."""
    kinds = [k for m, k in _sealed if m is trace.main]
    if not kinds or mutant("closure-over-ad-tracer-allowed"):
        return
    leaked = next(a for a in args if isinstance(a, Tracer) and a._trace.main is trace.main)
    if any(depth > trace.main.level for depth in inline_jit_depths):
        # JAX 0.10.2 stages the jitted call first, and then fails in another place, per kind:
        if kinds[-1] == "vjp":
            raise errors.CustomVJPException(
                "Detected differentiation of a custom_vjp function with respect to a closed-over value. That isn't "
                "supported because the custom VJP rule only specifies how to differentiate the custom_vjp function "
                "with respect to explicit input parameters."
            )
        raise TypeError(f"No constant handler for type: {type(leaked)}")
    raise errors.UnexpectedTracerError(_leak_message(leaked))


def _leak_message(tracer: Tracer) -> str:
    return (
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing "
        f"for a reference to an intermediate value with type {tracer.aval} wrapped in a "
        f"{type(tracer).__name__} to escape the scope of the transformation.\n"
        "JAX transformations require that functions explicitly return their outputs, and disallow "
        "saving intermediate values to global state."
    )


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of an array, tracer, Python scalar or NumPy value (canonicalized)."""
    if isinstance(x, (Array, Tracer)):
        return x.aval
    from jax_conformance.adapters.reference.dtypes import dtype_of_input

    dtype, weak = dtype_of_input(x)
    return ShapedArray(np.shape(x), dtype, weak)
