"""The contract's engine, parent side: one process per mode, two at a time, results collected.

`run_contract` starts `python -m jax_conformance.adapters.jax.contract --request FILE --results F`
once per mode (a `ContractProcess`, run through launch/'s `run_modes` as every mode process is),
each with that mode's environment (`Mode.environ()`), reads the `contract` record each writes
(`records.contract_output`), and returns a `ContractResult`: every item's outcome per target and
mode, the failure lines, the item x mode table. The CLI (`jax-conformance check`),
`jax_conformance.contract.check` and the pytest fixture `jax_contract` all come here. This module never imports JAX.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jax_conformance.adapters import COMPILE_CACHE_ENV
from jax_conformance.contract.items import BLOCKED, BY_ID, FAIL, ITEMS, NA, PASS
from jax_conformance.contract.wire import CheckRequest, encode
from jax_conformance.errors import UsageError
from jax_conformance.flag_table import TOPIC_FLAGS
from jax_conformance.launch.scheduler import ModeProcess
from jax_conformance.launch.service import run_modes
from jax_conformance.mode import Mode, expand_upcoming, read_modes
from jax_conformance.records import ModeOutput, contract_output
from jax_conformance.text import describe_exit, plural

RUNNER = "jax_conformance.adapters.jax.contract"
USAGE_RUNNER = (
    "jax_conformance.adapters.jax.contract_usage"  # usage errors before --releases starts
)
# The upgrade flags `--modes +upcoming` sets (those JAX has, still off by default): the suite's own
# (flag_table.TOPIC_FLAGS) and the two that change JAX's own custom rules.
CONTRACT_FLAGS = (*TOPIC_FLAGS, "jax_custom_jvp3", "jax_softmax_custom_jvp")
# What the table's `*` and the numerics failures' heading say.
NUMERICS_NOTE = (
    "values JAX does not promise (docs/api_compatibility.md, "
    '"Numerics and randomness"); a failure there is not a contract failure'
)
ERROR = "error"  # a target that could not be imported or given its arguments in a mode


@dataclass(frozen=True)
class Target:
    """A function to check: MODULE:FUNCTION, its example arguments (values, or `wire.Expr`), which
    positions are nondiff, and a label for the table."""

    target: str
    args: tuple[object, ...] = ()  # the user's values (pickled to each mode) or `wire.Expr`
    kwargs: dict[str, object] = field(default_factory=dict)
    nondiff: tuple[int, ...] = ()
    label: str = ""
    # --kwargs: an expression giving the dict, evaluated in each mode
    kwargs_expr: str | None = None
    # items not judged (a rule deliberately not the derivative: --skip derivatives.finite-differences)
    skip: tuple[str, ...] = ()

    def request(self) -> CheckRequest:
        return {
            "target": self.target,
            "label": self.label or self.target,
            "args": [encode(a) for a in self.args],
            "kwargs": {k: encode(v) for k, v in self.kwargs.items()},
            "kwargs_expr": self.kwargs_expr,
            "nondiff": list(self.nondiff),
        }


@dataclass(frozen=True)
class Failure:
    target: str
    item: str
    mode: str
    transform: str
    expected: str
    actual: str
    spec: str  # the spec case that states the item

    @property
    def numerics(self) -> bool:
        """A numerics item's failure (values JAX does not promise), reported apart."""
        return BY_ID[self.item].numerics

    def line(self) -> str:
        return (
            f"FAIL {self.item} [{self.mode}] {self.transform}: expected {self.expected}; got {self.actual}"
            f" (contract: {self.spec})"
        )


@dataclass(frozen=True)
class Outcome:
    item: str
    mode: str
    status: str  # pass, fail, n/a, blocked, error
    note: str = ""
    failures: tuple[Failure, ...] = ()


@dataclass
class TargetResult:
    target: str
    label: str
    kinds: dict[str, str]  # mode -> custom_vjp / custom_jvp / plain
    outcomes: dict[tuple[str, str], Outcome]  # (item, mode) -> outcome
    errors: dict[str, str]  # mode -> why the target did not run there
    # how it was checked (the rules a wrapper reaches, static arguments) -> the modes that said so
    said: dict[str, list[str]] = field(default_factory=dict)

    @property
    def failures(self) -> list[Failure]:
        return [f for o in self.outcomes.values() for f in o.failures]

    @property
    def ok(self) -> bool:
        """Every item holds in every mode, numerics items included."""
        return not self.errors and all(o.status in (PASS, NA) for o in self.outcomes.values())

    @property
    def contract_ok(self) -> bool:
        """Every contract item holds in every mode: a numerics item's failure does not count."""
        return not self.errors and all(
            o.status in (PASS, NA) or (o.status in (FAIL, BLOCKED) and BY_ID[o.item].numerics)
            for o in self.outcomes.values()
        )

    def status(self, item: str, mode: str) -> str:
        if mode in self.errors:
            return ERROR
        o = self.outcomes.get((item, mode))
        return o.status if o else ERROR

    def failing_items(self) -> dict[str, list[str]]:
        """item -> the modes where it failed."""
        out: dict[str, list[str]] = {}
        for (item, mode), o in self.outcomes.items():
            if o.status == FAIL:
                out.setdefault(item, []).append(mode)
        return out


@dataclass
class ContractResult:
    """What `check` returns: per target, every item's outcome in every mode."""

    modes: list[str]
    targets: list[TargetResult]
    jax_version: str = "?"

    @property
    def ok(self) -> bool:
        """Every item holds for every target in every mode, numerics items included (the Python
        API's and the pytest fixture's verdict; `check`'s exit status is `holds`)."""
        return all(t.ok for t in self.targets)

    @property
    def contract_ok(self) -> bool:
        """Every contract item holds: numerics failures (values JAX does not promise) aside."""
        return all(t.contract_ok for t in self.targets)

    def holds(self, strict_numerics: bool = False) -> bool:
        """`check`'s verdict: the contract items hold (and, strict, the numerics items too)."""
        return self.ok if strict_numerics else self.contract_ok

    @property
    def failures(self) -> list[Failure]:
        return [f for t in self.targets for f in t.failures]

    def failure_lines(self, numerics: bool | None = None) -> list[str]:
        """The ERROR and FAIL lines: all (None), the contract's, errors included (False), or the
        numerics items' (True)."""
        lines = []
        for t in self.targets:
            if numerics is not True:
                lines += [f"ERROR {t.label} [{mode}]: {why}" for mode, why in t.errors.items()]
            lines += [
                (f"{t.label}: " if len(self.targets) > 1 else "") + f.line()
                for f in t.failures
                if numerics is None or f.numerics == numerics
            ]
        return lines

    def failure_blocks(self) -> list[str]:
        """The failure lines as printed: the contract's (and errors), then the numerics items'
        under a heading of their own, each block after a blank line."""
        out: list[str] = []
        contract, numerics = self.failure_lines(numerics=False), self.failure_lines(numerics=True)
        if contract:
            out += ["", *contract]
        if numerics:
            out += ["", f"numerics failures ({NUMERICS_NOTE}):", *numerics]
        return out

    def verdict(self, strict_numerics: bool = False) -> str:
        """The closing line's verdict: contract failures counted, numerics failures apart."""
        contract, numerics = self.failure_lines(numerics=False), self.failure_lines(numerics=True)
        head = (
            plural(len(contract), "contract failure")
            if contract
            else "every contract item holds in every mode"
        )
        if not numerics:
            return head if contract else "every item holds in every mode"
        counted = "counted: --strict-numerics" if strict_numerics else "not counted"
        return f"{head}; {plural(len(numerics), 'numerics failure')} ({counted})"

    def table(self) -> str:
        out: list[str] = []
        for t in self.targets:
            kinds = sorted(set(t.kinds.values())) or ["?"]
            out.append(f"{t.label} ({'/'.join(kinds)}, JAX {self.jax_version})")
            width = max(len(i.id) + 2 * i.numerics for i in ITEMS)
            cols = [max(len(m), 7) for m in self.modes]
            out.append(
                "  "
                + "item".ljust(width)
                + "  "
                + "  ".join(m.ljust(c) for m, c in zip(self.modes, cols, strict=True))
            )
            for item in ITEMS:
                name = item.id + (" *" if item.numerics else "")
                cells = [
                    cell(t.status(item.id, m)).ljust(c)
                    for m, c in zip(self.modes, cols, strict=True)
                ]
                out.append("  " + name.ljust(width) + "  " + "  ".join(cells).rstrip())
        out.append(f"  * numerics: {NUMERICS_NOTE}")
        return "\n".join(out)

    def notes(self) -> list[str]:
        """How each target was checked, then the n/a and blocked reasons: once per (target, note,
        modes), the items that share them named together."""
        seen: dict[tuple[str, str, str], list[str]] = {}
        for t in self.targets:
            for note, modes in t.said.items():
                seen[(t.label, "checked as", note)] = modes
            for (item, mode), o in t.outcomes.items():
                if o.status in (NA, BLOCKED) and o.note:
                    seen.setdefault((t.label, item, o.note), []).append(mode)
        grouped: dict[tuple[str, str, str], list[str]] = {}
        for (label, item, note), modes in seen.items():
            grouped.setdefault((label, ",".join(modes), note), []).append(item)
        prefix = len(self.targets) > 1
        return [
            f"{label + ': ' if prefix else ''}{', '.join(names)} [{modes}]: {note}"
            for (label, modes, note), names in grouped.items()
        ]


def cell(status: str) -> str:
    """A status as a table cell shows it (`ok`, `FAIL`, `n/a`, `blocked`, `ERROR`)."""
    return {PASS: "ok", FAIL: "FAIL", NA: "n/a", BLOCKED: "blocked", ERROR: "ERROR"}.get(
        status, status
    )


# ---------------------------------------------------------------- modes


def contract_modes(
    values: list[str] | None, *, python: str = sys.executable, env: dict[str, str] | None = None
) -> list[Mode]:
    """`--modes` as `run` reads it (default: the four x64 modes); `+upcoming` adds the upgrade flags
    of CONTRACT_FLAGS this JAX has, together and each alone, on the first mode asked for."""
    choice = read_modes(values)
    if not choice.upcoming:
        return choice.modes
    base = choice.modes[0] if choice.modes else Mode()
    proc = subprocess.run(
        [python, "-m", RUNNER, "--list-upgrade-flags"],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), **base.base.environ()},
        timeout=300,
    )
    if proc.returncode != 0:
        raise UsageError(
            f"+upcoming: could not read JAX's flags: {proc.stderr.strip().splitlines()[-1:]}"
        )
    have = set(json.loads(proc.stdout.strip().splitlines()[-1])["upgrade_flags"])
    flags = [f for f in CONTRACT_FLAGS if f in have]
    return expand_upcoming(choice, flags)


# ---------------------------------------------------------------- running


def launch_order(processes: list[ContractProcess]) -> list[ContractProcess]:
    """The modes started so that those lowering different programs come first (x64 off, x64 on,
    each set of upgrade flags) and those lowering the same ones (off-error, off-allow) after them,
    reading what the first compiled from the shared compilation cache instead of compiling it too."""
    seen: set[tuple[bool, object]] = set()
    first: list[ContractProcess] = []
    later: list[ContractProcess] = []
    for process in processes:
        family = (process.mode.x64, process.mode.flags)
        (later if family in seen else first).append(process)
        seen.add(family)
    return first + later


def child_env(
    mode: Mode, pythonpath: Sequence[str], python: str = sys.executable
) -> dict[str, str]:
    """The mode's environment; this interpreter's path goes along only to this interpreter (another
    release's environment has its own JAX, and this harness installed in it)."""
    env = {**os.environ, **mode.environ()}
    own = python == sys.executable
    if not own:
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
    paths = [p for p in [*pythonpath, *(sys.path if own else ())] if p and os.path.isdir(p)]
    env["PYTHONPATH"] = os.pathsep.join(
        dict.fromkeys([*paths, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    )
    env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    return env


@dataclass
class ContractProcess(ModeProcess):
    """One mode's contract process: the adapter's contract runner on the request file, its output
    one `contract` record in `results`, its stdout and stderr in `log`."""

    request: Path = Path()
    check_usage: bool = False  # the first mode's: the usage errors first (`contract.misuse`)

    @property
    def argv(self) -> list[str]:
        return [
            self.python,
            "-m",
            RUNNER,
            "--request",
            str(self.request),
            "--results",
            str(self.results),
            *(["--check-usage"] if self.check_usage else []),
        ]

    @property
    def completed(self) -> bool:
        return self.returncode == 0 and contract_output(self.results) is not None

    def output(self) -> ModeOutput:
        """The mode's output with its log as `stderr`, or {"error": why} when it gave none."""
        found = contract_output(self.results) if self.returncode == 0 else None
        if self.timed_out is not None:
            return {"error": f"the mode's process ran past {self.timed_out:.0f}s and was killed"}
        if found is None:
            rc = self.returncode if self.returncode is not None else -signal.SIGKILL
            tail = [ln for ln in self.log_tail(1000) if ln.strip()][-3:]
            return {"error": f"the mode's process {describe_exit(rc)}: {' | '.join(tail)}"}
        found["stderr"] = self.log.read_text(errors="replace") if self.log.is_file() else ""
        return found


def run_modes_of(
    targets: Sequence[Target],
    modes: Sequence[Mode],
    *,
    jobs: int = 2,
    python: str = sys.executable,
    timeout: float = 900,
    pythonpath: Sequence[str] = (),
    on_mode: Callable[[Mode, ModeOutput], None] | None = None,
) -> list[ModeOutput]:
    """Each mode's output, its process started through launch/ (`jobs` at a time, each killed
    past `timeout` seconds); Ctrl-C stops them all and is raised again."""
    with tempfile.TemporaryDirectory(prefix="jax-contract-") as tmp:
        request = Path(tmp) / "request.json"
        request.write_text(json.dumps({"checks": [t.request() for t in targets]}), encoding="utf-8")
        # the modes share compiled programs (as `run`'s do): the directory the user names, else one
        # of this check's own, removed with it
        cache = {
            COMPILE_CACHE_ENV: os.environ.get(COMPILE_CACHE_ENV) or str(Path(tmp) / "compiled")
        }
        processes = [
            ContractProcess(
                "jax",
                mode,
                Path(tmp) / f"{i}-{mode.slug}.jsonl",
                Path(tmp) / f"{i}-{mode.slug}.log",
                python=python,
                env={**child_env(mode, pythonpath, python), **cache},
                request=request,
                check_usage=i == 0,
            )
            for i, mode in enumerate(modes)
        ]
        outputs: dict[int, ModeOutput] = {}
        held: list[ContractProcess] = []  # finished before the usage check said all is well

        def finished(process: ContractProcess) -> None:
            """Each mode's output to on_mode once the first mode found no usage error (never after one)."""
            outputs[id(process)] = process.output()
            held.append(process)
            first = outputs.get(id(processes[0]))
            if on_mode is None or first is None or first.get("usage"):
                return
            for done in held:
                on_mode(done.mode, outputs[id(done)])
            held.clear()

        def misused(_process: ContractProcess) -> bool:  # a usage error: no other mode starts
            return any(o.get("usage") for o in outputs.values())

        order = launch_order(processes)
        if run_modes(order, jobs, timeout=timeout, skip=misused, on_finish=finished):
            raise KeyboardInterrupt
        return [outputs.get(id(p)) or p.output() for p in processes]


def run_mode(
    targets: Sequence[Target],
    mode: Mode,
    *,
    python: str = sys.executable,
    timeout: float = 900,
    pythonpath: Sequence[str] = (),
) -> ModeOutput:
    """One mode's process: the checks of every target; its output, or {"error": why}."""
    return run_modes_of(
        targets, [mode], jobs=1, python=python, timeout=timeout, pythonpath=pythonpath
    )[0]


def run_contract(
    targets: Sequence[Target],
    modes: Sequence[Mode] | None = None,
    *,
    jobs: int = 2,
    python: str = sys.executable,
    timeout: float = 900,
    pythonpath: Sequence[str] = (),
    on_mode: Callable[[Mode, ModeOutput], None] | None = None,  # e.g. a progress line per mode
) -> ContractResult:
    """Check every target in every mode (default: the four x64 modes), one process per mode, `jobs`
    at a time. A target or arguments that cannot work are a UsageError: the first mode's process
    looks first (then judges nothing), and the modes not yet started then never start; arguments
    that work in the first mode but not in another are that mode's ERROR."""
    modes = list(modes) if modes is not None else contract_modes(None)
    per_mode = run_modes_of(
        targets,
        modes,
        jobs=jobs,
        python=python,
        timeout=timeout,
        pythonpath=pythonpath,
        on_mode=on_mode,
    )
    for output in per_mode:
        if output.get("usage"):
            raise misuse_error(output["usage"], len(targets))
    return collect(targets, modes, per_mode)


def misuse_error(problems: Sequence[Sequence[str]], targets: int) -> UsageError:
    """The first [label, problem] as one line (the label where several targets were checked)."""
    label, why = problems[0]
    more = f" (and {plural(len(problems) - 1, 'other target')})" if len(problems) > 1 else ""
    return UsageError(f"{label + ': ' if targets > 1 else ''}{why}{more}")


def ask_one_process(
    module: str,
    request: Mapping[str, object],
    mode: Mode,
    *,
    python: str,
    pythonpath: Sequence[str],
    timeout: float,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m module --request FILE` once in `mode`'s environment, the request written to
    FILE as JSON; the finished process (its last stdout line is the answer)."""
    with tempfile.TemporaryDirectory(prefix="jax-contract-") as tmp:
        path = Path(tmp) / "request.json"
        path.write_text(json.dumps(request), encoding="utf-8")
        return subprocess.run(
            [python, "-m", module, "--request", str(path)],
            capture_output=True,
            text=True,
            env=child_env(mode, pythonpath, python),
            timeout=timeout,
        )


def refuse_misuse(
    targets: Sequence[Target],
    mode: Mode,
    *,
    python: str = sys.executable,
    pythonpath: Sequence[str] = (),
    timeout: float = 300,
) -> None:
    """UsageError (one line, exit 2) for a target that does not import or resolve, or arguments
    that do not evaluate or do not fit its signature: found by one short process in `mode` (the
    target's module may import JAX, which this process never does), before any mode's starts. A
    process that gives no answer refuses nothing: the modes then say what is wrong."""
    try:
        proc = ask_one_process(
            USAGE_RUNNER,
            {"checks": [t.request() for t in targets]},
            mode,
            python=python,
            pythonpath=pythonpath,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return
    lines = proc.stdout.strip().splitlines()
    try:
        problems = json.loads(lines[-1])["problems"] if proc.returncode == 0 and lines else []
    except (ValueError, KeyError, TypeError):
        return
    if problems:
        raise misuse_error(problems, len(targets))


def collect(
    targets: Sequence[Target], modes: Sequence[Mode], per_mode: Sequence[ModeOutput]
) -> ContractResult:
    slugs = [m.slug for m in modes]
    results = [TargetResult(t.target, t.label or t.target, {}, {}, {}) for t in targets]
    unknown = sorted({i for t in targets for i in t.skip} - set(BY_ID))
    if unknown:
        raise UsageError(
            f"--skip {', '.join(unknown)}: no such item; the items are {', '.join(BY_ID)}"
        )
    version = "?"
    for slug, data in zip(slugs, per_mode, strict=True):
        version = data.get("jax_version", version)
        if "error" in data:
            for r in results:
                r.errors[slug] = data["error"]
            continue
        for r, res, target in zip(results, data["results"], targets, strict=True):
            if "error" in res:
                r.errors[slug] = res["error"]
                continue
            r.kinds[slug] = res["kind"]
            for note in res.get("notes", ()):
                r.said.setdefault(note, []).append(slug)
            for it in res["items"]:
                item = BY_ID[it["id"]]
                if item.id in target.skip:
                    r.outcomes[(item.id, slug)] = Outcome(
                        item.id, slug, NA, f"skipped (--skip), was {it['status']}"
                    )
                    continue
                failures = tuple(
                    Failure(
                        r.label,
                        item.id,
                        slug,
                        f["transform"],
                        f["expected"],
                        f["actual"],
                        _spec_for(item.specs, res["kind"], f["expected"]),
                    )
                    for f in it.get("failures", ())
                )
                r.outcomes[(item.id, slug)] = Outcome(
                    item.id, slug, it["status"], it.get("note", ""), failures
                )
    return ContractResult(slugs, results, version)


def _spec_for(specs: Sequence[str], kind: str, expected: str = "") -> str:
    """The spec case a failure line names: the item's first case for this kind of rule, among its
    cases about integer inputs (float0) when float0 was expected, else among the others."""
    ints = "float0" in expected
    eligible = [s for s in specs if ("integer_inputs" in s or "float0" in s) == ints] or list(specs)
    for spec in eligible:
        if spec.startswith(kind + "."):
            return spec
    return eligible[0]


def target_of(fn: object) -> str:
    """MODULE:QUALNAME of a function a mode's process can import again (UsageError if it cannot)."""
    if isinstance(fn, str):
        if ":" not in fn:
            raise UsageError(f"target {fn!r}: write MODULE:FUNCTION, e.g. mylib.ops:clipped_sqrt")
        return fn
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not qualname or "<locals>" in qualname or "<lambda>" in qualname:
        raise UsageError(
            f"{fn!r}: the contract runs in a process per mode, which imports the function again; "
            "define it at module level (or pass 'MODULE:FUNCTION')"
        )
    if module == "__main__":
        raise UsageError(
            f"{qualname}: a function of __main__ cannot be imported by the mode processes; "
            "put it in a module (or pass 'MODULE:FUNCTION')"
        )
    return f"{module}:{qualname}"


__all__ = [
    "BLOCKED",
    "FAIL",
    "NA",
    "PASS",
    "ContractResult",
    "Failure",
    "Outcome",
    "Target",
    "TargetResult",
    "contract_modes",
    "run_contract",
    "target_of",
]
