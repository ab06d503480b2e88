"""The message check (issue #24): meaning-changing rewordings of real JAX 0.10.2 messages, and the
verdict on a block's patterns (`jax_conformance.report.message_strength`).

The check over the whole suite runs in `tests/test_suite_modes.py`, on the records each of its four
mode processes already writes (`assert_no_new_weak` below): no extra JAX process."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from jax_conformance.report.message_strength import (
    check_records,
    rewordings,
    statement_span,
    summary,
)

# Real messages, JAX 0.10.2 on CPU (records of `pytest conformance/ --adapter=jax`).
WARN_INT64 = (
    "Explicitly requested dtype int64 requested in zeros is not available, and will be truncated to dtype int32. "
    "To enable more dtypes, set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
    "variable. See https://github.com/jax-ml/jax#current-gotchas for more."
)
BWD_TOO_MANY = (
    "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the args tuple of the "
    "primal function, and in particular must produce a tuple of length equal to the number of arguments to the primal "
    "function, but got bwd output structure PyTreeDef((*, *)) for primal input structure PyTreeDef((*,))."
)
SYMBOLIC_ZERO = (
    "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not match the "
    "corresponding input tangent "
    "shape/dtype: at output[0] the SymbolicZero had shape/dtype float32[2] while the corresponding "
    "input had shape/dtype "
    "float32[1]. Consider just returning a None here instead of a SymbolicZero object."
)
NONDIFF = (
    "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position "
    "indicated by nondiff_argnums as "
    "non-differentiable. Tracers cannot be passed as non-differentiable arguments to custom_vjp functions; instead, "
    "nondiff_argnums should only be used for arguments that can't be or contain JAX tracers, e.g. function-valued "
    "arguments. In particular, array-valued arguments should typically not be indicated as nondiff_argnums.\n"
    "See https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError"
)
ERROR_FLOAT64 = (
    "Explicitly requested dtype float64 requested in full is not available. To enable more dtypes, set the "
    "jax_enable_x64 or allow_explicit_x64_dtypes configuration options.See "
    "https://github.com/jax-ml/jax#current-gotchas for more."
)
STRICT = (
    "Input dtypes ('float32', 'int32') have no available implicit dtype promotion path when "
    "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output type, or set "
    "jax_numpy_dtype_promotion=standard."
)
ENV_INVALID = "invalid truth value '2' for environment 'JAX_ENABLE_X64'"

# Documented/tested blocks known to be weak under the check, not yet rewritten (case, block): each
# is a pattern to strengthen; the suite check fails on any weak block not listed here, so the list
# can only shrink. Empty is the goal of issue #24, and it is empty.
KNOWN_WEAK: frozenset[tuple[str, str]] = frozenset()
# Whole families known weak, by case-id prefix. Empty: the promotion tables' error patterns are
# written by specs/promotion/generate.py and name the cell's own dtypes (both orders of JAX's
# tuple; the refused 64-bit request names its dtype and function), so every block is strong
# (checked on the records of JAX 0.10.2 and the reference in off-warn, off-error, off-allow, on
# and the four strict modes).
KNOWN_WEAK_FAMILIES: tuple[str, ...] = ()


def _texts(message: str) -> dict[str, str]:
    return {r.what: r.text for r in rewordings(message)}


def test_dtype_swaps_are_whole_words_and_keep_the_advice() -> None:
    texts = _texts(WARN_INT64)
    assert "Explicitly requested dtype uint64 requested in zeros" in texts["int64 -> uint64"]
    assert "truncated to dtype float32." in texts["int32 -> float32"]
    # The advice and the link after the statement are never reworded.
    assert all(
        "set the jax_enable_x64 configuration option" in t
        and "github.com/jax-ml/jax#current-gotchas" in t
        for t in texts.values()
    )
    assert WARN_INT64 not in texts.values()


def test_not_inserted_and_removed_and_the_function_swapped() -> None:
    texts = list(_texts(WARN_INT64).values())
    assert any("in zeros is available, and will be truncated" in t for t in texts)
    assert any("not available, and will not be truncated" in t for t in texts)
    assert any("requested in ones is not available" in t for t in texts)
    env = list(_texts(ENV_INVALID).values())
    assert "valid truth value '2' for environment 'JAX_ENABLE_X64'" in env
    assert "invalid truth value '3' for environment 'JAX_ENABLE_X64'" in env


def test_truncation_clause_put_in_and_taken_out() -> None:
    """x64's error message made its warn message and back: the one change no other rewording makes."""
    refused = _texts(ERROR_FLOAT64)
    added = refused["+', and will be truncated to dtype float32'"]
    assert "in full is not available, and will be truncated to dtype float32. To enable" in added
    warned = _texts(WARN_INT64)
    assert (
        "in zeros is not available. To enable more dtypes"
        in warned["-', and will be truncated to dtype int32'"]
    )
    # a message that already truncates gets no second clause
    assert not any(w.startswith("+") for w in warned)


def test_refusal_patterns_without_a_truncation_guard_are_weak() -> None:
    """A pattern that reads only "not available" accepts a message that truncates instead of refusing
    (the error-mode blocks guard with `^(?!.*truncat)`); a warn pattern without the clause accepts
    a refusal."""
    raised = {"raised": {"type": "ValueError", "message": ERROR_FLOAT64}}
    warned = {"warnings": [{"category": "UserWarning", "message": WARN_INT64, "where": "x.py:1"}]}
    plain = r"requested dtype float64 requested in full is not available\b"
    blocks = {
        b.case: b
        for b in check_records(
            [
                _record(
                    "plain",
                    {"raises": {"type": "ValueError", "match": plain}},
                    raised,
                    mode="error",
                ),
                _record(
                    "guarded",
                    {"raises": {"type": "ValueError", "match": "^(?!.*truncat).*" + plain}},
                    raised,
                    mode="error",
                ),
                _record(
                    "warn-plain",
                    {
                        "warns": {
                            "category": "UserWarning",
                            "match": r"int64 requested in zeros is not available",
                        }
                    },
                    warned,
                ),
            ]
        )
    }
    assert blocks["plain"].status == "weak"
    assert [t.kind for t in blocks["plain"].let_through] == ["truncate"]
    assert blocks["guarded"].status == "strong"
    assert blocks["warn-plain"].status == "weak"
    assert "truncate" in {t.kind for t in blocks["warn-plain"].let_through}


def test_advice_a_pattern_pins_is_reworded_too() -> None:
    """A pattern that runs on into the advice pins it: the rewordings reach as far as its match (so
    `desired (?:input|output) type` is weak); a pattern that stops in the statement leaves the advice
    alone."""
    raised = {"raised": {"type": "TypePromotionError", "message": STRICT}}
    statement = (
        r"^Input dtypes \('float32', 'int32'\) have no available implicit dtype promotion path "
        r"when jax_numpy_dtype_promotion=strict\b"
    )
    loose_advice = (
        statement + r"\. Try explicitly casting inputs to the desired (?:input|output) type\b"
    )
    tight_advice = statement + r"\. Try explicitly casting inputs to the desired output type\b"
    blocks = {
        b.case: b
        for b in check_records(
            [
                _record(case, {"raises": {"type": "E", "match": pattern}}, raised)
                for case, pattern in (
                    ("statement", statement),
                    ("loose-advice", loose_advice),
                    ("tight-advice", tight_advice),
                )
            ]
        )
    }
    assert blocks["statement"].status == "strong"
    assert blocks["loose-advice"].status == "weak"
    assert blocks["loose-advice"].let_through[0].what == "output -> input"
    assert blocks["tight-advice"].status == "strong"
    assert blocks["tight-advice"].tried > blocks["statement"].tried
    assert not any("desired input type" in r.text for r in rewordings(STRICT))


def test_statement_stops_at_the_advice() -> None:
    start, end = statement_span(WARN_INT64)
    assert WARN_INT64[start:end].endswith("truncated to dtype int32.")
    assert statement_span(NONDIFF)[1] == NONDIFF.index("\n")


def test_but_got_structures_swapped_and_positions_changed() -> None:
    texts = _texts(BWD_TOO_MANY)
    assert (
        "bwd output structure PyTreeDef((*,)) for primal input structure PyTreeDef((*, *))"
        in texts["PyTreeDef((*, *)) <-> PyTreeDef((*,))"]
    )
    zero = _texts(SYMBOLIC_ZERO)
    assert "at output[1] the SymbolicZero" in zero["0 -> 1"]
    assert (
        "had shape/dtype float32[1] while the corresponding input had shape/dtype float32[2]"
        in zero["float32[2] <-> float32[1]"]
    )
    nondiff = [r.text for r in rewordings(NONDIFF)]
    assert any(
        "custom_jvp function in a position indicated by nondiff_argnums" in t for t in nondiff
    )
    assert any("Tracers can be passed as non-differentiable" in t for t in nondiff)


def _record(
    case: str,
    expected: Mapping[str, Any],
    actual: Mapping[str, Any],
    basis: str = "documented",
    mode: str = "warn",
) -> dict[str, Any]:
    return {
        "record": "case",
        "case": case,
        "basis": basis,
        "spec_file": "specs/x.yaml",
        "adapter": "jax",
        "outcome": "passed",
        "mode": {"x64": False, "explicit_x64_dtypes": mode, "flags": {}},
        "expected": expected,
        "actual": actual,
    }


def _status(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    return {b.case: b.status for b in check_records(records)}


def test_weak_and_strong_raises_patterns() -> None:
    raised = {"raised": {"type": "ValueError", "message": ENV_INVALID}}
    records = [
        _record("old", {"raises": {"type": "ValueError", "match": "'2'.*JAX_ENABLE_X64"}}, raised),
        _record(
            "new",
            {
                "raises": {
                    "type": "ValueError",
                    "match": r"\binvalid truth value\W+2\W+for environment\W+JAX_ENABLE_X64\b",
                }
            },
            raised,
        ),
    ]
    blocks = {b.case: b for b in check_records(records)}
    assert (
        blocks["old"].status == "weak"
        and blocks["old"].let_through[0].what == "'invalid' -> 'valid'"
    )
    assert (
        blocks["new"].status == "strong" and blocks["new"].tried == 3
    )  # invalid -> valid, 2 -> 3, JAX_ENABLE_X64 -> JAX_EXPLICIT_X64_DTYPES
    assert summary(list(blocks.values()))["score"] == "1/2"


def test_warns_blocks_are_judged_whole_with_counts() -> None:
    warned = {"warnings": [{"category": "UserWarning", "message": WARN_INT64, "where": "x.py:1"}]}
    loose_item = {"category": "UserWarning", "count": 1, "match": r"requested in zeros\b"}
    tight_item = {
        "category": "UserWarning",
        "count": 1,
        "match": r"requested dtype\W.*\bint64\W* requested in zeros\b.*\bnot available\W+and will "
        r"be truncated to dtype int32\b",
    }
    old_item = {
        "category": "UserWarning",
        "count": 1,
        "match": r"\bint64\b.*\bnot available\b.*\btruncated to dtype int32\b",
    }
    status = _status(
        [
            _record("loose-alone", {"warns": [loose_item]}, warned),
            _record(
                "loose-with-tight", {"warns": [loose_item, tight_item]}, warned
            ),  # the tight item rejects for both
            _record("old", {"warns": old_item}, warned),  # "will not be truncated" passes it
        ]
    )
    assert status == {"loose-alone": "weak", "loose-with-tight": "strong", "old": "weak"}


def test_declared_loose_blocks() -> None:
    message = (
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
        "allowing for a reference to an "
        "intermediate value with type float32[] wrapped in a LinearizeTracer to escape the scope "
        "of the transformation.\n"
        "JAX transformations require that functions explicitly return their outputs."
    )
    pattern = (
        r"\bEncountered an unexpected tracer\W+A function transformed by JAX had a side "
        r"effect\W+allowing for a reference to an "
        r"intermediate value with type float32\[\] wrapped in a (?:LinearizeTracer|JVPTracer) to "
        r"escape the scope of the transformation\b"
    )
    raised = {"raised": {"type": "UnexpectedTracerError", "message": message}}
    words = {
        "reason": "LinearizeTracer in 0.10.2, JVPTracer before",
        "words": ["LinearizeTracer", "JVPTracer"],
    }
    blocks = {
        b.case: b
        for b in check_records(
            [
                _record("undeclared", {"raises": {"type": "E", "match": pattern}}, raised),
                _record(
                    "declared",
                    {"raises": {"type": "E", "match": pattern, "match_loose": words}},
                    raised,
                ),
                # The declaration covers those two words only: the generic preamble is still weak.
                _record(
                    "too-loose",
                    {
                        "raises": {
                            "type": "E",
                            "match": "Encountered an unexpected tracer",
                            "match_loose": words,
                        }
                    },
                    raised,
                ),
                _record(
                    "string",
                    {"raises": {"type": "E", "match": "tracer", "match_loose": "anything goes"}},
                    raised,
                ),
            ]
        )
    }
    assert blocks["undeclared"].status == "weak"
    assert blocks["undeclared"].let_through[0].what == "LinearizeTracer -> JVPTracer"
    assert blocks["declared"].status == "loose" and "JVPTracer" in blocks["declared"].line()
    assert blocks["too-loose"].status == "weak"
    assert blocks["string"].status == "loose"


def test_given_cases_are_checked_on_their_first_example_and_failures_are_unchecked() -> None:
    warned = {"warnings": [{"category": "UserWarning", "message": WARN_INT64, "where": "x.py:1"}]}
    item = {"category": "UserWarning", "match": r"\bint64\b"}
    failed = _record("failed", {"warns": item}, warned)
    failed["outcome"] = "failed"
    status = _status(
        [_record("given", {"warns": item}, {"examples": 3, "first_observed": warned}), failed]
    )
    assert status == {"given": "weak", "failed": "unchecked"}


def test_rewordings_change_the_text_and_the_judge_semantics_are_re_search() -> None:
    for message in (WARN_INT64, ERROR_FLOAT64, BWD_TOO_MANY, SYMBOLIC_ZERO, NONDIFF, ENV_INVALID):
        texts = [r.text for r in rewordings(message)]
        assert texts and message not in texts and len(set(texts)) == len(texts)
    # A pattern anchored in the middle still matches (search, not match), as worker/checks.py does.
    assert check_records(
        [
            _record(
                "mid",
                {"raises": {"type": "E", "match": "truth value"}},
                {"raised": {"type": "ValueError", "message": ENV_INVALID}},
            )
        ]
    )[0].modes == ["jax off-warn"]
    assert re.search("truth value", ENV_INVALID)


def assert_no_new_weak(records: Iterable[Mapping[str, Any]]) -> None:
    """The suite check: no documented or tested raises/warns block of these records is weak, except
    those listed in KNOWN_WEAK and KNOWN_WEAK_FAMILIES (called by tests/test_suite_modes.py on each
    mode's records)."""
    weak = [
        b
        for b in check_records(records)
        if b.status == "weak"
        and b.normative
        and (b.case, b.key) not in KNOWN_WEAK
        and not b.case.startswith(KNOWN_WEAK_FAMILIES)
    ]
    assert not weak, (
        "weak message patterns (reword them on the words that carry the meaning):\n"
        + "\n".join(b.line() for b in weak)
    )


def test_mutation_file_shows_the_message_score_and_the_weak_patterns(tmp_path) -> None:
    from jax_conformance.records import encode
    from jax_conformance.report.model import load_mutation

    raised = {"raised": {"type": "ValueError", "message": ENV_INVALID}}
    messages = summary(
        check_records(
            [
                _record(
                    "x64.flag.env-invalid",
                    {"raises": {"type": "ValueError", "match": "'2'.*JAX_ENABLE_X64"}},
                    raised,
                )
            ]
        )
    )
    path = tmp_path / "mutation.json"
    path.write_bytes(
        encode(
            {
                "record": "mutation",
                "score": "1/1",
                "mutants": [],
                "message_score": messages["score"],
                "messages": messages,
            }
        )
    )
    extra = (load_mutation(path) or {})["extra"]
    assert extra["message score"].startswith("0/1 raises/warns patterns strong (1 weak")
    line = extra["weak message pattern x64.flag.env-invalid [raises]"]
    assert "'2'.*JAX_ENABLE_X64" in line and "'invalid' -> 'valid'" in line
