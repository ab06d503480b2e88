"""Runs in the jax-conformance process (the parent): starts one pytest process per adapter x mode
(the mode processes) and reads their records as they grow."""
