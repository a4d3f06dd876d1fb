package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{Max, Min}
import org.apache.spark.sql.catalyst.plans.{ExistenceJoin, LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, DomainJoin, Join, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.condition.{CannotFail, Evaluable, Extreme, KeyTypes, RangeOp}
/**
 * Semi, anti and existence joins with equality keys and one inequality: each key's extreme
 * decides, as the existence fast path does without keys. The subquery side is reduced, per key,
 * to its largest (or smallest) range key by Spark's own aggregate, and Spark's own hash or
 * sort-merge join then matches the keys: at any size, with Spark's spill, AQE and codegen.
 * {{{
 *   EXISTS (SELECT 1 FROM i WHERE i.chr = p.chr AND i.lo > 2 * p.x)
 *
 *   i:  chr  lo                          Aggregate [chr], [chr, max(lo) AS RangeJoinMax]
 *       c1   5                               c1   9
 *       c1   9          ==>                  c2   NULL      (every lo NULL)
 *       c2   NULL                            NULL 4         (never meets `=`; meets `<=>`)
 *       NULL 4
 *
 *   condition  i.chr = p.chr AND i.lo > 2 * p.x   ==>   chr = p.chr AND RangeJoinMax > 2 * p.x
 * }}}
 * Some row of a key group has `lo > v` exactly when the group's `max(lo) > v`: Spark's max and
 * min order values as its comparisons do (NaN above every number and equal to itself, -0.0 equal
 * to 0.0, a string collation's order), skip NULLs, and give NULL for a group with no value, which
 * matches nothing, as none of its rows does. The rows of a group agree on every key (`=` and
 * grouping agree: floating-point keys are normalized for both, collated strings compared by
 * collation), so each equality holds for the group row exactly when it holds for each row.
 *
 * Where the rewrite applies: a semi or anti join (`LEFT SEMI JOIN`, `LEFT ANTI JOIN`) or an
 * `EXISTS` subquery (`EXISTS`, `NOT EXISTS`, `EXISTS ... OR`, which Spark later turns into semi,
 * anti and existence joins) whose condition is, in any order, equalities (`=`, `<=>`) between an
 * expression of each side plus exactly one `<`, `<=`, `>`, `>=` between an expression of each
 * side, and nothing else. Comparisons keep their operand order, so a left expression is
 * evaluated when Spark evaluates it (see below).
 *
 * `IN` and `NOT IN` subqueries with such a correlated condition (`p.c NOT IN (SELECT i.c FROM i
 * WHERE i.y > p.x)`; the equalities may be none) are rewritten the same way, their subquery
 * columns grouped with the keys and kept first. `IN` and `NOT IN`, NULLs and all, depend only on
 * which values (tuples, for several columns) the subquery gives a row, and whether it gives any:
 * a NULL among them makes `NOT IN` NULL, and an empty subquery makes it true even for a NULL
 * value. The reduced side gives each row exactly the distinct values the original gives it: a
 * (key, value) group has a row meeting the inequality exactly when its extreme does, and
 * grouping keeps NULL values as a group of their own. So Spark's own null-aware rewrite of `NOT
 * IN` answers as before, over one row per distinct value instead of one per subquery row.
 *
 * Errors: the aggregate evaluates the right side's expressions on all its rows, where Spark
 * evaluates them only on the pairs its join finds, so those must not be able to fail
 * ([[CannotFail]]); so must the left side's equality expressions (and an `IN`'s values), evaluated by whichever join
 * Spark plans (a smaller right side may change a sort-merge join into a broadcast hash join,
 * which evaluates them on other rows when a side is empty). The left side's range expression
 * (`2 * p.x`, which overflows under ANSI) may fail: Spark evaluates it in the join condition, on
 * a row's key-matched pairs, and stops at the first pair that holds. Written first, it is
 * evaluated on the first such pair: exactly when the row has a key group. Written second, on the
 * first such pair whose right operand is not NULL: exactly when the group's extreme is not NULL.
 * So the rewritten join evaluates it on exactly the rows Spark does, and raises where Spark
 * raises.
 *
 * The rule runs in the optimizer's fixed-point operator batches, before Spark rewrites
 * subqueries into joins; it never matches its own output (a side holding an aggregate it made
 * is left alone), and respects `spark.rangejoin.enabled` and
 * `spark.rangejoin.existenceFastPath.enabled`. Anything it does not take it leaves unchanged.
 */
private[rangejoin] object KeyedExistence extends Rule[LogicalPlan] with PredicateHelper {

  /** The aggregate's column names; EXPLAIN shows them. */
  val MaxName = "RangeJoinMax"
  val MinName = "RangeJoinMin"
  val KeyName = "RangeJoinKey"

  override def apply(plan: LogicalPlan): LogicalPlan = {
    val conf = SQLConf.get
    if (!RangeJoinConf.enabled(conf) || !RangeJoinConf.existenceFastPath(conf)) plan
    else plan.transformUp {
      case join @ Join(left, right, LeftSemi | LeftAnti | ExistenceJoin(_), Some(condition), _) =>
        rewrite(splitConjunctivePredicates(condition), left.outputSet, right).map {
          case (aggregate, conjuncts) => join.copy(right = aggregate, condition = Some(conjuncts.reduce(And)))
        }.getOrElse(join)
      case node =>
        val outer = AttributeSet(node.children.flatMap(_.output))
        def inSubquery(in: InSubquery, nullAware: Boolean): InSubquery = in match {
          case InSubquery(values, query: ListQuery) if query.joinCond.nonEmpty && values.forall(CannotFail(_)) =>
            rewrite(query.joinCond.flatMap(splitConjunctivePredicates), outer, query.plan, query.childOutputs,
                values, notIn = nullAware).map {
              case (aggregate, conjuncts) => in.copy(query = query.copy(plan = aggregate, joinCond = conjuncts))
            }.getOrElse(in)
          case _ => in
        }
        // Down, so that NOT IN (null-aware: no join key) is told from IN before its InSubquery is
        // reached; a rewritten subquery is never rewritten again.
        node.transformExpressionsDown {
          case exists @ Exists(sub, _, _, joinCond, _) if joinCond.nonEmpty =>
            rewrite(joinCond.flatMap(splitConjunctivePredicates), outer, sub).map {
              case (aggregate, conjuncts) => exists.copy(plan = aggregate, joinCond = conjuncts)
            }.getOrElse(exists)
          case Not(in: InSubquery) => Not(inSubquery(in, nullAware = true))
          case in: InSubquery => inSubquery(in, nullAware = false)
        }
    }
  }

  /**
   * One conjunct, an equality (`op` None) or an inequality, with its operands by side and their
   * order: `rightFirst` when the right side's (subquery side's) operand is written first.
   */
  private case class Comparison(conjunct: BinaryComparison, op: Option[RangeOp], rightFirst: Boolean) {
    def rightOperand: Expression = if (rightFirst) conjunct.left else conjunct.right
    def leftOperand: Expression = if (rightFirst) conjunct.right else conjunct.left
    def withRight(e: Expression): Expression =
      if (rightFirst) conjunct.withNewChildren(Seq(e, conjunct.right))
      else conjunct.withNewChildren(Seq(conjunct.left, e))
    /** The inequality read as `left op right`, whichever operand is written first. */
    def leftOpRight: Option[RangeOp] = op.map(o => if (rightFirst) o.flip else o)
  }

  /**
   * The right side reduced to one row per key with its extreme range key, and the conjuncts over
   * it; None where the rewrite would not be exact or does not apply. An `IN` subquery's columns
   * (`inColumns`) are keys too, kept first in the reduced side's output, where `IN` reads them.
   */
  private def rewrite(
      conjuncts: Seq[Expression],
      leftOutput: AttributeSet,
      right: LogicalPlan,
      inColumns: Seq[Attribute] = Nil,
      inValues: Seq[Expression] = Nil,
      notIn: Boolean = false): Option[(LogicalPlan, Seq[Expression])] = {
    if (right.exists(made) || right.exists(_.isInstanceOf[DomainJoin])) return None
    if (AttributeSet(inColumns).size != inColumns.size || !inColumns.forall(a => KeyTypes.groupable(a.dataType))) {
      return None
    }
    val compared = conjuncts.map(comparison(_, leftOutput, right.outputSet))
    if (compared.exists(_.isEmpty)) return None
    val (equalities, ranges) = compared.flatten.partition(_.op.isEmpty)
    ranges match {
      case Seq(range) if (equalities.nonEmpty || inColumns.nonEmpty) &&
          equalities.forall(e => KeyTypes.groupable(e.rightOperand.dataType) && CannotFail(e.leftOperand)) &&
          KeyTypes.groupable(range.rightOperand.dataType) &&
          compared.flatten.forall(c => CannotFail(c.rightOperand)) &&
          // One row per key on the subquery side: nothing to reduce.
          !BufferedSide.oneRowPerKey(right, inColumns ++ equalities.map(_.rightOperand)) &&
          !perKeyIndexTakes(compared.flatten, right, inColumns, inValues, notIn) =>
        val keys = (inColumns ++ equalities.map(_.rightOperand)).foldLeft(Seq.empty[Expression]) { (seen, k) =>
          if (seen.exists(_.semanticEquals(k))) seen else seen :+ k
        }
        val keyColumns: Seq[NamedExpression] = keys.map {
          case a: Attribute => a
          case e => Alias(e, KeyName)()
        }
        val extreme = range.leftOpRight.get.deciding match {
          case Extreme.Max => Alias(Max(range.rightOperand).toAggregateExpression(), MaxName)()
          case Extreme.Min => Alias(Min(range.rightOperand).toAggregateExpression(), MinName)()
        }
        val aggregate = Aggregate(keys, keyColumns :+ extreme, right)
        def column(k: Expression) = keyColumns(keys.indexWhere(_.semanticEquals(k))).toAttribute
        val rewritten = compared.flatten.map { c =>
          if (c eq range) c.withRight(extreme.toAttribute) else c.withRight(column(c.rightOperand))
        }
        Some((aggregate, rewritten))
      case _ => None
    }
  }

  /**
   * Whether rangejoin's strategy will run the join itself with a per-key index, which costs about
   * what Spark's hash join costs even where every key is unique, so the aggregate, a pass (and a
   * shuffle) more over the subquery side, is only a cost: the subquery side fits rangejoin's
   * buffer, equality keys are on, and every key, equality and range, of either side cannot fail
   * and compares by its bytes (see RangeJoinStrategy). Where the index does not take the join (a
   * side too large, or `2 * p.x` under ANSI), the rewrite is what makes it fast.
   *
   * A NOT IN (`notIn`) is left only where its values and the subquery's columns are all
   * non-nullable: Spark then drops the null-aware part of its anti join (`v = c OR isnull(v = c)`
   * simplifies to `v = c`), which leaves an equality key the index can take. Where any may be
   * NULL, that condition is no join key, and the rewrite is what makes the join fast.
   */
  private def perKeyIndexTakes(
      compared: Seq[Comparison],
      right: LogicalPlan,
      inColumns: Seq[Attribute],
      inValues: Seq[Expression],
      notIn: Boolean): Boolean = {
    val conf = SQLConf.get
    val keys = compared.flatMap(c => Seq(c.leftOperand, c.rightOperand)) ++ inValues ++ inColumns
    (!notIn || (inValues ++ inColumns).forall(!_.nullable)) &&
      RangeJoinConf.equalityKeys(conf) && BufferedSide.fits(right, conf) &&
      PerKeyIndex.keysQualify(keys).isRight
  }

  /** A comparison between an expression of each side that the rewrite can carry, or None. */
  private def comparison(conjunct: Expression, left: AttributeSet, right: AttributeSet): Option[Comparison] = {
    def over(e: Expression, side: AttributeSet) =
      e.references.nonEmpty && e.references.subsetOf(side) && Evaluable(e)
    val op = conjunct match {
      case _: EqualTo | _: EqualNullSafe => Some(None)
      case RangeOp(_, o, _) => Some(Some(o))
      case _ => None
    }
    op.flatMap { o =>
      val b = conjunct.asInstanceOf[BinaryComparison]
      if (b.left.dataType != b.right.dataType) None
      else if (over(b.left, left) && over(b.right, right)) Some(Comparison(b, o, rightFirst = false))
      else if (over(b.left, right) && over(b.right, left)) Some(Comparison(b, o, rightFirst = true))
      else None
    }
  }

  private def made(plan: LogicalPlan): Boolean = plan match {
    case a: Aggregate =>
      a.aggregateExpressions.exists(c => c.name == MaxName || c.name == MinName)
    case _ => false
  }
}
