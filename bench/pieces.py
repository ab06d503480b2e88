"""Does each piece of speed machinery pay at the suite's real size? With and without, side by side.

    .venv/bin/python bench/pieces.py                  # every section; writes bench/pieces.json
    .venv/bin/python bench/pieces.py --only load      # lint and collection, real specs and 5,000 cases
    .venv/bin/python bench/pieces.py --only isolation # one mode, and its isolated cases per fork server variant
    .venv/bin/python bench/pieces.py --merge A.json B.json  # one results file from runs of separate sections

The pieces: the spec cache (`cache`), the compiled schema check (`fastschema`, against
jsonschema alone), the fork server (`fork`: every isolated case spawned instead) and its levels
(`full`, `light`). Each command runs through this file's `--shim`, which switches the named
pieces off in-process and then runs `jax-conformance lint`, pytest or the isolated cases, so
every variant pays the same start-up. Variants run in alternating rounds; the saving is what
the piece takes off `lint` or off a mode (its `--collect-only` saving, or its isolated cases'
saving, over the whole mode), in wall and in CPU seconds. The rule (issue #23): keep a piece
that saves >= 10% of either. bench/README.md has the figures, and those of the YAML walker,
measured here before it was removed (commit 281c04f).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from bench.measure import Timing

REPO = Path(__file__).resolve().parent.parent

PIECES = ("cache", "fastschema", "full", "light", "fork")
MODE_ARGS = ["conformance/", "--adapter=jax", "-p", "no:cacheprovider", "-q"]


def switch_off(pieces: set[str]) -> None:
    """In this process: the named pieces off (the cache is switched off through the environment)."""
    if "fastschema" in pieces:
        from jax_conformance.spec import schema

        schema.fast_validator = lambda: None
        try:
            from jax_conformance.commands import lint
        except ImportError:
            pass
        else:
            lint.fast_validator = lambda: None
    if pieces & {"full", "light"}:
        _fork_levels_off(pieces & {"full", "light"})


def _fork_levels_off(levels: set[str]) -> None:
    """The fork server without these levels: a case only they would serve gets the next level, else a spawn."""
    from jax_conformance.client import caserunner

    cls = caserunner.CaseRunner
    start, server = cls.start_fork_servers, cls._server
    cls.start_fork_servers = lambda self, wanted=("full", "light"): start(
        self, tuple(x for x in wanted if x not in levels)
    )
    cls._server = lambda self, level: None if level in levels else server(self, level)
    if "full" in levels:
        caserunner.full_server_serves = lambda mode_env, env: False


def run_isolated() -> int:
    """Every `isolate: process` case of the real specs that applies in the default mode, one after
    another through the harness's CaseRunner (a mode process does the same for them): their
    part of a mode's wall time, servers' start-up included."""
    from jax_conformance import SPECS_DIR
    from jax_conformance.client.caserunner import CaseRunner
    from jax_conformance.mode import Mode
    from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files

    mode = Mode()
    runner = CaseRunner("jax", mode)
    how: dict[str, int] = {}
    try:
        backend, version = runner.info["backends"][0], runner.info["behaviour_version"]
        cases = [
            c
            for f in spec_files([SPECS_DIR])
            if is_spec_file(f)
            for c in load_spec(f).cases
            if c.isolate == "process"
        ]
        picked = [
            (c, b)
            for c in cases
            if (b := c.select(mode, backend, "jax", version)) is not None
            and b.not_applicable is None
        ]
        runner.start_fork_servers()  # as the plugin does once collection is done
        for case, block in picked:
            verdict = runner.run(
                case.payload(block, mode, backend), timeout=case.timeout, isolate=True, env=case.env
            )
            key = f"{verdict['outcome']} {verdict.get('isolation')}"
            how[key] = how.get(key, 0) + 1
    finally:
        runner.close()
    print(json.dumps(how))
    return 0


def shim(argv: list[str]) -> int:
    """`--shim PIECES -- lint|pytest|isolated ARGS` (PIECES: comma-separated, or `-`)."""
    pieces = {p for p in argv[0].split(",") if p and p != "-"}
    tool, args = argv[2], argv[3:]
    switch_off(pieces)
    if tool == "isolated":
        return run_isolated()
    if tool == "lint":
        from jax_conformance.cli import main

        return main(["lint", *args])
    import pytest

    return int(pytest.main(args))


class Pieces:
    """One measurement run: scratch space, the warm spec cache, the log."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="jaxconf-pieces-"))
        self.warm_cache = self.tmp / "warm-cache"

    def say(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {text}", flush=True)

    def env(self, variant: str) -> dict[str, str]:
        """The environment of a variant: a warm cache, a cold (empty) one, or none."""
        env = dict(os.environ)
        env.pop(
            "PYTHONDONTWRITEBYTECODE", None
        )  # as ./dev and an installed harness run: compiled once
        off = set(variant.split(","))
        if "cache" in off:
            env["JAX_CONFORMANCE_SPEC_CACHE"] = "0"
        elif "cold" in off:
            cold = self.tmp / f"cold-{time.monotonic_ns()}"
            env["JAX_CONFORMANCE_CACHE"] = str(cold)
        else:
            env["JAX_CONFORMANCE_CACHE"] = str(self.warm_cache)
        if "fork" in off:
            env["JAX_CONFORMANCE_ISOLATION"] = "spawn"
        return env

    def run(self, variant: str, tool: str, args: list[str], log: str) -> Timing:
        from bench.measure import PYTHON, run_timed

        off = ",".join(p for p in variant.split(",") if p in PIECES) or "-"
        argv = [PYTHON, str(Path(__file__).resolve()), "--shim", off, "--", tool, *args]
        return run_timed(argv, self.tmp / "logs" / f"{log}.log", env=self.env(variant))

    def rounds(
        self,
        name: str,
        tool: str,
        args: list[str],
        variants: list[str],
        rounds: int,
        warm: list[str],
    ) -> dict[str, Any]:
        """Alternating rounds of every variant: walls, CPU, load, and each variant's ratio to the first."""
        from bench.measure import spread

        timings: dict[str, list[Timing]] = {v: [] for v in variants}
        loads: list[float] = []
        self.run("", "lint", warm, f"{name}-warmup")  # fills the warm cache with these spec files
        for r in range(rounds):
            for v in variants:
                loads.append(os.getloadavg()[0])
                t = self.run(v, tool, args, f"{name}-{v or 'all'}-{r}")
                self.say(
                    f"{name} round {r + 1}/{rounds} without [{v or 'nothing'}]: {t.wall:.2f} s "
                    f"wall, {t.cpu:.2f} s CPU, rc {t.rc}"
                )
                timings[v].append(t)
        base = timings[variants[0]]
        out: dict[str, Any] = {
            "command": [tool, *args],
            "load_average": spread(loads),
            "variants": {},
        }
        for v, ts in timings.items():
            wall, cpu = statistics.median(t.wall for t in ts), statistics.median(t.cpu for t in ts)
            out["variants"][v or "-"] = {
                "without": v or "nothing",
                "wall_s": spread([t.wall for t in ts]),
                "cpu_s": spread([t.cpu for t in ts]),
                "wall_ratio": round(wall / statistics.median(t.wall for t in base), 3),
                "cpu_ratio": round(cpu / statistics.median(t.cpu for t in base), 3),
                "rc": sorted({t.rc for t in ts}),
                "counts": ts[-1].counts,
                "collected": _collected(ts[-1].tail),
                "isolation": _isolation(ts[-1].tail),
            }
        return out


def _isolation(tail: str) -> dict[str, int] | None:
    """The isolated tool's last line: how many cases got each outcome and process kind."""
    lines = tail.strip().splitlines()
    try:
        found = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _collected(tail: str) -> int | None:
    found = re.search(r"(\d+) tests? collected", tail) or re.search(
        r"(\d+) spec file\(s\) checked", tail
    )
    return int(found.group(1)) if found else None


# The load pieces: against everything on with a warm cache. The compiled schema check only works
# when a spec is not in the cache, so it is measured against the cache off.
LOAD_VARIANTS = ["", "cold", "cache", "cache,fastschema"]


def bench_load(p: Pieces, specs: dict[str, list[str]]) -> dict[str, Any]:
    """lint and --collect-only, real specs and synthetic ones, every load variant."""
    out: dict[str, Any] = {}
    for size, dirs in specs.items():
        lint = p.rounds(f"lint-{size}", "lint", dirs, LOAD_VARIANTS, p.args.lint_rounds, dirs)
        spec_args = [a for d in dirs for a in ("--specs", d)] if dirs != ["specs"] else []
        collect = p.rounds(
            f"collect-{size}",
            "pytest",
            [*MODE_ARGS, *spec_args, "--collect-only"],
            LOAD_VARIANTS,
            p.args.collect_rounds,
            dirs,
        )
        out[size] = {"lint": lint, "collect": collect}
    return out


# The fork server: two levels (as shipped), one level (without light: full alone, the cases that
# set JAX_* spawn; without full: light alone, every isolated case imports JAX in its child), none
# (every isolated case spawned).
ISOLATION_VARIANTS = ["", "light", "full", "fork"]


def bench_isolation(p: Pieces, specs: dict[str, list[str]]) -> dict[str, Any]:
    """One mode's wall over the real specs (the denominator), and its isolated cases alone under
    each fork-server variant (what differs between them: the other cases run the same way)."""
    out: dict[str, Any] = {}
    if p.args.mode_rounds:
        out["real"] = p.rounds(
            "mode-real", "pytest", MODE_ARGS, [""], p.args.mode_rounds, ["specs"]
        )
    variants = (
        ISOLATION_VARIANTS
        if p.args.isolation_variants is None
        else ["", *p.args.isolation_variants.split(",")]
    )
    out["isolated"] = p.rounds(
        "isolated", "isolated", [], variants, p.args.isolated_rounds, ["specs"]
    )
    return out


def _median(entry: dict[str, Any], what: str) -> float:
    return float(entry[what]["median"])


def savings(results: dict[str, Any]) -> dict[str, Any]:
    """Each piece: the seconds it saves (wall and CPU medians) and their share of lint and of a mode.

    A mode's wall at 5,000 cases is not run (minutes a round on a loaded machine): its share uses
    the real mode's wall plus the extra collection time of 5,000 cases as the denominator, which
    is less than the true one (the 4,644 extra cases also run), so the share is an upper bound.
    """
    sections = results["sections"]
    load, iso = sections.get("load", {}), sections.get("isolation", {})
    mode: dict[str, dict[str, float]] = {}
    if "real" in iso:
        real = iso["real"]["variants"]["-"]
        mode["real"] = {w: _median(real, f"{w}_s") for w in ("wall", "cpu")}
        if "synthetic" in load and "real" in load:
            grow = {
                w: _median(load["synthetic"]["collect"]["variants"]["-"], f"{w}_s")
                - _median(load["real"]["collect"]["variants"]["-"], f"{w}_s")
                for w in ("wall", "cpu")
            }
            mode["synthetic"] = {w: mode["real"][w] + max(0.0, grow[w]) for w in ("wall", "cpu")}
    out: dict[str, Any] = {}
    # (variant without the piece, variant with it): the compiled schema check only runs on a spec
    # the cache does not hold, so it is compared with the cache off.
    pairs = {"cache": ("cache", "-"), "fastschema": ("cache,fastschema", "cache")}
    for size, tools in load.items():
        for piece, (without, with_) in pairs.items():
            row: dict[str, Any] = out.setdefault(piece, {}).setdefault(size, {})
            for tool in ("lint", "collect"):
                v = tools[tool]["variants"]
                for w in ("wall", "cpu"):
                    a, b = _median(v[with_], f"{w}_s"), _median(v[without], f"{w}_s")
                    row[f"{tool}_{w}_with_s"], row[f"{tool}_{w}_without_s"] = a, b
                    row[f"{tool}_{w}_saved_share"] = round((b - a) / b, 3)
            for w in ("wall", "cpu"):
                if size in mode:
                    saved = row[f"collect_{w}_without_s"] - row[f"collect_{w}_with_s"]
                    row[f"mode_{w}_saved_share"] = round(saved / (mode[size][w] + saved), 3)
    if "isolated" in iso:
        v = iso["isolated"]["variants"]
        # "without light" leaves the full level alone, and the other way round.
        for piece, without in (
            ("fork server (both levels, against spawn)", "fork"),
            ("light level (against full alone)", "light"),
            ("full level (against light alone)", "full"),
        ):
            for size in mode:
                row = out.setdefault(piece, {}).setdefault(size, {})
                for w in ("wall", "cpu"):
                    saved = _median(v[without], f"{w}_s") - _median(v["-"], f"{w}_s")
                    row[f"isolated_{w}_with_s"], row[f"isolated_{w}_without_s"] = (
                        _median(v["-"], f"{w}_s"),
                        _median(v[without], f"{w}_s"),
                    )
                    row[f"mode_{w}_with_s"] = round(mode[size][w], 3)
                    row[f"mode_{w}_saved_share"] = round(saved / (mode[size][w] + saved), 3)
    return out


def merge(paths: list[Path], out: Path) -> int:
    """One results file from runs of separate sections (each keeps its machine line and load)."""
    results: dict[str, Any] = {"runs": [], "sections": {}}
    for path in paths:
        part = json.loads(path.read_text(encoding="utf-8"))
        results["runs"].append(
            {k: part.get(k) for k in ("machine", "cases", "duration_s", "load_average_end")}
            | {"sections": sorted(part["sections"])}
        )
        for name, section in part["sections"].items():
            results["sections"].setdefault(name, {}).update(section)
    results["savings"] = savings(results)
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(results["savings"], indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--shim"]:
        return shim(argv[1:])
    parser = argparse.ArgumentParser(
        prog="bench/pieces.py", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument(
        "--only", action="append", choices=("load", "isolation"), help="run only these sections"
    )
    parser.add_argument(
        "--cases",
        type=int,
        default=5000,
        help="synthetic cases (default 5,000; 0: real specs only)",
    )
    parser.add_argument("--lint-rounds", type=int, default=5)
    parser.add_argument("--collect-rounds", type=int, default=3)
    parser.add_argument(
        "--mode-rounds",
        type=int,
        default=1,
        help="rounds of the whole mode (0: none, keep the last run's)",
    )
    parser.add_argument("--isolated-rounds", type=int, default=2)
    parser.add_argument(
        "--isolation-variants",
        metavar="PIECES",
        help="the variants besides everything on (default: light,full,fork)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "pieces.json")
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="write --out from the sections of earlier runs (later files win) instead of measuring",
    )
    args = parser.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.out)
    from bench.measure import machine
    from bench.synthetic import write_specs

    p = Pieces(args)
    started = time.perf_counter()
    specs: dict[str, list[str]] = {"real": ["specs"]}
    if args.cases:
        write_specs(p.tmp / "synthetic", args.cases)
        specs["synthetic"] = [str(p.tmp / "synthetic")]
    results: dict[str, Any] = {"machine": machine(), "cases": args.cases, "sections": {}}
    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    try:
        for name, fn in (("load", bench_load), ("isolation", bench_isolation)):
            if args.only and name not in args.only:
                if name in previous.get("sections", {}):
                    results["sections"][name] = previous["sections"][
                        name
                    ]  # kept from the last run of it
                continue
            results["sections"][name] = fn(p, specs)
    finally:
        shutil.rmtree(p.tmp, ignore_errors=True)
    results["savings"] = savings(results)
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(results["savings"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
