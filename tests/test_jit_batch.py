"""A table's jit paths share one trace (conformance/worker/jit_batch.py) and each cell is still
judged on its own: its result, its warnings, a path that differs from eager named for it alone; a
cell whose trace raises runs alone, and so does one the batch as a whole cannot take (its argument
is not a jit argument), found by halving the batch. Real JAX, real pytest."""

from __future__ import annotations

import json

from tests.conftest import SpecDir, read_results

SPEC = """
topic: demo.jit
title: a table on the jit paths
source: {doc: docs/demo.md}
basis: documented
setup: |
  import warnings
  def add(a, b):
      if a.dtype == jnp.int8:  # eagerly and while tracing: the cell's own warning
          warnings.warn("int8 seen")
      if isinstance(a, jax.core.Tracer) and a.dtype == jnp.int16:
          return (a + b).astype(jnp.float32)  # a jit path that differs from eager, in one cell
      return a + b
cases:
  - id: demo.jit.add
    claim: add(a, b) is the same eagerly, under jit and from the jit cache
    table: add.cells.json
    run: add(a, b)
    paths: [eager, jit, jit-warm]
    jit_args: [a, b]
"""


def _cell(cid: str, bind: str, **expect: object) -> dict[str, object]:
    return {"id": cid, "bind": bind, "expect": [expect]}


CELLS = {
    "generated_by": "tests/test_jit_batch.py",
    "cells": [
        # a str is no jit argument: the whole batch raises, halves find the cell, it runs alone
        _cell("str", "a = jnp.ones((2,), 'int32'); b = 'x'", raises={"type": "TypeError"}),
        _cell("i32|f*", "a = jnp.ones((2,), 'int32'); b = 1.0", dtype="float32", warns="none"),
        _cell("f32|i*", "a = jnp.ones((2,), 'float32'); b = 1", dtype="float32", warns="none"),
        _cell(
            "i8|i8",
            "a = jnp.ones((2,), 'int8'); b = jnp.ones((2,), 'int8')",
            dtype="int8",
            warns={"category": "UserWarning", "match": "int8 seen"},
        ),
        _cell("i16|i16", "a = jnp.ones((2,), 'int16'); b = jnp.ones((2,), 'int16')", dtype="int16"),
        # its trace raises (shapes): alone, so the warm call traces and raises again as it would
        _cell(
            "shapes",
            "a = jnp.ones((2,), 'int32'); b = jnp.ones((3,), 'int32')",
            raises={"type": "TypeError", "match": "incompatible shapes"},
        ),
    ],
}


def test_cells_share_a_trace_and_keep_their_own_verdicts(specdir: SpecDir, tmp_path) -> None:
    specdir.write("demo.yaml", SPEC)
    specdir.write("add.cells.json", json.dumps(CELLS))
    out = tmp_path / "r.jsonl"
    result = specdir.run("--x64=off", f"--results={out}")
    records = {r["case"]: r for r in read_results(out) if r["record"] == "case"}
    outcomes = {c: r["outcome"] for c, r in records.items()}
    assert outcomes == {
        "demo.jit.add[str]": "passed",
        "demo.jit.add[i32|f*]": "passed",
        "demo.jit.add[f32|i*]": "passed",
        # its trace's warning is its own (the cells beside it, `warns: none`, passed), on the jit
        # path; from the cache nothing traces, so nothing warns: the warm path differs, as alone
        "demo.jit.add[i8|i8]": "failed",
        "demo.jit.add[i16|i16]": "failed",
        "demo.jit.add[shapes]": "passed",
    }, result.stdout.str()
    # The failing cell is named with the path that differs, expected and actual.
    result.stdout.fnmatch_lines(
        [
            "*demo.jit.add[[]i8|i8[]] FAILED*",
            "path jit-warm differs from eager: warnings=[[][]] on path jit-warm, "
            "[[]('UserWarning', 'int8 seen')[]] eagerly",
            "*demo.jit.add[[]i16|i16[]] FAILED*",
            "path jit differs from eager: dtype='float32' on path jit, 'int16' eagerly",
        ]
    )
    assert records["demo.jit.add[i16|i16]"]["actual"]["jit"]["dtype"] == "float32"
    # Six cells: the batch raised (the str), so halves: [str, i32|f*, f32|i*] raised again, so
    # [str] alone and [i32|f*, f32|i*] a trace of two; [i8|i8, i16|i16, shapes] a trace of three,
    # in which `shapes` raised: it ran alone.
    traces = {c.split("[", 1)[1][:-1]: r.get("jit_trace") for c, r in records.items()}
    assert traces == {
        "str": None,
        "i32|f*": 2,
        "f32|i*": 2,
        "i8|i8": 3,
        "i16|i16": 3,
        "shapes": None,
    }
