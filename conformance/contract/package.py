"""`check --package NAME`: every custom rule a package defines, found, given arguments and checked
together (one process per mode for the whole batch).

One short process in the first mode (`python -m jax_conformance.adapters.jax.contract_package`)
walks the package's modules and finds its rules and their arguments (the library's
`[tool.jax-conformance]` table, else small float arrays of shapes found by trying); the rules with
arguments are then checked by `run_contract` like any batch of targets. The sweep keeps what was not
checked (with what it needs) and the submodules that did not import. The table, in the library's
pyproject.toml (documented in docs/check.md):

    [tool.jax-conformance]
    exclude = ["mylib.experimental.*"]        # modules not walked (fnmatch on the module's name)
    skip = ["mylib.ops:scaled_grad"]          # rules listed, not checked
    [tool.jax-conformance.rules."mylib.ops:softmin"]
    args = ["jnp.array([0.1, 0.5])", "jnp.array(0.7)"]   # expressions, evaluated in each mode
    kwargs = "dict(axis=0)"                    # an expression giving a dict (optional)
    nondiff = [1]                              # positions held constant (optional)
    skip = ["derivatives.finite-differences"]  # items not judged (optional)

This module never imports JAX.
"""

from __future__ import annotations

import importlib.machinery
import json
import sys
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jax_conformance.contract.engine import ContractResult, Target, ask_one_process, run_contract
from jax_conformance.contract.items import BY_ID
from jax_conformance.contract.save import check_data
from jax_conformance.contract.wire import Expr, FoundRule, FoundRules
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode
from jax_conformance.records import CHECK_FORMAT, CheckData, ModeOutput, PackageSweep
from jax_conformance.text import plural

FINDER = "jax_conformance.adapters.jax.contract_package"
TABLE = "tool.jax-conformance"
RULE_KEYS = {"args", "kwargs", "nondiff", "skip"}


@dataclass
class Sweep:
    """A package's sweep: what was walked, what was checked (the result), what was not and why."""

    package: str
    modules: list[str]
    import_errors: list[list[str]]  # [module, why it did not import]
    checked: list[FoundRule]  # the finder's entries of the rules given arguments
    unchecked: list[FoundRule]  # the finder's entries of the rest, each with its "needs"
    pyproject: Path | None
    result: ContractResult | None = None
    seconds: float = 0.0
    find_seconds: float = 0.0
    targets: list[Target] = field(default_factory=list)

    def holds(self, strict_numerics: bool = False) -> bool:
        """Every rule checked holds the contract (strict: its numerics items too)."""
        return self.result is None or self.result.holds(strict_numerics)

    def summary(self) -> PackageSweep:
        """What the report's section for the package says beside the tables."""
        return {
            "package": self.package,
            "modules": len(self.modules),
            "import_errors": self.import_errors,
            "checked": [[r["target"], r.get("how", "")] for r in self.checked],
            "unchecked": [[r["target"], r.get("needs", "")] for r in self.unchecked],
            "pyproject": str(self.pyproject) if self.pyproject else "",
            "seconds": round(self.seconds, 1),
        }


# ---------------------------------------------------------------- the library's table


def find_pyproject(package: str, start: Path, search: Sequence[str] = ()) -> Path | None:
    """The pyproject.toml of the package's source tree (a checkout or an editable install: up to
    three directories above the package, found on `search` then this interpreter's path), else the
    start directory's when it has the table."""
    top = package.partition(".")[0]
    try:
        spec = importlib.machinery.PathFinder.find_spec(top, [*search, *sys.path])
    except (ImportError, ValueError):
        spec = None
    places: list[Path] = []
    if spec is not None and spec.origin and spec.origin not in ("built-in", "frozen"):
        places += list(Path(spec.origin).resolve().parents)[1:4]
    places.append(start)
    for place in places:
        path = place / "pyproject.toml"
        if path.is_file() and _table(path) is not None:
            return path
    return None


def _table(path: Path) -> dict[str, object] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not readable TOML ({exc})") from None
    table = data.get("tool", {}).get("jax-conformance")
    return table if isinstance(table, dict) else None


def read_table(path: Path | None) -> dict[str, object]:
    """The [tool.jax-conformance] table checked (UsageError naming the key that is wrong)."""
    table = (_table(path) if path else None) or {}
    unknown = sorted(set(table) - {"exclude", "skip", "rules"})
    if unknown:
        raise UsageError(f"{path}: [{TABLE}] has no key {unknown[0]!r} (exclude, skip, rules)")
    for key in ("exclude", "skip"):
        if not _strings(table.get(key, [])):
            raise UsageError(f"{path}: [{TABLE}] {key} must be a list of strings")
    rules = table.get("rules", {})
    if not isinstance(rules, dict):
        raise UsageError(f"{path}: [{TABLE}.rules] must be a table of MODULE:FUNCTION tables")
    for target, rule in rules.items():
        _check_rule(path, target, rule)
    return table


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_rule(path: Path | None, target: str, rule: object) -> None:
    where = f'{path}: [{TABLE}.rules."{target}"]'
    if ":" not in target:
        raise UsageError(f"{where}: name the rule MODULE:FUNCTION")
    if not isinstance(rule, dict) or set(rule) - RULE_KEYS:
        raise UsageError(f"{where}: a table of {', '.join(sorted(RULE_KEYS))}")
    if not _strings(rule.get("args", [])) or not _strings(rule.get("skip", [])):
        raise UsageError(f"{where}: args and skip are lists of strings")
    nondiff = rule.get("nondiff", [])
    if not isinstance(nondiff, list) or not all(isinstance(n, int) for n in nondiff):
        raise UsageError(f"{where}: nondiff is a list of argument positions")
    for source in [*rule.get("args", []), *([rule["kwargs"]] if "kwargs" in rule else [])]:
        try:
            compile(source, where, "eval")
        except (SyntaxError, TypeError) as exc:
            raise UsageError(f"{where}: {source!r} is not a Python expression ({exc})") from None
    unknown = sorted(set(rule.get("skip", [])) - set(BY_ID))
    if unknown:
        raise UsageError(f"{where}: skip {unknown[0]!r} is no item ({', '.join(BY_ID)})")


# ---------------------------------------------------------------- finding and checking


def find_rules(
    package: str,
    table: Mapping[str, object],
    mode: Mode,
    *,
    python: str = sys.executable,
    pythonpath: Sequence[str] = (),
    timeout: float = 900,
) -> FoundRules:
    """The finder's answer (modules, import_errors, rules), from one process in `mode`; UsageError
    when the package itself does not import."""
    proc = ask_one_process(
        FINDER,
        {"package": package, **table},
        mode,
        python=python,
        pythonpath=pythonpath,
        timeout=timeout,
    )
    lines = proc.stdout.strip().splitlines()
    try:
        found: FoundRules = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise UsageError(f"--package {package}: finding its rules failed: {tail}") from None
    if "error" in found:
        raise UsageError(f"--package {package}: {found['error']}")
    return found


def target_of_entry(entry: FoundRule) -> Target:
    """A rule the finder gave arguments, as a target of the batch."""
    kwargs = entry.get("kwargs")
    return Target(
        entry["target"],
        tuple(Expr(a) for a in entry.get("args", [])),
        nondiff=tuple(entry.get("nondiff", [])),
        label=entry["target"],
        kwargs_expr=kwargs or None,
        skip=tuple(entry.get("skip", [])),
    )


def sweep_package(
    package: str,
    modes: Sequence[Mode],
    *,
    pyproject: Path | None = None,
    start: Path | None = None,
    jobs: int = 2,
    timeout: float = 900,
    pythonpath: Sequence[str] = (),
    python: str = sys.executable,
    on_mode: Callable[[Mode, ModeOutput], None] | None = None,
) -> Sweep:
    """Find the package's rules, then check those with arguments in every mode, one process per
    mode for all of them (a configured rule whose arguments do not fit it is a usage error)."""
    began = time.monotonic()
    path = pyproject or find_pyproject(package, start or Path.cwd(), pythonpath)
    table = read_table(path)
    found = find_rules(package, table, modes[0], python=python, pythonpath=pythonpath)
    rules = found.get("rules", [])
    sweep = Sweep(
        package,
        found.get("modules", []),
        found.get("import_errors", []),
        [r for r in rules if "needs" not in r],
        [r for r in rules if "needs" in r],
        path,
        find_seconds=time.monotonic() - began,
    )
    sweep.targets = [target_of_entry(r) for r in sweep.checked]
    if sweep.targets:
        sweep.result = run_contract(
            sweep.targets,
            modes,
            jobs=jobs,
            timeout=timeout,
            python=python,
            pythonpath=pythonpath,
            on_mode=on_mode,
        )
    sweep.seconds = time.monotonic() - began
    return sweep


# ---------------------------------------------------------------- what the sweep says


def sweep_data(sweep: Sweep, command: str, modes: Sequence[Mode]) -> CheckData:
    """The sweep as `check --json` prints it and `--report` saves it: the checked rules' tables (as
    any check's) with the sweep beside them."""
    if sweep.result is not None:
        data = check_data(sweep.result, command)
    else:
        data = {
            "format": CHECK_FORMAT,
            "version": 1,
            "command": command,
            "ok": True,
            "jax_versions": [],
            "columns": [m.slug for m in modes],
            "targets": [],
            "failures": [],
            "changes": [],
        }
    data["package"] = sweep.summary()
    return data


def verdict(result: ContractResult, label: str) -> str:
    """One rule's line: ok, ERROR in modes, or its failing items with their modes."""
    t = next(t for t in result.targets if t.label == label)
    if t.errors:
        return f"ERROR [{','.join(t.errors)}]: {next(iter(t.errors.values()))[:160]}"
    failing = t.failing_items()
    blocked = sorted({i for (i, _m), o in t.outcomes.items() if o.status == "blocked"})
    if not failing and not blocked:
        return "ok"
    parts = [
        f"{'numerics ' if BY_ID[item].numerics else ''}FAIL {item} [{','.join(modes)}]"
        for item, modes in failing.items()
    ]
    return "; ".join(parts + ([f"blocked: {', '.join(blocked)}"] if blocked else []))


def lines(sweep: Sweep) -> list[str]:
    """The sweep printed: one line per rule checked (its kind, its verdict), the rules not checked
    with what they need, the modules that did not import, the failure lines."""
    out = [
        f"package {sweep.package}: {plural(len(sweep.modules), 'module')} walked"
        f" ({len(sweep.import_errors)} did not import),"
        f" {plural(len(sweep.checked) + len(sweep.unchecked), 'rule')} found, {len(sweep.checked)} checked"
        + (f"; table {sweep.pyproject}" if sweep.pyproject else "")
    ]
    width = max([len(r["target"]) for r in sweep.checked] + [10])
    for entry in sweep.checked:
        label = entry["target"]
        shown = verdict(sweep.result, label) if sweep.result is not None else "?"
        out.append(f"  {label.ljust(width)}  {entry['kind'].ljust(15)}  {shown}")
    if sweep.unchecked:
        out.append("not checked:")
        out += [f"  {r['target']} ({r['kind']}): {r.get('needs', '')}" for r in sweep.unchecked]
    if sweep.import_errors:
        out.append("did not import (not walked):")
        out += [f"  {name}: {why}" for name, why in sweep.import_errors]
    if sweep.result is not None:
        notes = [ln for ln in sweep.result.notes() if "static" in ln or "wrapper" in ln]
        out += (["notes:"] + [f"  {n}" for n in notes]) if notes else []
        out += sweep.result.failure_blocks()
    return out
