package rangejoin.differential

import org.apache.spark.SparkConf
import org.apache.spark.sql.execution.SortExec
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
/**
 * The binned rewrite on `local-cluster[2,1,1024]`, broadcasting off, with executors too small to
 * hold either side: Spark's memory manager is given 8 MB per executor (`spark.testing.memory`, about
 * 4.8 MB for execution and storage), against 500K points and 500K intervals of 12 and 16 MB as
 * rows. The join (2.5 x 10^11 pairs: stock Spark's cartesian product would not finish) runs as a
 * shuffled equi-join on bins across two executor JVMs; its sorts spill to disk (asserted), and its
 * answer (row count and a checksum of the pairs) equals one computed by stock Spark another way:
 * each short interval exploded into its integer points and equi-joined, plus the few long
 * intervals by a broadcast nested loop join. Then a share of the generated differential cases, AQE
 * on and off.
 */
class BinnedDistributedSuite extends DistributedDifferentialSuite with AdaptiveSparkPlanHelper {

  private val noBroadcast = Seq(
    SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1")

  private val (points, shortIntervals) = (500000L, 500000L)

  override protected def clusterConf(conf: SparkConf): SparkConf = conf
    .set("spark.executor.memory", "512m")
    .set("spark.testing.memory", (8L << 20).toString)
    .set(SQLConf.SHUFFLE_PARTITIONS.key, "4")

  override protected def setUp(): Unit = {
    // Points spread over [0, 10^7); intervals of 0 to 19 units, and 5 of 2 * 10^6.
    spark.sql(s"""CREATE OR REPLACE TEMP VIEW bd_points AS
                 |SELECT id AS pid, (id * 7919) % 10000000 AS x FROM range($points)""".stripMargin)
    spark.sql(s"""CREATE OR REPLACE TEMP VIEW bd_short AS
                 |SELECT id AS iid, (id * 104729) % 10000000 AS lo, (id * 104729) % 10000000 + id % 20 AS hi
                 |FROM range($shortIntervals)""".stripMargin)
    spark.sql(s"""CREATE OR REPLACE TEMP VIEW bd_long AS
                 |SELECT $shortIntervals + id AS iid, id * 1500000 AS lo, id * 1500000 + 2000000 AS hi
                 |FROM range(5)""".stripMargin)
    spark.sql("CREATE OR REPLACE TEMP VIEW bd_intervals AS SELECT * FROM bd_short UNION ALL SELECT * FROM bd_long")
  }

  test("each side is larger than an executor's memory for execution and storage") {
    // Unsafe rows of two and three longs: a null-bit word and 8 bytes a field.
    val (pointBytes, intervalBytes) = (points * 24, shortIntervals * 32)
    // Every block manager, the driver's and both executors': the most each can hold.
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    while (spark.sparkContext.getExecutorMemoryStatus.size < 3 && System.nanoTime() < deadline) Thread.sleep(100)
    val memories = spark.sparkContext.getExecutorMemoryStatus
    assert(memories.size == 3, memories)
    for ((id, (maxMemory, _)) <- memories)
      assert(maxMemory < math.min(pointBytes, intervalBytes), s"block manager $id: $maxMemory bytes")
  }

  private val checksum = "count(*), sum(p.pid * 31 + i.iid)"

  /**
   * Runs `query` binned, asserting stock Spark's `expected` answer and the plan: on Spark's own
   * shuffled join (rangejoin's shuffled index off), whose sorts must have spilled; and on
   * rangejoin's ShuffledPiecewiseMergeJoin, each task sorting its partition of the intervals.
   */
  private def assertBinned(query: String, expected: (Long, Long), aqe: String): Unit = {
    Differential.withConf(spark, noBroadcast ++ Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe,
        RangeJoinConf.ShuffleMaxPartitionSize -> "-1")) {
      val df = spark.sql(query)
      val row = df.collect().head
      assert((row.getLong(0), row.getLong(1)) == expected, s"AQE $aqe")
      val plan = df.queryExecution.executedPlan
      val text = plan.toString
      assert(text.contains("RangeJoin") && (text.contains("SortMergeJoin") || text.contains("ShuffledHashJoin")) &&
        !text.contains("CartesianProduct") && !text.contains("BroadcastNestedLoopJoin"), text)
      val spilled = collect(plan) { case s: SortExec => s.metrics("spillSize").value }.sum
      assert(spilled > 0, s"AQE $aqe: no sort spilled\n$text")
    }
    Differential.withConf(spark, noBroadcast :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)) {
      val df = spark.sql(query)
      val row = df.collect().head
      assert((row.getLong(0), row.getLong(1)) == expected, s"AQE $aqe, shuffled index")
      val text = df.queryExecution.executedPlan.toString
      assert(text.contains("ShuffledPiecewiseMergeJoin") && !text.contains("CartesianProduct") &&
        !text.contains("BroadcastNestedLoopJoin"), text)
    }
  }

  /**
   * The adaptive-execution settings each large join runs with: both in `make test-all`; in the
   * full tier one each (the point join with AQE on, the overlap with it off), since each run of
   * the pair of plans costs 15-20 s on 2 cores.
   */
  private def aqeModes(full: String): Seq[String] = if (Tier.all) Seq("true", "false") else Seq(full)

  test("500K points in 500K intervals, broadcasting off: shuffled joins on bins, Spark's spilling, stock Spark's answer") {
    val expected = Differential.withConf(spark, Seq(RangeJoinConf.Enabled -> "false")) {
      val short = spark.sql(s"""SELECT $checksum FROM bd_points p JOIN
                               |(SELECT iid, explode(sequence(lo, hi)) AS x FROM bd_short) i ON p.x = i.x""".stripMargin)
        .collect().head
      val long = spark.sql(s"SELECT /*+ BROADCAST(i) */ $checksum FROM bd_points p JOIN bd_long i ON p.x BETWEEN i.lo AND i.hi")
        .collect().head
      (short.getLong(0) + long.getLong(0), short.getLong(1) + long.getLong(1))
    }
    assert(expected._1 > points)
    for (aqe <- aqeModes("true")) {
      assertBinned(s"SELECT $checksum FROM bd_points p JOIN bd_intervals i ON p.x BETWEEN i.lo AND i.hi",
        expected, aqe)
    }
  }

  test("overlap of 500K with 500K intervals, broadcasting off: each pair once, Spark's join spilling") {
    // [x, x + 3] against [lo, hi]: overlapping exactly when x in [lo - 3, hi], counted by stock
    // Spark as points in intervals widened by 3 (exploded, as above, and the long ones apart).
    val expected = Differential.withConf(spark, Seq(RangeJoinConf.Enabled -> "false")) {
      val short = spark.sql(s"""SELECT $checksum FROM bd_points p JOIN
                               |(SELECT iid, explode(sequence(lo - 3, hi)) AS x FROM bd_short) i ON p.x = i.x""".stripMargin)
        .collect().head
      val long = spark.sql(s"""SELECT /*+ BROADCAST(i) */ $checksum FROM bd_points p JOIN bd_long i
                              |ON p.x BETWEEN i.lo - 3 AND i.hi""".stripMargin).collect().head
      (short.getLong(0) + long.getLong(0), short.getLong(1) + long.getLong(1))
    }
    for (aqe <- aqeModes("false")) {
      assertBinned(s"""SELECT $checksum FROM (SELECT pid, x AS lo2, x + 3 AS hi2 FROM bd_points) p
                              |JOIN bd_intervals i ON p.lo2 <= i.hi AND i.lo <= p.hi2""".stripMargin, expected, aqe)
    }
  }

  checkAqeOnAndOff(BinnedDifferentialSuites.all.filter(_.index % 7 == 0))
}
