"""Self-describing results, merged: each results file starts with its run description; `report` and
`merge` over several runs count each cell once, refuse runs that measured a cell with other specs,
and name every input; `--shard I/N` splits a run so that its N shards merge into the unsharded run.

Real runs of the CLI (`python -m jax_conformance.cli run`), the reference adapter where the adapter
does not matter (it starts in a second), JAX where the description's build is the point.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jax_conformance.merging import merge_runs
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.records import ResultRecord, Run, load_runs
from jax_conformance.report.model import build_model
from jax_conformance.report.site import Headline, headlines
from jax_conformance.shard import parse_shard, shard_of
from jax_conformance.spec.loader import spec_revision
from jax_conformance.text import percent

from tests.helpers import cli, demo_spec, write_specs

REPO = PACKAGE_DIR.parent

SPEC = demo_spec(
    "demo.merge",
    "Cases for the merge tests",
    """
  - id: demo.merge.wrong
    claim: a deliberately wrong claim, so that each mode has a failure to count
    run: jnp.zeros(2)
    expect:
      - dtype: int8
  - id: demo.merge.off-only
    claim: a claim about x64 off only
    run: jnp.zeros(2)
    expect:
      - when: {x64: false}
        dtype: float32
""",
)


def write_spec(root: Path, text: str = SPEC) -> Path:
    return write_specs(root, text, file="merge.yaml")


def run(out: Path, specs: Path, modes: str, *extra: str, adapter: str = "reference") -> Path:
    proc = cli(
        "run",
        "--adapter",
        adapter,
        "--specs",
        str(specs),
        "--modes",
        modes,
        "--out",
        str(out),
        "--no-report",
        "-j",
        "2",
        *extra,
    )
    assert (out / "results.jsonl").is_file(), proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two runs that share a mode (off-warn), as two machines or two sessions would write them."""
    root = tmp_path_factory.mktemp("two")
    specs = write_spec(root)
    a = run(root / "A", specs, "off-warn,on")
    b = run(root / "B", specs, "off-warn,off-error")
    return specs, a, b


def cells(runs: list[Run]) -> dict[tuple[str, str, str], ResultRecord]:
    """(mode, backend, case) -> its record, over runs of one adapter and release; a cell twice fails."""
    out: dict[tuple[str, str, str], ResultRecord] = {}
    for r in runs:
        for record in r.cases:
            key = (str(r.header["mode"]), str(record["backend"]), record["case"])
            assert key not in out, f"{key} twice"
            out[key] = record
    return out


# ---------------------------------------------------------------- counting (issue 38, item 6)


def test_report_over_two_runs_sharing_a_mode_counts_each_cell_once(
    two_runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, a, b = two_runs
    proc = cli("report", str(a), str(b), "--out", str(tmp_path / "site"))
    assert proc.returncode == 0, proc.stderr
    [shared] = headlines(build_model([a, b]))
    # the same cells without the duplicate: A whole, and B's mode that A lacks
    [apart] = headlines(build_model([a, b / "modes" / "reference-off-error.jsonl"]))
    assert (shared.conform, shared.applicable, shared.unexpected, shared.runs) == (
        apart.conform,
        apart.applicable,
        apart.unexpected,
        apart.runs,
    )
    assert shared.runs == 3 and shared.modes == ["off-warn", "off-error", "on"]
    page = (tmp_path / "site" / "index.html").read_text()
    assert "all 3 runs complete" in page
    # every input named, as given: two directories, not the 6 files under them
    assert re.search(
        r"from 2 inputs \(<span class=\"inputs\"><code>[^<]*A</code>, <code>[^<]*B</code>", page
    )


def test_the_same_directory_given_twice_counts_once(two_runs: tuple[Path, Path, Path]) -> None:
    _, a, _ = two_runs
    [once] = headlines(build_model([a]))
    [twice] = headlines(build_model([a, a / "modes", a / "results.jsonl"]))
    assert (twice.conform, twice.applicable, twice.runs) == (
        once.conform,
        once.applicable,
        once.runs,
    )


# ---------------------------------------------------------------- the run description


def test_each_results_file_starts_with_its_run_description(tmp_path: Path) -> None:
    specs = write_spec(tmp_path)
    out = run(tmp_path / "jax", specs, "off-warn", "-k", "arange", adapter="jax")
    first, header = (out / "modes" / "jax-off-warn.jsonl").read_text().splitlines()[:2]
    assert '"record":"description"' in first and '"record":"run"' in header
    [r] = load_runs([out / "results.jsonl"])
    d = r.description
    assert d is not None and d["run_id"] == r.header["run_id"]
    env = r.header["environment"]
    assert d["implementation_version"] == env["jax"] and d["build"]["jax"] == env["jax"]
    assert d["build"]["jaxlib"] == env["jaxlib"] and d["numpy"] == env["numpy"]
    assert d["python"] == env["python"] and d["host"]
    assert d["spec_revision"] == spec_revision([specs])
    assert d["backends"] == ["cpu"] and d["devices"]["cpu"]["count"] == len(env["devices"])
    assert d["devices"]["cpu"]["kind"] == "cpu"
    assert d["mode"] == r.header["mode"] and d["shard"] is None
    assert d["selection"] == {"keyword": "arange", "markexpr": None}
    assert r.end is not None and r.end["finished"] >= d["started"]


def test_the_spec_revision_is_of_the_specs_not_where_they_lie(tmp_path: Path) -> None:
    one, two = write_spec(tmp_path / "one"), write_spec(tmp_path / "two")
    assert spec_revision([one]) == spec_revision([two])
    (two / "demo" / "merge.yaml").write_text(SPEC.replace("each mode", "every mode"))
    assert spec_revision([one]) != spec_revision([two])
    before = spec_revision([one])
    (one / "demo" / "t.cells.json").write_text("[]")  # a table's cells are part of the specs
    assert spec_revision([one]) != before


# ---------------------------------------------------------------- conflicts


def test_a_cell_measured_with_other_specs_is_refused(
    two_runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, a, _ = two_runs
    changed = write_spec(tmp_path, SPEC.replace("each mode", "every mode"))
    c = run(tmp_path / "C", changed, "off-warn")
    for args in (
        ["report", str(a), str(c), "--out", str(tmp_path / "site")],
        ["merge", str(tmp_path / "m.jsonl"), str(a), str(c)],
    ):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        [line] = proc.stderr.splitlines()
        assert "conflicting results: demo.merge." in line and "[reference " in line, line
        assert str(a) in line and str(c) in line and "spec revision" in line, line
    assert not (tmp_path / "site").exists() and not (tmp_path / "m.jsonl").exists()
    # another mode of the changed specs shares no cell with A: it is shown beside, not refused
    d = run(tmp_path / "D", changed, "off-allow")
    assert cli("report", str(a), str(d), "--out", str(tmp_path / "ok")).returncode == 0


def test_merge_writes_each_configuration_once(
    two_runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, a, b = two_runs
    proc = cli("merge", str(tmp_path / "merged.jsonl"), str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert "merged 4 runs from 2 inputs into 3 runs" in proc.stdout
    merged = load_runs([tmp_path / "merged.jsonl"])
    assert len(merged) == 3 and all(r.description is not None for r in merged)
    [joined] = [r for r in merged if r.description and "merged_from" in r.description]
    assert {p["source"] for p in joined.description["merged_from"]} == {  # type: ignore[index]
        str(a / "modes" / "reference-off-warn.jsonl"),
        str(b / "modes" / "reference-off-warn.jsonl"),
    }
    assert cells(merged) == cells(merge_runs(load_runs([tmp_path / "merged.jsonl"])).runs)
    [from_file] = headlines(build_model([tmp_path / "merged.jsonl"]))
    [from_inputs] = headlines(build_model([a, b]))
    assert (from_file.conform, from_file.applicable, from_file.runs) == (
        from_inputs.conform,
        from_inputs.applicable,
        from_inputs.runs,
    )


# ---------------------------------------------------------------- shards


def test_a_case_is_in_the_same_shard_in_every_process() -> None:
    ids = [f"x64.defaults.case-{i}" for i in range(200)]
    code = "import sys; from jax_conformance.shard import shard_of; print([shard_of(l, 3) for l in sys.argv[1:]])"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code, *ids],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert seen == {f"{[shard_of(i, 3) for i in ids]}\n"}
    assert {shard_of(i, 3) for i in ids} == {1, 2, 3}


def test_three_shards_merge_into_the_unsharded_run(tmp_path: Path) -> None:
    """A few dozen real cases in one mode, with JAX: the shards are disjoint, and merged they are
    the unsharded run, cell for cell (outcome and message)."""
    select = ("-k", "x64.defaults or x64.explicit")
    whole = run(tmp_path / "whole", REPO / "specs" / "x64", "off-warn", *select, adapter="jax")
    shards = [
        run(
            tmp_path / f"s{i}",
            REPO / "specs" / "x64",
            "off-warn",
            *select,
            "--shard",
            f"{i}/3",
            adapter="jax",
        )
        for i in (1, 2, 3)
    ]
    parts = [cells(load_runs([s / "results.jsonl"])) for s in shards]
    assert all(parts) and sum(map(len, parts)) == len(set().union(*parts))
    expected = cells(load_runs([whole / "results.jsonl"]))
    assert 20 <= len(expected) <= 400, len(expected)
    proc = cli("merge", str(tmp_path / "merged.jsonl"), *map(str, shards))
    assert proc.returncode == 0, proc.stderr
    [joined] = load_runs([tmp_path / "merged.jsonl"])
    got = cells([joined])
    assert {k: (r["outcome"], r["message"]) for k, r in got.items()} == {
        k: (r["outcome"], r["message"]) for k, r in expected.items()
    }
    assert not joined.interrupted and joined.collected == len(expected)
    assert joined.description is not None
    assert [p["shard"] for p in joined.description["merged_from"]] == [  # type: ignore[index]
        {"index": i, "count": 3} for i in (1, 2, 3)
    ]
    # two shards of three: the merged run says which is missing
    [partial] = merge_runs(load_runs([s / "results.jsonl" for s in shards[:2]])).runs
    assert partial.interrupted and partial.end is not None
    assert partial.end.get("reason") == "shard 3/3 not merged"


def test_a_bad_shard_is_one_line(tmp_path: Path) -> None:
    proc = cli("run", "--adapter", "reference", "--shard", "4/3", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2 and "--shard" in proc.stderr and "1 <= I <= N" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_a_share_short_of_all_never_reads_100_percent() -> None:
    """Issue 38, item 6: 12541 of 12545 cells conforming was shown as 100.0%."""
    line = Headline("jax", "0.10.2", ["cpu"], ["off-warn"], 12541, 12545, 4, 0, 0, [], 1)
    assert line.share == "99.9%"
    assert Headline("jax", "0.10.2", ["cpu"], ["on"], 7, 7, 0, 0, 0, [], 1).share == "100.0%"
    assert [percent(1, 3), percent(2, 3), percent(1, 30000), percent(0, 5), percent(0, 0)] == [
        "33.3%",
        "66.7%",
        "0.1%",
        "0.0%",
        "n/a",
    ]


def test_compat_shards_split_the_releases_evenly() -> None:
    releases = ["0.10.2", "0.4.30", "0.5.3", "0.4.35", "0.6.2", "0.8.0", "0.4.31"]
    parts = [parse_shard(f"{i}/3").releases(releases) for i in (1, 2, 3)]
    assert parts == [["0.4.30", "0.5.3", "0.10.2"], ["0.4.31", "0.6.2"], ["0.4.35", "0.8.0"]]
    assert parse_shard("1/3").releases(list(reversed(releases))) == parts[0]


def test_compat_shard_usage_errors_are_one_line(tmp_path: Path) -> None:
    for args, says in (
        (["--shard", "1/2", "--releases", "all"], "does not apply to --releases"),
        (["--shard", "3/3", "--versions", "0.4.30,0.10.2"], "no release of --versions"),
        (["--shard", "0/3"], "1 <= I <= N"),
    ):
        proc = cli("compat", *args, "--out", str(tmp_path / "c"))
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "c").exists()
