"""Run one case's code against an adapter and judge it into a `Verdict`.

Runs inside a worker process (`jax_conformance.worker.loop`), or a fork server's child of one.
"""

from __future__ import annotations

import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from types import CodeType
from typing import Protocol, runtime_checkable

from jax_conformance.adapters import Adapter
from jax_conformance.errors import SpecCodeError
from jax_conformance.protocol import CasePayload
from jax_conformance.records import DocumentedCheck, Verdict
from jax_conformance.spec.blocks import ExpectBlock
from jax_conformance.worker.checks import (
    CaughtWarning,
    Mismatch,
    Namespace,
    Observation,
    check_all,
    describe_observation,
    short,
)

DEFAULT_MAX_EXAMPLES = 25
# Where the examples of every `given` case come from. Hypothesis's `derandomize` seeds from the
# source of the property function, so any edit to `prop` below would draw other examples for every
# case (and could flip outcomes); this is the seed that source gave up to 2026-12, fixed so the
# examples stay the same whatever the harness's code looks like.
GIVEN_SEED = int(
    "2769232862193447813737770989037672739035940305636952232893244902466075508368775312591351"
    "3283570013207119996381882433"
)


def _compile_run(text: str, line: int, file: str) -> tuple[CodeType, bool]:
    """(code, is_expression): `run` is an expression, or statements that bind `result`."""
    source = "\n" * (line - 1) + text
    try:
        return compile(source, file, "eval"), True
    except SyntaxError:
        return compile(source, file, "exec"), False


def run_setup(payload: CasePayload, ns: Namespace) -> None:
    """Execute the payload's setup pieces in `ns`, each at its line of the spec file."""
    for code in payload["setup"]:
        exec(compile("\n" * (code["line"] - 1) + code["text"], payload["file"], "exec"), ns)  # noqa: S102


def caught_warnings(caught: list[warnings.WarningMessage]) -> list[CaughtWarning]:
    """Recorded warnings as an Observation keeps them: (category, message, file:line)."""
    return [(w.category, str(w.message), f"{w.filename}:{w.lineno}") for w in caught]


def observe(
    adapter: Adapter,
    payload: CasePayload,
    drawn: Namespace | None = None,
    base: Namespace | None = None,
) -> Observation:
    """Run setup and run with every warning recorded; exceptions are part of what is observed.

    An exception that is the spec's own fault (`spec_fault`) is raised as SpecCodeError instead:
    it says nothing about the implementation.
    """
    obs = Observation()
    file = payload["file"]
    with warnings.catch_warnings(record=True) as caught:
        # "always": no warning is hidden by the once-per-location rule.
        warnings.simplefilter("always")
        try:
            ns = dict(base if base is not None else adapter.namespace())
            ns.update(drawn or {})
            obs.namespace = ns
            with adapter.backend(payload["backend"]):
                run_setup(payload, ns)
                run, is_expr = _compile_run(payload["run"]["text"], payload["run"]["line"], file)
                if is_expr:
                    obs.result = eval(run, ns)  # noqa: S307
                else:
                    exec(run, ns)  # noqa: S102
                    obs.result = ns.get("result")
                block_until_ready(obs.result)
        except Exception as exc:  # the case's own exception is an observation, judged by `raises`
            obs.exception = exc
    obs.warnings = caught_warnings(caught)
    fault = spec_fault(obs, payload)
    if fault is not None:
        raise SpecCodeError(fault)
    return obs


@runtime_checkable
class HasJit(Protocol):
    """The namespace's `jax` (JAX, or an adapter's stand-in): what `jit_function` needs of it."""

    def jit(self, fun: Callable[..., object]) -> Callable[..., object]: ...


def jit_source(payload: CasePayload) -> str:
    """`run` as the source of `_conformance_run`, a function of the payload's `jit_args`, its
    lines where they are in the spec."""
    args = ", ".join(payload.get("jit_args", []))
    text = payload["run"]["text"]
    try:
        compile(text, payload["file"], "eval")
        body = f"    return ({text})"
    except SyntaxError:
        body = "\n".join("    " + line for line in text.splitlines()) + "\n    return result"
    return "\n" * (payload["run"]["line"] - 2) + f"def _conformance_run({args}):\n{body}\n"


def _jit_function(payload: CasePayload, ns: Namespace) -> Callable[..., object]:
    """`run` as a function of the payload's `jit_args` (the other names are its globals), jitted."""
    exec(compile(jit_source(payload), payload["file"], "exec"), ns)  # noqa: S102
    run, jax = ns.pop("_conformance_run"), ns["jax"]
    if not isinstance(jax, HasJit) or not callable(run):
        raise AttributeError(
            f"the adapter's namespace has no jax.jit to compile {payload['run']['text']!r} with"
        )
    return jax.jit(run)


def observe_jit(adapter: Adapter, payload: CasePayload) -> tuple[Observation, Observation]:
    """(cold, warm): setup, then `run` inside jax.jit traced fresh, then called again (the cache)."""
    ns = dict(adapter.namespace())
    out = []
    jitted = None
    # setup's warnings belong to both calls (eagerly they are in the one run)
    setup_warnings: list[warnings.WarningMessage] = []
    for _ in range(2):
        obs = Observation(namespace=ns)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with adapter.backend(payload["backend"]):
                    if jitted is None:
                        run_setup(payload, ns)
                        jitted = _jit_function(payload, ns)
                        setup_warnings = list(caught)
                        del caught[:]
                    obs.result = jitted(*(ns[name] for name in payload.get("jit_args", [])))
                    block_until_ready(obs.result)
            except Exception as exc:
                obs.exception = exc
        obs.warnings = caught_warnings(setup_warnings + caught)
        out.append(obs)
    return out[0], out[1]


def _seen(obs: Observation, adapter: Adapter) -> dict[str, object]:
    """What the paths must agree on: what was raised, or dtype, weak_type, value; and the warnings."""
    seen = describe_observation(obs, adapter)
    d: Mapping[str, object] = seen
    keep: dict[str, object] = {k: d[k] for k in ("dtype", "weak_type", "value") if k in d}
    if "raised" in seen:
        keep = {"raised": seen["raised"]["type"]}
    keep["warnings"] = [(w["category"], w["message"]) for w in seen.get("warnings", [])]
    return keep


def _paths_verdict(
    adapter: Adapter,
    payload: CasePayload,
    eager: Observation,
    verdict: Verdict,
    jit: tuple[Observation, Observation] | None = None,
) -> Verdict:
    """Run the case under jit (cold, then warm; or take `jit`, what a batch's shared trace saw of
    it: worker/jit_batch.py) and fail the verdict on the first path whose observation differs from
    the eager one or misses the block; the message names the path."""
    paths = payload.get("paths", [])
    if not any(p.startswith("jit") for p in paths):
        return verdict
    cold, warm = jit if jit is not None else observe_jit(adapter, payload)
    base = _seen(eager, adapter)
    for path, obs in (("jit", cold), ("jit-warm", warm)):
        if path not in paths:
            continue
        seen = _seen(obs, adapter)
        problems = check_all(
            payload["expect"], obs, adapter, payload["file"], payload["expect_line"]
        )
        diffs = [
            f"{k}={seen.get(k)!r} on path {path}, {base.get(k)!r} eagerly"
            for k in sorted(set(base) | set(seen))
            if base.get(k) != seen.get(k)
        ]
        if problems or diffs:
            lines = [f"path {path} differs from eager: " + "; ".join(diffs)] if diffs else []
            lines += [f"path {path}: {p.message}" for p in problems]
            actual = verdict.get("actual")
            return {
                "outcome": "failed",
                "message": "\n".join(lines + ([verdict["message"]] if verdict["message"] else [])),
                "expected": payload["expect"],
                "actual": {"eager": actual, path: describe_observation(obs, adapter)},
                "duration_s": 0.0,
                "mismatches": [f"path:{path}"] + [p.field for p in problems],
            }
    return verdict


def block_until_ready(value: object) -> None:
    """Wait for a result's arrays (asynchronous dispatch): its errors and its time belong to this case."""
    for leaf in value if isinstance(value, (tuple, list)) else [value]:
        ready = getattr(leaf, "block_until_ready", None)
        if callable(ready):
            ready()


def run_payload(
    adapter: Adapter, payload: CasePayload, jit: tuple[Observation, Observation] | None = None
) -> Verdict:
    """Run one case and return its verdict: outcome, message, expected, actual, duration.

    `jit`: the case's (cold, warm) jit observations where a batch made them already.

    With a `documented` block in the payload, the same observation is judged against it too:
    the verdict's `documented` says whether what the docs say holds (it never changes the outcome).
    """
    start = time.perf_counter()
    block = payload["expect"]
    verdict: Verdict
    try:
        if payload.get("given"):
            verdict = _run_given(adapter, payload)
        else:
            obs = observe(adapter, payload)
            problems = check_all(block, obs, adapter, payload["file"], payload["expect_line"])
            verdict = _verdict(problems, obs, adapter, block)
            if payload.get("paths"):
                verdict = _paths_verdict(adapter, payload, obs, verdict, jit)
            documented = _documented(obs, adapter, payload)
            if documented is not None:
                verdict["documented"] = documented
    except SpecCodeError as exc:
        verdict = {
            "outcome": "error",
            "message": f"spec error (a bug in the spec, not a verdict on the implementation): {exc}",
            "expected": block,
            "actual": None,
            "duration_s": 0.0,
            "spec_error": True,
        }
    except Exception as exc:  # a harness or adapter fault, not the case's behaviour
        verdict = {
            "outcome": "error",
            "message": f"harness error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}",
            "expected": block,
            "actual": None,
            "duration_s": 0.0,
        }
    verdict["duration_s"] = round(time.perf_counter() - start, 6)
    return verdict


# The packages of the implementation: a module of theirs that does not import is the implementation's fact.
IMPLEMENTATION_PACKAGES = frozenset({"jax", "jaxlib"})


def spec_fault(obs: Observation, payload: CasePayload) -> str | None:
    """Why the observed exception is the spec's own bug (None when it is not).

    A NameError raised in the spec's own code (a typo, a name the adapter does not provide), a
    SyntaxError compiling it, or a ModuleNotFoundError from its own `import` of a module that is not
    the implementation's says nothing about the implementation, unless the block expects it.
    """
    exc = obs.exception
    if isinstance(exc, ModuleNotFoundError):
        return _missing_module(exc, payload)
    if not isinstance(exc, (NameError, SyntaxError)):
        return None
    raises = payload["expect"].get("raises")
    if raises is not None and raises["type"].rsplit(".", 1)[-1] in {
        c.__name__ for c in type(exc).__mro__
    }:
        return None
    file = payload["file"]
    if isinstance(exc, SyntaxError):
        if exc.filename != file:
            return None
        return f"{file}:{exc.lineno}: the spec's code does not compile: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or frames[-1].filename != file:
        return None  # raised inside the implementation (or the harness), not by the spec's own line
    return f"{file}:{frames[-1].lineno}: the spec's code raised {type(exc).__name__}: {exc}"


def _missing_module(exc: ModuleNotFoundError, payload: CasePayload) -> str | None:
    """A spec's own `import` of a module that is not installed, and not the implementation's (a
    release without `jax.experimental.x` is a fact about the implementation): the spec's, or the
    user's environment's, fault; None when the block expects the error or another line raised it."""
    raises = payload["expect"].get("raises")
    if raises is not None and raises["type"].rsplit(".", 1)[-1] in {
        c.__name__ for c in type(exc).__mro__
    }:
        return None
    top = (exc.name or "").split(".")[0]
    if not top or top in IMPLEMENTATION_PACKAGES:
        return None
    file = payload["file"]
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or frames[-1].filename != file:
        return None  # raised inside a module the spec imported, not by the spec's own import
    return (
        f"{file}:{frames[-1].lineno}: the spec imports {exc.name!r}, which is not installed here "
        "(install it, or take the import out of the spec)"
    )


def _documented(obs: Observation, adapter: Adapter, payload: CasePayload) -> DocumentedCheck | None:
    """Whether the payload's documented block holds for this observation, and why not (None: it has none)."""
    if "documented" not in payload or "documented_line" not in payload:
        return None
    line = payload["documented_line"]
    try:
        problems = check_all(payload["documented"], obs, adapter, payload["file"], line)
    except SpecCodeError as exc:
        return {"holds": False, "line": line, "message": f"spec error: {exc}"}
    return {"holds": not problems, "line": line, "message": "\n".join(p.message for p in problems)}


def _verdict(
    problems: list[Mismatch], obs: Observation, adapter: Adapter, block: ExpectBlock
) -> Verdict:
    """Passed or failed against `block` (its duration is set by run_payload)."""
    actual = describe_observation(obs, adapter)
    if not problems:
        return {
            "outcome": "passed",
            "message": "",
            "expected": block,
            "actual": actual,
            "duration_s": 0.0,
        }
    lines = [p.message for p in problems]
    if obs.exception is not None and "raises" not in block:
        tb = "".join(traceback.format_exception(obs.exception, limit=-6))
        lines.append("traceback (innermost last):\n" + short(tb, 6000))
    return {
        "outcome": "failed",
        "message": "\n".join(lines),
        "expected": block,
        "actual": actual,
        "duration_s": 0.0,
        "mismatches": [p.field for p in problems],
    }


def _run_given(adapter: Adapter, payload: CasePayload) -> Verdict:
    """Hypothesis draws the `given` names; every example must meet the block."""
    import hypothesis
    import numpy as np
    from hypothesis import strategies as st

    base = adapter.namespace()
    strat_ns = {"st": st, "np": np, **base}
    try:
        strategies = {name: eval(src, strat_ns) for name, src in payload["given"].items()}  # noqa: S307
    except Exception as exc:
        raise SpecCodeError(
            f"a `given` strategy does not evaluate: {type(exc).__name__}: {exc}"
        ) from exc
    base = {**base, "assume": hypothesis.assume, "note": hypothesis.note}
    # The first falsifying example: the names drawn, what the case did, what did not hold.
    failing: tuple[Namespace, Observation, list[Mismatch]] | None = None
    examples = 0
    documented: DocumentedCheck | None = None
    # What the first example did (its exception or warnings): the message check
    # (conformance/report/message_strength.py) rewords the messages a passed `given` case produced.
    first: tuple[Namespace, Observation] | None = None

    @hypothesis.settings(
        max_examples=payload.get("max_examples") or DEFAULT_MAX_EXAMPLES,
        derandomize=True,  # the same examples in every run, order and worker
        database=None,
        deadline=None,
        # No shrinking: each example reruns the implementation, and shrinking four floats against
        # a broken rule took over 60 s (the case timed out instead of failing). The first
        # falsifying example is reported as drawn.
        phases=(hypothesis.Phase.explicit, hypothesis.Phase.reuse, hypothesis.Phase.generate),
        suppress_health_check=list(hypothesis.HealthCheck),
        print_blob=False,
    )
    @hypothesis.seed(GIVEN_SEED)
    @hypothesis.given(**strategies)
    def prop(**drawn: object) -> None:
        nonlocal examples, documented, failing, first
        obs = observe(adapter, payload, drawn, base)
        if isinstance(obs.exception, hypothesis.errors.UnsatisfiedAssumption):
            raise obs.exception
        examples += 1
        if first is None:
            first = (drawn, obs)
        if documented is None or documented["holds"]:
            documented = _documented(obs, adapter, payload)
        problems = check_all(
            payload["expect"], obs, adapter, payload["file"], payload["expect_line"]
        )
        if problems:
            failing = (drawn, obs, problems)
            raise AssertionError("\n".join(p.message for p in problems))

    try:
        prop()
    except SpecCodeError:
        raise
    except (AssertionError, hypothesis.errors.HypothesisException) as exc:
        if failing is None:
            raise SpecCodeError(
                f"hypothesis could not run the case: {type(exc).__name__}: {exc}"
            ) from exc
        drawn, obs, problems = failing
        falsified = _verdict(problems, obs, adapter, payload["expect"])
        example = {k: short(v, 200) for k, v in drawn.items()}
        falsified["message"] = (
            f"falsifying example: {', '.join(f'{k}={v}' for k, v in example.items())}\n"
            + falsified["message"]
        )
        falsified["example"] = example
        return falsified
    actual: dict[str, object] = {"examples": examples}
    if first is not None:
        actual["first_example"] = {k: short(v, 200) for k, v in first[0].items()}
        actual["first_observed"] = describe_observation(first[1], adapter)
    verdict: Verdict = {
        "outcome": "passed",
        "message": f"{examples} examples",
        "expected": payload["expect"],
        "actual": actual,
        "duration_s": 0.0,
    }
    if documented is not None:
        verdict["documented"] = documented
    return verdict
