package rangejoin.differential

import scala.util.Random

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

import rangejoin.RangeJoinConf
import rangejoin.execution.ShuffledPiecewiseMergeJoinExec
import rangejoin.{OptionWhen, TestShims}
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
    KeyKind("c UTF8_LCASE column", "l.c = r.c", expectPlanned = false)
  ).filter(k => TestShims.hasCollations || !k.name.contains("UTF8_LCASE")) // Spark 3.5: no collations

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
      hint: String, data: Data, keyFirst: Boolean, shuffled: Boolean = false) extends DifferentialCase {
    def condition: String = if (keyFirst) s"${key.sql} AND ${shape.sql}" else s"${shape.sql} AND ${key.sql}"
    def sql: String = form.sql(condition, hint)
    /** Whether rangejoin must take the join when Spark plans it as an equi-join. */
    def expectPlanned: Boolean = key.expectPlanned && (form.emitsPairs || !shape.residualFails)
    override def toString: String =
      s"#$index ${form.name} ${shape.name} on ${key.name}, ${rangeType.name}, ${data.name}, " +
        s"${if (hint.isEmpty) "no hint" else hint}${if (keyFirst) "" else ", keys last"}${if (shuffled) ", shuffled" else ""}"

    override def register(spark: SparkSession): Unit = {
      def table(left: Boolean, name: String): Unit = {
        val df = spark.createDataFrame(java.util.Arrays.asList(rows(this, left): _*), tableSchema(rangeType))
        (if (left) df.repartition(3) else df).createOrReplaceTempView(name)
      }
      table(left = true, "L")
      table(left = false, "R")
    }

    override def conf: Seq[(String, String)] = if (shuffled) KeyedShuffled.conf else Nil

    // The documented converse (docs/semantics.md#errors): a pair with a NULL range key is never a
    // candidate, so a residual after the range is not evaluated on it, where Spark's AND
    // evaluates it.
    override def stockAloneMayRaise: Option[String] = OptionWhen(shape.residualFails)("DIVIDE_BY_ZERO")

    /**
     * Where stock Spark plans an equi-join and the case expects rangejoin, a range join per key
     * (or, for a semi or anti join with one bound, the keyed existence rewrite, named `RangeJoin`
     * in the plan); shuffled where no side can be broadcast; never an index that is not per key.
     */
    override def planProblems(plans: Plans): Seq[String] = {
      val shown = plans.rangeJoins.nonEmpty || plans.ours.toString.contains("RangeJoin")
      val rewritten = plans.ours.toString.contains("RangeJoinM")
      val isShuffled = plans.rangeJoins.exists(_.isInstanceOf[ShuffledPiecewiseMergeJoinExec])
      Seq(
        OptionWhen(shuffled && expectPlanned && plans.stockEquiJoin && !isShuffled && !rewritten)(
          "expected a ShuffledPiecewiseMergeJoin: no side can be broadcast"),
        OptionWhen(plans.stockEquiJoin && expectPlanned && !shown)("expected a per-key range join"),
        plans.perKey).flatten
    }
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
    StructField("d", DoubleType), StructField("v", IntegerType), StructField("c", if (TestShims.hasCollations) TestShims.collated("UTF8_LCASE") else StringType)))

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

object KeyedShuffled {
  /** No side can be broadcast: both thresholds off, and the cases' BROADCAST hints dropped. */
  val conf: Seq[(String, String)] = Seq(SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1",
    RangeJoinConf.BroadcastThreshold -> "-1", SQLConf.SHUFFLE_PARTITIONS.key -> "3")

  def cases(variants: Int): Seq[KeyedCases.KeyedCase] =
    KeyedCases.generate(variants).map(_.copy(hint = "", shuffled = true))
}

class KeyedDifferentialSuite extends DifferentialSuite(KeyedCases.generate(4))

class KeyedDifferentialAqeOffCodegenOffSuite extends DifferentialSuite(KeyedCases.generate(1)) with AqeOff with CodegenOff

class KeyedDifferentialAnsiOffSuite extends DifferentialSuite(KeyedCases.generate(1)) with AnsiOff

/**
 * The same cases with no side that can be broadcast: Spark plans sort-merge joins, rangejoin the
 * shuffled per-key index (ShuffledPiecewiseMergeJoin); every third without generated code.
 */
class KeyedShuffledDifferentialSuite extends DifferentialSuite(KeyedShuffled.cases(2).filter(_.index % 3 != 2))

class KeyedShuffledCodegenOffSuite extends DifferentialSuite(KeyedShuffled.cases(2).filter(_.index % 3 == 2)) with CodegenOff {
  // The family's other third: these shapes run only here.
  override protected def sampledInFullTier: Boolean = false
}

/** The same cases across two executor JVMs (`local-cluster`), adaptive execution on and off. */
class KeyedDistributedSuite extends DistributedDifferentialSuite {
  // A tenth, not the twentieth of the other families: few keyed cases plan a range join (a
  // twentieth planned one), and the cluster's start, not the cases, is most of the suite's time.
  checkAqeOnAndOffShare("", KeyedCases.generate(1), Tier.tenth)
  // Shuffled: each executor sorts its own partitions of the buffered side.
  checkAqeOnAndOffShare("", KeyedShuffled.cases(1).filter(_.index % 2 == 0), Tier.tenth)
}
