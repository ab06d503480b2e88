"""The report's section "When JAX flips its upcoming defaults", and each mode's flags, from real runs.

The suite's own custom_vjp specs (closures, rule_outputs) run four times with the jax adapter:
x64 off/warn as today, with jax_custom_vjp3 alone, with jax_disable_bwd_checks alone, and with
both ("all upcoming"). Whether a case changes under a flag through a failure or through a
`when: {flags: ...}` block of its spec, the section must list it under the flag that does it;
the assertions below hold either way. A small spec directory of our own pins the cases the
suite's specs cannot: a change of expect block alone, and not applicable turning into passed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.report import build_site
from jax_conformance.report.model import ReportModel, build_model
from jax_conformance.report.upcoming import COMBINATION, UpcomingSection

from tests.test_report import run_suite, write_specs

REPO = PACKAGE_DIR.parent
SELECT = "custom_vjp.closures or custom_vjp.rule_outputs"
VJP3, BWD = "jax_custom_vjp3", "jax_disable_bwd_checks"
BASE, ALL = "off-warn", f"off-warn+{VJP3}+{BWD}"
# name -> the --flag options of its run
RUNS: dict[str, tuple[str, ...]] = {"base": (), "vjp3": (VJP3,), "bwd": (BWD,), "all": (VJP3, BWD)}


def suite_command(results: Path, flags: tuple[str, ...]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        str(PACKAGE_DIR),
        "--adapter=jax",
        "-k",
        SELECT,
        "--results",
        str(results),
        "-p",
        "no:cacheprovider",
        "-q",
        *(f"--flag={f}=true" for f in flags),
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The four real runs, started together (each is its own process, as `jax-conformance run` starts modes)."""
    root = tmp_path_factory.mktemp("upcoming")
    paths = {name: root / f"{name}.jsonl" for name in RUNS}
    procs = {
        name: subprocess.Popen(
            suite_command(paths[name], flags),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name, flags in RUNS.items()
    }
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=600)
        assert paths[name].is_file(), out
    return paths


@pytest.fixture(scope="module")
def model(runs: dict[str, Path]) -> ReportModel:
    return build_model(list(runs.values()))


def records(path: Path) -> dict[str, dict[str, Any]]:
    return {
        r["case"]: r
        for r in map(json.loads, path.read_text().splitlines())
        if r.get("record") == "case"
    }


def section(model: ReportModel) -> UpcomingSection:
    [sec] = model.upcoming
    return sec


def test_the_runs_are_the_modes_asked_for(runs: dict[str, Path], model: ReportModel) -> None:
    assert [c.mode for c in model.columns] == [
        BASE,
        f"{BASE}+{VJP3}",
        f"{BASE}+{BWD}",
        ALL,
    ]  # each after its base
    assert [c.flags for c in model.columns] == [
        {},
        {VJP3: True},
        {BWD: True},
        {VJP3: True, BWD: True},
    ]
    for path in runs.values():
        assert len(records(path)) > 20


def test_changes_are_attributed_to_the_flag_whose_alone_run_does_them(
    runs: dict[str, Path], model: ReportModel
) -> None:
    sec = section(model)
    assert (sec.base, sec.upcoming) == (BASE, ALL)
    assert sec.alone == {VJP3: f"{BASE}+{VJP3}", BWD: f"{BASE}+{BWD}"}
    flips = {c.id: c for c in sec.cases}
    groups = {g.name: g for g in sec.groups}

    # The bwd checks off: a wrong-shaped cotangent is no longer an error. jax_custom_vjp3 alone
    # changes the case too (another ValueError message) but not the way all upcoming does.
    wrong = flips["custom_vjp.rule_outputs.bwd-wrong-shape"]
    assert wrong.today.did.startswith("raised ValueError"), wrong.today
    assert wrong.upcoming is not None and wrong.upcoming.did == "dtype float32", wrong.upcoming
    assert wrong.due_to == [BWD] and wrong.group == BWD
    assert wrong in groups[BWD].cases and wrong not in groups[VJP3].cases
    second = flips["custom_vjp.rule_outputs.bwd-wrong-shape-second-argument"]
    assert (
        second.due_to == [BWD]
        and second.upcoming is not None
        and second.upcoming.did.startswith("raised TypeError")
    )

    # jax_custom_vjp3: a custom_vjp function closing over a jit Tracer is an UnexpectedTracerError.
    primal = flips["custom_vjp.closures.jit-tracer-primal"]
    assert primal.today.did.startswith("dtype float32"), primal.today
    assert primal.upcoming is not None and "UnexpectedTracerError" in primal.upcoming.did
    assert primal.due_to == [VJP3] and primal in groups[VJP3].cases and BWD not in primal.alone
    assert (
        primal.today.block != primal.upcoming.block
        or primal.today.outcome != primal.upcoming.outcome
    )

    # Every case is listed or counted unchanged, once.
    base = records(runs["base"])
    assert len(sec.cases) + sec.unchanged == len(base)
    assert COMBINATION not in groups  # no case changes only with both flags set
    # The counts per flag are the changes each alone-run makes.
    assert (
        groups[VJP3].changed_alone
        == sum(VJP3 in c.alone for c in sec.cases)
        >= len(groups[VJP3].cases)
    )
    assert groups[BWD].changed_alone == sum(BWD in c.alone for c in sec.cases) >= 2


def test_changed_means_another_outcome_block_or_observed_behaviour(
    runs: dict[str, Path], model: ReportModel
) -> None:
    """Checked against the raw records: every case whose outcome or chosen expect block differs
    under a flag is listed, and every listed case differs from today in some field of its records."""
    sec = section(model)
    listed = {c.id for c in sec.cases}
    raw = {name: records(path) for name, path in runs.items()}
    for case, today in raw["base"].items():
        others = [raw[name][case] for name in ("vjp3", "bwd", "all")]
        key = (today["outcome"], today.get("expect_line"))
        if any((r["outcome"], r.get("expect_line")) != key for r in others):
            assert case in listed, case
        if case in listed:
            assert any(
                (r["outcome"], r.get("expect_line"), r.get("actual")) != (*key, today.get("actual"))
                for r in others
            ), case
    changed_by_vjp3 = {
        c
        for c, r in raw["vjp3"].items()
        if (r["outcome"], r.get("expect_line"))
        != (raw["base"][c]["outcome"], raw["base"][c].get("expect_line"))
    }
    assert changed_by_vjp3 <= {c.id for c in sec.cases if VJP3 in c.alone}
    assert (
        len(changed_by_vjp3) >= 10
    )  # the closures and rule_outputs cases research found (docs/research/upcoming-flags.md)


def test_the_page_lists_them_under_their_flag(runs: dict[str, Path], tmp_path: Path) -> None:
    index, model = build_site(list(runs.values()), tmp_path / "site")
    html = index.read_text()
    assert '<a href="#upcoming">' in html and "When JAX flips its upcoming defaults" in html
    # each flag's table is collapsed under its sentence (issue 28)
    groups = dict(
        re.findall(r'<details class="flip-group" data-group="([^"]+)">(.*?)</details>', html, re.S)
    )
    assert 'data-case="custom_vjp.rule_outputs.bwd-wrong-shape"' in groups[BWD]
    assert 'data-case="custom_vjp.rule_outputs.bwd-wrong-shape"' not in groups[VJP3]
    assert 'data-case="custom_vjp.closures.jit-tracer-primal"' in groups[VJP3]
    sec = section(model)
    counts = {
        name: "0" if n == "no" else n
        for name, n in re.findall(r'<li data-group="([^"]+)"[^>]*>[^:<]+: (\d+|no) case', html)
    }
    assert counts == {g.name: str(len(g.cases)) for g in sec.groups}
    for g in sec.groups:  # a sentence each, from the section's data
        assert (
            g.sentence.startswith(f"{g.name}: ")
            and g.sentence.endswith(".")
            and html.count(g.sentence.split(" (")[0]) >= 1
        )
    assert f"<strong>unchanged</strong>: {sec.unchanged} case" in html
    # The flags of each mode: what it sets, and the upgrade flags in effect.
    rows = dict(re.findall(r'<tr data-flag="([^"]+)">(.*?)</tr>', html, re.S))
    cells = re.findall(
        r'<td class="flag-value ([a-z ]*)" data-mode="([^"]+)">([^<]*)</td>', rows[VJP3]
    )
    assert [(kind.strip(), mode, text) for kind, mode, text in cells] == [
        ("", BASE, "false"),
        ("set", f"{BASE}+{VJP3}", "true"),
        ("", f"{BASE}+{BWD}", "false"),
        ("set", ALL, "true"),
    ]
    assert "jax_remat3" in rows and "jax_enable_x64" not in rows  # upgrade flags only


def test_the_report_command_prints_a_line_per_base_mode(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "report",
            *map(str, runs.values()),
            "--out",
            str(tmp_path / "site"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("upcoming defaults")]
    assert line.startswith("upcoming defaults (jax ") and "today off-warn" in line
    assert (
        re.search(rf"\b{BWD} 2\b", line)
        and re.search(rf"\b{VJP3} \d+", line)
        and line.endswith("unchanged")
    ), line


def strip_flags(src: Path, dst: Path) -> Path:
    """The file as a run before flags existed wrote it (format 1): no `flags` in any mode, none in the header."""
    out = []
    for rec in map(json.loads, src.read_text().splitlines()):
        if isinstance(rec.get("mode"), dict):
            rec["mode"].pop("flags", None)
        if rec.get("record") == "run":
            rec.pop("flags", None)
            rec["version"] = 1  # the format before every mode carried `flags`
        out.append(json.dumps(rec))
    dst.write_text("\n".join(out) + "\n")
    return dst


def test_old_results_without_flags_still_load_and_merge(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    old = strip_flags(runs["base"], tmp_path / "old.jsonl")
    assert '"flags"' not in old.read_text()
    # alone: a plain report with no flag sections
    index, alone = build_site([old], tmp_path / "alone")
    assert (
        [c.mode for c in alone.columns] == [BASE] and alone.upcoming == [] and alone.flags is None
    )
    assert 'id="upcoming"' not in index.read_text() and 'id="flags"' not in index.read_text()
    assert alone.columns[0].counts == build_model([runs["base"]]).columns[0].counts
    # merged with today's flagged run: the old run is the base mode; its flag values are unknown (?)
    index, merged = build_site([old, runs["bwd"]], tmp_path / "merged")
    sec = section(merged)
    assert (sec.base, sec.upcoming) == (BASE, f"{BASE}+{BWD}")
    assert {c.id for c in sec.cases if c.group == BWD} >= {
        "custom_vjp.rule_outputs.bwd-wrong-shape",
        "custom_vjp.rule_outputs.bwd-wrong-shape-second-argument",
    }
    assert merged.flags is not None
    old_mode = next(m for m in merged.flags.modes if m.mode == BASE)
    assert not old_mode.listed and merged.flags.cell(old_mode, VJP3) == ("?", "")
    assert 'data-mode="off-warn">?</td>' in index.read_text()
    # a flagged run stripped of its flags reads as the plain mode it was started from: two runs of
    # one configuration, merged into one column, each cell once (merging.merge_runs)
    both = build_model([old, strip_flags(runs["vjp3"], tmp_path / "old-vjp3.jsonl")])
    assert [c.mode for c in both.columns] == [BASE] and both.upcoming == []
    assert both.columns[0].total == len(both.cases)


# ---------------------------------------------------------------- a spec of our own

FLAG_SPEC = """
topic: demo.upcoming
title: Cases whose expect block depends on a flag
source: {doc: docs/jep/4008-custom-vjp-update.md}
cases:
  - id: demo.upcoming.block-only
    claim: the same result either way, stated by another expect block under the flag
    run: jnp.arange(3)
    expect:
      - when: {flags: {jax_custom_vjp3: true}}
        dtype: int32
      - dtype: int32
  - id: demo.upcoming.only-under-the-flag
    claim: a claim about the flag only, so not applicable without it
    run: jnp.arange(3)
    expect:
      - when: {flags: {jax_custom_vjp3: true}}
        dtype: int32
  - id: demo.upcoming.same
    claim: nothing about flags
    run: jnp.arange(3)
    expect:
      - dtype: int32
"""


def flag_demo_runs(root: Path) -> list[Path]:
    """Two real runs of FLAG_SPEC: x64 off/warn, and the same with jax_custom_vjp3."""
    specs = write_specs(root, FLAG_SPEC)
    paths = [root / "base.jsonl", root / "vjp3.jsonl"]
    for path, args in zip(paths, [(), (f"--flag={VJP3}=true",)], strict=True):
        proc = run_suite(specs, path, *args)
        assert path.is_file(), proc.stdout + proc.stderr
    return paths


def test_another_expect_block_and_applicability_count_as_changes(tmp_path: Path) -> None:
    model = build_model(flag_demo_runs(tmp_path))
    assert len(model.cases) == 3 and all(c.id.startswith("demo.upcoming.") for c in model.cases)
    sec = section(model)
    assert (sec.base, sec.upcoming, sec.alone) == (BASE, f"{BASE}+{VJP3}", {VJP3: f"{BASE}+{VJP3}"})
    flips = {c.id: c for c in sec.cases}
    assert (
        set(flips) == {"demo.upcoming.block-only", "demo.upcoming.only-under-the-flag"}
        and sec.unchanged == 1
    )
    block = flips["demo.upcoming.block-only"]
    assert block.upcoming is not None
    assert (block.today.outcome, block.upcoming.outcome) == (
        "passed",
        "passed",
    )  # the outcome alone would miss it
    assert block.today.did == block.upcoming.did == "dtype int32"
    assert block.today.block != block.upcoming.block and "another expect block" in block.how
    assert block.due_to == [VJP3]
    na = flips["demo.upcoming.only-under-the-flag"]
    assert na.upcoming is not None and (na.today.outcome, na.upcoming.outcome) == (
        "not_applicable",
        "passed",
    )
    assert na.how.startswith("not applicable today, passes under the flags"), na.how


def test_the_verdict_counts_the_modes_without_flags_and_names_the_others(
    runs: dict[str, Path], model: ReportModel
) -> None:
    """A preview of JAX's upcoming defaults is not today's JAX: beside a base mode, flagged modes are
    left out of the conformance verdict (and said to be); a run of a flagged mode alone is counted."""
    from jax_conformance.report.model import COUNTED_BASES
    from jax_conformance.report.site import headlines

    [v] = headlines(model)
    assert v.modes == [BASE] and v.runs == 1
    assert sorted(v.flagged) == sorted([ALL, f"{BASE}+{BWD}", f"{BASE}+{VJP3}"])
    base = next(c for c in model.columns if c.mode == BASE)
    assert v.applicable == base.share(COUNTED_BASES)[1]
    [alone] = headlines(build_model([runs["vjp3"]]))
    assert alone.modes == [f"{BASE}+{VJP3}"] and alone.flagged == [] and alone.applicable > 0


# ---------------------------------------------------------------- a known divergence under the flags

DIVERGENCE_SPEC = """
topic: demo.listed
title: A case JAX fails the same way with and without the upcoming flags
source: {doc: docs/jep/4008-custom-vjp-update.md}
cases:
  - id: demo.listed.diverges
    claim: a known divergence (the spec says int16 where JAX gives int32)
    run: jnp.arange(3)
    expect:
      - dtype: int16
"""

REFS = "jax_refs_to_pins"  # an upgrade flag that changes nothing about jnp.arange


def test_a_known_divergence_is_no_change_under_a_flag(tmp_path: Path) -> None:
    # issue 38: `run --modes off-warn,+upcoming` credited jax_refs_to_pins with a failure identical
    # with and without it (the entry, keyed to `off-warn`, did not apply in the flag's mode)
    specs = write_specs(tmp_path, DIVERGENCE_SPEC)
    listed = tmp_path / "jax.yaml"
    listed.write_text(
        "adapter: jax\nentries:\n  - reason: pretend it is known\n"
        "    cases: [{case: demo.listed.diverges, modes: [off-warn]}]\n",
        encoding="utf-8",
    )
    runs = {name: tmp_path / f"{name}.jsonl" for name in ("base", "flag", "flag-unlisted")}
    for name, args in (
        ("base", ("--expectations", str(listed))),
        ("flag", ("--expectations", str(listed), f"--flag={REFS}=true")),
        ("flag-unlisted", ("--expectations", "none", f"--flag={REFS}=true")),
    ):
        proc = run_suite(specs, runs[name], *args)
        assert runs[name].is_file(), proc.stdout + proc.stderr
    outcomes = {n: records(p)["demo.listed.diverges"]["outcome"] for n, p in runs.items()}
    assert outcomes == {"base": "xfailed", "flag": "xfailed", "flag-unlisted": "failed"}
    for flagged in ("flag", "flag-unlisted"):  # listed or not, JAX does the same under the flag
        sec = section(build_model([runs["base"], runs[flagged]]))
        assert (sec.cases, sec.unchanged) == ([], 1), [c.to_json() for c in sec.cases]
        [group] = sec.groups
        assert group.sentence == f"{REFS}: no case behaves otherwise."


def test_a_flag_whose_run_did_not_start_is_said_not_run_and_credits_nothing(
    tmp_path: Path,
) -> None:
    """A run stopped before a flag's own mode started (`run --modes off-warn,+upcoming` cut short:
    its modes are written "not started", with no case) says nothing about that flag: not "no case
    behaves otherwise", and a case all upcoming changes is not "only in the combination"."""
    from jax_conformance.report.upcoming import UNATTRIBUTED

    from tests.test_report_layout import flagged_file

    cases = {"t.demo.changes": "passed", "t.demo.same": "passed"}
    files = [
        flagged_file(tmp_path / "base.jsonl", cases, {}),
        flagged_file(
            tmp_path / "all.jsonl", {**cases, "t.demo.changes": "failed"}, {VJP3: True, BWD: True}
        ),
        flagged_file(tmp_path / "vjp3.jsonl", {**cases, "t.demo.changes": "failed"}, {VJP3: True}),
        flagged_file(tmp_path / "bwd.jsonl", {}, {BWD: True}),  # not started: no case
    ]
    sec = section(build_model(files))
    assert sec.modes == [f"{BASE}+{VJP3}", ALL] and sec.alone == {VJP3: f"{BASE}+{VJP3}"}
    [changed] = sec.cases
    assert (changed.id, changed.due_to, changed.group) == ("t.demo.changes", [VJP3], VJP3)
    sentences = {g.name: g.sentence for g in sec.groups}
    assert sentences[BWD] == f"{BWD}: not run alone; no case is credited to it."
    assert sentences[VJP3].startswith(f"{VJP3}: 1 case behaves otherwise")
    from jax_conformance.commands.report import upcoming_lines

    [line] = upcoming_lines(build_model(files))
    assert line.endswith(f"1 case behaves otherwise ({VJP3} 1, {BWD} not run alone); 1 unchanged")
    # the case no flag run alone changes is not attributed while a flag's own run is missing
    files[2] = flagged_file(tmp_path / "vjp3.jsonl", cases, {VJP3: True})
    [changed] = section(build_model(files)).cases
    assert changed.group == UNATTRIBUTED, changed.to_json()
