"""The process-wide mode a run is in: a set of JAX flags.

Two flags have their own fields, as they always had: `x64` (jax_enable_x64) and
`explicit_x64_dtypes` (jax_explicit_x64_dtypes). Every other flag the mode sets is in `flags`
(`--flag jax_custom_vjp3=true`, the mode `off-warn+jax_custom_vjp3`). JAX reads each flag from
`JAX_<NAME>` when it is imported, so a mode is started by its environment (`Mode.environ`), one
process per mode.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jax_conformance.errors import ModeError

if TYPE_CHECKING:
    from jax_conformance.records import ModeJSON

EXPLICIT_MODES = ("warn", "error", "allow")
X64_FLAG, EXPLICIT_FLAG = "jax_enable_x64", "jax_explicit_x64_dtypes"

FlagValue = bool | str

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


def parse_flag_value(value: str) -> FlagValue:
    """A flag's value as written: JAX's truth words are booleans, anything else a string."""
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    return value.strip()


def parse_flag(text: str, option: str = "--flag") -> tuple[str, FlagValue]:
    """`NAME=VALUE` (or `NAME` alone, meaning true); ModeError names what is wrong."""
    name, eq, value = text.partition("=")
    name = name.strip()
    if not name.startswith("jax_") or not name[4:].replace("_", "").isalnum():
        raise ModeError(
            f"{option} {text!r}: a flag is NAME=VALUE with a JAX flag name such as jax_custom_vjp3=true"
        )
    if eq and not value.strip():
        raise ModeError(f"{option} {text!r}: no value after '='")
    return name, parse_flag_value(value) if eq else True


def value_text(value: FlagValue) -> str:
    """A flag's value as written on a command line and in labels: `true`, `false`, or the string."""
    return str(value).lower() if isinstance(value, bool) else value


def flag_text(name: str, value: FlagValue) -> str:
    """How a flag is written in a mode's name: `+name` for true, `+name=value` otherwise."""
    return name if value is True else f"{name}={value_text(value)}"


def same_flag_value(have: object, want: FlagValue) -> bool:
    """Whether a flag's value in effect (as an adapter reports it) is the value asked for: booleans
    only equal booleans; anything else compares as lower-case text (`warn` and an enum named WARN)."""
    if isinstance(want, bool) or isinstance(have, bool):
        return isinstance(have, bool) and isinstance(want, bool) and have is want
    return str(have).lower() == str(want).lower()


def flag_env(value: FlagValue) -> str:
    return ("1" if value else "0") if isinstance(value, bool) else value


@dataclass(frozen=True, order=True)
class Mode:
    x64: bool = False
    explicit_x64_dtypes: str = "warn"
    # The other JAX flags the mode sets, sorted by name (never the two above).
    flags: tuple[tuple[str, FlagValue], ...] = ()

    def __post_init__(self) -> None:
        if self.explicit_x64_dtypes not in EXPLICIT_MODES:
            raise ModeError(
                f"explicit_x64_dtypes must be one of {', '.join(EXPLICIT_MODES)}, "
                f"not {self.explicit_x64_dtypes!r}"
            )
        names = [n for n, _ in self.flags]
        if names != sorted(set(names)) or X64_FLAG in names or EXPLICIT_FLAG in names:
            raise ModeError(f"Mode.flags must be sorted, unique, without the x64 flags: {names}")

    @classmethod
    def with_flags(
        cls,
        x64: bool = False,
        explicit_x64_dtypes: str = "warn",
        flags: Mapping[str, FlagValue] | None = None,
    ) -> Mode:
        """A mode from any flags; `jax_enable_x64` / `jax_explicit_x64_dtypes` among them set the two fields."""
        rest = dict(flags or {})
        if X64_FLAG in rest:
            value = rest.pop(X64_FLAG)
            x64 = value if isinstance(value, bool) else parse_truth(value, X64_FLAG)
        if EXPLICIT_FLAG in rest:
            explicit_x64_dtypes = str(rest.pop(EXPLICIT_FLAG)).lower()
        return cls(x64, explicit_x64_dtypes, tuple(sorted(rest.items())))

    def with_flag(self, **flags: FlagValue) -> Mode:
        return Mode.with_flags(self.x64, self.explicit_x64_dtypes, {**dict(self.flags), **flags})

    @property
    def base(self) -> Mode:
        """The same x64 mode without the other flags."""
        return Mode(self.x64, self.explicit_x64_dtypes)

    @property
    def slug(self) -> str:
        """The mode's one name, used everywhere (`--modes`, summaries, the report, test ids):
        `off-warn`, `off-error`, `off-allow`, and `on` (with x64 on the explicit-dtype policy has
        nothing to say, so the default policy is not named; another one is: `on-error`)."""
        if self.x64:
            base = "on" if self.explicit_x64_dtypes == "warn" else f"on-{self.explicit_x64_dtypes}"
        else:
            base = f"off-{self.explicit_x64_dtypes}"
        return "".join([base, *(f"+{flag_text(n, v)}" for n, v in self.flags)])

    @property
    def label(self) -> str:
        return ", ".join(
            [
                f"x64={'on' if self.x64 else 'off'}, explicit_x64_dtypes={self.explicit_x64_dtypes}",
                *(f"{n}={value_text(v)}" for n, v in self.flags),
            ]
        )

    def to_json(self) -> ModeJSON:
        return {
            "x64": self.x64,
            "explicit_x64_dtypes": self.explicit_x64_dtypes,
            "flags": dict(self.flags),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Mode:
        """A record's `mode` (`records.read_records` gives older files' modes their `flags`)."""
        flags = data["flags"]
        if not isinstance(flags, Mapping):
            raise ModeError(f"a mode's flags are a mapping, not {type(flags).__name__}")
        return cls.with_flags(
            bool(data["x64"]), str(data.get("explicit_x64_dtypes", "warn")), flags
        )

    @classmethod
    def from_slug(cls, slug: str) -> Mode:
        """Parse a mode's name, as `slug` writes it: `off-warn`, `off-error`, `off-allow`, `on`,
        `on-error`, `on-allow` (and `off` for off-warn), then `+flag` or `+flag=value` for each
        other flag: `off-warn+jax_custom_vjp3`."""
        head, *flag_parts = slug.strip().split("+")
        x64_part, dash, edm = head.strip().lower().partition("-")
        if (
            x64_part not in ("on", "off")
            or (dash and edm not in EXPLICIT_MODES)
            or (x64_part == "on" and edm == "warn")
        ):
            raise ModeError(
                f"unknown mode {slug!r}; the modes are {MODE_NAMES}, each optionally followed by +FLAG or +FLAG=VALUE"
            )
        flags = dict(parse_flag(part, "flag") for part in flag_parts)
        return cls.with_flags(x64_part == "on", edm or "warn", flags)

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
            **{name.upper(): flag_env(value) for name, value in self.flags},
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
# The order modes are shown in: the default matrix's (`mode_key`).
MODE_ORDER = {m.slug: i for i, m in enumerate(DEFAULT_MODES)}


# Strict promotion in every default run: `run` without --modes adds these modes, over the spec
# areas whose cases have strict blocks (the promotion table's cells, x64.promotion's refusals).
STRICT_MODES = (
    Mode(False, "warn", (("jax_numpy_dtype_promotion", "strict"),)),
    Mode(True, "warn", (("jax_numpy_dtype_promotion", "strict"),)),
)
STRICT_AREAS = ("promotion", "x64")


UPCOMING = "+upcoming"
# The option that names modes, in every command (`options.add_modes`) and in its messages.
MODES_OPTION = "--modes"


def parse_modes(
    values: list[str] | None, option: str = MODES_OPTION, *, upcoming: bool = True
) -> list[Mode]:
    """Modes from `--modes A,B --modes C` (default: all four); ModeError names what is wrong.

    `+upcoming` is not a mode but a request that needs the adapter's flags: `wants_upcoming`
    finds it, and this function skips it (`upcoming=False`: the message does not offer it).
    """
    if values is None:
        return list(DEFAULT_MODES)
    modes: list[Mode] = []
    for value in values:
        names = [s.strip() for s in value.split(",")]
        if not any(names):
            raise ModeError(f"{option} {value!r} names no mode; the modes are {MODE_NAMES}")
        for name in filter(None, names):
            if name.lower() == UPCOMING:
                continue
            try:
                mode = Mode.from_slug(name)
            except ModeError as exc:
                if "+" in name:
                    raise ModeError(f"{option} {name!r}: {exc}") from None
                raise ModeError(
                    f"{option} {name!r}: unknown mode; the modes are {MODE_NAMES}"
                    f" (each may add +FLAG or +FLAG=VALUE){f', and {UPCOMING}' if upcoming else ''}"
                ) from None
            if mode not in modes:
                modes.append(mode)
    return modes


def wants_upcoming(values: list[str] | None) -> bool:
    """Whether `--modes` asked for the upcoming-defaults modes (`+upcoming`)."""
    return any(
        name.strip().lower() == UPCOMING for value in values or [] for name in value.split(",")
    )


@dataclass(frozen=True)
class ModeChoice:
    """What `--modes` asked for: the modes it names (the four default ones when not given) and
    whether it asked for `+upcoming`, which only an adapter's flags can expand (`expand_upcoming`)."""

    modes: list[Mode]
    upcoming: bool = False


def read_modes(
    values: list[str] | None, *, upcoming: bool = True, option: str = MODES_OPTION
) -> ModeChoice:
    """`--modes` read once for every command (ModeError names what is wrong): a value that names
    no mode, or `+upcoming` where the command cannot expand it (`upcoming=False`), is refused."""
    asked = wants_upcoming(values)
    if asked and not upcoming:
        raise ModeError(
            f"{option} {UPCOMING}: this command runs only the modes named; the modes are {MODE_NAMES}"
        )
    modes = parse_modes(values, option, upcoming=upcoming)
    if values is not None and not modes and not asked:
        raise ModeError(f"{option} names no mode; the modes are {MODE_NAMES}")
    return ModeChoice(modes, asked)


def expand_upcoming(choice: ModeChoice, flags: Sequence[str]) -> list[Mode]:
    """The modes a choice runs, given the upgrade flags an adapter has: those named, then with
    `+upcoming` the upcoming-defaults modes on the first of them (off-warn when none is named):
    every flag at True together, then each alone."""
    if not choice.upcoming:
        return list(choice.modes)
    base = choice.modes[0] if choice.modes else Mode()
    modes = list(choice.modes) or [base]
    return modes + [m for m in upcoming_modes(base.base, flags) if m not in modes]


def upcoming_modes(base: Mode, flags: Sequence[str]) -> list[Mode]:
    """On `base`: every flag at True together, then each flag alone (one flag: just that mode)."""
    if not flags:
        return []
    together = base.with_flag(**dict.fromkeys(flags, True))
    alone = [base.with_flag(**{name: True}) for name in flags]
    return list(dict.fromkeys([together, *alone]))


def counted_modes(slugs: Iterable[str]) -> set[str]:
    """The modes whose unexpected outcomes count against a release (the report's verdict and
    `run`'s exit status): those that set no other flag, where the run has any; modes with flags
    beside them preview JAX's upcoming defaults (the report's upcoming section), not counted.
    A run of flagged modes alone counts them: they are what was asked."""
    given = set(slugs)
    plain = {s for s in given if "+" not in s}
    return plain or given


def mode_key(slug: str) -> tuple[int, int, str]:
    """Sort mode slugs in the order of the default matrix, a mode with flags after its base mode
    (fewest flags first); others after, alphabetically."""
    base, plus, flags = slug.partition("+")
    return (MODE_ORDER.get(base, 99), flags.count("+") + 1 if plus else 0, slug)


def mode_slug(mode: object) -> str:
    """A record's or header's mode as its slug (`off-warn`); `?` when it names no mode."""
    if isinstance(mode, Mapping):
        try:
            return Mode.from_json(mode).slug
        except (KeyError, ModeError):
            return "?"
    return str(mode or "?")
