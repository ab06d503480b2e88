"""The expect block of a spec case as the schema defines it (specs/schema.json), and a piece of spec
code: the types the loader, the lint rules and the worker's checks share."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from jax_conformance.records import JSON


class MatchLoose(TypedDict):
    """`match_loose: {reason, words}`: the words a deliberately loose `match` may accept in each other's place."""

    reason: str
    words: list[str]


class RaisesBlock(TypedDict):
    """`raises`: the exception class by public dotted name, and a pattern its message must match."""

    type: str
    match: NotRequired[str]
    # why `match` is deliberately loose (the message check)
    match_loose: NotRequired[str | MatchLoose]


class WarningBlock(TypedDict):
    """One item of `warns`: the warning class, a pattern for its message, an exact count."""

    category: str
    match: NotRequired[str]
    match_loose: NotRequired[str | MatchLoose]
    count: NotRequired[int]


class ExpectBlock(TypedDict, total=False):
    """One `expect` (or `documented`) block as written, without its `when`: what the case must do."""

    not_applicable: str
    dtype: str
    weak_type: bool
    shape: list[int]
    value: JSON  # nested lists for arrays, nested lists for arrays, "nan" and "1+2j" spelled as strings
    rtol: float
    atol: float
    warns: Literal["none"] | WarningBlock | list[WarningBlock]
    raises: RaisesBlock
    check: str | list[str]
    note: str


# ----------------------------------------------------------------- a case to run


class CodeText(TypedDict):
    """A piece of spec code and the spec line its first line sits on."""

    text: str
    line: int
