"""Shared fixtures: one small local SparkSession, with rangejoin, for the whole pytest run.

The tests import rangejoin from the installed wheel (``make py-test`` installs it first), never
from the source tree: ``python/`` is not on ``sys.path``.
"""

import contextlib
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import rangejoin

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession set up by ``rangejoin.configure``, stopped after the last test."""
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("rangejoin-pytest")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # Local mode needs no network: keep the driver on loopback.
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        # The JIT's first tier only, as in the Scala suites (build.sbt): hundreds of small
        # queries, each compiled once, which the optimizing compiler never pays back.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    )
    session = rangejoin.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def rangejoin_conf(spark):
    """Restores ``spark.rangejoin.enabled`` to its default (unset) after a test that changes it."""
    yield spark
    spark.conf.unset(rangejoin.ENABLED)


@contextlib.contextmanager
def rangejoin_set(spark, enabled: bool):
    """Within the block, ``spark.rangejoin.enabled`` is ``enabled``; afterwards it is unset again."""
    spark.conf.set(rangejoin.ENABLED, "true" if enabled else "false")
    try:
        yield
    finally:
        spark.conf.unset(rangejoin.ENABLED)
