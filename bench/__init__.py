"""Benchmarks of the harness against the floor (see bench/README.md)."""
