#!/bin/bash
# `jax-conformance lint DIR` as shipped, with gc off, and with gc off plus load_speedups' changes (A, B, T).
# usage: bench/experiments/lint_variants.sh SPECDIR ROUNDS
cd /work/main
for r in $(seq 1 $2); do
  /usr/bin/time -f "base %e s wall %U user" .venv/bin/python -m conformance.cli lint $1 2>&1 | tail -1
  /usr/bin/time -f "nogc %e s wall %U user" .venv/bin/python -c "import gc, sys; gc.disable(); from conformance.cli import main; sys.exit(main(['lint', '$1']))" 2>&1 | tail -1
  /usr/bin/time -f "nogc+ABT %e s wall %U user" .venv/bin/python -c "import gc, sys; gc.disable(); from bench.experiments import load_speedups; load_speedups.apply('C'); from conformance.cli import main; sys.exit(main(['lint', '$1']))" 2>&1 | tail -1
done
