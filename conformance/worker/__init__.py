"""Runs in the worker process (and the fork server that forks workers): the adapter started in one
mode, each case judged."""
