package rangejoin.differential

import java.sql.{Date, Timestamp}
import java.time.LocalDate

import scala.jdk.CollectionConverters._
import scala.util.{Failure, Random, Success, Try}

import org.apache.spark.{SparkEnv, SparkFunSuite}
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.{InputAdapter, LocalTableScanExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.functions.expr
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.rangejoin.AsOfJoins
import org.apache.spark.sql.types._

import rangejoin.{OptionWhen, RangeJoinConf, TestAsOfShims, TestShims}
import rangejoin.execution.{PiecewiseMergeAsOfJoinExec, PiecewiseMergeAsOfJoinLike, ShuffledPiecewiseMergeAsOfJoinExec,
  TimeRangedPiecewiseMergeAsOfJoinExec}

/**
 * One pair of tables of the as-of family: left (id, k, t), right (rid, rk, rt, v), `t` and `rt`
 * of `timeType`. `uniqueRight`: no two right rows share (rk, rt), so the right row a match picks
 * is determined (Spark picks among equal times nondeterministically: docs/semantics.md).
 */
final case class AsOfData(name: String, timeType: DataType, keyType: DataType, left: Seq[Row], right: Seq[Row],
    uniqueRight: Boolean, tolerance: String) {
  /** No two right rows share a time, keys aside: the unkeyed match is determined too. */
  val uniqueTimes: Boolean = {
    val times = right.map(_.get(2)).filter(_ != null)
    times.distinct.size == times.size
  }

  override def toString: String = name

  def shown: String = s"left ${left.mkString(" ")}; right ${right.mkString(" ")}"
}

/**
 * One as-of join of the family, on the DataFrame path (`_joinAsOf`, which pandas-on-Spark's
 * `merge_asof` calls) or SQL's `ASOF JOIN`, and whether rangejoin must plan it.
 */
final case class AsOfCase(sqlPath: Boolean, data: AsOfData, direction: String, exact: Boolean, inner: Boolean,
    tolerance: Boolean, keyed: Boolean, flipped: Boolean, ansi: Boolean, expectOurs: Boolean,
    filtered: Boolean = false) {

  private def how = if (inner) "inner" else "left"

  /** The SQL path's match condition. */
  private def matchCondition: String = {
    val op = (direction, exact) match {
      case ("backward", true) => ">="
      case ("backward", false) => ">"
      case (_, true) => "<="
      case (_, false) => "<"
    }
    if (!flipped) s"l.t $op r.rt"
    else s"r.rt ${op.replace('>', '!').replace('<', '>').replace('!', '<')} l.t"
  }

  def sql: String = s"SELECT * FROM asof_l l ${if (inner) "" else "LEFT "}ASOF JOIN asof_r r " +
    s"MATCH_CONDITION ($matchCondition)${if (keyed) " ON l.k = r.rk" else ""}"

  override def toString: String =
    if (sqlPath) s"sql ${data.name}: $sql (ansi $ansi)"
    else s"dataframe ${data.name}: $direction exact=$exact $how tolerance=${if (tolerance) data.tolerance else "none"} " +
      s"keyed=$keyed${if (filtered) " filtered" else ""} (ansi $ansi)"

  def build(spark: SparkSession): DataFrame = {
    val l = spark.createDataFrame(data.left.asJava, AsOfDifferentialSuite.leftSchema(data))
    val r = spark.createDataFrame(data.right.asJava, AsOfDifferentialSuite.rightSchema(data))
    if (sqlPath) {
      l.createOrReplaceTempView("asof_l")
      r.createOrReplaceTempView("asof_r")
      spark.sql(sql)
    } else {
      val tol: Column = if (tolerance) expr(data.tolerance) else null
      val joined =
        AsOfJoins.joinAsOf(l, r, l("t"), r("rt"), OptionWhen(keyed)(l("k") === r("rk")), how, tol, exact, direction)
      // A filter on left columns (pushed below the join) and one on both sides (kept above; not
      // on the right row's own columns, which Spark picks arbitrarily among equal times).
      if (filtered) joined.where("id % 3 <> 0 AND (rid IS NULL OR id % 2 = 0)") else joined
    }
  }

  /**
   * A row as compared: the left row, and the match's key and time (backward, forward) or
   * distance (nearest: two times may be as near), and the right row itself where it is determined.
   */
  def render(row: Row): String = {
    val left = Seq(row.get(0), row.get(1), row.get(2)).mkString("[", ", ", "]")
    // Without keys, rows of one time may differ in key: the key is not determined either.
    val key = if (keyed) s"${row.get(4)}, " else ""
    val determined = if (keyed) data.uniqueRight else data.uniqueTimes
    if (row.isNullAt(3)) s"$left no match"
    else if (direction == "nearest") s"$left ${key}at ${AsOfDifferentialSuite.distance(row.get(2), row.get(5))}"
    else s"$left $key${row.get(5)}" + (if (determined) s" ${row.get(3)} ${row.get(6)}" else "")
  }
}

object AsOfDifferentialSuite {

  // A column is nullable only where the data has a NULL: a left outer join must pad non-nullable
  // right columns with NULLs all the same.
  private def schema(rows: Seq[Row], fields: (String, DataType)*): StructType = StructType(fields.zipWithIndex.map {
    case ((name, t), i) => StructField(name, t, nullable = rows.exists(_.isNullAt(i)))
  })

  def leftSchema(d: AsOfData): StructType = schema(d.left, "id" -> IntegerType, "k" -> d.keyType, "t" -> d.timeType)

  def rightSchema(d: AsOfData): StructType =
    schema(d.right, "rid" -> IntegerType, "rk" -> d.keyType, "rt" -> d.timeType, "v" -> StringType)

  /** Every error condition in an exception's causes and suppressed exceptions. */
  def conditions(e: Throwable): Seq[String] = {
    val seen = scala.collection.mutable.LinkedHashSet.empty[String]
    def walk(t: Throwable, depth: Int): Unit = if (t != null && depth < 20) {
      t match {
        case s: org.apache.spark.SparkThrowable if TestShims.condition(s) != null => seen += TestShims.condition(s)
        case _ =>
      }
      if (t.getCause == null) seen += t.getClass.getName
      walk(t.getCause, depth + 1)
      t.getSuppressed.foreach(walk(_, depth + 1))
    }
    walk(e, 0)
    seen.toSeq
  }

  /** The exact distance of two times, whatever their type. */
  def distance(a: Any, b: Any): String = (a, b) match {
    case (x: Double, y: Double) => math.abs(x - y).toString
    case _ => (number(a) - number(b)).abs.toString
  }

  private def number(v: Any): BigDecimal = v match {
    case i: Int => BigDecimal(i)
    case l: Long => BigDecimal(l)
    case d: java.math.BigDecimal => BigDecimal(d)
    case d: Date => BigDecimal(d.toLocalDate.toEpochDay)
    case t: Timestamp => BigDecimal(t.getTime) * 1000 + (t.getNanos / 1000) % 1000
    case other => throw new IllegalArgumentException(s"no distance for $other")
  }

  /** A small time of each type from an int, and the tolerance of two steps in that type. */
  private val types: Seq[(DataType, Int => Any, String)] = Seq(
    (IntegerType, (v: Int) => v, "2"),
    (LongType, (v: Int) => v.toLong + 10000000000L, "2"),
    (DecimalType(10, 2), (v: Int) => new java.math.BigDecimal(v).divide(new java.math.BigDecimal(4)).setScale(2),
      "CAST(0.50 AS DECIMAL(3, 2))"),
    (DateType, (v: Int) => Date.valueOf(LocalDate.ofEpochDay(18000L + v)), "2"),
    (TimestampType, (v: Int) => new Timestamp((1600000000L + v) * 1000), "INTERVAL 2 SECONDS"))

  private val keys = Seq("a", "b", null)

  /** Generated pairs of tables: each time type, with unique or tied right times, NULLs, empty sides. */
  def generated: Seq[AsOfData] = types.zipWithIndex.flatMap { case ((t, of, tol), ti) =>
    def time(v: Option[Int]): Any = v.map(of).orNull
    def rows(seed: Int, n: Int, nulls: Double, right: Boolean, unique: Boolean): Seq[Row] = {
      val random = new Random(seed)
      def maybe[A](a: A): Option[A] = if (random.nextDouble() < nulls) None else Some(a)
      val raw = (0 until n).map(_ => (maybe(keys(random.nextInt(2))).orNull, maybe(random.nextInt(12))))
      val distinct = if (unique) raw.distinct else raw
      distinct.zipWithIndex.map { case ((k, v), i) =>
        if (right) Row(100 + i, k, time(v), s"v$i") else Row(i, k, time(v))
      }
    }
    def data(shape: String, seed: Int, leftN: Int, rightN: Int, nulls: Double, unique: Boolean) =
      AsOfData(s"$t $shape", t, StringType, rows(seed, leftN, nulls, right = false, unique = false),
        rows(seed + 1, rightN, nulls, right = true, unique), unique, tol)
    Seq(
      data("unique", 10 * ti, 14, 12, 0.1, unique = true),
      data("ties", 10 * ti + 2, 14, 16, 0.1, unique = false),
      data("nulls", 10 * ti + 4, 12, 12, 0.4, unique = true),
      data("empty right", 10 * ti + 6, 8, 0, 0.1, unique = true),
      data("empty left", 10 * ti + 8, 0, 8, 0.1, unique = true))
  }

  /**
   * Tolerance at its edge (right times exactly two steps away either way, and equal), and an
   * int tolerance of 0.
   */
  val edge: AsOfData = AsOfData("int tolerance edge", IntegerType, StringType,
    Seq(Row(0, "a", 5), Row(1, "a", 9), Row(2, "b", 4)),
    Seq(Row(100, "a", 3, "x"), Row(101, "a", 7, "y"), Row(102, "a", 5, "z"), Row(103, "a", 11, "w"),
      Row(104, "b", 2, "u"), Row(105, "b", 6, "s")), uniqueRight = true, "2")

  val zeroTolerance: AsOfData = edge.copy(name = "int tolerance 0", tolerance = "0")

  /** Distances past an int: wrapped without ANSI, ARITHMETIC_OVERFLOW with it, in Spark as here. */
  val overflow: AsOfData = AsOfData("int overflow", IntegerType, StringType,
    Seq(Row(0, "a", Int.MaxValue), Row(1, "a", Int.MinValue), Row(2, "a", 0), Row(3, "a", null)),
    Seq(Row(100, "a", Int.MinValue, "min"), Row(101, "a", -5, "m5"), Row(102, "a", 7, "p7"),
      Row(103, "a", Int.MaxValue, "max")), uniqueRight = true, "2")

  /** NaN and -0.0 times, and keys: left to Spark (docs/semantics.md). */
  val floating: AsOfData = AsOfData("double NaN and -0.0", DoubleType, DoubleType,
    Seq(Row(0, 0.0, Double.NaN), Row(1, -0.0, -0.0), Row(2, Double.NaN, 0.0), Row(3, 0.0, 1.5), Row(4, 0.0, null)),
    Seq(Row(100, -0.0, 0.0, "z"), Row(101, 0.0, Double.NaN, "n"), Row(102, Double.NaN, 2.0, "t"),
      Row(103, 0.0, -1.0, "m")), uniqueRight = true, "CAST(1 AS DOUBLE)")

  /**
   * Enough rows over a wide span of int times (a few ties, NULLs) that a join with no keys split
   * into ranges of time has several, each needing rows carried in from the others.
   */
  val spread: AsOfData = {
    val random = new Random(42)
    def time(): Any = if (random.nextDouble() < 0.05) null else random.nextInt(20000)
    AsOfData("int spread", IntegerType, StringType,
      (0 until 2000).map(i => Row(i, "a", time())), (0 until 300).map(i => Row(100 + i, "a", time(), s"v$i")),
      uniqueRight = false, "40")
  }

  /** Cases of [[spread]] without keys: every direction and both paths. */
  def spreadCases: Seq[AsOfCase] =
    dataFrameCases(spread, expectOurs = true, keyedToo = false).filter(c => c.exact != c.inner) ++
      sqlCases(spread, expectOurs = true).filter(c => !c.keyed && !c.flipped && c.exact != c.inner)

  private val directions = Seq("backward", "forward", "nearest")

  private def dataFrameCases(d: AsOfData, expectOurs: Boolean, keyedToo: Boolean = true): Seq[AsOfCase] = for {
    keyed <- if (keyedToo) Seq(true, false) else Seq(false)
    direction <- directions
    exact <- Seq(true, false)
    inner <- Seq(true, false)
    tolerance <- Seq(false, true)
  } yield AsOfCase(sqlPath = false, d, direction, exact, inner, tolerance, keyed, flipped = false, ansi = true, expectOurs)

  /** SQL's ASOF JOIN: Spark 4.3 on (no cases on older lines, which have only the DataFrame path). */
  private def sqlCases(d: AsOfData, expectOurs: Boolean): Seq[AsOfCase] = if (!TestAsOfShims.sqlAsOf) Nil else for {
    keyed <- Seq(true, false)
    direction <- Seq("backward", "forward")
    exact <- Seq(true, false)
    inner <- Seq(true, false)
    flipped <- Seq(false, true)
  } yield AsOfCase(sqlPath = true, d, direction, exact, inner, tolerance = false, keyed, flipped, ansi = true, expectOurs)

  /**
   * A case with no side small enough to broadcast: rangejoin buffers the right side per shuffle
   * partition, by the keys or, with none, by ranges of time: as many as there are shuffle
   * partitions, however small the sides (an advisory partition size of a few bytes).
   */
  def shuffled(c: AsOfCase): (AsOfCase, Seq[(String, String)]) =
    (c, Seq(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1",
      SQLConf.ADVISORY_PARTITION_SIZE_IN_BYTES.key -> "16"))

  /**
   * Whole-stage code generation off for every third case (both engines): the others run the
   * join in generated code where its placement has it ([[AsOfDifferential]] checks).
   */
  def interpretedEveryThird(cases: Seq[(AsOfCase, Seq[(String, String)])]): Seq[(AsOfCase, Seq[(String, String)])] =
    cases.zipWithIndex.map { case ((c, settings), i) =>
      (c, if (i % 3 == 2) settings :+ (SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false") else settings)
    }

  /** ANSI on for every other case. */
  def alternated(cases: Seq[AsOfCase]): Seq[AsOfCase] =
    cases.zipWithIndex.map { case (c, i) => c.copy(ansi = i % 2 == 0) }

  private def sampled(cases: Seq[AsOfCase], n: Int, seed: Int): Seq[AsOfCase] = new Random(seed).shuffle(cases).take(n)

  /** The family: a seeded sample of the generated cases, and every case of the special tables. */
  val cases: Seq[AsOfCase] = (
    sampled(generated.flatMap(dataFrameCases(_, expectOurs = true)), 240, 26).zipWithIndex
      .map { case (c, i) => c.copy(filtered = i % 3 == 1) } ++
      sampled(generated.flatMap(sqlCases(_, expectOurs = true)), 120, 27) ++
      dataFrameCases(edge, expectOurs = true) ++ dataFrameCases(zeroTolerance, expectOurs = true) ++
      sqlCases(edge, expectOurs = true) ++
      dataFrameCases(overflow, expectOurs = true, keyedToo = false) ++
      sqlCases(overflow, expectOurs = true).filter(!_.keyed) ++
      dataFrameCases(floating, expectOurs = false).filter(c => !c.tolerance) ++
      sqlCases(floating, expectOurs = false).take(4))
}

/**
 * As-of joins against stock Spark (rangejoin off), on the DataFrame path and SQL's ASOF JOIN:
 * every time type rangejoin takes, NULL times and keys, ties, nearest at equal distance,
 * tolerance at its edge, empty sides, overflow, ANSI on and off, every direction with and
 * without exact matches, inner and left, with and without keys; NaN and -0.0 left to Spark. Each
 * case must give stock Spark's rows (as [[AsOfCase.render]] compares them) or raise its error,
 * and be planned as `PiecewiseMergeAsOfJoin` exactly when expected. The fast tier runs a slice.
 */
class AsOfDifferentialSuite extends AsOfDifferential with LocalDifferentialSession {
  override protected def summary: String = counts

  override protected def cases: Seq[(AsOfCase, Seq[(String, String)])] = AsOfDifferentialSuite.interpretedEveryThird(
    AsOfDifferentialSuite.alternated(
      Tier.sample(AsOfDifferentialSuite.cases, 24, full = Tier.tenth(AsOfDifferentialSuite.cases.size) / 2))
      .map((_, Nil)))

  test("a left column that raises raises for a row the join drops, generated or not, as Spark's SQL ASOF JOIN does") {
    // Left row 0's column divides by zero (ANSI) and the row has no match. rangejoin computes
    // every left row before its join, as stock Spark's SQL ASOF JOIN and the DataFrame left join
    // do; stock's DataFrame inner join drops unmatched left rows first (its rewrite joins the left
    // rows with the matched times below the left side's projections), so it answers where
    // rangejoin raises: docs/semantics.md.
    val paths = Seq("dataframe left", "dataframe inner") ++ (if (TestAsOfShims.sqlAsOf) Seq("sql inner") else Nil)
    for (path <- paths; generated <- Seq(true, false)) {
      def outcome(enabled: Boolean): (Try[Seq[Row]], Boolean) = Differential.withConf(spark, Seq(
          RangeJoinConf.Enabled -> enabled.toString, SQLConf.ANSI_ENABLED.key -> "true",
          SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> generated.toString,
          // The plan as planned, to see where the join runs.
          SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false",
          "spark.sql.analyzer.singlePassResolver.dualRunWithLegacy" -> "false",
          "spark.sql.join.asofJoin.enabled" -> "true")) {
        val l = spark.range(2).selectExpr("id", "CASE id WHEN 0 THEN 3L ELSE 10L END AS ts")
          .selectExpr("id", "ts", "10 DIV (ts - 3) AS bad")
        val r = spark.range(1).selectExpr("id + 4L AS rts", "7 AS v")
        val df = if (path.startsWith("sql")) {
          l.createOrReplaceTempView("raising_l")
          r.createOrReplaceTempView("raising_r")
          spark.sql("SELECT l.id, l.bad, r.v FROM raising_l l ASOF JOIN raising_r r MATCH_CONDITION (l.ts >= r.rts)")
        } else {
          AsOfJoins.joinAsOf(l, r, l("ts"), r("rts"), None, path.split(" ")(1), null, true, "backward")
            .select("id", "bad", "v")
        }
        val plan = df.queryExecution.executedPlan
        val fused = plan.collectFirst {
          case s: WholeStageCodegenExec if s.child.exists(_.isInstanceOf[PiecewiseMergeAsOfJoinLike]) => s
        }.nonEmpty
        (Try(df.collect().toSeq), plan.exists(_.isInstanceOf[PiecewiseMergeAsOfJoinLike]) && fused == generated)
      }
      val (stock, stockPlanned) = outcome(enabled = false)
      val (ours, planned) = outcome(enabled = true)
      assert(!stockPlanned && planned, s"$path generated=$generated: expected PiecewiseMergeAsOfJoin${if (generated) " in generated code" else ""}")
      def raised(result: Try[Seq[Row]]) =
        result.failed.toOption.exists(e => AsOfDifferentialSuite.conditions(e).contains("DIVIDE_BY_ZERO"))
      assert(raised(ours), s"$path generated=$generated: rangejoin gave $ours")
      if (path == "dataframe inner") assert(stock == Success(Seq(Row(1L, 1L, 7))), s"$path: stock gave $stock")
      else assert(raised(stock), s"$path generated=$generated: stock gave $stock")
    }
  }
}

/**
 * The cases with no side small enough to broadcast: rangejoin buffers the right side per shuffle
 * partition, by the keys (ShuffledPiecewiseMergeAsOfJoin) or, with none, by ranges of time
 * (TimeRangedPiecewiseMergeAsOfJoin).
 */
class ShuffledAsOfDifferentialSuite extends AsOfDifferential with LocalDifferentialSession {
  override protected def summary: String = counts

  override protected def cases: Seq[(AsOfCase, Seq[(String, String)])] = {
    val (keyed, unkeyed) = AsOfDifferentialSuite.cases.partition(_.keyed)
    AsOfDifferentialSuite.interpretedEveryThird(
      AsOfDifferentialSuite.alternated(Tier.sample(keyed, 6, full = 10) ++ Tier.sample(unkeyed, 6, full = 10))
        .map(AsOfDifferentialSuite.shuffled)) ++
      // Distances past an int across the span: one range, as Spark's operator would run it.
      AsOfDifferentialSuite.alternated(Tier.sample(unkeyed.filter(_.data == AsOfDifferentialSuite.overflow), 4, full = 6))
        .map(AsOfDifferentialSuite.shuffled) ++
      Tier.sample(AsOfDifferentialSuite.spreadCases, 3, full = 4).map(AsOfDifferentialSuite.shuffled).map { case (c, s) =>
        (c, s :+ (SQLConf.SHUFFLE_PARTITIONS.key -> "16"))
      }
  }

  test("without keys, a non-deterministic side is left to Spark: the sample's job would evaluate it apart from the join") {
    Differential.withConf(spark, AsOfDifferentialSuite.shuffled(AsOfDifferentialSuite.spreadCases.head)._2 ++ Seq(
        "spark.sql.analyzer.singlePassResolver.dualRunWithLegacy" -> "false", "spark.sql.join.asofJoin.enabled" -> "true")) {
      // The DataFrame path, which every Spark line has.
      def plan(l: DataFrame, r: DataFrame) =
        AsOfJoins.joinAsOf(l, r, l("t"), r("rt"), None, "left", null, true, "backward").queryExecution.sparkPlan
      val l = spark.range(100).selectExpr("id", "id * 10 AS t")
      val r = spark.range(100).selectExpr("id AS rid", "id * 10 + 5 AS rt")
      assert(plan(l, r).exists(_.isInstanceOf[TimeRangedPiecewiseMergeAsOfJoinExec]), plan(l, r))
      for ((side, random) <- Seq("right" -> plan(l, r.where("rand(7) < 0.5")), "left" -> plan(l.where("rand(7) < 0.5"), r)))
        assert(!random.exists(_.isInstanceOf[PiecewiseMergeAsOfJoinLike]), s"$side:\n$random")
    }
  }

  test("without keys, rows go to the shuffle uncopied under Spark's sort shuffle, copied under any other") {
    import TimeRangedPiecewiseMergeAsOfJoinExec.copiesForShuffle
    assert(!copiesForShuffle(16) && copiesForShuffle((1 << 24) + 1))
    // The configuration names another manager; the running one is still Spark's, so the copies
    // are checked against stock's answer.
    val conf = SparkEnv.get.conf
    val before = conf.getOption("spark.shuffle.manager")
    conf.set("spark.shuffle.manager", "org.example.HoldingShuffleManager")
    try {
      assert(copiesForShuffle(16))
      val (c, settings) = AsOfDifferentialSuite.shuffled(AsOfDifferentialSuite.spreadCases.head)
      check(c, settings :+ (SQLConf.SHUFFLE_PARTITIONS.key -> "16"))
    } finally before.fold(conf.remove("spark.shuffle.manager"))(conf.set("spark.shuffle.manager", _))
  }

  test("without keys: many ranges of time, each searching its right rows and the ones carried in") {
    val c = AsOfDifferentialSuite.spreadCases.find(c => c.sqlPath && c.direction == "backward").getOrElse(
      AsOfDifferentialSuite.spreadCases.head)
    val (_, settings) = AsOfDifferentialSuite.shuffled(c)
    Differential.withConf(spark, settings ++ Seq(SQLConf.SHUFFLE_PARTITIONS.key -> "16",
        "spark.sql.analyzer.singlePassResolver.dualRunWithLegacy" -> "false",
        "spark.sql.join.asofJoin.enabled" -> "true")) {
      val df = c.build(spark)
      df.collect()
      val Seq(join) = collect(df.queryExecution.executedPlan) { case j: TimeRangedPiecewiseMergeAsOfJoinExec => j }
      val rightTimes = c.data.right.count(!_.isNullAt(2))
      val ranges = join.metrics("numRanges").value
      assert(ranges > 8, join.metrics("numRanges"))
      // Each range's own right rows, and from each of the right side's map tasks its latest row
      // of the ranges before it: into every range but the first, from at least one task.
      val carried = join.metrics("carriedRows").value
      val mapTasks = join.right.execute().getNumPartitions
      assert(carried >= ranges - 1 && carried <= (ranges - 1) * mapTasks, s"$carried carried, $mapTasks map tasks")
      assert(join.metrics("bufferedRows").value == rightTimes + carried)
      // SQL's backward pick samples the right side's times alone: the left side is read once,
      // by its shuffle; a pick that reads distances samples it too.
      val Seq(leftScan) = collect(join.left) { case s: LocalTableScanExec => s }
      val reads = if (c.sqlPath && c.direction == "backward") 1 else 2
      assert(leftScan.metrics("numOutputRows").value == reads * c.data.left.size, s"$c: the left side read ${leftScan.metrics("numOutputRows")}")
    }
  }
}

/**
 * As-of joins across executor JVMs (`local-cluster`), adaptive execution on and off: the sorted
 * broadcast and the per-partition buffer, each task's search, really serialized.
 */
class AsOfDistributedSuite extends AsOfDifferential with ClusterDifferentialSession {
  override protected def summary: Option[String] = Some(counts)

  override protected def cases: Seq[(AsOfCase, Seq[(String, String)])] =
    AsOfDifferentialSuite.alternated(Tier.sample(AsOfDifferentialSuite.cases.filter(_.expectOurs), 4, full = 4))
      .zipWithIndex.map { case (c, i) =>
        val (expected, settings) = if (i % 2 == 0) (c, Nil) else AsOfDifferentialSuite.shuffled(c)
        (expected, settings :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> (i % 4 < 2).toString))
      }
}

/**
 * The differential run of as-of cases; a suite says which cases, each with settings of its own
 * (both engines).
 */
abstract class AsOfDifferential extends SparkFunSuite with AdaptiveSparkPlanHelper with SharedAcrossSmokeLines {

  protected def spark: SparkSession

  protected def cases: Seq[(AsOfCase, Seq[(String, String)])]

  private var ran = 0
  private var planned = 0
  private var raised = 0

  protected def counts: String =
    s"${getClass.getSimpleName}: $ran cases, $planned planned PiecewiseMergeAsOfJoin, $raised raised the same error in both"

  private def run(c: AsOfCase, settings: Seq[(String, String)], enabled: Boolean): (Outcome, Boolean) =
    Differential.withConf(spark, Seq(
      RangeJoinConf.Enabled -> enabled.toString,
      SQLConf.ANSI_ENABLED.key -> c.ansi.toString,
      SQLConf.SHUFFLE_PARTITIONS.key -> "4",
      // Spark's tests run its single-pass analyzer beside the fixed-point one and fail on any
      // difference; the single-pass one runs no extension's resolution rules.
      "spark.sql.analyzer.singlePassResolver.dualRunWithLegacy" -> "false",
      "spark.sql.join.asofJoin.enabled" -> "true") ++ settings) {
    val df = c.build(spark)
    val ours = df.queryExecution.sparkPlan.collectFirst { case j: PiecewiseMergeAsOfJoinLike => j }
    // With no side to broadcast, the right side is buffered per shuffle partition: by the keys,
    // or by ranges of time.
    val expected: PiecewiseMergeAsOfJoinLike => Boolean =
      if (!settings.contains(RangeJoinConf.BroadcastThreshold -> "-1")) _.isInstanceOf[PiecewiseMergeAsOfJoinExec]
      else if (c.keyed) _.isInstanceOf[ShuffledPiecewiseMergeAsOfJoinExec]
      else _.isInstanceOf[TimeRangedPiecewiseMergeAsOfJoinExec]
    assert(ours.forall(expected), s"planned elsewhere than expected:\n${df.queryExecution.sparkPlan}")
    val outcome = Try(df.collect().toSeq) match {
      case Success(rows) =>
        assertGenerated(df, ours, settings)
        Rows(rows.map(c.render).sorted)
      case Failure(e) => Raised(AsOfDifferentialSuite.conditions(e).mkString(" "), e.getMessage)
    }
    (outcome, ours.nonEmpty)
  }

  /**
   * With whole-stage codegen on, every placement runs in its stage's generated code
   * (`*(n) ...PiecewiseMergeAsOfJoin`).
   */
  private def assertGenerated(df: DataFrame, ours: Option[PiecewiseMergeAsOfJoinLike], settings: Seq[(String, String)]): Unit = {
    def fused(plan: SparkPlan): Boolean = plan match {
      case _: PiecewiseMergeAsOfJoinLike => true
      case _: InputAdapter => false
      case other => other.children.exists(fused)
    }
    val generated = collect(df.queryExecution.executedPlan) { case s: WholeStageCodegenExec if fused(s.child) => s }
    val expected = ours.nonEmpty && !settings.contains(SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false")
    assert(generated.nonEmpty == expected,
      s"expected the join ${if (expected) "in" else "outside"} generated code:\n${df.queryExecution.executedPlan}")
  }

  cases.zipWithIndex.foreach { case ((c, settings), i) =>
    test(s"$i: $c")(check(c, settings))
  }

  /** Runs `c` under `settings` with rangejoin off and on, and asserts the same answer or error. */
  protected def check(c: AsOfCase, settings: Seq[(String, String)]): Unit = {
    val (stock, stockOurs) = run(c, settings, enabled = false)
    val (ours, planned) = run(c, settings, enabled = true)
    val problems = Seq(
      OptionWhen(stockOurs)("rangejoin off but used"),
      OptionWhen(planned != c.expectOurs)(s"expected ${if (c.expectOurs) "a" else "no"} PiecewiseMergeAsOfJoin"),
      (stock, ours) match {
        case (Rows(a), Rows(b)) => OptionWhen(a != b)(s"answers differ\n${Differential.diff(a, b)}")
        case (Raised(a, _), Raised(b, _)) =>
          raised += 1
          // Adaptive execution may wrap the error (STAGE_MATERIALIZATION_MULTIPLE_FAILURES).
          OptionWhen(a.split(" ").intersect(b.split(" ")).isEmpty)(s"errors differ: stock $a, rangejoin $b")
        case (a, b) => Some(s"stock gave ${Differential.brief(a)}, rangejoin gave ${Differential.brief(b)}")
      }).flatten
    assert(problems.isEmpty, s"${problems.mkString("; ")}\n  case: $c\n  data: ${c.data.shown}")
    ran += 1
    if (planned) this.planned += 1
  }
}
