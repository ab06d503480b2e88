"""The checks of what a user passed (jax_conformance.usage), as the pytest plugin applies them:
-k and -m select over the case (its id, claim and tags), never the mode, the backend or the file;
a flag value the flag cannot take, a `--specs` path that holds no spec and a case timeout of zero
are usage errors before anything starts.

Each test is small: a spec directory under tmp_path and the reference adapter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jax_conformance.plugin import PACKAGE_DIR

from tests.conftest import REPO, SpecDir

# A spec file whose name, `warn.yaml`, and directory say nothing the cases do: -k over the case and
# its claim never sees the path, the mode (off-warn, off-error, +jax_custom_vjp3) or the backend.
SELECTION = """
topic: demo.sel
source: {doc: docs/default_dtypes.md}
basis: documented
cases:
  - id: demo.sel.plain
    claim: arange of ints is int32 with x64 off
    run: jnp.arange(3)
    expect:
      - dtype: int32
  - id: demo.sel.raises
    claim: a bad dtype name raises a TypeError
    tags: [errors]
    run: jnp.zeros(2, dtype="no-such-dtype")
    expect:
      - raises: {type: TypeError}
"""


# ---------------------------------------------------------------- selection over the case, never the mode


MODE = ("--explicit-x64-dtypes=error", "--flag=jax_custom_vjp3=true")  # off-error+jax_custom_vjp3


@pytest.mark.parametrize(
    ("keyword", "selected"),
    [
        (
            "error",
            ["demo.sel.raises"],
        ),  # its tag `errors` (and its claim's TypeError), not the mode's name
        (
            "custom_vjp or cpu or warn or off-error",
            [],
        ),  # never a flag the mode sets, the backend, the file's name, the mode
        ("demo.sel.plain[", ["demo.sel.plain"]),  # `ID[`: that case alone, in any mode
    ],
    ids=["case-not-mode", "never-mode-backend-file", "id-bracket"],
)
def test_k_matches_the_case_its_claim_and_tags_never_the_mode(
    specdir: SpecDir, keyword: str, selected: list[str]
) -> None:
    specdir.write("warn.yaml", SELECTION)
    result = specdir.run(
        "-k", keyword, "--collect-only", "-q", "--x64=off", *MODE, adapter="reference"
    )
    ids = sorted(line.split("::")[-1].split("[")[0] for line in result.stdout.lines if "::" in line)
    assert ids == selected, result.stdout.str()


def test_k_words_match_the_id_claim_and_tags_as_pytest_matches_names() -> None:
    from jax_conformance.usage import keyword_selection, mark_selection

    words = ["demo.sel.plain", "arange of ints is int32 with x64 off", "dtypes"]
    for expr, expected in [
        ("int32", True),
        ("INT32", True),
        ("sel.plain and not TypeError", True),
        ("dtype", True),
        ("(plain or raises) and x64", True),
        ("warn", False),
        ("cpu", False),
        ("not plain", False),
    ]:
        selects = keyword_selection(expr)
        assert selects is not None and selects(words) is expected, expr
    by_tags = mark_selection("dtypes and not errors")
    assert (
        by_tags is not None
        and by_tags(["dtypes"])
        and not by_tags(["dtypes", "errors"])
        and not by_tags(["dtype"])
    )


# ---------------------------------------------------------------- usage errors before anything starts
# (the command line's: test_cli_errors)


def test_a_flag_value_the_flag_cannot_take_is_a_usage_error_in_pytest_too(specdir: SpecDir) -> None:
    specdir.write("warn.yaml", SELECTION)
    result = specdir.run("--flag=jax_custom_vjp3=maybe", adapter="reference")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "INTERNALERROR" not in text
    assert "jax_custom_vjp3=maybe" in text and "true or false" in text


def _pytest_suite(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(PACKAGE_DIR),
            "--adapter=reference",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_pytest_names_a_spec_path_that_does_not_exist_or_holds_no_spec(tmp_path: Path) -> None:
    # Before: "no tests ran" (exit 5) without naming the path.
    proc = _pytest_suite("--specs", str(tmp_path / "nonexistent"))
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
    assert f"--specs {tmp_path / 'nonexistent'}: no such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    (tmp_path / "empty").mkdir()
    proc = _pytest_suite("--specs", str(tmp_path / "empty"))
    assert proc.returncode == 4 and "holds no spec file" in proc.stderr, proc.stdout + proc.stderr


def test_pytest_refuses_a_case_timeout_of_zero_or_less(tmp_path: Path) -> None:
    # Before: accepted, and every case became a timeout.
    for bad in ("-1", "0", "nan"):
        proc = _pytest_suite("--case-timeout", bad, "--collect-only")
        assert proc.returncode == 4, (bad, proc.stdout + proc.stderr)
        assert "--case-timeout" in proc.stderr and "above 0" in proc.stderr, proc.stderr
