package rangejoin.differential

import scala.util.Random

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._

import rangejoin.condition.RangeOp
/** How many rows a generated side has, and how its keys are spread. */
sealed abstract class Shape(val name: String)
object Shape {
  case object Empty extends Shape("empty")
  case object OneRow extends Shape("one")
  case object Normal extends Shape("normal")
  /** Most keys equal: one long run of duplicates. */
  case object Skewed extends Shape("skewed")
  val rotation: Seq[Shape] = Seq(Normal, Skewed, Normal, Empty, Normal, OneRow, Skewed, Normal)
}

/** The SQL shape of the join: join syntax, or a subquery the optimizer rewrites into one. */
sealed abstract class JoinForm(val name: String, val hintable: Boolean) {
  def sql(condition: String, hint: String): String
  /** Whether the condition's conjuncts reach the join in the order written. */
  def rangeMayComeFirst: Boolean = true
  /**
   * Whether the optimizer moves conjuncts over the left side alone in front of the others: it
   * does for left outer, left anti and existence joins (PushPredicateThroughJoin keeps them in
   * the condition, first), and pushes them into the left input for inner and semi joins.
   */
  def leftOnlyConjunctsFirst: Boolean = false
}
object JoinForm {
  private def joined(name: String, syntax: String, columns: String, leftFirst: Boolean = false) =
    new JoinForm(name, true) {
      def sql(c: String, hint: String) = s"SELECT $hint $columns FROM L l $syntax R r ON $c"
      override def leftOnlyConjunctsFirst: Boolean = leftFirst
    }
  private def where(name: String, predicate: String => String, first: Boolean = true,
      leftFirst: Boolean = false) =
    new JoinForm(name, false) {
      def sql(c: String, hint: String) = s"SELECT l.id, l.k FROM L l WHERE ${predicate(c)}"
      override def rangeMayComeFirst: Boolean = first
      override def leftOnlyConjunctsFirst: Boolean = leftFirst
    }
  val Inner: JoinForm = joined("inner", "JOIN", "l.id, l.k, r.id, r.k")
  val LeftOuter: JoinForm = joined("left", "LEFT JOIN", "l.id, l.k, r.id, r.k", leftFirst = true)
  val RightOuter: JoinForm = joined("right", "RIGHT JOIN", "l.id, l.k, r.id, r.k")
  val FullOuter: JoinForm = joined("full", "FULL JOIN", "l.id, l.k, r.id, r.k")
  val LeftSemi: JoinForm = joined("semi", "LEFT SEMI JOIN", "l.id, l.k")
  val LeftAnti: JoinForm = joined("anti", "LEFT ANTI JOIN", "l.id, l.k", leftFirst = true)
  val Exists: JoinForm = where("exists", c => s"EXISTS (SELECT 1 FROM R r WHERE $c)")
  val NotExists: JoinForm =
    where("not-exists", c => s"NOT EXISTS (SELECT 1 FROM R r WHERE $c)", leftFirst = true)
  /** Planned as an ExistenceJoin: every left row once, with a flag. */
  val ExistsOr: JoinForm =
    where("exists-or", c => s"EXISTS (SELECT 1 FROM R r WHERE $c) OR l.v > 3", leftFirst = true)
  /** A null-aware anti join whose condition puts `(l.v = r.v) OR isnull(l.v = r.v)` first. */
  val NotIn: JoinForm = where("not-in", c => s"l.v NOT IN (SELECT r.v FROM R r WHERE $c)", first = false)
  /**
   * An equi-join on l.v = r.v, Spark's to plan; unless the optimizer folds the equality away (with
   * the residual `l.v <> r.v` it becomes `if (isnull(l.v = r.v)) null else false`).
   */
  val In: JoinForm = where("in", c => s"l.v IN (SELECT r.v FROM R r WHERE $c)")

  val all: Seq[JoinForm] =
    Seq(Inner, LeftOuter, RightOuter, FullOuter, LeftSemi, LeftAnti, Exists, NotExists, ExistsOr, NotIn, In)
}

/**
 * The conjuncts besides the range predicate, whether they are written before it, and whether they
 * read the left side only.
 */
final case class Residual(name: String, sql: Option[String], first: Boolean = false,
    leftOnly: Boolean = false)
object Residual {
  val rotation: Seq[Residual] = Seq(
    Residual("none", None),
    Residual("arith", Some("(coalesce(l.v, 0) + coalesce(r.v, 0)) % 3 <> 0")),
    Residual("second-range", Some("l.k2 <= r.k2")),
    Residual("none", None),
    Residual("left-only", Some("l.v > 1"), leftOnly = true),
    Residual("nulls", Some("(l.v IS NULL OR r.v IS NOT NULL)")),
    Residual("arith-first", Some("l.v <> r.v"), first = true),
    Residual("or", Some("(l.v < r.v OR r.k2 IS NULL)")))
}

sealed abstract class Hint(val name: String, val sql: String)
object Hint {
  case object NoHint extends Hint("none", "")
  case object BroadcastLeft extends Hint("broadcast(l)", "/*+ BROADCAST(l) */")
  case object BroadcastRight extends Hint("broadcast(r)", "/*+ BROADCAST(r) */")
  case object ShuffleReplicateNL extends Hint("shuffle_replicate_nl", "/*+ SHUFFLE_REPLICATE_NL(l) */")
  val rotation: Seq[Hint] = Seq(NoHint, BroadcastRight, NoHint, BroadcastLeft, NoHint, ShuffleReplicateNL)
}

/** One differential case: a query over two generated tables L and R, and its data. */
final case class Case(
    index: Int,
    form: JoinForm,
    op: RangeOp,
    flipped: Boolean,
    keyType: KeyType,
    leftExpr: KeyExpr,
    rightExpr: KeyExpr,
    residual: Residual,
    hint: Hint,
    leftShape: Shape,
    rightShape: Shape,
    partitions: (Int, Int),
    seed: Long) extends DifferentialCase {

  def rangePredicate: String = {
    val (l, r) = (leftExpr("l.k"), rightExpr("r.k"))
    if (flipped) s"$r ${op.flip} $l" else s"$l $op $r"
  }

  def condition: String = residual.sql match {
    case None => rangePredicate
    case Some(res) if residual.first => s"$res AND $rangePredicate"
    case Some(res) => s"$rangePredicate AND $res"
  }

  def sql: String = form.sql(condition, if (form.hintable) hint.sql else "")

  /**
   * Whether rangejoin should take the join, when Spark would otherwise compare every pair. Keys
   * that may fail drive only from the condition's first conjunct (see rangejoin's CannotFail).
   * A later range conjunct drives only if its keys and the conjuncts before it cannot fail: every
   * residual written first here is a comparison, which cannot.
   */
  def rangeJoinExpected(ansi: Boolean): Boolean = {
    val residualFirst = residual.sql.isDefined &&
      (residual.first || (residual.leftOnly && form.leftOnlyConjunctsFirst))
    val rangeFirst = form.rangeMayComeFirst && !residualFirst
    val cartesianHinted = form == JoinForm.Inner && hint == Hint.ShuffleReplicateNL
    !cartesianHinted &&
      (rangeFirst || (leftExpr.cannotFail(ansi) && rightExpr.cannotFail(ansi) && keyType.coercionCannotFail))
  }

  /** L and R, from the seed, in the case's partitionings. */
  override def register(spark: SparkSession): Unit = {
    def table(side: Side, name: String): Unit = {
      val kt = if (side == Side.Left) keyType.left else keyType.right
      val df = spark.createDataFrame(java.util.Arrays.asList(Tables.rows(this, side): _*), Tables.schema(kt))
      val parts = if (side == Side.Left) partitions._1 else partitions._2
      (if (parts > 1) df.repartition(parts) else df).createOrReplaceTempView(name)
    }
    table(Side.Left, "L")
    table(Side.Right, "R")
  }

  /**
   * A range join exactly where the case expects one and stock Spark compared every pair (the
   * optimizer may remove a join with an empty side altogether). Where stock Spark planned an
   * equi-join (`IN` keeps its equality), a range join only with an index per key, whose rules
   * KeyedDifferentialSuite asserts case by case.
   */
  override def planProblems(plans: Plans): Seq[String] =
    if (plans.stockEquiJoin) plans.perKey.toSeq
    else plans.planned(plans.stockNestedLoop && rangeJoinExpected(plans.ansi)).toSeq

  override def toString: String =
    f"[$index%03d] ${form.name} | ${keyType.name} | $rangePredicate | residual=${residual.name} | " +
      s"hint=${hint.name} | ${leftShape.name}(${partitions._1}) x ${rightShape.name}(${partitions._2})"
}

object Cases {

  /**
   * Every join form x operator x orientation, each with `variants` cases that rotate through key
   * types, key expressions, residuals, hints, shapes and partitionings, so that every value of each
   * dimension occurs many times and in many combinations. Deterministic for a given seed.
   */
  def generate(variants: Int, seed: Long = 20261122L): Seq[Case] = {
    val r = new Random(seed)
    val types = KeyTypes.all
    val combos = for {
      form <- JoinForm.all
      op <- RangeOp.all
      flipped <- Seq(false, true)
    } yield (form, op, flipped)
    val cases = for {
      ((form, op, flipped), c) <- combos.zipWithIndex
      v <- 0 until variants
    } yield {
      val n = c * variants + v
      val keyType = types(n % types.size)
      def exprFor() = keyType.exprs(r.nextInt(keyType.exprs.size))
      val (leftExpr, rightExpr) = r.nextInt(3) match {
        case 0 => (KeyExpr.Plain, KeyExpr.Plain)
        case 1 => (exprFor(), KeyExpr.Plain)
        case _ => (exprFor(), exprFor())
      }
      Case(
        index = n,
        form = form,
        op = op,
        flipped = flipped,
        keyType = keyType,
        leftExpr = leftExpr,
        rightExpr = rightExpr,
        residual = Residual.rotation((n / 3 + v) % Residual.rotation.size),
        hint = Hint.rotation((n / 5 + v) % Hint.rotation.size),
        leftShape = Shape.rotation((n + v) % Shape.rotation.size),
        rightShape = Shape.rotation((n / 2 + 3 * v) % Shape.rotation.size),
        partitions = (1 + r.nextInt(3), 1 + r.nextInt(3)),
        seed = r.nextLong())
    }
    cases
  }
}

/** Generates the rows of L and R for a case: ids, the key k, a second key k2, and an int v. */
object Tables {

  def schema(keyType: DataType): StructType = StructType(Seq(
    StructField("id", IntegerType, nullable = false),
    StructField("k", keyType),
    StructField("k2", keyType),
    StructField("v", IntegerType)))

  def rows(c: Case, side: Side): Seq[Row] = {
    val r = new Random(c.seed + (if (side == Side.Left) 1 else 2))
    val shape = if (side == Side.Left) c.leftShape else c.rightShape
    val n = shape match {
      case Shape.Empty => 0
      case Shape.OneRow => 1
      case Shape.Normal => 5 + r.nextInt(30)
      case Shape.Skewed => 30
    }
    val hot = c.keyType.draw(r, side)
    def key() =
      if (r.nextInt(100) < 15) null
      else if (shape == Shape.Skewed && r.nextInt(100) < 70) hot
      else c.keyType.draw(r, side)
    val base = if (side == Side.Left) 0 else 1000
    (0 until n).map { i =>
      Row(base + i, key(), key(), if (r.nextInt(100) < 15) null else r.nextInt(8) - 2)
    }
  }
}
