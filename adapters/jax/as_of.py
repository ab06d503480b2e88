"""The JAX adapter as the radar runs it in every release it probes: each release is judged by the
spec blocks that apply to it, and a case with none there by those of another release.

A case whose expect blocks are gated by release (`<=0.4.30` and `>=0.5.3`, say) has no block, and
so would not run, in the releases between the gates: the very releases the radar must observe.
This adapter is JAX's own (the release installed in the environment runs every case, and its
`behaviour_version` is that release), and it names $JAX_CONFORMANCE_AS_OF, the newest release of
the search, as `environment.judged_as_of`: a case with no block for its release is judged by the
blocks for that one (the plugin's `Suite.select`). What each release did (`actual`) is what the
search compares; its outcome is the one its own blocks give (0.4.35's documented error of the time
passes in 0.4.35).
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
            info["environment"] = {**info["environment"], "judged_as_of": as_of}
        return info
