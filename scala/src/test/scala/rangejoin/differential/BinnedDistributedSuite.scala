package rangejoin.differential

import org.apache.spark.SparkConf
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.RangeJoinConf

/**
 * The binned rewrite on `local-cluster[2,1,1024]`, executors of 512 MB, broadcasting off:
 * a join of 500K points with 50K intervals (2.5 x 10^10 pairs: stock Spark's cartesian product would not
 * finish) runs as a shuffled equi-join on bins across two executor JVMs, and its answer (row count
 * and a checksum of the pairs) equals one computed by stock Spark another way: each short interval
 * exploded into its integer points and equi-joined, plus the few long intervals by a broadcast
 * nested loop join. Then a share of the generated differential cases, AQE on and off.
 */
class BinnedDistributedSuite extends AnyFunSuite with ClusterDifferentialSession {

  private lazy val runner = new BinnedDifferentialRunner(spark)

  private val noBroadcast = Seq(
    SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1")

  override protected def clusterConf(conf: SparkConf): SparkConf =
    conf.set("spark.executor.memory", "512m").set(SQLConf.SHUFFLE_PARTITIONS.key, "8")

  override protected def setUp(): Unit = {
    // Points spread over [0, 10^7); intervals of 0 to 19 units, and 5 of 2 * 10^6.
    spark.sql("""CREATE OR REPLACE TEMP VIEW bd_points AS
                |SELECT id AS pid, (id * 7919) % 10000000 AS x FROM range(500000)""".stripMargin)
    spark.sql("""CREATE OR REPLACE TEMP VIEW bd_short AS
                |SELECT id AS iid, (id * 104729) % 10000000 AS lo, (id * 104729) % 10000000 + id % 20 AS hi
                |FROM range(50000)""".stripMargin)
    spark.sql("""CREATE OR REPLACE TEMP VIEW bd_long AS
                |SELECT 50000 + id AS iid, id * 1500000 AS lo, id * 1500000 + 2000000 AS hi FROM range(5)""".stripMargin)
    spark.sql("CREATE OR REPLACE TEMP VIEW bd_intervals AS SELECT * FROM bd_short UNION ALL SELECT * FROM bd_long")
  }

  private val checksum = "count(*), sum(p.pid * 31 + i.iid)"

  test("500K points in 50K intervals, broadcasting off: Spark's shuffled join on bins, stock Spark's answer") {
    val expected = Differential.withConf(spark, Seq(RangeJoinConf.Enabled -> "false")) {
      val short = spark.sql(s"""SELECT $checksum FROM bd_points p JOIN
                               |(SELECT iid, explode(sequence(lo, hi)) AS x FROM bd_short) i ON p.x = i.x""".stripMargin)
        .collect().head
      val long = spark.sql(s"SELECT /*+ BROADCAST(i) */ $checksum FROM bd_points p JOIN bd_long i ON p.x BETWEEN i.lo AND i.hi")
        .collect().head
      (short.getLong(0) + long.getLong(0), short.getLong(1) + long.getLong(1))
    }
    assert(expected._1 > 500000L)
    for (aqe <- Seq("true")) {
      Differential.withConf(spark, noBroadcast :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)) {
        val df = spark.sql(s"SELECT $checksum FROM bd_points p JOIN bd_intervals i ON p.x BETWEEN i.lo AND i.hi")
        val row = df.collect().head
        assert((row.getLong(0), row.getLong(1)) == expected, s"AQE $aqe")
        val plan = df.queryExecution.executedPlan.toString
        assert(plan.contains("RangeJoin") && (plan.contains("SortMergeJoin") || plan.contains("ShuffledHashJoin")) &&
          !plan.contains("CartesianProduct") && !plan.contains("BroadcastNestedLoopJoin"), plan)
      }
    }
  }

  test("overlap of 500K with 50K intervals, AQE off: each pair once") {
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
    Differential.withConf(spark, noBroadcast :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")) {
      val df = spark.sql(s"""SELECT $checksum FROM (SELECT pid, x AS lo2, x + 3 AS hi2 FROM bd_points) p
                            |JOIN bd_intervals i ON p.lo2 <= i.hi AND i.lo <= p.hi2""".stripMargin)
      val row = df.collect().head
      assert((row.getLong(0), row.getLong(1)) == expected)
      assert(df.queryExecution.executedPlan.toString.contains("RangeJoin"))
    }
  }

  for ((aqe, offset) <- Seq("true" -> 0, "false" -> 7); c <- BinnedDifferentialSuites.all.filter(_.index % 14 == offset)) {
    test(s"AQE $aqe: $c")(runner.check(c, Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)))
  }
}
