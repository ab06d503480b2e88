"""The import rules of docs/ARCHITECTURE.md, checked against the code.

A folder under `conformance/` names the process that runs its modules, and the shared modules sit
below every process. This reads every module of `conformance/` and `adapters/` with `ast` (nothing
is imported; imports inside functions and `if TYPE_CHECKING:` count the same) and checks:

- `LAYERS`: which packages a package must not import (an upward import, or one into another
  process's code);
- no module imports `commands/` but `cli.py`, and no command imports another;
- only `adapters/` import JAX, and only the adapter interface (`jax_conformance.adapters`) is
  imported outside `adapters/`: the parent never starts an implementation;
- no module takes another module's private (`_name`) names (`from m import _x`, or `m._x` on an
  imported module); dunders are public.

`ALLOWED` lists, each with why, the imports that break a rule on purpose; an entry that no longer
matches anything fails the test, so the list cannot outlive its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "jax_conformance"
ROOTS = {REPO / "conformance": PACKAGE, REPO / "adapters": f"{PACKAGE}.adapters"}

# The shared modules: below every process, so they import none of the processes' code.
SHARED = (
    "errors",
    "text",
    "records",
    "mode",
    "spec",
    "protocol",
    "compare",
    "releases",
    "options",
    "usage",
    "flag_table",
    # the contract's data, read by `check`'s parent and by the adapter's side in each mode
    "contract.items",
    "contract.wire",
)
PROCESSES = (
    "cli",
    "commands",
    "launch",
    "client",
    "plugin",
    "worker",
    "report",
    "compat",
    "contract",
    "differential.engine",
)
# A package (a prefix of the module's name under jax_conformance; the longest one that matches
# applies) -> the packages it must not import.
LAYERS: dict[str, frozenset[str]] = {
    **{name: frozenset(PROCESSES) for name in SHARED},
    # grammar and observe run in `diff`'s parent and in the worker alike
    "differential": frozenset(PROCESSES),
    "differential.engine": frozenset({"plugin", "worker"}),
    "adapters": frozenset(PROCESSES),
    # the worker process: it answers the client, it never drives one
    "worker": frozenset({"client", "plugin", "launch", "commands", "report"}),
    # the client end of the worker pipe, run by the parent and by the mode process
    "client": frozenset({"plugin", "commands", "worker", "launch", "report"}),
    # the mode process (pytest)
    "plugin": frozenset({"worker", "launch", "commands", "report"}),
    "launch": frozenset({"plugin", "worker"}),
    # the report reads records; it starts nothing
    "report": frozenset({"launch", "client", "worker", "plugin"}),
}
JAX = ("jax", "jaxlib")

# (importing module, the rule it breaks: the imported module or `module._name`) -> why it is allowed.
# An entry that no longer occurs fails the test, so the list cannot outlive its reason.
ALLOWED: dict[tuple[str, str], str] = {
    # The reference's mutant catalogue is data (each mutant's name, the rule it breaks, the variable
    # that switches it on: it imports only os); `mutate` lists it in the parent without loading the
    # reference itself, which only its mode processes' workers do.
    ("jax_conformance.commands.mutate", "jax_conformance.adapters.reference.mutants"): "data only",
}


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    rule: str  # what `ALLOWED` is keyed by, with the module: the import, or `module._name`
    message: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.message}"


def module_names() -> dict[str, Path]:
    """Every module of the package by its import name."""
    out: dict[str, Path] = {}
    for root, name in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([name, *parts])] = path
    return out


def package_of(module: str) -> str:
    """`jax_conformance.client.caserunner` -> `client.caserunner` ("" for the package itself)."""
    return module[len(PACKAGE) + 1 :] if module.startswith(PACKAGE + ".") else ""


def within(module: str, prefix: str) -> bool:
    name = package_of(module)
    return name == prefix or name.startswith(prefix + ".")


def forbidden_for(module: str) -> frozenset[str]:
    """The packages `module` must not import: the row of its longest matching package in LAYERS."""
    rows = [prefix for prefix in LAYERS if within(module, prefix)]
    return LAYERS[max(rows, key=len)] if rows else frozenset()


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a `from` import names, its dots resolved against `module`."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports(
    module: str, source: str, known: set[str], is_package: bool = False
) -> Iterator[tuple[int, str, str | None]]:
    """(line, imported module, name taken from it or None) for every import in `source`; `from m
    import sub` of a submodule is an import of `m.sub`. Also each `alias._name` on a name bound to
    a module of the package, as (line, module, `_name`)."""
    aliases: dict[str, str] = {}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
                if alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, is_package, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    yield node.lineno, sub, None
                    aliases[alias.asname or alias.name] = sub
                else:
                    yield node.lineno, target, alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and is_private(node.attr)
        ):
            yield node.lineno, aliases[node.value.id], node.attr


def violations(
    module: str, source: str, known: set[str], is_package: bool = False
) -> list[Violation]:
    """Every import of `module` (its `source`) that breaks a rule of this file."""
    found = []
    forbidden = forbidden_for(module)
    for line, target, name in imports(module, source, known, is_package):
        if name is not None and is_private(name) and target in known and target != module:
            rule = f"{target}.{name}"
            found.append(Violation(module, line, rule, f"imports the private name {rule}"))
        if target.split(".")[0] in JAX and not within(module, "adapters"):
            found.append(
                Violation(module, line, target, f"imports {target}: only adapters/ import JAX")
            )
        if not target.startswith(PACKAGE + ".") or target == module:
            continue
        if (
            within(target, "adapters")
            and package_of(target) != "adapters"
            and not within(module, "adapters")
        ):
            found.append(
                Violation(
                    module,
                    line,
                    target,
                    f"imports {target}: outside adapters/ only the interface (jax_conformance.adapters)",
                )
            )
        if within(target, "commands") and package_of(module) != "cli":
            found.append(
                Violation(module, line, target, f"imports {target}: only cli.py imports commands/")
            )
        if any(within(target, name) for name in SHARED):
            continue  # the shared modules are below every process
        for prefix in sorted(forbidden):
            if within(target, prefix) and not within(module, prefix):
                found.append(
                    Violation(
                        module,
                        line,
                        target,
                        f"imports {target}: {package_of(module)} must not import {prefix}/",
                    )
                )
    return found


def all_violations() -> list[Violation]:
    modules = module_names()
    known = set(modules)
    return [
        v
        for module, path in modules.items()
        for v in violations(module, path.read_text(), known, path.name == "__init__.py")
    ]


def test_the_package_keeps_its_import_rules() -> None:
    found = all_violations()
    unexpected = [str(v) for v in found if (v.module, v.rule) not in ALLOWED]
    assert not unexpected, "imports that break the rules:\n" + "\n".join(unexpected)
    stale = sorted(set(ALLOWED) - {(v.module, v.rule) for v in found})
    assert not stale, f"ALLOWED entries that no longer occur (remove them): {stale}"


def test_the_table_names_real_packages() -> None:
    """A typo in LAYERS or SHARED would silently check nothing."""
    packages = {package_of(m) for m in module_names()} - {""}
    names = set(LAYERS) | {p for row in LAYERS.values() for p in row}
    # packages #35 creates (compare, releases, options, differential.engine) may not be there yet
    missing = names - {p for p in names if any(q == p or q.startswith(p + ".") for q in packages)}
    assert missing <= {"compare", "releases", "options", "differential.engine"}, missing


KNOWN = {
    f"{PACKAGE}.records",
    f"{PACKAGE}.launch.service",
    f"{PACKAGE}.worker.judge",
    f"{PACKAGE}.worker.jit_batch",
    f"{PACKAGE}.worker",
    f"{PACKAGE}.client.caserunner",
    f"{PACKAGE}.commands.run",
    f"{PACKAGE}.commands.lint",
    f"{PACKAGE}.adapters",
    f"{PACKAGE}.adapters.reference.lax",
}


def rules_broken(module: str, source: str, is_package: bool = False) -> list[str]:
    return [v.rule for v in violations(module, source, KNOWN, is_package)]


def test_an_upward_import_is_reported() -> None:
    source = "def f():\n    from jax_conformance.launch.service import run_modes\n"
    assert rules_broken(f"{PACKAGE}.records", source) == [f"{PACKAGE}.launch.service"]
    assert rules_broken(
        f"{PACKAGE}.worker.judge", "import jax_conformance.client.caserunner\n"
    ) == [f"{PACKAGE}.client.caserunner"]
    # relative imports resolve like absolute ones
    assert rules_broken(f"{PACKAGE}.worker.judge", "from ..client import caserunner\n") == [
        f"{PACKAGE}.client.caserunner"
    ]


def test_commands_jax_and_implementations_are_reported() -> None:
    assert rules_broken(
        f"{PACKAGE}.commands.run", "from jax_conformance.commands import lint\n"
    ) == [f"{PACKAGE}.commands.lint"]
    assert rules_broken(f"{PACKAGE}.report.model", "import jax.numpy as jnp\n") == ["jax.numpy"]
    assert rules_broken(f"{PACKAGE}.adapters.reference.lax", "import jax\n") == []
    assert rules_broken(
        f"{PACKAGE}.launch.service", "from jax_conformance.adapters.reference import lax\n"
    ) == [f"{PACKAGE}.adapters.reference.lax"]
    assert (
        rules_broken(f"{PACKAGE}.usage", "from jax_conformance.adapters import load_adapter\n")
        == []
    )


def test_a_private_import_is_reported() -> None:
    source = "from jax_conformance.worker.judge import _jit_source, run_payload, __doc__\n"
    assert rules_broken(f"{PACKAGE}.worker.jit_batch", source) == [
        f"{PACKAGE}.worker.judge._jit_source"
    ]
    source = "from jax_conformance.worker import judge\njudge._jit_source(p)\njudge.__name__\n"
    assert rules_broken(f"{PACKAGE}.worker.jit_batch", source) == [
        f"{PACKAGE}.worker.judge._jit_source"
    ]
    # a private alias of a public name is the importer's own business
    assert (
        rules_broken(
            f"{PACKAGE}.worker.jit_batch", "from jax_conformance.records import encode as _encode\n"
        )
        == []
    )
