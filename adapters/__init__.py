"""Adapters, one per implementation under test (only this package imports JAX), and the interface
they implement: how the harness reaches an implementation under test.

An adapter runs inside the worker process (and the fork servers); the parent side only names it
(`installed_adapters`) and reads its `AdapterInfo` through the worker's `hello`.

Adapters are found through the `jax_conformance.adapters` entry-point group, so a third
party can add one without touching this repository. An adapter is only ever instantiated
in a worker process (see `jax_conformance.worker.loop`), after the mode's environment is set.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
from importlib.metadata import entry_points
from typing import Any, ClassVar

from jax_conformance.errors import AdapterError
from jax_conformance.mode import Mode
from jax_conformance.records import AdapterInfo

GROUP = "jax_conformance.adapters"


# The names spec code runs with (docs/SPEC-FORMAT.md, "Names spec code sees"); lint checks
# spec code against them without starting an implementation.
SPEC_NAMES: frozenset[str] = frozenset({"jax", "jnp", "np", "lax", "os", "sys"})

# A directory `jax-conformance run` gives all its mode processes (unset: none) for compiled programs
# that do not depend on the mode: an adapter may keep them there, so that a program compiled in one
# mode is not compiled again in the next (the jax adapter points JAX's persistent compilation
# cache at it). It must not change what any case observes.
COMPILE_CACHE_ENV = "JAX_CONFORMANCE_COMPILE_CACHE"


class Adapter(abc.ABC):
    """One implementation under test."""

    name: ClassVar[str]

    @abc.abstractmethod
    def start(self, mode: Mode) -> None:
        """Start the implementation in this mode (its environment variables are already set).

        Raise AdapterStartError when it did not start in the mode.
        """

    @abc.abstractmethod
    def namespace(self) -> dict[str, Any]:
        """The names spec code runs with: at least `jax`, `jnp` and `np`."""

    @abc.abstractmethod
    def info(self) -> AdapterInfo:
        """adapter, implementation_version, behaviour_version (compared with `when.version`), backends, environment.

        `behaviour_version` may be left out: it then defaults to `implementation_version`
        (`jax_conformance.records.adapter_info`).
        """

    # Variables (by prefix) that the implementation reads when it is imported, after every module
    # in `fork_preload()[0]`: a light fork server may serve a case that sets them (see
    # jax_conformance.worker.forkserver).
    late_env_prefixes: ClassVar[tuple[str, ...]] = ()

    def fork_preload(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(free, full) modules for the fork servers of isolated cases (see jax_conformance.worker.forkserver).

        `free`: modules whose import reads none of the variables in `late_env_prefixes`, shared by
        every isolated case. `full`: the implementation itself, shared only by cases whose
        environment is the mode's. Default: nothing, so every isolated case starts from scratch
        apart from the harness's own modules. An adapter that acts before the implementation is
        imported (in `namespace()`, say, on the environment) must not name it in `full`: the
        server would import it without that step.
        """
        return (), ()

    def backend(self, name: str) -> contextlib.AbstractContextManager[Any]:
        """A context in which computations run on this backend."""
        return contextlib.nullcontext()

    def dtype_name(self, dtype: Any) -> str:
        """The name a spec uses for this dtype."""
        import numpy as np

        return str(np.dtype(dtype).name)

    def global_state(self) -> dict[str, Any]:
        """Process-wide settings a case must not change (compared before and after each case)."""
        return {}

    def resolve(self, dotted: str) -> Any:
        """An object by dotted name: builtins first, then the namespace, then an import."""
        import builtins

        head, _, rest = dotted.partition(".")
        if not rest and hasattr(builtins, head):
            return getattr(builtins, head)
        ns = self.namespace()
        if head in ns:
            obj = ns[head]
            for part in rest.split(".") if rest else []:
                obj = getattr(obj, part)
            return obj
        module, _, attr = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attr)


def installed_adapters() -> dict[str, str]:
    """name -> 'module:Class' for every adapter registered in the environment."""
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def load_adapter(name: str) -> Adapter:
    """Instantiate the named adapter (or a 'module:Class' reference)."""
    target = installed_adapters().get(name, name if ":" in name else None)
    if target is None:
        raise AdapterError(
            f"unknown adapter {name!r}; installed: {', '.join(sorted(installed_adapters())) or 'none'}"
        )
    module, _, cls_name = target.partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    return cls()
