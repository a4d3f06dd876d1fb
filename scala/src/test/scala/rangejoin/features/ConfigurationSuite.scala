package rangejoin.features

import org.apache.spark.sql.internal.SQLConf

import rangejoin.{RangeJoinConf, RangeJoinExtensions}
/** Each configuration key: its effect, and what a bad value does. Also the Spark version check. */
class ConfigurationSuite extends RangeJoinQueries {

  private val join = "SELECT count(*) FROM range(0, 200) l JOIN range(0, 50) r ON l.id > r.id"
  private val exists =
    "SELECT count(*) FROM range(0, 200) l WHERE EXISTS (SELECT 1 FROM range(0, 50) r WHERE r.id > l.id)"

  test("enabled: false leaves the join to Spark, true plans it, per query") {
    assert(rangeJoins(assertAsStock(join)).size == 1)
    withSQLConf(RangeJoinConf.Enabled -> "false") { assert(rangeJoins(sql(join)).isEmpty) }
    withSQLConf(RangeJoinConf.Enabled -> " TRUE ") { assert(rangeJoins(sql(join)).size == 1) }
  }

  test("broadcastThreshold: sides above it are left to Spark; unset follows Spark's threshold") {
    withSQLConf(RangeJoinConf.BroadcastThreshold -> "-1") {
      assert(rangeJoins(assertAsStock(join)).isEmpty)
    }
    withSQLConf(RangeJoinConf.BroadcastThreshold -> "64MB",
        SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1") {
      assert(rangeJoins(assertAsStock(join)).size == 1)
    }
    withSQLConf(RangeJoinConf.BroadcastThreshold -> "10485760") {
      assert(rangeJoins(sql(join)).size == 1)
    }
    withSQLConf(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1") {
      assert(rangeJoins(assertAsStock(join)).isEmpty)
    }
  }

  test("existenceFastPath: broadcasts the extreme key's row alone, or every row when off") {
    val on = assertAsStock(exists)
    assert(sortedBroadcasts(on).map(_.extreme.map(_.toString)) == Seq(Some("max")))
    withSQLConf(RangeJoinConf.ExistenceFastPath -> "false") {
      val off = assertAsStock(exists)
      assert(sortedBroadcasts(off).map(_.extreme) == Seq(None))
    }
  }

  test("dynamicFilter: streamed rows that cannot match are skipped, and counted, only when on") {
    def skipped(enabled: String): Long = withConf(RangeJoinConf.DynamicFilter -> enabled) {
      val df = assertAsStock(join.replace("l.id > r.id", "l.id < r.id"))
      assert(rangeJoins(df).nonEmpty)
      dynamicFilters(df).map(_.metrics("numStreamedRowsSkipped").value).sum
    }
    assert(skipped("true") == 151) // l.id < max(r.id) = 49 keeps 0..48 of 0..199
    assert(skipped("false") == 0)
  }

  for ((key, value) <- Seq(
      RangeJoinConf.Enabled -> "yes",
      RangeJoinConf.ExistenceFastPath -> "1",
      RangeJoinConf.DynamicFilter -> "on",
      RangeJoinConf.BroadcastThreshold -> "lots")) {
    test(s"a bad value of $key fails the query, naming the key and the accepted values") {
      withSQLConf(key -> value) {
        val message = failure(if (key == RangeJoinConf.ExistenceFastPath) exists else join)
        assert(message.contains(s"Invalid value for $key: '$value'"), message)
        assert(message.contains("Accepted values: "), message)
      }
    }
  }

  test("the extension refuses a Spark feature release it was not built for, saying why") {
    RangeJoinExtensions.checkSparkVersion("4.3.0")
    RangeJoinExtensions.checkSparkVersion("4.3.7")
    for (other <- Seq("4.2.0", "3.5.1", "5.0.0")) {
      val e = intercept[IllegalStateException](RangeJoinExtensions.checkSparkVersion(other))
      assert(e.getMessage.contains(s"built for Spark 4.3.x, but this is Spark $other"), e.getMessage)
    }
  }

  test("isInstalled tells a session with the extension") {
    assert(RangeJoinExtensions.isInstalled(spark))
  }
}
