package rangejoin.execution

import java.util.concurrent.TimeUnit.NANOSECONDS

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BindReferences, BoundReference, Expression, SortOrder}
import org.apache.spark.sql.catalyst.optimizer.BuildSide
import org.apache.spark.sql.catalyst.plans._
import org.apache.spark.sql.catalyst.plans.physical._
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext
import org.apache.spark.sql.execution.{ExplainUtils, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import rangejoin.execution.driver.{KeyClusteredRows, Matches, ShuffledJoinTasks, TaskBuffers}
import rangejoin.condition.{IndexSpec, RangeCondition}
import rangejoin.execution.index.{LongKeyGroups, SortedBuffer}
import rangejoin.execution.broadcast.SortedBroadcastMode
/**
 * A range join with equality keys whose sides are both too large to broadcast: Spark shuffles
 * both by the equality keys, and each task builds the per-key index ([[SortedBuffer]] grouped by
 * key, sorted by the range key within each) over its partition of the buffered side, then
 * searches it for its partition of the streamed side. Where Spark's sort-merge join compares
 * every pair within a key, this searches within the key.
 * {{{
 *   Exchange hashpartitioning(k)  --\
 *                                    ShuffledPiecewiseMergeJoin: per partition,
 *   Exchange hashpartitioning(k)  --/    buffer = sort(buffered rows by (k, range key))
 *                                        streamed rows, in chunks ordered by k (a large buffer)
 *                                        for each streamed row: its key's segment, a search in it
 * }}}
 * A partition holds every row its buffered rows can meet, so an outer join's unmatched buffered
 * rows, and a semi or anti join's buffered left rows, are emitted by the task that marked them,
 * after its streamed rows: no marks cross tasks. Binned band joins ([[rangejoin.planning.BinnedRangeJoin]])
 * come here too: their bin is an equality key, and each bin's intervals get an interval index.
 *
 * Cost per task: the sort of its buffered rows, O(M log M), held in memory (as Spark's shuffled
 * hash join holds its build side), and a search per streamed row, O(log m + k) for a key of m
 * rows. Where the buffer is larger than a core's cache, the streamed rows come in chunks sorted
 * by key ([[KeyClusteredRows]]), so that the searches sweep the buffer instead of missing the
 * cache at random. The planner takes it only where the buffered side's estimated size per shuffle partition
 * fits [[rangejoin.RangeJoinConf.ShuffleMaxPartitionSize]]. Its loop is generated as the broadcast
 * join's is ([[JoinCodegen]]), where that join's would be.
 */
private[rangejoin] case class ShuffledPiecewiseMergeJoinExec(
    range: RangeCondition,
    condition: Expression,
    joinType: JoinType,
    buildSide: BuildSide,
    left: SparkPlan,
    right: SparkPlan) extends PiecewiseMergeJoinLike with JoinCodegen {

  require(range.isKeyed, s"$nodeName needs equality keys to shuffle by")

  override lazy val metrics: Map[String, SQLMetric] = baseMetrics ++ Map(
    "buildTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to sort the buffered partitions"),
    "bufferedRows" -> SQLMetrics.createMetric(sparkContext, "buffered rows"),
    "clusteredRows" -> SQLMetrics.createMetric(sparkContext, "streamed rows met in key order"))

  override def requiredChildDistribution: Seq[Distribution] =
    ClusteredDistribution(range.leftKeys) :: ClusteredDistribution(range.rightKeys) :: Nil

  // As Spark's shuffled joins: each task's output is its partition of the streamed side's rows
  // (and pairs), and, for the side whose rows it emits on their own, of that side's.
  override def outputPartitioning: Partitioning = joinType match {
    case _: InnerLike => PartitioningCollection(Seq(left.outputPartitioning, right.outputPartitioning))
    case LeftOuter | LeftSemi | LeftAnti | ExistenceJoin(_) => left.outputPartitioning
    case RightOuter => right.outputPartitioning
    case FullOuter => UnknownPartitioning(left.outputPartitioning.numPartitions)
    case other => throw new IllegalArgumentException(s"$nodeName does not handle $other joins")
  }

  override def outputOrdering: Seq[SortOrder] = Nil

  /**
   * Generated code, as the broadcast join's, where its streamed child is not itself generated
   * (an exchange, as Spark's shuffled joins read their children): the stage's inputs are then
   * the streamed rows and the buffered partition, which the task sorts when it starts.
   */
  override def supportCodegen: Boolean = JoinCodegen.supports(
    semantics,
    bufferedExtreme = false,
    streamedOutput = streamed.output) && JoinCodegen.readsAsInput(streamed)

  /** Names this join's buffer in each task ([[TaskBuffers]]). */
  @transient private lazy val bufferId = java.util.UUID.randomUUID().toString

  override def inputRDDs(): Seq[RDD[InternalRow]] =
    TaskBuffers.zip(streamed.execute(), buffered.execute(), bufferId, bufferBuilder, streamedOrder) :: Nil

  override protected def codegenTasks(ctx: CodegenContext): String =
    ctx.addReferenceObj("joinTasks", new ShuffledJoinTasks(joinSpec, bufferId)) + ".create()"

  // The task is created when the first streamed row reaches the join: in a stage fusing a union,
  // a task reading another child's rows has no buffer of this join's.
  override protected def createsTaskLazily: Boolean = true

  /** Sorts one partition of buffered rows into the index, counting its time and rows. */
  private def bufferBuilder: Iterator[InternalRow] => SortedBuffer = {
    val mode = SortedBroadcastMode.of(index.sortKey, index.secondKey, index.groupKeys, buffered.output, None,
      joinSpec.replaysInSparkOrder)
    val buildTime = longMetric("buildTime")
    val bufferedRows = longMetric("bufferedRows")
    rows => {
      val start = System.nanoTime()
      // Shuffled rows are read into reused buffers: each is copied to be kept.
      val buffer = mode.transform(rows.map(_.copy()).toArray)
      buildTime += NANOSECONDS.toMillis(System.nanoTime() - start)
      bufferedRows += buffer.numRows
      buffer
    }
  }

  /**
   * The streamed rows in the order a task searches its buffer in: clustered by key
   * ([[KeyClusteredRows]]) where the one equality key is a streamed column, the buffer's groups
   * are [[LongKeyGroups]] (the one kind laid out in ascending key order, which the chunks are
   * sorted in, by the groups' own encoding) and the buffer is too large for a core's cache
   * ([[KeyClusteredRows.worthIt]]); as they came otherwise.
   */
  private def streamedOrder: (Iterator[InternalRow], SortedBuffer) => Iterator[InternalRow] = {
    val keyOrdinal = index match {
      case IndexSpec.PerKey(Seq(key), _, _) => BindReferences.bindReference(key, streamed.output) match {
        case BoundReference(ordinal, _, _) => Some(ordinal)
        case _ => None
      }
      case _ => None
    }
    val schema = streamed.output.map(_.dataType)
    val clusteredRows = longMetric("clusteredRows")
    (rows, buffer) => (keyOrdinal, buffer.groups) match {
      case (Some(ordinal), Some(groups: LongKeyGroups)) if KeyClusteredRows.worthIt(buffer.numRows, groups.numGroups) =>
        new KeyClusteredRows(rows, ordinal, groups.encoder, schema, clusteredRows)
      case _ => rows
    }
  }

  override protected def describedPlacement: String =
    ExplainUtils.generateFieldString("Buffered", "each shuffle partition, by the equality keys") + "\n"

  protected override def doExecute(): RDD[InternalRow] = {
    val spec = joinSpec
    val build = bufferBuilder
    val examined = longMetric("numCandidates")
    val emitsBuffered = semantics.needsBufferedMatches
    val order = streamedOrder
    counted(streamed.execute().zipPartitions(buffered.execute()) { (shuffledRows, bufferedPartition) =>
      val buffer = build(bufferedPartition)
      val streamedRows = order(shuffledRows, buffer)
      val marks = if (emitsBuffered) Some(new Matches) else None
      val partition = TaskContext.getPartitionId()
      val joined = spec.streamedPass(streamedRows, buffer, partition, marks, examined, emitting = true)
      marks match {
        case None => joined
        // Evaluated once the streamed rows are exhausted, when every mark is in.
        case Some(m) => joined ++ spec.bufferedPass(buffer, 0, buffer.numRows, m)
      }
    })
  }

  override protected def withNewChildrenInternal(
      newLeft: SparkPlan, newRight: SparkPlan): ShuffledPiecewiseMergeJoinExec =
    copy(left = newLeft, right = newRight)
}
