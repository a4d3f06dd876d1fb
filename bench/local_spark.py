"""What the demo, the benchmark and the probes share: an embedded Spark with rangejoin that logs
errors only, the benchmark's settings for it, and the executed plan of a query."""

import contextlib
import os
import tempfile
from typing import Iterator, Mapping

from pyspark.sql import DataFrame, SparkSession

import rangejoin

# The benchmark's Spark, which the probes that compare with it use too: local[THREADS].
THREADS = 2
SPARK_CONF = {
    "spark.driver.memory": "4g",
    # The buffered sides (up to 1M rows, ~16 MB of Parquet) must be broadcastable for both stock
    # Spark's BroadcastNestedLoopJoin and rangejoin; Spark picks the smaller side of an inner join.
    "spark.sql.autoBroadcastJoinThreshold": str(128 * 1024 * 1024),
    "spark.sql.shuffle.partitions": str(THREADS),
}

# Spark logs at WARN from the moment its JVM starts, before setLogLevel can be called; this
# configuration keeps the driver's own log to errors from the start.
LOG4J2_PROPERTIES = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""


@contextlib.contextmanager
def local_spark(app_name: str, threads: int = 2,
                conf: Mapping[str, str] = {}) -> Iterator[SparkSession]:
    """An embedded local Spark set up by ``rangejoin.configure``, stopped on exit."""
    with tempfile.TemporaryDirectory(prefix="rangejoin-log-") as tmp:
        log_config = os.path.join(tmp, "log4j2.properties")
        with open(log_config, "w") as f:
            f.write(LOG4J2_PROPERTIES)
        builder = (
            SparkSession.builder.master(f"local[{threads}]")
            .appName(app_name)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile=file:{log_config}")
            # Everything runs in this one process: keep the driver on loopback.
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
        )
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = rangejoin.configure(builder).getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        try:
            yield spark
        finally:
            spark.stop()


def register_parquet(spark: SparkSession, data_dir: str, tables) -> None:
    """Each table's Parquet file under ``data_dir`` (the benchmark's data) as a view of its name."""
    for table in tables:
        spark.read.parquet(os.path.join(data_dir, f"{table}.parquet")).createOrReplaceTempView(table)


def executed_plan(df: DataFrame) -> str:
    """The final executed plan of ``df`` (call it after an action). With adaptive execution the
    plan's text holds the final plan, then the initial one: only the final one is returned, read
    from the adaptive node itself (the text cannot be cut at "Initial Plan": a subquery in the final
    plan, such as a binned join's grid, prints its own final and initial plans inside it)."""
    plan = df._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.executedPlan()
    return plan.toString()
