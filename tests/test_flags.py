"""Modes as JAX flags: `--flag`, `when: {flags: ...}`, records that carry them, `run --modes +upcoming`.

The end-to-end tests run real pytest and `jax-conformance run` processes against JAX over a
small spec whose case reads the flag's value inside the worker, so a flag that never reaches JAX
fails the case.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import cast

import pytest
from jax_conformance.errors import ModeError, SpecError, SpecFileErrors
from jax_conformance.mode import (
    DEFAULT_MODES,
    Mode,
    expand_upcoming,
    parse_modes,
    read_modes,
    upcoming_modes,
    wants_upcoming,
)
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.records import Record, read_records, upgrade
from jax_conformance.spec.loader import load_spec

REPO = PACKAGE_DIR.parent
PY = sys.executable

SPEC = """
topic: demo.flags
title: A case that sees the flag inside the worker
source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}
basis: observed
cases:
  - id: demo.flags.vjp3-value
    claim: the worker's JAX has jax_custom_vjp3 set as the mode says
    run: |
      result = bool(jax.config.jax_custom_vjp3)
    expect:
      - when: {flags: {jax_custom_vjp3: true}}
        check: "result is True"
      - check: "result is False"
  - id: demo.flags.custom-vjp-class
    claim: with jax_custom_vjp3 a custom_vjp function is the new implementation, decided at decoration
    run: |
      @jax.custom_vjp
      def f(x):
          return x
      result = type(f).__name__
    expect:
      - when: {flags: {jax_custom_vjp3: true}}
        check: "result == 'custom_vjp3'"
      - check: "result == 'custom_vjp'"
  - id: demo.flags.only-in-a-future-release
    claim: a block for a flag no release has is never chosen; the block after it is
    run: |
      result = 1
    expect:
      - when: {flags: {jax_flag_of_the_future: true}}
        value: 2
      - value: 1
"""


@pytest.fixture(scope="module")
def specdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("flagspecs")
    (d / "flags.yaml").write_text(textwrap.dedent(SPEC))
    return d


def suite(specdir: Path, results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            PY,
            "-m",
            "pytest",
            str(PACKAGE_DIR),
            "--adapter=jax",
            "-p",
            "no:cacheprovider",
            "-q",
            "--specs",
            str(specdir),
            "--results",
            str(results),
            *args,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def records(path: Path) -> list[Record]:
    return list(read_records(path))


# ---------------------------------------------------------------- the mode


def test_a_mode_names_its_flags_and_reads_back_from_its_slug_and_its_json() -> None:
    mode = Mode.from_slug("off-warn+jax_remat3=false+jax_custom_vjp3")
    assert mode.flags == (("jax_custom_vjp3", True), ("jax_remat3", False))
    assert mode.slug == "off-warn+jax_custom_vjp3+jax_remat3=false"
    assert Mode.from_slug(mode.slug) == mode
    assert mode.environ()["JAX_CUSTOM_VJP3"] == "1" and mode.environ()["JAX_REMAT3"] == "0"
    assert mode.to_json() == {
        "x64": False,
        "explicit_x64_dtypes": "warn",
        "flags": {"jax_custom_vjp3": True, "jax_remat3": False},
    }
    assert Mode.from_json(mode.to_json()) == mode
    # A record written before flags existed (format 1) is read as a mode without flags.
    old: Record = cast(
        Record, {"record": "case", "mode": {"x64": True, "explicit_x64_dtypes": "warn"}}
    )
    assert Mode.from_json(upgrade(old, 1)["mode"]) == Mode(True, "warn")
    with pytest.raises(KeyError):
        Mode.from_json(
            {"x64": True, "explicit_x64_dtypes": "warn"}
        )  # only the reader knows format 1
    # The x64 flags given as flags set the mode's own fields.
    assert Mode.from_slug("off+jax_enable_x64=on") == Mode(True, "warn")
    assert mode.base == Mode(False, "warn")


@pytest.mark.parametrize(
    "text, words",
    [
        ("off+jax_custom_vjp3=", "no value after '='"),
        ("off+custom_vjp3", "a flag is NAME=VALUE with a JAX flag name"),
        ("sideways+jax_custom_vjp3", "unknown mode"),
    ],
)
def test_a_bad_mode_name_says_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(ModeError, match=words):
        parse_modes([text])


def test_upcoming_is_a_request_and_expands_to_all_flags_then_each_alone() -> None:
    assert wants_upcoming(["on,+upcoming"]) and parse_modes(["on,+upcoming"]) == [
        Mode(True, "warn")
    ]
    assert not wants_upcoming(["on"])
    modes = upcoming_modes(Mode(), ["jax_custom_vjp3", "jax_scan3"])
    assert [m.slug for m in modes] == [
        "off-warn+jax_custom_vjp3+jax_scan3",
        "off-warn+jax_custom_vjp3",
        "off-warn+jax_scan3",
    ]
    assert upcoming_modes(Mode(), ["jax_scan3"]) == [Mode().with_flag(jax_scan3=True)]
    # read once, expanded given the adapter's flags, on the first mode named (off-warn when none)
    choice = read_modes(["on-error,+upcoming", "off-warn"])
    assert choice.upcoming and choice.modes == [Mode(True, "error"), Mode()]
    assert [m.slug for m in expand_upcoming(choice, ["jax_scan3"])] == [
        "on-error",
        "off-warn",
        "on-error+jax_scan3",
    ]
    assert expand_upcoming(read_modes(["+upcoming"]), []) == [Mode()]
    assert expand_upcoming(read_modes(None), ["jax_scan3"]) == list(DEFAULT_MODES)
    with pytest.raises(
        ModeError, match=r"--modes \+upcoming: this command runs only the modes named"
    ):
        read_modes(["on,+upcoming"], upcoming=False)
    with pytest.raises(ModeError, match="names no mode"):
        read_modes([","])


# ---------------------------------------------------------------- when: {flags: ...}


def test_when_flags_chooses_by_the_value_in_effect_and_a_flag_the_release_lacks_matches_nothing(
    specdir: Path,
) -> None:
    [case, _, future] = load_spec(specdir / "flags.yaml").cases
    flag_block, default_block = case.expect
    on, off = Mode().with_flag(jax_custom_vjp3=True), Mode()
    assert case.select(on, "cpu", "jax", "0.10.2", {"jax_custom_vjp3": True}) is flag_block
    assert case.select(off, "cpu", "jax", "0.10.2", {"jax_custom_vjp3": False}) is default_block
    # 0.4.30 has no jax_custom_vjp3: the default block, the behaviour it has.
    assert case.select(off, "cpu", "jax", "0.4.30", {"jax_enable_x64": False}) is default_block
    assert (
        future.select(off, "cpu", "jax", "0.10.2", {"jax_custom_vjp3": False}) is future.expect[1]
    )


def lint_errors(path: Path) -> list[SpecError]:
    try:
        load_spec(path)
    except SpecFileErrors as exc:
        return exc.errors
    return []


def test_lint_lets_a_flag_block_carve_out_of_the_default_but_not_out_of_an_equal_one(
    tmp_path: Path, specdir: Path
) -> None:
    assert lint_errors(specdir / "flags.yaml") == []
    bad = textwrap.dedent(SPEC).replace(
        '      - check: "result is False"',
        '      - when: {flags: {jax_custom_vjp3: true}}\n        check: "result is False"',
    )
    (tmp_path / "bad.yaml").write_text(bad)
    rules = {e.rule for e in lint_errors(tmp_path / "bad.yaml")}
    assert rules == {"WHEN-OVERLAP", "WHEN-UNREACHABLE"}


# ---------------------------------------------------------------- real runs


def test_flag_reaches_jax_and_every_record_says_so(specdir: Path, tmp_path: Path) -> None:
    on = suite(specdir, tmp_path / "on.jsonl", "--flag", "jax_custom_vjp3=true", "-vv")
    assert on.returncode == 0, on.stdout + on.stderr
    assert re.search(
        r"demo\.flags\.vjp3-value\[off-warn\+jax_custom_vjp3-cpu\].* PASSED", on.stdout
    ), on.stdout
    recs = records(tmp_path / "on.jsonl")
    header = next(r for r in recs if r["record"] == "run")
    assert header["mode"] == {
        "x64": False,
        "explicit_x64_dtypes": "warn",
        "flags": {"jax_custom_vjp3": True},
    }
    table = {f["name"]: f for f in header["flags"]}
    assert table["jax_custom_vjp3"]["value"] is True and table["jax_custom_vjp3"]["upgrade"] is True
    assert table["jax_enable_x64"]["upgrade"] is False
    cases = {r["case"]: r for r in recs if r["record"] == "case"}
    assert {c["outcome"] for c in cases.values()} == {"passed"}
    assert all(c["mode"]["flags"] == {"jax_custom_vjp3": True} for c in cases.values())

    off = suite(specdir, tmp_path / "off.jsonl")
    assert off.returncode == 0, off.stdout + off.stderr
    off_cases = {r["case"]: r for r in records(tmp_path / "off.jsonl") if r["record"] == "case"}
    assert off_cases["demo.flags.vjp3-value"]["mode"]["flags"] == {}
    # The two runs chose different blocks of the same case.
    assert (
        off_cases["demo.flags.vjp3-value"]["expect_line"]
        != cases["demo.flags.vjp3-value"]["expect_line"]
    )


def test_a_flag_the_mode_sets_but_jax_does_not_take_fails_the_flag_block(
    specdir: Path, tmp_path: Path
) -> None:
    """The breakage: JAX started without the flag (the variable overridden by the case's environment
    is not the mode's), so the block for the flag sees the old value and fails, naming case and mode."""
    broken = specdir.parent / "broken-flags"
    broken.mkdir(exist_ok=True)
    text = textwrap.dedent(SPEC).replace(
        "    run: |\n      result = bool(jax.config.jax_custom_vjp3)",
        '    isolate: process\n    env: {JAX_CUSTOM_VJP3: "0"}\n    run: |\n      result = '
        "bool(jax.config.jax_custom_vjp3)",
    )
    (broken / "flags.yaml").write_text(text)
    proc = suite(broken, tmp_path / "b.jsonl", "--flag", "jax_custom_vjp3=true", "-k", "vjp3-value")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [rec] = [r for r in records(tmp_path / "b.jsonl") if r["record"] == "case"]
    assert rec["outcome"] == "failed" and "result is True" in rec["message"]
    assert "demo.flags.vjp3-value" in proc.stdout and "jax_custom_vjp3=true" in proc.stdout


def test_an_unknown_flag_is_one_line_naming_the_closest_flags(
    specdir: Path, tmp_path: Path
) -> None:
    proc = suite(specdir, tmp_path / "x.jsonl", "--flag", "jax_custom_vjp4=true")
    assert proc.returncode == 4
    [line] = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert line.startswith("ERROR: flag jax_custom_vjp4 not available in adapter 'jax'")
    assert "did you mean jax_custom_vjp3" in line and "its upgrade flags: " in line
    # The results say the same as a record (what compat reads as "this release lacks the flag"):
    # an unavailable run and its end, no case.
    kinds = [(r["record"], r.get("status")) for r in records(tmp_path / "x.jsonl")]
    assert kinds == [("run", "unavailable"), ("end", "unavailable")], kinds
    [header] = [r for r in records(tmp_path / "x.jsonl") if r["record"] == "run"]
    assert header["reason"].startswith("flag jax_custom_vjp4 not available in adapter 'jax'"), (
        header["reason"]
    )


def test_run_with_upcoming_runs_the_base_all_flags_and_each_flag_alone(
    specdir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    proc = subprocess.run(
        [
            PY,
            "-m",
            "jax_conformance.cli",
            "run",
            "--modes",
            "off-warn,+upcoming",
            "--specs",
            str(specdir),
            "--out",
            str(out),
            "--no-report",
            "--progress",
            "plain",
            "-j",
            "2",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    names = sorted(p.stem for p in (out / "modes").glob("*.jsonl"))
    upcoming = ["jax_custom_vjp3", "jax_disable_bwd_checks", "jax_remat3", "jax_scan3"]
    assert names == sorted(
        [
            "jax-off-warn",
            "jax-off-warn+" + "+".join(upcoming),
            *(f"jax-off-warn+{f}" for f in upcoming),
        ]
    )
    merged = records(out / "results.jsonl")
    headers = {Mode.from_json(r["mode"]).slug: r for r in merged if r["record"] == "run"}
    every = headers["off-warn+" + "+".join(upcoming)]
    assert {
        f["name"]: f["value"] for f in every["flags"] if f["name"] in upcoming
    } == dict.fromkeys(upcoming, True)
    vjp3 = {
        Mode.from_json(r["mode"]).slug: r["outcome"]
        for r in merged
        if r.get("case") == "demo.flags.custom-vjp-class"
    }
    assert set(vjp3.values()) == {"passed"} and len(vjp3) == 6


def test_an_upgrade_flag_from_the_callers_environment_is_part_of_the_mode(
    specdir: Path, tmp_path: Path
) -> None:
    """JAX_CUSTOM_VJP3=1 in the environment reaches the worker's JAX: the records must not say 'no flags'."""
    import os

    proc = subprocess.run(
        [
            PY,
            "-m",
            "pytest",
            str(PACKAGE_DIR),
            "--adapter=jax",
            "-p",
            "no:cacheprovider",
            "-vv",
            "--specs",
            str(specdir),
            "--results",
            str(tmp_path / "env.jsonl"),
            "-k",
            "vjp3-value",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAX_CUSTOM_VJP3": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(
        r"demo\.flags\.vjp3-value\[off-warn\+jax_custom_vjp3-cpu\].* PASSED", proc.stdout
    ), proc.stdout
    assert {
        json.dumps(r["mode"]["flags"]) for r in records(tmp_path / "env.jsonl") if "mode" in r
    } == {'{"jax_custom_vjp3": true}'}


def test_flags_upcoming_gives_every_flag_it_lists_a_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`flags --upcoming` says why each flag it lists is run: what it changes, or the spec that
    names it (jax_refs_to_pins is in the list only because specs/x64/enable_x64.yaml names it)."""
    from jax_conformance import cli

    assert cli.main(["flags", "--adapter", "jax", "--upcoming"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    flags = [ln.split()[0] for ln in lines if not ln.strip().startswith("why:")]
    reasons = [ln.strip() for ln in lines if ln.strip().startswith("why:")]
    assert flags and len(reasons) == len(flags), "\n".join(lines)
    if "jax_refs_to_pins" in flags:
        why = reasons[flags.index("jax_refs_to_pins")]
        assert "a spec names it in `when: flags`, at specs/x64/enable_x64.yaml:" in why, why
