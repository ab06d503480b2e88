"""jax-conformance: JAX's documented numeric semantics as YAML specs, run through pytest.

Importing this package never imports JAX; only the `adapters` do, in the worker process.

The repository's folders map to this one import name (docs/ARCHITECTURE.md): `conformance/` is
`jax_conformance`, `adapters/` is `jax_conformance.adapters`, and `specs/` and the report's
`templates/` and `static/` ship inside the package when it is installed from a wheel.
"""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent


def _checkout() -> Path | None:
    """The repository this package runs from (an editable install), or None for a wheel."""
    root = PACKAGE_DIR.parent
    return root if (root / "pyproject.toml").is_file() and (root / "specs").is_dir() else None


def _data(name: str) -> Path:
    bundled = PACKAGE_DIR / name  # installed from a wheel: the data lies inside the package
    return bundled if bundled.is_dir() else PACKAGE_DIR.parent / name  # a checkout: beside it


CHECKOUT = _checkout()
SPECS_DIR = _data("specs")
REPORT_ASSETS = _data("reports")  # templates/ and static/ of the HTML report
