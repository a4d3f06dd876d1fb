package rangejoin.features

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight}
import org.apache.spark.sql.execution.WholeStageCodegenExec
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.broadcast.SortedBroadcastExec
import rangejoin.execution.sideswitch.{KeyPassExec, SideSwitchExec}
/**
 * The side switch ([[SideSwitchExec]]): an inner range join over a large buffered side buffers
 * the other side's rows that can match instead, when they are few. Answers as stock Spark's
 * whichever side it chose, on sides with NULLs, NaN, -0.0, duplicates and no rows; planned only
 * where the choice cannot change the answer.
 */
class SideSwitchSuite extends RangeJoinQueries {

  // Every side counts as large here: the switch is planned for any qualifying join.
  private val always = Seq(RangeJoinConf.SideSwitchMinSize -> "0")

  override def beforeAll(): Unit = {
    super.beforeAll()
    // big: 2,000 rows, keys 0..999 twice each, some NULL; the others 3,000 rows, keys over 1,500
    // values: many overlap big's keys, low and high mostly lie below and above them.
    sql("""CREATE OR REPLACE TEMP VIEW big AS SELECT id, IF(id % 97 = 0, NULL, id % 1000) AS k,
          |  CAST(IF(id % 97 = 0, NULL, id % 1000) AS DOUBLE) AS d FROM range(0, 2000, 1, 3)""".stripMargin)
    for ((name, offset) <- Seq("many" -> -200, "low" -> -1400, "high" -> 900)) {
      sql(s"""CREATE OR REPLACE TEMP VIEW $name AS SELECT id, id % 1500 + $offset AS k,
             |  CAST(id % 1500 + $offset AS DOUBLE) AS d FROM range(0, 3000, 1, 4)""".stripMargin)
    }
    sql("""CREATE OR REPLACE TEMP VIEW dbl(d) AS VALUES (1.0D), (CAST('NaN' AS DOUBLE)), (-0.0D),
          |  (0.0D), (NULL), (998.5D), (999.0D), (CAST('Infinity' AS DOUBLE))""".stripMargin)
    sql("CREATE OR REPLACE TEMP VIEW none AS SELECT * FROM big WHERE id < 0")
    sql("CREATE OR REPLACE TEMP VIEW nullkeys AS SELECT id, CAST(NULL AS BIGINT) AS k FROM range(50)")
  }

  private def switches(df: DataFrame): Seq[SideSwitchExec] =
    collect(df.queryExecution.executedPlan) { case s: SideSwitchExec => s }

  /** The answer as stock Spark's, under one switch that swapped (or not) as `swapped` says. */
  private def assertSwitched(query: String, swapped: Boolean): DataFrame = {
    val df = assertAsStock(query)
    val Seq(switch) = switches(df)
    assert(switch.metrics("swapped").value == (if (swapped) 1 else 0), s"$query\n${df.queryExecution.executedPlan}")
    df
  }

  test("a selective join buffers the few rows that can match, and a broad one keeps the plan") {
    withSQLConf(always: _*) {
      // many.k > min(big.k) = 0 for most of many: not worth swapping. (The residuals keep the
      // answers small: the rows, not the choice, are what collecting millions would test.)
      assertSwitched("SELECT * FROM many s JOIN big b ON s.k > b.k AND (s.id + b.id) % 97 = 0", swapped = false)
      assertSwitched("SELECT * FROM many s JOIN big b ON s.k < b.k AND (s.id + b.id) % 97 = 0", swapped = false)
      // Only low.k in 1..99 can match (198 rows, under a quarter of big's 1,979 keyed rows).
      val df = assertSwitched("SELECT s.id, b.id FROM low s JOIN big b ON s.k > b.k", swapped = true)
      val Seq(switch) = switches(df)
      assert(switch.metrics("numBufferedRows").value == 2000 - 21)
      assertSwitched("SELECT * FROM low s JOIN big b ON s.k >= b.k", swapped = true)
      assertSwitched("SELECT * FROM low s JOIN big b ON s.k < b.k AND (s.id + b.id) % 97 = 0", swapped = false)
      assertSwitched("SELECT * FROM high s JOIN big b ON s.k <= b.k", swapped = true)
      assertSwitched("SELECT * FROM high s JOIN big b ON s.k < b.k AND s.id % 3 <> b.id % 4", swapped = true)
    }
  }

  test("the rows the switch's filter drops before buffering the side are counted, in generated code or not") {
    for (wholeStage <- Seq(true, false)) {
      withSQLConf(always :+ (SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> wholeStage.toString): _*) {
        // low.k > min(big.k) = 0 for the 198 rows with k in 1..99; the other 2,802 are dropped.
        val df = assertSwitched("SELECT s.id, b.id FROM low s JOIN big b ON s.k > b.k", swapped = true)
        val built = collect(df.queryExecution.executedPlan) {
          case b: SortedBroadcastExec if b.metrics("numRows").value > 0 =>
            (b.metrics("numRows").value, b.metrics("numRowsFiltered").value)
        }
        assert(built == Seq((198L, 2802L)), s"whole-stage codegen $wholeStage")
      }
    }
  }

  test("either side, every operator, doubles with NaN and -0.0, NULL keys and empty sides") {
    withSQLConf(always: _*) {
      val pairs = Seq(("low", "big"), ("big", "high"), ("many", "big"))
      for ((op, i) <- Seq("<", "<=", ">", ">=").zipWithIndex; ((l, r), j) <- pairs.zipWithIndex) {
        // The large pairs (stock Spark compares their 6 million pairs), the empty and the
        // all-NULL side with each operator once and each pair of sides at least once: every
        // combination made this the slowest test of the suites.
        if (i % pairs.size == j) {
          assertAsStock(s"SELECT l.id, r.id FROM $l l JOIN $r r ON l.k $op r.k AND (l.id + r.id) % 37 = 0")
          assertAsStock(s"SELECT l.id FROM $l l JOIN none r ON l.k $op r.k")
          assertAsStock(s"SELECT l.id, r.id FROM $l l JOIN nullkeys r ON l.k $op r.k")
        }
        assertAsStock(s"SELECT l.id, r.d FROM $l l JOIN dbl r ON l.d $op r.d")
      }
      // One side all doubles: NaN above every number, -0.0 equal to 0.0.
      for (op <- Seq("<", "<=", ">", ">=")) {
        assertAsStock(s"SELECT a.d, b.d FROM dbl a JOIN dbl b ON a.d $op b.d")
        assertAsStock(s"SELECT a.id, b.d FROM big a JOIN dbl b ON a.d $op b.d")
      }
    }
  }

  test("bands and residuals: the swapped join searches its own index") {
    withSQLConf(always: _*) {
      sql("CREATE OR REPLACE TEMP VIEW iv AS SELECT id, k AS lo, k + 3 AS hi FROM big")
      val df = assertSwitched("SELECT s.id, b.id FROM many s JOIN iv b ON s.k BETWEEN b.lo AND b.hi", swapped = false)
      assert(rangeJoins(df).map(_.simpleString(100).split(",")(2).trim.takeWhile(_ != ' ')).toSet ==
        Set("IntervalIndex", "BandRun"))
      // The interval index sorts by lo, the key bounded from above: only low.k from min(lo) = 0 on.
      assertSwitched("SELECT s.id, b.id FROM low s JOIN iv b ON s.k >= b.lo AND s.k < b.hi", swapped = true)
      assertAsStock("SELECT s.id, b.id FROM low s JOIN big b ON s.k BETWEEN b.k AND b.k + 5")
      assertAsStock("SELECT s.id, b.id FROM high s JOIN iv b ON s.k > b.lo AND s.id <> b.id AND b.hi > 990")
    }
  }

  test("generated code on and off, adaptive execution on and off: the chosen join in the stage") {
    val query = "SELECT count(*), sum(s.id), sum(b.id) FROM low s JOIN big b ON s.k > b.k"
    for (aqe <- Seq("true", "false"); (wholeStage, factory) <- Seq(("true", "FALLBACK"), ("false", "NO_CODEGEN"))) {
      withSQLConf(always ++ Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe,
          SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> wholeStage, SQLConf.CODEGEN_FACTORY_MODE.key -> factory): _*) {
        val df = assertSwitched(query, swapped = true)
        val staged = collect(df.queryExecution.executedPlan) {
          case stage: WholeStageCodegenExec if stage.child.exists(_.isInstanceOf[SideSwitchExec]) => stage
        }
        assert(staged.nonEmpty == wholeStage.toBoolean, df.queryExecution.executedPlan)
        // The pass over the buffered key is a stage of its own, not the switch's stage's
        // members, which only the chosen join's code includes.
        val passes = collect(df.queryExecution.executedPlan) { case p: KeyPassExec => p }
        assert(passes.nonEmpty && passes.forall(_.child.isInstanceOf[WholeStageCodegenExec] == wholeStage.toBoolean),
          df.queryExecution.executedPlan)
      }
    }
  }

  test("planned only where the choice cannot change the answer, and is the planner's") {
    def planned(query: String): Boolean = switches(sql(query)).nonEmpty
    withSQLConf(always: _*) {
      assert(planned("SELECT * FROM many s JOIN big b ON s.k > b.k"))
      assert(!planned("SELECT * FROM many s LEFT JOIN big b ON s.k > b.k"))
      assert(!planned("SELECT /*+ BROADCAST(b) */ * FROM many s JOIN big b ON s.k > b.k"))
      assert(!planned("SELECT /*+ RANGE_JOIN(b) */ * FROM many s JOIN big b ON s.k > b.k"))
      // A side read twice must give the same rows both times.
      assert(!planned("SELECT * FROM many s JOIN (SELECT id, k + CAST(rand() * 2 AS INT) AS k FROM big) b ON s.k > b.k"))
      // Equality keys: the per-key index, sorted within each key, has no single extreme.
      assert(!planned("SELECT * FROM many s JOIN big b ON s.id = b.id AND s.k > b.k"))
      withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
        // The switch would evaluate b.k * 1000000000000000 on every row of b: it may overflow.
        assert(!planned("SELECT * FROM many s JOIN big b ON s.k > b.k * 1000000000000000"))
      }
      withSQLConf(RangeJoinConf.SideSwitch -> "false") {
        val df = assertAsStock("SELECT * FROM many s JOIN big b ON s.k > b.k AND (s.id + b.id) % 97 = 0")
        assert(switches(df).isEmpty && rangeJoins(df).size == 1)
      }
      withSQLConf(RangeJoinConf.DynamicFilter -> "false") {
        assert(!planned("SELECT * FROM many s JOIN big b ON s.k > b.k"))
      }
    }
    // By default only a side estimated at 8 MB or more.
    assert(!planned("SELECT * FROM many s JOIN big b ON s.k > b.k"))
    withSQLConf(RangeJoinConf.SideSwitchMinSize -> "1k") {
      assert(planned("SELECT * FROM many s JOIN big b ON s.k > b.k"))
    }
  }

  test("a bad size or ratio is an error naming the key") {
    for ((key, bad) <- Seq(RangeJoinConf.SideSwitchMinSize -> "lots", RangeJoinConf.SideSwitchMinSize -> "-1",
        RangeJoinConf.SideSwitchMaxRatio -> "half", RangeJoinConf.SideSwitchMaxRatio -> "-0.5")) {
      withSQLConf(always :+ (key -> bad): _*) {
        val message = failure("SELECT * FROM many s JOIN big b ON s.k > b.k")
        assert(message.contains(key) && message.contains(bad), message)
      }
    }
  }

  test("the swapped join's rows are the default join's, whichever side a query names first") {
    withSQLConf(always: _*) {
      val query = "SELECT * FROM big b JOIN low s ON b.k < s.k"
      val df = assertSwitched(query, swapped = true)
      // The output keeps the query's column order: b's columns, then s's.
      assert(df.columns.toSeq == Seq("id", "k", "d", "id", "k", "d"))
      // big (left) buffered as planned; low (right) buffered by the swapped join.
      assert(rangeJoins(df).map(_.buildSide).toSet == Set(BuildLeft, BuildRight))
    }
  }
}
