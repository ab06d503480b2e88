#!/bin/bash
# Collection with and without the experiment plugins (prestart_worker, fast_load).
# usage: bench/experiments/collect_variants.sh SPECDIR ROUNDS   (SPECDIR: e.g. synthetic specs from bench/synthetic.py)
cd /work/main
for r in $(seq 1 $2); do
for v in base pre fast nogc all; do
  case $v in base) X="";; pre) X="-p bench.experiments.prestart_worker";; fast) X="-p bench.experiments.fast_load";; nogc) X="-p bench.experiments.no_gc";; all) X="-p bench.experiments.fast_load -p bench.experiments.prestart_worker -p bench.experiments.no_gc";; esac
  /usr/bin/time -f "$v %e s wall %U user" .venv/bin/python -m pytest conformance/ --adapter=jax --specs $1 --collect-only -q -p no:cacheprovider $X 2>&1 | tail -2 | tr '\n' ' '; echo
done; done
