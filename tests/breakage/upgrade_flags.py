"""Breakage adapters for the flag blocks of the specs: real JAX that ignores one flag the mode sets.

Each class is the real `jax` adapter, started in the mode's environment (so JAX reads
`JAX_<NAME>` at import as usual), which then turns one flag back to False with
`jax.config.update` before any spec code runs, while its flag table still reports the mode's
value. The harness therefore chooses the spec blocks written for the flag, and JAX behaves as
without it: every such block must fail. `tests/test_breakage_flags.py` runs them.

jax_custom_vjp3 is read when `jax.custom_vjp(...)` is created (measured on 0.10.2, see
docs/research/upcoming-flags.md), and spec setups run after the adapter's namespace is built,
so turning it off there reaches every custom_vjp of a case. If the update does not take (the
flag is gone, or JAX stops honouring it after import), `namespace` raises, so the adapter fails
to start rather than silently proving nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar

from jax_conformance.adapters.jax import JaxAdapter


class IgnoresFlag(JaxAdapter):
    """Real JAX with `flag` turned off after import, reported as the mode set it."""

    flag: ClassVar[str] = ""
    claim: ClassVar[str] = ""

    def __init__(self) -> None:
        super().__init__()
        self._ignored = False

    def namespace(self) -> dict[str, Any]:
        ns = super().namespace()
        if not self._ignored:
            self._ignored = True
            jax = ns["jax"]
            jax.config.update(self.flag, False)
            if getattr(jax.config, self.flag) is not False:
                raise RuntimeError(
                    f"breakage {type(self).__name__}: {self.flag} could not be turned off"
                )
            self.notes.append(f"breakage {type(self).__name__}: {self.claim}")
        return ns

    def flags(self) -> list[dict[str, Any]]:
        """JAX's flag table, with the ignored flag's value as the mode's environment asked for."""
        import os

        table = super().flags()
        asked = os.environ.get(self.flag.upper())
        if asked is not None:
            for row in table:
                if row["name"] == self.flag:
                    row["value"] = asked.strip().lower() in ("1", "y", "yes", "t", "true", "on")
        return table


class IgnoresCustomVjp3(IgnoresFlag):
    flag = "jax_custom_vjp3"
    claim = (
        "the jax_custom_vjp3 blocks describe JAX with the flag on: with it silently off they fail"
    )


class IgnoresRemat3(IgnoresFlag):
    flag = "jax_remat3"
    claim = (
        "the jax_custom_vjp3 + jax_remat3 blocks need remat3: with jax_custom_vjp3 alone they fail"
    )


class IgnoresDisableBwdChecks(IgnoresFlag):
    flag = "jax_disable_bwd_checks"
    claim = "the jax_disable_bwd_checks blocks describe JAX without its bwd checks: with the checks on they fail"


ALL = (IgnoresCustomVjp3, IgnoresRemat3, IgnoresDisableBwdChecks)
