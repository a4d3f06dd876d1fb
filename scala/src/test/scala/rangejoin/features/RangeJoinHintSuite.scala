package rangejoin.features

import org.apache.logging.log4j.Level

import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight}
import org.apache.spark.sql.catalyst.analysis.HintErrorLogger
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
/** The RANGE_JOIN hint: which side it buffers, that it forces rangejoin, and what it reports. */
class RangeJoinHintSuite extends RangeJoinQueries {

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.range(0, 300).toDF("v").createOrReplaceTempView("big")
    spark.range(0, 40).toDF("v").createOrReplaceTempView("small")
  }

  private val noBroadcasts = Seq(
    SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1")

  test("RANGE_JOIN(t) buffers t, above every size threshold") {
    withSQLConf(noBroadcasts: _*) {
      for ((hinted, side) <- Seq("big" -> BuildLeft, "small" -> BuildRight)) {
        val df = assertAsStock(
          s"SELECT /*+ RANGE_JOIN($hinted) */ count(*) FROM big JOIN small ON big.v < small.v * 3")
        assert(rangeJoins(df).map(_.buildSide) == Seq(side), hinted)
      }
    }
  }

  test("RANGE_JOIN wins over BROADCAST on the other side; BROADCAST alone picks the side too") {
    val both = assertAsStock(
      "SELECT /*+ RANGE_JOIN(big), BROADCAST(small) */ count(*) FROM big JOIN small ON big.v < small.v")
    assert(rangeJoins(both).map(_.buildSide) == Seq(BuildLeft))
    val broadcast = assertAsStock(
      "SELECT /*+ BROADCAST(big) */ count(*) FROM big JOIN small ON big.v < small.v")
    assert(rangeJoins(broadcast).map(_.buildSide) == Seq(BuildLeft))
  }

  test("the DataFrame hint, an outer join, and names qualified as in the query") {
    withSQLConf(noBroadcasts: _*) {
      val big = spark.table("big")
      val small = spark.table("small").hint("range_join")
      val df = big.join(small, big("v") > small("v") * 5, "left")
      val expected = stock(big.join(spark.table("small"), big("v") > small("v") * 5, "left")
        .collect().map(_.toString).sorted.toSeq)
      assert(df.collect().map(_.toString).sorted.toSeq == expected)
      assert(rangeJoins(df).map(_.buildSide) == Seq(BuildRight))
      val aliased = assertAsStock(
        "SELECT /*+ RANGE_JOIN(s) */ count(*) FROM big b RIGHT JOIN small s ON b.v >= s.v")
      assert(rangeJoins(aliased).map(_.buildSide) == Seq(BuildRight))
    }
  }

  private def warnings(query: String): Seq[String] = {
    val appender = new LogAppender("hint warnings")
    // Where Spark's hint error handler logs; this build's test logging keeps Spark to errors.
    withLogAppender(appender, Seq(HintErrorLogger.getClass.getName.stripSuffix("$")),
      level = Some(Level.WARN)) { sql(query).collect() }
    appender.loggingEvents.map(_.getMessage.getFormattedMessage).toSeq
  }

  test("a RANGE_JOIN hint rangejoin cannot honour is reported, and Spark plans the join") {
    val equi = "SELECT /*+ RANGE_JOIN(small) */ count(*) FROM big JOIN small ON big.v = small.v"
    assert(rangeJoins(assertAsStock(equi)).isEmpty)
    assert(warnings(equi).exists(_.contains("equi-join keys")), warnings(equi))

    val noRange = "SELECT /*+ RANGE_JOIN(small) */ count(*) FROM big JOIN small ON big.v <> small.v"
    assert(rangeJoins(assertAsStock(noRange)).isEmpty)
    assert(warnings(noRange).exists(_.contains("no conjunct compares the two sides")))

    withSQLConf(RangeJoinConf.Enabled -> "false") {
      val off = "SELECT /*+ RANGE_JOIN(small) */ count(*) FROM big JOIN small ON big.v < small.v"
      assert(warnings(off).exists(_.contains(s"${RangeJoinConf.Enabled} is false")))
    }
  }

  test("a RANGE_JOIN hint naming no relation of the query is reported as Spark reports BROADCAST's") {
    val query = "SELECT /*+ RANGE_JOIN(nowhere) */ count(*) FROM big JOIN small ON big.v < small.v"
    assertAsStock(query)
    assert(warnings(query).exists(w => w.contains("nowhere") && w.contains("RANGE_JOIN")),
      warnings(query))
  }
}
