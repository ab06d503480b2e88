"""Runs from many result files as one set: each cell once, conflicting runs refused (docs/RUNNER.md,
"Merging results").

A cell is one case x backend x mode x implementation version (of one adapter). Runs of the same
configuration (adapter, implementation version, mode) whose descriptions agree on the spec revision
and the build (`records.RunDescription`) are one measurement: shards of one run, or the same run
repeated; they become one run, each cell once (the newest record where two runs have it). The same
run read twice (a merged `results.jsonl` and its per-mode file) is read once. Two runs of the same
configuration that measured a cell with other specs or another build conflict: `MergeConflict`, one
line naming the cell and both files. `jax-conformance merge` writes the merged runs; `report` shows
them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from jax_conformance.errors import UsageError
from jax_conformance.mode import mode_slug
from jax_conformance.records import (
    EndRecord,
    PartJSON,
    Record,
    ResultRecord,
    ResultsWriter,
    Run,
    RunDescription,
    RunHeader,
    is_item_record,
    load_runs,
    tally,
)


class MergeConflict(UsageError):
    """The same cell in two runs whose spec revisions or builds differ: one line, exit status 2."""


Config = tuple[str, str, str]  # adapter, implementation version, mode slug
Cell = tuple[str, str]  # backend, case


@dataclass
class Merged:
    """What `merge_runs` made: the runs, each cell once, and how many duplicate cells it dropped."""

    runs: list[Run]
    duplicates: int = 0  # cells more than one run measured, counted once
    differing: list[str] = field(default_factory=list)  # duplicates whose outcomes differ


def config_of(run: Run) -> Config:
    h = run.header
    return (
        str(h.get("adapter") or "?"),
        str(h.get("implementation_version") or "?"),
        mode_slug(h["mode"]),
    )


def identity(run: Run) -> dict[str, object]:
    """What two runs of one configuration must share to be merged: the spec revision and the build
    (empty for a run without a description: nothing to check)."""
    d = run.description
    if d is None:
        return {}
    return {
        "spec revision": d.get("spec_revision"),
        **{k: v for k, v in sorted(d.get("build", {}).items())},
    }


def differences(a: dict[str, object], b: dict[str, object]) -> list[str]:
    """`name x vs y` for each field both identities have and disagree on."""
    return [f"{k} {a[k]} vs {b[k]}" for k in a if k in b and a[k] != b[k]]


def cell_of(run: Run, record: ResultRecord) -> Cell:
    backend = record.get("backend") or (run.header.get("backends") or ["?"])[0]
    return (str(backend), str(record.get("case") or "?"))


def same_runs_once(runs: Iterable[Run]) -> list[Run]:
    """The same run read twice (a merged file and its per-mode file): keep the fuller copy."""
    best: dict[str, Run] = {}
    for i, run in enumerate(runs):
        rid = str(run.header.get("run_id") or f"anonymous-{i}")
        old = best.get(rid)
        if old is None or (run.end is not None, len(run.cases)) > (
            old.end is not None,
            len(old.cases),
        ):
            best[rid] = run
    return list(best.values())


def merge_runs(runs: Iterable[Run]) -> Merged:
    """Every run of `runs`, runs of one configuration and identity joined, in the order first read
    (`MergeConflict` when two of one configuration but another identity hold the same cell)."""
    unique = same_runs_once(runs)
    groups: dict[Config, list[list[Run]]] = {}
    for run in sorted(unique, key=lambda r: str(r.header.get("started") or "")):
        buckets = groups.setdefault(config_of(run), [])
        for bucket in buckets:
            if not any(differences(identity(other), identity(run)) for other in bucket):
                bucket.append(run)
                break
        else:
            buckets.append([run])
    for config, buckets in groups.items():
        check_apart(config, buckets)
    position = {id(run): i for i, run in enumerate(unique)}
    every = sorted(
        (b for buckets in groups.values() for b in buckets),
        key=lambda b: min(position[id(r)] for r in b),
    )
    merged = Merged([])
    merged.runs = [join(bucket, merged) for bucket in every]
    return merged


def check_apart(config: Config, buckets: Sequence[Sequence[Run]]) -> None:
    """Runs of one configuration that may not be joined must hold no cell in common."""
    if len(buckets) < 2:
        return
    seen: dict[Cell, Run] = {}
    for bucket in buckets:
        mine: dict[Cell, Run] = {cell_of(run, r): run for run in bucket for r in run.cases}
        for cell, run in mine.items():
            other = seen.get(cell)
            if other is not None:
                raise MergeConflict(conflict_text(config, cell, other, run))
        seen.update(mine)


def conflict_text(config: Config, cell: Cell, a: Run, b: Run) -> str:
    adapter, version, mode = config
    why = "; ".join(differences(identity(a), identity(b)))
    return (
        f"conflicting results: {cell[1]} [{adapter} {version} {cell[0]} {mode}] is in {a.source} and in "
        f"{b.source}, run with other specs or another build ({why}); merge runs of the same specs and "
        "build, or report them apart"
    )


def join(bucket: list[Run], merged: Merged) -> Run:
    """One run of the bucket's runs (oldest first): each cell once, the newest record kept. A lone
    run is itself, unless it is one shard of several (then its end says which shards are missing)."""
    if len(bucket) == 1 and not missing_shards(bucket):
        return bucket[0]
    run_id = (
        "merged-"
        + hashlib.sha256(" ".join(sorted(r.header["run_id"] for r in bucket)).encode()).hexdigest()[
            :12
        ]
    )
    cells: dict[Cell, ResultRecord] = {}
    for run in bucket:
        for record in run.cases:
            cell = cell_of(run, record)
            old = cells.get(cell)
            if old is not None:
                merged.duplicates += 1
                if old.get("outcome") != record.get("outcome"):
                    merged.differing.append(
                        f"{cell[1]} [{cell[0]} {mode_slug(run.header['mode'])}]"
                    )
            cells[cell] = cast(ResultRecord, {**record, "run_id": run_id})
    first = bucket[0]
    header: RunHeader = {
        **first.header,
        "run_id": run_id,
        "backends": sorted({b for r in bucket for b in r.header.get("backends") or []}),
    }
    return Run(
        header=header,
        cases=list(cells.values()),
        end=joined_end(bucket, run_id, cells),
        source=", ".join(dict.fromkeys(r.source for r in bucket)),
        problems=[p for r in bucket for p in r.problems],
        collected=joined_collected(bucket, cells),
        description=joined_description(bucket, run_id),
    )


def joined_collected(bucket: list[Run], cells: dict[Cell, ResultRecord]) -> int | None:
    """Items the joined run collected: its distinct items when every part ran to its end, else the
    parts' counts less the cells two parts share."""
    if any(r.collected is None for r in bucket):
        return None
    items = sum(is_item_record(r) for r in cells.values())
    if not any(r.interrupted for r in bucket):
        return items
    parts = sum(is_item_record(r) for run in bucket for r in run.cases)
    return sum(cast(int, r.collected) for r in bucket) - (parts - items)


def joined_end(bucket: list[Run], run_id: str, cells: dict[Cell, ResultRecord]) -> EndRecord | None:
    """The joined run's end: the last part's time, interrupted when a part was or a shard is missing."""
    ends = [r.end for r in bucket if r.end is not None]
    if not ends:
        return None
    counts: dict[str, int] = {}
    for record in cells.values():
        tally(counts, record)
    end: EndRecord = {
        "record": "end",
        "run_id": run_id,
        "finished": max(str(e.get("finished") or "") for e in ends),
        "exitstatus": max((e["exitstatus"] or 0 for e in ends), default=None),
        "interrupted": len(ends) < len(bucket) or any(r.interrupted for r in bucket),
        "counts": counts,
    }
    missing = missing_shards(bucket)
    if missing:
        end["interrupted"] = True
        end["reason"] = f"shard {', '.join(missing)} not merged"
    elif end["interrupted"]:
        end["reason"] = "a run merged here was interrupted"
    return end


def missing_shards(bucket: list[Run]) -> list[str]:
    """`I/N` for each shard of a sharded run that no part holds (none when a part is unsharded)."""
    shards = [r.description.get("shard") if r.description else None for r in bucket]
    if not shards or any(s is None for s in shards):
        return []
    count = max(s["count"] for s in shards if s is not None)
    have = {s["index"] for s in shards if s is not None and s["count"] == count}
    return [f"{i}/{count}" for i in range(1, count + 1) if i not in have]


def joined_description(bucket: list[Run], run_id: str) -> RunDescription | None:
    """The first described part's description, with `merged_from` naming every part."""
    described = [r.description for r in bucket if r.description is not None]
    if not described:
        return None
    parts: list[PartJSON] = [
        {
            "run_id": str(r.header["run_id"]),
            "source": r.source,
            "host": r.description.get("host") if r.description else None,
            "started": str(r.header.get("started") or "") or None,
            "shard": r.description.get("shard") if r.description else None,
        }
        for r in bucket
    ]
    return {**described[0], "run_id": run_id, "shard": None, "merged_from": parts}


def run_records(run: Run) -> list[Record | RunDescription]:
    """A run's records in the order a results file holds them."""
    out: list[Record | RunDescription] = [run.description] if run.description else []
    out.append(run.header)
    if run.collected is not None:
        out.append(
            {"record": "collected", "run_id": str(run.header["run_id"]), "count": run.collected}
        )
    out.extend(run.cases)
    if run.end is not None:
        out.append(run.end)
    return out


def write_runs(runs: Sequence[Run], target: Path) -> int:
    """Write the runs into `target` (whole: written aside, then renamed); returns the record count."""
    staged = target.with_name(f".{target.name}.tmp")
    writer = ResultsWriter(staged)
    written = 0
    try:
        for run in runs:
            for record in run_records(run):
                writer.write(record)
                written += 1
    finally:
        writer.close()
    staged.replace(target)
    return written


def check_bundle(bundle: Path, force: bool) -> None:
    """`run --bundle FILE` before any work: a .jsonl file, not over an existing one without --force
    (`UsageError`, one line)."""
    if bundle.suffix != ".jsonl":
        raise UsageError(
            f"--bundle {bundle}: name it *.jsonl (report and merge read every *.jsonl they are given)"
        )
    if bundle.is_dir():
        raise UsageError(f"--bundle {bundle}: is a directory; name a file")
    if bundle.exists() and not force:
        raise UsageError(f"--bundle {bundle} exists; pass --force to replace it")


def write_bundle(results: Sequence[Path], bundle: Path) -> tuple[int, int]:
    """A run's results as one self-describing file to hand on (`run --bundle`): its runs merged
    (shards joined, each cell once), each after its description record. Returns (runs, records)."""
    merged = merge_runs(load_runs(results))
    bundle.parent.mkdir(parents=True, exist_ok=True)
    return len(merged.runs), write_runs(merged.runs, bundle)
