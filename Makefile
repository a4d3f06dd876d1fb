# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# Each bootstraps what it needs: sbt (build/sbt fetches its launcher with mvn), a .venv with
# pyspark==4.3.0 (whose jars are the Spark that sbt compiles against), the jar and the wheel.

PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
SBT         := build/sbt
VERSION     := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/rangejoin/_version.py)
JAR         := target/scala-2.13/rangejoin-spark_2.13-$(VERSION).jar
WHEEL       := dist/spark_rangejoin-$(VERSION)-py3-none-any.whl
VENV_STAMP  := $(VENV)/.installed
SCALA_MAIN  := $(shell find scala/src/main -type f 2>/dev/null)
PY_SOURCES  := $(shell find python/rangejoin -name '*.py' 2>/dev/null) pyproject.toml

# The Python packages the build, the tests and the benchmarks use; pinned for repeatable runs.
PY_DEPS     := pyspark==4.3.0 pytest==9.2.0 duckdb==2.0.0

.PHONY: all venv jar wheel install demo test test-fast scala-test scala-test-fast py-test py-test-fast bench publish-local publish-m2 clean

all: wheel

venv: $(VENV_STAMP)
$(VENV_STAMP):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PY_DEPS)
	touch $@

jar: $(JAR)
$(JAR): $(VENV_STAMP) build.sbt project/build.properties $(SCALA_MAIN)
	$(SBT) package
	touch $@

# The wheel carries the jar as package data (python/rangejoin/jars/, never committed).
wheel: $(WHEEL)
$(WHEEL): $(JAR) $(PY_SOURCES)
	rm -rf python/rangejoin/jars dist build/lib python/*.egg-info
	mkdir -p python/rangejoin/jars
	cp $(JAR) python/rangejoin/jars/
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir dist .
	rm -rf build/lib python/*.egg-info

# Installs the wheel into .venv, as a user would: pytest imports rangejoin from site-packages.
install: $(VENV)/.wheel-installed
$(VENV)/.wheel-installed: $(WHEEL)
	$(PY) -m pip install --quiet --no-deps --force-reinstall $(WHEEL)
	touch $@

demo: install
	$(PY) -m bench.demo

# One sbt start builds the jar, publishes it to ~/.m2 (for the spark-submit --packages test) and
# runs every ScalaTest suite; then the Python suites run against the installed wheel.
test: $(VENV_STAMP)
	$(SBT) package publishM2 test
	touch $(JAR)
	$(MAKE) --no-print-directory py-test

# The inner loop, under 5 minutes after the build: the unit suites, a slice of every differential
# family (RANGEJOIN_TESTS=fast: rangejoin.differential.Tier) and the quick pytest tier. `make
# test` runs everything; CI runs `make test`.
FAST_SUITES := rangejoin.condition.* rangejoin.bins.* rangejoin.execution.* rangejoin.planning.* \
  rangejoin.differential.PlainDifferentialSuite rangejoin.differential.BandDifferentialSuite \
  rangejoin.differential.KeyedDifferentialSuite rangejoin.differential.KeyedShuffledDifferentialSuite \
  rangejoin.differential.KeyedExistenceDifferentialSuite rangejoin.differential.BinnedDifferentialSuite \
  rangejoin.differential.FileScanDifferentialSuite rangejoin.differential.AsOfDifferentialSuite

test-fast: scala-test-fast
	$(MAKE) --no-print-directory py-test-fast

scala-test-fast: $(VENV_STAMP)
	RANGEJOIN_TESTS=fast $(SBT) package "testOnly $(FAST_SUITES)"
	touch $(JAR)

scala-test: $(VENV_STAMP)
	$(SBT) test

py-test: install
	$(PY) -m pytest -q tests

# The Python tests but those marked slow (fresh virtualenvs, spark-submit, shells, a local cluster,
# the benchmark's smoke test): the tests of the shared session, a few minutes.
py-test-fast: install
	$(PY) -m pytest -q -m "not slow" tests

# The benchmark's own pinned dependencies (matplotlib, for the chart), in .venv beside the build's.
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(VENV_STAMP) bench/requirements.txt
	$(PY) -m pip install --quiet -r bench/requirements.txt
	touch $@

# W1-W12 at full size (about 45 minutes on 2 cores; writes docs/benchmarks.md and .png).
# Smaller runs: RANGEJOIN_BENCH_SCALE=0.01 and/or RANGEJOIN_BENCH_QUICK=1, or BENCH_ARGS="--only W1".
bench: install $(BENCH_STAMP)
	$(PY) -m bench.bench $(BENCH_ARGS)

# Publishes the jar and its pom to the local Maven repository (~/.m2/repository), from which
# `spark-submit --packages io.rangejoin:rangejoin-spark_2.13:$(VERSION)` resolves it.
publish-local: $(VENV_STAMP)
	$(SBT) publishM2

publish-m2: publish-local

clean:
	rm -rf target project/target project/project dist build/lib python/rangejoin/jars \
	       python/*.egg-info $(VENV)
