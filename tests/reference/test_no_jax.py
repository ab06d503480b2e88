"""The reference never imports JAX: checked in the source and in a process where JAX cannot load."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[2] / "adapters" / "reference"
FORBIDDEN = ("jax", "jaxlib")

GUARD = """
import sys
class Forbid:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {forbidden!r}:
            raise ImportError('the reference imported ' + name)
        return None
sys.meta_path.insert(0, Forbid())
from jax_conformance.adapters.reference import ReferenceAdapter
from functools import partial
ns = ReferenceAdapter().namespace(); jax, jnp = ns['jax'], ns['jnp']
@partial(jax.custom_vjp, nondiff_argnums=(0,))
def app(f, x): return f(x)
app.defvjp(lambda f, x: (f(x), x), lambda f, x, g: (5 * g,))
print(float(jax.jit(jax.grad(app, 1), static_argnums=0)(jnp.sin, 4.0)), jax.vmap(jnp.sin)(jnp.arange(3.)).dtype)
print(sorted(m for m in sys.modules if m.split('.')[0] in {forbidden!r}))
"""


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_no_jax_import_in_the_source() -> None:
    files = sorted(REFERENCE.glob("*.py"))
    assert files
    bad = {f.name: n for f in files for n in _imports(f) if n.split(".")[0] in FORBIDDEN}
    assert bad == {}


def test_runs_where_jax_cannot_be_imported() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", GUARD.format(forbidden=FORBIDDEN)],
        capture_output=True,
        text=True,
        cwd=REFERENCE.parents[1],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["5.0 float32", "[]"]
