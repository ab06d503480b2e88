"""JAX's promotion table, measured cell by cell in every mode, and compared with the lattice.

    .venv/bin/python bench/promotion_observed.py             # measure (8 modes, one at a time)
    .venv/bin/python bench/promotion_observed.py --compare   # compare the JSON with the reference
                                                             # and with the documented table
    .venv/bin/python bench/promotion_observed.py --worker off-warn-standard   # one mode, JSON out

Modes: x64 off with jax_explicit_x64_dtypes warn / error / allow, and x64 on, each with
jax_numpy_dtype_promotion standard and strict. Each mode runs in its own interpreter
(JAX_ENABLE_X64, JAX_EXPLICIT_X64_DTYPES, JAX_NUMPY_DTYPE_PROMOTION in its environment), one
after the other.

What a mode records (docs/research/promotion-observed-0.10.2.json):
- specifier pairs (the 15 strong dtypes of type_promotion.rst's table, the small dtypes, and
  the Python types int/float/complex for i*, f*, c*), every ordered pair:
  `jnp.promote_types(a, b)`, `jnp.result_type(a, b)` and
  `jax.dtypes.result_type(a, b, return_weak_type_flag=True)`;
- operand pairs (a strong array `jnp.ones((2,), dtype)` per dtype; the Python scalars True, 1,
  1.0, 1j; the weak arrays `jnp.asarray(1)`, `jnp.asarray(1.0)`, `jnp.asarray(1j)`), every
  ordered pair: `jax.dtypes.result_type(x, y, return_weak_type_flag=True)` and `x + y` eagerly
  and under `jax.jit` (a fresh jitted lambda per pair: cold is its first call, trace and compile
  included, warm the second); each gives dtype and weak_type, or the error's type and message;
  the warnings raised are counted and the first kept.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "research" / "promotion-observed-0.10.2.json"
MODES = [
    f"{x}-{p}" for x in ("off-warn", "off-error", "off-allow", "on") for p in ("standard", "strict")
]
DOC_STRONG = [
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip
EXTRA = [
    "int1", "uint1", "int2", "uint2", "int4", "uint4",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
]  # fmt: skip
WEAK = ["int*", "float*", "complex*"]
PY_SCALARS = {"py:bool": True, "py:int": 1, "py:float": 1.0, "py:complex": 1j}
WEAK_ARRAYS = {"weak:int": 1, "weak:float": 1.0, "weak:complex": 1j}


def load_reference() -> Any:
    """adapters/reference/promotion.py by path (it needs no package, and no JAX)."""
    path = REPO / "adapters" / "reference" / "promotion.py"
    spec = importlib.util.spec_from_file_location("reference_promotion", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["reference_promotion"] = mod
    spec.loader.exec_module(mod)
    return mod


def mode_env(mode: str) -> dict[str, str]:
    x64, _, rest = mode.partition("-")
    if x64 == "on":
        explicit, promotion = "warn", rest
    else:
        explicit, _, promotion = rest.partition("-")
    return {
        "JAX_ENABLE_X64": "1" if x64 == "on" else "0",
        "JAX_EXPLICIT_X64_DTYPES": explicit,
        "JAX_NUMPY_DTYPE_PROMOTION": promotion,
        "JAX_PLATFORMS": "cpu",
    }


# ---------------------------------------------------------------- the worker (one mode, JAX)


def worker(mode: str, jit_every: int = 1) -> dict[str, Any]:
    t_start = time.perf_counter()
    import jax
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np

    t_import = time.perf_counter() - t_start
    env = mode_env(mode)
    assert jax.config.jax_enable_x64 == (env["JAX_ENABLE_X64"] == "1"), "JAX_ENABLE_X64 not read"
    assert jax.config.jax_explicit_x64_dtypes.name.lower() == env["JAX_EXPLICIT_X64_DTYPES"]
    assert jax.config.jax_numpy_dtype_promotion.name.lower() == env["JAX_NUMPY_DTYPE_PROMOTION"]

    def dt(name: str) -> Any:
        return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)

    def outcome(fn: Any) -> dict[str, Any]:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            try:
                r = fn()
            except Exception as e:  # the cell's outcome
                out = {"error": f"{type(e).__module__}.{type(e).__qualname__}",
                       "message": str(e)[:400]}  # fmt: skip
            else:
                if isinstance(r, tuple):
                    out = {"dtype": np.dtype(r[0]).name, "weak": bool(r[1])}
                elif hasattr(r, "weak_type"):
                    out = {"dtype": r.dtype.name, "weak": bool(r.weak_type)}
                else:
                    out = {"dtype": np.dtype(r).name}
        if ws:
            out["warnings"] = len(ws)
            out["warning"] = f"{ws[0].category.__name__}: {str(ws[0].message)[:200]}"
        return out

    strong = [n for n in DOC_STRONG + EXTRA if hasattr(ml_dtypes, n) or hasattr(np, n)]
    specs: dict[str, Any] = {n: dt(n) for n in strong}
    specs.update({"int*": int, "float*": float, "complex*": complex})

    rec: dict[str, Any] = {"mode": mode, "env": env, "jax": jax.__version__,
                           "ml_dtypes": ml_dtypes.__version__, "numpy": np.__version__,
                           "backend": jax.default_backend(), "import_s": round(t_import, 3)}  # fmt: skip
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    spec_cells: dict[str, dict[str, Any]] = {}
    for a, sa in specs.items():
        for b, sb in specs.items():
            spec_cells[f"{a}|{b}"] = {
                "promote_types": outcome(lambda sa=sa, sb=sb: jnp.promote_types(sa, sb)),
                "jnp.result_type": outcome(lambda sa=sa, sb=sb: jnp.result_type(sa, sb)),
                "result_type_weak": outcome(
                    lambda sa=sa, sb=sb: jax.dtypes.result_type(sa, sb, return_weak_type_flag=True)
                ),
            }
    timings["specifier_pairs_s"] = time.perf_counter() - t0
    rec["specifiers"] = list(specs)
    rec["specifier_cells"] = spec_cells

    # operands
    operands: dict[str, Any] = {}
    made: dict[str, Any] = {}
    for n in strong:
        o = outcome(lambda n=n: jnp.ones((2,), dtype=dt(n)))
        made[n] = o
        if "error" not in o:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                operands[n] = jnp.ones((2,), dtype=dt(n))
    operands.update(PY_SCALARS)
    for label, v in WEAK_ARRAYS.items():
        made[label] = outcome(lambda v=v: jnp.asarray(v))
        operands[label] = jnp.asarray(v)
    rec["operands"] = made
    rec["operand_labels"] = list(operands)

    op_cells: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    for a, xa in operands.items():
        for b, xb in operands.items():
            op_cells[f"{a}|{b}"] = {
                "result_type_weak": outcome(
                    lambda xa=xa, xb=xb: jax.dtypes.result_type(xa, xb, return_weak_type_flag=True)
                )
            }
    timings["result_type_values_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    for a, xa in operands.items():
        for b, xb in operands.items():
            if a in PY_SCALARS and b in PY_SCALARS:
                continue  # Python's own arithmetic, not JAX's
            op_cells[f"{a}|{b}"]["eager"] = outcome(
                lambda xa=xa, xb=xb: jax.block_until_ready(xa + xb)
            )
    timings["eager_s"] = time.perf_counter() - t0

    cold = warm = 0.0
    jit_pairs = 0
    labels = list(operands)
    for a, xa in operands.items():
        for b, xb in operands.items():
            if (labels.index(a) + labels.index(b)) % jit_every:
                continue  # a deterministic sample: every label meets some partners
            jit_pairs += 1
            f = jax.jit(lambda x, y: x + y)
            t0 = time.perf_counter()
            op_cells[f"{a}|{b}"]["jit_cold"] = outcome(
                lambda xa=xa, xb=xb, f=f: jax.block_until_ready(f(xa, xb))
            )
            t1 = time.perf_counter()
            op_cells[f"{a}|{b}"]["jit_warm"] = outcome(
                lambda xa=xa, xb=xb, f=f: jax.block_until_ready(f(xa, xb))
            )
            cold += t1 - t0
            warm += time.perf_counter() - t1
    timings["jit_cold_s"] = cold
    timings["jit_warm_s"] = warm
    rec["operand_cells"] = op_cells
    rec["timings"] = {k: round(v, 3) for k, v in timings.items()}
    rec["counts"] = {"specifier_pairs": len(spec_cells), "operand_pairs": len(op_cells),
                     "eager_pairs": sum("eager" in c for c in op_cells.values()),
                     "jit_pairs": jit_pairs, "jit_every": jit_every}  # fmt: skip
    rec["total_s"] = round(time.perf_counter() - t_start, 3)
    return rec


_TUPLE = re.compile(r"^Input dtypes (\(.*?\)) have")


def pack(rec: dict[str, Any]) -> dict[str, Any]:
    """Messages and warnings stored once per mode: a cell holds [template index, dtype tuple]."""
    templates: dict[str, int] = {}

    def visit(o: Any) -> None:
        if isinstance(o, dict):
            for k in ("message", "warning"):
                if isinstance(o.get(k), str):
                    m = o[k]
                    mm = _TUPLE.match(m)
                    t = mm.group(1) if mm else ""
                    tmpl = m.replace(t, "{dtypes}", 1) if t else m
                    o[k] = [templates.setdefault(tmpl, len(templates)), t]
            for v in o.values():
                visit(v)

    visit(rec)
    rec["messages"] = list(templates)
    return rec


def unpack(rec: dict[str, Any]) -> dict[str, Any]:
    templates = rec.get("messages")
    if templates is None:
        return rec

    def visit(o: Any) -> None:
        if isinstance(o, dict):
            for k in ("message", "warning"):
                if isinstance(o.get(k), list):
                    i, t = o[k]
                    o[k] = templates[i].replace("{dtypes}", t, 1) if t else templates[i]
            for v in o.values():
                visit(v)

    visit(rec)
    return rec


def write_json(data: dict[str, Any]) -> None:
    """One line per cell, so a diff of two measurements reads cell by cell."""
    lines = ["{", ' "modes": {']
    modes = list(data["modes"].items())
    for i, (mode, rec) in enumerate(modes):
        lines.append(f"  {json.dumps(mode)}: {{")
        keys = sorted(rec)
        for j, k in enumerate(keys):
            v = rec[k]
            end = "," if j < len(keys) - 1 else ""
            if isinstance(v, dict) and k.endswith("cells"):
                lines.append(f"   {json.dumps(k)}: {{")
                cells = sorted(v.items())
                for n, (ck, cv) in enumerate(cells):
                    sep = "," if n < len(cells) - 1 else ""
                    lines.append(f"    {json.dumps(ck)}: {json.dumps(cv, sort_keys=True)}{sep}")
                lines.append(f"   }}{end}")
            else:
                lines.append(f"   {json.dumps(k)}: {json.dumps(v, sort_keys=True)}{end}")
        lines.append("  }" + ("," if i < len(modes) - 1 else ""))
    lines += [" }", "}"]
    OUT.write_text("\n".join(lines) + "\n")


def measure(modes: list[str], jit_every: int) -> None:
    data: dict[str, Any] = {"modes": {}}
    if OUT.exists():
        data = json.loads(OUT.read_text())
    for mode in modes:
        t0 = time.perf_counter()
        env = {**os.environ, **mode_env(mode)}
        p = subprocess.run(
            [sys.executable, __file__, "--worker", mode, "--jit-every", str(jit_every)],
            env=env,
            capture_output=True,
            text=True,
        )
        if p.returncode:
            sys.exit(f"{mode}: worker failed\n{p.stderr[-3000:]}")
        rec = json.loads(p.stdout)
        rec["process_s"] = round(time.perf_counter() - t0, 3)
        data["modes"][mode] = pack(rec)
        print(f"{mode}: {rec['process_s']:.1f}s {rec['timings']}", flush=True)
        write_json(data)


# ---------------------------------------------------------------- comparison (no JAX)


def ref_mode(P: Any, mode: str) -> Any:
    env = mode_env(mode)
    return P.Mode(x64=env["JAX_ENABLE_X64"] == "1", explicit_x64_dtypes=env["JAX_EXPLICIT_X64_DTYPES"],
                  promotion=env["JAX_NUMPY_DTYPE_PROMOTION"])  # fmt: skip


def ref_outcome(fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    import numpy as np

    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            r = fn(*args, **kwargs)
        except Exception as e:
            out = {"error": type(e).__name__, "message": str(e)}
        else:
            if isinstance(r, tuple):
                out = {"dtype": np.dtype(r[0]).name if not isinstance(r[0], str) else r[0],
                       "weak": bool(r[1])}  # fmt: skip
            else:
                out = {"dtype": np.dtype(r).name}
    if ws:
        out["warnings"] = len(ws)
    return out


def same(obs: dict[str, Any], ref: dict[str, Any]) -> bool:
    if "error" in obs or "error" in ref:
        if "error" not in obs or "error" not in ref:
            return False
        if obs["error"].rsplit(".", 1)[-1] != ref["error"]:
            return False
        return norm_msg(obs["message"]) == norm_msg(ref["message"][:400])
    if obs.get("dtype") != ref.get("dtype"):
        return False
    if "weak" in obs and "weak" in ref and obs["weak"] != ref["weak"]:
        return False
    return bool(obs.get("warnings", 0)) == bool(ref.get("warnings", 0))


def norm_msg(m: str) -> str:
    """The message with its input-dtype tuple sorted (JAX builds it from a set)."""
    import re

    mm = re.match(r"Input dtypes \((.*?)\) have", m)
    if not mm:
        return m
    parts = sorted(p.strip() for p in mm.group(1).split(",") if p.strip())
    return m[: mm.start(1)] + ",".join(parts) + m[mm.end(1) :]


def is_backend_error(o: dict[str, Any]) -> bool:
    """An error that is not promotion's: the backend cannot compile or run the add."""
    return "error" in o and not o["error"].endswith(("TypePromotionError", "ValueError"))


def compare() -> str:
    P = load_reference()
    data = json.loads(OUT.read_text())
    for rec in data["modes"].values():
        unpack(rec)
    lines: list[str] = []
    doc = P.documented_table()
    for mode, rec in data["modes"].items():
        m = ref_mode(P, mode)
        # --- reference vs JAX
        disagree: list[str] = []
        backend: Counter[str] = Counter()

        def spec_arg(s: str) -> Any:
            return {"int*": int, "float*": float, "complex*": complex}.get(s, s)

        for key, cell in rec["specifier_cells"].items():
            a, b = (spec_arg(s) for s in key.split("|"))
            refs = {
                "promote_types": ref_outcome(P.promote_types, a, b, m),
                "jnp.result_type": ref_outcome(P.result_type, a, b, mode=m),
                "result_type_weak": ref_outcome(
                    P.result_type, a, b, mode=m, return_weak_type_flag=True
                ),
            }
            for fn, r in refs.items():
                if not same(cell[fn], r):
                    disagree.append(f"{fn}({key}): jax {cell[fn]} ref {r}")

        def operand(label: str, m: Any = m) -> Any:
            if label in PY_SCALARS:
                return PY_SCALARS[label]
            if label in WEAK_ARRAYS:
                return P.weak_operand(
                    {"int": "int*", "float": "float*", "complex": "complex*"}[label.split(":")[1]],
                    m,
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return P.array_operand(label, m)

        # operand creation: a dtype the backend cannot hold is not promotion's business; the
        # pairs are then predicted from the operand JAX actually made
        made: dict[str, Any] = {}
        for label, o in rec["operands"].items():
            if label in WEAK_ARRAYS:
                r = ref_outcome(lambda x: (x.dtype, True), operand(label))
            else:
                r = ref_outcome(lambda lb, mm: (P.array_operand(lb, mm).dtype, False), label, m)
            if not same(o, r):
                if "error" not in o and "error" not in r:
                    made[label] = P.Operand(o["dtype"], o["weak"])
                backend[f"operand {label}: made {txt(o)}, asked {txt(r)}"] += 1
        for key, cell in rec["operand_cells"].items():
            a, b = key.split("|")
            xa, xb = made.get(a) or operand(a), made.get(b) or operand(b)
            r = ref_outcome(P.result_type, xa, xb, mode=m, return_weak_type_flag=True)
            if not same(cell["result_type_weak"], r):
                disagree.append(f"result_type_weak({key}): jax {cell['result_type_weak']} ref {r}")
            r = ref_outcome(P.lattice_result_type, xa, xb, mode=m)
            for fn in ("eager", "jit_cold", "jit_warm"):
                if fn not in cell:
                    continue
                if is_backend_error(cell[fn]):
                    backend[f"{fn}: {cell[fn]['error'].rsplit('.', 1)[-1]}"] += 1
                    continue
                if not same({k: v for k, v in cell[fn].items() if "warn" not in k}, r):
                    disagree.append(f"{fn}({key}): jax {cell[fn]} ref {r}")
        lines.append(f"### {mode}\n")
        n_cells = len(rec["specifier_cells"]) * 3 + len(rec["operand_cells"]) * 4
        lines.append(f"reference vs JAX: {len(disagree)} disagreements in ~{n_cells} checks")
        for d in disagree[:40]:
            lines.append(f"- {d[:600]}")
        if backend:
            lines.append(
                "off the promotion model (creation or the backend): "
                + "; ".join(f"{k} x{v}" for k, v in backend.items())
            )
        # --- documented table (x64 on) canonicalized to the mode vs JAX
        if m.strict:
            refused = sorted(k for k, c in rec["specifier_cells"].items()
                             if "error" in c["promote_types"])  # fmt: skip
            allowed = sorted(k for k, c in rec["specifier_cells"].items()
                             if "error" not in c["promote_types"] and k.split("|")[0] != k.split("|")[1])  # fmt: skip
            lines.append(f"strict: promote_types refuses {len(refused)} of "
                         f"{len(rec['specifier_cells'])} specifier pairs; allows (off-diagonal): "
                         + ", ".join(allowed))  # fmt: skip
            lines.append("")
            continue
        diffs: dict[str, list[str]] = defaultdict(list)
        for a in P.DOC_ORDER:
            for b in P.DOC_ORDER:
                want = P.documented_in_mode(doc[a, b], m.x64)
                ca, cb = P.CODE_OF[a], P.CODE_OF[b]
                c = rec["specifier_cells"][f"{a}|{b}"]
                pt = c["promote_types"]
                if pt.get("dtype") != want[0]:
                    # the x64-on documented dtype itself (NumPy's dtype of a weak join)?
                    on = P.NUMPY_OF_WEAK.get(doc[a, b], doc[a, b])
                    key = (
                        "promote_types (= the x64-on dtype, not canonicalized)"
                        if pt.get("dtype") == on
                        else "promote_types (other)"
                    )
                    diffs[key].append(f"{ca}x{cb}: doc {doc_txt(want)} got {txt(pt)}")
                rt = c["result_type_weak"]
                if rt.get("error", "").endswith("ValueError"):
                    diffs["result_type(dtypes) refused: a 64-bit dtype named with x64 off"].append(
                        f"{ca}x{cb}"
                    )
                elif (rt.get("dtype"), rt.get("weak")) != want:
                    diffs["result_type(dtypes)"].append(
                        f"{ca}x{cb}: doc {doc_txt(want)} got {txt(rt)}"
                    )
                for la in labels_of(a):
                    for lb in labels_of(b):
                        oc = rec["operand_cells"].get(f"{la}|{lb}")
                        if oc is None:
                            continue  # an operand this mode cannot make (off-error, 64-bit)
                        for fn in ("result_type_weak", "eager", "jit_warm"):
                            if fn not in oc:
                                continue
                            o = oc[fn]
                            if (o.get("dtype"), o.get("weak")) != want:
                                diffs[f"{fn}(values)"].append(
                                    f"{la}+{lb}: doc {doc_txt(want)} got {txt(o)}"
                                )
        lines.append("docs (x64-on table canonicalized to this mode) vs JAX:")
        for fn, ds in diffs.items():
            shown = ds if "not canonicalized" not in fn else ds[:12] + ["..."]
            lines.append(f"- {fn}: {len(ds)} cells: " + "; ".join(shown))
        lines.append("")
    # timings
    lines.append("### timings (seconds)\n")
    lines.append(
        "mode | process | import | specifier pairs (3 calls each) | result_type values | eager + | "
        "jit cold | jit warm | operand pairs"
    )
    lines.append("---|---|---|---|---|---|---|---|---")
    for mode, rec in data["modes"].items():
        t = rec["timings"]
        lines.append(f"{mode} | {rec['process_s']} | {rec['import_s']} | {t['specifier_pairs_s']} | "
                     f"{t['result_type_values_s']} | {t['eager_s']} | {t['jit_cold_s']} | "
                     f"{t['jit_warm_s']} | {rec['counts']['operand_pairs']}")  # fmt: skip
    return "\n".join(lines)


def labels_of(node: str) -> list[str]:
    if node.endswith("*"):
        k = node[:-1]
        return [f"py:{k}", f"weak:{k}"]
    if node == "bool":
        return ["bool", "py:bool"]
    return [node]


def txt(o: dict[str, Any]) -> str:
    if "error" in o:
        return f"{o['error'].rsplit('.', 1)[-1]}"
    return o.get("dtype", "?") + ("*" if o.get("weak") else "")


def doc_txt(w: tuple[str, bool]) -> str:
    return w[0] + ("*" if w[1] else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument(
        "--jit-every",
        type=int,
        default=1,
        help="jit only the pairs whose label indices sum to a multiple of N",
    )
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(args.worker, args.jit_every), sys.stdout)
    elif args.compare:
        print(compare())
    else:
        measure(args.modes.split(","), args.jit_every)


if __name__ == "__main__":
    main()
