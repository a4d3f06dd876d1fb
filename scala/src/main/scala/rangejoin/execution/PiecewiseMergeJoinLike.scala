package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.optimizer.{BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans._
import org.apache.spark.sql.execution.{BinaryExecNode, ExplainUtils, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import rangejoin.execution.driver.{JoinSemantics, JoinSpec}
import rangejoin.condition.{IndexSpec, OrientedPredicate, RangeCondition}
/**
 * What the two placements of a piecewise merge join share: the buffered side broadcast
 * ([[PiecewiseMergeJoinExec]]) or shuffled with the streamed side by the equality keys
 * ([[ShuffledPiecewiseMergeJoinExec]]). The join itself is the same in both: its semantics,
 * output, index and [[JoinSpec]], run by the one driver; only where the buffer comes from differs.
 */
private[rangejoin] trait PiecewiseMergeJoinLike extends BinaryExecNode {

  def range: RangeCondition
  def condition: Expression
  def joinType: JoinType
  def buildSide: BuildSide

  protected val semantics: JoinSemantics = JoinSemantics(joinType, buildSide).getOrElse(
    throw new IllegalArgumentException(s"$nodeName does not handle $joinType joins with $buildSide"))

  protected def streamedIsLeft: Boolean = buildSide == BuildRight
  protected def streamed: SparkPlan = if (streamedIsLeft) left else right
  protected def buffered: SparkPlan = if (streamedIsLeft) right else left
  protected def residual: Option[Expression] = range.residual

  /** The metrics every placement has; a placement adds its own. */
  protected def baseMetrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "numCandidates" -> SQLMetrics.createMetric(sparkContext, "candidate pairs examined"))

  override lazy val metrics: Map[String, SQLMetric] = baseMetrics

  override def output: Seq[Attribute] = joinType match {
    case _: InnerLike => left.output ++ right.output
    case LeftOuter => left.output ++ right.output.map(_.withNullability(true))
    case RightOuter => left.output.map(_.withNullability(true)) ++ right.output
    case FullOuter => (left.output ++ right.output).map(_.withNullability(true))
    case j: ExistenceJoin => left.output :+ j.exists
    case LeftExistence(_) => left.output
    case other => throw new IllegalArgumentException(s"$nodeName does not handle $other joins")
  }

  /** The index over the buffered side, from the bounds as this join runs them. */
  @transient protected lazy val index: IndexSpec = IndexSpec.of(range, streamedIsLeft)

  protected def sortPredicate: OrientedPredicate = index.sortPredicate

  override def simpleString(maxFields: Int): String =
    s"$nodeName $joinType, $buildSide, ${index.name} ($range)" +
      range.residual.map(r => s", residual: $r").getOrElse("") + describedFilter

  override def verboseStringWithOperatorId(): String =
    s"""|$formattedNodeName
        |${ExplainUtils.generateFieldString("Range predicate", range.toString)}
        |${ExplainUtils.generateFieldString("Index", index.name)}
        |${ExplainUtils.generateFieldString("Residual", range.residual.map(_.toString).getOrElse(""))}
        |${ExplainUtils.generateFieldString("Join type", joinType.toString)}
        |${ExplainUtils.generateFieldString("Build side", buildSide.toString)}
        |$describedPlacement""".stripMargin

  /** EXPLAIN FORMATTED's lines on where the buffer comes from, one field each. */
  protected def describedPlacement: String

  /** EXPLAIN's words on the join's dynamic filter, if it has one. */
  protected def describedFilter: String = ""

  protected def joinSpec: JoinSpec = JoinSpec(
    semantics,
    index = index,
    residual = range.residual,
    condition = condition,
    left = left.output,
    right = right.output,
    output = output,
    exists = joinType match {
      case ExistenceJoin(exists) => Some(exists)
      case _ => None
    },
    streamedIsLeft = streamedIsLeft)

  protected def counted(joined: RDD[InternalRow]): RDD[InternalRow] = {
    val numOutputRows = longMetric("numOutputRows")
    joined.mapPartitions { rows =>
      rows.map { row =>
        numOutputRows += 1
        row
      }
    }
  }
}
