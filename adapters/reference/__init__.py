"""The `reference` adapter: a strict, JAX-free model of the documented semantics (work in progress)."""

from __future__ import annotations

from typing import Any

from conformance.adapter import Adapter
from conformance.mode import Mode


class ReferenceAdapter(Adapter):
    name = "reference"

    def start(self, mode: Mode) -> None:
        raise NotImplementedError("the reference implementation is not built yet")

    def namespace(self) -> dict[str, Any]:
        raise NotImplementedError("the reference implementation is not built yet")

    def info(self) -> dict[str, Any]:
        raise NotImplementedError("the reference implementation is not built yet")
