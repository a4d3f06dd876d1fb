package rangejoin.condition

import org.apache.spark.sql.catalyst.expressions.Expression

/** Which right rows an as-of join looks at from a left row's time: before it, after it, or both. */
private[rangejoin] sealed abstract class AsOfDirection(val name: String) extends Serializable {
  override def toString: String = name
}

private[rangejoin] object AsOfDirection {
  /** The latest right time at or before the left's (`l >= r`, or `l > r`). */
  case object Backward extends AsOfDirection("backward")
  /** The earliest right time at or after the left's (`l <= r`, or `l < r`). */
  case object Forward extends AsOfDirection("forward")
  /** The right time closest to the left's, either way (DataFrame and pandas paths only). */
  case object Nearest extends AsOfDirection("nearest")
}

/**
 * How stock Spark picks among a left row's candidates when their distances cannot be trusted to
 * follow their times (an integer distance that overflows): the operator then evaluates Spark's
 * own distance expression as the stock path would.
 *  - `MinBy`: the DataFrame and pandas paths (`RewriteAsOfJoin`): `min_by` over every candidate.
 *  - `SortMergeScan`: SQL `ASOF JOIN` (`SortMergeAsOfJoinExec` in 4.3.0): backward, the last
 *    candidate in time order, no distance read; forward, from the nearest candidate outward while
 *    the distance strictly decreases.
 */
private[rangejoin] sealed abstract class AsOfPick extends Serializable
private[rangejoin] object AsOfPick {
  case object MinBy extends AsOfPick
  case object SortMergeScan extends AsOfPick
}

/**
 * An as-of join as rangejoin runs it: Spark's `AsOfJoin` (its as-of condition, equality
 * condition and distance) read back into what it means, by planning.AsOfShape.
 * {{{
 *   leftTime, rightTime      the two times, of one type ordered as a long (KeyTypes.longEncoder)
 *   direction, inclusive     backward / forward / nearest; `inclusive` = allowExactMatches
 *   lowerBound, upperBound   the tolerance's bounds on the right time, each an expression of the
 *                            left row evaluated by Spark's own code (`l - tol`, `l + tol`), in the
 *                            right time's long encoding; `boundsInclusive` says >= / <= or > / <
 *   leftKeys, rightKeys      equality keys (`on`), searched per key (KeyGroups)
 *   distance                 Spark's distance expression over left ++ right (exact fallback)
 * }}}
 */
private[rangejoin] final case class AsOfMatch(
    leftTime: Expression,
    rightTime: Expression,
    direction: AsOfDirection,
    inclusive: Boolean,
    lowerBound: Option[Expression],
    upperBound: Option[Expression],
    boundsInclusive: Boolean,
    leftKeys: Seq[Expression],
    rightKeys: Seq[Expression],
    distance: Expression,
    pick: AsOfPick) {

  /** SQL's backward match takes the last candidate in time order, never reading a distance. */
  def decidedByTime: Boolean = pick == AsOfPick.SortMergeScan && direction == AsOfDirection.Backward

  override def toString: String = {
    val op = (direction, inclusive) match {
      case (AsOfDirection.Backward, true) => ">="
      case (AsOfDirection.Backward, false) => ">"
      case (AsOfDirection.Forward, true) => "<="
      case (AsOfDirection.Forward, false) => "<"
      case (AsOfDirection.Nearest, true) => "nearest"
      case (AsOfDirection.Nearest, false) => "nearest, not equal"
    }
    val (lo, hi) = if (boundsInclusive) (">=", "<=") else (">", "<")
    val bounds = lowerBound.map(b => s", $rightTime $lo $b").getOrElse("") +
      upperBound.map(b => s", $rightTime $hi $b").getOrElse("")
    val keys = if (leftKeys.isEmpty) "" else leftKeys.zip(rightKeys).map { case (l, r) => s"$l = $r" }
      .mkString(", keys: ", " AND ", "")
    s"$leftTime $op $rightTime$bounds$keys"
  }
}
