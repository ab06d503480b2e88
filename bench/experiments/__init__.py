"""Experiments: harness changes measured as monkeypatches, without editing the harness."""
