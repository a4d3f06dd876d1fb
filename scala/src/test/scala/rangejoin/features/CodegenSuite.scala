package rangejoin.features

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.{InputAdapter, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.execution.broadcast.SortedBroadcastExec
import rangejoin.execution.index.SortedBuffer
import rangejoin.TestShims
import rangejoin.differential.Tier
/**
 * The join in whole-stage generated code: every join type it is generated for, either side
 * buffered where the type allows, one bound, a band on one buffered key and an interval index,
 * with no residual, one that cannot fail and one that can; NULL keys, NaN and -0.0, duplicates,
 * empty sides, a buffered key that fails (the payload is unsorted), and a buffered side that is
 * its integer key alone (its rows rebuilt from the sorted keys, [[rangejoin.execution.index.KeyRows]]). Each query runs three
 * ways, each against stock Spark: generated (and the plan says so: `*(n) PiecewiseMergeJoin`),
 * with whole-stage codegen off, and with expression codegen off too. In the full tier each query
 * runs generated and one of the two interpreted ways, the two taking turns from query to query
 * ([[interpretedWays]]), so each test still runs all three; `make test-all` runs every query
 * every way.
 */
class CodegenSuite extends RangeJoinQueries {

  override def beforeAll(): Unit = {
    super.beforeAll()
    sql("""CREATE OR REPLACE TEMP VIEW ca(aid, k, x) AS VALUES
          |  (1, 1.0D, 1), (2, 1.0D, 2), (3, NULL, 3), (4, CAST('NaN' AS DOUBLE), 4),
          |  (5, CAST('-0.0' AS DOUBLE), 5), (6, 0.0D, 6), (7, 2.5D, 7), (8, -3.0D, 8),
          |  (9, CAST('Infinity' AS DOUBLE), NULL), (10, 1.0D, 2)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW cb(bid, k, lo, hi) AS VALUES
          |  (1, 0.0D, 0, 5), (2, CAST('-0.0' AS DOUBLE), 2, 2), (3, 1.0D, 1, 8), (4, 1.0D, NULL, 3),
          |  (5, CAST('NaN' AS DOUBLE), 4, 9), (6, NULL, 6, 5), (7, 2.0D, -1, 1), (8, 1.0D, 1, 8)""".stripMargin)
    sql("SELECT * FROM ca WHERE aid < 0").createOrReplaceTempView("ca0")
    sql("SELECT * FROM cb WHERE bid < 0").createOrReplaceTempView("cb0")
  }

  private val shapes = Seq(
    "one bound" -> "ca.k < cb.k",
    "one bound, inclusive" -> "ca.k >= cb.k",
    "band on one key" -> "cb.k >= ca.k - 1.5D AND cb.k < ca.k + 1.0D",
    "interval" -> "ca.x >= cb.lo AND ca.x < cb.hi")

  // The residual: none, one that cannot fail, one that can (ANSI integer arithmetic).
  private val residuals = Seq("", " AND ca.aid <> cb.bid", " AND (ca.aid + cb.bid) % 3 <> 0")

  /** (query, whether its join is generated) for every join type, `l` and `r` named ca and cb. */
  private def queries(condition: String, residual: String, l: String, r: String): Seq[(String, Boolean)] = {
    val on = condition + residual
    // A residual that can fail is generated too: a row it fails on is replayed in Spark's order.
    val decidingGenerated = true
    Seq(
      s"SELECT /*+ BROADCAST(cb) */ * FROM $l AS ca JOIN $r AS cb ON $on" -> true,
      s"SELECT /*+ BROADCAST(ca) */ * FROM $l AS ca JOIN $r AS cb ON $on" -> true,
      s"SELECT /*+ BROADCAST(cb) */ * FROM $l AS ca LEFT JOIN $r AS cb ON $on" -> true,
      s"SELECT /*+ BROADCAST(ca) */ * FROM $l AS ca RIGHT JOIN $r AS cb ON $on" -> true,
      s"SELECT /*+ BROADCAST(cb) */ * FROM $l AS ca LEFT SEMI JOIN $r AS cb ON $on" -> decidingGenerated,
      s"SELECT /*+ BROADCAST(cb) */ * FROM $l AS ca LEFT ANTI JOIN $r AS cb ON $on" -> decidingGenerated,
      s"SELECT * FROM $l AS ca WHERE EXISTS (SELECT 1 FROM $r AS cb WHERE $on) OR ca.aid = 1" -> decidingGenerated)
  }

  private def rowsOf(df: DataFrame): Seq[String] = df.collect().toSeq.map(_.toString).sorted

  /** The codegen stages with a range join in their generated code (not behind an InputAdapter). */
  private def generatedJoins(df: DataFrame): Seq[WholeStageCodegenExec] = {
    def fused(plan: SparkPlan): Boolean = plan match {
      case _: PiecewiseMergeJoinExec => true
      case _: InputAdapter => false
      case other => other.children.exists(fused)
    }
    collect(df.queryExecution.executedPlan) { case stage: WholeStageCodegenExec if fused(stage.child) => stage }
  }

  /**
   * The interpreted ways to run a query: whole-stage code generation off, and expression code
   * generation off too. Both in `make test-all`; in the full tier the one whose `turn` it is
   * (callers alternate it from query to query): the two interpreted paths differ from each other
   * less than either does from the generated one, which every query runs.
   */
  private def interpretedWays(turn: Int): Seq[Seq[(String, String)]] = {
    val wholeStageOff = Seq(SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false")
    val ways = Seq(wholeStageOff, wholeStageOff :+ (SQLConf.CODEGEN_FACTORY_MODE.key -> "NO_CODEGEN"))
    if (Tier.all) ways else Seq(ways(turn % 2))
  }

  private var queriesChecked = 0

  /**
   * `query`'s answer equals stock Spark's generated and interpreted ([[interpretedWays]]: with
   * whole-stage codegen off, with no expression codegen, or both in `make test-all`); generated,
   * the plan shows the join in a codegen stage when `generated`.
   */
  private def assertThreeWays(query: String, generated: Boolean): Unit = {
    val expected = stock(rowsOf(sql(query)))
    // The existence fast path keeps a join interpreted (its filter is the answer): off, to
    // generate. The dynamic filter is generated with the join, below it.
    withSQLConf(RangeJoinConf.ExistenceFastPath -> "false") {
      val df = sql(query)
      assert(rowsOf(df) == expected, s"generated: $query")
      assert(rangeJoins(df).nonEmpty, s"no range join: $query\n${df.queryExecution.executedPlan}")
      val stages = generatedJoins(df)
      if (generated) {
        assert(stages.nonEmpty, s"not generated: $query\n${df.queryExecution.executedPlan}")
        assert(stages.exists(_.treeString.split("\n").exists(_.matches(""".*\*\(\d+\) PiecewiseMergeJoin .*"""))),
          stages.map(_.treeString))
      } else {
        assert(stages.isEmpty, s"generated: $query\n${df.queryExecution.executedPlan}")
      }
    }
    // With the defaults, an existence join may take the fast path; any other join runs as above.
    if (Seq("SEMI", "ANTI", "EXISTS").exists(query.contains)) {
      assert(rowsOf(sql(query)) == expected, s"defaults: $query")
    }
    queriesChecked += 1
    for (way <- interpretedWays(queriesChecked)) withSQLConf(way: _*) {
      assert(rowsOf(sql(query)) == expected, s"$way: $query")
    }
  }

  for ((name, condition) <- shapes; residual <- residuals) {
    val which = if (residual.isEmpty) "no residual" else if (residual.contains("+")) "a residual that can fail" else "a residual"
    test(s"$name, $which: every generated join type as stock Spark, three ways") {
      for ((query, generated) <- queries(condition, residual, "ca", "cb")) assertThreeWays(query, generated)
    }
  }

  private val emptyPairs = Seq(("ca0", "cb"), ("ca", "cb0"), ("ca0", "cb0"))

  for (((name, condition), shape) <- shapes.zipWithIndex) {
    test(s"$name: empty sides") {
      // Each join type with one of the three empty pairs in turn (each pair with every type
      // across the four shapes): every type meets an empty streamed and an empty buffered side.
      for (((l, r), pair) <- emptyPairs.zipWithIndex;
           ((query, generated), q) <- queries(condition, " AND ca.aid <> cb.bid", l, r).zipWithIndex
           if (q + shape) % emptyPairs.size == pair) {
        assertThreeWays(query, generated)
      }
    }
  }

  test("a buffered key that fails leaves the buffer unsorted: the whole condition, pair by pair") {
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
      sql("SELECT * FROM VALUES (1L, 1), (9223372036854775807L, 2), (5L, 3), (NULL, 4), (5L, 5) AS t(v, bid)")
        .createOrReplaceTempView("ov")
      // Spark evaluates `ov.v + 1` only beside a streamed key that is not NULL: with none, it
      // never overflows. rangejoin's sort raises on it, so the buffer stays unsorted and the
      // condition is tested pair by pair, as Spark does.
      sql("SELECT * FROM VALUES (CAST(NULL AS BIGINT), 1), (NULL, 2), (NULL, 3), (NULL, 4) AS t(x, aid)")
        .createOrReplaceTempView("os")
      val guard = "os.x < ov.v + 1"
      for ((query, generated) <- Seq(
          s"SELECT /*+ BROADCAST(ov) */ * FROM os JOIN ov ON $guard" -> true,
          s"SELECT /*+ BROADCAST(ov) */ * FROM os JOIN ov ON $guard AND os.aid <> ov.bid" -> true,
          s"SELECT /*+ BROADCAST(ov) */ * FROM os LEFT JOIN ov ON $guard AND (os.aid + ov.bid) % 2 = 0" -> true,
          s"SELECT /*+ BROADCAST(ov) */ * FROM ov RIGHT JOIN os ON $guard" -> true,
          s"SELECT /*+ BROADCAST(ov) */ * FROM os LEFT SEMI JOIN ov ON $guard" -> true,
          s"SELECT /*+ BROADCAST(ov) */ * FROM os LEFT ANTI JOIN ov ON $guard" -> true,
          s"SELECT * FROM os WHERE EXISTS (SELECT 1 FROM ov WHERE $guard) OR os.aid = 3" -> true)) {
        assertThreeWays(query, generated)
      }
    }
  }

  test("a semi, anti or existence join whose residual raises replays the row in Spark's order, in generated code") {
    // r's broadcast order: b = 10, then 5 (one partition). For l.id = 1 the residual divides by
    // zero on b = 10, the first candidate rangejoin tries (the fixed end of the run l.id < r.b:
    // index.FixedEndFirstFinder), and passes on b = 5: Spark, trying b = 10 first, divides by
    // zero. With b = 5 first in broadcast order, Spark's first try passes: the row matches.
    def outcome(query: String, conf: (String, String)*): Either[String, Seq[String]] = withConf(conf: _*) {
      scala.util.Try(rowsOf(sql(query))).toEither.left.map { e =>
        Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).collectFirst {
          case t: org.apache.spark.SparkThrowable if TestShims.condition(t) != null => TestShims.condition(t)
        }.getOrElse(e.getClass.getName)
      }
    }
    for (order <- Seq("15 - id", "id")) {
      val r = s"(SELECT $order AS b FROM range(5, 11, 5, 1))"
      val on = "l.id < r.b AND 10 / (r.b - l.id - 9) < 0"
      for (query <- Seq(
          s"SELECT /*+ BROADCAST(r) */ * FROM range(1, 3) l LEFT SEMI JOIN $r r ON $on",
          s"SELECT /*+ BROADCAST(r) */ * FROM range(1, 3) l LEFT ANTI JOIN $r r ON $on",
          s"SELECT * FROM range(1, 3) l WHERE EXISTS (SELECT 1 FROM $r r WHERE $on) OR l.id = 7")) {
        val expected = stock(outcome(query))
        val fastPathOff = RangeJoinConf.ExistenceFastPath -> "false"
        assert(outcome(query, fastPathOff) == expected, s"generated: $query")
        assert(outcome(query, fastPathOff, SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false") == expected,
          s"interpreted: $query")
        if (expected.isRight) withSQLConf(fastPathOff) {
          val df = sql(query)
          df.collect()
          assert(generatedJoins(df).nonEmpty, s"not generated: $query\n${df.queryExecution.executedPlan}")
          // The replay reads the rows' origins: the buffer keeps them.
          assert(sortedBroadcasts(df).map(_.keepOrigins) == Seq(true), query)
        }
      }
    }
  }

  test("only a join that may replay a row in Spark's order keeps its buffer's origins") {
    val r = "(SELECT id AS b FROM range(5, 11, 5, 1))"
    for ((query, keeps) <- Seq(
        // Any passing candidate decides the row, and the residual can raise.
        s"SELECT * FROM range(1, 3) l LEFT SEMI JOIN $r r ON l.id < r.b AND 10 / (r.b - l.id) > 0" -> true,
        // The residual cannot raise; pairs are emitted; the buffered side's matches are marked.
        s"SELECT * FROM range(1, 3) l LEFT SEMI JOIN $r r ON l.id < r.b AND l.id <> r.b" -> false,
        s"SELECT * FROM range(1, 3) l JOIN $r r ON l.id < r.b AND 10 / (r.b - l.id) > 0" -> false,
        s"SELECT /*+ BROADCAST(l) */ * FROM range(1, 3) l LEFT SEMI JOIN $r r ON l.id < r.b AND 10 / (r.b - l.id) > 0" -> false)) {
      withSQLConf(RangeJoinConf.ExistenceFastPath -> "false") {
        val df = sql(query)
        assert(rowsOf(df) == stock(rowsOf(sql(query))), query)
        val broadcasts = sortedBroadcasts(df)
        assert(broadcasts.map(_.keepOrigins) == Seq(keeps), s"$query\n${df.queryExecution.executedPlan}")
        assert(broadcasts.head.executeBroadcast[SortedBuffer]().value.keepsOrigins == keeps, query)
      }
    }
  }

  test("a larger join in several partitions, with the operators above fused") {
    spark.range(0, 20000, 1, 4).selectExpr("id AS aid", "(id * 7919) % 1000 AS x").createOrReplaceTempView("big")
    spark.range(0, 100, 1, 1).selectExpr("id AS bid", "10 * id + 5 AS k").createOrReplaceTempView("small")
    for (query <- Seq(
        "SELECT count(*), count(small.bid), sum(small.bid) FROM big LEFT JOIN small ON big.x > small.k",
        "SELECT count(*), sum(aid + bid) FROM big JOIN small ON big.x >= small.k AND big.x < small.k + 30",
        "SELECT x, count(*) FROM big JOIN small ON big.x > small.k WHERE bid % 3 = 0 GROUP BY x",
        "SELECT count(*) FROM big LEFT JOIN small ON big.x > small.k AND (aid + bid) % 7 = 0 WHERE bid IS NULL OR bid > 50")) {
      assertThreeWays(query, generated = true)
    }
  }

  test("buffered columns of every type, read from arrays or rows, NULLs and padding") {
    // Every type whose value sits in a row's fixed-width slot is read from an array (NULLs in
    // each); decimals, strings and arrays from the row. Read all, some, and through a filter.
    sql("""CREATE OR REPLACE TEMP VIEW typed AS SELECT * FROM VALUES
          |  (1, 10, true, CAST(1 AS TINYINT), CAST(2 AS SMALLINT), 3, 4L, CAST(5.5 AS FLOAT), 6.5D,
          |   DATE'2024-01-02', TIMESTAMP'2024-01-02 03:04:05', TIMESTAMP_NTZ'2024-01-02 03:04:05',
          |   INTERVAL '3' DAY, INTERVAL '2' MONTH, CAST(7.25 AS DECIMAL(10, 2)), 'a', array(1, 2)),
          |  (2, 20, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          |  (3, 30, false, CAST(-1 AS TINYINT), CAST(-2 AS SMALLINT), -3, -4L, CAST('NaN' AS FLOAT),
          |   CAST('-0.0' AS DOUBLE), DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59', NULL,
          |   INTERVAL '-1' DAY, NULL, CAST(-0.01 AS DECIMAL(10, 2)), '', array()),
          |  (4, NULL, true, CAST(127 AS TINYINT), CAST(32767 AS SMALLINT), 2147483647, 9223372036854775807L,
          |   CAST('Infinity' AS FLOAT), CAST('-Infinity' AS DOUBLE), DATE'9999-12-31', NULL, NULL, NULL,
          |   INTERVAL '-5' MONTH, NULL, NULL, NULL)
          |AS t(tid, k, b, y, s, i, l, f, d, dt, ts, ntz, dti, ymi, dec, str, arr)""".stripMargin)
    spark.range(0, 40, 1, 2).selectExpr("id AS aid", "id AS x").createOrReplaceTempView("probe")
    for ((join, select) <- Seq(
        "JOIN" -> "aid, typed.*", "LEFT JOIN" -> "aid, typed.*", "LEFT JOIN" -> "aid, l, d, str",
        "LEFT JOIN" -> "aid, dt", "JOIN" -> "count(*), sum(i), max(f), min(ts)")) {
      assertThreeWays(s"SELECT /*+ BROADCAST(typed) */ $select FROM probe $join typed ON probe.x > typed.k",
        generated = true)
    }
    assertThreeWays("SELECT /*+ BROADCAST(typed) */ typed.*, aid FROM typed RIGHT JOIN probe ON probe.x > typed.k",
      generated = true)
    // Arrays are fetched (and so built) only for the columns read pair by pair: of the buffered
    // side's k and dt (ordinals 0 and 1 once pruned), dt. k is read only by an unsorted
    // buffer's condition, which reads the rows.
    withSQLConf(RangeJoinConf.ExistenceFastPath -> "false") {
      val df = sql("SELECT /*+ BROADCAST(typed) */ aid, dt FROM probe LEFT JOIN typed ON probe.x > typed.k")
      df.collect()
      val code = generatedJoins(df).map(_.doCodeGen()._2.body).mkString
      assert(code.contains(""".values(1, "int")""") && code.contains(".nulls(1)"), code)
      assert(!code.contains(".values(0,") && !code.contains(".nulls(0)"), code)
    }
    assertThreeWays("SELECT /*+ BROADCAST(typed) */ aid, s FROM probe LEFT JOIN typed ON probe.x > typed.k " +
      "WHERE y IS NULL OR i > 0", generated = true)
    assertThreeWays("SELECT /*+ BROADCAST(typed) */ aid FROM probe LEFT JOIN typed ON probe.x > typed.k " +
      "AND (b OR d > 0.0D)", generated = true)
  }

  test("a buffered BIGINT, timestamp or interval sort key the join reads comes from the sorted keys, as stock Spark") {
    // The key column is read from the sorted keys when every buffered row has a key (and from its
    // own array otherwise): next to it a column of other values the same residual reads, on
    // either side, with duplicates and extremes; then the same side with a NULL key.
    spark.range(0, 60, 1, 3).selectExpr("id AS aid", "id * 3 - 40 AS x", "TIMESTAMP_SECONDS(id * 3 - 40) AS t",
      "make_dt_interval(0, 0, 0, id * 3 - 40) AS di").createOrReplaceTempView("lk")
    sql(
      """SELECT bid, k, v, TIMESTAMP_SECONDS(k) AS ts,
        |  make_dt_interval(0, 0, 0, k) AS dk FROM VALUES
        |  (1, 5L, 100L), (2, -7L, -3L), (3, 5L, 8L), (4, 60L, 1L), (5, -40L, 2L), (6, 0L, -9L),
        |  (7, 13L, 13L), (8, 99L, 4L), (9, -1L, 7L), (10, 5L, 6L)
        |AS t(bid, k, v)""".stripMargin).createOrReplaceTempView("bk0")
    sql("SELECT * FROM bk0 UNION ALL SELECT 11, NULL, 5L, NULL, NULL").createOrReplaceTempView("bkn")
    for (bk <- Seq("bk0", "bkn")) {
      for ((query, generated) <- Seq(
          s"SELECT /*+ BROADCAST(b) */ a.aid, b.k, b.v FROM lk a JOIN $bk b ON a.x > b.k AND (a.x + b.k + b.v) % 3 <> 0",
          s"SELECT /*+ BROADCAST(b) */ a.aid, b.bid, b.k FROM lk a LEFT JOIN $bk b ON a.x >= b.k AND b.k + b.v > a.x - 20",
          s"SELECT /*+ BROADCAST(b) */ a.aid FROM lk a LEFT SEMI JOIN $bk b ON a.x > b.k AND (a.x + b.k) % 4 = 0",
          s"SELECT /*+ BROADCAST(b) */ a.aid FROM lk a LEFT ANTI JOIN $bk b ON a.x < b.k AND (a.x - b.k) % 5 <> 0",
          s"SELECT /*+ BROADCAST(b) */ a.aid, b.k FROM lk a JOIN $bk b ON b.k >= a.x - 10 AND b.k < a.x + 10 AND b.v <> b.k",
          s"SELECT /*+ BROADCAST(b) */ b.bid, b.k, a.aid FROM $bk b RIGHT JOIN lk a ON a.x > b.k AND (b.k + b.v) % 2 = 0",
          s"SELECT /*+ BROADCAST(b) */ a.aid, b.ts FROM lk a JOIN $bk b ON a.t > b.ts AND second(b.ts) <> 13",
          s"SELECT /*+ BROADCAST(b) */ a.aid, b.dk FROM lk a LEFT JOIN $bk b ON a.di >= b.dk AND b.dk <> INTERVAL '5' SECOND"
        ).map(_ -> true)) {
        assertThreeWays(query, generated)
      }
    }
  }

  test("an outer join whose streamed side is too wide for a method's parameters runs interpreted") {
    // 90 nullable bigints take 271 parameter slots, past the JVM's 255 (and under Spark's 100
    // fields for whole-stage codegen): the left join is interpreted, the inner join generated.
    val columns = (1 to 90).map(c => s"IF(id % 7 = $c % 7, NULL, id + $c) AS c$c")
    spark.range(0, 50, 1, 2).selectExpr(("id AS aid" +: "id % 13 AS x" +: columns): _*).createOrReplaceTempView("wide")
    spark.range(0, 10, 1, 1).selectExpr("id AS bid", "id AS k").createOrReplaceTempView("narrow")
    assertThreeWays("SELECT /*+ BROADCAST(narrow) */ * FROM wide LEFT JOIN narrow ON wide.x > narrow.k", generated = false)
    assertThreeWays("SELECT /*+ BROADCAST(narrow) */ * FROM wide JOIN narrow ON wide.x > narrow.k", generated = true)
  }

  test("the candidates metric as the interpreted driver counts it") {
    val query = "SELECT /*+ BROADCAST(cb) */ * FROM ca JOIN cb ON ca.x >= cb.lo AND ca.x < cb.hi AND ca.aid <> cb.bid"
    def counted(conf: (String, String)*): (Long, Long) = withConf(conf: _*) {
      val df = sql(query)
      df.collect()
      val Seq(join) = rangeJoins(df)
      (join.metrics("numCandidates").value, join.metrics("numOutputRows").value)
    }
    val off = RangeJoinConf.DynamicFilter -> "false"
    assert(counted(off) == counted(off, SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false"))
  }

  /** Integer key types, each as an expression of an INT `v`: a side of one such column is its keys. */
  private val integerKeyTypes: Seq[(String, String => String)] = Seq(
    "INT" -> ((v: String) => v),
    "SMALLINT" -> ((v: String) => s"CAST(($v) % 30000 AS SMALLINT)"),
    "BIGINT" -> ((v: String) => s"($v) * 3000000000L"),
    "DATE" -> ((v: String) => s"DATE_ADD(DATE'2000-01-01', ($v) % 100000)"),
    "TIMESTAMP" -> ((v: String) => s"TIMESTAMP_SECONDS($v)"))

  /** Views kb (its key `k` alone, from `values`) and ka (`x` of the same type, and `aid`). */
  private def integerKeyViews(of: String => String, values: String): Unit = {
    sql(s"SELECT ${of("v")} AS k FROM VALUES $values AS t(v)").createOrReplaceTempView("kb")
    sql(s"SELECT ${of("v + 1")} AS x, aid FROM VALUES (0, 1), (4, 2), (NULL, 3), (-4, 4), (2147483646, 5), (6, 6) AS t(v, aid)")
      .createOrReplaceTempView("ka")
  }

  test("a buffered side that is its integer key alone travels as its keys: every join type, three ways") {
    val values = "(1), (1), (NULL), (5), (-3), (2147483647), (-2147483648), (0), (7), (NULL)"
    // Each type with one of the conditions, in turn: a bound alone, and one with a residual.
    val conditions = Seq("ka.x < kb.k", "ka.x >= kb.k AND ka.aid <> 2")
    for (((name, of), i) <- integerKeyTypes.zipWithIndex; on = conditions(i % conditions.size)) {
      integerKeyViews(of, values)
      for ((query, q) <- Seq(
             s"SELECT /*+ BROADCAST(kb) */ * FROM ka JOIN kb ON $on",
             s"SELECT /*+ BROADCAST(kb) */ * FROM ka LEFT JOIN kb ON $on",
             s"SELECT /*+ BROADCAST(kb) */ * FROM ka RIGHT JOIN kb ON $on",
             s"SELECT /*+ BROADCAST(kb) */ * FROM ka FULL JOIN kb ON $on",
             s"SELECT /*+ BROADCAST(kb) */ * FROM ka LEFT SEMI JOIN kb ON $on AND ka.x <> kb.k",
             s"SELECT /*+ BROADCAST(kb) */ * FROM ka LEFT ANTI JOIN kb ON $on AND ka.x <> kb.k").zipWithIndex) {
        val expected = stock(rowsOf(sql(query)))
        withSQLConf(RangeJoinConf.ExistenceFastPath -> "false") {
          // Each join type and condition interpreted one way for one key type, the other for
          // the next type with that condition.
          for (conf <- Nil +: interpretedWays(i / conditions.size + q)) {
            withSQLConf(conf: _*) {
              val df = sql(query)
              assert(rowsOf(df) == expected, s"$name, $conf: $query")
              val broadcasts = collect(df.queryExecution.executedPlan) { case b: SortedBroadcastExec => b }
              assert(broadcasts.nonEmpty && broadcasts.forall(_.executeBroadcast[SortedBuffer]().value.rowsAreKeys),
                s"$name: not its keys: $query\n${df.queryExecution.executedPlan}")
            }
          }
        }
      }
    }
  }

  test("generated code reads an integer key side's column from its sorted keys and never builds its rows") {
    // No NULL key: only then do the sorted keys line up with the rows. SMALLINT still reads rows.
    val values = "(1), (1), (5), (-3), (2147483647), (-2147483648), (0), (7)"
    for ((name, of) <- integerKeyTypes if name != "SMALLINT") {
      integerKeyViews(of, values)
      for (query <- Seq(
             "SELECT /*+ BROADCAST(kb) */ ka.aid, kb.k FROM ka JOIN kb ON ka.x < kb.k",
             "SELECT /*+ BROADCAST(kb) */ ka.aid, kb.k FROM ka LEFT JOIN kb ON ka.x >= kb.k",
             "SELECT /*+ BROADCAST(kb) */ * FROM ka LEFT SEMI JOIN kb ON ka.x < kb.k AND ka.x <> kb.k",
             "SELECT /*+ BROADCAST(kb) */ * FROM ka LEFT ANTI JOIN kb ON ka.x < kb.k AND ka.x <> kb.k")) {
        val expected = stock(rowsOf(sql(query)))
        val df = sql(query)
        assert(rowsOf(df) == expected, s"$name: $query")
        assert(generatedJoins(df).nonEmpty, s"$name: not generated: $query")
        val buffers = collect(df.queryExecution.executedPlan) {
          case b: SortedBroadcastExec => b.executeBroadcast[SortedBuffer]().value
        }
        assert(buffers.nonEmpty && buffers.forall(_.rowsAreKeys), s"$name: not its keys: $query")
        assert(!buffers.exists(_.rowsBuilt), s"$name: the rows were built: $query")
      }
    }
  }
}
