package rangejoin.condition

/**
 * Which extreme of a side's key decides a range condition for some row of it: some `b` has
 * `s < b` exactly when `s < max(b)` ([[RangeOp.deciding]]). Keys compare with Spark's own
 * ordering for their type (NaN above every number, -0.0 equal to 0.0, collations); NULLs are
 * never an extreme.
 * {{{
 *   keys of b   1  3  3  5  8  NULL      s < b   <=>   s < 8   (max)
 *                                        s > b   <=>   s > 1   (min)
 * }}}
 */
private[rangejoin] sealed abstract class Extreme(val name: String) extends Serializable {

  /** Whether a key comparing `comparison` (its sign) to the best so far replaces it. */
  def better(comparison: Int): Boolean

  override def toString: String = name
}

private[rangejoin] object Extreme {
  case object Max extends Extreme("max") {
    override def better(comparison: Int): Boolean = comparison > 0
  }
  case object Min extends Extreme("min") {
    override def better(comparison: Int): Boolean = comparison < 0
  }
}
