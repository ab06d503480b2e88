"""The parent side of the worker protocol: start workers, send cases, survive crashes and hangs.

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
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from jax_conformance.errors import AdapterStartError, ForkServerError, WorkerFailure
from jax_conformance.mode import Mode
from jax_conformance.run.worker import MEMORY_ENV, PARENT_ENV

STARTUP_TIMEOUT = 180.0
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


def encodable(value: Any) -> Any:
    """`value` with every string made UTF-8-encodable: a lone surrogate from a case (JSON allows
    `"\\ud800"`) becomes the text `\\ud800` instead of breaking every writer of the record later."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value


def describe_exit(code: int | None) -> str:
    """`exited with status 3`, `was killed by signal SIGSEGV` (a Popen returncode in words)."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"was killed by signal {-code}"
        hint = " (the kernel's OOM killer sends this too)" if name == "SIGKILL" else ""
        return f"was killed by signal {name}{hint}"
    return f"exited with status {code}"


def _exit_details(code: int | None) -> dict[str, Any]:
    if code is None:
        return {}
    if code < 0:
        try:
            return {"signal": signal.Signals(-code).name}
        except ValueError:
            return {"signal": -code}
    return {"exit_status": code}


ISOLATION_ENV = "JAX_CONFORMANCE_ISOLATION"
ISOLATION_MODES = ("fork", "spawn")
# Variables that change while a run goes on and that no import reads (pytest sets the first for
# each test): a fork server started before the change still serves; the child gets the new value.
VOLATILE_ENV = frozenset({"PYTEST_CURRENT_TEST"})
# How long a fork server gets to answer a fork request before it is given up for this run.
FORK_REPLY_TIMEOUT = 30.0


class ForkServer:
    """The parent's end of a `jax_conformance.run.forkserver` process (one per level and mode, started lazily)."""

    def __init__(self, adapter: str, env: dict[str, str], level: str) -> None:
        self.env = env
        self.level = level
        self.reason: str | None = None
        self.late_env_prefixes: tuple[str, ...] = ()
        self._exits: dict[int, int] = {}
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jax_conformance.run.forkserver", "--adapter", adapter, "--level", level,
                 "--fd", str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                env={**env, PARENT_ENV: str(os.getpid())}, start_new_session=True,
            )
        finally:
            theirs.close()
        self._ready: dict[str, Any] | None = None

    def ready(self) -> bool:
        """Wait for the server's first message; False (with `reason`) if it cannot serve."""
        if self._ready is None:
            try:
                message = self._message(STARTUP_TIMEOUT)
            except ForkServerError as exc:
                message = {"level": "unusable", "reason": str(exc)}
            self._ready = message
            if message.get("level") != self.level:
                self.reason = str(message.get("reason") or f"answered {message!r}")
                self.close()
            self.late_env_prefixes = tuple(message.get("late_env_prefixes") or ())
        return self.reason is None

    def serves(self, env: dict[str, str]) -> bool:
        """Whether a child of this server is the process a fresh interpreter with `env` would be."""
        differ = {k for k in set(env) | set(self.env) if env.get(k) != self.env.get(k)} - VOLATILE_ENV
        if not differ:
            return True
        return self.level == "light" and bool(self.late_env_prefixes) and all(
            k.startswith(self.late_env_prefixes) for k in differ)

    def _next(self, deadline: float | None, until: Any) -> dict[str, Any] | None:
        """Read packets, keeping exit notices, until `until(message)` holds (that message) or the
        deadline passes (None); raises ForkServerError when the server's end has closed."""
        with selectors.DefaultSelector() as sel:
            sel.register(self.sock, selectors.EVENT_READ)
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not sel.select(left):
                    return None
                data = self.sock.recv(1 << 20)
                if not data:
                    self.proc.poll()
                    log = self._log_tail()
                    raise ForkServerError(f"the fork server {describe_exit(self.proc.returncode)}"
                                          + (f": {log}" if log else ""))
                message = dict(json.loads(data))
                if "exited" in message:
                    self._exits[int(message["exited"])] = int(message["code"])
                if until(message):
                    return message

    def _message(self, timeout: float | None) -> dict[str, Any]:
        """The next message that is not an exit notice (those are kept); raises when the server is gone."""
        deadline = None if timeout is None else time.monotonic() + timeout
        message = self._next(deadline, lambda m: "exited" not in m)
        if message is None:
            raise ForkServerError(f"the fork server did not answer within {timeout:g} s")
        return message

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.log.seek(0)
            return self.log.read()[-2000:].decode("utf-8", "replace").strip()
        return ""

    def fork(self, env: dict[str, str], stderr: IO[bytes]) -> ForkedProcess:
        """A `--once` worker forked with `env`, on fresh pipes, its stderr into `stderr`."""
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.sock, [json.dumps({"op": "fork", "env": env}).encode()], [in_r, out_w, stderr.fileno()])
            reply = self._message(FORK_REPLY_TIMEOUT)
        except (OSError, ForkServerError) as exc:
            os.close(in_w)
            os.close(out_r)
            self.reason = f"the fork server failed: {exc}"
            self.close()
            raise ForkServerError(self.reason) from None
        finally:
            os.close(in_r)
            os.close(out_w)
        if "pid" not in reply:
            os.close(in_w)
            os.close(out_r)
            raise ForkServerError(f"the fork server refused: {reply.get('error', reply)}")
        return ForkedProcess(self, int(reply["pid"]), os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"))

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code (as Popen.returncode), once the server has reaped it; None until then."""
        if pid not in self._exits and self.proc.poll() is None and self.sock.fileno() >= 0:
            deadline = None if timeout is None else time.monotonic() + timeout
            with contextlib.suppress(OSError, ValueError, ForkServerError):
                self._next(deadline, lambda m: pid in self._exits)
        return self._exits.pop(pid, None)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self.log.close()


class ForkedProcess:
    """A child of a fork server, with the part of `subprocess.Popen`'s interface a Worker uses."""

    def __init__(self, server: ForkServer, pid: int, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.server = server
        self.pid = pid
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"forked worker {self.pid}", timeout or 0)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)


class Worker:
    """One worker process and its pipes."""

    def __init__(self, adapter: str, env: dict[str, str], once: bool = False, server: ForkServer | None = None) -> None:
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        self.proc: subprocess.Popen[bytes] | ForkedProcess
        if server is not None:
            # A `--once` worker forked from a server that has already paid the start-up (see forkserver.py).
            self.proc = server.fork(env, self.stderr)
        else:
            cmd = [sys.executable, "-m", "jax_conformance.run.worker", "--adapter", adapter] + (["--once"] if once else [])
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                env={**env, PARENT_ENV: str(os.getpid())},
                start_new_session=True,  # a signal for the worker's process group leaves pytest alone
            )
        self._buffer = b""
        self._stderr_mark = 0

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait for its one-line reply; failures become WorkerFailure."""
        self.send(message)
        return self.receive(timeout)

    def send(self, message: dict[str, Any]) -> None:
        """Send one request without waiting for its reply (`receive` reads it)."""
        assert self.proc.stdin is not None
        self._stderr_mark = self._stderr_size()
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._crashed() from None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The reply to the request sent last."""
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
                    raise WorkerFailure("error", f"the worker's reply passed {MAX_REPLY_BYTES:,} bytes without ending; "
                                        f"the worker was killed{self._stderr_tail()}", {"reply_bytes": len(self._buffer)})
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            reply = None
        if not isinstance(reply, dict):
            self.kill()
            raise WorkerFailure("error", f"the worker answered {line[:200]!r}, not a JSON object (did the case write to "
                                f"the protocol channel?); the worker was killed{self._stderr_tail()}")
        return dict(encodable(reply))

    def _timed_out(self, timeout: float) -> WorkerFailure:
        # Ask for every thread's stack first, so the record says where the case was stuck.
        size = self._stderr_size()
        if self.proc.poll() is None and hasattr(signal, "SIGUSR1"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, signal.SIGUSR1)
            end = time.monotonic() + STACK_GRACE_S
            while time.monotonic() < end and self._stderr_size() == size and self.proc.poll() is None:
                time.sleep(0.05)
            time.sleep(0.1)  # let the dump finish
        self.kill()
        tail = self._stderr_text()
        return WorkerFailure("timeout", f"no answer within {timeout:g} s; the worker was killed{self._format_tail(tail)}",
                             {"timeout_s": timeout, "stderr_tail": tail})

    def _crashed(self) -> WorkerFailure:
        code: int | None
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        tail = self._stderr_text()
        return WorkerFailure("crashed", f"the worker process {describe_exit(code)}{self._format_tail(tail)}",
                             {**_exit_details(code), "stderr_tail": tail})

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
        return f"\n--- worker stderr during the case (last {STDERR_TAIL} bytes) ---\n{tail}" if tail else ""

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


class CaseRunner:
    """Runs cases for one adapter in one mode: a long-lived worker, fresh ones for isolated cases.

    `memory_mb` caps every worker's address space (JAX_CONFORMANCE_MEMORY_LIMIT_MB in the
    worker); a case that runs out of memory under it is `crashed` and the worker replaced.
    """

    def __init__(self, adapter: str, mode: Mode, default_timeout: float = 60.0, memory_mb: int | None = None,
                 isolation: str | None = None) -> None:
        self.adapter = adapter
        self.mode = mode
        self.default_timeout = default_timeout
        self.memory_mb = memory_mb
        self.isolation = isolation or os.environ.get(ISOLATION_ENV) or "fork"
        if self.isolation not in ISOLATION_MODES:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATION_MODES)}, not {self.isolation!r}")
        self._worker: Worker | None = None
        self._hello_sent = False
        self._info: dict[str, Any] | None = None
        self._servers: dict[str, ForkServer] = {}
        # Why a fork server could not serve (level -> reason), for the run's notes.
        self.fork_notes: dict[str, str] = {}
        self.restarts = 0

    def _env(self, extra: dict[str, str | None] | None = None) -> dict[str, str]:
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
            self._worker = Worker(self.adapter, self._env())
            try:
                self._worker.send({"op": "hello"})
                self._hello_sent = True
            except WorkerFailure:
                self._hello_sent = False  # `_live_worker` finds it dead and starts another

    def _started(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The adapter's info from the worker's reply to hello, or why it could not start."""
        if not reply.get("ok"):
            raise AdapterStartError(f"adapter {self.adapter!r} could not start in mode {self.mode.label}: "
                                    f"{reply.get('error')}\n{reply.get('traceback', '')}")
        return dict(reply["info"])

    def _live_worker(self) -> Worker:
        if self._hello_sent and self._worker is not None:
            self._hello_sent = False
            reply = self._worker.receive(STARTUP_TIMEOUT)
            self._info = self._started(reply)
        if self._worker is None or not self._worker.alive():
            if self._worker is not None:
                self._worker.close()
                self.restarts += 1
            self._worker = Worker(self.adapter, self._env())
            reply = self._worker.request({"op": "hello"}, STARTUP_TIMEOUT)
            self._info = self._started(reply)
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
        how: dict[str, str] = {}  # for an isolated case, how it got its process
        try:
            if isolate:
                worker, how["isolation"] = self._isolated_worker(self._env(env))
                # A fresh interpreter imports the implementation inside the case: allow for that
                # (a child of the full fork server has it imported already).
                allowance = 0.0 if how["isolation"] == "fork-full" else STARTUP_TIMEOUT / 6
                reply = worker.request({"op": "run", "payload": payload}, limit + allowance)
            else:
                worker = self._live_worker()
                reply = worker.request({"op": "run", "payload": payload}, limit)
        except WorkerFailure as failure:
            if not isolate:
                self._drop_worker()
            key = "crash" if failure.outcome == "crashed" else failure.outcome
            return {"outcome": failure.outcome, "message": str(failure), "expected": payload["expect"],
                    "actual": {key: failure.details}, "duration_s": round(time.perf_counter() - start, 6), **how}
        finally:
            if isolate and worker is not None:
                worker.close()
        if not reply.get("ok"):
            return {"outcome": "error", "message": f"worker error: {reply.get('error')}\n{reply.get('traceback', '')}",
                    "expected": payload["expect"], "actual": None, "duration_s": round(time.perf_counter() - start, 6),
                    **how}
        if reply.get("restart"):
            self._drop_worker()
        verdict: dict[str, Any] = {**reply["verdict"], **how}
        return verdict

    def _server(self, level: str) -> ForkServer | None:
        if level in self.fork_notes:
            return None
        self.start_fork_servers((level,))
        server = self._servers[level]
        if not server.ready():
            self.fork_notes[level] = server.reason or "unusable"
            return None
        return server

    def start_fork_servers(self, levels: tuple[str, ...] = ("full", "light")) -> None:
        """Start the servers now (they import in the background); the first isolated case then waits less."""
        if self.isolation == "fork":
            for level in levels:
                if level not in self._servers and level not in self.fork_notes:
                    self._servers[level] = ForkServer(self.adapter, self._env(), level)

    def _isolated_worker(self, env: dict[str, str]) -> tuple[Worker, str]:
        """A fresh `--once` worker for an isolated case: forked when a server's child is that process, else spawned."""
        if self.isolation == "fork":
            for level in ("full", "light"):
                server = self._server(level)
                if server is None or not server.serves(env):
                    continue
                try:
                    return Worker(self.adapter, env, once=True, server=server), f"fork-{level}"
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
