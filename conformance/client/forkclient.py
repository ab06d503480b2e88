"""The parent side of a fork server: start `jax_conformance.worker.forkserver`, ask it for `--once` workers.

Runs in the parent (the pytest process). `ForkServer` is the parent's end of one server process
(one per level and mode); `ForkedProcess` is one of its children, with the part of `Popen`'s
interface a `Worker` (`jax_conformance.client.caserunner`) uses, so a forked worker and a spawned one
are driven the same way. The server's own side is `jax_conformance.worker.forkserver`.
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
from collections.abc import Callable
from typing import IO, Any

from jax_conformance.errors import ForkServerError
from jax_conformance.protocol import PARENT_ENV
from jax_conformance.text import describe_exit

# Variables that change while a run goes on and that no import reads (pytest sets the first for
# each test): a fork server started before the change still serves; the child gets the new value.
VOLATILE_ENV = frozenset({"PYTEST_CURRENT_TEST"})
# How long a fork server gets to answer a fork request before it is given up for this run.
FORK_REPLY_TIMEOUT = 30.0


class ForkServer:
    """The parent's end of a fork server's socket: one per level and mode, started lazily
    (`ForkServer.start`: a `jax_conformance.worker.forkserver` process of this process's own).

    Built on a socket alone (no `proc`), it is the end of a server another process owns: it then
    only closes its end. `request_fields` go with every fork request (a server of a caller's own
    may want more than the environment: the breakage tests' shared server takes the adapter)."""

    def __init__(
        self,
        sock: socket.socket,
        env: dict[str, str],
        level: str,
        proc: subprocess.Popen[bytes] | None = None,
        request_fields: dict[str, Any] | None = None,
    ) -> None:
        self.sock = sock
        self.env = env
        self.level = level
        self.proc = proc
        self.request_fields = dict(request_fields or {})
        self.reason: str | None = None
        self.late_env_prefixes: tuple[str, ...] = ()
        self._exits: dict[int, int] = {}
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        self._ready: dict[str, Any] | None = None

    @classmethod
    def start(cls, adapter: str, env: dict[str, str], level: str) -> ForkServer:
        """Start a fork server of `adapter` at `level` in `env`; it imports in the background."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        server = cls(ours, env, level)
        try:
            server.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "jax_conformance.worker.forkserver",
                    "--adapter",
                    adapter,
                    "--level",
                    level,
                    "--fd",
                    str(theirs.fileno()),
                ],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=server.log,
                stderr=server.log,
                env={**env, PARENT_ENV: str(os.getpid())},
                start_new_session=True,
            )
        finally:
            theirs.close()
        return server

    def ready(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the server's first message; False (with `reason`) if it cannot serve."""
        if self._ready is None:
            try:
                message = self._message(timeout)
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
        differ = {
            k for k in set(env) | set(self.env) if env.get(k) != self.env.get(k)
        } - VOLATILE_ENV
        if not differ:
            return True
        return (
            self.level == "light"
            and bool(self.late_env_prefixes)
            and all(k.startswith(self.late_env_prefixes) for k in differ)
        )

    def _next(
        self, deadline: float | None, until: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any] | None:
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
                    raise ForkServerError(self._gone())
                message = dict(json.loads(data))
                if "exited" in message:
                    self._exits[int(message["exited"])] = int(message["code"])
                if until(message):
                    return message

    def _gone(self) -> str:
        """Why the server's end closed, in words."""
        if self.proc is None:
            return "the fork server closed its end"
        self.proc.poll()
        log = self._log_tail()
        return f"the fork server {describe_exit(self.proc.returncode)}" + (
            f": {log}" if log else ""
        )

    def _alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None

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
            socket.send_fds(
                self.sock,
                [json.dumps({"op": "fork", "env": env, **self.request_fields}).encode()],
                [in_r, out_w, stderr.fileno()],
            )
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
        if pid not in self._exits and self._alive() and self.sock.fileno() >= 0:
            deadline = None if timeout is None else time.monotonic() + timeout
            with contextlib.suppress(OSError, ValueError, ForkServerError):
                self._next(deadline, lambda m: pid in self._exits)
        return self._exits.pop(pid, None)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        if self.proc is None:
            self.log.close()
            return
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
