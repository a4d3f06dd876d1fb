"""What the benchmark reads from Spark's JVM through py4j: the executed plan's nodes and their SQL
metrics, the task metric "records read" of a query's stages, and the JVM heap's peak use."""

import threading
import time
from typing import Dict, Iterator, List, Optional

from pyspark.sql import DataFrame, SparkSession


def _seq(scala_seq) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.length())]


def plan_nodes(df: DataFrame) -> Iterator:
    """Every node of ``df``'s final executed plan (call it after an action), through adaptive
    query stages, reused exchanges and subqueries."""
    identity = df.sparkSession._jvm.java.lang.System.identityHashCode
    stack = [df._jdf.queryExecution().executedPlan()]
    seen = set()  # a reused exchange's subtree is visited once
    while stack:
        node = stack.pop()
        key = identity(node)
        if key in seen:
            continue
        seen.add(key)
        kind = node.getClass().getSimpleName()
        if kind == "AdaptiveSparkPlanExec":
            stack.append(node.executedPlan())
            continue
        if kind.endswith("QueryStageExec"):
            stack.append(node.plan())
            continue
        if kind == "ReusedExchangeExec":
            stack.append(node.child())
            continue
        yield node
        stack.extend(_seq(node.children()))
        stack.extend(_seq(node.subqueries()))


def metrics_of(node) -> Dict[str, tuple]:
    """A plan node's SQL metrics: key -> (display name, value)."""
    metrics = node.metrics()
    keys = metrics.keySet().mkString("\u0001")
    out = {}
    for key in keys.split("\u0001") if keys else []:
        metric = metrics.apply(key)
        name = metric.name()
        out[key] = (name.get() if name.isDefined() else key, int(metric.value()))
    return out


def node_metrics(df: DataFrame, node_name: str) -> List[Dict[str, tuple]]:
    """The metrics of every node named ``node_name`` (e.g. "PiecewiseMergeJoin")."""
    return [metrics_of(n) for n in plan_nodes(df) if n.nodeName() == node_name]


def scan_rows(df: DataFrame, file_name: str) -> Optional[int]:
    """Rows output by the file scans of ``file_name`` in ``df``'s plan (the rows read from the
    Parquet row groups the scan did not skip), or None if no scan reads that file."""
    total = None
    for node in plan_nodes(df):
        if node.getClass().getSimpleName() != "FileSourceScanExec":
            continue
        # Whole file names: "e.parquet" is a substring of "e_large.parquet"'s path too.
        paths = node.relation().location().rootPaths().mkString("\u0001").split("\u0001")
        if any(path.rstrip("/").rsplit("/", 1)[-1] == file_name for path in paths):
            total = (total or 0) + int(node.metrics().apply("numOutputRows").value())
    return total


class QueryStages:
    """The stages (status-store stage data, last attempt each) of every job started between
    ``mark()`` and ``stages()``: the stages of the queries run in between."""

    def __init__(self, spark: SparkSession):
        self.sc = spark.sparkContext._jsc.sc()
        self.store = self.sc.statusStore()
        self.last_job = -1

    def _newest_job(self) -> int:
        jobs = self.store.jobsList(None)  # newest first
        return jobs.apply(0).jobId() if jobs.length() else -1

    def mark(self) -> None:
        self.sc.listenerBus().waitUntilEmpty()
        self.last_job = self._newest_job()

    def stages(self) -> list:
        self.sc.listenerBus().waitUntilEmpty()
        jobs = self.store.jobsList(None)
        ids = set()
        for i in range(jobs.length()):
            job = jobs.apply(i)
            if job.jobId() <= self.last_job:
                break
            ids.update(_seq(job.stageIds()))
        stages = []
        for stage in sorted(ids):
            try:
                stages.append(self.store.lastStageAttempt(stage))
            except Exception:  # a stage the store no longer holds
                pass
        return stages

    def completed(self) -> list:
        """The stages of ``stages()`` that completed (not skipped, not failed)."""
        return [s for s in self.stages() if str(s.status()) == "COMPLETE"]


def print_timeline(done: list, wall_ms: float) -> None:
    """The completed stages ``done`` of a query that took ``wall_ms`` and has just ended: offsets
    from its start, CPU, tasks, rows read from files, records and bytes written to and read from
    shuffles (the stages' times are epoch milliseconds: the query started its wall time ago)."""
    began = time.time() * 1000 - wall_ms
    for s in done:
        submitted = s.submissionTime().get().getTime() - began
        completed = s.completionTime().get().getTime() - began
        print(f"  +{submitted:5.0f} to +{completed:5.0f}  CPU {s.executorCpuTime() // 1_000_000:5d} ms  "
              f"tasks {s.numTasks():3d}  file rows {s.inputRecords():11,d}  shuffle written "
              f"{s.shuffleWriteRecords():9,d} records ({s.shuffleWriteBytes():,d} bytes)  read {s.shuffleReadRecords():9,d}")


class StageInput(QueryStages):
    """Input records (the task metric "records read") of every stage of the jobs started between
    ``mark()`` and ``read()``: all the rows the query's tasks read from files."""

    def read(self) -> int:
        return sum(int(stage.inputRecords()) for stage in self.stages())


class HeapPeak:
    """The JVM heap's peak use while the block runs (local mode: the driver JVM is the executor).

    Before the block: a full GC, the baseline (heap used after it), and every heap memory pool's
    peak reset (``MemoryPoolMXBean.resetPeakUsage``). During it: the heap's total use sampled every
    20 ms. After it: each pool's peak (``getPeakUsage``). The sum of the pools' peaks bounds the
    peak from above (the pools peak at different moments); the sampled peak from below."""

    def __init__(self, spark: SparkSession):
        self.jvm = spark._jvm
        management = self.jvm.java.lang.management.ManagementFactory
        self.memory = management.getMemoryMXBean()
        self.pools = [p for p in management.getMemoryPoolMXBeans()
                      if p.getType().toString() == "Heap memory"]
        self.result: Dict[str, object] = {}

    def _used(self) -> int:
        return int(self.memory.getHeapMemoryUsage().getUsed())

    def __enter__(self):
        self.jvm.java.lang.System.gc()
        self.result = {"baseline": self._used(),
                       "max_heap": int(self.jvm.java.lang.Runtime.getRuntime().maxMemory())}
        for pool in self.pools:
            pool.resetPeakUsage()
        self._sampled = self.result["baseline"]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            try:
                self._sampled = max(self._sampled, self._used())
            except Exception:
                return

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        pools = {p.getName(): int(p.getPeakUsage().getUsed()) for p in self.pools}
        self.result.update(pools=pools, pool_peak_sum=sum(pools.values()),
                           sampled_peak=self._sampled)
        return False
