"""`jax-conformance run` (commands/run.py): what its console says when the modes select different
cases, and its counts when some files are spec errors. Real CLI runs of the reference adapter on
a small spec directory."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from tests.conftest import read_results
from tests.test_run_dirs import run


def test_a_run_over_modes_whose_selections_differ_says_so() -> None:
    from jax_conformance.commands.run import selection_note

    assert selection_note({("reference", "off-warn"): 4, ("reference", "on"): 4}) == ""
    note = selection_note({("reference", "off-warn"): 4, ("reference", "off-error"): 7})
    assert (
        "selected different cases in different modes" in note
        and "off-warn 4" in note
        and "off-error 7" in note
    )


def test_run_console_counts_spec_errors_apart_and_never_overcounts(tmp_path: Path) -> None:
    specs = tmp_path / "specs" / "demo"
    specs.mkdir(parents=True)
    (specs / "good.yaml").write_text(
        textwrap.dedent("""
        topic: demo.good
        source: {doc: docs/default_dtypes.md}
        basis: documented
        cases:
          - id: demo.good.a
            claim: arange of ints is int32
            run: jnp.arange(3)
            expect:
              - dtype: int32
          - id: demo.good.typo
            claim: a typo in the spec's own code
            run: jnpp.arange(3)
            expect:
              - dtype: int32
    """).lstrip()
    )
    (specs / "broken.yaml").write_text("topic: demo.broken\nsource: {doc: x\ncases: []\n")
    proc = run("--modes", "off-warn", "--out", str(tmp_path / "out"), cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text  # CI notices
    for done, total in re.findall(r"\]\s+(\d+)/(\d+)", text):
        assert int(done) <= int(total), text  # never 3/2
    assert "None]" not in text, text
    assert re.search(r"2 spec errors, not counted", text), text
    results = [r for r in read_results(tmp_path / "out" / "results.jsonl") if r["record"] == "case"]
    assert sum(1 for r in results if r.get("spec_error")) == 2
    assert json.dumps(results)  # plain JSON
