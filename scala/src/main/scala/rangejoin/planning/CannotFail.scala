package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.{DataType, DoubleType, FloatType, NumericType}

/**
 * Whether an expression can never raise an error, whatever row it is evaluated on. A deliberately
 * short list; anything not on it is assumed to be able to fail (ANSI arithmetic overflows,
 * division by zero, casts of malformed strings, ...).
 *
 * rangejoin evaluates a join key once on every row of its side, where Spark evaluates the range
 * conjunct only on the pairs that reach it. That is the same thing when the range conjunct comes
 * first in the condition, but a conjunct before it may guard it (`a.x <> 0 AND 100 / a.x < b.y`),
 * so a later range conjunct may drive the join only with keys that cannot fail.
 */
object CannotFail {

  def apply(e: Expression): Boolean = e match {
    case _: Attribute | _: Literal => true
    case Not(child) => apply(child)
    case Cast(child, to, _, mode) =>
      (mode != EvalMode.ANSI || Cast.canUpCast(child.dataType, to)) && apply(child)
    case Add(l, r, context) => arithmetic(e.dataType, context.evalMode) && apply(l) && apply(r)
    case Subtract(l, r, context) => arithmetic(e.dataType, context.evalMode) && apply(l) && apply(r)
    case Multiply(l, r, context) => arithmetic(e.dataType, context.evalMode) && apply(l) && apply(r)
    case _ => false
  }

  // Floating point never raises; other numbers raise on overflow only in ANSI mode.
  private def arithmetic(dataType: DataType, mode: EvalMode.Value): Boolean = dataType match {
    case FloatType | DoubleType => true
    case _: NumericType => mode != EvalMode.ANSI
    case _ => false
  }
}
