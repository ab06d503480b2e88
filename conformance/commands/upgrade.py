"""`jax-conformance upgrade --from A --to B`: what changes for a user going from JAX A to JAX B.

Every behaviour of the suite that changes between the two releases, grouped by topic, each with
the release it changed in (bisected: `compat.radar`), before and after in the spec's terms, the
spec's claim, its source and its basis (documented or tested: a change in what the docs or JAX's
tests promise; observed: in behaviour nobody promised). A page (`upgrade-A-B.html`) and a text
summary (`upgrade-A-B.txt`, also printed).

It reuses what is cached: a radar search over a range that holds both A and B, made under the same
case selection (-k, -m), answers at once (its changes between A and B), and the results stored per
release are never run again, so a second call installs and runs nothing. With nothing cached it
searches, and says first what that builds and runs and about what it costs (`compat.plan`).
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from pathlib import Path

from jax_conformance import SPECS_DIR, options
from jax_conformance.compat.drive import (
    STORE_LAYOUT,
    add_radar_arguments,
    cached_search,
    changes_json,
    refuse_unasked,
    save_search,
    search_range,
    selection,
    selection_tag,
)
from jax_conformance.compat.envs import (
    DEFAULT_CACHE,
    add_environment_arguments,
    default_cache_dir,
)
from jax_conformance.compat.plan import search_plan
from jax_conformance.compat.shipped import (
    answerable,
    case_digests,
    find_shipped,
    releases_text,
    ship,
    stale_cases,
)
from jax_conformance.errors import UsageError
from jax_conformance.launch import rundir
from jax_conformance.mode import DEFAULT_MODES, read_modes
from jax_conformance.records import ChangeJSON, SearchJSON, write_one
from jax_conformance.releases import version_key
from jax_conformance.spec.loader import spec_revision
from jax_conformance.text import plural
from packaging.version import InvalidVersion, Version


def _release(text: str) -> str:
    try:
        Version(text)
    except InvalidVersion:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a release number (e.g. 0.4.33)"
        ) from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="from_release",
        type=_release,
        required=True,
        metavar="A",
        help="the release upgraded from",
    )
    parser.add_argument(
        "--to",
        dest="to_release",
        type=_release,
        required=True,
        metavar="B",
        help="the release upgraded to",
    )
    options.add_out(
        parser, "where the page and the summary go (default: a new directory in reports/runs/)"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="search A..B itself even when a cached or shipped search over a wider range holds both",
    )
    parser.add_argument(
        "--ship",
        action="store_true",
        help="write the search (cached, else run now) into specs/radar/ as the data the suite ships, "
        "with the spec revision and each case's digest (every case, the four default modes)",
    )
    options.add_modes(parser, upcoming=False, note="run in each release")
    options.add_keyword(parser)
    options.add_markexpr(parser)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help=f"environments and the radar's results (default: $JAX_CONFORMANCE_CACHE, else {DEFAULT_CACHE})",
    )
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter the environments are created from"
    )
    parser.add_argument(
        "--interpreter",
        action="append",
        default=[],
        metavar="MINOR=PATH",
        help="the interpreter for releases that need another Python, e.g. 3.12=/usr/bin/python3.12",
    )
    add_environment_arguments(parser)
    add_radar_arguments(parser)
    parser.add_argument(
        "pytest_args",
        nargs="*",
        metavar="-- PYTEST_ARGS",
        help="passed to each pytest run (-k and -m here select as the options do)",
    )


def find_cached(cache: Path, a: str, b: str, tag: str = "all") -> SearchJSON | None:
    """A saved radar search holding both releases, made under the same case selection (`tag`):
    of the current specs first, else of earlier ones (said)."""
    digest = spec_revision([SPECS_DIR])
    roots = sorted(
        (cache / "radar").glob(f"*-{STORE_LAYOUT}-{tag}-as-of-*"),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    roots.sort(key=lambda p: not p.name.startswith(digest))  # stable: the current spec set's first
    for root in roots:
        data = cached_search(root, a, b)
        if data is not None:
            if not root.name.startswith(digest):
                print(
                    f"upgrade: specs/ changed since the radar searched {a}..{b}; answering from that search "
                    f"({root.name}; --fresh to search again)"
                )
            return data
    return None


def _from_shipped(
    a: str, b: str, args: argparse.Namespace, tag: str, cache: Path
) -> tuple[SearchJSON, str] | None:
    """The answer of a search shipped with the suite (`compat.shipped`), for every case in the four
    default modes: the changes of the cases unchanged since it was computed, and a line naming
    the others and what a search of them would cost (None: no shipped search holds A and B)."""
    if tag != selection_tag([]) or [m.slug for m in args.modes] != [m.slug for m in DEFAULT_MODES]:
        return None
    shipped = find_shipped(a, b)
    if shipped is None or "shipped" not in shipped:
        return None
    now = case_digests()
    stale = stale_cases(shipped, now)
    facts = shipped["shipped"]
    how = (
        f"from the search shipped with the suite over {releases_text(shipped)} (computed "
        f"{facts['computed']} for spec revision {facts['spec_revision']}); nothing installed or run"
    )
    if stale:
        ends = [shipped["releases"][0], shipped["releases"][-1]]
        cost = search_plan(
            shipped["releases"],
            ends,
            cache,
            len(DEFAULT_MODES),
            (len(stale), len(case_digests())),
            args.jobs,
        )
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        print(
            f"upgrade: {plural(len(stale), 'case')} added or changed since the shipped search are not in this "
            f"answer: {shown}. Searching them (--fresh): {cost}"
        )
        how += f"; {plural(len(stale), 'case')} added or changed since are not answered"
    return answerable(shipped, stale), how


def between(data: SearchJSON, a: str, b: str) -> list[ChangeJSON]:
    """The changes of a search that lie between A (exclusive) and B (inclusive)."""
    lo, hi = version_key(a), version_key(b)
    return [
        c
        for c in data["changes"]
        if lo <= version_key(c["previous"]) and version_key(c["release"]) <= hi
    ]


PROMISED = ("documented", "tested")


def summary_text(a: str, b: str, changes: list[ChangeJSON], how: str) -> str:
    cases = [c for c in changes if not c["case"].startswith("flag:")]
    flags = [c for c in changes if c["case"].startswith("flag:")]
    promised = sum(1 for c in cases if c.get("basis") in PROMISED)
    lines = [
        f"Upgrading JAX {a} -> {b}: {plural(len(cases), 'behaviour change')} ({promised} in documented or tested "
        f"behaviour, {len(cases) - promised} observed-only), {plural(len(flags), 'flag change')}; {how}"
    ]
    by_topic: dict[str, list[ChangeJSON]] = {}
    for c in cases:
        by_topic.setdefault(c["topic"], []).append(c)
    for topic in sorted(by_topic):
        lines.append(f"\n[{topic}]")
        for c in sorted(by_topic[topic], key=lambda c: (version_key(c["release"]), c["case"])):
            basis = c.get("basis") or "?"
            lines.append(
                f"  {c['case']}  changed in {c['release']} (after {c['previous']}; {basis})"
            )
            if c.get("claim"):
                lines.append(f"    claim: {c['claim']}")
            for modes, before, after in change_pairs(c):
                lines.append(f"    {', '.join(modes)}: {before}")
                lines.append(f"    {' ' * len(', '.join(modes))}  -> {after}")
            if c.get("source"):
                lines.append(f"    source: {_source_text(c['source'])}")
            if c.get("skipped"):
                lines.append(f"    (could not run: {', '.join(c['skipped'])})")
    if flags:
        lines.append("\n[upgrade flags]")
        for c in flags:
            lines.append(
                f"  {c['case'][len('flag:') :]}: {c['before'].get('*', '')} -> {c['after'].get('*', '')} "
                f"in {c['release']}"
            )
    return "\n".join(lines)


def change_pairs(change: ChangeJSON) -> list[tuple[list[str], str, str]]:
    """(modes, before, after) for each distinct before/after of a change, in full where the search
    kept what the case did (`said`: the whole message), else as compared (its opening words)."""
    said = change.get("said") or {}
    full = {
        m: (
            said.get("before", {}).get(m) or change["before"][m],
            said.get("after", {}).get(m) or change["after"][m],
        )
        for m in change["modes"]
    }
    pairs = dict.fromkeys(full.values())
    return [([m for m in change["modes"] if full[m] == p], p[0], p[1]) for p in pairs]


def _source_text(source: object) -> str:
    if isinstance(source, list):
        return "; ".join(_source_text(s) for s in source)
    if isinstance(source, dict):
        return " ".join(str(v) for v in source.values() if isinstance(v, (str, int)))[:200]
    return str(source)[:200]


def page(a: str, b: str, changes: list[ChangeJSON], how: str) -> str:
    """A self-contained HTML page of the same changes."""
    esc = html.escape
    rows = []
    for c in sorted(changes, key=lambda c: (c["topic"], version_key(c["release"]), c["case"])):
        if c["case"].startswith("flag:"):
            continue
        what = "".join(
            f"<div><span class=modes>{esc(', '.join(modes))}</span>: "
            f"<span class=before>{esc(before)}</span> &rarr; <span class=after>{esc(after)}</span></div>"
            for modes, before, after in change_pairs(c)
        )
        basis = c.get("basis") or "?"
        rows.append(
            f"<tr class='basis-{esc(basis)}'><td>{esc(c['topic'])}</td><td><code>{esc(c['case'])}</code>"
            f"<div class=claim>{esc(c.get('claim') or '')}</div></td><td>{esc(c['release'])}</td>"
            f"<td>{what}</td><td>{esc(basis)}</td><td>{esc(_source_text(c.get('source') or ''))}</td></tr>"
        )
    flags = "".join(
        f"<li><code>{esc(c['case'][5:])}</code>: {esc(c['before'].get('*', ''))} &rarr; "
        f"{esc(c['after'].get('*', ''))} in {esc(c['release'])}</li>"
        for c in changes
        if c["case"].startswith("flag:")
    )
    return f"""<!doctype html><html lang=en><head><meta charset=utf-8><title>Upgrading JAX {esc(a)} to {esc(b)}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 6px;vertical-align:top;overflow-wrap:anywhere}}
.claim{{color:#555;font-size:90%}}.before{{color:#555}}.after{{font-weight:600}}
.basis-observed td{{background:#fafafa}}</style></head>
<body><h1>Upgrading JAX {esc(a)} &rarr; {esc(b)}</h1><p>{esc(how)}</p>
<table><thead><tr><th>topic</th><th>case (claim)</th><th>changed in</th>
<th>before &rarr; after</th><th>basis</th><th>source</th></tr></thead>
<tbody>{"".join(rows) or "<tr><td colspan=6>no behaviour of the suite changes</td></tr>"}</tbody></table>
{f"<h2>Upgrade flags</h2><ul>{flags}</ul>" if flags else ""}</body></html>
"""


def main(args: argparse.Namespace) -> int:
    start = time.monotonic()
    a, b = args.from_release, args.to_release
    args.modes = read_modes(args.modes, upcoming=False).modes
    if Version(a) >= Version(b):
        raise UsageError(
            f"--from {a} --to {b}: the release upgraded from must be older than the one upgraded to"
        )
    tag = selection_tag(selection(args))
    if args.ship and (tag != selection_tag([]) or len(args.modes) != len(DEFAULT_MODES)):
        raise UsageError(
            "--ship: the shipped search covers every case in the four default modes; drop -k, -m and --modes"
        )
    cache = (args.cache_dir or default_cache_dir()).resolve()
    # --ship runs the search (a stored one answers at once), so the spec copy it judged is known.
    data = None if args.fresh or args.ship else find_cached(cache, a, b, tag)
    answer = (
        None
        if data is not None or args.fresh or args.ship
        else _from_shipped(a, b, args, tag, cache)
    )
    if data is not None:
        rs = data["releases"]
        how = (
            f"from the cached radar search {rs[0]}..{rs[-1]} ({len(rs)} releases; cases that differ between "
            f"its ends, bisected); nothing installed or run"
        )
    elif answer is not None:
        data, how = answer
    else:
        refuse_unasked(args, f"{a}..{b}", cache)
        print(
            f"upgrade: no search holding {a} and {b} under this selection is in {cache / 'radar'}; "
            "searching now: installing releases and running the suite (its cost follows once pip "
            "has listed the releases)"
        )
        run = search_range(args, f"{a}..{b}")
        data = changes_json(run)
        save_search(run.store.root, data)
        ran = sum(s.runs for s in run.observer.stats.values())
        built = sum(1 for s in run.observer.stats.values() if not s.cached and not s.reason)
        how = (
            f"radar search {a}..{b}: {len(data['releases'])} releases, {run.search.runs()} release observations, "
            f"{built} environments built, {ran} mode runs"
        )
        if args.ship:
            command = f"jax-conformance upgrade --from {a} --to {b} --ship"
            print(f"shipped: {ship(data, run.store.root / 'specs', command)}")
    changes = between(data, a, b)
    text = summary_text(a, b, changes, how)
    out = rundir.new_run_dir("upgrade") if args.out is None else args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / f"upgrade-{a}-{b}.txt").write_text(text + "\n")
    (out / f"upgrade-{a}-{b}.html").write_text(page(a, b, changes, how))
    write_one(
        out / f"upgrade-{a}-{b}.json",
        "upgrade",
        {"from": a, "to": b, "how": how, "changes": changes},
    )
    print(text)
    print(
        f"\npage: {out / f'upgrade-{a}-{b}.html'}\nsummary: {out / f'upgrade-{a}-{b}.txt'}; "
        f"{time.monotonic() - start:.1f} s"
    )
    return 0
