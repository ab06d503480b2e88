"""The plugin's collection: spec files become collectors, cases become items on each backend.

Runs in the pytest process (the mode process, or each xdist worker); an item sends its case to
the worker process through the session's `CaseRunner` and gets a `Verdict` back. `Collection`
is the plugin object, registered only when an adapter is given.
"""

from __future__ import annotations

import linecache
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from jax_conformance import PACKAGE_DIR
from jax_conformance.errors import SpecError, SpecFileErrors
from jax_conformance.plugin.session import SUITE, Suite, rel_path
from jax_conformance.protocol import CasePayload
from jax_conformance.records import Verdict
from jax_conformance.spec.cache import gc_paused, is_large_load
from jax_conformance.spec.expectations import Entry
from jax_conformance.spec.loader import is_spec_file, spec_files
from jax_conformance.spec.model import Case, Spec
from jax_conformance.spec.rules import duplicate_ids, exception_names, known_tags, tags_for
from jax_conformance.text import LINE_CHARS, cut
from jax_conformance.usage import Selection


class Collection:
    """The collection hooks: `pytest conformance/` collects every spec file of the spec
    directories, a spec file under one of them is collected on its own."""

    def __init__(self, suite: Suite, keyword: Selection | None = None) -> None:
        self.suite = suite
        self.keyword = keyword  # -k, taken over from pytest: over each case's id, claim and tags

    def pytest_collect_directory(
        self, path: Path, parent: pytest.Collector
    ) -> pytest.Collector | None:
        if path.resolve() == PACKAGE_DIR:
            return SuiteDirectory.from_parent(parent, path=path)
        return None

    def pytest_collect_file(
        self, file_path: Path, parent: pytest.Collector
    ) -> pytest.Collector | None:
        if isinstance(parent, SuiteDirectory):
            return None  # it collects its spec files itself
        resolved = file_path.resolve()
        if is_spec_file(resolved) and any(
            d == resolved.parent or d in resolved.parents for d in self.suite.options.spec_dirs
        ):
            return SpecFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, items: list[pytest.Item], config: pytest.Config
    ) -> None:
        """-k over the case's own words (`SpecItem.words`), so every mode and backend selects the
        same cases; any other item by the names pytest's -k would see."""
        select = self.keyword
        if select is None:
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (
                keep
                if select(item.words() if isinstance(item, SpecItem) else _item_names(item))
                else drop
            ).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The fork servers import while the first (unisolated) cases run on the other core: the
        full one for isolated cases in the mode's environment, the light one for those with their
        own (a server nobody needs is never started; one needed later starts then). Not in an
        xdist controller, which runs no case."""
        if session.config.pluginmanager.hasplugin("dsession") or session.config.option.collectonly:
            return
        isolated = [
            i.case for i in session.items if isinstance(i, SpecItem) and i.case.isolate == "process"
        ]
        levels = tuple(
            level
            for level, wanted in (
                ("full", any(not c.env for c in isolated)),
                ("light", any(c.env for c in isolated)),
            )
            if wanted
        )
        self.suite.runner.start_fork_servers(levels)


def _item_names(item: pytest.Item) -> list[str]:
    """The names pytest's -k matches for an item that is not a case: its node names, extra keywords, markers."""
    names = [n.name for n in item.listchain() if not isinstance(n, pytest.Session)]
    return [*names, *item.listextrakeywords(), *(m.name for m in item.iter_markers())]


# Per spec file: the verdicts of a table's cells run in a batch, until each cell's item reads its own.
TABLE_VERDICTS = pytest.StashKey[dict[str, Verdict]]()


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
        paths = [p for d in suite.options.spec_dirs for p in spec_files([d]) if is_spec_file(p)]
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

    # Why the file did not collect, kept for its collection error's record (file and line).
    collect_error: SpecCollectError | None = None

    def collect(self) -> Iterator[pytest.Item]:
        suite = self.config.stash[SUITE]
        loaded = suite.load(self.path)
        if isinstance(loaded, SpecFileErrors):
            self._fail(loaded)
        self._check_names(loaded, suite)
        tags = tags_for(self.path)
        for tag in set(tags) - set(known_tags()):  # a library's own tags.yaml: its markers too
            if not any(m.split(":")[0] == tag for m in self.config.getini("markers")):
                self.config.addinivalue_line("markers", f"{tag}: {tags[tag]}")
        markers = {
            tag: getattr(pytest.mark, tag)
            for case in loaded.cases
            for tag in case.tags
            if tag in tags
        }
        backends, slug, version = suite.backends(), suite.mode.slug, suite.behaviour_version
        items = []
        # thousands of items, each a handful of objects: no collection walks them all meanwhile
        with gc_paused():
            for case in loaded.cases:
                for backend in backends:
                    item = SpecItem.from_parent(
                        self, name=f"{case.id}[{slug}-{backend}]", case=case, backend=backend
                    )
                    for tag in case.tags:
                        if tag in markers:
                            item.add_marker(markers[tag])
                    item.expect_divergence(
                        suite.expectations.find(
                            case.id, suite.mode, backend, suite.adapter, version
                        )
                    )
                    items.append(item)
        yield from items

    def _check_names(self, spec: Spec, suite: Suite) -> None:
        lines: dict[str, int] = {}
        for case in spec.cases:
            for line, name in exception_names(case, suite.adapter, suite.behaviour_version):
                lines.setdefault(name, line)
        bad = suite.unresolved(set(lines))
        if bad:
            self._fail(
                SpecFileErrors(
                    spec.path,
                    [
                        SpecError(
                            spec.path,
                            lines[n],
                            "EXC-UNRESOLVED",
                            f"{n!r} does not resolve in adapter {suite.adapter!r}: {why}",
                        )
                        for n, why in sorted(bad.items())
                    ],
                )
            )

    def _fail(self, errors: SpecFileErrors) -> NoReturn:
        self.collect_error = SpecCollectError(errors)
        raise self.collect_error

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: str | None = None
    ) -> str:
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
        # the line of the expect block chosen for this mode and backend
        self.block_line: int | None = None
        # the expectations entry that lists this case here
        self.known_divergence: Entry | None = None

    def words(self) -> list[str]:
        """What -k matches: the case's id, its claim and its tags (never the mode, backend or file);
        and `ID[`, so that `-k 'ID['` selects that case and none whose id only starts with ID."""
        return [f"{self.case.id}[", self.case.claim, *self.case.tags]

    def expect_divergence(self, entry: Entry | None) -> None:
        """A case listed as a known divergence is expected to fail: strict, so a listed case that
        conforms fails the run (the plugin records it as xpassed)."""
        if entry is not None:
            self.add_marker(pytest.mark.xfail(reason=entry.reason, strict=True, raises=Exception))
            self.known_divergence = entry

    def runtest(self) -> None:
        suite = self.config.stash[SUITE]
        block = suite.select(self.case, self.backend)
        if block is None:
            raise NotApplicable(
                f"no expect block for {suite.mode.label}, backend={self.backend}, adapter={suite.adapter} "
                f"{suite.behaviour_version}"
            )
        self.block_line = block.line
        if block.not_applicable is not None:
            raise NotApplicable(block.not_applicable)
        documented = (
            suite.select(self.case.documented, self.backend)
            if self.case.documented is not None
            else None
        )
        if self.case.table is not None:
            verdict = self._table_verdict(suite)
        else:
            verdict = suite.runner.run(
                self.case.payload(block, suite.mode, self.backend, documented),
                timeout=self.case.timeout,
                isolate=self.case.isolate == "process",
                env=self.case.env,
            )
        self.verdict = verdict
        if verdict["outcome"] != "passed":
            raise CaseFailure(verdict)

    def _cell_payload(self, suite: Suite) -> CasePayload | None:
        """This cell's payload in the session's mode, None where no block applies or it is not applicable."""
        block = suite.select(self.case, self.backend)
        if block is None or block.not_applicable is not None:
            return None
        documented = (
            suite.select(self.case.documented, self.backend)
            if self.case.documented is not None
            else None
        )
        return self.case.payload(block, suite.mode, self.backend, documented)

    def _table_verdict(self, suite: Suite) -> Verdict:
        """A table's cells run in one batch: the first cell to run sends every selected, applicable
        cell of its table (same file and backend) in one request; the others read their verdict."""
        assert self.parent is not None
        verdicts: dict[str, Verdict] = self.parent.stash.setdefault(TABLE_VERDICTS, {})
        if self.nodeid not in verdicts:
            batch: list[tuple[SpecItem, CasePayload]] = []
            for item in self.session.items:
                if (
                    isinstance(item, SpecItem)
                    and item.parent is self.parent
                    and item.case.table == self.case.table
                    and item.backend == self.backend
                    and item.nodeid not in verdicts
                ):
                    payload = item._cell_payload(suite)
                    if payload is not None:
                        batch.append((item, payload))
            timeout = suite.runner.default_timeout + 5.0 * len(batch)
            for (item, _), verdict in zip(
                batch, suite.runner.run_batch([p for _, p in batch], timeout), strict=True
            ):
                verdicts[item.nodeid] = verdict
        return verdicts.pop(self.nodeid)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: str | None = None
    ) -> str:
        if isinstance(excinfo.value, NotApplicable):  # the reason is the whole story: no traceback
            # (pytest's repr parses the source of every frame: ~0.3 s an item)
            return str(excinfo.value)
        if not isinstance(excinfo.value, CaseFailure):
            return str(super().repr_failure(excinfo))
        return failure_text(self, excinfo.value.verdict)

    def reportinfo(self) -> tuple[Path, int, str]:
        return (
            self.path,
            self.case.line - 1,
            f"{self.case.id} [{self.config.stash[SUITE].mode.label}, {self.backend}]",
        )


def failure_text(item: SpecItem, verdict: Verdict) -> str:
    """What happened, what should have, and where the spec says so (with its lines)."""
    suite = item.config.stash[SUITE]
    case = item.case
    rel = rel_path(case.spec_path, item.config.rootpath)
    head = verdict["outcome"].upper()
    lines = [
        f"{rel}:{case.line}: {case.id} {head} [{suite.mode.label}, backend={item.backend}, "
        f"adapter={suite.adapter} {suite.info['implementation_version']}]",
        f"claim: {case.claim}",
    ]
    if item.block_line:
        lines.append(
            f"expect block at {rel}:{item.block_line}: {cut(repr(verdict.get('expected')), LINE_CHARS, 'expected')}"
        )
    lines.append("")
    lines += verdict.get("message", "").splitlines()
    lines += ["", "spec:"] + _spec_lines(case, item.block_line)
    return "\n".join(lines)


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
