"""Experiment (a pytest plugin): collect with load_speedups' changes A, B and T applied.

    .venv/bin/python -m pytest conformance/ --adapter=jax --specs DIR --collect-only -q -p bench.experiments.fast_load

Add `-p bench.experiments.prestart_worker` as well to see both changes together.
"""

from __future__ import annotations

from jax_conformance import plugin

from bench.experiments import load_speedups

load_speedups.apply("C")
# plugin.py imported known_tags by name, so its per-file call needs the cached one too.
plugin.known_tags = load_speedups.lint.known_tags
