# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# Each bootstraps what it needs: sbt (build/sbt fetches its launcher with mvn), a .venv with
# pyspark==4.3.0 (whose jars are the Spark that sbt compiles against), the jars and the wheel.
#
# rangejoin is built once per Spark line (issue 25): project/SparkLines.scala is the table of
# lines (read below), `build/sbt -Drangejoin.spark=<line>` builds one, and each line other than
# 4.3 compiles against its own pyspark's jars, which build/pyspark-home installs under
# ~/.cache/rangejoin/pyspark/. The wheel carries every line's jar.

PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
SBT         := build/sbt
VERSION     := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/rangejoin/_version.py)
# The lines, "<line> <pyspark version> <scala binary version>" each, from project/SparkLines.scala.
LINE_TABLE  := $(shell sed -n 's/.*SparkLine."\([0-9.]*\)", "\([0-9.]*\)", Scala21\([23]\).*/\1:\2:2.1\3/p' project/SparkLines.scala)
LINES       := $(foreach l,$(LINE_TABLE),$(word 1,$(subst :, ,$(l))))
DEFAULT_LINE := 4.3
OTHER_LINES := $(filter-out $(DEFAULT_LINE),$(LINES))
pyspark_of   = $(word 2,$(subst :, ,$(filter $(1):%,$(LINE_TABLE))))
scala_of     = $(word 3,$(subst :, ,$(filter $(1):%,$(LINE_TABLE))))
jar_of       = target/spark-$(1)/scala-$(call scala_of,$(1))/rangejoin-spark-$(1)_$(call scala_of,$(1))-$(VERSION).jar
JAR         := $(call jar_of,$(DEFAULT_LINE))
JARS        := $(foreach l,$(LINES),$(call jar_of,$(l)))
WHEEL       := dist/spark_rangejoin-$(VERSION)-py3-none-any.whl
VENV_STAMP  := $(VENV)/.installed
SCALA_MAIN  := $(shell find scala/src/main -type f 2>/dev/null)
PY_SOURCES  := $(shell find python/rangejoin -name '*.py' 2>/dev/null) pyproject.toml

# The Python packages the build, the tests and the benchmarks use; pinned for repeatable runs.
# After pytest, pytest-xdist (py-test's two workers) and DuckDB: pyspark's Spark Connect client
# (tests/test_connect.py) and pandas for pandas-on-Spark (pandas 2: pyspark 4.3 warns that it
# does not fully support pandas 3).
PY_DEPS     := pyspark==4.3.0 pytest==9.2.0 pytest-xdist==3.8.0 duckdb==2.0.0 \
  googleapis-common-protos==1.76.0 grpcio==1.85.3 grpcio-status==1.85.3 pandas==2.3.3 pyarrow==26.0.1 \
  zstandard==0.25.0

.PHONY: all venv jar jars wheel install demo test test-fast test-all scala-test scala-test-fast lines-test-fast pyspark-homes py-test py-test-fast bench publish-local publish-m2 clean

all: wheel

venv: $(VENV_STAMP)
# Rebuilt when the Makefile (PY_DEPS) changes: pip leaves what is already installed as it is.
$(VENV_STAMP): Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(PY_DEPS)
	touch $@

# `make jar`: the default line's (4.3); `make jars`: every line's, one sbt run after another.
jar: $(JAR)
$(JAR): $(VENV_STAMP) build.sbt project/build.properties project/SparkLines.scala $(SCALA_MAIN)
	$(SBT) package
	touch $@

jars: $(JARS)

# Another line's jar: its pyspark's jars first (build/pyspark-home installs them once).
define LINE_JAR
$(call jar_of,$(1)): build.sbt project/build.properties project/SparkLines.scala $(SCALA_MAIN)
	build/pyspark-home $(call pyspark_of,$(1)) >/dev/null
	$(SBT) -Drangejoin.spark=$(1) package
	touch $$@
endef
$(foreach l,$(OTHER_LINES),$(eval $(call LINE_JAR,$(l))))

# The wheel carries every line's jar as package data (python/rangejoin/jars/, never committed);
# rangejoin.jar_path() picks the installed pyspark's.
wheel: $(WHEEL)
$(WHEEL): $(JARS) $(PY_SOURCES)
	rm -rf python/rangejoin/jars dist build/lib python/*.egg-info
	mkdir -p python/rangejoin/jars
	cp $(JARS) python/rangejoin/jars/
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir dist .
	rm -rf build/lib python/*.egg-info

# Installs the wheel into .venv, as a user would: pytest imports rangejoin from site-packages.
install: $(VENV)/.wheel-installed
$(VENV)/.wheel-installed: $(WHEEL)
	$(PY) -m pip install --quiet --no-deps --force-reinstall $(WHEEL)
	touch $@

demo: install
	$(PY) -m bench.demo

# One sbt start builds the 4.3 jar, publishes it to ~/.m2 (for the spark-submit --packages test)
# and runs every ScalaTest suite in the full tier (rangejoin.differential.Tier: a seeded tenth of
# each differential family's cases, a twentieth of the as-of ones), while the other lines' pyspark
# jars download (pyspark-homes: the network's time, not the cores'); then the other lines build
# and run the fast or smoke tier (lines-test-fast, unpublished); then the Python suites run
# against the installed wheel. One after another: each step keeps the 2 cores busy, and pytest
# beside the other lines saved nothing (both took 29.9 minutes side by side at 0684ecd, 27.1 one after
# the other at 3eb11c2, on fresh clones). docs/design.md, "Tests".
test: $(VENV_STAMP)
	mkdir -p target && { $(MAKE) --no-print-directory pyspark-homes >target/pyspark-homes.log 2>&1 & prefetch=$$!; \
	  $(SBT) package publishM2 test; rc=$$?; wait $$prefetch; exit $$rc; }
	touch $(JAR)
	$(MAKE) --no-print-directory lines-test-fast
	$(MAKE) --no-print-directory py-test

# Every case of every differential family on 4.3 (RANGEJOIN_TESTS=all), then what `make test` runs on the other lines, and pytest with a fresh virtualenv for
# every line's oldest or newest pyspark (tests/test_deployment.py) instead of two.
test-all: $(VENV_STAMP)
	RANGEJOIN_TESTS=all $(SBT) package publishM2 test
	touch $(JAR)
	LINE_TIER=fast $(MAKE) --no-print-directory lines-test-fast
	RANGEJOIN_TESTS=all $(MAKE) --no-print-directory py-test

# The inner loop, under 5 minutes after the build: the unit suites, a slice of every differential
# family (RANGEJOIN_TESTS=fast: rangejoin.differential.Tier) and the quick pytest tier. `make
# test` runs everything; CI runs `make test`.
FAST_SUITES := rangejoin.condition.* rangejoin.bins.* rangejoin.execution.* rangejoin.planning.* \
  rangejoin.differential.PlainDifferentialSuite rangejoin.differential.BandDifferentialSuite \
  rangejoin.differential.KeyedDifferentialSuite rangejoin.differential.KeyedShuffledDifferentialSuite \
  rangejoin.differential.KeyedExistenceDifferentialSuite rangejoin.differential.BinnedDifferentialSuite \
  rangejoin.differential.FileScanDifferentialSuite rangejoin.differential.AsOfDifferentialSuite \
  rangejoin.differential.ShuffledAsOfDifferentialSuite

test-fast: scala-test-fast
	$(MAKE) --no-print-directory py-test-fast

scala-test-fast: $(VENV_STAMP)
	RANGEJOIN_TESTS=fast $(SBT) package "testOnly $(FAST_SUITES)"
	touch $(JAR)

scala-test: $(VENV_STAMP)
	$(SBT) test

# Every line but 4.3: build its jar and run the fast tier's suites against its own Spark: 3.5
# (Scala 2.12, the line furthest from 4.3) in the fast tier, 4.0-4.2 in the smoke tier (a third of
# each family's slice, which the three lines share: each runs a third of it, of the planning
# suite's tests and of the two costly unit loops' key types). The lines of one tier share one sbt
# run (build.sbt's `line` command): the build loads once and the compiler stays warm.
# LINE_TIER=fast runs every line in the fast tier (make test-all does); LINES_TEST="3.5 4.0" runs
# only those lines (the smoke lines then run their share alone), LINE_SUITES other suites.
# The spark-submit --packages tests resolve only 4.3's jar from ~/.m2 (`make test` publishes it);
# `make publish-local` publishes every line.
LINES_TEST ?= $(OTHER_LINES)
LINE_SUITES ?= $(FAST_SUITES)
line_tier = $(if $(LINE_TIER),$(LINE_TIER),$(if $(filter 3.5,$(1)),fast,smoke))
lines_in_tier = $(strip $(foreach l,$(LINES_TEST),$(if $(filter $(1),$(call line_tier,$(l))),$(l))))
# sbt's arguments for `lines`, the first loaded at start and each next switched to with `line`.
line_steps = -Drangejoin.spark=$(firstword $(1)) \
  $(foreach l,$(1),$(if $(filter-out $(firstword $(1)),$(l)),"line $(l)") package "testOnly $(LINE_SUITES)")
lines-test-fast: pyspark-homes
	$(foreach t,fast smoke,$(if $(call lines_in_tier,$(t)),echo "== Spark $(call lines_in_tier,$(t)): the $(t) tier" && \
	  RANGEJOIN_TESTS=$(t) $(SBT) $(call line_steps,$(call lines_in_tier,$(t))) && )) true
	touch $(JARS)

# The pyspark jars of the lines LINES_TEST names, each installed once (build/pyspark-home).
pyspark-homes:
	$(foreach l,$(LINES_TEST),build/pyspark-home $(call pyspark_of,$(l)) >/dev/null && ) true

# Two pytest workers (pytest-xdist), each test file on one: the tests wait on the processes they
# start (a benchmark run, fresh virtualenvs, spark-submit, a local cluster) as much as they
# compute, so one worker alone kept the 2 cores half idle. The two longest files are named first,
# one for each worker (pytest skips a file named twice). docs/design.md, "Tests", has the times.
PYTEST_WORKERS ?= 2
py-test: install
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -q --durations=12 \
	  tests/test_bench.py tests/test_deployment.py tests

# The Python tests but those marked slow (fresh virtualenvs, spark-submit, shells, a local cluster,
# the benchmark's smoke test): the tests of the shared session, a few minutes.
py-test-fast: install
	$(PY) -m pytest -q -m "not slow" tests

# The benchmark's own pinned dependencies (matplotlib, for the chart), in .venv beside the build's.
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(VENV_STAMP) bench/requirements.txt
	$(PY) -m pip install --quiet -r bench/requirements.txt
	touch $@

# W1-W14 at full size and the broadcasts' memory (about an hour on 2 cores; writes docs/benchmarks.md and .png).
# Smaller runs: RANGEJOIN_BENCH_SCALE=0.01 and/or RANGEJOIN_BENCH_QUICK=1, or BENCH_ARGS="--only W1".
bench: install $(BENCH_STAMP)
	$(PY) -m bench.bench $(BENCH_ARGS)

# Publishes every line's jar and pom to the local Maven repository (~/.m2/repository), from which
# `spark-submit --packages io.rangejoin:rangejoin-spark-4.3_2.13:$(VERSION)` (or 3.5_2.12, ...)
# resolves it.
publish-local: $(VENV_STAMP)
	$(SBT) publishM2
	$(foreach l,$(OTHER_LINES),build/pyspark-home $(call pyspark_of,$(l)) >/dev/null && \
	  $(SBT) -Drangejoin.spark=$(l) publishM2 && ) true

publish-m2: publish-local

clean:
	rm -rf target project/target project/project dist build/lib python/rangejoin/jars \
	       python/*.egg-info $(VENV)
