"""JAX's flags as the harness sees them: the table an adapter reports, and the upcoming defaults.

An adapter reports every flag it has (`AdapterInfo.flags`: name, default, value in effect,
whether JAX marks it an *upgrade*, help). JAX marks a boolean flag an upgrade when True is the
incoming behaviour and False the outgoing one, to be deprecated. The "upcoming defaults" of a
release are its upgrade flags that are still False by default; `jax-conformance run --modes
...,+upcoming` runs the suite with those of them that touch this suite's topics set to True,
together and each alone (so a change is attributed to its flag).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from jax_conformance import SPECS_DIR
from jax_conformance.errors import UsageError
from jax_conformance.mode import Mode, ModeChoice, expand_upcoming
from jax_conformance.records import AdapterInfo, FlagInfo

# The upgrade flags that change behaviour this suite specifies, and why (measured on JAX 0.10.2:
# docs/research/upcoming-flags.md). An upgrade flag a spec names in `when: flags` counts too.
# Left out, measured to change no case: jax_softmax_custom_jvp, jax_enable_custom_prng,
# jax_refs_to_pins (only together with jax_scan3).
TOPIC_FLAGS: dict[str, str] = {
    "jax_custom_vjp3": "jax.custom_vjp becomes a new implementation: closures over Tracers, "
    "nondiff_argnums and the rule errors change",
    "jax_disable_bwd_checks": "turns off the checks of a custom_vjp bwd rule's output",
    "jax_remat3": "a new remat, which changes how custom_vjp behaves under jax.checkpoint",
    "jax_scan3": "a new lax.scan, which changes custom rules under scan",
}


def flag_table(info: AdapterInfo) -> dict[str, FlagInfo]:
    return {f["name"]: f for f in info.get("flags") or []}


def unknown_flags(missing: Sequence[str], info: AdapterInfo, adapter: str) -> str:
    """One line: the flags the adapter lacks, the names closest to them, its upgrade flags, how many it has."""
    flags = info.get("flags") or []
    names = sorted(f["name"] for f in flags)
    close = sorted(
        {c for name in missing for c in difflib.get_close_matches(name, names, n=2)} - set(missing)
    )
    upgrades = sorted(f["name"] for f in flags if f.get("upgrade"))
    parts = [lacking_reason(missing, info, adapter)]
    if close:
        parts.append(f"did you mean {' or '.join(close)}?")
    if names:
        parts.append(
            f"its upgrade flags: {', '.join(upgrades) or 'none'}; {len(names)} flags in all "
            f"(`jax-conformance flags --adapter {adapter}` lists them)"
        )
    else:
        parts.append("it reports no flags")
    return "; ".join(parts)


def lacking_reason(missing: Sequence[str], info: AdapterInfo, adapter: str) -> str:
    """`flag X not available in adapter 'jax' 0.4.30`: why a mode that sets X cannot run there, the
    `reason` of the `unavailable` records (`records.unavailable`) a mode process writes for it."""
    return f"flag {', '.join(missing)} not available in adapter {adapter!r} {info['implementation_version']}"


def missing_flags(mode: Mode, info: AdapterInfo) -> list[str]:
    table = flag_table(info)
    return [name for name, _ in mode.flags if name not in table]


def upcoming_flags(info: AdapterInfo, spec_flags: Iterable[str] = ()) -> list[str]:
    """The upgrade flags still False by default that touch this suite (TOPIC_FLAGS, or named by a spec)."""
    wanted = set(TOPIC_FLAGS) | set(spec_flags)
    return sorted(
        f["name"]
        for f in info.get("flags") or []
        if f.get("upgrade") and f.get("default") is False and f["name"] in wanted
    )


def spec_flag_names(paths: Sequence[Path]) -> set[str]:
    """The flags the specs' `when` blocks name (specs that do not load are skipped: the run reports them)."""
    return set(spec_flag_places(paths))


def spec_flag_places(paths: Sequence[Path]) -> dict[str, str]:
    """Each flag the specs' `when` blocks name -> where it is first named (`file:line (case)`, the
    file relative to the specs' parent folder when it is under it): why `--upcoming` runs it."""
    from jax_conformance.errors import SpecFileErrors
    from jax_conformance.spec.loader import load_spec, spec_files

    places: dict[str, str] = {}
    for path in spec_files(list(paths)):
        try:
            spec = load_spec(path)
        except SpecFileErrors:
            continue
        shown = (
            path.relative_to(SPECS_DIR.parent) if path.is_relative_to(SPECS_DIR.parent) else path
        )
        for case in spec.cases:
            for block in case.expect:
                for name, _ in block.when.flags or ():
                    places.setdefault(name, f"{shown}:{block.line} ({case.id})")
    return places


def upcoming_reason(name: str, places: dict[str, str]) -> str:
    """Why the suite runs this upcoming flag: what it changes (TOPIC_FLAGS), else the spec naming it."""
    if name in TOPIC_FLAGS:
        return TOPIC_FLAGS[name]
    if name in places:
        return f"a spec names it in `when: flags`, at {places[name]}"
    return "named by a spec's `when: flags`"


def wrong_values(mode: Mode, info: AdapterInfo) -> list[str]:
    """The flags of `mode` set to a value the flag cannot take (a boolean flag set to a word that is
    no truth value: `jax_custom_vjp3=maybe`), each as `NAME takes true or false, not 'VALUE'`."""
    table = flag_table(info)
    out = []
    for name, value in mode.flags:
        flag = table.get(name)
        if flag is None or isinstance(value, bool):
            continue
        if isinstance(flag.get("value"), bool) or isinstance(flag.get("default"), bool):
            out.append(f"{name} takes true or false, not {value!r}")
    return out


def check_modes(modes: Sequence[Mode], info: AdapterInfo, adapter: str) -> None:
    """Every flag of every mode must be one the adapter has, set to a value it can take (UsageError: one
    line naming the flags it has, or the value it cannot take)."""
    missing = sorted({name for mode in modes for name in missing_flags(mode, info)})
    if missing:
        raise UsageError(unknown_flags(missing, info, adapter))
    for mode in modes:
        wrong = wrong_values(mode, info)
        if wrong:
            raise UsageError(f"--modes {mode.slug}: {'; '.join(wrong)}")


def modes_for(
    choice: ModeChoice,
    adapters: Sequence[str],
    specs: Sequence[str | Path],
    read_info: Callable[[str], AdapterInfo],
) -> dict[str, list[Mode]]:
    """Each adapter's modes from `--modes` (`run` and `mutate` read it alike): those asked for, then
    (with +upcoming) the upcoming-defaults modes on the first of them. When a mode sets flags, the
    adapter's flags are read (`read_info`: the client's `read_adapter_info`, which starts it);
    one it lacks is a usage error naming them."""
    upcoming = choice.upcoming
    modes = expand_upcoming(choice, [])  # the modes named (off-warn for +upcoming alone)
    out: dict[str, list[Mode]] = {a: list(modes) for a in adapters}
    if not upcoming and not any(m.flags for m in modes):
        return out
    named = spec_flag_names([Path(p) for p in specs] or [SPECS_DIR]) if upcoming else set()
    for adapter in adapters:
        info = read_info(adapter)
        check_modes(modes, info, adapter)
        if upcoming:
            flags = upcoming_flags(info, named)
            if not flags:
                print(
                    f"+upcoming: adapter {adapter} {info['implementation_version']} has no upgrade flag still off by "
                    "default that touches this suite; no mode added"
                )
            out[adapter] = expand_upcoming(choice, flags)
    return out
