"""Benchmark W1-W12: range joins in Spark with rangejoin, in stock Spark, and in DuckDB.

Run it with ``make bench`` (which builds and installs the wheel and the benchmark's own pinned
dependencies first), or ``python -m bench.bench [options]`` from the repository's root with a
Python that has the wheel, pyspark and duckdb (and matplotlib, for the chart). See bench/README.md.

The data is generated once per scale, by DuckDB, into Parquet files under bench/data/; Spark and
DuckDB read the same files. Spark runs embedded on local[2], with ``spark.rangejoin.enabled=true``
(rangejoin) or ``false`` (stock Spark); DuckDB runs in-process with 2 threads. Every query runs
once untimed (warm-up), then is timed ``--repeat`` times; the best time counts. Stock Spark runs at
a reduced size, with its full-size time extrapolated, where it would take longer than
``--stock-limit`` seconds. Each workload also has a floor: Spark doing the workload's scanning (or,
for W4, producing its rows) without the join; W6-W9, which run at two sizes, have one per size.
Answers must agree across engines and rangejoin's plans must use PiecewiseMergeJoin (stock Spark's
must not): otherwise the benchmark stops with an error. A missed target is reported, never an error.
After the workloads, bench.memory measures the heap each engine's broadcast of the same buffered
side holds (W1's, W3's, W6's and W10's, of those that ran).
"""

import argparse
import datetime as dt
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

import duckdb

import rangejoin
from bench import memory, report
from bench import workloads as wl
from bench.jvm_metrics import HeapPeak, StageInput, node_metrics, scan_rows
from bench.local_spark import SPARK_CONF, THREADS, executed_plan, local_spark

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PMJ = "PiecewiseMergeJoin"
# A join rangejoin runs as Spark's own equi-join on bins shows its bin generators
# (RangeJoinPointBins, RangeJoinIntervalBins, RangeJoinOverlapBins) and its chunked shuffle
# (RangeJoinBinChunks) under it (W12).
BINS = "RangeJoin"
NESTED_LOOPS = ("CartesianProduct", "BroadcastNestedLoopJoin")
# The indexes a PiecewiseMergeJoin names in EXPLAIN (see docs/design.md).
INDEXES = ("IntervalIndex", "BandRun", "SortedRun")
DYNAMIC_FILTER_METRIC = "streamed rows skipped by the dynamic filter"
# The node the dynamic filter is planned as, on the join's streamed side (see docs/design.md).
# The join carries its dynamic filter, and the filter's metric.
DYNAMIC_FILTER_NODE = "PiecewiseMergeJoin"

class BenchError(Exception):
    pass


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


_START = time.perf_counter()


def log(message: str = "") -> None:
    """Prints ``message``, each line after the minutes and seconds since the start."""
    elapsed = time.perf_counter() - _START
    stamp = f"[{int(elapsed // 60):3d}:{int(elapsed % 60):02d}] "
    print("\n".join(stamp + line if line else line for line in message.split("\n")), flush=True)


def nice_floor(n: int) -> int:
    """n rounded down to two significant digits."""
    if n < 100:
        return n
    step = 10 ** (len(str(n)) - 2)
    return n // step * step


class Engines:
    """Spark and DuckDB, each with a view per table over the same Parquet file; a table can be
    reduced to its first n rows (in both engines) for stock Spark's reduced runs."""

    def __init__(self, spark, con, manifest):
        self.spark, self.con, self.manifest = spark, con, manifest
        self.specs = wl.tables(manifest["scale"])
        self.stage_input = StageInput(spark)
        self.reduced: Dict[str, int] = {}
        self.frames = {}
        self.query_conf: Dict[str, str] = {}  # the running query's own Spark settings

    def path(self, table: str) -> str:
        return os.path.join(self.manifest["directory"], self.specs[table].file)

    def rows(self, table: str) -> int:
        return self.reduced.get(table, self.specs[table].rows)

    def view(self, table: str, first: Optional[int] = None) -> None:
        spec = self.specs[table]
        where = spec.first_rows.format(n=first) if first is not None else None
        if table not in self.frames:  # reading a Parquet file's schema runs a Spark job
            self.frames[table] = self.spark.read.parquet(self.path(table))
        df = self.frames[table]
        (df.where(where) if where else df).createOrReplaceTempView(table)
        self.con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM "
                         f"read_parquet('{self.path(table)}')" + (f" WHERE {where}" if where else ""))
        if first is None:
            self.reduced.pop(table, None)
        else:
            self.reduced[table] = first

    def spark_run(self, sql: str, mode: str, marker: Optional[str] = PMJ):
        """One Spark run: (answer, seconds, DataFrame, input records). ``mode``: "rangejoin",
        "stock" or "floor" (which runs with rangejoin on, and has no join). ``marker``: what
        rangejoin's plan must contain and stock Spark's must not (the query's plan_marker)."""
        self.spark.conf.set(rangejoin.ENABLED, "false" if mode == "stock" else "true")
        for key, value in self.query_conf.items():
            self.spark.conf.set(key, value)
        try:
            self.stage_input.mark()
            start = time.perf_counter()
            df = self.spark.sql(sql)
            rows = df.collect()
            seconds = time.perf_counter() - start
            records = self.stage_input.read()
            plan = executed_plan(df)
        finally:
            for key in self.query_conf:
                self.spark.conf.unset(key)
        # rangejoin shows itself as its operator, or (binned: Spark's own equi-join) as the
        # RangeJoin bin generators under it.
        ours = (marker is not None and marker in plan) or BINS in plan or PMJ in plan
        if mode == "rangejoin" and marker is not None and not ours:
            raise BenchError(f"rangejoin planned neither a {marker} nor its {BINS} bins for:\n{sql}\n{plan}")
        if mode == "rangejoin" and self.query_conf and any(op in plan for op in NESTED_LOOPS):
            raise BenchError(f"rangejoin left a nested loop in the plan of:\n{sql}\n{plan}")
        if mode == "stock" and ours:
            raise BenchError(f"stock Spark (rangejoin disabled) planned rangejoin's for:\n{sql}\n{plan}")
        return answer_of(rows[0]), seconds, df, records

    def duckdb_run(self, sql: str):
        start = time.perf_counter()
        row = self.con.execute(sql).fetchone()
        seconds = time.perf_counter() - start
        return answer_of(row), seconds


def answer_of(row) -> tuple:
    return tuple(None if v is None else int(v) for v in row)


def join_operator(plan: str) -> Optional[str]:
    """The first join node of an executed plan's text, without the tree's drawing, the
    whole-stage-codegen prefix or the expression ids: e.g. "PiecewiseMergeJoin Inner, BuildRight,
    IntervalIndex (x >= lo AND x <= hi)" or "CartesianProduct (x >= lo)"; None if the plan has no
    join."""
    for line in plan.splitlines():
        text = re.sub(r"^[\s:|+-]*(\*\(\d+\)\s*)?", "", line)
        if re.match(r"(\w*Join|CartesianProduct)\b", text):
            return re.sub(r"#\d+L?", "", text).strip()
    return None


def index_of(join: Optional[str]) -> Optional[str]:
    """The index a PiecewiseMergeJoin line names (IntervalIndex, BandRun or SortedRun), if any."""
    found = re.search(r"\b(" + "|".join(INDEXES) + r")\b", join or "")
    return found.group(1) if found else None


def timed(label: str, run, repeat: int, warm=True) -> dict:
    """A warm-up run (unless ``warm`` is False: the caller just ran it), then ``repeat`` timed
    runs; every run must give the same answer. Returns answer, times, best, and the last run's
    extras (DataFrame, input records)."""
    extra = None
    if warm:
        answer, _, *extra = run()
    else:
        answer = None
    times = []
    for _ in range(repeat):
        again, seconds, *extra = run()
        if answer is not None and again != answer:
            raise BenchError(f"{label} answered {again}, then {answer}")
        answer = again
        times.append(seconds)
    runs = ", ".join(f"{t:.3f}" for t in times)
    log(f"    {label:<28} best {min(times):8.3f} s  (runs: {runs})  answer {answer}")
    return {"answer": answer, "times": times, "best": min(times), "extra": extra}


# A query every engine answers at full size in under SHORT_SECONDS (its best run) is short: at a
# fifth of a second, this machine's noise is as large as the differences measured, and up to a
# few seconds the order the engines ran in (the JVM warmer for the later one) decides a close
# comparison such as W13's, where both engines may run the same plan. Each engine then runs it
# --short-repeat times in all, the extra runs interleaved (rangejoin, DuckDB, stock Spark, again),
# and its floor as often. The count is decided once per query, for every engine alike.
SHORT_SECONDS = 2.5


def is_short(out: dict, args) -> bool:
    if args.short_repeat <= args.repeat:
        return False
    ran = [out[e] for e in ("rangejoin", "DuckDB", "stock Spark") if out.get(e)]
    return all(not r.get("reduced") and min(r["times"]) < SHORT_SECONDS for r in ran)


def time_more(label: str, runs: Dict[str, object], results: Dict[str, dict], total: int) -> None:
    """Runs each of ``runs`` (engine: run) until ``results[engine]`` holds ``total`` times,
    interleaving the engines; every run must give the answer the engine gave before."""
    while any(len(results[e]["times"]) < total for e in runs):
        for engine, run in runs.items():
            result = results[engine]
            if len(result["times"]) >= total:
                continue
            answer, seconds, *_ = run()
            if answer != result["answer"]:
                raise BenchError(f"{label}, {engine} answered {answer}, then {result['answer']}")
            result["times"].append(seconds)
            result["best"] = min(result["times"])
    for engine in runs:
        times = ", ".join(f"{t:.3f}" for t in results[engine]["times"])
        log(f"    {engine:<28} best {results[engine]['best']:8.3f} s  (runs: {times})")


def check_agree(what: str, answers: Dict[str, tuple]) -> None:
    if len(set(answers.values())) != 1:
        raise BenchError(f"answers differ for {what}: {answers}")


def run_sized(engines: Engines, query: wl.Query, engine: str, args) -> dict:
    """``engine`` ("stock Spark" or "DuckDB") on ``query``: at full size if a run takes at most
    ``--stock-limit`` seconds (as estimated from probe runs on the first rows of the streamed
    table), else at a reduced size whose runs take about ``--stock-target`` seconds, with the
    full-size time extrapolated linearly in the streamed rows (such an engine compares every
    pair of rows: its time is O(N x M)); see ``extrapolate``."""
    if engine == "stock Spark":
        def run():
            return engines.spark_run(query.sql, "stock", query.plan_marker)
    else:
        def run():
            return engines.duckdb_run(query.text("DuckDB"))
    table = query.streamed
    full = engines.specs[table].rows
    probes = []

    def probe(rows: int) -> float:
        engines.view(table, first=rows if rows < full else None)
        _, seconds, *_ = run()
        probes.append((rows, round(seconds, 3)))
        return seconds

    # Probe runs on more and more of the streamed table's first rows, growing 4x to 16x at a
    # time, until two of them show the time growing with the rows (the second at least
    # --probe-min seconds and twice the first: the time per row, not Spark's fixed cost per
    # query, dominates it); the line through them estimates the full-size time. The very first
    # run is a warm-up.
    n = full if full <= 20_000 else max(1_000, full // 10_000)
    fit = None  # (fixed seconds, seconds per row)
    if n < full:
        probe(n)
        probes.clear()
    seconds = probe(n)
    while n < full and seconds < args.stock_target:
        if len(probes) >= 2:
            (n1, t1), (n2, t2) = probes[-2], probes[-1]
            if t2 >= args.probe_min and t2 >= 2 * t1:
                slope = (t2 - t1) / (n2 - n1)
                fit = (max(0.0, t2 - slope * n2), slope)
                break
        n = min(full, int(n * min(16.0, max(4.0, 1.5 * args.probe_min / max(seconds, 0.05)))))
        seconds = probe(n)
    if n >= full:
        estimate = seconds
    elif fit:
        estimate = fit[0] + fit[1] * full
    else:  # a probe that took --stock-target seconds already
        estimate = seconds * full / n
    if len(probes) > 1 or n < full:
        log(f"    {engine} probes (rows of {table}: seconds): "
            + ", ".join(f"{r:,}: {t:.3f}" for r, t in probes))
    if estimate <= args.stock_limit:
        size = full
    else:
        rows = (args.stock_target - fit[0]) / fit[1] if fit else n * args.stock_target / seconds
        size = min(full - 1, max(n, nice_floor(int(rows))))
        log(f"    {engine}: about {estimate:,.0f} s a run at full size, over {args.stock_limit:g} s:"
            f" running it on the first {size:,} of {full:,} {table} rows")
    engines.view(table, first=size if size < full else None)
    label = f"{engine} ({size:,} {table} rows)" if size < full else engine
    result = timed(label, run, args.repeat, warm=size != n and not args.no_warmup)
    result.update(rows=size, full_rows=full, table=table, reduced=size < full, probes=probes,
                  estimate=estimate, extrapolated=None)
    if size < full:
        result.update(extrapolate(engines, table, size, result["best"], full, run))
        log(f"    {engine}: ~{result['extrapolated']:,.1f} s at full size, extrapolated "
            f"({result['extrapolation']})")
    engines.view(table)
    return result


def extrapolate(engines: Engines, table: str, size: int, best: float, full: int, run) -> dict:
    """The full-size time of a run that took ``best`` seconds on ``size`` of ``full`` rows.

    One more run on a quarter of the rows fits t(n) = a + b n (a: the fixed cost of a query, b:
    the cost per streamed row, which compares it with every row of the other side); the
    extrapolation is a + b x full, or best x full / size if that is smaller (it always is when the
    fit finds no fixed cost), so that it never inflates the engine's time."""
    proportional = best * full / size
    small = size // 4
    if small < 1:
        return {"extrapolated": proportional, "extrapolation": "proportional"}
    engines.view(table, first=small)
    _, t_small, *_ = run()
    slope = (best - t_small) / (size - small)
    fixed = best - slope * size
    fitted = fixed + slope * full
    if slope > 0 and fitted < proportional:
        how = (f"t(n) = {fixed:.3f} s + n x {slope * 1e6:.3f} s per million rows, from "
               f"{t_small:.3f} s on {small:,} rows and {best:.3f} s on {size:,}")
        return {"extrapolated": fitted, "extrapolation": how, "fit": [small, t_small, fixed, slope]}
    how = (f"{best:.3f} s x {full:,} / {size:,}; a run on {small:,} rows took {t_small:.3f} s, "
           "so a fixed cost does not lower the estimate")
    return {"extrapolated": proportional, "extrapolation": how, "fit": [small, t_small, None, None]}


def run_query(engines: Engines, workload: wl.Workload, query: wl.Query, args) -> dict:
    log(f"\n  {query.key}: {query.sql}")
    if query.duckdb_sql:
        log(f"    (DuckDB: {query.duckdb_sql})")
    for t in workload.tables:
        engines.view(t)
    engines.query_conf = dict(query.spark_conf)
    try:
        return run_query_with_conf(engines, workload, query, args)
    finally:
        engines.query_conf = {}


def run_query_with_conf(engines: Engines, workload: wl.Workload, query: wl.Query, args) -> dict:
    out = {"key": query.key, "sql": query.sql, "duckdb_sql": query.duckdb_sql,
           "reference_sql": query.reference_sql, "spark_conf": dict(query.spark_conf)}
    out["rangejoin"] = timed("rangejoin", lambda: engines.spark_run(query.sql, "rangejoin", query.plan_marker),
                             args.repeat, warm=not args.no_warmup)
    df, records = out["rangejoin"]["extra"]
    out["rangejoin"]["input_records"] = records
    out["rangejoin"]["join"] = join_operator(executed_plan(df))
    out["index"] = index_of(out["rangejoin"]["join"])
    log(f"    rangejoin's join: {out['rangejoin']['join']}")
    out["rangejoin"]["scan_rows"] = {t: scan_rows(df, engines.specs[t].file) for t in workload.tables}
    out["pmj_metrics"] = node_metrics(df, PMJ)
    out["dynamic_filter_metrics"] = node_metrics(df, DYNAMIC_FILTER_NODE)
    out["sorted_broadcast_metrics"] = node_metrics(df, "SortedBroadcast")
    out["DuckDB"] = run_sized(engines, query, "DuckDB", args)
    if args.skip_stock:
        out["stock Spark"] = None
    else:
        stock = out["stock Spark"] = run_sized(engines, query, "stock Spark", args)
        df, records = stock["extra"]
        stock["input_records"] = records
        stock["join"] = join_operator(executed_plan(df))
        log(f"    stock Spark's join: {stock['join']}")
        stock["scan_rows"] = {t: scan_rows(df, engines.specs[t].file) for t in workload.tables}

    out["short"] = is_short(out, args)
    if out["short"]:
        log(f"    every engine under {SHORT_SECONDS:g} s: {args.short_repeat} timed runs each, "
            "interleaved")
        runs = {"rangejoin": lambda: engines.spark_run(query.sql, "rangejoin", query.plan_marker),
                "DuckDB": lambda: engines.duckdb_run(query.text("DuckDB")),
                "stock Spark": lambda: engines.spark_run(query.sql, "stock", query.plan_marker)}
        time_more(query.key, {e: r for e, r in runs.items() if out.get(e)}, out, args.short_repeat)

    # The answers at full size: rangejoin's, and every other engine's that ran at full size, and
    # DuckDB's answer to an equivalent query where it has one.
    full = {"rangejoin": out["rangejoin"]["answer"]}
    for engine in ("DuckDB", "stock Spark"):
        if out[engine] and not out[engine]["reduced"]:
            full[engine] = out[engine]["answer"]
    if query.reference_sql:
        full["DuckDB (equivalent query)"], _ = engines.duckdb_run(query.reference_sql)
    if len(full) < 2:
        raise BenchError(f"{query.key}: no engine but rangejoin ran at full size and there is no "
                         "equivalent query to check its answer with")
    check_agree(query.key, full)
    check_expected(query, engines, out["rangejoin"]["answer"])
    checked = [", ".join(full)]
    # At a reduced size, the same reduced data once in rangejoin: the answers must agree.
    for engine in ("DuckDB", "stock Spark"):
        result = out[engine]
        if result and result["reduced"]:
            engines.view(result["table"], first=result["rows"])
            rj, *_ = engines.spark_run(query.sql, "rangejoin", query.plan_marker)
            check_agree(f"{query.key} on the first {result['rows']:,} rows of {result['table']}",
                        {engine: result["answer"], "rangejoin": rj})
            check_expected(query, engines, rj)
            engines.view(result["table"])
            checked.append(f"{engine} and rangejoin on the first {result['rows']:,} rows")
    out["answers_checked"] = checked
    log(f"    answers agree: {out['rangejoin']['answer']} ({'; '.join(checked)})")

    for metric in out["dynamic_filter_metrics"]:
        for key, (name, value) in metric.items():
            if name == DYNAMIC_FILTER_METRIC:
                out["dynamic_filter_skipped"] = out.get("dynamic_filter_skipped", 0) + value
    if out.get("dynamic_filter_skipped") is not None:
        log(f"    {DYNAMIC_FILTER_METRIC}: {out['dynamic_filter_skipped']:,}")

    if workload.key == "W3":
        out["memory"] = measure_memory(engines, query, out)
    if query.floor_sql:
        out["floor"] = run_floor(engines, workload, f"{query.key} floor", query.floor_sql, args,
                                 short=out["short"])
    for engine in ("rangejoin", "DuckDB", "stock Spark"):
        if out.get(engine):
            out[engine].pop("extra", None)
    return out


def check_expected(query: wl.Query, engines: Engines, answer: tuple) -> None:
    if query.expected_first is None:
        return
    sizes = {t: engines.rows(t) for t in engines.specs}
    expected = query.expected_first(sizes)
    if expected != answer[0]:
        raise BenchError(f"{query.key}: answer {answer}, but {expected} is computed in Python")


def measure_memory(engines: Engines, query: wl.Query, out: dict) -> dict:
    """Peak JVM heap during one more rangejoin run (and one more stock Spark run, at the size it
    was timed at), untimed."""
    memory = {}
    with HeapPeak(engines.spark) as peak:
        engines.spark_run(query.sql, "rangejoin", query.plan_marker)
    memory["rangejoin"] = peak.result
    stock = out.get("stock Spark")
    if stock:
        if stock["reduced"]:
            engines.view(stock["table"], first=stock["rows"])
        with HeapPeak(engines.spark) as peak:
            engines.spark_run(query.sql, "stock", query.plan_marker)
        memory["stock Spark"] = dict(peak.result, streamed_rows=stock["rows"])
        engines.view(stock["table"])
    mb = 1024 * 1024
    for engine, m in memory.items():
        log(f"    peak heap, {engine}: sampled {m['sampled_peak'] / mb:,.0f} MB, sum of the pools' "
            f"peaks {m['pool_peak_sum'] / mb:,.0f} MB (baseline after GC {m['baseline'] / mb:,.0f}"
            f" MB, max heap {m['max_heap'] / mb:,.0f} MB)")
    return memory


def broadcasts_held(spark, manifest: dict, chosen: List[wl.Workload], args) -> Optional[dict]:
    """The heap each engine's broadcast of the same buffered side holds (bench.memory), once,
    for the sides of the workloads that ran: W1's t1, W3's b3, W6's i_large, W10's ci."""
    ran = {w.key for w in chosen}
    sides = [s for s in memory.SIDES if s.workload in ran]
    if not sides or args.skip_stock:
        log("\nBroadcast memory: not measured (" + ("--skip-stock" if sides else
            "it measures the buffered sides of " + ", ".join(s.workload for s in memory.SIDES)) + ")")
        return None
    log(f"\nBroadcast memory: the heap each engine's broadcast of {', '.join(s.table for s in sides)} "
        f"holds ({args.repeat} time{'s' if args.repeat > 1 else ''} each"
        + ("" if args.no_warmup else ", after a warm-up round") + "; bench.memory) ...")
    return memory.measure_broadcasts(spark, manifest["directory"], sides, repeat=args.repeat,
                                     warm=not args.no_warmup, log=log)


def run_floor(engines: Engines, workload: wl.Workload, label: str, sql: str, args,
              short: bool = False) -> dict:
    """The floor query ``sql`` (Spark only, rangejoin on, no join), timed like a query: as
    often as a short query (``short``: one of the queries it is the floor of) is."""
    for t in workload.tables:
        engines.view(t)
    log(f"\n  {label}: {sql}")
    repeat = args.short_repeat if short and args.short_repeat > args.repeat else args.repeat
    result = timed("floor (Spark, no join)", lambda: engines.spark_run(sql, "floor"), repeat,
                   warm=not args.no_warmup)
    result.pop("extra", None)
    result["sql"] = sql
    return result


def alternating_rounds(engines: Engines, key: str, runs: List[Tuple[str, str, tuple, dict]],
                       marker: Optional[str], repeat: int) -> List[Dict[str, float]]:
    """``repeat`` rounds, each running every one of ``runs`` (mode, sql, expected answer, Spark
    settings) once, in order: each round's times by mode. Every run must give its answer."""
    rounds = []
    for _ in range(repeat):
        times = {}
        for mode, sql, expected, conf in runs:
            engines.query_conf = dict(conf)
            try:
                answer, times[mode], *_ = engines.spark_run(sql, mode, marker)
            finally:
                engines.query_conf = {}
            if answer != expected:
                raise BenchError(f"{key} ({mode}, paired) answered {answer}, then {expected}")
        rounds.append(times)
    return rounds


def record_pairs(q: dict, field: str, label: str, rounds: List[List[float]]) -> None:
    """Keeps ``rounds`` (each [numerator, denominator]) and the median of their ratios as
    ``q[field]``, the value the target reads, and logs every round."""
    ratio = statistics.median(a / b for a, b in rounds)
    q[field] = {"rounds": rounds, "ratio": ratio}
    log(f"    {q['key']}: {label}, {len(rounds)} alternating rounds: median {ratio:.2f}x "
        f"({', '.join(f'{a:.3f}/{b:.3f}' for a, b in rounds)})")


def pair_with_floor(engines: Engines, workload: wl.Workload, entry: dict, args) -> None:
    """A rangejoin/floor target divides two times of the same Spark, taken minutes apart (the
    floor runs after the workload's queries), on a machine whose speed drifts by a fifth or more
    over minutes. For each query with such a target, the floor and rangejoin then run
    alternately, --repeat rounds, and the target reads the median of the rounds' ratios
    (``paired_floor``): a drift moves both times of a round alike."""
    for q, query in zip(entry["queries"], workload.queries):
        if not any(name == "rangejoin/floor" for name, _, _ in report.RATIO_TARGETS.get(q["key"], [])):
            continue
        floor = q.get("floor") or entry["floor"]
        if floor is None:
            continue
        rounds = alternating_rounds(engines, q["key"], [
            ("floor", floor["sql"], floor["answer"], query.spark_conf if q.get("floor") else {}),
            ("rangejoin", query.sql, q["rangejoin"]["answer"], query.spark_conf)],
            query.plan_marker, args.repeat)
        record_pairs(q, "paired_floor", "rangejoin / floor", [[r["rangejoin"], r["floor"]] for r in rounds])


def pair_with_stock(engines: Engines, workload: wl.Workload, entry: dict, args) -> None:
    """For each query with a close stock/rangejoin target (``report.close_stock_target``) whose
    stock run was at full size, stock Spark and rangejoin run alternately, --repeat rounds, and the
    target reads the median of the rounds' ratios (``paired_stock``), as ``pair_with_floor``'s do."""
    for q, query in zip(entry["queries"], workload.queries):
        stock = q.get("stock Spark")
        if not stock or stock.get("reduced") or not report.close_stock_target(q["key"]):
            continue
        rounds = alternating_rounds(engines, q["key"], [
            ("stock", query.sql, stock["answer"], query.spark_conf),
            ("rangejoin", query.sql, q["rangejoin"]["answer"], query.spark_conf)],
            query.plan_marker, args.repeat)
        record_pairs(q, "paired_stock", "stock / rangejoin", [[r["stock"], r["rangejoin"]] for r in rounds])


def machine_info(spark) -> dict:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        commit = ""
    jvm = spark._jvm.java.lang.System
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory_bytes": memory,
        "os": platform.platform(), "python": platform.python_version(),
        "java": f"{jvm.getProperty('java.vm.name')} {jvm.getProperty('java.version')}",
        "spark": spark.version, "rangejoin": rangejoin.__version__, "duckdb": duckdb.__version__,
        "commit": commit, "load_at_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "spark_conf": dict(SPARK_CONF, **{"master": f"local[{THREADS}]"}),
        "duckdb_threads": THREADS,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float,
                        default=float(os.environ.get("RANGEJOIN_BENCH_SCALE", "1")),
                        help="scale factor of every large table (default 1: the sizes of the "
                             "issue; also RANGEJOIN_BENCH_SCALE)")
    parser.add_argument("--quick", action="store_true", default=env_flag("RANGEJOIN_BENCH_QUICK"),
                        help="one timed run per query, and stock Spark (or DuckDB) reduced to runs "
                             "of about 5 s when it would take over 30 s (also "
                             "RANGEJOIN_BENCH_QUICK=1)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed runs per query and engine (default 3; 1 with --quick)")
    parser.add_argument("--short-repeat", type=int, default=None,
                        help=f"timed runs per engine of a query every engine runs in under "
                             f"{SHORT_SECONDS:g} s, and of its floor (default 7; with --quick or "
                             "--no-warmup, --repeat)")
    parser.add_argument("--stock-limit", type=float, default=None,
                        help="the longest stock Spark (or DuckDB) run, in seconds, that runs at "
                             "full size; a longer one runs reduced (default 300; 30 with --quick)")
    parser.add_argument("--stock-target", type=float, default=None,
                        help="the length of a reduced run, in seconds (default 30; 5 with "
                             "--quick)")
    parser.add_argument("--probe-min", type=float, default=2.0,
                        help="a probe run must take this long, in seconds, to estimate the "
                             "full-size time from (default 2)")
    parser.add_argument("--skip-stock", action="store_true", help="no stock Spark runs")
    parser.add_argument("--no-warmup", action="store_true",
                        help="no warm-up runs (for a smoke test: the times mean little)")
    parser.add_argument("--only", default=os.environ.get("RANGEJOIN_BENCH_ONLY", ""),
                        help="comma-separated workloads to run, e.g. W1,W5 (default: all)")
    parser.add_argument("--data-dir", default=os.environ.get(
        "RANGEJOIN_BENCH_DATA", wl.DATA_ROOT),
                        help="where the generated Parquet data is cached (default bench/data)")
    parser.add_argument("--out-dir", default=None,
                        help="where benchmarks.md, benchmarks.png and results.json go (default: "
                             "bench/results/scale-<scale>/, except that a full run (scale 1, all "
                             "workloads, not --quick) writes benchmarks.md and .png to docs/)")
    parser.add_argument("--no-chart", action="store_true", help="no PNG chart")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    if args.short_repeat is None:
        args.short_repeat = args.repeat if args.quick or args.no_warmup else max(7, args.repeat)
    args.stock_limit = args.stock_limit or (30.0 if args.quick else 300.0)
    args.stock_target = args.stock_target or (5.0 if args.quick else 30.0)
    if args.scale <= 0 or args.repeat < 1:
        parser.error("--scale must be positive and --repeat at least 1")
    chosen = [w for w in wl.workloads()
              if not args.only or w.key in {k.strip().upper() for k in args.only.split(",")}]
    if not chosen:
        parser.error(f"--only {args.only}: no such workload (W1 to {wl.workloads()[-1].key})")
    full_run = args.scale == 1 and len(chosen) == len(wl.workloads()) and not args.quick \
        and not args.skip_stock and args.repeat >= 3 and not args.no_warmup
    out_dir = args.out_dir or (os.path.join(REPO, "docs") if full_run else
                               os.path.join(HERE, "results", f"scale-{args.scale:g}"))

    con = duckdb.connect()
    con.execute(f"SET threads = {THREADS}")
    con.execute("SET enable_progress_bar = false")
    manifest = wl.ensure_data(con, args.data_dir, args.scale, log)
    log(f"Starting Spark (local[{THREADS}]) ...")
    results = {"args": dict(vars(args), short_seconds=SHORT_SECONDS), "full_run": full_run,
               "manifest": manifest, "workloads": []}
    status = 0
    started = time.perf_counter()
    with local_spark("rangejoin-bench", THREADS, SPARK_CONF) as spark:
        info = machine_info(spark)
        results["machine"] = info
        log(f"rangejoin {info['rangejoin']}, Spark {info['spark']}, DuckDB {info['duckdb']}, "
            f"{info['java']}; {info['cores']} CPUs, load average {info['load_at_start']:.1f}; "
            f"scale {args.scale:g}, best of {args.repeat} after a warm-up run")
        engines = Engines(spark, con, manifest)
        try:
            if not args.no_warmup:
                warm_up(engines, args, band=any(w.key in wl.BAND_WORKLOADS for w in chosen))
            for workload in chosen:
                log(f"\n{workload.key}: {workload.title}")
                entry = {"key": workload.key, "title": workload.title,
                         "tables": {t: engines.specs[t].rows for t in workload.tables},
                         "floor_what": workload.floor_what, "queries": []}
                for query in workload.queries:
                    entry["queries"].append(run_query(engines, workload, query, args))
                answers = {q["key"]: q["rangejoin"]["answer"] for q in entry["queries"]}
                entry["floor"] = None if workload.floor_sql is None else run_floor(
                    engines, workload, f"{workload.key} floor", workload.floor_sql(answers), args,
                    short=any(q["short"] for q in entry["queries"]))
                pair_with_floor(engines, workload, entry, args)
                pair_with_stock(engines, workload, entry, args)
                results["workloads"].append(entry)
            results["memory"] = broadcasts_held(spark, manifest, chosen, args)
        except BenchError as e:
            log(f"\nBENCHMARK ABORTED: {e}")
            status = 1
        finally:
            spark.conf.unset(rangejoin.ENABLED)
    con.close()
    if status:
        return status
    results["elapsed_seconds"] = time.perf_counter() - started
    results["targets"] = report.evaluate(results)
    print("\n" + report.text_table(results), flush=True)
    os.makedirs(out_dir, exist_ok=True)
    # Every number of the run, as JSON; a full run's stays out of docs/ (and out of git).
    json_dir = out_dir if args.out_dir or not full_run else \
        os.path.join(HERE, "results", f"scale-{args.scale:g}")
    os.makedirs(json_dir, exist_ok=True)
    json_path = os.path.join(json_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=2, default=str)
    chart = None
    if not args.no_chart:
        chart = report.chart(results, os.path.join(out_dir, "benchmarks.png"))
    doc = os.path.join(out_dir, "benchmarks.md")
    text = report.markdown(results, chart_file=os.path.basename(chart) if chart else None)
    if os.path.exists(doc) and os.path.samefile(out_dir, os.path.join(REPO, "docs")):
        # docs/benchmarks.md's sections written by hand beside the generated ones stay
        # (report.carry_over); a partial run's report elsewhere is its own alone.
        with open(doc) as f:
            text = report.carry_over(f.read(), text)
    with open(doc, "w") as f:
        f.write(text)
    log(f"\nWrote {doc}" + (f", {chart}" if chart else "") + f" and {json_path}; "
        f"{results['elapsed_seconds'] / 60:.1f} minutes in all.")
    return 0


def warm_up(engines: Engines, args, band: bool = False) -> None:
    """A fresh JVM needs more than one run to compile its hot code: W1's query, on at most 1M rows
    of t2, twice each way, untimed, before anything is timed. With ``band`` (W6-W9 will run), also
    W6's small query on at most 20K rows of p: rangejoin searches bands with other code (an
    interval index) than W1's single inequality, which would otherwise compile while W6 is timed."""
    log("\nWarming the JVM up (W1's query on at most 1M rows of t2, twice each way, untimed"
        + ("; W6's on at most 20K rows of p" if band else "") + ") ...")
    runs = [("t2", 1_000_000, ["t1"], wl.W1_SQL.format(t2="t2"))]
    if band:
        w6 = next(w for w in wl.workloads() if w.key == "W6")
        runs.append(("p", 20_000, ["i"], w6.queries[0].sql))
    for table, most, others, sql in runs:
        for t in others:
            engines.view(t)
        n = min(engines.specs[table].rows, most)
        engines.view(table, first=n if n < engines.specs[table].rows else None)
        for _ in range(2):
            engines.spark_run(sql, "rangejoin")
            if not args.skip_stock:
                engines.spark_run(sql, "stock")
        engines.view(table)


if __name__ == "__main__":
    sys.exit(main())
