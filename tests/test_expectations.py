"""Expectations files (spec/expectations.py): an entry names its modes as runs name them."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_an_expectations_entry_names_modes_as_runs_name_them(tmp_path: Path) -> None:
    from jax_conformance.errors import ExpectationsError
    from jax_conformance.mode import Mode
    from jax_conformance.spec.expectations import ExpectationFile

    path = tmp_path / "jax.yaml"
    path.write_text(
        "adapter: jax\nentries:\n  - reason: r\n    cases: [{case: a.b, modes: ['on', off-error]}]\n",
        encoding="utf-8",
    )
    [entry] = ExpectationFile.load(path).entries
    assert entry.matches("a.b", Mode(True, "warn"), "cpu") and entry.matches(
        "a.b", Mode(False, "error"), "cpu"
    )
    assert not entry.matches("a.b", Mode(False, "warn"), "cpu")
    for old in (
        "sideways",
        "on-warn",
        "off/error",
    ):  # the names `on` and `off-error` had before 0.1.0 are gone
        path.write_text(
            f"adapter: jax\nentries:\n  - reason: r\n    cases: [{{case: a.b, modes: [{old}]}}]\n",
            encoding="utf-8",
        )
        with pytest.raises(ExpectationsError, match=f"{old}.*off-warn"):
            ExpectationFile.load(path)
