"""The report's "Your rules" section: the `jax-conformance check` results saved in the report's
directory (OUT/contract/*.jsonl, written by `check --report OUT`, read into `ReportModel.contracts`
by the record layer), one table per checked function,
item x mode (or release), with its contract failure lines, the numerics items' (marked *) apart,
and, across releases, where an item changed; a
package's sweep (`check --package`) first says what was walked, what was not checked and why.

Rendered here as escaped HTML so that the page template needs only one hook."""

from __future__ import annotations

import html

from jax_conformance.records import CheckData, ItemRow, PackageSweep
from jax_conformance.text import plural

CELL = {"pass": "ok", "fail": "FAIL", "n/a": "n/a", "blocked": "blocked", "error": "ERROR"}
NUMERICS_TITLE = (
    "Numerics failures (* items: values JAX does not promise, docs/api_compatibility.md; "
    "not contract failures)"
)
CSS = {"pass": "o-passed", "fail": "o-failed", "error": "o-failed", "n/a": "o-not_applicable"}


def render_section(checks: list[CheckData]) -> str:
    """The section's HTML ("" when there are no checks)."""
    if not checks:
        return ""
    e = html.escape
    parts = [
        '<section id="your-rules">',
        "<h2>Your rules</h2>",
        "<p>Custom derivative rules checked with <code>jax-conformance check</code> against the "
        "contract JAX documents and tests for custom_vjp / custom_jvp functions.</p>",
    ]
    for check in checks:
        if "package" in check:
            parts += package_head(check["package"])
        verdict = (
            "every contract item holds" if check.get("ok") else "not every contract item holds"
        )
        numerics = check.get("numerics_failures", [])
        if numerics:
            verdict += (
                f" ({len(numerics)} numerics failure{'s' if len(numerics) > 1 else ''} apart)"
            )
        versions = ", ".join(dict.fromkeys(str(v) for v in check.get("jax_versions", [])))
        for target in check.get("targets", []):
            kinds = "/".join(target.get("kinds", []))
            parts.append(
                f'<h3>{e(target["label"])}</h3><p class="meta">{e(kinds + ", " if kinds else "")}'
                f"JAX {e(versions)}: <strong>{e(verdict)}</strong> · <code>{e(check.get('command', ''))}</code></p>"
            )
            head = "".join(f"<th>{e(c)}</th>" for c in check.get("columns", []))
            rows = []
            for row in target.get("rows", []):
                cells = "".join(
                    f'<td class="{CSS.get(s, "")}">{e(CELL.get(s, s))}</td>' for s in row["cells"]
                )
                rows.append(f"<tr>{item_cell(row)}{cells}</tr>")
            parts.append(
                f'<table class="your-rules"><thead><tr><th>item</th>{head}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
        for title, lines in (
            ("Changes between releases", check.get("changes", [])),
            ("Failures", check.get("failures", [])),
            (NUMERICS_TITLE, numerics),
        ):
            if lines:
                parts.append(f"<h4>{title}</h4><ul>")
                parts += [f"<li><code>{e(line)}</code></li>" for line in lines]
                parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def item_cell(row: ItemRow) -> str:
    """An item's cell: its id (marked `*` for a numerics item), what it checks and the JAX promise
    (its source, its basis) on hover."""
    e = html.escape
    title = row.get("statement", "")
    if "source" in row:
        title += f"\nJAX promise ({row.get('basis', '')}): {row['source']}"
    mark = " *" if row.get("numerics") else ""
    return f'<td title="{e(title)}">{e(row["item"] + mark)}</td>'


def package_head(sweep: PackageSweep) -> list[str]:
    """A package's sweep (`check --package`): what was walked and checked, and what was not; the
    tables of the rules checked follow."""
    e = html.escape
    parts = [
        f'<h3 class="package">Package {e(sweep["package"])}</h3>',
        f'<p class="meta">{plural(sweep["modules"], "module")} walked, '
        f"{plural(len(sweep['checked']), 'rule')} checked, "
        f"{len(sweep['unchecked'])} not checked, {len(sweep['import_errors'])} modules did not "
        f"import · {sweep['seconds']:.0f}s"
        + (f" · table <code>{e(sweep['pyproject'])}</code>" if sweep["pyproject"] else "")
        + "</p>",
    ]
    for title, rows in (
        ("Not checked", sweep["unchecked"]),
        ("Did not import", sweep["import_errors"]),
    ):
        if rows:
            parts.append(f"<h4>{title}</h4><ul>")
            parts += [f"<li><code>{e(name)}</code>: {e(why)}</li>" for name, why in rows]
            parts.append("</ul>")
    return parts
