package rangejoin.condition

import org.apache.spark.sql.catalyst.expressions.{Expression, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual}

/**
 * One of the four inequalities a range join drives on, read as `x op y`. Everything rangejoin
 * needs to know of an operator is here: its direction, whether it includes equality, the same
 * relation with the operands swapped, and its Catalyst form both ways.
 * {{{
 *   op    x op y says          y is bounded    matches of x in sorted y    y's extreme that decides
 *   <     y above x            from below      a suffix                    max
 *   <=    y at or above x      from below      a suffix                    max
 *   >     y below x            from above      a prefix                    min
 *   >=    y at or below x      from above      a prefix                    min
 * }}}
 */
private[rangejoin] sealed abstract class RangeOp(val symbol: String, val isLess: Boolean, val inclusive: Boolean)
  extends Serializable {

  /** The operator stating the same relation with the operands swapped: `x op y` iff `y op.flip x`. */
  def flip: RangeOp

  /** Whether `x op y` bounds y from below (`<`, `<=`): y must be above x. */
  def boundsRightFromBelow: Boolean = isLess

  /** The extreme of y that decides whether some y has `x op y` (max for `<`, min for `>`). */
  def deciding: Extreme = if (isLess) Extreme.Max else Extreme.Min

  /** The inclusive operator of the same direction: what a lossy statistics filter may take. */
  def widened: RangeOp = if (isLess) RangeOp.Le else RangeOp.Ge

  /** `x op y` as a Catalyst comparison. */
  def apply(x: Expression, y: Expression): Expression

  override def toString: String = symbol
}

private[rangejoin] object RangeOp {
  case object Lt extends RangeOp("<", isLess = true, inclusive = false) {
    def flip: RangeOp = Gt
    def apply(x: Expression, y: Expression): Expression = LessThan(x, y)
  }
  case object Le extends RangeOp("<=", isLess = true, inclusive = true) {
    def flip: RangeOp = Ge
    def apply(x: Expression, y: Expression): Expression = LessThanOrEqual(x, y)
  }
  case object Gt extends RangeOp(">", isLess = false, inclusive = false) {
    def flip: RangeOp = Lt
    def apply(x: Expression, y: Expression): Expression = GreaterThan(x, y)
  }
  case object Ge extends RangeOp(">=", isLess = false, inclusive = true) {
    def flip: RangeOp = Le
    def apply(x: Expression, y: Expression): Expression = GreaterThanOrEqual(x, y)
  }

  val all: Seq[RangeOp] = Seq(Lt, Le, Gt, Ge)

  /** A Catalyst inequality as `(x, op, y)`; None for any other expression. */
  def unapply(e: Expression): Option[(Expression, RangeOp, Expression)] = e match {
    case LessThan(x, y) => Some((x, Lt, y))
    case LessThanOrEqual(x, y) => Some((x, Le, y))
    case GreaterThan(x, y) => Some((x, Gt, y))
    case GreaterThanOrEqual(x, y) => Some((x, Ge, y))
    case _ => None
  }
}
