"""The client end of the worker pipe: whichever process starts workers runs it (the mode process's
pytest plugin, and `lint`, `flags`, `diff` in the `jax-conformance` process). `caserunner.py`
starts a worker, sends it requests (`jax_conformance.protocol`) and turns a crash or hang into a
verdict; `forkclient.py` asks a fork server for a fresh process for an isolated case. The other
end, the worker, is `jax_conformance.worker` (pytest-xdist's `workermanage.py` / `remote.py` split).
"""
