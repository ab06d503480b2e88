"""The published site across runs at the issue's scale: 34 releases x 8 modes (issue #36).

    .venv/bin/python bench/site.py                      # every case of the source runs
    .venv/bin/python bench/site.py --cases 500          # the first 500 cases of each mode
    .venv/bin/python bench/site.py --source DIR         # DIR/<release>/<mode>/all.jsonl

The records are real, their labels are not: this measures the site's scale, not JAX. The source
is one radar search's full runs of the suite (the compat cache's `radar/<revision>-...-all-...`:
every case in the four x64 modes at two JAX releases, 0.10.1 and 0.10.2). Each of 34 release
labels (1.0.0 .. 1.33.0, not JAX releases) takes the older release's records for its first half
and the newer one's after, so the behaviour x release table has real changes at one release;
each of the 4 modes is written twice, as itself and with `jax_numpy_dtype_promotion=strict`
set (the strict flag set), 8 modes. Each run's file starts with a description record (host,
build, spec revision) as `run` writes one, so the Runs section is drawn for 272 runs.

It times `jax-conformance report DIR --out SITE` as a fresh process (its start, loading, merge,
model and render), its peak memory, and the first page's bytes (page, CSS, JS, data.js); figures
to bench/site.json and printed as a table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "site.json"
sys.path.insert(0, str(ROOT))

from bench.measure import machine  # noqa: E402

RELEASES = [f"1.{i}.0" for i in range(34)]
STRICT = {"jax_numpy_dtype_promotion": "strict"}


def default_source() -> Path | None:
    """The newest radar search in the compat cache with full runs of two releases."""
    from jax_conformance.compat.envs import default_cache_dir

    found = [
        d
        for d in sorted((default_cache_dir() / "radar").glob("*-all-*"), key=os.path.getmtime)
        if len(list(d.glob("*/*/all.jsonl"))) >= 8
    ]
    return found[-1] if found else None


def source_runs(source: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """release -> mode directory -> its case records, as the search wrote them."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted(source.glob("*/*/all.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        out.setdefault(path.parent.parent.name, {})[path.parent.name] = [
            r for r in records if r.get("record") == "case"
        ]
    return out


def relabelled(
    release: str, mode: dict[str, Any], cases: list[dict[str, Any]], n: int
) -> Iterator[dict[str, Any]]:
    """One run's records: a description, its header, its cases and its end, under these labels."""
    run_id = f"bench-{release}-{n}"
    started = "2026-12-03T00:00:00+00:00"
    labels = {
        "run_id": run_id,
        "adapter": "jax",
        "implementation_version": release,
        "behaviour_version": release,
        "mode": mode,
    }
    yield {
        "record": "description",
        **labels,
        "started": started,
        "host": "bench",
        "suite_version": "0.1.0",
        "git_revision": None,
        "spec_revision": "bench",
        "specs": [],
        "build": {"jax": release, "jaxlib": release},
        "python": "3.11.7",
        "numpy": "2.4.6",
        "backends": ["cpu"],
        "devices": {"cpu": {"kind": "cpu", "count": 1}},
        "selection": {"keyword": None, "markexpr": None},
        "shard": None,
        "argv": [],
    }
    yield {"record": "run", **labels, "started": started, "backends": ["cpu"], "environment": {}}
    yield {"record": "collected", "run_id": run_id, "count": len(cases)}
    for case in cases:
        yield {**case, **labels}
    yield {
        "record": "end",
        "run_id": run_id,
        "finished": "2026-12-03T00:10:00+00:00",
        "exitstatus": 0,
        "interrupted": False,
    }


def write_inputs(source: Path, target: Path, cases: int | None) -> int:
    """The 34 x 8 result files; returns the case records written."""
    runs = source_runs(source)
    old, new = sorted(runs)[0], sorted(runs)[-1]
    written = 0
    for i, release in enumerate(RELEASES):
        per_mode = runs[old if i < len(RELEASES) // 2 else new]
        for slug, records in sorted(per_mode.items()):
            records = records[:cases] if cases else records
            for flags in ({}, STRICT):
                mode = {**records[0]["mode"], "flags": flags}
                n = len(list(target.glob("*.jsonl")))
                with open(target / f"{release}-{slug}-{len(flags)}.jsonl", "w") as f:
                    for record in relabelled(release, mode, records, n):
                        f.write(json.dumps(record, separators=(",", ":")) + "\n")
                written += len(records)
    return written


def measure(inputs: Path, site: Path) -> dict[str, Any]:
    """`report` over the inputs as a fresh process: wall seconds, peak memory, first page."""
    from jax_conformance.report.site import first_page_bytes

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu0 = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jax_conformance.cli", "report", str(inputs), "--out", str(site)],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"report failed: {proc.stderr.strip()[-2000:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime - cpu0
    index = site / "index.html"
    return {
        "report_s": round(wall, 2),
        "report_cpu_s": round(cpu, 2),  # user + system: far less moved by other load than the wall
        "peak_rss_mb": round(max(peak, before) / 1024),
        "first_page_bytes": first_page_bytes(index),
        "index_bytes": index.stat().st_size,
        "site_bytes": sum(p.stat().st_size for p in site.rglob("*") if p.is_file()),
        "said": next((ln for ln in proc.stdout.splitlines() if ln.startswith("report: ")), ""),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--cases", type=int, default=None, help="the first N cases of each mode")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    source = args.source or default_source()
    if source is None:
        raise SystemExit("no radar search with full runs in the compat cache: pass --source DIR")
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        inputs = Path(tmp) / "inputs"
        inputs.mkdir()
        t0 = time.perf_counter()
        records = write_inputs(source, inputs, args.cases)
        made = time.perf_counter() - t0
        figures = measure(inputs, Path(tmp) / "site")
    result = {
        "machine": machine(),
        "source": str(source),
        "releases": len(RELEASES),
        "modes": 8,
        "runs": len(RELEASES) * 8,
        "case_records": records,
        "inputs_written_s": round(made, 1),
        **figures,
    }
    runs = json.loads(args.out.read_text()) if args.out.is_file() else {}
    runs[str(args.cases or "all")] = result
    args.out.write_text(json.dumps(runs, indent=1) + "\n")
    print(
        f"| {result['runs']} runs | {records:,} | {result['report_s']} s | {result['report_cpu_s']} s | "
        f"{result['first_page_bytes'] / 1e6:.2f} MB | {result['peak_rss_mb']} MB |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
