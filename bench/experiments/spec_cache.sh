#!/bin/bash
# Lint and collection of SPECDIR with an empty spec cache (cold), a filled one (warm, as after a lint),
# and with the cache off; the cache goes to a scratch directory, not the checkout's .conformance-cache.
# usage: bench/experiments/spec_cache.sh SPECDIR ROUNDS   (SPECDIR: e.g. synthetic specs from bench/synthetic.py)
cd /work/main
scratch=$(mktemp -d)
collect() { .venv/bin/python -m pytest conformance/ --adapter=jax --specs "$1" --collect-only -q -p no:cacheprovider 2>&1 | tail -1; }
for r in $(seq 1 $2); do
  rm -rf "$scratch/specs"
  JAX_CONFORMANCE_CACHE=$scratch /usr/bin/time -f "lint cold %e s wall %U user" .venv/bin/python -m conformance.cli lint $1 2>&1 | tail -1
  JAX_CONFORMANCE_CACHE=$scratch /usr/bin/time -f "lint warm %e s wall %U user" .venv/bin/python -m conformance.cli lint $1 2>&1 | tail -1
  JAX_CONFORMANCE_CACHE=$scratch /usr/bin/time -f "collect warm %e s wall %U user" bash -c "$(declare -f collect); collect $1" 2>&1 | tail -1
  rm -rf "$scratch/specs"
  JAX_CONFORMANCE_CACHE=$scratch /usr/bin/time -f "collect cold %e s wall %U user" bash -c "$(declare -f collect); collect $1" 2>&1 | tail -1
  JAX_CONFORMANCE_SPEC_CACHE=0 /usr/bin/time -f "lint no-cache %e s wall %U user" .venv/bin/python -m conformance.cli lint $1 2>&1 | tail -1
  JAX_CONFORMANCE_SPEC_CACHE=0 /usr/bin/time -f "collect no-cache %e s wall %U user" bash -c "$(declare -f collect); collect $1" 2>&1 | tail -1
done
rm -rf "$scratch"
