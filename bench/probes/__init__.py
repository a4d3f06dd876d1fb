"""Probes: each measures one question of docs/design.md, with stock Spark beside rangejoin, and
prints a table; run one with ``.venv/bin/python -m bench.probes.<name>`` from the repository's
root. bench/README.md lists them."""
