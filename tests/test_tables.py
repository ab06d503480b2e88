"""Table cases (specs/promotion): a generated cells file becomes one item, record and line per cell,
the cells of a table run in one batch, a wrong cell fails alone with its id, and a cell no block of
which applies is not applicable."""

from __future__ import annotations

import json

from tests.conftest import SpecDir, read_results

SPEC = """
topic: demo.table
title: a table
source: {doc: docs/demo.md}
basis: documented
cases:
  - id: demo.table.sum
    claim: a + b as int32
    table: sum.cells.json
    run: np.int32(a + b)
"""

CELLS = {
    "generated_by": "specs/none.py",
    "cells": [
        {"id": "1|2", "bind": "a = 1; b = 2", "expect": [{"dtype": "int32", "value": 3}]},
        {"id": "2|2", "bind": "a = 2; b = 2", "expect": [{"dtype": "int32", "value": 5}]},
        {
            "id": "on-only",
            "bind": "a = 0; b = 0",
            "expect": [{"when": {"x64": True}, "dtype": "int32"}],
        },
    ],
}


def test_each_cell_is_its_own_item_and_record(specdir: SpecDir, tmp_path) -> None:
    specdir.write("demo.yaml", SPEC)
    specdir.write("sum.cells.json", json.dumps(CELLS))
    out = tmp_path / "r.jsonl"
    result = specdir.run("--x64=off", f"--results={out}", adapter="reference")
    result.stdout.fnmatch_lines(["*demo.table.sum[[]2|2[]] FAILED*", "*result=4, but should be 5*"])
    outcomes = {r["case"]: r["outcome"] for r in read_results(out) if r["record"] == "case"}
    assert outcomes == {
        "demo.table.sum[1|2]": "passed",
        "demo.table.sum[2|2]": "failed",
        "demo.table.sum[on-only]": "not_applicable",
    }


def test_the_add_table_leaves_out_only_the_dtypes_it_gives_a_reason_for() -> None:
    """specs/promotion/add.cells.json has every ordered pair of the promote_types table's nodes
    except those of the extra dtypes generate.py's NO_OPERANDS names, each with its reason: no dtype
    leaves the `+` table silently."""
    import importlib.util
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "specs" / "promotion"
    spec = importlib.util.spec_from_file_location("promotion_generate", here / "generate.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)

    def ids(name: str) -> set[str]:
        return {c["id"] for c in json.loads((here / name).read_text())["cells"]}

    left_out = set(gen.NO_OPERANDS)
    assert left_out <= set(gen.NODES) and all(str(r).strip() for r in gen.NO_OPERANDS.values())
    kept = [n for n in gen.NODES if n not in left_out]
    assert ids("add.cells.json") == {f"{a}|{b}" for a in kept for b in kept}
    assert ids("promote_types.cells.json") == {f"{a}|{b}" for a in gen.NODES for b in gen.NODES}
    extras = set(kept) - set(gen.P.DOC_ORDER)
    assert extras, "the + table has no dtype beyond the documented 18"
