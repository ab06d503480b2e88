"""Every usage error of the real CLI: one line naming what was wrong and what is accepted,
exit status 2, no traceback, nothing started or written.

Table-driven over every subcommand's options with bad values; each row runs
`python -m jax_conformance.cli ...` in a fresh directory and checks that it is left as it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jax_conformance.plugin import PACKAGE_DIR

REPO = PACKAGE_DIR.parent
MODES = "the modes are off-warn, off-error, off-allow, on"

SPEC = """
topic: demo.cli
title: One case, for the usage-error rows that need a valid spec directory
source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}
basis: documented
cases:
  - id: demo.cli.arange
    claim: jnp.arange of Python ints gives int32 with x64 off
    run: jnp.arange(3)
    expect:
      - when: {x64: false}
        dtype: int32
"""

# A user's spec with a typo'd key (`valeu`) on line 12: refused before any mode process starts.
TYPO = SPEC.replace("        dtype: int32", "        dtype: int32\n        valeu: [0, 1, 2]")

# A required key misspelt (`expct`, line 9): the typo is the problem, not the key it leaves missing.
MISSPELT = SPEC.replace("    expect:", "    expct:")

# (subcommand and its arguments, words the one line must hold). {SPECS}: a directory with a spec;
# {EMPTY}: an empty directory; {RESULTS}: a results file; {FINISHED}: a directory holding a finished run.
ROWS: list[tuple[str, str]] = [
    ("nosuchcommand", "invalid choice: 'nosuchcommand'"),
    # run
    ("run --modes bogus", f"--modes 'bogus': unknown mode; {MODES}"),
    ("run --modes ''", f"--modes '' names no mode; {MODES}"),
    ("run --modes off-warn,sideways", f"--modes 'sideways': unknown mode; {MODES}"),
    ("run --adapter nope", "--adapter nope: unknown adapter; installed: jax, reference"),
    (
        "run --adapter no_such_module:Adapter",
        "--adapter no_such_module:Adapter: no module 'no_such_module'",
    ),
    ("run --adapter reference --adapter nope", "--adapter nope: unknown adapter"),
    ("run --case-timeout -1", "argument --case-timeout: '-1': give a number of seconds above 0"),
    ("run --case-timeout 0", "argument --case-timeout: '0': give a number of seconds above 0"),
    ("run --case-timeout nan", "argument --case-timeout: 'nan': give a number of seconds above 0"),
    ("run --case-timeout soon", "argument --case-timeout: 'soon' is not a number of seconds"),
    ("run --jobs 0", "argument --jobs/-j: '0': give 1 or more"),
    ("run --jobs many", "argument --jobs/-j: 'many' is not a whole number"),
    ("run --specs /nonexistent", "--specs /nonexistent: no such file or directory"),
    ("run --specs {EMPTY}", "--specs {EMPTY}: holds no spec file"),
    ("run --specs {RESULTS}", "--specs {RESULTS}: not a spec file"),
    ("run --expectations /nonexistent.yaml", "--expectations /nonexistent.yaml: no such file"),
    (
        "run --baseline /nonexistent.jsonl",
        "--baseline /nonexistent.jsonl: no such file or directory",
    ),
    (
        "run --out {FINISHED}",
        "--out {FINISHED} already holds a run (results.jsonl, modes, index.html); pass --force",
    ),
    ("run --out {RESULTS}", "--out {RESULTS}: not a directory"),
    ("run -k 'and ('", "-k 'and (': not a pytest expression (at column 1:"),
    ("run -m 'x64 and'", "-m 'x64 and': not a pytest expression (at column 8:"),
    ("run --progress sideways", "argument --progress: invalid choice: 'sideways'"),
    ("run --no-such-option", "unrecognized arguments: --no-such-option"),
    # found before anything starts (#28): an absent backend, a flag value the flag cannot take, a selection of nothing
    (
        "run --adapter reference --specs {SPECS} --backend gpu",
        "--backend gpu: not available in adapter 'reference'; it has: cpu",
    ),
    (
        "run --adapter reference --specs {SPECS} --modes off-warn+jax_custom_vjp3=maybe",
        "--modes off-warn+jax_custom_vjp3=maybe: jax_custom_vjp3 takes true or false, not 'maybe'",
    ),
    ("run --adapter reference --specs {SPECS} -k nomatch", "-k 'nomatch' selects no case"),
    ("run --adapter reference --specs {SPECS} -m drift", "-m 'drift' selects no case"),
    (
        "run --specs {TYPO} --modes off-warn",
        "--specs: {TYPO}/demo/typo.yaml:12: SCHEMA .cases[0].expect[0]: unknown key 'valeu'",
    ),
    (
        "run --adapter reference --specs {SPECS} --specs {TYPO}",
        "{TYPO}/demo/typo.yaml:12: SCHEMA",
    ),
    (
        "run --flag jax_custom_vjp3=true",
        "a flag is part of a mode: --modes off-warn+jax_custom_vjp3=true",
    ),
    # report
    ("report", "the following arguments are required: RESULTS"),
    ("report /nonexistent.jsonl", "/nonexistent.jsonl: no such file or directory"),
    ("report {EMPTY}", "{EMPTY}: holds no results"),
    (
        "report {RESULTS} --baseline /nonexistent.jsonl",
        "--baseline /nonexistent.jsonl: no such file or directory",
    ),
    ("report {RESULTS} --mutation /nonexistent.json", "--mutation /nonexistent.json: no such file"),
    (
        "report {RESULTS} --out {FINISHED}",
        "--out {FINISHED} already holds a run (results.jsonl, modes, index.html); pass --force",
    ),
    # lint
    ("lint /nonexistent", "/nonexistent: no such file or directory"),
    ("lint {EMPTY}", "{EMPTY}: holds no spec file"),
    ("lint --adapter nope", "--adapter nope: unknown adapter; installed: jax, reference"),
    ("lint {SPECS} --adapter nope", "--adapter nope: unknown adapter"),
    # mutate
    ("mutate --modes bogus", f"--modes 'bogus': unknown mode; {MODES}"),
    ("mutate --modes ''", f"--modes '' names no mode; {MODES}"),
    ("mutate --mutants no-such-mutant", "unknown mutant no-such-mutant; see --list"),
    ("mutate --jobs 0", "argument --jobs/-j: '0': give 1 or more"),
    ("mutate --specs /nonexistent", "--specs /nonexistent: no such file or directory"),
    # diff
    ("diff --modes bogus", f"--modes 'bogus': unknown mode; {MODES}"),
    (
        "diff --modes +upcoming",
        f"--modes +upcoming: this command runs only the modes named; {MODES}",
    ),
    ("check --jobs 0", "argument --jobs/-j: '0': give 1 or more"),
    ("check --markdown", "--markdown goes with --items"),
    (
        "diff --adapters nope,reference",
        "--adapters nope: unknown adapter; installed: jax, reference",
    ),
    ("diff --adapters jax", "--adapters jax: name two adapters"),
    ("diff --budget 0", "argument --budget: '0': give 1 or more"),
    ("diff --timeout -1", "argument --timeout: '-1': give a number of seconds above 0"),
    ("diff --areas nope", "--areas nope: unknown area nope"),
    ("diff --seed x", "argument --seed: invalid int value: 'x'"),
    # compat
    ("compat --versions banana", "argument --versions:"),
    ("compat --modes bogus", f"--modes 'bogus': unknown mode; {MODES}"),
    (
        "compat --modes off-warn,+upcoming",
        f"--modes +upcoming: this command runs only the modes named; {MODES}",
    ),
    ("compat --jobs 0", "argument --jobs/-j: '0': give 1 or more"),
    ("compat --build-jobs 0", "argument --build-jobs: '0': give 1 or more"),
    (
        "compat --install-timeout -1",
        "argument --install-timeout: '-1': give a number of seconds above 0",
    ),
    ("compat --run-timeout 0", "argument --run-timeout: '0': give a number of seconds above 0"),
    ("compat --env 0.4.30", "--env '0.4.30': use VERSION=PATH"),
    ("compat --interpreter 3.12", "--interpreter '3.12': use MINOR=PATH"),
    ("compat --from-results /nonexistent.jsonl", "--from-results /nonexistent.jsonl: no such file"),
    ("compat --from-results {RESULTS} --out {FINISHED}", "--out {FINISHED} already holds a run"),
    # upgrade: refused before pip is asked or an environment built
    ("upgrade --from 0.4.33 --to 0.4.36 -k nomatch", "-k 'nomatch' selects no case"),
    ("upgrade --from 0.4.33 --to 0.4.36 -- -k nomatch", "-k 'nomatch' selects no case"),
    ("upgrade --from 0.4.33 --to 0.4.36 -m 'x64 and'", "-m 'x64 and': not a pytest expression"),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cli-errors")
    specs = root / "specs" / "demo"
    specs.mkdir(parents=True)
    (specs / "cli.yaml").write_text(textwrap.dedent(SPEC).lstrip())
    (root / "typo" / "demo").mkdir(parents=True)
    (root / "typo" / "demo" / "typo.yaml").write_text(textwrap.dedent(TYPO).lstrip())
    (root / "misspelt" / "demo").mkdir(parents=True)
    (root / "misspelt" / "demo" / "typo.yaml").write_text(textwrap.dedent(MISSPELT).lstrip())
    (root / "empty").mkdir()
    results = root / "results.jsonl"
    results.write_text(
        "\n".join(
            json.dumps(r)
            for r in (
                {
                    "record": "run",
                    "run_id": "r1",
                    "adapter": "jax",
                    "implementation_version": "0.10.2",
                    "mode": {"x64": False, "explicit_x64_dtypes": "warn"},
                    "backends": ["cpu"],
                },
                {"record": "end", "run_id": "r1", "interrupted": False, "exitstatus": 0},
            )
        )
        + "\n"
    )
    finished = root / "finished"
    (finished / "modes").mkdir(parents=True)
    (finished / "results.jsonl").write_text(results.read_text())
    (finished / "index.html").write_text("<p>an earlier report</p>")
    return {
        "SPECS": root / "specs",
        "TYPO": root / "typo",
        "MISSPELT": root / "misspelt",
        "EMPTY": root / "empty",
        "RESULTS": results,
        "FINISHED": finished,
    }


def snapshot(root: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*")}


@pytest.mark.parametrize(("command", "words"), ROWS, ids=[r[0] for r in ROWS])
def test_a_usage_error_is_one_line_exit_2_and_starts_nothing(
    command: str, words: str, places: dict[str, Path], tmp_path: Path
) -> None:
    import shlex

    argv = [part.format(**places) for part in shlex.split(command)]
    before = snapshot(places["SPECS"].parent)
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    err = proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stdout}{err}"
    assert "Traceback" not in err and "Error:" not in err.split(":", 1)[0], err
    assert len(err.strip().splitlines()) == 1, f"not one line:\n{err}"
    name = (
        argv[0]
        if argv[0] in ("run", "report", "lint", "mutate", "compat", "diff", "check", "upgrade")
        else ""
    )
    assert err.startswith(f"jax-conformance {name}".strip() + ":"), err
    assert words.format(**places) in err, err
    assert proc.stdout == "", f"printed as if it started:\n{proc.stdout}"
    # nothing written: no reports/ here, no change where the inputs are
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
    assert snapshot(places["SPECS"].parent) == before


def test_a_misspelt_key_is_named_whole_at_its_line_with_every_key_allowed(
    places: dict[str, Path], tmp_path: Path
) -> None:
    """The one line names the typo at its own line, the key it is likely meant to be, and the
    keys a case takes, whole (the required key it leaves missing is the same problem, not the
    first of two)."""
    from jax_conformance.spec.schema import schema

    case_keys = sorted(schema()["$defs"]["case"]["properties"])
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "run", "--specs", str(places["MISSPELT"])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr == (
        f"jax-conformance run: --specs: {places['MISSPELT']}/demo/typo.yaml:9: SCHEMA .cases[0]: "
        f"unknown key 'expct' (did you mean 'expect'?; allowed: {', '.join(case_keys)})\n"
    )


def test_a_spec_error_line_after_a_run_is_whole(places: dict[str, Path], tmp_path: Path) -> None:
    """A spec that fails inside a mode process (a file loading in one mode only, say) is listed
    after the table by its first line, whole: a list of the keys allowed is never cut midway."""
    from jax_conformance.commands.run import SHOWN_LINE_CHARS, unexpected_cases
    from jax_conformance.errors import SpecFileErrors
    from jax_conformance.launch.scheduler import ModeProcess
    from jax_conformance.mode import Mode
    from jax_conformance.records import encode
    from jax_conformance.spec.loader import load_spec

    spec = places["MISSPELT"] / "demo" / "typo.yaml"
    with pytest.raises(SpecFileErrors) as broken:
        load_spec(spec)
    message = str(broken.value)
    assert len(message) > SHOWN_LINE_CHARS  # long enough to have been cut
    record = {"record": "case", "case": "<demo/typo.yaml>", "outcome": "error", "spec_error": True}
    results = tmp_path / "results.jsonl"
    results.write_bytes(encode({**record, "message": message}))
    job = ModeProcess("jax", Mode.from_slug("off-warn"), results, tmp_path / "log")
    job.tail.poll()
    [line] = unexpected_cases([job], spec_errors=True)
    assert line == f"ERROR    <demo/typo.yaml> [jax off-warn] {message}", line
