"""What every cell generator under specs/ shares: loading a sibling file as a module, and writing
or checking its *.cells.json files (the one layout lint's TABLE-GENERATED rule compares).

Not a generator itself: each generator (specs/promotion/generate*.py, specs/x64/generate*.py)
loads this file with `runpy.run_path` (specs/ is a data folder, not an import package; the wheel
ships it beside them through package-data's `**/generate*.py`) and calls `main(__file__, render)`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

SPECS = Path(__file__).resolve().parent


def load(name: str, path: Path) -> ModuleType:
    """The Python file at path as the module `name`, run once per process (later calls reuse it, so
    the generators that build on one another share its objects)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def script_name(file: str) -> str:
    """A generator's name as its files' `generated_by` gives it: specs/<folder>/<file>.py."""
    return Path(file).resolve().relative_to(SPECS.parent).as_posix()


def cells_text(script: str, cells: Iterable[dict[str, Any]], **fields: str) -> str:
    """One cells file's text: `generated_by`, the other fields given, then a cell a line."""
    head = ['{"generated_by": ' + json.dumps(script) + ","]
    head += [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in fields.items()]
    rows = [json.dumps(c) for c in cells]
    body = ["  " + r + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]
    return "\n".join([*head, ' "cells": [', *body, "]}"]) + "\n"


def render_tables(script: str, tables: Mapping[str, Iterable[dict[str, Any]]]) -> dict[str, str]:
    """Each file's text, keyed by its name, from its cells."""
    return {name: cells_text(script, cells) for name, cells in tables.items()}


def main(file: str, render: Callable[[], dict[str, str]], argv: list[str] | None = None) -> int:
    """Write the generator's files beside it; with --check, write nothing and exit 1 where a file
    differs from what the generator renders."""
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    here, script = Path(file).resolve().parent, script_name(file)
    bad = 0
    for name, text in render().items():
        path = here / name
        if not check:
            path.write_text(text)
            print(
                f"wrote {path.relative_to(SPECS.parent)} ({len(json.loads(text)['cells'])} cells)"
            )
        elif not path.exists() or path.read_text() != text:
            print(f"{path}: differs from the generator's output (run {script})")
            bad += 1
    return 1 if bad else 0
