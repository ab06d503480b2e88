"""The floor: a plain pytest module, generated from the specs, that does each case's JAX work with bare asserts.

For one mode it picks each case's expect block the way the harness does (`Case.select`), then
writes one test function per case and backend that runs the same setup and run code in the
same recording context (every warning kept, the result blocked until ready) and checks the
block with plain `assert`s; a table's cells are cases of their own, and a case with jit `paths`
checks the block again inside `jax.jit`, traced fresh and from jit's cache. No worker process, no
JSON, no results file: what is left is the cost of the JAX work itself plus pytest. Isolated cases
(`isolate: process`) start a fresh `python -c` with the same environment, so the floor pays the same
interpreter start-up.

The module is generated at bench time from the same spec files, so it cannot drift from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jax_conformance.mode import Mode
from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files
from jax_conformance.spec.model import Case, Expectation
from jax_conformance.worker.judge import DEFAULT_MAX_EXAMPLES

# Names the jax adapter's namespace gives spec code (adapters/jax: JaxAdapter.namespace).
NAMESPACE_NAMES = ("jax", "jnp", "np", "lax", "os", "sys")

# Everything a generated test needs: imports, the namespace and the recording helper.
# It is also the head of every isolated case's `python -c` script, so it must stand alone.
PRELUDE = '''\
import os
import re
import sys
import warnings

_NS = None


def _namespace():
    """Import JAX and build the adapter's namespace; in a fresh process this is part of the case."""
    global _NS, jax, jnp, np
    if _NS is None:
        import jax
        import jax.numpy as jnp
        import numpy as np

        _NS = {{"jax": jax, "jnp": jnp, "np": np, "lax": jax.lax, "os": os, "sys": sys}}
    return _NS


{start_mode}
def _code(text, line, file, kind="exec"):
    return compile("\\n" * (line - 1) + text, file, kind)


def _run_code(text, line, file):
    try:
        return _code(text, line, file, "eval"), True
    except SyntaxError:
        return _code(text, line, file), False


def _observe(setup, run, file, backend, extra=None):
    """Run setup and run with every warning recorded: (namespace, result, exception, warnings)."""
    result = exc = None
    ns = {{}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # As in the harness (conformance/worker/judge.py: observe), the namespace is built inside
            # the case: an import that fails at start-up is the case's observed exception.
            ns = dict(_namespace())
            ns.update(extra or {{}})
            with jax.default_device(jax.devices(backend)[0]):
                for text, line in setup:
                    exec(_code(text, line, file), ns)
                code, is_expr = _run_code(run[0], run[1], file)
                if is_expr:
                    result = eval(code, ns)
                else:
                    exec(code, ns)
                    result = ns.get("result")
                for leaf in result if isinstance(result, (tuple, list)) else [result]:
                    if callable(getattr(leaf, "block_until_ready", None)):
                        leaf.block_until_ready()
        except Exception as e:
            exc = e
    ns["result"] = result
    return ns, result, exc, list(caught)


def _observe_jit(setup, run, jit_args, file, backend):
    """The jit paths as the harness runs them (conformance/worker/judge.py: observe_jit): setup,
    then run inside jax.jit traced fresh, then called again from jit's cache; each as _observe gives it."""
    ns = dict(_namespace())
    out = []
    jitted = None
    early = []
    for _ in range(2):
        result = exc = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with jax.default_device(jax.devices(backend)[0]):
                    if jitted is None:
                        for text, line in setup:
                            exec(_code(text, line, file), ns)
                        try:
                            compile(run[0], file, "eval")
                            body = "    return (" + run[0] + ")"
                        except SyntaxError:
                            body = "\\n".join("    " + x for x in run[0].splitlines()) + "\\n    return result"
                        head = "def _floor_run(" + ", ".join(jit_args) + "):\\n"
                        exec(compile(head + body + "\\n", file, "exec"), ns)
                        jitted = jax.jit(ns.pop("_floor_run"))
                        early = list(caught)
                        del caught[:]
                    result = jitted(*(ns[name] for name in jit_args))
                    for leaf in result if isinstance(result, (tuple, list)) else [result]:
                        if callable(getattr(leaf, "block_until_ready", None)):
                            leaf.block_until_ready()
            except Exception as e:
                exc = e
        seen = dict(ns)
        seen["result"] = result
        out.append((seen, result, exc, early + list(caught)))
    return out


def _leaves(value):
    if isinstance(value, (tuple, list)) and not hasattr(value, "dtype"):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


def _dtype(leaf):
    return "float0" if leaf.dtype == jax.dtypes.float0 else np.dtype(leaf.dtype).name


def _parse(value):
    from jax_conformance.worker.checks import parse_value  # YAML's complex, nan, inf; imported only by value checks

    return parse_value(value)


def _close(actual, expected, rtol, atol):
    if isinstance(actual, (tuple, list, dict)) and not hasattr(actual, "dtype"):
        items = list(actual.values()) if isinstance(actual, dict) else list(actual)
        want = list(expected.values()) if isinstance(expected, dict) else list(expected)
        return len(items) == len(want) and all(_close(a, e, rtol, atol) for a, e in zip(items, want))
    got, want = np.asarray(actual), np.asarray(expected)
    if got.shape != want.shape:
        return False
    if got.dtype.kind in "biu" and want.dtype.kind in "biu" or got.dtype.kind == "b":
        return bool(np.array_equal(got, want))
    wide = np.complex128 if np.iscomplexobj(got) or np.iscomplexobj(want) else np.float64
    return bool(np.allclose(got.astype(wide), want, rtol=rtol, atol=atol, equal_nan=True))
'''

ISOLATED_RUNNER = '''\
import subprocess
import sys


def _isolated(script, env):
    """A fresh interpreter for a start-up case, as the harness gives it (same environment)."""
    full = dict(os.environ)
    full.update({k: v for k, v in env.items() if v is not None})
    for k in [k for k, v in env.items() if v is None]:
        full.pop(k, None)
    full.setdefault("PYTHONHASHSEED", "0")
    proc = subprocess.run([sys.executable, "-c", script], env=full, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
'''


def _class_expr(name: str) -> str:
    """A dotted class name as a Python expression in the generated module."""
    head = name.split(".")[0]
    if head in NAMESPACE_NAMES or "." not in name:
        return name
    module, _, attr = name.rpartition(".")
    return f"__import__('importlib').import_module({module!r}).{attr}"


def _asserts(outcome: dict[str, Any], file: str, line: int) -> list[str]:
    """Bare asserts for one expect block, in the order the harness checks it (conformance/worker/checks.py)."""
    out: list[str] = []
    raises = outcome.get("raises")
    if raises is not None:
        out.append(f"assert isinstance(exc, {_class_expr(raises['type'])}), repr(exc)")
        if raises.get("match"):
            out.append(f"assert re.search({raises['match']!r}, str(exc)), str(exc)")
    else:
        out.append("assert exc is None, repr(exc)")
    warns = outcome.get("warns")
    if warns == "none":
        out.append("assert not caught, [str(w.message) for w in caught]")
    elif warns is not None:
        for want in [warns] if isinstance(warns, dict) else warns:
            cls = _class_expr(want["category"])
            pattern = want.get("match")
            match = f" and re.search({pattern!r}, str(w.message))" if pattern else ""
            out.append(f"hits = [w for w in caught if issubclass(w.category, {cls}){match}]")
            count = want.get("count")
            out.append(
                f"assert len(hits) == {count!r}, caught"
                if count is not None
                else "assert hits, caught"
            )
    if raises is not None:
        return out  # an expected exception: there is no result to check
    if "dtype" in outcome:
        out.append(
            f"assert all(_dtype(leaf) == {outcome['dtype']!r} for leaf in _leaves(result)), result"
        )
    if "shape" in outcome:
        out.append(
            f"assert all(tuple(np.shape(leaf)) == {tuple(outcome['shape'])!r} for leaf in _leaves(result)), result"
        )
    if "value" in outcome:
        rtol, atol = float(outcome.get("rtol", 1e-6)), float(outcome.get("atol", 0.0))
        out.append(
            f"assert _close(result, _parse({outcome['value']!r}), {rtol!r}, {atol!r}), result"
        )
    checks = outcome.get("check")
    for expr in [checks] if isinstance(checks, str) else checks or []:
        out.append(f"assert eval(_code({expr!r}, {line}, {file!r}, 'eval'), ns), {expr!r}")
    return out


def _body(case: Case, block: Expectation, backend: str) -> list[str]:
    """The statements of one case's test: observe (under Hypothesis for `given`), then assert."""
    file = str(case.spec_path)
    setup = [(c.text, c.line) for c in case.setup]
    run = (case.run.text, case.run.line)
    observe = (
        f"ns, result, exc, caught = _observe({setup!r}, {run!r}, {file!r}, {backend!r}<extra>)"
    )
    asserts = _asserts(block.expected, file, block.line)
    if not case.given:
        jit = (
            [
                f"for ns, result, exc, caught in _observe_jit({setup!r}, {run!r}, "
                f"{list(case.jit_args)!r}, {file!r}, {backend!r}):",
                *_indent(asserts),
            ]
            if any(p.startswith("jit") for p in case.paths)
            else []
        )
        return [observe.replace("<extra>", ""), *asserts, *jit]
    strategies = ", ".join(
        f"{k}=eval({v!r}, {{'st': st, **_namespace()}})" for k, v in case.given.items()
    )
    examples = case.max_examples or DEFAULT_MAX_EXAMPLES
    return [
        "import hypothesis",
        "from hypothesis import strategies as st",
        "",
        f"@hypothesis.settings(max_examples={examples}, derandomize=True, database=None, deadline=None,",
        "                     suppress_health_check=list(hypothesis.HealthCheck), print_blob=False)",
        f"@hypothesis.given({strategies})",
        "def prop(**drawn):",
        "    "
        + observe.replace(
            "<extra>", ", {**drawn, 'assume': hypothesis.assume, 'note': hypothesis.note}"
        ),
        "    if isinstance(exc, hypothesis.errors.UnsatisfiedAssumption):",
        "        raise exc",
        *("    " + a for a in asserts),
        "",
        "prop()",
    ]


def _name(case_id: str, backend: str, taken: set[str]) -> str:
    base = "test_" + re.sub(r"\W", "_", f"{case_id}_{backend}")
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def _indent(lines: Iterable[str], by: str = "    ") -> list[str]:
    return [by + line if line else "" for line in lines]


def floor_module(
    spec_dirs: list[Path], mode: Mode, backends: list[str], version: str, adapter: str = "jax"
) -> tuple[str, dict[str, int]]:
    """The plain pytest module for one mode, and counts of what it holds (run, not_applicable, isolated)."""
    # The module sets the mode before importing JAX; an isolated child inherits it with the
    # case's own variables on top (as jax_conformance.client.caserunner.worker_env builds them), so its
    # script must not set the mode again.
    prelude = PRELUDE.format(
        start_mode=(
            f"os.environ.update({mode.environ()!r})\nNS = _namespace()\n"
            f"assert bool(jax.config.x64_enabled) == {mode.x64!r}, 'the floor started in the wrong mode'\n"
        )
    )
    child_prelude = PRELUDE.format(start_mode="")
    out = [
        '"""Generated by bench/floor.py: the specs as plain pytest tests with bare asserts (do not edit)."""',
        "",
        prelude,
        ISOLATED_RUNNER,
        f"CHILD_PRELUDE = {child_prelude!r}",
        "",
        "import pytest",
        "",
    ]
    counts = {"run": 0, "not_applicable": 0, "isolated": 0, "given": 0}
    taken: set[str] = set()
    paths = [p for d in spec_dirs for p in spec_files([d]) if is_spec_file(p)]
    for path in paths:
        spec = load_spec(path)
        for case in spec.cases:
            for backend in backends:
                name = _name(case.id, backend, taken)
                block = case.select(mode, backend, adapter, version)
                out.append(f"def {name}():")
                out.append(f"    {case.id!r}")
                if block is None or block.not_applicable is not None:
                    counts["not_applicable"] += 1
                    out += ["    pytest.skip('not applicable')", "", ""]
                    continue
                counts["run"] += 1
                counts["given"] += bool(case.given)
                body = _body(case, block, backend)
                if case.isolate == "process":
                    counts["isolated"] += 1
                    # The child runs the prelude and the body as a script: a fresh interpreter per case.
                    script = "\n".join([*body, ""])
                    out.append(f"    _isolated(CHILD_PRELUDE + {script!r}, {case.env!r})")
                else:
                    out += _indent(body)
                out += ["", ""]
    return "\n".join(out), counts


def isolated_script(case: Case, block: Expectation, backend: str) -> str:
    """The `python -c` script the floor runs for one isolated case: the prelude, then the case's test body."""
    return "\n".join([PRELUDE.format(start_mode=""), *_body(case, block, backend), ""])


def write_floor(
    spec_dirs: list[Path], mode: Mode, backends: list[str], version: str, target: Path
) -> dict[str, int]:
    """Write the floor module for `mode` to `target`; returns its counts."""
    text, counts = floor_module(spec_dirs, mode, backends, version)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return counts
