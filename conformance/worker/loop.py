"""The worker process: one implementation, started in one mode, running cases on request.

This module runs inside the worker (`python -m jax_conformance.worker.loop`, or a fork server's
child); its parent side is `jax_conformance.client.caserunner`.

It serves the worker protocol (`jax_conformance.protocol`: `hello`, `resolve`, `run` a spec case,
`observe` a `diff` program), one JSON request per line on stdin, one reply per line on the
protocol channel (the original stdout; the case's own prints and the implementation's logs go
to stderr).

`--once` runs a single `run` request in a fresh interpreter without starting the adapter
first, so that start-up itself (import, environment variables) is part of the case.

The worker defends the run against its cases: a case that leaves process-wide state changed
gets outcome `error` and the worker exits after answering (`restart`), so no later case
sees the change; one that raises SystemExit or runs out of memory under the limit gets
`crashed`. A fatal signal dumps the Python stack to stderr (faulthandler), and SIGUSR1
dumps it on demand, so the parent can say where a crashed or hung case was.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO, cast

from jax_conformance.adapters import Adapter, load_adapter
from jax_conformance.mode import Mode
from jax_conformance.protocol import (
    MEMORY_ENV,
    PARENT_ENV,
    CasePayload,
    ObserveReply,
    ObserveRequest,
    Reply,
    Request,
)
from jax_conformance.records import Verdict
from jax_conformance.text import LINE_CHARS, VALUE_CHARS, WORKER_MESSAGE_CHARS, cut

if TYPE_CHECKING:  # the judge (numpy and the rest) is imported when the first case runs
    from jax_conformance.worker.jit_batch import JitObservations

# A verdict is one line on a pipe and one record in a results file: its `actual` and `expected`
# are kept whole up to this many characters of JSON (its message is cut at WORKER_MESSAGE_CHARS).
MAX_FIELD_CHARS = 200_000
# Process-wide state by name (`process_state`, `Adapter.global_state`): compared, never interpreted.
State = Mapping[str, object]


def _protocol_channel() -> TextIO:
    """Keep the real stdout for the protocol and send fd 1 (prints, C-level logs) to stderr."""
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1)


def _send(channel: TextIO, message: Reply) -> None:
    channel.write(json.dumps(message, default=repr, allow_nan=True) + "\n")
    channel.flush()


def memory_limit_mb() -> int | None:
    """The per-worker address-space limit from JAX_CONFORMANCE_MEMORY_LIMIT_MB (unset or 0: none)."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{MEMORY_ENV}={raw!r} is not a whole number of megabytes") from None
    return value if value > 0 else None


def _limit_memory() -> None:
    # RLIMIT_AS counts virtual memory (JAX on CPU reserves about 1.5 GB of it at import), so
    # an allocation past the limit fails inside the case instead of the kernel OOM killer
    # taking the machine's other processes down with it.
    limit = memory_limit_mb()
    if limit is None:
        return
    import resource

    size = limit * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (size, size))


def _watch_parent() -> None:
    """Exit when the parent dies (SIGKILL, SIGTERM): an orphaned hung case would run forever."""
    expected = os.environ.get(PARENT_ENV)
    parent = int(expected) if expected and expected.isdigit() else os.getppid()

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(70)
            time.sleep(0.5)

    if os.getppid() != parent:
        os._exit(70)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _fault_reporting() -> None:
    # Python's own report of a fatal signal (SIGSEGV, SIGABRT, ...) goes to stderr, which the
    # parent keeps; SIGUSR1 prints every thread's stack without stopping the worker.
    faulthandler.enable(file=sys.stderr, all_threads=False)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)


def _resolve(adapter: Adapter, names: list[str]) -> dict[str, str]:
    unresolved = {}
    for name in names:
        try:
            obj = adapter.resolve(name)
            if not isinstance(obj, type):
                unresolved[name] = f"resolves to {obj!r}, not a class"
        except Exception as exc:
            unresolved[name] = f"{type(exc).__name__}: {exc}"
    return unresolved


def process_state() -> dict[str, object]:
    """Process-wide state any adapter's case could leak: environment, working directory, numpy errstate."""
    state: dict[str, object] = {"os.environ": dict(os.environ), "cwd": os.getcwd()}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state["numpy.geterr"] = dict(numpy.geterr())
    return state


def _state(adapter: Adapter) -> State:
    """The adapter's process-wide settings and the process's own (`process_state`)."""
    return {**adapter.global_state(), **process_state()}


def _changes(before: State, after: State) -> dict[str, object]:
    """What differs between two states: [old, new] per name, per key for a mapping (os.environ)."""
    changed: dict[str, object] = {}
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            # Name only what moved (os.environ is large).
            changed[key] = {
                k: [old.get(k), new.get(k)]
                for k in sorted(set(old) | set(new))
                if old.get(k) != new.get(k)
            }
        else:
            changed[key] = [old, new]
    return changed


def _out_of_memory(verdict: Verdict) -> str | None:
    """The exception that says the case ran out of memory, unless the case expected it."""
    if verdict.get("outcome") == "passed":
        return None
    actual = verdict.get("actual")
    raised = (actual.get("raised") if isinstance(actual, Mapping) else None) or {}
    if not isinstance(raised, Mapping):
        return None
    kind, message = str(raised.get("type", "")), str(raised.get("message", ""))
    if kind.endswith("MemoryError") or (
        "RESOURCE_EXHAUSTED" in message and "memory" in message.lower()
    ):
        return f"{kind}: {cut(message, LINE_CHARS, 'message')}"
    return None


def bound_verdict(verdict: Verdict) -> Verdict:
    """Cut an oversized message, actual or expected, saying so, so one case cannot flood the run."""
    verdict["message"] = cut(verdict["message"], WORKER_MESSAGE_CHARS, "message")
    for key in ("actual", "expected"):
        text = json.dumps(verdict.get(key), default=repr)
        if len(text) > MAX_FIELD_CHARS:
            verdict[key] = {
                "cut": f"{len(text):,} characters of {key} were not kept (limit {MAX_FIELD_CHARS:,})",
                "head": text[:VALUE_CHARS],
            }
    return verdict


def _ends_interpreter(exc: BaseException, what: str = "case") -> str:
    """Why the worker is replaced after a case or program raised SystemExit, KeyboardInterrupt and the like."""
    return (
        f"the {what} raised {type(exc).__name__}{cut(repr(exc.args), LINE_CHARS, 'arguments')}, which ends the "
        f"interpreter; the worker was replaced\n{traceback.format_exc(limit=-6)}"
    )


def _run(
    adapter: Adapter,
    payload: CasePayload,
    check_state: bool,
    jit: JitObservations | None = None,
) -> tuple[Verdict, bool]:
    """(verdict, restart): run one case and judge what it left behind (`jit`: its jit paths'
    observations where a batch's shared trace made them)."""
    from jax_conformance.worker.judge import run_payload

    before = _state(adapter) if check_state else {}
    start = time.perf_counter()
    try:
        verdict = run_payload(adapter, payload, None if jit is None else (jit.cold, jit.warm))
    except (
        BaseException
    ) as exc:  # SystemExit, KeyboardInterrupt: the case tried to end the interpreter
        return {
            "outcome": "crashed",
            "actual": {
                "crash": {
                    "raised": type(exc).__name__,
                    "args": cut(repr(exc.args), LINE_CHARS, "arguments"),
                }
            },
            "message": _ends_interpreter(exc),
            "expected": payload["expect"],
            "duration_s": round(time.perf_counter() - start, 6),
        }, True
    oom = _out_of_memory(verdict)
    if oom is not None:
        limit = memory_limit_mb()
        verdict["outcome"] = "crashed"
        seen = verdict.get("actual")
        verdict["actual"] = {
            **(seen if isinstance(seen, Mapping) else {}),
            "crash": {"out_of_memory": True, "memory_limit_mb": limit},
        }
        verdict["message"] = (
            f"the case ran out of memory ({oom}) under "
            f"{f'the {limit} MB limit' if limit else 'no limit'}; the worker was replaced\n"
            + verdict.get("message", "")
        )
        return verdict, True
    if check_state:
        changed = _changes(before, _state(adapter))
        if changed:
            verdict["outcome"] = "error"
            verdict["leaked"] = changed
            verdict["message"] = (
                "the case changed process-wide state "
                f"{cut(json.dumps(changed, default=repr), VALUE_CHARS, 'state')} without "
                "`isolate: process`; the worker was restarted so later cases are not affected\n"
                + verdict.get("message", "")
            )
            return verdict, True
    return verdict, False


def _jit_batch(
    adapter: Adapter, payloads: list[CasePayload]
) -> tuple[list[JitObservations | None], float, bool]:
    """(per payload its jit observations or None, each batched cell's share of the time, restart):
    the jit paths of a table's cells traced together (worker/jit_batch.py). Where that changed
    process-wide state, nothing it saw is used: every cell runs its jit paths alone, judged for
    what it leaves behind, and the worker is replaced after the batch."""
    from jax_conformance.worker.jit_batch import observe_jit_batch

    before = _state(adapter)
    start = time.perf_counter()
    jits = observe_jit_batch(adapter, payloads)
    if _changes(before, _state(adapter)):
        return [None] * len(payloads), 0.0, True
    batched = sum(j is not None for j in jits)
    return jits, (time.perf_counter() - start) / batched if batched else 0.0, False


def _observe(adapter: Adapter, request: ObserveRequest) -> ObserveReply:
    """Run one `diff` program and observe what it did; `restart` as for a case that leaks state."""
    from jax_conformance.differential.observe import not_observed, observe

    before = _state(adapter)
    try:
        namespace = adapter.namespace()
        with adapter.backend(request["backend"]):
            observation = observe(request["program"], namespace)
    except Exception:
        raise  # the adapter's fault (observe keeps the program's own): the loop answers it as an error
    except (
        BaseException
    ) as exc:  # SystemExit, KeyboardInterrupt: the program tried to end the interpreter
        return {
            "ok": True,
            "observation": not_observed("crashed", _ends_interpreter(exc, "program")),
            "restart": True,
        }
    return {
        "ok": True,
        "observation": observation,
        "restart": bool(_changes(before, _state(adapter))),
    }


def _parse(line: str) -> Request | None:
    """The request on one line, None unless it is a JSON object with an `op` (its other fields are
    trusted: one missing is answered as an error)."""
    try:
        request = json.loads(line)
    except json.JSONDecodeError:
        return None
    return cast(Request, request) if isinstance(request, dict) and "op" in request else None


def _serve(adapter: Adapter, request: Request) -> tuple[Reply, bool]:
    """(reply, exit after answering) for one request to a started worker."""
    if request["op"] == "hello":
        return {"ok": True, "info": adapter.info(), "pid": os.getpid()}, False
    if request["op"] == "resolve":
        return {"ok": True, "unresolved": _resolve(adapter, request["names"])}, False
    if request["op"] == "run":
        verdict, restart = _run(adapter, request["payload"], check_state=True)
        return {"ok": True, "verdict": bound_verdict(verdict), "restart": restart}, restart
    if request["op"] == "run_batch":
        verdicts: list[Verdict] = []
        jits, share, replace = _jit_batch(adapter, request["payloads"])
        restart = False
        for payload, jit in zip(request["payloads"], jits, strict=True):
            if restart:  # a cell left state changed: the rest wait for a fresh worker
                verdicts.append(
                    {
                        "outcome": "error",
                        "message": "not run: an earlier cell of the batch changed process-wide state",
                        "expected": payload["expect"],
                        "actual": None,
                        "duration_s": 0.0,
                    }
                )
                continue
            verdict, restart = _run(adapter, payload, check_state=True, jit=jit)
            if jit is not None:  # its share of the shared trace's time
                verdict["duration_s"] = round(verdict.get("duration_s", 0.0) + share, 6)
                verdict["jit_trace"] = jit.cells
            verdicts.append(bound_verdict(verdict))
        restart = restart or replace
        return {"ok": True, "verdicts": verdicts, "restart": restart}, restart
    if request["op"] == "observe":
        reply = _observe(adapter, request)
        return reply, reply["restart"]
    return {"ok": False, "error": f"unknown op {request['op']!r}"}, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_conformance.worker.loop")
    parser.add_argument("--adapter", required=True)
    parser.add_argument(
        "--once", action="store_true", help="run one case in this fresh interpreter, then exit"
    )
    args = parser.parse_args(argv)
    channel = _protocol_channel()
    _fault_reporting()
    _watch_parent()
    _limit_memory()
    try:
        adapter = load_adapter(args.adapter)
    except Exception as exc:
        _send(
            channel,
            {
                "ok": False,
                "error": f"cannot load adapter {args.adapter!r}: {type(exc).__name__}: {exc}",
            },
        )
        return 2
    if args.once:
        first = _parse(sys.stdin.readline())
        if first is None or first["op"] != "run":
            _send(channel, {"ok": False, "error": "--once expects one run request"})
            return 2
        verdict, _ = _run(adapter, first["payload"], check_state=False)
        _send(channel, {"ok": True, "verdict": bound_verdict(verdict)})
        return 0
    started = False
    for line in sys.stdin:
        request = _parse(line)
        if request is None:
            _send(
                channel,
                {
                    "ok": False,
                    "error": f"not a request (a JSON object with an op): {cut(line, LINE_CHARS, 'line')!r}",
                },
            )
            continue
        try:
            if not started:
                adapter.start(Mode.from_environ())
                started = True
            reply, leave = _serve(adapter, request)
            _send(channel, reply)
            if leave:
                return 0
        except Exception as exc:
            _send(
                channel,
                {
                    "ok": False,
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(),
                },
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
