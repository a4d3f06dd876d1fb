"""The live JVM heap a join's broadcast holds: rangejoin's sorted broadcast (a SortedBuffer) against
stock Spark's broadcast of the same buffered side (`spark.rangejoin.enabled=false`:
BroadcastNestedLoopJoin's array of UnsafeRows; with an equality key, BroadcastHashJoin's
HashedRelation). The claim checked (issue 28): rangejoin holds at most stock's broadcast plus its
key arrays, the sorted keys (8 bytes a row, as longs), the origins (4) where the buffer keeps them
(only a semi, anti or existence join whose residual can raise an error needs them) and, under an
interval index, the second keys (8).

One JVM (`local[2]`, the benchmark's settings, adaptive execution and the side switch off, so
that the executed plan holds the broadcast node and the side broadcast is the one named). For
each side and engine: the heap after full GCs, then the broadcast built through the plan's own
node (`executeBroadcast()`, `.value()`) and held, the heap again: the difference is what the
broadcast holds, in local mode its value (the one the tasks read) and its serialized pieces in the
block manager. Then, the same way, a deserialized copy of the value (what a cluster's executor
reads from the pieces) and, for an interval index, the tree the first task builds on the
broadcast; then the broadcast is destroyed. Each size is counted twice: the heap in use, as G1
counts it (`MemoryMXBean`), and the live objects' bytes (the class histogram's total). The
engines alternate; after a warm-up round, the median of `--repeat` rounds counts.

    .venv/bin/python -m bench.memory [--repeat 3] [--data-dir bench/data/scale-1-v1] [--markdown]

Reads the benchmark's Parquet data (run `make bench`, or `python -m bench.bench --only
W1,W3,W6,W10`, first); bench.bench runs the same measurement after its workloads and reports it in
docs/benchmarks.md.
"""

import argparse
import functools
import gc
import os
import re
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from py4j.clientserver import SHUTDOWN_FINALIZER_WORKER

import rangejoin
from bench import report
from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark


@dataclass(frozen=True)
class Side:
    table: str  # the buffered side
    query: str  # the benchmark query (workloads.py) whose join buffers it

    @property
    def workload(self) -> str:
        return self.query.split()[0]


SIDES = (Side("b3", "W3 inner"), Side("t1", "W1 inner"), Side("i_large", "W6 BETWEEN large"),
         Side("ci", "W10 keyed BETWEEN"))
ENGINES = {"stock Spark": ("false", "BroadcastExchangeExec"),
           "rangejoin": ("true", "SortedBroadcastExec")}
# Without adaptive execution the executed plan holds the broadcast node itself, not a query stage;
# without the side switch W3 buffers b3 (with it, the 10,000 rows of s3 that can match).
PROBE_CONF = {"spark.sql.adaptive.enabled": "false", rangejoin.SIDE_SWITCH: "false"}
# Beside its rows, rangejoin's payload holds per row: the sorted key as a long, the row's origin
# (an int) if it keeps them and, under an interval index, the second key as a long.
KEY_BYTES, ORIGIN_BYTES, SECOND_KEY_BYTES = 8, 4, 8
# Two heap readings after full GCs this close are taken as settled.
SETTLED_BYTES = 64 * 1024
# A known object for the sanity check: a long[] of exactly 128 MiB with its 16-byte header, a whole
# number of G1 regions of any size (G1 counts a large array by whole regions).
KNOWN_LONGS = (128 * 2**20 - 16) // 8


def key_array_bytes(rows: int, second_keys: bool, origins: bool) -> int:
    """What rangejoin's payload may hold beyond stock's: its key arrays, for ``rows`` rows."""
    return rows * (KEY_BYTES + (ORIGIN_BYTES if origins else 0) + (SECOND_KEY_BYTES if second_keys else 0))


class Heap:
    """The JVM heap in use after full GCs (local mode: the driver JVM is the executor), in two
    counts: the heap's own (G1 counts an array of half a region or more by whole regions) and the
    live objects' bytes (the class histogram's total)."""

    def __init__(self, spark):
        self.spark = spark
        self.jvm = spark._jvm
        self.memory = self.jvm.java.lang.management.ManagementFactory.getMemoryMXBean()
        self._histogram = _diagnostic_command(spark, "gcClassHistogram")

    def settled(self) -> dict:
        """Heap used right after a full GC (`System.gc()`), once two readings in a row agree (the
        first GC may leave what a finalizer or a reference queue frees later), and the live
        objects' bytes."""
        self.release_py4j()
        last = None
        for _ in range(10):
            self.jvm.java.lang.System.gc()
            used = int(self.memory.getHeapMemoryUsage().getUsed())
            if last is not None and abs(used - last) <= SETTLED_BYTES:
                break
            last = used
            time.sleep(0.05)
        return {"heap": used, "objects": self.live_objects()}

    def quiesce(self, rounds: int = 20) -> None:
        """Waits until the heap after full GCs stops falling: after a benchmark's workloads the JVM
        still frees what their queries left (Spark's context cleaner removes a broadcast or a
        shuffle once a GC has found it unreachable, on a thread of its own), which would read as
        a broadcast smaller than it is."""
        last = self.settled()["heap"]
        for _ in range(rounds):
            time.sleep(0.5)
            now = self.settled()["heap"]
            if last - now <= SETTLED_BYTES:
                return
            last = now

    def live_objects(self) -> int:
        """The bytes of every live object: the total of the class histogram (`jcmd GC.class_histogram`,
        which runs a full GC first)."""
        total = self._histogram().rstrip().splitlines()[-1].split()
        if total[0] != "Total":
            raise RuntimeError(f"not a class histogram's last line: {total}")
        return int(total[2])

    def release_py4j(self) -> None:
        """Tells the JVM now of every reference Python dropped. py4j queues those for a worker
        thread that polls its queue once a second, so an object Python no longer holds may still
        be live in the JVM (a broadcast just destroyed, into the next baseline); waiting for the
        worker cost half a second a reading. The queue is drained here instead, each release sent
        as the worker sends it."""
        gc.collect()
        client = self.spark.sparkContext._gateway._gateway_client
        queue = getattr(client, "finalizer_deque", None)
        while queue:
            try:
                task = queue.pop()
            except IndexError:  # the worker took the last one
                break
            if task == SHUTDOWN_FINALIZER_WORKER:  # the worker's to act on
                queue.append(task)
                break
            owner, target_id = task
            owner.garbage_collect_object(target_id, False)
        time.sleep(0.1)  # one the worker popped just before may still be on its way

    def known_object(self) -> dict:
        """The sanity check: a long[] of known size, measured as the broadcasts are."""
        before = self.settled()
        array = self.spark.sparkContext._gateway.new_array(self.jvm.long, KNOWN_LONGS)
        held = self.settled()
        del array
        return dict(difference(before, held), bytes=16 + 8 * KNOWN_LONGS)


def difference(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in before}


def _diagnostic_command(spark, operation: str) -> Callable[[], str]:
    """A HotSpot diagnostic command (`jcmd`'s) run in this JVM through its MBean. py4j cannot call
    the platform MBean server's own class (not exported by its module): the call goes through the
    public interface's Method."""
    jvm, gateway = spark._jvm, spark.sparkContext._gateway

    def array(cls, values):
        out = gateway.new_array(cls, len(values))
        for i, v in enumerate(values):
            out[i] = v
        return out

    server = jvm.java.lang.management.ManagementFactory.getPlatformMBeanServer()
    types = array(jvm.java.lang.Class, [jvm.java.lang.Class.forName(c) for c in (
        "javax.management.ObjectName", "java.lang.String", "[Ljava.lang.Object;", "[Ljava.lang.String;")])
    invoke = jvm.java.lang.Class.forName("javax.management.MBeanServerConnection").getMethod("invoke", types)
    args = array(jvm.java.lang.Object, [
        jvm.javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), operation,
        array(jvm.java.lang.Object, [gateway.new_array(jvm.java.lang.String, 0)]),
        array(jvm.java.lang.String, ["[Ljava.lang.String;"])])
    return lambda: invoke.invoke(server, args)


def g1_region_bytes(spark) -> Optional[int]:
    """G1's region size in this JVM (an array of half a region or more takes whole regions), or
    None under another collector."""
    found = re.search(r"G1HeapRegionSize=(\d+)", _diagnostic_command(spark, "vmFlags")())
    return int(found.group(1)) if found else None


def _nodes(plan):
    """Every node of a plan without adaptive execution, depth first."""
    stack = [plan]
    while stack:
        node = stack.pop()
        yield node
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.length()))


def broadcast_node(plan, class_name: str):
    found = [n for n in _nodes(plan) if n.getClass().getSimpleName() == class_name]
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} {class_name} nodes in the plan:\n{plan.toString()}")
    return found[0]


def scanned_files(node) -> List[str]:
    """The Parquet files the scans under ``node`` read (the buffered side's table)."""
    files = []
    for n in _nodes(node):
        if n.getClass().getSimpleName() == "FileSourceScanExec":
            paths = n.relation().location().rootPaths().mkString("\u0001").split("\u0001")
            files += [p.rstrip("/").rsplit("/", 1)[-1] for p in paths]
    return files


def describe(plan_text: str) -> dict:
    """The join and rangejoin's index, as the executed plan's text names them."""
    join = re.search(r"\b(PiecewiseMergeJoin|BroadcastNestedLoopJoin|BroadcastHashJoin)\b", plan_text)
    index = re.search(r"\b(IntervalIndex|BandRun|SortedRun)( per key)?", plan_text)
    return {"join": join.group(1) if join else None, "index": index.group(0) if index else None}


class OtherSide(Exception):
    """The plan broadcasts another table than the side to measure (at a small scale W10's two
    tables have the same 1,000 rows, and stock Spark broadcasts the other one)."""


def hold(spark, sql: str, node_class: str, table: str) -> dict:
    """The broadcast of ``sql``'s buffered side, built through the plan's own broadcast node and
    held (the Broadcast and its value), with what the plan says of it."""
    plan = spark.sql(sql)._jdf.queryExecution().executedPlan()
    node = broadcast_node(plan, node_class)
    files = scanned_files(node)
    if files != [f"{table}.parquet"]:
        raise OtherSide(f"{node_class} reads {', '.join(files)}")
    broadcast = node.executeBroadcast()
    value = broadcast.value()
    rangejoin_node = node_class == ENGINES["rangejoin"][1]
    return dict(describe(plan.toString()), broadcast=broadcast, value=value,
                payload=value.getClass().getSimpleName(),
                second_keys=rangejoin_node and node.secondKey().isDefined(),
                origins=rangejoin_node and value.isSorted() and value.keepsOrigins(),
                rows=int(value.numRows()) if rangejoin_node else None)


def session_serializer(spark):
    """An instance of the session's serializer (``spark.serializer``, Java's by default), and the
    class tag its calls take."""
    jvm = spark._jvm
    conf = spark.sparkContext._jsc.sc().getConf()
    name = conf.get("spark.serializer", "org.apache.spark.serializer.JavaSerializer")
    serializer = functools.reduce(getattr, name.split("."), jvm)(conf).newInstance()
    return serializer, jvm.scala.reflect.ClassTag.AnyRef()


def deserialized_copy(spark, value):
    """``value`` serialized and read back with the session's serializer: the value as a cluster's
    executor holds it, read from the broadcast's pieces (in local mode tasks read the driver's
    own value, the one built)."""
    serializer, tag = session_serializer(spark)
    return serializer.deserialize(serializer.serialize(value, tag), tag)


def measure_once(spark, heap: Heap, sql: str, engine: str, table: str) -> dict:
    """One build of ``engine``'s broadcast: what it holds (the value and its pieces), what a
    deserialized copy of its value holds, and for rangejoin's interval index what its interval
    tree adds (built on the broadcast by the first task that searches it). Each as a difference of
    ``Heap.settled`` readings; ``left`` is what stays after the broadcast is destroyed."""
    enabled, node_class = ENGINES[engine]
    spark.conf.set(rangejoin.ENABLED, enabled)
    before = heap.settled()
    held = hold(spark, sql, node_class, table)
    during = heap.settled()
    run = {"held": difference(before, during), "tree": None}
    if held["second_keys"]:
        held["value"].tree()
        with_tree = heap.settled()
        run["tree"] = difference(during, with_tree)
        during = with_tree
    copy = deserialized_copy(spark, held["value"])
    run["copy"] = difference(during, heap.settled())
    del copy
    held["broadcast"].destroy(True)  # blocking: the block manager drops the value and pieces
    run.update({k: v for k, v in held.items() if k not in ("broadcast", "value")})
    del held
    run["left"] = difference(before, heap.settled())
    return run


MEASURES = ("held", "copy", "tree", "left")


def medians(runs: List[dict]) -> dict:
    """Each measure's median over the runs in both counts (heap, objects), and every run's."""
    out = {}
    for measure in MEASURES:
        if runs[0][measure] is not None:
            out[measure] = {}
            for count in ("heap", "objects"):
                values = [r[measure][count] for r in runs]
                out[measure].update({count: statistics.median(values), f"{count}_runs": values})
    return out


def measure_side(spark, heap: Heap, side: Side, repeat: int, warm: bool, log) -> dict:
    """Both engines' broadcasts of ``side``, alternating, ``repeat`` times each after a warm-up
    round (``warm``): the medians, and every run's sizes; or why not (``skipped``), if an engine
    broadcasts another table."""
    sql = next(q.sql for w in wl.workloads() for q in w.queries if q.key == side.query)
    runs: Dict[str, List[dict]] = {engine: [] for engine in ENGINES}
    out = {"table": side.table, "query": side.query, "sql": sql}
    try:
        for round_ in range(repeat + (1 if warm else 0)):
            for engine in ENGINES:
                run = measure_once(spark, heap, sql, engine, side.table)
                if not (warm and round_ == 0):
                    runs[engine].append(run)
    except OtherSide as e:
        log(f"    {side.table} ({side.query}): not measured, {engine} broadcasts another side ({e})")
        return dict(out, skipped=f"{engine} broadcasts another side ({e})")
    for engine, rs in runs.items():
        out[engine] = dict(medians(rs), join=rs[0]["join"], payload=rs[0]["payload"])
    rj = runs["rangejoin"][0]
    out["rangejoin"]["index"] = rj["index"]
    out.update(rows=rj["rows"], second_keys=rj["second_keys"], origins=rj["origins"],
               key_array_bytes=key_array_bytes(rj["rows"], rj["second_keys"], rj["origins"]))
    log(report.memory_line(out))
    return out


def register_tables(spark, data_dir: str, sides=SIDES) -> None:
    """The tables of the workloads of ``sides``, as temporary views over their Parquet files."""
    tables = {t for side in sides for w in wl.workloads() if w.key == side.workload for t in w.tables}
    for t in sorted(tables):
        spark.read.parquet(os.path.join(data_dir, f"{t}.parquet")).createOrReplaceTempView(t)


def measure_broadcasts(spark, data_dir: str, sides=SIDES, repeat: int = 3, warm: bool = True,
                       log: Callable[[str], None] = print) -> dict:
    """Every side of ``sides`` measured in both engines (see the module's docstring), on the Parquet
    files in ``data_dir``. The session's settings are restored afterwards."""
    register_tables(spark, data_dir, sides)
    saved = {key: spark.conf.get(key, None) for key in (*PROBE_CONF, rangejoin.ENABLED)}
    heap = Heap(spark)
    try:
        for key, value in PROBE_CONF.items():
            spark.conf.set(key, value)
        # Without a warm-up (a smoke run, whose sizes mean little) two rounds, not twenty: the
        # benchmark's smoke test in `make test` spent half a minute here.
        heap.quiesce(rounds=20 if warm else 2)
        out = {"repeat": repeat, "warm": warm, "conf": PROBE_CONF,
               "max_heap": int(spark._jvm.java.lang.Runtime.getRuntime().maxMemory()),
               "region_bytes": g1_region_bytes(spark), "known_object": heap.known_object(),
               "sides": [], "skipped": []}
        log("    " + report.known_object_line(out))
        for side in sides:
            measured = measure_side(spark, heap, side, repeat, warm, log)
            out["skipped" if "skipped" in measured else "sides"].append(measured)
        return out
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="measurements per side and engine, "
                        "after a warm-up round (the median counts)")
    parser.add_argument("--data-dir", default=os.path.join(wl.DATA_ROOT, wl.scale_tag(1)),
                        help="the benchmark's generated data (default bench/data/scale-1-v1)")
    parser.add_argument("--markdown", action="store_true",
                        help="print the section docs/benchmarks.md gives it, instead of the text tables")
    args = parser.parse_args(argv)
    if not os.path.exists(os.path.join(args.data_dir, "manifest.json")):
        raise SystemExit(f"no benchmark data in {args.data_dir}: run `make bench` first")
    with local_spark("broadcast-memory", conf=SPARK_CONF) as spark:
        memory = measure_broadcasts(spark, args.data_dir, repeat=args.repeat)
    print()
    print("\n".join(report.memory_markdown(memory)) if args.markdown else report.memory_text(memory))


if __name__ == "__main__":
    main()
