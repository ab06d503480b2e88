"""Usage errors of a `check`, found before any item is judged: `problem` is what the first mode's
process (`contract.misuse`) asks first of every check it was sent (a problem stops the modes not
yet started); `python -m jax_conformance.adapters.jax.contract_usage --request FILE` asks it
in a process of its own, before any release's modes start (`engine.refuse_misuse`, for
`check --releases`). Each check's target is imported and
resolved, its arguments evaluated and bound to the function's signature; the first problem of each
check is one line of the JSON printed last, {"problems": [...]}, which the parent turns into a
usage error (exit 2, nothing started, nothing written). What the target does with its arguments is
the items' business, not this module's.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from typing import cast

from jax_conformance.adapters.jax.contract import decode, namespace
from jax_conformance.contract.wire import CheckRequest


class Misuse(Exception):
    """One line saying what in the command is wrong."""


def _import(module: str) -> object:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        if module == missing or module.startswith(missing + "."):
            raise Misuse(
                f"no module named {missing!r} (looked in the start directory, --pythonpath and "
                "the installed packages)"
            ) from None
        raise Misuse(f"importing {module} raised ModuleNotFoundError: {exc}") from None
    except Exception as exc:  # noqa: BLE001  (the user's module failed to import: say how)
        first = (str(exc).strip().splitlines() or [""])[0]
        raise Misuse(f"importing {module} raised {type(exc).__name__}: {first}") from None


def target_object(target: str) -> Callable[..., object]:
    """What MODULE:QUALNAME names, or Misuse."""
    module, colon, qualname = target.partition(":")
    if not colon or not module or not qualname:
        raise Misuse(f"target {target!r}: write MODULE:FUNCTION, e.g. mylib.ops:clipped_sqrt")
    obj = _import(module)
    path = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise Misuse(f"{path} has no attribute {part!r} (target {target})")
        obj, path = getattr(obj, part), f"{path}.{part}"
    if not callable(obj):
        raise Misuse(f"{target} is a {type(obj).__name__}, not a function")
    return cast("Callable[..., object]", obj)


def _arguments(spec: CheckRequest) -> tuple[tuple[object, ...], dict[str, object]]:
    ns = namespace()
    args = []
    for i, wire in enumerate(spec.get("args", [])):
        try:
            args.append(decode(wire, ns))
        except Exception as exc:  # noqa: BLE001  (the user's expression: say which and why)
            shown = f" ({wire['expr']})" if "expr" in wire else ""
            raise Misuse(f"argument {i + 1}{shown}: {type(exc).__name__}: {exc}") from None
    kwargs = {k: decode(v, ns) for k, v in (spec.get("kwargs") or {}).items()}
    source = spec.get("kwargs_expr")
    if source:
        try:
            more = eval(source, ns)  # noqa: S307  (the user's own keyword arguments)
        except Exception as exc:  # noqa: BLE001
            raise Misuse(f"--kwargs ({source}): {type(exc).__name__}: {exc}") from None
        if not isinstance(more, dict):
            raise Misuse(f"--kwargs ({source}) gives a {type(more).__name__}, not a dict")
        kwargs.update(more)
    return tuple(args), kwargs


def problem(spec: CheckRequest) -> str | None:
    """The first thing wrong with one check's target and arguments, as one line; None if nothing."""
    try:
        fn = target_object(spec["target"])
        args, kwargs = _arguments(spec)
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # no signature to read (a builtin): the items will say
            signature = None
        if signature is not None:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as exc:
                given = f"{len(args)} positional" + (f" and {sorted(kwargs)}" if kwargs else "")
                raise Misuse(
                    f"{spec['target']}{signature} cannot take the {given} argument(s) given: {exc}"
                ) from None
        bad = [n for n in spec.get("nondiff", []) if not 0 <= n < len(args)]
        if bad:
            raise Misuse(
                f"--nondiff {bad[0]}: no such positional argument ({len(args)} given, counted from 0)"
            )
    except Misuse as exc:
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_conformance.adapters.jax.contract_usage")
    parser.add_argument("--request", required=True, help="the request the modes will be sent")
    opts = parser.parse_args(argv)
    with open(opts.request, encoding="utf-8") as f:
        checks: list[CheckRequest] = json.load(f)["checks"]
    sys.path.insert(0, os.getcwd())
    with contextlib.redirect_stdout(sys.stderr):
        problems = [(c.get("label") or c["target"], problem(c)) for c in checks]
    print(json.dumps({"problems": [[label, why] for label, why in problems if why]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
