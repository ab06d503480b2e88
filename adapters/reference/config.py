"""`jax.config`: the flags the reference models, how they start from the environment, and how they change.

JAX reads each flag's variable (`JAX_ENABLE_X64`, `JAX_EXPLICIT_X64_DTYPES`, `JAX_CUSTOM_VJP3`,
`JAX_DISABLE_BWD_CHECKS`, `JAX_NUMPY_DTYPE_PROMOTION`: the name in upper case) once, at import;
the reference reads them when
the adapter builds its namespace (`load_from_environ`), which plays the part of `import jax`.
After that only `config.update` (or the `enable_x64` context) changes them. `FLAGS` is the table
the adapter reports (`ReferenceAdapter.info()["flags"]`); a flag that is not in it is not modelled.
"""

from __future__ import annotations

import contextlib
import enum
import os
import threading
from typing import Any, NamedTuple

from jax_conformance.adapters.reference.mutants import mutant

_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}


class ExplicitX64Mode(enum.Enum):
    """What an explicit 64-bit dtype request does while x64 is off."""

    WARN = 1
    ERROR = 2
    ALLOW = 3

    @classmethod
    def _missing_(cls, value: object) -> ExplicitX64Mode | None:
        # 'warn' / 'error' / 'allow', lower case only, as the flag's parser takes them.
        if isinstance(value, str) and value in ("warn", "error", "allow"):
            return cls[value.upper()]
        return None


def parse_env_bool(name: str, value: str) -> bool:
    """A boolean environment flag, spelled as JAX accepts it; anything else fails start-up."""
    v = value.lower()
    if v in _TRUE:
        return True
    if v in _FALSE or mutant("x64-env-lenient"):
        return False
    raise ValueError(f"invalid truth value {value!r} for environment {name!r}")


class Flag(NamedTuple):
    """A flag the reference models: JAX 0.10.2's default, whether JAX marks it an upgrade, its help text."""

    default: Any
    upgrade: bool
    help: str


# Every flag the reference models (JAX 0.10.2's defaults; help in our words). An upgrade flag's True
# is JAX's incoming behaviour (docs/research/upcoming-flags.md).
FLAGS: dict[str, Flag] = {
    "jax_enable_x64": Flag(False, False, "Enable 64-bit types to be used (dtypes.py)."),
    "jax_explicit_x64_dtypes": Flag(
        "warn",
        False,
        "What an explicit 64-bit dtype request does while x64 is off: "
        "warn and truncate, error, or allow (dtypes.check_user_dtype).",
    ),
    "jax_custom_vjp3": Flag(
        False,
        True,
        "custom_vjp's new implementation, chosen when custom_vjp(...) is created "
        "(custom_vjp3.py: closed-over Tracers and unhashable nondiff arguments rejected, new rule "
        "output checks).",
    ),
    "jax_disable_bwd_checks": Flag(
        False,
        True,
        "Turns off the shape checks of a custom_vjp bwd rule's output "
        "(custom_vjp._leaf_cotangent, custom_vjp3.cotangents_from_bwd3).",
    ),
    "jax_numpy_dtype_promotion": Flag(
        "standard",
        False,
        "Type promotion: 'standard' (the lattice) or 'strict' (safe weak promotions only) "
        "(promotion.py, numpy_dtypes.promotion_mode).",
    ),
}
_BOOL_FLAGS = ("jax_custom_vjp3", "jax_disable_bwd_checks")
_PROMOTION_MODES = ("standard", "strict")


class Config:
    """The process-wide flags (`jax.config`); `x64_enabled` is read-only."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "jax_enable_x64": False,
            "jax_explicit_x64_dtypes": ExplicitX64Mode.WARN,
            **{name: FLAGS[name].default for name in _BOOL_FLAGS},
            "jax_numpy_dtype_promotion": "standard",
        }
        self._local = threading.local()  # `with enable_x64(...)` is per thread

    def load_from_environ(self) -> None:
        """Start-up: the flags from JAX_ENABLE_X64 / JAX_EXPLICIT_X64_DTYPES / JAX_CUSTOM_VJP3 / ...
        (invalid values raise)."""
        x64 = False
        if "JAX_ENABLE_X64" in os.environ and not mutant("x64-env-ignored"):
            x64 = parse_env_bool("JAX_ENABLE_X64", os.environ["JAX_ENABLE_X64"])
        edm = os.environ.get("JAX_EXPLICIT_X64_DTYPES", "warn")
        try:
            mode = ExplicitX64Mode(edm)
        except ValueError:
            raise ValueError(
                f'Invalid value "{edm}" for JAX flag jax_explicit_x64_dtypes'
            ) from None
        promotion = os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard") or "standard"
        self._values = {
            "jax_enable_x64": x64,
            "jax_explicit_x64_dtypes": mode,
            "jax_numpy_dtype_promotion": _promotion_mode(promotion),
        }
        for name in _BOOL_FLAGS:
            var = name.upper()
            self._values[name] = (
                parse_env_bool(var, os.environ[var]) if var in os.environ else FLAGS[name].default
            )

    def update(self, name: str, value: Any) -> None:
        """`jax.config.update(name, value)`: set a flag for the whole process."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        if name == "jax_enable_x64":
            if mutant("x64-update-ignored"):
                return
            self._values[name] = bool(value)  # JAX 0.10.2 parses with bool(): 'false' enables it
        elif name in _BOOL_FLAGS:
            self._values[name] = bool(value)
        elif name == "jax_numpy_dtype_promotion":
            self._values[name] = _promotion_mode(value)
        else:
            self._values[name] = _explicit_mode(value)

    def read(self, name: str) -> Any:
        """The value of a flag by name."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return getattr(self, name)

    @property
    def values(self) -> dict[str, Any]:
        return dict(self._values)

    @property
    def jax_enable_x64(self) -> bool:
        override = getattr(self._local, "x64", None)
        return bool(self._values["jax_enable_x64"] if override is None else override)

    @property
    def x64_enabled(self) -> bool:
        """Read-only: whether 64-bit dtypes are on (change it with `update`)."""
        return self.jax_enable_x64

    @property
    def jax_explicit_x64_dtypes(self) -> ExplicitX64Mode:
        return self._values["jax_explicit_x64_dtypes"]

    @property
    def jax_custom_vjp3(self) -> bool:
        """Read by `custom_vjp(...)` when it is created: which implementation the function gets."""
        return bool(self._values["jax_custom_vjp3"])

    @property
    def jax_disable_bwd_checks(self) -> bool:
        return bool(self._values["jax_disable_bwd_checks"])

    @property
    def jax_numpy_dtype_promotion(self) -> str:
        """'standard' or 'strict': read by every promotion (numpy_dtypes.promotion_mode)."""
        return str(self._values["jax_numpy_dtype_promotion"])

    def flag_table(self) -> list[dict[str, Any]]:
        """The flags the reference models: name, default, value in effect, upgrade, help (results.FlagInfo).

        As the jax adapter does, the default of a flag whose variable is set is reported as None (the
        mode set it; the worker did not see the default)."""
        table = []
        for name, flag in sorted(FLAGS.items()):
            value = self.read(name)
            value = value.name.lower() if isinstance(value, ExplicitX64Mode) else value
            table.append(
                {
                    "name": name,
                    "default": None if name.upper() in os.environ else flag.default,
                    "value": value,
                    "upgrade": flag.upgrade,
                    "help": flag.help,
                }
            )
        return table

    def __repr__(self) -> str:
        return (
            f"<reference jax.config x64={self.x64_enabled} "
            f"explicit_x64_dtypes={self.jax_explicit_x64_dtypes.name.lower()}>"
        )


def _explicit_mode(value: Any) -> ExplicitX64Mode:
    if isinstance(value, ExplicitX64Mode):
        return value
    if isinstance(value, str):
        return ExplicitX64Mode(value)  # ValueError "'bogus' is not a valid ExplicitX64Mode"
    raise TypeError(
        f"new enum value must be an instance of {ExplicitX64Mode}, got {value!r} of type {type(value)}."
    )


def _promotion_mode(value: Any) -> str:
    """JAX's enum flag: 'standard' or 'strict', anything else a ValueError at start-up or update."""
    if value not in _PROMOTION_MODES:
        raise ValueError(
            f"new enum value must be in {list(_PROMOTION_MODES)}, got {value!r} of type {type(value)}."
        )
    return str(value)


config = Config()


class enable_x64(contextlib.ContextDecorator):  # noqa: N801 - JAX's name
    """`with jax.enable_x64(True):` a thread-local override of the flag (JAX >= 0.8); like JAX's,
    one object may be entered again (each entry remembers the setting it replaced)."""

    def __init__(self, new_val: bool = True) -> None:
        self.new_val = bool(new_val)
        self._previous: list[Any] = []

    def __enter__(self) -> None:
        self._previous.append(getattr(config._local, "x64", None))
        config._local.x64 = self.new_val

    def __exit__(self, *exc: object) -> None:
        config._local.x64 = self._previous.pop()
