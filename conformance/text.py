"""Text the harness shows or stores: one way to cut what is too long, one way to say how a process ended.

Every process of a run (worker, mode process, parent) cuts oversized text with `cut`, so a cut
looks the same wherever it happened and says how much was left out. The limits differ by
purpose and are named here so a reader sees them side by side.
"""

from __future__ import annotations

import signal

# A case record's `message` (the writer's bound, so one line of a result file stays small).
RECORD_MESSAGE_CHARS = 20_000
# A verdict's `message` as the worker sends it back over the pipe (cut again by the writer).
WORKER_MESSAGE_CHARS = 100_000
# One value shown inside a message (a repr of an array, a warning's text).
VALUE_CHARS = 2_000
# One value shown on one line (a warning in a list, an argument in a summary).
LINE_CHARS = 400


def cut(text: str, limit: int, what: str = "text") -> str:
    """`text` itself, or its first `limit` characters and a note naming `what` was cut and how
    much: the reader of a cut message knows it is not whole."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{what} cut: {len(text) - limit:,} more characters]"


def signal_text(number: int) -> str:
    """`SIGSEGV` for 11, `signal 77` for a number with no name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_exit(returncode: int | None) -> str:
    """`exited with status 3`, `was killed by signal SIGSEGV` (a Popen returncode in words)."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        name = signal_text(-returncode)
        hint = " (the kernel's OOM killer sends this too)" if name == "SIGKILL" else ""
        return f"was killed by {'' if name.startswith('signal ') else 'signal '}{name}{hint}"
    return f"exited with status {returncode}"


def exit_fields(returncode: int | None) -> dict[str, int | str]:
    """The same exit as record fields: `{"exit_status": 3}` or `{"signal": "SIGSEGV"}` (a signal
    with no name keeps its number); nothing while the process still runs."""
    if returncode is None:
        return {}
    if returncode < 0:
        try:
            return {"signal": signal.Signals(-returncode).name}
        except ValueError:
            return {"signal": -returncode}
    return {"exit_status": returncode}


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 spec error`, `2 spec errors`, `0 mode processes` (`words`: a plural that is not `word`+s):
    a counted word agrees with its count."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def percent(part: int, whole: int) -> str:
    """`part` of `whole` as a percentage to one decimal, never rounded up to 100.0% while a part is
    missing nor down to 0.0% while there is one ("n/a" of nothing)."""
    if not whole:
        return "n/a"
    value = 100.0 * part / whole
    if part < whole:
        value = min(value, 99.9)
    if part > 0:
        value = max(value, 0.1)
    return f"{value:.1f}%"
