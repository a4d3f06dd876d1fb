package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftOuter}
import org.apache.spark.sql.catalyst.plans.physical.{BroadcastDistribution, Distribution, Partitioning, UnspecifiedDistribution}
import org.apache.spark.sql.execution.{BinaryExecNode, ExplainUtils, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.types._

import rangejoin.condition.AsOfMatch
import rangejoin.execution.broadcast.{SortedBroadcastExec, SortedBroadcastMode}
import rangejoin.execution.driver.{AsOfJoinTask, BroadcastAsOfJoinTasks}
import rangejoin.execution.index.{DistanceRange, SortedBuffer}

/**
 * What the two placements of an as-of join share: the right side broadcast
 * ([[PiecewiseMergeAsOfJoinExec]]) or shuffled with the left side by the equality keys
 * ([[ShuffledPiecewiseMergeAsOfJoinExec]]). The join is the same in both: the right rows of a
 * task sorted by (keys, time) into a [[SortedBuffer]], each left row's match found by one
 * binary search in its key's segment ([[AsOfJoinTask]]); only where the buffer comes from differs.
 */
private[rangejoin] trait PiecewiseMergeAsOfJoinLike extends BinaryExecNode {

  def asOf: AsOfMatch
  def joinType: JoinType

  require(joinType == Inner || joinType == LeftOuter, s"$nodeName joins inner or left outer, not $joinType")

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"))

  override def output: Seq[Attribute] = joinType match {
    case LeftOuter => left.output ++ right.output.map(_.withNullability(true))
    case _ => left.output ++ right.output
  }

  /** How the right rows are sorted into the buffer: by (keys, time), bound to the right output. */
  protected def bufferedMode: SortedBroadcastMode =
    SortedBroadcastMode.of(asOf.rightTime, None, asOf.rightKeys, right.output, None, keepOrigins = false)

  /** The metrics of a placement that sorts its right rows in each task. */
  protected def perTaskBufferMetrics: Map[String, SQLMetric] = Map(
    "buildTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to sort each task's right rows"),
    "bufferedRows" -> SQLMetrics.createMetric(sparkContext, "buffered rows"))

  /**
   * Sorts one task's right rows into its buffer, counting the time and rows
   * ([[perTaskBufferMetrics]]), for the placements that shuffle the right side.
   */
  protected def perTaskBuffer: Iterator[InternalRow] => SortedBuffer = {
    val mode = bufferedMode
    val (buildTime, bufferedRows) = (longMetric("buildTime"), longMetric("bufferedRows"))
    rows => {
      val start = System.nanoTime()
      // Shuffled rows are read into reused buffers: each is copied to be kept.
      val buffer = mode.transform(rows.map(_.copy()).toArray)
      buildTime += java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
      bufferedRows += buffer.numRows
      buffer
    }
  }

  /**
   * The join of one task's left rows with its buffer, made on the driver to run in the tasks:
   * every placement runs the same [[AsOfJoinTask]].
   */
  protected def joinTask: (Iterator[InternalRow], SortedBuffer) => Iterator[InternalRow] = {
    val (spec, out) = (taskSpec(left.output), output)
    val numOutputRows = longMetric("numOutputRows")
    (rows, buffer) => spec.create(buffer).join(rows, out, numOutputRows)
  }

  /** What each task is made of, over left rows of `leftOutput` (every left column, or some). */
  protected def taskSpec(leftOutput: Seq[Attribute]): AsOfJoinTask.Spec = {
    val range = PiecewiseMergeAsOfJoinExec.distanceRange(asOf).getOrElse(
      throw new IllegalStateException(s"$nodeName: no distance range for ${asOf.distance.dataType}"))
    AsOfJoinTask.Spec(asOf, joinType == Inner, leftOutput, right.output, range)
  }

  /** Where the buffer comes from, for EXPLAIN. */
  protected def placement: String

  override def simpleString(maxFields: Int): String = s"$nodeName $joinType, ${asOf.pick}, ($asOf)"

  override def verboseStringWithOperatorId(): String =
    s"""|$formattedNodeName
        |${ExplainUtils.generateFieldString("As-of match", asOf.toString)}
        |${ExplainUtils.generateFieldString("Join type", joinType.toString)}
        |${ExplainUtils.generateFieldString("Ties and overflow", asOf.pick.toString)}
        |${ExplainUtils.generateFieldString("Buffered", placement)}
        |""".stripMargin
}

/**
 * An as-of join (`AsOfJoin`: SQL `ASOF JOIN`, `DataFrame._joinAsOf`, pandas-on-Spark
 * `merge_asof`): each left row with the one right row whose time is nearest before it, after it
 * or either way ([[AsOfMatch]]), among those with its equality keys and within the tolerance.
 * The right side is sorted once by (keys, time) and broadcast by the [[SortedBroadcastExec]]
 * below the join (the per-key index of the range joins, [[rangejoin.execution.index.KeyGroups]]);
 * each left row looks its key's segment up and binary-searches it ([[AsOfJoinTask]]).
 * {{{
 *   right, sorted once:   key a: 1  3  3  5  8  |  key b: 2  9  |  NULL times (never match)
 *   left (a, 4) backward:  segment a, last time <= 4  ->  the second 3
 *   left (b, 1) backward:  segment b, no time <= 1    ->  NULLs (left outer) / nothing (inner)
 * }}}
 * Cost: O(M log M) once for the right side, O(log M) per left row; stock Spark's rewrite
 * compares every pair (O(N x M)), its sort-merge operator scans each key's rows per left row.
 * Left rows are joined where they are, in their order: no shuffle, their partitioning and order
 * kept; in the left side's generated code ([[AsOfJoinCodegen]]) where whole-stage codegen is on.
 * Inner and left outer joins only, as Spark's `AsOfJoin`.
 */
private[rangejoin] case class PiecewiseMergeAsOfJoinExec(
    asOf: AsOfMatch,
    joinType: JoinType,
    left: SparkPlan,
    right: SparkPlan) extends PiecewiseMergeAsOfJoinLike with AsOfJoinCodegen {

  override def requiredChildDistribution: Seq[Distribution] =
    UnspecifiedDistribution :: BroadcastDistribution(bufferedMode) :: Nil

  override protected def codegenTasks(ctx: CodegenContext, spec: AsOfJoinTask.Spec): String =
    ctx.addReferenceObj("asOfTasks", new BroadcastAsOfJoinTasks(spec, right.executeBroadcast[SortedBuffer]())) +
      ".create()"

  override protected def createsTaskLazily: Boolean = false

  override def outputPartitioning: Partitioning = left.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = left.outputOrdering

  protected override def doExecute(): RDD[InternalRow] = {
    val payload = right.executeBroadcast[SortedBuffer]()
    val join = joinTask
    left.execute().mapPartitions(rows => join(rows, payload.value))
  }

  /** This join as the planner finishes it: its right side under the sorted broadcast. */
  def planned: PiecewiseMergeAsOfJoinExec =
    copy(right = SortedBroadcastExec(asOf.rightTime, None, right, None, asOf.rightKeys))

  override protected def placement: String = "broadcast, sorted once"

  override protected def withNewChildrenInternal(newLeft: SparkPlan, newRight: SparkPlan): PiecewiseMergeAsOfJoinExec =
    copy(left = newLeft, right = newRight)
}

private[rangejoin] object PiecewiseMergeAsOfJoinExec {

  /**
   * How far Spark's distance expression stays exact, from its type and the times': None for
   * a pair this operator does not take.
   */
  def distanceRange(m: AsOfMatch): Option[DistanceRange] = (m.leftTime.dataType, m.distance.dataType) match {
    case (IntegerType, IntegerType) => Some(DistanceRange.IntRange)
    case (LongType, LongType) => Some(DistanceRange.LongRange)
    case (d: DecimalType, _: DecimalType) if d.precision <= Decimal.MAX_LONG_DIGITS => Some(DistanceRange.Exact)
    case (DateType, _: DayTimeIntervalType) => Some(DistanceRange.DaysAsMicros)
    case (TimestampType | TimestampNTZType, _: DayTimeIntervalType) => Some(DistanceRange.LongRange)
    case _ => None
  }
}
