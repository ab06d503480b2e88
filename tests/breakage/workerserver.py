"""Worker servers shared by the breakage mode processes of one mode: JAX is imported once, not per adapter.

Every breakage run is a mode process whose worker imports JAX (about 3 of its 5 CPU-seconds)
and then one breakage adapter, which patches it; a run with `isolate: process` cases also started
its own fork servers. The harness starts, per mode, one server of each level of the fork server
(jax_conformance.worker.forkserver), in the environment every worker of that mode gets
(`CaseRunner.worker_environ`), each listening on a socket in one directory; a mode process given
that directory (`SHARED_SERVER_ENV`) asks them for its workers through its client end,
tests/breakage/workerclient.py:

- `full` (`full.sock`): has imported what the fork server's full level imports (the harness's
  worker modules, the adapter's `fork_preload`), silently. It forks the mode process's long-lived
  worker and its `--once` workers for isolated cases without an `env`; the child loads the adapter
  it is asked for and runs `jax_conformance.worker.loop.main` on the mode process's pipes, as
  `python -m jax_conformance.worker.loop --adapter A [--once]` would. It serves only an environment
  equal to its own: the child is the process a fresh interpreter that had just run those imports
  would be (the fork server's full rule).
- `light` (`light.sock`): has imported only the `free` modules (on its first request), and forks
  `--once` workers whose environment differs from its own only in variables read at import
  (`late_env_prefixes`): the fork server's light rule.

What it cannot serve it refuses, and the mode process starts that worker as it always does.
Started as `python -m tests.breakage.workerserver --socket PATH --level L --adapter A` (A: the
adapter whose `fork_preload` and `late_env_prefixes` apply); it ends when its stdin closes, saying
how many workers it forked and refused.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import selectors
import signal
import socket
import sys
from typing import Any

from jax_conformance.client.forkclient import VOLATILE_ENV
from jax_conformance.worker.forkserver import MAX_PACKET, become_worker, share_imports


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.send(json.dumps(message).encode())


def _refusal(
    request: dict[str, Any],
    env: dict[str, str],
    own: dict[str, str],
    level: str,
    late: tuple[str, ...],
) -> str:
    """Why the server cannot serve this fork request ("" when it can): the full level serves only
    its own environment; the light level only `--once` workers whose environment differs from its
    own in variables the implementation reads when it is imported (`late_env_prefixes`)."""
    differ = sorted(
        k for k in set(env) | set(own) if env.get(k) != own.get(k) and k not in VOLATILE_ENV
    )
    once = bool(request.get("once", True))
    if level == "full" and differ:
        return f"the environment differs from the server's in {differ}"
    if level == "light" and (not once or not all(k.startswith(late) for k in differ)):
        return f"a light server serves --once workers whose environment differs only in {late}: {differ}"
    return ""


def serve(path: str, level: str, preload_adapter: str) -> int:
    import jax_conformance.worker.checks  # noqa: F401
    import jax_conformance.worker.judge  # noqa: F401
    import jax_conformance.worker.loop  # noqa: F401
    from jax_conformance.adapters import load_adapter

    own = dict(os.environ)
    # Listening before the import: a mode process that connects meanwhile waits for the ready message.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    adapter = load_adapter(preload_adapter)
    late = tuple(adapter.late_env_prefixes)
    # the light level imports when first asked (few runs need it)
    ready: dict[str, Any] | None = None
    if level == "full":
        ready = _ready(adapter, level)
    owner: dict[int, socket.socket] = {}  # child pid -> the connection that asked for it
    # adapter -> why this server cannot fork its workers ("" if it can)
    likeness: dict[str, str] = {}
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
                    print(f"{level}: served {served} workers, refused {refused}", flush=True)
                    return 0
            elif key.data == "wake":
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    os.read(wake_r, 4096)
                _reap(owner)
            elif key.data == "accept":
                conn, _ = listener.accept()
                if ready is None:
                    ready = _ready(adapter, level)
                _send(conn, {**ready, "late_env_prefixes": list(late)})
                if ready["reason"] is None:
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
                why = _refusal(request, env, own, level, late) or _unlike(
                    str(request.get("adapter")), adapter, level, likeness
                )
                if request.get("op") != "fork" or len(fds) != 3 or why:
                    for f in fds:
                        os.close(f)
                    refused += 1
                    print(f"refused {request.get('adapter')}: {why}", flush=True)
                    _send(conn, {"error": why or "expected a fork request with 3 descriptors"})
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
                    once = bool(request.get("once", True))
                    become_worker(str(request["adapter"]), env, fds, os.getppid(), once)
                served += 1
                owner[pid] = conn
                for f in fds:
                    os.close(f)
                _send(conn, {"pid": pid})
                _reap(owner)


def _unlike(name: str, own: Any, level: str, likeness: dict[str, str]) -> str:
    """Why a child of this server is not what the fork server of the asked-for adapter would fork
    ("" when it is): that adapter must preload what this server's adapter preloads at this level
    and read the same variables late (a breakage of what JAX reads at start-up has no `full`
    level: JAX must not be imported before it). Loading it here is what its own fork server does."""
    if name not in likeness:
        from jax_conformance.adapters import load_adapter

        try:
            asked = load_adapter(name)
            a_free, a_full = asked.fork_preload()
            free, full = own.fork_preload()
            same = tuple(a_free) == tuple(free) and (
                level == "light" or tuple(a_full) == tuple(full)
            )
            if tuple(asked.late_env_prefixes) != tuple(own.late_env_prefixes):
                same = False
            likeness[name] = (
                "" if same else f"{name} preloads or reads late other modules or variables"
            )
        except Exception as exc:
            likeness[name] = f"cannot load adapter {name!r}: {type(exc).__name__}: {exc}"
    return likeness[name]


def _ready(adapter: Any, level: str) -> dict[str, Any]:
    """Import what the level shares (the fork server's rule); the ready message."""
    reason = share_imports(*adapter.fork_preload(), level)
    return {"ready": True, "level": "unusable" if reason else level, "reason": reason}


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
    parser.add_argument("--level", choices=("full", "light"), required=True)
    parser.add_argument("--adapter", required=True)
    args = parser.parse_args(argv)
    return serve(args.socket, args.level, args.adapter)


if __name__ == "__main__":
    sys.exit(main())
