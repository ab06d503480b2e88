"""Checks of what a user passed, shared by the command line and the pytest plugin.

Both `jax-conformance` (its commands) and the pytest plugin in a mode process take option
values and paths that must be refused the same way, before anything starts: a time limit of 0,
a `--specs` path that holds no spec, an adapter that is not installed, a `-k` expression pytest
cannot parse. The checks live here, below both, so the mode process does not depend on the
command layer. Each raises `UsageError`; the command line prints it as one line and the plugin
turns it into pytest's usage error (the argparse types are in `options`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from jax_conformance.errors import UsageError
from jax_conformance.text import plural

if TYPE_CHECKING:
    from _pytest.mark.expression import Expression


def check_spec_paths(paths: list[Path], option: str = "--specs") -> None:
    """A spec path that does not exist, or holds no spec file, is a usage error naming it."""
    from jax_conformance.spec.loader import is_spec_file, spec_files

    for path in paths:
        what = f"{option} {path}" if option else str(path)
        if not path.exists():
            raise UsageError(f"{what}: no such file or directory")
        if path.is_dir():
            if not any(is_spec_file(p) for p in spec_files([path])):
                raise UsageError(f"{what}: holds no spec file (a *.yaml or *.yml with `cases:`)")
        elif not is_spec_file(path):
            raise UsageError(f"{what}: not a spec file (a *.yaml or *.yml with `cases:`)")


def extend_pythonpath(dirs: Iterable[str | Path], option: str = "--pythonpath") -> None:
    """--pythonpath: directories spec code imports from (a library's own modules), put before
    PYTHONPATH for this process and every process it starts (mode processes, workers); a directory
    that does not exist is a usage error naming it."""
    import os
    import sys

    paths = []
    for d in dirs:
        path = Path(d).resolve()
        if not path.is_dir():
            raise UsageError(f"{option} {d}: no such directory")
        paths.append(str(path))
    if not paths:
        return
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*paths, *rest]))
    sys.path[:0] = [p for p in paths if p not in sys.path]


def check_adapter(name: str, option: str = "--adapter") -> None:
    """An adapter name must be installed (the `jax_conformance.adapters` entry points) or an
    importable `module:Class`; checked here, before any process is started."""
    from jax_conformance.adapters import installed_adapters

    installed = installed_adapters()
    if name in installed:
        return
    module, sep, cls = name.partition(":")
    if sep and module and cls:
        try:
            if importlib.util.find_spec(module) is not None:
                return
        except (ImportError, ValueError):
            pass
        raise UsageError(f"{option} {name}: no module {module!r} to import")
    raise UsageError(
        f"{option} {name}: unknown adapter; installed: {', '.join(sorted(installed)) or 'none'} "
        "(or give module:Class)"
    )


def check_expression(option: str, expr: str) -> None:
    """A -k / -m expression pytest would refuse in every mode, refused once, before any mode starts.

    pytest has no public way to parse a -k/-m expression without collecting (pytest 9.0), so this
    is the one place that uses its private `_pytest.mark.expression`; if pytest moves it, each
    mode's pytest still refuses the expression itself.
    """
    _compile(option, expr)


def _compile(option: str, expr: str) -> Expression | None:
    """The compiled expression (None where pytest's parser is not where it was); UsageError if it does not parse."""
    try:
        from _pytest.mark.expression import Expression
    except ImportError:
        return None
    try:
        return Expression.compile(expr)
    except Exception as exc:  # SyntaxError from pytest 8.1 on, ParseError before
        why = getattr(exc, "msg", None) or str(exc)
        column = getattr(exc, "column", None) or (
            exc.offset if isinstance(exc, SyntaxError) else None
        )
        raise UsageError(
            f"{option} {expr!r}: not a pytest expression ({f'at column {column}: ' if column else ''}{why})"
        ) from None


Selection = Callable[[Iterable[str]], bool]


def keyword_selection(expr: str, option: str = "-k") -> Selection | None:
    """A -k expression as a test over a case's own words (its id, its claim, its tags), never the
    mode, backend or file it runs in, so that every mode selects the same cases. A word of the
    expression matches when it is a substring of one of them, ignoring case, as pytest's -k does
    over item names. None where pytest's parser is not available (pytest's own -k applies then)."""
    compiled = _compile(option, expr)
    if compiled is None:
        return None

    def selects(names: Iterable[str]) -> bool:
        lowered = [n.lower() for n in names]

        def match(word: str, /, **kwargs: object) -> bool:
            if kwargs:
                raise UsageError(f"{option} {expr!r}: keyword expressions take no call parameters")
            w = word.lower()
            return any(w in n for n in lowered)

        return bool(compiled.evaluate(match))

    return selects


def mark_selection(expr: str, option: str = "-m") -> Selection | None:
    """A -m expression as a test over a case's tags (each a marker of its items): a word matches a tag of that name."""
    compiled = _compile(option, expr)
    if compiled is None:
        return None

    def selects(tags: Iterable[str]) -> bool:
        have = set(tags)
        return bool(compiled.evaluate(lambda name, /, **kwargs: not kwargs and name in have))

    return selects


def selection_counts(
    keyword: str | None, markexpr: str | None, paths: list[Path]
) -> tuple[int, int] | None:
    """(cases -k and -m select, cases in all) over the specs in `paths`, matched over each case's
    id, claim and tags as the mode processes do; None when a spec file does not load (its cases are
    not known here) or pytest's expression parser is not where it was."""
    by_words = keyword_selection(keyword, "-k") if keyword else None
    by_tags = mark_selection(markexpr, "-m") if markexpr else None
    if (keyword and by_words is None) or (markexpr and by_tags is None):
        return None
    from jax_conformance.errors import SpecFileErrors
    from jax_conformance.spec.cache import SpecCache
    from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files

    cache = SpecCache.default()
    selected = total = 0
    for path in spec_files(paths):
        if not is_spec_file(path):
            continue
        try:
            spec = load_spec(path, cache=cache)
        except SpecFileErrors:
            return None
        for case in spec.cases:
            total += 1
            selected += (
                by_words is None or by_words([f"{case.id}[", case.claim, *case.tags])
            ) and (by_tags is None or by_tags(case.tags))
    return selected, total


def check_selection(keyword: str | None, markexpr: str | None, paths: list[Path]) -> None:
    """-k and -m must select some case of the specs (`selection_counts`; unknown: not refused)."""
    if not keyword and not markexpr:
        return
    counts = selection_counts(keyword, markexpr, paths)
    if counts is None or counts[0]:
        return
    given = " and ".join(f"{o} {e!r}" for o, e in (("-k", keyword), ("-m", markexpr)) if e)
    raise UsageError(
        f"{given} selects no case (of {counts[1]} in {', '.join(map(str, paths))}; -k matches a case's id, "
        "claim and tags, -m its tags)"
    )


def check_specs_load(paths: list[Path], option: str = "--specs") -> None:
    """Every spec file under `paths` loads (YAML, schema, the loader's rules), else the first problem
    as one line (`file:line: RULE message`), with how many more and the command that lists them:
    a broken spec is a usage error, found before a directory is made or a mode process started."""
    from jax_conformance.errors import SpecFileErrors
    from jax_conformance.spec.cache import SpecCache
    from jax_conformance.spec.loader import is_spec_file, load_spec, spec_files

    cache = SpecCache.default()
    broken: list[SpecFileErrors] = []
    for path in spec_files(paths):
        if is_spec_file(path):
            try:
                load_spec(path, cache=cache)
            except SpecFileErrors as exc:
                broken.append(exc)
    if broken:
        errors = [e for b in broken for e in b.errors]
        more = (
            f" ({len(errors) - 1} more in {plural(len(broken), 'file')}: jax-conformance lint "
            f"{' '.join(map(str, paths))})"
            if len(errors) > 1
            else ""
        )
        raise UsageError(f"{option}: {errors[0].format(Path.cwd())}{more}")
