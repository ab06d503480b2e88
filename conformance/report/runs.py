"""The runs a report was built from, each described for the page's Runs section: machine, build,
spec revision, shard, start and end, and the files it was read from (`records.RunDescription`).

Every column of the page links to its run here (`#run-<id>`), so a merged site names where each
of its cells came from: which host, which JAX build, which specs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from jax_conformance.mode import mode_key, mode_slug
from jax_conformance.records import PartJSON, Run, RunDescription, ShardJSON
from jax_conformance.releases import version_key


@dataclass
class Part:
    """One run a merged run was made of (a shard, or the same run repeated)."""

    run_id: str
    source: str
    host: str
    started: str
    shard: str


@dataclass
class RunInfo:
    """One run as the page describes it; `described` is False for results written before runs
    described themselves (then only the header's fields are known)."""

    run_id: str
    adapter: str
    version: str
    mode: str
    backends: list[str]
    sources: list[str]
    started: str
    finished: str
    status: str  # complete, interrupted (and why), or why the release could not run
    described: bool = False
    host: str = ""
    devices: str = ""  # `cpu: cpu x 1; gpu: NVIDIA H200 x 1`
    build: str = ""  # `jax 0.10.1, jaxlib 0.10.1`
    python: str = ""
    numpy: str = ""
    suite: str = ""  # suite version and git revision
    spec_revision: str = ""
    shard: str = ""  # `2/3`, or "" for a whole run
    selection: str = ""  # `-k ...`, `-m ...`
    parts: list[Part] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"run-{self.run_id}"

    @property
    def label(self) -> str:
        return f"{self.adapter} {self.version} {self.mode}"


def shard_text(shard: ShardJSON | None) -> str:
    return f"{shard['index']}/{shard['count']}" if shard else ""


def devices_text(d: RunDescription) -> str:
    return "; ".join(
        f"{backend}: {dev.get('kind') or '?'} x {dev.get('count') if dev.get('count') is not None else '?'}"
        for backend, dev in sorted((d.get("devices") or {}).items())
    )


def parts_of(parts: Sequence[PartJSON]) -> list[Part]:
    return [
        Part(
            str(p.get("run_id") or ""),
            str(p.get("source") or ""),
            str(p.get("host") or ""),
            str(p.get("started") or ""),
            shard_text(p.get("shard")),
        )
        for p in parts
    ]


def status_of(run: Run) -> str:
    status = str(run.header.get("status") or "")
    if status:
        return f"{status}: {run.header.get('reason') or ''}".rstrip(": ")
    if not run.interrupted:
        return "complete"
    why = (run.end or {}).get("reason") if run.end is not None else "no end record"
    return f"interrupted ({why})" if why else "interrupted"


def run_info(run: Run) -> RunInfo:
    """The page's description of one (merged) run."""
    h = run.header
    info = RunInfo(
        run_id=str(h.get("run_id") or "?"),
        adapter=str(h.get("adapter") or "?"),
        version=str(h.get("implementation_version") or "?"),
        mode=mode_slug(h.get("mode")),
        backends=[str(b) for b in h.get("backends") or []],
        sources=run.source.split(", ") if run.source else [],
        started=str(h.get("started") or ""),
        finished=str(run.end.get("finished") or "") if run.end is not None else "",
        status=status_of(run),
    )
    d = run.description
    if d is None:
        return info
    info.described = True
    info.host = str(d.get("host") or "")
    info.devices = devices_text(d)
    info.build = ", ".join(f"{k} {v}" for k, v in sorted((d.get("build") or {}).items()))
    info.python, info.numpy = str(d.get("python") or ""), str(d.get("numpy") or "")
    git = d.get("git_revision")
    info.suite = f"{d.get('suite_version') or '?'}" + (f" (git {git[:12]})" if git else "")
    info.spec_revision = str(d.get("spec_revision") or "")
    info.shard = shard_text(d.get("shard"))
    selection = d.get("selection") or {}
    info.selection = " ".join(
        f"{flag} {selection[key]!r}"
        for key, flag in (("keyword", "-k"), ("markexpr", "-m"))
        if selection.get(key)
    )
    info.parts = parts_of(d.get("merged_from") or [])
    return info


def run_infos(runs: Iterable[Run]) -> list[RunInfo]:
    """Every run, in the order of the page's columns (adapter, release, mode)."""
    infos = [run_info(r) for r in runs]
    infos.sort(key=lambda i: (i.adapter, version_key(i.version), *mode_key(i.mode), i.started))
    return infos
