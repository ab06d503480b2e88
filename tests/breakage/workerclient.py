"""The mode process's end of the breakage tests' shared worker servers (tests/breakage/workerserver.py).

A pytest plugin the harness loads (`-p tests.breakage.workerclient`) into each breakage's mode
process, with the servers' directory in `SHARED_SERVER_ENV`: it gives the suite's session a
`CaseRunner` that asks those servers for its workers (`RUNNER_CLASS`, before the suite's own
`pytest_configure` makes the runner), so JAX is imported once per mode, not once per breakage.
What a server refuses, the runner starts as it always does.
"""

from __future__ import annotations

import os
import socket

import pytest
from jax_conformance.client.caserunner import STARTUP_TIMEOUT, CaseRunner, Worker
from jax_conformance.client.forkclient import ForkServer
from jax_conformance.errors import ForkServerError
from jax_conformance.plugin.session import RUNNER_CLASS

# A directory holding the sockets of the shared worker servers (`full.sock`, `light.sock`), set
# by the harness for the mode processes of one mode.
SHARED_SERVER_ENV = "JAX_CONFORMANCE_WORKER_SERVER"


def connect(path: str, adapter: str, env: dict[str, str], level: str, once: bool) -> ForkServer:
    """The client's end of a shared server at `path`. Unlike a fork server of the runner's own it
    serves any adapter (each child loads the one asked for) and, at the `full` level, the
    long-lived worker too (`once=False`)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        sock.connect(path)
    except OSError as exc:
        sock.close()
        raise ForkServerError(f"cannot reach the shared worker server {path}: {exc}") from None
    return ForkServer(sock, env, level, request_fields={"adapter": adapter, "once": once})


class SharedServerRunner(CaseRunner):
    """A `CaseRunner` whose workers come from the shared servers where they serve them."""

    shared: ForkServer | None = None  # the full server's end for the long-lived worker

    def new_worker(self) -> Worker:
        directory = os.environ.get(SHARED_SERVER_ENV)
        if not directory or self.isolation != "fork" or "shared" in self.fork_notes:
            return super().new_worker()
        self._close_shared()
        env = self.worker_environ()
        try:
            self.shared = connect(
                os.path.join(directory, "full.sock"), self.adapter, env, "full", once=False
            )
            if self.shared.ready(STARTUP_TIMEOUT):
                return Worker(self.adapter, env, server=self.shared)
            self.fork_notes["shared"] = self.shared.reason or "unusable"
        except ForkServerError as exc:
            self.fork_notes["shared"] = str(exc)
        self._close_shared()
        return super().new_worker()

    def fork_server(self, level: str) -> ForkServer:
        directory = os.environ.get(SHARED_SERVER_ENV)
        path = os.path.join(directory, f"{level}.sock") if directory else ""
        if path and os.path.exists(path):
            try:
                return connect(path, self.adapter, self.worker_environ(), level, once=True)
            except ForkServerError:
                pass
        return super().fork_server(level)

    def _close_shared(self) -> None:
        if self.shared is not None:
            self.shared.close()
            self.shared = None

    def close(self) -> None:
        super().close()
        self._close_shared()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(SHARED_SERVER_ENV):
        config.stash[RUNNER_CLASS] = SharedServerRunner
