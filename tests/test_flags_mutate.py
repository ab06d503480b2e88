"""`jax-conformance mutate` in modes that set JAX flags: each mode's flags reach its pytest processes
(so a mutant that lives only under jax_custom_vjp3 is killed in `off-warn+jax_custom_vjp3` and not in
`off-warn`), a flag the reference does not model is a usage error, and `+upcoming` expands as in `run`.

The end-to-end test runs real mutate processes over a one-case spec whose two expect blocks differ
by the flag: were the flag dropped on the way to the worker, the default block would be chosen and
the mutant would survive in the flagged mode too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jax_conformance.commands import mutate
from jax_conformance.mode import Mode
from jax_conformance.plugin import PACKAGE_DIR
from jax_conformance.records import read_mutation

REPO = PACKAGE_DIR.parent

SPEC = """
topic: demo.mutate_flags
title: A custom_vjp closing over a vmap Tracer, whose outcome the flag decides
source: {file: tests/custom_api_test.py, function: CustomVJP3Test.test_closure_with_vmap2}
basis: tested
cases:
  - id: demo.mutate_flags.closure-over-vmap-tracer
    claim: >-
      the classic custom_vjp may close over the mapped value; under jax_custom_vjp3 that is
      an UnexpectedTracerError
    setup: |
      def h(z):
        def f(x):
          @jax.custom_vjp
          def g(y):
            return x * y
          g.defvjp(lambda y: (x * y, None), lambda _, w: (x * w,))
          return g(z)
        return jax.vmap(f)(jnp.arange(3., dtype='float32'))
    run: h(jnp.float32(2.))
    expect:
      - when: {flags: {jax_custom_vjp3: true}}
        raises: {type: jax.errors.UnexpectedTracerError, match: "custom_vjp functions can't close over Tracers"}
      - dtype: float32
        value: [0., 2., 4.]
"""


@pytest.fixture
def specdir(tmp_path: Path) -> Path:
    d = tmp_path / "specs"
    d.mkdir()
    (d / "demo.yaml").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    return d


def _mutate(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "mutate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_each_mutant_process_gets_its_modes_flags_on_the_pytest_command(tmp_path: Path) -> None:
    args = argparse.Namespace(exhaustive=False, specs=None, keyword=None)
    job = mutate._job(
        "vjp3-closure-allowed", Mode.from_slug("off-warn+jax_custom_vjp3"), tmp_path, args
    )
    assert "--flag=jax_custom_vjp3=true" in job.argv and "--x64=off" in job.argv
    assert not any(a.startswith("--flag") for a in mutate._job(None, Mode(), tmp_path, args).argv)


@pytest.mark.slow
def test_a_flag_only_mutant_is_killed_in_the_flagged_mode_only(
    specdir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mutation.json"
    proc = _mutate(
        "--mutants",
        "vjp3-closure-allowed",
        "--modes",
        "off-warn,off-warn+jax_custom_vjp3",
        "--exhaustive",
        "--specs",
        str(specdir),
        "--jobs",
        "2",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = read_mutation(out)
    assert summary is not None
    row = summary["mutants"][0]
    assert row["modes_run"] == ["off-warn", "off-warn+jax_custom_vjp3"]
    assert row["killed"] and row["killed_by"] == [
        "demo.mutate_flags.closure-over-vmap-tracer[off-warn+jax_custom_vjp3]"
    ]
    assert (
        "can't close over Tracers" not in row["first_message"]
    )  # the mutant let the closure through
    assert (
        "(baseline)" in proc.stdout
        and "off-warn+jax_custom_vjp3   0 failing of   1 cases" in proc.stdout
    )


def test_a_flag_the_reference_does_not_model_is_a_usage_error(tmp_path: Path) -> None:
    proc = _mutate(
        "--mutants",
        "vjp3-closure-allowed",
        "--modes",
        "off-warn+jax_no_such_flag",
        "--out",
        str(tmp_path / "m.json"),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "flag jax_no_such_flag not available in adapter 'reference'" in proc.stderr
    assert "baseline" not in proc.stdout  # refused before any pytest process


def test_upcoming_adds_the_references_upgrade_flags_together_and_each_alone(specdir: Path) -> None:
    modes = mutate._modes(argparse.Namespace(modes=["off-warn,+upcoming"], specs=[str(specdir)]))
    assert [m.slug for m in modes] == [
        "off-warn",
        "off-warn+jax_custom_vjp3+jax_disable_bwd_checks",
        "off-warn+jax_custom_vjp3",
        "off-warn+jax_disable_bwd_checks",
    ]
