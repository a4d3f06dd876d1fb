package rangejoin.differential

import java.io.File
import java.sql.{Date, Timestamp}

import scala.util.Random

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.types._

import rangejoin.RangeJoinConf
import rangejoin.planning.KeyedExistence
import rangejoin.{OptionWhen, TestShims}
/**
 * One query of the keyed existence suites: its SQL, whether rangejoin must rewrite it
 * (planning.KeyedExistence) or leave it, and the settings it runs under.
 */
final case class ExistenceCase(name: String, sql: String, rewrite: Boolean, settings: Seq[(String, String)] = Nil)
  extends DifferentialCase {

  override def toString: String = name

  /** Sides too large for rangejoin to buffer, unless a case says otherwise (the per-key index's cases). */
  override def conf: Seq[(String, String)] = (RangeJoinConf.BroadcastThreshold -> "-1") +: settings

  /** Stock Spark's plan never holds the rewrite's aggregate; rangejoin's exactly when the case says. */
  override def planProblems(plans: Plans): Seq[String] = Seq(
    OptionWhen(KeyedExistenceCases.rewritten(plans.stock))("rangejoin off but rewritten"),
    OptionWhen(KeyedExistenceCases.rewritten(plans.ours) != rewrite)(
      s"expected ${if (rewrite) "the" else "no"} rewrite")).flatten
}

/**
 * Generated tables and queries for keyed semi, anti and existence joins with one inequality.
 *
 * Each range key type has a points table `P_<type>(id, c, n, x)` and an intervals-like table
 * `I_<type>(id, c, n, y)`, written to Parquet (so that no side is provably empty to the
 * optimizer): `c` is a string key, skewed (most `I` rows hold `c1`), NULL on some rows of both
 * sides, `c4` a group whose `y` is always NULL and `c5` a key only `P` has; `n` a small integer
 * key with NULLs; `x` and `y` drawn from a small domain holding the type's edge values (NULL, NaN,
 * -0.0 and 0.0, infinities, the extremes), so that duplicates and ties are common.
 */
object KeyedExistenceCases {

  final case class RangeType(name: String, sqlType: DataType, domain: Seq[Any])

  private def d(s: String) = Date.valueOf(s)
  private def ts(s: String) = Timestamp.valueOf(s)
  private def dec(s: String) = new java.math.BigDecimal(s)

  val types: Seq[RangeType] = Seq(
    RangeType("int", IntegerType, Seq(Int.MinValue, -2, -1, 0, 1, 2, 3, Int.MaxValue, null)),
    RangeType("bigint", LongType, Seq(Long.MinValue, -2L, 0L, 1L, 2L, 3L, Long.MaxValue, null)),
    RangeType("double", DoubleType, Seq(Double.NegativeInfinity, -1.5, -0.0, 0.0, 1.0, 2.5,
      Double.NaN, Double.PositiveInfinity, null)),
    RangeType("float", FloatType, Seq(Float.NegativeInfinity, -1.5f, -0.0f, 0.0f, 1.0f, 2.5f,
      Float.NaN, Float.PositiveInfinity, null)),
    RangeType("date", DateType, Seq(d("1900-01-01"), d("1969-12-31"), d("1970-01-01"),
      d("2024-02-29"), d("9999-12-31"), null)),
    RangeType("timestamp", TimestampType, Seq(ts("1900-01-01 00:00:00"),
      ts("1969-12-31 23:59:59.999999"), ts("1970-01-01 00:00:00"), ts("2024-02-29 12:00:00"),
      ts("9999-12-31 23:59:59.999999"), null)),
    RangeType("decimal", DecimalType(10, 2), Seq(dec("-99999999.99"), dec("-1.50"), dec("0.00"),
      dec("1.25"), dec("2.50"), dec("99999999.99"), null)),
    RangeType("string", StringType, Seq("", "a", "B", "b", "ab", "\u00e9", null)))

  private val keysP = Seq("c1", "c2", "c3", "c4", "c5", null)
  private val ns = Seq(0, 1, 2, null)

  private def schema(t: DataType, range: String) = StructType(Seq(
    StructField("id", IntegerType, nullable = false), StructField("c", StringType),
    StructField("n", IntegerType), StructField(range, t)))

  private def intervals(t: RangeType, r: Random): Seq[Row] = (0 until 60).map { id =>
    val c = r.nextInt(100) match {
      case k if k < 60 => "c1"
      case k if k < 70 => "c2"
      case k if k < 80 => "c3"
      case k if k < 88 => "c4"
      case _ => null
    }
    val y = if (c == "c4") null else t.domain(r.nextInt(t.domain.size))
    Row(id, c, ns(r.nextInt(ns.size)), y)
  }

  private def points(t: RangeType, r: Random): Seq[Row] = (0 until 30).map { id =>
    Row(id, keysP(r.nextInt(keysP.size)), ns(r.nextInt(ns.size)), t.domain(r.nextInt(t.domain.size)))
  }

  /**
   * Writes and registers every table: per type `P_t`, `I_t`, and the edge sides `P_t_empty`,
   * `I_t_empty`, `I_t_one` (one row), `I_t_nulls` (every `y` NULL); the overflow tables
   * `P_ovf`/`I_ovf`; the collated `P_lcase`/`I_lcase`.
   */
  def register(spark: SparkSession, dir: File): Unit = {
    def write(name: String, rows: Seq[Row], s: StructType): Unit = {
      val path = new File(dir, name).getCanonicalPath
      if (!new File(path).exists()) {
        spark.createDataFrame(java.util.Arrays.asList(rows: _*), s).coalesce(1).write.parquet(path)
      }
      spark.read.parquet(path).createOrReplaceTempView(name)
    }
    types.zipWithIndex.foreach { case (t, i) =>
      write(s"P_${t.name}", points(t, new Random(100 + i)), schema(t.sqlType, "x"))
      write(s"I_${t.name}", intervals(t, new Random(200 + i)), schema(t.sqlType, "y"))
      spark.sql(s"CREATE OR REPLACE TEMP VIEW P_${t.name}_empty AS SELECT * FROM P_${t.name} WHERE id < 0")
      spark.sql(s"CREATE OR REPLACE TEMP VIEW I_${t.name}_empty AS SELECT * FROM I_${t.name} WHERE id < 0")
      spark.sql(s"CREATE OR REPLACE TEMP VIEW I_${t.name}_one AS " +
        s"SELECT * FROM I_${t.name} WHERE id = (SELECT min(id) FROM I_${t.name} WHERE c = 'c1' AND y IS NOT NULL)")
      spark.sql(s"CREATE OR REPLACE TEMP VIEW I_${t.name}_nulls AS " +
        s"SELECT id, c, n, CAST(NULL AS ${t.sqlType.sql}) AS y FROM I_${t.name}")
    }
    // 2 * x overflows a bigint for x = 2^62. g names the scenario each point row is in.
    val big = 1L << 62
    write("P_ovf", Seq(
      Row(1, "c1", 0, 1L, "small"), Row(2, "c2", 1, -3L, "small"),
      Row(3, "c1", 0, big, "matched"), Row(4, "c2", 1, 5L, "matched"),
      Row(5, "c5", 0, big, "unmatched"), Row(6, "c1", 1, 2L, "unmatched"),
      Row(7, "c4", 0, big, "nulls"), Row(8, "c2", 1, 0L, "nulls"),
      Row(9, null, 0, big, "nullkey")),
      StructType(schema(LongType, "x").fields :+ StructField("g", StringType)))
    write("I_ovf", Seq(
      Row(1, "c1", 0, 5L), Row(2, "c1", 1, Long.MaxValue), Row(3, "c2", 0, 2L), Row(4, "c2", 1, null),
      Row(5, "c4", 0, null), Row(6, "c4", 1, null), Row(7, null, 0, 7L)), schema(LongType, "y"))
    // Collated literals, so that the columns themselves are collated (a COLLATE over a column is
    // an expression rangejoin does not know cannot fail).
    def lcase(v: String) = if (v == null) "NULL" else s"'$v' COLLATE UTF8_LCASE"
    def collatedView(name: String, rows: Seq[(Int, String, String)], range: String): Unit =
      spark.sql(s"CREATE OR REPLACE TEMP VIEW $name(id, c, $range) AS VALUES " +
        rows.map { case (id, c, v) => s"($id, ${lcase(c)}, ${lcase(v)})" }.mkString(", "))
    if (TestShims.hasCollations) collatedView("P_lcase", Seq((1, "a", "b"), (2, "A", "B"), (3, "b", "a"), (4, "B", "C"),
      (5, null, "a"), (6, "a", null), (7, "c", "z"), (8, "A", "a")), "x")
    if (TestShims.hasCollations) collatedView("I_lcase", Seq((1, "A", "b"), (2, "a", "A"), (3, "B", "c"), (4, "b", "C"),
      (5, null, "z"), (6, "c", null), (7, "a", "B")), "y")
  }

  private val ops = Seq("<", "<=", ">", ">=")

  /** A query form: its name and SQL for tables `p`, `i` and a range conjunct. */
  private final case class Form(name: String, sql: (String, String, String) => String)

  private def exists(p: String, i: String, cond: String) = s"SELECT * FROM $p p WHERE EXISTS (SELECT 1 FROM $i i WHERE $cond)"
  private def notExists(p: String, i: String, cond: String) = s"SELECT * FROM $p p WHERE NOT EXISTS (SELECT 1 FROM $i i WHERE $cond)"

  private val forms: Seq[Form] = Seq(
    Form("EXISTS", (p, i, r) => exists(p, i, s"i.c = p.c AND $r")),
    Form("NOT EXISTS", (p, i, r) => notExists(p, i, s"$r AND i.c = p.c")),
    Form("EXISTS OR", (p, i, r) =>
      s"SELECT p.*, p.n = 1 OR EXISTS (SELECT 1 FROM $i i WHERE p.c = i.c AND $r) AS e FROM $p p"),
    Form("LEFT SEMI JOIN", (p, i, r) => s"SELECT * FROM $p p LEFT SEMI JOIN $i i ON p.c = i.c AND $r"),
    Form("LEFT ANTI JOIN", (p, i, r) => s"SELECT * FROM $p p LEFT ANTI JOIN $i i ON $r AND i.c = p.c"),
    Form("<=> EXISTS", (p, i, r) => exists(p, i, s"i.c <=> p.c AND $r")),
    Form("two keys NOT EXISTS", (p, i, r) => notExists(p, i, s"i.c = p.c AND $r AND p.n <=> i.n")),
    Form("expression keys EXISTS", (p, i, r) =>
      exists(p, i, s"coalesce(i.c, 'c1') = coalesce(p.c, 'c2') AND $r AND i.n % 2 = CAST(p.n AS BIGINT)")),
    Form("NOT IN", (p, i, r) => s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE $r)"),
    Form("IN", (p, i, r) => s"SELECT * FROM $p p WHERE p.c IN (SELECT i.c FROM $i i WHERE $r)"),
    Form("keyed NOT IN", (p, i, r) => s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE i.n = p.n AND $r)"),
    Form("two-column NOT IN", (p, i, r) => s"SELECT * FROM $p p WHERE (p.c, p.n) NOT IN (SELECT i.c, i.n FROM $i i WHERE $r)"),
    Form("NOT IN OR", (p, i, r) =>
      s"SELECT p.*, p.n = 1 OR p.c NOT IN (SELECT i.c FROM $i i WHERE $r) AS e FROM $p p"))

  private def form(name: String): Form = forms.find(_.name == name).get

  private def range(op: String, rightFirst: Boolean) = if (rightFirst) s"i.y $op p.x" else s"p.x $op i.y"

  /** Every type, operator and operand order, each with one of the forms, in turn. */
  def main: Seq[ExistenceCase] = {
    val combos = for (t <- types; op <- ops; rightFirst <- Seq(false, true)) yield (t, op, rightFirst)
    combos.zipWithIndex.map { case ((t, op, rightFirst), k) =>
      val f = forms((k + k / 8) % forms.size)
      val r = range(op, rightFirst)
      ExistenceCase(s"${t.name} ${f.name} $r", f.sql(s"P_${t.name}", s"I_${t.name}", r), rewrite = true)
    }
  }

  /** Empty, one-row and all-NULL sides, for every type. */
  def edges: Seq[ExistenceCase] = for {
    (t, k) <- types.zipWithIndex
    ((p, i), j) <- Seq(("P_" + t.name, s"I_${t.name}_empty"), ("P_" + t.name, s"I_${t.name}_one"),
      (s"P_${t.name}_empty", "I_" + t.name), ("P_" + t.name, s"I_${t.name}_nulls")).zipWithIndex
  } yield {
    val f = Seq(forms(0), forms(1), form("NOT IN"))((k + j) % 3)
    val r = range(ops((k + j) % 4), rightFirst = k % 2 == 1)
    ExistenceCase(s"${t.name} ${f.name} $p x $i $r", f.sql(p, i, r), rewrite = true)
  }

  /** `2 * p.x` overflows under ANSI: Spark raises only where it evaluates it, and so must the rewrite. */
  def overflow: Seq[ExistenceCase] = {
    val scenarios = Seq("small", "matched", "unmatched", "nulls", "nullkey")
    def points(g: String) = s"(SELECT id, c, n, x FROM P_ovf WHERE g = '$g')"
    val ansi = for {
      g <- scenarios
      (cond, order) <- Seq(("i.y > 2 * p.x", "right first"), ("2 * p.x < i.y", "left first"))
      f <- Seq(forms(0), forms(1), form("NOT IN"))
    } yield ExistenceCase(s"overflow $g ${f.name} $order", f.sql(points(g), "I_ovf", cond), rewrite = true)
    val noAnsi = scenarios.map { g =>
      ExistenceCase(s"overflow $g ${forms(4).name} ANSI off", forms(4).sql(points(g), "I_ovf", "2 * p.x < i.y"),
        rewrite = true, Seq("spark.sql.ansi.enabled" -> "false"))
    }
    ansi ++ noAnsi
  }

  /** Collated keys, equality and range: UTF8_LCASE orders and groups case-insensitively. */
  def collated: Seq[ExistenceCase] = if (!TestShims.hasCollations) Nil else (ops :+ "<").zipWithIndex.map { case (op, k) =>
    val f = Seq(forms(0), forms(1), forms(5), forms(4), form("NOT IN"))(k)
    // Before the rule sees an explicit join, Spark has turned its collated equality into one of
    // collationkey(...) values, a function rangejoin does not know cannot fail: declined. An
    // EXISTS subquery's correlated condition still has the collated equality itself.
    ExistenceCase(s"UTF8_LCASE ${f.name} $op", f.sql("P_lcase", "I_lcase", s"p.x $op i.y"),
      rewrite = f.name != "LEFT ANTI JOIN")
  }

  /** `IN` and `NOT IN` where NULLs decide: on the subquery side, on the left, or an empty subquery. */
  def subqueries: Seq[ExistenceCase] = {
    val (p, i) = ("P_bigint", "I_bigint")
    Seq(
      ExistenceCase("NOT IN, empty subquery side",
        s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM ${i}_empty i WHERE i.y > p.x)", true),
      ExistenceCase("NOT IN, NULL keys on the left only",
        s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE i.y >= p.x AND i.c IS NOT NULL)", true),
      ExistenceCase("NOT IN in an OR",
        s"SELECT * FROM $p p WHERE p.n = 1 OR p.c NOT IN (SELECT i.c FROM $i i WHERE i.y <= p.x)", true),
      ExistenceCase("NOT IN, the range key also the value",
        s"SELECT * FROM $p p WHERE p.x NOT IN (SELECT i.y FROM $i i WHERE i.y > p.x - 2)", true),
      ExistenceCase("NOT IN, the value also a correlated key",
        s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE i.c <=> p.c AND i.y < p.x)", true),
      ExistenceCase("NOT IN, all range keys NULL",
        s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM ${i}_nulls i WHERE i.y < p.x)", true),
      ExistenceCase("NOT IN, NULL values only",
        s"SELECT * FROM $p p WHERE p.n NOT IN (SELECT CAST(NULL AS INT) AS n FROM $i i WHERE i.y < p.x)", true),
      ExistenceCase("IN over an expression", s"SELECT * FROM $p p WHERE coalesce(p.n, 1) IN (SELECT i.n FROM $i i WHERE i.y < p.x)", true),
      ExistenceCase("NOT IN, nothing nullable, no side to buffer",
        s"SELECT * FROM $p p WHERE coalesce(p.id, -1) NOT IN (SELECT coalesce(i.id, -2) FROM $i i WHERE i.y < p.x)", true),
      ExistenceCase("NOT IN, AQE off", s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE p.x >= i.y)", true,
        Seq("spark.sql.adaptive.enabled" -> "false")))
  }

  /**
   * A subquery side rangejoin can buffer: the rewrite leaves the join to the per-key index where
   * every key cannot fail (and, for NOT IN, none can be NULL), and rewrites it where one may
   * (`2 * p.x` under ANSI) and for a NOT IN over nullable values or columns.
   */
  def perKeyIndex: Seq[ExistenceCase] = {
    val (p, i) = ("P_bigint", "I_bigint")
    val buffered = Seq(RangeJoinConf.BroadcastThreshold -> "10m")
    Seq(
      ExistenceCase("buffered: EXISTS", exists(p, i, "i.c = p.c AND i.y > p.x"), false, buffered),
      ExistenceCase("buffered: NOT EXISTS", notExists(p, i, "p.x <= i.y AND i.c <=> p.c"), false, buffered),
      ExistenceCase("buffered: LEFT ANTI JOIN", s"SELECT * FROM $p p LEFT ANTI JOIN $i i ON i.c = p.c AND p.x < i.y",
        false, buffered),
      ExistenceCase("buffered: IN", s"SELECT * FROM $p p WHERE p.c IN (SELECT i.c FROM $i i WHERE i.y < p.x)", false, buffered),
      ExistenceCase("buffered: EXISTS OR", forms(2).sql(p, i, "p.x < i.y"), false, buffered),
      ExistenceCase("buffered: a left range key that may fail", exists(p, i, "i.c = p.c AND i.y > 2 * p.x"), true, buffered),
      ExistenceCase("buffered: NOT IN", s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE i.y < p.x)",
        true, buffered),
      ExistenceCase("buffered: NOT IN in an OR",
        s"SELECT * FROM $p p WHERE p.n = 1 OR p.c NOT IN (SELECT i.c FROM $i i WHERE i.y <= p.x)", true, buffered),
      // Values and columns that cannot be NULL: Spark's anti join keys on plain equality, which
      // the index takes. Parquet columns are nullable, so coalesce makes them not.
      ExistenceCase("buffered: NOT IN, nothing nullable",
        s"SELECT * FROM $p p WHERE coalesce(p.id, -1) NOT IN (SELECT coalesce(i.id, -2) FROM $i i WHERE i.y < p.x)",
        false, buffered),
      ExistenceCase("buffered: NOT IN in an OR, nothing nullable",
        s"SELECT * FROM $p p WHERE p.n = 1 OR coalesce(p.n, 7) NOT IN (SELECT coalesce(i.n, 0) FROM $i i WHERE i.y <= p.x)",
        false, buffered),
      ExistenceCase("buffered: NOT IN, two columns, nothing nullable",
        s"SELECT * FROM $p p WHERE (coalesce(p.c, 'c1'), coalesce(p.n, 0)) NOT IN " +
          s"(SELECT coalesce(i.c, 'c2'), coalesce(i.n, 1) FROM $i i WHERE i.y >= p.x AND i.c <=> p.c)",
        false, buffered),
      ExistenceCase("buffered: NOT IN, a nullable column",
        s"SELECT * FROM $p p WHERE coalesce(p.n, 7) NOT IN (SELECT i.n FROM $i i WHERE i.y < p.x)", true, buffered),
      ExistenceCase("buffered: NOT IN, a nullable value",
        s"SELECT * FROM $p p WHERE p.n NOT IN (SELECT coalesce(i.n, 0) FROM $i i WHERE i.y < p.x)", true, buffered),
      ExistenceCase("buffered: equality keys off", exists(p, i, "i.c = p.c AND i.y > p.x"), true,
        buffered :+ (RangeJoinConf.EqualityKeys -> "false")),
      ExistenceCase("buffered: collated key", exists("P_lcase", "I_lcase", "i.c = p.c AND p.x < i.y"), true, buffered))
  }

  /** Shapes the rewrite must leave to Spark, each with stock Spark's answer. */
  def declined: Seq[ExistenceCase] = {
    val p = "P_bigint"
    val i = "I_bigint"
    Seq(
      ExistenceCase("NOT IN, a value that may fail",
        s"SELECT * FROM $p p WHERE upper(p.c) NOT IN (SELECT i.c FROM $i i WHERE i.y > p.x)", false),
      ExistenceCase("NOT IN, not correlated", s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE i.y > 0)", false),
      ExistenceCase("NOT IN, two inequalities",
        s"SELECT * FROM $p p WHERE p.c NOT IN (SELECT i.c FROM $i i WHERE i.y > p.x AND i.y < p.x + 5)", false),
      ExistenceCase("IN, a residual",
        s"SELECT * FROM $p p WHERE p.c IN (SELECT i.c FROM $i i WHERE i.y > p.x AND i.n + p.n <> 2)", false),
      ExistenceCase("a residual", exists(p, i, "i.c = p.c AND i.y > p.x AND i.n + p.n <> 2"), false),
      ExistenceCase("two inequalities", exists(p, i, "i.c = p.c AND i.y > p.x AND i.y < p.x + 5"), false),
      ExistenceCase("no equality (the fast path's)", exists(p, i, "i.y > p.x"), false),
      ExistenceCase("a right range key that may fail", exists(p, i, "i.c = p.c AND i.y * 2 > p.x"), false),
      ExistenceCase("a right equality key that may fail", exists(p, i, "upper(i.c) = p.c AND i.y > p.x"), false),
      ExistenceCase("a left equality key that may fail", exists(p, i, "i.c = upper(p.c) AND i.y > p.x"), false),
      ExistenceCase("a left equality key that may fail, anti join",
        s"SELECT * FROM $p p LEFT ANTI JOIN $i i ON i.c = upper(p.c) AND i.y > p.x", false),
      ExistenceCase("an OR of inequalities", exists(p, i, "i.c = p.c AND (i.y > p.x OR i.y < p.x - 1)"), false),
      ExistenceCase("an inner join", s"SELECT p.id, i.id FROM $p p JOIN $i i ON i.c = p.c AND i.y > p.x", false),
      ExistenceCase("existenceFastPath off", exists(p, i, "i.c = p.c AND i.y > p.x"), false,
        Seq(RangeJoinConf.ExistenceFastPath -> "false")))
  }

  /** Whether the planned query holds the aggregate the rewrite makes. */
  def rewritten(plan: SparkPlan): Boolean = plan.exists(_.output.exists(a =>
    a.name == KeyedExistence.MaxName || a.name == KeyedExistence.MinName))
}
