"""The pytest plugin's collectors and items: spec files become collectors, cases become items.

Runs in the pytest process (the parent side); an item sends its case to the worker process
through the session's `CaseRunner` and gets a `Verdict` back.
"""

from __future__ import annotations

import linecache
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jax_conformance.errors import SpecError, SpecFileErrors
from jax_conformance.plugin.session import SUITE, Suite, rel_path, spec_dirs
from jax_conformance.records import Verdict
from jax_conformance.spec.cache import gc_paused, is_large_load
from jax_conformance.spec.loader import is_spec_file, spec_files
from jax_conformance.spec.model import Case, Spec
from jax_conformance.spec.rules import duplicate_ids, exception_names, known_tags


class NotApplicable(Exception):
    """No expect block speaks to this mode/backend/adapter/version."""


class CaseFailure(Exception):
    """The implementation did not do what the block demands (or crashed, hung, errored)."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        super().__init__(verdict.get("message", ""))


class SuiteDirectory(pytest.Directory):
    """`pytest conformance/`: every spec file of the spec directories, checked together."""

    def collect(self) -> Iterator[pytest.Collector]:
        suite = self.config.stash[SUITE]
        paths = [p for d in spec_dirs(self.config) for p in spec_files([d]) if is_spec_file(p)]
        with gc_paused(freeze=is_large_load(paths)):
            specs = [s for s in (suite.load(p) for p in paths) if isinstance(s, Spec)]
        for error in duplicate_ids(specs):
            loaded = suite.loaded[error.path]
            existing = loaded.errors if isinstance(loaded, SpecFileErrors) else []
            suite.loaded[error.path] = SpecFileErrors(error.path, existing + [error])
        for p in paths:
            yield SpecFile.from_parent(self, path=p)


class SpecFile(pytest.File):
    """One YAML spec file: an item per case and backend, or one collection error."""

    def collect(self) -> Iterator[pytest.Item]:
        suite = self.config.stash[SUITE]
        loaded = suite.load(self.path)
        if isinstance(loaded, SpecFileErrors):
            raise SpecCollectError(loaded)
        self._check_names(loaded, suite)
        tags = known_tags()
        markers = {tag: getattr(pytest.mark, tag) for case in loaded.cases for tag in case.tags if tag in tags}
        backends, slug, version = suite.backends(), suite.mode.slug, suite.behaviour_version
        items = []
        with gc_paused():  # thousands of items, each a handful of objects: no collection walks them all meanwhile
            for case in loaded.cases:
                for backend in backends:
                    item = SpecItem.from_parent(self, name=f"{case.id}[{slug}-{backend}]", case=case, backend=backend)
                    for tag in case.tags:
                        if tag in markers:
                            item.add_marker(markers[tag])
                    suite.expectations.mark(item, case.id, suite.mode, backend, suite.adapter or "", version)
                    items.append(item)
        yield from items

    def _check_names(self, spec: Spec, suite: Suite) -> None:
        lines: dict[str, int] = {}
        for case in spec.cases:
            for line, name in exception_names(case, suite.adapter or "", suite.behaviour_version):
                lines.setdefault(name, line)
        bad = suite.unresolved(set(lines))
        if bad:
            raise SpecCollectError(SpecFileErrors(spec.path, [
                SpecError(spec.path, lines[n], "EXC-UNRESOLVED", f"{n!r} does not resolve in adapter {suite.adapter!r}: {why}")
                for n, why in sorted(bad.items())
            ]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SpecCollectError):
            return excinfo.value.text(self.config.rootpath)
        return str(super().repr_failure(excinfo))


class SpecCollectError(Exception):
    """A spec file that does not load (or names exceptions the adapter lacks): one collection error."""

    def __init__(self, errors: SpecFileErrors) -> None:
        self.errors = errors
        super().__init__(str(errors))

    def text(self, root: Path) -> str:
        return "\n".join(e.format(root) for e in self.errors.errors)


class SpecItem(pytest.Item):
    """One case on one backend in this session's mode."""

    def __init__(self, *, case: Case, backend: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.backend = backend
        self.verdict: Verdict | None = None
        self.block_line: int | None = None  # the line of the expect block chosen for this mode and backend

    def runtest(self) -> None:
        suite = self.config.stash[SUITE]
        version = suite.behaviour_version
        block = self.case.select(suite.mode, self.backend, suite.adapter or "", version, suite.flags)
        if block is None:
            raise NotApplicable(f"no expect block for {suite.mode.label}, backend={self.backend}, adapter={suite.adapter} {version}")
        self.block_line = block.line
        if block.not_applicable is not None:
            raise NotApplicable(block.not_applicable)
        documented = self.case.documented.select(suite.mode, self.backend, suite.adapter or "", version, suite.flags) \
            if self.case.documented is not None else None
        verdict = suite.runner.run(
            self.case.payload(block, suite.mode, self.backend, documented),
            timeout=self.case.timeout, isolate=self.case.isolate == "process", env=self.case.env,
        )
        self.verdict = verdict
        if verdict["outcome"] != "passed":
            raise CaseFailure(verdict)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, CaseFailure):
            return str(super().repr_failure(excinfo))
        return failure_text(self, excinfo.value.verdict)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"{self.case.id} [{self.config.stash[SUITE].mode.label}, {self.backend}]"


def failure_text(item: SpecItem, verdict: Verdict) -> str:
    """What happened, what should have, and where the spec says so (with its lines)."""
    suite = item.config.stash[SUITE]
    case = item.case
    rel = rel_path(case.spec_path, item.config.rootpath)
    head = verdict["outcome"].upper()
    lines = [
        f"{rel}:{case.line}: {case.id} {head} [{suite.mode.label}, backend={item.backend}, adapter={suite.adapter} {suite.info['implementation_version']}]",
        f"claim: {case.claim}",
    ]
    if item.block_line:
        lines.append(f"expect block at {rel}:{item.block_line}: {_one_line(verdict.get('expected'))}")
    lines.append("")
    lines += verdict.get("message", "").splitlines()
    lines += ["", "spec:"] + _spec_lines(case, item.block_line)
    return "\n".join(lines)


def _one_line(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 400 else text[:400] + "..."


def _spec_lines(case: Case, mark: int | None, limit: int = 40) -> list[str]:
    """The case's lines from the spec file, numbered, with the chosen block marked."""
    first = case.line
    last = max([first, *case.field_lines.values(), *(b.line for b in case.expect)]) + 6
    out = []
    path = str(case.spec_path)
    total = len(linecache.getlines(path))
    for n in range(first, min(last, first + limit, total) + 1):
        text = linecache.getline(path, n).rstrip("\n")
        if n > first and text.lstrip().startswith("- id:"):
            break
        out.append(f"{'>' if n == mark else ' '}{n:5d} | {text}")
    while out and out[-1].endswith("| "):
        out.pop()
    return out
