package rangejoin.differential

import scala.util.Random

import org.apache.spark.SparkFunSuite
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.RangeJoinConf
import rangejoin.execution.{PiecewiseMergeJoinLike, ShuffledPiecewiseMergeJoinExec}
/**
 * Differential tests of equality keys plus a range (`l.g = r.g AND l.x BETWEEN r.lo AND r.hi`),
 * which rangejoin runs with a per-key index where Spark runs a hash or sort-merge join that
 * compares every pair within a key. Each generated case runs with rangejoin off and on and must
 * give the same rows, or raise an error of the same condition; where every key cannot fail,
 * rangejoin must have planned the join with an index "per key".
 *
 * The cases cross the equality keys (one int key, `<=>`, a double key with NaN and -0.0, two
 * keys, collated strings), the range shapes (one bound, BETWEEN, half-open, overlap, a residual,
 * a residual that divides by zero under ANSI), the range key's type, the join type, which side is
 * broadcast, and the data (NULL keys on either side, duplicates, one dominant key, empty sides).
 */
object KeyedCases {

  final case class KeyKind(name: String, sql: String, expectPlanned: Boolean)

  val keyKinds: Seq[KeyKind] = Seq(
    KeyKind("g", "l.g = r.g", expectPlanned = true),
    KeyKind("g null-safe", "l.g <=> r.g", expectPlanned = true),
    KeyKind("d (NaN, -0.0)", "l.d = r.d", expectPlanned = true),
    KeyKind("g and s", "l.g = r.g AND l.s = r.s", expectPlanned = true),
    // Spark rewrites collated join keys to collation keys, which rangejoin does not claim
    // cannot fail: left to Spark, checked for the answer only.
    KeyKind("s UTF8_LCASE", "collate(l.s, 'UTF8_LCASE') = collate(r.s, 'UTF8_LCASE')", expectPlanned = false),
    // A column of a collated type: equal keys ('b', 'B') differ in their bytes, so the per-key
    // index (which groups by bytes) must leave the join to Spark.
    KeyKind("c UTF8_LCASE column", "l.c = r.c", expectPlanned = false))

  final case class Shape(name: String, sql: String, residualFails: Boolean = false)

  val shapes: Seq[Shape] = Seq(
    Shape("one bound", "l.x < r.lo"),
    Shape("between", "l.x BETWEEN r.lo AND r.hi"),
    Shape("half-open, range first", "l.x >= r.lo AND l.x < r.hi"),
    Shape("overlap", "l.lo < r.hi AND r.lo < l.hi"),
    Shape("residual", "l.x <= r.hi AND l.v <> r.v"),
    Shape("failing residual", "l.x > r.lo AND 10 / (l.v - r.v) > 0", residualFails = true))

  final case class RangeType(name: String, dataType: DataType, values: Seq[Any])

  private def date(s: String) = java.sql.Date.valueOf(s)
  private def ts(s: String) = java.sql.Timestamp.valueOf(s)
  private def dec(s: String) = new java.math.BigDecimal(s)

  val rangeTypes: Seq[RangeType] = Seq(
    RangeType("int", IntegerType, Seq(-3, 0, 1, 2, 2, 5, 8, Int.MaxValue, Int.MinValue)),
    RangeType("bigint", LongType, Seq(-3L, 0L, 1L, 2L, 5L, 9L, Long.MaxValue, Long.MinValue)),
    RangeType("double", DoubleType, Seq(-1.5, -0.0, 0.0, 1.0, 2.5, Double.NaN, Double.PositiveInfinity,
      Double.NegativeInfinity)),
    RangeType("date", DateType, Seq("1582-10-10", "1970-01-01", "2020-02-29", "2020-03-01", "9999-12-31").map(date)),
    RangeType("timestamp", TimestampType, Seq("1900-01-01 00:00:00", "2020-01-01 00:00:00",
      "2020-01-01 00:00:00.000001", "2020-06-01 12:00:00").map(ts)),
    RangeType("decimal(10,2)", DecimalType(10, 2), Seq("-1.00", "0.00", "0.01", "3.50", "99999999.99").map(dec)),
    RangeType("string", StringType, Seq("", "a", "A", "b", "ab", "z")))

  final case class Form(name: String, sql: (String, String) => String, emitsPairs: Boolean)

  private val pairColumns = "l.id AS lid, r.id AS rid"
  val forms: Seq[Form] = Seq(
    Form("inner", (c, h) => s"SELECT $h $pairColumns FROM L l JOIN R r ON $c", emitsPairs = true),
    Form("left", (c, h) => s"SELECT $h $pairColumns FROM L l LEFT JOIN R r ON $c", emitsPairs = true),
    Form("right", (c, h) => s"SELECT $h $pairColumns FROM L l RIGHT JOIN R r ON $c", emitsPairs = true),
    Form("full", (c, h) => s"SELECT $h $pairColumns FROM L l FULL JOIN R r ON $c", emitsPairs = true),
    Form("semi", (c, h) => s"SELECT $h l.id FROM L l LEFT SEMI JOIN R r ON $c", emitsPairs = false),
    Form("anti", (c, h) => s"SELECT $h l.id FROM L l LEFT ANTI JOIN R r ON $c", emitsPairs = false),
    Form("exists or", (c, h) =>
      s"SELECT $h l.id FROM L l WHERE l.v = 3 OR EXISTS (SELECT 1 FROM R r WHERE $c)", emitsPairs = false))

  val hints: Seq[String] = Seq("/*+ BROADCAST(r) */", "/*+ BROADCAST(l) */", "")

  /** Data: rows per side, and whether one key holds nearly every row. */
  final case class Data(name: String, left: Int, right: Int, skewed: Boolean = false)

  val data: Seq[Data] = Seq(
    Data("normal", 40, 30), Data("skewed", 40, 30, skewed = true), Data("empty left", 0, 30),
    Data("empty right", 40, 0), Data("one right row", 40, 1))

  final case class KeyedCase(index: Int, key: KeyKind, shape: Shape, rangeType: RangeType, form: Form,
      hint: String, data: Data, keyFirst: Boolean) {
    def condition: String = if (keyFirst) s"${key.sql} AND ${shape.sql}" else s"${shape.sql} AND ${key.sql}"
    def sql: String = form.sql(condition, hint)
    /** Whether rangejoin must take the join when Spark plans it as an equi-join. */
    def expectPlanned: Boolean = key.expectPlanned && (form.emitsPairs || !shape.residualFails)
    override def toString: String =
      s"#$index ${form.name} ${shape.name} on ${key.name}, ${rangeType.name}, ${data.name}, " +
        s"${if (hint.isEmpty) "no hint" else hint}${if (keyFirst) "" else ", keys last"}"
  }

  /** Every form with every shape, each several times over the other dimensions in rotation. */
  def generate(variants: Int): Seq[KeyedCase] = {
    val combos = for (form <- forms; shape <- shapes; v <- 0 until variants) yield (form, shape, v)
    combos.zipWithIndex.map { case ((form, shape, v), i) =>
      KeyedCase(i, keyKinds(i % keyKinds.size), shape, rangeTypes((i / 3 + v) % rangeTypes.size), form,
        hints((i / 7 + v) % hints.size), data((i / 2 + v) % data.size), keyFirst = (i / 5) % 4 != 3)
    }
  }

  val schema: StructType = StructType(Seq(
    StructField("id", IntegerType), StructField("g", IntegerType), StructField("s", StringType),
    StructField("d", DoubleType), StructField("v", IntegerType), StructField("c", StringType("UTF8_LCASE"))))

  def tableSchema(t: RangeType): StructType =
    StructType(schema.fields ++ Seq("x", "lo", "hi").map(StructField(_, t.dataType)))

  /** One side's rows, from a seed: keys from a small domain with NULLs, range values with repeats. */
  def rows(c: KeyedCase, left: Boolean): Seq[Row] = {
    val n = if (left) c.data.left else c.data.right
    val random = new Random(c.index * 31 + (if (left) 1 else 2))
    def pick[T](values: Seq[T]): T = values(random.nextInt(values.size))
    def orNull(v: Any): Any = if (random.nextInt(8) == 0) null else v
    val values = c.rangeType.values
    (0 until n).map { id =>
      val g = if (c.data.skewed && random.nextInt(10) > 0) 1 else orNull(random.nextInt(4))
      val s = orNull(pick(Seq("a", "A", "b", "B")))
      val d = orNull(pick(Seq(0.0, -0.0, Double.NaN, 1.5)))
      val (lo, hi) = (orNull(pick(values)), orNull(pick(values)))
      Row(id, g, s, d, random.nextInt(4), s, orNull(pick(values)), lo, hi)
    }
  }
}

/** Runs [[KeyedCases]] on a session: stock Spark against rangejoin, answers and plans. */
final class KeyedDifferentialRunner(spark: SparkSession, expectShuffled: Boolean = false) {
  import KeyedCases._

  var cases = 0
  var planned = 0
  var nullKeyConverse = 0

  def summary: String = s"$cases cases, $planned planned a PiecewiseMergeJoin per key, " +
    s"$nullKeyConverse raised in stock Spark alone (a NULL range key's pair)"

  def check(c: KeyedCase, conf: Seq[(String, String)]): Unit = {
    def table(left: Boolean, name: String): Unit = {
      val df = spark.createDataFrame(java.util.Arrays.asList(rows(c, left): _*), tableSchema(c.rangeType))
      (if (left) df.repartition(3) else df).createOrReplaceTempView(name)
    }
    table(left = true, "L")
    table(left = false, "R")
    val (stockPlan, stock, _) = Differential.run(spark, c.sql, conf :+ (RangeJoinConf.Enabled -> "false"))
    val (ourPlan, ours, _) = Differential.run(spark, c.sql, conf :+ (RangeJoinConf.Enabled -> "true"))
    def describe = s"$c\n  query: ${c.sql}\n  stock plan:\n$stockPlan\n  rangejoin plan:\n$ourPlan"

    val stockEquiJoin = stockPlan.exists {
      case _: BroadcastHashJoinExec | _: ShuffledHashJoinExec | _: SortMergeJoinExec => true
      case _ => false
    }
    val joins = ourPlan.collect { case j: PiecewiseMergeJoinLike => j }
    val shuffled = joins.exists(_.isInstanceOf[ShuffledPiecewiseMergeJoinExec])
    // A keyed semi or anti join with one bound may instead be rewritten before planning; either
    // way its plan names rangejoin.
    val rangejoinShown = joins.nonEmpty || ourPlan.toString.contains("RangeJoin")
    val problems = Seq(
      // (A semi or anti join with one bound is reduced to each key's extreme first, one row per
      // key, which Spark's own join then serves.)
      if (expectShuffled && c.expectPlanned && stockEquiJoin && !shuffled && !ourPlan.toString.contains("RangeJoinM"))
        Some("expected a ShuffledPiecewiseMergeJoin: no side can be broadcast") else None,
      (stock, ours) match {
        case (Rows(a), Rows(b)) if a != b => Some(s"answers differ\n${Differential.diff(a, b)}")
        case (Raised(a, _), Raised(b, _)) if a != b => Some(s"errors differ: stock $a, rangejoin $b")
        case (Rows(_), Raised(e, m)) => Some(s"rangejoin raised $e: $m")
        // The documented converse (docs/semantics.md#errors): a pair with a NULL range key is
        // never a candidate, so a residual after the range is not evaluated on it, where Spark's
        // AND evaluates it. Rangejoin must then give stock Spark's answer without ANSI.
        case (Raised("DIVIDE_BY_ZERO", _), Rows(b)) if c.shape.residualFails =>
          nullKeyConverse += 1
          Differential.run(spark, c.sql, conf ++ Seq(RangeJoinConf.Enabled -> "false",
              SQLConf.ANSI_ENABLED.key -> "false"))._2 match {
            case Rows(withoutAnsi) if withoutAnsi == b => None
            case other => Some(s"stock raised, and without ANSI gave $other, not rangejoin's $b")
          }
        case (Raised(e, m), Rows(_)) => Some(s"stock raised $e ($m), rangejoin answered")
        case _ => None
      },
      if (stockEquiJoin && c.expectPlanned && !rangejoinShown) Some("expected a per-key range join") else None,
      if (joins.exists(j => !j.simpleString(Int.MaxValue).contains(" per key"))) Some("index not per key") else None
    ).flatten
    if (problems.nonEmpty) throw new AssertionError(s"${problems.mkString("; ")}: $describe")
    cases += 1
    if (joins.nonEmpty) planned += 1
  }
}

object KeyedShuffled {
  /** No side can be broadcast: both thresholds off, and the cases' BROADCAST hints dropped. */
  val conf: Seq[(String, String)] = Seq(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1",
    RangeJoinConf.BroadcastThreshold -> "-1", SQLConf.SHUFFLE_PARTITIONS.key -> "3")

  def cases(variants: Int): Seq[KeyedCases.KeyedCase] = KeyedCases.generate(variants).map(_.copy(hint = ""))
}

abstract class LocalKeyedDifferentialSuite(variants: Int, conf: (String, String)*)
  extends SparkFunSuite with LocalDifferentialSession {

  private lazy val runner = new KeyedDifferentialRunner(spark)

  override protected def summary: String = runner.summary

  KeyedCases.generate(variants).foreach { c => test(c.toString)(runner.check(c, conf)) }
}

/**
 * The same cases with no side that can be broadcast: Spark plans sort-merge joins, rangejoin the
 * shuffled per-key index (ShuffledPiecewiseMergeJoin), in generated code and without.
 */
class KeyedShuffledDifferentialSuite extends SparkFunSuite with LocalDifferentialSession {

  private lazy val runner = new KeyedDifferentialRunner(spark, expectShuffled = true)

  override protected def summary: String = runner.summary

  for (c <- KeyedShuffled.cases(2)) {
    val codegen = if (c.index % 3 == 2) Seq(SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false") else Nil
    test(s"$c${if (codegen.nonEmpty) ", no codegen" else ""}")(runner.check(c, KeyedShuffled.conf ++ codegen))
  }
}

class KeyedDifferentialSuite extends LocalKeyedDifferentialSuite(4)

class KeyedDifferentialAqeOffCodegenOffSuite extends LocalKeyedDifferentialSuite(1,
  SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false", SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false")

class KeyedDifferentialAnsiOffSuite extends LocalKeyedDifferentialSuite(1, SQLConf.ANSI_ENABLED.key -> "false")

/** The same cases across two executor JVMs (`local-cluster`), adaptive execution on and off. */
class KeyedDistributedDifferentialSuite extends AnyFunSuite with ClusterDifferentialSession {

  private lazy val runner = new KeyedDifferentialRunner(spark)

  override protected def summary: Option[String] = Some(runner.summary)

  for (aqe <- Seq("true", "false"); c <- KeyedCases.generate(1).filter(_.index % 2 == (if (aqe == "true") 0 else 1))) {
    test(s"AQE $aqe: $c")(runner.check(c, Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)))
  }

  // Shuffled: each executor sorts its own partitions of the buffered side.
  for (aqe <- Seq("true", "false"); c <- KeyedShuffled.cases(1).filter(_.index % 4 == (if (aqe == "true") 0 else 2))) {
    test(s"shuffled, AQE $aqe: $c")(runner.check(c, KeyedShuffled.conf :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)))
  }
}
