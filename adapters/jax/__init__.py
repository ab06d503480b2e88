"""The `jax` adapter: real JAX, started in the mode given by the environment."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from typing import Any

from jax_conformance.adapters import COMPILE_CACHE_ENV, Adapter
from jax_conformance.errors import AdapterStartError
from jax_conformance.mode import Mode
from jax_conformance.records import AdapterInfo, FlagInfo


class JaxAdapter(Adapter):
    name = "jax"
    # JAX's configuration reads JAX_* when `jax` is imported; NumPy, ml_dtypes and jaxlib do not.
    late_env_prefixes = ("JAX_",)

    def fork_preload(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return ("numpy", "ml_dtypes", "jaxlib", "jaxlib.xla_client"), ("jax", "jax.numpy")

    def __init__(self) -> None:
        self._ns: dict[str, Any] | None = None
        self.notes: list[str] = []
        self._set_here: dict[str, Any] = {}  # options start() set, with the value each had before

    def start(self, mode: Mode) -> None:
        """JAX reads JAX_ENABLE_X64 / JAX_EXPLICIT_X64_DTYPES when it is imported; check it did."""
        ns = self.namespace()
        jax = ns["jax"]
        if bool(jax.config.x64_enabled) != mode.x64:
            raise AdapterStartError(
                f"JAX started with x64_enabled={jax.config.x64_enabled}, expected {mode.x64}"
            )
        if not hasattr(jax.config, "jax_explicit_x64_dtypes"):
            self.notes.append(
                "jax_explicit_x64_dtypes does not exist in this release; JAX_EXPLICIT_X64_DTYPES is ignored"
            )

    def _share_compiled_programs(self, jax: Any, cache_dir: str) -> None:
        """Point JAX's persistent compilation cache at the run's directory, every program cached.

        What a case observes is decided before XLA compiles (tracing and lowering) or by running
        the executable, which is the same one whether compiled here or read back (the cache's key
        is the lowered program with the compile options, backend and versions), so modes share the
        XLA compilations of programs they lower alike. Not done when the user's environment
        configures the cache (theirs is kept) or the release lacks one of the options.
        """
        options = compile_cache_options(cache_dir)
        holders = _config_holders()
        missing = [name for name in options if name not in holders]
        preset = [name for name in options if name.upper() in os.environ]
        if missing or preset:
            why = (
                f"this release has no {', '.join(missing)}"
                if missing
                else f"the environment sets {', '.join(n.upper() for n in preset)}"
            )
            self.notes.append(f"compiled programs not shared between modes: {why}")
            return
        for name, value in options.items():
            self._set_here[name] = holders[name].value
            jax.config.update(name, value)
        self.notes.append(
            "compiled programs shared between the run's modes through JAX's persistent "
            f"compilation cache (jax_compilation_cache_dir={cache_dir})"
        )

    def namespace(self) -> dict[str, Any]:
        if self._ns is None:
            import jax
            import jax.numpy as jnp
            import numpy as np

            self._ns = {"jax": jax, "jnp": jnp, "np": np, "lax": jax.lax, "os": os, "sys": sys}
            # here, not in start(): an isolated case's process builds its names without start()
            cache_dir = os.environ.get(COMPILE_CACHE_ENV)
            if cache_dir:
                self._share_compiled_programs(jax, cache_dir)
        return self._ns

    def info(self) -> AdapterInfo:
        jax = self.namespace()["jax"]
        import jaxlib
        import numpy as np

        devices = jax.devices()
        backends = sorted({d.platform for d in devices})
        return {
            "adapter": self.name,
            "implementation_version": jax.__version__,
            "behaviour_version": jax.__version__,
            "backends": backends,
            "environment": {
                "python": platform.python_version(),
                "numpy": np.__version__,
                "jax": jax.__version__,
                "jaxlib": getattr(jaxlib, "__version__", "unknown"),
                "platform": platform.platform(),
                "machine": platform.machine(),
                "devices": [str(d) for d in devices],
                "device_kinds": _device_kinds(devices),
                "plugins": _plugins(),
                "x64_enabled": bool(jax.config.x64_enabled),
                "explicit_x64_dtypes": _policy_name(
                    getattr(jax.config, "jax_explicit_x64_dtypes", None)
                ),
                "notes": self.notes,
            },
            "flags": self.flags(),
        }

    def flags(self) -> list[FlagInfo]:
        """Every option of JAX's config: name, default, value in effect, whether JAX marks it an upgrade, help.

        JAX marks an upgrade (`bool_state(..., upgrade=True)`: True is the incoming behaviour) only by
        appending a fixed sentence, `UPGRADE_BOOL_HELP`, to the help text; that sentence is cut off
        here. The default is the value JAX took at import when its variable was not set; when it was
        (the mode set it), the default is not known in this process and is reported as None; for
        the options start() set (the shared compilation cache), it is the value they had before.
        """
        self.namespace()
        try:
            from jax._src import config as jax_config
        except ImportError:
            return []
        holders = _config_holders()
        meta = getattr(jax_config.config, "meta", {})
        upgrade_text = str(getattr(jax_config, "UPGRADE_BOOL_HELP", "") or "")
        table: list[FlagInfo] = []
        for name in sorted(holders):
            holder = holders[name]
            try:
                value = _flag_json(holder.value)
            except Exception as exc:  # a holder that cannot be read here (a lazily checked option)
                value = f"<unreadable: {type(exc).__name__}>"
            help_text = (
                str((meta.get(name, (None, [], {}))[2] or {}).get("help", ""))
                if name in meta
                else ""
            )
            upgrade = bool(upgrade_text) and upgrade_text in help_text
            if upgrade_text:
                help_text = help_text.replace(upgrade_text, "")
            set_by_env = name.upper() in os.environ
            default = _flag_json(self._set_here[name]) if name in self._set_here else value
            table.append(
                {
                    "name": name,
                    "default": None if set_by_env else default,
                    "value": value,
                    "upgrade": upgrade,
                    "help": " ".join(help_text.split())[:300],
                }
            )
        return table

    def backend(self, name: str) -> contextlib.AbstractContextManager[Any]:
        jax = self.namespace()["jax"]
        return jax.default_device(jax.devices(name)[0])

    def dtype_name(self, dtype: Any) -> str:
        jax = self.namespace()["jax"]
        import numpy as np

        if dtype == jax.dtypes.float0:
            return "float0"
        return str(np.dtype(dtype).name)

    def global_state(self) -> dict[str, Any]:
        """Every JAX config option: a case that changes one in-process leaks it into later cases."""
        jax = self.namespace()["jax"]
        state: dict[str, Any] = {"jax_enable_x64": bool(jax.config.x64_enabled)}
        for name, value in getattr(jax.config, "values", {}).items():
            state[name] = repr(value)
        return state


# 4 GiB: a 4-mode run of the whole suite writes about 8 MB (1,638 programs)
COMPILE_CACHE_LIMIT = 4 << 30


def compile_cache_options(cache_dir: str) -> dict[str, Any]:
    """The JAX options that share compiled programs through `cache_dir`, every program cached.

    A size limit turns on JAX's lock around each read and write of the cache (its LRU cache locks
    only when it may evict): without it a mode can read an entry another mode is still writing,
    and JAX warns "Error reading persistent compilation cache entry ... truncated stream" into
    that case (seen once in a 4-mode run, a false failure). The limit is far above a run's size."""
    return {
        "jax_compilation_cache_dir": cache_dir,
        "jax_persistent_cache_min_compile_time_secs": 0.0,
        "jax_persistent_cache_min_entry_size_bytes": -1,
        "jax_compilation_cache_max_size": COMPILE_CACHE_LIMIT,
    }


def _config_holders() -> dict[str, Any]:
    """JAX's config options by name (empty for a release without `jax._src.config`)."""
    try:
        from jax._src import config as jax_config
    except ImportError:
        return {}
    return dict(getattr(jax_config.config, "_value_holders", {}))


def _flag_json(value: Any) -> Any:
    """A config value as JSON: booleans, numbers and strings as they are, an enum by its lower-case name."""
    import enum

    if isinstance(value, enum.Enum):
        return str(value.name).lower()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def _device_kinds(devices: list[Any]) -> dict[str, dict[str, object]]:
    """Per backend, the kind of its devices (`cpu`, `NVIDIA H200`; several joined) and their count."""
    kinds: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for d in devices:
        kinds.setdefault(d.platform, set()).add(str(getattr(d, "device_kind", d.platform)))
        counts[d.platform] = counts.get(d.platform, 0) + 1
    return {p: {"kind": ", ".join(sorted(k)), "count": counts[p]} for p, k in kinds.items()}


def _plugins() -> dict[str, str]:
    """The installed JAX plugins (CUDA, ROCm, TPU, Metal: the distributions with a `jax_plugins`
    entry point), each with its version: part of the build a run judged."""
    import importlib.metadata as md

    return {
        ep.dist.name: ep.dist.version
        for ep in md.entry_points(group="jax_plugins")
        if ep.dist is not None
    }


def _policy_name(value: Any) -> str:
    """`warn`/`error`/`allow` from JAX's ExplicitX64Mode enum; `unsupported` before 0.8.0."""
    if value is None:
        return "unsupported"
    return str(getattr(value, "name", value)).lower()
