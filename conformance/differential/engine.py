"""The `diff` engine: programs drawn from the grammar run on two sides, mode by mode, compared,
grouped into disagreement classes and shrunk (`jax-conformance diff`, commands/diff.py, parses the
command line, calls it and prints).

Each side runs in its own worker process started in the mode (jax_conformance.client.caserunner.CaseRunner,
the same workers `run` uses, asked with the protocol's `observe` request): a program is no spec case,
and it needs the observation, not an outcome. The observations (differential/observe.py) are
compared; every disagreement is grouped by its class (area, differing fields, exception/warning
classes on each side); the most frequent classes are shrunk by Hypothesis to a minimal program that
still shows the same class. Its records are the record layer's `diff_program`, `diff_class` and
`diff_summary` kinds (records.py).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import shlex
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from jax_conformance.differential import observe as diffobs
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode
from jax_conformance.protocol import ProgramObservation
from jax_conformance.records import (
    DiffClassRecord,
    DiffModeSummary,
    DiffProgramRecord,
    DiffRecord,
    DiffStatsJSON,
    DiffSummaryRecord,
    DiffVerdict,
)
from jax_conformance.text import percent

if TYPE_CHECKING:  # the grammar imports Hypothesis: only where programs are drawn
    from jax_conformance.differential.grammar import Program

# Both sides' observations of one program.
Observed = tuple[ProgramObservation, ProgramObservation]


class Seen(TypedDict):
    """A program of a disagreement class and what each side did with it."""

    program: str
    a: ProgramObservation
    b: ProgramObservation


# The program a class is shown with: shrunk (from the first program seen), or that first one.
Shown = TypedDict(
    "Shown",
    {"program": str, "a": ProgramObservation, "b": ProgramObservation, "shrunk": bool, "from": str},
)


class ClassInfo(Shown):
    """A disagreement class over every mode: how often it was seen, where, and the program shown."""

    count: int
    modes: dict[str, int]  # mode slug -> programs of the class
    mode: str  # the mode of the program shown


@dataclass
class Plan:
    """What a diff runs: the programs' seed and budget, the grammar's areas (None: all), how long a
    program may run, and how many classes to shrink with how many new runs each."""

    seed: int
    budget: int
    areas: list[str] | None
    timeout: float
    shrink: int
    shrink_runs: int


@dataclass
class Side:
    """One side of the comparison: an adapter on a backend, and its label in the output."""

    adapter: str
    backend: str
    label: str


@dataclass
class Stats:
    """Verdict counts of some runs (a mode, an area, the runs whose first side raised)."""

    runs: int = 0
    agree: int = 0
    differ: int = 0
    na: int = 0

    def add(self, verdict: str) -> None:
        self.runs += 1
        if verdict == "agree":
            self.agree += 1
        elif verdict == "differ":
            self.differ += 1
        else:
            self.na += 1

    @property
    def compared(self) -> int:
        return self.agree + self.differ

    def cell(self) -> str:
        if not self.compared:
            return "-"
        return f"{percent(self.agree, self.compared)} ({self.agree}/{self.compared})"

    def to_json(self) -> DiffStatsJSON:
        return {
            "runs": self.runs,
            "agree": self.agree,
            "differ": self.differ,
            "not_expressible": self.na,
            "agreement": round(self.agree / self.compared, 4) if self.compared else None,
        }


@dataclass
class ModeResult:
    """One mode's runs: counts, the disagreement classes with their programs, the shrunk ones."""

    mode: Mode
    by_area: dict[str, Stats] = field(default_factory=lambda: defaultdict(Stats))
    total: Stats = field(default_factory=Stats)
    first_raises: Stats = field(default_factory=Stats)
    classes: dict[str, list[Seen]] = field(default_factory=lambda: defaultdict(list))
    missing: Counter[str] = field(default_factory=Counter)
    shrunk: dict[str, Shown] = field(default_factory=dict)


class Pair:
    """Both sides in one mode: a CaseRunner each (own worker process), programs run side by side."""

    def __init__(self, sides: list[Side], mode: Mode, timeout: float) -> None:
        from jax_conformance.client.caserunner import CaseRunner

        self.sides = sides
        self.mode = mode
        self.timeout = timeout
        self.runners = [CaseRunner(s.adapter, mode, default_timeout=timeout) for s in sides]
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(sides))
        for r in self.runners:
            r.prestart()
        for side, runner in zip(sides, self.runners, strict=True):
            have = [str(b) for b in runner.info.get("backends", [])]
            if side.backend not in have and not (side.backend == "cpu" and not have):
                self.close()
                raise UsageError(
                    f"--backends: {side.adapter} has no backend {side.backend!r} in mode {mode.slug} "
                    f"(it has {', '.join(have) or 'none'})"
                )

    def _one(self, i: int, text: str) -> ProgramObservation:
        return self.runners[i].observe(text, self.sides[i].backend, self.timeout)

    def run(self, text: str) -> Observed:
        """Both sides' observations of one program."""
        futures = [self._pool.submit(self._one, i, text) for i in range(len(self.runners))]
        a, b = (f.result() for f in futures)
        return a, b

    def close(self) -> None:
        self._pool.shutdown()
        for r in self.runners:
            with contextlib.suppress(Exception):
                r.close()


def classify(
    area: str, a: ProgramObservation, b: ProgramObservation
) -> tuple[DiffVerdict, list[str], str | None]:
    """(verdict, differing fields, class): verdict is agree, differ or n/a (a side lacks a name)."""
    if diffobs.missing(a) or diffobs.missing(b):
        return "n/a", [], None
    fields = diffobs.compare(a, b)
    if not fields:
        return "agree", [], None
    return "differ", fields, diffobs.signature(area, a, b, fields)


def generate(seed: int, budget: int, areas: list[str] | None) -> list[tuple[Program, int]]:
    """`budget` distinct programs drawn by Hypothesis from `seed` (topped up from derived seeds
    when Hypothesis draws the same text twice): [(Program, the seed it came from)]."""
    import hypothesis
    from hypothesis import HealthCheck, Phase, settings
    from jax_conformance.differential.grammar import programs

    def draw_all(s: int) -> list[Program]:
        drawn: list[Program] = []

        @settings(
            max_examples=budget,
            phases=[Phase.generate],
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            verbosity=hypothesis.Verbosity.quiet,
        )
        @hypothesis.seed(s)
        @hypothesis.given(programs(areas))
        def collect(p: Program) -> None:
            drawn.append(p)

        collect()
        return drawn

    chosen: dict[str, tuple[Program, int]] = {}
    s = seed
    for _ in range(8):
        for p in draw_all(s):
            if p.text not in chosen and len(chosen) < budget:
                chosen[p.text] = (p, s)
        if len(chosen) >= budget:
            break
        s += 1_000_003
    return list(chosen.values())


class _Disagrees(Exception):
    pass


def shrink(
    sig: str,
    area: str,
    seed: int,
    budget: int,
    areas: list[str] | None,
    run: Callable[[str], Observed],
    cache: dict[str, Observed],
    limit: int,
) -> str | None:
    """The smallest program Hypothesis finds that still shows disagreement class `sig`.

    The same seed replays the generation (answered from `cache`, no program runs again) up to
    the first program of the class; Hypothesis then shrinks it, running each new candidate
    (at most `limit` of them; past that only cached answers count, so the result is stable).
    """
    import hypothesis
    from hypothesis import HealthCheck, Phase, settings
    from jax_conformance.differential.grammar import programs

    runs = 0

    @settings(
        max_examples=budget,
        phases=[Phase.generate, Phase.shrink],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=hypothesis.Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
    )
    @hypothesis.seed(seed)
    @hypothesis.given(programs(areas))
    def prop(p: Program) -> None:
        nonlocal runs
        if p.area != area:
            return
        pair = cache.get(p.text)
        if pair is None:
            if runs >= limit:
                return
            runs += 1
            pair = cache[p.text] = run(p.text)
        verdict, _fields, cls = classify(p.area, *pair)
        if cls == sig:
            raise _Disagrees(p.text)

    try:
        prop()
    except _Disagrees as found:
        return str(found.args[0])
    except Exception:  # Hypothesis gave up (flaky, unsatisfiable): keep the unshrunk example
        return None
    return None


def reproduction(sides: list[Side], mode: Mode, text: str) -> str:
    """One shell line that reruns this program on both sides in this mode."""
    quoted = "$'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"
    cmd = f"jax-conformance diff --adapters {shlex.quote(_adapters_arg(sides))}"
    if sides[0].backend != sides[1].backend:
        cmd += f" --backends {sides[0].backend},{sides[1].backend}"
    return f"{cmd} --modes {mode.slug} --program {quoted}"


def _adapters_arg(sides: list[Side]) -> str:
    return (
        sides[0].adapter
        if sides[0].adapter == sides[1].adapter
        else f"{sides[0].adapter},{sides[1].adapter}"
    )


def run_mode(
    sides: list[Side],
    mode: Mode,
    programs: list[tuple[Program, int]],
    plan: Plan,
    write: Callable[[DiffRecord], None],
    log: Callable[[str], None],
) -> ModeResult:
    """Run every program on both sides in one mode (a `diff_program` record each), then shrink the
    most frequent disagreement classes."""
    result = ModeResult(mode)
    pair = Pair(sides, mode, plan.timeout)
    cache: dict[str, Observed] = {}
    first: dict[str, tuple[str, int]] = {}
    start = time.monotonic()
    try:
        for i, (program, seed) in enumerate(programs, 1):
            a, b = cache[program.text] = pair.run(program.text)
            record = _tally(result, program, seed, a, b)
            if record["class"] is not None:
                first.setdefault(record["class"], (program.area, seed))
            write(record)
            if i % 25 == 0 or i == len(programs):
                log(
                    f"diff {mode.slug}: {i}/{len(programs)} programs, {result.total.cell()} agree "
                    f"({time.monotonic() - start:.0f} s)"
                )
        ranked = sorted(result.classes, key=lambda c: -len(result.classes[c]))
        for cls in ranked[: max(0, plan.shrink)]:
            _shrink_class(result, cls, first[cls], plan, pair, cache, log)
    finally:
        pair.close()
    return result


def _tally(
    result: ModeResult, program: Program, seed: int, a: ProgramObservation, b: ProgramObservation
) -> DiffProgramRecord:
    """Count one program's verdict into the mode's result; its `diff_program` record."""
    verdict, fields, cls = classify(program.area, a, b)
    result.total.add(verdict)
    result.by_area[program.area].add(verdict)
    if "raised" in a and verdict != "n/a":
        result.first_raises.add(verdict)
    if verdict == "n/a":
        result.missing[diffobs.missing(a) or diffobs.missing(b) or "?"] += 1
    if cls is not None:
        result.classes[cls].append({"program": program.text, "a": a, "b": b})
    return {
        "record": "diff_program",
        "mode": result.mode.slug,
        "area": program.area,
        "seed": seed,
        "program": program.text,
        "verdict": verdict,
        "fields": fields,
        "class": cls,
        "a": a,
        "b": b,
    }


def _shrink_class(
    result: ModeResult,
    cls: str,
    first: tuple[str, int],
    plan: Plan,
    pair: Pair,
    cache: dict[str, Observed],
    log: Callable[[str], None],
) -> None:
    """Shrink one class from its first program's area and seed; the program shown goes to `shrunk`."""
    area, seed = first
    t0 = time.monotonic()
    small = shrink(cls, area, seed, plan.budget, plan.areas, pair.run, cache, plan.shrink_runs)
    example = result.classes[cls][0]
    text = small or example["program"]
    a, b = cache.get(text, (example["a"], example["b"]))
    result.shrunk[cls] = {
        "program": text,
        "a": a,
        "b": b,
        "shrunk": small is not None,
        "from": example["program"],
    }
    log(
        f"diff {result.mode.slug}: shrank {cls!r} from {len(example['program'])} to {len(text)} characters "
        f"({time.monotonic() - t0:.0f} s)"
    )


def merge_classes(results: list[ModeResult]) -> list[tuple[str, ClassInfo]]:
    """Every mode's disagreement classes as one list, most frequent first; each shown with its
    shortest shrunk program (of the first mode that shrank it), else the first program seen."""
    merged: dict[str, ClassInfo] = {}
    for r in results:
        for cls, seen in r.classes.items():
            shrunk = r.shrunk.get(cls)
            info = merged.get(cls)
            if info is None:
                first = seen[0]
                shown: Shown = shrunk or {**first, "shrunk": False, "from": first["program"]}
                merged[cls] = {
                    **shown,
                    "count": len(seen),
                    "modes": {r.mode.slug: len(seen)},
                    "mode": r.mode.slug,
                }
                continue
            info["count"] += len(seen)
            info["modes"][r.mode.slug] = len(seen)
            if shrunk is not None and (
                not info["shrunk"] or len(shrunk["program"]) < len(info["program"])
            ):
                merged[cls] = {**info, **shrunk, "mode": r.mode.slug}
    return sorted(merged.items(), key=lambda kv: -kv[1]["count"])


def class_record(rank: int, cls: str, info: ClassInfo, sides: list[Side]) -> DiffClassRecord:
    """The `diff_class` record of a merged class (`merge_classes`) at this rank."""
    return {
        "record": "diff_class",
        "rank": rank,
        "class": cls,
        "count": info["count"],
        "modes": info["modes"],
        "program": info["program"],
        "shrunk": info["shrunk"],
        "from": info["from"],
        "mode": info["mode"],
        "a": info["a"],
        "b": info["b"],
        "sides": [s.label for s in sides],
        "reproduce": reproduction(sides, Mode.from_slug(info["mode"]), info["program"]),
    }


def summary_record(
    plan: Plan, programs: int, sides: list[Side], results: list[ModeResult], areas: list[str]
) -> DiffSummaryRecord:
    """The `diff_summary` record: agreement per mode, overall, among first-side raises, per area."""
    modes: dict[str, DiffModeSummary] = {
        r.mode.slug: {
            "all": r.total.to_json(),
            "first_raises": r.first_raises.to_json(),
            "areas": {n: r.by_area[n].to_json() for n in areas if n in r.by_area},
            "not_expressible": dict(r.missing.most_common(20)),
        }
        for r in results
    }
    return {
        "record": "diff_summary",
        "seed": plan.seed,
        "budget": plan.budget,
        "programs": programs,
        "sides": [s.label for s in sides],
        "modes": modes,
    }
