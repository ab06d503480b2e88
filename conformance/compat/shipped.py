"""Radar searches that ship with the suite (`specs/radar/`), so `upgrade` answers on a fresh clone.

A shipped search is a radar search over every case (`compat.drive.changes_json`), saved with what
it was computed from: the spec revision (`spec.loader.spec_revision`, the one a run's description
states), a digest of every case as it was then (`case_digests`: the case's YAML, and a table case's
cells file), when and by which command.
`upgrade` answers from it when no search of the user's own cache holds both releases: the changes
of cases whose digest is the same now are the answer; cases added or changed since are named as
not answered, with what a search of them would cost. `jax-conformance upgrade --from A --to B
--ship` computes (or reuses) the search and writes it here.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path

import yaml
from jax_conformance import SPECS_DIR
from jax_conformance.compat.drive import spec_path
from jax_conformance.records import ChangeJSON, SearchJSON, ShippedJSON, read_search, write_search
from jax_conformance.releases import version_key
from jax_conformance.spec.loader import SHIPPED_SEARCHES, spec_revision

SHIPPED_DIR = SPECS_DIR / SHIPPED_SEARCHES
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where PyYAML has it


def case_digests(specs: Path = SPECS_DIR) -> dict[str, str]:
    """case id -> a short hash of the case as written (its mapping, and a table's cells file)."""
    found: dict[str, str] = {}
    for path in sorted(specs.rglob("*.y*ml")):
        try:
            doc = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER)
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
            continue
        for case in doc["cases"]:
            if not isinstance(case, dict) or not isinstance(case.get("id"), str):
                continue
            h = hashlib.sha256(json.dumps(case, sort_keys=True, default=str).encode())
            table = case.get("table")
            if isinstance(table, str) and (path.parent / table).is_file():
                h.update((path.parent / table).read_bytes())
            found[case["id"]] = h.hexdigest()[:16]
    return found


def owner(case: str, ids: Iterable[str]) -> str | None:
    """The spec case a result's case id belongs to: itself, or the table case a cell id extends."""
    owners = [c for c in ids if case == c or case.startswith(c + "[")]
    return max(owners, key=len) if owners else None


def ship(data: SearchJSON, specs: Path, command: str, into: Path | None = None) -> Path:
    """Write a search over every case as shipped data, with what it was computed from: `specs`, the
    copy of the specs the search judged (its store's), whose revision and case digests it keeps."""
    releases = data["releases"]
    shipped: ShippedJSON = {
        "spec_revision": spec_revision([specs]),
        "case_digests": case_digests(specs),
        "computed": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": command,
    }
    folder = SHIPPED_DIR if into is None else into
    changes: list[ChangeJSON] = [
        {**c, "spec_file": spec_path(c.get("spec_file", ""), specs)} for c in data["changes"]
    ]
    return write_search(
        folder / f"{releases[0]}..{releases[-1]}.json",
        {**data, "changes": changes, "shipped": shipped},
    )


def find_shipped(a: str, b: str, into: Path | None = None) -> SearchJSON | None:
    """The narrowest shipped search whose releases hold both A and B (None: none does)."""
    best: SearchJSON | None = None
    for path in sorted((SHIPPED_DIR if into is None else into).glob("*.json")):
        data = read_search(path)
        if data is None or "shipped" not in data:
            continue
        releases = data["releases"]
        if (
            a in releases
            and b in releases
            and (best is None or len(releases) < len(best["releases"]))
        ):
            best = data
    return best


def stale_cases(data: SearchJSON, now: dict[str, str] | None = None) -> list[str]:
    """The cases a shipped search cannot answer for: added, changed or removed since it was computed."""
    then = data["shipped"]["case_digests"] if "shipped" in data else {}
    now = case_digests() if now is None else now
    return sorted(
        {c for c in now if then.get(c) != now[c]} | {c for c in then if c not in now},
        key=lambda c: (c.split(".")[0], c),
    )


def answerable(data: SearchJSON, stale: list[str]) -> SearchJSON:
    """The search without the changes of stale cases (their old finding may no longer hold)."""
    gone = set(stale)
    ids = list(data["shipped"]["case_digests"]) if "shipped" in data else []
    kept = [c for c in data["changes"] if owner(c["case"], ids) not in gone]
    return {**data, "changes": kept}


def releases_text(data: SearchJSON) -> str:
    rs = sorted(data["releases"], key=version_key)
    return f"{rs[0]}..{rs[-1]}"
