"""`jax-conformance diff`: it finds a planted difference and shrinks it; the grammar and the
observation normalisation behave (seeded, distinct programs, tolerant values, strict dtypes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.client.caserunner import CaseRunner
from jax_conformance.differential import observe as diffobs
from jax_conformance.differential.engine import Side, generate, reproduction
from jax_conformance.differential.grammar import AREAS
from jax_conformance.mode import Mode
from jax_conformance.records import load_runs, read_diff

ROOT = Path(__file__).resolve().parent.parent
PLANT = "tests.breakage.diff_plant:PlantedReference"


def test_diff_finds_and_shrinks_the_planted_difference(tmp_path: Path) -> None:
    out = tmp_path / "diff.jsonl"
    # ROOT for the planted adapter, before the package path a checkout may already give
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "diff",
            "--adapters",
            f"reference,{PLANT}",
            "--modes",
            "off-warn",
            "--areas",
            "creation",
            "--budget",
            "40",
            "--seed",
            "0",
            "--shrink",
            "1",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a disagreement was found
    records: list[Any] = list(read_diff(out))  # through the record layer
    assert load_runs([out]) == []  # a run's readers skip diff's kinds
    runs = [r for r in records if r["record"] == "diff_program"]
    assert len(runs) == 40
    differing = [r for r in runs if r["verdict"] == "differ"]
    assert differing and all("jnp.arange(" in r["program"] for r in differing)
    assert all(r["verdict"] == "agree" for r in runs if "jnp.arange(" not in r["program"])
    [difference] = [r for r in records if r["record"] == "diff_class"]
    assert difference["class"] == "creation: value (returns | returns)"
    assert difference["shrunk"] and difference["program"] == "result = jnp.arange(3)"
    assert difference["a"]["result"]["value"] == [0, 1, 2] and difference["b"]["result"][
        "value"
    ] == [1, 2, 3]
    assert difference["reproduce"].endswith("--modes off-warn --program $'result = jnp.arange(3)'")
    summary = records[-1]
    assert summary["record"] == "diff_summary" and summary["modes"]["off-warn"]["all"][
        "differ"
    ] == len(differing)
    # the printed summary: the table, the minimal program, both observations, the reproduction
    assert "creation" in proc.stdout and "result = jnp.arange(3)" in proc.stdout
    assert (
        "array int32[3] = [1, 2, 3]" in proc.stdout
        and "reproduce: jax-conformance diff" in proc.stdout
    )


def test_programs_are_seeded_distinct_and_compile() -> None:
    first = generate(3, 30, None)
    assert [p.text for p, _ in first] == [p.text for p, _ in generate(3, 30, None)]
    assert len({p.text for p, _ in first}) == 30
    assert {p.area for p, _ in first} <= set(AREAS)
    for p, _ in first:
        compile(p.text, "<diff program>", "exec")
        assert "result =" in p.text


def _arr(dtype: str, value: object, weak: bool = False, shape: list[int] | None = None) -> dict:
    return {
        "result": {
            "kind": "array",
            "dtype": dtype,
            "shape": shape or [],
            "weak": weak,
            "value": value,
        },
        "warnings": [],
    }


def test_compare_normalised_observations() -> None:
    assert diffobs.compare(_arr("float32", 1.0), _arr("float32", 1.0 + 1e-7)) == []
    assert diffobs.compare(_arr("float32", 1.0), _arr("float32", 1.001)) == ["value"]
    assert diffobs.compare(_arr("bfloat16", 1.0), _arr("bfloat16", 1.0078125)) == []
    assert diffobs.compare(_arr("float32", 1.0), _arr("float64", 1.0)) == ["dtype"]
    assert diffobs.compare(_arr("int32", 1, weak=True), _arr("int32", 1)) == ["weak_type"]
    assert diffobs.compare(_arr("float32", "nan"), _arr("float32", "nan")) == []
    assert diffobs.compare(_arr("int32", [1], shape=[1]), _arr("int32", 1)) == ["shape"]
    warned = {**_arr("int32", 1), "warnings": [{"category": "UserWarning", "message": "x"}]}
    assert diffobs.compare(warned, _arr("int32", 1)) == ["warnings"]
    raised = {"raised": {"type": "TypeError", "message": "m"}, "warnings": []}
    assert (
        diffobs.compare(
            raised, {"raised": {"type": "TypeError", "message": "other words"}, "warnings": []}
        )
        == []
    )
    assert diffobs.compare(
        raised, {"raised": {"type": "ValueError", "message": "m"}, "warnings": []}
    ) == ["raised"]
    assert diffobs.compare(raised, _arr("int32", 1)) == ["raised"]
    pair = {"result": {"tuple": [_arr("float32", 1.0)["result"]] * 2}, "warnings": []}
    assert diffobs.compare(
        pair, {"result": {"list": [_arr("float32", 1.0)["result"]] * 2}, "warnings": []}
    ) == ["structure"]
    gone = {
        "raised": {
            "type": "AttributeError",
            "message": "module 'jax.numpy' has no attribute 'iinfo'",
        },
        "warnings": [],
    }
    assert diffobs.missing(gone) and not diffobs.missing(raised)
    assert (
        diffobs.signature("creation", raised, warned, ["raised", "warnings"])
        == "creation: raised/warnings (raises TypeError | returns +UserWarning)"
    )


def test_observe_runs_a_program_in_process() -> None:
    import numpy as np

    obs = diffobs.observe(
        "import warnings\nwarnings.warn('w')\nresult = (np.float32(2.5), 3, None, np.dtype('int8'))",
        {"np": np},
    )
    assert obs["warnings"] == [{"category": "UserWarning", "message": "w"}]
    numpy_leaf, py, none, dtype = obs["result"]["tuple"]
    assert numpy_leaf == {"kind": "numpy", "dtype": "float32", "shape": [], "value": 2.5}
    assert py == {"kind": "python", "type": "int", "value": 3} and none == {"kind": "none"}
    assert dtype == {"kind": "dtype", "dtype": "int8"}
    raised = diffobs.observe("result = 1 // 0", {})
    assert raised["raised"]["type"] == "ZeroDivisionError" and "result" not in raised


def test_the_worker_observes_a_program_and_survives_one_that_ends_it() -> None:
    """The protocol's `observe` request: the reply carries the observation; a program that ends the
    interpreter (SystemExit) or the process (os._exit) is observed as crashed and the worker replaced."""
    runner = CaseRunner("reference", Mode(False, "warn"), default_timeout=60)
    try:
        seen = runner.observe("result = jnp.arange(3)", "cpu")
        assert seen["result"] == {
            "kind": "array",
            "dtype": "int32",
            "shape": [3],
            "weak": False,
            "value": [0, 1, 2],
        }
        exited = runner.observe("raise SystemExit(2)", "cpu")
        assert exited["crashed"] == "crashed" and "raised SystemExit" in exited["message"]
        killed = runner.observe("import os\nos._exit(3)", "cpu")
        assert killed == {
            "crashed": "crashed",
            "message": "the worker process exited with status 3",
        }
        assert runner.observe("result = 1", "cpu")["result"] == {
            "kind": "python",
            "type": "int",
            "value": 1,
        }
        assert runner.restarts == 2
    finally:
        runner.close()


def test_reproduction_is_one_shell_line() -> None:
    line = reproduction(
        [Side("jax", "cpu", "jax"), Side("reference", "cpu", "reference")],
        Mode(True, "warn"),
        "x = 'a'\nresult = x",
    )
    assert "\n" not in line
    assert (
        line
        == "jax-conformance diff --adapters jax,reference --modes on --program $'x = \\'a\\'\\nresult = x'"
    )
    out = subprocess.run(
        ["bash", "-c", f"printf %s {line.split('--program ', 1)[1]}"],
        capture_output=True,
        text=True,
    )
    assert out.stdout == "x = 'a'\nresult = x"


@pytest.mark.parametrize(
    "argv",
    [
        ["--adapters", "jax"],
        ["--adapters", "jax,reference", "--backends", "cpu,gpu"],
        ["--modes", "sideways"],
        ["--areas", "nowhere"],
        ["--budget", "0"],
    ],
)
def test_usage_errors_are_one_line(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "diff", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        proc.returncode == 2
        and proc.stderr.count("\n") == 1
        and proc.stderr.startswith("jax-conformance diff")
    )


def test_backends_of_one_adapter(tmp_path: Path) -> None:
    run = [
        sys.executable,
        "-m",
        "jax_conformance.cli",
        "diff",
        "--adapters",
        "reference",
        "--modes",
        "off-warn",
        "--budget",
        "12",
        "--quiet",
        "--out",
        str(tmp_path / "b.jsonl"),
    ]
    same = subprocess.run(
        [*run, "--backends", "cpu,cpu"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert same.returncode == 0, same.stdout + same.stderr  # one implementation agrees with itself
    assert "reference@cpu vs reference@cpu" in same.stdout and "100.0% (12/12)" in same.stdout
    gone = subprocess.run(
        [*run, "--backends", "cpu,gpu"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert (
        gone.returncode == 2
        and "has no backend 'gpu'" in gone.stderr
        and gone.stderr.count("\n") == 1
    )


def test_agreement_cell_never_rounds_a_difference_up_to_100_percent() -> None:
    """9999 of 10000 programs agreeing is 99.9% (one differs), never 100.0%: `text.percent`."""
    from jax_conformance.differential.engine import Stats

    stats = Stats()
    for verdict in ["agree"] * 9999 + ["differ"] + ["n/a"]:
        stats.add(verdict)
    assert stats.cell() == "99.9% (9999/10000)"
    assert Stats().cell() == "-"
