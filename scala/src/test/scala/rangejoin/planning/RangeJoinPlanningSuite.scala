package rangejoin.planning

import scala.reflect.ClassTag

import org.apache.spark.sql.{DataFrame, QueryTest, Row}
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans.logical.Join
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, BroadcastNestedLoopJoinExec, CartesianProductExec}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{BooleanType, DataType, LongType, StructField, StructType}

import rangejoin.{OptionWhen, RangeJoinConf, RangeJoinSharedSession, TestFeatureShims}
import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.condition.RangeOp
import rangejoin.differential.SharedAcrossSmokeLines
/**
 * Which joins RangeJoinStrategy takes, with which keys and build side, and which it leaves to
 * Spark: every query is run twice, with rangejoin and without it, and must give stock Spark's
 * answer either way; the plan must hold exactly one PiecewiseMergeJoin where rangejoin applies
 * and none (with Spark's usual operator instead) where it must not. The build side is checked
 * against the build side stock Spark gives BroadcastNestedLoopJoin for the same query. The smoke
 * lines (4.0-4.2) share its tests, a third each; 3.5 and 4.3 run them all.
 */
class RangeJoinPlanningSuite extends QueryTest with RangeJoinSharedSession with AdaptiveSparkPlanHelper
  with SharedAcrossSmokeLines {

  override def beforeAll(): Unit = {
    super.beforeAll()
    // NULLs, duplicates and zeros (for division) in both sides; several partitions each.
    sql("""CREATE OR REPLACE TEMP VIEW l AS SELECT
          |  IF(id % 9 = 4, NULL, id % 30) AS a, id % 7 AS c, CAST(id % 5 - 2 AS INT) AS x,
          |  id * 1.5D AS d, date_add(DATE'2024-01-01', CAST(id AS INT)) AS dt,
          |  TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, CAST(id AS INT), 0, 0) AS ts,
          |  CAST(id % 11 AS STRING) AS s, array(id % 4) AS arr, named_struct('v', id % 4) AS st,
          |  map(id % 4, id) AS m
          |FROM range(0, 40, 1, 2)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW r AS SELECT
          |  IF(id % 8 = 3, NULL, id + 2) AS b, id % 5 AS c, id * 2.5D AS d,
          |  date_add(DATE'2024-01-10', CAST(id AS INT)) AS dt,
          |  TIMESTAMP'2024-01-01 10:00:00' + make_interval(0, 0, 0, 0, CAST(id AS INT), 0, 0) AS ts,
          |  CAST(id % 13 AS STRING) AS s, array(id % 3) AS arr, named_struct('v', id % 3) AS st,
          |  map(id % 3, id) AS m
          |FROM range(0, 25, 1, 3)""".stripMargin)
    // For build sides: sizes known to the planner (8 bytes a row), both under the default threshold.
    spark.range(0, 10, 1, 2).toDF("v").createOrReplaceTempView("small")
    spark.range(0, 3000, 1, 2).toDF("w").createOrReplaceTempView("large")
  }

  private def rangeJoins(df: DataFrame): Seq[PiecewiseMergeJoinExec] =
    collect(df.queryExecution.executedPlan) { case j: PiecewiseMergeJoinExec => j }

  private def stockSpark[T](body: => T): T = withConf(RangeJoinConf.Enabled -> "false")(body)

  /** Stock Spark's answer to `query`, and the plan it ran. */
  private def stockRun(query: String): (Seq[Row], SparkPlan) = stockSpark {
    val df = sql(query)
    val rows = df.collect().toSeq
    assert(rangeJoins(df).isEmpty, "rangejoin planned a join while disabled")
    (rows, df.queryExecution.executedPlan)
  }

  private def stockAnswer(query: String): Seq[Row] = stockRun(query)._1

  /** Runs `query`: exactly one PiecewiseMergeJoin, and stock Spark's answer; also stock's plan. */
  private def plannedWithStockPlan(query: String): (PiecewiseMergeJoinExec, SparkPlan) = {
    val (expected, stockPlan) = stockRun(query)
    val df = sql(query)
    checkAnswer(df, expected)
    val joins = rangeJoins(df)
    assert(joins.size == 1, s"one PiecewiseMergeJoin expected for\n$query\nin\n${df.queryExecution.executedPlan}")
    (joins.head, stockPlan)
  }

  private def planned(query: String): PiecewiseMergeJoinExec = plannedWithStockPlan(query)._1

  /** Runs `query`: left to Spark, which plans `T` for it, and stock Spark's answer. */
  private def declined[T <: SparkPlan : ClassTag](query: String): Unit = {
    val expected = stockAnswer(query)
    val df = sql(query)
    checkAnswer(df, expected)
    val plan = df.queryExecution.executedPlan
    assert(rangeJoins(df).isEmpty, s"rangejoin must leave\n$query\nto Spark, planned\n$plan")
    assert(collect(plan) { case p: T => p }.nonEmpty,
      s"Spark should plan ${implicitly[ClassTag[T]].runtimeClass.getSimpleName} for\n$query\nplanned\n$plan")
  }

  private def names(e: Expression): Set[String] = e.references.map(_.name).toSet

  private def assertKeys(join: PiecewiseMergeJoinExec, left: String, op: RangeOp, right: String): Unit = {
    val Seq(p) = join.range.predicates
    assert(names(p.leftKey) == Set(left) && p.op == op && names(p.rightKey) == Set(right),
      s"expected keys $left $op $right, planned $p")
  }

  // --- Joins rangejoin takes ------------------------------------------------------------------

  private val operators = Seq("<" -> RangeOp.Lt, "<=" -> RangeOp.Le, ">" -> RangeOp.Gt, ">=" -> RangeOp.Ge)

  for ((symbol, op) <- operators) {
    test(s"inner joins on $symbol, written either way round, plan as l.a $op r.b") {
      val flipped = operators.find(_._2 == op.flip).get._1
      assertKeys(planned(s"SELECT l.a, l.c, r.b FROM l JOIN r ON l.a $symbol r.b"), "a", op, "b")
      assertKeys(planned(s"SELECT l.a, l.c, r.b FROM l JOIN r ON r.b $flipped l.a"), "a", op, "b")
    }
  }

  test("the join's own left and right decide the orientation, not the text") {
    assertKeys(planned("SELECT l.a, r.b FROM r JOIN l ON l.a < r.b"), "b", RangeOp.Gt, "a")
  }

  test("keys may be expressions over one side: casts, arithmetic, date and time functions, strings") {
    val joins = Seq(
      "CAST(l.a AS DOUBLE) < r.d" -> ("a", "d"),
      "l.a + 1 <= r.b * 2" -> ("a", "b"),
      "date_add(l.dt, 3) > r.dt" -> ("dt", "dt"),
      "l.ts < r.ts - INTERVAL 1 HOUR" -> ("ts", "ts"),
      "concat(l.s, 'x') >= upper(r.s)" -> ("s", "s")) ++
      OptionWhen(TestFeatureShims.collateKeysPlanned)("l.s COLLATE UNICODE_CI < upper(r.s)" -> ("s", "s"))
    for ((condition, (leftName, rightName)) <- joins) {
      val join = planned(s"SELECT l.a, l.x, r.b, r.c FROM l JOIN r ON $condition")
      val Seq(p) = join.range.predicates
      assert(names(p.leftKey) == Set(leftName) && names(p.rightKey) == Set(rightName), condition)
      assert(join.range.residual.isEmpty, condition)
    }
  }

  test("floating-point NaN, -0.0, infinities and NULL keys answer as in stock Spark, every operator") {
    val specials = "CAST('NaN' AS DOUBLE), -0.0D, 0.0D, CAST('Infinity' AS DOUBLE), CAST('-Infinity' AS DOUBLE), " +
      "4.9E-324D, 1.7976931348623157E308D, 1.5D, CAST(NULL AS DOUBLE)"
    val side = s"SELECT x FROM explode(array($specials)) AS t(x)"
    for ((symbol, op) <- operators) {
      assertKeys(planned(s"SELECT * FROM ($side) p JOIN ($side) q ON p.x $symbol q.x"), "x", op, "x")
    }
  }

  test("the other conjuncts are the residual, in their order; the first range conjunct drives") {
    // Every column, arrays, structs and maps included, travels through the sorted broadcast.
    val withResidual = planned("SELECT * FROM l JOIN r ON l.a < r.b AND (l.c + r.c) % 3 <> 0")
    assertKeys(withResidual, "a", RangeOp.Lt, "b")
    assert(withResidual.range.residual.exists(r => names(r) == Set("c")))
    // A second range conjunct bounding the same direction stays residual.
    val sameWay = planned("SELECT l.d, l.c, r.d, r.c FROM l JOIN r ON l.d >= r.d AND l.c > r.c AND l.x <> r.c")
    assertKeys(sameWay, "d", RangeOp.Ge, "d")
    assert(sameWay.range.residual.exists {
      case And(second: GreaterThan, third: Not) => names(second) == Set("c") && names(third) == Set("x", "c")
      case _ => false
    }, s"residual ${sameWay.range.residual}")
  }

  test("two range conjuncts bounding from opposite directions make a band; the rest is residual") {
    val band = planned("SELECT l.d, l.c, r.d, r.c FROM l JOIN r ON l.d >= r.d AND l.c < r.c AND l.x <> r.c")
    assert(band.range.predicates.map(p => (names(p.leftKey), p.op, names(p.rightKey))) ==
      Seq((Set("d"), RangeOp.Ge, Set("d")), (Set("c"), RangeOp.Lt, Set("c"))), band.range)
    assert(band.range.residual.exists(r => names(r) == Set("x", "c")), band.range)
  }

  test("outer, semi and anti joins, and subqueries that become them") {
    for (joinType <- Seq("LEFT", "RIGHT", "FULL")) {
      planned(s"SELECT l.a, l.c, r.b, r.c FROM l $joinType JOIN r ON l.a < r.b AND (l.c + r.c) % 3 <> 0")
    }
    for (joinType <- Seq("LEFT SEMI", "LEFT ANTI")) {
      planned(s"SELECT l.a, l.c FROM l $joinType JOIN r ON l.a < r.b AND (l.c + r.c) % 3 <> 0")
    }
    planned("SELECT s.v FROM small s WHERE EXISTS (SELECT 1 FROM large g WHERE g.w < s.v * 2)")
    // Null-aware NOT IN: (v = w % 3 OR isnull(v = w % 3)) comes first, the correlated range drives.
    planned("SELECT s.v FROM small s WHERE s.v NOT IN (SELECT g.w % 3 FROM large g WHERE g.w < s.v)")
  }

  // --- Joins left to Spark --------------------------------------------------------------------

  test("equi-joins without a range conjunct are Spark's; with one, a range join per key") {
    declined[BroadcastHashJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.a = r.b")
    declined[BroadcastHashJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.a <=> r.b")
    val keyed = planned("SELECT l.a, r.b FROM l JOIN r ON l.a = r.b AND l.c < r.c")
    assert(keyed.simpleString(10).contains("SortedRun per key"), keyed.simpleString(10))
    assert(keyed.range.leftKeys.flatMap(names) == Seq("a") && keyed.range.rightKeys.flatMap(names) == Seq("b"))
    withSQLConf(RangeJoinConf.EqualityKeys -> "false") {
      declined[BroadcastHashJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.a = r.b AND l.c < r.c")
    }
  }

  test("disjunctions, keys over both sides and single-side predicates are Spark's") {
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.a < r.b OR l.c < r.c")
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.a + r.b < r.c")
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.a - r.c < r.b AND l.c <> r.c")
    // A left-side predicate in a LEFT JOIN's ON clause stays in the condition: a key vs a literal.
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, r.b FROM l LEFT JOIN r ON l.a < 5")
  }

  test("keys of types rangejoin does not sort: arrays and structs") {
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.arr < r.arr")
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, r.b FROM l JOIN r ON l.st < r.st")
  }

  test("with neither side small enough, an inner join is Spark's cartesian product") {
    withSQLConf(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1") {
      declined[CartesianProductExec]("SELECT l.a, r.b FROM l JOIN r ON l.a < r.b")
    }
  }

  // Spark's last resort for every other join type broadcasts a side whatever its size: the right
  // for left outer, semi, anti and existence joins, the left for right outer, the smaller for
  // full outer. rangejoin buffers the same side.
  test("with neither side small enough, other joins buffer the side Spark's last resort broadcasts") {
    withSQLConf(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1") {
      val queries = Seq(
        "SELECT l.a, r.b FROM l LEFT JOIN r ON l.a < r.b",
        "SELECT l.a, r.b FROM l RIGHT JOIN r ON l.a < r.b",
        "SELECT l.a, r.b FROM l FULL JOIN r ON l.a < r.b AND l.a + r.b > 2",
        "SELECT l.a FROM l LEFT SEMI JOIN r ON l.a < r.b AND l.a + r.b > 2",
        "SELECT l.a FROM l LEFT ANTI JOIN r ON l.a < r.b AND l.a + r.b > 2",
        "SELECT l.a FROM l WHERE EXISTS (SELECT 1 FROM r WHERE l.a < r.b AND l.a + r.b > 2) OR l.c = 3",
        // A hint that rules a side out of broadcasting rules it out of buffering.
        "SELECT /*+ NO_BROADCAST_HASH(r) */ l.a, r.b FROM l FULL JOIN r ON l.a < r.b")
      for (query <- queries) {
        val (join, stockPlan) = plannedWithStockPlan(query)
        val Seq(nestedLoop) = collect(stockPlan) { case j: BroadcastNestedLoopJoinExec => j }
        assert(join.buildSide == nestedLoop.buildSide, query)
      }
    }
  }

  // A DataFrame of local rows through an RDD has no size Spark knows: both sides count as too
  // large, and Spark's last resort broadcasts one anyway.
  test("sides of unknown size: the last resort's side, not a nested loop") {
    val rows = (1 to 50).map(i => Row(i.toLong, (i * 7 % 50).toLong))
    val schema = StructType(Seq(StructField("v", LongType), StructField("w", LongType)))
    val a = spark.createDataFrame(spark.sparkContext.parallelize(rows, 3), schema)
    val b = spark.createDataFrame(spark.sparkContext.parallelize(rows.reverse, 2), schema)
    for (how <- Seq("full", "left", "right", "left_semi", "left_anti")) {
      // A DataFrame keeps the plan of its first run: one for each engine.
      def joined = a.join(b, a("v") <= b("w") && a("w") =!= b("v"), how)
      val expected = stockSpark(joined.collect().map(_.toString).sorted.toSeq)
      val df = joined
      assert(df.collect().map(_.toString).sorted.toSeq == expected, how)
      assert(rangeJoins(df).size == 1, s"$how\n${df.queryExecution.executedPlan}")
    }
  }

  test("the SHUFFLE_REPLICATE_NL hint asks for a cartesian product") {
    declined[CartesianProductExec]("SELECT /*+ SHUFFLE_REPLICATE_NL(r) */ l.a, r.b FROM l JOIN r ON l.a < r.b")
  }

  test("spark.rangejoin.enabled=false leaves every join to Spark, and true takes them back") {
    val query = "SELECT l.a, r.b FROM l JOIN r ON l.a < r.b"
    withSQLConf(RangeJoinConf.Enabled -> "false") {
      declined[BroadcastNestedLoopJoinExec](query)
    }
    planned(query)
    withSQLConf(RangeJoinConf.Enabled -> " TRUE ") {
      planned(query)
    }
  }

  test("an invalid spark.rangejoin.enabled fails the query with an error naming the key") {
    withSQLConf(RangeJoinConf.Enabled -> "maybe") {
      val error = intercept[Exception](sql("SELECT * FROM l JOIN r ON l.a < r.b").collect())
      val messages = Iterator.iterate[Throwable](error)(_.getCause).takeWhile(_ != null).map(_.getMessage).toSeq
      assert(messages.exists(m => m.contains(RangeJoinConf.Enabled) && m.contains("maybe")), messages)
    }
  }

  // Conditions the analyzer would not let through, given to the strategy directly.
  private def inequalityJoin: Join =
    sql("SELECT * FROM l JOIN r ON l.a < r.b").queryExecution.optimizedPlan.collectFirst { case j: Join => j }.get

  private def attribute(join: Join, side: Join => Seq[Attribute], name: String): Attribute =
    side(join).find(_.name == name).get

  private def strategyPlans(join: Join, condition: Expression): Boolean =
    RangeJoinStrategy.apply(join.copy(condition = Some(condition))).nonEmpty

  test("the strategy declines non-deterministic conditions and keys") {
    val join = inequalityJoin
    val (a, b) = (attribute(join, _.left.output, "a"), attribute(join, _.right.output, "b"))
    assert(strategyPlans(join, LessThan(a, b)), "control: the deterministic condition is planned")
    assert(!strategyPlans(join, LessThan(a, Add(b, Cast(Rand(Literal(1L)), b.dataType)))))
    assert(!strategyPlans(join, And(LessThan(a, b), LessThan(Rand(Literal(1L)), Literal(0.5)))))
  }

  test("the strategy declines map keys and unevaluable (Python UDF) conditions") {
    val join = inequalityJoin
    val (a, b) = (attribute(join, _.left.output, "a"), attribute(join, _.right.output, "b"))
    val (lm, rm) = (attribute(join, _.left.output, "m"), attribute(join, _.right.output, "m"))
    assert(!strategyPlans(join, LessThan(lm, rm)))
    val pythonUdf = PythonUdfLike(Seq(a, b))
    assert(!strategyPlans(join, And(LessThan(a, b), pythonUdf)))
    assert(!strategyPlans(join, And(pythonUdf, LessThan(a, b))))
  }

  // --- Build side: as JoinSelection picks BroadcastNestedLoopJoin's -----------------------------

  private def assertBuildSide(query: String, expected: BuildSide): Unit = {
    val (join, stockPlan) = plannedWithStockPlan(query)
    val stockSides = collect(stockPlan) { case j: BroadcastNestedLoopJoinExec => j.buildSide }
    assert(stockSides == Seq(expected), s"stock Spark's nested loop join build side for\n$query")
    assert(join.buildSide == expected, s"rangejoin's build side for\n$query")
  }

  test("without hints the smaller side is buffered for inner and full outer joins") {
    assertBuildSide("SELECT * FROM small s JOIN large g ON s.v < g.w", BuildLeft)
    assertBuildSide("SELECT * FROM large g JOIN small s ON g.w > s.v", BuildRight)
    assertBuildSide("SELECT * FROM small s FULL JOIN large g ON s.v < g.w", BuildLeft)
  }

  test("without hints the side that is not preserved is buffered, when both can be") {
    assertBuildSide("SELECT * FROM small s LEFT JOIN large g ON s.v < g.w", BuildRight)
    assertBuildSide("SELECT * FROM large g RIGHT JOIN small s ON g.w > s.v", BuildLeft)
    assertBuildSide("SELECT * FROM small s LEFT SEMI JOIN large g ON s.v < g.w", BuildRight)
    assertBuildSide("SELECT * FROM small s LEFT ANTI JOIN large g ON s.v < g.w", BuildRight)
  }

  test("without hints, where only one side is small enough, that side is buffered") {
    withSQLConf(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "1000") {
      assertBuildSide("SELECT * FROM small s LEFT JOIN large g ON s.v < g.w", BuildLeft)
      assertBuildSide("SELECT * FROM large g LEFT JOIN small s ON g.w > s.v", BuildRight)
      assertBuildSide("SELECT * FROM large g RIGHT JOIN small s ON g.w > s.v", BuildRight)
      assertBuildSide("SELECT * FROM small s LEFT SEMI JOIN large g ON s.v < g.w AND s.v <> g.w - 3", BuildLeft)
      // With no residual, the existence fast path reduces the right side to its extreme row.
      val (fast, _) = plannedWithStockPlan("SELECT * FROM small s LEFT SEMI JOIN large g ON s.v < g.w")
      assert(fast.buildSide == BuildRight && fast.bufferedExtreme.isDefined, fast)
    }
  }

  test("a BROADCAST hint on either side decides the build side") {
    assertBuildSide("SELECT /*+ BROADCAST(g) */ * FROM large g JOIN small s ON g.w > s.v", BuildLeft)
    assertBuildSide("SELECT /*+ BROADCAST(g) */ * FROM small s JOIN large g ON s.v < g.w", BuildRight)
    assertBuildSide("SELECT /*+ BROADCAST(s) */ * FROM small s LEFT JOIN large g ON s.v < g.w", BuildLeft)
    assertBuildSide("SELECT /*+ BROADCAST(g, s) */ * FROM large g JOIN small s ON g.w > s.v", BuildRight)
  }

  // --- Range conjuncts after the first: only with keys that cannot fail -------------------------

  test("a later range conjunct whose key can fail does not drive: the guard before it must run first") {
    // Guarded: x = 0 never reaches the division in Spark, and must not in rangejoin.
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, l.x, r.b FROM l LEFT JOIN r ON l.x <> 0 AND 100 / l.x < r.b")
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, l.x, r.b FROM l JOIN r ON l.c <> r.c AND CAST(l.s AS INT) < r.b")
    // ANSI bigint addition can overflow.
    declined[BroadcastNestedLoopJoinExec]("SELECT l.a, l.x, r.b FROM l JOIN r ON l.c <> r.c AND l.a + 1 < r.b")
  }

  test("a later range conjunct drives with keys that cannot fail") {
    val guarded = planned("SELECT l.a, l.x, r.b FROM l LEFT JOIN r ON l.x <> 0 AND l.a < r.b")
    assertKeys(guarded, "a", RangeOp.Lt, "b")
    assert(guarded.range.residual.exists(r => names(r) == Set("x")))
    assertKeys(planned("SELECT l.a, l.x, r.b FROM l JOIN r ON l.c <> r.c AND CAST(l.a AS DOUBLE) < r.d"), "a", RangeOp.Lt, "d")
    assertKeys(planned("SELECT l.a, l.x, r.b FROM l JOIN r ON l.c <> r.c AND l.d + 1 < r.d"), "d", RangeOp.Lt, "d")
    withSQLConf(SQLConf.ANSI_ENABLED.key -> "false") {
      assertKeys(planned("SELECT l.a, l.x, r.b FROM l JOIN r ON l.c <> r.c AND l.a + 1 < r.b"), "a", RangeOp.Lt, "b")
    }
  }

  test("a first range conjunct drives whatever its keys, as Spark evaluates it on every pair") {
    val query = "SELECT l.a, l.x, r.b FROM l LEFT JOIN r ON 100 / l.x < r.b AND l.x <> r.c"
    assertKeys(planned(query.replace("FROM l", "FROM (SELECT * FROM l WHERE x <> 0) l")), "x", RangeOp.Lt, "b")
    // With a zero x both raise the division by zero.
    val stockError = stockSpark(intercept[Exception](sql(query).collect()))
    val error = intercept[Exception](sql(query).collect())
    assert(error.getMessage.contains("DIVIDE_BY_ZERO") && stockError.getMessage.contains("DIVIDE_BY_ZERO"),
      s"${error.getMessage}\nvs stock\n${stockError.getMessage}")
  }

  test("a guard written after the range conjunct: Spark moves it first, and the answer is Spark's") {
    // PushPredicateThroughJoin puts a LEFT JOIN's left-only conjuncts first, so the division is
    // guarded for Spark; rangejoin must not evaluate it on x = 0 either.
    val query = "SELECT l.a, l.x, r.b FROM l LEFT JOIN r ON 100 / l.x < r.b AND l.x <> 0"
    checkAnswer(sql(query), stockAnswer(query))
  }

  test("a band's second bound may have a buffered key that can fail, but not a streamed one") {
    // ANSI bigint addition can overflow. Buffering r, `r.b + 500` is evaluated once per row as
    // the broadcast is built; streaming r, it would be evaluated on rows Spark never pairs.
    val query = "SELECT /*+ BROADCAST(%s) */ l.a, r.b FROM l JOIN r ON l.a >= r.b AND l.a < r.b + 500"
    val band = planned(query.format("r"))
    assert(band.range.isBand && band.simpleString(10).contains("IntervalIndex"), band.simpleString(10))
    val single = planned(query.format("l"))
    assert(!single.range.isBand && single.range.residual.exists(r => names(r) == Set("a", "b")), single.range)
    // A conjunct between the bounds that can fail keeps the second bound residual.
    val guarded = planned(
      "SELECT /*+ BROADCAST(r) */ l.a, r.b FROM l JOIN r ON l.a >= r.b AND (l.a - r.b) % 7 <> 3 AND l.a < r.b + 500")
    assert(!guarded.range.isBand, guarded.range)

    // Where `r.b + 500` overflows on a row Spark never evaluates it for, both answer; where Spark
    // does evaluate it, both raise the overflow.
    val big = "9223372036854775800"
    def overflowing(aValues: String) =
      s"""SELECT /*+ BROADCAST(rr) */ ll.a, rr.b
         |FROM VALUES $aValues AS ll(a) JOIN VALUES (0L), (4L), (${big}L), (NULL) AS rr(b)
         |ON ll.a >= rr.b AND ll.a < rr.b + 500""".stripMargin
    val answered = planned(overflowing("(1L), (5L), (CAST(NULL AS BIGINT))"))
    assert(answered.range.isBand, answered.range)
    val query2 = overflowing("(1L), (9223372036854775807L)")
    val stockError = stockSpark(intercept[Exception](sql(query2).collect()))
    val error = intercept[Exception](sql(query2).collect())
    assert(error.getMessage.contains("ARITHMETIC_OVERFLOW") && stockError.getMessage.contains("ARITHMETIC_OVERFLOW"),
      s"${error.getMessage}\nvs stock\n${stockError.getMessage}")
  }

  // --- EXPLAIN --------------------------------------------------------------------------------

  test("EXPLAIN shows the operator, the index, both keys of each bound, the build side and the residual") {
    def explained(query: String) = {
      planned(query)
      sql(s"EXPLAIN $query").head().getString(0)
    }
    val single = explained("SELECT l.a, r.b FROM l JOIN r ON l.a <= r.b AND l.c <> r.c")
    val line = """PiecewiseMergeJoin Inner, Build(Left|Right), SortedRun \(a#\d+L <= b#\d+L\), residual: NOT \(c#\d+L = c#\d+L\)"""
    assert(line.r.findFirstIn(single).isDefined, single)
    // Buffering r, the band bounds two of its keys (an interval index); buffering l, one.
    val band = explained("SELECT /*+ BROADCAST(r) */ l.a, r.b FROM l JOIN r ON l.a >= r.b AND l.a < r.c")
    val bandLine = """PiecewiseMergeJoin Inner, BuildRight, IntervalIndex \(a#\d+L >= b#\d+L AND a#\d+L < c#\d+L\)"""
    assert(bandLine.r.findFirstIn(band).isDefined, band)
    assert("SortedBroadcast .*, tree: ".r.findFirstIn(band).isDefined, band)
    val run = explained("SELECT /*+ BROADCAST(l) */ l.a, r.b FROM l JOIN r ON l.a >= r.b AND l.a < r.c")
    assert("""PiecewiseMergeJoin Inner, BuildLeft, BandRun """.r.findFirstIn(run).isDefined, run)
  }
}

/** Stands for a Python UDF: deterministic, boolean, and evaluable only by a Python worker. */
private case class PythonUdfLike(children: Seq[Expression]) extends Expression with Unevaluable {
  override def nullable: Boolean = true
  override def dataType: DataType = BooleanType
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Expression =
    copy(children = newChildren)
}
