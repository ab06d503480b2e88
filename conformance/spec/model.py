"""The spec model: a `Spec` file holds `Case`s; a case holds `Expectation` blocks chosen by `When`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jax_conformance.mode import FlagValue, Mode, same_flag_value, value_text
from jax_conformance.protocol import CasePayload
from jax_conformance.spec.blocks import CodeText, ExpectBlock
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class When:
    """Conditions over mode, flags, backend, adapter and version; None means "any"."""

    x64: bool | None = None
    explicit_x64_dtypes: frozenset[str] | None = None
    backend: frozenset[str] | None = None
    adapter: frozenset[str] | None = None
    version: SpecifierSet | None = None
    # JAX flags and the value each must have, sorted by name.
    flags: tuple[tuple[str, FlagValue], ...] | None = None

    def matches(
        self,
        mode: Mode,
        backend: str,
        adapter: str,
        version: str,
        flags: Mapping[str, FlagValue] | None = None,
    ) -> bool:
        """Whether the block applies. `flags`: the value of every flag the implementation has, in
        this mode (its defaults, then what the mode sets); None: only what the mode sets is known,
        and a flag it does not set is taken to be false. A flag missing from `flags` matches no
        value: the implementation does not have it."""
        if self.x64 is not None and self.x64 != mode.x64:
            return False
        if (
            self.explicit_x64_dtypes is not None
            and mode.explicit_x64_dtypes not in self.explicit_x64_dtypes
        ):
            return False
        if self.flags is not None:
            effective = {**(flags if flags is not None else {}), **dict(mode.flags)}
            for name, want in self.flags:
                if flags is None and name not in effective:
                    effective[name] = False
                if name not in effective or not same_flag_value(effective[name], want):
                    return False
        if self.backend is not None and backend not in self.backend:
            return False
        if self.adapter is not None and adapter not in self.adapter:
            return False
        return self.version is None or version_in(version, self.version)

    def describe(self) -> str:
        parts = []
        if self.x64 is not None:
            parts.append(f"x64={'on' if self.x64 else 'off'}")
        for name in ("explicit_x64_dtypes", "backend", "adapter"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={'|'.join(sorted(value))}")
        if self.version is not None:
            parts.append(f"version{self.version}")
        parts.extend(f"{name}={value_text(value)}" for name, value in self.flags or ())
        return ", ".join(parts) or "always"


def version_in(version: str, spec: SpecifierSet) -> bool:
    try:
        v = Version(version)
    except InvalidVersion:
        return False
    # Compare the release only, so 0.10.2.dev2026 counts as 0.10.2 for a range.
    return spec.contains(Version(v.base_version), prereleases=True)


@dataclass
class Expectation:
    """One `expect` block: when it applies, and what the case must do then."""

    when: When
    expected: ExpectBlock  # the block's keys other than `when`, as written: what the case must do
    line: int

    @property
    def not_applicable(self) -> str | None:
        return self.expected.get("not_applicable")


BASES = ("documented", "tested", "observed", "unsupported", "library")
# The kinds of requirement a conformance verdict counts; `observed` is shown beside them, `unsupported` never.
# `library`: a library's own requirement (its docs or tests, not JAX's), in a library's spec directory.
NORMATIVE_BASES = frozenset({"documented", "tested", "library"})


@dataclass
class Documented:
    """What the documentation says a case does, as blocks evaluated beside the code's `expect`."""

    says: str
    source: list[dict[str, str]]
    expect: list[Expectation]
    line: int

    def select(
        self,
        mode: Mode,
        backend: str,
        adapter: str,
        version: str,
        flags: Mapping[str, FlagValue] | None = None,
    ) -> Expectation | None:
        return _first(self.expect, mode, backend, adapter, version, flags)


def _first(
    blocks: list[Expectation],
    mode: Mode,
    backend: str,
    adapter: str,
    version: str,
    flags: Mapping[str, FlagValue] | None = None,
) -> Expectation | None:
    for block in blocks:
        if block.when.matches(mode, backend, adapter, version, flags):
            return block
    return None


@dataclass
class Code:
    """A piece of Python from a spec, with the spec line its first line sits on."""

    text: str
    line: int

    def shifted(self) -> str:
        """The text padded with blank lines so that compile() reports spec line numbers."""
        return "\n" * (self.line - 1) + self.text

    def to_json(self) -> CodeText:
        return {"text": self.text, "line": self.line}


@dataclass
class Case:
    id: str
    claim: str
    spec_path: Path
    line: int
    topic: str
    run: Code
    expect: list[Expectation]
    source: list[dict[str, str]] = field(default_factory=list)
    tags: tuple[str, ...] = ()
    setup: list[Code] = field(default_factory=list)  # file-level first, then the case's own
    isolate: str | None = None
    env: dict[str, str | None] = field(default_factory=dict)
    given: dict[str, str] = field(default_factory=dict)
    max_examples: int | None = None
    timeout: float | None = None
    basis: str | None = None
    documented: Documented | None = None
    field_lines: dict[str, int] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    table: str | None = None  # a table's cell: the table case's id (its cells run in one batch)
    paths: tuple[str, ...] = ()  # eager / jit / jit-warm: the same observation on each
    jit_args: tuple[str, ...] = ()

    def select(
        self,
        mode: Mode,
        backend: str,
        adapter: str,
        version: str,
        flags: Mapping[str, FlagValue] | None = None,
    ) -> Expectation | None:
        """The first expect block whose `when` holds; None means not applicable."""
        return _first(self.expect, mode, backend, adapter, version, flags)

    def payload(
        self, block: Expectation, mode: Mode, backend: str, documented: Expectation | None = None
    ) -> CasePayload:
        """What a worker process needs to run this case: code, inputs and the chosen block(s)."""
        payload: CasePayload = {
            "id": self.id,
            "file": str(self.spec_path),
            "line": self.line,
            "setup": [c.to_json() for c in self.setup],
            "run": self.run.to_json(),
            "given": self.given,
            "max_examples": self.max_examples,
            "expect": block.expected,
            "expect_line": block.line,
            "mode": mode.to_json(),
            "backend": backend,
        }
        if self.paths:
            payload["paths"] = list(self.paths)
            payload["jit_args"] = list(self.jit_args)
        if documented is not None and documented.not_applicable is None:
            payload["documented"] = documented.expected
            payload["documented_line"] = documented.line
        return payload


@dataclass
class Spec:
    path: Path
    topic: str
    title: str
    source: list[dict[str, str]]
    tags: tuple[str, ...]
    cases: list[Case]
    raw: dict[str, Any] = field(default_factory=dict)
