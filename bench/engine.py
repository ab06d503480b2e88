"""What `--engine ray` and `--shards` cost against the local run, side by side (issue #36).

    .venv/bin/python bench/engine.py                 # -k x64 over the 4 modes, 3 rounds
    .venv/bin/python bench/engine.py -k x64 --rounds 1

Each round runs, back to back on the same machine, the same selection of the real specs with
the jax adapter in the four default modes:
  local      `run` (a process per mode, -j = cores)
  ray        `run --engine ray` (an actor per mode on a local Ray cluster of `cores` CPUs,
             started by the command: its start-up is in the figure)
  ray-shards `run --engine ray --shards 2` (8 actors: each mode in two shards)
and checks that the three gave the same cells. Figures are the median wall time of each, and the
ratios to local; a local Ray cluster on one machine cannot be faster than local processes (the
same cores), so the ratio is the engine's overhead, the price of spreading a run over machines.

Also: the cost per release environment, read from the compat cache's environments as built
(`conformance-env.json`: build seconds, installer) and `du` (disk), and what uv's shared,
hard-linked wheel cache saves: the sum of the environments' own sizes against the disk they take
together (`du` counts a hard-linked file once).

Figures go to bench/engine.json and are printed as a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "engine.json"
sys.path.insert(0, str(ROOT))

from bench.measure import machine  # noqa: E402

VARIANTS = {
    "local": [],
    "ray": ["--engine", "ray"],
    "ray-shards": ["--engine", "ray", "--shards", "2"],
}


def cells(path: Path) -> dict[tuple[str, str], str]:
    found = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("record") == "case":
            found[(record["case"], json.dumps(record["mode"], sort_keys=True))] = record["outcome"]
    return found


def one(variant: str, keyword: str, tmp: Path) -> tuple[float, dict[tuple[str, str], str]]:
    out = tmp / f"{variant}-{time.monotonic_ns()}"
    argv = [sys.executable, "-m", "jax_conformance.cli", "run", "-k", keyword, "--no-report"]
    argv += ["-j", str(os.cpu_count() or 1), "--out", str(out), *VARIANTS[variant]]
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(
            f"{variant} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
        )
    return wall, cells(out / "results.jsonl")


def env_costs(cache: Path) -> dict[str, Any]:
    """Each cached environment's build seconds, installer and own size; and their size together."""
    envs = sorted(
        p for p in (cache / "envs").glob("jax-*") if (p / "conformance-env.json").is_file()
    )
    each = {}
    for env in envs:
        marker = json.loads((env / "conformance-env.json").read_text())
        size = int(
            subprocess.run(["du", "-sb", str(env)], capture_output=True, text=True).stdout.split()[
                0
            ]
        )
        each[env.name] = {
            "version": marker.get("version"),
            "build_s": marker.get("build_seconds"),
            "installer": marker.get("installer"),
            "bytes": size,
        }
    together = 0
    if envs:
        du = subprocess.run(["du", "-sbc", *map(str, envs)], capture_output=True, text=True).stdout
        together = int(du.strip().splitlines()[-1].split()[0])
    return {"cache": str(cache), "environments": each, "bytes_together": together}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="x64", help="the cases run (a pytest -k expression)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("JAX_CONFORMANCE_CACHE", ""))
    )
    args = parser.parse_args()
    walls: dict[str, list[float]] = {v: [] for v in VARIANTS}
    same = True
    start = machine()
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        for _ in range(args.rounds):
            found = []
            for variant in VARIANTS:
                wall, seen = one(variant, args.k, Path(tmp))
                walls[variant].append(wall)
                found.append(seen)
            same = same and all(f == found[0] for f in found)
            ncells = len(found[0])
    median = {v: statistics.median(w) for v, w in walls.items()}
    data = {
        "selection": args.k,
        "cells": ncells,
        "same_cells": same,
        "rounds": args.rounds,
        "wall_s": {v: [round(x, 1) for x in w] for v, w in walls.items()},
        "median_s": {v: round(m, 1) for v, m in median.items()},
        "ratio_to_local": {v: round(m / median["local"], 2) for v, m in median.items()},
        "environments": env_costs(args.cache) if str(args.cache) else None,
        "machine_start": start,
        "machine_end": machine(),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"| run (-k {args.k}, {ncells} cells, 4 modes) | median wall | ratio to local |")
    print("|---|---|---|")
    for v in VARIANTS:
        print(f"| {v} | {median[v]:.1f} s | {data['ratio_to_local'][v]:.2f} |")
    print(
        f"same cells in all three: {same}; load average {start['load_average']} -> "
        f"{data['machine_end']['load_average']}"
    )


if __name__ == "__main__":
    main()
