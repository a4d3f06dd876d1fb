package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SortOrder
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext
import org.apache.spark.sql.catalyst.plans.JoinType
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import rangejoin.condition.AsOfMatch
import rangejoin.execution.driver.{AsOfJoinTask, ShuffledAsOfJoinTasks, TaskBuffers}

/**
 * An as-of join with equality keys whose right side is too large to broadcast: Spark shuffles
 * both sides by the keys, and each task sorts its partition of the right rows by (keys, time)
 * into the per-key index, then finds each of its left rows' match by one binary search in the
 * row's key segment, as the broadcast placement does ([[PiecewiseMergeAsOfJoinExec]]). Every
 * right row a left row can match has its keys, so it is in the left row's partition.
 * {{{
 *   Exchange hashpartitioning(keys)  --\
 *                                       ShuffledPiecewiseMergeAsOfJoin: per partition,
 *   Exchange hashpartitioning(keys)  --/    buffer = sort(right rows by (keys, time))
 *                                           each left row: its key's segment, one search in it
 * }}}
 * Where Spark's `SortMergeAsOfJoin` sorts both sides and scans a key's right rows for each left
 * row, this sorts the right side only and searches: O(M log M + N log M) per task. The task
 * holds its right partition in memory, as a shuffled hash join holds its build side; the planner
 * takes it only where the right side's estimated size per shuffle partition fits
 * [[rangejoin.RangeJoinConf.ShuffleMaxPartitionSize]]. Generated as the broadcast placement
 * is ([[AsOfJoinCodegen]]), over the shuffled left rows.
 */
private[rangejoin] case class ShuffledPiecewiseMergeAsOfJoinExec(
    asOf: AsOfMatch,
    joinType: JoinType,
    left: SparkPlan,
    right: SparkPlan) extends PiecewiseMergeAsOfJoinLike with AsOfJoinCodegen {

  require(asOf.leftKeys.nonEmpty, s"$nodeName needs equality keys to shuffle by")

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows")) ++ perTaskBufferMetrics

  override def requiredChildDistribution: Seq[Distribution] =
    ClusteredDistribution(asOf.leftKeys) :: ClusteredDistribution(asOf.rightKeys) :: Nil

  // Each task's output is its partition of the left rows, in their order.
  override def outputPartitioning: Partitioning = left.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = left.outputOrdering

  protected override def doExecute(): RDD[InternalRow] = {
    val (build, join) = (perTaskBuffer, joinTask)
    left.execute().zipPartitions(right.execute())((leftRows, rightRows) => join(leftRows, build(rightRows)))
  }

  /**
   * Generated code where the left child is not itself generated (an exchange, as Spark's
   * shuffled joins read their children): the stage's one input is then the left rows, with the
   * task's right rows sorted into its buffer when the task opens it ([[TaskBuffers]]).
   */
  override def supportCodegen: Boolean = JoinCodegen.readsAsInput(left)

  /** Names this join's buffer in each task ([[TaskBuffers]]). */
  @transient private lazy val bufferId = java.util.UUID.randomUUID().toString

  override def inputRDDs(): Seq[RDD[InternalRow]] =
    TaskBuffers.zip(left.execute(), right.execute(), bufferId, perTaskBuffer) :: Nil

  override protected def codegenTasks(ctx: CodegenContext, spec: AsOfJoinTask.Spec): String =
    ctx.addReferenceObj("asOfTasks", new ShuffledAsOfJoinTasks(spec, bufferId)) + ".create()"

  override protected def createsTaskLazily: Boolean = true

  override protected def placement: String = "each shuffle partition, by the equality keys"

  override protected def withNewChildrenInternal(
      newLeft: SparkPlan, newRight: SparkPlan): ShuffledPiecewiseMergeAsOfJoinExec =
    copy(left = newLeft, right = newRight)
}
