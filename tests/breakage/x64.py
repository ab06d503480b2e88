"""Breakage adapters for the x64 specs: real JAX with one documented rule broken on purpose.

Each class is a `JaxAdapter` that patches JAX inside the worker process (before or right
after `import jax`), so that exactly one documented behaviour of default dtypes, the
`jax_enable_x64` flag or the explicit 64-bit policy stops holding. Running the suite with
`--adapter=tests.breakage.x64:ClassName` must then make the cases for that rule fail; see
tests/test_breakage.py (the area: tests/breakage/x64_area.py). The patches target JAX 0.10.2 internals
(`jax._src.dtypes`, `jax._src.config`); they are test fixtures, not a model of JAX.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
from jax_conformance.adapters.jax import JaxAdapter

_NARROW = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}


class Breakage(JaxAdapter):
    """A JaxAdapter that applies `patch` once, when the namespace is first built."""

    breaks: ClassVar[str] = ""  # the documented rule this adapter breaks, in one line

    def namespace(self) -> dict[str, Any]:
        if self._ns is None:
            self.before_import(os.environ)
            ns = super().namespace()
            self.patch(ns)
        return super().namespace()

    def before_import(self, environ: os._Environ[str]) -> None:
        """Change what JAX reads at start-up (its environment variables)."""

    def fork_preload(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        # A break of what JAX reads at start-up has to happen before JAX is imported, so a fork
        # server must not import it first: such an adapter has no `full` level.
        free, full = super().fork_preload()
        return (
            (free, ()) if type(self).before_import is not Breakage.before_import else (free, full)
        )

    def patch(self, ns: dict[str, Any]) -> None:
        """Change JAX after it is imported."""


def dtype_names(*xs: Any) -> list[str]:
    """The operands' dtype names, sorted (a Python scalar by its type's name): how a breakage tells
    the operands it breaks from those it leaves to JAX."""
    return sorted(str(getattr(x, "dtype", type(x).__name__)) for x in xs)


def cast_on_pair(module: Any, name: str, pair: list[str], dtype: str) -> None:
    """Replace module.<name>, a function of two operands, by one that casts its result to dtype where
    the operands' dtype names (sorted) are pair, and is JAX's function everywhere else."""
    original = getattr(module, name)

    def broken(x: Any, y: Any, /) -> Any:
        out = original(x, y)
        return out.astype(dtype) if dtype_names(x, y) == pair else out

    broken.__name__ = broken.__qualname__ = name
    setattr(module, name, broken)


def _dtypes_module() -> Any:
    from jax._src import dtypes

    return dtypes


def _config_module() -> Any:
    from jax._src import config

    return config


def _policy() -> str:
    """The explicit-dtype policy in force: 'warn', 'error' or 'allow'."""
    return str(_config_module().explicit_x64_dtypes.value.name).lower()


def _wrap_explicit(wrapper: Callable[[Callable[[Any, str], Any], Any, str], Any]) -> None:
    """Replace jax._src.dtypes._maybe_canonicalize_explicit_dtype (the policy) by a wrapper of it."""
    dtypes = _dtypes_module()
    original = dtypes._maybe_canonicalize_explicit_dtype

    def patched(dtype: Any, fun_name: str) -> Any:
        return wrapper(original, dtype, fun_name)

    dtypes._maybe_canonicalize_explicit_dtype = patched


@contextlib.contextmanager
def _rewritten_warnings(rewrite: Callable[[str], list[str]]) -> Iterator[None]:
    """Catch the warnings of the block and issue `rewrite(message)` instead of each one."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield
    for w in seen:
        for text in rewrite(str(w.message)):
            warnings.warn(text, w.category, stacklevel=4)


# ---------------------------------------------------------------- claims 1-3: defaults, table


class DefaultInt64(Breakage):
    breaks = "with x64 off the default integer is int32 (and the table maps int64 to int32)"

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes_module()
        dtypes.default_int_dtype = lambda: np.dtype("int64")
        dtypes.default_types["i"] = dtypes._DEFAULT_TYPEMAP[int] = dtypes.default_int_dtype
        dtypes._dtype_to_32bit_dtype.pop(np.dtype("int64"))
        dtypes._canonicalize_dtype.cache_clear()


class X64OnNarrowDefaults(Breakage):
    breaks = (
        "with x64 on the default float and complex types are float64 and complex128, as NumPy's"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes_module()
        dtypes.default_float_dtype = lambda: np.dtype("float32")
        dtypes.default_types["f"] = dtypes._DEFAULT_TYPEMAP[float] = dtypes.default_float_dtype
        dtypes.default_complex_dtype = lambda: np.dtype("complex64")
        dtypes.default_types["c"] = dtypes._DEFAULT_TYPEMAP[complex] = dtypes.default_complex_dtype


class PythonScalarsNarrowed(Breakage):
    breaks = (
        "Python scalars and lists follow the mode's defaults (64-bit with x64 on; bool stays bool)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        narrow = {
            bool: np.dtype("int32"),
            int: np.dtype("int32"),
            float: np.dtype("float32"),
            complex: np.dtype("complex64"),
        }
        _dtypes_module().python_scalar_types_to_dtypes.update(narrow)  # lists of scalars
        for name in ("array", "asarray"):
            real = getattr(jnp, name)

            def create(
                obj: Any, dtype: Any = None, *args: Any, _real: Any = real, **kwargs: Any
            ) -> Any:
                if dtype is None and type(obj) in narrow:  # a bare scalar takes another path in JAX
                    dtype = narrow[type(obj)]
                return _real(obj, dtype, *args, **kwargs)

            setattr(jnp, name, create)


class NumpyInputsKeep64(Breakage):
    breaks = "with x64 off, NumPy int64/float64 arrays given to jnp.asarray without a dtype become 32-bit"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        real = jnp.asarray
        config = _config_module()

        def asarray(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
            if dtype is None and isinstance(obj, np.ndarray) and obj.dtype.name in _NARROW:
                with config.explicit_x64_dtypes("allow"):
                    return real(obj, obj.dtype, *args, **kwargs)
            return real(obj, dtype, *args, **kwargs)

        jnp.asarray = asarray


class CanonicalizeIdentity(Breakage):
    breaks = "jax.dtypes.canonicalize_dtype narrows the four 64-bit dtypes with x64 off"

    def patch(self, ns: dict[str, Any]) -> None:
        ns["jax"].dtypes.canonicalize_dtype = lambda dtype, allow_extended_dtype=False: np.dtype(
            dtype
        )


class CanonicalizeWidensNarrowTypes(Breakage):
    breaks = "jax.dtypes.canonicalize_dtype leaves dtypes outside the 64-bit four unchanged"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real = jax.dtypes.canonicalize_dtype
        widen = {
            "float16": "float32",
            "int8": "int32",
            "uint16": "uint32",
            "int4": "int8",
            "uint4": "uint8",
        }

        def widening(dtype: Any, allow_extended_dtype: bool = False) -> Any:
            out = real(dtype, allow_extended_dtype)
            return np.dtype(widen[out.name]) if out.name in widen else out

        jax.dtypes.canonicalize_dtype = widening


# ---------------------------------------------------------------- claim 4: the warn / error / allow policy


class NoTruncationWarning(Breakage):
    breaks = "warn mode: a truncated explicit 64-bit request warns"

    def patch(self, ns: dict[str, Any]) -> None:
        def silent(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return original(dtype, fun_name)

        _wrap_explicit(silent)


class WarningNamesWrongFunction(Breakage):
    breaks = "warn mode: the warning names the function the dtype was requested in"

    def patch(self, ns: dict[str, Any]) -> None:
        _wrap_explicit(lambda original, dtype, fun_name: original(dtype, "asarray"))


class WarningWithoutEnvHint(Breakage):
    breaks = "warn mode: the warning names both ways to enable x64 (the option and JAX_ENABLE_X64)"

    def patch(self, ns: dict[str, Any]) -> None:
        def no_hint(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            with _rewritten_warnings(lambda m: [m.replace("JAX_ENABLE_X64", "environment")]):
                return original(dtype, fun_name)

        _wrap_explicit(no_hint)


class WarnsTwice(Breakage):
    breaks = "warn mode: exactly one warning per truncated request"

    def patch(self, ns: dict[str, Any]) -> None:
        def twice(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            with _rewritten_warnings(lambda m: [m, m]):
                return original(dtype, fun_name)

        _wrap_explicit(twice)


class ErrorModeOnlyWarns(Breakage):
    breaks = "error mode: an explicit 64-bit request raises ValueError"

    def patch(self, ns: dict[str, Any]) -> None:
        config = _config_module()

        def lenient(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            if _policy() == "error":
                with config.explicit_x64_dtypes("warn"):
                    return original(dtype, fun_name)
            return original(dtype, fun_name)

        _wrap_explicit(lenient)


class ErrorModeRaisesTypeError(Breakage):
    breaks = "error mode: the exception is a ValueError"

    def patch(self, ns: dict[str, Any]) -> None:
        def wrong_type(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            try:
                return original(dtype, fun_name)
            except ValueError as exc:
                raise TypeError(str(exc)) from None

        _wrap_explicit(wrong_type)


class AllowModeTruncates(Breakage):
    breaks = "allow mode: an explicit 64-bit request gives a real 64-bit array"

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes_module()

        def truncating(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            if _policy() == "allow" and not _config_module().enable_x64.value:
                return dtypes.canonicalize_dtype(dtype)
            return original(dtype, fun_name)

        _wrap_explicit(truncating)


class EnvPolicyMisread(Breakage):
    breaks = "JAX starts with the policy JAX_EXPLICIT_X64_DTYPES names, and warn when it is unset"

    def before_import(self, environ: os._Environ[str]) -> None:
        # Off by one when the name is turned into the policy; nothing set reads as error.
        shifted = {None: "error", "warn": "error", "error": "allow", "allow": "warn"}
        value = environ.get("JAX_EXPLICIT_X64_DTYPES")
        if value in shifted:
            environ["JAX_EXPLICIT_X64_DTYPES"] = shifted[value]


class PolicyUpdateIgnored(Breakage):
    breaks = "jax.config.update('jax_explicit_x64_dtypes', ...) chooses the policy"

    def patch(self, ns: dict[str, Any]) -> None:
        _only_some_updates(ns["jax"].config, lambda name, value: name != "jax_explicit_x64_dtypes")


class InvalidPolicyAccepted(Breakage):
    breaks = "a policy name other than warn/error/allow is rejected (by update and at start-up)"

    def before_import(self, environ: os._Environ[str]) -> None:
        if environ.get("JAX_EXPLICIT_X64_DTYPES") not in (None, "warn", "error", "allow"):
            environ.pop("JAX_EXPLICIT_X64_DTYPES")

    def patch(self, ns: dict[str, Any]) -> None:
        _only_some_updates(
            ns["jax"].config,
            lambda name, value: (
                name != "jax_explicit_x64_dtypes" or value in ("warn", "error", "allow")
            ),
        )


def _only_some_updates(config: Any, keep: Callable[[str, Any], bool]) -> None:
    """Make jax.config.update a silent no-op for the (name, value) pairs `keep` refuses."""
    real = config.update

    def update(name: str, value: Any) -> None:
        if keep(name, value):
            real(name, value)

    config.update = update


# ---------------------------------------------------------------- claim 5: x64 on


class X64OnStillWarns(Breakage):
    breaks = "with x64 on an explicit 64-bit request is honoured silently"

    def patch(self, ns: dict[str, Any]) -> None:
        def noisy(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            out = original(dtype, fun_name)
            name = np.dtype(dtype).name
            if _config_module().enable_x64.value and name in _NARROW:
                warnings.warn(
                    f"Explicitly requested dtype {name} requested in {fun_name} is 64-bit",
                    UserWarning,
                    stacklevel=4,
                )
            return out

        _wrap_explicit(noisy)


class X64OnErrorPolicyRaises(Breakage):
    breaks = "with x64 on the error policy has no effect"

    def patch(self, ns: dict[str, Any]) -> None:
        def strict(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            name = np.dtype(dtype).name
            if _policy() == "error" and name in _NARROW:
                raise ValueError(
                    f"Explicitly requested dtype {name} requested in {fun_name} is not available"
                )
            return original(dtype, fun_name)

        _wrap_explicit(strict)


# ---------------------------------------------------------------- claim 6: turning x64 on


class X64DefaultOn(Breakage):
    breaks = "with JAX_ENABLE_X64 unset, x64 is off"

    def before_import(self, environ: os._Environ[str]) -> None:
        environ.setdefault("JAX_ENABLE_X64", "1")


class EnvTruthInverted(Breakage):
    breaks = (
        "JAX_ENABLE_X64 read at start-up: 1/true/True/yes/on mean on, 0/false/False/no/off mean off"
    )

    started = False

    def start(self, mode: Any) -> None:
        # The harness's long-lived worker must start in its mode; the start-up cases run in
        # fresh interpreters, where start() is never called and the break applies.
        self.started = True
        super().start(mode)

    def before_import(self, environ: os._Environ[str]) -> None:
        value = environ.get("JAX_ENABLE_X64")
        if not self.started and value:
            environ["JAX_ENABLE_X64"] = "0" if value.lower() in ("1", "true", "yes", "on") else "1"


class EnvLenientParsing(Breakage):
    breaks = "JAX_ENABLE_X64 that is neither true nor false (2, empty) makes start-up fail"

    def before_import(self, environ: os._Environ[str]) -> None:
        value = environ.get("JAX_ENABLE_X64")
        if value == "":
            environ["JAX_ENABLE_X64"] = "0"
        elif value == "2":
            environ["JAX_ENABLE_X64"] = "1"


class X64UpdateIgnored(Breakage):
    breaks = "jax.config.update('jax_enable_x64', value) switches the flag"

    def patch(self, ns: dict[str, Any]) -> None:
        _only_some_updates(ns["jax"].config, lambda name, value: name != "jax_enable_x64")


class X64EnabledAssignable(Breakage):
    breaks = "jax.config.x64_enabled is read-only"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        config_type = type(jax.config)
        getter = config_type.x64_enabled.fget
        config_type.x64_enabled = property(
            getter, lambda self, value: jax.config.update("jax_enable_x64", bool(value))
        )


class X64EnabledAlwaysFalse(Breakage):
    breaks = "jax.config.x64_enabled reports the flag"

    def start(self, mode: Any) -> None:
        super().start(mode)  # started (and checked) in its mode; then the property lies
        jax = self.namespace()["jax"]
        type(jax.config).x64_enabled = property(lambda self: False)


# ---------------------------------------------------------------- claim 7: the jit cache key


def _pin_jit_to_first_call(jax: Any, read: Any, context: Any) -> None:
    """Make every jitted function run each call under the setting its first call saw.

    The trace of the first call is reused whatever the setting is now: the setting is no longer
    part of the cache key. `read()` gives the current setting, `context(value)` enters it.
    """
    real_jit = jax.jit

    def stale_jit(fun: Any, *args: Any, **kwargs: Any) -> Any:
        jitted = real_jit(fun, *args, **kwargs)
        first: list[Any] = []

        def call(*a: Any, **k: Any) -> Any:
            if not first:
                first.append(read())
            with context(first[0]):
                return jitted(*a, **k)

        return call

    jax.jit = stale_jit


class X64NotInJitKey(Breakage):
    breaks = "the x64 flag is part of the jit cache key (a switch retraces)"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        _pin_jit_to_first_call(jax, lambda: bool(jax.config.x64_enabled), jax.enable_x64)


class ExplicitModeNotInJitKey(Breakage):
    breaks = "jax_explicit_x64_dtypes is part of the jit cache key (a switch retraces)"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        from jax._src import config as config_module

        _pin_jit_to_first_call(
            jax,
            lambda: jax.config.jax_explicit_x64_dtypes.name.lower(),
            config_module.explicit_x64_dtypes,
        )


class ArraysFollowFlag(Breakage):
    breaks = "an array made while x64 was off keeps its 32-bit dtype after x64 is turned on"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        array_type = type(ns["jnp"].zeros(1))
        real = array_type.dtype

        def dtype(self: Any) -> Any:
            d = real.__get__(self)
            return np.dtype(_WIDEN.get(d.name, d.name)) if jax.config.x64_enabled else d

        array_type.dtype = property(dtype)


_WIDEN = {v: k for k, v in _NARROW.items()}


# ---------------------------------------------------------------- claim 8: global vs contextual


class ContextManagerGlobal(Breakage):
    breaks = "jax.enable_x64(...) is thread-local (from 0.8.0)"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]

        @contextlib.contextmanager
        def global_enable_x64(value: bool = True) -> Iterator[None]:
            before = bool(jax.config.x64_enabled)
            jax.config.update("jax_enable_x64", value)
            try:
                yield
            finally:
                jax.config.update("jax_enable_x64", before)

        jax.enable_x64 = global_enable_x64


class ContextManagerNoOp(Breakage):
    breaks = "with jax.enable_x64(flag): switches x64 for the block (from 0.8.0)"

    def patch(self, ns: dict[str, Any]) -> None:
        ns["jax"].enable_x64 = lambda value=True: contextlib.nullcontext()


class GlobalUpdateThreadLocal(Breakage):
    breaks = "jax.config.update('jax_enable_x64', ...) is global: every thread sees it"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real = jax.config.update

        def update(name: str, value: Any) -> None:
            if name == "jax_enable_x64":
                jax.enable_x64(bool(value)).__enter__()  # this thread only, never left
            else:
                real(name, value)

        jax.config.update = update


class LegacyContextApisKept(Breakage):
    breaks = (
        "no contextual x64 API besides jax.enable_x64: jax.experimental.enable_x64 is gone "
        "from 0.9.0, jax.config has no `use`"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        experimental = importlib.import_module("jax.experimental")
        setattr(experimental, "enable_x64", lambda: jax.enable_x64(True))  # noqa: B010 - not in the stubs
        setattr(experimental, "disable_x64", lambda: jax.enable_x64(False))  # noqa: B010
        jax.config.use = lambda name, value: jax.enable_x64(value)


# ---------------------------------------------------------------- claim 9: under transformations


class PolicySkippedUnderTracing(Breakage):
    breaks = "the explicit-dtype policy also applies inside jit and grad"

    def patch(self, ns: dict[str, Any]) -> None:
        from jax._src import core

        dtypes = _dtypes_module()

        def eager_only(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            if not core.trace_state_clean() and not _config_module().enable_x64.value:
                return dtypes.canonicalize_dtype(dtype)
            return original(dtype, fun_name)

        _wrap_explicit(eager_only)


# ---------------------------------------------------------------- issue 13: the words of the policy, and silence


class WarningSaysHonoured(Breakage):
    breaks = "warn mode: the warning says the request is not available and will be truncated to the 32-bit dtype"

    def patch(self, ns: dict[str, Any]) -> None:
        # Same dtypes, function and hints, opposite meaning: a reader is told nothing was lost.
        def reworded(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            with _rewritten_warnings(
                lambda m: [
                    m.replace(
                        "is not available, and will be truncated to dtype",
                        "is honoured exactly, as dtype",
                    )
                ]
            ):
                return original(dtype, fun_name)

        _wrap_explicit(reworded)


class ErrorReduced(Breakage):
    breaks = "error mode: the ValueError says which dtype was requested, where, and that it is not available"

    def patch(self, ns: dict[str, Any]) -> None:
        def terse(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            try:
                return original(dtype, fun_name)
            except ValueError:
                raise ValueError(f"{np.dtype(dtype).name} requested in {fun_name}") from None

        _wrap_explicit(terse)


class WarningAlwaysInt64(Breakage):
    breaks = (
        "warn mode: the warning names the dtype that was requested and the one it becomes "
        "(not always int64 -> int32)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        import re

        def fixed_pair(message: str) -> list[str]:
            message = re.sub(r"(requested dtype )\S+( requested in)", r"\1int64\2", message)
            return [re.sub(r"(truncated to dtype )\w+", r"\1int32", message)]

        def int64_always(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            with _rewritten_warnings(fixed_pair):
                return original(dtype, fun_name)

        _wrap_explicit(int64_always)


class Explicit32BitWarns(Breakage):
    breaks = "an explicit 32-bit dtype request never warns, in any mode"

    def patch(self, ns: dict[str, Any]) -> None:
        def noisy(original: Callable[[Any, str], Any], dtype: Any, fun_name: str) -> Any:
            name = np.dtype(dtype).name
            if name in _WIDEN:
                warnings.warn(
                    f"Explicitly requested dtype {name} requested in {fun_name} is 32-bit",
                    UserWarning,
                    stacklevel=4,
                )
            return original(dtype, fun_name)

        _wrap_explicit(noisy)


class PythonTypesAre64BitRequests(Breakage):
    breaks = (
        "dtype=int/float/complex (and astype(int)/astype(float)) mean the default of that "
        "kind, not a 64-bit request"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes_module()
        real = dtypes.check_and_canonicalize_user_dtype
        as_64 = {int: "int64", float: "float64", complex: "complex128"}

        def check(dtype: Any, fun_name: Any = None) -> Any:
            if isinstance(dtype, type) and dtype in as_64:
                return dtypes._maybe_canonicalize_explicit_dtype(
                    np.dtype(as_64[dtype]), fun_name or ""
                )
            return real(dtype, fun_name)

        dtypes.check_and_canonicalize_user_dtype = check


class Default64BitWarns(Breakage):
    breaks = (
        "creating arrays of the default dtypes never warns, however x64 was turned on "
        "(environment, update, enable_x64)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        dtypes = _dtypes_module()

        def noisy(real: Callable[[], Any]) -> Callable[[], Any]:
            def default() -> Any:
                out = real()
                if out.itemsize == 8:
                    warnings.warn(
                        f"the default dtype {out.name} is 64-bit", UserWarning, stacklevel=2
                    )
                return out

            return default

        dtypes.default_int_dtype = noisy(dtypes.default_int_dtype)
        dtypes.default_float_dtype = noisy(dtypes.default_float_dtype)
        dtypes.default_types["i"] = dtypes._DEFAULT_TYPEMAP[int] = dtypes.default_int_dtype
        dtypes.default_types["f"] = dtypes._DEFAULT_TYPEMAP[float] = dtypes.default_float_dtype


# ---------------------------------------------------------------- issue 13, item 4: jax.enable_x64
# as JAX's tests use it


class DefaultArgumentOff(Breakage):
    breaks = "jax.enable_x64() with no argument turns x64 on"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real = jax.enable_x64

        class NoArgumentMeansOff:
            def __call__(self, new_val: bool = False) -> Any:
                return real(new_val)

        jax.enable_x64 = NoArgumentMeansOff()


class GradArgsCanonicalizedWide(Breakage):
    breaks = "grad's result has the outer mode's dtype even when the function computes inside jax.enable_x64(True)"

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp = ns["jax"], ns["jnp"]
        real = jax.grad

        def grad(fun: Any, *args: Any, **kwargs: Any) -> Any:
            g = real(fun, *args, **kwargs)

            def wide_args(*a: Any, **k: Any) -> Any:
                # Python floats read under the first block the function opens (x64 on), not the outer mode.
                with jax.enable_x64(True):
                    a = tuple(jnp.asarray(v) if isinstance(v, float) else v for v in a)
                return g(*a, **k)

            return wide_args

        jax.grad = grad


class LinalgInvNarrow(Breakage):
    breaks = "a float64 computation really uses 64 bits (jnp.linalg.inv of a float64 matrix is not done in float32)"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        real = jnp.linalg.inv

        def inv(a: Any) -> Any:
            return real(a.astype(jnp.float32)).astype(a.dtype)

        jnp.linalg.inv = inv


# ---------------------------------------------------------------- issue 13, item 5: x64 in every trace cache


class ControlFlowCacheIgnoresX64(Breakage):
    breaks = "x64 is part of the trace context: scan/cond/while_loop/checkpoint bodies are traced again after a switch"

    def patch(self, ns: dict[str, Any]) -> None:
        jax, lax = ns["jax"], ns["lax"]
        first: dict[int, bool] = {}
        keep: list[Any] = []  # the bodies stay alive, so their ids are not reused

        def pinned(fun: Any) -> Any:
            # The body runs under the flag of its first call, whatever it is now: a cache without x64 in its key.
            keep.append(fun)

            def body(*args: Any) -> Any:
                flag = first.setdefault(id(fun), bool(jax.config.x64_enabled))
                with jax.enable_x64(flag):
                    return fun(*args)

            return body

        real_scan, real_cond, real_while, real_checkpoint = (
            lax.scan,
            lax.cond,
            lax.while_loop,
            jax.checkpoint,
        )
        lax.scan = lambda f, init, xs=None, *a, **k: real_scan(pinned(f), init, xs, *a, **k)
        lax.cond = lambda pred, t, f, *ops, **k: real_cond(pred, pinned(t), pinned(f), *ops, **k)
        lax.while_loop = lambda c, b, init: real_while(pinned(c), pinned(b), init)
        jax.checkpoint = lambda fun=None, **k: real_checkpoint(pinned(fun), **k)


# ---------------------------------------------------------------- issue 13, items 6 and 7: allow
# mode beyond creation, promotion


class JitPythonScalarsNarrow(Breakage):
    breaks = "a Python scalar passed into jit (or jit(...).lower) has the mode's default dtype and stays weakly typed"

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp = ns["jax"], ns["jnp"]
        real = jax.jit
        narrow = {int: jnp.int32, float: jnp.float32, complex: jnp.complex64}

        def fixed(args: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(
                jnp.asarray(a, dtype=narrow[type(a)]) if type(a) in narrow else a for a in args
            )

        def jit(fun: Any = None, **kwargs: Any) -> Any:
            jitted = real(fun, **kwargs)

            def call(*args: Any, **kw: Any) -> Any:
                return jitted(*fixed(args), **kw)

            call.lower = lambda *args, **kw: jitted.lower(*fixed(args), **kw)  # type: ignore[attr-defined]
            return call

        jax.jit = jit


class ResultTypeNoneFloat64(Breakage):
    breaks = "result_type(None) is the mode's default float"

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp = ns["jax"], ns["jnp"]
        for owner in (jnp, jax.dtypes):
            real = owner.result_type
            owner.result_type = lambda *args, _real=real, **kw: (
                np.dtype("float64") if args == (None,) else _real(*args, **kw)
            )


class PythonScalarsStrong(Breakage):
    breaks = "Python scalars are weakly typed: they never widen an 8/16/32-bit array"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        for name in ("add", "multiply", "subtract"):
            real = getattr(jnp, name)

            def strong(x: Any, y: Any, _real: Any = real) -> Any:
                def lift(v: Any) -> Any:
                    return (
                        jnp.array(v, dtype=type(v))
                        if isinstance(v, (int, float)) and not isinstance(v, bool)
                        else v
                    )

                return _real(lift(x), lift(y))

            setattr(jnp, name, strong)


class Int64ScalarsCanonicalizedFirst(Breakage):
    breaks = "an int64 request for a Python int keeps the value (jnp.int64(2**40), jnp.array(2**40, dtype=int64))"

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        real_array = jnp.array

        def wrap32(v: Any) -> Any:
            return (
                int(np.asarray(v).astype(np.int64).astype(np.int32))
                if isinstance(v, int) and not isinstance(v, bool)
                else v
            )

        def array(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
            if dtype is not None and np.dtype(dtype) == np.dtype("int64"):
                obj = wrap32(obj)
            return real_array(obj, dtype, *args, **kwargs)

        jnp.array = array
        jnp.int64 = lambda v: real_array(wrap32(v) if isinstance(v, int) else v, dtype="int64")


class ReductionInitialNarrow(Breakage):
    breaks = (
        "a reduction of an int64 array (with or without initial=) is an int64 of the right value"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        real = jnp.max

        def max_(a: Any, *args: Any, initial: Any = None, **kwargs: Any) -> Any:
            # The initial value is built with the 32-bit default, as JAX 0.10.2 did in allow mode.
            start = np.iinfo(np.int32).min if initial is None else initial
            out = real(a, *args, initial=int(np.asarray(start)), **kwargs)
            return out.astype(jnp.int32)

        jnp.max = max_


class ShapeDtypeStructNarrowed(Breakage):
    breaks = "jax.ShapeDtypeStruct keeps an int64 dtype, and code lowered for it takes int64"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real = jax.ShapeDtypeStruct
        jax.ShapeDtypeStruct = lambda shape, dtype, **kw: real(
            shape, _NARROW.get(np.dtype(dtype).name, dtype), **kw
        )


class CanonicalizeUnknownToFloat(Breakage):
    breaks = "jax.dtypes.canonicalize_dtype rejects a name that is no dtype (TypeError)"

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real = jax.dtypes.canonicalize_dtype

        def lenient(dtype: Any, allow_extended_dtype: bool = False) -> Any:
            try:
                return real(dtype, allow_extended_dtype)
            except TypeError:
                return real("float32", allow_extended_dtype)

        jax.dtypes.canonicalize_dtype = lenient


# ---------------------------------------------------------------- issue 24, part 4: the families


class RandomSamplersSilentlyTruncate(Breakage):
    breaks = (
        "warn mode: a jax.random sampler asked for a 64-bit dtype warns like every other "
        "function (jax#17366: uniform did not)"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        import functools

        jax = ns["jax"]
        for name in ("uniform", "normal", "randint", "bits", "exponential"):
            real = getattr(jax.random, name)

            @functools.wraps(real)
            def silent(*args: Any, _real: Any = real, dtype: Any = None, **kwargs: Any) -> Any:
                # Truncated as JAX 0.4.x truncated random.uniform's float64: quietly, before the policy sees it.
                if (
                    dtype is not None
                    and np.dtype(dtype).name in _NARROW
                    and _policy() == "warn"
                    and not jax.config.x64_enabled
                ):
                    dtype = _NARROW[np.dtype(dtype).name]
                return _real(*args, dtype=dtype, **kwargs)

            setattr(jax.random, name, silent)


class NumpyInt64OutOfRangeRaises(Breakage):
    breaks = (
        "x64 off: a NumPy int64 outside the int32 range is wrapped to int32 silently (the "
        "jax#18385 behaviour), not refused"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp = ns["jax"], ns["jnp"]
        info = np.iinfo(np.int32)
        for name in ("asarray", "array"):
            real = getattr(jnp, name)

            def strict(obj: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
                # What jax#18385 asked for: an OverflowError, as for a Python int out of range.
                if (
                    isinstance(obj, np.int64)
                    and not jax.config.x64_enabled
                    and not info.min <= int(obj) <= info.max
                ):
                    raise OverflowError(f"NumPy int64 {int(obj)} is out of range for int32")
                return _real(obj, *args, **kwargs)

            setattr(jnp, name, strict)


# ---------------------------------------------------------------- issue 24: the remaining JAX-test rows


class JitKeyUncanonicalizedDtypes(Breakage):
    breaks = (
        "x64 off: a jitted function's cache key holds its arguments' canonical dtypes (a float64 "
        "NumPy argument is float32 and reuses a float32 trace); the raw NumPy dtype keys it instead"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jax = ns["jax"]
        real = jax.jit

        def jit(fun: Any = None, **kwargs: Any) -> Any:
            per_dtypes: dict[tuple[str, ...], Any] = {}

            def call(*args: Any, **kw: Any) -> Any:
                leaves = jax.tree_util.tree_leaves((args, kw))
                key = tuple(
                    np.asarray(a).dtype.str
                    for a in leaves
                    if isinstance(a, np.generic | np.ndarray)
                )
                if key not in per_dtypes:
                    # a fresh function per key: JAX's trace cache is keyed by the function object
                    per_dtypes[key] = real(lambda *a, **k: fun(*a, **k), **kwargs)
                return per_dtypes[key](*args, **kw)

            return call

        jax.jit = jit


class TracedPythonFloatsNarrow(Breakage):
    breaks = (
        "a Python float a traced function returns is a weakly typed literal of the mode's default "
        "float (float64 with x64 on); make_jaxpr records it as a strong float32 instead"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jax, jnp = ns["jax"], ns["jnp"]
        real = jax.make_jaxpr

        def make_jaxpr(fun: Any, *args: Any, **kwargs: Any) -> Any:
            def narrowed(*a: Any, **k: Any) -> Any:
                return jax.tree_util.tree_map(
                    lambda v: jnp.asarray(v, jnp.float32) if type(v) is float else v, fun(*a, **k)
                )

            return real(narrowed, *args, **kwargs)

        jax.make_jaxpr = make_jaxpr


class NarrowFloatsWidened(Breakage):
    breaks = (
        "an explicit float dtype narrower than 32 bits (bfloat16, float16, float8, float4) is kept "
        "in every mode; jnp.array widens it to float32 instead"
    )

    def patch(self, ns: dict[str, Any]) -> None:
        jnp = ns["jnp"]
        real = jnp.array

        def array(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
            if (
                dtype is not None
                and jnp.issubdtype(dtype, jnp.floating)
                and jnp.finfo(dtype).bits < 32
            ):
                dtype = jnp.float32
            return real(obj, dtype, *args, **kwargs)

        jnp.array = array
