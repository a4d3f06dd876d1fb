package rangejoin.differential

import java.time._

import scala.util.Random

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.optimizer.{BuildRight, BuildSide}
import org.apache.spark.sql.types._

import rangejoin.condition.RangeOp
import rangejoin.OptionWhen
/**
 * One operand of a band conjunct: an expression over the columns of one side, whether it is a
 * plain column, and whether rangejoin may treat it as unable to fail (rangejoin.condition.
 * CannotFail) with ANSI mode on and off.
 */
final case class Operand(sql: String, side: Side, plain: Boolean, cannotFailAnsi: Boolean,
    cannotFailWithoutAnsi: Boolean) {
  def cannotFail(ansi: Boolean): Boolean = if (ansi) cannotFailAnsi else cannotFailWithoutAnsi
}

object Operand {
  private def sideOf(sql: String) =
    if (sql.contains("l.") && !sql.contains("r.")) Side.Left
    else if (sql.contains("r.") && !sql.contains("l.")) Side.Right
    else throw new IllegalArgumentException(s"$sql reads both sides or neither")
  def column(sql: String): Operand = Operand(sql, sideOf(sql), plain = true, true, true)
  /** Floating-point arithmetic and up-casts: never raise. */
  def safe(sql: String): Operand = Operand(sql, sideOf(sql), plain = false, true, true)
  /** Integer or decimal arithmetic and narrowing casts: raise in ANSI mode only. */
  def ansiFailing(sql: String): Operand = Operand(sql, sideOf(sql), plain = false, false, true)
  /** Date, timestamp and string functions: rangejoin assumes they may raise in either mode. */
  def mayFail(sql: String): Operand = Operand(sql, sideOf(sql), plain = false, false, false)
}

/** `a op b`, as written (or flipped: `b op.flip a`). */
final case class Conjunct(a: Operand, op: RangeOp, b: Operand) {
  require(a.side != b.side, this)
  def sql(flipped: Boolean): String = if (flipped) s"${b.sql} ${op.flip} ${a.sql}" else s"${a.sql} $op ${b.sql}"
  def keysCannotFail(ansi: Boolean): Boolean = a.cannotFail(ansi) && b.cannotFail(ansi)
  def operandOf(side: Side): Operand = if (a.side == side) a else b
}

/**
 * A band: two conjuncts bounding the other side from opposite directions, `between` the same two
 * written as one BETWEEN (which the analyzer turns back into `first AND second`, unflipped), and
 * whether the keys' type is one rangejoin orders as longs (only those make a band; other types
 * drive from one conjunct, the other residual).
 */
final case class BandPredicate(name: String, first: Conjunct, second: Conjunct, between: Option[String],
    orderedAsLong: Boolean)

/**
 * A key type for bands: its SQL type, and a small domain of values in Spark's ascending order (so
 * that an interval's upper end can be drawn above, at or below its lower end), with the edge
 * values. `tolerance` is the type's band around a key, `l.x BETWEEN r.x - d AND r.x + d`, in a form
 * that is safe where one exists: numbers in double arithmetic, which never raises.
 */
final case class BandKeyType(name: String, dataType: DataType, domain: Seq[Any], orderedAsLong: Boolean,
    tolerance: BandPredicate, rightDomain: Option[Seq[Any]] = None) {
  def domainOf(side: Side): Seq[Any] = if (side == Side.Right) rightDomain.getOrElse(domain) else domain
}

object BandKeyTypes {
  import Operand._
  import RangeOp._

  private val lx = column("l.x")

  /**
   * `l.x BETWEEN lo AND hi`, two operands over r.x; `x` is l.x as the join gets it (the analyzer
   * casts it to the bounds' type where they differ).
   */
  private def around(name: String, lo: Operand, hi: Operand, orderedAsLong: Boolean = true, x: Operand = lx) =
    BandPredicate(name, Conjunct(x, Ge, lo), Conjunct(x, Le, hi),
      Some(s"l.x BETWEEN ${lo.sql} AND ${hi.sql}"), orderedAsLong)

  /** In double arithmetic, on keys the analyzer casts to DOUBLE (an up-cast: cannot fail). */
  private def doubleTolerance(d: String) =
    around("tolerance", safe(s"CAST(r.x AS DOUBLE) - $d"), safe(s"CAST(r.x AS DOUBLE) + $d"), x = safe("l.x"))

  private def decimals(values: String*) = values.map(v => new java.math.BigDecimal(v))

  // Each domain in Spark's order; NaN is above +Infinity, and -0.0 equals 0.0.
  val int: BandKeyType = BandKeyType("int", IntegerType,
    Seq(Int.MinValue, -3, -1, 0, 1, 2, 3, 5, 8, Int.MaxValue), orderedAsLong = true, doubleTolerance("1.5D"))
  val bigint: BandKeyType = BandKeyType("bigint", LongType,
    Seq(Long.MinValue, -3L, -1L, 0L, 1L, 2L, 4L, 7L, Long.MaxValue), orderedAsLong = true, doubleTolerance("2.5D"))
  val double: BandKeyType = BandKeyType("double", DoubleType,
    Seq(Double.NegativeInfinity, -Double.MaxValue, -1.5d, -1.0d, -0.0d, 0.0d, Double.MinPositiveValue,
      0.5d, 1.0d, 2.5d, Double.MaxValue, Double.PositiveInfinity, Double.NaN),
    orderedAsLong = true, around("tolerance", safe("r.x - 0.5D"), safe("r.x + 0.5D")))
  val float: BandKeyType = BandKeyType("float", FloatType,
    Seq(Float.NegativeInfinity, -1.5f, -1.0f, -0.0f, 0.0f, Float.MinPositiveValue, 0.5f, 1.0f, 2.5f,
      Float.MaxValue, Float.PositiveInfinity, Float.NaN),
    orderedAsLong = true, around("tolerance", safe("r.x - 0.5D"), safe("r.x + 0.5D"), x = safe("l.x")))
  val date: BandKeyType = BandKeyType("date", DateType,
    Seq(LocalDate.of(1, 1, 1), LocalDate.of(1969, 12, 31), LocalDate.of(1970, 1, 1), LocalDate.of(2024, 2, 28),
      LocalDate.of(2024, 2, 29), LocalDate.of(2024, 3, 1), LocalDate.of(2024, 3, 2), LocalDate.of(9999, 12, 31)),
    orderedAsLong = true, around("tolerance", mayFail("date_sub(r.x, 1)"), mayFail("date_add(r.x, 1)")))
  val timestamp: BandKeyType = BandKeyType("timestamp", TimestampType,
    Seq(Instant.parse("0001-01-01T00:00:00Z"), Instant.parse("1969-12-31T23:59:59.999999Z"),
      Instant.parse("1970-01-01T00:00:00Z"), Instant.parse("2024-03-10T10:00:00Z"),
      Instant.parse("2024-03-10T11:00:00Z"), Instant.parse("2024-03-10T11:30:00Z"),
      Instant.parse("2024-03-10T12:00:00.000001Z"), Instant.parse("9999-12-31T23:59:59.999999Z")),
    orderedAsLong = true,
    around("tolerance", mayFail("r.x - INTERVAL 1 HOUR"), mayFail("r.x + INTERVAL 1 HOUR")))
  val timestampNtz: BandKeyType = BandKeyType("timestamp_ntz", TimestampNTZType,
    Seq(LocalDateTime.of(1, 1, 1, 0, 0), LocalDateTime.of(1970, 1, 1, 0, 0), LocalDateTime.of(2024, 3, 9, 10, 0),
      LocalDateTime.of(2024, 3, 10, 10, 0), LocalDateTime.of(2024, 3, 10, 11, 0, 0, 1000),
      LocalDateTime.of(2024, 3, 11, 10, 0), LocalDateTime.of(9999, 12, 31, 23, 59)),
    orderedAsLong = true,
    around("tolerance", mayFail("r.x - INTERVAL 1 DAY"), mayFail("r.x + INTERVAL 1 DAY")))
  // A decimal's cast to DOUBLE is not an up-cast (CannotFail), the analyzer's on l.x included:
  // in ANSI mode the tolerance band drives from its first conjunct alone.
  private val decimalTolerance = around("tolerance", ansiFailing("CAST(r.x AS DOUBLE) - 1.5D"),
    ansiFailing("CAST(r.x AS DOUBLE) + 1.5D"), x = ansiFailing("l.x"))
  val decimal: BandKeyType = BandKeyType("decimal(10,2)", DecimalType(10, 2),
    decimals("-99999999.99", "-1.25", "-0.50", "0.00", "0.25", "1.00", "1.25", "2.50", "99999999.99"),
    orderedAsLong = true, decimalTolerance)
  // Not ordered as longs: a single-bound SortedRun and the other bound residual. Its tolerance
  // band's keys are doubles, which are.
  val wideDecimal: BandKeyType = BandKeyType("decimal(38,10)", DecimalType(38, 10),
    decimals("-9999999999999999999999999999.9999999999", "-1.0000000001", "0E-10", "1E-10", "1.0000000000",
      "1.5000000000", "12345678901234567890.5000000000", "9999999999999999999999999999.9999999999"),
    orderedAsLong = false, decimalTolerance)
  // Binary (UTF8_BINARY) order. No band: strings are not ordered as longs.
  val string: BandKeyType = BandKeyType("string", StringType,
    Seq("", "A", "B", "a", "a ", "aB", "ab", "b", "z", "\u00e9"), orderedAsLong = false,
    around("tolerance", column("r.lo"), mayFail("concat(r.lo, 'z')"), orderedAsLong = false))

  val all: Seq[BandKeyType] =
    Seq(int, double, date, bigint, timestamp, string, float, timestampNtz, decimal, wideDecimal)

  /**
   * `l.x >= r.x AND l.x < r.x + 3` on integers near their maximum, where `r.x + 3` overflows: in
   * ANSI mode Spark raises, on the pairs it evaluates that conjunct for (after `l.x >= r.x` did
   * not fail to hold, and only where l.x is not NULL when `l.x <` comes first). Low right-side
   * values in every other case, so that not every case raises.
   */
  def overflow(long: Boolean, high: Boolean): BandKeyType = {
    def band(name: String, max: Long, min: Long, wrap: Long => Any): BandKeyType = {
      val left = Seq(min, -1L, 0L, 1L, max - 3, max - 2, max - 1, max).map(wrap)
      val right = (if (high) Seq(min, 0L, max - 4, max - 3, max - 2, max - 1, max) else Seq(min, -1L, 0L, 1L, 2L, max - 3))
        .map(wrap)
      val predicate = BandPredicate("plus3", Conjunct(lx, Ge, column("r.x")), Conjunct(lx, Lt, ansiFailing("r.x + 3")),
        None, orderedAsLong = true)
      BandKeyType(s"$name${if (high) "-near-max" else ""}", if (long) LongType else IntegerType, left,
        orderedAsLong = true, predicate, rightDomain = Some(right))
    }
    if (long) band("bigint", Long.MaxValue, Long.MinValue, identity)
    else band("int", Int.MaxValue, Int.MinValue, _.toInt)
  }
}

/** The band shapes, over columns x, lo and hi of L (l) and R (r). */
object BandShapes {
  import Operand._
  import RangeOp._

  private def c(a: String, op: RangeOp, b: String) = Conjunct(column(a), op, column(b))

  val all: Seq[BandKeyType => BandPredicate] = Seq(
    t => BandPredicate("point-closed", c("l.x", Ge, "r.lo"), c("l.x", Le, "r.hi"),
      Some("l.x BETWEEN r.lo AND r.hi"), t.orderedAsLong),
    t => BandPredicate("half-open", c("l.x", Ge, "r.lo"), c("l.x", Lt, "r.hi"), None, t.orderedAsLong),
    t => BandPredicate("strict", c("l.x", Gt, "r.lo"), c("l.x", Lt, "r.hi"), None, t.orderedAsLong),
    t => BandPredicate("overlap", c("l.lo", Lt, "r.hi"), c("r.lo", Lt, "l.hi"), None, t.orderedAsLong),
    t => BandPredicate("overlap-closed", c("l.lo", Le, "r.hi"), c("r.lo", Le, "l.hi"), None, t.orderedAsLong),
    // Both bounds on one key of r: a BandRun when r is buffered.
    t => BandPredicate("key-of-r", c("r.x", Ge, "l.lo"), c("r.x", Le, "l.hi"),
      Some("r.x BETWEEN l.lo AND l.hi"), t.orderedAsLong),
    t => BandPredicate("key-of-r-strict", c("l.lo", Lt, "r.x"), c("r.x", Lt, "l.hi"), None, t.orderedAsLong),
    t => t.tolerance)
}

/** How the band is written: as BETWEEN, its two conjuncts in order, or in the other order. */
sealed abstract class Writing(val name: String)
object Writing {
  case object Between extends Writing("between")
  case object InOrder extends Writing("and")
  case object Swapped extends Writing("swapped")
  val rotation: Seq[Writing] = Seq(Between, InOrder, Swapped, InOrder, Between, Swapped)
}

/**
 * A conjunct besides the band, whether it compares the two sides as a range conjunct would (then
 * it may drive, or pair into a band, itself), whether it reads the left side only, and whether it
 * cannot fail with ANSI mode on and off.
 */
final case class BandResidual(name: String, sql: Option[String], isRange: Boolean = false,
    leftOnly: Boolean = false, cannotFailAnsi: Boolean = true, cannotFailWithoutAnsi: Boolean = true) {
  def cannotFail(ansi: Boolean): Boolean = if (ansi) cannotFailAnsi else cannotFailWithoutAnsi
}
object BandResidual {
  val rotation: Seq[BandResidual] = Seq(
    BandResidual("none", None),
    // Integer `+` raises on overflow in ANSI mode (never here), so it may not precede a driver.
    BandResidual("arith", Some("(l.id + r.id) % 3 <> 0"), cannotFailAnsi = false),
    BandResidual("third-range", Some("l.v <= r.v"), isRange = true),
    BandResidual("none", None),
    BandResidual("nulls", Some("(l.v IS NULL OR r.v IS NOT NULL)")),
    BandResidual("left-only", Some("l.v > 0"), leftOnly = true),
    BandResidual("or", Some("(l.v < r.v OR r.hi IS NULL)")))
}

/** The SQL shape of the join: join syntax, or a subquery the optimizer rewrites into one. */
sealed abstract class BandForm(val name: String) {
  def sql(condition: String, hint: Hint): String
  /**
   * Where a conjunct over the left side alone goes: pushed into the left input (inner, right
   * outer and semi joins), moved in front of the others (left outer, anti and existence joins:
   * PushPredicateThroughJoin keeps it in the condition, first), or left where it is (full outer).
   */
  def leftOnly: BandForm.LeftOnly
}
object BandForm {
  sealed trait LeftOnly
  case object PushedDown extends LeftOnly
  case object First extends LeftOnly
  case object InPlace extends LeftOnly

  private def joined(name: String, syntax: String, columns: String, lo: LeftOnly) = new BandForm(name) {
    def sql(c: String, hint: Hint) = s"SELECT ${hint.sql} $columns FROM L l $syntax R r ON $c"
    def leftOnly: LeftOnly = lo
  }
  // A hint on r goes into the subquery (Spark carries it to the join it becomes); one on l, in the
  // outer query, Spark drops (no join there when hints are resolved): the right side is buffered.
  private def where(name: String, predicate: String => String, lo: LeftOnly) = new BandForm(name) {
    def sql(c: String, hint: Hint) = {
      val (outer, inner) = if (hint == Hint.BroadcastRight) ("", hint.sql) else (hint.sql, "")
      s"SELECT $outer l.* FROM L l WHERE ${predicate(s"SELECT $inner 1 FROM R r WHERE $c")}"
    }
    def leftOnly: LeftOnly = lo
  }
  val Inner: BandForm = joined("inner", "JOIN", "l.*, r.*", PushedDown)
  val LeftOuter: BandForm = joined("left", "LEFT JOIN", "l.*, r.*", First)
  val RightOuter: BandForm = joined("right", "RIGHT JOIN", "l.*, r.*", PushedDown)
  val FullOuter: BandForm = joined("full", "FULL JOIN", "l.*, r.*", InPlace)
  val LeftSemi: BandForm = joined("semi", "LEFT SEMI JOIN", "l.*", PushedDown)
  val LeftAnti: BandForm = joined("anti", "LEFT ANTI JOIN", "l.*", First)
  val Exists: BandForm = where("exists", s => s"EXISTS ($s)", PushedDown)
  val NotExists: BandForm = where("not-exists", s => s"NOT EXISTS ($s)", First)
  /** Planned as an ExistenceJoin: every left row once, with a flag. */
  val ExistsOr: BandForm = where("exists-or", s => s"EXISTS ($s) OR l.v > 3", First)

  val all: Seq[BandForm] = Seq(Inner, LeftOuter, RightOuter, FullOuter, LeftSemi, LeftAnti, Exists, NotExists, ExistsOr)
}

/** How many rows a generated side has, and how its values are spread. */
sealed abstract class BandSideShape(val name: String)
object BandSideShape {
  case object Empty extends BandSideShape("empty")
  case object OneRow extends BandSideShape("one")
  case object Normal extends BandSideShape("normal")
  /** Most values one value: long runs of duplicates, and of equal intervals. */
  case object Skewed extends BandSideShape("skewed")
  /** Every x, lo and hi NULL. */
  case object AllNull extends BandSideShape("nulls")
  val rotation: Seq[BandSideShape] = Seq(Normal, Skewed, Normal, OneRow, Normal, Empty, Skewed, Normal, AllNull)
}

/** What the plan's index must be, given that rangejoin planned the join. */
sealed trait IndexExpectation
object IndexExpectation {
  /** A band (IntervalIndex or BandRun); `exact` says which, where the case knows. */
  final case class Band(exact: Option[String]) extends IndexExpectation
  case object SortedRun extends IndexExpectation
  /** Either: the planner's to decide (see BandCase.indexExpectation). */
  case object Unchecked extends IndexExpectation
}

/** One generated band case: a query over two generated tables L and R, and its data. */
final case class BandCase(
    index: Int,
    family: String,
    form: BandForm,
    keyType: BandKeyType,
    band: BandPredicate,
    writing: Writing,
    flips: (Boolean, Boolean),
    residual: BandResidual,
    residualFirst: Boolean,
    hint: Hint,
    leftShape: BandSideShape,
    rightShape: BandSideShape,
    partitions: (Int, Int),
    seed: Long,
    /** Whether the index may be asserted at all (not where the planner's choice is changing). */
    indexChecked: Boolean = true,
    /** The rows of L and R, where a case was reduced by hand; otherwise drawn from the seed. */
    fixedRows: Option[(Seq[Row], Seq[Row])] = None,
    /**
     * One of the two documented cases where stock Spark raises and rangejoin answers
     * (docs/semantics.md#errors): stock must raise, and rangejoin give stock Spark's answer with
     * the failing expression not failing (ANSI off), which is the answer the error hides.
     */
    stockAloneRaises: Boolean = false) extends DifferentialCase {

  def bandSql: String = (writing, band.between) match {
    case (Writing.Between, Some(between)) => between
    case (Writing.Swapped, _) => s"${band.second.sql(flips._2)} AND ${band.first.sql(flips._1)}"
    case _ => s"${band.first.sql(flips._1)} AND ${band.second.sql(flips._2)}"
  }

  def condition: String = residual.sql match {
    case None => bandSql
    case Some(res) if residualFirst => s"$res AND $bandSql"
    case Some(res) => s"$bandSql AND $res"
  }

  def sql: String = form.sql(condition, hint)

  /** One conjunct of the condition as it reaches the join. */
  private case class AtJoin(band: Option[Conjunct], range: Boolean, keysCannotFail: Boolean, cannotFail: Boolean)

  /**
   * The conjuncts in the order the join gets them: BETWEEN becomes `first AND second`; a conjunct
   * over the left side alone moves first or into the left input (see BandForm.leftOnly).
   */
  private def atJoin(ansi: Boolean): Seq[AtJoin] = {
    val (a, b) = if (writing == Writing.Swapped) (band.second, band.first) else (band.first, band.second)
    val bandConjuncts = Seq(a, b).map(c => AtJoin(Some(c), range = true, c.keysCannotFail(ansi), c.keysCannotFail(ansi)))
    residual.sql match {
      case None => bandConjuncts
      case Some(_) =>
        val res = AtJoin(None, residual.isRange, residual.cannotFail(ansi), residual.cannotFail(ansi))
        val first = if (residual.leftOnly) form.leftOnly match {
          case BandForm.PushedDown => None
          case BandForm.First => Some(true)
          case BandForm.InPlace => Some(residualFirst)
        } else Some(residualFirst)
        first match {
          case None => bandConjuncts
          case Some(true) => res +: bandConjuncts
          case Some(false) => bandConjuncts :+ res
        }
    }
  }

  /**
   * Whether rangejoin should take the join, where Spark would compare every pair: the first
   * conjunct drives if it is a range conjunct, whatever its keys; a later one only if its keys and
   * every conjunct before it cannot fail (rangejoin.planning.RangeCondition).
   */
  def rangeJoinExpected(ansi: Boolean): Boolean = {
    val conjuncts = atJoin(ansi)
    conjuncts.indices.exists { i =>
      conjuncts(i).range && (i == 0 || (conjuncts(i).keysCannotFail && conjuncts.take(i).forall(_.cannotFail)))
    }
  }

  /**
   * The index a planned join must have, given its build side:
   *  - where the band's two conjuncts reach the join first, on keys ordered as longs: a band when
   *    the second's streamed key cannot fail (the first drives whatever its keys, being first; the
   *    second's buffered key may fail, as it is evaluated on every buffered row before any pair),
   *    otherwise a SortedRun (the second, which may fail, stands before any later conjunct that
   *    could pair). Which band, where all four keys are plain columns: BandRun exactly when the
   *    buffered side's two keys are one column, IntervalIndex otherwise;
   *  - a SortedRun where the keys are not ordered as longs: no band at all;
   *  - otherwise either: a residual written first may itself drive, or pair with one of the
   *    band's conjuncts (rangejoin.planning.RangeCondition).
   */
  override def register(spark: SparkSession): Unit = {
    def table(side: Side, name: String): Unit = {
      val rows = BandTables.rows(this, side)
      val df = spark.createDataFrame(java.util.Arrays.asList(rows: _*), BandTables.schema(keyType.dataType))
      val parts = if (side == Side.Left) partitions._1 else partitions._2
      (if (parts > 1) df.repartition(parts) else df).createOrReplaceTempView(name)
    }
    table(Side.Left, "L")
    table(Side.Right, "R")
  }

  /** Each side's rows, (id, x, lo, hi, v) each. */
  override def dataShown: String = Seq(Side.Left, Side.Right)
    .map(side => s"$side: ${BandTables.rows(this, side).map(Differential.render).mkString(" ")}").mkString("; ")

  override def stockAloneMayRaise: Option[String] = OptionWhen(stockAloneRaises)("ARITHMETIC_OVERFLOW")

  /**
   * A range join exactly where the case expects one and stock Spark compared every pair (the
   * optimizer removes a join with an empty side altogether), with the index the case expects
   * ([[indexExpectation]]): a band where the band's conjuncts can pair, a SortedRun where they
   * cannot.
   */
  override def planProblems(plans: Plans): Seq[String] = {
    val planned = plans.planned(plans.stockNestedLoop && rangeJoinExpected(plans.ansi))
    val index = plans.rangeJoins.headOption.toSeq.flatMap { join =>
      plans.index match {
        case None => Seq(s"no index named in '${join.simpleString(Int.MaxValue)}'")
        case Some(name) => indexExpectation(plans.ansi, join.buildSide) match {
          case IndexExpectation.Band(exact) =>
            OptionWhen(name != "BandRun" && name != "IntervalIndex")(s"expected a band, got $name").toSeq ++
              exact.filter(_ != name).map(e => s"expected $e with ${join.buildSide}, got $name")
          case IndexExpectation.SortedRun => OptionWhen(name != "SortedRun")(s"expected a SortedRun, got $name").toSeq
          case IndexExpectation.Unchecked => Nil
        }
      }
    }
    planned.toSeq ++ index
  }

  def indexExpectation(ansi: Boolean, buildSide: BuildSide): IndexExpectation = {
    val conjuncts = atJoin(ansi)
    val (buffered, streamed) = if (buildSide == BuildRight) (Side.Right, Side.Left) else (Side.Left, Side.Right)
    val operands = Seq(band.first.a, band.first.b, band.second.a, band.second.b)
    if (!indexChecked) IndexExpectation.Unchecked
    // A band pairs two conjuncts on keys ordered as longs: never these, whatever else the
    // condition holds.
    else if (!band.orderedAsLong) IndexExpectation.SortedRun
    else conjuncts.take(2).map(_.band) match {
      case Seq(Some(_), Some(second)) if second.operandOf(streamed).cannotFail(ansi) =>
        val keys = Seq(band.first, band.second).map(_.operandOf(buffered).sql)
        IndexExpectation.Band(if (!operands.forall(_.plain)) None
          else Some(if (keys.distinct.size == 1) "BandRun" else "IntervalIndex"))
      case Seq(Some(_), Some(_)) => IndexExpectation.SortedRun
      case _ => IndexExpectation.Unchecked
    }
  }

  override def toString: String =
    f"[$index%03d] ${form.name} | ${keyType.name} | ${band.name} | $condition | hint=${hint.name} | " +
      s"${leftShape.name}(${partitions._1}) x ${rightShape.name}(${partitions._2})"
}

object BandCases {

  /**
   * Every join form x band shape, each with `variants` cases that rotate through key types, ways
   * of writing the band, residuals and where they are written, hints, side shapes and
   * partitionings, so that every value of each dimension occurs many times and in many
   * combinations; then the overflow family, every join form with `overflowVariants` cases.
   * Deterministic for a given seed.
   */
  def generate(variants: Int, overflowVariants: Int, seed: Long = 20261123L): Seq[BandCase] = {
    val r = new Random(seed)
    val combos = for (form <- BandForm.all; shape <- BandShapes.all.indices) yield (form, shape)
    val hints = Seq(Hint.NoHint, Hint.BroadcastRight, Hint.BroadcastLeft)
    def common(n: Int, c: Int, v: Int, form: BandForm, keyType: BandKeyType, band: BandPredicate) = BandCase(
      index = n,
      family = "band",
      form = form,
      keyType = keyType,
      band = band,
      writing = Writing.rotation((n / 2 + v) % Writing.rotation.size),
      flips = (r.nextBoolean(), r.nextBoolean()),
      residual = BandResidual.rotation((n / 3 + v) % BandResidual.rotation.size),
      residualFirst = (n / 7 + v) % 2 == 1,
      hint = hints((n / 5 + v) % hints.size),
      leftShape = BandSideShape.rotation((n + v) % BandSideShape.rotation.size),
      // Shifted by the combination too, so that every pair of side shapes occurs.
      rightShape = BandSideShape.rotation((n / 2 + 2 * v + 4 * c) % BandSideShape.rotation.size),
      partitions = (1 + r.nextInt(3), 1 + r.nextInt(3)),
      seed = r.nextLong())
    val bands = for {
      ((form, shape), c) <- combos.zipWithIndex
      v <- 0 until variants
    } yield {
      val n = c * variants + v
      // Stepping by 7 combinations (coprime to the 10 types, and not a multiple of the 8 shapes)
      // gives every shape and every form each type.
      val keyType = BandKeyTypes.all((v + 7 * c) % BandKeyTypes.all.size)
      common(n, c, v, form, keyType, BandShapes.all(shape)(keyType))
    }
    val overflows = for {
      (form, f) <- BandForm.all.zipWithIndex
      v <- 0 until overflowVariants
    } yield {
      val n = bands.size + f * overflowVariants + v
      val keyType = BandKeyTypes.overflow(long = n % 2 == 1, high = (n / 2) % 3 != 2)
      common(n, f, v, form, keyType, keyType.tolerance).copy(family = "overflow", indexChecked = false)
    }
    bands ++ overflows
  }

  /**
   * Cases that rangejoin answered differently from stock Spark, reduced by hand to one or two rows
   * a side, kept whether or not they pass. All raise in stock Spark (ANSI on) on `r.x + 3`.
   *
   * 900-903 were found by the overflow family before the planner let a band's second bound have a
   * buffered key that may fail: `l.x >= r.x` drove alone (a SortedRun) with `r.x + 3` residual.
   * Now `r.x + 3` is a band bound, evaluated on every buffered row before any pair, and they pass.
   *
   * 904-907 are the same two differences with `r.x + 3` in a true residual, next to a band.
   * docs/semantics.md describes both as where stock Spark fails and rangejoin answers; they are
   * checked as that: stock raises, rangejoin answers as stock Spark does without ANSI.
   */
  val reported: Seq[BandCase] = {
    val max = Int.MaxValue
    val intNearMax = BandKeyTypes.overflow(long = false, high = true)
    val bigintNearMax = BandKeyTypes.overflow(long = true, high = true)
    def reduced(index: Int, form: BandForm, keyType: BandKeyType, flipSecond: Boolean,
        left: Seq[Row], right: Seq[Row]) = BandCase(
      index, "reported", form, keyType, keyType.tolerance, Writing.InOrder, (false, flipSecond),
      BandResidual.rotation.head, residualFirst = false, Hint.NoHint, BandSideShape.OneRow,
      if (right.size == 1) BandSideShape.OneRow else BandSideShape.Normal, (1, 1), seed = 0L,
      indexChecked = false, fixedRows = Some((left, right)))
    // As generated cases 379, 451, 458 and 459 found it: a NULL l.x. Spark evaluates `AND`'s right
    // side when its left is NULL, and `r.x + 3 > l.x` adds before it reads l.x: it overflows.
    // rangejoin pairs no row with a NULL key, so never evaluates the residual: no error.
    val nullKey = reduced(900, BandForm.LeftOuter, bigintNearMax, flipSecond = true,
      Seq(Row(1, null, null, null, 1)), Seq(Row(1000, Long.MaxValue, null, null, 1)))
    // Found by an earlier rotation of the generator (a semi join). Spark's semi, anti and existence
    // joins stop at a left row's first matching right row, in the right side's order: MaxValue - 2
    // comes first, and `+ 3` overflows. rangejoin met the buffered rows in key order: MaxValue - 3
    // first, a match, and stopped. (With the right rows the other way round, Spark answers too.)
    def firstMatch(index: Int, form: BandForm, flipSecond: Boolean) = reduced(index, form, intNearMax,
      flipSecond, Seq(Row(1, max - 1, null, null, 1)),
      Seq(Row(1000, max - 2, null, null, 1), Row(1001, max - 3, null, null, 1)))

    // `l.x BETWEEN r.lo AND r.hi` (an IntervalIndex, r buffered) and the residual `r.x + 3 <> l.x`.
    val overflowing = BandResidual("overflow", Some("r.x + 3 <> l.x"), cannotFailAnsi = false)
    def withResidual(index: Int, form: BandForm, keyType: BandKeyType, left: Seq[Row], right: Seq[Row]) =
      BandCase(index, "reported", form, keyType, BandShapes.all.head(keyType), Writing.Between, (false, false),
        overflowing, residualFirst = false, Hint.NoHint, BandSideShape.OneRow,
        if (right.size == 1) BandSideShape.OneRow else BandSideShape.Normal, (1, 1), seed = 0L,
        fixedRows = Some((left, right)), stockAloneRaises = true)
    // The NULL l.x again: `l.x >= r.lo AND l.x <= r.hi` is NULL, so Spark adds.
    val nullKeyResidual = withResidual(904, BandForm.LeftOuter, bigintNearMax,
      Seq(Row(1, null, null, null, 1)), Seq(Row(1000, Long.MaxValue, 0L, 0L, 1)))
    // Both right rows' intervals hold l.x = 5. Spark meets 1000 first and overflows; rangejoin
    // meets 1001 first (the one sorted nearer the probe), a match, and stops.
    def firstMatchResidual(index: Int, form: BandForm) = withResidual(index, form, intNearMax,
      Seq(Row(1, 5, 5, 5, 1)), Seq(Row(1000, max, 0, 9, 1), Row(1001, 0, 1, 8, 1)))

    Seq(nullKey, firstMatch(901, BandForm.LeftSemi, flipSecond = true),
      firstMatch(902, BandForm.LeftAnti, flipSecond = false), firstMatch(903, BandForm.ExistsOr, flipSecond = false),
      nullKeyResidual, firstMatchResidual(905, BandForm.LeftSemi), firstMatchResidual(906, BandForm.LeftAnti),
      firstMatchResidual(907, BandForm.ExistsOr))
  }
}

/** Generates the rows of L and R for a band case: id, the keys x, lo and hi, and an int v. */
object BandTables {

  def schema(keyType: DataType): StructType = StructType(Seq(
    StructField("id", IntegerType, nullable = false),
    StructField("x", keyType),
    StructField("lo", keyType),
    StructField("hi", keyType),
    StructField("v", IntegerType)))

  /**
   * About 15% of every key NULL; intervals [lo, hi] mostly ordinary, a fifth with lo = hi (equal
   * bounds: a point when closed, empty when strict), a sixth inverted (lo > hi: empty).
   */
  def rows(c: BandCase, side: Side): Seq[Row] = c.fixedRows match {
    case Some((left, right)) => if (side == Side.Left) left else right
    case None => drawn(c, side)
  }

  private def drawn(c: BandCase, side: Side): Seq[Row] = {
    val r = new Random(c.seed + (if (side == Side.Left) 1 else 2))
    val shape = if (side == Side.Left) c.leftShape else c.rightShape
    val domain = c.keyType.domainOf(side)
    val n = shape match {
      case BandSideShape.Empty => 0
      case BandSideShape.OneRow => 1
      case BandSideShape.Normal => 5 + r.nextInt(25)
      case BandSideShape.Skewed | BandSideShape.AllNull => 20 + r.nextInt(10)
    }
    val hot = r.nextInt(domain.size)
    def position() =
      if (shape == BandSideShape.Skewed && r.nextInt(100) < 70) hot else r.nextInt(domain.size)
    def nullable(i: Int) =
      if (shape == BandSideShape.AllNull || r.nextInt(100) < 15) null else domain(i)
    val base = if (side == Side.Left) 0 else 1000
    (0 until n).map { i =>
      val lo = position()
      val hi = r.nextInt(100) match {
        case p if p < 20 => lo
        case p if p < 36 => math.max(0, lo - 1 - r.nextInt(3))
        case _ => math.min(domain.size - 1, lo + 1 + r.nextInt(4))
      }
      Row(base + i, nullable(position()), nullable(lo), nullable(hi), if (r.nextInt(100) < 15) null else r.nextInt(6) - 1)
    }
  }
}
