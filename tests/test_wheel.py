"""The package as a user gets it: a wheel, installed into a fresh venv outside the checkout, run
from an empty directory.

`python -m build` makes the sdist and then the wheel from that sdist, so a file the sdist lacks
is missing from the wheel too. The venv is made with `python -m venv` (never
--system-site-packages) and pip installs the wheel with its dependencies from the index the
machine is set up with, as `./dev setup` does. The reference adapter keeps the runs fast; JAX is
installed all the same, as a dependency.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from jax_conformance import CHECKOUT

assert CHECKOUT is not None, "the tests run from a checkout"
ROOT = CHECKOUT
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"
]
# The modes of one process, and the cases it runs: the smoke run of the common brief.
MODE, TOPIC = "off-warn", "x64.defaults"


def folder_packages() -> set[str]:
    """Every import package the folders hold under the package-dir mapping: a folder with an
    __init__.py is one, and a mapped folder without one (specs/, reports/) is a data package."""
    found = set()
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        found.add(name)
        found.update(
            ".".join((name, *init.parent.relative_to(base).parts))
            for init in base.rglob("*/__init__.py")
        )
    return found


def test_pyproject_lists_every_package_the_folders_hold() -> None:
    """setuptools cannot discover packages under a mapped name, so the list is written out: a new
    subpackage (a folder with __init__.py) that is missing from it would be absent from the wheel."""
    listed = set(SETUPTOOLS["packages"])
    missing, stale = sorted(folder_packages() - listed), sorted(listed - folder_packages())
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert not stale, (
        f"remove from [tool.setuptools] packages in pyproject.toml (no such folder): {stale}"
    )


def bundled_data() -> list[str]:
    """The paths, inside the installed package, of every spec, schema, template and static file."""
    mapped = {folder: name.replace(".", "/") for name, folder in SETUPTOOLS["package-dir"].items()}
    specs = [p for p in (ROOT / "specs").rglob("*") if p.suffix in (".yaml", ".json")]
    assets = [p for sub in ("templates", "static") for p in (ROOT / "reports" / sub).iterdir()]
    return sorted(
        f"{mapped[p.relative_to(ROOT).parts[0]]}/{'/'.join(p.relative_to(ROOT).parts[1:])}"
        for p in specs + assets
        if p.is_file()
    )


def case_ids(spec: Path) -> list[str]:
    return re.findall(r"^\s*- id: (\S+)", spec.read_text(encoding="utf-8"), re.M)


class Installed:
    """The wheel installed into a fresh venv, and an empty directory to run its commands from."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.dist = base / "dist"
        self.venv = base / "venv"
        self.cwd = base / "empty"
        self.cwd.mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
            and not k.startswith(("JAX_", "PYTEST_"))
        }
        self.env.update(
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            PATH=f"{self.venv / 'bin'}{os.pathsep}{self.env['PATH']}",
            JAX_CONFORMANCE_CACHE=str(base / "cache"),
        )  # the spec cache, out of the user's home

    def sh(
        self, *argv: str | Path, timeout: float = 300, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(a) for a in argv],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check:
            assert proc.returncode == 0, (
                f"{argv} exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return proc

    def build(self) -> tuple[Path, Path]:
        """The sdist, and the wheel built from it (never from the checkout: no stale build/ dir)."""
        self.sh(sys.executable, "-m", "build", "--outdir", self.dist, ROOT, timeout=600)
        (sdist,), (wheel,) = self.dist.glob("*.tar.gz"), self.dist.glob("*.whl")
        return sdist, wheel

    def install(self, wheel: Path) -> None:
        self.sh(sys.executable, "-m", "venv", self.venv)
        self.sh(
            self.venv / "bin" / "python",
            "-m",
            "pip",
            "install",
            "-q",
            "--no-compile",
            wheel,
            timeout=600,
        )

    def bin(self, name: str) -> Path:
        return self.venv / "bin" / name


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Installed, Path, Path]:
    if importlib.util.find_spec("build") is None:
        pytest.fail(
            "`python -m build` makes the sdist and the wheel: ./dev setup installs it (the dev extras)"
        )
    inst = Installed(tmp_path_factory.mktemp("wheel"))
    assert ROOT not in inst.base.parents, "the venv must lie outside the checkout"
    sdist, wheel = inst.build()
    inst.install(wheel)
    return inst, sdist, wheel


def check_archives(sdist: Path, wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    data = bundled_data()
    assert len(data) > 30 and not [p for p in data if p not in names], sorted(set(data) - names)
    tops = {n.split("/")[0] for n in names}
    assert tops == {"jax_conformance", "jax_conformance-0.1.0.dist-info"}, (
        tops
    )  # no `conformance`, `adapters`
    with tarfile.open(sdist) as tar:
        inside = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    for path in (
        "pyproject.toml",
        "README.md",
        "specs/schema.json",
        "specs/tags.yaml",
        "reports/templates/index.html.j2",
    ):
        assert path in inside, f"the sdist lacks {path}"


def check_pip_show(inst: Installed) -> None:
    out = inst.sh(inst.bin("pip"), "show", "-f", "jax-conformance").stdout
    files = {line.strip() for line in out.splitlines()[out.splitlines().index("Files:") + 1 :]}
    assert not [p for p in bundled_data() if p not in files], sorted(set(bundled_data()) - files)
    assert not [f for f in files if f.startswith(("conformance/", "adapters/"))], (
        "a generic top-level package"
    )
    package_dir, checkout = inst.sh(
        inst.bin("python"), "-c", "import jax_conformance as j; print(j.PACKAGE_DIR, j.CHECKOUT)"
    ).stdout.split()
    assert checkout == "None", "installed from a wheel, the package has no checkout"
    site_packages = Path(package_dir).parent
    assert (
        not (site_packages / "conformance").exists() and not (site_packages / "adapters").exists()
    )


def records(results: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in results.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def check_lint_and_run(inst: Installed) -> None:
    spec_count = sum(
        1
        for p in (ROOT / "specs").rglob("*.yaml")
        if p.name != "tags.yaml" and "expectations" not in p.parts
    )
    lint = inst.sh(inst.bin("jax-conformance"), "lint")
    assert f"{spec_count} spec files checked, 0 errors" in lint.stderr, (
        lint.stdout + lint.stderr
    )  # the tally goes to stderr

    ids = case_ids(ROOT / "specs" / "x64" / "defaults.yaml")
    out_dir = inst.base / "out"
    inst.sh(
        inst.bin("jax-conformance"),
        "run",
        "--adapter",
        "reference",
        "--modes",
        MODE,
        "-k",
        TOPIC,
        "--out",
        out_dir,
        "--progress",
        "plain",
    )
    cases = [r for r in records(out_dir / "results.jsonl") if r["record"] == "case"]
    assert sorted(r["case"] for r in cases) == sorted(ids) and {r["outcome"] for r in cases} == {
        "passed"
    }, cases
    # The bundled file is named as in a checkout, whatever directory the run started in (compat's
    # table and the report read spec_file relative to SPECS_DIR.parent).
    assert {r["spec_file"] for r in cases} == {"specs/x64/defaults.yaml"}, {
        r["spec_file"] for r in cases
    }
    assert (out_dir / "index.html").is_file() and any((out_dir / "assets").rglob("report.css"))


def check_pytest(inst: Installed) -> None:
    """The plugin form the README gives for an installed package: pytest --pyargs jax_conformance."""
    ids = case_ids(ROOT / "specs" / "x64" / "defaults.yaml")
    out = inst.sh(
        inst.bin("python"),
        "-m",
        "pytest",
        "--pyargs",
        "jax_conformance",
        "--adapter=reference",
        "-q",
        "-k",
        TOPIC,
        "-p",
        "no:cacheprovider",
    ).stdout
    assert re.search(rf"^{len(ids)} passed, \d+ deselected", out, re.M), out


def check_own_specs(inst: Installed) -> None:
    """--specs DIR replaces the bundled specs; given twice, with the bundled directory, it adds."""
    mine = inst.base / "myspecs" / "mine"
    mine.mkdir(parents=True)
    (mine / "one.yaml").write_text(
        textwrap.dedent("""\
        topic: x64.mine
        title: The wheel test's own spec
        source: {doc: docs/default_dtypes.md, section: "Default setting: 32-bits everywhere"}
        tags: [dtypes, x64]
        basis: documented
        cases:
          - id: x64.mine.arange
            claim: jnp.arange of Python ints gives int32 with x64 off and int64 with x64 on
            run: jnp.arange(3)
            expect:
              - {when: {x64: false}, dtype: int32, value: [0, 1, 2]}
              - {when: {x64: true}, dtype: int64, value: [0, 1, 2]}
        """),
        encoding="utf-8",
    )
    out_dir = inst.base / "out-mine"
    inst.sh(
        inst.bin("jax-conformance"),
        "run",
        "--adapter",
        "reference",
        "--modes",
        MODE,
        "--specs",
        mine.parent,
        "--out",
        out_dir,
        "--progress",
        "plain",
    )
    cases = [r for r in records(out_dir / "results.jsonl") if r["record"] == "case"]
    assert [(r["case"], r["outcome"]) for r in cases] == [("x64.mine.arange", "passed")], cases

    bundled = inst.sh(
        inst.bin("python"), "-c", "import jax_conformance as j; print(j.SPECS_DIR)"
    ).stdout.strip()
    out = inst.sh(
        inst.bin("python"),
        "-m",
        "pytest",
        "--pyargs",
        "jax_conformance",
        "--adapter=reference",
        "-q",
        "-p",
        "no:cacheprovider",
        "--specs",
        mine.parent,
        "--specs",
        bundled,
        "-k",
        f"x64.mine or {TOPIC}",
    ).stdout
    assert re.search(
        rf"^{len(case_ids(ROOT / 'specs' / 'x64' / 'defaults.yaml')) + 1} passed", out, re.M
    ), out
    # An editor outside the checkout finds the installed schema (and the line that points at it).
    path, modeline = inst.sh(
        inst.bin("python"), "-m", "jax_conformance.spec.schema"
    ).stdout.splitlines()
    assert Path(path).is_file() and inst.venv in Path(path).parents, path
    assert modeline == f"# yaml-language-server: $schema={path}"


def check_contract_fixture(inst: Installed) -> None:
    """A library's own project, beside the installed wheel: its test uses the `jax_contract` fixture
    (registered by the wheel's pytest11 entry point) on a correct rule and a rule wrong by a factor;
    one mode, so one process per test."""
    project = inst.base / "mylib"
    project.mkdir()
    (project / "mylib_rules.py").write_text(
        textwrap.dedent("""\
        import jax, jax.numpy as jnp

        @jax.custom_vjp
        def good_sin(x):
            return jnp.sin(x)

        good_sin.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (g * c,))

        @jax.custom_vjp
        def doubled_slope(x):
            return jnp.sin(x)

        doubled_slope.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (2.0 * g * c,))
        """),
        encoding="utf-8",
    )
    (project / "test_mylib.py").write_text(
        textwrap.dedent("""\
        import jax.numpy as jnp
        from mylib_rules import doubled_slope, good_sin

        def test_good(jax_contract):
            jax_contract.check(good_sin, jnp.array([0.5, 2.0]), modes=["off-warn"])

        def test_doubled(jax_contract):
            jax_contract.check(doubled_slope, jnp.array([0.5, 2.0]), modes=["off-warn"])
        """),
        encoding="utf-8",
    )
    proc = subprocess.run(
        [inst.bin("python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"],
        cwd=project,
        env=inst.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # 1: tests ran and some failed
    assert re.search(r"\b1 failed, 1 passed\b", out), out
    assert re.search(r"FAILED test_mylib.py::test_doubled\b", out), out
    assert "FAIL derivatives.finite-differences [off-warn] " in out, out
    assert "test_good" not in "".join(ln for ln in out.splitlines() if ln.startswith("FAILED")), out


@pytest.mark.slow
def test_the_wheel_installs_and_runs_outside_the_checkout(
    installed: tuple[Installed, Path, Path],
) -> None:
    """One test, so that `-n 2` builds and installs once; each step asserts on what it printed or wrote."""
    inst, sdist, wheel = installed
    check_archives(sdist, wheel)
    check_pip_show(inst)
    check_lint_and_run(inst)
    check_pytest(inst)
    check_own_specs(inst)
    check_contract_fixture(inst)
    assert list(inst.cwd.iterdir()) == [], "the commands wrote into the directory they ran from"
