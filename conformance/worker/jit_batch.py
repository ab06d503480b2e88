"""The jit paths of a table's cells under one `jax.jit`: one trace and one compiled program for a
batch, each cell still its own observation.

A cell of a table with `paths: [..., jit, jit-warm]` is judged on what `run` gives inside `jax.jit`
traced fresh, and on a second call served from the jit cache (judge.observe_jit). Run one cell at a
time, that is a trace, a lowering and an XLA compile per cell: for the promotion table, hundreds of
programs a mode, nearly all of the table's cost. Here the cells of a batch that share their `run`
(one table) are traced together as one function of all their arguments, returning each cell's
result as its own output; the program is compiled once, then called again for the warm path.

What each cell sees is what it sees alone: its own setup (run again, as observe_jit does), its
`jit_args` as arguments of the jitted function (Python scalars weakly typed, arrays with their
dtypes), its `run` traced in its own namespace, each warning its trace raised recorded for it alone.
Where the batch cannot say what one cell would have seen, that cell runs alone (observe_jit):
- a cell whose setup raises, or whose trace raises (a strict-mode TypeError, say: the single
  path's warm call traces again and raises again, a batch's second call would not);
- a warning or exception that is not one cell's trace (lowering, compiling, running the program):
  the batch is split in halves and each half tried again, down to single cells, which run alone;
- a warm call that traces again (a cache miss): every cell of that batch runs alone.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable, Sequence
from typing import NamedTuple

from jax_conformance.adapters import Adapter
from jax_conformance.protocol import CasePayload
from jax_conformance.worker.checks import Namespace, Observation
from jax_conformance.worker.judge import (
    HasJit,
    block_until_ready,
    caught_warnings,
    jit_source,
    run_setup,
)


class JitObservations(NamedTuple):
    """One cell's observations on the jit paths, and how many cells the trace they came from had."""

    cold: Observation
    warm: Observation
    cells: int


def _batch_key(payload: CasePayload) -> tuple[object, ...] | None:
    """Cells with one key share a traced function; None: not a batchable jit cell."""
    if payload.get("given") or not any(p.startswith("jit") for p in payload.get("paths", [])):
        return None
    run = payload["run"]
    return (
        payload["file"],
        run["text"],
        run["line"],
        tuple(payload.get("jit_args", [])),
        payload["backend"],
    )


def observe_jit_batch(
    adapter: Adapter, payloads: Sequence[CasePayload]
) -> list[JitObservations | None]:
    """Each payload's (cold, warm) jit observations where a shared trace could make them; None for
    the others (not a jit cell, alone in its group, or one the batch could not speak for)."""
    out: list[JitObservations | None] = [None] * len(payloads)
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, payload in enumerate(payloads):
        key = _batch_key(payload)
        if key is not None:
            groups.setdefault(key, []).append(i)
    for indices in groups.values():
        if len(indices) < 2:
            continue
        for i, seen in zip(indices, _group(adapter, [payloads[i] for i in indices]), strict=True):
            out[i] = seen
    return out


class _Cell:
    """One cell's namespace, its run as a function of its jit_args, their values, setup's warnings."""

    def __init__(
        self,
        ns: Namespace,
        fun: Callable[..., object],
        args: tuple[object, ...],
        setup_warnings: list[warnings.WarningMessage],
    ) -> None:
        self.ns, self.fun, self.args, self.setup_warnings = ns, fun, args, setup_warnings


def _prepare(adapter: Adapter, payload: CasePayload, code: types.CodeType) -> _Cell | None:
    """Run the cell's setup in a fresh namespace (None if it raises: the cell runs alone)."""
    ns = dict(adapter.namespace())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run_setup(payload, ns)
            args = tuple(ns[name] for name in payload.get("jit_args", []))
        except Exception:
            return None
    return _Cell(ns, types.FunctionType(code, ns, "_conformance_run"), args, list(caught))


def _run_code(payload: CasePayload) -> types.CodeType:
    """The code of `run` as a function of the payload's jit_args (as judge._jit_function builds it)."""
    scratch: Namespace = {}
    exec(compile(jit_source(payload), payload["file"], "exec"), scratch)  # noqa: S102
    fun = scratch["_conformance_run"]
    assert isinstance(fun, types.FunctionType)
    return fun.__code__


def _group(adapter: Adapter, payloads: list[CasePayload]) -> list[JitObservations | None]:
    jax = adapter.namespace().get("jax")
    if not isinstance(jax, HasJit):
        return [None] * len(payloads)
    code = _run_code(payloads[0])
    with adapter.backend(payloads[0]["backend"]):
        cells = [_prepare(adapter, p, code) for p in payloads]
        ready = [i for i, c in enumerate(cells) if c is not None]
        seen = _traced(jax, [c for c in cells if c is not None])
    out: list[JitObservations | None] = [None] * len(payloads)
    for i, s in zip(ready, seen, strict=True):
        out[i] = s
    return out


def _traced(jax: HasJit, cells: list[_Cell]) -> list[JitObservations | None]:
    """One jit of every cell's run; halves tried again where the batch as a whole raised or warned."""
    if len(cells) < 2:
        return [None] * len(cells)  # alone: observe_jit runs it as it always has
    n = len(cells)
    # Per call (cold, warm): what each cell's trace warned and raised; None: not traced on that call.
    traced: list[list[tuple[list[warnings.WarningMessage], Exception | None] | None] | None] = []

    def batch(all_args: list[tuple[object, ...]]) -> list[object]:
        record: list[tuple[list[warnings.WarningMessage], Exception | None] | None] = [None] * n
        traced[-1] = record
        results: list[object] = []
        for i, (cell, args) in enumerate(zip(cells, all_args, strict=True)):
            raised: Exception | None = None
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    results.append(cell.fun(*args))
                except Exception as exc:  # this cell's own outcome: it runs alone
                    raised = exc
                    results.append(None)
            record[i] = (list(caught), raised)
        return results

    jitted = jax.jit(batch)
    outputs: list[list[object]] = []
    for _ in range(2):
        traced.append(None)  # batch() fills it in when the call traces
        results: list[object] | None = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                called = jitted([c.args for c in cells])
                if isinstance(called, (list, tuple)) and len(called) == n:
                    for result in called:
                        block_until_ready(result)
                    results = list(called)
            except Exception:
                pass  # not one cell's trace: found below
        if results is None or caught:  # not one cell's: find the cells that cause it
            half = n // 2
            return _traced(jax, cells[:half]) + _traced(jax, cells[half:])
        outputs.append(results)
    cold_trace, warm_trace = traced
    if cold_trace is None or warm_trace is not None:
        return [None] * n  # not traced on the first call, or traced again on the second
    out: list[JitObservations | None] = []
    for i, cell in enumerate(cells):
        record = cold_trace[i]
        if record is None or record[1] is not None:
            out.append(None)
            continue
        pair: list[Observation] = []
        for call, trace_warnings in ((0, record[0]), (1, [])):
            obs = Observation(namespace=cell.ns)
            obs.result = outputs[call][i]
            obs.warnings = caught_warnings(cell.setup_warnings + trace_warnings)
            pair.append(obs)
        out.append(JitObservations(pair[0], pair[1], n))
    return out
