"""A user's second hour (issue #28): selection that means the same in every mode, spec errors
outside the verdict, usage errors before anything starts, `report` on bad files, and the smaller
things a user trips over past the first run.

Each test is small: a spec directory under tmp_path and the reference adapter where JAX is not
needed; `report` is called in-process.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from jax_conformance.cli import main as cli_main
from jax_conformance.report import build_site
from jax_conformance.report.model import build_model
from jax_conformance.report.site import headlines

from tests.conftest import SpecDir, read_results
from tests.test_report import run_file
from tests.test_run_dirs import run

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


# ---------------------------------------------------------------- 1. selection over the case, never the mode


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


def test_a_run_over_modes_whose_selections_differ_says_so() -> None:
    from jax_conformance.commands.run import selection_note

    assert selection_note({("reference", "off-warn"): 4, ("reference", "on"): 4}) == ""
    note = selection_note({("reference", "off-warn"): 4, ("reference", "off-error"): 7})
    assert (
        "selected different cases in different modes" in note
        and "off-warn 4" in note
        and "off-error 7" in note
    )


# ---------------------------------------------------------------- 2. spec errors are their own category


def test_an_import_of_a_module_that_is_not_the_implementation_is_a_spec_error(
    specdir: SpecDir, tmp_path: Path
) -> None:
    specdir.write(
        "demo.yaml",
        """
        topic: demo.imp
        source: {doc: docs/default_dtypes.md}
        setup: |
          import no_such_module_for_jax_conformance
        cases:
          - id: demo.imp.a
            claim: arange of ints is int32
            run: jnp.arange(3)
            expect:
              - dtype: int32
    """,
    )
    specdir.write(
        "schema.yaml",
        """
        topic: demo.schema
        source: {doc: docs/default_dtypes.md}
        cases:
          - id: demo.schema.typo
            claim: a typo in an outcome key
            run: jnp.arange(3)
            expect:
              - dtpye: int32
    """,
    )
    out = tmp_path / "r.jsonl"
    result = specdir.run(f"--results={out}", "--x64=off", adapter="reference")
    cases = {r["case"]: r for r in read_results(out) if r["record"] == "case"}
    imp = cases["demo.imp.a"]
    assert imp["outcome"] == "error" and imp.get("spec_error") is True, imp
    assert "no_such_module_for_jax_conformance" in imp["message"] and "spec error" in imp["message"]
    schema = next(r for c, r in cases.items() if c.startswith("<"))
    assert schema["outcome"] == "error" and schema.get("spec_error") is True, schema
    assert result.ret == 1  # CI still notices


def test_a_spec_error_is_outside_the_verdict(tmp_path: Path) -> None:
    extra = {
        "t.e": {"spec_error": True, "basis": "documented"},
        **{f"t.{c}": {"basis": "documented"} for c in "abcd"},
    }
    path = run_file(
        tmp_path / "r.jsonl",
        {"t.a": "passed", "t.b": "passed", "t.c": "passed", "t.d": "passed", "t.e": "error"},
        extra=extra,
    )
    model = build_model([path])
    [col] = model.columns
    assert col.unexpected == 0 and col.spec_errors == 1
    assert col.compliance == 100.0
    [head] = headlines(model)
    assert (head.conform, head.applicable, head.unexpected, head.spec_errors) == (4, 4, 0, 1)
    assert head.share == "100.0%"
    index, _ = build_site([path], tmp_path / "site")
    assert index is not None
    verdict = re.sub(
        r"<[^>]+>|\s+", " ", index.read_text().split('id="verdict"')[1].split("</section>")[0]
    )
    assert "4 of 4 applicable cells conform (100.0%)" in verdict and "0 unexpected" in verdict
    assert "1 spec error, not counted" in verdict


# ---------------------------------------------------------------- 3. usage errors before anything
# starts (see also test_cli_errors)


def test_a_flag_value_the_flag_cannot_take_is_a_usage_error_in_pytest_too(specdir: SpecDir) -> None:
    specdir.write("warn.yaml", SELECTION)
    result = specdir.run("--flag=jax_custom_vjp3=maybe", adapter="reference")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "INTERNALERROR" not in text
    assert "jax_custom_vjp3=maybe" in text and "true or false" in text


# ---------------------------------------------------------------- 6. report on bad files


def _report(
    *argv: str, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = cli_main(["report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_on_a_corrupt_record_names_file_and_line_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = run_file(tmp_path / "in" / "r.jsonl", {"t.a": "passed", "t.b": "passed"})
    lines = path.read_text().splitlines()
    lines[2] = lines[2][
        : len(lines[2]) // 2
    ]  # the first case record, torn in the middle of the file
    path.write_text("\n".join(lines) + "\n")
    code, out, err = _report(
        str(path),
        "--out",
        str(tmp_path / "site"),
        cwd=tmp_path,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 2, (out, err)
    assert f"{path}:3:" in err and "corrupt" in err and "--allow-partial" in err
    assert not (tmp_path / "site").exists()
    code, out, err = _report(
        str(path),
        "--out",
        str(tmp_path / "site"),
        "--allow-partial",
        cwd=tmp_path,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 0, (out, err)
    assert f"{path}:3:" in err and (tmp_path / "site" / "index.html").is_file()


def test_report_on_a_torn_last_line_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = run_file(tmp_path / "r.jsonl", {"t.a": "passed"}, end=False)
    with open(path, "a") as f:
        f.write('{"record":"case","case":"t.b","outc')  # killed mid-write
    code, out, err = _report(
        str(path),
        "--out",
        str(tmp_path / "site"),
        cwd=tmp_path,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 0, (out, err)
    assert "warning:" in err and "cut off" in err


def test_report_on_a_file_that_is_not_results_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("hello\nthis is not json\n")
    code, out, err = _report(str(garbage), cwd=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2, (out, err)
    assert f"not a jax-conformance results file: {garbage}" in err
    assert not (tmp_path / "reports").exists()


# ---------------------------------------------------------------- 2 and 7 in one run: what the console says


def test_run_console_counts_spec_errors_apart_and_never_overcounts(tmp_path: Path) -> None:
    specs = tmp_path / "specs" / "demo"
    specs.mkdir(parents=True)
    (specs / "good.yaml").write_text(
        textwrap.dedent("""
        topic: demo.good
        source: {doc: docs/default_dtypes.md}
        basis: documented
        cases:
          - id: demo.good.a
            claim: arange of ints is int32
            run: jnp.arange(3)
            expect:
              - dtype: int32
          - id: demo.good.typo
            claim: a typo in the spec's own code
            run: jnpp.arange(3)
            expect:
              - dtype: int32
    """).lstrip()
    )
    (specs / "broken.yaml").write_text("topic: demo.broken\nsource: {doc: x\ncases: []\n")
    proc = run("--modes", "off-warn", "--out", str(tmp_path / "out"), cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text  # CI notices
    for done, total in re.findall(r"\]\s+(\d+)/(\d+)", text):
        assert int(done) <= int(total), text  # never 3/2
    assert "None]" not in text, text
    assert re.search(r"2 spec errors, not counted", text), text
    results = [r for r in read_results(tmp_path / "out" / "results.jsonl") if r["record"] == "case"]
    assert sum(1 for r in results if r.get("spec_error")) == 2
    assert json.dumps(results)  # plain JSON


# ---------------------------------------------------------------- 7. YAML: a lambda in a plain scalar


def test_a_lambda_in_a_plain_run_value_hints_at_a_block_scalar(tmp_path: Path) -> None:
    from jax_conformance.errors import SpecFileErrors
    from jax_conformance.spec.loader import load_spec

    path = tmp_path / "lam.yaml"
    path.write_text(
        textwrap.dedent("""
        topic: demo.lam
        source: {doc: docs/default_dtypes.md}
        cases:
          - id: demo.lam.grad
            claim: grad of a lambda
            run: jax.grad(lambda x: x * 2.0)(1.0)
            expect:
              - dtype: float32
    """).lstrip()
    )
    with pytest.raises(SpecFileErrors) as info:
        load_spec(path, cache=None)
    text = str(info.value)
    assert "YAML-SYNTAX" in text and "run: |" in text, text
