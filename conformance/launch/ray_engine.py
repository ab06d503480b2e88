"""Mode processes as tasks on a Ray cluster: `--engine ray` (the optional `ray` extra).

Each mode process runs inside a Ray actor of one CPU, on whichever node Ray places it. The actor
starts the same command there (with the node's own interpreter and package in place of the
driver's) and hands back what the process has written, results and log, each time the driver
polls; the driver appends it to the mode's files, so progress, the merge and the report are the
same as for a local run. A worker or node that dies takes its actor with it: the mode is run
again from the start on a fresh actor, up to `RETRIES` more times, each attempt noted in the
mode's log; past that the mode is reported lost, never silently dropped. Without an address,
`ray.init` starts a local cluster on this machine (so the tests exercise the real engine).

Paths the command names besides its results (`--specs`, `--expectations`, a release
environment's interpreter) must exist on every node: true of a local cluster and of nodes that
share a file system or an image.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from jax_conformance import PACKAGE_DIR
from jax_conformance.errors import UsageError
from jax_conformance.launch.scheduler import Handle, ModeProcess
from jax_conformance.records import RecordTail

T = TypeVar("T")
RETRIES = 2  # runs of a mode after the first, when its worker dies
# Stand-ins for the driver's paths in a command, replaced on the node by its own.
PYTHON, PACKAGE, RESULTS = (
    "{jax-conformance:python}",
    "{jax-conformance:package}",
    "{jax-conformance:results}",
)


def import_ray() -> Any:
    """The `ray` module, or a usage error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError("--engine ray needs Ray: pip install 'jax-conformance[ray]'") from None
    return ray


def _die_with_parent() -> None:
    """In the child, before exec: killed when the actor that started it dies (Linux), so a dead
    worker leaves no mode process running on its node."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class ModeActor:
    """On a node: one mode process and the files it writes (a temporary folder of the node)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="jax-conformance-ray-"))
        self.results = self.folder / "results.jsonl"
        self.log = self.folder / "log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, argv: list[str], env_set: dict[str, str], env_unset: list[str]) -> int:
        """Start the command (the driver's, with this node's paths); returns this actor's pid."""
        node = {PYTHON: sys.executable, PACKAGE: str(PACKAGE_DIR), RESULTS: str(self.results)}
        env = {k: v for k, v in os.environ.items() if k not in env_unset} | env_set
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [node.get(arg, arg) for arg in argv],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        return os.getpid()

    def read(self, results_at: int, log_at: int) -> tuple[int | None, bytes, bytes]:
        """The exit status (None while it runs) and what the process wrote past the offsets; the
        status is read first, so once it is there every byte the process wrote is in the reply."""
        assert self.proc is not None
        rc = self.proc.poll()
        return rc, _read_from(self.results, results_at), _read_from(self.log, log_at)

    def signal(self, number: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, number)

    def close(self) -> None:
        self.signal(signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)


def _read_from(path: Path, offset: int) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read()
    except FileNotFoundError:
        return b""


def node_argv(process: ModeProcess) -> list[str]:
    """The process's command with the driver's interpreter, package and results path as stand-ins."""
    own = {sys.executable: PYTHON, str(PACKAGE_DIR): PACKAGE, str(process.results): RESULTS}
    return [own.get(arg, arg) for arg in process.argv]


def env_change(env: dict[str, str] | None) -> tuple[dict[str, str], list[str]]:
    """What the process's environment sets and removes relative to this one (the node keeps its own
    for the rest: its PATH, its home)."""
    if env is None:
        return {}, []
    return (
        {k: v for k, v in env.items() if os.environ.get(k) != v},
        [k for k in os.environ if k not in env],
    )


class RayHandle:
    """The driver's end of one mode process on Ray: polls its actor without blocking, copies what
    it wrote into the process's files, and runs the mode again when the actor's worker dies."""

    def __init__(self, engine: RayEngine, process: ModeProcess) -> None:
        self.engine = engine
        self.process = process
        self.argv = node_argv(process)
        self.env = env_change(process.env)
        self.attempt = 0
        self.rc: int | None = None
        self.why_lost = ""
        self.pid: int | None = None  # the actor's process on its node, once it has started
        process.log.parent.mkdir(parents=True, exist_ok=True)
        process.log.write_bytes(b"")
        self._begin()

    def _begin(self) -> None:
        self.attempt += 1
        self.actor = self.engine.actor_class.remote()
        self.started = self.actor.start.remote(self.argv, *self.env)
        self.offsets = [0, 0]
        self.pending: Any = None

    def poll(self) -> int | None:
        if self.rc is not None:
            return self.rc
        ray = self.engine.ray
        if self.pending is None:
            self.pending = self.actor.read.remote(*self.offsets)
        ready, _ = ray.wait([self.pending], timeout=0)
        if not ready:
            return None
        reply, self.pending = self.pending, None
        try:
            self.pid = self.pid or ray.get(self.started)
            rc, results, log = ray.get(reply)
        except ray.exceptions.RayError as exc:
            return self._died(exc)
        self._append(results, log)
        if rc is not None:
            self.rc = rc
            self.actor.close.remote()
            ray.kill(self.actor, no_restart=True)
        return self.rc

    def _append(self, results: bytes, log: bytes) -> None:
        for path, data, i in ((self.process.results, results, 0), (self.process.log, log, 1)):
            if data:
                with open(path, "ab") as f:
                    f.write(data)
                self.offsets[i] += len(data)

    def _died(self, exc: BaseException) -> int | None:
        """The actor's worker is gone: run the mode again from its start, or report it lost."""
        why = (
            f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        )
        with open(self.process.log, "ab") as f:
            f.write(
                f"\n[ray] attempt {self.attempt}: the worker running this mode died ({why})\n".encode()
            )
        if self.attempt > RETRIES:
            self.why_lost = f"lost: its Ray worker died in each of {self.attempt} attempts ({why})"
            self.rc = -signal.SIGKILL
            return self.rc
        self.process.results.unlink(missing_ok=True)
        self.process.tail = RecordTail(
            self.process.results
        )  # the dead attempt's records do not count
        self.pid = None
        self._begin()
        return None

    def signal(self, number: int) -> None:
        if self.rc is None:
            self.actor.signal.remote(number)

    def wait(self, timeout: float | None) -> int | None:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                return None
            time.sleep(0.1)
        return self.rc

    def lost(self) -> str:
        return self.why_lost


def _with_node(fn: Callable[..., T], *args: Any) -> tuple[T, str]:
    """On a node: fn(*args) and the id of the node it ran on."""
    import ray

    return fn(*args), ray.get_runtime_context().get_node_id()


class RayEngine:
    """Mode processes as Ray actors: on the cluster at `address`, or on a local cluster of `cpus`
    CPUs that this engine starts (and stops on `close`). `on_node` gives the same engine with its
    actors placed on one node (where a release's environment was built)."""

    def __init__(self, address: str | None = None, cpus: int | None = None) -> None:
        self.ray = import_ray()
        self.owns = not self.ray.is_initialized()
        if self.owns:
            self.ray.init(
                address=address,
                num_cpus=cpus if address is None else None,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        self.actor_class: Any = self.ray.remote(num_cpus=1, max_restarts=0)(ModeActor)

    def launch(self, process: ModeProcess) -> Handle:
        return RayHandle(self, process)

    def run_on_a_node(self, fn: Callable[..., T], *args: Any) -> tuple[T, str]:
        """fn(*args) as a Ray task of one CPU on a node Ray picks: its result and that node's id
        (fn and its arguments travel by pickle: no locks or open files in them)."""
        task = self.ray.remote(num_cpus=1, max_retries=RETRIES)(_with_node)
        result: tuple[T, str] = self.ray.get(task.remote(fn, *args))
        return result

    def on_node(self, node: str) -> RayEngine:
        """This engine with every actor it starts placed on `node` (and nowhere else)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        pinned = object.__new__(RayEngine)
        pinned.ray, pinned.owns = self.ray, False
        pinned.actor_class = self.actor_class.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        )
        return pinned

    def close(self) -> None:
        if self.owns:
            self.ray.shutdown()
