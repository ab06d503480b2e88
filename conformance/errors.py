"""Every error the harness raises on purpose, in one hierarchy.

`ConformanceError` is a fault in what the harness was given (an option, a spec file, an
expectations file, an adapter) or in the process it started, never a verdict on the
implementation and never a bug of the harness itself. Two boundaries turn them into what a
user sees: `jax_conformance.cli.main` prints one line naming the command and exits 2 for a
`UsageError`, 1 for any other; the pytest plugin turns a `UsageError` into pytest's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal


class ConformanceError(Exception):
    """Base of every error the harness raises on purpose."""


class UsageError(ConformanceError):
    """An argument or input file a command cannot use: one line, exit status 2, nothing started."""


class ModeError(UsageError, ValueError):
    """A mode name, option or environment variable that names no mode."""


class ExpectationsError(UsageError):
    """A known-divergence (expectations) file that cannot be read, parsed or written."""


class AdapterError(UsageError):
    """An adapter that is not installed, cannot be imported, or is not an Adapter."""


class AdapterStartError(ConformanceError):
    """An adapter that was found but could not start in a mode (its import or mode check failed)."""


class Stopped(KeyboardInterrupt):
    """A command's mode processes were stopped by Ctrl-C or SIGTERM (`cause`); the command ends with
    `status` (130 or 143: `launch.service.stopped_status`), as a shell reports that signal."""

    def __init__(self, cause: str, status: int) -> None:
        super().__init__(cause)
        self.cause, self.status = cause, status


class HarnessError(ConformanceError):
    """Parent side: the harness could not run where it was sent (a release's mode process never
    started), so nothing can be concluded from it: one line, exit status 1."""


class SpecError(ConformanceError):
    """One problem in a spec file, at `file:line`, under a lint rule's ID."""

    def __init__(self, path: Path | str, line: int, rule: str, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.rule = rule
        self.message = message
        super().__init__(self.format())

    def format(self, root: Path | None = None) -> str:
        path = self.path
        if root is not None and self.path.resolve().is_relative_to(root.resolve()):
            path = self.path.resolve().relative_to(root.resolve())
        return f"{path}:{self.line}: {self.rule} {self.message}"


class SpecFileErrors(ConformanceError):
    """Every problem found in one spec file, in line order."""

    def __init__(self, path: Path, errors: list[SpecError]) -> None:
        self.path = path
        self.errors = sorted(errors, key=lambda e: (e.line, e.rule))
        super().__init__("\n".join(e.format() for e in self.errors))

    @property
    def first(self) -> tuple[Path, int]:
        """The file and line of the first problem (where a record of the file's errors points)."""
        return (self.errors[0].path, self.errors[0].line) if self.errors else (self.path, 1)


class SpecCodeError(ConformanceError):
    """Worker side: a spec's own code or names are broken (not the implementation); outcome `error`."""


class WorkerFailure(ConformanceError):
    """Parent side: the worker died, hung or broke the protocol; `outcome` is `crashed`, `timeout` or `error`."""

    def __init__(
        self,
        outcome: Literal["crashed", "timeout", "error"],
        message: str,
        details: Mapping[str, object] | None = None,
    ) -> None:
        self.outcome = outcome
        self.details = (
            details or {}
        )  # for the verdict's `actual`: exit status or signal, stderr's tail, the limit
        super().__init__(message)


class ForkServerError(ConformanceError):
    """Parent side: the fork server is gone or did not answer; the case runs in a fresh interpreter instead."""
