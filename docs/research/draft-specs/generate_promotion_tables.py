"""Generate the promotion table data files from the lattice (never type a cell by hand).

    .venv/bin/python docs/research/draft-specs/generate_promotion_tables.py
    .venv/bin/python docs/research/draft-specs/generate_promotion_tables.py --check-doc type_promotion.rst

Writes, next to this script:
- promotion/documented-x64.yaml: the documented 18x18 table (x64 on), each cell the join on the
  lattice of docs/type_promotion.rst as adapters/reference/promotion.py builds it. With
  --check-doc it is compared with the HTML table in a copy of type_promotion.rst (the doc's
  table is read only to check, never to fill a cell).
- promotion/binary-0.10.2.yaml: every ordered pair of the 18 documented types and the small
  dtypes, with the outcome of promote_types, result_type and `+` in each of the 8 modes
  (x64 off-warn / off-error / off-allow / on x standard / strict), the documented value where a
  mode's outcome differs from the documented table canonicalized to that mode, and a basis.

Outcome tokens: `int32` (strong), `float32*` (weak_type=True), `raises TypePromotionError`,
`raises ValueError` (a 64-bit operand refused in off-error). A map of modes to tokens collapses
to one token when every mode agrees, and to `{standard: .., strict: ..}` or per x64 mode
otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
X64_MODES = ["off-warn", "off-error", "off-allow", "on"]
PROMOTIONS = ["standard", "strict"]


def load_reference() -> Any:
    path = REPO / "adapters" / "reference" / "promotion.py"
    spec = importlib.util.spec_from_file_location("reference_promotion", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["reference_promotion"] = mod
    spec.loader.exec_module(mod)
    return mod


P = load_reference()


# Operands JAX 0.10.2 cannot make on CPU as asked (measured; not promotion's business): the
# harness should mark their `add` cells not applicable there.
CPU_NOTES = {
    "int1": "jnp.ones((2,), int1) gives a bool array",
    "uint1": "jnp.ones((2,), uint1) gives a bool array",
    "float6_e2m3fn": "raises JaxRuntimeError: Invalid XLA PrimitiveType",
    "float6_e3m2fn": "raises JaxRuntimeError: Invalid XLA PrimitiveType",
}


def mode_of(x64: str, promotion: str) -> Any:
    return P.Mode(x64=x64 == "on", explicit_x64_dtypes="warn" if x64 == "on" else x64.split("-")[1],
                  promotion=promotion)  # fmt: skip


def token(fn: Any, *args: Any, **kwargs: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(*args, **kwargs)
        except Exception as e:
            return f"raises {type(e).__name__}"
    if isinstance(r, tuple):
        return str(r[0]) + ("*" if r[1] else "")
    return str(r)


def spec_arg(node: str) -> Any:
    return P.PY_TYPE_OF_WEAK.get(node, node)


def operand(node: str, m: Any) -> Any:
    if node in P.WEAK_NODES:
        return P.weak_operand(node, m)  # the same as the Python scalar (checked by the bench)
    return P.array_operand(node, m)


def _add(a: str, b: str, m: Any) -> tuple[str, bool]:
    return P.lattice_result_type(operand(a, m), operand(b, m), mode=m)


def outcomes(a: str, b: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {"promote_types": {}, "result_type": {}, "add": {}}
    for pr in PROMOTIONS:
        for x in X64_MODES:
            m = mode_of(x, pr)
            key = f"{pr}/{x}"
            sa, sb = spec_arg(a), spec_arg(b)
            out["promote_types"][key] = token(P.promote_types, sa, sb, m)
            out["result_type"][key] = token(
                P.result_type, sa, sb, mode=m, return_weak_type_flag=True
            )
            out["add"][key] = token(_add, a, b, m)
    return out


def collapse(per_mode: dict[str, str]) -> Any:
    vals = set(per_mode.values())
    if len(vals) == 1:
        return vals.pop()
    out: dict[str, Any] = {}
    for pr in PROMOTIONS:
        sub = {x: per_mode[f"{pr}/{x}"] for x in X64_MODES}
        if len(set(sub.values())) == 1:
            out[pr] = next(iter(sub.values()))
        else:
            out[pr] = _collapse_x64(sub)
    return out


def _collapse_x64(sub: dict[str, str]) -> dict[str, str]:
    offs = {sub[x] for x in X64_MODES[:3]}
    if len(offs) == 1:
        return {"off": sub["off-warn"], "on": sub["on"]}
    return dict(sub)


def documented_tokens(doc_node: str) -> dict[str, str]:
    """The documented (x64-on) cell canonicalized to each x64 setting: off and on."""
    out = {}
    for x64, name in ((False, "off"), (True, "on")):
        dt, weak = P.documented_in_mode(doc_node, x64)
        out[name] = dt + ("*" if weak else "")
    return out


def basis(a: str, b: str) -> str:
    extra = set(P.SMALL_INTS + P.SMALL_FLOATS)
    if a in extra or b in extra:
        return "tested"  # dtypes_test.py testPromoteDtypesStandard / testFloatPromotionError
    return "documented"  # type_promotion.rst's table and its strict section


def flow(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{flow(k)}: {flow(x)}" for k, x in v.items()) + "}"
    s = str(v)
    # quoted: YAML's specials, and on/off (YAML 1.1 booleans)
    return f'"{s}"' if re.search(r"[*:{}\[\],]|^raises|^(on|off)$", s) else s


def write_documented(path: Path) -> dict[tuple[str, str], str]:
    table = P.documented_table()
    codes = [P.CODE_OF[n] for n in P.DOC_ORDER]
    lines = [
        "# GENERATED by docs/research/draft-specs/generate_promotion_tables.py: do not edit.",
        "# The documented binary promotion table (x64 on): the join of each pair on the lattice",
        "# of docs/type_promotion.rst (adapters/reference/promotion.py, DOC_EDGES).",
        "source: {doc: docs/type_promotion.rst, section: Type promotion semantics}",
        "lattice: {" + ", ".join(f"{k}: [{', '.join(v)}]" for k, v in P.DOC_EDGES.items()) + "}",
        "codes: {" + ", ".join(f'"{k}": {v}' for k, v in P.DOC_CODES.items()) + "}",
        "columns: [" + ", ".join(f'"{c}"' for c in codes) + "]",
        "rows:",
    ]
    for a in P.DOC_ORDER:
        row = ", ".join(f'"{P.CODE_OF[table[a, b]]}"' for b in P.DOC_ORDER)
        lines.append(f'  "{P.CODE_OF[a]}": [{row}]')
    path.write_text("\n".join(lines) + "\n")
    return table


def write_binary(path: Path) -> int:
    doc = P.documented_table()
    nodes = P.DOC_ORDER + [n for n in P.SMALL_INTS + P.SMALL_FLOATS if P.available(n)]
    lines = [
        "# GENERATED by docs/research/draft-specs/generate_promotion_tables.py: do not edit.",
        "# Every ordered pair: promote_types(a, b), result_type(a, b) (dtype and weak flag: `*`),",
        "# and a + b on operands (strong: jnp.ones((2,), dtype); i*/f*/c*: the Python scalar and",
        "# jnp.asarray of it), per mode. Derived from the lattice (adapters/reference/promotion.py),",
        "# which agrees with JAX 0.10.2 on every measured cell (docs/research/promotion-0.10.2.md).",
        "implementation: {jax: '0.10.2'}",
        "modes: {x64: [off-warn, off-error, off-allow, on], promotion: [standard, strict]}",
        "operands:",
    ]
    for n in nodes:
        if n in P.WEAK_NODES:
            py = {"int*": "1", "float*": "1.0", "complex*": "1j"}[n]
            lines.append(f'  "{n}": {{spec: {P.PY_TYPE_OF_WEAK[n].__name__}, values: ["{py}", '
                         f'"jnp.asarray({py})"]}}')  # fmt: skip
        elif n == "bool":
            lines.append(f'  {n}: {{spec: "np.dtype(\'bool\')", values: ["jnp.ones((2,), \'bool\')", '
                         '"True"]}')  # fmt: skip
        else:
            extra = ""
            if n in P.TO_32:
                extra = (f", off-warn: {{operand: {P.TO_32[n]}, warns: UserWarning}}, "
                         f"off-error: {{operand: raises ValueError}}")  # fmt: skip
            if n in CPU_NOTES:
                extra += f", cpu: {flow(CPU_NOTES[n])}"
            lines.append(f'  {n}: {{spec: "np.dtype(\'{n}\')", values: ["jnp.ones((2,), \'{n}\')"]'
                         f"{extra}}}")  # fmt: skip
    lines.append("cells:")
    count = 0
    for a in nodes:
        for b in nodes:
            o = outcomes(a, b)
            rec = {"pair": f"[{flow(a)}, {flow(b)}]", "basis": basis(a, b)}
            parts = [f"pair: {rec['pair']}", f"basis: {rec['basis']}"]
            if (a, b) in doc:
                d = doc[a, b]
                parts.append(f"doc: {flow(P.CODE_OF[d])}")
                # docs vs code: where a standard-mode outcome is not the documented cell
                # canonicalized to the mode
                dt = documented_tokens(d)
                differs = {}
                for fn in ("promote_types", "result_type", "add"):
                    for x in X64_MODES:
                        want = dt["on" if x == "on" else "off"]
                        got = o[fn][f"standard/{x}"]
                        if fn == "promote_types":
                            want = want.rstrip("*")
                        if got == "raises ValueError":
                            continue  # off-error refuses the 64-bit operand: no such cell
                        if got != want:
                            differs.setdefault(fn, []).append(x)
                if differs:
                    parts.append("docs_differ: {" + ", ".join(
                        f"{fn}: [{', '.join(xs)}]" for fn, xs in differs.items()) + "}")  # fmt: skip
            for fn in ("promote_types", "result_type", "add"):
                parts.append(f"{fn}: {flow(collapse(o[fn]))}")
            lines.append("  - {" + ", ".join(parts) + "}")
            count += 1
    path.write_text("\n".join(lines) + "\n")
    return count


def check_doc(rst: Path, table: dict[tuple[str, str], str]) -> list[str]:
    """Compare the derived table with the HTML table of type_promotion.rst."""
    text = rst.read_text()
    rows = re.findall(r"<tr><td>([^<]+)</td>(.*?)</tr>", text)
    problems = []
    for head, cells in rows:
        got = re.findall(r"<td[^>]*>([^<]+)</td>", cells)
        a = P.DOC_CODES[head]
        want = [P.CODE_OF[table[a, b]] for b in P.DOC_ORDER]
        if got != want:
            problems.append(f"row {head}: doc {got} lattice {want}")
    if len(rows) != 18:
        problems.append(f"found {len(rows)} rows in {rst}")
    return problems


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check-doc", type=Path, help="a copy of JAX's docs/type_promotion.rst")
    args = ap.parse_args()
    out = HERE / "promotion"
    out.mkdir(exist_ok=True)
    table = write_documented(out / "documented-x64.yaml")
    n = write_binary(out / "binary-0.10.2.yaml")
    print(
        f"wrote {out / 'documented-x64.yaml'} (18x18) and {out / 'binary-0.10.2.yaml'} ({n} cells)"
    )
    if args.check_doc:
        problems = check_doc(args.check_doc, table)
        print("type_promotion.rst's table:", "identical to the lattice's" if not problems else "")
        for p in problems:
            print(" ", p)
        sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
