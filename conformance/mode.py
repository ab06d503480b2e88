"""The process-wide mode a run is in: the x64 flag and the explicit-64-bit-dtype policy."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jax_conformance.errors import ModeError

EXPLICIT_MODES = ("warn", "error", "allow")

# How JAX reads a boolean environment flag (jax._src.config.bool_env).
_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}


def parse_truth(value: str, what: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ModeError(f"invalid truth value {value!r} for {what} (use on/off, 1/0, true/false)")


@dataclass(frozen=True, order=True)
class Mode:
    x64: bool = False
    explicit_x64_dtypes: str = "warn"

    def __post_init__(self) -> None:
        if self.explicit_x64_dtypes not in EXPLICIT_MODES:
            raise ModeError(
                f"explicit_x64_dtypes must be one of {', '.join(EXPLICIT_MODES)}, "
                f"not {self.explicit_x64_dtypes!r}"
            )

    @property
    def slug(self) -> str:
        """The mode's one name, used everywhere (`--modes`, summaries, the report, test ids):
        `off-warn`, `off-error`, `off-allow`, and `on` (with x64 on the explicit-dtype policy has
        nothing to say, so the default policy is not named; another one is: `on-error`)."""
        if self.x64:
            return "on" if self.explicit_x64_dtypes == "warn" else f"on-{self.explicit_x64_dtypes}"
        return f"off-{self.explicit_x64_dtypes}"

    @property
    def label(self) -> str:
        return f"x64={'on' if self.x64 else 'off'}, explicit_x64_dtypes={self.explicit_x64_dtypes}"

    def to_json(self) -> dict[str, Any]:
        return {"x64": self.x64, "explicit_x64_dtypes": self.explicit_x64_dtypes}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Mode:
        return cls(bool(data["x64"]), str(data.get("explicit_x64_dtypes", "warn")))

    @classmethod
    def from_slug(cls, slug: str) -> Mode:
        """Parse a mode's name: `off-warn`, `off-error`, `off-allow`, `on` (also `off/error`,
        `off` for off-warn, and `on-warn`, the name `on` had before)."""
        text = slug.strip().lower().replace("/", "-")
        x64_part, _, edm = text.partition("-")
        if x64_part not in ("on", "off") or (edm and edm not in EXPLICIT_MODES):
            raise ModeError(f"unknown mode {slug!r}; the modes are {MODE_NAMES}")
        return cls(x64_part == "on", edm or "warn")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Mode:
        """The mode JAX itself would start in, given these environment variables."""
        env = os.environ if environ is None else environ
        x64 = False
        if "JAX_ENABLE_X64" in env:
            x64 = parse_truth(env["JAX_ENABLE_X64"], "JAX_ENABLE_X64")
        edm = env.get("JAX_EXPLICIT_X64_DTYPES", "warn") or "warn"
        if edm not in EXPLICIT_MODES:
            raise ModeError(
                f"JAX_EXPLICIT_X64_DTYPES={edm!r} names no mode (use warn, error or allow)"
            )
        return cls(x64, edm)

    def environ(self) -> dict[str, str]:
        """The environment variables that start JAX in this mode."""
        return {
            "JAX_ENABLE_X64": "1" if self.x64 else "0",
            "JAX_EXPLICIT_X64_DTYPES": self.explicit_x64_dtypes,
        }


# The default matrix: with x64 on the explicit-dtype policy has nothing to say.
DEFAULT_MODES = (
    Mode(False, "warn"),
    Mode(False, "error"),
    Mode(False, "allow"),
    Mode(True, "warn"),
)
# What a usage error lists: `off-warn, off-error, off-allow, on`.
MODE_NAMES = ", ".join(m.slug for m in DEFAULT_MODES)


def parse_modes(values: list[str] | None, option: str = "--modes") -> list[Mode]:
    """Modes from `--modes A,B --modes C` (default: all four); ModeError names what is wrong."""
    if values is None:
        return list(DEFAULT_MODES)
    modes: list[Mode] = []
    for value in values:
        names = [s.strip() for s in value.split(",")]
        if not any(names):
            raise ModeError(f"{option} {value!r} names no mode; the modes are {MODE_NAMES}")
        for name in filter(None, names):
            try:
                mode = Mode.from_slug(name)
            except ModeError:
                raise ModeError(f"{option} {name!r}: unknown mode; the modes are {MODE_NAMES}") from None
            if mode not in modes:
                modes.append(mode)
    return modes
