"""A check's result as a file the report reads: `jax-conformance check ... --report DIR` writes
DIR/contract/<target>.json, and a report built in DIR shows it in its "Your rules" section
(jax_conformance.report.contract_section). One format for one run's modes and for --releases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NotRequired, TypedDict

from jax_conformance.contract.engine import ContractResult
from jax_conformance.contract.items import ITEMS
from jax_conformance.contract.releases import ReleaseResult

FORMAT = "jax-conformance-check"
SUBDIR = "contract"


class ItemRow(TypedDict):
    """One item of one target: its statuses in the columns, in order."""

    item: str
    statement: str
    cells: list[str]


class TargetRows(TypedDict):
    label: str
    kinds: NotRequired[list[str]]  # one run's modes only (custom_vjp, custom_jvp, plain)
    rows: list[ItemRow]


class CheckData(TypedDict):
    """The file's JSON (report.contract_section reads it)."""

    format: str
    version: int
    command: str
    ok: bool
    jax_versions: list[str]
    columns: list[str]
    targets: list[TargetRows]
    failures: list[str]
    changes: list[str]


def check_data(result: ContractResult | ReleaseResult, command: str) -> CheckData:
    """The columns (a mode, or a release and mode), and per target its items' statuses in them."""
    if isinstance(result, ReleaseResult):
        columns = [
            r.label if len(result.modes) == 1 else f"{r.label} {m}"
            for r in result.releases
            for m in result.modes
        ]
        cols = [(r, m) for r in result.releases for m in result.modes]
        targets: list[TargetRows] = [
            {
                "label": label,
                "rows": [
                    {
                        "item": item.id,
                        "statement": item.statement,
                        "cells": [result.status(r, t, item.id, m) for r, m in cols],
                    }
                    for item in ITEMS
                ],
            }
            for t, label in enumerate(result.targets)
        ]
        failures = result.errors() + result.failure_lines()
        changes = [c.line() for c in result.changes]
        versions = [r.jax_version for r in result.releases]
    else:
        columns = list(result.modes)
        targets = [
            {
                "label": t.label,
                "kinds": sorted(set(t.kinds.values())),
                "rows": [
                    {
                        "item": item.id,
                        "statement": item.statement,
                        "cells": [t.status(item.id, m) for m in result.modes],
                    }
                    for item in ITEMS
                ],
            }
            for t in result.targets
        ]
        failures, changes, versions = result.failure_lines(), [], [result.jax_version]
    return {
        "format": FORMAT,
        "version": 1,
        "command": command,
        "ok": result.ok,
        "jax_versions": versions,
        "columns": columns,
        "targets": targets,
        "failures": failures,
        "changes": changes,
    }


def save(result: ContractResult | ReleaseResult, command: str, report_dir: Path, name: str) -> Path:
    """Write the check into REPORT_DIR/contract/<name>.json (the name made file-safe)."""
    folder = report_dir / SUBDIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".json")
    path.write_text(json.dumps(check_data(result, command), indent=1), encoding="utf-8")
    return path
