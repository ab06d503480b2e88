"""The worker protocol: what the mode process (or `lint`, `diff`) and a worker say to each other.

The parent (`jax_conformance.client.caserunner`) writes one request per line on the worker's
stdin; the worker (`jax_conformance.worker.loop`) answers each with one reply per line on its
protocol channel (the original stdout; a case's prints and the implementation's logs go to
stderr). Both are JSON objects; the types below say which fields each has.

  {"op": "hello"}                                  -> {"ok": true, "info": {...}, "pid": N}
  {"op": "resolve", "names": [...]}                -> {"ok": true, "unresolved": {name: reason}}
  {"op": "run", "payload": {...}}                  -> {"ok": true, "verdict": {...}, "restart": bool}
  {"op": "run_batch", "payloads": [...]}           -> {"ok": true, "verdicts": [...], "restart": bool}
  {"op": "observe", "program": "...", "backend": "cpu"}
                                                   -> {"ok": true, "observation": {...}, "restart": bool}
  any request the worker could not serve           -> {"ok": false, "error": "...", "traceback": "..."}

`run` judges one spec case (a `CasePayload`) into a `Verdict`; `observe` runs one `diff` program
and hands back what it did, normalized (`jax_conformance.differential.observe`). `restart` says
the case or program left process-wide state changed (or ended the interpreter): the worker exits
after answering and the parent starts another.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from jax_conformance.records import AdapterInfo, ModeJSON, Verdict
from jax_conformance.spec.blocks import CodeText, ExpectBlock

# ----------------------------------------------------------------- the worker's environment
# Variables the parent (client/) sets in a worker's environment and the worker (worker/) reads.

# The worker's address-space limit in megabytes (unset or 0: none).
MEMORY_ENV = "JAX_CONFORMANCE_MEMORY_LIMIT_MB"
# The pid the worker watches: it exits when that process is gone (an orphaned hung case would run forever).
PARENT_ENV = "JAX_CONFORMANCE_PARENT_PID"
# The release the as-of adapter (adapters/jax/as_of.py) judges by, and the name --adapter gives it:
# the radar sets the one and passes the other to every release's mode processes.
AS_OF_ENV = "JAX_CONFORMANCE_AS_OF"
AS_OF_ADAPTER = "jax_conformance.adapters.jax.as_of:JaxAsOf"
# Every name it has had, as a radar store's records hold it (before #35 it lived in compat/).
AS_OF_NAMES = frozenset({AS_OF_ADAPTER, "jax_conformance.compat.as_of:JaxAsOf"})


class CasePayload(TypedDict):
    """What a worker needs to run one case (`Case.payload`): code, inputs and the chosen block(s)."""

    id: str
    file: str  # the spec file: compile() names it, so tracebacks point into the spec
    line: int
    setup: list[CodeText]
    run: CodeText
    given: dict[str, str]  # name -> Hypothesis strategy expression; {} for a plain case
    max_examples: int | None
    expect: ExpectBlock
    expect_line: int
    mode: ModeJSON
    backend: str
    # with documented_line: the `documented` block that applies
    documented: NotRequired[ExpectBlock]
    documented_line: NotRequired[int]
    # eager / jit / jit-warm: run on each, the observations must agree
    paths: NotRequired[list[str]]
    jit_args: NotRequired[list[str]]  # the names passed to the jitted function (others: globals)


# ----------------------------------------------------------------- what a `diff` program did
# (`observe` replies; made by jax_conformance.differential.observe in the worker)

Kind = Literal["array", "numpy", "python", "dtype", "none", "other"]


class Node(TypedDict, total=False):
    """A tree node: one of the containers `tuple`, `list` (items) or `dict` (key -> node), else a
    leaf (`kind` and what that kind has). One TypedDict for both: the JSON tells them apart by key."""

    tuple: list[Node]
    list: list[Node]
    dict: dict[str, Node]
    kind: Kind
    type: str
    dtype: str
    shape: list[int]
    weak: bool
    value: object  # nested lists of numbers (NaN and infinities as strings), None past MAX_VALUES
    value_error: str


class Raised(TypedDict):
    """The exception a program raised."""

    type: str
    module: str
    message: str
    where: str


class ObservedWarning(TypedDict):
    category: str
    message: str


class ProgramObservation(TypedDict, total=False):
    """What one side did with one program (the module docstring lists the three shapes)."""

    result: Node
    raised: Raised
    warnings: list[ObservedWarning]
    crashed: str  # the outcome (crashed, timeout, error) when the worker gave no observation
    message: str  # with `crashed`: what the parent knows about it


# ----------------------------------------------------------------- requests


class HelloRequest(TypedDict):
    op: Literal["hello"]


class ResolveRequest(TypedDict):
    op: Literal["resolve"]
    names: list[str]


class RunRequest(TypedDict):
    op: Literal["run"]
    payload: CasePayload


class RunBatchRequest(TypedDict):
    """Run a table's cells (each a case) one after another; one verdict per payload, in order."""

    op: Literal["run_batch"]
    payloads: list[CasePayload]


class ObserveRequest(TypedDict):
    """Run a `diff` program (Python statements that bind `result`) on `backend` and observe it."""

    op: Literal["observe"]
    program: str
    backend: str


Request = HelloRequest | ResolveRequest | RunRequest | RunBatchRequest | ObserveRequest

# ----------------------------------------------------------------- replies


class ErrorReply(TypedDict):
    ok: Literal[False]
    error: str
    traceback: NotRequired[str]


class HelloReply(TypedDict):
    ok: Literal[True]
    info: AdapterInfo  # the adapter's `info()` as it gave it; the parent reads it with `records.adapter_info`
    pid: int


class ResolveReply(TypedDict):
    ok: Literal[True]
    unresolved: dict[str, str]  # name -> why it is not a class


class RunReply(TypedDict):
    ok: Literal[True]
    verdict: Verdict
    restart: NotRequired[bool]  # absent in `--once`, whose worker exits after its one case anyway


class RunBatchReply(TypedDict):
    ok: Literal[True]
    # one per payload; cells after one that left state changed are `error`, not run
    verdicts: list[Verdict]
    restart: bool


class ObserveReply(TypedDict):
    ok: Literal[True]
    observation: ProgramObservation
    restart: bool


Reply = ErrorReply | HelloReply | ResolveReply | RunReply | RunBatchReply | ObserveReply
