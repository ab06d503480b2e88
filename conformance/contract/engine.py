"""The contract's engine, parent side: one process per mode, two at a time, results collected.

`run_contract` starts `python -m jax_conformance.contract.runner --request FILE` once per mode, each
with that mode's environment (`Mode.environ()`), reads the JSON line each prints, and returns a
`ContractResult`: every item's outcome per target and mode, the failure lines, the item x mode
table. The CLI (`jax-conformance check`), `jax_conformance.contract.check` and the pytest fixture
`jax_contract` all come here. This module never imports JAX.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jax_conformance.contract.items import BLOCKED, BY_ID, FAIL, ITEMS, NA, PASS
from jax_conformance.contract.wire import CheckRequest, ModeOutput, encode
from jax_conformance.errors import UsageError
from jax_conformance.flag_table import TOPIC_FLAGS
from jax_conformance.mode import Mode, expand_upcoming, read_modes
from jax_conformance.text import describe_exit

RUNNER = "jax_conformance.contract.runner"
# The upgrade flags `--modes +upcoming` sets (those JAX has, still off by default): the suite's own
# (flag_table.TOPIC_FLAGS) and the two that change JAX's own custom rules.
CONTRACT_FLAGS = (*TOPIC_FLAGS, "jax_custom_jvp3", "jax_softmax_custom_jvp")
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
    kwargs_expr: str | None = (
        None  # --kwargs: an expression giving the dict, evaluated in each mode
    )
    skip: tuple[
        str, ...
    ] = ()  # items not judged (a rule deliberately not the derivative: --skip derivatives.finite-differences)

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

    @property
    def failures(self) -> list[Failure]:
        return [f for o in self.outcomes.values() for f in o.failures]

    @property
    def ok(self) -> bool:
        return not self.errors and all(o.status in (PASS, NA) for o in self.outcomes.values())

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
        return all(t.ok for t in self.targets)

    @property
    def failures(self) -> list[Failure]:
        return [f for t in self.targets for f in t.failures]

    def failure_lines(self) -> list[str]:
        lines = []
        for t in self.targets:
            for mode, why in t.errors.items():
                lines.append(f"ERROR {t.label} [{mode}]: {why}")
            lines += [
                (f"{t.label}: " if len(self.targets) > 1 else "") + f.line() for f in t.failures
            ]
        return lines

    def table(self) -> str:
        out: list[str] = []
        for t in self.targets:
            kinds = sorted(set(t.kinds.values())) or ["?"]
            out.append(f"{t.label} ({'/'.join(kinds)}, JAX {self.jax_version})")
            width = max(len(i.id) for i in ITEMS)
            cols = [max(len(m), 7) for m in self.modes]
            out.append(
                "  "
                + "item".ljust(width)
                + "  "
                + "  ".join(m.ljust(c) for m, c in zip(self.modes, cols, strict=True))
            )
            for item in ITEMS:
                cells = [
                    _cell(t.status(item.id, m)).ljust(c)
                    for m, c in zip(self.modes, cols, strict=True)
                ]
                out.append("  " + item.id.ljust(width) + "  " + "  ".join(cells).rstrip())
        return "\n".join(out)

    def notes(self) -> list[str]:
        """The n/a and blocked reasons, once per (target, item, note)."""
        seen: dict[tuple[str, str, str], list[str]] = {}
        for t in self.targets:
            for (item, mode), o in t.outcomes.items():
                if o.status in (NA, BLOCKED) and o.note and not o.note.startswith("not for a"):
                    seen.setdefault((t.label, item, o.note), []).append(mode)
        prefix = len(self.targets) > 1
        return [
            f"{label + ': ' if prefix else ''}{item} [{','.join(modes)}]: {note}"
            for (label, item, note), modes in seen.items()
        ]


def _cell(status: str) -> str:
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


def _child_env(
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


def run_mode(
    targets: Sequence[Target],
    mode: Mode,
    *,
    python: str = sys.executable,
    timeout: float = 900,
    pythonpath: Sequence[str] = (),
    cwd: str | None = None,
) -> ModeOutput:
    """One mode's process: the checks of every target; its JSON, or {"error": why}."""
    with tempfile.TemporaryDirectory(prefix="jax-contract-") as tmp:
        request = Path(tmp) / "request.json"
        request.write_text(json.dumps({"checks": [t.request() for t in targets]}), encoding="utf-8")
        try:
            proc = subprocess.run(
                [python, "-m", RUNNER, "--request", str(request)],
                capture_output=True,
                text=True,
                env=_child_env(mode, pythonpath, python),
                timeout=timeout,
                cwd=cwd,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"the mode's process ran past {timeout:.0f}s and was killed"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith('{"contract"')]
    if proc.returncode != 0 or not lines:
        tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()][-3:]
        return {"error": f"the mode's process {describe_exit(proc.returncode)}: {' | '.join(tail)}"}
    data: ModeOutput = json.loads(lines[-1])  # the runner's JSON line (wire.ModeOutput)
    data["stderr"] = proc.stderr
    return data


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
    """Check every target in every mode (default: the four x64 modes), one process per mode, `jobs` at a time."""
    modes = list(modes) if modes is not None else contract_modes(None)

    def one(mode: Mode) -> ModeOutput:
        data = run_mode(targets, mode, python=python, timeout=timeout, pythonpath=pythonpath)
        if on_mode is not None:
            on_mode(mode, data)
        return data

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        per_mode = list(pool.map(one, modes))
    return collect(targets, modes, per_mode)


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
