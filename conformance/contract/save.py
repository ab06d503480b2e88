"""A check's result as a file the report reads: `jax-conformance check ... --report DIR` writes
DIR/contract/<target>.jsonl, the records of the record layer's check section (a `check` record,
then a `check_row` per target x item: `records.check_records`), and a report built in DIR shows it
in its "Your rules" section (`ReportModel.contracts`, read by `records.read_check`). `check_data` is
also what `check --json` prints. One format for one run's modes and for --releases: `ok` is the
contract's verdict (the exit status without --strict-numerics), `failures` the contract's lines,
`numerics_ok` / `numerics_failures` the numerics items' (values JAX does not promise)."""

from __future__ import annotations

import re
from pathlib import Path

from jax_conformance.contract.engine import ContractResult
from jax_conformance.contract.items import ITEMS, Item
from jax_conformance.contract.releases import ReleaseResult
from jax_conformance.records import (
    CHECK_FORMAT,
    CheckData,
    ItemRow,
    ResultsWriter,
    TargetRows,
    check_records,
)

SUBDIR = "contract"
SUFFIX = ".jsonl"


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
                        **row_head(item),
                        "cells": [result.status(r, t, item.id, m) for r, m in cols],
                    }
                    for item in ITEMS
                ],
            }
            for t, label in enumerate(result.targets)
        ]
        failures = result.errors() + result.failure_lines(numerics=False)
        changes = [c.line() for c in result.changes]
        versions = [r.jax_version for r in result.releases]
    else:
        columns = list(result.modes)
        targets = [
            {
                "label": t.label,
                "kinds": sorted(set(t.kinds.values())),
                "rows": [
                    {**row_head(item), "cells": [t.status(item.id, m) for m in result.modes]}
                    for item in ITEMS
                ],
            }
            for t in result.targets
        ]
        failures = result.failure_lines(numerics=False)
        changes, versions = [], [result.jax_version]
    numerics = result.failure_lines(numerics=True)
    return {
        "format": CHECK_FORMAT,
        "version": 1,
        "command": command,
        "ok": result.holds(),
        "numerics_ok": not numerics,
        "jax_versions": versions,
        "columns": columns,
        "targets": targets,
        "failures": failures,
        "numerics_failures": numerics,
        "changes": changes,
    }


def row_head(item: Item) -> ItemRow:
    """An item's row less its cells: what it checks, the JAX promise (its first source), the basis,
    and whether it is numerics."""
    return {
        "item": item.id,
        "statement": item.statement,
        "cells": [],
        "numerics": item.numerics,
        "basis": item.basis,
        "source": item.sources[0].cite(),
    }


def save(result: ContractResult | ReleaseResult, command: str, report_dir: Path, name: str) -> Path:
    """Write the check into REPORT_DIR/contract/<name>.jsonl (the name made file-safe)."""
    return save_data(check_data(result, command), report_dir, name)


def save_data(data: CheckData, report_dir: Path, name: str) -> Path:
    """Write a check's data (`check_data`, or a package's sweep) into REPORT_DIR/contract/<name>.jsonl."""
    path = report_dir / SUBDIR / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + SUFFIX)
    writer = ResultsWriter(path)
    for record in check_records(data):
        writer.write(record)
    writer.close()
    return path
