"""Synthetic inputs for the scale benchmarks: many valid spec files, and many result records.

The specs look like the real ones (file setup, mode-dependent blocks, warns with a regex,
raises, value with tolerance, checks, tags) so loading, validating, linting and collecting
them does the same work per case as the suite's own files. The result records carry what a
real run writes, with a share of failures whose messages and `actual` are the size real
failures have, so the report's merge and render see a realistic mix.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from jax_conformance.mode import DEFAULT_MODES
from jax_conformance.records import new_run_id, now

_FILE_HEAD = """\
topic: bench.t{n:04d}
title: Synthetic topic {n}
source: {{doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}}
tags: [dtypes]
basis: documented
setup: |
  NARROW = {{"int64": "int32", "float64": "float32"}}
  def twice(x):
      return 2 * x
cases:
"""

# Four shapes of case, cycled: the common outcome keys in the proportions the real specs use.
_CASES = (
    """\
  - id: bench.t{n:04d}.c{i:05d}
    claim: synthetic case {i}, a dtype and value that depend on the x64 mode
    run: jnp.arange({k})
    expect:
      - when: {{x64: false}}
        dtype: int32
        shape: [{k}]
        warns: none
      - when: {{x64: true}}
        dtype: int64
        warns: none
""",
    """\
  - id: bench.t{n:04d}.c{i:05d}
    claim: synthetic case {i}, an explicit 64-bit request under each policy
    tags: [explicit_x64]
    run: jnp.zeros({k}, dtype="float64")
    expect:
      - when: {{x64: false, explicit_x64_dtypes: warn}}
        dtype: float32
        warns: {{category: UserWarning, count: 1, match: "float64.*float32"}}
      - when: {{x64: false, explicit_x64_dtypes: error}}
        raises: {{type: ValueError, match: "float64"}}
      - when: {{x64: false, explicit_x64_dtypes: allow}}
        dtype: float64
      - when: {{x64: true}}
        dtype: float64
        warns: none
""",
    """\
  - id: bench.t{n:04d}.c{i:05d}
    claim: synthetic case {i}, statements that bind result, with a tolerance and checks
    tags: [autodiff]
    run: |
      g = jax.grad(lambda x: twice(x) * x)
      result = g({k}.0)
    expect:
      - value: {v}
        rtol: 1.0e-5
        check:
          - result.shape == ()
          - float(result) > 0
""",
    """\
  - id: bench.t{n:04d}.c{i:05d}
    claim: synthetic case {i}, an error whose type and wording are documented
    tags: [errors]
    run: jnp.reshape(jnp.arange(6), ({k}, 7))
    expect:
      - raises: {{type: TypeError, match: "cannot reshape"}}
""",
)


def write_specs(root: Path, cases: int, per_file: int = 100) -> list[Path]:
    """`cases` valid cases in files of `per_file`, under `root`; returns the files."""
    root.mkdir(parents=True, exist_ok=True)
    files = []
    for n in range((cases + per_file - 1) // per_file):
        parts = [_FILE_HEAD.format(n=n)]
        for i in range(n * per_file, min(cases, (n + 1) * per_file)):
            k = 1 + i % 9
            parts.append(_CASES[i % len(_CASES)].format(n=n, i=i, k=k, v=4.0 * k))
        path = root / f"t{n:04d}.yaml"
        path.write_text("".join(parts), encoding="utf-8")
        files.append(path)
    return files


def _record(run: dict[str, Any], case: int, rng: random.Random) -> dict[str, Any]:
    outcome = rng.choices(["passed", "failed", "not_applicable", "error"], weights=[90, 6, 3, 1])[0]
    cid = f"bench.t{case // 100:04d}.c{case:05d}"
    failing = outcome in ("failed", "error")
    message = (
        (
            "result.dtype=int64, but should be int32\nwarned UserWarning: Explicitly requested dtype float64 "
            "requested in zeros is not available, and will be truncated to dtype float32. " * 3
        )
        if failing
        else ""
    )
    return {
        "record": "case",
        "run_id": run["run_id"],
        "case": cid,
        "spec_file": f"specs/bench/t{case // 100:04d}.yaml",
        "line": 10 + 12 * (case % 100),
        "topic": f"bench.t{case // 100:04d}",
        "claim": f"synthetic case {case}, a dtype and value that depend on the x64 mode",
        "tags": ["dtypes"],
        "adapter": run["adapter"],
        "implementation_version": run["implementation_version"],
        "behaviour_version": run["implementation_version"],
        "backend": "cpu",
        "mode": run["mode"],
        "outcome": outcome,
        "message": message,
        "expected": {"dtype": "int32", "shape": [5], "warns": "none"},
        "actual": {
            "type": "jaxlib._jax.ArrayImpl",
            "dtype": "int64" if failing else "int32",
            "shape": [5],
            "value": [0, 1, 2, 3, 4],
        },
        "duration_s": round(rng.uniform(0.001, 0.05), 6),
        "expect_line": 14 + 12 * (case % 100),
        "source": [
            {"doc": "docs/default_dtypes.md", "section": "Default setting: 32-bits everywhere"}
        ],
        "nodeid": f"conformance/specs/bench/t{case // 100:04d}.yaml::{cid}[{run['slug']}-cpu]",
    }


def write_records(path: Path, records: int, versions: tuple[str, ...] = ("0.10.2",)) -> int:
    """About `records` case records: runs of (version x the four modes), each with its run/collected/end records."""
    rng = random.Random(0)
    runs = len(versions) * len(DEFAULT_MODES)
    per_run = max(1, records // runs)
    written = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for version in versions:
            for mode in DEFAULT_MODES:
                run = {
                    "record": "run",
                    "run_id": new_run_id(),
                    "started": now(),
                    "adapter": "jax",
                    "implementation_version": version,
                    "behaviour_version": version,
                    "mode": mode.to_json(),
                    "backends": ["cpu"],
                    "environment": {"python": "3.11", "jax": version},
                    "argv": [],
                }
                f.write(json.dumps(run) + "\n")
                f.write(
                    json.dumps({"record": "collected", "run_id": run["run_id"], "count": per_run})
                    + "\n"
                )
                counts: dict[str, int] = {}
                for case in range(per_run):
                    rec = _record({**run, "slug": mode.slug}, case, rng)
                    counts[rec["outcome"]] = counts.get(rec["outcome"], 0) + 1
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    written += 1
                f.write(
                    json.dumps(
                        {
                            "record": "end",
                            "run_id": run["run_id"],
                            "finished": now(),
                            "exitstatus": 1,
                            "interrupted": False,
                            "counts": counts,
                        }
                    )
                    + "\n"
                )
    return written
