"""jax-conformance: JAX's documented numeric semantics as YAML specs, run through pytest.

Importing this package never imports JAX; only the `adapters` do, in the worker process.
"""

__version__ = "0.1.0"
