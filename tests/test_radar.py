"""The upgrade radar's bisection (`compat --releases`, `upgrade`) over a fake release sequence: no installs.

Each fake "release" answers with signatures the way a real run's records give them (outcome and
what the case did per mode); a planted change at release k must be found at k, in the fewest runs.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.compat import drive
from jax_conformance.compat.discover import discover, parse_range
from jax_conformance.compat.radar import (
    ABSENT,
    FLAG,
    HARNESS,
    MISSING,
    Observations,
    Store,
    Unavailable,
    bisect,
)
from jax_conformance.errors import UsageError
from jax_conformance.options import parse_size
from jax_conformance.records import ResultsWriter, harness_end, harness_header
from jax_conformance.text import plural
from packaging.version import Version

from tests.conftest import read_results

ACCEPTS = "passed: dtype float32"
RAISES = (
    "failed: raised TypeError (Custom JVP rule must produce primal and tangent outputs with...)"
)


def releases(n: int) -> list[str]:
    return [f"0.4.{30 + i}" for i in range(n)]


class FakeReleases:
    """Release -> behaviour, computed; records each release observed and the cases asked."""

    def __init__(
        self,
        names: Sequence[str],
        behave: Callable[[int, str], str],
        cases: Sequence[str],
        unavailable: Mapping[str, str] | None = None,
    ) -> None:
        self.names = list(names)
        self.behave = behave
        self.cases = list(cases)
        self.unavailable = dict(unavailable or {})
        self.calls: list[tuple[str, list[str] | None]] = []

    def observe(
        self, probes: Mapping[str, Sequence[str] | None]
    ) -> dict[str, Observations | Unavailable]:
        out: dict[str, Observations | Unavailable] = {}
        for release, cases in probes.items():
            self.calls.append((release, None if cases is None else list(cases)))
            if release in self.unavailable:
                out[release] = Unavailable(self.unavailable[release])
                continue
            i = self.names.index(release)
            out[release] = {
                c: {"off-warn": self.behave(i, c), "on": self.behave(i, c)}
                for c in (self.cases if cases is None else cases)
            }
        return out


def planted(k: int) -> Callable[[int, str], str]:
    """custom_jvp.float0 accepts an int tangent before release k and raises from k on; the rest never change."""
    return lambda i, case: (
        (RAISES if i >= k else ACCEPTS) if case == "custom_jvp.float0" else ACCEPTS
    )


CASES = ["custom_jvp.float0", "x64.defaults.arange-int", "x64.defaults.zeros"]


@pytest.mark.parametrize("n", [9, 12, 17])
def test_a_planted_change_is_found_at_its_release_in_the_fewest_runs(n: int) -> None:
    names = releases(n)
    for k in range(1, n):
        fake = FakeReleases(names, planted(k), CASES)
        search = bisect(names, fake)
        assert [(f.case, f.release, f.previous) for f in search.changes] == [
            ("custom_jvp.float0", names[k], names[k - 1])
        ]
        found = search.changes[0]
        assert found.before == {"off-warn": ACCEPTS, "on": ACCEPTS} and found.after["on"] == RAISES
        # the two ends in full, then one release per step of a binary search over the n - 1 gaps
        assert search.runs() == len(fake.calls) <= 2 + math.ceil(math.log2(n - 1))
        assert [c for _, c in fake.calls[:2]] == [None, None]
        assert all(
            c == ["custom_jvp.float0"] for _, c in fake.calls[2:]
        )  # only the differing case in between
    if (n - 1) & (n - 2) == 0:  # n - 1 a power of two: every k costs exactly log2(n - 1) probes
        assert all(
            bisect(names, FakeReleases(names, planted(k), CASES)).runs()
            == 2 + int(math.log2(n - 1))
            for k in range(1, n)
        )


def test_a_behaviour_that_changes_twice_gets_each_change() -> None:
    names = releases(12)

    def behave(i: int, case: str) -> str:
        if case != "x64.defaults.zeros":
            return ACCEPTS
        return (
            "passed: dtype float32"
            if i < 3
            else "passed: dtype float64"
            if i < 8
            else "failed: raised ValueError"
        )

    search = bisect(names, FakeReleases(names, behave, CASES))
    assert [(f.case, f.release) for f in search.changes] == [
        ("x64.defaults.zeros", names[3]),
        ("x64.defaults.zeros", names[8]),
    ]
    assert search.changes[1].before["off-warn"] == "passed: dtype float64"


def test_several_cases_share_each_probe() -> None:
    names = releases(9)
    fake = FakeReleases(
        names, lambda i, c: ACCEPTS if i < (2 if c == CASES[0] else 6) else RAISES, CASES[:2]
    )
    search = bisect(names, fake)
    assert {(f.case, f.release) for f in search.changes} == {
        (CASES[0], names[2]),
        (CASES[1], names[6]),
    }
    # the first probe (the middle) is shared; each release is asked at most once per step
    assert len(fake.calls) == len({(r, tuple(c or ())) for r, c in fake.calls})
    assert search.runs() <= 2 + 2 * math.ceil(math.log2(8))


def test_an_unavailable_release_is_stepped_around_and_recorded() -> None:
    names = releases(9)
    k = 4
    fake = FakeReleases(
        names, planted(k), CASES, unavailable={names[4]: "no jaxlib wheel for cp311"}
    )
    search = bisect(names, fake)
    assert search.unavailable == {names[4]: "no jaxlib wheel for cp311"}
    # the change can only be placed after the last release that ran before it
    (found,) = search.changes
    assert (found.release, found.previous, found.skipped) == (names[5], names[3], [names[4]])


def test_anchors_run_in_full_and_split_the_search() -> None:
    names = releases(12)
    fake = FakeReleases(names, planted(7), CASES)
    search = bisect(names, fake, anchors=[names[5]])
    assert [r for r, c in fake.calls if c is None] == [names[0], names[5], names[11]]
    assert [(f.release) for f in search.changes] == [names[7]]


def test_no_difference_between_the_ends_costs_two_runs() -> None:
    names = releases(12)
    fake = FakeReleases(names, lambda i, c: ACCEPTS, CASES)
    assert bisect(names, fake).runs() == 2 and not bisect(names, fake).changes


# ---------------------------------------------------------------- the store: results as files, reused


def _write_run(
    path: Path,
    release: str,
    mode: dict[str, object],
    cases: Mapping[str, str],
    flags: Sequence[dict[str, object]] = (),
    ended: bool = True,
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = ResultsWriter(path)
    header = harness_header(
        "jax", mode, run_id=f"r-{release}-{path.stem}", implementation_version=release
    )  # type: ignore[arg-type]
    header["flags"] = list(flags)  # type: ignore[typeddict-item]
    writer.write(header)
    for case, dtype in cases.items():
        writer.write(
            {
                "record": "case",
                "run_id": header["run_id"],
                "case": case,
                "spec_file": "specs/x.yaml",
                "line": 1,
                "adapter": "jax",
                "implementation_version": release,
                "backend": "cpu",
                "mode": mode,
                "outcome": "passed",
                "message": "",
                "expected": None,
                "topic": case.rsplit(".", 1)[0],
                "actual": {"dtype": dtype, "shape": [3]},
                "duration_s": 0.0,
            }
        )
    if ended:
        writer.write(harness_end(header["run_id"], "", interrupted=False))
    writer.close()


OFF = {"x64": False, "explicit_x64_dtypes": "warn", "flags": {}}  # a version-2 mode names its flags


def test_the_store_reads_signatures_flags_and_what_was_asked(tmp_path: Path) -> None:
    store = Store(tmp_path)
    flag = {
        "name": "jax_custom_vjp3",
        "default": False,
        "value": False,
        "upgrade": True,
        "help": "",
    }
    _write_run(
        store.result_path("0.4.30", "off-warn", None),
        "0.4.30",
        OFF,
        {"a.b": "float32", "a.c": "int32"},
    )
    _write_run(
        store.result_path("0.5.3", "off-warn", None), "0.5.3", OFF, {"a.b": "float32"}, [flag]
    )
    asked = ["a.b", "a.gone"]
    store.note_cases("0.5.0", "off-warn", asked)
    _write_run(store.result_path("0.5.0", "off-warn", asked), "0.5.0", OFF, {"a.b": "float64"})
    _write_run(
        store.result_path("0.5.1", "off-warn", None), "0.5.1", OFF, {"a.b": "int8"}, ended=False
    )
    obs, full = store.observations("0.4.30", ["off-warn"])
    assert full == {"off-warn"} and obs["a.b"] == {"off-warn": "passed: dtype float32"}
    assert obs[FLAG + "jax_custom_vjp3"] == {
        "*": ABSENT
    }  # another release has it; this one does not
    assert store.observations("0.5.3", ["off-warn"])[0][FLAG + "jax_custom_vjp3"] == {
        "*": "default false"
    }
    obs, full = store.observations("0.5.0", ["off-warn"])
    assert (
        not full
        and obs["a.b"]["off-warn"] == "passed: dtype float64"
        and obs["a.gone"] == {"off-warn": MISSING}
    )
    assert store.has("0.5.0", ["off-warn"], asked) and not store.has("0.5.0", ["off-warn"], None)
    assert not store.has("0.5.0", ["off-warn", "on"], asked)
    assert not store.has(
        "0.5.1", ["off-warn"], ["a.b"]
    )  # an interrupted run is not reused: it runs again
    store.mark_unavailable("0.4.32", "no wheel")
    assert store.unavailable("0.4.32") == "no wheel" and store.unavailable("0.4.33") is None


def test_discovery_asks_each_interpreter_and_keeps_the_range() -> None:
    listed = {
        "py311": ["0.10.2", "0.5.3", "0.4.38", "0.4.30", "0.4.29", "0.4.1"],
        "py312": ["0.12.0.1", "0.11.0", "0.10.2", "0.5.3", "0.6.0rc1"],
    }
    found, problems = discover(
        {"3.11": "py311", "3.12": "py312"}, *parse_range("all"), lister=lambda p: listed[p]
    )
    assert [(r.version, r.minor) for r in found] == [
        ("0.4.30", "3.11"),
        ("0.4.38", "3.11"),
        ("0.5.3", "3.11"),
        ("0.10.2", "3.11"),
        ("0.11.0", "3.12"),
        ("0.12.0.1", "3.12"),
    ]
    assert not problems
    assert parse_range("0.4.30..0.5.3") == (Version("0.4.30"), Version("0.5.3"))
    assert parse_range("0.10.2..") == (Version("0.10.2"), None)
    with pytest.raises(ValueError):
        parse_range("0.4.30")


def test_changes_text_groups_by_release(tmp_path: Path) -> None:
    names = releases(9)
    search = bisect(names, FakeReleases(names, planted(4), CASES))
    data = {"changes": [{**f.to_json(), "topic": "custom_jvp"} for f in search.changes]}
    text = drive.format_changes_text(None, data)  # type: ignore[arg-type]
    assert text.splitlines()[0] == f"jax {names[4]} (after {names[3]}): 1 change"
    assert f"custom_jvp.float0 [off-warn, on]: {ACCEPTS} -> {RAISES}" in text
    json.dumps(data)


# ---------------------------------------------------------------- the table, the report, upgrade: reuse


def _bisected_store(tmp_path: Path) -> Store:
    """Full runs at the ends, the one differing case at the releases a search probed."""
    store = Store(tmp_path / "store")
    _write_run(
        store.result_path("0.4.30", "off-warn", None),
        "0.4.30",
        OFF,
        {"a.float0": "float32", "a.same": "int32"},
    )
    _write_run(
        store.result_path("0.5.3", "off-warn", None),
        "0.5.3",
        OFF,
        {"a.float0": "float0", "a.same": "int32"},
    )
    for release, dtype in (("0.4.34", "float0"), ("0.4.33", "float32")):
        store.note_cases(release, "off-warn", ["a.float0"])
        _write_run(
            store.result_path(release, "off-warn", ["a.float0"]), release, OFF, {"a.float0": dtype}
        )
    return store


def test_the_table_and_the_report_show_each_change_at_its_release(tmp_path: Path) -> None:
    from jax_conformance.launch.scheduler import merge
    from jax_conformance.records import load_runs
    from jax_conformance.releases import build_table
    from jax_conformance.report import build_site

    store = _bisected_store(tmp_path)
    merged = tmp_path / "merged.jsonl"
    merge([f for r in ("0.4.30", "0.4.33", "0.4.34", "0.5.3") for f in store.files(r)], merged)
    table = build_table(load_runs([merged]), ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.5.3"])
    timeline = table.timeline()
    assert [(v, [(row.case, what) for row, what in items]) for v, items in timeline] == [
        ("0.4.34", [("a.float0", "off-warn: dtype float32 \u2192 dtype float0")])
    ]
    index, _ = build_site([merged], tmp_path / "report")
    assert index is not None
    page = index.read_text()
    assert (
        'id="timeline"' in page
        and "Changes by release" in page
        and "0.4.34</strong>: 1 change" in page
    )


def test_upgrade_answers_from_a_cached_search_without_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from jax_conformance.commands import upgrade

    names = releases(12)
    root = drive.store_root(tmp_path / "cache", names[-1])
    search = bisect(names, FakeReleases(names, planted(5), CASES))
    data = {
        "releases": names,
        "changes": [
            {
                **f.to_json(),
                "topic": "custom_jvp",
                "claim": "float0 tangents",
                "basis": "tested",
                "source": {"jax_test": "CustomJVPTest.test_float0"},
            }
            for f in search.changes
        ],
    }
    drive.save_search(root, data)

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached search must answer without installing or running")

    monkeypatch.setattr(upgrade, "search_range", no_search)
    parser = argparse.ArgumentParser()
    upgrade.add_arguments(parser)
    for a, b, found in ((names[3], names[7], 1), (names[6], names[9], 0)):
        args = parser.parse_args(
            [
                "--from",
                a,
                "--to",
                b,
                "--cache-dir",
                str(tmp_path / "cache"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        assert upgrade.main(args) == 0
        text = capsys.readouterr().out
        assert (
            f"Upgrading JAX {a} -> {b}: {plural(found, 'behaviour change')}" in text
            and "nothing installed or run" in text
        )
        if found:
            assert f"custom_jvp.float0  changed in {names[5]} (after {names[4]}; tested)" in text
            assert (
                f"    off-warn, on: {ACCEPTS}\n{' ' * len('    off-warn, on: ')}-> {RAISES}" in text
            )
            assert (tmp_path / "out" / f"upgrade-{a}-{b}.html").read_text().count("<tr class=") == 1


def test_a_release_the_store_holds_is_not_run_again(tmp_path: Path) -> None:
    from jax_conformance.compat.observer import RealObserver
    from jax_conformance.mode import Mode

    store = _bisected_store(tmp_path)
    said: list[str] = []
    observer = RealObserver(
        store,
        [Mode.from_slug("off-warn")],
        tmp_path / "cache",
        {},
        tmp_path / "specs",
        say=said.append,
    )

    def no_run(todo: object) -> None:
        raise AssertionError(f"ran {todo}")

    observer._run = no_run  # type: ignore[method-assign]
    got = observer.observe({"0.4.30": None, "0.4.34": ["a.float0"], "0.4.33": ["a.float0"]})
    assert got["0.4.34"] == {"a.float0": {"off-warn": "passed: dtype float0"}}
    assert got["0.4.30"]["a.same"] == {"off-warn": "passed: dtype int32"}  # type: ignore[index]
    assert said == [
        "jax 0.4.30: every case from the store",
        "jax 0.4.34: 1 cases from the store",
        "jax 0.4.33: 1 cases from the store",
    ]


def test_a_resumed_full_run_skips_the_modes_that_ended(tmp_path: Path) -> None:
    """An interrupted search resumes at the mode it stopped in: a mode whose full run ended is not
    run again (and its file not overwritten), one whose run was cut short is."""
    from jax_conformance.compat.observer import RealObserver
    from jax_conformance.mode import Mode

    store = Store(tmp_path / "radar")
    _write_run(store.result_path("0.10.2", "off-warn", None), "0.10.2", OFF, {"a.x": "int32"})
    cut = {"x64": False, "explicit_x64_dtypes": "error", "flags": {}}
    _write_run(
        store.result_path("0.10.2", "off-error", None), "0.10.2", cut, {"a.x": "int32"}, ended=False
    )
    slugs = ["off-warn", "off-error", "on"]
    observer = RealObserver(
        store, [Mode.from_slug(m) for m in slugs], tmp_path / "cache", {}, tmp_path / "specs"
    )
    assert [m.slug for m in observer.modes_to_run("0.10.2", None)] == ["off-error", "on"]
    assert [m.slug for m in observer.modes_to_run("0.12.0", None)] == slugs


def test_a_full_run_case_that_met_a_harness_error_is_run_again_once(tmp_path: Path) -> None:
    """An end's full run in which the harness failed on a case (not the release) leaves that case
    unobservable; the observer asks for that case alone to be run again, once per search, and the
    merged results keep what the second run observed."""
    from jax_conformance.compat.observer import RealObserver
    from jax_conformance.mode import Mode

    store = Store(tmp_path / "radar")
    path = store.result_path("0.10.2", "off-warn", None)
    _write_run(path, "0.10.2", OFF, {"a.ok": "int32", "a.hurt": "int32"})
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for rec in records:
        if rec.get("case") == "a.hurt":
            rec.update(outcome="error", message="harness error: UnboundLocalError", actual=None)
    path.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    assert store.observations("0.10.2", ["off-warn"])[0]["a.hurt"] == {"off-warn": HARNESS}
    ran: list[dict[str, object]] = []
    observer = RealObserver(
        store, [Mode.from_slug("off-warn")], tmp_path / "cache", {}, tmp_path / "specs"
    )
    observer._run = ran.append  # type: ignore[assignment, method-assign]
    observer.observe({"0.10.2": None})
    observer.observe({"0.10.2": None})
    assert ran == [{"0.10.2": ["a.hurt"]}]
    # the run again observed it: the merged results keep that record, not the harness error
    _write_run(
        store.result_path("0.10.2", "off-warn", ["a.hurt"]), "0.10.2", OFF, {"a.hurt": "int32"}
    )
    assert store.observations("0.10.2", ["off-warn"])[0]["a.hurt"] == {
        "off-warn": "passed: dtype int32"
    }
    from types import SimpleNamespace

    merged = tmp_path / "merged.jsonl"
    drive.merged_results(
        SimpleNamespace(search=SimpleNamespace(releases=["0.10.2"]), store=store), merged
    )  # type: ignore[arg-type]
    kept = [json.loads(line) for line in merged.read_text().splitlines()]
    assert [r["outcome"] for r in kept if r.get("case") == "a.hurt"] == ["passed"]
    assert [r["outcome"] for r in kept if r.get("case") == "a.ok"] == ["passed"]


def test_a_harness_error_is_no_change() -> None:
    from jax_conformance.compat.radar import differs, record_signature

    rec = {"outcome": "error", "message": "harness error: UnboundLocalError: ...", "actual": None}
    assert record_signature(rec) == HARNESS  # type: ignore[arg-type]
    assert not differs({"on": HARNESS, "off-warn": ACCEPTS}, {"on": RAISES, "off-warn": ACCEPTS})
    assert differs({"on": HARNESS, "off-warn": ACCEPTS}, {"on": RAISES, "off-warn": RAISES})
    assert (
        record_signature({"outcome": "xfailed", "actual": {"dtype": "int32"}})
        == "failed: dtype int32"
    )  # type: ignore[arg-type]


def test_the_cache_budget_removes_the_least_recently_used(tmp_path: Path) -> None:
    import os

    from jax_conformance.compat import budget

    for i, name in enumerate(("jax-0.4.30-a", "jax-0.4.31-b", "jax-0.4.33-c")):
        path = tmp_path / "envs" / name
        path.mkdir(parents=True)
        (path / "blob").write_bytes(os.urandom(64 * 1024))
        (path / budget.LAST_USED).touch()
        os.utime(path / budget.LAST_USED, (1000 + i, 1000 + i))
    # a hardlinked file (uv's cache) is counted once
    os.link(
        tmp_path / "envs" / "jax-0.4.33-c" / "blob", tmp_path / "envs" / "jax-0.4.31-b" / "shared"
    )
    size = budget.disk_bytes(tmp_path / "envs" / "jax-0.4.33-c")
    report = budget.enforce_budget(
        tmp_path, int(size * 2.5), keep=[tmp_path / "envs" / "jax-0.4.30-a"]
    )
    # the oldest is this run's (kept); the next oldest goes
    assert [p.name for p, _ in report.removed] == ["jax-0.4.31-b"]
    assert sorted(p.name for p in (tmp_path / "envs").iterdir()) == ["jax-0.4.30-a", "jax-0.4.33-c"]
    assert "removed 1 least recently used" in report.describe()
    assert budget.enforce_budget(tmp_path, 0).removed == []  # no budget: nothing removed
    assert (
        parse_size("20G") == 20 << 30 and parse_size("500M") == 500 << 20 and parse_size("0") == 0
    )
    with pytest.raises(ValueError):
        parse_size("lots")


def test_a_probe_runs_only_the_modes_where_the_case_differed() -> None:
    names = releases(9)

    class ModeAware(FakeReleases):
        modes_for: dict[str, set[str]]

    def behave(i: int, case: str) -> str:
        return ACCEPTS if i < 3 or case != CASES[0] else RAISES

    fake = ModeAware(names, behave, CASES)
    fake.modes_for = {}

    def observe(
        probes: Mapping[str, Sequence[str] | None],
    ) -> dict[str, Observations | Unavailable]:
        got = FakeReleases.observe(fake, probes)
        for obs in got.values():  # only "on" differs: off-warn keeps accepting
            if not isinstance(obs, Unavailable) and CASES[0] in obs:
                obs[CASES[0]]["off-warn"] = ACCEPTS
        return got

    fake.observe = observe  # type: ignore[method-assign]
    search = bisect(names, fake)
    assert fake.modes_for == {CASES[0]: {"on"}}
    assert [(f.release, f.modes) for f in search.changes] == [(names[3], ["on"])]


def test_the_keyword_selects_each_case_and_parses() -> None:
    from jax_conformance.compat.observer import keyword

    assert (
        keyword(
            ["x64.defaults.arange-int", "promotion.table.add[int8|float32]", "promotion.table.*x"]
        )
        == "x64.defaults.arange-int or promotion.table.add[int8 or promotion.table."
    )


GATED = """\
topic: x64.explicit
source: {doc: docs/default_dtypes.md}
cases:
  - id: x64.explicit.error
    claim: an explicit float64 request raises in error mode
    basis: observed
    run: jnp.zeros(2, dtype="float64")
    expect:
      - when: {x64: false, explicit_x64_dtypes: error, version: ">=0.5.3"}
        raises: {type: ValueError, match: "float64"}
      - when: {x64: false, explicit_x64_dtypes: error, version: "<=0.4.30"}
        dtype: float32
      - when: {x64: true, adapter: [reference], version: ">=0.4.33"}
        dtype: float32
"""


def test_a_gate_where_nothing_changed_is_flagged_with_the_release_found(tmp_path: Path) -> None:
    """The case changed in 0.4.34 in off-error; its gates move at 0.5.3 and at 0.4.31, where nothing
    changed: each is flagged with the release the radar found. A gate at the found release, one for
    another adapter or a flag mode the search did not run, and a case it did not observe are not;
    a change in a mode the block does not apply in explains no gate."""
    from jax_conformance.compat.gates import gate_flags
    from jax_conformance.mode import Mode

    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "explicit.yaml").write_text(GATED)
    order = ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.5.3"]
    modes = [Mode.from_slug(m) for m in ("off-warn", "off-error", "off-allow", "on")]
    changes = {"x64.explicit.error": {"0.4.34": ["off-error"]}}
    flags = gate_flags(
        [tmp_path / "specs"], order, changes, ["x64.explicit.error"], modes, root=tmp_path
    )
    assert [(f.spec_file, f.line, f.gate, f.moves_at, f.changed_in) for f in flags] == [
        ("specs/explicit.yaml", 9, ">=0.5.3", "0.5.3", ("0.4.34",)),
        ("specs/explicit.yaml", 11, "<=0.4.30", "0.4.31", ("0.4.34",)),
    ]
    assert (
        "gate '>=0.5.3' moves at 0.5.3, where nothing the radar sees changed" in flags[0].describe()
    )
    moved = GATED.replace(">=0.5.3", ">=0.4.34").replace("<=0.4.30", "<0.4.34")
    (tmp_path / "specs" / "explicit.yaml").write_text(moved)
    assert gate_flags([tmp_path / "specs"], order, changes, ["x64.explicit.error"], modes) == []
    assert gate_flags([tmp_path / "specs"], order, {}, [], modes) == []  # not observed: not judged
    elsewhere = {"x64.explicit.error": {"0.4.34": ["on"]}}  # a change in a mode the blocks skip
    assert (
        len(gate_flags([tmp_path / "specs"], order, elsewhere, ["x64.explicit.error"], modes)) == 2
    )
    (tmp_path / "specs" / "explicit.yaml").write_text(
        GATED.replace(
            "x64: false, explicit", "flags: {jax_custom_vjp3: true}, x64: false, explicit"
        )
    )
    assert (
        gate_flags([tmp_path / "specs"], order, {}, ["x64.explicit.error"], modes) == []
    )  # a flag mode: not searched


def test_a_release_whose_runs_never_started_stops_the_search(tmp_path: Path) -> None:
    """A mode process that failed to start (the environment's harness could not load the adapter)
    saw no case and no flag: the search stops with its reason instead of reporting no change (as
    `upgrade --from 0.10.1 --to 0.10.2` did, "0 flag changes", from environments another checkout
    had installed its harness into)."""
    from jax_conformance.compat.observer import RealObserver
    from jax_conformance.errors import HarnessError
    from jax_conformance.mode import Mode

    store = Store(tmp_path / "radar")
    why = "pytest failed to start (exit 4): ERROR: no module 'jax_conformance.adapters.jax.as_of'"
    path = store.result_path("0.10.1", "off-warn", None)
    path.parent.mkdir(parents=True)
    writer = ResultsWriter(path)
    header = harness_header(
        "jax", OFF, run_id="failed", implementation_version="0.10.1", status="error", reason=why
    )  # type: ignore[arg-type]
    writer.write(header)
    writer.write(harness_end("failed", why, interrupted=True, exitstatus=4))
    writer.close()
    observer = RealObserver(
        store, [Mode.from_slug("off-warn")], tmp_path / "cache", {}, tmp_path / "specs"
    )
    observer._run = lambda todo: None  # type: ignore[method-assign]
    with pytest.raises(
        HarnessError, match=r"jax 0\.10\.1: no complete run in off-warn \(pytest failed to start"
    ):
        observer.observe({"0.10.1": None})


def _upgrade(argv: list[str]) -> int:
    import argparse

    from jax_conformance.commands import upgrade

    parser = argparse.ArgumentParser()
    upgrade.add_arguments(parser)
    return upgrade.main(parser.parse_args(argv))


def test_upgrade_takes_k_and_m_as_run_does_and_after_dashes() -> None:
    import argparse

    def sel(argv: list[str]) -> list[str]:
        from jax_conformance.commands import upgrade

        parser = argparse.ArgumentParser()
        upgrade.add_arguments(parser)
        return drive.selection(parser.parse_args(["--from", "0.10.1", "--to", "0.10.2", *argv]))

    assert (
        sel(["-k", "integer_inputs"])
        == sel(["--", "-k", "integer_inputs"])
        == ["-k", "integer_inputs"]
    )
    assert sel(["-k", "custom_vjp", "-m", "not slow"]) == ["-k", "custom_vjp", "-m", "not slow"]
    assert sel(["-k", "custom_vjp", "--", "-k", "float0", "-x"]) == [
        "-k",
        "(custom_vjp) and (float0)",
        "-x",
    ]
    assert drive.selection_tag([]) == "all" != drive.selection_tag(["-k", "custom_vjp"])


def test_upgrade_refuses_a_selection_that_matches_no_case_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A -k or -m that selects no case of the specs: one line, exit 2, no environment, no search, no
    cache directory (it built environments, ran four modes of nothing and reported "0 changes")."""
    from jax_conformance import cli
    from jax_conformance.commands import upgrade

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("a selection of nothing must be refused before any search")

    monkeypatch.setattr(upgrade, "search_range", no_search)
    cache = tmp_path / "cache"
    for argv in (["-k", "custom_jvp.no_such_topic"], ["--", "-k", "custom_jvp.no_such_topic"]):
        with pytest.raises(UsageError, match=r"-k 'custom_jvp.no_such_topic' selects no case"):
            _upgrade(["--from", "0.4.33", "--to", "0.4.36", "--cache-dir", str(cache), *argv])
    code = cli.main(
        [
            "upgrade",
            "--from",
            "0.4.33",
            "--to",
            "0.4.36",
            "--cache-dir",
            str(cache),
            "-m",
            "nosuchtag",
        ]
    )
    assert code == 2 and not cache.exists()


def test_a_search_under_one_selection_never_answers_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A search stored under `-k custom_vjp` answers `-k custom_vjp` (as an option or after `--`),
    and not `-k integer_inputs` nor the whole suite: those search again."""
    from jax_conformance.commands import upgrade

    names = ["0.4.33", "0.4.34", "0.4.35", "0.4.36"]
    tag = drive.selection_tag(["-k", "custom_vjp"])
    drive.save_search(
        drive.store_root(tmp_path / "cache", names[-1], selection=tag),
        {"releases": names, "changes": []},  # type: ignore[typeddict-item]
    )

    class Searched(Exception):
        pass

    def search(*args: object, **kwargs: object) -> None:
        raise Searched

    monkeypatch.setattr(upgrade, "search_range", search)
    base = ["--from", "0.4.33", "--to", "0.4.36", "--cache-dir", str(tmp_path / "cache")]
    base += ["--out", str(tmp_path / "out")]
    for argv in (["-k", "custom_vjp"], ["--", "-k", "custom_vjp"]):
        assert _upgrade(base + argv) == 0
        assert "nothing installed or run" in capsys.readouterr().out
    for argv in (["-k", "integer_inputs"], []):
        with pytest.raises(Searched):
            _upgrade([*base, "--yes", *argv])


def test_a_search_says_what_it_builds_and_costs_before_it_starts(tmp_path: Path) -> None:
    """The plan a search prints first: environments to build (the cached one not counted), the
    disk they take at most, and a rough time that grows with the cases selected."""
    from jax_conformance.compat.budget import MARKER
    from jax_conformance.compat.plan import search_plan

    ready = tmp_path / "envs" / "jax-0.4.36-abc"
    ready.mkdir(parents=True)
    (ready / MARKER).write_text("{}")
    names = ["0.4.33", "0.4.34", "0.4.35", "0.4.36"]
    whole = search_plan(names, ["0.4.33", "0.4.36"], tmp_path, 4, (3835, 3835), 2)
    assert "4 releases (0.4.33..0.4.36); it builds 1 environment now" in whole
    assert "(0.4.33, 0.4.36; 1 cached) and up to 2 more" in whole
    assert (
        f"0.65 GB each, {3 * 650e6 / 1e9:.1f} GB at most" in whole
        and "3835 of 3835 cases in 4 modes" in whole
    )
    few = search_plan(names, ["0.4.33", "0.4.36"], tmp_path, 4, (8, 3835), 2)

    def minutes(text: str) -> int:
        return int(re.search(r"at each end: about (\d+) min", text).group(1))  # type: ignore[union-attr]

    assert minutes(few) < minutes(whole)
    (tmp_path / "envs" / "jax-0.4.33-abc").mkdir()
    (tmp_path / "envs" / "jax-0.4.33-abc" / MARKER).write_text("{}")
    ready = search_plan(["0.4.33", "0.4.36"], ["0.4.33", "0.4.36"], tmp_path, 4, None, 2)
    assert f"every environment it may need is cached under {tmp_path}." in ready
    assert "bisected" not in ready and "every case in 4 modes" in ready


def test_the_plan_counts_the_end_runs_the_store_answers(tmp_path: Path) -> None:
    """A resumed search whose ends are in the store says so: it once said "3 of 3 cases in 2
    mode(s) at each end" and priced building both ends although every run came from the store."""
    from jax_conformance.compat.plan import search_plan

    store = Store(tmp_path / "radar")
    on = {"x64": True, "explicit_x64_dtypes": "warn", "flags": {}}
    for release in ("0.4.33", "0.4.36"):
        for slug, mode in (("off-warn", OFF), ("on", on)):
            _write_run(store.result_path(release, slug, None), release, mode, {"a.x": "int32"})
    ends, modes = ["0.4.33", "0.4.36"], ["off-warn", "on"]
    cache = tmp_path / "cache"
    done = search_plan(ends, ends, cache, 2, (3, 3), 1, drive.stored_ends(store, ends, modes))
    assert (
        "At the ends, all 4 mode runs (3 of 3 cases) are answered from the store, none run" in done
    )
    assert "3 of 3 cases in 2 modes at each end" not in done
    assert "every environment it may need is cached" in done and "about 0 min" in done
    cut = store.result_path("0.4.36", "on", None)
    _write_run(cut, "0.4.36", on, {"a.x": "int32"}, ended=False)
    half = search_plan(ends, ends, cache, 2, (3, 3), 1, drive.stored_ends(store, ends, modes))
    assert "it runs 3 of 3 cases in 1 of 4 mode runs (3 answered from the store)" in half
    assert "builds 1 environment now for the ends (0.4.33, 0.4.36; 0 cached, 1 answered" in half
    fresh = search_plan(
        ends, ends, cache, 2, (3, 3), 1, drive.stored_ends(Store(cache), ends, modes)
    )
    assert "It runs 3 of 3 cases in 2 modes at each end" in fresh


def test_upgrade_prints_each_message_in_full(tmp_path: Path) -> None:
    """Before and after are the whole first line of each error, as each release said it, not the
    opening word the search compares (`raised TypeError (Value...) -> raised TypeError (Argument...)`)."""
    from jax_conformance.commands import upgrade
    from jax_conformance.compat.radar import Found

    store = Store(tmp_path)
    words = {
        "0.4.35": "Value 'x' of type int32 is not a valid JAX type",
        "0.4.36": "Argument 'x' of type <class 'int'> is not a valid JAX type",
    }
    for release, message in words.items():
        path = store.result_path(release, "off-warn", None)
        _write_run(path, release, OFF, {"a.err": "int32"})
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for rec in records:
            if rec.get("case") == "a.err":
                rec["actual"] = {"raised": {"type": "TypeError", "message": message + "\nmore"}}
        path.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    before, after = (store.observations(r, ["off-warn"])[0]["a.err"] for r in words)
    assert before == {"off-warn": "passed: raised TypeError (Value...)"}  # what the search compares
    found = Found("a.err", "0.4.36", "0.4.35", before, after)
    change = {**found.to_json(), "topic": "a", "claim": "", "basis": None, "source": None}
    change["said"] = drive.said(store, [found])[0]
    text = upgrade.summary_text("0.4.35", "0.4.36", [change], "test")  # type: ignore[list-item]
    assert f"off-warn: passed: raised TypeError: {words['0.4.35']}\n" in text
    assert f"-> passed: raised TypeError: {words['0.4.36']}" in text
    assert "(Value...)" not in text


def test_the_radar_judges_each_release_by_its_own_blocks(
    specdir: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The radar's adapter (JAX judged as of the newest release of the search) picks each case's
    block for the release that runs, and only where it has none there the block for the newest:
    a documented behaviour of its time passes in its time (it read `failed` judged as of the newest)."""
    from importlib.metadata import version

    from jax_conformance.protocol import AS_OF_ADAPTER, AS_OF_ENV

    here = version("jax")
    specdir.write(
        "asof.yaml",
        f"""
        topic: demo.asof
        source: {{observed: tests/test_radar.py}}
        basis: observed
        cases:
          - id: demo.asof.own
            claim: the block for the release that runs judges it
            run: jnp.arange(3)
            expect:
              - when: {{version: "<={here}"}}
                dtype: int32
              - when: {{version: ">{here}"}}
                dtype: float32
          - id: demo.asof.gap
            claim: with no block for the release that runs, the newest release's judges it
            run: jnp.arange(3)
            expect:
              - when: {{version: "<0.0.1"}}
                dtype: int64
              - when: {{version: ">{here}"}}
                dtype: int32
        """,
    )
    monkeypatch.setenv(AS_OF_ENV, "99.0")
    out = tmp_path / "r.jsonl"
    result = specdir.run("--x64=off", f"--results={out}", adapter=AS_OF_ADAPTER)
    result.assert_outcomes(passed=2)
    lines = {
        r["case"]: r.get("expect_line") for r in read_results(out) if r.get("record") == "case"
    }
    assert lines == {"demo.asof.own": 9, "demo.asof.gap": 19}  # the `when` lines chosen


def test_where_nothing_but_the_outcome_is_seen_the_block_judging_it_is_part_of_the_signature() -> (
    None
):
    """Judged by its own blocks, a case that passes in both releases under different blocks
    changed as the spec says it did (compat's table reads it so); the same block is no change."""
    from jax_conformance.compat.radar import differs, record_signature

    def sig(line: int) -> str:
        rec = {"outcome": "passed", "message": "", "actual": None, "expect_line": line}
        return record_signature(rec)  # type: ignore[arg-type]

    assert sig(8) == "passed (spec line 8)"
    assert differs({"off-warn": sig(8)}, {"off-warn": sig(11)})
    assert not differs({"off-warn": sig(8)}, {"off-warn": sig(8)})
    seen = {"outcome": "passed", "actual": {"dtype": "int32", "shape": [3]}, "expect_line": 8}
    assert record_signature(seen) == "passed: dtype int32"  # type: ignore[arg-type]


# pip and uv cannot reach any index in the refusal test: were the refusal ever lost, the search
# would find no release to install rather than install one.
OFFLINE = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "UV_OFFLINE": "1"}


@pytest.mark.parametrize(
    "argv",
    [
        ["upgrade", "--from", "0.4.30", "--to", "0.4.31"],
        ["compat", "--releases", "0.4.30..0.4.31"],
    ],
    ids=["upgrade", "compat"],
)
def test_a_search_without_a_terminal_or_yes_is_refused_before_any_work(
    tmp_path: Path, argv: list[str]
) -> None:
    """With stdin not a terminal (CI, a script) and no --yes, a search that would install releases
    is refused: one line naming what it would do and its cost and saying to pass --yes, exit 2,
    no cache directory and no output directory (it went ahead: 12+ minutes and 2.4 GiB unasked)."""
    env = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"}
    # the spec parse cache (every command's, lint's too) shares $JAX_CONFORMANCE_CACHE: off here, so
    # that the cache directory the variable names is seen to stay empty
    env.update(OFFLINE, JAX_CONFORMANCE_CACHE=str(tmp_path / "env-cache"))
    env["JAX_CONFORMANCE_SPEC_CACHE"] = "0"
    # the cache named by the environment for one command, by --cache-dir for the other
    cache = ["--cache-dir", str(tmp_path / "cache")] if argv[0] == "upgrade" else []
    done = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", *argv, *cache]
        + ["--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stdout + done.stderr
    assert "--yes" in lines[0] and "0.4.30..0.4.31" in lines[0], lines[0]
    assert re.search(r"about \d+ min", lines[0]) and "GB" in lines[0], lines[0]
    assert not any(tmp_path.iterdir()), sorted(tmp_path.rglob("*"))
