"""The harness holds: broken specs, crashing and hanging cases, leaking cases, kills, hostile input.

Every test runs the real thing in a subprocess (`python -m pytest conformance/ --adapter=jax`,
`jax-conformance run|report|lint`) over the deliberately bad spec directories under
tests/fixtures/reliability/ (never under specs/), and reads the results file it wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from jax_conformance.records import load_runs
from jax_conformance.spec.loader import load_spec

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "reliability"
MODE = ("--x64=off", "--explicit-x64-dtypes=warn")
# The out-of-memory case reserves 16 GiB; JAX itself reserves about 1.5 GB of address space.
MEMORY_LIMIT_MB = "8192"
# One record is one line; the writer cuts messages at 20,000 characters and the worker at 100,000.
MAX_RECORD_BYTES = 200_000


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), **extra}


def suite_cmd(specs: list[Path], results: Path, *args: str) -> list[str]:
    """`pytest conformance/` over these spec directories in one mode, writing `results`."""
    spec_args = [a for d in specs for a in ("--specs", str(d))]
    return [
        sys.executable,
        "-m",
        "pytest",
        "conformance/",
        "--adapter=jax",
        *MODE,
        "-p",
        "no:cacheprovider",
        "-q",
        *spec_args,
        "--results",
        str(results),
        *args,
    ]


def run_suite(
    specs: list[Path], results: Path, *args: str, timeout: float = 600, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        suite_cmd(specs, results, *args),
        cwd=REPO,
        env=env(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def strict_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a results file as a JSON object: split on "\\n" only, no partial last line allowed."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} ends inside a record: {data[-200:]!r}"
    records = []
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        assert len(line) < MAX_RECORD_BYTES, f"{path}:{number}: record of {len(line):,} bytes"
        record = json.loads(line.decode("utf-8"))
        assert isinstance(record, dict), f"{path}:{number}"
        records.append(record)
    return records


def outcomes(path: Path) -> dict[str, dict[str, Any]]:
    """case id -> its record, for a file holding one run (a case recorded twice fails the test)."""
    [run] = load_runs([path])
    assert not run.problems, run.problems
    cases = run.cases
    ids = Counter(r["case"] for r in cases)
    assert all(n == 1 for n in ids.values()), [i for i, n in ids.items() if n > 1]
    return {r["case"]: r for r in cases}


def run_line(spec: Path, case_id: str) -> int:
    [case] = [c for c in load_spec(spec).cases if c.id == case_id]
    return case.run.line


# ---------------------------------------------------------------- broken specs


def test_broken_spec_is_one_collection_error_and_every_other_case_runs(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "good.yaml").write_text(
        textwrap.dedent("""\
        topic: good
        source: {observed: tests/test_reliability.py}
        cases:
          - id: good.one
            claim: arange gives int32 with x64 off
            run: jnp.arange(3)
            expect: [{dtype: int32}]
          - id: good.two
            claim: zeros gives float32 with x64 off
            run: jnp.zeros(2)
            expect: [{dtype: float32}]
        """),
        encoding="utf-8",
    )
    (specs / "broken.yaml").write_text(
        textwrap.dedent("""\
        topic: broken
        source: {observed: tests/test_reliability.py}
        cases:
          - id: broken.regex
            claim: a pattern that does not compile
            run: jnp.arange(3)
            expect:
              - raises: {type: ValueError, match: "(unclosed"}
          - id: broken.fine-but-in-a-broken-file
            claim: never collected, the file is broken
            run: jnp.arange(3)
            expect: [{dtype: int32}]
        """),
        encoding="utf-8",
    )
    results = tmp_path / "results.jsonl"
    proc = run_suite([specs], results)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "broken.yaml:8: REGEX-INVALID" in out
    assert "2 passed, 1 error" in out.splitlines()[-1], out[-2000:]
    records = outcomes(results)
    assert {k: r["outcome"] for k, r in records.items() if k.startswith("good.")} == {
        "good.one": "passed",
        "good.two": "passed",
    }
    [error] = [r for r in records.values() if r["case"].startswith("<")]
    assert (error["outcome"], error["line"]) == ("error", 8) and "REGEX-INVALID" in error["message"]


# ---------------------------------------------------------------- crashes


def check_crashes(
    rec: dict[str, dict[str, Any]], spec: Path = FIXTURES / "crash" / "crashes.yaml"
) -> None:
    """The crash fixture's records: five kinds of crash recorded with what is known, every canary passed."""
    by = {k.rsplit(".", 1)[1]: r for k, r in rec.items() if k.startswith("reliability.crash.")}
    assert len(by) == 9, sorted(by)
    assert {k for k, r in by.items() if r["outcome"] == "passed"} == {
        "canary-1",
        "canary-2",
        "canary-3",
        "canary-4",
    }
    assert {k for k, r in by.items() if r["outcome"] == "crashed"} == {
        "os-exit",
        "segfault",
        "abort",
        "out-of-memory",
        "system-exit",
    }
    assert by["os-exit"]["actual"]["crash"]["exit_status"] == 3
    assert "exited with status 3" in by["os-exit"]["message"]
    for name, sig in (("segfault", "SIGSEGV"), ("abort", "SIGABRT")):
        crash = by[name]["actual"]["crash"]
        assert crash["signal"] == sig
        # faulthandler's stack names the spec line the case died on.
        line = run_line(spec, f"reliability.crash.{name}")
        assert f'crashes.yaml", line {line} in <module>' in crash["stderr_tail"], crash[
            "stderr_tail"
        ]
    oom = by["out-of-memory"]
    assert oom["actual"]["crash"] == {
        "out_of_memory": True,
        "memory_limit_mb": int(MEMORY_LIMIT_MB),
    }
    assert "ran out of memory" in oom["message"] and "MemoryError" in oom["message"]
    assert "SystemExit" in by["system-exit"]["message"]


def check_hangs(
    rec: dict[str, dict[str, Any]], spec: Path = FIXTURES / "hang" / "hangs.yaml"
) -> None:
    """The hang fixture's records: each hang cut at its own limit (2 s) or the run's (3 s), with its stack."""
    by = {k.rsplit(".", 1)[1]: r for k, r in rec.items() if k.startswith("reliability.hang.")}
    assert {k: r["outcome"] for k, r in by.items()} == {
        "canary-1": "passed",
        "sleep": "timeout",
        "busy-loop": "timeout",
        "blocked-thread": "timeout",
        "default-limit": "timeout",
        "canary-2": "passed",
    }
    for name, limit in (
        ("sleep", 2),
        ("busy-loop", 2),
        ("blocked-thread", 2),
        ("default-limit", 3),
    ):
        r = by[name]
        assert r["actual"]["timeout"]["timeout_s"] == limit
        assert f"no answer within {limit} s" in r["message"]
        assert limit <= r["duration_s"] < limit + 20, r["duration_s"]
        # The worker's stack at the deadline says where the case was stuck.
        line = run_line(spec, f"reliability.hang.{name}")
        lines = range(line, line + 4)  # a multi-line `run` hangs on one of its lines
        assert any(f'hangs.yaml", line {n} in <module>' in r["message"] for n in lines), r[
            "message"
        ]


def test_crashing_cases_are_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    proc = run_suite([FIXTURES / "crash"], results, JAX_CONFORMANCE_MEMORY_LIMIT_MB=MEMORY_LIMIT_MB)
    assert "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    check_crashes(outcomes(results))
    assert proc.returncode == 1


def test_hanging_cases_are_cut_at_their_limit_and_the_run_goes_on(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    # The run's default limit is 3 s; three cases set their own 2 s limit, which wins.
    proc = run_suite([FIXTURES / "hang"], results, "--case-timeout", "3")
    check_hangs(outcomes(results))
    assert proc.returncode == 1


def test_crashes_and_hangs_under_xdist(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    proc = run_suite(
        [FIXTURES / "crash", FIXTURES / "hang"],
        results,
        "--case-timeout",
        "3",
        "-n",
        "2",
        JAX_CONFORMANCE_MEMORY_LIMIT_MB=MEMORY_LIMIT_MB,
    )
    assert "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    rec = outcomes(results)
    assert len(rec) == 15
    check_crashes(rec)
    check_hangs(rec)
    assert proc.returncode == 1


def isolated_copy(src: Path, dest_dir: Path) -> Path:
    """`src` (same file name) with every case made `isolate: process`."""
    dest_dir.mkdir(parents=True)
    dest = dest_dir / src.name
    dest.write_text(src.read_text().replace("\n  - id: ", "\n  - isolate: process\n    id: "))
    return dest


def test_isolated_crashes_and_hangs_in_forked_workers_are_recorded_alike(tmp_path: Path) -> None:
    """The same crashes and hangs, every case in a process of its own forked from the fork server.

    A child of the full server has JAX imported already, so its limit is the case's own (a
    spawned isolated worker gets 30 s more for the import)."""
    isolation = "fork"
    crash = isolated_copy(FIXTURES / "crash" / "crashes.yaml", tmp_path / "crash")
    hang = isolated_copy(FIXTURES / "hang" / "hangs.yaml", tmp_path / "hang")
    results = tmp_path / "results.jsonl"
    proc = run_suite(
        [crash.parent, hang.parent],
        results,
        "--case-timeout",
        "3",
        f"--isolation={isolation}",
        JAX_CONFORMANCE_MEMORY_LIMIT_MB=MEMORY_LIMIT_MB,
    )
    assert "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    rec = outcomes(results)
    assert len(rec) == 15
    check_crashes(rec, crash)
    check_hangs(rec, hang)
    # Each case says how it got its process; no environment here differs from the mode's.
    how = Counter(r.get("isolation") for r in rec.values())
    assert how == {"fork-full": 15}, how
    assert proc.returncode == 1


# ---------------------------------------------------------------- leaks


def test_a_leaking_case_is_an_error_and_later_cases_never_see_its_change(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    run_suite([FIXTURES / "leak"], results)
    by = {k.rsplit(".", 1)[1]: r for k, r in outcomes(results).items()}
    for name, what in (
        ("x64-on", "jax_enable_x64"),
        ("environ", "JAX_CONFORMANCE_CANARY"),
        ("chdir", "cwd"),
    ):
        assert by[name]["outcome"] == "error", by[name]
        assert "without `isolate: process`" in by[name]["message"] and what in by[name]["message"]
    assert {k for k, r in by.items() if r["outcome"] == "passed"} == {
        "canary-x64",
        "canary-environ",
        "canary-cwd",
        "canary-float",
    }


# The spec files the ordering test runs: every kind of case whose outcome could depend on what
# ran before it in the same worker, and none more (the whole suite, five times over, was the
# slowest test of all). Each file is here for a reason:
ORDER_SPECS = (
    "x64/context.yaml",  # jax.enable_x64 blocks and global config updates in threads; an isolated fork-full case
    "x64/defaults.yaml",  # defaults read from the flag; isolated cases with JAX_ENABLE_X64 set or removed (fork-light)
    "x64/enable_x64.yaml",  # x64 switched inside a case: jit, scan, custom_jvp/custom_vjp traced in both modes
    "x64/trace_caches.yaml",  # trace caches that must key on x64; an isolated config.update case
    "x64/explicit.yaml",  # explicit 64-bit requests: warnings that must be seen each time (Hypothesis `given:` cases)
    "x64/warnings.yaml",  # one warning per function, and the cases that must see none
    # the largest custom-derivative file: jit/vmap/grad caches of fresh functions, a `given:` case
    "custom_vjp/nondiff_argnums.yaml",
)


@pytest.mark.slow
def test_outcomes_are_identical_in_two_random_orders_and_with_xdist(tmp_path: Path) -> None:
    """Spec files of every kind that order could reach, plus the leaking cases: each case's
    outcome is the same however it is scheduled.

    The subset (ORDER_SPECS) is enough because order can only act through state a case leaves
    in a shared worker: the x64 flag and the explicit-dtype policy (context, enable_x64,
    trace_caches), JAX's trace and jit caches (enable_x64, trace_caches, custom_vjp), the
    warning registry (explicit, warnings), Hypothesis (`given:` cases) and whatever a leaking
    case changes (the leak fixture, whose canaries must pass after any of them). The other
    files hold more cases of the same kinds; the files left out that hold many isolated cases
    (flag, explicit_mode, jit_cache) run each case in a fresh process, which no order can reach,
    and the isolated cases kept here are served both ways a fork server serves them (the
    assertion below keeps that true).

    The shuffled runs leave out `isolate: process` cases: each of those starts a fresh
    interpreter, so no order can reach it. The collection-order and `-n 2` runs keep them.
    """
    specs = [REPO / "specs" / name for name in ORDER_SPECS] + [FIXTURES / "leak"]
    shuffle = ("-p", "tests.shuffle_plugin", "--shuffle-shared-only")
    runs: dict[str, tuple[str, ...]] = {
        "collection order": (),
        "seed 1": (*shuffle, "--shuffle-seed", "1"),
        "seed 2": (*shuffle, "--shuffle-seed", "2"),
        "-n 2": ("-n", "2"),
    }
    seen: dict[str, dict[tuple[str, str], str]] = {}
    orders: dict[str, list[str]] = {}
    isolation: set[str] = set()
    for name, args in runs.items():
        results = tmp_path / f"{name.replace(' ', '-')}.jsonl"
        run_suite(specs, results, *args)
        [run] = load_runs([results])
        assert run.end is not None and not run.end.get("interrupted"), name
        seen[name] = {(r["case"], r["backend"] or ""): r["outcome"] for r in run.cases}
        orders[name] = [r["case"] for r in run.cases]
        if name == "collection order":
            isolation = {
                str(r.get("isolation")) for r in run.cases if r.get("isolate") == "process"
            }
    base = seen["collection order"]
    assert len(base) > 100 and "passed" in base.values()
    # Every leaking case was caught and every canary passed, in this schedule too.
    leaks = {
        k[0].rsplit(".", 1)[1]: o for k, o in base.items() if k[0].startswith("reliability.leak.")
    }
    assert leaks == {
        "x64-on": "error",
        "environ": "error",
        "chdir": "error",
        "canary-x64": "passed",
        "canary-environ": "passed",
        "canary-cwd": "passed",
        "canary-float": "passed",
    }, leaks
    assert {"fork-full", "fork-light"} <= isolation, (
        f"the subset lost isolated cases of a kind: {isolation}"
    )
    assert seen["-n 2"] == base
    shuffled = [n for n in runs if n.startswith("seed")]
    for name in shuffled:
        got = seen[name]
        assert got and set(got) < set(base), name  # isolated cases left out, nothing else
        diff = {k: (base[k], got[k]) for k in got if base[k] != got[k]}
        assert not diff, f"{name}: outcomes differ from collection order: {diff}"
    serial = [orders[n] for n in shuffled]
    assert len({tuple(o) for o in serial}) == len(shuffled) == 2, "the orders really differ"
    assert all(sorted(o) == sorted(serial[0]) for o in serial)


# ---------------------------------------------------------------- kills


def _workers_of(pid: int) -> list[int]:
    """Worker processes started by `pid` (they carry its pid in JAX_CONFORMANCE_PARENT_PID)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"JAX_CONFORMANCE_PARENT_PID={pid}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _case_records(path: Path) -> int:
    try:
        return path.read_bytes().count(b'"record":"case"')
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize(
    ("sig", "after"),
    [
        pytest.param(signal.SIGINT, 3, id="SIGINT-after-3"),
        pytest.param(signal.SIGTERM, 8, id="SIGTERM-after-8"),
        pytest.param(signal.SIGKILL, 5, id="SIGKILL-after-5"),
        pytest.param(signal.SIGKILL, 0, id="SIGKILL-before-any-case"),
    ],
)
def test_killed_run_leaves_whole_records_and_reads_as_interrupted(
    tmp_path: Path, sig: signal.Signals, after: int
) -> None:
    results = tmp_path / "results.jsonl"
    proc = subprocess.Popen(
        suite_cmd([FIXTURES / "slow"], results),
        cwd=REPO,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while _case_records(results) < after or (
            after == 0
            and b'"record":"collected"' not in (results.read_bytes() if results.exists() else b"")
        ):
            assert proc.poll() is None, "the run ended before it could be interrupted"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.05)
        workers = _workers_of(proc.pid)
        os.killpg(
            proc.pid, sig
        )  # the whole process group, as a terminal's Ctrl-C or a job runner would
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    records = strict_lines(results)
    assert [r["record"] for r in records[:2]] == ["description", "run"]
    cases = [r for r in records if r["record"] == "case"]
    assert len(cases) >= after and len(cases) < 40
    assert all(r["outcome"] == "passed" for r in cases)
    [run] = load_runs([results])
    assert run.interrupted and not run.problems
    ends = [r for r in records if r["record"] == "end"]
    assert ends == [] or ends == [run.end] and run.end["interrupted"] is True
    if sig != signal.SIGKILL:
        # Ctrl-C, and SIGTERM (the plugin turns it into KeyboardInterrupt), let pytest write its end record.
        assert run.end is not None and run.end["exitstatus"] == 2, run.end
    # No worker outlives the run, even when pytest itself was SIGKILLed.
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "orphaned worker processes"
    site = tmp_path / "site"
    report = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "report", str(results), "--out", str(site)],
        cwd=REPO,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stdout + report.stderr
    assert "1 interrupted" in report.stdout
    assert "interrupted" in (site / "index.html").read_text(encoding="utf-8")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# ---------------------------------------------------------------- hostile input


def test_python_object_tag_is_rejected_before_anything_runs(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    target = tmp_path / "pwned"
    payload = textwrap.dedent(f"""\
        topic: hostile
        source: {{observed: tests/test_reliability.py}}
        cases:
          - id: hostile.tag
            claim: the tag below would create a directory if it were ever constructed
            run: !!python/object/apply:os.mkdir ["{target}"]
            expect: [{{value: null}}]
        """)
    (specs / "hostile.yaml").write_text(payload, encoding="utf-8")
    (specs / "good.yaml").write_text(
        textwrap.dedent("""\
        topic: fine
        source: {observed: tests/test_reliability.py}
        cases:
          - id: fine.case
            claim: runs next to the hostile file
            run: jnp.arange(3)
            expect: [{dtype: int32}]
        """),
        encoding="utf-8",
    )
    # The payload is live: an unsafe loader does run it (on another path).
    control = tmp_path / "control"
    yaml.unsafe_load(payload.replace(str(target), str(control)))
    assert control.is_dir()

    lint = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "lint", str(specs)],
        cwd=REPO,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"{specs / 'hostile.yaml'}:6: YAML-UNSAFE-TAG" in lint.stdout and lint.returncode == 1
    results = tmp_path / "results.jsonl"
    proc = run_suite([specs], results)
    assert "hostile.yaml:6: YAML-UNSAFE-TAG" in proc.stdout
    assert outcomes(results)["fine.case"]["outcome"] == "passed"
    assert not target.exists(), "the tag's constructor ran"


def test_huge_and_hostile_output_is_bounded_and_kept_as_data(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    proc = run_suite([FIXTURES / "hostile"], results)
    assert "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    strict_lines(results)  # every record whole, none over MAX_RECORD_BYTES
    by = {k.rsplit(".", 1)[1]: r for k, r in outcomes(results).items()}
    assert by["canary"]["outcome"] == "passed"
    huge = by["huge-exception"]
    assert huge["outcome"] == "failed" and "more characters" in huge["message"]
    assert len(huge["message"]) < 30_000
    assert by["huge-result"]["outcome"] == "failed" and len(json.dumps(by["huge-result"])) < 50_000
    assert by["huge-output"]["outcome"] == "failed"
    odd = by["markup-and-odd-characters"]
    # Stored verbatim (escaping is the report's job), except the lone surrogate, which no
    # UTF-8 writer can store: it is kept as its escape text.
    raised = odd["actual"]["raised"]["message"]
    assert raised == "<img src=x onerror=alert(1)> \u2028 \u0085 \r\n \x00 \\ud800 end"
    assert "<script>" in huge["actual"]["raised"]["message"] and "<b>fails</b>" in huge["claim"]
    assert "</td><script>alert(1)</script>" in odd["claim"]


def test_yaml_alias_bomb_is_bounded(tmp_path: Path) -> None:
    """A 600-byte file whose aliases expand to 387 million strings must not hang lint."""
    levels = ['&a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"&a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(
        "topic: bomb\nsource: {observed: x}\ncases:\n  - id: bomb.case\n    claim: x\n    run: '1'\n"
        f"    expect: [{{note: x, value: [{', '.join(levels)}]}}]\n",
        encoding="utf-8",
    )
    assert bomb.stat().st_size < 1000
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "lint", str(bomb)],
        cwd=REPO,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "bomb.yaml:1: YAML-TOO-LARGE with its aliases expanded the document has" in proc.stdout


# ---------------------------------------------------------------- jax-conformance run


def test_jax_conformance_run_survives_crashes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jax_conformance.cli",
            "run",
            "--modes",
            "off-warn",
            "--specs",
            str(FIXTURES / "crash"),
            "--out",
            str(out),
            "--no-report",
            "--progress",
            "plain",
        ],
        cwd=REPO,
        env=env(JAX_CONFORMANCE_MEMORY_LIMIT_MB=MEMORY_LIMIT_MB),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    strict_lines(out / "results.jsonl")
    check_crashes(outcomes(out / "results.jsonl"))
