"""A fork server for `isolate: process` cases: the interpreter start-up is paid once, not per case.

An isolated case needs a process no other case has touched. Starting a fresh interpreter and
importing JAX for each one costs about 0.7 s, most of it the same import every time. A fork
server is a process started in the mode's environment that imports what can safely be shared
and then, for each case, forks a child that runs the case exactly as `python -m
jax_conformance.worker.loop --once` would (the same code: `jax_conformance.worker.loop.main`).

Two levels, chosen per case by the parent (`jax_conformance.client.caserunner.CaseRunner`):

- `full`: the server has imported the implementation itself (the adapter's `fork_preload`
  `full` modules, e.g. `jax`) under the case's exact environment. A child of it is the same
  process as a fresh interpreter that has just run those imports. It serves only cases
  whose environment equals the server's, and only if the import was silent (no warning, no
  byte on stderr): otherwise the import is part of what a case may observe, and the server
  says it is `unusable`.
- `light`: the server has imported only modules that read none of the variables a case may
  set (the adapter's `fork_preload` `free` modules, e.g. NumPy and jaxlib, and the
  harness). A child sets the case's environment and then imports the implementation inside
  the case, as a fresh interpreter would. It serves a case only when every variable in which
  the case's environment differs from the server's is one the adapter names as read late
  (`late_env_prefixes`, e.g. `JAX_`).

Anything else (another variable, a server that failed to start or died) runs in a fresh
interpreter, as before. `--isolation=spawn` (or JAX_CONFORMANCE_ISOLATION=spawn) turns the
server off.

Neither level initialises a backend or starts a thread of its own before forking: JAX
installs its fork warning only when a backend starts, which happens in the child.

Protocol: the parent and the server share a SOCK_SEQPACKET socket pair (one JSON message per
packet). The server first sends {"ready": true, "level": ..., "reason": ...}. The parent sends
{"op": "fork", "env": {...}} with three file descriptors (the child's stdin, stdout and
stderr); the server answers {"pid": N} (or {"error": ...}) and, when a child ends,
{"exited": N, "code": C} (C as `subprocess.Popen.returncode`: negative for a signal). When
the parent's end closes, the server exits.

This module runs in the fork server process (and, until they start the case, in its children);
the parent's end of the socket is `jax_conformance.client.forkclient.ForkServer`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import selectors
import signal
import socket
import sys
import tempfile
import traceback
import warnings
from collections.abc import Mapping, Sequence

from jax_conformance.protocol import PARENT_ENV

MAX_PACKET = 1 << 20
LEVELS = ("light", "full")


def _send(sock: socket.socket, message: Mapping[str, object]) -> None:
    sock.send(json.dumps(message).encode())


def _preload(modules: list[str]) -> str | None:
    """Import each module; the reason it cannot be shared, or None."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            return f"import {name} failed: {type(exc).__name__}: {exc}"
    return None


def _silent_preload(modules: list[str]) -> str | None:
    """Import `modules`; a reason if that raised, warned or wrote to stderr (fd 2)."""
    with tempfile.TemporaryFile() as capture, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            reason = _preload(modules)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        written = capture.read(2000)
    if reason:
        return reason
    if caught:
        return f"importing {', '.join(modules)} warned: {caught[0].category.__name__}: {caught[0].message}"
    if written:
        return f"importing {', '.join(modules)} wrote to stderr: {written.decode('utf-8', 'replace')[:300]!r}"
    return None


def share_imports(free: Sequence[str], full: Sequence[str], level: str) -> str | None:
    """Import what a server of `level` shares: the adapter's `free` modules and, at `full`, its
    `full` ones, silently. The reason the server cannot serve, or None."""
    reason = _preload(list(free))
    if reason is None and level == "full":
        reason = _silent_preload(list(full)) if full else "the adapter names no module to preload"
    return reason


def become_worker(
    adapter: str,
    env: dict[str, str],
    fds: list[int],
    server_pid: int,
    once: bool = True,
) -> None:
    """In the forked child: become a worker on the given pipes (`--once`, or long-lived: the
    breakage tests' shared worker server). Never returns."""
    code = 70
    try:
        os.setsid()  # its own process group, as the Popen workers have (start_new_session)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        # As a fresh interpreter has them: Python ignores SIGPIPE and handles SIGINT itself.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        os.environ.clear()
        os.environ.update(env)
        # The worker watches its parent: here that is the server, which itself ends with the pytest process.
        os.environ[PARENT_ENV] = str(server_pid)
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
        from jax_conformance.worker import loop as worker

        argv = ["--adapter", adapter, *(["--once"] if once else [])]
        # what `python -m jax_conformance.worker.loop` would show the case
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


def _reap(sock: socket.socket, children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        with contextlib.suppress(OSError):
            _send(sock, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def serve(adapter_name: str, level: str, fd: int) -> int:
    from jax_conformance.adapters import load_adapter

    sock = socket.socket(fileno=fd)
    # What every child needs anyway: the harness's own modules.
    import jax_conformance.worker.checks  # noqa: F401
    import jax_conformance.worker.judge  # noqa: F401
    import jax_conformance.worker.loop  # noqa: F401

    ready: dict[str, object] = {"ready": True, "level": level, "reason": None, "pid": os.getpid()}
    try:
        adapter = load_adapter(adapter_name)
        free, full = adapter.fork_preload()
    except Exception as exc:
        ready.update(
            level="unusable",
            reason=f"cannot load adapter {adapter_name!r}: {type(exc).__name__}: {exc}",
        )
        _send(sock, ready)
        return 2
    ready["late_env_prefixes"] = list(adapter.late_env_prefixes)
    reason = share_imports(free, full, level)
    if reason is not None:
        ready.update(level="unusable", reason=reason)
    _send(sock, ready)
    if reason is not None:
        return 0

    # Forking with the preloads' native threads present is what this server measures as safe
    # (see the module docstring); Python 3.12 warns about it in the parent, which is this process.
    warnings.simplefilter("ignore", DeprecationWarning)
    children: set[int] = set()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    with selectors.DefaultSelector() as sel:
        sel.register(sock, selectors.EVENT_READ, "sock")
        sel.register(wake_r, selectors.EVENT_READ, "wake")
        while True:
            for key, _ in sel.select():
                if key.data == "wake":
                    with contextlib.suppress(BlockingIOError, InterruptedError):
                        os.read(wake_r, 4096)
                    _reap(sock, children)
                    continue
                try:
                    data, fds, _flags, _addr = socket.recv_fds(sock, MAX_PACKET, 3)
                except InterruptedError:
                    continue
                except OSError:
                    data, fds = b"", []
                if not data:  # the parent is gone: so are we (children watch us and follow)
                    return 0
                try:
                    request = json.loads(data)
                    if request.get("op") != "fork" or len(fds) != 3:
                        raise ValueError(
                            f"expected a fork request with 3 descriptors, got {request!r} with {len(fds)}"
                        )
                    env = {str(k): str(v) for k, v in request["env"].items()}
                except Exception as exc:
                    for f in fds:
                        os.close(f)
                    _send(sock, {"error": f"{type(exc).__name__}: {exc}"})
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    # before its descriptor is closed (and its number reused)
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    sel.close()
                    sock.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    become_worker(adapter_name, env, fds, os.getppid())
                children.add(pid)
                for f in fds:
                    os.close(f)
                _send(sock, {"pid": pid})
                _reap(sock, children)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jax_conformance.worker.forkserver")
    parser.add_argument("--adapter", required=True)
    parser.add_argument("--level", choices=LEVELS, required=True)
    parser.add_argument(
        "--fd", type=int, required=True, help="this end of the parent's socket pair"
    )
    args = parser.parse_args(argv)
    return serve(args.adapter, args.level, args.fd)


if __name__ == "__main__":
    sys.exit(main())
