"""Tests of `jax-conformance compat`: release lists, cache keys, the table, unavailable releases.

Real multi-release environments (hundreds of MB each) are built only when
JAX_CONFORMANCE_COMPAT_REAL=1 is set; everything else runs in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Any

import pytest
from jax_conformance import CHECKOUT, SPECS_DIR
from jax_conformance.commands import compat
from jax_conformance.compat import envs
from jax_conformance.compat.table import format_changes, format_table, summary
from jax_conformance.errors import ModeError, UsageError
from jax_conformance.mode import Mode, read_modes
from jax_conformance.records import load_runs, unavailable
from jax_conformance.releases import (
    build_table,
    explain,
    first_line,
    observed_key,
    parse_versions,
    status_over_modes,
)
from jax_conformance.spec.loader import spec_revision

from tests.conftest import REPO

REAL = os.environ.get("JAX_CONFORMANCE_COMPAT_REAL") == "1"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    compat.add_arguments(parser)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- release lists and pins


def test_versions_are_sorted_as_releases_not_strings() -> None:
    assert parse_versions("0.10.2,0.4.30, 0.9.2 0.8.0") == [
        "0.4.30",
        "0.8.0",
        "0.9.2",
        "0.10.2",
    ]


def test_duplicate_versions_are_dropped() -> None:
    assert parse_versions("0.8.0,0.8.0,0.8") == ["0.8.0"]


@pytest.mark.parametrize("text", ["", " , ", "0.4.30,banana", "latest"])
def test_bad_version_lists_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_versions(text)


def test_bad_versions_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse(["--versions", "0.4.30,nope"])
    assert exc.value.code == 2
    assert "'nope' is not a release number" in capsys.readouterr().err


def test_default_list_spans_at_least_five_releases_from_0_4_30() -> None:
    args = parse([])
    assert args.versions[0] == "0.4.30" and len(args.versions) >= 5
    assert args.versions == parse_versions(",".join(envs.DEFAULT_VERSIONS))
    assert [m.slug for m in read_modes(args.modes, upcoming=False).modes] == [
        "off-warn",
        "off-error",
        "off-allow",
        "on",
    ]


def test_modes_option() -> None:
    modes = parse(["--modes", "off-error", "--modes", "on"]).modes
    assert read_modes(modes, upcoming=False).modes == [Mode(False, "error"), Mode(True, "warn")]
    for bad in ("sideways", "on,+upcoming"):
        with pytest.raises(ModeError):
            read_modes(parse(["--modes", bad]).modes, upcoming=False)


def test_pins_apply_every_matching_row() -> None:
    table = [
        ("<0.5", ("numpy<2.1",)),
        ("<0.7", ("scipy<1.16", "numpy<2.1")),
        (">=0.9", ("ml_dtypes>=0.5",)),
    ]
    assert envs.pins_for("0.4.30", table) == ["numpy<2.1", "scipy<1.16"]
    assert envs.pins_for("0.6.2", table) == ["scipy<1.16", "numpy<2.1"]
    assert envs.pins_for("0.8.0", table) == []
    assert envs.pins_for("0.10.2", table) == ["ml_dtypes>=0.5"]


def test_requirements_pin_the_release_and_add_the_harness() -> None:
    reqs = envs.requirements("0.6.2", ["numpy<2.3"])
    assert reqs[:2] == ["jax[cpu]==0.6.2", "numpy<2.3"]
    for dep in (
        "pyyaml",
        "jsonschema",
        "jinja2",
        "packaging",
        "pytest",
        "hypothesis",
        "pytest-xdist",
    ):
        assert dep in reqs


def test_releases_after_0_10_need_python_3_12() -> None:
    assert envs.python_needed("0.10.2") is None
    assert envs.python_needed("0.11.0") == "3.12"
    assert envs.python_needed("0.12.0.1") == "3.12"


def test_interpreter_override_wins() -> None:
    assert envs.find_python("3.99", {"3.99": "/opt/py/bin/python3.99"}) == "/opt/py/bin/python3.99"


# ---------------------------------------------------------------- cache keys


def test_env_key_is_stable_and_short() -> None:
    key = envs.env_key("0.4.30", ["numpy<2.1"], "cpython-3.11.7")
    assert key == envs.env_key("0.4.30", ["numpy<2.1"], "cpython-3.11.7")
    assert len(key) == 12 and all(c in "0123456789abcdef" for c in key)


@pytest.mark.parametrize(
    "change",
    [
        ("0.4.31", ["numpy<2.1"], "cpython-3.11.7"),
        ("0.4.30", [], "cpython-3.11.7"),
        ("0.4.30", ["numpy<2.2"], "cpython-3.11.7"),
        ("0.4.30", ["numpy<2.1"], "cpython-3.12.1"),
    ],
)
def test_env_key_changes_with_what_decides_the_contents(change: tuple[str, list[str], str]) -> None:
    assert envs.env_key(*change) != envs.env_key("0.4.30", ["numpy<2.1"], "cpython-3.11.7")


def test_a_cached_environment_is_reused_without_pip(tmp_path: Path) -> None:
    """A ready marker means no venv and no pip run (the python given does not even exist)."""
    pins = envs.pins_for("0.8.0")
    path = tmp_path / "envs" / f"jax-0.8.0-{envs.env_key('0.8.0', pins, 'cpython-3.11.7')}"
    path.mkdir(parents=True)
    (path / envs.MARKER).write_text(json.dumps({"versions": {"jax": "0.8.0", "numpy": "2.3.4"}}))
    site = path / "lib" / "python3.11" / "site-packages"
    site.mkdir(
        parents=True
    )  # its editable install serves this checkout's harness, as pip writes it
    (site / "__editable___jax_conformance_0_1_0_finder.py").write_text(
        f"MAPPING: dict[str, str] = {{'jax_conformance': '{CHECKOUT}/conformance'}}\n"
    )
    env = envs.ensure_env("0.8.0", tmp_path, "/nonexistent/python", "cpython-3.11.7")
    assert env.ok and env.cached and env.path == path and env.versions["numpy"] == "2.3.4"


# ---------------------------------------------------------------- the table and the summary


def _run(version: str, mode: Mode, cases: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Records of one run: case id -> (outcome, message)."""
    run_id = f"{version}-{mode.slug}"
    out: list[dict[str, Any]] = [
        {
            "record": "run",
            "run_id": run_id,
            "adapter": "jax",
            "implementation_version": version,
            "mode": mode.to_json(),
            "backends": ["cpu"],
        },
        {"record": "collected", "run_id": run_id, "count": len(cases)},
    ]
    for case, (outcome, message) in cases.items():
        out.append(
            {
                "record": "case",
                "run_id": run_id,
                "case": case,
                "topic": case.rsplit(".", 1)[0],
                "claim": f"claim of {case}",
                "adapter": "jax",
                "implementation_version": version,
                "backend": "cpu",
                "mode": mode.to_json(),
                "outcome": outcome,
                "message": message,
            }
        )
    out.append({"record": "end", "run_id": run_id, "interrupted": False, "counts": {}})
    return out


OFF, ERR = Mode(False, "warn"), Mode(False, "error")


def _synthetic(tmp_path: Path) -> Path:
    records: list[dict[str, Any]] = []
    na = ("not_applicable", "no expect block for this version")
    ok = ("passed", "")
    for version in ("0.4.30", "0.8.0", "0.10.2"):
        new = version != "0.4.30"
        records += _run(
            version,
            OFF,
            {
                "x64.same": ok,
                "x64.ctx.enable": ok
                if version == "0.10.2"
                else ("failed", "AttributeError: no enable_x64\nmore lines"),
                "x64.explicit.error": ok,
                "vjp.closure": (
                    "failed",
                    "raised UnexpectedTracerError, but should raise CustomVJPException\n...",
                )
                if version == "0.10.2"
                else ok,
            },
        )
        records += _run(
            version,
            ERR,
            {
                "x64.same": ok,
                "x64.ctx.enable": na,
                "vjp.closure": na,
                "x64.explicit.error": ok
                if new
                else ("failed", "no ValueError was raised; the dtype is float32"),
            },
        )
    records += unavailable(
        "jax", "0.0.1", OFF.to_json(), "pip install jax[cpu]==0.0.1 failed: no such version"
    )
    path = tmp_path / "merged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_table_statuses_and_order(tmp_path: Path) -> None:
    table = build_table(load_runs([_synthetic(tmp_path)]), ["0.4.30", "0.8.0", "0.10.2", "0.0.1"])
    assert table.versions == ["0.0.1", "0.4.30", "0.8.0", "0.10.2"]
    assert table.unavailable == {"0.0.1": "pip install jax[cpu]==0.0.1 failed: no such version"}
    rows = {r.case: r for r in table.rows}
    assert set(rows) == {
        "x64.same",
        "x64.ctx.enable",
        "x64.explicit.error",
        "vjp.closure",
    }  # no `collected` row
    # fails with the error policy, holds with warn: partly
    assert rows["x64.explicit.error"].cells == {
        "0.0.1": "unavailable",
        "0.4.30": "partly",
        "0.8.0": "holds",
        "0.10.2": "holds",
    }
    assert rows["x64.ctx.enable"].cells["0.8.0"] == "fails"  # fails where it applies, n/a elsewhere
    assert rows["x64.explicit.error"].modes["0.4.30"] == {"off-error": "fails", "off-warn": "holds"}
    assert rows["x64.same"].cells["0.4.30"] == "holds" and not rows["x64.same"].differs(
        table.versions
    )
    # the rows that differ come first, then the rest
    assert [r.case for r in table.rows][-1] == "x64.same"
    assert all(r.differs(table.versions) for r in table.rows[:-1])


def test_summary_names_first_holds_last_fails_and_the_reason(tmp_path: Path) -> None:
    table = build_table(load_runs([_synthetic(tmp_path)]), ["0.4.30", "0.8.0", "0.10.2", "0.0.1"])
    data = summary(table)
    changes = {c["case"]: c for c in data["changes"]}
    assert set(changes) == {"x64.ctx.enable", "x64.explicit.error", "vjp.closure"}
    assert data["changed"] == 3 and data["cases"] == 4
    explicit = changes["x64.explicit.error"]
    assert (explicit["first_holds"], explicit["last_fails"], explicit["holds_since"]) == (
        "0.8.0",
        "0.4.30",
        "0.8.0",
    )
    assert explicit["reason"] == "off-error failed: no ValueError was raised; the dtype is float32"
    ctx = changes["x64.ctx.enable"]
    assert (ctx["first_holds"], ctx["last_fails"]) == ("0.10.2", "0.8.0")
    assert ctx["reason"] == "off-warn failed: AttributeError: no enable_x64"  # first line only
    closure = changes["vjp.closure"]  # holds on old releases, fails on the newest: a regression
    assert (closure["first_holds"], closure["last_holds"], closure["first_fails"]) == (
        "0.4.30",
        "0.8.0",
        "0.10.2",
    )
    assert closure["holds_since"] is None and closure["fails_since"] == "0.10.2"
    assert (
        "vjp.closure: changed in 0.10.2; FAILS from 0.10.2 (first holds 0.4.30); off-warn failed"
        in format_changes(table)
    )
    assert closure["reason"].startswith("off-warn failed: raised UnexpectedTracerError")


def test_terminal_table(tmp_path: Path) -> None:
    table = build_table(load_runs([_synthetic(tmp_path)]), ["0.4.30", "0.8.0", "0.10.2", "0.0.1"])
    text = format_table(table)
    lines = text.splitlines()
    assert lines[0].split()[:5] == ["case", "0.0.1", "0.4.30", "0.8.0", "0.10.2"]
    row = next(ln for ln in lines if ln.startswith("x64.explicit.error"))
    assert row.split()[1:] == ["--", "part", "ok", "ok", "0.8.0", "0.8.0"]
    row = next(ln for ln in lines if ln.startswith("x64.ctx.enable"))
    assert row.split()[1:] == ["--", "FAIL", "FAIL", "ok", "0.10.2", "0.10.2"]
    assert "unavailable: jax 0.0.1: pip install" in text
    assert text.index("[changes across releases]") < text.index("[same in every release]")
    only = format_table(table, changes_only=True)
    assert "x64.same" not in only and "x64.explicit.error" in only
    assert "x64.explicit.error: changed in 0.8.0; holds from 0.8.0 (first 0.8.0)" in format_changes(
        table
    )


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [
        (["passed", "not_applicable"], "holds"),
        (["xpassed"], "holds"),
        (["xfailed", "passed"], "partly"),
        (["failed", "error", "skipped"], "fails"),
        (["skipped", "not_applicable"], "n/a"),
        (["crashed"], "fails"),
    ],
)
def test_status_over_modes(outcomes: list[str], status: str) -> None:
    assert status_over_modes(outcomes) == status


def test_reason_lists_the_modes_in_matrix_order_failures_first() -> None:
    per_mode = {
        "on": ("not_applicable", "x64 on"),
        "off-allow": ("failed", "B"),
        "off-warn": ("error", "A"),
    }
    assert explain(per_mode) == "off-warn, off-allow error: A"
    assert (
        explain({"on": ("not_applicable", "no block for x64 on")})
        == "on not applicable: no block for x64 on"
    )


def test_hypothesis_reason_names_the_failure_then_the_example() -> None:
    msg = "falsifying example: dt=float64\n2 warnings UserWarning, but should be exactly 1\nmore"
    assert (
        first_line(msg)
        == "2 warnings UserWarning, but should be exactly 1 (falsifying example: dt=float64)"
    )


def test_an_interrupted_run_is_reported_as_incomplete(tmp_path: Path) -> None:
    records = _run("0.8.0", OFF, {"a.b": ("passed", "")})[:-1]  # no end record
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table(load_runs([path]))
    assert table.problems == {"0.8.0": ["interrupted"]} and table.rows[0].cells == {
        "0.8.0": "holds"
    }


def test_pip_reason_keeps_the_telling_line() -> None:
    out = (
        "Looking in indexes: x\nERROR: Ignored the following versions that require a different python version: 0.11.0\n"
        "ERROR: Could not find a version that satisfies the requirement jax[cpu]==0.0.1 (from versions: "
        + ", ".join(f"0.4.{i}" for i in range(40))
        + ")\nERROR: No matching distribution found for jax[cpu]==0.0.1\n"
    )
    reason = envs._pip_reason(out)
    assert reason.startswith(
        "ERROR: Could not find a version that satisfies the requirement jax[cpu]==0.0.1"
    )
    assert "0.4.0, 0.4.1, ..., 0.4.37, 0.4.38, 0.4.39)" in reason


# ---------------------------------------------------------------- real subprocesses


@pytest.mark.slow
def test_an_unavailable_release_is_recorded_and_the_rest_still_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0.0.1 cannot be installed; the release this venv has still runs (one case, one mode)."""
    here = dist_version("jax")
    args = parse(
        [
            "--versions",
            f"0.0.1,{here}",
            "--env",
            f"{here}={sys.prefix}",
            "--modes",
            "off-warn",
            "--out",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--install-timeout",
            "120",
            "--no-report",
            "--",
            "-k",
            "x64.defaults",
        ]
    )
    status = compat.main(args)
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.search(r"jax 0\.0\.1: UNAVAILABLE: (uv )?pip install jax\[cpu\]==0\.0\.1 failed", out)
    runs = load_runs([tmp_path / "out" / "compat-results.jsonl"])
    unavailable = [r for r in runs if r.header.get("status") == "unavailable"]
    assert [r.header["implementation_version"] for r in unavailable] == ["0.0.1"]
    assert unavailable[0].end is not None and not unavailable[0].interrupted
    assert "jax[cpu]==0.0.1" in unavailable[0].header["reason"]
    ran = [r for r in runs if r.header.get("status") is None]
    assert [r.header["implementation_version"] for r in ran] == [here] and ran[0].end is not None
    assert any(c.get("outcome") == "passed" for c in ran[0].cases)
    data = json.loads((tmp_path / "out" / "compat-summary.json").read_text())
    assert "pip install jax[cpu]==0.0.1 failed" in data["unavailable"]["0.0.1"]
    assert not (tmp_path / "cache" / "envs").exists() or not any(
        (p / envs.MARKER).exists() for p in (tmp_path / "cache" / "envs").iterdir()
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not REAL, reason="builds real JAX environments: set JAX_CONFORMANCE_COMPAT_REAL=1"
)
def test_real_releases_show_the_explicit_dtype_option_arriving_in_0_8_0(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = parse(
        [
            "--versions",
            "0.7.2,0.8.0",
            "--modes",
            "off-error",
            "--out",
            str(out),
            "--no-report",
            "--",
            "-k",
            "explicit",
        ]
    )
    assert compat.main(args) == 0
    data = json.loads((out / "compat-summary.json").read_text())
    arange = next(c for c in data["changes"] if c["case"] == "x64.explicit.arange")
    # 0.7.2 has no jax_explicit_x64_dtypes (the request warns); 0.8.0 raises in error mode
    assert arange["changed_in"] == ["0.8.0"], arange
    assert arange["statuses"] == {"0.7.2": "holds", "0.8.0": "holds"}


def test_pin_option() -> None:
    assert envs.parse_pin("0.4.30:numpy<2.1") == ("==0.4.30", ("numpy<2.1",))
    assert envs.parse_pin("<0.5: numpy<2.1, scipy<1.14") == ("<0.5", ("numpy<2.1", "scipy<1.14"))
    args = parse(["--pin", "<0.5:numpy<2.1"])
    assert (
        envs.pins_for("0.4.30", args.pin) == ["numpy<2.1"]
        and envs.pins_for("0.5.3", args.pin) == []
    )
    for bad in ("numpy<2.1", "<0.5:", "~~1:numpy"):
        with pytest.raises(ValueError):
            envs.parse_pin(bad)


def test_spec_snapshot_is_a_copy_and_its_digest_follows_the_content(tmp_path: Path) -> None:
    src = tmp_path / "specs"
    (src / "x64").mkdir(parents=True)
    (src / "x64" / "a.yaml").write_text("topic: a\n")
    snap = compat.snapshot_specs(tmp_path / "out" / "specs", src)
    digest = spec_revision([snap])
    (src / "x64" / "a.yaml").write_text("topic: b\n")  # edited after the snapshot was taken
    assert (snap / "x64" / "a.yaml").read_text() == "topic: a\n"
    assert spec_revision([src]) != digest == spec_revision([snap])
    assert (
        compat.snapshot_specs(tmp_path / "out" / "specs", src) == snap
        and spec_revision([snap]) != digest
    )


SPEC = """\
topic: x64.explicit
source: {doc: docs/default_dtypes.md}
cases:
  - id: x64.explicit.error
    claim: an explicit float64 request raises in error mode from 0.8.0
    run: jnp.zeros(2, dtype="float64")
    expect:
      - when: {x64: false, explicit_x64_dtypes: error, version: "<0.8.0"}
        dtype: float32
        note: the option does not exist yet
      - when: {x64: false, explicit_x64_dtypes: error, version: ">=0.8.0"}
        raises: {type: ValueError, match: "float64"}
"""


def test_a_change_the_spec_knows_of_is_a_change_even_when_it_holds_everywhere(
    tmp_path: Path,
) -> None:
    """Every release passes, but the expect block that applies changes at 0.8.0: that is the finding."""
    spec = tmp_path / "explicit.yaml"
    spec.write_text(SPEC)
    records: list[dict[str, Any]] = []
    for version, line in (("0.4.30", 8), ("0.7.2", 8), ("0.8.0", 11), ("0.10.2", 11)):
        run = _run(version, ERR, {"x64.explicit.error": ("passed", "")})
        run[2]["expect_line"], run[2]["spec_file"] = line, str(spec)
        records += run
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table(load_runs([path]))
    row = table.rows[0]
    assert set(row.cells.values()) == {"holds"} and row.differs(table.versions)
    assert row.changed_in(table.versions) == ["0.8.0"]
    change = summary(table)["changes"][0]
    assert (
        change["changed_in"] == ["0.8.0"]
        and change["first_holds"] == "0.4.30"
        and change["last_fails"] is None
    )
    assert change["spec_changes"][0]["modes"] == ["off-error"]
    assert change["reason"] == (
        "from 0.8.0, off-error: the spec expects line 11: when x64=off, explicit_x64_dtypes=error, version>=0.8.0 "
        "instead of line 8: when x64=off, explicit_x64_dtypes=error, version<0.8.0 (the option does not exist yet)"
    )
    assert "x64.explicit.error: changed in 0.8.0; holds from 0.4.30" in format_changes(table)


def test_same_block_everywhere_is_no_change(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = []
    for version in ("0.4.30", "0.10.2"):
        run = _run(version, OFF, {"a.b": ("passed", "")})
        run[2]["expect_line"] = 12
        records += run
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table(load_runs([path]))
    assert not table.rows[0].differs(table.versions) and summary(table)["changed"] == 0


def test_a_change_in_what_was_raised_is_found_where_the_spec_accepts_both(tmp_path: Path) -> None:
    """The spec allows either error over a range; the table still names the release that switched."""
    records: list[dict[str, Any]] = []
    raised = {
        "0.4.30": "jax._src.interpreters.ad.CustomVJPException",
        "0.5.3": "jax.errors.UnexpectedTracerError",
        "0.10.2": "jax.errors.UnexpectedTracerError",
    }
    for version, exc in raised.items():
        run = _run(version, OFF, {"vjp.closure": ("passed", "")})
        run[2]["actual"], run[2]["expect_line"] = {"raised": {"type": exc, "message": "..."}}, 5
        records += run
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table(load_runs([path]))
    row = table.rows[0]
    assert row.changed_in(table.versions) == ["0.5.3"]
    change = summary(table)["changes"][0]
    assert change["reason"] == (
        "from 0.5.3, off-warn: raised jax.errors.UnexpectedTracerError "
        "(was raised jax._src.interpreters.ad.CustomVJPException)"
    )
    assert change["spec_changes"] == [] and change["observed_changes"][0]["previous"] == "0.4.30"


def test_observed_key() -> None:
    # An exception: its type and the opening words of its message, up to the first value in it.
    assert (
        observed_key({"raised": {"type": "ValueError", "message": "x"}, "dtype": "float32"})
        == "raised ValueError (x...)"
    )
    assert (
        observed_key(
            {"raised": {"type": "TypeError", "message": "Argument 'y' of shape float32[]"}}
        )
        == observed_key(
            {"raised": {"type": "TypeError", "message": "Argument 'z' of shape float64[]"}}
        )
        == "raised TypeError (Argument...)"
    )
    assert (
        observed_key(
            {"raised": {"type": "TypeError", "message": "No constant handler for type: <class>"}}
        )
        == "raised TypeError (No constant handler for type...)"
    )
    assert observed_key({"raised": {"type": "ValueError", "message": "..."}}) == "raised ValueError"
    # A result: its dtype, and a scalar's value (the same dtype holding another value is a change).
    assert observed_key({"dtype": "int32", "value": 1, "shape": []}) == "dtype int32 = 1"
    assert observed_key({"dtype": "float64", "value": 0.1, "shape": []}) != observed_key(
        {"dtype": "float64", "value": 0.10000000149011612, "shape": []}
    )
    assert observed_key({"dtype": "int32", "value": [1, 2], "shape": [2]}) == "dtype int32"
    assert (
        observed_key({"dtype": "float0", "value": "array((b'',))", "shape": []}) == "dtype float0"
    )
    assert observed_key({"value": 1}) == observed_key(None) == ""


def test_a_spec_range_boundary_where_nothing_changed_is_no_change(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = []
    for version, line in (("0.5.3", 8), ("0.10.2", 11)):
        run = _run(version, OFF, {"vjp.closure": ("passed", "")})
        run[2]["actual"], run[2]["expect_line"] = (
            {"raised": {"type": "jax.errors.UnexpectedTracerError"}},
            line,
        )
        records += run
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table(load_runs([path]))
    assert not table.rows[0].differs(table.versions)


def test_prune_keeps_only_the_environments_in_use(tmp_path: Path) -> None:
    for name in ("jax-0.4.30-aaaa", "jax-0.4.30-bbbb", "jax-0.8.0-cccc"):
        (tmp_path / "envs" / name / "bin").mkdir(parents=True)
    removed = compat.prune_cache(
        tmp_path, [tmp_path / "envs" / "jax-0.4.30-bbbb", tmp_path / "envs" / "jax-0.8.0-cccc"]
    )
    assert [p.name for p in removed] == ["jax-0.4.30-aaaa"]
    assert sorted(p.name for p in (tmp_path / "envs").iterdir()) == [
        "jax-0.4.30-bbbb",
        "jax-0.8.0-cccc",
    ]


def test_from_results_builds_the_table_summary_and_report_without_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = _synthetic(tmp_path)
    out = tmp_path / "out"
    assert compat.main(parse(["--from-results", str(merged), "--out", str(out)])) == 0
    text = capsys.readouterr().out
    assert "x64.explicit.error: changed in 0.8.0" in text and "unavailable: jax 0.0.1" in text
    data = json.loads((out / "compat-summary.json").read_text())
    assert data["changed"] == 3 and data["unavailable"] == {
        "0.0.1": "pip install jax[cpu]==0.0.1 failed: no such version"
    }
    assert data["specs"]["spec_revision"] == spec_revision([SPECS_DIR])  # a run's own hash
    assert not (out / "compat").exists()  # nothing ran
    with pytest.raises(UsageError, match="--from-results .*nope.jsonl: no such file"):
        compat.main(parse(["--from-results", str(tmp_path / "nope.jsonl"), "--out", str(out)]))


# ---------------------------------------------------------------- where compat keeps its environments


def test_compat_environments_live_in_the_user_cache_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAX_CONFORMANCE_CACHE"}
    code = "from jax_conformance.compat.envs import default_cache_dir; print(default_cache_dir())"
    xdg = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(xdg) == tmp_path / "xdg" / "jax-conformance"
    home = subprocess.run(
        [sys.executable, "-c", code],
        env={
            **{k: v for k, v in env.items() if k != "XDG_CACHE_HOME"},
            "HOME": str(tmp_path / "home"),
        },
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(home) == tmp_path / "home" / ".cache" / "jax-conformance"
    assert REPO not in Path(home).parents
    given = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "JAX_CONFORMANCE_CACHE": str(tmp_path / "mine")},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(given) == tmp_path / "mine"
    helptext = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "compat", "--help"],
        env={**env, "HOME": str(tmp_path / "home")},
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "delete that directory to clear them" in " ".join(helptext.split())


def test_a_release_that_cannot_be_prepared_is_unavailable_and_the_others_go_on(
    tmp_path: Path,
) -> None:
    """compat/across: `each` runs for every release; a build that raises is an unavailable
    environment with the reason, not an error that stops the other releases."""
    from jax_conformance.compat.across import across_releases, prepare_env

    def build(release: str) -> envs.Environment:
        if release == "0.0.1":
            raise OSError("no such release")
        return envs.Environment(release, tmp_path / release, [], ok=True)

    seen: dict[str, envs.Environment] = {}

    def each(release: str) -> list[Any]:
        seen[release] = prepare_env(release, tmp_path, build)
        return []

    across_releases(["0.0.1", "0.8.0", "0.9.2"], each, jobs=1, build_jobs=2, say=lambda _: None)
    assert sorted(seen) == ["0.0.1", "0.8.0", "0.9.2"]
    assert seen["0.0.1"].reason == "OSError: no such release" and not seen["0.0.1"].ok
    assert seen["0.8.0"].ok and seen["0.9.2"].ok


def test_a_cached_environment_runs_this_checkouts_harness(tmp_path: Path) -> None:
    """An environment another checkout built (its editable install serves that checkout's harness,
    which may lack a module this one runs: `adapters/jax/as_of.py`) gets this checkout's harness
    when it is reused; the release's JAX is not installed again."""
    assert CHECKOUT is not None
    path = _foreign_env(tmp_path)
    env = envs.ensure_env("0.8.0", tmp_path, sys.executable, "cpython-3.11.7")
    assert env.ok and env.cached, env.reason
    where = subprocess.run(
        [str(env.python), "-c", "import jax_conformance; print(jax_conformance.__file__)"],
        capture_output=True,
        text=True,
        env=envs.clean_environ(path),
        check=True,
    )
    assert where.stdout.strip() == str(CHECKOUT / "conformance" / "__init__.py")
    assert envs.harness_root(env) == CHECKOUT / "conformance"


def _foreign_env(cache: Path) -> Path:
    """A cached, ready environment for 0.8.0 (a venv with setuptools, no JAX) whose harness is not
    this checkout's: none is installed, as after another checkout's or an older layout's build."""
    uv = envs.uv_binary()
    if uv is None:
        pytest.skip("uv is not installed")
    pins = envs.pins_for("0.8.0")
    path = cache / "envs" / f"jax-0.8.0-{envs.env_key('0.8.0', pins, 'cpython-3.11.7')}"
    made = subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=False)
    tools = subprocess.run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--offline",
            "--python",
            str(path / "bin" / "python"),
            "setuptools",
        ],
        check=False,
    )
    if made.returncode or tools.returncode:
        pytest.skip("uv could not make a venv with setuptools offline")
    (path / envs.MARKER).write_text(json.dumps({"versions": {"jax": "0.8.0"}}))
    return path


# Reuses the cached environment from a process of its own once both processes are ready.
REUSE_AT_ONCE = """
import sys, time
from pathlib import Path
from jax_conformance.compat import envs
cache, me, other = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
me.touch()
while not other.exists():
    time.sleep(0.01)
env = envs.ensure_env("0.8.0", cache, sys.executable, "cpython-3.11.7")
print(f"ok={env.ok} {env.reason}".strip())
"""


def test_two_processes_reusing_one_environment_repoint_it_once(tmp_path: Path) -> None:
    """Two runs (two checkouts sharing one cache, or one checkout twice) reuse an environment
    whose harness is another's at the same moment: one installs this checkout's harness, under a
    lock beside the environment; the other waits and finds it done, rather than installing over
    it while it is being installed (and, mid-run, under the first run's mode processes)."""
    assert CHECKOUT is not None
    path = _foreign_env(tmp_path)
    ready = [tmp_path / "ready-1", tmp_path / "ready-2"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", REUSE_AT_ONCE, str(tmp_path), str(me), str(other)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for me, other in (ready, ready[::-1])
    ]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [o.strip().splitlines()[-1:] for o in outputs] == [["ok=True"]] * 2, outputs
    log = (tmp_path / "logs" / "jax-0.8.0.log").read_text()
    assert log.count(f"installing {CHECKOUT}\n") == 1, log
    assert envs.harness_root(envs.Environment("0.8.0", path, [])) == CHECKOUT / "conformance"
