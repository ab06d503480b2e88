"""Any JAX build, for `run --jax` and `compat --jax`: a pip requirement, a wheel, a source
checkout or an existing environment, made into an environment once and named by its version.

A requirement that pins one release (`jax==V`, `jax[cpu]==V`) is that release's environment,
the one compat builds (`envs.ensure_env`); any other requirement, a wheel or a checkout gets an
environment of its own under the compat cache, keyed by what was asked (a wheel by its content
hash, a checkout by its path and newest file time), built with envs' steps (uv if it is there,
else pip). Its version is the `jax.__version__` the built environment reports, never typed in.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from jax_conformance.compat.budget import MARKER
from jax_conformance.compat.envs import (
    ENV_LAYOUT,
    HARNESS_DEPS,
    Environment,
    build_env,
    ensure_env,
    find_python,
    probe_env,
    python_needed,
    python_tag,
    reuse_env,
)
from jax_conformance.compat.plan import BUILD_S, ENV_BYTES, cached_envs
from jax_conformance.options import JaxBuild
from packaging.requirements import Requirement

SKIPPED_DIRS = {".git", "__pycache__", "build", "dist", ".venv", "bazel-bin", "bazel-out"}


def release_of(build: JaxBuild) -> str | None:
    """The release a requirement pins exactly (`jax==V`, `jax[cpu]==V`), else None."""
    if build.kind != "requirement":
        return None
    req = Requirement(build.text)
    specs = list(req.specifier)
    if req.url or req.marker or set(req.extras) - {"cpu"} or len(specs) != 1:
        return None
    spec = specs[0]
    return spec.version if spec.operator == "==" and "*" not in spec.version else None


def requirements_for(build: JaxBuild) -> list[str]:
    """What the build's environment installs: the jax asked for (with the CPU jaxlib for a
    wheel or checkout) and the harness's own dependencies."""
    if build.kind == "requirement":
        jax = build.text
    else:
        jax = f"jax[cpu] @ {build.path.as_uri()}"
    return [jax, *HARNESS_DEPS]


def content_stamp(build: JaxBuild) -> str:
    """What decides a wheel's or checkout's build besides its path: the wheel's sha256, or the
    checkout's newest file time and file count (an edit or a new file builds again)."""
    if build.kind == "wheel":
        digest = hashlib.sha256()
        with open(build.path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    if build.kind != "checkout":
        return ""
    newest, count = 0, 0
    for root, dirs, files in os.walk(build.path):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        for name in files:
            newest = max(newest, os.stat(os.path.join(root, name)).st_mtime_ns)
            count += 1
    return f"{newest}:{count}"


def build_path(build: JaxBuild, cache: Path, py_tag: str) -> Path:
    """Where the build's environment is cached: keyed by what was asked, its content, the
    requirements and the interpreter."""
    blob = json.dumps(
        {
            "layout": ENV_LAYOUT,
            "kind": build.kind,
            "asked": build.text,
            "content": content_stamp(build),
            "requirements": requirements_for(build),
            "python": py_tag,
        },
        sort_keys=True,
    )
    return cache / "envs" / f"jax-build-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def plan_line(build: JaxBuild, cache: Path, py_tag: str) -> str:
    """One line, said before anything is built: which environment the build runs in."""
    release = release_of(build)
    if build.kind == "env":
        return f"--jax {build.text}: the environment there (nothing is built)"
    if release is not None:
        cached = release in cached_envs(cache, [release])
        where, what = cache / "envs", f"jax {release}'s release environment"
    else:
        where = build_path(build, cache, py_tag)
        cached, what = (where / MARKER).is_file(), "an environment"
    if cached:
        return f"--jax {build.text}: {what}, cached in {where} (nothing is built)"
    return (
        f"--jax {build.text}: builds {what} in {where} (up to about {ENV_BYTES / 1e6:.0f} MB; "
        f"about {BUILD_S:.0f} s with uv, minutes with pip)"
    )


def prepare_build(
    build: JaxBuild,
    cache: Path,
    python: str,
    *,
    timeout: float = 900.0,
    rebuild: bool = False,
    environ: dict[str, str] | None = None,
) -> Environment:
    """The build's environment, built if it is not cached; `version` is its jax.__version__
    (on failure, `reason` is the telling line). `environ` is what an existing one is checked with."""
    if build.kind == "env":
        return probe_env(build.path, environ)
    release = release_of(build)
    if release is not None:
        minor = python_needed(release)
        python = (find_python(minor) if minor else None) or python
        env = ensure_env(release, cache, python, python_tag(python), timeout, rebuild)
    else:
        py_tag = python_tag(python)
        env = Environment(f"build of {build.text}", build_path(build, cache, py_tag), [])
        if rebuild or not reuse_env(env, cache, python, timeout):
            reqs = requirements_for(build)
            env = build_env(
                env, cache, python, py_tag, reqs, timeout, binary_only=build.kind != "checkout"
            )
    if env.ok:
        env.version = str(env.versions.get("jax") or env.version)
    return env


def imports(env: Environment, module: str, environ: dict[str, str]) -> bool:
    """Whether the environment's interpreter imports `module` (with `environ`)."""
    out = subprocess.run(
        [str(env.python), "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )
    return out.returncode == 0


def harness_reason(env: Environment, environ: dict[str, str]) -> str:
    """Why the mode processes could not run this harness in the environment ('' when they can)."""
    if imports(env, "jax_conformance.plugin", environ):
        return ""
    return (
        f"{env.path} has no jax_conformance harness: install it there "
        "(pip install -e <this checkout> --no-deps) or give a requirement, wheel or checkout"
    )


def run_environ(env: Environment, base: dict[str, str]) -> dict[str, str]:
    """`base` (a run's environment: its PYTHONPATH, compile cache) with the build's venv first."""
    out = {k: v for k, v in base.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    out["VIRTUAL_ENV"] = str(env.path)
    out["PATH"] = os.pathsep.join([str(env.path / "bin"), base.get("PATH", "")])
    return out


def describe(env: Environment) -> str:
    """`jax 0.10.2 (jaxlib 0.10.2, python 3.11.7) in PATH, built in 80 s`: what will be judged."""
    v = env.versions
    how = "" if env.cached else f", built in {env.seconds:.0f} s"
    return (
        f"jax {env.version} (jaxlib {v.get('jaxlib', '?')}, numpy {v.get('numpy', '?')}, "
        f"python {v.get('python', '?')}) in {env.path}{how}"
    )
