"""A package's custom rules, found and given example arguments, before its sweep's modes start:
`python -m jax_conformance.adapters.jax.contract_package --request FILE`.

The parent (`jax_conformance.contract.package`) runs this once, in the first mode's environment. It
imports the package and every submodule (`walk`: one that fails to import is listed with why, not
fatal; test modules and the `exclude` patterns are not walked), collects each custom_jvp /
custom_vjp / custom_gradient object a module or one of its classes holds whose function the package
defines (`rules_of`: one entry per object, named where it is defined, else where it is public),
and gives each its arguments: those of the library's `[tool.jax-conformance]` table, else small
float arrays of the first shapes the rule runs on with a finite output (`found_arguments`), else
what it needs. One JSON line on stdout: {"modules": [...], "import_errors": [...], "rules": [...]}.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import importlib
import inspect
import json
import math
import os
import pkgutil
import sys
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType

import jax
import numpy as np
from jax_conformance.adapters.jax import rule_finder
from jax_conformance.adapters.jax.contract import namespace
from jax_conformance.contract.wire import FoundRule, FoundRules, PackageRequest

# Module names (their last part) not walked unless asked: a library's own tests, which import test
# frameworks and define rules of their own.
TEST_MODULES = ("*_test", "test_*", "tests", "test", "conftest", "testing")
# The shapes tried for every array argument, in order (all arguments one shape), and the values:
# argument i gets evenly spaced values in (0.3, 0.9) shifted by i, so no two are equal.
SHAPES: tuple[tuple[int, ...], ...] = ((3,), (), (2, 3), (3, 3))
NONDIFF_VALUES = ("1", "0.5")  # tried for the rule's nondiff positions


def _excluded(name: str, exclude: list[str]) -> bool:
    last = name.rsplit(".", 1)[-1]
    return any(fnmatch.fnmatch(last, p) for p in TEST_MODULES) or any(
        fnmatch.fnmatch(name, p) for p in exclude
    )


def _why(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:300]


def walk(package: str, exclude: list[str]) -> tuple[list[ModuleType], list[list[str]]]:
    """The package and every submodule that imports (namespace subpackages too); [name, why] for
    each that does not."""
    root = importlib.import_module(package)  # the package itself must import (else a usage error)
    modules, errors = [root], []
    pending = [root]
    while pending:
        module = pending.pop(0)
        for sub_name, is_package in submodules(module):
            name = f"{module.__name__}.{sub_name}"
            if _excluded(name, exclude):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sub = importlib.import_module(name)
            except BaseException as exc:  # noqa: BLE001  (an optional submodule: listed, not fatal)
                if isinstance(exc, KeyboardInterrupt):
                    raise
                errors.append([name, _why(exc)])
                continue
            modules.append(sub)
            if is_package:
                pending.append(sub)
    return modules, errors


def submodules(module: ModuleType) -> list[tuple[str, bool]]:
    """(name, is a package) of a package's submodules: those pkgutil finds, and the directories
    without an __init__.py that hold Python files (namespace packages: optax's `_src`), which
    pkgutil does not list."""
    paths = list(getattr(module, "__path__", None) or [])
    found = [(info.name, info.ispkg) for info in pkgutil.iter_modules(paths)]
    listed = {name for name, _ in found}
    for path in paths:
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(path), key=lambda e: e.name):
                if (
                    entry.is_dir()
                    and entry.name.isidentifier()
                    and entry.name not in listed
                    and any(f.endswith(".py") for f in os.listdir(entry.path))
                ):
                    found.append((entry.name, True))
                    listed.add(entry.name)
    return found


def origin(rule: object) -> Callable[..., object]:
    """The function the library wrote: the one a rule decorates, or for jax.custom_gradient (a
    custom_vjp around JAX's own wrapper) the function that wrapper closes over."""
    fun = rule_finder.undecorated(rule)
    if getattr(fun, "__qualname__", "").startswith("custom_gradient.<locals>"):
        for cell in fun.__closure__ or ():
            inner = cell.cell_contents
            if callable(inner) and hasattr(inner, "__module__"):
                return inner
    return fun


def kind_label(rule: object) -> str:
    fun = rule_finder.undecorated(rule)
    if getattr(fun, "__qualname__", "").startswith("custom_gradient.<locals>"):
        return "custom_gradient"
    return rule_finder.kind_of(rule) or "?"


def _held(module: ModuleType) -> Iterator[tuple[str, object]]:
    """(qualname, object) of every rule a module holds at its top level or on one of its classes."""
    for name, obj in list(vars(module).items()):
        if rule_finder.kind_of(obj):
            yield name, obj
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            for attr in list(vars(obj)):
                with contextlib.suppress(Exception):
                    value = getattr(obj, attr)
                    if rule_finder.kind_of(value):
                        yield f"{name}.{attr}", value


def rules_of(package: str, modules: list[ModuleType]) -> list[tuple[str, object]]:
    """(MODULE:QUALNAME, rule) once per rule object whose function the package defines: named in
    the module that defines it, else in the first module (public names first) that holds it."""
    places: dict[int, list[tuple[str, str]]] = {}
    objects: dict[int, object] = {}
    for module in modules:
        for qualname, obj in _held(module):
            try:
                home = getattr(origin(obj), "__module__", "") or ""
            except TypeError:
                continue
            if home != package and not home.startswith(package + "."):
                continue
            objects[id(obj)] = obj
            places.setdefault(id(obj), []).append((module.__name__, qualname))
    found = []
    for key, where in places.items():
        home = origin(objects[key]).__module__
        name, qualname = min(where, key=lambda place: _rank(place, home))
        found.append((f"{name}:{qualname}", objects[key]))
    return sorted(found, key=lambda t: t[0])


def _rank(place: tuple[str, str], home: str) -> tuple[bool, bool]:
    """Where a rule held in several places is named: the module that defines it, then public names."""
    name, qualname = place
    private = any(p.startswith("_") for p in [*name.split("."), *qualname.split(".")])
    return (name != home, private)


def _array_expr(shape: tuple[int, ...], i: int) -> str:
    """Argument i: float32 values evenly spaced in (0.3, 0.9), shifted by i; a square matrix
    A @ A.T + I of them (symmetric positive definite: one a matrix function such as sqrtm takes)."""
    size = math.prod(shape)
    lo, hi = 0.3 + 0.05 * i, 0.9 - 0.05 * i
    values = f"jnp.linspace({lo:.2f}, {hi:.2f}, {size}, dtype=jnp.float32).reshape({shape!r})"
    if len(shape) == 2 and shape[0] == shape[1]:
        return f"(lambda a: a @ a.T + jnp.eye({shape[0]}, dtype=jnp.float32))({values})"
    return values


def _required_positional(fun: Callable[..., object]) -> int | None:
    """How many positional arguments the function needs (None: it takes *args, count unknown)."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(
        1
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    )


def candidates(rule: object) -> Iterator[tuple[tuple[int, ...], list[str]]]:
    """Argument lists to try, with their shape: every array argument one shape of SHAPES (float32
    in every mode: with x64 on, a float32 input is where a rule's dtype faults show), each nondiff
    position one of NONDIFF_VALUES."""
    count = _required_positional(origin(rule))
    if count is None:
        return
    nondiff = {i for i in _nondiff(rule) if i < count}
    for shape in SHAPES:
        for held in NONDIFF_VALUES if nondiff else ("",):
            yield shape, [held if i in nondiff else _array_expr(shape, i) for i in range(count)]


def _nondiff(rule: object) -> tuple[int, ...]:
    """The rule's nondiff_argnums."""
    return tuple(getattr(rule, "nondiff_argnums", None) or ())


def _runs(rule: object, exprs: list[str]) -> str | None:
    """None when the rule runs on these arguments with a finite floating-point output; else why not."""
    ns = namespace()
    try:
        args = [eval(e, ns) for e in exprs]  # noqa: S307  (this module's own expressions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = rule(*args)  # type: ignore[operator]
        leaves = [x for x in jax.tree_util.tree_leaves(out) if hasattr(x, "dtype")]
        floats = [x for x in leaves if np.issubdtype(np.dtype(x.dtype), np.inexact)]
    except Exception as exc:  # noqa: BLE001  (these arguments do not suit the rule: try the next)
        return _why(exc)
    if not floats:
        return "no floating-point output"
    if not all(bool(np.all(np.isfinite(np.asarray(x)))) for x in floats):
        return "an output that is not finite"
    return None


def found_arguments(rule: object) -> tuple[list[str] | None, str]:
    """The first candidate the rule runs on, with how it was found; else None and what it needs."""
    last = ""
    count = _required_positional(origin(rule))
    if count is None:
        return None, "arguments: it takes *args (give them in [tool.jax-conformance.rules])"
    for shape, exprs in candidates(rule):
        why = _runs(rule, exprs)
        if why is None:
            return exprs, f"found by trying: float32 arrays of shape {shape}" if count else "none"
        last = why
    held = f", nondiff {'/'.join(NONDIFF_VALUES)}" if any(i < count for i in _nondiff(rule)) else ""
    shapes = ", ".join(str(s) for s in SHAPES)
    return None, (
        f"arguments: {count} float32 array(s) of shape {shapes}{held} did not run ({last}); give "
        "them in [tool.jax-conformance.rules]"
    )


def sweep(request: PackageRequest) -> FoundRules:
    """The package's modules, import errors and rules, each with its arguments or what it needs."""
    config = request.get("rules") or {}
    skip = request.get("skip") or []
    modules, errors = walk(request["package"], request.get("exclude") or [])
    rules: list[FoundRule] = []
    for target, rule in rules_of(request["package"], modules):
        entry: FoundRule = {"target": target, "kind": kind_label(rule)}
        if any(fnmatch.fnmatch(target, p) for p in skip):
            entry["needs"] = "skipped by [tool.jax-conformance] skip"
        elif target in config:
            entry.update(config[target])
            entry["how"] = "[tool.jax-conformance.rules]"
        else:
            exprs, how = found_arguments(rule)
            if exprs is not None:
                entry["args"], entry["how"] = exprs, how
            else:
                entry["needs"] = how
        rules.append(entry)
    named = {r["target"] for r in rules}
    for target, given in config.items():  # a configured rule that was not found: said, not dropped
        if target not in named:
            rules.append({"target": target, "kind": "?", **given, "how": "configured"})
    return {"modules": [m.__name__ for m in modules], "import_errors": errors, "rules": rules}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_conformance.adapters.jax.contract_package")
    parser.add_argument("--request", required=True, help="JSON: package, exclude, skip, rules")
    opts = parser.parse_args(argv)
    with open(opts.request, encoding="utf-8") as f:
        request: PackageRequest = json.load(f)
    sys.path.insert(0, os.getcwd())
    result: FoundRules
    with contextlib.redirect_stdout(sys.stderr):
        try:
            result = sweep(request)
        except Exception as exc:  # noqa: BLE001  (the package itself does not import)
            result = {"error": f"importing {request['package']} raised {_why(exc)}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
