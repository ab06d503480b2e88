"""Message strength (issue #24): would a `match` pattern still pass if the message meant something else?

For every `raises` / `warns` block with a `match`, the message the implementation actually produced
(the case record's `actual`) is reworded so that it means something else, and each rewording is
put in the original's place and judged as the worker judges it (`re.search`, and for `warns` every
item of the block with its category and `count`, `worker/checks.py`). A block whose patterns
accept a rewording is *weak*; one that rejects them all is *strong*; one whose pattern the spec
declares deliberately loose (`match_loose: <reason>` beside `match`) is *loose*, shown with its
reason and what it lets through.

The rewordings (`rewordings`), each a change of meaning, made in the message's *statement*: its
first line without the sentences of advice that follow (`See ...`, `To enable ...`, `Consider ...`),
unless the block's pattern runs on into that advice (it pins it: the rewordings then reach as far
as the pattern's match, `pinned_end`), and never inside a URL, a path, an address or a version:

- `dtype`: each dtype name for every other (`int64` -> `uint64`, `float64` -> `float32`, ...);
- `name`: each public function, rule or transformation name for another (`arange` -> `zeros`,
  `custom_vjp` <-> `custom_jvp`, `fwd` <-> `bwd`, `JVPTracer` -> `BatchTracer`, ...);
- `number`: each number or index for another (`output[0]` -> `output[1]`, `float32[2]` -> `float32[3]`);
- `not`: "not" removed (`cannot` -> `can`, `can't` -> `can`, `invalid` -> `valid`) or inserted after
  an auxiliary (`is` -> `is not`, `must` -> `must not`, `will be` -> `will not be`);
- `swap`: the two types or structures of an "X but got Y" (two `PyTreeDef(...)` or `float32[2]`
  tokens of one sentence) exchanged;
- `truncate`: a refusal made a truncation (", and will be truncated to dtype float32" put after
  "not available" where no such clause follows) and a truncation made a refusal (the clause taken
  out): the difference between x64's warn and error modes, which no other rewording makes.

Pure functions over records: `check_records` (what `mutate` and the tests call), `rewordings`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from jax_conformance.compare import WarnsItem, category_named, message_matches
from jax_conformance.mode import mode_slug
from jax_conformance.options import add_specs
from jax_conformance.records import read_records

if TYPE_CHECKING:
    from jax_conformance.spec.model import Case

DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "float0",
)
_DTYPE = re.compile(r"\b(?:" + "|".join(sorted(DTYPES, key=len, reverse=True)) + r")\b")

# Public names that are exchanged within their group: a message naming one means something else
# when it names another.
NAME_GROUPS: tuple[tuple[str, ...], ...] = (
    (
        "arange",
        "zeros",
        "ones",
        "full",
        "empty",
        "eye",
        "identity",
        "linspace",
        "tri",
        "array",
        "asarray",
        "astype",
        "zeros_like",
        "ones_like",
        "full_like",
        "empty_like",
    ),
    ("custom_vjp", "custom_jvp"),
    ("fwd", "bwd"),
    ("VJP", "JVP"),
    ("jvp", "vjp"),
    ("defvjp", "defjvp", "defjvps"),
    ("nondiff_argnums", "nondiff_argnames", "static_argnums"),
    ("JVPTracer", "LinearizeTracer", "BatchTracer", "DynamicJaxprTracer", "JaxprTracer"),
    ("primal", "tangent", "cotangent"),
    ("input", "output"),
    ("inputs", "outputs"),
    ("jit", "vmap", "grad", "scan", "remat"),
    ("ExplicitX64Mode", "jax_enable_x64", "jax_explicit_x64_dtypes"),
    ("JAX_ENABLE_X64", "JAX_EXPLICIT_X64_DTYPES"),
)
_NAME_ALTERNATIVES = {
    name: [other for other in group if other != name] for group in NAME_GROUPS for name in group
}
_NAME = re.compile(
    r"(?<![\w.])(?:" + "|".join(sorted(_NAME_ALTERNATIVES, key=len, reverse=True)) + r")(?!\w)"
)
# A creation function's name is a name only where it is used as one (`requested in zeros`, `jnp.zeros`,
# `zeros(`): "symbolic zeros" or "an abstract array" is prose.
_FUNCTION_CONTEXT = re.compile(r"(?:\bin |jnp\.|numpy\.|`)$")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w]|\.\d)")
# Negations that can be taken out, and what the sentence then says.
_NEGATIONS = (
    (re.compile(r"\b([Cc])annot\b"), r"\1an"),
    (re.compile(r"\b([Cc])an't\b"), r"\1an"),
    (re.compile(r"\b(?![Cc]an't)(\w+)n't\b"), r"\1"),
    (re.compile(r"\bnot\s+"), ""),
    (re.compile(r"\bInvalid\b"), "Valid"),
    (re.compile(r"\binvalid\b"), "valid"),
    (re.compile(r"\bunexpected\b"), "expected"),
    (re.compile(r"\bNo\s+"), ""),
)
_AUXILIARY = re.compile(r"\b(?:is|are|was|were|must|should|can|will|does|do)\b(?!\s+not\b)(?!n't)")
# Sentences of advice after the statement: not what the message asserts.
_ADVICE = re.compile(
    r"(?:See|To enable|To catch|Try|Consider|For more|Please|If you|You can|Note|This typically means)\b"
)
# Never reworded: URLs, paths, addresses, versions, and the repr of the offending value or class
# (`Array(0.84, dtype=float32, weak_type=True)`, `JitTracer(~float32[])`, `<class 'jaxlib._jax.ArrayImpl'>`):
# an echo of the input whose spelling varies by release, not what the message asserts.
_MASK = re.compile(
    r"https?://\S+|(?<![\w/])\w*/\S*|0x[0-9a-fA-F]+|\b\d+\.\d+\.\d+\S*"
    r"|\b(?:Array|JitTracer|GradTracer|TypedFloat)\((?:[^()]|\([^()]*\))*\)|\bTraced<[^<>]*>|<[^<>]*>"
)
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z`'\"])")
_STRUCTURE = re.compile(r"\b\w+\[[\d, ]*\]|PyTreeDef\(")
# x64's warn-mode clause, and the refusal it follows: "is not available, and will be truncated to dtype int32".
_TRUNCATION = re.compile(r", and will be truncated to dtype \w+")
_UNAVAILABLE = re.compile(r"\bnot available\b(?!, and will be truncated)")
# The 32-bit dtype a 64-bit request is truncated to (what JAX's warning names).
_NARROW = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}

MAX_REWORDINGS = 400


@dataclass(frozen=True)
class Rewording:
    kind: str  # dtype, name, number, not, swap
    what: str  # "float64 -> int64"
    text: str  # the whole reworded message

    def excerpt(self, original: str, chars: int = 60) -> str:
        """The reworded part in its context, for a report line."""
        start = next(
            (i for i, (a, b) in enumerate(zip(original, self.text, strict=False)) if a != b),
            min(len(original), len(self.text)),
        )
        end = len(self.text) - next(
            (
                i
                for i, (a, b) in enumerate(
                    zip(reversed(original), reversed(self.text), strict=False)
                )
                if a != b or i >= len(self.text) - start
            ),
            0,
        )
        lo, hi = max(0, start - chars), min(len(self.text), max(end, start) + chars)
        return ("..." if lo else "") + self.text[lo:hi] + ("..." if hi < len(self.text) else "")


def statement_span(message: str) -> tuple[int, int]:
    """Where the message's statement lies: its first line, without the sentences of advice after it."""
    line_end = message.find("\n")
    end = len(message) if line_end < 0 else line_end
    for m in _SENTENCE_END.finditer(message, 0, end):
        if _ADVICE.match(message, m.end()):
            return 0, m.start()
    return 0, end


def _masked(message: str) -> list[tuple[int, int]]:
    return [m.span() for m in _MASK.finditer(message)]


def _free(span: tuple[int, int], masks: Sequence[tuple[int, int]], within: tuple[int, int]) -> bool:
    s, e = span
    return within[0] <= s and e <= within[1] and not any(s < me and ms < e for ms, me in masks)


def _structure_end(message: str, start: int, m: re.Match[str]) -> int:
    if not m.group(0).startswith("PyTreeDef("):
        return m.end()
    depth = 0
    for i in range(m.start() + len("PyTreeDef"), len(message)):
        if message[i] == "(":
            depth += 1
        elif message[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return m.end()


def pinned_end(message: str, patterns: Sequence[str]) -> int:
    """How far into `message` the patterns that match it reach (their matches' furthest end): a
    block whose pattern runs on into the advice pins that advice, and it is reworded too."""
    ends = [m.end() for p in patterns if (m := re.search(p, message)) is not None]
    return max(ends, default=0)


def rewordings(message: str, reach: int = 0) -> list[Rewording]:
    """Meaning-changing rewordings of `message` (never the message itself), at most MAX_REWORDINGS:
    in its statement, and as far as `reach` (`pinned_end`) where a pattern pins the advice after it."""
    start, end = statement_span(message)
    line_end = message.find("\n")
    within = (start, max(end, min(reach, len(message) if line_end < 0 else line_end)))
    masks = _masked(message)
    out: dict[str, Rewording] = {}

    def add(kind: str, what: str, start: int, end: int, new: str) -> None:
        text = message[:start] + new + message[end:]
        if text != message and text not in out and len(out) < MAX_REWORDINGS:
            out[text] = Rewording(kind, what, text)

    for kind, what, start, end, new in _truncations(message, masks, within):
        add(kind, what, start, end, new)
    for m in _DTYPE.finditer(message):
        if _free(m.span(), masks, within):
            for other in DTYPES:
                if other != m.group(0):
                    add("dtype", f"{m.group(0)} -> {other}", *m.span(), other)
    for m in _NAME.finditer(message):
        if m.group(0) in NAME_GROUPS[0] and not (
            _FUNCTION_CONTEXT.search(message, 0, m.start()) or message.startswith("(", m.end())
        ):
            continue
        if _free(m.span(), masks, within):
            for other in _NAME_ALTERNATIVES[m.group(0)]:
                add("name", f"{m.group(0)} -> {other}", *m.span(), other)
    for m in _NUMBER.finditer(message):
        if _free(m.span(), masks, within):
            n = m.group(0)
            other = str(int(n) + 1) if n.isdigit() else str(float(n) + 1)
            add("number", f"{n} -> {other}", *m.span(), other)
    for pattern, repl in _NEGATIONS:
        for m in pattern.finditer(message):
            if _free(m.span(), masks, within):
                new = m.expand(repl) if isinstance(repl, str) else repl(m)
                add("not", f"{m.group(0).strip()!r} -> {new.strip()!r}", *m.span(), new)
    for m in _AUXILIARY.finditer(message):
        if _free(m.span(), masks, within):
            add("not", f"{m.group(0)!r} -> '{m.group(0)} not'", *m.span(), m.group(0) + " not")
    # "X but got Y": two types or structures of one sentence exchanged.
    sentences = [within[0], *(m.end() for m in _SENTENCE_END.finditer(message, *within)), within[1]]
    for s, e in zip(sentences, sentences[1:], strict=False):
        tokens: list[tuple[int, int]] = []
        for m in _STRUCTURE.finditer(message, s, e):
            end = _structure_end(message, s, m)
            if not tokens or m.start() >= tokens[-1][1]:
                tokens.append((m.start(), end))
        for (a0, a1), (b0, b1) in zip(tokens, tokens[1:], strict=False):
            a, b = message[a0:a1], message[b0:b1]
            if a != b:
                text = message[:a0] + b + message[a1:b0] + a + message[b1:]
                if text not in out and len(out) < MAX_REWORDINGS:
                    out[text] = Rewording("swap", f"{a} <-> {b}", text)
    return list(out.values())


def _truncations(
    message: str, masks: Sequence[tuple[int, int]], within: tuple[int, int]
) -> list[tuple[str, str, int, int, str]]:
    """The `truncate` rewordings as (kind, what, start, end, new text): a truncation clause put after
    each "not available" that has none (to the 32-bit sibling of the first 64-bit dtype the
    statement names, float32 if none), and each clause there taken out."""
    named = [m.group(0) for m in _DTYPE.finditer(message, *within) if m.group(0) in _NARROW]
    clause = f", and will be truncated to dtype {_NARROW[named[0]] if named else 'float32'}"
    out = [
        ("truncate", f"+{clause!r}", m.end(), m.end(), clause)
        for m in _UNAVAILABLE.finditer(message)
        if _free(m.span(), masks, within)
    ]
    out += [
        ("truncate", f"-{m.group(0)!r}", *m.span(), "")
        for m in _TRUNCATION.finditer(message)
        if _free(m.span(), masks, within)
    ]
    return out


# ----------------------------------------------------------------- judging a block as the worker does


def _warn_items(spec: object) -> list[Mapping[str, object]]:
    if isinstance(spec, dict):
        return [spec]
    return [w for w in spec if isinstance(w, dict)] if isinstance(spec, list) else []


def _warns_pass(items: Sequence[Mapping[str, object]], warnings: Sequence[tuple[str, str]]) -> bool:
    """Whether every item of a `warns` block holds on these (category name, message) warnings."""
    for item in items:
        want = WarnsItem.of(item)
        if not want.holds(len(want.hits(warnings, partial(category_named, want=want.category)))):
            return False
    return True


class LetThroughJSON(TypedDict):
    kind: str
    what: str
    pattern: str
    rewording: str
    mode: str


class BlockJSON(TypedDict):
    """One block's strength as `summary` lists it (`BlockStrength.to_json`)."""

    case: str
    basis: str | None
    spec_file: str
    block: str
    patterns: list[str]
    status: str
    loose: str | None
    modes: list[str]
    rewordings_tried: int
    let_through: list[LetThroughJSON]
    let_through_count: int
    excused: list[LetThroughJSON]
    excused_count: int


class MessageSummary(TypedDict):
    """The message score, as `summary` gives it (and `mutate` saves it)."""

    score: str
    strong: int
    total: int
    weak_count: int
    loose_count: int
    weak_normative: int
    unchecked: int
    weak: list[BlockJSON]
    loose: list[BlockJSON]


@dataclass
class LetThrough:
    kind: str
    what: str
    pattern: str
    excerpt: str
    mode: str

    def to_json(self) -> LetThroughJSON:
        return {
            "kind": self.kind,
            "what": self.what,
            "pattern": self.pattern,
            "rewording": self.excerpt,
            "mode": self.mode,
        }


@dataclass
class BlockStrength:
    """One `raises` or `warns` block with a `match`, over every record (mode) that ran it."""

    case: str
    basis: str | None
    spec_file: str
    key: str  # "raises" or "warns"
    patterns: list[str]
    loose: str | None  # the block's declared reason, if any pattern is declared loose
    # The words the declaration allows to change (None: any rewording); see `excuses`.
    loose_words: frozenset[str] | None = None
    modes: list[str] = field(default_factory=list)
    tried: int = 0
    let_through: list[LetThrough] = field(default_factory=list)  # not excused: what makes it weak
    excused: list[LetThrough] = field(
        default_factory=list
    )  # let through, as its `match_loose` declares
    # Modes whose passed record's message this block does not accept (a block from other specs, `with_expectations`).
    misses: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if not self.modes:
            return "unchecked"
        if self.let_through:
            return "weak"
        return "loose" if self.excused else "strong"

    def add(self, through: LetThrough) -> None:
        """A rewording the block accepted: excused when its declaration covers it, else a weakness."""
        (self.excused if self.excuses(through) else self.let_through).append(through)

    def excuses(self, through: LetThrough) -> bool:
        """`match_loose: reason` excuses every rewording; `{reason, words}` those that exchange two of `words`."""
        if self.loose is None:
            return False
        if self.loose_words is None:
            return True
        sides = re.split(r" <?-> ", through.what)
        return all(side.strip("'\"") in self.loose_words for side in sides)

    @property
    def normative(self) -> bool:
        return self.basis in ("documented", "tested")

    def to_json(self) -> BlockJSON:
        return {
            "case": self.case,
            "basis": self.basis,
            "spec_file": self.spec_file,
            "block": self.key,
            "patterns": self.patterns,
            "status": self.status,
            "loose": self.loose,
            "modes": self.modes,
            "rewordings_tried": self.tried,
            "let_through": [t.to_json() for t in self.let_through[:5]],
            "let_through_count": len(self.let_through),
            "excused": [t.to_json() for t in self.excused[:5]],
            "excused_count": len(self.excused),
        }

    def line(self) -> str:
        """One line for a terminal or a report."""
        head = f"{self.case} [{self.key}, {self.basis or 'no basis'}]"
        if self.status == "strong":
            return f"{head}: strong ({self.tried} rewordings rejected)"
        shown = self.let_through or self.excused
        if not shown:
            return f"{head}: {self.status}"
        t = shown[0]
        more = f" (+{len(shown) - 1} more)" if len(shown) > 1 else ""
        why = f" (declared loose: {self.loose})" if self.status == "loose" else ""
        return (
            f"{head}: {self.status}{why}: /{t.pattern}/ lets through {t.kind} {t.what}: "
            f"{t.excerpt!r} [{t.mode}]{more}"
        )


def _observed(record: Mapping[str, object]) -> Mapping[str, object] | None:
    """What the case did: its `actual`, or the first example's for a `given` case."""
    actual = record.get("actual")
    if not isinstance(actual, dict):
        return None
    if "first_observed" in actual:
        return actual["first_observed"] if isinstance(actual["first_observed"], dict) else None
    return None if "examples" in actual else actual


def _check_raises(
    block: BlockStrength, spec: Mapping[str, object], observed: Mapping[str, object], mode: str
) -> None:
    raised = observed.get("raised")
    pattern = spec.get("match")
    if not isinstance(raised, dict) or not isinstance(pattern, str):
        return
    message = str(raised.get("message", ""))
    if not message_matches(pattern, message):
        block.misses.append(mode)  # the block does not hold on this message: nothing to reword
        return
    block.modes.append(mode)
    for r in rewordings(message, pinned_end(message, [pattern])):
        block.tried += 1
        if message_matches(pattern, r.text):
            block.add(LetThrough(r.kind, r.what, pattern, r.excerpt(message), mode))


def _check_warns(
    block: BlockStrength,
    items: Sequence[Mapping[str, object]],
    observed: Mapping[str, object],
    mode: str,
) -> None:
    seen = observed.get("warnings") or []
    if not isinstance(seen, Iterable):
        raise TypeError(f"observed warnings are {type(seen).__name__}, not a list")
    warnings = [
        (str(w.get("category", "")), str(w.get("message", ""))) for w in seen if isinstance(w, dict)
    ]
    if not _warns_pass(items, warnings):
        block.misses.append(
            mode
        )  # not seen to hold here (another block's text, a cut record): nothing to reword
        return
    block.modes.append(mode)
    for i, (cat, message) in enumerate(warnings):
        readers = [
            want.match
            for want in map(WarnsItem.of, items)
            if want.match is not None
            and category_named(cat, want.category)
            and message_matches(want.match, message)
        ]
        if not readers:
            continue
        for r in rewordings(message, pinned_end(message, readers)):
            block.tried += 1
            changed = [*warnings[:i], (cat, r.text), *warnings[i + 1 :]]
            if _warns_pass(items, changed):
                block.add(LetThrough(r.kind, r.what, " & ".join(readers), r.excerpt(message), mode))


def _declared(items: Sequence[Mapping[str, object]]) -> tuple[str | None, frozenset[str] | None]:
    """The block's `match_loose` declarations: (reason, the words they allow; None: any)."""
    reasons: list[str] = []
    words: set[str] = set()
    anything = False
    for w in items:
        loose = w.get("match_loose")
        if isinstance(loose, str) and loose:
            reasons.append(loose)
            anything = True
        elif isinstance(loose, dict) and loose.get("reason"):
            reasons.append(str(loose["reason"]))
            if isinstance(loose.get("words"), list):
                words.update(str(x) for x in loose["words"])
            else:
                anything = True
    if not reasons:
        return None, None
    return "; ".join(reasons), None if anything else frozenset(words)


def check_records(records: Iterable[Mapping[str, object]]) -> list[BlockStrength]:
    """Every `raises` / `warns` block with a `match` in the passed case records, judged against the
    rewordings of the messages it accepted (one entry per case and block, over all modes)."""
    blocks: dict[tuple[str, str, str], BlockStrength] = {}
    for rec in records:
        if rec.get("record", "case") != "case":
            continue
        expected = rec.get("expected")
        if not isinstance(expected, dict):
            continue
        mode = f"{rec.get('adapter', '?')} {mode_slug(rec.get('mode'))}"
        observed = _observed(rec) if rec.get("outcome") in ("passed", "xpassed") else None
        for key in ("raises", "warns"):
            spec = expected.get(key)
            items = (
                [spec]
                if key == "raises" and isinstance(spec, dict)
                else (_warn_items(spec) if key == "warns" else [])
            )
            patterns = [str(w["match"]) for w in items if isinstance(w.get("match"), str)]
            if not patterns:
                continue
            ident = (str(rec.get("case")), key, json.dumps(spec, sort_keys=True))
            block = blocks.get(ident)
            if block is None:
                reason, words = _declared(items)
                basis = rec.get("basis")
                block = blocks[ident] = BlockStrength(
                    str(rec.get("case")),
                    basis if isinstance(basis, str) else None,
                    str(rec.get("spec_file", "")),
                    key,
                    patterns,
                    reason,
                    words,
                )
            if observed is None or mode in block.modes:
                continue
            if key == "raises":
                _check_raises(block, items[0], observed, mode)
            else:
                _check_warns(block, items, observed, mode)
    return sorted(blocks.values(), key=lambda b: (b.case, b.key, b.patterns))


def with_expectations(
    records: Iterable[Mapping[str, object]], spec_paths: Iterable[Path | str]
) -> list[dict[str, object]]:
    """The records with each `expected` replaced by the block the given specs choose for the record's
    mode, backend, adapter and version: another revision of the specs judged on the same messages
    (`--specs DIR`; the `before` of a pattern rewrite). A record whose case those specs lack, or
    choose no block for, is left out."""
    from jax_conformance.mode import Mode
    from jax_conformance.spec.loader import load_spec, spec_files

    cases: dict[str, Case] = {}
    for path in spec_files(spec_paths):
        try:
            spec = load_spec(path, rules=False)
        except Exception:  # noqa: S112 - a file that does not load chooses no block
            continue
        cases.update((c.id, c) for c in spec.cases)
    out: list[dict[str, object]] = []
    for rec in records:
        case = cases.get(str(rec.get("case")))
        mode = rec.get("mode")
        if case is None or rec.get("record", "case") != "case" or not isinstance(mode, dict):
            continue
        block = case.select(
            Mode.from_json(mode),
            str(rec.get("backend", "cpu")),
            str(rec.get("adapter", "jax")),
            str(rec.get("behaviour_version") or rec.get("implementation_version", "")),
        )
        if block is not None and block.not_applicable is None:
            out.append({**rec, "expected": block.expected})
    return out


def summary(blocks: Sequence[BlockStrength]) -> MessageSummary:
    """The message score, JSON-ready: strong / checked blocks, and the weak and loose ones."""
    checked = [b for b in blocks if b.status != "unchecked"]
    strong = [b for b in checked if b.status == "strong"]
    weak = [b for b in checked if b.status == "weak"]
    loose = [b for b in checked if b.status == "loose"]
    return {
        "score": f"{len(strong)}/{len(checked)}",
        "strong": len(strong),
        "total": len(checked),
        "weak_count": len(weak),
        "loose_count": len(loose),
        "weak_normative": sum(1 for b in weak if b.normative),
        "unchecked": len(blocks) - len(checked),
        "weak": [b.to_json() for b in weak],
        "loose": [b.to_json() for b in loose],
    }


def describe(blocks: Sequence[BlockStrength]) -> list[str]:
    """Terminal lines: the score, then each weak and loose block."""
    s = summary(blocks)
    lines = [
        f"message score: {s['score']} strong ({s['weak_count']} weak, {s['weak_normative']} of them documented/tested; "
        f"{s['loose_count']} declared loose; {s['unchecked']} unchecked: no message seen)"
    ]
    lines += [f"  {b.line()}" for b in blocks if b.status in ("weak", "loose")]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m jax_conformance.report.message_strength RESULTS.jsonl...`: the score and the weak blocks."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m jax_conformance.report.message_strength",
        description="The message score of result files: each raises/warns match against rewordings "
        "of the message seen.",
    )
    parser.add_argument("results", nargs="+", type=Path)
    add_specs(parser.add_argument, "judge with these specs' blocks instead of the records' own")
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    records: Sequence[Mapping[str, object]] = [r for p in args.results for r in read_records(p)]
    if args.specs:
        records = with_expectations(records, args.specs)
    blocks = check_records(records)
    print("\n".join(describe(blocks)))
    for b in blocks:
        if b.misses:
            print(
                f"  {b.case} [{b.key}]: does not accept the message seen in "
                f"{', '.join(sorted(set(b.misses)))}: {b.patterns}"
            )
    return 1 if any(b.status == "weak" and b.normative for b in blocks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
