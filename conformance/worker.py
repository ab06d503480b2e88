"""The worker process: one implementation, started in one mode, running cases on request.

Protocol (the runner contract; see docs/RUNNER.md): the parent writes one JSON object per
line on stdin and reads one JSON object per line back on the worker's protocol channel
(the original stdout; the case's own prints and the implementation's logs go to stderr).

  {"op": "hello"}                      -> {"ok": true, "info": {...}}
  {"op": "resolve", "names": [...]}    -> {"ok": true, "unresolved": {name: reason}}
  {"op": "run", "payload": {...}}      -> {"ok": true, "verdict": {...}}

`--once` runs a single `run` request in a fresh interpreter without starting the adapter
first, so that start-up itself (import, environment variables) is part of the case.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any, TextIO

from conformance.adapter import Adapter, load_adapter
from conformance.mode import Mode


def _protocol_channel() -> TextIO:
    """Keep the real stdout for the protocol and send fd 1 (prints, C-level logs) to stderr."""
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1)


def _send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message, default=repr, allow_nan=True) + "\n")
    channel.flush()


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


def _run(adapter: Adapter, payload: dict[str, Any], check_state: bool) -> tuple[dict[str, Any], bool]:
    from conformance.execute import run_payload

    before = adapter.global_state() if check_state else {}
    verdict = run_payload(adapter, payload)
    if check_state:
        after = adapter.global_state()
        if after != before:
            changed = {k: [before.get(k), after.get(k)] for k in set(before) | set(after) if before.get(k) != after.get(k)}
            verdict["outcome"] = "error"
            verdict["message"] = (
                f"the case changed process-wide state {changed} without `isolate: process`; "
                "the worker was restarted so later cases are not affected\n" + verdict.get("message", "")
            )
            return verdict, True
    return verdict, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.worker")
    parser.add_argument("--adapter", required=True)
    parser.add_argument("--once", action="store_true", help="run one case in this fresh interpreter, then exit")
    args = parser.parse_args(argv)
    channel = _protocol_channel()
    try:
        adapter = load_adapter(args.adapter)
    except Exception as exc:
        _send(channel, {"ok": False, "error": f"cannot load adapter {args.adapter!r}: {type(exc).__name__}: {exc}"})
        return 2
    if args.once:
        request = json.loads(sys.stdin.readline())
        verdict, _ = _run(adapter, request["payload"], check_state=False)
        _send(channel, {"ok": True, "verdict": verdict})
        return 0
    started = False
    for line in sys.stdin:
        request = json.loads(line)
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
                verdict, leaked = _run(adapter, request["payload"], check_state=True)
                _send(channel, {"ok": True, "verdict": verdict, "restart": leaked})
                if leaked:
                    return 0
            else:
                _send(channel, {"ok": False, "error": f"unknown op {op!r}"})
        except Exception as exc:
            _send(channel, {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
