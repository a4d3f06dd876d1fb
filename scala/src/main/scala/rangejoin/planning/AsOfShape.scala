package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.{And, Cast, EqualTo, Expression, GreaterThan, GreaterThanOrEqual, If, LessThan, LessThanOrEqual, Literal, Not, SubqueryExpression, Subtract, SubtractDates, SubtractTimestamps}
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types._

import rangejoin.condition.{AsOfDirection, AsOfMatch, AsOfPick, CannotFail, KeyTypes}
import rangejoin.execution.PiecewiseMergeAsOfJoinExec

/**
 * Reads Spark's `AsOfJoin` (its as-of condition, equality condition and distance, as the
 * analyzer leaves them) back into an [[AsOfMatch]], or says why not. Spark builds them from
 * (leftAsOf, rightAsOf, tolerance, allowExactMatches, direction) as follows, `l` and `r` the
 * two times:
 * {{{
 *   backward   l >= r  [AND r >= l - tol]      (exact matches off: l > r  [AND r > l - tol])
 *   forward    l <= r  [AND r <= l + tol]      (l < r  [AND r < l + tol])
 *   nearest    true | r >= l - tol AND r <= l + tol
 *                                              (NOT l = r [AND (r > l - tol AND r < l + tol)])
 *   distance   l - r | r - l | IF(l > r, l - r, r - l)
 *   condition  the `on` keys: l.k1 = r.k1 AND ...
 * }}}
 * SQL's `MATCH_CONDITION (l.t >= r.t)` is the first two lines without a tolerance. The analyzer
 * may widen `r` (`CAST(r AS BIGINT)` against an int tolerance); a bound is any expression of the
 * left row. Anything else (a residual beyond equality keys, floating-point or string times,
 * expressions that may fail) is left to Spark: the reason is returned instead.
 */
private[rangejoin] object AsOfShape {

  def apply(
      left: LogicalPlan,
      right: LogicalPlan,
      asOfCondition: Expression,
      condition: Option[Expression],
      joinType: JoinType,
      distance: Expression,
      pick: AsOfPick): Either[String, AsOfMatch] = {
    def isLeft(e: Expression) = e.references.nonEmpty && e.references.subsetOf(left.outputSet)
    def isRight(e: Expression) = e.references.nonEmpty && e.references.subsetOf(right.outputSet)
    for {
      _ <- Either.cond(joinType == Inner || joinType == LeftOuter, (), s"a $joinType as-of join")
      _ <- Either.cond((asOfCondition +: distance +: condition.toSeq).forall(e => e.deterministic &&
        !SubqueryExpression.hasSubquery(e)), (), "a non-deterministic condition or a subquery")
      times <- timesOf(distance, isLeft, isRight)
      (direction, l, r) = times
      _ <- Either.cond(l.dataType == r.dataType && timeType(l.dataType), (), s"times of type ${l.dataType}")
      _ <- Either.cond(CannotFail(l) && CannotFail(r), (), "a time expression that can fail")
      parts <- conjuncts(asOfCondition, l, r, isLeft)
      m <- matchOf(direction, parts, l, r)
      keys <- keysOf(condition, isLeft, isRight)
      asOf = m.copy(leftKeys = keys.map(_._1), rightKeys = keys.map(_._2), distance = distance, pick = pick)
      _ <- Either.cond(PiecewiseMergeAsOfJoinExec.distanceRange(asOf).isDefined, (),
        s"a distance of type ${distance.dataType}")
    } yield asOf
  }

  /** Times ordered as longs, where distances are exact differences (no floating point, no rounding). */
  private def timeType(t: DataType): Boolean = t match {
    case IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case d: DecimalType => d.precision <= Decimal.MAX_LONG_DIGITS
    case _ => false
  }

  private object Minus {
    def unapply(e: Expression): Option[(Expression, Expression)] = e match {
      case s: Subtract => Some((s.left, s.right))
      case s: SubtractDates => Some((s.left, s.right))
      case s: SubtractTimestamps => Some((s.left, s.right))
      case _ => None
    }
  }

  /** The direction and the two times (left's, right's), from the distance. */
  private def timesOf(distance: Expression, isLeft: Expression => Boolean, isRight: Expression => Boolean)
      : Either[String, (AsOfDirection, Expression, Expression)] = distance match {
    case If(GreaterThan(l, r), Minus(l1, r1), Minus(r2, l2))
        if isLeft(l) && isRight(r) && Seq(l1, l2).forall(_.semanticEquals(l)) && Seq(r1, r2).forall(_.semanticEquals(r)) =>
      Right((AsOfDirection.Nearest, l, r))
    case Minus(l, r) if isLeft(l) && isRight(r) => Right((AsOfDirection.Backward, l, r))
    case Minus(r, l) if isLeft(l) && isRight(r) => Right((AsOfDirection.Forward, l, r))
    case other => Left(s"an as-of distance of another shape: $other")
  }

  /** One conjunct of the as-of condition, read. */
  private sealed trait Part
  /** `l op r`: `below` when r <= l (or r < l), the exact match allowed when `inclusive`. */
  private final case class Base(below: Boolean, inclusive: Boolean) extends Part
  private case object NotEqual extends Part
  private case object Always extends Part
  /** A tolerance bound `r >= b` (`lower`) or `r <= b`, inclusive or not. */
  private final case class Bound(lower: Boolean, inclusive: Boolean, bound: Expression) extends Part

  private def conjuncts(cond: Expression, l: Expression, r: Expression, isLeft: Expression => Boolean)
      : Either[String, Seq[Part]] = {
    def isL(e: Expression) = e.semanticEquals(l)
    def isR(e: Expression) = e.semanticEquals(r)
    // r, or r widened without changing its stored long (int to bigint, a decimal to a wider one).
    def widened(e: Expression): Boolean = e match {
      case Cast(c, to, _, _) if isR(c) => (c.dataType, to) match {
        case (IntegerType, LongType) => true
        case (a: DecimalType, b: DecimalType) => a.scale == b.scale && b.precision >= a.precision &&
          b.precision <= Decimal.MAX_LONG_DIGITS
        case _ => false
      }
      case other => isR(other)
    }
    def bound(e: Expression, against: Expression) =
      isLeft(e) && KeyTypes.longEncoder(e.dataType).isDefined && e.dataType == against.dataType
    def part(e: Expression): Either[String, Part] = e match {
      case Literal(true, BooleanType) => Right(Always)
      case Not(EqualTo(a, b)) if (isL(a) && isR(b)) || (isR(a) && isL(b)) => Right(NotEqual)
      case GreaterThanOrEqual(a, b) if isL(a) && isR(b) => Right(Base(below = true, inclusive = true))
      case GreaterThan(a, b) if isL(a) && isR(b) => Right(Base(below = true, inclusive = false))
      case LessThanOrEqual(a, b) if isL(a) && isR(b) => Right(Base(below = false, inclusive = true))
      case LessThan(a, b) if isL(a) && isR(b) => Right(Base(below = false, inclusive = false))
      case LessThanOrEqual(a, b) if isR(a) && isL(b) => Right(Base(below = true, inclusive = true))
      case LessThan(a, b) if isR(a) && isL(b) => Right(Base(below = true, inclusive = false))
      case GreaterThanOrEqual(a, b) if isR(a) && isL(b) => Right(Base(below = false, inclusive = true))
      case GreaterThan(a, b) if isR(a) && isL(b) => Right(Base(below = false, inclusive = false))
      case GreaterThanOrEqual(a, b) if widened(a) && bound(b, a) => Right(Bound(lower = true, inclusive = true, b))
      case GreaterThan(a, b) if widened(a) && bound(b, a) => Right(Bound(lower = true, inclusive = false, b))
      case LessThanOrEqual(a, b) if widened(a) && bound(b, a) => Right(Bound(lower = false, inclusive = true, b))
      case LessThan(a, b) if widened(a) && bound(b, a) => Right(Bound(lower = false, inclusive = false, b))
      case other => Left(s"an as-of condition of another shape: $other")
    }
    val parts = splitConjunctive(cond).map(part)
    parts.collectFirst { case Left(reason) => reason }.toLeft(parts.collect { case Right(p) => p })
  }

  private def splitConjunctive(e: Expression): Seq[Expression] = e match {
    case And(a, b) => splitConjunctive(a) ++ splitConjunctive(b)
    case other => Seq(other)
  }

  /** The match the parts make with the distance's direction, if they are one of Spark's shapes. */
  private def matchOf(direction: AsOfDirection, parts: Seq[Part], l: Expression, r: Expression)
      : Either[String, AsOfMatch] = {
    // A tolerance of 0 may be folded away (`r <= l + 0` is `r <= l` once the optimizer has run):
    // a comparison of the two times against the direction is then the tolerance's bound, at l.
    val (bases, folded) = parts.collect { case b: Base => b }.partition { b =>
      (direction == AsOfDirection.Backward && b.below) || (direction == AsOfDirection.Forward && !b.below)
    }
    val bounds = parts.collect { case b: Bound => b } ++ folded.map(b => Bound(lower = !b.below, b.inclusive, l))
    val lowers = bounds.filter(_.lower)
    val uppers = bounds.filter(!_.lower)
    val notEqual = parts.contains(NotEqual)
    val boundsInclusive = (lowers ++ uppers).map(_.inclusive).distinct
    def made(inclusive: Boolean) = AsOfMatch(l, r, direction, inclusive, lowers.headOption.map(_.bound),
      uppers.headOption.map(_.bound), boundsInclusive.headOption.getOrElse(true), Nil, Nil, Literal(null), AsOfPick.MinBy)
    val shaped = (direction, bases) match {
      case (_, _) if lowers.size > 1 || uppers.size > 1 || boundsInclusive.size > 1 => None
      case (AsOfDirection.Backward, Seq(Base(true, inclusive))) if uppers.isEmpty && !notEqual => Some(made(inclusive))
      case (AsOfDirection.Forward, Seq(Base(false, inclusive))) if lowers.isEmpty && !notEqual => Some(made(inclusive))
      case (AsOfDirection.Nearest, Seq()) if lowers.size == uppers.size => Some(made(!notEqual))
      case _ => None
    }
    shaped.toRight(s"an as-of condition that is not a $direction match: ${parts.mkString(", ")}")
  }

  /** The equality keys (left, right) of the `on` condition: equalities between the sides, and nothing else. */
  private def keysOf(condition: Option[Expression], isLeft: Expression => Boolean, isRight: Expression => Boolean)
      : Either[String, Seq[(Expression, Expression)]] = {
    val pairs = condition.toSeq.flatMap(splitConjunctive).map {
      case EqualTo(a, b) if isLeft(a) && isRight(b) => Right((a, b))
      case EqualTo(a, b) if isRight(a) && isLeft(b) => Right((b, a))
      case other => Left(s"an as-of join condition beyond equality keys: $other")
    }
    for {
      keys <- pairs.collectFirst { case Left(reason) => reason }.toLeft(pairs.collect { case Right(p) => p })
      _ <- Either.cond(keys.forall { case (a, b) => a.dataType == b.dataType && keyType(a.dataType) }, (),
        "an equality key of a type compared otherwise than by its bytes")
      _ <- PerKeyIndex.keysQualify(keys.flatMap { case (a, b) => Seq(a, b) })
    } yield keys
  }

  /** Keys whose grouping by value is `=`: not floating point, whose -0.0 and NaN need normalizing. */
  private def keyType(t: DataType): Boolean = t match {
    case FloatType | DoubleType => false
    case other => KeyTypes.groupable(other)
  }
}
