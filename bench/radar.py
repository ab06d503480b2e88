"""What `jax-conformance compat --releases RANGE` costs, cold and warm (issue #26).

    .venv/bin/python bench/radar.py 0.4.30..0.5.3            # cold figures from the stored search,
                                                             # then a warm re-run, timed
    .venv/bin/python bench/radar.py 0.4.30..0.5.3 --no-warm  # cold figures only

Cold: a search runs in pieces (it may be interrupted and resumed, each piece with its own wall
time), so the cold cost is summed from what the pieces left behind, all of it measured when it
ran: each release's environment build (`conformance-env.json`: `build_seconds`, the installer),
each mode run's wall time (its `.wall.json` beside the results, written since the radar records
it; for older runs the command's own line `jax R [mode]: ... in N s` from the logs given with
--log; else the pytest time of the run's log, which leaves out the process's start-up and is
marked so) and the time pip took to list the releases. With `-j 1 --build-jobs 1` these add up
to the wall time; with more jobs the wall time is less.

Warm: `compat --releases RANGE --resume` run again (every release already searched); its wall
time, how many environments it built and how many mode runs it started (the command's own lines:
`environment built in`, `running ... in`), both of which must be 0.

Figures go to bench/radar.json (one entry per range, replaced when re-measured) and are printed as
a markdown table; bench/RADAR.md explains them. The machine is shared: every time here is a
loaded-machine time (the load average is recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "radar.json"
PYTEST_TIME = re.compile(r" in ([0-9.]+)s(?: \(|$)")
COMMAND_LINE = re.compile(r"^jax (\S+) \[([^\]]+)\]: .* in ([0-9.]+) s")


def cache_dir() -> Path:
    given = os.environ.get("JAX_CONFORMANCE_CACHE")
    return Path(given) if given else Path.home() / ".cache" / "jax-conformance"


def find_search(cache: Path, text: str) -> tuple[Path, dict[str, Any]]:
    """The newest saved search whose first and last releases are the range's ends."""
    lo, _, hi = text.partition("..")
    found = []
    for path in (cache / "radar").glob("*/searches/*.json"):
        first, _, last = path.stem.partition("..")
        if (not lo or first == lo) and (not hi or last == hi):
            found.append(path)
    if not found:
        raise SystemExit(f"no saved search for {text} under {cache / 'radar'}")
    path = max(found, key=lambda p: p.stat().st_mtime)
    return path, json.loads(path.read_text())


def env_build(cache: Path, release: str) -> dict[str, Any] | None:
    """The newest cached environment of a release: its build seconds and installer."""
    best = None
    for meta in (cache / "envs").glob(f"jax-{release}-*/conformance-env.json"):
        data = json.loads(meta.read_text())
        if data.get("version") != release:
            continue
        if best is None or data.get("built", "") > best.get("built", ""):
            best = data
    if best is None:
        return None
    return {"build_s": best.get("build_seconds"), "installer": best.get("installer", "pip")}


def pytest_seconds(log: Path) -> float | None:
    lines = log.read_text(errors="replace").strip().splitlines()
    match = PYTEST_TIME.search(lines[-1]) if lines else None
    return float(match.group(1)) if match else None


COUNT = re.compile(r"(\d+) (passed|failed|not applicable|errors?|skipped|xfailed|xpassed)")


def counts(text: str) -> frozenset[tuple[str, int]]:
    return frozenset(
        (word.rstrip("s") if word.startswith("error") else word, int(n))
        for n, word in COUNT.findall(text)
    )


def command_walls(logs: list[Path]) -> dict[tuple[str, str, frozenset[tuple[str, int]]], float]:
    """(release, mode, outcome counts) -> wall, from the command's output lines (the last one wins)."""
    out: dict[tuple[str, str, frozenset[tuple[str, int]]], float] = {}
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            match = COMMAND_LINE.match(line)
            if match:
                out[(match.group(1), match.group(2), counts(line))] = float(match.group(3))
    return out


def run_wall(
    log: Path, walls: dict[tuple[str, str, frozenset[tuple[str, int]]], float]
) -> tuple[float | None, str]:
    """One mode run's wall time and where it came from: its sidecar, else the command line that
    reported the same release, mode and outcome counts, else pytest's own time."""
    sidecar = log.with_suffix(".wall.json")
    if sidecar.is_file():
        return float(json.loads(sidecar.read_text())["seconds"]), "wall"
    lines = log.read_text(errors="replace").strip().splitlines()
    key = (log.parent.parent.name, log.parent.name, counts(lines[-1] if lines else ""))
    if key in walls:
        return walls[key], "wall"
    return pytest_seconds(log), "pytest"


def cold(cache: Path, text: str, command_logs: list[Path]) -> dict[str, Any]:
    path, search = find_search(cache, text)
    store = path.parent.parent
    walls = command_walls(command_logs)
    rows = []
    for release in search["releases"]:
        if release in search.get("unavailable", {}):
            rows.append({"release": release, "unavailable": search["unavailable"][release]})
            continue
        logs = sorted((store / release).glob("*/*.log"))
        times = [run_wall(p, walls) for p in logs]
        rows.append(
            {
                "release": release,
                **(env_build(cache, release) or {"build_s": None, "installer": None}),
                "mode_runs": len(logs),
                "full_runs": sum(p.name == "all.log" for p in logs),
                "unfinished_runs": sum(t is None for t, _ in times),
                "run_s": round(sum(t for t, _ in times if t is not None), 1),
                "runs_timed_by_pytest_only": sum(how == "pytest" for _, how in times),
            }
        )
    built = [r for r in rows if r.get("build_s") is not None]
    build_s = sum(r["build_s"] for r in built)
    pytest_s = sum(r.get("run_s", 0.0) for r in rows)
    return {
        "search": str(path),
        "releases": len(search["releases"]),
        "installed": len(built),
        "unavailable": len(search.get("unavailable", {})),
        "changes": len(search["changes"]),
        "probes": len(search["probes"]),
        "build_s": round(build_s, 1),
        "run_s": round(pytest_s, 1),
        "runs_timed_by_pytest_only": sum(r.get("runs_timed_by_pytest_only", 0) for r in rows),
        "discovery_s": search.get("discovery_s"),
        "minutes": round((build_s + pytest_s + (search.get("discovery_s") or 0)) / 60, 1),
        "per_release": rows,
    }


def warm(text: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            str(ROOT / ".venv" / "bin" / "jax-conformance"),
            "compat",
            "--releases",
            text,
            "--resume",
            "--yes",
            "-j",
            "1",
            "--build-jobs",
            "1",
            "--out",
            str(Path(tmp) / "out"),
        ]
        load = os.getloadavg()[0]
        start = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall = time.monotonic() - start
    out = done.stdout + done.stderr
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{out[-3000:]}")
    ask = re.search(r"\(([0-9.]+) s to ask pip\)", out)
    return {
        "command": " ".join(["jax-conformance", *cmd[1:-2]]),
        "wall_s": round(wall, 1),
        "discovery_s": float(ask.group(1)) if ask else None,
        "built": len(re.findall(r"environment built in", out)),
        "mode_runs_started": len(re.findall(r"^jax \S+: environment .*; running", out, re.M)),
        "from_store": len(re.findall(r"from the store$", out, re.M)),
        "load_average": round(load, 1),
    }


def table(entry: dict[str, Any]) -> str:
    c, w = entry["cold"], entry.get("warm")
    lines = [
        f"### {entry['range']}",
        "",
        "| | releases | installed | environment builds | mode runs (summed) | pip (last run) | minutes |",
        "|---|---|---|---|---|---|---|",
        f"| cold | {c['releases']} ({c['unavailable']} unavailable) | {c['installed']} | "
        f"{c['build_s']} s | {c['run_s']} s ({c['runs_timed_by_pytest_only']} timed by pytest only) | "
        f"{c['discovery_s']} s | {c['minutes']} |",
    ]
    if w:
        lines.append(
            f"| warm | {c['releases']} | {w['built']} built, {w['mode_runs_started']} runs started"
            f" | 0 s | 0 s | {w['discovery_s']} s | {round(w['wall_s'] / 60, 1)} "
            f"({w['wall_s']} s wall, load {w['load_average']}) |"
        )
    lines += [
        "",
        "| release | installer | build (s) | mode runs (full) | run time (s) |",
        "|---|---|---|---|---|",
    ]
    for r in c["per_release"]:
        if not r.get("mode_runs") and r.get("build_s") is None and "unavailable" not in r:
            lines.append(
                f"| {r['release']} | not installed: the search needed no run there | | 0 | |"
            )
        elif "unavailable" in r:
            lines.append(f"| {r['release']} | unavailable: {r['unavailable'][:80]} | | | |")
        else:
            lines.append(
                f"| {r['release']} | {r['installer']} | {r['build_s']} | {r['mode_runs']} ({r['full_runs']})"
                f" | {r['run_s']}"
                + (
                    f" ({r['runs_timed_by_pytest_only']} by pytest)"
                    if r["runs_timed_by_pytest_only"]
                    else ""
                )
                + " |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("range", help="a range compat --releases has searched, e.g. 0.4.30..0.5.3")
    parser.add_argument("--no-warm", action="store_true", help="only the cold figures")
    parser.add_argument(
        "--log",
        type=Path,
        action="append",
        default=[],
        help="output of the compat runs of the search, for the wall time of runs made before the "
        "radar kept it (repeatable)",
    )
    args = parser.parse_args(argv)
    entry: dict[str, Any] = {"range": args.range, "cold": cold(cache_dir(), args.range, args.log)}
    if not args.no_warm:
        entry["warm"] = warm(args.range)
    data = json.loads(OUT.read_text()) if OUT.is_file() else {}
    data[args.range] = entry
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(table(entry))
    return 0


if __name__ == "__main__":
    sys.exit(main())
