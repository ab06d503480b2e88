"""Driving the radar from the commands: discover the releases, search, merge what it ran, describe it.

`compat --releases RANGE` and `upgrade --from A --to B` both call `search_range`; the merged file
holds every stored run of the releases in range (full runs at the anchors, the bisected cases in
between), so the behaviour x release table and the report show each change at its release.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from jax_conformance import SPECS_DIR
from jax_conformance.compat.budget import DEFAULT_BUDGET, BudgetReport, enforce_budget
from jax_conformance.compat.discover import Release, discover, parse_range
from jax_conformance.compat.envs import default_cache_dir, find_python
from jax_conformance.compat.gates import GateFlag, gate_flags
from jax_conformance.compat.observer import RealObserver
from jax_conformance.compat.plan import ends_cost, search_plan
from jax_conformance.compat.radar import (
    FLAG,
    HARNESS,
    Found,
    Search,
    Store,
    bisect,
    record_signature,
)
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode, mode_slug
from jax_conformance.options import size_arg
from jax_conformance.protocol import AS_OF_NAMES
from jax_conformance.records import (
    ChangeJSON,
    ResultRecord,
    ResultsWriter,
    SearchJSON,
    load_runs,
    read_records,
    read_search,
    write_search,
)
from jax_conformance.releases import observed_text, version_key
from jax_conformance.spec.loader import spec_revision
from jax_conformance.text import plural
from jax_conformance.usage import check_expression, check_selection, selection_counts

SEARCHES = "searches"  # under a radar store: one JSON file per range searched, its changes
EXTRA_PYTHONS = ("3.12", "3.13")  # asked too, for the releases that need a newer Python


def add_radar_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--installer",
        choices=("auto", "uv", "pip"),
        default="auto",
        help="how environments are built: uv (a shared cache, files hardlinked: seconds a release), "
        "pip, or auto (uv when installed, else pip)",
    )
    parser.add_argument(
        "--cache-budget",
        type=size_arg,
        default=size_arg(DEFAULT_BUDGET),
        metavar="SIZE",
        help=f"disk the cached environments may take, e.g. 20G (default {DEFAULT_BUDGET}; 0: no limit); "
        "beyond it the least recently used are removed after the run",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the last search of this range even if specs/ changed since (it keeps its own "
        "copy of the specs); without it a changed specs/ starts a new search",
    )
    parser.add_argument(
        "--anchors",
        default="",
        metavar="V1,V2",
        help="releases run in full besides the ends of the range (a change and its undoing between "
        "two fully run releases cannot be seen by bisection)",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="start a search without asking (at a terminal it asks, after saying what it will cost; "
        "with no terminal it refuses, exit 2, unless --yes)",
    )


def store_root(cache: Path, as_of: str, specs: Path = SPECS_DIR, selection: str = "all") -> Path:
    """Where the radar keeps its results for this spec set and case selection (`selection_tag`),
    judged as of release `as_of`: a search under one -k never answers for another."""
    return cache / "radar" / f"{spec_revision([specs])}-{STORE_LAYOUT}-{selection}-as-of-{as_of}"


# Bump when what the store's runs observe changes (the adapter, the signature), or its files do
# (u4: its notes, unavailable.json and a probe's cases, are records; u5: the selection is part of
# the store's name, so an older store, which may hold a search under any selection, is not read,
# and each release is judged by its own blocks, the as-of release's only where it has none).
STORE_LAYOUT = "u5"


def _split_selection(args: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """The -k and -m expressions among pytest arguments (`-k X`, `-kX`), and the rest."""
    keywords: list[str] = []
    marks: list[str] = []
    rest: list[str] = []
    items = iter(a for a in args if a != "--")
    for arg in items:
        for flag, into in (("-k", keywords), ("-m", marks)):
            if arg == flag:
                into.append(next(items, ""))
                break
            if arg.startswith(flag) and not arg.startswith("--"):
                into.append(arg[len(flag) :])
                break
        else:
            rest.append(arg)
    return keywords, marks, rest


def selection(args: argparse.Namespace) -> list[str]:
    """The pytest arguments each mode run of the search takes: -k / -m (given as options, as `run`
    takes them, or after `--`; several are joined with `and`), then the rest of those after `--`.
    A selection that matches no case of the specs is refused here (UsageError), before any
    environment is built."""
    keywords, marks, rest = _split_selection(getattr(args, "pytest_args", []))
    keywords = [k for k in (getattr(args, "keyword", None), *keywords) if k]
    marks = [m for m in (getattr(args, "markexpr", None), *marks) if m]
    keyword = " and ".join(f"({k})" if len(keywords) > 1 else k for k in keywords) or None
    markexpr = " and ".join(f"({m})" if len(marks) > 1 else m for m in marks) or None
    for option, expr in (("-k", keyword), ("-m", markexpr)):
        if expr:
            check_expression(option, expr)
    check_selection(keyword, markexpr, [SPECS_DIR])
    return [*(["-k", keyword] if keyword else []), *(["-m", markexpr] if markexpr else []), *rest]


def selection_tag(extra: Sequence[str]) -> str:
    """`all` for every case, else a short hash of the selection's arguments (`sel-…`)."""
    if not extra:
        return "all"
    return "sel-" + hashlib.sha256("\0".join(extra).encode()).hexdigest()[:10]


def go_ahead(args: argparse.Namespace) -> bool:
    """Whether to start the search the plan just described: asked at a terminal (`--yes` answers
    for the user). With no terminal the commands have refused already (`refuse_unasked`) unless
    --yes was given or the store answers the range, so it goes ahead."""
    if getattr(args, "yes", False) or not sys.stdin.isatty():
        return True
    try:
        return input("radar: go ahead? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def refuse_unasked(args: argparse.Namespace, text: str, cache: Path) -> None:
    """Without --yes and with no terminal to ask at (CI, a script), a search of `text` that may
    install releases and run the suite is refused before any work (UsageError: one line, exit 2,
    nothing installed or run, no directory made), naming what it would do and about what it costs. A range whose
    saved search in the store has the same ends is answered from the store: not refused."""
    if getattr(args, "yes", False) or sys.stdin.isatty():
        return
    try:
        lo, hi = parse_range(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    extra = selection(args)
    low = str(lo)
    root = store_root(cache, str(hi), selection=selection_tag(extra)) if hi else None
    if root is not None:
        saved = cached_search(root, low, str(hi))
        if saved is not None and saved["releases"][0] == low and saved["releases"][-1] == str(hi):
            return
    anchors = [a.strip() for a in args.anchors.replace(",", " ").split() if a.strip()]
    ends = [low, *anchors, *([str(hi)] if hi else [])]
    keywords, marks, _ = _split_selection(extra)
    selected = selection_counts(next(iter(keywords), None), next(iter(marks), None), [SPECS_DIR])
    slugs = [mode_slug(m) for m in args.modes]
    stored = stored_ends(Store(root), ends, slugs) if root is not None and root.is_dir() else None
    cost = ends_cost(ends, cache, len(slugs), selected, args.jobs, stored)
    raise UsageError(
        f"not searching {text} without --yes (no terminal to ask at): it would install the JAX "
        f"releases in that range under {cache} and run the suite in {plural(len(slugs), 'mode')} "
        f"at each end: {cost}. Pass --yes to go ahead; nothing was installed or run"
    )


def interpreters(args: argparse.Namespace) -> dict[str, str]:
    """Python minor -> interpreter: the one given (--python), and 3.12/3.13 where found."""
    import subprocess

    minor = subprocess.run(
        [args.python, "-c", "import sys;print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    out = {minor: args.python}
    given = {k: v for k, _, v in (i.partition("=") for i in args.interpreter)}
    for extra in EXTRA_PYTHONS:
        if extra not in out:
            found = find_python(extra, given)
            if found:
                out[extra] = found
    return out


@dataclass
class RadarRun:
    releases: list[Release]
    search: Search
    observer: RealObserver
    store: Store
    budget: BudgetReport
    seconds: float
    discovery_s: float


def _store_dir(
    args: argparse.Namespace, cache: Path, as_of: str, say: Callable[[str], None]
) -> Path:
    """The store for the current specs; with --resume and none yet, the newest earlier one for
    the same release (it keeps its own copy of the specs)."""
    tag = selection_tag(selection(args))
    root = store_root(cache, as_of, selection=tag)
    if getattr(args, "resume", False) and not root.is_dir():
        earlier = sorted(
            (cache / "radar").glob(f"*-{STORE_LAYOUT}-{tag}-as-of-{as_of}"),
            key=lambda p: p.stat().st_mtime,
        )
        if earlier:
            root = earlier[-1]
            say(
                f"radar: resuming the search in {root.name} with its own copy of the specs (specs/ changed since)"
            )
    return root


def stored_ends(store: Store, ends: Sequence[str], modes: Sequence[str]) -> dict[str, int]:
    """Per end of a search, how many of these modes' full runs the store holds (ended): the
    observer answers those from the store (`modes_to_run`), so the plan neither runs nor builds
    for them."""
    return {r: len(store.observations(r, modes)[1] & set(modes)) for r in ends}


def search_range(
    args: argparse.Namespace,
    text: str,
    say: Callable[[str], None] = print,
    store_dir: Path | None = None,
) -> RadarRun:
    """Discover the releases of `text` (all, or A..B), bisect every change between them, keep the cache in budget."""
    start = time.monotonic()
    try:
        lo, hi = parse_range(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cache = (args.cache_dir or default_cache_dir()).resolve()
    pythons = interpreters(args)
    releases, problems = discover(pythons, lo, hi)
    for minor, why in problems.items():
        say(f"radar: Python {minor}: {why}")
    discovery_s = time.monotonic() - start
    if len(releases) < 2:
        raise UsageError(
            f"{text}: the package index offers {plural(len(releases), 'release')} in that range for Python "
            f"{', '.join(sorted(pythons))}; at least two are needed"
        )
    say(
        f"radar: {len(releases)} releases in {text} ({discovery_s:.1f} s to ask pip): "
        + ", ".join(
            f"{r.version}" + (f" (py{r.minor})" if r.minor != min(pythons) else "")
            for r in releases
        )
    )
    anchors = [a.strip() for a in args.anchors.replace(",", " ").split() if a.strip()]
    names = [r.version for r in releases]
    extra = selection(args)
    keywords, marks, _ = _split_selection(extra)
    as_of = releases[-1].version
    root = _store_dir(args, cache, as_of, say) if store_dir is None else store_dir
    ends = [r for r in names if r in {names[0], names[-1], *anchors}]
    say(
        "radar: "
        + search_plan(
            names,
            ends,
            cache,
            len(args.modes),
            selection_counts(next(iter(keywords), None), next(iter(marks), None), [SPECS_DIR]),
            args.jobs,
            stored_ends(Store(root), ends, [mode_slug(m) for m in args.modes]),
        )
    )
    if not go_ahead(args):
        raise UsageError("radar: not searched (answered no); nothing was installed or run")
    root.mkdir(parents=True, exist_ok=True)
    specs = root / "specs"
    if not specs.is_dir():
        shutil.copytree(SPECS_DIR, specs, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    store = Store(root)
    say(
        f"radar: results kept in {root}; each release judged by the spec's blocks for it (a case "
        f"with none there by those for {as_of})"
    )
    modes: Sequence[Mode] = args.modes
    observer = RealObserver(
        store,
        modes,
        cache,
        {r.version: r.python for r in releases},
        specs,
        jobs=args.jobs,
        build_jobs=args.build_jobs,
        install_timeout=args.install_timeout,
        run_timeout=args.run_timeout,
        installer=args.installer,
        rebuild=args.rebuild,
        pins=list(args.pin),
        as_of=as_of,
        extra=extra,
        say=say,
    )
    search = bisect(names, observer, anchors, say=say)
    used = [e.path for e in observer.envs.values() if e.ok]
    budget = enforce_budget(cache, args.cache_budget, used)
    say(budget.describe())
    return RadarRun(
        releases, search, observer, store, budget, time.monotonic() - start, discovery_s
    )


def merged_results(run: RadarRun, target: Path) -> int:
    """Every stored run of the searched releases (in release order) into one results file; a case
    record that says the harness failed is left out where a later run of the same release and
    mode observed that case (the observer runs such cases again)."""
    files = [f for r in sorted(run.search.releases, key=version_key) for f in run.store.files(r)]
    observed: set[tuple[str, str, str]] = set()
    for path in files:
        for record in read_records(path):
            if (
                record.get("record") == "case"
                and record_signature(cast(ResultRecord, record)) != HARNESS
            ):
                observed.add(_record_key(path, cast(ResultRecord, record)))
    count = 0
    writer = ResultsWriter(target)
    try:
        for path in files:
            for record in read_records(path):
                if (
                    record.get("record") == "case"
                    and record_signature(cast(ResultRecord, record)) == HARNESS
                    and _record_key(path, cast(ResultRecord, record)) in observed
                ):
                    continue
                # the as-of adapter is JAX: its records are shown as jax's
                writer.write(
                    {**record, "adapter": "jax"} if record.get("adapter") in AS_OF_NAMES else record
                )
                count += 1
    finally:
        writer.close()
    return count


def _record_key(path: Path, record: ResultRecord) -> tuple[str, str, str]:
    """(release, mode, case) of a record in the store (`<release>/<mode>/<tag>.jsonl`)."""
    return (path.parent.parent.name, path.parent.name, str(record.get("case")))


def case_facts(store: Store, releases: Sequence[str]) -> dict[str, ResultRecord]:
    """case -> one of its records (topic, claim, source, basis, spec_file), newest release first."""
    out: dict[str, ResultRecord] = {}
    for release in sorted(releases, key=version_key, reverse=True):
        for run in load_runs(store.files(release)):
            for rec in run.cases:
                out.setdefault(str(rec.get("case")), rec)
    return out


def _said_at(store: Store, release: str) -> dict[tuple[str, str], str]:
    """(mode key, case) -> what the case did in this release, in full (`releases.observed_text`),
    keyed as the radar's signatures are (`slug`, or `slug@backend` off the CPU)."""
    out: dict[tuple[str, str], str] = {}
    for run in store.complete_runs(release):
        slug = mode_slug(run.header.get("mode", {}))
        for rec in run.cases:
            if record_signature(rec) == HARNESS:
                continue
            backend = rec.get("backend")
            key = slug if backend in (None, "cpu") else f"{slug}@{backend}"
            out[(key, str(rec.get("case") or ""))] = observed_text(rec)
    return out


def said(store: Store, changes: Sequence[Found]) -> dict[int, dict[str, dict[str, str]]]:
    """Each case change's full before and after per mode (index in `changes` -> {before, after})."""
    at: dict[str, dict[tuple[str, str], str]] = {}
    out: dict[int, dict[str, dict[str, str]]] = {}
    for i, found in enumerate(changes):
        if found.case.startswith(FLAG):
            continue
        sides: dict[str, dict[str, str]] = {"before": {}, "after": {}}
        for side, release in (("before", found.previous), ("after", found.release)):
            if (
                release and release not in at
            ):  # read once per release (setdefault would read it every time)
                at[release] = _said_at(store, release)
            texts = at.get(release, {}) if release else {}
            for mode in found.modes:
                text = texts.get((mode, found.case))
                if text:
                    sides[side][mode] = text
        out[i] = sides
    return out


def describe_change(before: str, after: str) -> str:
    return f"{before or '-'} -> {after or '-'}"


def spec_path(text: str, specs: Path) -> str:
    """A record's spec file as a search keeps it: `specs/<topic>/<file>.yaml`, relative (as a run's
    records name it; `compat.table.SPEC_FILE_ROOT` resolves it), never the path of the store's copy
    of the specs on the machine that searched, which a shipped search must not carry; an absolute
    path outside that copy is dropped ("")."""
    path = Path(text)
    if not path.is_absolute():
        return text
    if path.is_relative_to(specs):
        return (Path(SPECS_DIR.name) / path.relative_to(specs)).as_posix()
    return ""


def changes_json(run: RadarRun) -> SearchJSON:
    """The radar's findings: each change with its release, the releases probed, install times, flags."""
    facts = case_facts(run.store, run.search.releases)
    texts = said(run.store, run.search.changes)
    changes: list[ChangeJSON] = []
    for i, found in enumerate(run.search.changes):
        rec = facts.get(found.case)
        change: ChangeJSON = {
            **found.to_json(),
            "topic": (rec.get("topic") if rec else None) or found.case.rsplit(".", 1)[0],
            "claim": rec.get("claim", "") if rec else "",
            "basis": rec.get("basis") if rec else None,
            "source": rec.get("source") if rec else None,
            "spec_file": spec_path(rec.get("spec_file", ""), run.store.root / "specs")
            if rec
            else "",
        }
        if i in texts:
            change["said"] = texts[i]
        changes.append(change)
    return {
        "releases": run.search.releases,
        "anchors": run.search.anchors,
        "unavailable": run.search.unavailable,
        "probes": [{"release": r, "cases": n} for r, n in run.search.probes],
        "runs": run.search.runs(),
        "changes": changes,
        "flags": flag_history(run.search),
        "environments": {
            s.release: {
                "build_s": round(s.build_s, 1),
                "cached": s.cached,
                "installer": s.installer,
                "mode_runs": s.runs,
                "cases": s.cases,
                "run_s": round(s.run_s, 1),
                "reason": s.reason,
            }
            for s in run.observer.stats.values()
        },
        "cache": {
            "bytes": run.budget.kept,
            "budget": run.budget.budget,
            "removed": [str(p) for p, _ in run.budget.removed],
        },
        "seconds": round(run.seconds, 1),
        "discovery_s": round(run.discovery_s, 1),
    }


def gate_check(run: RadarRun, data: SearchJSON, specs: Path = SPECS_DIR) -> list[GateFlag]:
    """The version gates in `specs` that move at a searched release where the case did not change."""
    changed: dict[str, dict[str, set[str]]] = {}
    for ch in data["changes"]:
        changed.setdefault(ch["case"], {}).setdefault(ch["release"], set()).update(ch["modes"])
    observed = case_facts(run.store, run.search.releases)
    available = [r for r in run.search.releases if r not in run.search.unavailable]
    return gate_flags(
        [specs], available, changed, observed, list(run.observer.modes), root=specs.parent
    )


def flag_history(search: Search) -> dict[str, list[dict[str, str]]]:
    """flag -> its changes: the first release that has it (absent -> default X), each flip of its default."""
    out: dict[str, list[dict[str, str]]] = {}
    for found in search.changes:
        if found.case.startswith(FLAG):
            out.setdefault(found.case[len(FLAG) :], []).append(
                {
                    "release": found.release,
                    "before": found.before.get("*", ""),
                    "after": found.after.get("*", ""),
                }
            )
    return out


def format_changes_text(run: RadarRun, data: SearchJSON | None = None) -> str:
    """One line per change, grouped by release: `0.4.34  custom_jvp....  off-warn: passed -> failed: raised ...`."""
    data = data or changes_json(run)
    lines = []
    by_release: dict[str, list[ChangeJSON]] = {}
    for ch in data["changes"]:
        by_release.setdefault(ch["release"], []).append(ch)
    for release in sorted(by_release, key=version_key):
        items = by_release[release]
        lines.append(
            f"jax {release} (after {items[0]['previous']}): {plural(len(items), 'change')}"
        )
        for ch in items:
            modes = ch["modes"]
            pairs = dict.fromkeys((ch["before"][m], ch["after"][m]) for m in modes)
            what = "; ".join(describe_change(b, a) for b, a in pairs)
            lines.append(f"  {ch['case']} [{', '.join(modes)}]: {what}")
    return "\n".join(lines)


def save_search(root: Path, data: SearchJSON) -> Path:
    """Keep a search's findings beside its results, for `upgrade` to answer from."""
    releases = data["releases"]
    return write_search(root / SEARCHES / f"{releases[0]}..{releases[-1]}.json", data)


def cached_search(root: Path, a: str, b: str) -> SearchJSON | None:
    """The narrowest saved search whose releases hold both A and B (None: none does)."""
    best: tuple[int, SearchJSON] | None = None
    for path in sorted((root / SEARCHES).glob("*.json")):
        data = read_search(path)  # None: not a search record (one written before they were records)
        if data is None:
            continue
        releases = data.get("releases", [])
        if a in releases and b in releases and (best is None or len(releases) < best[0]):
            best = (len(releases), data)
    return best[1] if best else None
