"""Experiment: `jax-conformance report` on many records, as shipped and with two changes applied from outside.

    .venv/bin/python bench/experiments/report_speedups.py [RECORDS] [ROUNDS]

Each variant is a fresh `python -c` that renders the same synthetic results file (default
100,000 records); rounds alternate the variants. The harness files are not edited.

  base  `python -m jax_conformance.cli report FILE --out DIR`, as users run it.
  gc    the same with the cyclic garbage collector off while the model is built and rendered:
        100,000 records are millions of small acyclic objects, and every full collection walks
        them all (conformance/report/__init__.py could call gc.freeze() after loading, or
        gc.disable() around build_model + render).
  lazy  gc, plus building only the `report` subparser: conformance/cli.py imports every
        subcommand's module to build its parser, so `report` (and `lint`) pay for importing
        pytest, the plugin and the matrix runner.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.synthetic import write_records  # noqa: E402

VARIANTS = {
    "base": "import sys; from jax_conformance.cli import main; sys.exit(main(['report', {f!r}, '--out', {o!r}]))",
    "gc": "import gc, sys; gc.disable(); from jax_conformance.cli import main; sys.exit(main(['report', {f!r}, '--out', {o!r}]))",
    "lazy": ("import argparse, gc, sys; gc.disable(); import jax_conformance.report as r; p = argparse.ArgumentParser(); "
             "r.add_arguments(p); sys.exit(r.main(p.parse_args([{f!r}, '--out', {o!r}])))"),
}


def main() -> int:
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    tmp = Path(tempfile.mkdtemp(prefix="jaxconf-report-"))
    results = tmp / "results.jsonl"
    write_records(results, records)
    walls: dict[str, list[float]] = {k: [] for k in VARIANTS}
    cpus: dict[str, list[float]] = {k: [] for k in VARIANTS}
    for _ in range(rounds):
        for name, code in VARIANTS.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code.format(f=str(results), o=str(tmp / name))], cwd=REPO,
                           check=True, capture_output=True)
            walls[name].append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    for name in VARIANTS:
        print(f"{name:5} {records:,} records: wall median {statistics.median(walls[name]):.2f}s "
              f"(min {min(walls[name]):.2f}), cpu median {statistics.median(cpus[name]):.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
