"""The worker process: one implementation, started in one mode, running cases on request.

This module runs inside the worker (`python -m jax_conformance.worker.loop`, or a fork server's
child); its parent side is `jax_conformance.plugin.caserunner`.

Protocol (the runner contract; see docs/RUNNER.md): the parent writes one JSON object per
line on stdin and reads one JSON object per line back on the worker's protocol channel
(the original stdout; the case's own prints and the implementation's logs go to stderr).

  {"op": "hello"}                      -> {"ok": true, "info": {...}}
  {"op": "resolve", "names": [...]}    -> {"ok": true, "unresolved": {name: reason}}
  {"op": "run", "payload": {...}}      -> {"ok": true, "verdict": {...}, "restart": bool}

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
from typing import Any, TextIO

from jax_conformance.adapters import Adapter, load_adapter
from jax_conformance.mode import Mode
from jax_conformance.records import Verdict

MEMORY_ENV = "JAX_CONFORMANCE_MEMORY_LIMIT_MB"
PARENT_ENV = "JAX_CONFORMANCE_PARENT_PID"
# A verdict is one line on a pipe and one record in a results file: keep it bounded.
MAX_MESSAGE_CHARS = 100_000
MAX_FIELD_CHARS = 200_000


def _protocol_channel() -> TextIO:
    """Keep the real stdout for the protocol and send fd 1 (prints, C-level logs) to stderr."""
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1)


def _send(channel: TextIO, message: dict[str, Any]) -> None:
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


def process_state() -> dict[str, Any]:
    """Process-wide state any adapter's case could leak: environment, working directory, numpy errstate."""
    state: dict[str, Any] = {"os.environ": dict(os.environ), "cwd": os.getcwd()}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state["numpy.geterr"] = dict(numpy.geterr())
    return state


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    changed: dict[str, Any] = {}
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            # Name only what moved (os.environ is large).
            changed[key] = {k: [old.get(k), new.get(k)] for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)}
        else:
            changed[key] = [old, new]
    return changed


def _out_of_memory(verdict: Verdict) -> str | None:
    """The exception that says the case ran out of memory, unless the case expected it."""
    if verdict.get("outcome") == "passed":
        return None
    raised = (verdict.get("actual") or {}).get("raised") or {}
    kind, message = str(raised.get("type", "")), str(raised.get("message", ""))
    if kind.endswith("MemoryError") or ("RESOURCE_EXHAUSTED" in message and "memory" in message.lower()):
        return f"{kind}: {message[:300]}"
    return None


def bound_verdict(verdict: Verdict) -> Verdict:
    """Cut an oversized message, actual or expected, saying so, so one case cannot flood the run."""
    message = verdict.get("message")
    if isinstance(message, str) and len(message) > MAX_MESSAGE_CHARS:
        verdict["message"] = (message[:MAX_MESSAGE_CHARS]
                              + f"\n[... message cut by the worker: {len(message) - MAX_MESSAGE_CHARS:,} more characters]")
    for key in ("actual", "expected"):
        text = json.dumps(verdict.get(key), default=repr)
        if len(text) > MAX_FIELD_CHARS:
            verdict[key] = {"cut": f"{len(text):,} characters of {key} were not kept (limit {MAX_FIELD_CHARS:,})",
                            "head": text[:2000]}
    return verdict


def _run(adapter: Adapter, payload: dict[str, Any], check_state: bool) -> tuple[Verdict, bool]:
    """(verdict, restart): run one case and judge what it left behind."""
    from jax_conformance.worker.judge import run_payload

    before = {**adapter.global_state(), **process_state()} if check_state else {}
    start = time.perf_counter()
    try:
        verdict = run_payload(adapter, payload)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: the case tried to end the interpreter
        return {
            "outcome": "crashed", "actual": {"crash": {"raised": type(exc).__name__, "args": repr(exc.args)[:500]}},
            "message": f"the case raised {type(exc).__name__}{exc.args!r:.500}, which ends the interpreter; "
                       f"the worker was replaced\n{traceback.format_exc(limit=-6)}",
            "expected": payload.get("expect"), "duration_s": round(time.perf_counter() - start, 6),
        }, True
    oom = _out_of_memory(verdict)
    if oom is not None:
        limit = memory_limit_mb()
        verdict["outcome"] = "crashed"
        verdict["actual"] = {**(verdict.get("actual") or {}), "crash": {"out_of_memory": True, "memory_limit_mb": limit}}
        verdict["message"] = (f"the case ran out of memory ({oom}) under "
                              f"{f'the {limit} MB limit' if limit else 'no limit'}; the worker was replaced\n"
                              + verdict.get("message", ""))
        return verdict, True
    if check_state:
        changed = _changes(before, {**adapter.global_state(), **process_state()})
        if changed:
            verdict["outcome"] = "error"
            verdict["leaked"] = changed
            verdict["message"] = (
                f"the case changed process-wide state {json.dumps(changed, default=repr)[:2000]} without "
                "`isolate: process`; the worker was restarted so later cases are not affected\n" + verdict.get("message", "")
            )
            return verdict, True
    return verdict, False


def _parse(line: str) -> dict[str, Any] | None:
    try:
        request = json.loads(line)
    except json.JSONDecodeError:
        return None
    return request if isinstance(request, dict) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_conformance.worker.loop")
    parser.add_argument("--adapter", required=True)
    parser.add_argument("--once", action="store_true", help="run one case in this fresh interpreter, then exit")
    args = parser.parse_args(argv)
    channel = _protocol_channel()
    _fault_reporting()
    _watch_parent()
    _limit_memory()
    try:
        adapter = load_adapter(args.adapter)
    except Exception as exc:
        _send(channel, {"ok": False, "error": f"cannot load adapter {args.adapter!r}: {type(exc).__name__}: {exc}"})
        return 2
    if args.once:
        first = _parse(sys.stdin.readline()) or {}
        if "payload" not in first:
            _send(channel, {"ok": False, "error": "--once expects one run request"})
            return 2
        verdict, _ = _run(adapter, first["payload"], check_state=False)
        _send(channel, {"ok": True, "verdict": bound_verdict(verdict)})
        return 0
    started = False
    for line in sys.stdin:
        request = _parse(line)
        if request is None:
            _send(channel, {"ok": False, "error": f"not a JSON object: {line[:200]!r}"})
            continue
        op = request.get("op")
        try:
            if not started:
                adapter.start(Mode.from_environ())
                started = True
            if op == "hello":
                _send(channel, {"ok": True, "info": adapter.info(), "pid": os.getpid()})
            elif op == "resolve":
                _send(channel, {"ok": True, "unresolved": _resolve(adapter, request["names"])})
            elif op == "run":
                verdict, restart = _run(adapter, request["payload"], check_state=True)
                _send(channel, {"ok": True, "verdict": bound_verdict(verdict), "restart": restart})
                if restart:
                    return 0
            else:
                _send(channel, {"ok": False, "error": f"unknown op {op!r}"})
        except Exception as exc:
            _send(channel, {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
