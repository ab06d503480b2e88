"""The JAX adapter, judged as of another release: what the radar runs in every release it probes.

A case whose expect blocks are gated by release (`<=0.4.30` and `>=0.5.3`, say) is not applicable,
and so not run, in the releases between the gates: the very releases the radar must observe. This
adapter is JAX's own (the release installed in the environment runs every case), but it reports
`behaviour_version` = $JAX_CONFORMANCE_AS_OF, the release the spec's `version:` gates are read
for (docs/RUNNER.md: the version the `when` blocks see). Every release of a search is judged
against the blocks of one release, the newest of the search; what each did (`actual`) is what
the search compares. `implementation_version` stays the release that ran.
"""

from __future__ import annotations

import os

from jax_conformance.adapters.jax import JaxAdapter
from jax_conformance.protocol import AS_OF_ENV
from jax_conformance.records import AdapterInfo


class JaxAsOf(JaxAdapter):
    name = "jax"  # its records are JAX's: the table and the report show them as jax

    def info(self) -> AdapterInfo:
        info = super().info()
        as_of = os.environ.get(AS_OF_ENV)
        if as_of:
            info["behaviour_version"] = as_of
            info["environment"] = {**info["environment"], "judged_as_of": as_of}
        return info
