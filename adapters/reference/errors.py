"""`jax.errors`: the public error types, under the names JAX gives them, so specs resolve them alike."""

from __future__ import annotations

DOCS = "https://docs.jax.dev/en/latest/errors.html"


class JAXTypeError(TypeError):
    """Base of the reference's tracer errors; each names its docs anchor like JAX does."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}\nSee {DOCS}#jax.errors.{type(self).__name__}")


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where a concrete Python value is needed."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` (an `if`) on a traced value."""


class TracerIntegerConversionError(JAXTypeError):
    """`int()` / `__index__` on a traced value."""


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray()` on a traced value."""


class UnexpectedTracerError(JAXTypeError):
    """A Tracer where none may be: leaked out of its transformation, or in custom_vjp nondiff_argnums."""


class KeyReuseError(JAXTypeError):
    """Listed for completeness: the reference has no PRNG keys."""


class CustomVJPException(Exception):
    """Not public (jax._src.interpreters.ad): differentiation w.r.t. a value a staged custom_vjp closes over."""


class JaxRuntimeError(RuntimeError):
    """A failure while running a computation."""


__all__ = [
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "UnexpectedTracerError",
    "KeyReuseError",
    "JaxRuntimeError",
]
