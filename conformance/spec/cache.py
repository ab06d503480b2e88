"""Loaded specs cached on disk between processes, and the garbage-collector tuning of large loads.

Neither changes what a spec is: a cached spec is the one loading its text gives (same text,
same harness), and the collector settings only change when memory is walked.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import os
import pickle
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import yaml
from jax_conformance import CHECKOUT, PACKAGE_DIR, SPECS_DIR, adapters
from jax_conformance.spec.model import Spec


@contextlib.contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """The cyclic garbage collector off for a while: loading builds millions of small acyclic
    objects, and every full collection would walk all of them again (~20% of a large load).

    With `freeze`, what is alive at the end moves to the collector's permanent generation
    (gc.freeze): the loaded specs, which live as long as the session, are then never walked
    again, not by the first collection after this, nor by pytest's at the end of a session, nor
    at exit. They are still freed by reference counting: specs hold no cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


# Loads at least this large (bytes of spec files) freeze what they loaded; small ones (every test's) don't.
LARGE_LOAD_BYTES = 1_000_000


def is_large_load(paths: Iterable[Path]) -> bool:
    """Whether these files together reach LARGE_LOAD_BYTES (then a load freezes what it loaded)."""
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total >= LARGE_LOAD_BYTES


class SpecCache:
    """Loaded, valid, linted specs pickled on disk, so a second process need not parse them again.

    An entry is found by the spec's path as given and the harness's fingerprint (the sources of
    the modules that load and lint a spec, the schema, the tags, the versions of Python, PyYAML,
    packaging and fastjsonschema), and used only if it was made from the same text as the file
    holds now (a content digest, so neither a same-size rewrite within one mtime tick nor a
    clock change can serve a stale spec). Files with errors are never cached: they are loaded
    again, and report what they report. Every failure to read or write the cache is a miss.
    """

    FORMAT = 1
    # Past this many entries the oldest are removed, down to half; a process looks at its first
    # write and every PRUNE_EVERY writes after it.
    MAX_ENTRIES = 1024
    PRUNE_EVERY = 256

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fingerprint: bytes | None = None
        self._writes = 0

    @classmethod
    def default(cls) -> SpecCache | None:
        """`$JAX_CONFORMANCE_CACHE/specs`; else `.conformance-cache/specs` in a checkout (beside the
        compat environments), `~/.cache/jax-conformance/specs` for an installed harness; None with
        JAX_CONFORMANCE_SPEC_CACHE=0."""
        if os.environ.get("JAX_CONFORMANCE_SPEC_CACHE", "").strip().lower() in (
            "0",
            "off",
            "no",
            "false",
        ):
            return None
        base = os.environ.get("JAX_CONFORMANCE_CACHE")
        if base:
            return cls(Path(base) / "specs")
        if CHECKOUT is not None:
            return cls(CHECKOUT / ".conformance-cache" / "specs")
        user = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return cls(Path(user) / "jax-conformance" / "specs")

    def fingerprint(self) -> bytes:
        """What the harness that loads and checks a spec is: its entries are this harness's alone.

        The files are read, not imported, so this module depends on no loader or rule module.
        """
        if self._fingerprint is None:
            h = hashlib.sha256(
                f"{self.FORMAT} {sys.version} {yaml.__version__} {yaml.__with_libyaml__} "
                f"{_version_of('packaging')} {_version_of('fastjsonschema')}".encode()
            )
            for file in _harness_files():
                h.update(file.name.encode() + b"\0")
                with contextlib.suppress(OSError):
                    h.update(file.read_bytes())
            self._fingerprint = h.digest()
        return self._fingerprint

    def _entry(self, path: Path) -> Path:
        return self.root / (
            hashlib.sha256(self.fingerprint() + os.fsencode(str(path))).hexdigest()[:40] + ".pickle"
        )

    @staticmethod
    def digest(text: str) -> bytes:
        """The digest of a spec's text that an entry starts with: a different text is a miss."""
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()

    def get(self, path: Path, text: str) -> Spec | None:
        try:
            data = self._entry(path).read_bytes()
        except OSError:
            return None
        digest = self.digest(text + _own_tags_text(path))
        if data[: len(digest)] != digest:
            return None
        try:
            with gc_paused():
                spec = pickle.loads(data[len(digest) :])
        except Exception:
            return None
        return spec if isinstance(spec, Spec) and spec.path == path else None

    def put(self, path: Path, text: str, spec: Spec) -> None:
        entry = self._entry(path)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            self._prune()
            tmp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
            tmp.write_bytes(
                self.digest(text + _own_tags_text(path))
                + pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
            )
            os.replace(tmp, entry)  # readers see the old entry or the new one, never half of one
        except Exception:
            return

    def _prune(self) -> None:
        self._writes += 1
        if (self._writes - 1) % self.PRUNE_EVERY:
            return
        entries = list(os.scandir(self.root))
        if len(entries) <= self.MAX_ENTRIES:
            return
        by_age = sorted(entries, key=_mtime)
        for e in by_age[: len(entries) - self.MAX_ENTRIES // 2]:
            with contextlib.suppress(OSError):
                os.unlink(e.path)


def _own_tags_text(path: Path) -> str:
    """The text of the tags.yaml a spec outside this project's specs reads (its folder's, or the
    nearest above it): a tag taken out of it must not leave a cached spec valid. "" for ours."""
    folder = path.resolve().parent
    if folder == SPECS_DIR or SPECS_DIR in folder.parents:
        return ""
    for candidate in (folder, *folder.parents):
        with contextlib.suppress(OSError):
            return "\0tags.yaml\0" + (candidate / "tags.yaml").read_text(encoding="utf-8")
    return ""


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:  # another process removed it meanwhile
        return 0.0


def _version_of(dist: str) -> str:
    try:
        module = importlib.import_module(dist)
    except ImportError:
        return "-"
    return str(getattr(module, "__version__", getattr(module, "VERSION", "?")))


def _harness_files() -> list[Path]:
    """The sources of every module that loads or checks a spec (spec/, whose classes are all a
    cached pickle names: a test checks it), the modes, the names a spec's code may use
    (adapters/__init__), the schema and the tags."""
    spec_modules = sorted((PACKAGE_DIR / "spec").glob("*.py"))
    return [
        *spec_modules,
        PACKAGE_DIR / "mode.py",
        Path(adapters.__file__),
        PACKAGE_DIR / "__init__.py",
        SPECS_DIR / "schema.json",
        SPECS_DIR / "tags.yaml",
    ]
