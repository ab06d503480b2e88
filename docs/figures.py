"""The figures the README states, computed from the current tree (issue 28: every figure in the
README is produced here, and tests/test_readme_figures.py fails when the README's differ).

    .venv/bin/python docs/figures.py           # print every figure, name = value
    .venv/bin/python docs/figures.py --check   # compare with README.md; exit 1 and list each stale one
    .venv/bin/python docs/figures.py --write   # put the figures of running text into README.md, then check

Static figures come from the spec files (no JAX, nothing run): the number of spec files and
cases, the cases per basis, and per mode of the default matrix the cases *not applicable* there
(no expect block for the mode, or a block that says `not_applicable`), picked the way the runner
picks a block (`Case.select`, for adapter `jax`, the installed JAX release, backend `cpu`). The
README's run output is real output; the check reads its summary table back and holds each row's
`total` and `n/a` to these figures, so a spec added or removed makes the README stale.

In README.md a figure in running text is written `<!-- fig:NAME -->VALUE<!-- /fig -->` (the
comments do not show when the README is rendered); the run output's table is checked row by row.
The figures are those of the committed specs (`git archive HEAD specs`: what a fresh clone runs),
not of spec files being edited in this checkout. A run output pasted from an earlier commit says
so with `<!-- run-of: COMMIT -->` and is checked against that commit's specs.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from jax_conformance.mode import DEFAULT_MODES
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
README = ROOT / "README.md"
FIGURE = re.compile(r"<!-- fig:([a-z0-9_.-]+) -->(.*?)<!-- /fig -->", re.S)


def spec_tree(commit: str, into: Path) -> Path:
    """The specs/ folder of a commit, written under `into` (a fresh clone's specs, whatever is being
    edited in this checkout); this checkout's specs/ when it is not a git checkout (an sdist)."""
    try:
        archive = subprocess.run(["git", "archive", commit, "specs"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return SPECS
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "specs"


def jax_version() -> str:
    try:
        from importlib.metadata import version
        return version("jax")
    except Exception:  # noqa: BLE001 - JAX absent: the figures that need a version use the README's
        return "0.10.2"


def figures(commit: str = "HEAD") -> dict[str, str]:
    """Every figure, by name, as the README writes it, for the specs of `commit`."""
    with tempfile.TemporaryDirectory() as tmp:
        return _figures(spec_tree(commit, Path(tmp)))


def _figures(specs: Path) -> dict[str, str]:
    paths = [p for p in spec_files([specs]) if is_spec_file(p)]
    cases = [c for p in paths for c in load_spec(p, rules=False).cases]
    version = jax_version()
    out = {"spec_files": str(len(paths)), "cases": str(len(cases)), "modes": str(len(DEFAULT_MODES)),
           "jax_version": version}
    for basis in ("documented", "tested", "observed", "unsupported"):
        out[f"basis.{basis}"] = str(sum(c.basis == basis for c in cases))
    for mode in DEFAULT_MODES:
        na = 0
        for c in cases:
            block = c.select(mode, "cpu", "jax", version)
            na += block is None or block.not_applicable is not None
        out[f"na.{mode.slug}"] = str(na)
    return out


def run_rows(text: str) -> dict[str, dict[str, str]]:
    """The summary table of the README's `./dev run` output: mode -> column -> value."""
    rows: dict[str, dict[str, str]] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("adapter  version  backend  mode") and i + 1 < len(lines) and lines[i + 1].startswith("-------"):
            heads = line.split()
            for row in lines[i + 2:]:
                cells = row.split()
                if len(cells) != len(heads):
                    break
                rows[cells[3]] = dict(zip(heads, cells, strict=True))
            break
    return rows


RUN_OF = re.compile(r"<!-- run-of: ([0-9a-f]{7,40}) -->")


def stale(readme: str, figs: dict[str, str], run_figs: dict[str, str] | None = None) -> list[str]:
    """Each figure of the README that differs from the tree's, in words. The run output is held to
    `run_figs` (the figures of the commit its `<!-- run-of: COMMIT -->` names) when given."""
    out = []
    for name, shown in FIGURE.findall(readme):
        if name not in figs:
            out.append(f"README names a figure {name!r} that docs/figures.py does not compute")
        elif shown.strip() != figs[name]:
            out.append(f"{name}: README says {shown.strip()!r}, the tree gives {figs[name]!r}")
    rows = run_rows(readme)
    figs = run_figs or figs
    if not rows:
        out.append("README has no `./dev run` summary table")
    for mode, row in rows.items():
        if row.get("total") != figs["cases"]:
            out.append(f"run output, mode {mode}: total {row.get('total')}, the specs have {figs['cases']} cases")
        if f"na.{mode}" in figs and row.get("n/a") != figs[f"na.{mode}"]:
            out.append(f"run output, mode {mode}: n/a {row.get('n/a')}, the specs give {figs[f'na.{mode}']}")
    return out


def readme_and_figures(figs: dict[str, str]) -> tuple[str, dict[str, str], dict[str, str] | None]:
    """README.md's text, the figures of HEAD, and those of the commit its run output names (if it names one)."""
    text = README.read_text(encoding="utf-8")
    run_of = RUN_OF.search(text)
    return text, figs, figures(run_of.group(1)) if run_of else None


def main(argv: list[str]) -> int:
    figs = figures()
    if "--write" in argv:  # the running-text figures only: a run's output is pasted from a real run
        text = FIGURE.sub(lambda m: f"<!-- fig:{m.group(1)} -->{figs.get(m.group(1), m.group(2))}<!-- /fig -->",
                          README.read_text(encoding="utf-8"))
        README.write_text(text, encoding="utf-8")
    if "--check" in argv or "--write" in argv:
        problems = stale(*readme_and_figures(figs))
        print("\n".join(problems) if problems else "README figures match the tree")
        return 1 if problems else 0
    for name, value in figs.items():
        print(f"{name} = {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
