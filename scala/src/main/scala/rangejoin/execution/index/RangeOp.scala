package rangejoin.execution.index

/** One of the four inequalities a piecewise merge join drives on, read as `x op y`. */
private[rangejoin] sealed abstract class RangeOp(val symbol: String) extends Serializable {

  /** The operator stating the same relation with the operands swapped: `x op y` iff `y op.flip x`. */
  def flip: RangeOp

  /** Whether `x op y` holds, given the sign of comparing x with y. */
  def holds(comparison: Int): Boolean

  override def toString: String = symbol
}

private[rangejoin] object RangeOp {
  case object Lt extends RangeOp("<") {
    def flip: RangeOp = Gt
    def holds(comparison: Int): Boolean = comparison < 0
  }
  case object Le extends RangeOp("<=") {
    def flip: RangeOp = Ge
    def holds(comparison: Int): Boolean = comparison <= 0
  }
  case object Gt extends RangeOp(">") {
    def flip: RangeOp = Lt
    def holds(comparison: Int): Boolean = comparison > 0
  }
  case object Ge extends RangeOp(">=") {
    def flip: RangeOp = Le
    def holds(comparison: Int): Boolean = comparison >= 0
  }

  val all: Seq[RangeOp] = Seq(Lt, Le, Gt, Ge)
}
