"""The pytest fixture `jax_contract`: a library's own test checks its rule in every mode.

    def test_clipped_sqrt(jax_contract):
        jax_contract.check(clipped_sqrt, jnp.array([0.5, 2.0]))

Each mode runs in its own process (the test session's own JAX mode does not matter); a broken item
fails the test with the contract's failure lines, one per item, mode and transform. The modes are
the four x64 modes, or `modes=` of `check`, or the environment's JAX_CONTRACT_MODES (as `--modes`
of `jax-conformance check`: `off-warn,on`, `off-warn,+upcoming`). Registered through its own
`pytest11` entry point (`jax_contract`), so installing this project is all a library needs, and a
pytest session that does not use it need not import the contract engine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pytest
from jax_conformance.contract.engine import (
    ContractResult,
    Target,
    contract_modes,
    run_contract,
    target_of,
)
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode


class JaxContract:
    """What the fixture gives a test: `check` fails the test when an item does not hold."""

    def __init__(self, rootdir: str):
        self.rootdir = rootdir
        self.last: ContractResult | None = None

    def modes(self, modes: Sequence[str] | None) -> list[Mode]:
        if modes is None and os.environ.get("JAX_CONTRACT_MODES"):
            modes = [os.environ["JAX_CONTRACT_MODES"]]
        return contract_modes(list(modes) if modes is not None else None)

    def run(
        self,
        fn: object,  # a module-level function, or "MODULE:FUNCTION"
        *args: object,
        kwargs: Mapping[str, object] | None = None,
        nondiff: Sequence[int] = (),
        modes: Sequence[str] | None = None,
        skip: Sequence[str] = (),
    ) -> ContractResult:
        """The result, whatever it is (the test decides)."""
        try:
            target = Target(
                target_of(fn), tuple(args), dict(kwargs or {}), tuple(nondiff), skip=tuple(skip)
            )
            self.last = run_contract(
                [target], self.modes(modes), pythonpath=[self.rootdir, os.getcwd()]
            )
        except UsageError as exc:
            pytest.fail(f"jax_contract: {exc}", pytrace=False)
        return self.last

    def check(
        self,
        fn: object,  # a module-level function, or "MODULE:FUNCTION"
        *args: object,
        kwargs: Mapping[str, object] | None = None,
        nondiff: Sequence[int] = (),
        modes: Sequence[str] | None = None,
        skip: Sequence[str] = (),
    ) -> ContractResult:
        """Every item holds in every mode, or the test fails with one line per failure and the table."""
        result = self.run(fn, *args, kwargs=kwargs, nondiff=nondiff, modes=modes, skip=skip)
        if not result.ok:
            pytest.fail("\n".join([*result.failure_lines(), "", result.table()]), pytrace=False)
        return result


@pytest.fixture
def jax_contract(request: pytest.FixtureRequest) -> JaxContract:
    """Check a custom_vjp / custom_jvp function against the contract in every mode (jax_conformance.contract)."""
    return JaxContract(str(request.config.rootpath))
