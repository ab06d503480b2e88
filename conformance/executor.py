"""The parent side of the worker protocol: start workers, send cases, survive crashes and hangs.

A case that kills its interpreter is `crashed`, one that outlives its time limit is
`timeout`; either way the worker is replaced and the run goes on.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from conformance.mode import Mode

STARTUP_TIMEOUT = 180.0
STDERR_TAIL = 3000


class WorkerFailure(Exception):
    """The worker died or hung; `outcome` is `crashed` or `timeout`."""

    def __init__(self, outcome: str, message: str) -> None:
        self.outcome = outcome
        super().__init__(message)


def worker_env(mode: Mode, extra: dict[str, str | None] | None = None) -> dict[str, str]:
    """The parent's environment, then the mode's variables, then the case's (None unsets)."""
    env = dict(os.environ)
    env.update(mode.environ())
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    env.setdefault("PYTHONHASHSEED", "0")
    # Keep the worker importing this checkout even when it is not installed.
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class Worker:
    """One worker process and its pipes."""

    def __init__(self, adapter: str, env: dict[str, str], once: bool = False) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        cmd = [sys.executable, "-m", "conformance.worker", "--adapter", adapter] + (["--once"] if once else [])
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env,
            start_new_session=True,  # a signal for the worker's process group leaves pytest alone
        )
        self._buffer = b""

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._crashed() from None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.kill()
                    raise WorkerFailure("timeout", f"no answer within {timeout:g} s; the worker was killed{self._stderr_tail()}")
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise self._crashed()
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)  # type: ignore[no-any-return]

    def _crashed(self) -> WorkerFailure:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        return WorkerFailure("crashed", f"the worker process {_describe_exit(code)}{self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - STDERR_TAIL))
            tail = self.stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return f"\n--- worker stderr (last {STDERR_TAIL} bytes) ---\n{tail}" if tail else ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        self.stderr.close()


class CaseRunner:
    """Runs cases for one adapter in one mode: a long-lived worker, fresh ones for isolated cases."""

    def __init__(self, adapter: str, mode: Mode, default_timeout: float = 60.0) -> None:
        self.adapter = adapter
        self.mode = mode
        self.default_timeout = default_timeout
        self._worker: Worker | None = None
        self._info: dict[str, Any] | None = None
        self.restarts = 0

    def _live_worker(self) -> Worker:
        if self._worker is None or not self._worker.alive():
            if self._worker is not None:
                self._worker.close()
                self.restarts += 1
            self._worker = Worker(self.adapter, worker_env(self.mode))
            reply = self._worker.request({"op": "hello"}, STARTUP_TIMEOUT)
            if not reply.get("ok"):
                raise RuntimeError(f"adapter {self.adapter!r} could not start in mode {self.mode.label}: {reply.get('error')}\n{reply.get('traceback', '')}")
            self._info = reply["info"]
        return self._worker

    @property
    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._live_worker()
        assert self._info is not None
        return self._info

    def resolve(self, names: list[str]) -> dict[str, str]:
        reply = self._live_worker().request({"op": "resolve", "names": names}, STARTUP_TIMEOUT)
        return dict(reply.get("unresolved", {}))

    def run(self, payload: dict[str, Any], timeout: float | None = None,
            isolate: bool = False, env: dict[str, str | None] | None = None) -> dict[str, Any]:
        """The verdict for one case; crashes and hangs become verdicts too."""
        limit = timeout or self.default_timeout
        start = time.perf_counter()
        worker = None
        try:
            if isolate:
                worker = Worker(self.adapter, worker_env(self.mode, env), once=True)
                reply = worker.request({"op": "run", "payload": payload}, limit + STARTUP_TIMEOUT / 6)
            else:
                worker = self._live_worker()
                reply = worker.request({"op": "run", "payload": payload}, limit)
        except WorkerFailure as failure:
            if not isolate:
                self._drop_worker()
            return {"outcome": failure.outcome, "message": str(failure), "expected": payload["expect"],
                    "actual": None, "duration_s": round(time.perf_counter() - start, 6)}
        finally:
            if isolate and worker is not None:
                worker.close()
        if not reply.get("ok"):
            return {"outcome": "error", "message": f"worker error: {reply.get('error')}\n{reply.get('traceback', '')}",
                    "expected": payload["expect"], "actual": None, "duration_s": round(time.perf_counter() - start, 6)}
        if reply.get("restart"):
            self._drop_worker()
        verdict: dict[str, Any] = reply["verdict"]
        return verdict

    def _drop_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker.close()
            self._worker = None
            self.restarts += 1

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
