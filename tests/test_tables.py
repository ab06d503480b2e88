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


ORDER_CELLS = {
    "generated_by": "specs/none.py",
    "cells": [{"id": str(i), "bind": f"a = {i}", "expect": [{"dtype": "int64"}]} for i in range(4)],
}


def test_table_start_rotates_the_batch_and_keeps_each_record(specdir: SpecDir, tmp_path) -> None:
    """--table-start=1/2 (what `jax-conformance run` gives the second of two modes started
    together) runs a table's cells from its middle round to the cell before it: each cell sees how
    many cells of the batch ran before it in the worker."""
    specdir.write(
        "order.yaml",
        """
        topic: demo.order
        title: the order a table's cells run in
        source: {doc: docs/demo.md}
        basis: documented
        cases:
          - id: demo.order.seen
            claim: each cell counts the cells run before it
            table: order.cells.json
            run: |
              ran = sys.__dict__.setdefault("_demo_order", [])
              ran.append(a)
              result = np.int64(len(ran) - 1)
        """,
    )
    specdir.write("order.cells.json", json.dumps(ORDER_CELLS))
    positions = {}
    for start in ("0/1", "1/2", "3/4"):
        out = tmp_path / f"{start.replace('/', '-')}.jsonl"
        result = specdir.run(
            "--x64=on", f"--results={out}", f"--table-start={start}", adapter="reference"
        )
        assert result.ret == 0, result.stdout.str()
        cases = [r for r in read_results(out) if r["record"] == "case"]
        # records stay in the table's order, one per cell, whatever order the worker ran them in
        assert [r["case"] for r in cases] == [f"demo.order.seen[{i}]" for i in range(4)]
        positions[start] = [r["actual"]["value"] for r in cases]
    assert positions == {"0/1": [0, 1, 2, 3], "1/2": [2, 3, 0, 1], "3/4": [1, 2, 3, 0]}


def test_table_start_must_be_k_of_n(specdir: SpecDir) -> None:
    specdir.write("order.cells.json", json.dumps(ORDER_CELLS))
    result = specdir.run("--table-start=2/2", adapter="reference")
    assert result.ret == 4
    assert "'2/2': give K/N with 0 <= K < N, e.g. 1/2" in result.stderr.str()
