"""Adapters: one per implementation under test. Only this package imports JAX."""
