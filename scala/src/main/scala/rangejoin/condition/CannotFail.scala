package rangejoin.condition

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.optimizer.NormalizeNaNAndZero
import org.apache.spark.sql.types.{ByteType, DataType, DoubleType, FloatType, IntegerType, LongType, NumericType, ShortType}

/**
 * Whether an expression can never raise an error, whatever row it is evaluated on and whatever
 * the session's ANSI setting: a deliberately short list, each entry checked against Spark's own
 * evaluation code (and exercised on every type's extreme values in CannotFailSuite). Anything not
 * on it is assumed to be able to fail.
 *
 * Why it matters: rangejoin evaluates some expressions on rows where stock Spark would not.
 *  - A join key is evaluated once on every row of its side, where Spark evaluates the range
 *    conjunct only on the pairs that reach it: after the conjuncts written before it, and never
 *    when the other side is empty.
 *  - The dynamic filter evaluates the streamed key on every streamed row, and rows it drops at a
 *    file scan never reach the operators between the scan and the join.
 * Each is allowed only where the expressions involved cannot fail, so that no error Spark would
 * raise is hidden and none it would not raise appears.
 *
 * What is on the list, and why:
 *  - columns, literals, the boolean connectives, comparisons (a comparison of two values of one
 *    type never raises; the analyzer has already cast the operands to that type) and conditional
 *    expressions (`IF`, `CASE`, `COALESCE`) over what cannot fail;
 *  - the normalization of floating-point join keys (`NormalizeNaNAndZero` under
 *    `KnownFloatingPointNormalized`): a double or float in, the same value or its canonical form out;
 *  - numeric casts: in ANSI mode only the widening ones Spark calls up-casts (an integer to a
 *    wider integer, a float or a wide enough decimal; a decimal to a wider decimal or a
 *    floating-point type); without ANSI every numeric-to-numeric cast, which wraps or gives NULL.
 *    Not date to timestamp: it is an up-cast, but multiplies days into microseconds with
 *    `multiplyExact` and overflows past year 294247 in either mode;
 *  - `+`, `-`, `*` on floating point (never raises) and, without ANSI, on integers (wrap) and
 *    decimals (NULL on overflow). Date, timestamp and interval arithmetic always checks overflow;
 *  - an integer's remainder by a non-zero literal (`id % 3`): a remainder never overflows, and
 *    only a zero divisor raises.
 */
private[rangejoin] object CannotFail {

  def apply(e: Expression): Boolean = e match {
    case _: Attribute | _: BoundReference | _: Literal => true
    case Alias(child, _) => apply(child)
    case Not(child) => apply(child)
    case And(l, r) => apply(l) && apply(r)
    case Or(l, r) => apply(l) && apply(r)
    case IsNull(child) => apply(child)
    case IsNotNull(child) => apply(child)
    case c: BinaryComparison => apply(c.left) && apply(c.right)
    case In(value, list) => apply(value) && list.forall(apply)
    case InSet(child, _) => apply(child)
    case Coalesce(children) => children.forall(apply)
    // Spark's optimizer wraps floating-point join keys in these: they fold -0.0 and NaNs.
    case KnownFloatingPointNormalized(child) => apply(child)
    case NormalizeNaNAndZero(child) => apply(child)
    case If(predicate, whenTrue, whenFalse) => apply(predicate) && apply(whenTrue) && apply(whenFalse)
    case CaseWhen(branches, otherwise) =>
      branches.forall { case (c, v) => apply(c) && apply(v) } && otherwise.forall(apply)
    case Cast(child, to, _, mode) => numericCast(child.dataType, to, mode) && apply(child)
    case a @ Add(l, r, _) => arithmetic(e.dataType, a.evalMode) && apply(l) && apply(r)
    case s @ Subtract(l, r, _) => arithmetic(e.dataType, s.evalMode) && apply(l) && apply(r)
    case m @ Multiply(l, r, _) => arithmetic(e.dataType, m.evalMode) && apply(l) && apply(r)
    case Remainder(l, Literal(divisor, ByteType | ShortType | IntegerType | LongType), _) =>
      divisor != null && divisor.asInstanceOf[Number].longValue != 0 && apply(l)
    case _ => false
  }

  private def numericCast(from: DataType, to: DataType, mode: EvalMode.Value): Boolean =
    (from, to) match {
      case (_: NumericType, _: NumericType) => mode != EvalMode.ANSI || Cast.canUpCast(from, to)
      case _ => false
    }

  private def arithmetic(dataType: DataType, mode: EvalMode.Value): Boolean = dataType match {
    case FloatType | DoubleType => true
    case _: NumericType => mode != EvalMode.ANSI
    case _ => false
  }
}

/**
 * Whether an expression can be evaluated by rangejoin at all: deterministic, with no subquery,
 * Python UDF or other placeholder that Spark plans around the join. A condition that is not
 * evaluable is left to Spark whole; a key that is not is no key.
 */
private[rangejoin] object Evaluable {
  def apply(e: Expression): Boolean =
    e.deterministic && !SubqueryExpression.hasSubquery(e) &&
      !e.exists(x => x.isInstanceOf[Unevaluable] && !x.isInstanceOf[Attribute])
}
