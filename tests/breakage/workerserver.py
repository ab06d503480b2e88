"""A worker server shared by the breakage mode processes of one mode: JAX is imported once, not per adapter.

Every breakage run is a mode process whose worker imports JAX (about 3 of its 5 CPU-seconds)
and then one breakage adapter, which patches it. This server is started once per mode, in the
environment every worker of that mode gets (`CaseRunner._env`), imports what the fork server's
`full` level imports (the harness's worker modules and the adapter's `fork_preload`), and
listens on a socket path. A mode process given that path (`SHARED_SERVER_ENV`) asks it for its
long-lived worker: the server forks a child that loads the asked-for adapter and runs
`jax_conformance.worker.loop.main` on the mode process's pipes, as `python -m
jax_conformance.worker.loop --adapter A` would. It is the `full` fork server's rule: the child is
the process a fresh interpreter that had just imported those modules would be, so it serves only
an environment equal to its own (else it refuses, and the mode process spawns its worker) and
only if the imports were silent. Isolated cases keep their own fork servers in each mode process.

Protocol: the fork server's (jax_conformance.worker.forkserver), one connection per mode process;
a fork request also names `adapter`. Started as `python -m tests.breakage.workerserver --socket
PATH --adapter A` (A: the adapter whose `fork_preload` to import); it ends when its stdin closes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import selectors
import signal
import socket
import sys
import traceback
from typing import Any

from jax_conformance.plugin.forkclient import VOLATILE_ENV
from jax_conformance.worker.forkserver import MAX_PACKET, _preload, _silent_preload


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.send(json.dumps(message).encode())


def _child(adapter: str, env: dict[str, str], fds: list[int], server_pid: int) -> None:
    """In the forked child: become the adapter's long-lived worker on the given pipes. Never returns."""
    from jax_conformance.worker import loop as worker

    code = 70
    try:
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        os.environ.clear()
        os.environ.update(env)
        os.environ[worker.PARENT_ENV] = str(server_pid)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding="utf-8",
            line_buffering=True,
            errors="backslashreplace",
        )
        argv = ["--adapter", adapter]
        sys.argv = [worker.__file__, *argv]
        try:
            code = worker.main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 70
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _differs(env: dict[str, str], own: dict[str, str]) -> list[str]:
    return sorted(
        k for k in set(env) | set(own) if env.get(k) != own.get(k) and k not in VOLATILE_ENV
    )


def serve(path: str, preload_adapter: str) -> int:
    import jax_conformance.worker.checks  # noqa: F401
    import jax_conformance.worker.judge  # noqa: F401
    import jax_conformance.worker.loop  # noqa: F401
    from jax_conformance.adapters import load_adapter

    own = dict(os.environ)
    # Listening before the import: a mode process that connects meanwhile waits for the ready message.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    free, full = load_adapter(preload_adapter).fork_preload()
    reason = _preload(list(free)) or (
        _silent_preload(list(full)) if full else "the adapter names no module to preload"
    )
    ready = {"ready": True, "level": "unusable" if reason else "full", "reason": reason}
    owner: dict[int, socket.socket] = {}  # child pid -> the connection that asked for it
    served = refused = 0
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    while True:
        for key, _ in sel.select():
            if key.data == "stdin":
                if not sys.stdin.buffer.read1(4096):
                    print(f"served {served} workers, refused {refused}", flush=True)
                    return 0
            elif key.data == "wake":
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    os.read(wake_r, 4096)
                _reap(owner)
            elif key.data == "accept":
                conn, _ = listener.accept()
                _send(conn, ready)
                if reason is None:
                    sel.register(conn, selectors.EVENT_READ, "conn")
                else:
                    conn.close()
            else:
                conn = key.fileobj  # type: ignore[assignment]
                try:
                    data, fds, _flags, _addr = socket.recv_fds(conn, MAX_PACKET, 3)
                except InterruptedError:
                    continue
                except OSError:
                    data, fds = b"", []
                if not data:
                    sel.unregister(conn)
                    conn.close()
                    continue
                request = json.loads(data)
                env = {str(k): str(v) for k, v in request.get("env", {}).items()}
                differ = _differs(env, own)
                if (
                    request.get("op") != "fork"
                    or len(fds) != 3
                    or request.get("once", True)
                    or differ
                ):
                    for f in fds:
                        os.close(f)
                    refused += 1
                    print(f"refused: {request.get('adapter')}: {differ}", flush=True)
                    _send(
                        conn,
                        {
                            "error": f"serves only long-lived workers in its environment; differs: {differ}"
                        },
                    )
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for registered in list(sel.get_map().values()):
                        if isinstance(registered.fileobj, socket.socket):
                            registered.fileobj.close()
                    sel.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    _child(str(request["adapter"]), env, fds, os.getppid())
                served += 1
                owner[pid] = conn
                for f in fds:
                    os.close(f)
                _send(conn, {"pid": pid})
                _reap(owner)


def _reap(owner: dict[int, socket.socket]) -> None:
    while owner:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = owner.pop(pid, None)
        if conn is not None and conn.fileno() >= 0:
            _send(conn, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.breakage.workerserver")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--adapter", required=True)
    args = parser.parse_args(argv)
    return serve(args.socket, args.adapter)


if __name__ == "__main__":
    sys.exit(main())
