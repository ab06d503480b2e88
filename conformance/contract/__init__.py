"""Your own custom_vjp / custom_jvp rules under JAX's contract, in every mode.

    from jax_conformance.contract import check, Expr
    result = check(clipped_sqrt, jnp.array([0.5, 2.0]))      # or check("mylib.ops:clipped_sqrt", Expr("..."))
    assert result.ok, "\\n".join(result.failure_lines())

The items (`ITEMS`, each with an id, a statement and the spec cases it comes from) are checked in
one process per mode (x64 off with warn / error / allow, x64 on; `modes=["off-warn", "+upcoming"]`
adds JAX's upgrade flags), two at a time; `jax-conformance check` and the pytest fixture
`jax_contract` use the same engine. `result.ok` counts every item; `result.contract_ok` leaves out
the numerics items' failures (finite differences: values JAX does not promise), as `check`'s exit
status does without --strict-numerics. Importing this package never imports JAX.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jax_conformance.contract.engine import (
    ContractResult,
    Failure,
    Outcome,
    Target,
    TargetResult,
    contract_modes,
    run_contract,
    target_of,
)
from jax_conformance.contract.items import BY_ID, ITEMS, Item
from jax_conformance.contract.wire import Expr
from jax_conformance.mode import Mode


def check(
    fn: object,  # a module-level function, or "MODULE:FUNCTION"
    *args: object,
    kwargs: Mapping[str, object] | None = None,
    nondiff: Sequence[int] = (),
    modes: Sequence[str | Mode] | None = None,
    skip: Sequence[str] = (),
    jobs: int = 2,
    timeout: float = 900,
) -> ContractResult:
    """Check one function (a module-level custom_vjp / custom_jvp function, or "MODULE:FUNCTION")
    with these example arguments in every mode; `Expr("...")` arguments are evaluated in each mode."""
    target = Target(
        target_of(fn), tuple(args), dict(kwargs or {}), tuple(nondiff), skip=tuple(skip)
    )
    return run_contract([target], _modes(modes), jobs=jobs, timeout=timeout)


def check_many(
    targets: Sequence[Target],
    modes: Sequence[str | Mode] | None = None,
    jobs: int = 2,
    timeout: float = 900,
) -> ContractResult:
    """Several targets, each mode's checks of all of them in one process."""
    return run_contract(list(targets), _modes(modes), jobs=jobs, timeout=timeout)


def _modes(modes: Sequence[str | Mode] | None) -> list[Mode]:
    if modes is None:
        return contract_modes(None)
    given = [m for m in modes if isinstance(m, Mode)]
    names = [m for m in modes if isinstance(m, str)]
    return given + (contract_modes(names) if names else [])


__all__ = [
    "BY_ID",
    "ITEMS",
    "ContractResult",
    "Expr",
    "Failure",
    "Item",
    "Mode",
    "Outcome",
    "Target",
    "TargetResult",
    "check",
    "check_many",
]
