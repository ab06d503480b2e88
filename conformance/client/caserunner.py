"""The parent side of the worker protocol: start workers, send cases, survive crashes and hangs.

Runs in the parent (the pytest process, or `lint`/`diff`): `Worker` is one worker process
(`jax_conformance.worker.loop`) and its pipes, speaking `jax_conformance.protocol`; `CaseRunner`
runs one adapter's cases (and `diff`'s programs) in one mode, on a long-lived worker or, for an
isolated case, a fresh one (forked through `jax_conformance.client.forkclient`, else spawned).

A case that kills its interpreter is `crashed`, one that outlives its time limit is
`timeout`; either way the worker is replaced and the run goes on. The verdict says what is
known: the exit status or signal, the Python stack at the crash or at the deadline (the
worker's faulthandler), and the tail of what the worker wrote to stderr during the case.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, TypeVar, cast, overload

from jax_conformance.client.forkclient import VOLATILE_ENV, ForkedProcess, ForkServer
from jax_conformance.errors import AdapterStartError, ForkServerError, UsageError, WorkerFailure
from jax_conformance.mode import Mode
from jax_conformance.protocol import (
    MEMORY_ENV,
    PARENT_ENV,
    CasePayload,
    ErrorReply,
    HelloReply,
    HelloRequest,
    ObserveReply,
    ObserveRequest,
    ProgramObservation,
    Reply,
    Request,
    ResolveReply,
    ResolveRequest,
    RunBatchReply,
    RunBatchRequest,
    RunReply,
    RunRequest,
)
from jax_conformance.records import AdapterInfo, Isolation, Outcome, Verdict, adapter_info
from jax_conformance.text import describe_exit, exit_fields

STARTUP_TIMEOUT = 180.0
ISOLATION_ENV = "JAX_CONFORMANCE_ISOLATION"
ISOLATION_MODES = ("fork", "spawn")
STDERR_TAIL = 6000
# A reply is one JSON line; past this the worker is not speaking the protocol any more.
MAX_REPLY_BYTES = 64 * 2**20
# How long a hung worker gets to print its stack (SIGUSR1) before it is killed.
STACK_GRACE_S = 1.0


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
    return env


def adapter_import_root(adapter: str) -> str | None:
    """Where this process imports a `module:Class` adapter's top-level package from, so the worker
    imports the same one (a test's adapter in `tests/` is importable here through pytest's rootdir,
    not through the environment); None for an installed adapter or one not importable here."""
    if ":" not in adapter:
        return None
    import importlib.util

    top = adapter.partition(":")[0].split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    origin = Path(spec.origin)
    return str(origin.parent.parent if origin.name == "__init__.py" else origin.parent)


J = TypeVar("J")


def encodable(value: J) -> J:
    """`value` with every string made UTF-8-encodable: a lone surrogate from a case (JSON allows
    `"\\ud800"`) becomes the text `\\ud800` instead of breaking every writer of the record later."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return cast(J, value.encode("utf-8", "backslashreplace").decode("utf-8"))
        return value
    if isinstance(value, dict):
        return cast(J, {encodable(k): encodable(v) for k, v in value.items()})
    if isinstance(value, list):
        return cast(J, [encodable(v) for v in value])
    return value


class Worker:
    """One worker process and its pipes."""

    def __init__(
        self,
        adapter: str,
        env: dict[str, str],
        once: bool = False,
        server: ForkServer | None = None,
    ) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        self.proc: subprocess.Popen[bytes] | ForkedProcess
        if server is not None:
            # A `--once` worker forked from a server that has already paid the start-up (see forkserver.py).
            self.proc = server.fork(env, self.stderr)
        else:
            cmd = [sys.executable, "-m", "jax_conformance.worker.loop", "--adapter", adapter] + (
                ["--once"] if once else []
            )
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                env={**env, PARENT_ENV: str(os.getpid())},
                start_new_session=True,  # a signal for the worker's process group leaves pytest alone
            )
        self._buffer = b""
        self._stderr_mark = 0

    @overload
    def request(self, message: HelloRequest, timeout: float) -> HelloReply | ErrorReply: ...
    @overload
    def request(self, message: ResolveRequest, timeout: float) -> ResolveReply | ErrorReply: ...
    @overload
    def request(self, message: RunRequest, timeout: float) -> RunReply | ErrorReply: ...
    @overload
    def request(self, message: ObserveRequest, timeout: float) -> ObserveReply | ErrorReply: ...
    @overload
    def request(self, message: RunBatchRequest, timeout: float) -> RunBatchReply | ErrorReply: ...

    def request(self, message: Request, timeout: float) -> Reply:
        """Send one request and wait for its one-line reply (the reply to that op, or an error);
        failures become WorkerFailure."""
        self.send(message)
        return self.receive(timeout)

    def send(self, message: Request) -> None:
        """Send one request without waiting for its reply (`receive` reads it)."""
        assert self.proc.stdin is not None
        self._stderr_mark = self._stderr_size()
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._crashed() from None

    def receive(self, timeout: float) -> Reply:
        """The reply to the request sent last (a JSON object; its fields are the worker's word)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise self._timed_out(timeout)
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise self._crashed()
                self._buffer += chunk
                if len(self._buffer) > MAX_REPLY_BYTES:
                    self.kill()
                    raise WorkerFailure(
                        "error",
                        f"the worker's reply passed {MAX_REPLY_BYTES:,} bytes without ending; "
                        f"the worker was killed{self._stderr_tail()}",
                        {"reply_bytes": len(self._buffer)},
                    )
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            reply = None
        if not isinstance(reply, dict):
            self.kill()
            raise WorkerFailure(
                "error",
                f"the worker answered {line[:200]!r}, not a JSON object (did the case write to "
                f"the protocol channel?); the worker was killed{self._stderr_tail()}",
            )
        return cast(Reply, encodable(reply))

    def _timed_out(self, timeout: float) -> WorkerFailure:
        # Ask for every thread's stack first, so the record says where the case was stuck.
        size = self._stderr_size()
        if self.proc.poll() is None and hasattr(signal, "SIGUSR1"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, signal.SIGUSR1)
            end = time.monotonic() + STACK_GRACE_S
            while (
                time.monotonic() < end and self._stderr_size() == size and self.proc.poll() is None
            ):
                time.sleep(0.05)
            time.sleep(0.1)  # let the dump finish
        self.kill()
        tail = self._stderr_text()
        return WorkerFailure(
            "timeout",
            f"no answer within {timeout:g} s; the worker was killed{self._format_tail(tail)}",
            {"timeout_s": timeout, "stderr_tail": tail},
        )

    def _crashed(self) -> WorkerFailure:
        code: int | None
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        tail = self._stderr_text()
        return WorkerFailure(
            "crashed",
            f"the worker process {describe_exit(code)}{self._format_tail(tail)}",
            {**exit_fields(code), "stderr_tail": tail},
        )

    def _stderr_size(self) -> int:
        try:
            return os.fstat(self.stderr.fileno()).st_size
        except (OSError, ValueError):
            return 0

    def _stderr_text(self) -> str:
        """What the worker wrote to stderr since the current request began (its last STDERR_TAIL bytes)."""
        try:
            size = self._stderr_size()
            start = max(self._stderr_mark, size - STDERR_TAIL)
            self.stderr.seek(start)
            data = self.stderr.read(size - start)
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", "replace").strip()
        return ("[...] " + text) if start > self._stderr_mark and text else text

    def _stderr_tail(self) -> str:
        return self._format_tail(self._stderr_text())

    @staticmethod
    def _format_tail(tail: str) -> str:
        return (
            f"\n--- worker stderr during the case (last {STDERR_TAIL} bytes) ---\n{tail}"
            if tail
            else ""
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.stderr.close()


def _error_text(reply: ErrorReply) -> str:
    """A worker's error reply in words: the error, then its traceback where it sent one."""
    return f"{reply['error']}\n{reply.get('traceback', '')}"


def full_server_serves(mode_env: dict[str, str], env: dict[str, str]) -> bool:
    """Whether the full fork server (started in the mode's environment) serves a case with `env`:
    the same test as `ForkServer.serves` for that level, decided before any server is started."""
    return not (
        {k for k in set(env) | set(mode_env) if env.get(k) != mode_env.get(k)} - VOLATILE_ENV
    )


class CaseRunner:
    """Runs cases for one adapter in one mode: a long-lived worker, fresh ones for isolated cases.

    `memory_mb` caps every worker's address space (JAX_CONFORMANCE_MEMORY_LIMIT_MB in the
    worker); a case that runs out of memory under it is `crashed` and the worker replaced.
    """

    def __init__(
        self,
        adapter: str,
        mode: Mode,
        default_timeout: float = 60.0,
        memory_mb: int | None = None,
        isolation: str | None = None,
    ) -> None:
        self.adapter = adapter
        self.mode = mode
        self.default_timeout = default_timeout
        self.memory_mb = memory_mb
        self.isolation = isolation or os.environ.get(ISOLATION_ENV) or "fork"
        if self.isolation not in ISOLATION_MODES:
            raise UsageError(
                f"${ISOLATION_ENV} or --isolation {self.isolation!r}: the isolation modes are "
                f"{', '.join(ISOLATION_MODES)}"
            )
        self._worker: Worker | None = None
        self._hello_sent = False
        self._info: AdapterInfo | None = None
        self._servers: dict[str, ForkServer] = {}
        # Why a fork server could not serve (level -> reason), for the run's notes.
        self.fork_notes: dict[str, str] = {}
        self.restarts = 0

    def worker_environ(self, extra: dict[str, str | None] | None = None) -> dict[str, str]:
        """A worker's environment in this run (`worker_env`, the adapter's import root, the memory limit)."""
        env = worker_env(self.mode, extra)
        root = adapter_import_root(self.adapter)
        if root is not None:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        if self.memory_mb:
            env[MEMORY_ENV] = str(int(self.memory_mb))
        return env

    def prestart(self) -> None:
        """Start the worker and send its hello now; the reply is read when the worker is first needed.

        The plugin calls this from pytest_configure, so the implementation's import overlaps
        pytest's own start-up and the loading of the spec files.
        """
        if self._worker is None:
            self._worker = self.new_worker()
            try:
                self._worker.send({"op": "hello"})
                self._hello_sent = True
            except WorkerFailure:
                self._hello_sent = False  # `_live_worker` finds it dead and starts another

    def new_worker(self) -> Worker:
        """A long-lived worker, in a fresh interpreter. The one place a subclass may give it from
        elsewhere (the breakage tests fork it from a server shared by many mode processes)."""
        return Worker(self.adapter, self.worker_environ())

    def _started(self, reply: HelloReply | ErrorReply) -> AdapterInfo:
        """The adapter's info from the worker's reply to hello, or why it could not start."""
        if not reply["ok"]:
            raise AdapterStartError(
                f"adapter {self.adapter!r} could not start in mode {self.mode.label}: "
                f"{_error_text(reply)}"
            )
        return adapter_info(reply["info"])

    def _live_worker(self) -> Worker:
        if self._hello_sent and self._worker is not None:
            self._hello_sent = False
            # prestart sent hello
            reply = cast(HelloReply | ErrorReply, self._worker.receive(STARTUP_TIMEOUT))
            self._info = self._started(reply)
        if self._worker is None or not self._worker.alive():
            if self._worker is not None:
                self._worker.close()
                self.restarts += 1
            self._worker = self.new_worker()
            reply = self._worker.request({"op": "hello"}, STARTUP_TIMEOUT)
            self._info = self._started(reply)
        return self._worker

    @property
    def info(self) -> AdapterInfo:
        """What the adapter says about itself (its worker is started for it)."""
        if self._info is None:
            self._live_worker()
        assert self._info is not None
        return self._info

    def resolve(self, names: list[str]) -> dict[str, str]:
        """The names that do not resolve to a class in the worker, each with why."""
        reply = self._live_worker().request({"op": "resolve", "names": names}, STARTUP_TIMEOUT)
        return dict(reply["unresolved"]) if reply["ok"] else {}

    def observe(
        self, program: str, backend: str, timeout: float | None = None
    ) -> ProgramObservation:
        """What a `diff` program does on `backend` (on the long-lived worker); a crash, hang or worker
        error is an observation too (`not_observed`)."""
        from jax_conformance.differential.observe import not_observed

        try:
            reply = self._live_worker().request(
                {"op": "observe", "program": program, "backend": backend},
                timeout or self.default_timeout,
            )
        except WorkerFailure as failure:
            self._drop_worker()
            return not_observed(failure.outcome, str(failure))
        if not reply["ok"]:
            return not_observed("error", f"worker error: {_error_text(reply)}")
        if reply["restart"]:
            self._drop_worker()
        return reply["observation"]

    def run(
        self,
        payload: CasePayload,
        timeout: float | None = None,
        isolate: bool = False,
        env: dict[str, str | None] | None = None,
    ) -> Verdict:
        """The verdict for one case; crashes and hangs become verdicts too (made here, on the parent side)."""
        limit = timeout or self.default_timeout
        start = time.perf_counter()
        worker = None
        isolation: Isolation | None = None  # for an isolated case, how it got its process
        try:
            if isolate:
                worker, isolation = self._isolated_worker(self.worker_environ(env))
                # A fresh interpreter imports the implementation inside the case: allow for that
                # (a child of the full fork server has it imported already).
                allowance = 0.0 if isolation == "fork-full" else STARTUP_TIMEOUT / 6
                reply = worker.request({"op": "run", "payload": payload}, limit + allowance)
            else:
                worker = self._live_worker()
                reply = worker.request({"op": "run", "payload": payload}, limit)
        except WorkerFailure as failure:
            if not isolate:
                self._drop_worker()
            key = "crash" if failure.outcome == "crashed" else failure.outcome
            verdict: Verdict = {
                "outcome": cast(Outcome, failure.outcome),
                "message": str(failure),
                "expected": payload["expect"],
                "actual": {key: failure.details},
                "duration_s": round(time.perf_counter() - start, 6),
            }
        else:
            if not reply["ok"]:
                verdict = {
                    "outcome": "error",
                    "message": f"worker error: {_error_text(reply)}",
                    "expected": payload["expect"],
                    "actual": None,
                    "duration_s": round(time.perf_counter() - start, 6),
                }
            else:
                if reply.get("restart"):
                    self._drop_worker()
                verdict = reply["verdict"]
        finally:
            if isolate and worker is not None:
                worker.close()
        if isolation is not None:
            verdict["isolation"] = isolation
        return verdict

    def run_batch(self, payloads: list[CasePayload], timeout: float) -> list[Verdict]:
        """One verdict per payload (a table's cells), from one request to the long-lived worker; a
        crash, hang or worker error gives every cell of the batch that verdict."""
        start = time.perf_counter()
        try:
            reply = self._live_worker().request({"op": "run_batch", "payloads": payloads}, timeout)
        except WorkerFailure as failure:
            self._drop_worker()
            key = "crash" if failure.outcome == "crashed" else failure.outcome
            took = round(time.perf_counter() - start, 6)
            return [
                {
                    "outcome": cast(Outcome, failure.outcome),
                    "message": f"the batch of {len(payloads)} cells: {failure}",
                    "expected": p["expect"],
                    "actual": {key: failure.details},
                    "duration_s": took,
                }
                for p in payloads
            ]
        if not reply["ok"]:
            return [
                {
                    "outcome": "error",
                    "message": f"worker error: {_error_text(reply)}",
                    "expected": p["expect"],
                    "actual": None,
                    "duration_s": 0.0,
                }
                for p in payloads
            ]
        if reply.get("restart"):
            self._drop_worker()
        return list(reply["verdicts"])

    def _server(self, level: str) -> ForkServer | None:
        if level in self.fork_notes:
            return None
        self.start_fork_servers((level,))
        server = self._servers[level]
        if not server.ready(STARTUP_TIMEOUT):
            self.fork_notes[level] = server.reason or "unusable"
            return None
        return server

    def start_fork_servers(self, levels: tuple[str, ...] = ("full", "light")) -> None:
        """Start the servers now (they import in the background); the first isolated case then waits less."""
        if self.isolation == "fork":
            for level in levels:
                if level not in self._servers and level not in self.fork_notes:
                    self._servers[level] = self.fork_server(level)

    def fork_server(self, level: str) -> ForkServer:
        """The level's fork server, started now (it imports in the background); a subclass may
        give the end of a server of its own (the breakage tests' shared one)."""
        return ForkServer.start(self.adapter, self.worker_environ(), level)

    def _isolated_worker(self, env: dict[str, str]) -> tuple[Worker, Isolation]:
        """A fresh `--once` worker for an isolated case: forked when a server's child is that process, else spawned."""
        if self.isolation == "fork":
            for level, isolation in (("full", "fork-full"), ("light", "fork-light")):
                if level == "full" and not full_server_serves(self.worker_environ(), env):
                    continue  # the full server could not serve it: do not start one (it imports the implementation)
                server = self._server(level)
                if server is None or not server.serves(env):
                    continue
                try:
                    return Worker(self.adapter, env, once=True, server=server), cast(
                        Isolation, isolation
                    )
                except ForkServerError as exc:
                    self.fork_notes[level] = str(exc)
                    self._servers.pop(level, None)
        return Worker(self.adapter, env, once=True), "spawn"

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
        for server in self._servers.values():
            server.close()
        self._servers.clear()


# Read once per process: `run` checks flags and backends with it.
_INFO: dict[tuple[str, Mode], AdapterInfo] = {}


def read_adapter_info(adapter: str, mode: Mode | None = None) -> AdapterInfo:
    """Start the adapter in a worker, in `mode` (default: off-warn, no flags), and read its info (once per process)."""
    key = (adapter, mode or Mode())
    if key not in _INFO:
        runner = CaseRunner(adapter, key[1])
        try:
            _INFO[key] = runner.info
        finally:
            runner.close()
    return _INFO[key]
