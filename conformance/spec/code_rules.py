"""The rules over a spec's Python: it compiles, names only what exists, and changes no process-wide state unisolated.

CODE-SYNTAX, CODE-NAMES (lint only: pyflakes over each case's code in the order it runs),
GIVEN-UNUSED and ISOLATE-MISSING (`global_changes` reads the syntax tree for process-wide changes).
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterator

from jax_conformance.adapters import SPEC_NAMES
from jax_conformance.errors import SpecError
from jax_conformance.spec.blocks import ExpectBlock
from jax_conformance.spec.model import Case, Code, Spec
from jax_conformance.spec.rule_base import Rule, list_items, raw_block, value_line
from jax_conformance.text import plural


class CodeSyntax(Rule):
    id = "CODE-SYNTAX"
    doc = "setup, run, check and given are Python that compiles; errors point at the spec line."

    def check(self, spec: Spec) -> Iterator[SpecError]:
        if "setup" in spec.raw:
            yield from self._compile(
                spec,
                "file setup",
                Code(spec.raw["setup"], value_line(spec.raw, "setup", 1)),
                "exec",
            )
        for case in spec.cases:
            own_setup = case.setup[-1:] if "setup" in case.raw else []
            for code in own_setup:
                yield from self._compile(spec, f"setup of {case.id!r}", code, "exec")
            # A run is statements or one expression: compiling as statements first settles most
            # runs in one compile (an expression is a statement too, barring a few forms eval takes).
            # Blank lines before code change no verdict, so the unshifted text is compiled (up to
            # twice as fast); only code that does not compile is compiled again at its spec line.
            if not _code_compiles(case.run, "exec") and not _code_compiles(case.run, "eval"):
                yield from self._compile(spec, f"run of {case.id!r}", case.run, "exec")
            for name, strategy in case.given.items():
                yield from self._compile(
                    spec,
                    f"given.{name} of {case.id!r}",
                    Code(strategy, case.raw["given"].value_lines[name]),
                    "eval",
                )
            for index, _block in enumerate(case.expect):
                for line, expr in list_items(raw_block(case, index), "check"):
                    yield from self._compile(
                        spec, f"check of {case.id!r}", Code(str(expr), line), "eval"
                    )

    def _compile(self, spec: Spec, what: str, code: Code, mode: str) -> Iterator[SpecError]:
        if _code_compiles(code, mode):
            return
        try:
            compile(code.shifted(), str(spec.path), mode)
        except SyntaxError as exc:
            yield self.error(
                spec, exc.lineno or code.line, f"{what} is not valid Python: {exc.msg}"
            )
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            yield self.error(
                spec,
                code.line,
                f"{what} cannot be compiled: {type(exc).__name__}: {str(exc)[:200]}",
            )


def _code_compiles(code: Code, mode: str) -> bool:
    """Whether the code compiles: its text alone, without the padding that places it at its spec line."""
    return _compiles(code.text, mode)


def _compiles(source: str, mode: str) -> bool:
    try:
        compile(source, "<spec>", mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class CodeNames(Rule):
    id = "CODE-NAMES"
    doc = (
        "Spec code uses only names it defines or that the adapter provides (jax, jnp, np, lax, os, sys; `st`, "
        "`assume`, `note` and the drawn names with `given`; `result` in checks): a typo is the spec's bug, "
        "never a verdict on the implementation. Checked by pyflakes."
    )

    def check(self, spec: Spec) -> Iterator[SpecError]:
        names = SPEC_NAMES
        shared: frozenset[str] = frozenset()
        if "setup" in spec.raw:
            # The file's setup runs before every case: checked once, its names given to each case.
            setup = Code(spec.raw["setup"], value_line(spec.raw, "setup", 1))
            for line, message in undefined_in([(setup.text, setup.line, None)], names):
                yield self.error(spec, line, f"in the file's setup: {message}")
            shared = bound_names(setup.text)
        for case in spec.cases:
            for line, message in undefined_names(
                case, names | shared, skip_file_setup="setup" in spec.raw
            ):
                yield self.error(spec, line, f"in case {case.id!r}: {message}")


def _module_bound(table: symtable.SymbolTable) -> set[str]:
    return {
        s.get_name()
        for s in table.get_symbols()
        if s.is_assigned() or s.is_imported() or s.is_namespace()
    }


def bound_names(text: str) -> frozenset[str]:
    """The names a piece of module code binds at its top level."""
    try:
        return frozenset(_module_bound(symtable.symtable(text, "<spec>", "exec")))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()


def _free_globals(table: symtable.SymbolTable, bound: set[str] | frozenset[str]) -> set[str]:
    """Names read in this scope, or in those inside it, that resolve to globals nothing binds."""
    module = table.get_type() == "module"
    out = {
        s.get_name()
        for s in table.get_symbols()
        if s.is_referenced() and (module or s.is_global()) and s.get_name() not in bound
    }
    for child in table.get_children():
        out |= _free_globals(child, bound)
    return out


def undefined_in(
    pieces: list[tuple[str, int, str | None]], names: frozenset[str]
) -> Iterator[tuple[int, str]]:
    """(spec line, message) for each undefined name in these pieces of code, run in order as one module.

    A piece is (text, its first spec line, a name to bind it to as an expression or None for
    statements). A symbol-table pass (C, ~50 us) settles most code: no name read that nothing
    binds. pyflakes (~1 ms) words the rest, and also finds a name read before its binding.
    """
    lines: list[str] = []
    where: list[int] = []
    for text, line, wrap in pieces:
        body = text.splitlines() or [""]
        if wrap is not None:
            lines.append(f"{wrap} = (")
            where.append(line)
        lines.extend(body)
        where.extend(range(line, line + len(body)))
        if wrap is not None:
            lines.append(")")
            where.append(line + len(body) - 1)
    text = "\n".join(lines) + "\n"
    try:
        table = symtable.symtable(text, "<spec>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # CODE-SYNTAX reports it
    if not _free_globals(table, _module_bound(table) | names | _BUILTINS):
        return
    from pyflakes import checker, messages

    for message in checker.Checker(
        ast.parse(text), filename="<spec>", builtins=set(names)
    ).messages:
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal)):
            n = message.lineno
            yield (
                where[n - 1] if 0 < n <= len(where) else pieces[0][1],
                message.message % message.message_args,
            )


_BUILTINS = frozenset(dir(builtins))


def undefined_names(
    case: Case, names: frozenset[str], skip_file_setup: bool = False
) -> Iterator[tuple[int, str]]:
    """(spec line, message) for each name undefined in the case's code.

    The case's code is checked as one module in the order it runs: setup(s), run (an expression
    binds `result`), then every check of every block; lines map back to spec lines.
    """
    pieces: list[tuple[str, int, str | None]] = [
        (c.text, c.line, None) for c in case.setup[1 if skip_file_setup else 0 :]
    ]
    pieces.append(
        (case.run.text, case.run.line, "result" if _code_compiles(case.run, "eval") else None)
    )
    for block in case.expect + (case.documented.expect if case.documented else []):
        checks = block.expected.get("check", [])
        for expr in [checks] if isinstance(checks, str) else checks:
            pieces.append((str(expr), block.line, "_check"))
    available = (
        names | set(case.given) | ({"st", "assume", "note"} if case.given else set()) | {"result"}
    )
    yield from undefined_in(pieces, frozenset(available))
    for name, strategy in case.given.items():
        for _, message in undefined_in([(strategy, 1, "_strategy")], names | {"st"}):
            yield case.raw["given"].value_lines[name], f"{message} in the strategy for {name!r}"


class GivenNamesUsed(Rule):
    id = "GIVEN-UNUSED"
    doc = "Every name drawn by `given` is used by setup, run or a check; an unused draw tests nothing."

    def check_case(self, spec: Spec, case: Case) -> Iterator[SpecError]:
        if not case.given:
            return
        used: set[str] = set()
        texts = [c.text for c in case.setup] + [case.run.text]
        for _, outcome in _outcomes(case):
            checks = outcome.get("check", [])
            texts += [checks] if isinstance(checks, str) else list(checks)
        for text in texts:
            try:
                used |= {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        for name in case.given:
            if name not in used:
                yield self.error(
                    spec,
                    case.raw["given"].key_lines[name],
                    f"case {case.id!r} draws {name!r} but never uses it",
                )


def _outcomes(case: Case) -> Iterator[tuple[int, ExpectBlock]]:
    for block in case.expect:
        yield block.line, block.expected


class GlobalConfigInProcess(Rule):
    id = "ISOLATE-MISSING"
    doc = (
        "A case that changes process-wide state (jax.config.update, os.environ, os.chdir, np.seterr) runs "
        "with `isolate: process`, or it leaks into later cases."
    )

    def check(self, spec: Spec) -> Iterator[SpecError]:
        shared = [c for c in spec.cases if c.isolate != "process"]
        if "setup" in spec.raw and shared:
            # File setup runs before every case, so a change there leaks from every shared case.
            code = Code(spec.raw["setup"], value_line(spec.raw, "setup", 1))
            for line, what in global_changes(code):
                yield self.error(
                    spec,
                    line,
                    f"the file's setup changes process-wide state ({what}) and runs before "
                    f"{plural(len(shared), 'case')} without `isolate: process`; move it into isolated cases",
                )
        for case in shared:
            own = ([case.setup[-1]] if "setup" in case.raw else []) + [case.run]
            for code in own:
                for line, what in global_changes(code):
                    yield self.error(
                        spec,
                        line,
                        f"case {case.id!r} changes process-wide state in-process ({what}); add `isolate: process`",
                    )


# Calls that change process-wide state, by the last two parts of their dotted name.
_STATE_CALLS = {
    ("config", "update"),
    ("environ", "update"),
    ("environ", "pop"),
    ("environ", "popitem"),
    ("environ", "setdefault"),
    ("environ", "clear"),
    ("environ", "__setitem__"),
    ("environ", "__delitem__"),
    ("os", "putenv"),
    ("os", "unsetenv"),
    ("os", "chdir"),
    ("os", "fchdir"),
    ("os", "umask"),
    ("np", "seterr"),
    ("numpy", "seterr"),
    ("np", "set_printoptions"),
    ("numpy", "set_printoptions"),
}


# Every change global_changes finds is spelled with one of these: a part of each _STATE_CALLS
# name ("chdir" also in "fchdir"), setattr, or an assignment into `...environ[...]` / `...config.x`.
_STATE_WORDS = (
    "config",
    "environ",
    "putenv",
    "unsetenv",
    "chdir",
    "umask",
    "seterr",
    "set_printoptions",
    "setattr",
)


def _dotted(node: ast.AST) -> str:
    """`jax.config.update` for an attribute chain, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def global_changes(code: Code) -> Iterator[tuple[int, str]]:
    """(spec line, what) for each statement in `code` that changes process-wide state.

    Read from the syntax tree, so a comment or a string that mentions config.update is not
    a change; code that does not compile is CODE-SYNTAX's business.
    """
    text = code.text
    if text.isascii() and not any(word in text for word in _STATE_WORDS):
        return  # no name that any change below is spelled with (non-ASCII names are NFKC-folded: parse those)
    try:
        tree = ast.parse(code.shifted())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    lines = code.shifted().splitlines()
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            tail = tuple(name.split(".")[-2:])
            if tail in _STATE_CALLS:
                what = name
            elif name == "setattr" and node.args and _dotted(node.args[0]).endswith("config"):
                what = f"setattr({_dotted(node.args[0])}, ...)"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Subscript)
                    and _dotted(target.value).split(".")[-1] == "environ"
                ):
                    what = f"{_dotted(target.value)}[...] {'deleted' if isinstance(node, ast.Delete) else 'assigned'}"
                elif (
                    isinstance(target, ast.Attribute)
                    and _dotted(target.value).split(".")[-1] == "config"
                ):
                    what = f"{_dotted(target)} assigned"
        if what is not None:
            line = getattr(node, "lineno", code.line)
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            yield line, f"{what}: {text[:120]!r}"
