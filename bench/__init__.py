"""rangejoin's demo and benchmark: the harness, and one-question probes in :mod:`bench.probes`.

Run from the repository's root, as modules, with a Python that has the wheel installed (the
Makefile's ``demo`` and ``bench`` targets install it into ``.venv`` first)::

    .venv/bin/python -m bench.demo
    .venv/bin/python -m bench.bench [options]      # make bench
    .venv/bin/python -m bench.memory [options]
    .venv/bin/python -m bench.probes.<probe> [options]

The harness: ``bench`` (the benchmark's workloads in three engines), ``workloads`` (its data and queries), ``report``
(its targets and docs/benchmarks.md), ``memory`` (the heap a broadcast holds, which ``bench`` also
runs), ``jvm_metrics`` (what it reads from the JVM), ``local_spark`` (the embedded Spark every run
starts) and ``demo``. See bench/README.md.
"""
