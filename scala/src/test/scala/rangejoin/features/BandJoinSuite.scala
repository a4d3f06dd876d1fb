package rangejoin.features

import org.apache.spark.sql.internal.SQLConf

/**
 * Band and interval joins, two range conjuncts bounding the buffered side from both directions,
 * against stock Spark: points in intervals, overlapping intervals, a band around a key, and both
 * bounds on one buffered key; every join type, either side buffered, with a residual or not.
 * Intervals are empty (lo = hi under a strict bound), inverted (lo > hi), equal, NULL at either
 * end, NaN and -0.0 (doubles), and duplicated, so each bound's strictness and NULL handling shows.
 */
class BandJoinSuite extends RangeJoinQueries {

  override def beforeAll(): Unit = {
    super.beforeAll()
    // Intervals [lo, hi]: ordinary, empty, inverted, a point, NULL ends, duplicates.
    sql("""CREATE OR REPLACE TEMP VIEW iv(iid, lo, hi) AS VALUES
          |  (1, 0, 10), (2, 5, 15), (3, 5, 15), (4, 20, 20), (5, 30, 25), (6, NULL, 40), (7, 35, NULL),
          |  (8, -5, 0), (9, 12, 13), (10, 100, 200), (11, 7, 7)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW pt(pid, x, lo2, hi2) AS VALUES
          |  (1, 0, 0, 1), (2, 5, 3, 6), (3, 7, 7, 7), (4, 10, 9, 12), (5, 15, 15, 30), (6, 20, 21, 19),
          |  (7, NULL, NULL, 5), (8, 25, 25, NULL), (9, 13, 12, 14), (10, -1, -10, -5), (11, 7, 0, 100),
          |  (12, 300, 250, 400)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW dv(did, lo, hi) AS VALUES
          |  (1, CAST('-0.0' AS DOUBLE), 0.0D), (2, 0.0D, CAST('NaN' AS DOUBLE)), (3, CAST('NaN' AS DOUBLE),
          |  CAST('NaN' AS DOUBLE)), (4, -1.5D, 2.5D), (5, CAST('-Infinity' AS DOUBLE), -1.0D), (6, NULL, 1.0D)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW dp(dpid, x) AS VALUES
          |  (1, 0.0D), (2, CAST('-0.0' AS DOUBLE)), (3, CAST('NaN' AS DOUBLE)), (4, 2.5D), (5, -3.0D),
          |  (6, NULL), (7, CAST('Infinity' AS DOUBLE)), (8, 1.0D)""".stripMargin)
  }

  private val shapes = Seq(
    "point in interval" -> ("pt", "iv", "pt.x BETWEEN iv.lo AND iv.hi"),
    "half-open" -> ("pt", "iv", "pt.x >= iv.lo AND pt.x < iv.hi"),
    "strict" -> ("pt", "iv", "iv.lo < pt.x AND pt.x < iv.hi"),
    "overlap" -> ("pt", "iv", "pt.lo2 < iv.hi AND iv.lo < pt.hi2"),
    "overlap, closed" -> ("pt", "iv", "pt.lo2 <= iv.hi AND iv.lo <= pt.hi2"),
    // Double arithmetic cannot fail; ANSI integer arithmetic could, and would not drive a bound.
    "band around a key" -> ("pt", "iv", "pt.x >= iv.lo - 3.5D AND pt.x < iv.lo + 3.5D"),
    "bounds on one key of the other side" -> ("pt", "iv", "iv.lo BETWEEN pt.lo2 AND pt.hi2"),
    "with a residual" -> ("pt", "iv", "pt.x BETWEEN iv.lo AND iv.hi AND (pt.pid + iv.iid) % 2 = 0"),
    "doubles" -> ("dp", "dv", "dp.x >= dv.lo AND dp.x <= dv.hi"),
    "doubles, strict" -> ("dp", "dv", "dv.lo < dp.x AND dp.x < dv.hi"))

  private val hows = Seq("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN")

  for ((name, (l, r, condition)) <- shapes) {
    test(s"$name: every join type, either side buffered, as stock Spark") {
      for (how <- hows) {
        val columns = if (how.contains("SEMI") || how.contains("ANTI")) s"$l.*" else "*"
        def query(hint: String) = s"SELECT $hint $columns FROM $l $how $r ON $condition"
        // The hint chooses the side rangejoin buffers, not the answer: stock Spark's, once.
        val expected = stockAnswer(query(""))
        for (hint <- Seq(s"/*+ BROADCAST($r) */", s"/*+ BROADCAST($l) */")) {
          val indexes = rangeJoins(assertAnswer(query(hint), expected)).map(_.simpleString(10))
          assert(indexes.exists(j => j.contains("IntervalIndex") || j.contains("BandRun")),
            s"$how $hint: not a band: $indexes")
        }
      }
      for (query <- Seq(
          s"SELECT * FROM $l WHERE EXISTS (SELECT 1 FROM $r WHERE $condition)",
          s"SELECT * FROM $l WHERE NOT EXISTS (SELECT 1 FROM $r WHERE $condition)",
          s"SELECT * FROM $l WHERE EXISTS (SELECT 1 FROM $r WHERE $condition) OR $l.${if (l == "pt") "pid" else "dpid"} = 1")) {
        assertAsStock(query)
      }
    }
  }

  test("the index follows which side is buffered: two keys an interval index, one key a run") {
    val buffered = rangeJoins(assertAsStock("SELECT /*+ BROADCAST(iv) */ * FROM pt JOIN iv ON pt.x BETWEEN iv.lo AND iv.hi"))
    assert(buffered.map(_.simpleString(10)).exists(_.contains("IntervalIndex")), buffered)
    val points = rangeJoins(assertAsStock("SELECT /*+ BROADCAST(pt) */ * FROM pt JOIN iv ON pt.x BETWEEN iv.lo AND iv.hi"))
    assert(points.map(_.simpleString(10)).exists(_.contains("BandRun")), points)
  }

  test("the candidates metric: an interval index examines its matches, a residual's rejects too") {
    def metrics(query: String) = {
      val Seq(join) = rangeJoins(assertAsStock(query))
      (join.metrics("numCandidates").value, join.metrics("numOutputRows").value, join.simpleString(10))
    }
    val band = "SELECT /*+ BROADCAST(iv) */ * FROM pt JOIN iv ON pt.x BETWEEN iv.lo AND iv.hi"
    val (examined, output, plan) = metrics(band)
    assert(plan.contains("IntervalIndex") && output > 0 && examined == output, (examined, output, plan))
    val (withResidual, residualOutput, _) = metrics(band + " AND (pt.pid + iv.iid) % 2 = 0")
    assert(withResidual == output && residualOutput < output, (withResidual, residualOutput, output))
    // One bound, the other residual (strings are not ordered as longs): about every row below x.
    val strings = "SELECT /*+ BROADCAST(iv) */ * FROM (SELECT pid, CAST(x AS STRING) AS x FROM pt) p " +
      "JOIN (SELECT iid, CAST(lo AS STRING) AS lo, CAST(hi AS STRING) AS hi FROM iv) i ON p.x BETWEEN i.lo AND i.hi"
    val (stringExamined, stringOutput, stringPlan) = metrics(strings)
    assert(stringPlan.contains("SortedRun") && stringExamined > stringOutput, (stringExamined, stringOutput, stringPlan))
  }

  test("a larger band join, in several partitions, with AQE and code generation off too") {
    spark.range(0, 8000, 1, 4).selectExpr("id AS pid", "(id * 7919) % 100000 AS x").createOrReplaceTempView("bigp")
    spark.range(0, 1500, 1, 3).selectExpr("id AS iid", "(id * 104729) % 100000 AS lo",
      "(id * 104729) % 100000 + id % 97 AS hi").createOrReplaceTempView("bigi")
    val query = "SELECT /*+ BROADCAST(bigi) */ count(*), sum(pid * 3 + iid) FROM bigp LEFT JOIN bigi ON bigp.x >= bigi.lo AND bigp.x < bigi.hi"
    assert(rangeJoins(assertAsStock(query)).nonEmpty)
    withSQLConf(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false") { assertAsStock(query) }
    withSQLConf(SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false", SQLConf.CODEGEN_FACTORY_MODE.key -> "NO_CODEGEN") {
      assertAsStock(query)
    }
    assertAsStock("SELECT /*+ BROADCAST(bigp) */ count(*) FROM bigp RIGHT JOIN bigi ON bigp.x >= bigi.lo AND bigp.x < bigi.hi")
  }
}
