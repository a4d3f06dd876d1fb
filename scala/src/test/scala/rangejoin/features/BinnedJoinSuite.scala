package rangejoin.features

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.joins.{BroadcastNestedLoopJoinExec, CartesianProductExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf

import scala.util.Random

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._

import rangejoin.RangeJoinConf
import rangejoin.bins.SpanStatistics
import org.apache.spark.sql.execution.{InputAdapter, WholeStageCodegenExec}
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike

import rangejoin.execution.{BinChunksExec, BinGridExec, BinUnchunkExec, ShuffledPiecewiseMergeJoinExec}
/**
 * Band and interval joins with no side to broadcast, which rangejoin rewrites into Spark's own
 * equi-join on bins (BinnedRangeJoin): which joins are rewritten and which are left as they were,
 * the plan (a shuffled equi-join, `RangeJoin` in EXPLAIN, no cartesian product), the hint's bin
 * size, and answers against stock Spark on small fixtures that hold each edge once (the
 * differential suite, BinnedDifferentialSuite, meets them in combination).
 */
class BinnedJoinSuite extends RangeJoinQueries {

  private val noBroadcast = Seq(
    SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1")

  override def beforeAll(): Unit = {
    super.beforeAll()
    // Intervals: ordinary, empty, inverted, a point, NULL ends, duplicates, negative, one huge,
    // and long ones spanning many bins of the others' size.
    sql("""CREATE OR REPLACE TEMP VIEW biv(iid, k, lo, hi) AS VALUES
          |  (1, 1, 0L, 10L), (2, 1, 5L, 15L), (3, 2, 5L, 15L), (4, 1, 20L, 20L), (5, 1, 30L, 25L),
          |  (6, 1, NULL, 40L), (7, NULL, 35L, NULL), (8, 2, -5L, 0L), (9, 1, 12L, 13L),
          |  (10, 1, 100L, 200L), (11, 1, 7L, 7L), (12, 2, -9223372036854775808L, 9223372036854775807L),
          |  (13, 1, -1000L, 1000L), (14, 2, 9223372036854775800L, 9223372036854775807L),
          |  (15, 1, -9223372036854775808L, -9223372036854775801L), (16, 1, 5L, 15L)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW bpt(pid, k, x, lo2, hi2) AS VALUES
          |  (1, 1, 0L, 0L, 1L), (2, 1, 5L, 3L, 6L), (3, 2, 7L, 7L, 7L), (4, 1, 10L, 9L, 12L),
          |  (5, 1, 15L, 15L, 30L), (6, 2, 20L, 21L, 19L), (7, 1, NULL, NULL, 5L), (8, NULL, 25L, 25L, NULL),
          |  (9, 1, 13L, 12L, 14L), (10, 2, -1L, -10L, -5L), (11, 1, 7L, 0L, 100L), (12, 1, 300L, 250L, 400L),
          |  (13, 2, 9223372036854775807L, 9223372036854775806L, 9223372036854775807L),
          |  (14, 1, -9223372036854775808L, -9223372036854775808L, -9223372036854775800L),
          |  (15, 1, 7L, 0L, 100L)""".stripMargin)
  }

  private def noCartesian(df: DataFrame, shuffled: Boolean = true): Unit = {
    val plan = df.queryExecution.executedPlan
    assert(collect(plan) { case j: CartesianProductExec => j; case j: BroadcastNestedLoopJoinExec => j }.isEmpty,
      plan.toString)
    // An empty side may leave no join at all (adaptive execution propagates empty relations).
    assert(!shuffled || collect(plan) {
      case j: SortMergeJoinExec => j
      case j: ShuffledHashJoinExec => j
      case j: ShuffledPiecewiseMergeJoinExec => j
    }.nonEmpty,
      plan.toString)
    assert(df.queryExecution.explainString(org.apache.spark.sql.execution.ExtendedMode).contains("RangeJoin"))
  }

  private def rewritten(query: String, conf: (String, String)*): DataFrame =
    rewrittenAs(query, shuffled = true, conf: _*)

  private def rewrittenAs(query: String, shuffled: Boolean, conf: (String, String)*): DataFrame =
    withConf(noBroadcast ++ conf: _*) {
      val df = assertAsStock(query)
      noCartesian(df, shuffled)
      df
    }

  private val shapes = Seq(
    "BETWEEN" -> "bpt.x BETWEEN biv.lo AND biv.hi",
    "half-open" -> "bpt.x >= biv.lo AND bpt.x < biv.hi",
    "strict" -> "biv.lo < bpt.x AND bpt.x < biv.hi",
    "point on the right" -> "biv.lo <= bpt.x AND biv.hi >= bpt.x",
    "bounds on the left" -> "biv.lo BETWEEN bpt.lo2 AND bpt.hi2",
    "overlap" -> "bpt.lo2 < biv.hi AND biv.lo < bpt.hi2",
    "overlap, closed" -> "bpt.lo2 <= biv.hi AND biv.lo <= bpt.hi2",
    "overlap, operands flipped" -> "biv.hi >= bpt.lo2 AND bpt.hi2 > biv.lo",
    "with a residual" -> "bpt.x BETWEEN biv.lo AND biv.hi AND (bpt.pid + biv.iid) % 2 = 0",
    "with an equality key" -> "bpt.k = biv.k AND bpt.x BETWEEN biv.lo AND biv.hi",
    "with a null-safe equality key" -> "bpt.k <=> biv.k AND bpt.lo2 < biv.hi AND biv.lo < bpt.hi2")

  for ((name, condition) <- shapes) {
    test(s"$name: an equi-join on bins, as stock Spark") {
      rewritten(s"SELECT * FROM bpt JOIN biv ON $condition")
      rewritten(s"SELECT /*+ RANGE_JOIN(biv, 3) */ * FROM bpt JOIN biv ON $condition",
        SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")
    }
  }

  test("outer joins: the pairs, and each preserved row without one once, either side preserved") {
    for ((how, condition) <- Seq(
        "LEFT JOIN" -> "bpt.x BETWEEN biv.lo AND biv.hi",
        "RIGHT JOIN" -> "bpt.x BETWEEN biv.lo AND biv.hi",
        "FULL JOIN" -> "bpt.lo2 < biv.hi AND biv.lo < bpt.hi2",
        "LEFT JOIN" -> "bpt.k = biv.k AND bpt.x >= biv.lo AND bpt.x < biv.hi AND bpt.pid % 2 = 0")) {
      rewritten(s"SELECT * FROM bpt $how biv ON $condition")
    }
    rewritten("SELECT /*+ RANGE_JOIN(biv, 2) */ * FROM bpt LEFT JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")
  }

  test("a tolerance band without ANSI (integer arithmetic that wraps cannot fail)") {
    rewritten("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo - 10 AND biv.lo + 10",
      SQLConf.ANSI_ENABLED.key -> "false")
  }

  test("int, date and timestamp keys") {
    rewritten("""SELECT * FROM (SELECT id, CAST(id * 7 % 100 AS INT) AS x FROM range(200)) p
                |JOIN (SELECT id AS iid, CAST(id AS INT) AS lo, CAST(id + id % 13 AS INT) AS hi FROM range(100)) i
                |ON p.x >= i.lo AND p.x <= i.hi""".stripMargin)
    rewritten("""SELECT * FROM (SELECT id, date_add(DATE'2020-01-01', CAST(id * 7 % 100 AS INT)) AS d FROM range(200)) p
                |JOIN (SELECT id AS iid, date_add(DATE'2020-01-01', CAST(id AS INT)) AS lo,
                |  date_add(DATE'2020-01-01', CAST(id + id % 13 AS INT)) AS hi FROM range(100)) i
                |ON p.d BETWEEN i.lo AND i.hi""".stripMargin)
    rewritten("""SELECT /*+ RANGE_JOIN(i, 60) */ * FROM
                |(SELECT id, timestamp_seconds(1600000000 + id * 37 % 5000) AS ts FROM range(200)) p
                |JOIN (SELECT id AS iid, timestamp_seconds(1600000000 + id * 50) AS lo,
                |  timestamp_seconds(1600000000 + id * 50 + id % 7 * 100) AS hi FROM range(100)) i
                |ON p.ts >= i.lo AND p.ts < i.hi""".stripMargin)
  }

  test("empty and one-row sides") {
    rewrittenAs("SELECT * FROM bpt JOIN (SELECT * FROM biv WHERE iid < 0) i ON bpt.x BETWEEN i.lo AND i.hi",
      shuffled = false)
    rewrittenAs("SELECT * FROM (SELECT * FROM bpt WHERE pid < 0) p JOIN biv ON p.lo2 < biv.hi AND biv.lo < p.hi2",
      shuffled = false)
    rewritten("SELECT * FROM bpt JOIN (SELECT * FROM biv WHERE iid = 1) i ON bpt.x BETWEEN i.lo AND i.hi")
  }

  test("a buffer larger than a core's cache meets the streamed rows in key order, as stock Spark") {
    // One shuffle partition: one task buffers every interval copy (over 32K rows, thousands of
    // bins) or, keyed, every row of 2,500 keys; points with NULLs and duplicates.
    sql("""CREATE OR REPLACE TEMP VIEW cpt AS SELECT id AS pid, id % 2000 AS k,
          |  IF(id % 97 = 0, NULL, ((id % 50000) * 7919) % 200000) AS x FROM range(60000)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW civ AS SELECT iid, k, lo, IF(iid % 53 = 0, lo - 1, lo + iid % 31) AS hi
          |FROM (SELECT id AS iid, id % 2500 AS k, IF(id % 89 = 0, NULL, (id * 104729) % 200000) AS lo
          |      FROM range(40000))""".stripMargin)
    def clusteredRows(df: DataFrame): Long = {
      val joins = collect(df.queryExecution.executedPlan) { case j: ShuffledPiecewiseMergeJoinExec => j }
      assert(joins.size == 1, df.queryExecution.executedPlan)
      joins.head.metrics("clusteredRows").value
    }
    withConf(noBroadcast ++ Seq(SQLConf.SHUFFLE_PARTITIONS.key -> "1"): _*) {
      // Binned: stock Spark's plan is a cartesian product, so its answer comes from an equi-join
      // on each offset an interval (at most 30 long) may put a point at.
      val binned = sql("SELECT count(*), sum(xxhash64(pid, iid) % 1000000007) FROM cpt JOIN civ ON x BETWEEN lo AND hi")
      val offsets = stock(sql("""SELECT count(*), sum(xxhash64(pid, iid) % 1000000007) FROM cpt JOIN
          |  (SELECT *, explode(sequence(0, 30)) AS d FROM civ) i ON x = lo + d AND x <= hi""".stripMargin).collect())
      assert(binned.collect().toSeq == offsets.toSeq)
      assert(clusteredRows(binned) > 0)
      // Keyed, one inequality (a sorted run per key, no bins), a left join: unmatched streamed
      // rows come out once, NULL-padded.
      val keyed = assertAsStock("""SELECT count(*), count(iid), sum(xxhash64(pid, iid) % 1000000007) FROM cpt
          |LEFT JOIN civ ON cpt.k = civ.k AND x < lo""".stripMargin)
      assert(clusteredRows(keyed) == 60000)
    }
  }

  test("left to Spark: a side small enough to broadcast, keys that may fail, other types, semi joins") {
    def notRewritten(query: String, conf: (String, String)*): Unit = withSQLConf(conf: _*) {
      val df = assertAsStock(query)
      assert(!df.queryExecution.optimizedPlan.toString.contains("RangeJoin"), df.queryExecution.optimizedPlan)
    }
    // Broadcastable: rangejoin's own broadcast join.
    notRewritten("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
    notRewritten("SELECT /*+ RANGE_JOIN(biv) */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      noBroadcast: _*)
    val cases = Seq(
      // ANSI integer arithmetic may overflow: Spark evaluates it only on the pairs it compares.
      "SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.iid - 10 AND biv.iid + 10",
      "SELECT * FROM bpt JOIN biv ON CAST(bpt.x AS DOUBLE) BETWEEN CAST(biv.lo AS DOUBLE) AND CAST(biv.hi AS DOUBLE)",
      "SELECT * FROM bpt JOIN biv ON CAST(bpt.x AS STRING) BETWEEN CAST(biv.lo AS STRING) AND CAST(biv.hi AS STRING)",
      // An outer join whose preserved side's condition columns are doubles: rows equal in them
      // (-0.0 and 0.0) may not have the same pairs.
      "SELECT * FROM (SELECT *, CAST(pid AS DOUBLE) AS d FROM bpt) p LEFT JOIN biv " +
        "ON p.x BETWEEN biv.lo AND biv.hi AND p.d > 1",
      "SELECT * FROM bpt LEFT SEMI JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      // A side that is not deterministic: the rewrite reads each side more than once (the grid,
      // an outer join's unmatched rows), and must not see different rows each time. (Over a
      // range, not local rows: stock Spark may evaluate rand over local rows on the driver once
      // adaptive execution re-optimizes, and its values then follow the plan; see semantics.md.)
      "SELECT * FROM (SELECT id AS pid, id - 5 AS x, rand(7) AS r FROM range(0, 30, 1, 2)) p JOIN biv " +
        "ON p.x BETWEEN biv.lo AND biv.hi",
      "SELECT * FROM (SELECT id AS pid, id - 5 AS x, rand(7) AS r FROM range(0, 30, 1, 2)) p LEFT JOIN biv " +
        "ON p.x BETWEEN biv.lo AND biv.hi",
      "SELECT * FROM bpt JOIN biv ON bpt.x > biv.lo",
      "SELECT /*+ SHUFFLE_REPLICATE_NL(biv) */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
    cases.foreach(q => notRewritten(q, noBroadcast: _*))
    notRewritten("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      noBroadcast :+ (RangeJoinConf.Binning -> "false"): _*)
    notRewritten("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      noBroadcast :+ (RangeJoinConf.Enabled -> "false"): _*)
  }

  test("the hint's bin size: bins even where a side could be broadcast; bad sizes fail clearly") {
    val df = assertAsStock("SELECT /*+ RANGE_JOIN(biv, 10) */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
    // Binned; its join has equality keys (the bins) and a side small enough to buffer, so the
    // strategy may still run it as a PiecewiseMergeJoin with an index per bin.
    assert(df.queryExecution.optimizedPlan.toString.contains("RangeJoinHintGrid"))
    failure("SELECT /*+ RANGE_JOIN(biv, NULL) */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
    for (bad <- Seq("0", "-5", "0.0", "-0.5D")) {
      val message = failure(s"SELECT /*+ RANGE_JOIN(biv, $bad) */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
      assert(message.contains("Invalid bin size in hint RANGE_JOIN"), message)
    }
    // RANGE_JOIN(t) still buffers t, and two names are still two relations.
    val buffered = assertAsStock("SELECT /*+ RANGE_JOIN(biv) */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
    assert(rangeJoins(buffered).nonEmpty)
    val twoNames = assertAsStock("SELECT /*+ RANGE_JOIN(biv, 'bpt') */ * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi")
    assert(rangeJoins(twoNames).nonEmpty)
  }

  test("the DataFrame API's hint with a bin size") {
    withSQLConf(noBroadcast: _*) {
      val (p, i) = (spark.table("bpt"), spark.table("biv"))
      // A DataFrame keeps the plan of its first run: one for stock Spark, one for rangejoin.
      def query = p.join(i.hint("range_join", 5), p("x").between(i("lo"), i("hi")))
      val expected = stock(query.collect().toSeq.map(_.toString).sorted)
      val df = query
      assert(df.collect().toSeq.map(_.toString).sorted == expected)
      noCartesian(df)
    }
  }

  test("both sides are shuffled in chunks, and Spark adds no exchange of its own, AQE on and off") {
    val queries = Seq("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      "SELECT * FROM bpt JOIN biv ON bpt.lo2 < biv.hi AND biv.lo < bpt.hi2",
      "SELECT * FROM bpt LEFT JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      "SELECT * FROM bpt FULL JOIN biv ON bpt.lo2 < biv.hi AND biv.lo < bpt.hi2")
    // Many partitions, coalesced by adaptive execution (both sides alike) where it is on; the
    // chunks filled in generated code, and by the node's own iterator. Each setting once, the
    // queries in turn (every pair took 36 s of a run).
    val settings = for (aqe <- Seq("true", "false");
                        (partitions, codegen) <- Seq("1" -> true, "7" -> true, "50" -> true, "7" -> false))
      yield (aqe, partitions, codegen)
    for (((aqe, partitions, codegen), i) <- settings.zipWithIndex; q = queries(i % queries.size)) {
      val df = rewritten(q, SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe, SQLConf.SHUFFLE_PARTITIONS.key -> partitions,
        SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> codegen.toString)
      val plan = df.queryExecution.executedPlan
      val chunks = collect(plan) { case c: BinChunksExec => c }
      assert(chunks.size >= 2 && chunks.forall(_.numPartitions == partitions.toInt), plan.toString)
      // Each at the top of its generated stage, under the exchange.
      val generated = collect(plan) { case w: WholeStageCodegenExec if w.child.isInstanceOf[BinChunksExec] => w }
      assert(generated.size == (if (codegen) chunks.size else 0), plan.toString)
      // Each side of each binned join (an outer join's pairs are read twice) comes out of the
      // chunks, and every exchange below it is the chunks' own: none re-partitions its rows.
      val joins = collect(plan) { case j: ShuffledPiecewiseMergeJoinExec => j }
      assert(joins.nonEmpty, plan.toString)
      for (join <- joins; side <- join.children.map { case a: InputAdapter => a.child; case c => c }) {
        assert(side.isInstanceOf[BinUnchunkExec], plan.toString)
        val below = collect(side) { case e: ShuffleExchangeLike => e.child }
          .map { case w: WholeStageCodegenExec => w.child; case c => c }
        assert(below.forall(_.isInstanceOf[BinChunksExec]), plan.toString)
      }
    }
    // Where a side is too large for a task, Spark's sort-merge join runs the bins: its own
    // exchanges, which adaptive execution can split where skewed.
    val spark = rewritten("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
      RangeJoinConf.ShuffleMaxPartitionSize -> "-1")
    assert(collect(spark.queryExecution.executedPlan) { case c: BinChunksExec => c }.isEmpty)
    assert(collect(spark.queryExecution.executedPlan) { case j: SortMergeJoinExec => j }.nonEmpty)
  }

  test("chunks filled in generated code as the rows come, over sides that are unions, as stock Spark") {
    // 2 partitions: chunks of 256 KB, full every ~6,500 rows of 40 bytes, ~4 times in each task's
    // partition, so the generated loop stops with chunks in its buffer and resumes, inside a
    // union's child (a method of its own) as well.
    sql("""CREATE OR REPLACE TEMP VIEW upt AS
          |SELECT id AS pid, (id * 7919) % 300000 AS x FROM range(0, 100000, 1, 2) UNION ALL
          |SELECT id AS pid, (id * 7919) % 300000 AS x FROM range(100000, 200000, 1, 2)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW uiv AS
          |SELECT id AS iid, (id * 104729) % 300000 AS lo, (id * 104729) % 300000 + id % 5 AS hi FROM range(0, 50000, 1, 2)
          |UNION ALL
          |SELECT id AS iid, (id * 104729) % 300000 AS lo, (id * 104729) % 300000 + id % 5 AS hi FROM range(50000, 100000, 1, 2)
          |""".stripMargin)
    val checksum = "count(*), sum(xxhash64(pid, iid) % 1000000007)"
    // Stock Spark's plan is a cartesian product: its answer from an equi-join on each offset.
    val expected = stock(sql(s"""SELECT $checksum FROM upt JOIN
        |(SELECT *, explode(sequence(0, 4)) AS d FROM uiv) i ON x = lo + d AND x <= hi""".stripMargin).collect()).toSeq
    for (aqe <- Seq("true", "false")) {
      withConf(noBroadcast ++ Seq(SQLConf.SHUFFLE_PARTITIONS.key -> "2", SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe): _*) {
        val df = sql(s"SELECT $checksum FROM upt JOIN uiv ON x BETWEEN lo AND hi")
        assert(df.collect().toSeq == expected, s"AQE $aqe")
        val plan = df.queryExecution.executedPlan
        assert(collect(plan) { case w: WholeStageCodegenExec if w.child.isInstanceOf[BinChunksExec] => w }.size == 2,
          plan.toString)
      }
    }
  }

  test("the grid subquery runs as one RangeJoinBinGrid node, with the hint's grid still an aggregate") {
    for (q <- Seq("SELECT * FROM bpt JOIN biv ON bpt.x BETWEEN biv.lo AND biv.hi",
                  "SELECT * FROM bpt JOIN biv ON bpt.lo2 < biv.hi AND biv.lo < bpt.hi2");
         aqe <- Seq("true", "false")) {
      val df = rewritten(q, SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)
      val grids = collectWithSubqueries(df.queryExecution.executedPlan) { case g: BinGridExec => g }
      assert(grids.nonEmpty, df.queryExecution.executedPlan.toString)
      assert(df.queryExecution.explainString(org.apache.spark.sql.execution.ExtendedMode).contains("RangeJoinBinGrid"))
    }
    val hinted = rewritten("SELECT /*+ RANGE_JOIN(biv, 10) */ * FROM bpt JOIN biv ON bpt.lo2 < biv.hi AND biv.lo < bpt.hi2")
    assert(collectWithSubqueries(hinted.queryExecution.executedPlan) { case g: BinGridExec => g }.isEmpty)
  }

  test("the grid's statistics are Spark's aggregates of the same rows, NULLs and empty sides included, sent through Kryo") {
    // What BinnedRangeJoin computed with Spark's aggregates before BinGridOf: per (exponent,
    // side), then a weighted percentile, bit masks, sums, min and max.
    val aggregates =
      """SELECT percentile(e, 0.9, c), bit_or(IF(l, shiftleft(1L, e), 0L)), bit_or(IF(l, 0L, shiftleft(1L, e))),
        |  sum(IF(l, c, 0L)), sum(IF(l, 0L, c)), sum(IF(l, len, 0.0D)), sum(IF(l, 0.0D, len)), min(s), max(en)
        |FROM (SELECT e, l, count(e) AS c, sum(len) AS len, min(s) AS s, max(en) AS en FROM spans GROUP BY e, l)
        |""".stripMargin
    val schema = StructType(Seq(StructField("e", IntegerType), StructField("l", BooleanType),
      StructField("len", DoubleType), StructField("s", LongType), StructField("en", LongType)))
    val rnd = new Random(11)
    val kryo = new org.apache.spark.serializer.KryoSerializer(
      new org.apache.spark.SparkConf().set("spark.kryo.registrationRequired", "true")).newInstance()
    // (rows of the left side, of the right, share of them with no interval)
    val shapes = Seq((0, 0, 0.0), (5, 0, 0.0), (0, 5, 0.0), (5, 5, 1.0), (4, 0, 1.0), (0, 3, 1.0), (6, 2, 0.5),
      (1, 1, 0.0), (200, 50, 0.1), (3000, 700, 0.2), (50, 3000, 0.0))
    for ((nLeft, nRight, none) <- shapes; round <- 0 until 3) {
      // Few distinct exponents, as real data has (so the percentile interpolates between them).
      val exponents = Seq.fill(1 + rnd.nextInt(4))(rnd.nextInt(64))
      val rows = Seq.fill(nLeft)(true) ++ Seq.fill(nRight)(false) map { isLeft =>
        if (rnd.nextDouble() < none) Row(null, isLeft, null, null, null)
        else {
          val start = rnd.nextInt(2000000) - 1000000L
          // Whole lengths: their sums are exact in any order.
          val length = rnd.nextInt(5000).toLong
          Row(exponents(rnd.nextInt(exponents.size)), isLeft, length.toDouble, start, start + length)
        }
      }
      spark.createDataFrame(spark.sparkContext.parallelize(rnd.shuffle(rows), 3), schema).createOrReplaceTempView("spans")
      val expected = sql(aggregates).collect().head.toSeq
      // As BinGridExec gathers them: by task, sent as longs in tuples (through Kryo that
      // requires registration: Spark registers those, not rangejoin's classes), merged in order.
      val tasks = rnd.shuffle(rows).grouped(math.max(1, rows.size / 3)).map { part =>
        Tuple1(BinGridExec.gather(part.iterator.map(r => new GenericInternalRow(r.toSeq.toArray[Any])), 0, 1, 2, 3, 4).toLongs)
      }.toArray
      val sent = kryo.deserialize[Array[Tuple1[Array[Long]]]](kryo.serialize(tasks))
      val actual = sent.foldLeft(new SpanStatistics)((all, t) => all.merge(SpanStatistics.fromLongs(t._1))).values.toSeq
      val context = s"$nLeft left, $nRight right, $none without an interval, exponents $exponents: $actual, $expected"
      // The percentile to within rounding (Spark's lines interpolate in different orders), the rest exactly.
      assert(actual.tail == expected.tail, context)
      (actual.head, expected.head) match {
        case (a: Double, e: Double) => assert(math.abs(a - e) < 1e-9, context)
        case (a, e) => assert(a == null && e == null, context)
      }
    }
  }
}
